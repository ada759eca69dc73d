"""The mechanisms of dp_accounting's event algebra, one module each, and the table from class name to mechanism.

Composition nodes (Composed, SelfComposed, NoOp) are read by :mod:`certify.event_tree`; refused classes and
their reasons are in :mod:`.unsupported`.
"""

from __future__ import annotations

from .base import Mechanism
from .discrete_gaussian import DiscreteGaussian
from .discrete_laplace import DiscreteLaplace
from .epsilon_delta import EpsilonDelta
from .exponential import ExponentialMechanism
from .gaussian import Gaussian
from .laplace import Laplace
from .mixture_of_gaussians import MixtureOfGaussians
from .permute_and_flip import PermuteAndFlip
from .poisson_sampled import PoissonSampledGaussian, PoissonSampledLaplace
from .randomized_response import RandomizedResponse
from .repeat_and_select import RepeatAndSelect
from .sampled_without_replacement import SampledWithoutReplacementGaussian
from .tree_aggregation import TreeAggregation
from .truncated_subsampled_gaussian import TruncatedSubsampledGaussian
from .zcdp import ZCDp

#: dp_accounting class name -> mechanism class (the events the Rényi accountant certifies)
MECHANISMS: dict[str, type[Mechanism]] = {
    m.CLASS: m
    for m in (
        Gaussian,
        Laplace,
        DiscreteLaplace,
        DiscreteGaussian,
        RandomizedResponse,
        EpsilonDelta,
        ZCDp,
        ExponentialMechanism,
        PermuteAndFlip,
        TreeAggregation,
        PoissonSampledGaussian,
        PoissonSampledLaplace,
        SampledWithoutReplacementGaussian,
        RepeatAndSelect,
        MixtureOfGaussians,
        TruncatedSubsampledGaussian,
    )
}
