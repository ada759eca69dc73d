"""Independent mpmath references for the Poisson-subsampled Gaussian (written separately from certify.poisson).

All at 60 significant digits. ``log_A_sum`` is the binomial sum of Mironov, Talwar, Zhang (2019) taken
term by term with mpmath binomials and powers; ``log_A_quad`` is the defining integral
E_{x ~ N(0,1)}[(1 - q + q exp(x/sigma - 1/(2 sigma^2)))^alpha] by quadrature (any real alpha >= 1), which
the sum must match at integers and the chord must dominate between them.
"""

from __future__ import annotations

import mpmath as mp

DPS = 60


def _mpf(x):
    from fractions import Fraction

    f = Fraction(str(x)) if not isinstance(x, Fraction) else x
    return mp.mpf(f.numerator) / f.denominator


def log_A_sum(alpha: int, q, sigma) -> mp.mpf:
    with mp.workdps(DPS):
        q, s = _mpf(q), _mpf(sigma)
        total = mp.mpf(0)
        for k in range(alpha + 1):
            total += mp.binomial(alpha, k) * (1 - q) ** (alpha - k) * q**k * mp.exp(mp.mpf(k * (k - 1)) / (2 * s * s))
        return mp.log(total)


def log_A_quad(alpha, q, sigma) -> mp.mpf:
    with mp.workdps(DPS):
        q, s, a = _mpf(q), _mpf(sigma), _mpf(alpha)

        def f(x):
            ratio = 1 - q + q * mp.exp(x / s - 1 / (2 * s * s))
            return ratio**a * mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)

        # the integrand peaks near x = alpha/sigma; split there
        c = a / s
        return mp.log(mp.quad(f, [-mp.inf, -10, 0, c, c + 10, mp.inf]))


def epsilon(K_total, alpha, delta) -> mp.mpf:
    """sum_i T_i K_i(alpha)/(alpha-1) + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)."""
    with mp.workdps(DPS):
        a, d = _mpf(alpha), _mpf(delta)
        return K_total / (a - 1) + mp.log((a - 1) / a) - (mp.log(d) + mp.log(a)) / (a - 1)
