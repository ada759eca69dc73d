"""Events the Rényi accountant refuses, each with the reason (an InputError naming the class and why)."""

from __future__ import annotations

REASONS = {
    "NonPrivateDpEvent": "is a non-private operation: nothing to certify (its epsilon is infinite)",
    "UnsupportedDpEvent": "is an operation without a DP description: nothing to certify",
    "SampledWithReplacementDpEvent": (
        "has no Rényi bound we can certify: dp_accounting accounts it by neither accountant, and the published amplification "
        "results for sampling with replacement (Balle-Barthe-Gaboardi 2018) are (epsilon, delta) bounds, not a Rényi curve"
    ),
    "TruncatedSubsampledGaussianDpEvent": (
        "is refused by both accountants: no Rényi bound is evaluated for it (dp_accounting's RdpAccountant has none either), "
        "and its PLD (dp_accounting mixes, with weight P(Bin(n - 1, q) >= B), a replace-one subsampled Gaussian at noise z/2 "
        "into the Poisson-subsampled Gaussian at noise z) is the theorem of arXiv:2508.15089, whose statement and proof could "
        "not be checked here, nor could the looser bound of Chua et al. (arXiv:2411.04205: the probability of a batch over B "
        "added to delta); PoissonSampledDpEvent(q, GaussianDpEvent(z)) without truncation is certified, the cost of the "
        "truncation is not (docs/events.md)"
    ),
}
