"""ExponentialMechanismDpEvent(epsilon): the epsilon-DP exponential mechanism, which is epsilon-bounded range.

Bounded range (Durfee, Rogers 2019, arXiv:1905.04273): for some t the privacy loss lies in [t, t + eps]. Then
* Cesar, Rogers (2021), arXiv:2004.07223, Sec. 3: an eps-BR mechanism is (eps^2/8)-zCDP, so
  R(alpha) <= alpha eps^2 / 8;
* it is eps-DP (both laws have mass 1, so t <= 0 <= t + eps), so R(alpha) <= the randomized response divergence
  of :func:`certify.events.mechanisms.base.rr_eps_rdp` (KOV15 + data processing).
The certified bound is the smaller of the two -- an UPPER BOUND only (dp_accounting uses xi + alpha eps^2/8 with a
xi <= 0 from the same paper, capped at eps; we do not rely on that refinement). Pure: eps.
"""

from __future__ import annotations

from ...balls import ball, float_of
from .base import PureEpsilon, rr_eps_floats, rr_eps_rdp


class ExponentialMechanism(PureEpsilon):
    CLASS = "ExponentialMechanismDpEvent"
    EQUATION = "CR21 Sec. 3 (eps-BR => eps^2/8-zCDP) and KOV15 (eps-DP); upper bound"
    UPPER_ONLY = "the exponential mechanism's RDP is bounded by min(alpha eps^2/8, randomized response's): an upper bound only"

    def rdp(self, alpha, relation):
        e = self["epsilon"]
        z = ball(alpha * e * e / 8)
        r = rr_eps_rdp(alpha, e)
        return z if z.upper() <= r.upper() else r

    def rdp_floats(self, alphas, relation):
        import numpy as np

        e = float_of(self["epsilon"])
        return np.minimum(alphas * e * e / 8, rr_eps_floats(alphas, e))
