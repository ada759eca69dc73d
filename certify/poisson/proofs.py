"""Proof obligations behind the certified calibration (paper key ``mtz-poisson`` of ``certify proofs``).

The calibration of :mod:`certify.poisson.calibrate` relies on the monotonicity of the Rényi bound of the
Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019, Sec. 3.3 Case I), with X = exp(x/sigma - 1/(2 sigma^2)),
x ~ N(0, 1):

    A_alpha(q, sigma) = E[(1 + q (X - 1))^alpha] = sum_k C(alpha,k) (1-q)^(alpha-k) q^k exp(k(k-1)/(2 sigma^2)).

* ``P-sigma-monotone``: each term decreases in sigma, so eps(alpha; sigma) and its minimum over a fixed order
  grid are non-increasing in sigma (the calibration's bracket relies on this);
* ``P-q-monotone``: A_alpha is convex in q with zero slope at q = 0, so it is non-decreasing on [0, 1] (the
  bound is non-decreasing in the sampling rate);
* ``P-moments``: the sum and the expectation agree (E[X^k] = exp(k(k-1)/(2 sigma^2)), E[X] = 1).
"""

from __future__ import annotations

import sympy as sp

from ..proofs.core import combine, obligation
from ..proofs.tools import equal, positive

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
