"""Certified calibration of a single-parameter event family by the PLD accountant (``calibrate-event --accountant pld``).

The family is the one of :mod:`certify.events.calibrate` (an event whose noise fields hold ``"$noise"``), restricted
to the noise fields whose monotonicity is proved below (:data:`PLD_NOISE_FIELDS`). The accountant being calibrated is
the exact one: eps*(s) = the optimal epsilon at delta of the composed dominating pairs (:mod:`certify.events.pld_pairs`)
of the family member at noise s. The answer is a bracket of exact dyadics s_fail < s_pass, each with a certificate of
the existing kind ``events/pld`` (:mod:`certify.events.pld_certificates`) at ``target_delta`` = delta:

* s_pass: its conclusion ``dp`` with ``epsilon_upper <= E``: the member at s_pass is (E, delta)-DP;
* s_fail: its conclusion ``tightness`` with ``epsilon_lower > E``: the exact eps*(s_fail) exceeds epsilon_lower > E,
  so (E, delta) is refuted for the dominating pairs at s_fail.

The kind already states the refutation (``tightness``: "the exact epsilon at delta of the composed dominating pairs
exceeds epsilon_lower"), so no new kind is needed; the comparison epsilon_lower > E is exact (rationals), re-done by
:func:`check_calibration`. The two certificates may be at different grids: each is sound at its own grid.

Monotonicity (why every s <= s_fail fails too). Let s < s'. Each pair at s' is the pair at s post-processed by one
Markov kernel C applied to both distributions, C independent of the data (x -> x + Z with Z independent):

* Gaussian (also the components of MixtureOfGaussians and of PoissonSampled(Gaussian)): N(mu, s'^2) = N(mu, s^2) *
  N(0, s'^2 - s^2) (variances add), so C adds Z ~ N(0, s'^2 - s^2);
* Laplace: Lap(mu, b') = Lap(mu, b) * Z with Z = 0 w.p. (b/b')^2 and Z ~ Lap(0, b') otherwise, as the characteristic
  functions show: (1 + b^2 t^2)/(1 + b'^2 t^2) = (b/b')^2 + (1 - (b/b')^2)/(1 + b'^2 t^2) (obligation
  ``E-pld-noise-channel``, ``certify proofs --paper events``), a mixture with weights in [0, 1];
* PoissonSampled(M) and MixtureOfGaussians: P = sum_i w_i M(mu_i), Q = sum_j v_j M(nu_j) with weights free of s;
  convolution is linear, so C(P) = sum_i w_i C(M(mu_i)) = sum_i w_i M'(mu_i): the pair at s' (both directions);
* composition: the product of pairs (P_1 x ... x P_n, Q_1 x ... x Q_n) at s' is the one at s post-processed by
  C_1 x ... x C_n (independent coordinates); a member whose noise is fixed (no placeholder) gets the identity.

The hockey-stick divergence H_gamma(P || Q) = sup_A P(A) - gamma Q(A) does not grow under post-processing by a
kernel C: H_gamma(CP || CQ) <= H_gamma(P || Q) (data-processing inequality of f-divergences; for H_gamma directly,
Balle, Barthe, Gaboardi 2018, "Privacy amplification by subsampling", Thm 1 / Dwork, Roth 2014, Prop. 2.1), so
delta*(eps; s') <= delta*(eps; s) at every eps, hence eps*(delta; s') <= eps*(delta; s): eps* is non-increasing.

Refused: DiscreteGaussianDpEvent.sigma (the lattice Gaussian of a larger sigma is not known here to be the smaller
one plus an independent noise: no proof, so no calibration) and the fields without a PLD pair (tree aggregation).

The search (choices, never trusted): floats of cheap runs on the coarse grid :data:`COARSE_GRID` (midpoints of their
brackets) find the noise s_c where eps* ~ E (the ends S_MIN, S_MAX, a bisection of the exponent, then a safeguarded
secant of log eps in log s, at most :func:`coarse_runs` runs); then runs on the fine grid h, each chosen by a Newton
step of log eps in log s, place the two ends at s_c (1 +- REL_WIDTH/4), at most :data:`FINE_RUNS` runs. The work of
the fine phase (FINE_RUNS runs of :func:`certify.pld.ledger.run_seconds` at the smallest noise it may visit) is
decided before its first run, refused above :data:`CALIBRATION_SECONDS` naming ``--grid``; each coarse run is refused
above :data:`COARSE_RUN_SECONDS` by the same model (then counted as failing, never certified). REL_WIDTH = 1e-3: the
bracket of a PLD run at the default grid 1e-4 is ~1e-4 relative (Gaussian x1000 Poisson-sampled: 4e-5), so 1e-3 is
met with a few fine runs; at a coarse --grid the bracket can be wider, then the width reached is reported.
"""

