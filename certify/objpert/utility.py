"""Utility of the released iterate (Watkins-Arora, Section 4.3 and Appendix D).

Each function returns a two-sided ball enclosure of the named bound (callers report its upper
endpoint: the utility statements are upper bounds on expected or high-probability excess risk).

    (12)  E_opt(N) = (L/2) rho^(2N) (b_R^2 d sigma^2 + 2 a_R b_R sigma sqrt(d) + a_R^2)
                     + rho^N (b_R d sigma^2 + a_R sigma sqrt(d)),   a_R = ||grad F(0;S)||/mu, b_R = 1/mu
    Thm 4.10  E_z[F(w_N) - F(w*_S)] <= d sigma^2/(2 mu) + E_opt(N)
    Thm 4.9   E_z[R_mu(w_N) - R_mu(w*)] <= 2 [d sigma^2/(2 mu) + E_opt(N)] + 16 L_l^2 (32 + log(1/delta_S))/(mu n)
    Thm 4.7   E_z[R_0(w_N) - R_0(w-bar)] <= (Thm 4.9 bound) + (mu/2) ||w-bar||^2
    Cor 4.11  r_beta = sigma (sqrt(d) + sqrt(2 log(1/beta))), R_beta = (L_l + r_beta)/mu,
              U_N(beta) = r_beta^2/(2 mu) + (L/2) rho^(2N) R_beta^2 + rho^N r_beta R_beta;
              population 2 U_N(beta) + sample term; unregularized + (mu/2) ||w-bar||^2.

L_l = L1 zeta (Assumption 7 for GLMs, Theorem E.10). a_R uses ||grad F(0;S)|| <= L1 zeta unless the
actual gradient norm is given.
"""

from __future__ import annotations

from ..balls import arb, ball, fmpq
from .problem import Constants, GLMProblem


def a_R(problem: GLMProblem, gradient_norm: fmpq | None = None) -> arb:
    """a_R = ||grad F(0; S)||/mu, with ||grad F(0;S)|| <= L1 zeta (Section 3.1) unless given."""
    g = problem.loss.L1 * problem.zeta if gradient_norm is None else gradient_norm
    return ball(g / problem.mu)


def E_opt(problem: GLMProblem, c: Constants, N: int, gradient_norm: fmpq | None = None) -> arb:
    """Finite-optimization correction E_opt(N) of (12)."""
    a, b = a_R(problem, gradient_norm), ball(1 / problem.mu)
    s, sd = c.sigma, arb(problem.d).sqrt()
    rN = c.rho**N
    return c.L / 2 * rN * rN * (b * b * problem.d * s * s + 2 * a * b * s * sd + a * a) + rN * (b * problem.d * s * s + a * s * sd)


def perturbation_cost(problem: GLMProblem, c: Constants) -> arb:
    """d sigma^2/mu: twice the perturbation term d sigma^2/(2 mu) of Theorem 4.10."""
    return problem.d * c.sigma**2 / c.mu


def sample_term(problem: GLMProblem, delta_S: fmpq) -> arb:
    """16 L_l^2 (32 + log(1/delta_S))/(mu n), L_l = L1 zeta (Theorem 4.9, Theorem E.10 at a = 1)."""
    Ll = ball(problem.loss.L1 * problem.zeta)
    return 16 * Ll * Ll * (32 + ball(1 / delta_S).log()) / (ball(problem.mu) * problem.n)


def empirical_excess(problem: GLMProblem, c: Constants, N: int, gradient_norm=None) -> arb:
    """Theorem 4.10: d sigma^2/(2 mu) + E_opt(N)."""
    return perturbation_cost(problem, c) / 2 + E_opt(problem, c, N, gradient_norm)


def population_excess(problem: GLMProblem, c: Constants, N: int, delta_S: fmpq, gradient_norm=None) -> arb:
    """Theorem 4.9: 2 [d sigma^2/(2 mu) + E_opt(N)] + sample term (probability >= 1 - delta_S over S)."""
    return 2 * empirical_excess(problem, c, N, gradient_norm) + sample_term(problem, delta_S)


def unregularized_excess(problem: GLMProblem, c: Constants, N: int, delta_S: fmpq, W: fmpq, gradient_norm=None) -> arb:
    """Theorem 4.7: Theorem 4.9's bound + (mu/2) ||w-bar||^2 for every comparator with ||w-bar|| <= W."""
    return population_excess(problem, c, N, delta_S, gradient_norm) + ball(problem.mu * W * W / 2)


def r_beta(problem: GLMProblem, c: Constants, beta: fmpq) -> arb:
    """Corollary 4.11: r_beta = sigma (sqrt(d) + sqrt(2 log(1/beta)))."""
    return c.sigma * (arb(problem.d).sqrt() + (2 * ball(1 / beta).log()).sqrt())


def R_beta(problem: GLMProblem, c: Constants, beta: fmpq) -> arb:
    """Corollary 4.11: R_beta = (L_l + r_beta)/mu."""
    return (ball(problem.loss.L1 * problem.zeta) + r_beta(problem, c, beta)) / c.mu


def U_N(problem: GLMProblem, c: Constants, N: int, beta: fmpq) -> arb:
    """Corollary 4.11: U_N(beta) = r_beta^2/(2 mu) + (L/2) rho^(2N) R_beta^2 + rho^N r_beta R_beta."""
    r, R = r_beta(problem, c, beta), R_beta(problem, c, beta)
    rN = c.rho**N
    return r * r / (2 * c.mu) + c.L / 2 * rN * rN * R * R + rN * r * R
