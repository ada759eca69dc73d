"""Proof obligations behind the certified calibration (paper key ``mtz-poisson`` of ``certify proofs``).

The calibration of :mod:`certify.poisson.calibrate` relies on the monotonicity of the Rényi bound of the
Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019, Sec. 3.3 Case I), with X = exp(x/sigma - 1/(2 sigma^2)),
x ~ N(0, 1):

    A_alpha(q, sigma) = E[(1 + q (X - 1))^alpha] = sum_k C(alpha,k) (1-q)^(alpha-k) q^k exp(k(k-1)/(2 sigma^2))

(the sum for integer alpha only; for fractional alpha the series diverges, and only the expectation is meant).

* ``P-sigma-monotone``: for integer alpha each term decreases in sigma, so eps(alpha; sigma) and its minimum over
  a fixed grid of integer orders (the calibration's) are non-increasing in sigma (the calibration's bracket
  relies on this);
* ``P-q-monotone``: A_alpha is convex in q with zero slope at q = 0, so it is non-decreasing on [0, 1] (the
  bound is non-decreasing in the sampling rate);
* ``P-moments``: the sum and the expectation agree (E[X^k] = exp(k(k-1)/(2 sigma^2)), E[X] = 1);
* ``P-remove-dominates-add``: B_alpha = E_P[(Q/P)^alpha] <= A_alpha = E_Q[(P/Q)^alpha] for every real alpha > 1,
  q in (0, 1], sigma > 0 (P = (1-q) N(0,1) + q N(1/sigma,1), Q = N(0,1)): the add direction's Rényi divergence
  never exceeds the remove direction's, so the certified A_alpha bounds add/remove adjacency (every
  ``dpsgd/renyi-poisson`` certificate rests on this; Opacus and dp_accounting rely on the same statement).

Why this pair is the worst case of one step under add/remove (the argument the obligation completes). Neighbours
differ by one example whose clipped gradient v has |v| <= C. (i) The other examples' contribution to the noisy
sum is the same random variable under both datasets and independent of whether the example is sampled; the
Rényi moment (P, Q) -> E_Q[(P/Q)^alpha] is jointly convex, so mixing over that contribution cannot increase it
(either direction). (ii) Translating and rotating, the pair becomes one-dimensional with mu = |v|/(sigma C) <=
1/sigma. (iii) By ``P-remove-dominates-add`` the larger of the two directions is A_alpha(mu). (iv) A_alpha is
non-decreasing in mu for every real alpha >= 1: X_mu = exp(mu x - mu^2/2) grows in convex order with mu (for
mu' > mu, X_mu' has the law of X_mu Z, Z an independent lognormal with E[Z] = 1, and t -> (1 - q + q t)^alpha is
convex, so Jensen applies conditionally on X_mu); the sub-check ``(iv)`` is the Gaussian identity behind it.
Hence eps_RDP(alpha) = log A_alpha(1/sigma)/(alpha - 1) bounds every neighbouring pair, for integer orders (the
binomial sum, the chord) and fractional ones (the integral) alike.

The proof of ``P-remove-dominates-add`` (ours; each algebraic step is a sub-check of the obligation).
Write L = P/Q = M(X) with M(t) = 1 - q + q t and X = exp(mu x - mu^2/2), mu = 1/sigma, x ~ N(0, 1).
(1) Symmetry: E[X h(1/X)] = E[h(X)] for every h with E|h(X)| finite, because phi(x) X(x) = phi(x - mu),
    1/X(x) = X(mu - x) and phi is even (substitute t = mu - x). Here h = f o M (below) is integrable:
    |f(M)| <= (1 + q X)^alpha + M^(1-alpha), with M >= 1 - q for q < 1 and M = X for q = 1, and the lognormal X
    has all moments (positive and negative); the same bound makes E|X h(1/X)| finite.
(2) B_alpha = E_Q[L^(1-alpha)] (P (Q/P)^alpha = Q (P/Q)^(1-alpha)), so A - B = E[f(M(X))] with
    f(t) = t^alpha - t^(1-alpha); by (1) with h = f o M, 2 (A - B) = E[S(X)], S(y) = f(M(y)) + y f(M(1/y)).
(3) S(1/y) = S(y)/y, so it suffices that S(y) >= 0 for y >= 1.
(4) For y >= 1 put s = q (y-1)/y in [0, 1), w = 1 - s in (0, 1]: M(y) = 1 + y s and M(1/y) = 1 - s, so
    S(y) = F(y) with F(Y) = f(1 + Y s) - Y ((1-s)^(1-alpha) - (1-s)^alpha). F is convex on Y >= 0 (f''(t) =
    alpha(alpha-1) t^(-alpha-1) (t^(2alpha-1) - 1) >= 0 for t >= 1), F(1/w) = 0 and F'(1/w) = w^(1-alpha) g(w) with
    g(w) = alpha (1-w)(1 + w^(2alpha-1)) - (1 - w^(2alpha)); and y >= 1/w because y(1-s) - 1 = (1-q)(y-1) >= 0.
    Hence S(y) = F(y) >= F(1/w) + F'(1/w)(y - 1/w) >= 0 once g >= 0 on (0, 1].
(5) g >= 0 on (0, 1]: g(1) = 0 and g' = alpha k with k(w) = (n-1) w^(n-2) - (n-2) w^(n-1) - 1, n = 2 alpha; k(1) = 0
    and k' = (n-1)(n-2) w^(n-3) (1-w) >= 0 on (0, 1] (n >= 2), so k <= 0, g is non-increasing and g >= g(1) = 0.
So A_alpha >= B_alpha, i.e. D_alpha(P||Q) >= D_alpha(Q||P) for every alpha > 1, integer or fractional (the
chord and the integral of :mod:`certify.poisson.rdp` bound the remove direction, hence both). At alpha = 1 both
moments are 1; the KL divergences compare by the limit alpha -> 1+ (every D_alpha here is finite). Written down by
hand, not in code: the tangent-line step of (4), the signs s in [0, 1) and (1 - q)(y - 1) >= 0, "k <= 0, so g is
non-increasing", and the symmetry (1) as an integral (its pointwise ingredients are sub-checks). Reviewed
independently (session 19), with 1100 50-digit quadratures of A and B and 200,000 samples of S >= 0.
"""

