"""Proof obligations of the certified PLD accountant (``certify/pld/``).

The checkable algebra behind the accountant's soundness argument:

* the one-step slopes used by the tangent (optimistic) discretisation: f'(gamma) = -Phibar(x1) (remove)
  and f'(gamma) = -[(1-q) Phi(x2) + q Phi(x2 - Delta)] (add), by differentiating the closed forms along the
  threshold parametrisation gamma = 1 - q + q e^(Delta x - Delta^2/2) (resp. its add analogue);
* the product identity behind "domination of curves composes": (p1 p2 - gamma q1 q2)_+ = p2 (p1 - gamma
  e^(-L2) q1)_+ with e^(-L2) = q2/p2 > 0;
* the +inf mass of a product: (a_inf + A)(b_inf + B) - A B = a_inf B + b_inf A + a_inf b_inf;
* monotonicity of the read-off term m (1 - e^(eps - l)) (where positive) in m and in l;
* a hinge m (1 - gamma e^(-l))_+ changes the slope by m e^(-l) at gamma = e^l (masses = gamma_j times the
  slope change, as the discretisations compute them).
What the checks in balls prove at run time (g_up >= f, g_low <= tangents at every grid point) is recorded
in each certificate, not here.
"""

from __future__ import annotations

import sympy as sp

from ..proofs.core import combine, obligation
from ..proofs.tools import Phi_sym, equal, positive

PAPER = "pld"

x = sp.Symbol("x", real=True)
q = sp.Symbol("q", positive=True)
D = sp.Symbol("Delta", positive=True)


@obligation(
    PAPER,
    "PLD-slope",
    "certify/pld/pairs.py, value_and_slope",
    "d/dgamma of the closed-form hockey-stick curves equals -Q(S_gamma): -Phibar(x1) (remove), -[(1-q) Phi(x2) + q Phi(x2 - Delta)] (add)",
)
def slope(remove=lambda x_: -(1 - Phi_sym(x_)), add=lambda x_: -((1 - q) * Phi_sym(x_) + q * Phi_sym(x_ - D))):
    z = sp.exp(D * x - D**2 / 2)
    # remove: gamma(x) = 1 - q + q z (x = x1 is the threshold); f = q Phibar(x - D) - (gamma - 1 + q) Phibar(x)
    g_r = 1 - q + q * z
    f_r = q * (1 - Phi_sym(x - D)) - (g_r - 1 + q) * (1 - Phi_sym(x))
    d_r = sp.diff(f_r, x) / sp.diff(g_r, x)
    # add: gamma(x) = 1/(1 - q + q z); f = (1 - gamma (1-q)) Phi(x) - gamma q Phi(x - D)
    g_a = 1 / (1 - q + q * z)
    f_a = (1 - g_a * (1 - q)) * Phi_sym(x) - g_a * q * Phi_sym(x - D)
    d_a = sp.diff(f_a, x) / sp.diff(g_a, x)
    return combine([("remove", equal(sp.simplify(d_r), remove(x), what="remove slope")), ("add", equal(sp.simplify(d_a), add(x), what="add slope"))])


@obligation(
    PAPER,
    "PLD-product",
    "certify/pld/discretise.py, module docstring",
    "(p1 p2 - gamma q1 q2)_+ = p2 (p1 - gamma e^(-L2) q1)_+ for p2 > 0, e^(-L2) = q2/p2: so "
    "H_gamma(P1 x P2 || Q1 x Q2) = E_{y~P2}[H_{gamma e^(-L2(y))}(P1||Q1)] and curve domination composes",
)
def product(claimed=None):
    p1, p2, q1, q2, g = sp.symbols("p1 p2 q1 q2 gamma", positive=True)
    inner = p1 - g * (q2 / p2) * q1
    lhs = p1 * p2 - g * q1 * q2
    claimed = p2 * inner if claimed is None else claimed
    # (.)_+ commutes with multiplication by p2 > 0: the arguments agree and p2 > 0
    return combine([("arguments agree", equal(lhs, claimed)), ("p2 > 0", positive(p2))])


@obligation(
    PAPER,
    "PLD-inf-mass",
    "certify/pld/compose.py, multiply",
    "the +inf mass of A x B: (a_inf + |A|)(b_inf + |B|) - |A||B| = a_inf |B| + b_inf |A| + a_inf b_inf",
)
def inf_mass(claimed=None):
    a, b, A, B = sp.symbols("a_inf b_inf A B", nonnegative=True)
    claimed = a * B + b * A + a * b if claimed is None else claimed
    return equal((a + A) * (b + B) - A * B, claimed)


