"""Privacy of gradient descent on perturbed objectives (Watkins-Arora, Theorem 4.1 and Theorem C.13).

Every function takes the balls of :func:`certify.objpert.problem.constants` (and an iteration
count N >= 1) and returns a ball containing the exact value of the named expression; none of
them rounds in a direction of its own: the enclosure is two-sided, and callers read the upper
endpoint for an upper bound.

Theorem 4.1 (main text):
    (7)  N >= (2/(eta mu)) log max{ 2 mu R-bar r'/(G sigma), 8 L M B R-bar/(e rho mu min{1, MG/L}), 4 }
    (8)  tau* = log(1 + Delta_H/(2 n mu)) + (e eta mu / 2) min{1, MG/L} N rho^(N/2)
    (9)  eps_0 = (G/sigma) rho^(N/2) + G^2 (1 + rho^(N/2))^2 / (2 sigma^2) + tau*
    (10) delta(eps) = e^(-u^2/2) + (2G/sigma) Q1((sigma/G)(eps - eps_0))

Theorem C.13 (exact finite-N form) at radii r, r' (Appendix C.4 takes r = r_u, r' = r_u + 2LG/mu):
    gamma_N = (1 - (1 - eta L)^N)/L                       (Lemma A.9, item 3)
    nu_N = N - (1 - rho^N)/(eta mu)                        (21)
    nu~_N = nu_N + N rho^N - rho (1 - rho^N)/(eta mu)      (22)
    g-bar_N = sup_[mu, L] g_N                              (Lemma C.5, (36))
    alpha-bar = gamma_N - eta M R-bar B nu~_N rho^(N-1)    (47)
    (47) r' >= r + G (1 - rho^N)/(mu alpha-bar)
    Delta_xi = 2 mu rho^N R-bar,  tau = g-bar_N log(1 + Delta_H/(2 n mu)) + 2 eta M R-bar B nu~_N rho^(N-1)/alpha-bar   (48), (41)
    s_N = r Delta_xi/sigma^2 + (G + Delta_xi)^2/(2 sigma^2) + tau        (C.4; (49) without the t term)
    delta_N(eps) = e^(-u^2/2) + (2G/sigma) Q1((eps - s_N) sigma/G)        (C.4; (50) at t = (eps - s_N) sigma/G)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..balls import Q1, arb, ball, fmpq, decide
from .problem import Constants, GLMProblem

# --------------------------------------------------------------------------------------------
# Theorem 4.1
# --------------------------------------------------------------------------------------------


def threshold_entries(c: Constants) -> tuple[arb, arb, arb]:
    """The three entries of the maximum in (7)."""
    first = 2 * c.mu * c.R_bar * c.r_prime / (c.G * c.sigma)
    second = 8 * c.L * c.M * c.B * c.R_bar / (arb.const_e() * c.rho * c.mu * c.min_1_MG_over_L)
    return first, second, arb(4)


def threshold_7(c: Constants) -> arb:
    """Right-hand side of the iteration threshold (7): (2/(eta mu)) log max{...}."""
    first, second, third = threshold_entries(c)
    return 2 / (c.eta * c.mu) * first.max(second).max(third).log()


def rho_half_power(c: Constants, N: int) -> arb:
    """rho^(N/2) (for odd N the square root of rho^N)."""
    return (c.rho**N).sqrt()


def tau_star(problem: GLMProblem, c: Constants, N: int) -> arb:
    """tau* of (8): log(1 + Delta_H/(2 n mu)) + (e eta mu/2) min{1, MG/L} N rho^(N/2).

    e is Euler's number: the factor comes from Lemma C.15, (e eta mu/2) N rho^(N/2) <= 1.
    """
    log_term = ball(problem.Delta_H / (2 * problem.n * problem.mu)).log1p()
    return log_term + arb.const_e() * c.eta * c.mu / 2 * c.min_1_MG_over_L * N * rho_half_power(c, N)


def epsilon_0(problem: GLMProblem, c: Constants, N: int) -> arb:
    """eps_0 of (9): (G/sigma) rho^(N/2) + G^2 (1 + rho^(N/2))^2/(2 sigma^2) + tau*."""
    h = rho_half_power(c, N)
    g_over_s = c.G / c.sigma
    return g_over_s * h + g_over_s**2 * (1 + h) ** 2 / 2 + tau_star(problem, c, N)


def gaussian_terms_9(c: Constants, N: int) -> arb:
    """The Gaussian-ratio part of (9): (G/sigma) rho^(N/2) + G^2 (1 + rho^(N/2))^2/(2 sigma^2)."""
    h = rho_half_power(c, N)
    g_over_s = c.G / c.sigma
    return g_over_s * h + g_over_s**2 * (1 + h) ** 2 / 2


def truncation_mass(problem: GLMProblem) -> arb:
    """First term of (10) and (50) at r = r_u: e^(-u^2/2) bounds Pr(||Pi_C Z|| > r_u) (Cor. E.4)."""
    return (-(ball(problem.u) ** 2) / 2).exp()


def divergence_term(c: Constants, eps: fmpq, eps_floor: arb) -> arb:
    """(2G/sigma) Q1((sigma/G)(eps - eps_floor)): second term of (10) (floor eps_0) and of (50)
    at t = (eps - s_N) sigma/G (floor s_N). Requires eps >= eps_floor (t >= 0)."""
    t = c.sigma / c.G * (ball(eps) - eps_floor)
    return 2 * c.G / c.sigma * Q1(t)


# --------------------------------------------------------------------------------------------
# Theorem C.13 at fixed radii
# --------------------------------------------------------------------------------------------


def gamma_N(c: Constants, N: int) -> arb:
    """Frozen-Hessian spectral floor gamma_N = (1 - (1 - eta L)^N)/L (Lemma A.9, item 3)."""
    return (1 - (1 - c.eta * c.L) ** N) / c.L


def nu_tilde_N(c: Constants, N: int) -> arb:
    """nu~_N of (22) in closed form: N - (1 + rho)(1 - rho^N)/(eta mu) + N rho^N (>= 0)."""
    rN = c.rho**N
    em = c.eta * c.mu
    v = N - (1 + c.rho) * (1 - rN) / em + N * rN
    return v.nonnegative_part()  # nu~_N >= 0 by (22): a sum of nonnegative terms


def g_bar_N(problem: GLMProblem, N: int) -> arb:
    """g-bar_N = sup over h in [mu, L] of g_N(h) of (36), Lemma C.5.

    With a = 1 - eta h, (36) reads g_N = 1 - N a^(N-1)/D(a), D(a) = sum_{j<N} a^j. Since
    N a^(N-1)/D(a) = N / sum_{k<N} a^(-k) increases with a on (0, 1], g_N decreases in a, i.e.
    increases in h; the supremum is attained at h = L, a = 1 - eta L (a = 0 gives g_N = 1 for
    N >= 2 and g_1 = 0). Evaluated exactly in rationals for small N, in balls otherwise.
    """
    a = 1 - problem.eta * problem.L  # exact rational in [0, rho]
    if N == 1:
        return arb(0)  # g_1 = 1 - 1*a^0/1 = 0
    if a == 0:
        return arb(1)
    ab = ball(a)
    D = (1 - ab**N) / (1 - ab)
    return 1 - N * ab ** (N - 1) / D


@dataclass
class C13:
    """All quantities of Theorem C.13 at one iteration count N and radii r, r'."""

    N: int
    gamma_N: arb
    nu_tilde_N: arb
    g_bar_N: arb
    alpha_bar: arb
    radius_step: arb  # G (1 - rho^N)/(mu alpha-bar): must be <= r' - r, (47)
    radius_gap: arb  # r' - r
    Delta_xi: arb
    tau: arb
    s_N: arb


