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


@obligation(
    PAPER,
    "E-pld-labelled-mixture",
    "labelled mixture of pairs (certify.pld.curves.WeightedCurve; TruncatedSubsampledGaussianDpEvent)",
    "for P = sum_i w_i (i, P_i), Q = sum_i w_i (i, Q_i) (w_i > 0) the optimal set of H_gamma is chosen label by label, and on "
    "finitely many outputs H_gamma(P || Q) = sum_(i,y) (w_i P_i(y) - gamma w_i Q_i(y))_+ = sum_i w_i H_gamma(P_i || Q_i) "
    "((w a)_+ = w (a)_+ for w > 0: both signs of a), its slope sum_i w_i (-Q_i(A_i)); and the weights "
    "P(Bin(n, q) >= B) + P(Bin(n, q) < B) = sum_k C(n, k) q^k (1 - q)^(n - k) = 1 (n = 6), the ratio "
    "C(n, k + 1) / C(n, k) = (n - k)/(k + 1) of the terms summed by BinomialTail",
)
def pld_labelled_mixture(claimed=None) -> Outcome:
    w, u, g = sp.symbols("w u gamma", positive=True)
    w1, w2 = sp.symbols("w1 w2", positive=True)
    p = sp.symbols("p1:5", positive=True)
    qq = sp.symbols("q1:5", positive=True)

    def hinge(a):
        return sp.Max(a, 0)

    # two labels with two outputs each, in the region where output 1 of each label is in the set and output 2 is not
    # (any other region alike: the sum splits per label before the hinge is taken)
    joint = sum(hinge(wi * (p[j] - g * qq[j])) for wi, j in ((w1, 0), (w1, 1), (w2, 2), (w2, 3)))
    per_label = w1 * (hinge(p[0] - g * qq[0]) + hinge(p[1] - g * qq[1])) + w2 * (hinge(p[2] - g * qq[2]) + hinge(p[3] - g * qq[3]))
    linear = w1 * (p[0] - g * qq[0]) + w2 * (p[2] - g * qq[2])  # the optimal sets A_1 = {1}, A_2 = {1}
    region = {p[0]: g * qq[0] + u, p[1]: g * qq[1] - u, p[2]: g * qq[2] + 2 * u, p[3]: g * qq[3] - 3 * u}
    n, k, q = sp.Symbol("n", positive=True, integer=True), sp.Symbol("k", nonnegative=True, integer=True), sp.Symbol("q", positive=True)
    total = sum(sp.binomial(6, j) * q**j * (1 - q) ** (6 - j) for j in range(7))
    ratio = (n - k) / (k + 1) if claimed is None else claimed
    return combine(
        [
            ("(w a)_+ = w (a)_+, a = u > 0", equal(sp.simplify(hinge(w * u) - w * hinge(u)), 0)),
            ("(w a)_+ = w (a)_+, a = -u < 0", equal(sp.simplify(hinge(-w * u) - w * hinge(-u)), 0)),
            ("joint hinge sum = weighted sum of the labels' (one region)", equal(sp.simplify((joint - per_label).subs(region)), 0)),
            ("on the region, the weighted sum is linear in gamma (P fixed)", equal(sp.simplify((per_label - linear).subs(region)), 0)),
            ("its slope -sum_i w_i Q_i(A_i)", equal(sp.diff(linear, g), -(w1 * qq[0] + w2 * qq[2]))),
            ("binomial weights sum to 1 (n = 6)", equal(sp.expand(total), 1)),
            ("C(n, k + 1) / C(n, k)", equal(sp.combsimp(sp.binomial(n, k + 1) / sp.binomial(n, k)), ratio)),
        ]
    )


@obligation(
    PAPER,
    "E-pld-tsg-subset",
    "truncation re-decomposed (certify.events.mechanisms.truncated_subsampled_gaussian, step 3)",
    "a uniform B-subset of k + 1 records holds a given one with probability C(k, B - 1)/C(k + 1, B) = B/(k + 1); a "
    "uniform B-subset of k records is t' + {y}, t' a uniform (B - 1)-subset and y uniform outside it: each B-subset "
    "arises from B pairs, B / (C(k, B - 1)(k - B + 1)) = 1/C(k, B) (symbolic, and enumerated for k <= 7)",
)
def pld_tsg_subset(claimed=None) -> Outcome:
    from itertools import combinations

    from ..proofs.core import FALSE, PROVED

    k, B = sp.symbols("k B", positive=True, integer=True)
    hold = sp.combsimp(sp.binomial(k, B - 1) / sp.binomial(k + 1, B))
    want = B / (k + 1) if claimed is None else claimed
    pairs = sp.combsimp(B / (sp.binomial(k, B - 1) * (k - B + 1)) * sp.binomial(k, B))
    bad = []
    for kk in range(1, 8):
        for bb in range(1, kk + 1):
            counts: dict = {}
            for t in combinations(range(kk), bb - 1):
                for y in range(kk):
                    if y not in t:
                        s = tuple(sorted(t + (y,)))
                        counts[s] = counts.get(s, 0) + 1
            if len(counts) != sp.binomial(kk, bb) or set(counts.values()) != {bb}:
                bad.append((kk, bb))
    enumerated = Outcome(PROVED, "exhaustive enumeration k <= 7", "") if not bad else Outcome(FALSE, "enumeration", f"fails at {bad[0]}")
    return combine(
        [
            ("P(x in T(s + x)) = B/(k + 1)", equal(hold, want)),
            ("each B-subset from B pairs: probability 1/C(k, B)", equal(pairs, 1)),
            ("every B-subset arises from exactly B pairs (t', y)", enumerated),
        ]
    )


