"""Certificate ``pld/dpsgd``: the certified PLD (lossless) accountant, and its evaluator.

Inputs (exact text): sampling, adjacency (the contract), sampling_rate, noise_multiplier, steps, delta,
grid (the loss-grid spacing h). Witnesses (the choices, never re-made): K (fixed-point bits), tau
(truncation threshold, units 2^-K), the one-step grid layout per profile, the profiles whose optimistic
measure is composed for the lower bound (one suffices: the worst direction's delta is at least any
direction's), and the two read-off points epsilon_upper (eps_pass) and epsilon_lower (eps_fail).
Poisson add/remove: ``add_from: "remove"`` with a single ``remove`` layout records that the add direction
is read off the composed remove measures by H_g(Q||P) = 1 - g + g H_(1/g)(P||Q) (:mod:`certify.pld.readoff`;
valid for ANY K and tau, which only set the tightness), both for the upper and the lower bound; without
``add_from`` the recorded ``add`` layout is composed (older certificates, and large eps). Any other mix
(``add_from`` with an ``add`` layout, neither, a fixed-size contract with ``add_from``) is malformed: exit 2.
``chain: "left-to-right"`` records the addition chain of the T-fold powers (:mod:`certify.pld.compose`); certify
writes it; without it the right-to-left chain of older certificates is re-run.
``fft`` ({profile: plan}, issue 24): the T-fold measures are composed by the tilted float FFT with a proven error bound
(:mod:`certify.pld.fft`; certify's default for 1e4 <= T <= 1e7): every profile composed from its own one-step
measures (no ``add_from``, no ``chain``: either with ``fft`` is refused naming it), each plan re-derived by the
producer's :func:`certify.pld.fft.fft_plan` and required equal (refusals name ``witnesses.fft.<profile>.<key>``),
then the pipeline and the read-off re-run; the statement names the composition the run used.

The evaluator RE-RUNS the deterministic pipeline from the recorded choices: one-step discretisations
with their checks in balls (:mod:`certify.pld.discretise`), the exact integer composition with outward
rounding (:mod:`certify.pld.compose`), and the read-off at the two recorded points
(:mod:`certify.pld.readoff`). It chooses nothing; its cost is about that of producing (the bisection it
skips is cheap): measured 43 s to verify vs 37 s to produce at T = 1000, fixed-size, grid 1e-4, on a
loaded 2-core machine.

Quantities:
  ``margin_upper[<profile>]``  min over the used grid points (and gamma = 0) of g_up - (upper value of
                               the curve): >= 0 means the pessimistic one-step measure dominates the curve;
  ``margin_lower[<profile>]``  min of (tangent lower bound) - g_low: >= 0 means it is dominated;
  ``epsilon_upper``, ``epsilon_lower``  the recorded read-off points (exact);
  ``delta_upper``   worst-direction delta of the composed pessimistic measures at epsilon_upper;
  ``delta_lower``   worst-direction delta of the composed optimistic measures at epsilon_lower.
Claims (hypotheses first, then the conclusions):
  ``dominates[<p>]``: margin_upper[<p>] >= 0;  ``dominated[<p>]``: margin_lower[<p>] >= 0;
  ``privacy`` (headline): delta_upper <= delta, i.e. the run is (epsilon_upper, delta)-DP;
  ``tightness``: delta_lower > delta, i.e. the composed dominating pair's exact eps(delta) > epsilon_lower
  (only when epsilon_lower > 0: at a coarse grid no lower bound may be found).
Conclusions: ``privacy`` (resting on every ``dominates[<p>]``) and, with a lower bound, ``tightness``
(resting on every ``dominated[<p>]``).
"""

from __future__ import annotations

from ..balls import exact_in, InputError, ball, exact, exact_str, fmpq, workprec, require_in
from ..certificate import Budget, Certificate, Evaluation, witness_field
from ..contract import CONTRACT_FIELDS, contract_from_inputs, parse_contract
from ..validators import parse_sigma, parse_steps
from ..limits import cap
from ..verify import register
from . import readoff
from .accountant import Plan, derives_add, parse_grid, parse_pld_delta, plan, run, run_seconds
from .discretise import EXTRA_PREC, Layout

KIND = "pld/dpsgd"
HEADLINE = "privacy"


