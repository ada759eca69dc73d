"""Proof obligations of Watkins & Arora (2026), "gradient descent on perturbed objectives".

Covered: Lemma A.8 closed form (18); Lemma A.9 eigenvalues, norm bound and the floor
gamma_N; the closed forms of nu_N (21) and nu~_N (22); Lemma C.5 ((36) and g_N <= 1 - a^(N-1));
Lemma C.15; the steps from (7) in the proof of Theorem 4.1 (gamma_N >= 3/(4L), (55), alpha-bar >=
1/(2L), (47), the Gaussian terms, tau <= tau*), with a ball check at Example 4.8; Corollary 4.13's
arithmetic (eps-hat <= 25 eps/32, delta-hat < delta); Appendix C.5 (the linear-loss recursion solved
to w_N = -(1 - rho^N)(b_S + Z)/mu, and the two printed values).

Domains are carried by the sympy symbols: rho in (0, 1) is written rho = 1/(1 + t) with t > 0 (so
eta mu = 1 - rho = t/(1 + t)), which keeps sympy's geometric sums free of the rho = 1 branch; N is a
nonnegative integer symbol, so identities are proved for every N at once.

Each check takes the paper's claimed expression(s) as keyword arguments (defaults: the paper's),
so a perturbed claim runs through the same machinery (tests/test_proofs_watkins_arora.py).
"""

from __future__ import annotations

import sympy as sp

from ..balls import Q1, Phi, Tri, arb, ball, compare, ctx, fmpq
from ..proofs.core import FALSE, PROVED, UNDECIDED, Outcome, combine, note, obligation
from ..proofs.tools import bernstein_nonneg, equal, numeric_claim, positive, unit_power

PAPER = "watkins-arora"

note(
    PAPER,
    "All listed hand calculations check out. Statements 'for all N' are proved with N a symbolic "
    "integer (sympy geometric sums); inequalities between powers use 0 < rho^k <= 1 (rho = 1/(1+t), "
    "t > 0, k >= 0) and, for the polynomials of Lemma A.9 and Lemma C.5, Bernstein certificates for "
    "N = 1..25 / 1..20 in addition to the termwise argument for all N.",
)

# symbols and their domains
N = sp.Symbol("N", integer=True, nonnegative=True)
j, k = sp.symbols("j k", integer=True, nonnegative=True)
t = sp.Symbol("t", positive=True)  # rho = 1/(1 + t) in (0, 1)
rho = 1 / (1 + t)
eta, mu, L, h, G, sigma, M, B, Rbar = sp.symbols("eta mu L h G sigma M B Rbar", positive=True)
a = sp.Symbol("a", nonnegative=True)  # a = 1 - eta h in [0, rho]
m = sp.Symbol("m", positive=True)  # m = min{1, MG/L} in (0, 1]
eps, u, delta = sp.symbols("epsilon u delta", positive=True)


def _geometric(expr, var, lo, hi):
    """sympy summation of a geometric-type sum (symbolic upper limit)."""
    return sp.summation(expr, (var, lo, hi))


# --------------------------------------------------------------------------------------------
# Lemma A.8 and Lemma A.9
# --------------------------------------------------------------------------------------------
def _paper_A8(hh, NN):
    """Right side of (18) on an eigenvector of H* with eigenvalue hh: -(1/hh)(1 - (1 - eta hh)^NN)."""
    return -(1 - (1 - eta * hh) ** NN) / hh


@obligation(
    PAPER, "WA-A8", "Lemma A.8, (17)-(18)", "J~_N = -eta sum_{j<N} (A*)^j = -(H*)^(-1)(I - (A*)^N) solves J~_{k+1} = A* J~_k - eta I, J~_0 = 0"
)
def lemma_A8(closed_form=_paper_A8) -> Outcome:
    """Lemma A.8: the geometric sum and its closed form; checked on every eigenvalue h (symbolic N)
    and, independently, as 2x2 matrices with a symbolic symmetric H* for N = 0..4."""
    A = 1 - eta * h
    geo = _geometric(-eta * A**j, j, 0, N - 1)
    parts = [("sum = closed form (all N)", equal(geo, closed_form(h, N), what="-eta sum_{j<N} a^j"))]
    rec = sp.expand(closed_form(h, N + 1) - (A * closed_form(h, N) - eta))
    parts.append(("recursion (17) (all N)", equal(rec, 0, what="J~_{N+1} - (A* J~_N - eta)")))
    parts.append(("J~_0 = 0", equal(closed_form(h, 0), 0)))
    # matrix form with a generic symmetric 2x2 Hessian
    p_, q_, r_ = sp.symbols("p_ q_ r_", positive=True)
    H = sp.Matrix([[p_ + r_, q_], [q_, p_ + 2 * r_ + q_]])
    I2 = sp.eye(2)
    Am = I2 - eta * H
    J = sp.zeros(2)
    ok = []
    for n_ in range(0, 5):
        claimed = -(H.inv()) * (I2 - Am**n_)
        ok.append(equal(sp.simplify(J - claimed), sp.zeros(2), what=f"2x2 matrices at N = {n_}"))
        J = Am * J - eta * I2
    parts.append(("2x2 matrix recursion, N = 0..4", combine([(str(i), o) for i, o in enumerate(ok)])))
    return combine(parts)


