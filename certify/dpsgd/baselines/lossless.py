"""The lossless column of Bok's tables: the PLD of the symmetrised one-step profile (an ESTIMATE).

Per Proposition 1 of the paper, one DP-SGD step is dominated (in hockey-stick divergence) by the
u = 0 pair in both orders; the column takes the pointwise maximum

    delta*(eps) = max( H_{e^eps}(Pt || Qt), H_{e^eps}(Qt || Pt) ),
    Pt = (1-p) N(0,1) + p N(Delta,1),  Qt = N(0,1),  Delta = 2/sigma,

turns it into ONE pessimistic connect-the-dots PMF (Doroshenko et al. 2022) on an epsilon grid of
spacing 1e-4, composes it T times and reads off eps at delta. The composition is dp_accounting's
floating-point FFT, so these values are estimates (pessimistic in discretisation, not certified):
every output of this module says so. dp-accounting is an optional dependency
(``pip install '.[baselines]'``).

Composing the two directions separately and taking the max afterwards gives smaller numbers and is
not the column (see the notes).
"""
from __future__ import annotations

from functools import lru_cache

from ...balls import InputError

DISCRETIZATION = 1e-4  # grid spacing of the published column (a float: this module is an estimate)


def _dp_accounting():
    try:
        from dp_accounting.pld import pld_pmf, privacy_loss_distribution, privacy_loss_mechanism
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise InputError("--accountant", "the lossless column needs dp-accounting: pip install '.[baselines]'") from None
    return pld_pmf, privacy_loss_distribution, privacy_loss_mechanism


@lru_cache(maxsize=64)
def one_step_pld(p: float, sigma: float, discretization: float = DISCRETIZATION):
    """The PLD of the symmetrised one-step profile delta*(eps) (pessimistic connect-the-dots)."""
    import math

    import numpy as np
    pld_pmf, PLD, M = _dp_accounting()
    mechs = [M.GaussianPrivacyLoss(sigma, sensitivity=2, sampling_prob=p, adjacency_type=a)
             for a in (M.AdjacencyType.REMOVE, M.AdjacencyType.ADD)]
    bounds = [m.connect_dots_bounds() for m in mechs]
    lo = min(b.epsilon_lower for b in bounds)
    hi = max(b.epsilon_upper for b in bounds)
    rounded = np.arange(math.floor(lo / discretization), math.ceil(hi / discretization) + 1)
    eps = rounded * discretization
    deltas = np.maximum(*[np.asarray(m.get_delta_for_epsilon(eps)) for m in mechs])
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots(discretization, rounded, deltas)
    return PLD.PrivacyLossDistribution(pmf)


@lru_cache(maxsize=256)
def _composed(p: float, sigma: float, T: int):
    return one_step_pld(p, sigma).self_compose(T)


def epsilon_lossless(p: float, sigma: float, T: int, delta: float) -> float:
    """Estimated eps of T-fold DP-SGD at delta by the lossless (PLD) accountant (not certified)."""
    return float(_composed(p, sigma, T).get_epsilon_for_delta(delta))
