"""PoissonSampledDpEvent(sampling_probability q, GaussianDpEvent(z)): the Poisson-subsampled Gaussian mechanism.

Mironov, Talwar, Zhang (2019), arXiv:1908.10530, Sec. 3.3: certify's own evaluation, reused as it is
(:func:`certify.poisson.rdp.rdp_ball`: the binomial sum for integer orders, the convexity chord for fractional ones;
its work guard :func:`certify.poisson.rdp.work_seconds`; a fractional order is bounded by the defining integral in balls
or the chord, whichever is smaller: ``fractional="integral"``), and the proof that the remove direction dominates the add
direction (obligation ``P-remove-dominates-add`` of ``certify proofs --paper mtz-poisson``). Under ADD_OR_REMOVE_ONE
and REPLACE_SPECIAL (the special record contributes nothing: the same pair). The sampled event must be a
GaussianDpEvent (dp_accounting also folds nested compositions of Gaussians into one; refused here), or a
LaplaceDpEvent: then :class:`PoissonSampledLaplace`, certified by the PLD accountant only. q = 0: RDP 0.
Orders up to 4096. Not pure.
"""

from __future__ import annotations

from ...balls import InputError, arb, float_of, fmpq, require_in
from ...event_tree import EventView
from .base import ADD_REMOVE, REPLACE_SPECIAL, Mechanism, positive


class PoissonSampledGaussian(Mechanism):
    CLASS = "PoissonSampledDpEvent"
    FIELDS = ("sampling_probability", "event")
    PARAMS = ("sampling_probability", "noise_multiplier")
    RELATIONS = frozenset({ADD_REMOVE, REPLACE_SPECIAL})
    EQUATION = "MTZ19 Sec. 3.3 (certify.poisson.rdp)"

    @classmethod
    def validate(cls, values, where):
        require_in(f"{where}.sampling_probability", values["sampling_probability"], 0, 1, "[]")
        positive(values, "noise_multiplier", where)
        return values

    @classmethod
    def read(cls, view):
        view.check_fields(cls.FIELDS)
        q, qn = view.number("sampling_probability")
        inner = EventView(view.field("event"), f"{view.where}.event")
        if inner.cls == "LaplaceDpEvent":  # certified by the PLD accountant only (PoissonSampledLaplace)
            inner.check_fields(("noise_multiplier",))
            b, bn = inner.number("noise_multiplier")
            return PoissonSampledLaplace.make(
                {"sampling_probability": q, "noise_multiplier": b}, {"sampling_probability": qn, "noise_multiplier": bn}, view.where
            )
        if inner.cls != "GaussianDpEvent":
            raise InputError(
                inner.where,
                f"PoissonSampledDpEvent is certified for a sampled GaussianDpEvent only (Rényi bound of MTZ19; a sampled LaplaceDpEvent "
                f"by --accountant pld), got {inner.cls}",
            )
        inner.check_fields(("noise_multiplier",))
        z, zn = inner.number("noise_multiplier")
        return cls.make({"sampling_probability": q, "noise_multiplier": z}, {"sampling_probability": qn, "noise_multiplier": zn}, view.where)

    def rdp(self, alpha, relation):
        from ...poisson.rdp import rdp_ball

        q = self["sampling_probability"]
        if q == 0:
            return arb(0)
        return rdp_ball(alpha, q, self["noise_multiplier"], "integral")

    def rdp_floats(self, alphas, relation):
        import numpy as np

        from ...poisson.choice import log_A_floats
        from ...poisson.rdp import ORDERS

        q = self["sampling_probability"]
        if q == 0:
            return np.zeros(len(alphas))
        K = log_A_floats(max(float_of(q), 1e-300), float_of(self["noise_multiplier"]))
        index = {a: i for i, a in enumerate(ORDERS)}
        out = np.empty(len(alphas))
        for j, a in enumerate(alphas):
            a0 = int(np.floor(a))
            if a == a0:
                k = K[index[a0]]
            else:  # the chord between the neighbouring integers (orders below 256 only)
                t = a - a0
                k = (1 - t) * K[index[a0]] + t * K[index[a0 + 1]]
            out[j] = k / (a - 1)
        return out

    def is_null(self) -> bool:
        return self["sampling_probability"] == 0

    def work_seconds(self, alpha: fmpq, prec: int) -> float:
        from ...poisson.rdp import work_seconds

        return work_seconds(alpha, 1, prec, "integral")

    def rdp_floats_fine(self, alphas, relation):
        """The float estimate at fractional orders from the defining integral (trapezoid), or the chord if smaller."""
        import numpy as np

        from ...poisson.choice import log_A_frac_floats

        chord = self.rdp_floats(alphas, relation)
        q = self["sampling_probability"]
        frac = np.array([a != np.floor(a) for a in alphas])
        if q == 0 or not frac.any():
            return chord
        est = log_A_frac_floats(alphas[frac], max(float_of(q), 1e-300), float_of(self["noise_multiplier"])) / (alphas[frac] - 1)
        out = chord.copy()
        out[frac] = np.minimum(chord[frac], est)
        return out


class PoissonSampledLaplace(Mechanism):
    """PoissonSampledDpEvent(q, LaplaceDpEvent(b)): certified by the PLD accountant only (its add/remove mixture pairs,
    :class:`certify.events.pld_pairs.PoissonLaplaceCurve`); the Rényi accountant refuses it (no theorem evaluated here).
    Recorded under its own class name (the sampled event is part of the mechanism)."""

    CLASS = "PoissonSampledDpEvent/LaplaceDpEvent"
    FIELDS = ("sampling_probability", "event")
    PARAMS = ("sampling_probability", "noise_multiplier")
    RELATIONS = frozenset({ADD_REMOVE, REPLACE_SPECIAL})
    EQUATION = "PLD only (certify.events.pld_pairs.PoissonLaplaceCurve)"
    NO_RDP = "PoissonSampledDpEvent(LaplaceDpEvent) has no certified Rényi bound here; use --accountant pld"

    @classmethod
    def validate(cls, values, where):
        require_in(f"{where}.sampling_probability", values["sampling_probability"], 0, 1, "[]")
        positive(values, "noise_multiplier", where)
        return values

    def is_null(self) -> bool:
        return self["sampling_probability"] == 0

    def rdp(self, alpha, relation):
        raise InputError("event", self.NO_RDP)

    def rdp_floats(self, alphas, relation):
        raise InputError("event", self.NO_RDP)
