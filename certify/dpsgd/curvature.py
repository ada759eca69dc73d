"""Curvature bounds kappa(l, r) >= max_{u in [l, r]} |J''(u)|, Bok (2026) Appendix B.3.2, (38)-(45).

kappa = min(kappa1, kappa2):

* kappa1 (41)+(39)+(40)+(42): |J''| <= (|F''| + |F'|^2)/(alpha - 1) (uses F >= 1), with
  |F'| <= Delta^2 alpha(alpha-1) (E11 + E02) (39) and |F''| bounded termwise from (18) as in (40),
  where E_ij >= E[v^i w^j h(X, Y)] is the binomial bound (42) evaluated at u = r (every exponent of
  (42) is non-decreasing in u, so the bound at r holds on all of [l, r]). Since 0 <= v, w <= 1,
  E[v^i w^j h] <= E[v^i' w^j' h] for i' <= i, j' <= j, and we use the smallest of those bounds
  (a sharpening of (42) that is valid for the same reason; it cuts kappa1 by orders of magnitude
  near u = 1/2, where the crude exponents of (42) for high powers of w blow up).
* kappa2 (45) = 2 Delta^4 alpha (4 alpha^2 + 5 alpha + 4), valid for every u.
* The two routes are merged term by term (``kappa1`` below): each normalised moment
  E[v^i w^j h]/F is bounded by the smaller of E_ij (F >= 1) and 1 (v, w <= 1), so the result is never
  larger than min(kappa1, kappa2) of the paper.

All quantities are balls; callers use the upper endpoint (rounded up).
"""
from __future__ import annotations

import math
from functools import lru_cache

from ..balls import arb, ball, ctx, fmpq
from .problem import Problem
from .mixture import consts

# (i, j) pairs needed by (39) and (40)
_PAIRS = ((1, 1), (0, 2), (0, 4), (1, 3), (2, 2), (0, 3), (1, 2), (2, 1))


def E_bound(prob: Problem, i: int, j: int, r: arb) -> arb:
    """Upper bound (42) on E[v^i w^j h(X, Y)] for u <= r (ball; use its upper endpoint)."""
    c = consts(prob)
    al = prob.alpha
    half_D2 = c.D2 / 2
    total = arb(0)
    lq, lp = c.q.log(), c.p.log()
    for k in range(al - i + 1):
        b = math.comb(al - i, k)
        s = i + k
        e1 = (1 - i - j - k) * lq + (i + j + k) * lp + half_D2 * (s * (s - 1) + 2 * r * (j * (i + j + k - 1)))
        e2 = (al - i - k) * lq + (1 + k + i - al) * lp + half_D2 * (s * (s - 1) + 2 * r * ((al - 1) * (al - i - k)))
        total = total + b * e1.min(e2).exp()
    return total


def kappa1(prob: Problem, r: fmpq) -> arb:
    """kappa1(l, r) of B.3.2 ((41) with (39), (40), (42) at u = r), merged term by term with kappa2.

    Each normalised moment E[v^i w^j h]/F(u) is bounded by min(E_ij(r), 1): E_ij(r) is (42) at u = r
    (sharpened by monotonicity in i, j) and F(u) >= 1, which is the route to (41); 1 is the route to
    (43)-(44). Both are valid for every u <= r, hence so is their minimum. Rounded up (ball).
    """
    al = prob.alpha
    c = consts(prob)
    rb = ball(r)
    raw = {(i, j): E_bound(prob, i, j, rb) for i in range(3) for j in range(5)}
    # 0 <= v, w <= 1, so E[v^i w^j h] <= E[v^i' w^j' h] for i' <= i, j' <= j: take the smallest bound
    E = {}
    for (i, j) in _PAIRS:
        best = raw[i, j]
        for i2 in range(i + 1):
            for j2 in range(j + 1):
                best = best.min(raw[i2, j2])
        E[i, j] = best
    # The tilted expectations E'[v^i w^j] = E[v^i w^j h]/F of (43)-(44) are <= E_ij / F <= E_ij (F >= 1)
    # and <= 1 (0 <= v, w <= 1): taking the smaller one term by term gives a bound that is never
    # worse than either kappa1 (all E_ij) or kappa2 (all 1) of the paper, and often much better.
    one = arb(1)
    E = {ij: e.min(one) for ij, e in E.items()}
    F1 = c.D2 * (al * (al - 1)) * (E[1, 1] + E[0, 2])
    F2 = c.D2 * c.D2 * (al * (al - 1)) * (
        (al + 1) * (al + 2) * E[0, 4] + 2 * al * (al + 1) * E[1, 3] + al * (al - 1) * E[2, 2]
        + 4 * (al + 1) * E[0, 3] + 5 * al * E[1, 2] + (al - 1) * E[2, 1] + 2 * E[0, 2] + E[1, 1])
    # (38): |J''| <= (|F''|/F + (F'/F)^2)/(alpha - 1)
    return (F2 + F1 * F1) / (al - 1)


def kappa2(prob: Problem) -> arb:
    """kappa2 (45) = 2 Delta^4 alpha (4 alpha^2 + 5 alpha + 4)."""
    al = prob.alpha
    D2 = consts(prob).D2
    return 2 * D2 * D2 * al * (4 * al * al + 5 * al + 4)


@lru_cache(maxsize=8192)
def _kappa(prob: Problem, r: fmpq, prec: int) -> arb:
    k1 = kappa1(prob, r)
    k2 = kappa2(prob)
    # the min of two valid upper bounds is valid; compare upper endpoints so the result is a sound ball
    return arb(k1.upper()).min(arb(k2.upper()))


def kappa(prob: Problem, l: fmpq, r: fmpq) -> arb:
    """kappa(l, r) = min(kappa1, kappa2) >= max_{[l, r]} |J''| (an exact upper endpoint, as a ball)."""
    return _kappa(prob, r, ctx.prec)


def interval_key(A_hi: fmpq, B_hi: fmpq, kap: fmpq, l: fmpq, r: fmpq) -> fmpq:
    """Q(l, r) of (37): max over t in [0,1] of (1-t)A + tB + kap (r-l)^2 t(1-t)/2, exactly in rationals.

    A_hi, B_hi are upper bounds of J at l and r, kap an upper bound of |J''| on [l, r]; the maximum
    is increasing in all three, so the exact rational result is an upper bound of max_{[l,r]} J (36).
    """
    c = kap * (r - l) ** 2 / 2
    d = B_hi - A_hi
    if c > 0 and abs(d) <= c:
        return (A_hi + B_hi) / 2 + c / 4 + d * d / (4 * c)
    return A_hi if A_hi >= B_hi else B_hi