@obligation(PAPER, "WA-A9-1", "Lemma A.9, item 1", "eigenvalues of J~_N: -eta sum_{j<N} (1 - eta h_i)^j = -(1/h_i)(1 - (1 - eta h_i)^N)")
def lemma_A9_eigen(eigenvalue=lambda hh, NN: -(1 - (1 - eta * hh) ** NN) / hh) -> Outcome:
    """Lemma A.9 item 1 (symbolic N)."""
    geo = _geometric(-eta * (1 - eta * h) ** j, j, 0, N - 1)
    return equal(geo, eigenvalue(h, N), what="eigenvalue profile")


@obligation(
    PAPER, "WA-A9-2", "Lemma A.9, item 2", "f_N(mu) = eta sum_{j<N} rho^j = (1 - rho^N)/mu =: B_N <= 1/mu, and f_N is nonincreasing on [mu, L]"
)
def lemma_A9_norm(B_N=lambda NN: eta * (1 - rho**NN) / (1 - rho)) -> Outcome:
    """Lemma A.9 item 2: the value at h = mu (eta mu = 1 - rho) and B_N <= 1/mu; the derivative of
    each summand of the profile in h is -eta j (1 - eta h)^(j-1) <= 0 (1 - eta h >= 0)."""
    mu_ = (1 - rho) / eta
    geo = _geometric(eta * rho**j, j, 0, N - 1)
    parts = [("f_N(mu) = B_N", equal(geo, B_N(N), what="eta sum rho^j"))]
    parts.append(("1/mu - B_N = rho^N/mu", equal(1 / mu_ - B_N(N), rho**N / mu_)))
    parts.append(("rho^N >= 0", unit_power(rho, N)))
    deriv = sp.diff(eta * (1 - eta * h) ** j, h)
    parts.append(("summands nonincreasing", equal(deriv, -(eta**2) * j * (1 - eta * h) ** (j - 1))))
    ap = sp.Symbol("a_pos", positive=True)
    parts.append(
        (
            "sign of the derivative",
            positive(eta**2 * j * ap ** (j - 1), strict=False, what="eta^2 j a^(j-1), a = 1 - eta h > 0 (a = 0: the j = 1 term only)"),
        )
    )
    return combine(parts)


@obligation(PAPER, "WA-A9-3", "Lemma A.9, item 3", "gamma_N = f_N(L) = (1 - (1 - eta L)^N)/L >= eta > 0 for N >= 1 and 0 < eta L <= 1")
def lemma_A9_floor(floor=lambda: eta) -> Outcome:
    """Lemma A.9 item 3: with x = eta L in (0, 1], L(gamma_N - eta) = (1 - x) - (1 - x)^N
    = (1 - x)(1 - (1 - x)^(N-1)) >= 0 (both factors in [0, 1]); proved symbolically for all N and
    by Bernstein certificates for N = 1..25."""
    yv = sp.Symbol("y_", positive=True)  # y = 1 - eta L in [0, 1)
    NN = sp.Symbol("N1", integer=True, positive=True)
    gamma = (1 - yv**NN) / L
    lhs = sp.expand(L * (gamma - floor().subs(eta, (1 - yv) / L)))
    parts = [("factorization (all N)", equal(lhs, yv * (1 - yv ** (NN - 1)), what="L (gamma_N - eta)"))]
    parts.append(("y^(N-1) <= 1", unit_power(1 / (1 + t), NN - 1, what="y = 1/(1+t)")))
    y = sp.Symbol("y")
    for n_ in range(1, 26):
        g_n = sp.expand(((1 - (1 - y) ** n_) / L - floor().subs(eta, y / L)) * L)
        o = bernstein_nonneg(g_n, y, what=f"N = {n_}")
        if o.verdict != PROVED:
            parts.append((f"N = {n_}", o))
            break
    else:
        parts.append(("N = 1..25 on eta L in [0, 1]", Outcome(PROVED, "sympy (Bernstein coefficients >= 0 on [0,1])")))
    return combine(parts)


# --------------------------------------------------------------------------------------------
# (21), (22)
# --------------------------------------------------------------------------------------------
def _paper_nu(NN):
    """(21): nu_N = N - (1 - rho^N)/(eta mu)."""
    return NN - (1 - rho**NN) / (1 - rho)


def _paper_nu_tilde(NN):
    """(22): nu~_N = nu_N + N rho^N - rho (1 - rho^N)/(eta mu)."""
    return _paper_nu(NN) + NN * rho**NN - rho * (1 - rho**NN) / (1 - rho)