from __future__ import annotations

import math

from ..balls import InputError, exact, exact_str, fmpq, require_in
from ..bracket import PldCalibration
from ..certificate import Certificate
from ..limits import BUDGET_SECONDS, CHECKER_SECONDS
from ..poisson.calibrate import dyadic
from .calibrate import PLACEHOLDER, substitute
from .ledger import ledger_inputs, ledger_of

#: the noise fields calibrated under pld (module docstring: each proved to be post-processed by a larger noise)
PLD_NOISE_FIELDS = {
    "GaussianDpEvent": "noise_multiplier",
    "LaplaceDpEvent": "noise_multiplier",
    "MixtureOfGaussiansDpEvent": "standard_deviation",
}
#: the reasons for refusing the other noise fields of :data:`certify.events.calibrate.NOISE_FIELDS` under pld
REFUSED = {
    "DiscreteGaussianDpEvent": "DiscreteGaussianDpEvent.sigma cannot be calibrated under pld: the lattice Gaussian of a larger sigma is not "
    "proved to be a post-processing of a smaller one (the monotonicity the bracket relies on); use --accountant rdp",
    "SingleEpochTreeAggregationDpEvent": "SingleEpochTreeAggregationDpEvent has no certified PLD pair; use --accountant rdp",
}
#: the fields the placeholder may stand for under pld (named in every refusal of check_family)
ADMISSIBLE = (
    f'"{PLACEHOLDER}" may stand only for GaussianDpEvent.noise_multiplier, LaplaceDpEvent.noise_multiplier (also inside '
    "PoissonSampledDpEvent) or MixtureOfGaussiansDpEvent.standard_deviation"
)
REL_WIDTH = fmpq(1, 10**3)
S_MIN_EXP, S_MAX_EXP = -10, 30
S_MIN, S_MAX = fmpq(2) ** S_MIN_EXP, fmpq(2) ** S_MAX_EXP
COARSE_GRID = fmpq(1, 1000)
#: the finest --grid a calibration takes (refused at once below: 12 fine runs at 1e-5 already cost 10x those at 1e-4)
MIN_GRID = fmpq(1, 10**5)
#: the coarse search stops at this relative width of its bracket (its midpoints are ~1e-3 off the fine ones)
COARSE_WIDTH = 1e-2
#: a coarse run whose modelled work exceeds this is not made (counted as failing: the small noises are the costly ones)
COARSE_RUN_SECONDS = 2.0
FINE_RUNS = 12
#: the fine phase's budget (FINE_RUNS runs at the modelled cost of the most expensive one)
CALIBRATION_SECONDS = 4 * BUDGET_SECONDS


def coarse_runs() -> int:
    """Coarse runs at most: the two ends, the bisection of the exponent on [S_MIN_EXP, S_MAX_EXP] to a factor 2, then
    the value phase, which alternates secant and bisection steps, so halves its bracket every two runs: from a factor 2
    to COARSE_WIDTH takes ceil(log2(1/log2(1 + COARSE_WIDTH))) halvings."""
    halvings = math.ceil(math.log2(1 / math.log2(1 + COARSE_WIDTH)))
    return 2 + math.ceil(math.log2(S_MAX_EXP - S_MIN_EXP)) + 2 * halvings


