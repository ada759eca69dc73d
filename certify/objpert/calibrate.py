"""Calibration to a target (eps, delta): Corollary 4.13 of Watkins-Arora, and a sharper Theorem C.13 route.

Corollary 4.13 (0 < eps <= 1, delta, delta_S in (0, 1), public radius W > 0, G = 2 L_l/n):

    u = sqrt(2 log(2/delta)),  sigma = 4 G u/eps,  mu_priv = L2 zeta^2/(n (e^(eps/4) - 1)),
    A = d sigma^2 + 16 L_l^2 (32 + log(1/delta_S))/n,  mu_util = sqrt(2A)/W,  mu = max{mu_util, mu_priv},
    eta = 1/L with L = mu + L2 zeta^2, and N satisfying (7) and
    c_N = (G/sigma) rho^(N/2) + G^2 (2 rho^(N/2) + rho^N)/(2 sigma^2) + (e eta mu/2) min{1, MG/L} N rho^(N/2) <= eps/4.

Its proof: q(mu) = log(1 + L2 zeta^2/(n mu)) <= eps/4, G^2/(2 sigma^2) <= eps/32, so Theorem 4.1 at
eps-hat = eps_0 + (G/sigma) u gives eps-hat <= 25 eps/32 < eps, and
delta-hat = e^(-u^2/2) + (2G/sigma) Q1(u) < delta.

u, sigma and mu are irrational; a released mechanism needs exact public numbers. We publish
u_pub >= u and mu_pub >= mu (decimals rounded up) and sigma = 4 G u_pub/eps exactly: every step of
the proof survives (e^(-u_pub^2/2) <= delta/2, (G/sigma) u_pub = eps/4, q(mu_pub) <= q(mu)), and each
step is evaluated and decided in balls at the published values.

Sharper (Theorem C.13, beyond the paper): at the same sigma, mu the first N certified by Theorem C.13
(witnessed as in :mod:`certify.objpert.certificates`), and at fixed N, mu a bracket
[s_fail, s_pass] of exact dyadic noise multipliers sigma/G, s_fail certified to fail and s_pass to
pass. Pass/fail is not proven monotone in sigma (r_u and R-bar grow with sigma), so the bracket
certifies a change of verdict found by bisection, not global minimality.
"""

from __future__ import annotations

from ..balls import (
    MAX_EXPONENT,
    check_magnitude,
    exact_in,
    InputError,
    Tri,
    arb,
    ball,
    certain_ceil,
    compare,
    ctx,
    escalate,
    exact,
    exact_int,
    exact_str,
    fmpq,
    upper_decimal,
    decide,
)
from ..bracket import grow_then_bisect
from ..certificate import Budget, Certificate, Evaluation, witness_field, witness_int
from ..limits import cap, refuse_above, scaled
from ..verify import register
from . import privacy as P
from . import utility as U
from .certificates import (
    PROBLEM_INPUTS,
    _evaluate_c13,
    _int_field,
    c13_seconds,
    check_threshold_range,
    parse_epsilon,
    parse_iterations,
    parse_target_delta,
    search_c13,
)
from .problem import GLMProblem, Loss, constants, loss_from_inputs, make_loss, make_problem, problem_from_inputs

KIND_COR = "objpert/calibration-4.13"
KIND_C13 = "objpert/calibration-C13"
PUBLISH_DIGITS = 8


# --------------------------------------------------------------------------------------------
# Corollary 4.13 quantities
# --------------------------------------------------------------------------------------------
def u_exact(delta: fmpq) -> arb:
    """u = sqrt(2 log(2/delta)) (Corollary 4.13)."""
    return (2 * ball(2 / delta).log()).sqrt()


def L_ell(loss: Loss, zeta: fmpq) -> fmpq:
    """L_l = L1 zeta (per-sample gradient bound, Theorem E.10)."""
    return loss.L1 * zeta


def mu_priv(loss: Loss, zeta: fmpq, n: int, eps: fmpq) -> arb:
    """mu_priv = L2 zeta^2/(n (e^(eps/4) - 1)) (Corollary 4.13)."""
    return ball(loss.L2 * zeta**2 / n) / (ball(eps) / 4).expm1()


def A_term(loss: Loss, zeta: fmpq, n: int, d: int, sigma: fmpq, delta_S: fmpq) -> arb:
    """A = d sigma^2 + 16 L_l^2 (32 + log(1/delta_S))/n (Section 4.3, Corollary 4.13)."""
    Ll = L_ell(loss, zeta)
    return ball(d * sigma**2) + ball(16 * Ll**2 / n) * (32 + ball(1 / delta_S).log())


