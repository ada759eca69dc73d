"""Proof obligations of the PLD curves of dp_accounting's events (:mod:`certify.events.pld_pairs`; paper key ``events``).

Each checks a displayed identity of that module with sympy; registered with the events paper's obligations (imported
by :mod:`certify.events.proofs`).
"""

from __future__ import annotations

import sympy as sp

from ..proofs.core import Outcome, combine, obligation
from ..proofs.tools import Phi_sym, equal, phi_sym, positive

PAPER = "events"


@obligation(
    PAPER,
    "E-pld-gaussian",
    "Balle-Wang 2018 Thm 8 (certify.events.pld_pairs, GaussianDpEvent as MixtureCurve at q = 1)",
    "at q = 1 the remove curve q Phibar(x1 - Delta) - (gamma - 1 + q) Phibar(x1), x1 = (log((gamma-1+q)/q) + Delta^2/2)/Delta, "
    "is Phi(-eps/Delta + Delta/2) - e^eps Phi(-eps/Delta - Delta/2) at gamma = e^eps, with slope -Phi(-eps/Delta - Delta/2)",
)
def pld_gaussian(claimed=None) -> Outcome:
    eps = sp.Symbol("epsilon", real=True)
    D = sp.Symbol("Delta", positive=True)
    g, q = sp.exp(eps), sp.Integer(1)
    x1 = (sp.log((g - 1 + q) / q) + D**2 / 2) / D
    curve = q * (1 - Phi_sym(x1 - D)) - (g - 1 + q) * (1 - Phi_sym(x1))
    closed = Phi_sym(-eps / D + D / 2) - sp.exp(eps) * Phi_sym(-eps / D - D / 2) if claimed is None else claimed
    slope = sp.diff(curve, eps) / sp.diff(g, eps)
    return combine(
        [
            ("value", equal(sp.expand_log(curve, force=True), closed)),
            ("slope", equal(sp.simplify(slope), -Phi_sym(-eps / D - D / 2))),
        ]
    )


@obligation(
    PAPER,
    "E-pld-laplace",
    "Laplace privacy profile (certify.events.pld_pairs.LaplaceCurve)",
    "for p = Lap(0, b), q = Lap(1, b), eps0 = 1/b and gamma = e^l with -eps0 < l < eps0, p > gamma q exactly on "
    "x < x_l = (1 - b l)/2 in (0, 1), and int_(x < x_l) (p - gamma q) dx = 1 - sqrt(gamma) e^(-eps0/2); the slope "
    "-Q(x < x_l) = -e^(-eps0/2)/(2 sqrt(gamma)); at gamma = e^(+-eps0) the value is 0 and 1 - e^(-eps0) = 1 - gamma",
)
def pld_laplace(claimed=None) -> Outcome:
    b = sp.Symbol("b", positive=True)
    l, x = sp.symbols("l x", real=True)
    g = sp.exp(l)
    xl = (1 - b * l) / 2
    P = sp.integrate(sp.exp(x / b) / (2 * b), (x, -sp.oo, 0)) + sp.integrate(sp.exp(-x / b) / (2 * b), (x, 0, xl))
    Q = sp.integrate(sp.exp((x - 1) / b) / (2 * b), (x, -sp.oo, xl))  # |x - 1| = 1 - x for x < x_l < 1
    value = 1 - sp.sqrt(g) * sp.exp(-1 / (2 * b)) if claimed is None else claimed
    ratio_at_xl = sp.exp((sp.Abs(xl - 1) - sp.Abs(xl)) / b)  # the likelihood ratio at the crossing: gamma
    return combine(
        [
            ("crossing: p/q = gamma at x_l (0 < x_l < 1)", equal(sp.simplify(((1 - xl) - xl) / b), l)),
            ("value", equal(sp.simplify(P - g * Q), value)),
            ("slope -Q", equal(sp.simplify(-Q), -sp.exp(-1 / (2 * b)) / (2 * sp.sqrt(g)))),
            ("zero at l = eps0", equal(value.subs(l, 1 / b), 0)),
            ("1 - gamma at l = -eps0", equal(sp.simplify(value.subs(l, -1 / b)), 1 - sp.exp(-1 / b))),
            ("ratio is a positive number", positive(ratio_at_xl.subs({l: 0}))),
        ]
    )


