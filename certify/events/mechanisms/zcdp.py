"""ZCDpEvent(rho, xi): a mechanism satisfying (xi, rho)-zCDP.

Bun, Steinke (2016), arXiv:1605.02065, Def. 1.1: (xi, rho)-zCDP is the statement
    R(alpha) <= xi + rho alpha   for every alpha > 1
(the RDP bound is the definition itself: exact as a bound of what the event states). ``xi`` defaults to 0. Not pure.
"""

from __future__ import annotations

from ...balls import ball, float_of
from .base import Mechanism, nonnegative


class ZCDp(Mechanism):
    CLASS = "ZCDpEvent"
    FIELDS = ("rho", "xi")
    OPTIONAL = {"xi": 0}
    PARAMS = ("rho", "xi")
    EQUATION = "BS16 Def. 1.1"

    @classmethod
    def validate(cls, values, where):
        nonnegative(values, "rho", where)
        nonnegative(values, "xi", where)
        return values

    def is_null(self) -> bool:
        return self["rho"] == 0 and self["xi"] == 0

    def rdp(self, alpha, relation):
        return ball(self["xi"] + self["rho"] * alpha)

    def rdp_floats(self, alphas, relation):
        return float_of(self["xi"]) + float_of(self["rho"]) * alphas