def mu_util(A: arb, W: fmpq) -> arb:
    """mu_util = sqrt(2A)/W (Corollary 4.13)."""
    return (2 * A).sqrt() / ball(W)


def c_N(problem: GLMProblem, c, N: int) -> arb:
    """c_N of Corollary 4.13."""
    h = P.rho_half_power(c, N)
    gs = c.G / c.sigma
    return gs * h + gs * gs * (2 * h + h * h) / 2 + arb.const_e() * c.eta * c.mu / 2 * c.min_1_MG_over_L * N * h


def q_mu(problem: GLMProblem) -> arb:
    """q(mu) = log(1 + L2 zeta^2/(n mu)) (proof of Corollary 4.13)."""
    return ball(problem.loss.L2 * problem.zeta**2 / (problem.n * problem.mu)).log1p()


def _check_targets(eps, delta, delta_S, W):
    e = exact_in(eps, "--epsilon", 0, 1, "(]")
    if not 0 < e <= 1:
        raise InputError("--epsilon", f"Corollary 4.13 needs 0 < eps <= 1, got {exact_str(e)}")
    d = exact_in(delta, "--delta", 0, 1)
    dS = exact_in(delta_S, "--delta-S", 0, 1)
    w = exact_in(W, "--comparator-norm", 0, what="W")
    return e, d, dS, w


def _base_inputs(n, d, zeta, loss: Loss, eps, delta, delta_S, W) -> dict:
    return {
        "n": str(n),
        "d": str(d),
        "zeta": exact_str(zeta),
        "loss": loss.name,
        "L1": exact_str(loss.L1),
        "L2": exact_str(loss.L2),
        "L3": loss.L3_text(),
        "epsilon": exact_str(eps),
        "delta": exact_str(delta),
        "delta_S": exact_str(delta_S),
        "comparator_norm": exact_str(W),
    }


COR_INPUTS = ("n", "d", "zeta", "loss", "L1", "L2", "L3", "epsilon", "delta", "delta_S", "comparator_norm")
COR_WITNESSES = ("u", "noise_multiplier", "mu", "iterations", "threshold7_ceiling")


def validate_corollary_4_13(inputs: dict):
    """The producer's validators on a certificate's inputs: (loss, eps, delta, delta_S, W, n, d, zeta)."""
    loss = loss_from_inputs(inputs)
    e, dl, dS, w, n, d, z = parse_calibration(
        inputs["epsilon"], inputs["delta"], inputs["delta_S"], inputs["comparator_norm"], inputs["n"], inputs["d"], inputs["zeta"], loss
    )
    return loss, e, dl, dS, w, n, d, z