def theorem_C13(problem: GLMProblem, c: Constants, N: int) -> C13:
    """Evaluate Theorem C.13 at N with r = r_u and r' = r_u + 2LG/mu (Appendix C.4).

    The radius condition and tau are only meaningful when alpha-bar > 0; callers decide that first
    (``radius_step`` and ``tau`` are then finite balls; otherwise they may be non-finite).
    """
    rN = c.rho**N
    rNm1 = c.rho ** (N - 1)
    gam = gamma_N(c, N)
    nut = nu_tilde_N(c, N)
    gbar = g_bar_N(problem, N)
    corr = c.eta * c.M * c.R_bar * c.B * nut * rNm1  # eta M R-bar B nu~_N rho^(N-1)
    abar = gam - corr  # (47)
    radius_step = c.G * (1 - rN) / (c.mu * abar)
    radius_gap = c.r_prime - c.r_u  # = 2 L G / mu
    dxi = 2 * c.mu * rN * c.R_bar  # (48)
    tau0 = gbar * ball(problem.Delta_H / (2 * problem.n * problem.mu)).log1p()  # (41)
    tau = tau0 + 2 * corr / abar  # (48)
    s = c.r_u * dxi / c.sigma**2 + (c.G + dxi) ** 2 / (2 * c.sigma**2) + tau
    return C13(N, gam, nut, gbar, abar, radius_step, radius_gap, dxi, tau, s)


#: Reasons a count N fails Theorem C.13, in the order they are tested (Appendix C.4).
FAIL_ALPHA = "alpha_bar <= 0"
FAIL_RADIUS = "radius condition (47) fails"
FAIL_EPS = "eps < s_N"
FAIL_DELTA = "delta_N(eps) > target"
PASS = "passes"
REASONS = (FAIL_ALPHA, FAIL_RADIUS, FAIL_EPS, FAIL_DELTA)


def c13_verdict(problem: GLMProblem, c: Constants, N: int, eps: fmpq, target: fmpq):
    """Decide whether N passes Theorem C.13 for (eps, target); return (reason, C13, delta_N or None).

    Conditions are tested in the order alpha-bar > 0, (47), eps >= s_N, delta_N(eps) <= target; the
    first that the balls prove false is the reason. Raises UndecidedError if one is undecided.
    """
    q = theorem_C13(problem, c, N)
    if not decide(q.alpha_bar, ">", 0, f"alpha-bar > 0 at N = {N}"):
        return FAIL_ALPHA, q, None
    if not decide(q.radius_step, "<=", q.radius_gap, f"radius condition (47) at N = {N}"):
        return FAIL_RADIUS, q, None
    if not decide(eps, ">=", q.s_N, f"eps >= s_N at N = {N}"):
        return FAIL_EPS, q, None
    delta = truncation_mass(problem) + divergence_term(c, eps, q.s_N)
    if not decide(delta, "<=", target, f"delta_N(eps) <= target at N = {N}"):
        return FAIL_DELTA, q, delta
    return PASS, q, delta
