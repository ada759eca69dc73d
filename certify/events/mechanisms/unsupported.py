"""Events the Rényi accountant refuses, each with the reason (an InputError naming the class and why)."""

from __future__ import annotations

REASONS = {
    "NonPrivateDpEvent": "is a non-private operation: nothing to certify (its epsilon is infinite)",
    "UnsupportedDpEvent": "is an operation without a DP description: nothing to certify",
    "SampledWithReplacementDpEvent": (
        "has no Rényi bound we can certify: dp_accounting accounts it by neither accountant, and the published amplification "
        "results for sampling with replacement (Balle-Barthe-Gaboardi 2018) are (epsilon, delta) bounds, not a Rényi curve"
    ),
}
