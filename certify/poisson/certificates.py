"""Certificate kind ``dpsgd/renyi-poisson``: (epsilon, delta)-DP of a Poisson-sampled DP-SGD run.

Inputs (exact text, see :func:`certify.poisson.schedule.schedule_inputs`): the contract (poisson +
add-remove, sensitivity C, noise relative to the clip norm C, privacy unit one example), delta, and each
phase's sampling rate q, noise multiplier sigma and steps T (with a ``.note`` when a value came from a
library as a binary float). Witnesses: the Rényi order ``alpha`` (chosen by floats; any alpha > 1 gives a
valid bound, so the checker only re-evaluates at it) and ``epsilon_bound``, the decimal the headline
claim states.

Quantities (balls containing the exact values; ``upper`` rounds up):
  ``alpha``        the Rényi order (exact);
  ``rdp[i]``       eps_RDP(alpha) of one step of phase i: log(A_alpha)/(alpha-1), the binomial sum of
                   Mironov, Talwar, Zhang (2019, Sec. 3.3 Case I), by the convexity chord for fractional alpha;
                   the equation labels say "MTZ19 Sec. 3" (kept so that issued certificates still verify);
  ``rdp_total``    sum_i T_i rdp[i] (Rényi composition over all steps of all phases, Mironov 2017 Prop. 1);
  ``epsilon``      rdp_total + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1) (Balle et al. 2020,
                   Theorem 21, the conversion Opacus and dp_accounting use); its upper endpoint is the
                   certified epsilon.
Claims: one per hypothesis (q in (0, 1], sigma > 0, T >= 1 for every phase; delta in (0, 1); 1 < alpha <=
4096), then the headline ``dp``: epsilon <= epsilon_bound, i.e. the run is (epsilon_bound, delta)-DP
under the recorded contract.
"""

from __future__ import annotations

from functools import lru_cache

from ..balls import InputError, arb, ball, ball_endpoints, ctx, exact_str, fmpq, upper_decimal, exact_in, exact_int
from ..certificate import Budget, Evaluation, exact_operand, reported_bound, witness_field
from ..contract import POISSON_ADD_REMOVE
from ..renyi import epsilon_of_rdp
from ..verify import register
from ..limits import refuse_above
from .rdp import ALPHA_MAX, check_work, rdp_ball, work_seconds
from .schedule import Schedule, guard_size, is_schedule_input, parse_delta, schedule_from_inputs

KIND = "dpsgd/renyi-poisson"
EQ_RDP = "MTZ19 Sec. 3"
EQ_CHORD = "MTZ19 Sec. 3 + convexity chord"
EQ_INTEGRAL = "MTZ19 Sec. 3 integral (or chord if smaller)"
EQ_COMPOSE = "Mironov17 Prop. 1"
EQ_CONVERT = "Balle20 Thm 21"


def parse_alpha(value, name: str = "--alpha") -> fmpq:
    """A Rényi order: exact rational with 1 < alpha <= 4096 (fractional orders use the chord)."""
    return guard_size(exact_in(value, name, 1, ALPHA_MAX, "(]"), name)


def epsilon_ball(rdp_total: arb, alpha: fmpq, delta: fmpq) -> arb:
    """Balle et al. (2020), Thm 21: eps = rdp + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1) (the generic
    conversion :func:`certify.renyi.epsilon_of_rdp`; DP-SGD is one of its clients)."""
    return epsilon_of_rdp(rdp_total, alpha, delta)


