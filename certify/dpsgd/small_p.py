"""rho(alpha, p, Delta) for tiny p: the p^2 term of Proposition 5 with a rigorous third-order remainder.

Why a separate route. For small p, F(u) = exp((alpha-1) J(u)) = 1 + O(p^2): the point bounds of
:mod:`certify.dpsgd.mixture` compute F itself, so F - 1 drowns in the rounding of the working precision
(p = 1e-30 gave rho in [-7.8e-31, 6.3e-22]), and rho >= 0 is of order p^2. Here F(u) - 1 is bounded
directly, with absolute errors of order p^3, so the relative width of rho is of order p.

The expansion. By (10) of the proof of Theorem 1 (Appendix A.1), with a = Delta(1, 0),
b = Delta(u, sqrt(2u - u^2)), Z ~ N(0, I_2), X = <a, Z> - |a|^2/2, Y = <b, Z> - |b|^2/2,
A = e^X - 1, B = e^Y - 1 (E A = E B = 0):

    F(u) = E[g(p)],   g(t) = U^alpha V^(1-alpha),   U = 1 + t A,   V = 1 + t B.

(X, Y) is Gaussian: X ~ N(-Delta^2/2, Delta^2), Y ~ N(-Delta^2 u, 2 Delta^2 u), Cov(X, Y) = Delta^2 u, so
E[e^(aX + sY)] = exp(Delta^2 a(a-1)/2 + Delta^2 u s(a + s - 1)) (the moment generating function).
Taylor's theorem in t with the Lagrange remainder, pointwise in Z, then expectation:

    g(p) = 1 + p g'(0) + p^2 g''(0)/2 + p^3 g'''(xi)/6,   xi in [0, p],
    g'(0) = alpha A + (1-alpha) B                      (expectation 0),
    g''(0) = alpha(alpha-1) (A - B)^2,                 E (A - B)^2 = e^(Delta^2) + e^(2u Delta^2) - 2 e^(u Delta^2),

so F(u) = 1 + p^2 c2(u) + r(u) with c2(u) = alpha(alpha-1)/2 (e^(Delta^2) + e^(2u Delta^2) - 2 e^(u Delta^2)) and
|r(u)| <= p^3/6 E sup_(t in [0, p]) |g'''(t)|. c2 increases in u (its derivative is
alpha(alpha-1) Delta^2 e^(u Delta^2)(e^(u Delta^2) - 1) >= 0), so
c2(1/2) = alpha(alpha-1) e^(Delta^2/2) expm1(Delta^2/2) is its maximum, and
rho = log(1 + p^2 c2(1/2) + O(p^3))/(alpha-1) = alpha (e^(Delta^2) - e^(Delta^2/2)) p^2 + O(p^3): the first term
of Proposition 5.

The remainder. By Leibniz, g''' = sum_(i+j=3) C(3,i) (alpha)_i A^i U^(alpha-i) (1-alpha)_j B^j V^(1-alpha-j), with
falling factorials (x)_i; |(1-alpha)_j| = (alpha-1) alpha ... (alpha+j-2) (rising), and (alpha)_i = 0 for i > alpha.
For t in [0, p]: V >= 1 - p > 0 (B >= -1) and 1 - alpha - j < 0, so V^(1-alpha-j) <= (1-p)^(1-alpha-j);
0 < U <= 1 + p e^X (A <= e^X) and alpha - i >= 0, so
U^(alpha-i) <= (1 + p e^X)^(alpha-i) = sum_m C(alpha-i, m) p^m e^(mX);
|A| <= max(1, e^X), so |A|^i <= 1 + e^(iX) (i >= 1; |A|^0 = 1), and likewise |B|^j <= 1 + e^(jY). Hence

    R := p^3/6 sum_(i+j=3, i<=alpha) C(3,i) (alpha)_i |(1-alpha)_j| (1-p)^(1-alpha-j)
         sum_(r in {0, i}) sum_(s in {0, j}) sum_(m=0..alpha-i) C(alpha-i, m) p^m
         exp(Delta^2 a(a-1)/2 + Delta^2 s(a+s-1)/2)

with a = m + r (r = 0 only when i = 0; s = 0 only when j = 0) bounds |r(u)| for every u in [0, 1/2]: the exponent
Delta^2 u s(a + s - 1) of the moment generating function is non-decreasing in u (s = 0, or s = j >= 1 and a + s >= 1),
so u = 1/2 bounds it. Therefore

    log1p(p^2 c2(1/2) - R)/(alpha-1) <= J(1/2) <= rho = max_u J(u) <= log1p(p^2 c2(1/2) + R)/(alpha-1),

both ends evaluated in balls (lower end rounded down, upper up). The route is used when it is tight enough
(:func:`certify.dpsgd.search.rho_search`: its width is at most the search tolerance gamma); its relative width
is about p R/(p^3 c2(1/2)), i.e. proportional to p: for sigma = 3 and alpha <= 256 it is below 1e-6 for p <= 1e-12
or so, and it works for p as small as the exact input allows (1e-2200 and
below: Arb exponents are unbounded). The checker re-evaluates these closed forms; there is nothing to search.
"""

from __future__ import annotations

import math

from ..balls import arb, ball
from .problem import Problem


def c2_half(prob: Problem) -> arb:
    """c2(1/2) = alpha(alpha-1) e^(Delta^2/2) expm1(Delta^2/2) (module docstring): the p^2 coefficient of F(1/2) - 1,
    the largest over u in [0, 1/2]. A ball containing the exact value (expm1: no cancellation for large sigma)."""
    D2 = ball(prob.delta_sens) ** 2
    al = prob.alpha
    return al * (al - 1) * (D2 / 2).exp() * (D2 / 2).expm1()


def remainder(prob: Problem) -> arb:
    """R >= sup_(u in [0, 1/2]) |F(u) - 1 - p^2 c2(u)| (module docstring). Use the upper endpoint."""
    al = prob.alpha
    p = ball(prob.p)
    q = 1 - p
    D2 = ball(prob.delta_sens) ** 2
    total = arb(0)
    for i in range(4):
        j = 3 - i
        if i > al:
            continue
        fall = math.prod(al - t for t in range(i))  # (alpha)_i
        rise = math.prod(al - 1 + t for t in range(j))  # |(1-alpha)_j|
        outer = math.comb(3, i) * fall * rise * q ** (1 - al - j)
        inner = arb(0)
        for r in (0,) if i == 0 else (0, i):
            for s in (0,) if j == 0 else (0, j):
                pm = arb(1)
                for m in range(al - i + 1):
                    a = m + r
                    inner += math.comb(al - i, m) * pm * (D2 * (a * (a - 1) + s * (a + s - 1)) / 2).exp()
                    pm *= p
        total += outer * inner
    return p**3 / 6 * total


def small_p_bounds(prob: Problem) -> dict:
    """Balls of the small-p route: c2(1/2), R, and rho_lo <= rho <= rho_hi (module docstring).

    ``rho_lo`` is a ball whose lower endpoint is the certified lower bound (None when p^2 c2 - R > 0 is not
    proved: the route then gives no lower bound and is not used); ``rho_hi``'s upper endpoint is the upper bound.
    """
    p = ball(prob.p)
    c2 = c2_half(prob)
    R = arb(remainder(prob).upper())
    main = p * p * c2
    al1 = prob.alpha - 1
    low = main - R
    rho_lo = arb(low.lower()).log1p() / al1 if low > 0 else None
    rho_hi = arb((main + R).upper()).log1p() / al1
    return {"c2": c2, "R": R, "main": main, "rho_lo": rho_lo, "rho_hi": rho_hi}