def parse_rate(value, contract, name: str = "--sampling-rate") -> fmpq:
    """The sampling rate q in (0, 1), exact."""
    return exact_in(value, name, 0, 1)


#: the largest noise multiplier of the PLD accountant: beyond, the shift 2/sigma is below the resolution of the
#: one-step curve's evaluation and the discretisation's checks fail (eps is 0 to every printed digit anyway)
MAX_PLD_SIGMA = fmpq(10) ** 20


def parse_pld_sigma(value, name: str = "--noise-multiplier") -> fmpq:
    """sigma: Bok's admissible range (:func:`certify.dpsgd.problem.parse_sigma`) and at most 1e20."""
    s = parse_sigma(value, name)
    return require_in(name, s, 0, MAX_PLD_SIGMA, "(]", shown="<= 1e20 for the PLD accountant")


def parse_pld_steps(value, name: str = "--steps") -> int:
    """T: an integer in [1, 10^15] (the cap ``steps`` of :data:`certify.limits.LIMITS`)."""
    T = parse_steps(value, name)
    return require_in(name, T, 1, cap("steps"), "[]", integer=True)


INPUTS = CONTRACT_FIELDS + ("sampling_rate", "noise_multiplier", "steps", "delta", "grid")
WITNESSES = ("K", "tau", "layouts", "add_from", "chain", "fft", "epsilon_upper", "epsilon_lower", "lower_profiles")


def parse_inputs(inputs: dict):
    """The producer's validators on the certificate's inputs (also ``certify verify``'s)."""
    contract = contract_from_inputs(inputs)
    parse_contract(contract.sampling, contract.adjacency, "pld", sampling_name="sampling", adjacency_name="adjacency", accountant_name="accountant")
    q = parse_rate(inputs.get("sampling_rate"), contract)
    sigma = parse_pld_sigma(inputs.get("noise_multiplier"))
    steps = parse_pld_steps(inputs.get("steps"))
    delta = parse_pld_delta(inputs.get("delta"))
    h = parse_grid(inputs.get("grid"))
    return contract, q, sigma, steps, delta, h


