"""Certified calibration of a single-parameter event family: the smallest noise meeting (epsilon, delta).

The family is an event (JSON of ``to_named_tuple()``) whose noise fields hold the placeholder ``"$noise"``: the
``noise_multiplier`` of GaussianDpEvent (also inside a PoissonSampledDpEvent), LaplaceDpEvent and
SingleEpochTreeAggregationDpEvent, and the ``sigma`` of DiscreteGaussianDpEvent; every placeholder takes the same
value s. The accountant being calibrated is fixed: eps_G(s) = min over the integer orders G of :data:`GRID` (2..256
and a coarse grid to 4096) of the Rényi bound of the ledger at s (:mod:`certify.events.certificates`).

Each mechanism's RDP bound at a fixed order is non-increasing in its noise (obligation ``E-noise-monotone`` of
``certify proofs --paper events``; ``P-sigma-monotone`` of ``--paper mtz-poisson`` for the Poisson-subsampled
Gaussian), the composition adds them and the conversion is increasing in the RDP, so eps_G is non-increasing in s.
The answer is a bracket of exact dyadics s_fail < s_pass with relative width <= 1e-4:

* s_pass comes with an ``events/rdp`` certificate at one order of G stating epsilon <= target;
* s_fail comes with an ``events/rdp-fails`` certificate: epsilon(alpha; s_fail) > target at every alpha of G (the
  checker re-evaluates all of them), so eps_G(s_fail) > target,

hence every s <= s_fail fails too: s_pass is the smallest passing noise of this accountant up to the bracket. The
bracket is found by bisection on float estimates (a choice), then certified. The search takes a number of float
evaluations fixed by :data:`S_MIN`, :data:`S_MAX` and :data:`REL_WIDTH` (:func:`search_steps`): the two ends, a
bisection of the exponent, then of the value; so the work of the whole calibration is decided from the family's
ledger before any evaluation (:func:`check_calibration_work`).
"""

from __future__ import annotations

import copy
import re

import math

from ..balls import InputError, arb, ball, escalate, exact, exact_str, fmpq, require_in, upper_decimal
from ..certificate import Budget, Certificate, Evaluation
from ..provenance import check_notes
from ..renyi import EQ_CONVERT, epsilon_of_rdp
from ..limits import scaled
from ..poisson.calibrate import Calibration, dyadic
from ..poisson.calibrate import parse_epsilon as parse_target_epsilon
from ..verify import register
from .certificates import EQ_COMPOSE, MAX_WORK_SECONDS, _hyp, check_nesting, parse_target_delta
from .ledger import Ledger, is_ledger_input, ledger_from_inputs, ledger_inputs, ledger_of

KIND_FAILS = "events/rdp-fails"
PLACEHOLDER = "$noise"
#: the noise field of each family member's class
NOISE_FIELDS = {
    "GaussianDpEvent": "noise_multiplier",
    "LaplaceDpEvent": "noise_multiplier",
    "SingleEpochTreeAggregationDpEvent": "noise_multiplier",
    "DiscreteGaussianDpEvent": "sigma",
    "MixtureOfGaussiansDpEvent": "standard_deviation",  # --accountant pld only (no RDP here: refused by the ledger)
}
REL_WIDTH = fmpq(1, 10**4)
S_MIN_EXP, S_MAX_EXP = -40, 40
S_MIN, S_MAX = fmpq(2) ** S_MIN_EXP, fmpq(2) ** S_MAX_EXP
#: a float estimate of a mechanism's curve at the grid's orders costs at most this fraction of its ball evaluation
#: there (the work model's ``work_seconds``): measured 1/48 for a step of 200 Poisson-subsampled Gaussians (0.72 s vs
#: 34.5 s), 1/130-1/260 for sampling without replacement (0.13-0.18 s vs 32.5 s), closed forms < 0.1 ms vs 5 ms; doubled
FLOAT_FRACTION = 1 / 24
#: the producer's budget for a whole calibration: checking the two certificates it writes (each within the checker's)
CALIBRATION_SECONDS = 2 * MAX_WORK_SECONDS


def _grid() -> tuple:
    from .accountant import INTEGER_STAGE

    return INTEGER_STAGE.exact


def grid_text() -> str:
    return "integers 2..256 and " + ", ".join(str(a.p) for a in _grid() if a > 256)