def evaluate_corollary_4_13(inputs: dict, witnesses: dict) -> Evaluation:
    """Re-derive the Corollary 4.13 calibration from targets + published parameters (witnesses)."""
    loss, eps, delta, dS, W, n, d, zeta = validate_corollary_4_13(inputs)
    u_pub = exact(witness_field(witnesses, "u", "witnesses.u", str), "witnesses.u")
    s_pub = exact(witness_field(witnesses, "noise_multiplier", "witnesses.noise_multiplier", str), "witnesses.noise_multiplier")
    mu_pub = exact(witness_field(witnesses, "mu", "witnesses.mu", str), "witnesses.mu")
    N = parse_iterations(witness_int(witnesses, "iterations", "witnesses.iterations"), "witnesses.iterations")
    if u_pub <= 0 or mu_pub <= 0:
        raise InputError("witnesses", "u and mu must be > 0")
    if s_pub != 4 * u_pub / eps:
        raise InputError("witnesses", "noise multiplier must equal 4 u/eps (Corollary 4.13)")
    problem = make_problem(n=n, d=d, mu=mu_pub, zeta=zeta, loss=loss, u=u_pub, noise_multiplier=s_pub)
    c = constants(problem)
    ev = Evaluation()
    e_text = exact_str(eps)
    ev.add("u", u_exact(delta), "Cor. 4.13", "u = sqrt(2 log(2/delta))")
    ev.add("u_published", ball(u_pub), "Cor. 4.13", "published truncation parameter (decimal >= u)")
    ev.claim("u_published_ge_u", "published u >= sqrt(2 log(2/delta))", "u_published", ">=", "u", "Cor. 4.13")
    ev.add("noise_multiplier", ball(s_pub), "Cor. 4.13", "sigma/G = 4 u/eps")
    ev.add("sigma", c.sigma, "Cor. 4.13", "sigma = 4 G u/eps")
    ev.add("mu_priv", mu_priv(loss, zeta, n, eps), "Cor. 4.13", "L2 zeta^2/(n (e^(eps/4) - 1))")
    A = ev.add("A", A_term(loss, zeta, n, d, problem.sigma, dS), "Cor. 4.13", "d sigma^2 + 16 L_l^2 (32 + log(1/delta_S))/n")
    ev.add("mu_util", mu_util(A, W), "Cor. 4.13", "sqrt(2A)/W")
    ev.add("mu", ball(mu_pub), "Cor. 4.13", "published mu (decimal >= max{mu_util, mu_priv})")
    ev.claim("mu_ge_mu_priv", "mu >= mu_priv", "mu", ">=", "mu_priv", "Cor. 4.13")
    ev.claim("mu_ge_mu_util", "mu >= mu_util", "mu", ">=", "mu_util", "Cor. 4.13")
    ev.add("eta", c.eta, "Cor. 4.13", "step size 1/L, L = mu + L2 zeta^2")
    ev.add("threshold7", P.threshold_7(c), "(7)", "right-hand side of (7)")
    ev.add("iterations", arb(N), "Cor. 4.13", "smallest N satisfying (7) and c_N <= eps/4", integer=True)
    ev.claim("threshold7_holds", f"N = {N} satisfies (7)", "iterations", ">=", "threshold7", "(7)")
    ev.add("c_N", c_N(problem, c, N), "Cor. 4.13", "finite-N correction c_N")
    quarter = exact_str(eps / 4)
    ev.claim("c_N_small", f"c_N <= eps/4 = {quarter}", "c_N", "<=", quarter, "Cor. 4.13")
    # minimality of N ("smallest N" is a claim): ceil(7) = N7 is witnessed by (7) at N7 and its failure at
    # N7 - 1; every N' in [N7, N-1] has c_N' > eps/4 (re-checked one by one; counted as a claim)
    N7 = witness_int(witnesses, "threshold7_ceiling", "witnesses.threshold7_ceiling")
    if N7 < 1:
        raise InputError("witnesses", "threshold7_ceiling must be >= 1")
    ev.claim("threshold7_ceiling_holds", f"ceil of (7) = {N7} satisfies (7)", str(N7), ">=", "threshold7", "(7)")
    ev.claim("threshold7_ceiling", f"N = {N7 - 1} does not satisfy (7)", "threshold7", ">", str(N7 - 1), "(7)")
    hyps = ["threshold7_holds", "threshold7_ceiling_holds", "threshold7_ceiling"]
    N7_true = certain_ceil(P.threshold_7(c))
    if N > 100 * max(N7_true or N7, 1000) or N - N7 > cap("cor413_scan"):
        raise InputError(
            "witnesses.iterations",
            f"is beyond the producer's search range (N - ceil(7) at most {cap('cor413_scan')} and N <= 100 max(ceil(7), 1000)), got N = {N}",
        )
    if N > N7:
        fails = sum(1 for M in range(N7, N) if compare(c_N(problem, c, M), ">", eps / 4) is Tri.TRUE)
        ev.add(
            "smaller_counts_failing_c_N",
            arb(fails),
            "Cor. 4.13",
            f"counts N' in [ceil(7), N-1] = [{N7}, {N - 1}] re-checked to have c_N' > eps/4",
            integer=True,
        )
        ev.claim("smaller_counts_fail", f"every N' in [{N7}, {N - 1}] has c_N' > eps/4", "smaller_counts_failing_c_N", ">=", str(N - N7), "Cor. 4.13")
        hyps.append("smaller_counts_fail")
    elif N < N7:
        ev.claim("iterations_at_least_ceiling", f"N = {N} >= ceil of (7) = {N7}", str(N), ">=", str(N7), "(7)")
        hyps.append("iterations_at_least_ceiling")
    ev.add("q_mu", q_mu(problem), "Cor. 4.13", "q(mu) = log(1 + L2 zeta^2/(n mu))")
    ev.claim("q_mu_small", f"q(mu) <= eps/4 = {quarter}", "q_mu", "<=", quarter, "Cor. 4.13")
    ev.add("gaussian_floor", (c.G / c.sigma) ** 2 / 2, "Cor. 4.13", "G^2/(2 sigma^2)")
    ev.claim("gaussian_floor_small", f"G^2/(2 sigma^2) <= eps/32 = {exact_str(eps / 32)}", "gaussian_floor", "<=", exact_str(eps / 32), "Cor. 4.13")
    e0 = ev.add("epsilon0", P.epsilon_0(problem, c, N), "(9)", "eps_0 = G^2/(2 sigma^2) + q(mu) + c_N")
    ev.add("epsilon_hat", e0 + c.G / c.sigma * ball(u_pub), "Cor. 4.13", "eps-hat = eps_0 + (G/sigma) u")
    ev.claim("epsilon_hat_25_32", f"eps-hat <= 25 eps/32 = {exact_str(25 * eps / 32)}", "epsilon_hat", "<=", exact_str(25 * eps / 32), "Cor. 4.13")
    ev.claim("epsilon_hat_lt_eps", f"eps-hat < eps = {e_text}", "epsilon_hat", "<", e_text, "Cor. 4.13")
    ev.add("delta_hat", P.truncation_mass(problem) + 2 * c.G / c.sigma * _Q1u(u_pub), "Cor. 4.13", "delta-hat = e^(-u^2/2) + (2G/sigma) Q1(u)")
    ev.claim("delta_hat_lt_delta", f"delta-hat < delta = {exact_str(delta)}", "delta_hat", "<", exact_str(delta), "Cor. 4.13")
    ev.conclude(
        "dp_corollary_4_13",
        f"the release with sigma/G = {exact_str(s_pub)}, u = {exact_str(u_pub)}, "
        f"mu = {exact_str(mu_pub)}, eta = 1/L, N = {N} is ({e_text}, {exact_str(delta)})-DP (Corollary 4.13)",
        "delta_hat_lt_delta",
        ["u_published_ge_u", "mu_ge_mu_priv", "threshold7_holds", "q_mu_small", "gaussian_floor_small", "epsilon_hat_lt_eps"],
    )
    ev.conclude("iterations_smallest", f"N = {N} is the smallest N satisfying (7) and c_N <= eps/4 = {quarter}", "c_N_small", hyps)
    ev.conclude(
        "mu_utility", f"mu = {exact_str(mu_pub)} >= max{{mu_util, mu_priv}} (the corollary's choice of mu)", "mu_ge_mu_util", ["mu_ge_mu_priv"]
    )
    # utility (Theorem 4.7 at the published parameters; the corollary's display for comparison)
    eopt = ev.add("E_opt", U.E_opt(problem, c, N), "(12)", "E_opt(N) with ||grad F(0;S)|| <= L1 zeta")
    check_E_opt_range(eopt, N)
    ev.add(
        "utility_bound",
        A / ball(mu_pub) + ball(mu_pub * W * W / 2) + 2 * eopt,
        "Thm 4.7 / Cor. 4.13",
        "E_z[R_0(w_N)] - R_0(w-bar) for all ||w-bar|| <= W, probability >= 1 - delta_S",
    )
    mp_, mu_ = ev.quantities["mu_priv"].value, ev.quantities["mu_util"].value
    cor = W * (2 * A).sqrt() + 2 * eopt
    if not (mu_ >= mp_):
        cor = cor + mp_ * ball(W * W) / 2
    ev.add(
        "corollary_utility",
        cor,
        "Cor. 4.13",
        "the corollary's display W sqrt(2A) + mu_priv W^2/2 + 2 E_opt(N) (mu_priv term omitted when mu_util >= mu_priv)",
    )
    ev.budget = Budget(
        arithmetic_rounding=f"ball arithmetic at {ctx.prec} bits",
        publication_rounding=f"u and mu rounded up to {PUBLISH_DIGITS} significant digits",
        quadrature="none",
        tail_truncation="none",
        search_gap="none: every N from ceil(7) to N-1 re-checked to have c_N > eps/4",
    )
    return ev


