"""The Birrell et al. column: Theorem 3.4 of Birrell, Ebrahimi, Behnia, Pacheco (NeurIPS 2024).

Fixed-size batches without replacement, replace-one adjacency, Taylor order m (the tables report the
minimum over m in {3, 4, 5} and over alpha). With q = p, falling factorial a^(j down), rising factorial
x^(i up) and B_k of :mod:`.moments` (Delta = 2/sigma):

    rho_FS(alpha) = log(1 + q^2 alpha (alpha-1) (e^(4/sigma^2) - e^(2/sigma^2))
                        + sum_{k=3..m-1} q^k/k! Ft_k + E_m) / (alpha - 1)
    Ft_k = B_k [ c_k (alpha-1) alpha^(k-1) + sum_{j=0..k} C(k,j) | alpha^(j down) (alpha-1)^((k-j) up)
                                                                  - (alpha-1) alpha^(k-1) | ],
           c_k = 4 (k even), 3 (k odd)
    E_m  = q^m/m! sum_{j=0..m} C(m,j) |alpha^(j down)| (alpha-1)^((m-j) up) (1-q)^(-(alpha+m-j-1)) I_j
    I_j  = (1-q)^(alpha-j) B_m                                                   if alpha <= j
    I_j  = B_m + sum_{l=0..ceil(alpha)-j} q^l C(ceil(alpha)-j, l)/C(m+l, l) B_(m+l)   if alpha > j

Integer alpha only. The falling/rising factorials and binomials are exact integers; every exponential
is a ball, so the value never overflows (the authors' float code returns inf at alpha = 16,
p = 0.004, sigma = 1, m = 5).
"""

from __future__ import annotations

from math import comb, factorial

from ...balls import arb, ball, fmpq
from .moments import B


def _falling(a: int, j: int) -> int:
    out = 1
    for i in range(j):
        out *= a - i
    return out


def _rising(x: int, i: int) -> int:
    out = 1
    for t in range(i):
        out *= x + t
    return out


def rho_birrell(alpha: int, p: fmpq, sigma: fmpq, m: int) -> arb:
    """rho_FS(alpha) of Theorem 3.4 at Taylor order m (two-sided enclosure), integer alpha >= 2."""
    q = ball(p)
    one_minus_q = ball(1 - p)
    e4, e2 = ball(fmpq(4) / sigma**2).exp(), ball(fmpq(2) / sigma**2).exp()
    total = 1 + q * q * alpha * (alpha - 1) * (e4 - e2)
    base = (alpha - 1) * alpha**2  # (alpha-1) alpha^(k-1) at k = 3, updated below
    for k in range(3, m):
        ref = (alpha - 1) * alpha ** (k - 1)
        c_k = 4 if k % 2 == 0 else 3
        s = c_k * ref + sum(comb(k, j) * abs(_falling(alpha, j) * _rising(alpha - 1, k - j) - ref) for j in range(k + 1))
        total += q**k / factorial(k) * B(k, sigma) * s
    Em = arb(0)
    for j in range(m + 1):
        coeff = comb(m, j) * abs(_falling(alpha, j)) * _rising(alpha - 1, m - j)
        if coeff == 0:
            continue
        if alpha <= j:
            I = one_minus_q ** (alpha - j) * B(m, sigma)
        else:
            n_ = alpha - j  # ceil(alpha) - j for integer alpha
            I = B(m, sigma) + sum((q**l * comb(n_, l) / comb(m + l, l) * B(m + l, sigma) for l in range(n_ + 1)), arb(0))
        Em += coeff * one_minus_q ** (-(alpha + m - j - 1)) * I
    total += q**m / factorial(m) * Em
    del base
    return total.log() / (alpha - 1)
