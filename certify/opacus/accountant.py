"""The certified Opacus accountant: Opacus's ``IAccountant`` backed by certify's Poisson Rényi accountant.

Imports Opacus (hence torch): load it through :func:`certify.opacus.register` or
``certify.opacus.CertifiedAccountant``.

What it certifies: the history ``[(noise_multiplier, sample_rate, num_steps), ...]`` that Opacus records
(consecutive identical steps merged, as Opacus's ``RDPAccountant`` does) is the schedule of a DP-SGD run
with Poisson sampling under add/remove adjacency, sigma relative to the clip norm (the contract Opacus
accounts). Each float is taken at its exact binary value, with a provenance note in the certificate
(:func:`certify.poisson.ecosystem.opacus_history`). The bound is

    epsilon = sum_i T_i eps_RDP_i(alpha) + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)

(MTZ 2019 eps_RDP, Mironov 2017 composition, Balle et al. 2020 Thm 21 conversion) evaluated in Arb balls
at one alpha chosen by floats and recorded, a fractional order by the defining integral
(:func:`certify.poisson.accountant.certify_poisson`, ``fractional="integral"``); the
certificate's conclusion states (epsilon_bound, delta)-DP with epsilon_bound a decimal rounded up from the
ball's upper endpoint, and :meth:`CertifiedAccountant.get_epsilon` returns the smallest double >= that
decimal (rounded up twice, never below the certified value).
"""

from __future__ import annotations

from fractions import Fraction

from opacus.accountants.accountant import IAccountant

from .. import api
from ..balls import float_above  # the smallest double >= an exact value (written once, in balls)
from ..balls import InputError, ball_endpoints, exact, exact_str
from ..certificate import Certificate
from ..poisson.ecosystem import from_library, opacus_history
from ..poisson.schedule import parse_delta
from . import MECHANISM, MECHANISM_PLD

__all__ = ["CertifiedAccountant", "CertifiedPldAccountant"]


class CertifiedAccountant(IAccountant):
    """Opacus accountant (``mechanism() == "certified"``) whose epsilon is a certified upper bound.

    * ``step(noise_multiplier=, sample_rate=)``: one DP-SGD step (validated: sigma in [1e-6, 1e12], q in
      (0, 1]; NaN and infinities refused with :class:`~certify.balls.InputError`, a ``ValueError``);
    * ``history``: Opacus's list of ``(noise_multiplier, sample_rate, num_steps)`` (assignable, as
      ``get_noise_multiplier`` does); ``len(acc)``: the number of steps taken;
    * ``get_epsilon(delta)``: the certified epsilon as a float rounded up (0.0 before any step: no step has
      touched the data; 0.0 for a negative certified bound, which proves (0, delta)-DP);
      ``result(delta)``: the :class:`certify.api.Result` (exact bound, ball, alpha);
      ``certificate(delta)``: the certificate of the whole history (``certify verify`` re-checks it);
    * ``state_dict()`` / ``load_state_dict()``: Opacus's format ``{"history": [...], "mechanism":
      "certified"}``; a loaded history is validated first (InputError naming the entry).

    ``alpha`` (exact, > 1) fixes the Rényi order instead of the float choice; ``fractional`` ("chord" or
    "integral") selects how fractional orders are bounded; by default :attr:`FRACTIONAL`.
    """

    #: how fractional Rényi orders are bounded by default: "integral" (the defining integral in balls), as tight as
    #: Opacus's own float accountant on its fractional orders (the chord, certify's cheaper default, was measured
    #: 0.2-1% looser at typical settings, 4% at q = 0.25, sigma = 1, 8 steps, 73% at q = 0.02, sigma = 0.6, 50,000
    #: steps); a query then costs about 10-100 ms, its check a 2-20 ms quadrature per phase
    FRACTIONAL = "integral"

    def __init__(self) -> None:
        self._ledger = api.OpacusAccountant()  # step merging and validation are certify.api's
        super().__init__()

    @property
    def history(self) -> list:
        return self._ledger.history

    @history.setter
    def history(self, value) -> None:
        self._ledger.history = value

    @classmethod
    def mechanism(cls) -> str:
        return MECHANISM

    def step(self, *, noise_multiplier, sample_rate) -> None:
        self._ledger.step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)

    def __len__(self) -> int:
        return len(self._ledger)

    def result(self, delta, *, alpha=None, fractional: str | None = None) -> api.Result:
        """The certified epsilon of the history at ``delta`` (a float is taken at its exact value, noted)."""
        return self._ledger.get_epsilon(delta, alpha=alpha, fractional=self.FRACTIONAL if fractional is None else fractional)

    def certificate(self, delta, *, alpha=None, fractional: str | None = None) -> Certificate:
        """The certificate (kind ``dpsgd/renyi-poisson``) of the whole history at ``delta``."""
        return self.result(delta, alpha=alpha, fractional=fractional).certificate

    def get_epsilon(self, delta, *, alpha=None, fractional: str | None = None) -> float:
        """Certified epsilon at ``delta``: the smallest double >= the bound the certificate concludes.

        When the conversion gives a negative bound, the run is in particular (0, delta)-DP and 0.0 is returned.
        """
        if not self.history:
            parse_delta(from_library(delta, "delta", "the caller")[0], "delta")  # refused as it would be after a step
            return 0.0
        cert = self.certificate(delta, alpha=alpha, fractional=fractional)
        bound = exact(cert.witnesses["epsilon_bound"], "epsilon_bound")
        return max(0.0, float_above(Fraction(int(bound.p), int(bound.q))))  # a negative bound: (0, delta)-DP

    def load_state_dict(self, state_dict) -> None:
        if state_dict and "history" in state_dict and state_dict["history"]:
            opacus_history(list(state_dict["history"]), "state_dict")  # raises InputError naming the entry
        super().load_state_dict(state_dict)
        self.history = [tuple(e) for e in self.history]


