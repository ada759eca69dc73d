"""PermuteAndFlipDpEvent(epsilon): the permute-and-flip mechanism (McKenna, Sheldon 2020, arXiv:2010.12603), eps-DP.

McKenna, Sheldon (2020): permute-and-flip is eps-DP (their privacy theorem). Every eps-DP mechanism's RDP is bounded by the
binary randomized response divergence (:func:`certify.events.mechanisms.base.rr_eps_rdp`: KOV15 + data
processing), which is what we certify -- an UPPER BOUND. (dp_accounting's event documentation states that its
privacy loss distribution equals Laplace's with parameter 1/eps and uses the Laplace RDP, which is smaller; we have
not checked that identity, so we do not rely on it.) Pure: eps.
"""

from __future__ import annotations

from ...balls import float_of
from .base import PureEpsilon, rr_eps_floats, rr_eps_rdp


class PermuteAndFlip(PureEpsilon):
    CLASS = "PermuteAndFlipDpEvent"
    EQUATION = "MS20 (eps-DP) + KOV15; upper bound"
    UPPER_ONLY = "permute-and-flip's RDP is bounded by that of randomized response with the same eps: an upper bound only"

    def rdp(self, alpha, relation):
        return rr_eps_rdp(alpha, self["epsilon"])

    def rdp_floats(self, alphas, relation):
        return rr_eps_floats(alphas, float_of(self["epsilon"]))
