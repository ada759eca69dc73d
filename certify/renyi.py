"""The Rényi -> (epsilon, delta) conversion, generic over mechanisms: any RDP curve alpha -> ball.

An accountant that holds a certified upper bound R(alpha) on the Rényi divergence of order alpha > 1 (of every
neighbouring pair, both orders) turns it into (epsilon, delta)-DP by Balle, Barthe, Gaboardi, Hsu, Sato (2020),
"Hypothesis testing interpretations and Rényi DP", Theorem 21 (the same bound is Canonne, Kamath, Steinke 2020,
Prop. 12, and Asoodeh et al. 2021):

    epsilon(alpha) = R(alpha) + log((alpha - 1)/alpha) - (log delta + log alpha)/(alpha - 1),        (C)
    delta(alpha)   = exp((alpha - 1)(R(alpha) - epsilon + log((alpha - 1)/alpha)) - log alpha),       (C')

(C') being (C) solved for delta (the right side of (C) decreases strictly in delta). Every alpha > 1 gives a valid
pair; the order is *chosen* by floats (:func:`epsilon_float` at one order and :func:`argmin_unimodal`, plain Python;
:func:`epsilons`, :func:`log_deltas` on numpy arrays of orders, numpy imported only then), recorded exactly as a
witness, and the checker evaluates the balls at that order only.

Rounding: the functions below are ball expressions of their inputs: the upper endpoint of the result bounds the
exact value whenever the upper endpoint of ``rdp`` bounds R(alpha) (both are increasing in R) and ``delta``
(resp. ``epsilon``) is enclosed. Users: :mod:`certify.poisson` (DP-SGD), :mod:`certify.events` (the event algebra).
"""

from __future__ import annotations

import math

from .balls import arb, ball, fmpq

EQ_CONVERT = "Balle20 Thm 21"


def _ball(x) -> arb:
    return x if isinstance(x, arb) else ball(x)


def epsilon_of_rdp(rdp: arb, alpha: fmpq, delta) -> arb:
    """(C): epsilon = rdp + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1); ``delta`` exact or a ball."""
    al = ball(alpha)
    am1 = ball(alpha - 1)
    return rdp + (am1 / al).log() - (_ball(delta).log() + al.log()) / am1


def delta_of_rdp(rdp: arb, alpha: fmpq, epsilon) -> arb:
    """(C'): delta = exp((alpha-1)(rdp - epsilon + log((alpha-1)/alpha)) - log alpha); ``epsilon`` exact or a ball."""
    al = ball(alpha)
    am1 = ball(alpha - 1)
    return (am1 * (rdp - _ball(epsilon) + (am1 / al).log()) - al.log()).exp()


# --------------------------------------------------------------------------------------------
# floats: the choice of the order only (nothing here is a bound)
# --------------------------------------------------------------------------------------------
def epsilon_float(K: float, alpha: float, log_delta: float) -> float:
    """(C) in floats at one order, K = (alpha - 1) R(alpha): +inf where it is not finite (:func:`epsilons` on arrays)."""
    e = K / (alpha - 1) + math.log1p(-1 / alpha) - (log_delta + math.log(alpha)) / (alpha - 1)
    return e if math.isfinite(e) else math.inf


def argmin_unimodal(f, lo: int, hi: int) -> int:
    """argmin over the integers in [lo, hi] of a unimodal ``f``, by binary search on the sign of
    f(m + 1) - f(m) (a choice only: for a function that is not unimodal it returns a local minimum)."""
    while lo < hi:
        m = (lo + hi) // 2
        if f(m + 1) < f(m):
            lo = m + 1
        else:
            hi = m
    return lo


def epsilons(K, alphas, log_delta: float):
    """(C) in floats at each order, K = (alpha - 1) R(alpha): +inf where it is not finite."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = K / (alphas - 1) + np.log1p(-1 / alphas) - (log_delta + np.log(alphas)) / (alphas - 1)
    return np.where(np.isfinite(e), e, np.inf)


def log_deltas(R, alphas, epsilon: float):
    """log of (C') in floats at each order: +inf where it is not finite."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        d = (alphas - 1) * (R - epsilon + np.log1p(-1 / alphas)) - np.log(alphas)
    return np.where(np.isfinite(d), d, np.inf)
