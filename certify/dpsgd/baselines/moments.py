"""Gaussian moments shared by the Wang and Birrell columns (in balls).

For the base pair N(0,1) vs N(Delta,1), Delta = 2/sigma, and integer k >= 0:

    M_k = E[(e^(Delta Z - Delta^2/2) - 1)^k] = sum_{l=0..k} C(k,l) (-1)^(k-l) e^(l(l-1) Delta^2/2),
    B_k = M_k (k even),  sqrt(M_(k-1) M_(k+1)) (k odd)   (a Cauchy-Schwarz bound on E|.|^k).

M_k is an alternating sum whose terms are up to e^(k^2 Delta^2/2) times larger than the result, so
it is evaluated at a working precision raised by the bits that cancel (two-sided enclosures).
"""

from __future__ import annotations

from functools import lru_cache

from ...balls import arb, ctx, fmpq, fmpz


def _M(k: int, sigma: fmpq) -> arb:
    D2 = fmpq(4) / sigma**2  # Delta^2 = 4/sigma^2
    target = ctx.prec
    extra = 2 * k + 32  # bits lost to cancellation: raised until the result is accurate (a choice, not a bound)
    while True:
        with ctx.workprec(target + extra):
            half = arb(D2.p) / arb(D2.q) / 2
            total = arb(0)
            for l in range(k + 1):
                term = arb(fmpz.bin_uiui(k, l)) * (arb(l * (l - 1)) * half).exp()
                total += term if (k - l) % 2 == 0 else -term
        if k < 2 or total.rel_accuracy_bits() >= target or extra > 64 * (target + k * k):
            return +total  # rounded to the caller's precision; still a rigorous enclosure
        extra *= 2


@lru_cache(maxsize=4096)
def _M_cached(k: int, sigma_p: int, sigma_q: int, prec: int) -> arb:
    return _M(k, fmpq(sigma_p, sigma_q))


def M(k: int, sigma: fmpq) -> arb:
    """M_k (see module docstring); M_0 = 1, M_1 = 0."""
    return _M_cached(k, int(sigma.p), int(sigma.q), ctx.prec)


def B(k: int, sigma: fmpq) -> arb:
    """B_k = M_k for even k, sqrt(M_(k-1) M_(k+1)) for odd k."""
    if k % 2 == 0:
        return M(k, sigma)
    return (M(k - 1, sigma) * M(k + 1, sigma)).sqrt()