@obligation(PAPER, "WA-21", "Proposition A.11, (21)", "nu_N = sum_{k<N} (1 - rho^k) = N - (1 - rho^N)/(eta mu), 0 <= nu_N <= N")
def closed_form_21(nu=_paper_nu) -> Outcome:
    """(21) for all N (eta mu = 1 - rho), with 0 <= 1 - rho^k <= 1 termwise."""
    s = _geometric(1 - rho**k, k, 0, N - 1)
    parts = [("closed form", equal(s, nu(N), what="sum_{k<N}(1 - rho^k)"))]
    parts.append(("0 < rho^k <= 1, so 0 <= 1 - rho^k <= 1", unit_power(rho, k)))
    return combine(parts)


@obligation(
    PAPER,
    "WA-22",
    "Proposition A.11, (22)",
    "nu~_N = sum_{k<N}(1 - rho^(N-k))(1 - rho^k) = nu_N + N rho^N - rho(1 - rho^N)/(eta mu), 0 <= nu~_N <= nu_N, nu~_1 = 0",
)
def closed_form_22(nu_tilde=_paper_nu_tilde) -> Outcome:
    """(22) for all N; nu_N - nu~_N = sum_{j=1}^N (rho^j - rho^N), a sum of nonnegative terms."""
    s = _geometric((1 - rho ** (N - k)) * (1 - rho**k), k, 0, N - 1)
    parts = [("closed form", equal(s, nu_tilde(N), what="sum_{k<N}(1 - rho^(N-k))(1 - rho^k)"))]
    gap = _geometric(rho**j - rho**N, j, 1, N)
    parts.append(("nu_N - nu~_N = sum_{j=1}^N (rho^j - rho^N)", equal(_paper_nu(N) - nu_tilde(N), gap)))
    parts.append(("rho^j - rho^N = rho^j (1 - rho^(N-j)) >= 0 (j <= N)", unit_power(rho, k, what="k = N - j >= 0")))
    parts.append(("nu~_1 = 0", equal(nu_tilde(1), 0)))
    P1, P2 = sp.symbols("P1 P2", positive=True)
    parts.append(
        (
            "nu~_N >= 0: summands (1 - rho^(N-k))(1 - rho^k) >= 0",
            positive((1 - 1 / (1 + P1)) * (1 - 1 / (1 + P2)), strict=False, what="rho^(N-k) = 1/(1+P1), rho^k = 1/(1+P2) in (0, 1]"),
        )
    )
    return combine(parts)


# --------------------------------------------------------------------------------------------
# Lemma C.5
# --------------------------------------------------------------------------------------------
def _paper_g(aa, NN):
    """(36): g_N = 1 - N a^(N-1)/D(a), D(a) = sum_{j<N} a^j = (1 - a^N)/(1 - a)."""
    return 1 - NN * aa ** (NN - 1) * (1 - aa) / (1 - aa**NN)


@obligation(
    PAPER,
    "WA-C5-36",
    "Lemma C.5, (36)",
    "phi_N = log p_N, p_N(h) = eta sum_{j<N}(1 - eta h)^j: -h phi_N'(h) = g_N = 1 - N a^(N-1)/D(a), a = 1 - eta h",
)
def lemma_C5_36(g=_paper_g) -> Outcome:
    """(36) for all N: differentiate log(eta D(1 - eta h)) in h and substitute eta h = 1 - a; also
    the derivative identity (1 - a) D'(a) = D(a) - N a^(N-1)."""
    ai = sp.Symbol("a_", positive=True)  # a in (0, 1): D(a) = (1 - a^N)/(1 - a)
    D = (1 - ai**N) / (1 - ai)
    parts = [("(1 - a) D' = D - N a^(N-1)", equal((1 - ai) * sp.diff(D, ai), D - N * ai ** (N - 1)))]
    hh = (1 - ai) / eta
    p_of_h = eta * (1 - (1 - eta * h) ** N) / (1 - (1 - eta * h))
    lhs = (-h * sp.diff(sp.log(p_of_h), h)).subs(h, hh)
    parts.append(("-h phi_N'(h) = g_N", equal(sp.simplify(lhs), g(ai, N), what="-h d/dh log p_N")))
    parts.append(("p_N = eta D(a) (geometric sum)", equal(_geometric(eta * (1 - eta * h) ** j, j, 0, N - 1), p_of_h)))
    return combine(parts)


