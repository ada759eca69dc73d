"""EpsilonDeltaDpEvent(epsilon, delta): a mechanism known only to be (epsilon, delta)-DP.

Kairouz, Oh, Viswanath (2015), "The composition theorem for differential privacy" (the privacy region of an
(eps, delta) mechanism, and its proof): for each neighbouring pair the mechanism is a post-processing of
P = delta [A] + (1 - delta) R, Q = delta [B] + (1 - delta) R'
(A, B two atoms outside the support of the binary randomized response pair R = (e^eps, 1)/(1+e^eps), R' reversed).
Composing k such events (adaptively) with any other mechanisms, the outcome "some atom was drawn" has probability
1 - prod(1 - delta_i); off it the pairs are the randomized response pairs (weighted by prod(1 - delta_i) <= 1), so
    delta_total(eps) <= delta_x + (1 - delta_x) delta_RDP(eps),   delta_x = 1 - prod_i (1 - delta_i)^(count_i),
where delta_RDP is the conversion of the Rényi curve in which each such event counts with its randomized response
divergence (:func:`certify.events.mechanisms.base.rr_eps_rdp`; dp_accounting's rule too). Obligation
``E-extra-delta`` checks the algebra. Pure when delta = 0 (epsilon).
"""

from __future__ import annotations

from ...balls import ball, float_of, fmpq, require_in
from .base import MAX_PARAM, Mechanism, nonnegative, rr_eps_floats, rr_eps_rdp


class EpsilonDelta(Mechanism):
    CLASS = "EpsilonDeltaDpEvent"
    FIELDS = PARAMS = ("epsilon", "delta")
    EQUATION = "KOV15 + Mironov17 (randomized response)"

    @classmethod
    def validate(cls, values, where):
        nonnegative(values, "epsilon", where, MAX_PARAM)
        require_in(f"{where}.delta", values["delta"], 0, 1, "[)")
        return values

    def rdp(self, alpha, relation):
        return rr_eps_rdp(alpha, self["epsilon"])

    def rdp_floats(self, alphas, relation):
        return rr_eps_floats(alphas, float_of(self["epsilon"]))

    def pure_epsilon(self, relation):
        return ball(self["epsilon"]) if self["delta"] == 0 else None

    def is_null(self) -> bool:
        return self["epsilon"] == 0 and self["delta"] == 0

    @property
    def extra_delta(self) -> fmpq:
        return self["delta"]
