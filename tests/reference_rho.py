"""Independent mpmath reference for rho(alpha, p, Delta) of Bok (2026) (5), written apart from certify.dpsgd.

F(u) = E[(1-p+p e^X)^alpha (1-p+p e^Y)^(1-alpha)] with (X, Y) Gaussian, X ~ N(-D^2/2, D^2),
Y ~ N(-D^2 u, 2 D^2 u), Cov = D^2 u (Theorem 1's pair after the reduction to d = 2). Expanding the first
factor binomially and tilting by e^(kX) (under the tilt Y ~ N((k-1) D^2 u, 2 D^2 u)):

    F(u) = sum_k C(alpha,k) (1-p)^(alpha-k) p^k e^(k(k-1) D^2/2) E[(1-p+p e^(Y_k))^(1-alpha)].

Each expectation is one mpmath.quad over the real line (Gaussian density) at ``dps`` digits; terms are summed in k
until the rest is provably negligible (E[...] <= (1-p)^(1-alpha)). J(u) = log F(u)/(alpha-1). The working precision
grows with log(1/p) so that F - 1 = O(p^2) keeps 50 significant digits. rho = max_u J(u) is found on a grid of u
refined by golden-section search around the best grid point.
"""

from __future__ import annotations

import mpmath as mp


def _dps_for(p) -> int:
    return 60 + 2 * max(0, int(-mp.log10(p)))


def F_ref(alpha: int, p, sigma, u, dps: int | None = None):
    """F(u) of (5) at ``dps`` digits (mpf). Pass p, sigma, u as exact strings (or ints) or as mpf already at
    ``dps`` digits: they are converted inside the working precision."""
    with mp.workdps(dps or _dps_for(mp.mpf(p))):
        p = mp.mpf(p)
        sigma = mp.mpf(sigma)
        u = mp.mpf(u)
        D2 = 4 / sigma**2
        q = 1 - p
        cap = q ** (1 - alpha)  # E[(1-p+p e^Y)^(1-alpha)] <= (1-p)^(1-alpha)
        total = mp.mpf(0)
        weights = [mp.binomial(alpha, k) * q ** (alpha - k) * p**k * mp.exp(k * (k - 1) * D2 / 2) for k in range(alpha + 1)]
        order = sorted(range(alpha + 1), key=lambda k: -weights[k])
        tiny = mp.mpf(10) ** (-(mp.mp.dps - 5))
        for idx, k in enumerate(order):
            rest = sum(weights[j] for j in order[idx:]) * cap
            if total > 0 and rest < tiny * total * mp.mpf(10) ** -10 and weights[k] * cap < tiny:
                break
            if u == 0:
                e = mp.mpf(1)
            else:
                m, s = (k - 1) * D2 * u, mp.sqrt(2 * D2 * u)
                f = lambda y, m=m, s=s: mp.exp(-(((y - m) / s) ** 2) / 2) / (s * mp.sqrt(2 * mp.pi)) * (q + p * mp.exp(y)) ** (1 - alpha)
                e = mp.quad(f, [-mp.inf, m - 8 * s, m, m + 8 * s, mp.inf])
            total += weights[k] * e
        return +total


def J_ref(alpha: int, p, sigma, u, dps: int | None = None):
    """J(u) = log F(u)/(alpha - 1) (arguments as in :func:`F_ref`)."""
    dps = dps or _dps_for(mp.mpf(p))
    with mp.workdps(dps):
        return mp.log(F_ref(alpha, p, sigma, u, dps)) / (alpha - 1)


def rho_ref(alpha: int, p, sigma, grid: int = 4, refine: int = 12):
    """max over u in [0, 1/2] of J(u): grid of ``grid`` + 1 points, then golden-section refinement.
    p is an exact string (e.g. "1e-30"): an mpf made at the default 15 digits would not be 1e-30."""
    dps = _dps_for(mp.mpf(p))
    with mp.workdps(dps):
        us = [mp.mpf(i) / (2 * grid) for i in range(grid + 1)]
        vals = [J_ref(alpha, p, sigma, u, dps) for u in us]
        i = max(range(len(us)), key=lambda j: vals[j])
        best_u, best = us[i], vals[i]
        lo, hi = us[max(i - 1, 0)], us[min(i + 1, grid)]
        g = (mp.sqrt(5) - 1) / 2
        for _ in range(refine if 0 < i < grid else 0):
            a, b = hi - g * (hi - lo), lo + g * (hi - lo)
            ja, jb = J_ref(alpha, p, sigma, a, dps), J_ref(alpha, p, sigma, b, dps)
            for uu, jj in ((a, ja), (b, jb)):
                if jj > best:
                    best_u, best = uu, jj
            if ja > jb:
                hi = b
            else:
                lo = a
        return best, best_u
