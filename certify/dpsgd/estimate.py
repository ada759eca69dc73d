"""Float estimates used only to CHOOSE the Rényi order alpha (Bok 2026, Proposition 3 / App. B.2).

Nothing here is certified and nothing here enters a certified value: the chosen alpha is an input
of the certified computation, and any alpha gives a valid bound (Corollary 1).
The estimate of rho is max(J(0), J(1/2)) (the observed U shape of u -> J(u)), J(0) by log-sum-exp of
the closed form, J(1/2) by the trapezoid rule on the log-integrand of (35).
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..balls import float_of, log_float
from ..renyi import argmin_unimodal  # noqa: F401  (re-exported: the one binary search on the slope)
from .problem import ALPHA_MAX, ALPHA_MIN, Problem, max_alpha
from .mixture import log_integrand_float, log_p_float

#: most grid points of the trapezoid estimate of J(1/2) (the spacing grows instead: 2^16 floats)
MAX_GRID = 2**16


def _f_int(k: int) -> float:
    try:
        return float(k)
    except OverflowError:
        return math.inf


def J0_float(prob: Problem) -> float:
    al = prob.alpha
    lp, lq = log_p_float(prob)
    D2 = (2 / float_of(prob.sigma)) ** 2
    terms = [
        math.lgamma(al + 1) - math.lgamma(k + 1) - math.lgamma(al - k + 1) + (al - k) * lq + k * lp + D2 * k * (k - 1) / 2 for k in range(al + 1)
    ]
    m = max(terms)
    return (m + math.log(sum(math.exp(t - m) for t in terms))) / (al - 1)


def J_float(prob: Problem, u: float) -> float:
    import numpy as np

    beta = 2 / float_of(prob.sigma) * math.sqrt(2 * u)
    hi = prob.alpha * beta / 2 + 40.0
    step = max(1 / 16, (hi + 40.0) / MAX_GRID)  # bounded memory whatever sigma is
    vs = np.arange(-40.0, hi, step)
    lf = log_integrand_float(prob, u, vs)
    m = lf.max()
    return (m + math.log(np.exp(lf - m).sum() * step)) / (prob.alpha - 1)


def rho_float(prob: Problem) -> float:
    return max(J0_float(prob), J_float(prob, 0.5))


def eps_float(prob: Problem, steps: int, log_delta: float) -> float:
    """Float estimate of (6) at alpha; ``log_delta`` = log(delta) (delta itself may underflow a float)."""
    al = prob.alpha
    return _f_int(steps) * rho_float(prob) + math.log1p(-1 / al) - (log_delta + math.log(al)) / (al - 1)


@lru_cache(maxsize=4096)
def choose_alpha(p, sigma, steps: int, delta, lo: int = ALPHA_MIN, hi: int = ALPHA_MAX) -> tuple[int, int]:
    """argmin over integer alpha in [lo, hi] of the float estimate of (6), by binary search on the
    sign of eps(alpha+1) - eps(alpha) (unimodality, Proposition 3). Returns (alpha, evaluations).

    Only alphas admissible at this sigma are searched (``max_alpha``). Floats overflow to inf rather than
    raising (steps = 1e400 gives eps = inf at every alpha): any alpha is a valid choice (Corollary 1).
    Memoised on the exact inputs (a choice only: repeated queries skip it)."""
    d = log_float(delta)
    hi = max(lo, min(hi, max_alpha(sigma)))
    memo: dict[int, float] = {}

    def eps(a: int) -> float:
        if a not in memo:
            memo[a] = eps_float(Problem(a, p, sigma), steps, d)
        return memo[a]

    return argmin_unimodal(eps, lo, hi), len(memo)