@obligation(
    PAPER,
    "WA-C5-bound",
    "Lemma C.5, bound on g_N",
    "0 <= g_N(h) <= 1 - (1 - eta h)^(N-1) on [mu, L]; hence g-bar_N <= 1 - (1 - eta L)^(N-1) <= 1; g-bar_N = 1 at eta = 1/L, N >= 2 (Appendix C.4)",
)
def lemma_C5_bound(upper=lambda aa, NN: 1 - aa ** (NN - 1)) -> Outcome:
    """For all N: g_N D = sum_{j<N}(a^j - a^(N-1)) and (1 - a^(N-1) - g_N) D = a^(N-1) sum_{j<N}(1 - a^j),
    both sums of terms >= 0 for a in [0, 1]; for N = 1..20 also Bernstein certificates of the two
    polynomials g_N D >= 0 and (upper - g_N) D >= 0 on a in [0, 1]."""
    NN = sp.Symbol("N1", integer=True, positive=True)
    sa = sp.Symbol("s_a", positive=True)
    ai = 1 / (1 + sa)  # a in (0, 1); a = 0 is covered by the Bernstein checks
    D = (1 - ai**NN) / (1 - ai)
    gD = D - NN * ai ** (NN - 1)
    parts = [("g_N D = sum_{j<N}(a^j - a^(N-1))", equal(gD, _geometric(ai**j, j, 0, NN - 1) - NN * ai ** (NN - 1)))]
    parts.append(
        (
            "(upper - g_N) D = a^(N-1) sum_{j<N}(1 - a^j)",
            equal(upper(ai, NN) * D - gD, ai ** (NN - 1) * (NN - _geometric(ai**j, j, 0, NN - 1)), what="upper bound numerator"),
        )
    )
    x = sp.Symbol("x")
    for n_ in range(1, 21):
        Dn = sum(x**i for i in range(n_))
        gDn = sp.expand(Dn - n_ * x ** (n_ - 1))
        up = sp.expand(upper(x, n_) * Dn - gDn)
        for what, poly in (("g_N D >= 0", gDn), ("(upper - g_N) D >= 0", up)):
            o = bernstein_nonneg(poly, x, what=f"N = {n_}: {what}")
            if o.verdict != PROVED:
                parts.append((f"N = {n_}", o))
                return combine(parts)
    parts.append(("N = 1..20", Outcome(PROVED, "sympy (Bernstein coefficients >= 0 on [0,1])")))
    a0 = sp.Symbol("a0", positive=True)
    parts.append(("g_N = 1 at a = 0, N >= 2", equal(sp.limit(_paper_g(a0, 3), a0, 0), 1)))
    parts.append(("terms a^j - a^(N-1) = a^j (1 - a^(N-1-j)) >= 0", unit_power(ai, k, what="k = N-1-j")))
    return combine(parts)


# --------------------------------------------------------------------------------------------
# Lemma C.15
# --------------------------------------------------------------------------------------------
@obligation(PAPER, "WA-C15", "Lemma C.15", "(e eta mu/2) N rho^(N/2) <= 1, equivalently N rho^(N-1) <= 2 rho^(N/2)/(e rho eta mu)")
def lemma_C15(max_value=lambda s_: 1 / (sp.E * sp.log(1 / s_)), constant=sp.Rational(1, 2)) -> Outcome:
    """The proof's steps: x s^x is maximal at x = 1/log(1/s) with value 1/(e log(1/s)) (stationary
    point; x s^x <= that value iff y e^(1-y) <= 1, y = x log(1/s), iff log y <= y - 1, proved by
    convexity of y - 1 - log y with minimum 0 at y = 1); s = rho^(1/2) turns it into N rho^(N/2) <=
    2/(e log(1/rho)); -log(1 - v) >= v (v = eta mu) gives 2/(e eta mu); the constant in front is
    e eta mu * ``constant`` (the paper: 1/2)."""
    s_, x, y, v = sp.symbols("s_ x y v", positive=True)
    f = x * s_**x
    xstar = 1 / sp.log(1 / s_)
    parts = [("stationary point", equal(sp.simplify(sp.diff(f, x).subs(x, xstar)), 0))]
    parts.append(("maximum value", equal(sp.simplify(f.subs(x, xstar)), max_value(s_))))
    ratio = sp.simplify((f / max_value(s_)).subs(x, y / sp.log(1 / s_)))
    parts.append(("x s^x / max = y e^(1-y)", equal(ratio, y * sp.exp(1 - y))))
    c = y - 1 - sp.log(y)
    parts.append(("y - 1 - log y convex", positive(sp.diff(c, y, 2))))
    parts.append(("minimum 0 at y = 1", combine([("c'(1) = 0", equal(sp.diff(c, y).subs(y, 1), 0)), ("c(1) = 0", equal(c.subs(y, 1), 0))])))
    # -log(1 - v) >= v on (0, 1): k(0) = 0, k'(v) = v/(1 - v) >= 0
    kf = -sp.log(1 - v) - v
    parts.append(("-log(1-v) - v: k(0) = 0, k' = v/(1-v)", combine([("k(0)", equal(kf.subs(v, 0), 0)), ("k'", equal(sp.diff(kf, v), v / (1 - v)))])))
    # assemble: (e eta mu * constant) * N rho^(N/2) <= (e eta mu constant) * 2/(e log(1/rho)) <= 2 constant
    bound = sp.E * v * constant * 2 / (sp.E * v)
    parts.append(("final constant", equal(bound, 1, what="(e eta mu c) * 2/(e eta mu) with c = constant")))
    NN = sp.Symbol("N1", positive=True)
    second = sp.simplify(NN * rho ** (NN - 1) - (2 * rho ** (NN / 2) / (sp.E * rho * (1 - rho))) * (sp.E * (1 - rho) / 2 * NN * rho ** (NN / 2)))
    parts.append(("equivalent second form", equal(second, 0, what="first form times rho^(N/2-1)")))
    return combine(parts)