@obligation(
    PAPER,
    "PLD-readoff-monotone",
    "certify/pld/readoff.py; certify/pld/discretise.py 'Objects'",
    "where l > eps, the read-off term m (1 - e^(eps - l)) is non-decreasing in m and in l",
)
def readoff_monotone():
    m = sp.Symbol("m", positive=True)
    u = sp.Symbol("u", positive=True)  # u = l - eps > 0
    w = sp.Symbol("w", positive=True)  # w = e^u - 1 > 0, so 1 - e^(-u) = w / (1 + w)
    term = m * (1 - sp.exp(-u))
    return combine(
        [
            ("1 - e^(-u) = w/(1+w)", equal((1 - sp.exp(-u)).subs(u, sp.log(1 + w)), w / (1 + w))),
            ("d/dm", positive(sp.diff(m * w / (1 + w), m))),
            ("d/dl", positive(sp.diff(term, u))),
        ]
    )


@obligation(
    PAPER,
    "PLD-hinge",
    "certify/pld/discretise.py, _hull_masses",
    "a hinge m (1 - gamma e^(-l))_+ has slope -m e^(-l) left of gamma = e^l and 0 right of it: the mass "
    "at a kink gamma_j is gamma_j times the slope change",
)
def hinge():
    m, l, g = sp.symbols("m l gamma", positive=True)
    left = sp.diff(m * (1 - g * sp.exp(-l)), g)
    return equal(sp.exp(l) * (0 - left), m)


@obligation(
    PAPER,
    "PLD-swap",
    "certify/pld/readoff.py, Swapped / swapped_delta_at",
    "(q - g p)_+ = (q - g p) + g (p - q/g)_+ for g > 0, so for probability measures H_g(Q||P) = 1 - g + g H_(1/g)(P||Q); "
    "and the read-off expansion 1 - g + g G(1/g) = sum_(l_i <= -eps) m_i (e^(-l_i) - g) + g (M - 1) + (1 - W)",
)
def swap(claimed=None):
    p_, q_, g, s = sp.symbols("p q g s", positive=True)
    xx = q_ - g * p_
    # x_+ = x + (-x)_+ on both signs of x (s > 0): the identity with x = q - g p, -x = g (p - q/g)
    parts = [
        ("g (p - q/g) = -(q - g p)", equal(g * (p_ - q_ / g), -xx)),
        ("x_+ = x + (-x)_+ (x = s > 0)", equal(sp.Max(s, 0), s + sp.Max(-s, 0))),
        ("x_+ = x + (-x)_+ (x = -s < 0)", equal(sp.Max(-s, 0), -s + sp.Max(s, 0))),
        ("x_+ = x + (-x)_+ (x = 0)", equal(sp.Max(sp.Integer(0), 0), 0 + sp.Max(-sp.Integer(0), 0))),
    ]
    # integrated: int (q - g p) = Q(total) - g P(total) = 1 - g for probability measures
    Pm, Qm = sp.symbols("P_total Q_total", positive=True)
    parts.append(("integrated, masses 1 and 1", equal((Qm - g * Pm).subs({Pm: 1, Qm: 1}), 1 - g)))
    # the read-off expansion on a measure with two atoms at l <= -eps (head) and two above (tail), x_i = e^(-l_i)
    # (head: x_i >= g, tail: x_i < g; the tail terms of G(1/g) are m_i (1 - x_i / g)), m_inf at +inf (no Q-mass)
    m = sp.symbols("m1:5", positive=True)
    x = sp.symbols("x1:5", positive=True)
    minf = sp.Symbol("m_inf", nonnegative=True)
    lhs = 1 - g + g * (minf + sum(m[i] * (1 - x[i] / g) for i in (2, 3)))
    M, W = minf + sum(m), sum(mi * xi for mi, xi in zip(m, x))
    rhs = sum(m[i] * (x[i] - g) for i in (0, 1)) + g * (M - 1) + (1 - W) if claimed is None else claimed
    parts.append(("read-off expansion", equal(lhs, rhs)))
    return combine(parts)


@obligation(
    PAPER,
    "PLD-swap-monotone",
    "certify/pld/readoff.py, module docstring",
    "G1 <= G2 pointwise implies 1 - g + g G1(1/g) <= 1 - g + g G2(1/g) (g > 0): the derived direction keeps "
    "the pessimistic / optimistic chains' direction",
)
def swap_monotone(scale=None):
    g = sp.Symbol("g", positive=True)
    G1, d = sp.Symbol("G1", real=True), sp.Symbol("d", nonnegative=True)  # G2 = G1 + d
    diff = (1 - g + g * (G1 + d)) - (1 - g + g * G1)
    return positive(sp.expand(diff) if scale is None else scale * d, strict=False)