def check_E_opt_range(eopt: arb, N: int) -> None:
    """InputError naming ``--L1`` unless E_opt(N) of (12) lies in the exact range of a certificate (2^-MAX_EXPONENT ..
    2^MAX_EXPONENT). E_opt shrinks as rho^N with rho = 1 - mu/L = L2 zeta^2/(L2 zeta^2 + mu) (eta = 1/L), and the
    corollary's mu grows as L1 zeta (mu_priv): an extreme --L1 is what drives it out (the other inputs are bounded
    before: mu by its published decimals, N by ``cor413_scan``)."""
    try:
        check_magnitude(eopt)
    except InputError:
        raise InputError(
            "--L1",
            f"E_opt(N) of (12) at N = {N} would lie outside 2^-{MAX_EXPONENT} .. 2^{MAX_EXPONENT} (about 1e-315652 .. 1e315652), "
            "the range a certificate holds exactly (it shrinks as (L2 zeta^2/mu)^N and mu grows as L1 zeta); admissible: "
            "a smaller --L1 or --zeta (at --n 1000000 --d 10000 --zeta 1, L1 up to 1e8700 fits)",
        ) from None


def _Q1u(u: fmpq) -> arb:
    from ..balls import Q1

    return Q1(u)


def corollary_4_13_parameters(eps, delta, delta_S, W, n: int, d: int, zeta: fmpq, loss: Loss) -> dict:
    """Choose the public parameters of Corollary 4.13 (rounded up to exact decimals) and N."""
    u_pub = published_u(delta)
    s_pub = 4 * u_pub / eps
    G = 2 * loss.L1 * zeta / n
    sigma = s_pub * G
    A = A_term(loss, zeta, n, d, sigma, delta_S)
    mu_text = upper_decimal(mu_util(A, W).max(mu_priv(loss, zeta, n, eps)), PUBLISH_DIGITS)
    try:
        mu_pub = exact(mu_text, "mu")
    except InputError:
        raise InputError(
            "--zeta",
            f"the published mu = {mu_text[:16]} of Corollary 4.13 is beyond 1e+-100000 (the decimals a certificate re-reads): "
            "choose a smaller --zeta (feature bound) or --d, or a larger --n or --comparator-norm",
        ) from None
    problem = make_problem(n=n, d=d, mu=mu_pub, zeta=zeta, loss=loss, u=u_pub, noise_multiplier=s_pub)
    c = constants(problem)
    check_threshold_range(P.threshold_7(c), "--epsilon")
    N7, N = corollary_iterations(problem, c, eps)
    return {"u": exact_str(u_pub), "noise_multiplier": exact_str(s_pub), "mu": exact_str(mu_pub), "iterations": N, "threshold7_ceiling": N7}