@obligation(
    PAPER,
    "E-pld-discrete-laplace",
    "geometric series (certify.events.pld_pairs._dlap_curve)",
    "for DLap(t) with mass c r^|x| (r = e^-t, c = (1-r)/(1+r)): P(x <= 0) = 1/(1+r), P(x <= -D) = r^D/(1+r), and the "
    "masses of the pair (D + 1 outputs) sum to 1 on each side (D = 3 checked: 1/(1+r) + r^3/(1+r) + c (r + r^2) = 1)",
)
def pld_discrete_laplace(claimed=None) -> Outcome:
    r = sp.Symbol("r", positive=True)
    c = (1 - r) / (1 + r)
    head = c / (1 - r)  # sum_(n >= 0) c r^n, a geometric series (0 < r < 1)
    D = 3
    tail = sp.simplify(c * r**D / (1 - r))
    total = 1 / (1 + r) + r**D / (1 + r) + sum(c * r**k for k in range(1, D))
    return combine(
        [
            ("P(x <= 0) = 1/(1+r)", equal(sp.simplify(head), 1 / (1 + r) if claimed is None else claimed)),
            ("P(x <= -D) = r^D/(1+r)", equal(tail, r**D / (1 + r))),
            ("masses sum to 1", equal(sp.simplify(total), 1)),
        ]
    )


def positive_w(A, B, e, d) -> Outcome:
    w = sp.Symbol("w", positive=True)
    return positive(sp.simplify(((A - B) * (1 + sp.exp(e)) / (1 - d)).subs(e, sp.log(1 + w))))


@obligation(
    PAPER,
    "E-pld-kov",
    "Kairouz-Oh-Viswanath 2015 Thm 2.1 (certify.events.pld_pairs._kov_curve)",
    "the pair P = (delta, (1-delta) e^eps/(1+e^eps), (1-delta)/(1+e^eps), 0), Q its reverse: masses 1, the two finite "
    "losses +-eps, and its curve at gamma = e^eps' (0 <= eps' < eps) is delta + (1-delta)(e^eps - e^eps')/(1+e^eps)",
)
def pld_kov(claimed=None) -> Outcome:
    e, d = sp.symbols("epsilon delta", positive=True)
    ep = sp.Symbol("epsilon_prime", nonnegative=True)
    A, B = (1 - d) * sp.exp(e) / (1 + sp.exp(e)), (1 - d) / (1 + sp.exp(e))
    g = sp.exp(ep)
    curve = d + (A - g * B)  # only the first finite atom has p > gamma q when eps' < eps (B - gamma A < 0)
    want = d + (1 - d) * (sp.exp(e) - sp.exp(ep)) / (1 + sp.exp(e)) if claimed is None else claimed
    return combine(
        [
            ("P mass 1", equal(d + A + B, 1)),
            ("loss of the first atom", equal(sp.simplify(sp.log(A / B)), e)),
            ("curve", equal(sp.simplify(curve), want)),
            ("the second atom is off (B - gamma A < 0): (A - B)(1+e^eps)/(1-delta) = e^eps - 1 = w > 0 (e^eps = 1 + w)", positive_w(A, B, e, d)),
        ]
    )


