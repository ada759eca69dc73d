"""DiscreteLaplaceDpEvent(noise_parameter t, sensitivity D): integer noise with mass tanh(t/2) e^(-t|x|).

For a shift by the integer k >= 1 (P = DLap(t), Q = DLap(t) + k), summing the three geometric series of
sum_x P(x)^alpha Q(x)^(1-alpha) (x <= 0, 0 < x < k, x >= k; obligation ``E-discrete-laplace``):
    S_k(alpha) = (e^(t(alpha-1)k) + e^(-t alpha k)) / (1 + e^-t)
                 + tanh(t/2) e^(t(alpha-1)k) sum_{x=1}^{k-1} e^(-t(2 alpha - 1) x),
    f(k) = log S_k(alpha) / (alpha - 1)                 (exact: our derivation, checked against direct sums in tests).
Both orders agree (reflect x -> k - x). Coordinate-wise noise with l1 sensitivity D shifts the coordinates by
integers k_i with sum |k_i| <= D and the divergence adds over coordinates, so the RDP is the largest sum of f
over the integer partitions of at most D: g(n) = max(f(n), max_j g(j) + g(n - j)), computed exactly in balls
(D <= 64). Pure: eps = t D. Any relation (D the sensitivity of that relation).
"""

from __future__ import annotations

from ...balls import arb, ball, float_of, fmpq
from .base import Mechanism, integer_in, positive

MAX_SENSITIVITY = 64


def shift_rdp(alpha: fmpq, t: fmpq, k: int) -> arb:
    """f(k) = log S_k(alpha)/(alpha - 1) (module docstring), a ball (all terms positive; outward)."""
    a, tb = ball(alpha), ball(t)
    up = ((a - 1) * k * tb).exp()
    s = (up + (-a * k * tb).exp()) / (1 + (-tb).exp())
    if k > 1:
        r = -(2 * a - 1) * tb  # log of the ratio of the geometric sum
        geo = r.exp() * (-((k - 1) * r).expm1()) / (-(r.expm1()))  # sum_{x=1}^{k-1} e^(r x), r < 0
        s = s + (tb / 2).tanh() * up * geo
    return s.log() / ball(alpha - 1)


def _partitions_max(f: list, mx):
    """max over integer partitions of n <= len(f) of sum f(k_i), by g(n) = max(f(n), max_j g(j) + g(n-j))."""
    g = [None]
    for n in range(1, len(f) + 1):
        best = f[n - 1]
        for j in range(1, n // 2 + 1):
            best = mx(best, g[j] + g[n - j])
        g.append(best)
    top = g[1]
    for v in g[2:]:
        top = mx(top, v)
    return top


def _ball_max(x: arb, y: arb) -> arb:
    """A ball containing max(x, y) (its upper endpoint is the larger upper endpoint)."""
    return x.union(y) if not (x > y or y > x) else (x if x > y else y)


class DiscreteLaplace(Mechanism):
    CLASS = "DiscreteLaplaceDpEvent"
    FIELDS = PARAMS = ("noise_parameter", "sensitivity")
    EQUATION = "discrete Laplace shift divergence (geometric sums), maximised over partitions of the sensitivity"

    @classmethod
    def validate(cls, values, where):
        positive(values, "noise_parameter", where)
        integer_in(values, "sensitivity", where, 1, MAX_SENSITIVITY)
        return values

    def rdp(self, alpha, relation):
        t, d = self["noise_parameter"], int(self["sensitivity"].p)
        return _partitions_max([shift_rdp(alpha, t, k) for k in range(1, d + 1)], _ball_max)

    def rdp_floats(self, alphas, relation):
        import numpy as np

        t, d = float_of(self["noise_parameter"]), int(self["sensitivity"].p)
        fs = []
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for k in range(1, d + 1):
                terms = [(alphas - 1) * k * t - np.log1p(np.exp(-t)), -alphas * k * t - np.log1p(np.exp(-t))]
                for x in range(1, k):
                    terms.append(np.log(np.tanh(t / 2)) + (alphas - 1) * k * t - t * (2 * alphas - 1) * x)
                fs.append(np.logaddexp.reduce(np.array(terms), axis=0) / (alphas - 1))
        return _partitions_max(fs, np.maximum)

    def work_seconds(self, alpha, prec):
        d = int(self["sensitivity"].p)
        return (1e-4 * d + 2e-6 * d * d) * max(1.0, prec / 256) ** 1.5

    def pure_epsilon(self, relation):
        return ball(self["noise_parameter"] * self["sensitivity"])