from __future__ import annotations

import sympy as sp

from ..proofs.core import combine, obligation
from ..proofs.tools import equal, phi_sym, positive, unit_power

PAPER = "mtz-poisson"

sigma = sp.Symbol("sigma", positive=True)
j = sp.Symbol("j", integer=True, nonnegative=True)
x = sp.Symbol("x", real=True)
q = sp.Symbol("q", positive=True)
y = sp.Symbol("y", real=True)
a = sp.Symbol("a", nonnegative=True)  # alpha = 1 + a >= 1
z = sp.Symbol("z", positive=True)  # X = z > 0 (X is an exponential)
r = sp.Symbol("r", nonnegative=True)  # q = 1/(1 + r) in (0, 1]


@obligation(
    PAPER,
    "P-sigma-monotone",
    "MTZ19 Sec. 3 (binomial sum); used by certify calibrate-dpsgd",
    "d/dsigma exp(k(k-1)/(2 sigma^2)) = -k(k-1)/sigma^3 exp(k(k-1)/(2 sigma^2)) <= 0 for every integer "
    "k >= 0 (k = 0, 1: constant; k = j + 1: k(k-1) = j(j+1) >= 0): every term of A_alpha, hence A_alpha, "
    "log(A_alpha)/(alpha - 1) and eps(alpha; sigma), is non-increasing in sigma",
)
def sigma_monotone(claimed=lambda kk: -kk * (kk - 1) / sigma**3 * sp.exp(kk * (kk - 1) / (2 * sigma**2))) -> object:
    k = j + 1
    term = sp.exp(k * (k - 1) / (2 * sigma**2))
    d = sp.diff(term, sigma)
    return combine(
        [
            ("derivative", equal(d, claimed(k))),
            ("sign (k >= 1)", positive(-claimed(k), strict=False)),
            ("k = 0 term is constant", equal(sp.diff(sp.exp(sp.Integer(0) / (2 * sigma**2)), sigma), 0)),
        ]
    )


