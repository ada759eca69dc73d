"""GaussianDpEvent(noise_multiplier z): the Gaussian mechanism, noise of standard deviation z times the sensitivity.

RDP (Mironov 2017, arXiv:1702.07476, Sec. VI, Table II: the Rényi divergence of N(0, z^2) and N(1, z^2)):
    R(alpha) = alpha / (2 z^2)   exactly (a closed form: the ball is exact up to one division).
Under every relation, z is the noise standard deviation over the l2 sensitivity of that relation (dp_accounting's
convention: under REPLACE_ONE with clip norm C the sensitivity is 2C). Not pure.
"""

from __future__ import annotations

from ...balls import arb, ball, fmpq
from .base import Mechanism, positive


class Gaussian(Mechanism):
    CLASS = "GaussianDpEvent"
    FIELDS = PARAMS = ("noise_multiplier",)
    EQUATION = "Mironov17 Table II"

    @classmethod
    def validate(cls, values, where):
        positive(values, "noise_multiplier", where)
        return values

    def rdp(self, alpha: fmpq, relation: str) -> arb:
        z = self["noise_multiplier"]
        return ball(alpha / (2 * z * z))

    def rdp_floats(self, alphas, relation):
        from ...balls import float_of

        z = float_of(self["noise_multiplier"])
        return alphas / (2 * z * z)
