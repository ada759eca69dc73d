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
#: most points of the one-step privacy-loss grid (sigma below about 0.36 would need more; 0.2 takes 1 GB)
MAX_GRID = 2 * 10**6
#: most steps composed (the FFT composition grows with T; 10^6 steps take about a minute)
MAX_STEPS = 10**6


def check_inputs(p: float, sigma: float, T: int, delta: float) -> None:
    """InputError unless the float estimate can be computed in bounded time and memory."""
    import math

    if not (0 < p < 1) or p < 1e-300:
        raise InputError("--sampling-rate", f"the lossless estimate needs p in [1e-300, 1) as a float, got {p!r}")
    if not (0 < sigma < math.inf) or sigma > 1e6:
        raise InputError("--noise-multiplier", f"the lossless estimate needs sigma in (0, 1e6], got {sigma!r}")
    if not (1e-300 <= delta < 1):
        raise InputError("--delta", f"the lossless estimate needs delta in [1e-300, 1) as a float, got {delta!r}")
    if not 1 <= T <= MAX_STEPS:
        raise InputError("--steps", f"the lossless estimate composes at most {MAX_STEPS} steps, got {T}")
    # width of the privacy-loss support ~ log(1 + p (e^(Delta^2) - 1)) + a few Delta: grid points at 1e-4
    D = 2 / sigma
    width = 2 * (min(D * D, 700.0) + 12 * D)
    if width / DISCRETIZATION > MAX_GRID:
        raise InputError(
            "--noise-multiplier",
            f"the lossless estimate's grid would need about {width / DISCRETIZATION:.2g} points "
            f"(limit {MAX_GRID:.0e}): sigma must be larger (about >= 0.36)",
        )


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
    mechs = [M.GaussianPrivacyLoss(sigma, sensitivity=2, sampling_prob=p, adjacency_type=a) for a in (M.AdjacencyType.REMOVE, M.AdjacencyType.ADD)]
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
    check_inputs(p, sigma, T, delta)
    return float(_composed(p, sigma, T).get_epsilon_for_delta(delta))
