"""The Wang et al. column: fixed-size (without replacement), replace-one RDP, as dp_accounting computes it.

For integer 2 <= alpha <= 256 and Delta = 2/sigma (dp_accounting's noise multiplier sigma/2 against
the replace-one sensitivity 2C):

    A(alpha) = 1 + sum_{j=2..alpha} p^j C(alpha, j) min{ 4 B_j, 2 e^((j-1) eps_G(j)) },   eps_G(j) = 2 j/sigma^2,
    rho_W(alpha) = log A(alpha)/(alpha - 1)

(Wang, Balle, Kasiviswanathan 2019, Theorem 9 and its sharpened terms; B_j as in :mod:`.moments`).
Every term is evaluated in balls, so the result encloses the exact value of this expression; the
min of two balls is enclosed by Arb's ``min``.
"""

from __future__ import annotations

from ...balls import arb, ball, fmpq, fmpz
from .moments import B


def rho_wang(alpha: int, p: fmpq, sigma: fmpq) -> arb:
    """rho_W(alpha) for integer 2 <= alpha <= 256 (two-sided enclosure)."""
    pb = ball(p)
    A = arb(1)
    for j in range(2, alpha + 1):
        cap = 2 * (ball(fmpq(2 * j * (j - 1)) / sigma**2)).exp()  # 2 e^((j-1) eps_G(j))
        term = (4 * B(j, sigma)).min(cap)
        A += pb**j * arb(fmpz.bin_uiui(alpha, j)) * term
    return A.log() / (alpha - 1)