# --------------------------------------------------------------------------------------------
# the family
# --------------------------------------------------------------------------------------------
def check_family(template, name: str = "EVENT.json") -> None:
    """InputError when a placeholder stands in a field whose monotonicity under pld is not proved (:data:`REFUSED`)."""

    def walk(obj, depth):
        if depth > 200:
            raise InputError(name, "nested too deeply")
        if isinstance(obj, list):
            for v in obj:
                walk(v, depth + 1)
        elif isinstance(obj, dict):
            cls = obj.get("class_name")
            cls = cls if isinstance(cls, str) else repr(cls)[:40]  # any JSON value (a list or object is not hashable)
            if any(v == PLACEHOLDER for v in obj.values()) and cls not in PLD_NOISE_FIELDS:
                raise InputError(name, REFUSED.get(cls, f'"{PLACEHOLDER}" in {cls[:40]} cannot be calibrated under pld; {ADMISSIBLE}'))
            for v in obj.values():
                walk(v, depth + 1)

    walk(template, 0)


def member(template, s: fmpq, relation: str):
    return ledger_of(substitute(template, s), relation)


# --------------------------------------------------------------------------------------------
# one run: a certified events/pld bracket of eps*(s)
# --------------------------------------------------------------------------------------------
class _Unevaluable(Exception):
    """A run that is not made (over its work limit, or refused by the PLD engine at this s): a search choice only."""


def _run(template, relation: str, s: fmpq, delta: fmpq, h: fmpq, limit: float, notes: dict | None = None) -> Certificate:
    from ..pld.ledger import plan, run_seconds
    from .pld_certificates import certify_events_pld
    from .pld_pairs import entries_of

    try:
        ledger = member(template, s, relation)
        entries = entries_of(ledger)
        if run_seconds(entries, plan(entries, delta, h)) > limit:
            raise _Unevaluable("work")
        return certify_events_pld(ledger, delta=delta, grid=exact_str(h), notes=notes)
    except InputError as err:
        if err.parameter in ("--grid", "--steps", "--delta") or str(err.parameter).startswith("event"):  # this s only (s = 1 was checked)
            raise _Unevaluable(err.parameter) from None
        raise


def ends(cert: Certificate) -> tuple[fmpq, fmpq]:
    """(epsilon_lower, epsilon_upper) of an events/pld certificate at target_delta (exact)."""
    return exact(cert.witnesses["epsilon_lower"], "epsilon_lower"), exact(cert.witnesses["epsilon_upper"], "epsilon_upper")


def _mid(cert: Certificate) -> float:
    lo, up = ends(cert)
    return (float(lo) + float(up)) / 2


# --------------------------------------------------------------------------------------------
# the work decided before the fine runs
# --------------------------------------------------------------------------------------------
def fine_grid(template, relation: str, s_low: fmpq, delta: fmpq, grid) -> tuple[fmpq, float]:
    """(h, modelled seconds of the fine phase): the given grid, or the finest of GRID_LADDER whose FINE_RUNS runs at
    the smallest noise the fine phase visits fit CALIBRATION_SECONDS (each run also within the checker's budget).
    InputError naming ``--grid`` when none does (decided before the first fine run)."""
    from ..pld.accountant import GRID_LADDER, parse_grid
    from ..pld.ledger import plan, run_seconds
    from .pld_pairs import entries_of

    entries = entries_of(member(template, s_low, relation))
    grids = [parse_grid(grid, "--grid")] if grid is not None else [exact(g) for g in GRID_LADDER]
    last = ""
    for h in grids:
        try:
            one = run_seconds(entries, plan(entries, delta, h))
        except InputError as err:
            last = err.message
            continue
        whole = FINE_RUNS * one
        if one <= BUDGET_SECONDS - CHECKER_SECONDS and whole <= CALIBRATION_SECONDS:
            return h, whole
        last = (
            f"{FINE_RUNS} runs at h = {exact_str(h)} would take about {whole:.3g} s "
            f"(limit {CALIBRATION_SECONDS:g} s; one run at most {BUDGET_SECONDS - CHECKER_SECONDS:g} s)"
        )
    raise InputError("--grid", f"no grid fits the calibration's work limits near s = {float(s_low):.6g}: {last}"[:400])