@obligation(
    PAPER,
    "P-q-monotone",
    "MTZ19 Sec. 3 (A_alpha as an expectation)",
    "d^2/dq^2 (1 + q(X-1))^alpha = alpha(alpha-1)(X-1)^2 (1 + q(X-1))^(alpha-2) >= 0 for alpha >= 1, X > 0, "
    "q in (0, 1] (1 + q(X-1) = (1-q) + qX > 0), so A_alpha = E[(1 + q(X-1))^alpha] is convex in q; its "
    "slope at q = 0 is alpha E[X - 1] = 0; hence A_alpha is non-decreasing on [0, 1]",
)
def q_monotone() -> object:
    al = 1 + a
    f = (1 + q * y) ** al
    second = sp.diff(f, q, 2)
    qq = 1 / (1 + r)  # q in (0, 1]
    base = 1 + qq * (z - 1)  # = (r + z)/(1 + r) >= 0
    return combine(
        [
            ("second derivative", equal(second, al * (al - 1) * y**2 * (1 + q * y) ** (al - 2))),
            ("1 + q(X-1) > 0", positive(sp.together(base))),
            ("alpha(alpha-1)(X-1)^2 (1+q(X-1))^(alpha-2) >= 0", positive(al * (al - 1) * (z - 1) ** 2 * sp.together(base) ** (al - 2), strict=False)),
            ("slope at q = 0 is alpha (X - 1)", equal(sp.diff(f, q).subs(q, 0), al * y)),
            ("E[X] = 1", equal(_expect(sp.exp(x / sigma - 1 / (2 * sigma**2))), 1)),
        ]
    )


def _expect(g):
    """E[g(x)], x ~ N(0, 1), by sympy integration."""
    return sp.simplify(sp.integrate(g * sp.exp(-(x**2) / 2) / sp.sqrt(2 * sp.pi), (x, -sp.oo, sp.oo)))


@obligation(
    PAPER,
    "P-moments",
    "MTZ19 Sec. 3 (integer alpha)",
    "E[X^k] = exp(k(k-1)/(2 sigma^2)) for X = exp(x/sigma - 1/(2 sigma^2)), x ~ N(0,1); so the binomial "
    "expansion of E[(1 + q(X-1))^alpha] = E[((1-q) + qX)^alpha] is the sum evaluated by certify.poisson.rdp",
)
def moments(claimed=lambda kk: sp.exp(kk * (kk - 1) / (2 * sigma**2))) -> object:
    kk = sp.Symbol("k", positive=True)
    return equal(_expect(sp.exp(kk * (x / sigma - 1 / (2 * sigma**2)))), claimed(kk))


def _f(t, al):
    """f(t) = t^alpha - t^(1-alpha): A - B = E[f(M(X))] (module docstring, step (2))."""
    return t**al - t ** (1 - al)


def _convex_order_identity(mu):
    """(iv) of the worst-case argument: mu x1 + nu x2 and sqrt(mu^2 + nu^2) x have the same moment generating function,
    so X_mu' = X_mu Z in law (mu'^2 = mu^2 + nu^2) with Z = exp(nu x2 - nu^2/2), E[Z] = 1."""
    nu, t = sp.symbols("nu t", positive=True)
    lhs = _expect(sp.exp(t * mu * x)) * _expect(sp.exp(t * nu * x))
    return equal(lhs, _expect(sp.exp(t * sp.sqrt(mu**2 + nu**2) * x)))


