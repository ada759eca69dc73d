"""Independent mpmath ground truth for the PLD accountant (written apart from certify.pld; 30+ digits).

Pairs (Bok 2026 Proposition 1; Zhu, Dong, Wang 2022), z(x) = exp(D x - D^2/2):
  remove: P = (1-q) N(0,1) + q N(D,1), Q = N(0,1); privacy loss L(x) = log(1 - q + q z(x)).
  add:    P = N(0,1), Q = (1-q) N(0,1) + q N(D,1);  L(x) = -log(1 - q + q z(x)).
One-step curve: the closed forms f(gamma) = H_gamma(P||Q) of the notes.

Composition (T = 2, 3): H_gamma(P1 x P2 || Q1 x Q2) = E_{x ~ P2}[ H_{gamma e^{-L2(x)}}(P1 || Q1) ], integrated
over x with mpmath.quad (error estimate checked).

Fixed-size replace-one uses the curve f* = max(f_remove, f_add) with D = 2/sigma. When f_remove >= f_add
exactly for gamma >= 1 and f_add >= f_remove below (checked numerically by ``max_structure_ok``), the
P-loss law of f* is: the remove pair's law on {L > 0} = {x > D/2}, the add pair's law on {L < 0} =
{x > D/2}, and an atom at loss 0 of mass gamma (f*'(1+) - f*'(1-)) = (1-q)(2 Phi(D/2) - 1).
"""
from __future__ import annotations

import mpmath as mp

DPS = 34


def _ncdf(x):
    return mp.ncdf(x)


def _sf(x):
    return mp.ncdf(-x)


def f_remove(g, q, D):
    if g <= 1 - q:
        return 1 - g
    x1 = (mp.log((g - 1 + q) / q) + D ** 2 / 2) / D
    return q * _sf(x1 - D) - (g - 1 + q) * _sf(x1)


def f_add(g, q, D):
    if g * (1 - q) >= 1:
        return mp.mpf(0)
    if g == 0:
        return mp.mpf(1)
    x2 = (mp.log((1 - g * (1 - q)) / (g * q)) + D ** 2 / 2) / D
    return (1 - g * (1 - q)) * _ncdf(x2) - g * q * _ncdf(x2 - D)


def f_max(g, q, D):
    return max(f_remove(g, q, D), f_add(g, q, D))


def loss(direction, x, q, D):
    v = mp.log(1 - q + q * mp.exp(D * x - D ** 2 / 2))
    return v if direction == "remove" else -v


def density(direction, x, q, D):
    phi = mp.npdf(x)
    if direction == "remove":
        return (1 - q) * phi + q * mp.npdf(x - D)
    return phi


def _quad(fn, a, b):
    val, err = mp.quad(fn, [a, b], error=True, maxdegree=10)
    if not err <= max(mp.mpf(10) ** (-28) * abs(val), mp.mpf(10) ** -35):
        raise AssertionError(f"reference quadrature not accurate: {val} +- {err}")
    return val


def x_at_loss(direction, c, q, D):
    """The x with L(x) = c (L is monotone in x), or None."""
    z = ((mp.exp(c) if direction == "remove" else mp.exp(-c)) - 1 + q) / q
    if z <= 0:
        return None
    return (mp.log(z) + D ** 2 / 2) / D


def kinks(direction, g, q, D):
    """x where g e^{-L(x)} hits a point where the one- or two-step curves are not smooth
    ((1-q)^k, k = -2..2: ends of the loss supports and their sums; 1: the max-profile's kink)."""
    out = []
    for k in ((1 - q) ** 2, 1 - q, mp.mpf(1), 1 / (1 - q), 1 / (1 - q) ** 2):
        x = x_at_loss(direction, mp.log(g / k), q, D)
        if x is not None and -40 < x < 40:
            out.append(x)
    return out


def _integrate_x(fn, a=None, extra=()):
    """Integral over x in (a, inf) (or the real line) split into pieces for mpmath."""
    pts = sorted(set([-40, -8, -3, 0, 3, 8, 40] + [x for x in extra]))
    if a is not None:
        pts = [a] + [p for p in pts if p > a]
    total = mp.mpf(0)
    for lo, hi in zip(pts, pts[1:]):
        total += _quad(fn, lo, hi)
    return total


def composed_direction(direction, q, D, T, eps):
    """H_{e^eps} of the T-fold product of one direction's pair (T = 1, 2, 3)."""
    with mp.workdps(DPS):
        q, D, eps = mp.mpf(q), mp.mpf(D), mp.mpf(eps)
        f = f_remove if direction == "remove" else f_add

        def H(t, g):
            if t == 1:
                return f(g, q, D)
            return _integrate_x(lambda x: density(direction, x, q, D) * H(t - 1, g * mp.exp(-loss(direction, x, q, D))),
                                extra=kinks(direction, g, q, D))
        return H(T, mp.exp(eps))


def poisson_delta(q, sigma, T, eps):
    """Worst direction of Poisson add/remove, D = 1/sigma."""
    D = 1 / mp.mpf(sigma)
    return max(composed_direction("remove", q, D, T, eps), composed_direction("add", q, D, T, eps))


def max_structure_ok(q, D) -> bool:
    with mp.workdps(DPS):
        q, D = mp.mpf(q), mp.mpf(D)
        for g in [mp.mpf(k) / 64 for k in range(1, 64)] + [1 + mp.mpf(k) / 16 for k in range(1, 200)]:
            a, b = f_remove(g, q, D), f_add(g, q, D)
            if g > 1 and a < b - mp.mpf(10) ** -30:
                return False
            if g < 1 and b < a - mp.mpf(10) ** -30:
                return False
        return True


def fixed_size_delta(q, sigma, T, eps):
    """T-fold composition of the max-profile f* = max(f_remove, f_add), D = 2/sigma (see the docstring)."""
    with mp.workdps(DPS):
        q, eps = mp.mpf(q), mp.mpf(eps)
        D = 2 / mp.mpf(sigma)
        atom = (1 - q) * (2 * mp.ncdf(D / 2) - 1)

        def H(t, g):
            if t == 1:
                return f_max(g, q, D)
            part = atom * H(t - 1, g)
            for direction in ("remove", "add"):
                part += _integrate_x(lambda x, d=direction: density(d, x, q, D)
                                     * H(t - 1, g * mp.exp(-loss(d, x, q, D))), a=D / 2,
                                     extra=kinks(direction, g, q, D))
            return part
        return H(T, mp.exp(eps))
