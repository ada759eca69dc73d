"""Certified calibration of the noise multiplier for Poisson-sampled DP-SGD.

The accountant being calibrated is fixed: eps_G(sigma) = min over the order grid G (integers 2..256 and
288, 320, ..., 4096; :data:`certify.poisson.rdp.ORDERS`) of the Rényi bound

    eps(alpha; sigma) = T log(A_alpha(q, sigma))/(alpha-1) + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1).

Each eps(alpha; .) is non-increasing in sigma (every term of A_alpha decreases in sigma: proof obligation
``P-sigma-monotone`` in :mod:`certify.poisson.proofs`), hence so is eps_G. The answer is a bracket of exact
dyadics s_fail < s_pass with relative width (s_pass - s_fail)/s_pass <= 1e-4:

* s_pass comes with a ``dpsgd/renyi-poisson`` certificate at one order of G: eps_G(s_pass) <= target;
* s_fail comes with a ``dpsgd/renyi-poisson-fails`` certificate: eps(alpha; s_fail) > target for every
  alpha in G (the checker re-evaluates all of them), so eps_G(s_fail) > target,

and by monotonicity every sigma <= s_fail fails: s_pass is the smallest passing sigma of this accountant up
to the bracket. The bracket is found by bisection on float estimates (a choice), then certified.

With fractional orders (the default of ``certify calibrate-dpsgd``, ``fractional=True``) the accountant is the
minimum over G and the sixteenths F = {a + j/16 : 1 <= a <= 15, 1 <= j <= 15} (as tight as the float libraries,
whose orders 1.1, ..., 10.9 F refines near the optimum): the passing side is a ``dpsgd/renyi-poisson``
certificate at one order of G u F (a fractional one by its defining integral), the failing side re-evaluates a
*lower* bound at every order of F, cheap by convexity (K is convex with K(1) = 0, so on (a, a+1) it lies above
both neighbouring secants, extended, and above 0), and by the integral in balls where that does not decide.
eps(alpha; .) is non-increasing in sigma at every real alpha (the same obligation), so the bracket means the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..balls import (
    InputError,
    Tri,
    arb,
    ball,
    compare,
    escalate,
    exact,
    exact_in,
    exact_str,
    float_of,
    fmpq,
    log_float,
    lower_decimal,
    upper_decimal,
)
from ..certificate import Budget, Certificate, Evaluation
from ..contract import POISSON_ADD_REMOVE
from ..verify import register
from .certificates import EQ_CONVERT, _hyp, epsilon_ball
from .rdp import ORDERS, log_A_frac, log_A_int, rdp_ball, work_seconds
from .schedule import Phase, Schedule, guard_size, parse_delta, parse_sampling_rate, parse_steps
from .schedule import is_schedule_input, schedule_from_inputs
from .schedule import schedule_inputs

KIND_FAILS = "dpsgd/renyi-poisson-fails"
GRID = ORDERS[1:]
GRID_TEXT = "integers 2..256 and " + ", ".join(str(a) for a in GRID if a > 256)
#: the fractional orders of the calibrated grid (sixteenths between the integers 1..16)
SIXTEENTHS = tuple(fmpq(j, 16) for j in range(17, 256) if j % 16)
GRID_FRAC_TEXT = GRID_TEXT + "; and a + j/16 for 1 <= a, j <= 15 (lower bounds: convexity secants, else the defining integral)"
#: at most this many fractional orders of a failing certificate may need the integral (a deterministic work guard)
MAX_INTEGRALS = 48
REL_WIDTH = fmpq(1, 10**4)
BITS = 40  # dyadic endpoints m / 2^e with at most 40 significant bits


@dataclass
class Calibration:
    s_fail: fmpq
    s_pass: fmpq
    passing: Certificate
    failing: Certificate
    alpha: fmpq
    fractional: bool = False

    @property
    def relative_width(self) -> fmpq:
        return (self.s_pass - self.s_fail) / self.s_pass


def parse_epsilon(value, name: str = "--epsilon") -> fmpq:
    return guard_size(exact_in(value, name, 0, 10**6, "(]", shown="in (0, 1e6]"), name)


# --------------------------------------------------------------------------------------------
# floats: the choice of the bracket
# --------------------------------------------------------------------------------------------
def _eps_floats(q: float, sigma: float, steps: int, log_delta: float):
    """Float eps at every order of GRID (:func:`certify.poisson.choice.epsilons_at_orders`; numpy, imported here)."""
    from .choice import epsilons_at_orders

    return epsilons_at_orders(q, sigma, steps, log_delta)


def _eps_min_float(q: float, sigma: float, steps: int, log_delta: float, fractional: bool) -> tuple[float, fmpq]:
    """(float estimate of min eps, the order attaining it) over G, or over G u F (F near the best integer only:
    eps is unimodal in alpha in practice; a choice, the certificates decide)."""
    import numpy as np

    from .choice import epsilons, log_A_frac_floats

    e = _eps_floats(q, sigma, steps, log_delta)
    i = int(e.argmin())
    best, alpha = float(e[i]), fmpq(GRID[i])
    if fractional and GRID[i] <= 16 and 0.05 <= sigma <= 1e3:  # (the trapezoid's step follows sigma: no floats at the ends)
        al = np.array([float_of(a) for a in SIXTEENTHS if abs(float_of(a) - GRID[i]) < 1])
        ef = epsilons(steps * log_A_frac_floats(al, q, sigma), al, log_delta)
        j = int(ef.argmin())
        if ef[j] < best:
            best, alpha = float(ef[j]), fmpq(round(al[j] * 16), 16)
    return best, alpha


def _float_sigma(q: float, steps: int, log_delta: float, target: float, fractional: bool = False) -> float:
    """Float estimate of the smallest sigma with min_G eps <= target (bisection in log sigma)."""

    def _eps_floats_min(q, sigma, steps, log_delta):
        return _eps_min_float(q, sigma, steps, log_delta, fractional)[0]

    lo, hi = 1e-6, 1e6
    if _eps_floats_min(q, hi, steps, log_delta) > target:
        raise InputError(
            "--epsilon", f"target {target:g} is not reachable: even sigma = 1e6 gives more (the conversion's log(1/delta) term alone exceeds it)"
        )
    if _eps_floats_min(q, lo, steps, log_delta) <= target:
        raise InputError(
            "--epsilon", f"target {target:g} is met already at sigma = 1e-6 (the smallest noise multiplier accepted): nothing to calibrate"
        )
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if _eps_floats_min(q, mid, steps, log_delta) <= target:
            hi = mid
        else:
            lo = mid
        if hi / lo - 1 < 1e-9:
            break
    return hi


def dyadic(x: float, up: bool) -> fmpq:
    """A dyadic m/2^e next to x (above if ``up``) with BITS significant bits (also the event calibration's)."""
    m, e = math.frexp(x)
    scale = 2**BITS
    n = math.ceil(m * scale) if up else math.floor(m * scale)
    e -= BITS
    return fmpq(n) * fmpq(2) ** e if e >= 0 else fmpq(n, 2 ** (-e))


# --------------------------------------------------------------------------------------------
# certificates
# --------------------------------------------------------------------------------------------
def _fractional_lower(ph: Phase, delta: fmpq, target: fmpq, a: fmpq, integral_allowed: bool):
    """(a ball containing a LOWER bound on eps(a) at a fractional order a, the number of integrals used).

    K(a) >= max(0, K(a0) + t (K(a0) - K(a0 - 1)), K(a0 + 1) - (1 - t)(K(a0 + 2) - K(a0 + 1))), a = a0 + t (the secants
    of the convex K on [a0 - 1, a0] and [a0 + 1, a0 + 2], extended; K(1) = 0, K >= 0), and eps increases with K. When
    that bound does not exceed the target the defining integral's enclosure (two-sided) is used; the rule is
    deterministic, so the checker re-derives the same ball. InputError beyond MAX_INTEGRALS integrals."""
    q, s = ph.sampling_rate, ph.noise_multiplier
    a0 = int(a.floor())
    t = ball(a - a0)

    def K(n):
        return log_A_int(n, q, s)

    low = arb(0).max(K(a0 + 1) - (1 - t) * (K(a0 + 2) - K(a0 + 1)))
    if a0 >= 2:
        low = low.max(K(a0) + t * (K(a0) - K(a0 - 1)))
    e = epsilon_ball(ph.steps * low / ball(a - 1), a, delta)
    if compare(e, ">", ball(target)) is Tri.TRUE:
        return e, 0
    if not integral_allowed:
        raise InputError("--epsilon", f"more than {MAX_INTEGRALS} fractional orders need the defining integral (a work guard)")
    k = log_A_frac(a, q, s)
    if not k.is_finite():
        return e, 1  # the convexity bound stands (valid; the claim may then be undecided)
    return epsilon_ball(ph.steps * k / ball(a - 1), a, delta), 1


def evaluate_fails(schedule: Schedule, delta: fmpq, target: fmpq, fractional: bool = False) -> Evaluation:
    """eps(alpha; sigma) > target at every alpha of G (one phase), or of G u F with ``fractional``, as quantities
    and claims."""
    if schedule.contract != POISSON_ADD_REMOVE or len(schedule.phases) != 1:
        raise InputError("sampling", f"{KIND_FAILS} certifies one poisson + add-remove phase")
    ph = schedule.phases[0]
    ev = Evaluation()
    q, s, d, t = exact_str(ph.sampling_rate), exact_str(ph.noise_multiplier), exact_str(delta), exact_str(target)
    _hyp(ev, "hyp:sampling_rate>0", f"sampling rate q = {q} > 0", q, ">", "0")
    _hyp(ev, "hyp:sampling_rate<=1", f"sampling rate q = {q} <= 1", q, "<=", "1")
    _hyp(ev, "hyp:noise_multiplier>0", f"noise multiplier sigma = {s} > 0", s, ">", "0")
    _hyp(ev, "hyp:steps>=1", f"steps T = {ph.steps} >= 1", str(ph.steps), ">=", "1")
    _hyp(ev, "hyp:delta>0", f"delta = {d} > 0", d, ">", "0")
    _hyp(ev, "hyp:delta<1", f"delta = {d} < 1", d, "<", "1")
    lowest = None
    for a in GRID:
        e = epsilon_ball(ph.steps * log_A_int(a, ph.sampling_rate, ph.noise_multiplier) / (a - 1), fmpq(a), delta)
        lowest = e if lowest is None else lowest.min(e)
    if fractional:
        integrals = 0
        for a in SIXTEENTHS:
            e, used = _fractional_lower(ph, delta, target, a, integrals < MAX_INTEGRALS)
            integrals += used
            lowest = lowest.min(e)
        ev.add(
            "epsilon_min",
            lowest,
            EQ_CONVERT,
            f"min over alpha in G u F ({GRID_FRAC_TEXT}) of T eps_RDP(alpha) + log((alpha-1)/alpha) - (log delta + log alpha)/"
            "(alpha-1), at a fractional alpha a lower bound (MTZ19 Sec. 3; K convex with K(1) = 0)",
        )
    else:
        ev.add(
            "epsilon_min",
            lowest,
            EQ_CONVERT,
            f"min over alpha in G ({GRID_TEXT}) of T eps_RDP(alpha) + "
            "log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1) (MTZ19 Sec. 3, integer orders)",
        )
    ev.claim(
        "fails",
        f"at sigma = {s} the Rényi accountant over the grid {'G u F' if fractional else 'G'} certifies no epsilon <= {t} at delta = "
        f"{d}: every order of G gives more (poisson sampling, add-remove adjacency, q = {q}, T = {ph.steps})",
        "epsilon_min",
        ">",
        t,
        EQ_CONVERT,
    )
    ev.conclude(
        "fails",
        f"sigma = {s} does not meet the target ({t}, {d}) by this accountant",
        "fails",
        [c.name for c in ev.claims if c.name.startswith("hyp:")],
    )
    ev.budget = Budget.of({"orders": f"{len(GRID) + (len(SIXTEENTHS) if fractional else 0)} orders re-evaluated"})
    return ev


def certify_fails(schedule: Schedule, delta: fmpq, target: fmpq, fractional: bool = False) -> Certificate:
    ev, prec = escalate(lambda prec: (evaluate_fails(schedule, delta, target, fractional), prec), what="the failing side of the calibration")
    if not ev.claims[-1].holds:
        raise InputError("--epsilon", "internal: the failing side does not fail")  # the caller widens first
    inputs = schedule_inputs(schedule)
    inputs.update({"delta": exact_str(delta), "epsilon_target": exact_str(target), "orders": GRID_FRAC_TEXT if fractional else GRID_TEXT})
    return Certificate(KIND_FAILS, inputs, ev, {}, None, prec)


def evaluate_renyi_poisson_fails(inputs: dict, witnesses: dict) -> Evaluation:
    if witnesses:
        raise InputError("witnesses", "must be empty")
    if inputs.get("orders") not in (GRID_TEXT, GRID_FRAC_TEXT):
        raise InputError("orders", f"must be {GRID_TEXT!r} or {GRID_FRAC_TEXT!r}")
    rest = {k: v for k, v in inputs.items() if k not in ("orders", "epsilon_target")}
    schedule = schedule_from_inputs(rest)
    delta = parse_delta(inputs.get("delta"), "delta")
    target = parse_epsilon(inputs.get("epsilon_target"), "epsilon_target")
    return evaluate_fails(schedule, delta, target, inputs["orders"] == GRID_FRAC_TEXT)


def validate_fails(inputs: dict) -> None:
    """The producer's validators, applied by ``certify verify`` before evaluating."""
    rest = {k: v for k, v in inputs.items() if k not in ("orders", "epsilon_target")}
    schedule_from_inputs(rest)
    parse_delta(inputs.get("delta"), "delta")
    parse_epsilon(inputs.get("epsilon_target"), "epsilon_target")


def _example_fails() -> Certificate:
    from .schedule import parse_schedule

    schedule = parse_schedule([{"sampling_rate": "1/100", "noise_multiplier": "1/2", "steps": 1000}], contract=POISSON_ADD_REMOVE)
    return certify_fails(schedule, exact("1e-5"), exact("1"))


def work_fails(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``dpsgd/renyi-poisson-fails``: one binomial sum per order of the fixed grid G for its one
    phase (:func:`certify.poisson.rdp.work_seconds` per order); no loop a certificate sets."""
    return sum(work_seconds(fmpq(a), 1, prec) for a in GRID), "inputs"


#: the work model of the kind (:func:`certify.limits.check_work`)
WORK = {KIND_FAILS: work_fails}

register(
    KIND_FAILS, evaluate_renyi_poisson_fails, validate_fails, lambda k: is_schedule_input(k, ("orders", "epsilon_target")), (), example=_example_fails
)


def _passes_at(ph: Phase, delta: fmpq, target: fmpq, alpha) -> bool:
    a = fmpq(alpha)
    if a.q == 1:
        e = epsilon_ball(ph.steps * log_A_int(int(a.p), ph.sampling_rate, ph.noise_multiplier) / (a - 1), a, delta)
    else:
        e = epsilon_ball(ph.steps * rdp_ball(a, ph.sampling_rate, ph.noise_multiplier, "integral"), a, delta)
    return compare(e, "<=", ball(target)) is Tri.TRUE


def calibrate(epsilon, delta, steps, sampling_rate, fractional: bool = False) -> Calibration:
    """The certified bracket s_fail < s_pass (exact dyadics, relative width <= 1e-4) for poisson + add-remove, over the
    orders G (``fractional`` False) or G u F (True: fractional orders, as tight as the float libraries)."""
    from .accountant import certify_poisson

    target = parse_epsilon(epsilon)
    delta = parse_delta(delta)
    steps = parse_steps(steps)
    q = parse_sampling_rate(sampling_rate)
    qf = max(float_of(q), 1e-300)  # floats only choose the bracket
    log_delta = log_float(delta)
    tf = float_of(target)
    s_star = _float_sigma(qf, steps, log_delta, tf, fractional)
    for slack in (1e-6, 1e-5, 3e-5):
        s_pass = dyadic(s_star * (1 + slack), up=True)
        s_fail = dyadic(s_star * (1 - slack), up=False)
        if (s_pass - s_fail) / s_pass > REL_WIDTH:
            break
        ph_pass = Phase(q, s_pass, steps)
        alpha = _eps_min_float(qf, float_of(s_pass), steps, log_delta, fractional)[1]
        if not _passes_at(ph_pass, delta, target, alpha):
            continue
        fail_sched = Schedule(POISSON_ADD_REMOVE, (Phase(q, s_fail, steps),), source="calibration")
        ev = evaluate_fails(fail_sched, delta, target, fractional)
        if not ev.claims[-1].holds:
            continue
        passing = certify_poisson(
            Schedule(POISSON_ADD_REMOVE, (ph_pass,), source="calibration"),
            delta,
            alpha,
            epsilon_bound=exact_str(target),
            fractional="integral" if alpha.q != 1 else "chord",
        )
        failing = certify_fails(fail_sched, delta, target, fractional)
        return Calibration(s_fail, s_pass, passing, failing, alpha, fractional)
    raise InputError(
        "--epsilon",
        "could not certify a bracket of relative width <= 1e-4 around "
        f"sigma ~ {s_star:.6g} (the target sits where the balls cannot separate the two sides)",
    )


def summary(cal: Calibration, target: fmpq, delta: fmpq, steps: int, q: fmpq, seconds: float) -> str:
    ep = cal.passing.quantities["epsilon"].value
    ef = cal.failing.quantities["epsilon_min"].value
    return (
        "\n".join(
            [
                f"noise multiplier for (epsilon={exact_str(target)}, delta={exact_str(delta)}), q={exact_str(q)}, T={steps}:",
                f"  s_pass = {exact_str(cal.s_pass)} ~ {upper_decimal(cal.s_pass, 8)}: epsilon <= "
                f"{upper_decimal(ep, 8)} at alpha = {exact_str(cal.alpha)} (certified)",
                f"  s_fail = {exact_str(cal.s_fail)} ~ {lower_decimal(cal.s_fail, 8)}: every order of the grid gives "
                f"epsilon >= {lower_decimal(ef, 8)} > target (certified)",
                f"  relative width (s_pass - s_fail)/s_pass = {upper_decimal(cal.relative_width, 3)} (<= 1e-4)",
                "  accountant: Rényi DP of the Poisson-subsampled Gaussian (MTZ19), min over the orders "
                f"{'G u F: ' + GRID_FRAC_TEXT if cal.fractional else 'G = ' + GRID_TEXT}; "
                "epsilon is non-increasing in sigma (proof obligation P-sigma-monotone, "
                "certify proofs --paper mtz-poisson), so s_pass is minimal up to the bracket for this accountant",
                f"  {POISSON_ADD_REMOVE.statement()}",
                f"  ({seconds:.3f} s)",
            ]
        )
        + "\n"
    )