def published_u(delta: fmpq) -> fmpq:
    """The corollary's published u: sqrt(2 log(2/delta)) rounded up to PUBLISH_DIGITS significant digits."""
    return exact(upper_decimal(u_exact(delta), PUBLISH_DIGITS), "--delta")


def corollary_iterations(problem: GLMProblem, c, eps: fmpq, name: str = "--epsilon") -> tuple[int, int]:
    """(ceil of (7), the corollary's N): the smallest N >= ceil(7) with c_N <= eps/4, scanning at most
    ``cor413_scan`` counts (and N <= 100 max(ceil(7), 1000)); each comparison decided in balls (UndecidedError
    otherwise: the caller raises the precision). The producer's search and the checker's re-derivation of a
    calibration's N (:func:`evaluate_calibration_c13`) are this one loop."""
    N7 = certain_ceil(P.threshold_7(c), "ceil of threshold (7)")
    N = max(N7, 1)
    while True:
        if decide(c_N(problem, c, N), "<=", eps / 4, f"c_N <= eps/4 at N = {N}"):
            return N7, N
        N += 1
        if N > 100 * max(N7, 1000) or N - N7 > cap("cor413_scan"):
            raise InputError(
                name,
                f"no N in [ceil(7), ceil(7) + {min(cap('cor413_scan'), 100 * max(N7, 1000) - N7)}] = [{N7}, {N - 1}] has c_N <= eps/4 "
                "(Corollary 4.13); raise --epsilon (0 < eps <= 1) or --n",
            )


def parse_calibration(eps, delta, delta_S, W, n, d, zeta, loss: Loss):
    e, dl, dS, w = _check_targets(eps, delta, delta_S, W)
    n_, d_ = exact_in(n, "--n", 1, None, "[)", integer=True), exact_in(d, "--d", 1, None, "[)", integer=True)
    if n_ < 1:
        raise InputError("--n", f"must be a positive integer, got {n_}")
    if d_ < 1:
        raise InputError("--d", f"must be a positive integer, got {d_}")
    z = exact_in(zeta, "--zeta", 0, what="feature bound")
    return e, dl, dS, w, n_, d_, z


def certify_corollary_4_13(eps, delta, delta_S, W, n, d, zeta, loss: Loss) -> Certificate:
    e, dl, dS, w, n_, d_, z = parse_calibration(eps, delta, delta_S, W, n, d, zeta, loss)
    inputs = _base_inputs(n_, d_, z, loss, e, dl, dS, w)

    def attempt(prec):
        wit = corollary_4_13_parameters(e, dl, dS, w, n_, d_, z, loss)
        ev = evaluate_corollary_4_13(inputs, wit)
        return Certificate(KIND_COR, inputs, ev, wit, None, prec)

    return escalate(attempt, what="the Corollary 4.13 calibration")


