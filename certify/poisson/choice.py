"""Floats in log space: the choice of the Rényi order alpha (a choice only; nothing here is a bound).

Any alpha > 1 gives a valid certified bound (:mod:`certify.poisson.certificates` evaluates it in balls); the
float estimate only picks a good one, which the certificate records exactly and the checker never redoes.
This is the only module of :mod:`certify.poisson` that imports numpy, and it is imported only when a choice
is made, so that checking a certificate (and every other command) starts without numpy.

The estimate (the same formulas as the certified ones, in floats):

    log A_alpha = logsumexp_k [log C(alpha,k) + (alpha-k) log(1-q) + k log q + k(k-1)/(2 sigma^2)]   (MTZ19 Sec. 3.3 Case I)
    eps(alpha)  = K(alpha)/(alpha-1) + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)      (Balle et al. 2020, Thm 21)

with K(alpha) = sum_i T_i log A_alpha(q_i, sigma_i), over every order of :data:`certify.poisson.rdp.ORDERS`,
then fractional orders a +- j/16 around the best integer (the chord of K, or the trapezoid estimate of the
defining integral in ``integral`` mode), and in ``integral`` mode eightieths around the best of those where they gain
more than 0.01% (:func:`_finer`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .. import renyi
from .rdp import ALPHA_MAX, COARSE, DENSE_MAX, ORDERS

from .order_choice import FINE_GAIN, FINE_STEPS, FRACTION_STEPS  # noqa: F401  (one rule, written in order_choice)

_ORDERS = np.array(ORDERS, dtype=np.int64)
_LGAMMA = np.array([math.lgamma(n + 1) for n in range(ALPHA_MAX + 2)])  # log n!


def _logsumexp_rows(m: np.ndarray) -> np.ndarray:
    top = m.max(axis=1)
    return top + np.log(np.exp(m - top[:, None]).sum(axis=1))


@lru_cache(maxsize=4096)
def log_A_floats(q: float, sigma: float) -> np.ndarray:
    """Float log(A_alpha) at every order of ``ORDERS`` (log-sum-exp, no overflow), memoised. Not a bound."""
    c = 1.0 / (2.0 * sigma * sigma)
    if q >= 1.0:
        return _ORDERS * (_ORDERS - 1) * c
    lq, l1q = math.log(q), math.log1p(-q)
    out = np.empty(len(_ORDERS))
    a = np.arange(1, DENSE_MAX + 1)[:, None]
    k = np.arange(DENSE_MAX + 1)[None, :]
    with np.errstate(invalid="ignore"):
        m = _LGAMMA[a] - _LGAMMA[k] - _LGAMMA[np.maximum(a - k, 0)] + (a - k) * l1q + k * lq + k * (k - 1) * c
    m = np.where(k <= a, m, -np.inf)
    out[:DENSE_MAX] = _logsumexp_rows(m)
    for i, al in enumerate(COARSE):
        kk = np.arange(al + 1)
        row = _LGAMMA[al] - _LGAMMA[kk] - _LGAMMA[al - kk] + (al - kk) * l1q + kk * lq + kk * (kk - 1) * c
        out[DENSE_MAX + i] = _logsumexp_rows(row[None, :])[0]
    out[0] = 0.0  # alpha = 1
    return out


def log_A_frac_floats(alphas: np.ndarray, q: float, sigma: float) -> np.ndarray:
    """Float log A at (fractional) orders by the trapezoid rule in log space: used only to choose alpha.

    Per order, the grid covers the two Gaussian bumps that bound the integrand (x in [-40, 40] and
    [mu - 40, mu + 40], mu = alpha/sigma) with step min(0.05, sigma) (the integrand is analytic in a strip of
    half-width pi sigma, so the trapezoid rule is accurate far beyond what a choice needs).
    """
    if q >= 1.0:
        return alphas * (alphas - 1) / (2 * sigma * sigma)
    c = 1 / (2 * sigma)
    h = min(0.05, sigma)
    out = np.empty(len(alphas))
    base = np.arange(-40.0, 40.0 + h, h)
    for i, al in enumerate(alphas):
        mu = al / sigma
        x = np.concatenate([base, mu + base]) if mu > 80 else np.arange(-40.0, mu + 40.0 + h, h)
        lb = np.logaddexp(math.log1p(-q), math.log(q) + (x - c) / sigma)
        g = -x * x / 2 - 0.5 * math.log(2 * math.pi) + al * lb
        out[i] = _logsumexp_rows(g[None, :])[0] + math.log(h)
    return out


def epsilons(K: np.ndarray, alphas: np.ndarray, log_delta: float) -> np.ndarray:
    """The conversion (Balle et al. 2020, Thm 21) in floats at each order (:func:`certify.renyi.epsilons`): +inf where it
    is not finite."""
    return renyi.epsilons(K, alphas, log_delta)


def epsilons_at_orders(q: float, sigma: float, steps: int, log_delta: float) -> np.ndarray:
    """Float eps at every order of ``ORDERS[1:]`` (2 .. 4096) for one phase."""
    return epsilons(steps * log_A_floats(q, sigma)[1:], _ORDERS[1:].astype(float), log_delta)


@lru_cache(maxsize=4096)
def choose(phases: tuple[tuple[float, float, int], ...], log_delta: float, fractional: str = "chord") -> tuple[int, int]:
    """(numerator, denominator) of the chosen alpha for the phases (q, sigma, T): floats only, memoised."""
    K = np.zeros(len(_ORDERS))
    for q, s, t in phases:
        K += t * log_A_floats(q, s)
    eps = epsilons(K[1:], _ORDERS[1:].astype(float), log_delta)
    i = int(np.argmin(eps))
    best_a, best_e = int(_ORDERS[1 + i]), float(eps[i])
    if best_a > DENSE_MAX:
        return best_a, 1
    # fractional refinement a +- j/n (K known at every integer up to DENSE_MAX): chord, or the integral estimate
    n = FRACTION_STEPS
    nums = np.array([best_a * n + j for j in range(-(n - 1), n) if j != 0 and n < best_a * n + j <= DENSE_MAX * n])
    if len(nums) == 0:
        return best_a, 1
    al = nums / n
    a0 = nums // n
    t = al - a0
    k = (1 - t) * K[a0 - 1] + t * K[a0]  # K[idx] is at order idx + 1
    if fractional == "integral":
        k = np.minimum(k, sum(t_ * log_A_frac_floats(al, q, s) for q, s, t_ in phases))
    e = epsilons(k, al, log_delta)
    j = int(np.argmin(e))
    num, den = best_a, 1
    if e[j] < best_e - 1e-12 * abs(best_e):
        num, den, best_e = int(nums[j]), n, float(e[j])
    if fractional == "integral":
        num, den = _finer(K, phases, num, den, best_e, log_delta)
    return num, den


def _finer(K: np.ndarray, phases, num: int, den: int, best_e: float, log_delta: float) -> tuple[int, int]:
    """Integral mode: the orders c + j/80 (|j| <= 13) around the chosen c = num/den, kept only when the estimate gains
    more than :data:`FINE_GAIN` relative (so a sixteenth stays where it is as good). The eightieths hold the tenths of
    the float libraries (Opacus and dp_accounting use 1.1, 1.2, ..., 10.9), and the best tenth is within
    1/16 + 1/10 < 13/80 of the best sixteenth when eps is unimodal in alpha: where eps is steep in alpha (large
    eps, best order below 2) a sixteenth was measured up to 1.2% above Opacus's tenth."""
    m = FINE_STEPS
    centre = num * (m // den)
    nums = np.array([centre + j for j in range(-13, 14) if j != 0 and m < centre + j <= DENSE_MAX * m])
    if len(nums) == 0:
        return num, den
    al = nums / m
    a0 = nums // m
    t = al - a0
    k = np.minimum((1 - t) * K[a0 - 1] + t * K[np.minimum(a0, len(K) - 1)], sum(t_ * log_A_frac_floats(al, q, s) for q, s, t_ in phases))
    e = epsilons(k, al, log_delta)
    j = int(np.argmin(e))
    if e[j] < best_e - FINE_GAIN * abs(best_e):
        g = math.gcd(int(nums[j]), m)
        return int(nums[j]) // g, m // g
    return num, den


def clear_memo() -> None:
    """Forget the memoised float values (for cold measurements and tests)."""
    choose.cache_clear()
    log_A_floats.cache_clear()