# --------------------------------------------------------------------------------------------
# the search
# --------------------------------------------------------------------------------------------
def calibrate_pld(template, epsilon, delta, relation="add-remove", grid=None, progress=None, notes: dict | None = None) -> PldCalibration:
    """The certified bracket s_fail < s_pass of the exact PLD accountant (module docstring). ``notes``: provenance notes
    of the target (``target_delta.note``: a float from a library), recorded in both certificates."""
    from ..pld.accountant import parse_grid, parse_pld_delta
    from .pld_pairs import entries_of

    target = require_in("--epsilon", exact(epsilon, "--epsilon"), 0, 1000, "(]")
    delta = parse_pld_delta(delta, "--delta")
    h_user = parse_grid(grid, "--grid") if grid is not None else None
    if h_user is not None and h_user < MIN_GRID:
        raise InputError("--grid", f"a calibration takes a grid in [1e-5, 1/2] (its fine runs cost about 1/h each), got {float(h_user):.3g}")
    check_family(template)
    entries_of(member(template, fmpq(1), relation))  # every member has a certified PLD pair (InputError naming it otherwise)
    say = progress or (lambda text: None)
    runs: list = []
    best = {"pass": None, "fail": None}  # (s, cert)
    E = float(target)

    def evaluate(s: fmpq, h: fmpq, limit: float):
        try:
            cert = _run(template, relation, s, delta, h, limit, notes)
        except _Unevaluable as why:
            runs.append((s, h, why.args[0], None))
            return None
        lo, up = ends(cert)
        runs.append((s, h, lo, up))
        if up <= target and (best["pass"] is None or s < best["pass"][0]):
            best["pass"] = (s, cert)
        if lo > target and (best["fail"] is None or s > best["fail"][0]):
            best["fail"] = (s, cert)
        say(f"run {len(runs)}: s ~ {float(s):.8g}, grid {exact_str(h)}: epsilon in [{float(lo):.6g}, {float(up):.6g}]")
        return cert

    hc = max(COARSE_GRID, h_user) if h_user is not None else COARSE_GRID

    def g(u: float, exact_s: fmpq | None = None) -> float:
        """log(mid eps / E) at s = 2^u on the coarse grid; +inf when not evaluable below 1 (counted as failing)."""
        s = exact_s if exact_s is not None else dyadic(2.0**u, up=True)
        cert = evaluate(s, hc, COARSE_RUN_SECONDS)
        if cert is None:  # no epsilon certifies delta at all: failing; a run not made: failing below 1, passing above
            return math.inf if s <= 1 or runs[-1][2] == "--delta" else -math.inf
        m = _mid(cert)
        return math.log(m / E) if m > 0 else -math.inf

    def too_costly():
        why = sorted({str(r[2]) for r in runs if r[3] is None})
        return InputError(
            "event",
            f"this family is too costly to calibrate by pld: no PLD run on the coarse grid {exact_str(hc)} can be made within its "
            f"limits ({COARSE_RUN_SECONDS:g} s each by the work model; refused by: {', '.join(why)[:80]}) at the noises tried; "
            "use fewer or cheaper events, or --accountant rdp",
        )

    top = g(S_MAX_EXP, S_MAX)
    if runs[-1][3] is None and runs[-1][2] == "work":  # even the largest noise is over the limit: the search would be blind
        raise too_costly()
    if top > 0:
        raise InputError(
            "--epsilon", f"no noise up to 2^{S_MAX_EXP} meets epsilon = {exact_str(target)} at delta = {exact_str(delta)} for this family"
        )
    if g(S_MIN_EXP, S_MIN) <= 0:
        raise InputError("--epsilon", f"every noise down to 2^{S_MIN_EXP} meets the target: the family does not depend on its noise")
    a, b = float(S_MIN_EXP), float(S_MAX_EXP)  # g(a) > 0 (fails), g(b) <= 0 (passes)
    ga, gb = math.inf, -math.inf
    while b - a > 1:
        m = float(math.floor((a + b) / 2))
        gm = g(m)
        if gm > 0:
            a, ga = m, gm
        else:
            b, gb = m, gm
    step = 0
    while b - a > math.log2(1 + COARSE_WIDTH):
        if step % 2 == 0 and math.isfinite(ga) and math.isfinite(gb) and ga != gb:
            m = a + (b - a) * ga / (ga - gb)  # the secant of log eps in log s
            m = min(max(m, a + 0.05 * (b - a)), b - 0.05 * (b - a))
        else:
            m = (a + b) / 2
        step += 1
        gm = g(m)
        if gm > 0:
            a, ga = m, gm
        else:
            b, gb = m, gm
    if math.isfinite(ga) and math.isfinite(gb) and ga != gb:
        u_c = a + (b - a) * ga / (ga - gb)
        k = (ga - gb) / ((b - a) * math.log(2))  # -d log eps / d log s
    else:
        u_c, k = (a + b) / 2, 1.0
    k = min(max(k, 0.05), 50.0) if math.isfinite(k) else 1.0
    if all(r[3] is None for r in runs):  # no coarse run was made: the estimate below would be a guess about nothing
        raise too_costly()
    s_low = dyadic(2.0**a * (1 - float(REL_WIDTH)), up=False)
    h, seconds = fine_grid(template, relation, s_low, delta, h_user)
    say(f"coarse estimate s ~ {2.0**u_c:.8g}; fine grid h = {exact_str(h)} (at most {FINE_RUNS} runs, about {seconds:.3g} s)")
    w = float(REL_WIDTH)
    tries = {"pass": 0, "fail": 0}
    pts: list = []  # (log2 s, log(mid eps / E)) of the fine runs
    for _ in range(FINE_RUNS):
        sp = best["pass"][0] if best["pass"] else None
        sf = best["fail"][0] if best["fail"] else None
        if sp is not None and sf is not None and (sp - sf) / sp <= REL_WIDTH:
            break
        u_e = _root(pts, u_c, k)  # a float guess: kept inside the search's range (a flat secant overflowed 2.0**u_e)
        u_e = min(max(u_e, float(S_MIN_EXP)), float(S_MAX_EXP)) if math.isfinite(u_e) else u_c
        side = "pass" if sp is None or float(sp) > 2.0**u_e * (1 + w / 2) else "fail"
        off = w / 4 * 2 ** tries[side]
        x = 2.0**u_e * (1 + off) if side == "pass" else 2.0**u_e * (1 - off)
        if side == "pass" and sf is not None:
            x = max(x, float(sf) * (1 + w / 8))
        if side == "fail" and sp is not None:
            x = min(x, float(sp) * (1 - w / 8))
        x = min(max(x, float(s_low)), float(S_MAX))  # never below the noise the fine phase's work was decided at
        s = dyadic(x, up=side == "pass")
        cert = evaluate(s, h, BUDGET_SECONDS - CHECKER_SECONDS)
        if cert is None:
            raise InputError("--grid", f"the PLD run at s ~ {x:.8g}, grid {exact_str(h)} cannot be made within the limits: use a coarser --grid")
        lo, up = ends(cert)
        missed = (side == "pass" and up > target) or (side == "fail" and lo <= target)
        tries[side] = tries[side] + 1 if missed else 0  # consecutive misses widen the offset
        m = _mid(cert)
        if m > 0:
            pts.append((math.log2(float(s)), math.log(m / E)))
    if best["pass"] is None or best["fail"] is None:
        raise InputError("--grid", f"the PLD brackets at grid {exact_str(h)} did not separate the target within {FINE_RUNS} runs: use a finer --grid")
    (s_pass, passing), (s_fail, failing) = best["pass"], best["fail"]
    return PldCalibration(s_fail, s_pass, passing, failing, h, runs)