# --------------------------------------------------------------------------------------------
# Theorem 4.1: the steps from (7)
# --------------------------------------------------------------------------------------------
@obligation(
    PAPER,
    "WA-T41-rho",
    "Theorem 4.1 proof, from (7)",
    "rho = 1 - eta mu <= e^(-eta mu), so N >= (2/(eta mu)) log X gives rho^(N/2) <= 1/X for each entry X of (7)",
)
def t41_rho(exponent=sp.Rational(1, 2)) -> Outcome:
    """e^(-x) - (1 - x) is convex with value 0 and slope 0 at x = 0; the exponent identity
    exp(-(N eta mu) * exponent) at N = (2/(eta mu)) log X equals 1/X (paper: exponent 1/2)."""
    x, X = sp.symbols("x X", positive=True)
    c = sp.exp(-x) - (1 - x)
    parts = [("convex", positive(sp.diff(c, x, 2))), ("c(0) = 0", equal(c.subs(x, 0), 0)), ("c'(0) = 0", equal(sp.diff(c, x).subs(x, 0), 0))]
    Nmin = 2 / x * sp.log(X)
    parts.append(("e^(-N eta mu/2) = 1/X at the threshold", equal(sp.exp(-Nmin * x * exponent), 1 / X)))
    return combine(parts)


@obligation(
    PAPER,
    "WA-T41-gamma",
    "Theorem 4.1 proof, gamma_N >= 3/(4L)",
    "rho^(N/2) <= 1/4 gives (1 - eta L)^N <= rho^N <= 1/16 and gamma_N >= 15/(16L) >= 3/(4L)",
)
def t41_gamma(third_entry=4, floor=sp.Rational(3, 4)) -> Outcome:
    """Exact arithmetic of the step; 0 <= 1 - eta L <= rho because eta L >= eta mu."""
    rhoN_max = sp.Rational(1, third_entry) ** 2
    gamma_low = 1 - rhoN_max  # times 1/L
    parts = [("rho^N <= 1/16", equal(rhoN_max, sp.Rational(1, 16)))]
    parts.append(("15/16 >= floor", positive(gamma_low - floor, strict=False, what=f"{gamma_low} - {floor}")))
    parts.append(("1 - eta L <= rho", positive((1 - eta * mu) - (1 - eta * (mu + h)), what="eta (L - mu), L = mu + h")))
    return combine(parts)


@obligation(PAPER, "WA-T41-55", "Theorem 4.1 proof, (54)-(55)", "eta M R-bar B nu~_N rho^(N-1) <= min{1, MG/L}/(4L) <= 1/(4L)")
def t41_55(claimed=lambda: m / (4 * L)) -> Outcome:
    """nu~_N <= N (22); N rho^(N-1) = rho^(-1) rho^(N/2) N rho^(N/2); (54) bounds the isolated
    rho^(N/2) by e rho mu m/(8 L M B R-bar), Lemma C.15 bounds N rho^(N/2) by 2/(e eta mu); the
    product of the bounds of the nonnegative factors is simplified exactly."""
    NN, r = sp.symbols("N1 r", positive=True)
    split = equal(NN * r ** (NN - 1), r**-1 * r ** (NN / 2) * NN * r ** (NN / 2), what="N rho^(N-1) split")
    r54 = sp.E * r * mu * m / (8 * L * M * B * Rbar)
    c15 = 2 / (sp.E * eta * mu)
    product = eta * M * Rbar * B * r**-1 * r54 * c15
    parts = [
        ("split", split),
        ("product of the bounds", equal(product, claimed())),
        ("min{1, MG/L} <= 1", positive(1 - m / (1 + m), strict=True, what="m <= 1 written m/(1+m)")),
    ]
    return combine(parts)