# --------------------------------------------------------------------------------------------
# Sharper calibration by Theorem C.13
# --------------------------------------------------------------------------------------------
def _with_multiplier(problem: GLMProblem, s: fmpq) -> GLMProblem:
    return make_problem(
        n=problem.n, d=problem.d, mu=problem.mu, zeta=problem.zeta, loss=problem.loss, u=problem.u, noise_multiplier=s, eta=problem.eta
    )


def c13_passes(problem: GLMProblem, N: int, eps: fmpq, target: fmpq) -> tuple[bool, str]:
    verdict, _, _ = P.c13_verdict(problem, constants(problem), N, eps, target)
    return verdict == P.PASS, verdict


def sigma_bracket(problem: GLMProblem, N: int, eps: fmpq, target: fmpq, rel_width: fmpq = fmpq(1, 10**6)):
    """Bisection on dyadic sigma/G between a certified failure and a certified pass at fixed N, mu.

    Starts from the problem's own multiplier (which must pass) and halves until a failure.
    """
    hi = problem.noise_multiplier
    ok, why = c13_passes(_with_multiplier(problem, hi), N, eps, target)
    if not ok:
        raise InputError("--noise-multiplier", f"the starting sigma/G = {exact_str(hi)} fails Theorem C.13 at N = {N} ({why}); no bracket to refine")
    reasons = {}

    def passes(s: fmpq) -> bool:
        ok, reasons[s] = c13_passes(_with_multiplier(problem, s), N, eps, target)
        return ok

    lo, hi = grow_then_bisect(
        passes,
        hi / 2,
        hi,
        rel_width,
        grow_up=False,
        too_far=lambda s: s < fmpq(1, 2**40),
        exhausted=InputError("--noise-multiplier", "Theorem C.13 passes for every tried sigma/G down to 2^-40"),
    )
    return lo, reasons[lo], hi


C13_INPUTS = PROBLEM_INPUTS + ("epsilon", "target_delta", "bracket_iterations")
BRACKET_KEYS = frozenset({"fail", "fail_reason", "pass", "note"})
BRACKET_NOTE = "bisection at fixed N and mu; pass/fail is not proven monotone in sigma"


def validate_calibration_c13(inputs: dict):
    """The producer's validators on a certificate's inputs: (problem, eps, target, N)."""
    problem = problem_from_inputs(inputs)
    if problem.noise_multiplier is None:
        raise InputError("inputs", "noise_multiplier (sigma/G) is required for the sigma/G bracket")
    return (
        problem,
        parse_epsilon(inputs["epsilon"], "epsilon"),
        parse_target_delta(inputs["target_delta"], "target_delta"),
        parse_iterations(inputs["bracket_iterations"], "bracket_iterations"),
    )


