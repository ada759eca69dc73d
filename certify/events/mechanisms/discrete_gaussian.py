"""DiscreteGaussianDpEvent(sigma, sensitivity D, dimension): integer noise with mass proportional to e^(-x^2/(2 sigma^2)).

Canonne, Kamath, Steinke (2020), arXiv:2004.00010, Prop. 5 (and Thm 15 for vectors): the discrete Gaussian
mechanism with l2 sensitivity D is (D^2/(2 sigma^2))-zCDP, i.e.
    R(alpha) <= alpha D^2 / (2 sigma^2)        -- an UPPER BOUND only (the continuous Gaussian's RDP),
for every dimension (the field ``dimension`` is read and does not change the bound). Not pure.
"""

from __future__ import annotations

from ...balls import InputError, ball, exact_str, float_of
from .base import Mechanism, positive


class DiscreteGaussian(Mechanism):
    CLASS = "DiscreteGaussianDpEvent"
    FIELDS = ("sigma", "sensitivity", "dimension")
    OPTIONAL = {"sensitivity": 1, "dimension": None}
    PARAMS = ("sigma", "sensitivity")
    EQUATION = "CKS20 Prop. 5 (upper bound)"
    UPPER_ONLY = "the discrete Gaussian's RDP is bounded by the continuous Gaussian's (CKS20 Prop. 5): an upper bound only"

    @classmethod
    def validate(cls, values, where):
        positive(values, "sigma", where)
        positive(values, "sensitivity", where)
        return values

    @classmethod
    def read(cls, view):
        view.check_fields(cls.FIELDS, cls.OPTIONAL)
        if view.field("dimension", None) is not None:
            d, _ = view.number("dimension")
            if d.q != 1 or d < 1:
                raise InputError(f"{view.where}.dimension", f"must be a positive integer or null, got {exact_str(d)}"[:200])
        s, sn = view.number("sigma")
        d, dn = view.number("sensitivity", default=1)
        return cls.make({"sigma": s, "sensitivity": d}, {"sigma": sn, "sensitivity": dn}, view.where)

    def rdp(self, alpha, relation):
        s, d = self["sigma"], self["sensitivity"]
        return ball(alpha * d * d / (2 * s * s))

    def rdp_floats(self, alphas, relation):
        s, d = float_of(self["sigma"]), float_of(self["sensitivity"])
        return alphas * d * d / (2 * s * s)