def substitute(template, s: fmpq, name: str = "EVENT.json"):
    """The family member at noise s: every ``"$noise"`` in a noise field replaced by s's exact text (a copy)."""
    found = [0]

    def walk(obj, where, depth):
        if depth > 200:
            raise InputError(name, "nested too deeply")
        if isinstance(obj, list):
            return [walk(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(obj)]
        if not isinstance(obj, dict):
            if obj == PLACEHOLDER:
                raise InputError(
                    where, f'"{PLACEHOLDER}" may stand only for a noise field ({", ".join(f"{c}.{f}" for c, f in NOISE_FIELDS.items())})'
                )
            return obj
        out = {}
        cls = obj.get("class_name")
        field = NOISE_FIELDS.get(cls) if isinstance(cls, str) else None  # a list or object as class_name is no class
        for k, v in obj.items():
            if v == PLACEHOLDER and field == k:
                out[k] = exact_str(s)
                found[0] += 1
            else:
                out[k] = walk(v, f"{where}.{k}", depth + 1)
        return out

    member = walk(copy.deepcopy(template), "event", 0)
    if not found[0]:
        raise InputError(name, f'no noise field holds the placeholder "{PLACEHOLDER}": nothing to calibrate')
    return member


# --------------------------------------------------------------------------------------------
# the failing side: every order of the grid certified above the target
# --------------------------------------------------------------------------------------------
def evaluate_fails(ledger: Ledger, delta: fmpq, target: fmpq) -> Evaluation:
    """epsilon(alpha) > target at every alpha of the grid (producer and checker alike)."""
    ev = Evaluation()
    d, t = exact_str(delta), exact_str(target)
    _hyp(ev, "hyp:delta>0", f"delta = {d} > 0", d, ">", "0", (delta, fmpq(0)))
    _hyp(ev, "hyp:delta<1", f"delta = {d} < 1", d, "<", "1", (delta, fmpq(1)))
    if any(m.extra_delta != 0 for m, _ in ledger.entries):
        raise InputError("event", "calibration does not cover (epsilon, delta) events (their delta lies outside the Rényi curve)")
    grid = _grid()
    from ..balls import ctx

    check_fails_work(ledger, ctx.prec)
    for a in grid:
        rdp = arb(0)
        for m, c in ledger.entries:
            rdp = rdp + c * m.rdp(a, ledger.relation)
        ev.add(f"epsilon[{a.p}]", epsilon_of_rdp(rdp, a, delta), EQ_CONVERT, f"the Rényi bound at alpha = {a.p} ({EQ_COMPOSE})")
        ev.claim(f"fails[{a.p}]", f"at alpha = {a.p} the Rényi bound exceeds epsilon = {t}", f"epsilon[{a.p}]", ">", t, EQ_CONVERT)
    names = [c.name for c in ev.claims]
    ev.conclude(
        "fails",
        f"the calibration accountant (min over {grid_text()} of the Rényi bound) does not certify ({t}, {d})-DP for this ledger",
        names[-1],
        names[:-1],
    )
    ev.budget = Budget.of({"orders": f"all {len(grid)} orders of the grid re-evaluated (no search)"})
    return ev


def _fails_inputs(ledger: Ledger, delta: fmpq, target: fmpq, notes: dict | None = None) -> dict:
    out = ledger_inputs(ledger)
    out["target_delta"] = exact_str(delta)
    out["target_epsilon"] = exact_str(target)
    out.update(notes or {})
    return out


def certify_fails(ledger: Ledger, delta: fmpq, target: fmpq, notes: dict | None = None) -> Certificate:
    """``notes``: provenance notes of the targets (``target_delta.note``, ``target_epsilon.note``), recorded as inputs."""
    ev, prec = escalate(lambda p: (evaluate_fails(ledger, delta, target), p), what="the failing side of the calibration")
    return Certificate(KIND_FAILS, _fails_inputs(ledger, delta, target, notes), ev, {}, None, prec)


#: the targets of a failing-side certificate and their provenance notes
_TARGETS = re.compile(r"(target_delta|target_epsilon)(\.note)?")


def _parse_fails(inputs: dict):
    if not isinstance(inputs, dict):
        raise InputError("inputs", "must be an object")
    check_notes({k: v for k, v in inputs.items() if _TARGETS.fullmatch(k)}, {"target_delta", "target_epsilon"})
    return (
        ledger_from_inputs(inputs),
        parse_target_delta(inputs.get("target_delta"), "target_delta"),
        parse_target_epsilon(inputs.get("target_epsilon"), "target_epsilon"),
    )


def evaluate_rdp_fails(inputs: dict, witnesses: dict) -> Evaluation:
    ledger, delta, target = _parse_fails(inputs)
    if witnesses != {}:
        raise InputError("witnesses", "must be empty (every order of the grid is re-evaluated)")
    return evaluate_fails(ledger, delta, target)


def fails_seconds(ledger: Ledger, prec: int) -> float:
    """Work model of ``events/rdp-fails``: every order of the grid, each distinct mechanism's own estimate there, and
    the conversion and the claim at each order (measured: 0.1-0.15 ms at 128 bits; x1.5)."""
    grid = _grid()
    return sum(m.work_seconds(a, prec) for a in grid for m, _ in ledger.entries) + len(grid) * scaled(2e-4, prec)


def check_fails_work(ledger: Ledger, prec: int) -> None:
    """InputError naming ``event`` when checking the failing side would exceed the checker's MAX_WORK_SECONDS."""
    seconds = fails_seconds(ledger, prec)
    if seconds > MAX_WORK_SECONDS:
        raise InputError(
            "event",
            f"checking {len(ledger.entries)} distinct mechanism(s) at {len(_grid())} orders would take about {seconds:.3g} s "
            f"(limit {MAX_WORK_SECONDS:g} s): fewer distinct mechanisms (merge equal ones)",
        )


def work(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``events/rdp-fails`` (:func:`fails_seconds`)."""
    ledger, _, _ = _parse_fails(inputs)
    return fails_seconds(ledger, prec), "inputs.event"


#: the work model of the kind (:func:`certify.limits.check_work`)
WORK = {KIND_FAILS: work}


def _validate_fails(inputs: dict) -> None:
    ledger, delta, _ = _parse_fails(inputs)
    if delta == 0:
        raise InputError("target_delta", "must be in (0, 1)")


def _is_fails_input(name: str) -> bool:
    return is_ledger_input(name) or bool(_TARGETS.fullmatch(name))


# --------------------------------------------------------------------------------------------
# the bracket
# --------------------------------------------------------------------------------------------
def _halvings(width: fmpq) -> int:
    """The smallest k with 2^-k <= width."""
    k = 0
    while fmpq(1, 2**k) > width:
        k += 1
    return k


def search_steps() -> int:
    """Float evaluations of the bracket search at most (fixed by the constants, whatever the family): the two ends
    S_MAX and S_MIN, the bisection of the exponent on [S_MIN_EXP, S_MAX_EXP] to a factor 2, then the bisection of
    the value: after k steps hi - lo <= lo_0 2^-k <= hi 2^-k, so k with 2^-k <= REL_WIDTH/2 ends it; and the order
    choice of the passing certificate."""
    return 2 + math.ceil(math.log2(S_MAX_EXP - S_MIN_EXP)) + _halvings(REL_WIDTH / 2) + 1


def _planning_ledger(template, relation) -> Ledger:
    """The family's ledger with the most distinct mechanisms among three noises: a member whose noise equals a fixed
    field of another mechanism merges the two (fewer entries, less work), which three distinct noises cannot all do
    unless the family fixes all three values."""
    ledgers = [ledger_of(substitute(template, s), relation) for s in (fmpq(1), fmpq(3, 2), fmpq(7, 4))]
    return max(ledgers, key=lambda led: len(led.entries))


def check_calibration_work(template, relation, prec: int) -> None:
    """InputError naming ``event`` before any evaluation when the calibration cannot or should not run: an (epsilon,
    delta) event (outside the Rényi curve), the failing certificate (:func:`fails_seconds`) above the checker's
    MAX_WORK_SECONDS, or the whole calibration (:func:`search_steps` float evaluations of FLOAT_FRACTION of that work
    each, the failing certificate, the passing one at its most expensive order) above CALIBRATION_SECONDS. Each
    mechanism's cost is its ``work_seconds``; the rare re-certification of a widened bracket is not counted."""
    ledger = _planning_ledger(template, relation)
    check_nesting(ledger)  # RepeatAndSelect nested deeper than the producers write: refused before any float work
    if any(m.extra_delta != 0 for m, _ in ledger.entries):
        raise InputError("event", "calibration does not cover (epsilon, delta) events (their delta lies outside the Rényi curve)")
    check_fails_work(ledger, prec)
    grid = _grid()
    per_order = [sum(m.work_seconds(a, prec) for m, _ in ledger.entries) for a in grid]
    fails, n = fails_seconds(ledger, prec), len(ledger.entries)
    steps = search_steps()
    whole = steps * FLOAT_FRACTION * sum(per_order) + fails + max(per_order)
    if whole > CALIBRATION_SECONDS:
        raise InputError(
            "event",
            f"calibrating {n} distinct mechanism(s) would take about {whole:.3g} s ({steps} float estimates at {len(grid)} orders and "
            f"two certificates; limit {CALIBRATION_SECONDS:g} s): fewer distinct mechanisms (merge equal ones)",
        )


def _float_eps(template, relation, s: fmpq, delta: fmpq) -> float:
    import numpy as np

    from .accountant import INTEGER_STAGE, _scores

    led = ledger_of(substitute(template, s), relation)
    return float(np.min(_scores(led, "target_delta", delta, INTEGER_STAGE, False)))


def calibrate(template, epsilon, delta, relation="add-remove", notes: dict | None = None) -> Calibration:
    """The certified bracket s_fail < s_pass (module docstring) for the family ``template`` (placeholder ``"$noise"``).
    ``notes``: provenance notes of the targets (``target_delta.note``, ``target_epsilon.note``: floats from a library);
    the passing certificate records the delta's (its only target input), the failing one both."""
    notes = notes or {}
    from .accountant import INTEGER_STAGE, certified_value, certify_events

    target = parse_target_epsilon(epsilon)
    delta = require_in("--delta", exact(delta, "--delta"), 0, 1, "()")
    substitute(template, fmpq(1))  # the placeholder is where it may be

    from ..balls import ctx

    check_calibration_work(template, relation, ctx.prec)

    def passes(s: fmpq) -> bool:
        try:
            return _float_eps(template, relation, s, delta) <= float(target)
        except InputError:  # s outside a mechanism's admissible noise (its ledger refuses it; 1 is inside, as planned):
            return s > 1  # above it counts as passing, below as failing (still monotone); certifying such an end refuses it

    # a fixed number of float evaluations (search_steps): the ends, the exponent, then the value
    if not passes(S_MAX):
        raise InputError("--epsilon", f"no noise up to 2^40 meets epsilon = {exact_str(target)} at delta = {exact_str(delta)} for this family")
    if passes(S_MIN):
        raise InputError("--epsilon", "every noise down to 2^-40 meets the target: the family does not depend on its noise")
    lo_e, hi_e = S_MIN_EXP, S_MAX_EXP  # 2^lo_e fails, 2^hi_e passes
    while hi_e - lo_e > 1:
        mid_e = (lo_e + hi_e) // 2
        if passes(fmpq(2) ** mid_e):
            hi_e = mid_e
        else:
            lo_e = mid_e
    lo, hi = fmpq(2) ** lo_e, fmpq(2) ** hi_e
    while (hi - lo) / hi > REL_WIDTH / 2:
        mid = dyadic(float((lo + hi) / 2), up=True)
        if not lo < mid < hi:
            break
        if passes(mid):
            hi = mid
        else:
            lo = mid
    bound = exact_str(target)
    for _ in range(8):  # the balls confirm the float choice, or the bracket widens by one step
        try:
            passing = certify_events(
                ledger_of(substitute(template, hi), relation),
                delta=delta,
                orders=INTEGER_STAGE,
                bound=bound,
                notes={k: v for k, v in notes.items() if k.startswith("target_delta")},
            )
            break
        except InputError as err:
            if "would not prove" not in err.message:
                raise
            hi = dyadic(float(hi) * (1 + float(REL_WIDTH) / 4), up=True)
    else:  # pragma: no cover - floats and balls agree to far better than 1e-5
        raise InputError("--epsilon", "the float choice and the balls disagree: could not certify the passing side")
    for _ in range(8):
        try:
            failing = certify_fails(ledger_of(substitute(template, lo), relation), delta, target, notes)
            break
        except InputError as err:
            if "would not prove" not in err.message:
                raise
            lo = dyadic(float(lo) * (1 - float(REL_WIDTH) / 4), up=False)
    else:  # pragma: no cover
        raise InputError("--epsilon", "the float choice and the balls disagree: could not certify the failing side")
    assert certified_value(passing) <= target
    return Calibration(lo, hi, passing, failing, exact(passing.witnesses["alpha"], "alpha"))


def summary(cal: Calibration, target: fmpq, delta: fmpq) -> str:
    return (
        f"certify calibrate-event: the smallest noise meeting ({exact_str(target)}, {exact_str(delta)})-DP for this family, as a "
        f"certified bracket (accountant: min over {grid_text()} of the Rényi bound)\n"
        f"  s_fail = {exact_str(cal.s_fail)} (~{float(cal.s_fail):.8g}): certified to fail at every order (kind {KIND_FAILS})\n"
        f"  s_pass = {exact_str(cal.s_pass)} (~{float(cal.s_pass):.8g}): certified to pass (kind events/rdp)\n"
        f"  relative width {upper_decimal(ball(cal.relative_width), 3)}; the bound is non-increasing in the noise "
        "(obligations E-noise-monotone, P-sigma-monotone)\n"
    )


def _example() -> Certificate:
    event = {"class_name": "SelfComposedDpEvent", "count": 10, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "2"}}
    return certify_fails(ledger_of(event, "add-remove"), fmpq(1, 10**5), fmpq(1))


register(
    KIND_FAILS,
    evaluate_rdp_fails,
    _validate_fails,
    _is_fails_input,
    (),
    example=_example,
    fields={"--delta": "target_delta", "--epsilon": "target_epsilon"},
)
