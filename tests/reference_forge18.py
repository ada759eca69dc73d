"""Independent mpmath reference for the Poisson *add* direction (written apart from certify.pld and from
tests/reference_pld.py; issue 13, session 18 forger).

Add pair: P = N(0,1), Q = (1-q) N(0,1) + q N(D,1), D = 1/sigma. Privacy loss L(x) = log(dP/dQ)(x)
= -log(1 - q + q exp(D x - D^2/2)), strictly decreasing in x, with sup L = -log(1-q) (x -> -inf).

T = 1: {L > eps} = {x < x*}, x* = (log((e^-eps - 1 + q)/q) + D^2/2)/D (empty when e^-eps <= 1 - q), so
    delta_1(eps) = P(L > eps) - e^eps Q(L > eps) = Phi(x*) - e^eps ((1-q) Phi(x*) + q Phi(x* - D)).
T = 2: H_g(P x P || Q x Q) = E_{y ~ P}[ H_{g e^{-L(y)}}(P || Q) ], i.e.
    delta_2(eps) = int phi(y) delta_1(eps - L(y)) dy,
the integrand vanishing where eps - L(y) >= -log(1-q), i.e. for y >= y0 (L(y0) = eps + log(1-q)).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp

DPS = 50


def _mp(x) -> mp.mpf:
    f = Fraction(x)
    return mp.mpf(f.numerator) / f.denominator


def delta1(q, D, eps):
    """delta_1(eps) of the add pair (mp values in, mp value out; caller sets mp.dps)."""
    c = (mp.exp(-eps) - 1 + q) / q
    if c <= 0:
        return mp.mpf(0)
    x = (mp.log(c) + D**2 / 2) / D
    return mp.ncdf(x) - mp.exp(eps) * ((1 - q) * mp.ncdf(x) + q * mp.ncdf(x - D))


def add_delta(q, sigma, steps, eps, dps=DPS):
    """(value, error estimate) of the exact add-direction delta(eps) after ``steps`` in {1, 2} steps;
    q, sigma, eps exact (str / Fraction / int)."""
    with mp.workdps(dps):
        q, D, eps = _mp(q), 1 / _mp(sigma), _mp(eps)
        if steps == 1:
            return delta1(q, D, eps), mp.mpf(0)
        assert steps == 2
        c = eps + mp.log(1 - q)
        r = (mp.exp(-c) - 1 + q) / q
        if r <= 0:
            return mp.mpf(0), mp.mpf(0)
        y0 = (mp.log(r) + D**2 / 2) / D

        def f(y):
            L = -mp.log(1 - q + q * mp.exp(D * y - D**2 / 2))
            return mp.npdf(y) * delta1(q, D, eps - L)

        pts = sorted({mp.mpf(-40), min(y0 - 8, mp.mpf(-8)), min(y0 - 2, mp.mpf(-1)), min(y0 - 0.5, mp.mpf(0)), y0})
        pts = [p for p in pts if p <= y0]
        v, err = mp.quad(f, pts, error=True, maxdegree=10)
        # the tail y < -40 carries at most Phi(-40) mass (delta_1 <= 1)
        return v, err + mp.ncdf(-40)


def remove_delta1(q, D, eps):
    """delta_1(eps) of the remove pair P = (1-q) N(0,1) + q N(D,1), Q = N(0,1): L(x) = log(1 - q + q e^(D x - D^2/2))
    is increasing, {L > eps} = {x > x1}, x1 = (log((e^eps - 1 + q)/q) + D^2/2)/D (all of R when e^eps <= 1 - q)."""
    c = (mp.exp(eps) - 1 + q) / q
    if c <= 0:
        return 1 - mp.exp(eps)
    x = (mp.log(c) + D**2 / 2) / D
    sf = lambda t: mp.ncdf(-t)  # noqa: E731
    return (1 - q) * sf(x) + q * sf(x - D) - mp.exp(eps) * sf(x)


def remove_delta(q, sigma, steps, eps, dps=DPS):
    """(value, error estimate) of the exact remove-direction delta(eps), steps in {1, 2}: for T = 2,
    E_{y ~ P}[delta_1(eps - L(y))] with P the mixture (quadrature over y, tails beyond |y - D/2| > 40 bounded by
    their P-mass since delta_1 <= 1)."""
    with mp.workdps(dps):
        q, D, eps = _mp(q), 1 / _mp(sigma), _mp(eps)
        if steps == 1:
            return remove_delta1(q, D, eps), mp.mpf(0)
        assert steps == 2

        def f(y):
            L = mp.log(1 - q + q * mp.exp(D * y - D**2 / 2))
            p = (1 - q) * mp.npdf(y) + q * mp.npdf(y - D)
            return p * remove_delta1(q, D, eps - L)

        pts = [mp.mpf(-40), mp.mpf(-8), mp.mpf(0), D, D + 8, D + 40]
        # the kink of y -> delta_1(eps - L(y)) (where e^(eps - L(y)) = 1 - q) and the middle of the loss range
        for target in (mp.exp(eps) / (1 - q), mp.exp(eps / 2)):
            z = (target - 1 + q) / q
            if z > 0:
                y1 = (mp.log(z) + D**2 / 2) / D
                if -40 < y1 < D + 40:
                    pts.append(y1)
        pts = sorted(set(pts))
        v, err = mp.quad(f, pts, error=True, maxdegree=10)
        return v, err + 2 * mp.ncdf(-40)


def worst_delta(q, sigma, steps, eps):
    """max(add, remove) delta(eps) of the Poisson pair, with the larger error estimate."""
    a, ea = add_delta(q, sigma, steps, eps)
    r, er = remove_delta(q, sigma, steps, eps)
    return max(a, r), max(ea, er)
