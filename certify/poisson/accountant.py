"""The certified Rényi accountant of Poisson-sampled DP-SGD (add/remove adjacency).

    epsilon = sum_i T_i eps_RDP_i(alpha) + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)

(Rényi composition over the phases of the schedule, Mironov 2017 Prop. 1; the conversion of Balle et
al. 2020, Thm 21; eps_RDP of MTZ 2019, :mod:`certify.poisson.rdp`). Any alpha > 1 gives a valid bound;
alpha is *chosen* by floats in log space (:mod:`certify.poisson.order_choice`, plain Python, memoised per query):
the best order of the grid 2..256 and a coarse grid to 4096 (binary search on the slope), then fractional orders
a +- j/16 around the best integer (by the integral estimate in the default mode, :func:`default_fractional`; the chord's values in chord
mode). The certificate records alpha exactly; the checker re-evaluates at it only.
"""

from __future__ import annotations

from functools import lru_cache

from ..balls import InputError, ball_endpoints, escalate, exact, exact_str, float_of, fmpq, log_float
from ..certificate import Certificate
from ..limits import BUDGET_SECONDS, check_produced
from .certificates import KIND, evaluate, parse_alpha
from .rdp import FRACTIONAL, work_seconds
from .schedule import Schedule, parse_delta, schedule_inputs

#: the default mode's budget for checking the integrals (estimated seconds, :func:`certify.poisson.rdp.work_seconds`)
INTEGRAL_DEFAULT_SECONDS = 2.0

#: where a schedule came from (:attr:`Schedule.source`) -> the flag a refusal names
SOURCE_FLAGS = {"schedule": "--schedule", "Opacus history": "--opacus-history", "dp_accounting event": "event", "calibration": "--epsilon"}

#: the float choice of alpha per distinct (q, sigma) pair: measured 4 ms (2000 pairs: 8 s to produce in all); x1.5
CHOICE_SECONDS_PER_PAIR = 6e-3


def check_producer_work(schedule: Schedule, alpha: fmpq | None, fractional: str = "chord") -> None:
    """Refuse, before any work, a schedule whose certificate would take more than the checker's budget to produce
    or to check (:data:`certify.limits.BUDGET_SECONDS`): the float choice of alpha per distinct (q, sigma) pair
    plus the evaluation (:func:`certify.poisson.rdp.work_seconds` at 128 bits; at alpha = 256 when alpha is
    still to be chosen). InputError names the flag the schedule came from."""
    pairs = len({(ph.sampling_rate, ph.noise_multiplier) for ph in schedule.phases})
    n = len(schedule.phases)
    a = fmpq(256) if alpha is None else alpha
    est = (CHOICE_SECONDS_PER_PAIR * pairs if alpha is None else 0.0) + work_seconds(a, pairs, 128, fractional, n)
    if est > BUDGET_SECONDS:
        flag = SOURCE_FLAGS.get(schedule.source, "--sampling-rate")
        raise InputError(
            flag,
            f"{n} phase(s) with {pairs} distinct (sampling rate, noise multiplier) pair(s) would take about {est:.3g} CPU s "
            f"(budget {BUDGET_SECONDS:g} s, about {CHOICE_SECONDS_PER_PAIR * 1e3:g} ms per distinct pair to choose alpha); "
            "merge phases with equal values, or fix --alpha",
        )


def default_fractional(schedule: Schedule) -> str:
    """The default way of bounding a fractional order: "integral" (as tight as the float libraries: the default
    certified epsilon is within 0.1% of Opacus's and dp_accounting's RDP values, tests/test_poisson_defaults.py),
    unless the run has so many distinct (q, sigma) pairs that checking their integrals would take more than
    INTEGRAL_DEFAULT_SECONDS at 128 bits; then "chord" (cheap to check, looser where the best order is below 2)."""
    pairs = len({(ph.sampling_rate, ph.noise_multiplier) for ph in schedule.phases})
    return "integral" if work_seconds(fmpq(3, 2), pairs, 128, "integral") <= INTEGRAL_DEFAULT_SECONDS else "chord"