def evaluate_calibration_c13(inputs: dict, witnesses: dict) -> Evaluation:
    """Re-check the sharper calibration: first N by Theorem C.13 and the sigma/G bracket at fixed N."""
    problem, eps, target, N = validate_calibration_c13(inputs)
    c = constants(problem)
    check_calibrated(problem, c, eps, target, N)
    ev = Evaluation()
    N7 = certain_ceil(P.threshold_7(c))
    _evaluate_c13(ev, problem, c, eps, target, witnesses, max(N7 or 1, N))
    b = witness_field(witnesses, "sigma_bracket", "witnesses.sigma_bracket", dict)
    if set(b) != BRACKET_KEYS or not all(type(v) is str for v in b.values()) or b["note"] != BRACKET_NOTE:
        raise InputError("witnesses", f"sigma_bracket must be an object with keys {sorted(BRACKET_KEYS)} and note {BRACKET_NOTE!r}")
    # the bracket is the one the producer's bisection leaves (its length is decided by the inputs: see work_calibration_c13)
    lo, why, hi = sigma_bracket(problem, N, eps, target)
    if (b["fail"], b["fail_reason"], b["pass"]) != (exact_str(lo), why, exact_str(hi)):
        raise InputError(
            "witnesses.sigma_bracket",
            f"is not the bracket the bisection leaves at N = {N}: certify writes fail = {exact_str(lo)[:60]} ({why}), pass = {exact_str(hi)[:60]}",
        )
    s_fail, s_pass = exact(b["fail"], "fail"), exact(b["pass"], "pass")
    if not 0 < s_fail < s_pass:
        raise InputError("witnesses", "sigma bracket must have 0 < fail < pass")
    ok_f, why_f = c13_passes(_with_multiplier(problem, s_fail), N, eps, target)
    if ok_f or why_f != b["fail_reason"]:
        raise InputError("witnesses", f"sigma/G = {b['fail']} at N = {N}: recorded failure {b['fail_reason']!r} not confirmed ({why_f})")
    p_pass = _with_multiplier(problem, s_pass)
    verdict, _, delta_pass = P.c13_verdict(p_pass, constants(p_pass), N, eps, target)
    if delta_pass is None:
        raise InputError("witnesses", f"sigma/G = {b['pass']} at N = {N} does not pass ({verdict})")
    ev.add("noise_multiplier_fail", ball(s_fail), "Theorem C.13", f"sigma/G certified to fail at N = {N} ({b['fail_reason']})")
    ev.add("noise_multiplier_pass", ball(s_pass), "Theorem C.13", f"sigma/G certified to pass at N = {N}")
    ev.add("noise_multiplier_given", ball(problem.noise_multiplier), "Cor. 4.13", "sigma/G of the starting calibration")
    ev.claim(
        "bracket_not_larger", "certified sigma/G <= the starting sigma/G", "noise_multiplier_pass", "<=", "noise_multiplier_given", "Theorem C.13"
    )
    ev.add(
        "delta_N_at_noise_multiplier_pass",
        delta_pass,
        "(50)",
        f"delta_N(eps) at N = {N} and sigma/G = {b['pass']} (alpha-bar > 0, (47), eps >= s_N proved)",
    )
    t_text = exact_str(target)
    ev.claim(
        "bracket_pass",
        f"at N = {N}, sigma/G = {b['pass']}: delta_N(eps) <= {t_text} (Theorem C.13)",
        "delta_N_at_noise_multiplier_pass",
        "<=",
        t_text,
        "Theorem C.13",
    )
    ev.conclude(
        "sigma_pass",
        f"at N = {N} and the same mu, sigma/G = {b['pass']} gives "
        f"({exact_str(eps)}, {t_text})-DP by Theorem C.13 (sigma/G = {b['fail']} certified to fail)",
        "bracket_pass",
        ["bracket_not_larger"],
    )
    ev.budget = Budget(
        arithmetic_rounding=f"ball arithmetic at {ctx.prec} bits",
        quadrature="none",
        tail_truncation="none",
        search_gap=f"N: none (every smaller N witnessed); sigma/G: bracket of relative width {upper_decimal(ball((s_pass - s_fail) / s_pass), 2)}",
    )
    return ev


def check_calibrated(problem: GLMProblem, c, eps: fmpq, target: fmpq, N: int) -> None:
    """The calibrated inputs of a Theorem C.13 calibration are Corollary 4.13's at (eps, target): u its published u,
    sigma/G = 4 u/eps, eta = 1/L and ``bracket_iterations`` its N (:func:`corollary_iterations`), as ``certify
    calibrate`` hands them over (mu is the corollary's too, but depends on delta_S and W, which this kind does not
    record). InputError naming the input otherwise."""
    u_pub = published_u(target)
    if problem.u != u_pub:
        raise InputError("u", f"must be Corollary 4.13's published u = {exact_str(u_pub)} at delta = {exact_str(target)}")
    if problem.noise_multiplier != 4 * u_pub / eps:
        raise InputError("noise_multiplier", f"must be Corollary 4.13's sigma/G = 4 u/eps = {exact_str(4 * u_pub / eps)}")
    if problem.eta != 1 / (problem.mu + problem.loss.L2 * problem.zeta**2):
        raise InputError("eta", "must be Corollary 4.13's step size 1/L, L = mu + L2 zeta^2")
    N_cor = corollary_iterations(problem, c, eps, "bracket_iterations")[1]
    if N != N_cor:
        raise InputError("bracket_iterations", f"must be Corollary 4.13's N = {N_cor} at these inputs (the calibration brackets sigma/G there)")


def certify_calibration_c13(problem: GLMProblem, eps: fmpq, target: fmpq, N_fixed: int, extra_inputs: dict | None = None) -> Certificate:
    if not isinstance(problem, GLMProblem):
        raise InputError("problem", "must be a GLMProblem (certify.objpert.problem.make_problem)")
    eps, target = parse_epsilon(eps, "--epsilon"), parse_target_delta(target, "--delta")
    N_fixed = parse_iterations(N_fixed, "--iterations")
    if problem.noise_multiplier is None:
        raise InputError("--noise-multiplier", "the sigma/G bracket needs the problem's noise multiplier sigma/G")
    inputs = problem.inputs()
    inputs.update({"epsilon": exact_str(eps), "target_delta": exact_str(target), "bracket_iterations": str(N_fixed)})
    if extra_inputs:
        inputs.update(extra_inputs)

    def attempt(prec):
        c = constants(problem)
        N7 = certain_ceil(P.threshold_7(c))
        wit = {"theorem_C13": search_c13(problem, c, eps, target, max(N7 or 1, N_fixed))}
        lo, why, hi = sigma_bracket(problem, N_fixed, eps, target)
        wit["sigma_bracket"] = {"fail": exact_str(lo), "fail_reason": why, "pass": exact_str(hi), "note": BRACKET_NOTE}
        ev = evaluate_calibration_c13(inputs, wit)
        return Certificate(KIND_C13, inputs, ev, wit, None, prec)

    return escalate(attempt, what="the Theorem C.13 calibration")