def fill(ev: Evaluation, r, delta: fmpq, eps_up: fmpq, eps_low: fmpq, h: fmpq) -> None:
    """Quantities and claims of a run (shared by producer and checker)."""
    for (name, pess), s in r.one_step.items():
        tag = "upper" if pess else "lower"
        bits = r.plan.K + 64  # a dyadic lower bound of the exact margin
        m = s.checks["margin"]
        m = fmpq(int((m * (fmpq(1) * 2**bits)).floor()), 2**bits)
        ev.add(
            f"margin_{tag}[{name}]",
            ball(m),
            "discretise: pessimistic check" if pess else "discretise: optimistic check",
            "min over the used grid points (and gamma = 0) of "
            + (
                "g_up - upper(curve): >= 0 means the one-step measure's curve dominates the profile for every gamma >= 0"
                if pess
                else "lower(tangent) - g_low: >= 0 means the profile dominates the one-step measure's curve"
            ),
        )
    from .compose import Pld

    fft = any(not isinstance(v, Pld) for v in r.composed.values())  # the method the run used (FftDirection: certify.pld.fft)
    ev.add("epsilon_upper", ball(eps_up), "readoff: eps_pass", "certified epsilon: the run is (epsilon_upper, delta)-DP")
    ev.add("epsilon_lower", ball(eps_low), "readoff: eps_fail", "certified lower bound on the exact eps(delta) of the composed dominating pair")
    with workprec(r.plan.K + EXTRA_PREC):
        du = readoff.delta_upper(r.side(True), eps_up, h)
        dl = readoff.delta_lower(r.side(False), eps_low, h)
    if fft:  # the composition method, re-derived from the run (not copied from the witnesses)
        ev.add(
            "delta_upper",
            du,
            "fft: delta_up(epsilon_upper)",
            "upper bound of m_inf + sum m_i (1 - e^(eps - l_i))_+ of the T-fold pessimistic measures (worst direction), "
            "by the tilted float FFT with its proven error bound (certify.pld.fft)",
        )
        ev.add(
            "delta_lower",
            dl,
            "fft: delta_low(epsilon_lower)",
            "lower bound of the same read-off of the T-fold optimistic measures (worst direction), by the tilted float FFT",
        )
    else:
        ev.add(
            "delta_upper",
            du,
            "readoff: delta_up(epsilon_upper)",
            "m_inf + sum m_i (1 - e^(eps - l_i))_+ of the composed pessimistic measures (worst direction)",
        )
        ev.add("delta_lower", dl, "readoff: delta_low(epsilon_lower)", "the same read-off of the composed optimistic measures (worst direction)")
    for name, pess in r.one_step:
        tag = "upper" if pess else "lower"
        ev.claim(
            f"{'dominates' if pess else 'dominated'}[{name}]",
            (
                f"the pessimistic one-step measure dominates the {name} profile for every gamma >= 0"
                if pess
                else f"the {name} profile dominates the optimistic one-step measure for every gamma >= 0"
            ),
            f"margin_{tag}[{name}]",
            ">=",
            "0",
            "discretise",
        )
    ev.claim(HEADLINE, "delta_up(epsilon_upper) <= delta: the run is (epsilon_upper, delta)-DP", "delta_upper", "<=", exact_str(delta), "readoff")
    d, eu, el = exact_str(delta), exact_str(eps_up), exact_str(eps_low)
    how = ", composed by a tilted float FFT with a proven error bound" if fft else ""
    ev.conclude(
        HEADLINE,
        f"the run is ({eu}, {d})-DP (certified PLD accountant, grid {exact_str(h)}{how})",
        HEADLINE,
        [c.name for c in ev.claims if c.name.startswith("dominates[")],
    )
    if eps_low > 0:  # epsilon_lower = 0: no lower bound was found at this grid (eps >= 0 says nothing)
        ev.claim(
            "tightness",
            "delta_low(epsilon_lower) > delta: the exact eps(delta) of the composed pair exceeds epsilon_lower",
            "delta_lower",
            ">",
            d,
            "readoff",
        )
        ev.conclude(
            "tightness",
            f"the exact epsilon at delta = {d} of the composed dominating pair exceeds {el}{' (FFT composition)' if fft else ''}",
            "tightness",
            [c.name for c in ev.claims if c.name.startswith("dominated[")],
        )
    if fft:
        ev.budget = Budget.of(
            {
                "fft_points": {n: str(p.N) for n, p in sorted(r.plan.fft.items())},
                "width": "eps_up - eps_low: one-step discretisation (connect-the-dots vs tangents, both O(h^2) per step) "
                "+ the FFT's a-priori error bound and alias (certify.pld.fft) + bisection resolution 2^-24",
            }
        )
        return
    ev.budget = Budget.of(
        {
            "composed_atoms": {f"{n}/{'pessimistic' if s else 'optimistic'}": str(c.atoms) for (n, s), c in sorted(r.composed.items())},
            "width": "eps_up - eps_low: one-step discretisation (connect-the-dots vs tangents, both O(h^2) per step) "
            "+ 2^-K rounding + truncation (<= tau per product) + bisection resolution 2^-24",
        }
    )


def evaluate(inputs: dict, witnesses: dict) -> Evaluation:
    contract, q, sigma, steps, delta, h = parse_inputs(inputs)
    pl = Plan.from_json(h, witnesses)
    # the read-off points are exact texts as certify writes them (a JSON integer such as 0 is refused, not read)
    eps_up = exact(witness_field(witnesses, "epsilon_upper", "witnesses.epsilon_upper", str), "epsilon_upper")
    eps_low = exact(witness_field(witnesses, "epsilon_lower", "witnesses.epsilon_lower", str), "epsilon_lower")
    if eps_up < 0 or eps_low < 0:
        raise InputError("witnesses", "read-off points must be >= 0")
    lower = witnesses.get("lower_profiles")
    if not (isinstance(lower, list) and all(isinstance(x, str) for x in lower)):
        raise InputError("witnesses", "lower_profiles must be a list of profile names")
    fft = pl.fft is not None  # the recorded composition method (certify writes either; both are re-derived)
    if fft and (pl.add_from is not None or pl.chain is not None):
        raise InputError(
            "witnesses.chain" if pl.chain is not None else "witnesses.add_from",
            "an FFT certificate (witness fft) records neither chain nor add_from: they belong to the exact chain",
        )
    derive = pl.add_from is not None if derives_add(contract) else None  # the producer's own derive_add: the recorded choice
    want = plan(contract, q, sigma, steps, delta, h, derive_add=derive, fft=fft)
    check_scale(pl, want)
    again = lambda hh: plan(contract, q, sigma, steps, delta, hh, derive_add=derive, fft=fft).layouts  # noqa: E731
    check_layouts(pl.layouts, lambda hh: want.layouts if hh == h else again(hh), h)
    r = run(contract, q, sigma, steps, pl, lower=tuple(lower), delta=delta)
    check_searched(r, pl, delta, h, eps_up, eps_low, tuple(lower))
    ev = Evaluation()
    fill(ev, r, delta, eps_up, eps_low, h)
    return ev