@obligation(
    PAPER,
    "E-pld-mog-ratio",
    "Gaussian likelihood ratio (certify.events.pld_pairs.GaussianMixtureCurve)",
    "phi(x - d) / phi(x) = e^(d x - d^2/2), so the ratio of M = p0 N(0,1) + sum_i p_i N(d_i,1) to N(0,1) is "
    "p0 + S(x), S(x) = sum_i p_i e^(d_i x - d_i^2/2), and S'(x) = sum_i p_i d_i e^(d_i x - d_i^2/2) > 0 for d_i, p_i > 0 "
    "(two components shown; each term alike)",
)
def pld_mog_ratio(claimed=None) -> Outcome:
    x = sp.Symbol("x", real=True)
    d1, d2, p1, p2 = sp.symbols("d1 d2 p1 p2", positive=True)
    want = sp.exp(d1 * x - d1**2 / 2) if claimed is None else claimed
    S = p1 * sp.exp(d1 * x - d1**2 / 2) + p2 * sp.exp(d2 * x - d2**2 / 2)
    return combine(
        [
            ("phi(x - d) / phi(x)", equal(sp.simplify(phi_sym(x - d1) / phi_sym(x)), want)),
            ("S' > 0", positive(sp.diff(S, x))),
        ]
    )


@obligation(
    PAPER,
    "E-pld-mog-curve",
    "Neyman-Pearson on a half-line (certify.events.pld_pairs.GaussianMixtureCurve)",
    "remove (P = M, Q = N(0,1)): h(t) = P(x > t) - gamma Q(x > t) = sum_i p_i Phibar(t - d_i) - (gamma - p0) Phibar(t) "
    "has h'(t) = phi(t) (gamma - p0 - S(t)), so h is largest at the root S(x*) = gamma - p0 (S increasing), with "
    "slope dh(x*)/dgamma = -Phibar(x*); add (P = N(0,1), Q = M): h(t) = Phi(t) - gamma (p0 Phi(t) + sum_i p_i Phi(t - d_i)) "
    "has h'(t) = phi(t) (1 - gamma p0 - gamma S(t)), largest at S(x*) = (1 - gamma p0)/gamma, slope -(p0 Phi(x*) + "
    "sum_i p_i Phi(x* - d_i)) (two components shown)",
)
def pld_mog_curve(claimed=None) -> Outcome:
    t = sp.Symbol("t", real=True)
    d1, d2, p1, p2, p0, g = sp.symbols("d1 d2 p1 p2 p0 gamma", positive=True)
    S = p1 * sp.exp(d1 * t - d1**2 / 2) + p2 * sp.exp(d2 * t - d2**2 / 2)
    Pbar = p0 * (1 - Phi_sym(t)) + p1 * (1 - Phi_sym(t - d1)) + p2 * (1 - Phi_sym(t - d2))  # M(x > t)
    h_rem = Pbar - g * (1 - Phi_sym(t))
    curve_rem = p1 * (1 - Phi_sym(t - d1)) + p2 * (1 - Phi_sym(t - d2)) - (g - p0) * (1 - Phi_sym(t))
    h_add = Phi_sym(t) - g * (p0 * Phi_sym(t) + p1 * Phi_sym(t - d1) + p2 * Phi_sym(t - d2))
    curve_add = (1 - g * p0) * Phi_sym(t) - g * (p1 * Phi_sym(t - d1) + p2 * Phi_sym(t - d2))
    want_rem = phi_sym(t) * (g - p0 - S) if claimed is None else claimed
    return combine(
        [
            ("remove: the curve's form", equal(sp.expand(h_rem - curve_rem), 0)),
            ("remove: h'(t)", equal(sp.simplify(sp.diff(h_rem, t) - want_rem), 0)),
            ("remove: dh/dgamma", equal(sp.diff(h_rem, g), -(1 - Phi_sym(t)))),
            ("add: the curve's form", equal(sp.expand(h_add - curve_add), 0)),
            ("add: h'(t)", equal(sp.simplify(sp.diff(h_add, t) - phi_sym(t) * (1 - g * p0 - g * S)), 0)),
            ("add: dh/dgamma", equal(sp.diff(h_add, g), -(p0 * Phi_sym(t) + p1 * Phi_sym(t - d1) + p2 * Phi_sym(t - d2)))),
        ]
    )