@obligation(
    PAPER,
    "WA-T41-alpha",
    "Theorem 4.1 proof, alpha-bar >= 1/(2L) and (47)",
    "alpha-bar = gamma_N - eta M R-bar B nu~_N rho^(N-1) >= 3/(4L) - 1/(4L) = 1/(2L); "
    "then G(1 - rho^N)/(mu alpha-bar) <= 2LG/mu, so r_u + that <= r'",
)
def t41_alpha(claimed=lambda: 1 / (2 * L)) -> Outcome:
    """Theorem 4.1 proof (Appendix C.4, after (55)): the margin alpha-bar and the fixed-point inequality (47)."""
    parts = [("3/(4L) - 1/(4L)", equal(sp.Rational(3, 4) / L - sp.Rational(1, 4) / L, claimed()))]
    abar = claimed()
    parts.append(("(47): G/(mu alpha-bar) at the floor", equal(G / (mu * abar), 2 * L * G / mu)))
    parts.append(("1 - rho^N <= 1", positive(rho**N, strict=False)))
    return combine(parts)


@obligation(
    PAPER,
    "WA-T41-gauss",
    "Theorem 4.1 proof, Gaussian terms of (49)",
    "rho^(N/2) <= G sigma/(2 mu R-bar r') gives Delta_xi = 2 mu rho^N R-bar <= (G sigma/r') rho^(N/2); "
    "r_u Delta_xi/sigma^2 <= (G/sigma) rho^(N/2); Delta_xi <= G rho^(N/2); "
    "(G + Delta_xi)^2/(2 sigma^2) <= G^2 (1 + rho^(N/2))^2/(2 sigma^2)",
)
def t41_gauss(claimed=lambda rp, half: G * sigma / rp * half) -> Outcome:
    """Theorem 4.1 proof, 'Gaussian terms': the first entry of (7) bounds Delta_xi; r_u <= r' and r' >= sigma."""
    rp, ru, half = sp.symbols("rprime r_u half", positive=True)
    first = sp.Symbol("first_entry", positive=True)
    # Delta_xi = 2 mu R-bar rho^(N/2) rho^(N/2) and rho^(N/2) <= G sigma/(2 mu R-bar r')
    bound = 2 * mu * Rbar * (G * sigma / (2 * mu * Rbar * rp)) * half
    parts = [("Delta_xi bound", equal(bound, claimed(rp, half)))]
    parts.append(("r_u Delta_xi / sigma^2 with r_u <= r'", equal(rp * claimed(rp, half) / sigma**2, G / sigma * half)))
    parts.append(
        (
            "Delta_xi <= G rho^(N/2) at r' >= sigma",
            positive(G * half - claimed(rp, half).subs(rp, sigma + first), strict=False, what="r' = sigma + (r' - sigma)"),
        )
    )
    dx = sp.Symbol("dxi", positive=True)
    parts.append(("(G + Delta_xi)^2 monotone", positive(sp.diff((G + dx) ** 2 / (2 * sigma**2), dx))))
    parts.append(("at Delta_xi = G rho^(N/2)", equal(((G + G * half) ** 2 / (2 * sigma**2)), G**2 * (1 + half) ** 2 / (2 * sigma**2))))
    return combine(parts)


@obligation(
    PAPER,
    "WA-T41-tau",
    "Theorem 4.1 proof, tau <= tau*",
    "2 eta M R-bar B nu~_N rho^(N-1) <= m e eta mu N rho^(N/2)/(4L) and alpha-bar >= 1/(2L) "
    "bound the correction of (48) by (e eta mu/2) m N rho^(N/2); with g-bar_N <= 1: tau <= tau* (8)",
)
def t41_tau(claimed=lambda Nh: sp.E * eta * mu / 2 * m * Nh) -> Outcome:
    """Theorem 4.1 proof, 'Jacobian ratio': the estimate behind (55) retaining N rho^(N/2), divided by alpha-bar >= 1/(2L)."""
    r, Nh = sp.symbols("r Nhalf", positive=True)  # Nh = N rho^(N/2)
    r54 = sp.E * r * mu * m / (8 * L * M * B * Rbar)
    two_corr = 2 * eta * M * Rbar * B * r**-1 * r54 * Nh
    parts = [("2 eta M R-bar B nu~ rho^(N-1) bound", equal(two_corr, m * sp.E * eta * mu * Nh / (4 * L)))]
    parts.append(("divided by alpha-bar >= 1/(2L)", equal(two_corr * 2 * L, claimed(Nh))))
    return combine(parts)