@obligation(
    PAPER,
    "P-remove-dominates-add",
    "our proof (module docstring); the statement MTZ19 Sec. 3 makes for the SGM",
    "E_P[(Q/P)^alpha] <= E_Q[(P/Q)^alpha] for every real alpha > 1, q in (0, 1], sigma > 0 (P = (1-q) N(0,1) + "
    "q N(1/sigma,1), Q = N(0,1)): the add direction's Rényi divergence never exceeds the remove direction's, so "
    "the binomial sum bounds add/remove adjacency. Steps: the Gaussian shift symmetry E[X h(1/X)] = E[h(X)]; "
    "2(A - B) = E[S(X)] with S(1/y) = S(y)/y; for y >= 1, S(y) = F(y) with F convex, F(1/w) = 0, "
    "F'(1/w) = w^(1-alpha) g(w) >= 0 (g(1) = 0, g' = alpha k, k(1) = 0, k' >= 0 on (0, 1])",
)
def remove_dominates_add(claimed_slope=None) -> object:
    al = 1 + a  # alpha >= 1
    qq, yy, w, t, u, mu = sp.symbols("q y w t u mu", positive=True)
    P_, Q_, Y = sp.symbols("P Q Y", positive=True)

    def M(v):
        return 1 - qq + qq * v

    def S(v):
        return _f(M(v), al) + v * _f(M(1 / v), al)

    def X(v):
        return sp.exp(mu * v - mu**2 / 2)

    s = qq * (yy - 1) / yy
    sw = 1 - w  # s as a function of w = 1 - s
    F = _f(1 + Y * sw, al) - Y * ((1 - sw) ** (1 - al) - (1 - sw) ** al)
    n = 2 * al
    g = al * (1 - w) * (1 + w ** (2 * al - 1)) - (1 - w ** (2 * al))
    k = (n - 1) * w ** (n - 2) - (n - 2) * w ** (n - 1) - 1
    slope = w ** (1 - al) * g if claimed_slope is None else claimed_slope(w, al)
    return combine(
        [
            ("(1) phi(x) X(x) = phi(x - mu)", equal(phi_sym(x) * X(x), phi_sym(x - mu))),
            ("(1) X(mu - x) X(x) = 1", equal(X(mu - x) * X(x), 1)),
            ("(1) phi is even", equal(phi_sym(-x), phi_sym(x))),
            ("(2) P (Q/P)^alpha = Q (P/Q)^(1-alpha)", equal(P_ * (Q_ / P_) ** al, Q_ * (P_ / Q_) ** (1 - al))),
            ("(3) S(1/y) = S(y)/y", equal(S(1 / yy), S(yy) / yy)),
            ("(4) M(y) = 1 + y s", equal(M(yy), 1 + yy * s)),
            ("(4) M(1/y) = 1 - s", equal(M(1 / yy), 1 - s)),
            ("(4) y(1 - s) - 1 = (1 - q)(y - 1)", equal(yy * (1 - s) - 1, (1 - qq) * (yy - 1))),
            ("(4) S(y) = F(y) at w = 1 - s", equal(S(yy), F.subs(w, 1 - s).subs(Y, yy))),
            (
                "(4) f''(t) = alpha(alpha-1) t^(-alpha-1) (t^(2alpha-1) - 1)",
                equal(sp.diff(_f(t, al), t, 2), al * (al - 1) * t ** (-al - 1) * (t ** (2 * al - 1) - 1)),
            ),
            ("(4) t^(2alpha-1) >= 1 for t = 1 + u >= 1", unit_power(1 / (1 + u), 2 * al - 1, "(1+u)^-(2alpha-1) <= 1")),
            ("(4) F(1/w) = 0", equal(F.subs(Y, 1 / w), 0)),
            ("(4) F'(1/w) = w^(1-alpha) g(w)", equal(sp.diff(F, Y).subs(Y, 1 / w), slope)),
            ("(5) g(1) = 0", equal(g.subs(w, 1), 0)),
            ("(5) g' = alpha k", equal(sp.diff(g, w), al * k)),
            ("(5) k(1) = 0", equal(k.subs(w, 1), 0)),
            ("(5) k' = (n-1)(n-2) w^(n-3) (1-w)", equal(sp.diff(k, w), (n - 1) * (n - 2) * w ** (n - 3) * (1 - w))),
            ("(iv) E[exp(t(mu x1 + nu x2))] = E[exp(t sqrt(mu^2 + nu^2) x)] (x1, x2, x ~ N(0,1))", _convex_order_identity(mu)),
            ("(5) k' >= 0 on (0, 1] (w = 1/(1+r))", positive(((n - 1) * (n - 2) * w ** (n - 3) * (1 - w)).subs(w, 1 / (1 + r)), strict=False)),
        ]
    )