def check_scale(pl: Plan, want: Plan) -> None:
    """K and tau are the ones the producer's plan chooses (:func:`certify.pld.accountant.plan`, re-run by the
    checker from the inputs and the recorded direction choice): any K and tau give a sound bracket, so this refuses a
    file certify never writes, not a false bound. K comes from ``bits_for(delta)`` and, for a derived add direction,
    ``eps_bits`` (a float Rényi estimate: another libm could move it where ``eps_est log2(e)`` lies within a few ulps of
    an integer; a genuine certificate would then be refused, never a forged one accepted); tau from K exactly."""
    if pl.K != want.K:
        raise InputError("witnesses.K", f"must be {want.K}, the fixed-point scale certify chooses for these inputs, got {pl.K}")
    if pl.tau != want.tau:
        got = str(pl.tau) if pl.tau.bit_length() <= 256 else f"an integer of {pl.tau.bit_length()} bits"
        raise InputError("witnesses.tau", f"must be {want.tau}, the truncation certify chooses for these inputs and K, got {got}")


def check_searched(r, pl: Plan, delta: fmpq, h: fmpq, eps_up: fmpq, eps_low: fmpq, lower: tuple) -> None:
    """The read-off points and the lower profile are the ones the producer's searches leave (:func:`certify.pld._certify_at`):
    the dyadic bisections of :func:`readoff.epsilon_pass` / :func:`readoff.epsilon_fail` and the direction deciding
    eps_up, re-run on the re-derived composed measures (exact and deterministic: balls at the recorded precision), so
    a bracket the balls merely confirm, but no search leaves, is a file certify never writes."""
    if readoff.epsilon_pass(r.side(True), delta, h) != eps_up:
        raise InputError("witnesses", "epsilon_upper is not the point the read-off search leaves (readoff.epsilon_pass)")
    names = tuple(pl.layouts)
    if len(names) > 1:
        with workprec(pl.K + EXTRA_PREC):
            ups = {n: readoff.delta_at(r.composed[(n, True)], eps_up, h).mid() for n in names}
        want = (max(names, key=lambda n: ups[n]),)
    else:
        want = names
    if lower != want:
        raise InputError("witnesses", f"lower_profiles must be {list(want)}: the direction that decides epsilon_upper")
    if readoff.epsilon_fail(r.side(False), delta, h, eps_up) != eps_low:
        raise InputError("witnesses", "epsilon_lower is not the point the read-off search leaves (readoff.epsilon_fail)")


#: relative margin of the layout rule's float decisions (docs/reference/certificate.md, "Choices made with floats"):
#: a float quantity within LAYOUT_MARGIN (relative) of the boundary of its floor / ceiling may land on either side on
#: another platform's libm, so either neighbouring index is accepted there; everywhere else the index must be equal
LAYOUT_MARGIN = fmpq(1, 10**12)