@obligation(
    PAPER,
    "WA-T41-example",
    "Theorem 4.1 proof at Example 4.8",
    "at the Example 4.8 constants and N = 1319 (smallest N of (7)): gamma_N >= 3/(4L), "
    "eta M R-bar B nu~_N rho^(N-1) <= 1/(4L), alpha-bar >= 1/(2L), (47), tau <= tau*",
)
def t41_example(iterations: int = 1319) -> Outcome:
    """Ball evaluation with certify.objpert (Example 4.8: n = 1e6, d = 1e4, mu = 0.01, logistic,
    zeta = 1, sigma/G = 5, u = 6): each step of the proof checked as an inequality of balls."""
    from ..objpert import privacy as P
    from ..objpert.problem import constants, make_loss, make_problem

    prob = make_problem(n="1000000", d="10000", mu="0.01", zeta="1", loss=make_loss("logistic"), u="6", noise_multiplier="5")
    parts = []
    with ctx.workprec(256):
        c = constants(prob)
        thr = P.threshold_7(c)
        q = P.theorem_C13(prob, c, iterations)
        corr = c.eta * c.M * c.R_bar * c.B * q.nu_tilde_N * c.rho ** (iterations - 1)
        checks = [
            ("N satisfies (7)", arb(iterations), ">=", thr),
            ("gamma_N >= 3/(4L)", q.gamma_N, ">=", 3 / (4 * c.L)),
            ("correction <= min{1,MG/L}/(4L)", corr, "<=", c.min_1_MG_over_L / (4 * c.L)),
            ("alpha-bar >= 1/(2L)", q.alpha_bar, ">=", 1 / (2 * c.L)),
            ("(47)", q.radius_step, "<=", q.radius_gap),
            ("tau <= tau*", q.tau, "<=", P.tau_star(prob, c, iterations)),
        ]
        for name, lhs, op, rhs in checks:
            tri = compare(lhs, op, rhs)
            verdict = PROVED if tri is Tri.TRUE else (FALSE if tri is Tri.FALSE else UNDECIDED)
            parts.append(
                (
                    name,
                    Outcome(
                        verdict, "balls (Example 4.8, 256 bits)", "" if verdict == PROVED else f"at N = {iterations}: {lhs} {op} {rhs} is {tri.value}"
                    ),
                )
            )
    return combine(parts)


# --------------------------------------------------------------------------------------------
# Corollary 4.13
# --------------------------------------------------------------------------------------------
@obligation(
    PAPER,
    "WA-413-eps",
    "Corollary 4.13 proof, eps-hat",
    "eps_0 = G^2/(2 sigma^2) + q(mu) + c_N; G/sigma = eps/(4u); G^2/(2 sigma^2) = eps^2/(32u^2) <= eps/32; "
    "q(mu) <= eps/4; eps-hat = eps_0 + (G/sigma) u <= eps/32 + eps/4 + eps/4 + eps/4 = 25 eps/32 < eps",
)
def cor413_eps(total=sp.Rational(25, 32)) -> Outcome:
    """Proof of Corollary 4.13 (Appendix D): the split of eps_0, the choices of u, sigma, mu_priv, and the sum 25 eps/32."""
    Gs, half, NNh, qq, mm, L2z2, n = sp.symbols("Gs half Nhalf q m L2zeta2 n", positive=True)
    # (9) with Delta_H/(2 n mu) = L2 zeta^2/(n mu) against the split of Corollary 4.13
    eps0 = Gs * half + Gs**2 * (1 + half) ** 2 / 2 + qq + sp.E * eta * mu / 2 * mm * NNh
    cN = Gs * half + Gs**2 / 2 * (2 * half + half**2) + sp.E * eta * mu / 2 * mm * NNh
    parts = [("eps_0 = G^2/(2 sigma^2) + q + c_N", equal(eps0, Gs**2 / 2 + qq + cN))]
    sig = 4 * G * u / eps
    parts.append(("G/sigma = eps/(4u)", equal(G / sig, eps / (4 * u))))
    parts.append(("G^2/(2 sigma^2) = eps^2/(32 u^2)", equal(G**2 / (2 * sig**2), eps**2 / (32 * u**2))))
    # eps <= 1 < u^2: write eps = 1/(1 + e1) (in (0, 1]) and u^2 = 1 + u1 with e1 >= 0, u1 > 0
    e1 = sp.Symbol("e1", nonnegative=True)
    u1 = sp.Symbol("u1", positive=True)
    ee = 1 / (1 + e1)
    parts.append(("eps^2/(32u^2) <= eps/32", positive(ee / 32 - ee**2 / (32 * (1 + u1)), strict=True)))
    mu_priv = L2z2 / (n * (sp.exp(eps / 4) - 1))
    parts.append(("q(mu_priv) = eps/4", equal(sp.log(1 + L2z2 / (n * mu_priv)), eps / 4)))
    parts.append(("q decreasing in mu", positive(-sp.diff(sp.log(1 + L2z2 / (n * mu)), mu))))
    parts.append(("sum of the four bounds", equal(sp.Rational(1, 32) + 3 * sp.Rational(1, 4), total)))
    parts.append(("25/32 < 1", positive(1 - total)))
    return combine(parts)