def choose_alpha(schedule: Schedule, delta: fmpq, fractional: str | None = None) -> fmpq:
    """The Rényi order minimising the float estimate of epsilon (memoised): a choice, recorded exactly."""
    # floats only for the choice: a rate below the float range is treated as 1e-300 (any alpha is valid)
    from .order_choice import choose  # plain Python floats: no numpy for one query

    fractional = default_fractional(schedule) if fractional is None else fractional
    key = tuple((max(float_of(p.sampling_rate), 1e-300), float_of(p.noise_multiplier), p.steps) for p in schedule.phases)
    num, den = choose(key, log_float(delta), fractional)
    return fmpq(num, den)


@lru_cache(maxsize=1024)
def _evaluated(schedule: Schedule, delta: fmpq, alpha: fmpq, epsilon_bound: str | None = None, fractional: str = "chord"):
    """The evaluation (quantities and claims) of a query, memoised: a deterministic function of exact inputs."""

    def compute(prec):
        return evaluate(schedule, delta, alpha, epsilon_bound, fractional), prec

    return escalate(compute, what=f"the Poisson Rényi accountant at alpha = {exact_str(alpha)}")


def clear_memo() -> None:
    """Forget every memoised value (float choices, ball sums, evaluations): for cold measurements and tests."""
    from ..certificate import exact_operand
    from . import certificates, choice, order_choice, rdp

    _evaluated.cache_clear()
    certificates._parse_inputs.cache_clear()
    exact_operand.cache_clear()
    choice.clear_memo()
    order_choice.clear_memo()
    rdp._log_A_int_cached.cache_clear()
    rdp._log_A_frac_cached.cache_clear()


def certify_poisson(
    schedule: Schedule, delta, alpha=None, *, notes: dict | None = None, epsilon_bound: str | None = None, fractional: str | None = None
) -> Certificate:
    """Certificate ``dpsgd/renyi-poisson`` for the run ``schedule`` (poisson + add-remove) at ``delta``.

    ``alpha`` (exact, 1 < alpha <= 4096) fixes the Rényi order; by default it is chosen by floats. The
    quantity ``epsilon``'s ball has the certified epsilon as its upper endpoint; the claim ``dp`` states
    the (epsilon_bound, delta)-DP conclusion, resting on the hypothesis claims before it. ``notes``
    (e.g. {"delta.note": "binary float ..."}) are added to the inputs. ``epsilon_bound`` (exact text, e.g. a
    claimed epsilon) replaces the headline bound: the claim ``dp`` then records whether the balls prove
    epsilon <= epsilon_bound (holds true) or disprove it (holds false); an undecided comparison escalates.
    ``fractional``: "chord" (a fractional alpha is bounded by the convexity chord; checking costs one sum per
    phase), "integral" (the defining integral in balls: as tight as the float libraries' fractional orders, 0.5-1%
    smaller epsilons, and far smaller where the best order is below 2; checking repeats a 2-20 ms quadrature per
    distinct (q, sigma)), or None (the default, :func:`default_fractional`: integral unless that check is long).
    """
    if fractional is None:
        fractional = default_fractional(schedule)
    if fractional not in FRACTIONAL:
        raise InputError("fractional", f"must be one of {', '.join(FRACTIONAL)}, got {fractional!r}")
    delta = parse_delta(delta, "delta")
    chosen = alpha is None
    if not chosen:
        alpha = parse_alpha(alpha, "alpha")
    check_producer_work(schedule, alpha, fractional)
    if chosen:
        alpha = choose_alpha(schedule, delta, fractional)
    if alpha.q == 1:
        fractional = "chord"  # an integer order has its exact sum: nothing to bound, no mode recorded

    if epsilon_bound is not None:
        exact(epsilon_bound, "epsilon_bound")
    ev, prec = _evaluated(schedule, delta, alpha, epsilon_bound, fractional)
    inputs = schedule_inputs(schedule)
    inputs["delta"] = exact_str(delta)
    inputs.update(notes or {})
    witnesses = {"alpha": exact_str(alpha), "epsilon_bound": ev.claims[-1].rhs}
    if fractional == "integral":
        witnesses["fractional"] = "integral"
    cert = Certificate(KIND, inputs, ev, witnesses, None, prec)
    check_produced(cert, SOURCE_FLAGS.get(schedule.source, "--sampling-rate"))
    return cert


def epsilon_upper(cert: Certificate) -> fmpq:
    """The certified epsilon: the exact upper endpoint of the ball of quantity ``epsilon``."""
    return ball_endpoints(cert.quantities["epsilon"].value)[1]