class CertifiedPldAccountant(CertifiedAccountant):
    """Opacus accountant (``mechanism() == "certified-pld"``) backed by certify's certified PLD accountant.

    The history must be one phase (one ``(noise_multiplier, sample_rate)`` pair, any number of steps: what
    ``make_private`` and ``get_noise_multiplier`` produce); each float is taken at its exact binary value, which is
    what the certificate records (kind ``pld/dpsgd``, :func:`certify.pld.certify_pld`, poisson + add-remove: the run is
    (epsilon_upper, delta)-DP, and epsilon_lower is a certified lower bound on the exact eps(delta) of the composed
    dominating pair). ``get_epsilon(delta)`` returns the smallest double >= epsilon_upper (an exact dyadic), about
    4-7% below the Rényi bound at typical settings; ``grid`` (exact text, e.g. ``"1e-3"``) fixes the loss grid
    instead of the accountant's choice, and passes through ``get_noise_multiplier(..., grid="1e-3")``. A query costs
    from a fraction of a second (T = 500, sigma >= 2) to about a minute (sigma = 0.3), more than the Rényi accountant.
    """

    @classmethod
    def mechanism(cls) -> str:
        return MECHANISM_PLD

    def certificate(self, delta, *, grid=None) -> Certificate:
        """The certificate (kind ``pld/dpsgd``) of the history at ``delta``; InputError for several phases."""
        from ..contract import POISSON_ADD_REMOVE
        from ..pld import certify_pld

        if not self.history:
            raise InputError("history", "is empty: call step() first")
        sch = self._ledger.schedule()  # exact values, validated
        if len(sch.phases) != 1:
            raise InputError(
                "history",
                f"the certified PLD accountant takes one (noise_multiplier, sample_rate) phase, got {len(sch.phases)} "
                f'(accountant="{MECHANISM}" certifies any schedule)',
            )
        d = parse_delta(from_library(delta, "delta", "the caller")[0], "delta")
        ph = sch.phases[0]
        return certify_pld(POISSON_ADD_REMOVE, exact_str(ph.sampling_rate), exact_str(ph.noise_multiplier), ph.steps, exact_str(d), grid)

    def result(self, delta, **_):  # the Rényi Result has an order; the PLD's answer is its certificate
        raise InputError("result", f'is the Rényi accountant\'s (accountant="{MECHANISM}"); use certificate(delta)')

    def get_epsilon(self, delta, *, grid=None) -> float:
        """Certified epsilon at ``delta``: the smallest double >= the certificate's epsilon_upper (0.0 before a step)."""
        if not self.history:
            parse_delta(from_library(delta, "delta", "the caller")[0], "delta")
            return 0.0
        up = ball_endpoints(self.certificate(delta, grid=grid).quantities["epsilon_upper"].value)[1]
        return max(0.0, float_above(Fraction(int(up.p), int(up.q))))