@obligation(
    PAPER,
    "WA-413-delta",
    "Corollary 4.13 proof, delta-hat",
    "u = sqrt(2 log(2/delta)) gives e^(-u^2/2) = delta/2; Q1(u) <= phi(u) (u >= 0); "
    "delta-hat <= delta/2 + (G/sigma) delta/sqrt(2 pi) < delta since G/sigma = eps/(4u) < 1/4",
)
def cor413_delta(gs_bound=sp.Rational(1, 4)) -> Outcome:
    """Proof of Corollary 4.13: delta-hat < delta via e^(-u^2/2) = delta/2, Q1 <= phi and G/sigma < 1/4."""
    uu = sp.sqrt(2 * sp.log(2 / delta))
    parts = [("e^(-u^2/2) = delta/2", equal(sp.exp(-(uu**2) / 2), delta / 2))]
    s = sp.Symbol("s", real=True)
    phi = sp.exp(-(s**2) / 2) / sp.sqrt(2 * sp.pi)
    Q = sp.erfc(s / sp.sqrt(2)) / 2
    Q1 = phi - s * Q
    parts.append(("Q1' = -Q", equal(sp.diff(Q1, s), -Q)))
    parts.append(("Q1(oo) = 0", equal(sp.limit(Q1, s, sp.oo), 0)))
    parts.append(
        (
            "Q = int_u^oo phi >= 0",
            combine([("Q' = -phi", equal(sp.diff(Q, s), -phi)), ("Q(oo) = 0", equal(sp.limit(Q, s, sp.oo), 0)), ("phi > 0", positive(phi))]),
        )
    )
    Gs = sp.Symbol("Gs", positive=True)
    two = 2 * Gs * (delta / 2) / sp.sqrt(2 * sp.pi)
    parts.append(("(2G/sigma) phi(u) = (G/sigma) delta/sqrt(2 pi)", equal(2 * Gs * phi.subs(s, uu), Gs * delta / sp.sqrt(2 * sp.pi))))
    parts.append(
        (
            "G/sigma = eps/(4u) < 1/4 (eps <= 1 < u)",
            positive(
                gs_bound - sp.Rational(1, 4) / (1 + sp.Symbol("u1", positive=True)) * (1 / (1 + sp.Symbol("e1", nonnegative=True))), strict=True
            ),
        )
    )
    # delta/2 + gs delta/sqrt(2 pi) < delta  <=>  gs < sqrt(2 pi)/2 at gs = the bound
    with ctx.workprec(128):
        lhs = ball(fmpq(int(sp.Rational(gs_bound).p), int(sp.Rational(gs_bound).q)))
        rhs = (2 * arb.pi()).sqrt() / 2
        decided = lhs < rhs
    parts.append(("1/4 < sqrt(2 pi)/2 (balls)", Outcome(PROVED if decided else "false", "balls", "" if decided else f"{gs_bound} >= sqrt(2 pi)/2")))
    parts.append(("algebra", equal(delta / 2 + two, delta / 2 + Gs * delta / sp.sqrt(2 * sp.pi))))
    return combine(parts)


# --------------------------------------------------------------------------------------------
# Appendix C.5
# --------------------------------------------------------------------------------------------
@obligation(
    PAPER,
    "WA-C5-linear",
    "Appendix C.5",
    "gradient descent (4) on mu/2 ||w||^2 + <b_S, w> + <z, w> from w_0 = 0 gives w_N = -(1 - rho^N)(b_S + z)/mu",
)
def c5_linear(closed_form=lambda NN, b: -(1 - (1 - eta * mu) ** NN) * b / mu) -> Outcome:
    """The update w_{k+1} = w_k - eta(mu w_k + b + z) acts coordinatewise; with b standing for
    b_S + z the closed form must satisfy the recursion for every N and vanish at N = 0."""
    b = sp.Symbol("b", real=True)
    w = closed_form
    parts = [("w_0 = 0", equal(w(0, b), 0)), ("recursion (4), all N", equal(w(N + 1, b), w(N, b) - eta * (mu * w(N, b) + b)))]
    return combine(parts)


@obligation(
    PAPER,
    "WA-C5-values",
    "Appendix C.5, printed values",
    "at sigma/G = 5, eps = 1: delta_G(1) ~ 1.75463333e-8 and (2G/sigma) Q1((sigma/G)(1 - G^2/(2 sigma^2))) ~ 3.63850762e-8",
)
def c5_values(delta_G="1.75463333e-8", integrated="3.63850762e-8") -> Outcome:
    """Balls: delta_G(eps) = Phi(G/(2 sigma) - eps sigma/G) - e^eps Phi(-G/(2 sigma) - eps sigma/G)."""
    with ctx.workprec(192):
        s = arb(5)
        e = arb(1)
        dG = Phi(1 / (2 * s) - e * s) - e.exp() * Phi(-1 / (2 * s) - e * s)
        itb = 2 / s * Q1(s * (e - 1 / (2 * s * s)))
        parts = [
            ("delta_G(1)", numeric_claim(dG, delta_G, 9, "delta_G(1)")),
            ("integrated-tail bound", numeric_claim(itb, integrated, 9, "(2G/sigma) Q1(...)")),
        ]
    return combine(parts)