def _example_corollary_4_13() -> Certificate:
    return certify_corollary_4_13("1/2", "1e-6", "0.05", "3", 200000, 50, "1", make_loss("logistic"))


def _example_calibration_c13() -> Certificate:
    w = _example_corollary_4_13().witnesses
    p = make_problem(n=200000, d=50, mu=w["mu"], zeta="1", loss=make_loss("logistic"), u=w["u"], noise_multiplier=w["noise_multiplier"])
    return certify_calibration_c13(p, "1/2", "1e-6", w["iterations"])


def c_N_seconds(prec: int) -> float:
    """Upper estimate of one c_N (:func:`c_N`) at ``prec`` bits: measured 7-8 us up to 512 bits, 13 us at 1024,
    25 us at 2048, 0.2 ms at 8192, 0.49 ms at 16384; the model: 20 us (prec/512)^1.3."""
    return 2e-5 * max(1.0, prec / 512) ** 1.3


def work_corollary_4_13(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``objpert/calibration-4.13``: closed forms (0.02 s at 128 bits x prec/128) plus one
    c_N (:func:`c_N_seconds`) per N' in [threshold7_ceiling, iterations - 1] (the minimality of N)."""
    N = _int_field(witnesses, "iterations", "witnesses.iterations")
    N7 = _int_field(witnesses, "threshold7_ceiling", "witnesses.threshold7_ceiling")
    scan = max(0, N - max(N7, 1))
    refuse_above("cor413_scan", scan, "witnesses.iterations")
    return scaled(0.02, prec) + scan * c_N_seconds(prec), "witnesses.iterations"


def work_calibration_c13(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``objpert/calibration-C13``: closed forms (0.04 s at 128 bits x prec/128) plus one
    C.13 verdict (:func:`~certify.objpert.certificates.c13_seconds`) per N in 1..first_passing_iterations and two
    for the sigma bracket."""
    w = witnesses.get("theorem_C13")
    n1 = _int_field(w, "first_passing_iterations", "witnesses.theorem_C13.first_passing_iterations") if isinstance(w, dict) else 0
    refuse_above("c13_iterations", n1, "witnesses.theorem_C13.first_passing_iterations")
    N = exact_int(inputs["bracket_iterations"], "inputs.bracket_iterations")
    scan = min(max(N, 0), cap("cor413_scan"))  # the corollary's N re-derived: at most N - ceil(7) + 1 counts
    c13 = (max(n1, 0) + bracket_verdicts(inputs) + 2) * c13_seconds(prec)
    return scaled(0.04, prec) + scan * c_N_seconds(prec) + c13, (
        "witnesses.theorem_C13.first_passing_iterations" if n1 >= bracket_verdicts(inputs) else "inputs.noise_multiplier"
    )


def bracket_verdicts(inputs: dict) -> int:
    """An upper bound on the Theorem C.13 verdicts of :func:`sigma_bracket` from the recorded sigma/G = s: it halves
    from s until a failure or below 2^-40 (at most log2(s) + 41 halvings), then bisects a bracket of relative width
    1/2 to 1e-6 (at most 21 steps)."""
    s = exact(inputs["noise_multiplier"], "inputs.noise_multiplier")
    return max(0, int(s.p).bit_length() - int(s.q).bit_length() + 1) + 41 + 21 + 1


#: the work model of each kind (:func:`certify.limits.check_work`)
WORK = {KIND_COR: work_corollary_4_13, KIND_C13: work_calibration_c13}

register(KIND_COR, evaluate_corollary_4_13, validate_corollary_4_13, COR_INPUTS, COR_WITNESSES, example=_example_corollary_4_13)
register(KIND_C13, evaluate_calibration_c13, validate_calibration_c13, C13_INPUTS, ("theorem_C13", "sigma_bracket"), example=_example_calibration_c13)