def _root(pts: list, u_c: float, k: float) -> float:
    """The float estimate of log2 s where eps* = E (a choice): regula falsi between the nearest fine points on either
    side of the root, else the secant of the two points nearest it; a Newton step with the coarse slope k after one
    point; the coarse estimate before any."""
    if not pts:
        return u_c
    if len(pts) == 1 or len({p[1] for p in pts}) == 1:
        u, gu = pts[-1]
        return u + gu / (k * math.log(2))
    above = [p for p in pts if p[1] > 0]  # failing side (eps above E)
    below = [p for p in pts if p[1] <= 0]
    if above and below:  # regula falsi between the nearest points on either side
        (u1, g1), (u2, g2) = max(above), min(below)
    else:
        (u1, g1), (u2, g2) = sorted(pts, key=lambda p: abs(p[1]))[:2]
    return u1 - g1 * (u2 - u1) / (g2 - g1) if g2 != g1 else u1


# --------------------------------------------------------------------------------------------
# checking a bracket (the two certificates and how they fit the family and the target)
# --------------------------------------------------------------------------------------------
def check_calibration(template, epsilon, delta, relation, s_fail, s_pass, passing: dict, failing: dict, verify: bool = True) -> None:
    """InputError unless (s_fail, s_pass, passing, failing) is a certified PLD calibration bracket of the family at
    (epsilon, delta): the family passes :func:`check_family` (its noise fields proved monotone); s_fail < s_pass;
    each document is an ``events/pld`` certificate of the member at its noise (the ledger's inputs equal) at
    target_delta = delta; the passing one concludes ``dp`` with epsilon_upper <= E; the
    failing one concludes ``tightness`` with epsilon_lower > E; and (``verify``) each passes ``certify verify``."""
    from ..verify import verify_document
    from .pld_certificates import KIND

    check_family(template)  # a bracket means something only where eps* is proved non-increasing in the noise
    target, d = exact(epsilon, "epsilon"), exact(delta, "delta")
    s_fail, s_pass = exact(s_fail, "s_fail"), exact(s_pass, "s_pass")
    if not s_fail < s_pass:
        raise InputError("s_fail", "must be below s_pass")
    for side, s, doc in (("pass", s_pass, passing), ("fail", s_fail, failing)):
        if not isinstance(doc, dict) or doc.get("kind") != KIND:
            raise InputError(side, f"must be an {KIND} certificate")
        ins, wit = doc.get("inputs"), doc.get("witnesses")
        if not isinstance(ins, dict) or not isinstance(wit, dict):
            raise InputError(side, "must hold inputs and witnesses as objects")
        want = {**ledger_inputs(member(template, s, relation)), "target_delta": exact_str(d)}
        if {k: v for k, v in ins.items() if k in want or k.startswith("event")} != want or ins.get("target_delta") != exact_str(d):
            raise InputError(side, f"is not the certificate of the family's member at s = {exact_str(s)} and delta = {exact_str(d)}")
        conclusions = doc.get("conclusions") if isinstance(doc.get("conclusions"), list) else []
        names = {c.get("name") for c in conclusions if isinstance(c, dict) and isinstance(c.get("name"), str)}
        if side == "pass" and not ("dp" in names and exact(wit.get("epsilon_upper"), "epsilon_upper") <= target):
            raise InputError(side, f"does not certify epsilon <= {exact_str(target)}")
        if side == "fail" and not ("tightness" in names and exact(wit.get("epsilon_lower"), "epsilon_lower") > target):
            raise InputError(side, f"does not certify that the exact epsilon exceeds {exact_str(target)}")
        if verify and verify_document(doc).exit_code != 0:
            raise InputError(side, "does not pass certify verify")


def summary(cal: PldCalibration, target: fmpq, delta: fmpq) -> str:
    lo_f, _ = ends(cal.failing)
    _, up_p = ends(cal.passing)
    return (
        f"certify calibrate-event: the smallest noise meeting ({exact_str(target)}, {exact_str(delta)})-DP for this family, as a "
        f"certified bracket (accountant: the exact epsilon of the composed dominating pairs, certified PLD, grid {exact_str(cal.grid)})\n"
        f"  s_fail = {exact_str(cal.s_fail)} (~{float(cal.s_fail):.8g}): certified to fail: exact epsilon >= {float(lo_f):.8g} > "
        f"{exact_str(target)} (kind events/pld, conclusion tightness)\n"
        f"  s_pass = {exact_str(cal.s_pass)} (~{float(cal.s_pass):.8g}): certified to pass: epsilon <= {float(up_p):.8g} "
        "(kind events/pld, conclusion dp)\n"
        f"  relative width {float(cal.relative_width):.3g} (target {float(REL_WIDTH):g}); {len(cal.runs)} PLD runs; the exact epsilon is "
        "non-increasing in the noise (post-processing; obligation E-pld-noise-channel)\n"
    )
