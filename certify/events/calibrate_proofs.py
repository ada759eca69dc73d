"""Proof obligation of the PLD calibration's monotonicity (:mod:`certify.events.calibrate_pld`; paper key ``events``).

Registered with the events paper's obligations (imported by :mod:`certify.events.proofs`).
"""

from __future__ import annotations

import sympy as sp

from ..proofs.core import Outcome, combine, obligation
from ..proofs.tools import equal, positive

PAPER = "events"


@obligation(
    PAPER,
    "E-pld-noise-channel",
    "certify.events.calibrate_pld (a larger noise is a post-processing of a smaller one)",
    "for 0 < b < b': (1 + b^2 t^2)/(1 + b'^2 t^2) = (b/b')^2 + (1 - (b/b')^2)/(1 + b'^2 t^2) with weights (b/b')^2 and "
    "1 - (b/b')^2 in [0, 1], so Lap(b') = Lap(b) + Z, Z = 0 w.p. (b/b')^2 and Lap(b') otherwise (characteristic functions "
    "1/(1 + b^2 t^2)); for 0 < s < s': e^(-s^2 t^2/2) e^(-(s'^2 - s^2) t^2/2) = e^(-s'^2 t^2/2) with s'^2 - s^2 > 0, so "
    "N(0, s'^2) = N(0, s^2) + N(0, s'^2 - s^2)",
)
def noise_channel(claimed=None) -> Outcome:
    b, r, t, s, d = sp.symbols("b r t s d", positive=True)  # b' = b + r > b, s' = s + d > s
    bp, spr = b + r, s + d
    w = (b / bp) ** 2
    mix = w + (1 - w) / (1 + bp**2 * t**2) if claimed is None else claimed
    return combine(
        [
            ("Laplace ratio of characteristic functions", equal(sp.simplify((1 + b**2 * t**2) / (1 + bp**2 * t**2) - mix), 0)),
            ("weight (b/b')^2 > 0", positive(w)),
            ("weight 1 - (b/b')^2 > 0", positive(sp.factor(sp.together(1 - w)))),
            (
                "Gaussian variances add",
                equal(sp.simplify(sp.exp(-(s**2) * t**2 / 2) * sp.exp(-(spr**2 - s**2) * t**2 / 2) - sp.exp(-(spr**2) * t**2 / 2)), 0),
            ),
            ("s'^2 - s^2 > 0", positive(sp.expand(spr**2 - s**2))),
        ]
    )
