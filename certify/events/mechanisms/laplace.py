"""LaplaceDpEvent(noise_multiplier b): Laplace noise of scale b times the l1 sensitivity.

RDP (Mironov 2017, arXiv:1702.07476, Prop. 6, exact for the pair Lap(0, b), Lap(1, b); eps = 1/b):
    R(alpha) = log( alpha/(2 alpha - 1) e^((alpha-1) eps) + (alpha-1)/(2 alpha - 1) e^(-alpha eps) ) / (alpha - 1).
Obligation ``E-laplace-rdp`` checks the integral behind it; ``E-laplace-superadditive`` that the divergence of a
shift s, g(s) = (alpha-1) R_s(alpha), is convex in s with g(0) = 0, hence superadditive: a vector shift of l1 norm
<= 1 (coordinate-wise Laplace noise) never exceeds the one-coordinate shift 1, so the formula is the RDP of the
mechanism for any dimension. Pure: eps = 1/b. Any relation (b relative to that relation's sensitivity).
"""

from __future__ import annotations

from ...balls import arb, ball, float_of, fmpq
from .base import Mechanism, positive


def laplace_rdp(alpha: fmpq, eps: fmpq) -> arb:
    """Mironov 2017 Prop. 6 at order alpha > 1 for eps = 1/b (ball, outward; both terms positive)."""
    a, e = ball(alpha), ball(eps)
    two = 2 * a - 1
    k = (a / two * ((a - 1) * e).exp() + (a - 1) / two * (-a * e).exp()).log()
    return k / ball(alpha - 1)


def laplace_floats(alphas, eps: float):
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        two = 2 * alphas - 1
        k = np.logaddexp(np.log(alphas / two) + (alphas - 1) * eps, np.log((alphas - 1) / two) - alphas * eps)
        return k / (alphas - 1)


class Laplace(Mechanism):
    CLASS = "LaplaceDpEvent"
    FIELDS = PARAMS = ("noise_multiplier",)
    EQUATION = "Mironov17 Prop. 6"

    @classmethod
    def validate(cls, values, where):
        positive(values, "noise_multiplier", where)
        return values

    def rdp(self, alpha, relation):
        return laplace_rdp(alpha, 1 / self["noise_multiplier"])

    def rdp_floats(self, alphas, relation):
        return laplace_floats(alphas, 1 / float_of(self["noise_multiplier"]))

    def pure_epsilon(self, relation):
        return ball(1 / self["noise_multiplier"])
