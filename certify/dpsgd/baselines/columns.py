"""The four columns of Bok's Tables 1-6 for one (delta, p, sigma, T): ours, Birrell, Wang, lossless.

The Rényi columns use the conversion of Corollary 1 / (6) (``eps_ball``) and minimise over integer
alpha in [2, 256] (and over m in {3, 4, 5} for Birrell). Each alpha's epsilon is a ball enclosing
the exact value of that bound, so the minimum over alpha is enclosed by the Arb minimum of the balls;
its upper endpoint is a certified upper bound on epsilon. The lossless column is a float estimate.

rho(alpha) depends on (alpha, p, sigma) only, so it is cached per (p, sigma) and reused across T and
delta (the tables vary T and delta at fixed p, sigma).
"""

from __future__ import annotations

from functools import lru_cache

from ...balls import arb, ctx, fmpq
from ..certificates import eps_ball
from ..problem import ALPHA_MAX, ALPHA_MIN
from .birrell import rho_birrell
from .wang import rho_wang

BIRRELL_ORDERS = (3, 4, 5)


def rho_birrell_min(alpha: int, p: fmpq, sigma: fmpq) -> arb:
    """Birrell et al.'s rho at alpha, minimised over m in {3, 4, 5} (enclosed by the Arb min)."""
    r = rho_birrell(alpha, p, sigma, BIRRELL_ORDERS[0])
    for m in BIRRELL_ORDERS[1:]:
        r = r.min(rho_birrell(alpha, p, sigma, m))
    return r


def rho_column(kind: str, alpha: int, p: fmpq, sigma: fmpq) -> arb:
    """One-step rho(alpha) of the ``wang`` or ``birrell`` column."""
    return rho_wang(alpha, p, sigma) if kind == "wang" else rho_birrell_min(alpha, p, sigma)


@lru_cache(maxsize=None)
def _rhos(kind: str, p: fmpq, sigma: fmpq, prec: int) -> tuple:
    with ctx.workprec(prec):
        return tuple(rho_column(kind, a, p, sigma) for a in range(ALPHA_MIN, ALPHA_MAX + 1))


def min_over_alpha(alphas, rhos, T: int, delta: fmpq) -> tuple[arb, int, arb]:
    """(ball of min over alpha of eps(alpha) of (6), the alpha with the smallest upper endpoint, its rho).

    Each eps(alpha) ball encloses the exact bound at that alpha, so the Arb minimum of the balls encloses
    their minimum; its upper endpoint is the certified epsilon."""
    best, best_alpha, best_rho, enclosure = None, None, None, None
    for a, r in zip(alphas, rhos):
        e = eps_ball(r, a, T, delta)
        enclosure = e if enclosure is None else enclosure.min(e)
        if best is None or e.upper() < best.upper():
            best, best_alpha, best_rho = e, a, r
    return enclosure, best_alpha, best_rho


def epsilon_renyi(kind: str, p: fmpq, sigma: fmpq, T: int, delta: fmpq) -> tuple[arb, int]:
    """(ball of min over alpha of eps(alpha), the alpha with the smallest upper endpoint)."""
    enclosure, best_alpha, _ = min_over_alpha(range(ALPHA_MIN, ALPHA_MAX + 1), _rhos(kind, p, sigma, ctx.prec), T, delta)
    return enclosure, best_alpha


def epsilon_wang(p: fmpq, sigma: fmpq, T: int, delta: fmpq) -> tuple[arb, int]:
    """Wang et al. column (certified enclosure of the minimum over alpha)."""
    return epsilon_renyi("wang", p, sigma, T, delta)


def epsilon_birrell(p: fmpq, sigma: fmpq, T: int, delta: fmpq) -> tuple[arb, int]:
    """Birrell et al. column: minimum over m in {3, 4, 5} and alpha (certified enclosure)."""
    return epsilon_renyi("birrell", p, sigma, T, delta)