def evaluate(schedule: Schedule, delta: fmpq, alpha: fmpq, epsilon_bound: str | None = None, fractional: str = "chord") -> Evaluation:
    """Every quantity and claim of the certificate at the current precision (producer and checker).

    ``epsilon_bound`` None (producer): the headline bound is the upper endpoint of the epsilon ball
    rounded up to 10 significant digits. ``fractional`` ("chord" or "integral") is how a fractional alpha
    is evaluated (:func:`certify.poisson.rdp.rdp_ball`). Raises InputError when a hypothesis fails.
    """
    if schedule.contract != POISSON_ADD_REMOVE:
        raise InputError(
            "sampling", f"kind {KIND} certifies poisson + add-remove only, got {schedule.contract.sampling} + {schedule.contract.adjacency}"
        )
    ev = Evaluation()
    for i, ph in enumerate(schedule.phases):
        qv, sv = ph.sampling_rate, ph.noise_multiplier
        q, s = exact_str(qv), exact_str(sv)
        _hyp(ev, f"hyp:phase[{i}].sampling_rate>0", f"phase {i}: sampling rate q = {q} > 0", q, ">", "0", (qv, _ZERO))
        _hyp(ev, f"hyp:phase[{i}].sampling_rate<=1", f"phase {i}: sampling rate q = {q} <= 1", q, "<=", "1", (qv, _ONE))
        _hyp(ev, f"hyp:phase[{i}].noise_multiplier>0", f"phase {i}: noise multiplier sigma = {s} > 0", s, ">", "0", (sv, _ZERO))
        _hyp(ev, f"hyp:phase[{i}].steps>=1", f"phase {i}: steps T = {ph.steps} >= 1", str(ph.steps), ">=", "1", (fmpq(ph.steps), _ONE))
    d, a = exact_str(delta), exact_str(alpha)
    _hyp(ev, "hyp:delta>0", f"delta = {d} > 0", d, ">", "0", (delta, _ZERO))
    _hyp(ev, "hyp:delta<1", f"delta = {d} < 1", d, "<", "1", (delta, _ONE))
    _hyp(ev, "hyp:alpha>1", f"Rényi order alpha = {a} > 1 (the conversion needs alpha > 1)", a, ">", "1", (alpha, _ONE))
    _hyp(ev, f"hyp:alpha<={ALPHA_MAX}", f"Rényi order alpha = {a} <= {ALPHA_MAX}", a, "<=", str(ALPHA_MAX), (alpha, _ALPHA_MAX))

    integer = alpha.q == 1
    # the work is decided before any sum (hypotheses above are exact comparisons, cheap for any input)
    check_work(alpha, len({(ph.sampling_rate, ph.noise_multiplier) for ph in schedule.phases}), ctx.prec, fractional, len(schedule.phases))
    ev.add("alpha", ball(alpha), "witness", "Rényi order (chosen by float estimates; any alpha > 1 is valid)", integer=integer)
    total = arb(0)
    for i, ph in enumerate(schedule.phases):
        how = (
            ""
            if integer
            else (
                ", by the chord of K = (alpha-1) eps_RDP between the integers around alpha"
                if fractional == "chord"
                else ", by the defining integral in balls (Arb quadrature + Gaussian tail bounds), or the chord when that is smaller"
            )
        )
        r = ev.add(
            f"rdp[{i}]",
            rdp_ball(alpha, ph.sampling_rate, ph.noise_multiplier, fractional),
            EQ_RDP if integer else (EQ_CHORD if fractional == "chord" else EQ_INTEGRAL),
            f"one-step eps_RDP(alpha) of phase {i}: log(sum_k C(alpha,k)(1-q)^(alpha-k) q^k exp(k(k-1)/(2 sigma^2)))/(alpha-1){how}",
        )
        total = total + ph.steps * r
    ev.add("rdp_total", total, EQ_COMPOSE, "sum over phases of T_i eps_RDP_i(alpha) (Rényi composition)")
    eps = ev.add(
        "epsilon",
        epsilon_ball(total, alpha, delta),
        EQ_CONVERT,
        "rdp_total + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1); upper endpoint is the certified epsilon",
    )
    bound = upper_decimal(eps, 10) if epsilon_bound is None else claimed_or_reported(schedule.source, epsilon_bound, eps)
    ev.claim(
        "dp",
        f"the DP-SGD run ({len(schedule.phases)} phase(s), {schedule.total_steps} steps; poisson "
        f"sampling, add-remove adjacency, sensitivity C, noise sigma*C, privacy unit one example) is "
        f"(epsilon, delta)-DP with epsilon = {bound}, delta = {d} (Rényi bound of MTZ19 at alpha = {a}; the "
        "add direction is dominated by the remove direction, MTZ19 Sec. 3)",
        "epsilon",
        "<=",
        bound,
        EQ_CONVERT,
    )
    ev.conclude(
        "dp", f"the run is ({bound}, {d})-DP (poisson sampling, add-remove adjacency)", "dp", [c.name for c in ev.claims if c.name.startswith("hyp:")]
    )
    lo, hi = ball_endpoints(eps)
    ev.budget = Budget.of(
        {
            "alpha": "recorded witness (any alpha > 1 gives a valid bound; the checker never searches)",
            "epsilon width (upper - lower)": upper_decimal(hi - lo, 3),
        }
    )
    return ev


#: the sources whose certificates may state a claimed bound (an integer or a fraction) instead of the reported one:
#: an audit restates a claim about a schedule file, an Opacus history or a dp_accounting event
#: (certify.audit.audit), a calibration states its target (certify.poisson.calibrate), always
CLAIM_SOURCES = ("schedule", "Opacus history", "dp_accounting event", "calibration")


def claimed_or_reported(source: str, text, eps: arb) -> str:
    """The headline bound certify writes for a run from ``source``: the reported upper decimal of ``eps``
    (:func:`certify.certificate.reported_bound`), or a claimed bound where a producer states one (CLAIM_SOURCES;
    a calibration states only its target). InputError naming ``epsilon_bound`` otherwise."""
    text = reported_bound(text, eps, 10, "epsilon_bound", claimed=source in CLAIM_SOURCES)
    if source == "calibration" and not canonical_claim(text):
        raise InputError("epsilon_bound", "a calibration states its target epsilon (an integer or a fraction), never a reported decimal")
    return text