@obligation(
    PAPER,
    "E-pld-tsg-decomposition",
    "truncation as a subsampled pair (certify.events.mechanisms.truncated_subsampled_gaussian, steps 3-4)",
    "with r = q B/(k + 1): (1 - q) P + q (B/(k + 1)) X + q (1 - B/(k + 1)) P = (1 - r) P + r X; and the pair at a rate "
    "r <= q is the mixture (r/q) ((1 - q) P + q X, P) + (1 - r/q) (P, P): (r/q)((1 - q) P + q X) + (1 - r/q) P = (1 - r) P + r X",
)
def pld_tsg_decomposition(claimed=None) -> Outcome:
    P, X, q, k, B, r = sp.symbols("P X q k B r", positive=True)
    rr = q * B / (k + 1)
    lhs = (1 - q) * P + q * (B / (k + 1)) * X + q * (1 - B / (k + 1)) * P
    want = (1 - rr) * P + rr * X if claimed is None else claimed
    return combine(
        [
            ("Q_s = (1 - r) P_s + r X", equal(sp.simplify(lhs - want), 0)),
            (
                "rate r as a mixture of rate q and the identical pair",
                equal(sp.expand((r / q) * ((1 - q) * P + q * X) + (1 - r / q) * P), sp.expand((1 - r) * P + r * X)),
            ),
        ]
    )


@obligation(
    PAPER,
    "E-pld-gaussian-fold",
    "composition of Gaussian pairs (certify.pld.ledger.fold_gaussians; Dong-Roth-Su 2019 Cor. 3.3, Balle-Wang 2018)",
    "c_1 copies of (N(d_1, 1), N(0, 1)) and c_2 of (N(d_2, 1), N(0, 1)) compose to the pair N(d, I) vs N(0, I) whose loss "
    "is sum_k (d_k x_k - d_k^2/2); one factor's loss d x - d^2/2 under x ~ N(d, 1) has the moment generating function "
    "exp((t + t^2) d^2/2) (the exponent t (d x - d^2/2) - (x - d)^2/2 is -(x - d - t d)^2/2 + (t + t^2) d^2/2, and the "
    "Gaussian integral is 1), so the composed loss has exp((t + t^2) M^2/2) with M^2 = c_1 d_1^2 + c_2 d_2^2: the "
    "generating function of the loss M y - M^2/2 of (N(M, 1), N(0, 1)) under y ~ N(M, 1), the same law, the same curve",
)
def pld_gaussian_fold(claimed=None) -> Outcome:
    x, x1, x2, t = sp.symbols("x x1 x2 t", real=True)
    d, d1, d2 = sp.symbols("d d1 d2", positive=True)
    c1, c2 = sp.symbols("c1 c2", positive=True, integer=True)
    loss2 = sp.log(phi_sym(x1 - d1) * phi_sym(x2 - d2) / (phi_sym(x1) * phi_sym(x2)))
    square = t * (d * x - d**2 / 2) - (x - d) ** 2 / 2 - (-((x - d - t * d) ** 2) / 2 + (t + t**2) * d**2 / 2)
    gauss = sp.integrate(sp.exp(-((x - d - t * d) ** 2) / 2), (x, -sp.oo, sp.oo)) / sp.sqrt(2 * sp.pi)

    def mgf(dd):  # E[exp(t (dd y - dd^2/2))], y ~ N(dd, 1)
        return sp.exp((t + t**2) * dd**2 / 2)

    M2 = c1 * d1**2 + c2 * d2**2 if claimed is None else claimed
    composed = mgf(d1) ** c1 * mgf(d2) ** c2  # independent factors: the product of their generating functions
    return combine(
        [
            ("the product pair's loss", equal(sp.expand(sp.expand_log(loss2, force=True)), sp.expand(d1 * x1 - d1**2 / 2 + d2 * x2 - d2**2 / 2))),
            ("completing the square", equal(sp.expand(square), 0)),
            ("the Gaussian integral", equal(sp.simplify(gauss), 1)),
            ("generating functions: composed = one Gaussian of M^2", equal(sp.powsimp(composed, force=True), mgf(sp.sqrt(M2)))),
        ]
    )
