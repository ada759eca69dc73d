"""The float choice of the Rényi order of one query, in plain Python (a choice only; nothing here is a bound).

A query needs eps(alpha) at the few dozen orders a search visits, not at the whole grid: so the first query of a
new process does not import numpy (about 100 ms, 10-30 times the query) for it. :mod:`certify.poisson.choice`
keeps numpy for the scans of whole order grids (the calibration's bisection, the event algebra).

The estimates are those of :mod:`certify.poisson.choice`, at one order at a time:

    log A_alpha = logsumexp_k [log C(alpha,k) + (alpha-k) log(1-q) + k log q + k(k-1)/(2 sigma^2)]   (MTZ19 Sec. 3.3 Case I)
    log A_alpha = log of the defining integral of a fractional order, trapezoid rule                (``integral`` mode)
    eps(alpha)  = K(alpha)/(alpha-1) + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)       (Balle et al. 2020, Thm 21)

with K(alpha) = sum_i T_i log A_alpha(q_i, sigma_i). The order: the integer order of :data:`~.rdp.ORDERS`
minimising eps, found by binary search on the sign of eps(next order) - eps(order)
(:func:`certify.renyi.argmin_unimodal`: eps is unimodal in alpha in practice; on a curve that is not, the search
returns a local minimum, still a valid order), then likewise among a +- j/16 (j = 1..15) around it (and in
``integral`` mode the orders c +- j/80 around that choice, as :mod:`certify.poisson.choice` does), with K at a
fractional order the chord of K between its integer neighbours, or the smaller of the chord and the integral in
``integral`` mode. Any alpha > 1 gives a valid certified bound: the certificate records the order exactly and the
checker never redoes this.
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..renyi import argmin_unimodal, epsilon_float
from .rdp import DENSE_MAX, ORDERS

FRACTION_STEPS = 16  # fractional orders tried: a + j/16
FINE_STEPS = 80  # integral mode, then: c + j/80 around the chosen c (multiples of 1/16 and of 1/10)
FINE_GAIN = 1e-4  # ... kept only when the float estimate of eps gains more than this, relative

#: most grid points of one trapezoid estimate; beyond it the chord alone estimates that order (a choice only)
MAX_TRAPEZOID_POINTS = 1_000_000
#: points per block of the trapezoid sum, and how far (in log) below the largest value a block is negligible
BLOCK, NEGLIGIBLE = 32, 60.0


_LOG_FACTORIALS = [0.0]  # log n! for n = 0, 1, ..., extended on demand


def _log_factorials(n: int) -> list[float]:
    """log n! for every n up to at least ``n``."""
    while len(_LOG_FACTORIALS) <= n:
        _LOG_FACTORIALS.append(math.lgamma(len(_LOG_FACTORIALS) + 1))
    return _LOG_FACTORIALS


@lru_cache(maxsize=65536)
def log_A_int(alpha: int, q: float, sigma: float) -> float:
    """Float log A_alpha at an integer order alpha >= 1 (log-sum-exp of MTZ19's binomial sum, no overflow)."""
    c = 1.0 / (2.0 * sigma * sigma)
    if alpha == 1:
        return 0.0
    if q >= 1.0:
        return alpha * (alpha - 1) * c
    lq, l1q = math.log(q), math.log1p(-q)
    lf = _log_factorials(alpha)
    top = lf[alpha] + alpha * l1q
    terms = [top - lf[k] - lf[alpha - k] + k * (lq - l1q) + k * (k - 1) * c for k in range(alpha + 1)]
    m = max(terms)
    return m + math.log(sum(math.exp(t - m) for t in terms))


@lru_cache(maxsize=65536)
def log_A_frac(alpha: float, q: float, sigma: float) -> float:
    """Float log A at a fractional order: the trapezoid rule on g(x) = log(phi(x) (1 - q + q exp((x - c)/sigma))^alpha),
    c = 1/(2 sigma), over x in [-40, mu + 40] (mu = alpha/sigma; two windows of half-width 40 when mu > 80).

    The step min(1/2, sigma/2) resolves the integrand, analytic in the strip |Im x| < pi sigma, far beyond a choice's
    needs (the trapezoid rule's relative error is of order exp(-2 pi^2 sigma/h) <= 1e-17, and exp(-2 pi^2/h^2) for
    the Gaussian factor). Blocks of :data:`BLOCK` points whose bound max g <= alpha log(1 - q + q exp((x1 - c)/sigma))
    - min x^2/2 - log(2 pi)/2 (the second factor increases in x; x1 the block's right end) lies :data:`NEGLIGIBLE`
    below a value g takes are skipped: their share of the sum is below 1e-20. nan when the grid would exceed
    :data:`MAX_TRAPEZOID_POINTS` points (the caller keeps the chord)."""
    if q >= 1.0:
        return alpha * (alpha - 1) / (2 * sigma * sigma)
    h = min(0.5, sigma / 2)
    mu = alpha / sigma
    windows = [(-40.0, 40.0), (mu - 40.0, mu + 40.0)] if mu > 80 else [(-40.0, mu + 40.0)]
    counts = [int((b - a) / h) + 1 for a, b in windows]
    if sum(counts) > MAX_TRAPEZOID_POINTS:
        return math.nan
    a, b, s = math.log1p(-q), math.log(q) - 1 / (2 * sigma * sigma), 1 / sigma  # log q + (x - c)/sigma = b + s x
    half_log_2pi = 0.5 * math.log(2 * math.pi)

    def lb(x: float) -> float:  # logaddexp(log(1 - q), log q + (x - c)/sigma)
        y = b + s * x
        return (a if a > y else y) + math.log1p(math.exp(-abs(a - y)))

    def g(x: float) -> float:
        return alpha * lb(x) - x * x / 2 - half_log_2pi

    blocks = [(lo + i * h, min(BLOCK, n - i)) for (lo, _), n in zip(windows, counts) for i in range(0, n, BLOCK)]
    floor = max(g(x0) for x0, _ in blocks) - NEGLIGIBLE
    values = []
    for x0, n in blocks:
        x1 = x0 + (n - 1) * h
        if alpha * lb(x1) - (0.0 if x0 <= 0.0 <= x1 else min(x0 * x0, x1 * x1) / 2) - half_log_2pi >= floor:
            values += [g(x0 + i * h) for i in range(n)]
    m = max(values)
    return m + math.log(sum(math.exp(t - m) for t in values) * h)


def _K_int(phases, alpha: int) -> float:
    return sum(t * log_A_int(alpha, q, s) for q, s, t in phases)


@lru_cache(maxsize=4096)
def choose(phases: tuple[tuple[float, float, int], ...], log_delta: float, fractional: str = "chord") -> tuple[int, int]:
    """(numerator, denominator) of the chosen alpha for the phases (q, sigma, T): floats only, memoised."""
    orders = ORDERS[1:]  # 2 .. 4096
    best = argmin_unimodal(lambda i: epsilon_float(_K_int(phases, orders[i]), orders[i], log_delta), 0, len(orders) - 1)
    best_a = orders[best]
    best_e = epsilon_float(_K_int(phases, best_a), best_a, log_delta)
    n = FRACTION_STEPS
    nums = [best_a * n + j for j in range(-(n - 1), n) if n < best_a * n + j <= DENSE_MAX * n]  # a itself included
    if best_a > DENSE_MAX or len(nums) == 1:
        return best_a, 1

    def eps(i: int) -> float:
        num = nums[i]
        if num % n == 0:
            return best_e
        a0, al = num // n, num / n
        t = al - a0
        k = (1 - t) * _K_int(phases, a0) + t * _K_int(phases, a0 + 1)  # the chord of K between a0 and a0 + 1
        if fractional == "integral":
            k = min(k, sum(t_ * log_A_frac(al, q, s) for q, s, t_ in phases))  # min ignores a nan integral
        return epsilon_float(k, al, log_delta)

    j = argmin_unimodal(eps, 0, len(nums) - 1)
    num, den = best_a, 1
    if nums[j] % n and eps(j) < best_e - 1e-12 * abs(best_e):
        num, den, best_e = nums[j], n, eps(j)
    if fractional == "integral":
        num, den = _finer(phases, num, den, best_e, log_delta)
    return num, den


def _finer(phases, num: int, den: int, best_e: float, log_delta: float) -> tuple[int, int]:
    """Integral mode: the orders c + j/80 (0 < |j| <= 13) around the chosen c = num/den, kept only when the estimate
    gains more than :data:`FINE_GAIN` relative: the rule of :func:`certify.poisson.choice._finer` (which says why:
    the eightieths hold the float libraries' tenths), by the same unimodal search as the sixteenths (a few integrals,
    not 26: each costs up to tens of ms at a small sigma)."""
    m = FINE_STEPS
    centre = num * (m // den)
    cands = [centre + j for j in range(-13, 14) if j == 0 or m < centre + j <= DENSE_MAX * m]

    @lru_cache(maxsize=None)
    def eps(i: int) -> float:
        c = cands[i]
        if c == centre:
            return best_e
        a0, al = c // m, c / m
        t = al - a0
        k = (1 - t) * _K_int(phases, a0) + t * _K_int(phases, min(a0 + 1, DENSE_MAX))
        k = min(k, sum(t_ * log_A_frac(al, q, s) for q, s, t_ in phases))  # min ignores a nan integral
        return epsilon_float(k, al, log_delta)

    i = argmin_unimodal(eps, 0, len(cands) - 1)
    if cands[i] != centre and eps(i) < best_e - FINE_GAIN * abs(best_e):
        g = math.gcd(cands[i], m)
        return cands[i] // g, m // g
    return num, den


def clear_memo() -> None:
    """Forget the memoised float values (for cold measurements and tests)."""
    choose.cache_clear()
    log_A_int.cache_clear()
    log_A_frac.cache_clear()