def check_layouts(recorded: dict[str, Layout], derive, h: fmpq, name: str = "witnesses.layouts") -> None:
    """The recorded one-step layouts are the ones the producer chooses: ``derive(h)`` is the producer's own plan
    function at the grid h (:func:`certify.pld.accountant.plan`, :func:`certify.pld.ledger.plan`: one source, so a
    change of the layout rule is followed here), and its layouts must equal the recorded ones. Any layout is sound
    (:class:`certify.pld.discretise.Layout`), so this refuses a file certify never writes (bands dropped or moved,
    core or window moved), not a false bound.

    Floats place the indices (``window_of``: floor(lo / h) - 1, ceil(hi / h) + 1 of libm-computed loss ranges), so
    another platform may differ where such a quotient lies within a few ulps of an integer. Tolerance, and only
    there: the layouts are re-derived at h (1 + m) and h (1 - m), m = :data:`LAYOUT_MARGIN`, which moves every
    quotient lo / h, hi / h by exactly the relative amount m (h enters the rule only through them), and every
    index of a window is monotone in its quotient (floor, ceiling, min, max, clamps); so an index whose quotient is
    within m of its boundary takes both neighbouring values across the three runs, every other index one value,
    and each recorded index must lie between the runs' extremes. The band count and strides (``g > core_eta`` and
    the grades) must be equal. Cost: one plan (floats only, no ball arithmetic) when equal, three otherwise."""
    want = derive(h)
    if recorded == want:
        return
    if set(recorded) != set(want):
        raise InputError(name, f"must hold the layouts {sorted(want)[:8]} that certify chooses, got {sorted(recorded)[:8]}")
    runs = [want]
    for hh in (h * (1 + LAYOUT_MARGIN), h * (1 - LAYOUT_MARGIN)):
        try:
            runs.append(derive(hh))
        except InputError:  # the nudged grid crosses a cap: no tolerance from it
            pass
    for key, lay in recorded.items():
        if not _within(lay, [r[key] for r in runs if key in r]):
            raise InputError(
                name,
                f"layout {key!r} is not the one certify chooses at this grid ({_show(want[key])}), got {_show(lay)}"
                " (a file from an earlier layout rule: re-run the command that wrote it)",
            )


def _fields(lay: Layout) -> tuple[tuple, list[int]]:
    """(shape, indices): the stride and band strides (must be equal), and every index (each within its runs' range)."""
    shape = (lay.stride, tuple(s for _, _, s in lay.bands))
    return shape, [lay.lo, lay.hi, lay.core_lo, lay.core_hi] + [x for a, b, _ in lay.bands for x in (a, b)]


def _within(lay: Layout, runs: list[Layout]) -> bool:
    shape, idx = _fields(lay)
    fs = [_fields(r) for r in runs]
    if any(s != shape for s, _ in fs):
        return False
    return all(min(f[1][i] for f in fs) <= x <= max(f[1][i] for f in fs) for i, x in enumerate(idx))


def _show(lay: Layout) -> str:
    import json

    return json.dumps(lay.to_json(), separators=(",", ":"))[:160]


def make_certificate(inputs: dict, pl: Plan, r, delta: fmpq, eps_up: fmpq, eps_low: fmpq, h: fmpq, lower: tuple) -> Certificate:
    ev = Evaluation()
    fill(ev, r, delta, eps_up, eps_low, h)
    w = pl.to_json()
    w["epsilon_upper"] = exact_str(eps_up)
    w["epsilon_lower"] = exact_str(eps_low)
    w["lower_profiles"] = list(lower)
    return Certificate(KIND, inputs, ev, w, None, precision=pl.K + EXTRA_PREC)


def work(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``pld/dpsgd``: :func:`certify.pld.accountant.run_seconds` of the recorded plan (the checker
    re-runs the deterministic pipeline: sampling per grid point, exact composition per chain)."""
    _, _, _, steps, _, h = parse_inputs(inputs)
    pl = Plan.from_json(h, witnesses)
    lower = witnesses.get("lower_profiles")
    chains = len(pl.layouts) + (len(lower) if isinstance(lower, list) else 0)
    return run_seconds(pl, steps, chains), "witnesses.fft" if pl.fft is not None else "witnesses.layouts"


def _example() -> Certificate:
    from . import certify_pld

    return certify_pld(("fixed-size", "replace-one"), "1/100", "2", 20, "1e-5", grid="1e-2")


def recorded_precision(witnesses: dict) -> int:
    """The precision the producer records: K + EXTRA_PREC bits (K the witnessed scale)."""
    K = witnesses["K"]
    if type(K) is not int:
        raise ValueError("K must be an integer")
    return K + EXTRA_PREC


#: the evaluator runs at the recorded K whatever the working precision, and its one-step measures and chains are
#: memoised (:func:`certify.pld.accountant.one_steps`, :func:`certify.pld.compose.power`): the checker's fallback
#: at the recorded precision repeats only the read-off
work.fallback_cost = False

#: the work model of the kind (:func:`certify.limits.check_work`)
WORK = {KIND: work}

register(KIND, evaluate, parse_inputs, INPUTS, WITNESSES, example=_example, precision_of=recorded_precision)