def canonical_claim(text: str) -> bool:
    """An integer or a fraction: how certify spells a claimed bound (never an outward decimal ``1.7e0``)."""
    return "e" not in text


_ZERO, _ONE, _ALPHA_MAX = fmpq(0), fmpq(1), fmpq(ALPHA_MAX)


def _hyp(ev: Evaluation, name: str, statement: str, lhs: str, rel: str, rhs: str, values: tuple | None = None) -> None:
    """A hypothesis on exact inputs (decided exactly; ``values`` are the parsed operands of ``lhs``, ``rhs``)."""
    if not ev.claim(name, statement, lhs, rel, rhs, "hypothesis", values=values):
        raise InputError(name[4:], f"hypothesis fails: {statement}")


@lru_cache(maxsize=64)
def _parse_inputs(items: tuple) -> tuple[Schedule, fmpq]:
    inputs = dict(items)
    return schedule_from_inputs(inputs), parse_delta(inputs.get("delta"), "delta")


def parse_inputs(inputs: dict) -> tuple[Schedule, fmpq]:
    """(schedule, delta) read from a certificate's inputs; InputError on anything malformed.

    Memoised on the exact text (a pure function of it), so that ``certify verify``, which runs the
    validator and then the evaluator on the same inputs, parses them once; the parse itself is unchanged.
    """
    if isinstance(inputs, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in inputs.items()):
        return _parse_inputs(tuple(sorted(inputs.items())))
    return schedule_from_inputs(inputs), parse_delta(inputs.get("delta"), "delta")


def evaluate_renyi_poisson(inputs: dict, witnesses: dict) -> Evaluation:
    """The checker's evaluator: re-evaluates at the recorded alpha (never searches)."""
    schedule, delta = parse_inputs(inputs)
    if not isinstance(witnesses, dict) or set(witnesses) - {"fractional"} != {"alpha", "epsilon_bound"}:
        raise InputError("witnesses", "must be {'alpha': ..., 'epsilon_bound': ...[, 'fractional': 'integral']}")
    # certify writes the mode only for "integral" (the chord is the default, and an integer order has no mode)
    fractional = witness_field(witnesses, "fractional", "fractional", str) if "fractional" in witnesses else "chord"
    if "fractional" in witnesses and fractional != "integral":
        raise InputError("fractional", f"certify writes 'integral' here or leaves the key out (the chord), got {fractional[:40]!r}")
    if type(witnesses["alpha"]) is not str:  # certify writes the order as exact text ("37/4", "9")
        raise InputError("alpha", "must be exact text, as certify writes the order")
    alpha = parse_alpha(witnesses["alpha"], "alpha")
    bound = witnesses["epsilon_bound"]
    if not isinstance(bound, str):
        raise InputError("epsilon_bound", "must be exact text")
    try:  # parsed as the claim "dp" will read it (memoised there), errors named as the witness
        exact_operand(bound)
    except InputError as err:
        raise InputError("epsilon_bound", err.message) from None
    return evaluate(schedule, delta, alpha, bound, fractional)


def validate(inputs: dict) -> None:
    """The producer's validators, applied by ``certify verify`` before evaluating."""
    parse_inputs(inputs)


def _example():
    from .accountant import certify_poisson
    from .schedule import parse_schedule

    return certify_poisson(
        parse_schedule([{"sampling_rate": "1/100", "noise_multiplier": "11/10", "steps": 1000}], contract=POISSON_ADD_REMOVE),
        "1e-5",
        fractional="chord",  # the kind's example keeps the chord (the conformance and forger suites edit it)
    )


def schedule_shape(inputs: dict) -> tuple[int, int]:
    """(phases, distinct (q, sigma) pairs) of a schedule certificate's inputs, from the text alone (no parsing of
    numbers: textually distinct pairs are at least the distinct values); the phase count capped first."""
    n = exact_int(inputs["phases"], "phases")
    refuse_above("schedule_phases", n, "inputs.phases")
    pairs = {(inputs.get(f"phase[{i}].sampling_rate"), inputs.get(f"phase[{i}].noise_multiplier")) for i in range(max(n, 0))}
    return n, len(pairs)


def work(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``dpsgd/renyi-poisson``: :func:`certify.poisson.rdp.work_seconds` at the recorded alpha (a
    fractional alpha in integral mode costs a quadrature per distinct pair) for the recorded phases."""
    n, pairs = schedule_shape(inputs)
    alpha = parse_alpha(witnesses["alpha"], "witnesses.alpha")
    fractional = witnesses.get("fractional", "chord")
    w = work_seconds(alpha, pairs, prec, fractional, n)
    field = "witnesses.fractional" if alpha.q != 1 and fractional == "integral" and pairs * 1e-2 > n * 3.5e-4 else "inputs.phases"
    return w, field


#: the work model of the kind (:func:`certify.limits.check_work`)
WORK = {KIND: work}

register(KIND, evaluate_renyi_poisson, validate, is_schedule_input, ("alpha", "epsilon_bound", "fractional"), example=_example)
