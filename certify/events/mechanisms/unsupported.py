"""Events the Rényi accountant refuses, each with the reason (an InputError naming the class and why)."""

from __future__ import annotations

REASONS = {
    "NonPrivateDpEvent": "is a non-private operation: nothing to certify (its epsilon is infinite)",
    "UnsupportedDpEvent": "is an operation without a DP description: nothing to certify",
    "SampledWithReplacementDpEvent": "has no Rényi bound in dp_accounting and none is certified here",
    "MixtureOfGaussiansDpEvent": "has no Rényi bound in dp_accounting (PLD only); not certified by the Rényi accountant",
    "TruncatedSubsampledGaussianDpEvent": "has no Rényi bound in dp_accounting (PLD only); not certified by the Rényi accountant",
}
