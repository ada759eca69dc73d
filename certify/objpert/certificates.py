"""Certificates for Watkins-Arora: producers (which search) and evaluators (which only re-check).

Kinds:

* ``objpert/theorem-4.1``: the (eps, delta)-DP claim of Theorem 4.1 at an iteration count N (given,
  or the smallest integer satisfying (7)); with a target delta also the first N certified by
  Theorem C.13 at the radii of Appendix C.4, witnessed by the reason each smaller N fails.
* ``objpert/gaussian-benchmark``: Appendix C.5, the exact Gaussian profile and the integrated-tail
  bound that dominates it.

An evaluator recomputes every quantity and claim from the recorded inputs and witnesses at the
current working precision; producers run the search, then call the same evaluator, so what is
written is exactly what the checker will re-derive.
"""

from __future__ import annotations

from ..balls import (
    exact_in,
    MAX_INT_DIGITS,
    InputError,
    Tri,
    arb,
    ball,
    certain_ceil,
    compare,
    escalate,
    exact,
    exact_int,
    ctx,
    exact_str,
    fmpq,
    lower_decimal,
    upper_decimal,
    decide,
)
from ..certificate import Budget, Certificate, Evaluation, reported_bound, witness_field, witness_int
from ..limits import cap, refuse_above, scaled
from ..verify import register
from . import privacy as P
from . import utility as U
from .benchmark import gaussian_profile, integrated_tail_bound
from .problem import GLMProblem, constants, positive_int, problem_from_inputs

KIND_41 = "objpert/theorem-4.1"
KIND_C5 = "objpert/gaussian-benchmark"
RULE_SMALLEST = "smallest integer satisfying (7)"
RULE_GIVEN = "given"
REPORT_DIGITS = 3  # significant digits of the delta printed in the (eps, delta) claim
C13_RADII = "r = r_u, r' = r_u + 2LG/mu (Appendix C.4)"


# --------------------------------------------------------------------------------------------
# Evaluator: Theorem 4.1 (+ Theorem C.13 witnesses)
# --------------------------------------------------------------------------------------------
PROBLEM_INPUTS = ("n", "d", "mu", "zeta", "loss", "L1", "L2", "L3", "sigma", "u", "eta", "noise_multiplier")
UTILITY_INPUTS = ("delta_S", "comparator_norm", "beta", "gradient_norm")
THEOREM_4_1_INPUTS = PROBLEM_INPUTS + ("epsilon", "iterations", "target_delta") + UTILITY_INPUTS
THEOREM_4_1_WITNESSES = ("iterations", "iterations_rule", "reported_delta", "theorem_C13")


def parse_epsilon(value, name: str = "--epsilon") -> fmpq:
    """epsilon > 0, exact (Theorem 4.1, Theorem C.13)."""
    return exact_in(value, name, 0)


def parse_target_delta(value, name: str = "--delta") -> fmpq:
    """A target delta in (0, 1), exact."""
    return exact_in(value, name, 0, 1)


def parse_iterations(value, name: str = "--iterations") -> int:
    """An iteration count N >= 1."""
    return positive_int(value, name)


def validate_theorem_4_1(inputs: dict):
    """The producer's validators applied to a certificate's inputs: (problem, eps, N or None, target or None)."""
    problem = problem_from_inputs(inputs)
    eps = parse_epsilon(inputs["epsilon"], "epsilon")
    N = parse_iterations(inputs["iterations"], "iterations") if "iterations" in inputs else None
    target = parse_target_delta(inputs["target_delta"], "target_delta") if "target_delta" in inputs else None
    if any(k in inputs for k in UTILITY_INPUTS):
        missing = [k for k in ("delta_S", "comparator_norm", "beta") if k not in inputs]
        if missing:
            raise InputError("inputs", f"utility inputs incomplete: missing {', '.join(missing)}")
        utility_inputs(inputs["delta_S"], inputs["comparator_norm"], inputs["beta"], inputs.get("gradient_norm"))
    return problem, eps, N, target


def loss_hypothesis(problem) -> str:
    """What a conclusion rests on about the loss: a preset's known constants, or the user's constants as given."""
    if problem.loss.name == "logistic":
        return "logistic loss: L1 = 1, L2 = 1/4, L3 = 1/(6*sqrt(3))"
    return "custom loss: its constants L1, L2, L3 are the user's, as recorded, and are not checked"


def evaluate_theorem_4_1(inputs: dict, witnesses: dict) -> Evaluation:
    """Recompute the Theorem 4.1 certificate (and its C.13 part) from inputs and witnesses."""
    problem, eps, N_given, target = validate_theorem_4_1(inputs)
    eps_text = exact_str(eps)
    c = constants(problem)
    ev = Evaluation()

    ev.add("d_star", arb(problem.d_star), "(2)", "d* = min{d, n+1}", integer=True)
    ev.add("L", ball(problem.L), "Lemma B.1", "smoothness L = mu + L2 zeta^2")
    ev.add("M", c.M, "Lemma B.2", "Hessian Lipschitz constant M = L3 zeta^3")
    ev.add("G", c.G, "Lemma B.5", "gradient sensitivity G = 2 L1 zeta / n")
    ev.add("Delta_H", c.Delta_H, "Section 3.1", "Delta_H = 2 L2 zeta^2")
    ev.add("eta", c.eta, "Section 3.2", "step size")
    ev.add("rho", c.rho, "Section 3.2", "contraction rho = 1 - eta mu")
    ev.add("sigma", c.sigma, "Theorem 4.1", "noise standard deviation")
    ev.add("r_u", c.r_u, "Theorem 4.1", "r_u = sigma (sqrt(d*) + u)")
    ev.add("r_prime", c.r_prime, "Theorem 4.1", "r' = r_u + 2 L G / mu")
    ev.add("R_bar", c.R_bar, "Theorem 4.1", "R-bar = (r' + L1 zeta)/mu")
    ev.add("B", c.B, "Lemma A.9", "B = 1/mu")
    ev.add("threshold7", P.threshold_7(c), "(7)", "right-hand side of the iteration threshold")

    rule = witness_field(witnesses, "iterations_rule", "witnesses.iterations_rule", str)
    N = witness_int(witnesses, "iterations", "witnesses.iterations")
    if N_given is not None:
        if rule != RULE_GIVEN or N_given != N:
            raise InputError("witnesses", "iterations witness disagrees with the given iteration count")
    elif rule != RULE_SMALLEST:
        raise InputError("witnesses", f"iterations_rule must be {RULE_SMALLEST!r} when N is not an input")
    if N < 1:
        raise InputError("witnesses", "iteration count must be >= 1")
    ev.add("iterations", arb(N), "(7)", f"iteration count N ({rule})", integer=True)
    ev.claim("threshold7_holds", f"N = {N} satisfies (7)", "iterations", ">=", "threshold7", "(7)")
    if rule == RULE_SMALLEST:
        ev.claim("threshold7_smallest", f"N - 1 = {N - 1} does not satisfy (7)", "threshold7", ">", str(N - 1), "(7)")

    ev.add("rho_half_N", P.rho_half_power(c, N), "(9)", "rho^(N/2)")
    ev.add("tau_star", P.tau_star(problem, c, N), "(8)", "log-determinant term tau*")
    ev.add(
        "epsilon0_gaussian", P.gaussian_terms_9(c, N), "(9)", "Gaussian-ratio part of eps_0: (G/sigma) rho^(N/2) + G^2 (1 + rho^(N/2))^2/(2 sigma^2)"
    )
    e0 = ev.add("epsilon0", P.epsilon_0(problem, c, N), "(9)", "smallest certified epsilon eps_0")
    ev.claim("epsilon_admissible", f"eps = {eps_text} >= eps_0", eps_text, ">=", "epsilon0", "(9)")
    trunc = ev.add("delta_truncation", P.truncation_mass(problem), "(10)", "truncation mass e^(-u^2/2)")
    div = ev.add("delta_divergence", P.divergence_term(c, eps, e0), "(10)", "divergence term (2G/sigma) Q1((sigma/G)(eps - eps_0))")
    ev.add("delta", trunc + div, "(10)", f"delta(eps) at eps = {eps_text}: upper bound on the privacy profile")
    reported = reported_bound(witnesses["reported_delta"], ev.quantities["delta"].value, REPORT_DIGITS, "witnesses.reported_delta")
    if exact(reported, "witnesses.reported_delta") <= 0:
        raise InputError("witnesses.reported_delta", "must be > 0")
    ev.claim("dp_4_1", f"the release is ({eps_text}, {reported})-DP by Theorem 4.1 (delta <= {reported})", "delta", "<=", reported, "Theorem 4.1")
    ev.conclude(
        "dp_theorem_4_1",
        f"after N = {N} iterations the release is ({eps_text}, {reported})-DP (Theorem 4.1; {loss_hypothesis(problem)})",
        "dp_4_1",
        ["threshold7_holds", "epsilon_admissible"],
    )
    if rule == RULE_SMALLEST:
        ev.conclude("iterations_smallest", f"N = {N} is the smallest iteration count satisfying (7)", "threshold7_smallest", ["threshold7_holds"])
    if "delta_S" in inputs:
        _evaluate_utility(ev, problem, c, N, inputs)
    if target is not None:
        target_text = exact_str(target)
        ev.claim("target_4_1", f"Theorem 4.1 at N = {N}: delta(eps) <= target {target_text}", "delta", "<=", target_text, "Theorem 4.1")
        _evaluate_c13(ev, problem, c, eps, target, witnesses, N)
    elif "theorem_C13" in witnesses:
        raise InputError("witnesses.theorem_C13", "certify writes the Theorem C.13 search only with a target delta (inputs.target_delta)")
    ev.budget = Budget(
        arithmetic_rounding="all width is ball-arithmetic rounding of closed forms at "
        f"{ctx.prec} bits; radius of delta: "
        f"{upper_decimal(ev.quantities['delta'].value.rad(), 3)}",
        quadrature="none (Q1 in closed form via the confluent hypergeometric U)",
        tail_truncation="none",
        search_gap="none: every N below the first passing count is witnessed to fail" if target is not None else "no search",
    )
    return ev


def utility_inputs(delta_S=None, comparator_norm=None, beta=None, gradient_norm=None) -> dict[str, str]:
    """Validate the utility parameters (defaults: delta_S = 0.01, W = 1, beta = 0.05) as exact text."""
    dS = exact_in("1/100" if delta_S is None else delta_S, "--delta-S", 0, 1)
    W = exact_in("1" if comparator_norm is None else comparator_norm, "--comparator-norm", 0, what="W")
    b = exact_in("1/20" if beta is None else beta, "--beta", 0, 1)
    d = {"delta_S": exact_str(dS), "comparator_norm": exact_str(W), "beta": exact_str(b)}
    if gradient_norm is not None:
        g = exact_in(gradient_norm, "--gradient-norm", 0, None, "[)", what="||grad F(0;S)||")
        d["gradient_norm"] = exact_str(g)
    return d


def _evaluate_utility(ev: Evaluation, problem: GLMProblem, c, N: int, inputs: dict) -> None:
    """Section 4.3 utility bounds at the iteration count N (upper bounds)."""
    u = utility_inputs(inputs["delta_S"], inputs["comparator_norm"], inputs["beta"], inputs.get("gradient_norm"))
    dS, W, beta = exact(u["delta_S"]), exact(u["comparator_norm"]), exact(u["beta"])
    g = exact(u["gradient_norm"]) if "gradient_norm" in u else None
    src = "given ||grad F(0;S)||" if g is not None else "||grad F(0;S)|| <= L1 zeta"
    ev.add("E_opt", U.E_opt(problem, c, N, g), "(12)", f"finite-optimization correction E_opt(N) ({src})")
    ev.add("perturbation_cost", U.perturbation_cost(problem, c), "Theorem 4.10", "d sigma^2/mu")
    ev.add("empirical_excess", U.empirical_excess(problem, c, N, g), "Theorem 4.10", "E_z[F(w_N) - F(w*_S)] <= d sigma^2/(2 mu) + E_opt(N)")
    ev.add("sample_term", U.sample_term(problem, dS), "Theorem 4.9", "16 L_l^2 (32 + log(1/delta_S))/(mu n)")
    ev.add(
        "population_excess", U.population_excess(problem, c, N, dS, g), "Theorem 4.9", "E_z[R_mu(w_N) - R_mu(w*)], probability >= 1 - delta_S over S"
    )
    ev.add(
        "unregularized_excess", U.unregularized_excess(problem, c, N, dS, W, g), "Theorem 4.7", "E_z[R_0(w_N)] - R_0(w-bar) for every ||w-bar|| <= W"
    )
    ev.add("r_beta", U.r_beta(problem, c, beta), "Corollary 4.11", "r_beta = sigma (sqrt(d) + sqrt(2 log(1/beta)))")
    ev.add("R_beta", U.R_beta(problem, c, beta), "Corollary 4.11", "R_beta = (L_l + r_beta)/mu")
    un = ev.add("U_N", U.U_N(problem, c, N, beta), "Corollary 4.11", "F(w_N) - F(w*_S) <= U_N(beta) with probability >= 1 - beta over Z")
    st = ev.quantities["sample_term"].value
    ev.add(
        "single_release_population", 2 * un + st, "Corollary 4.11", "R_mu(w_N) - R_mu(w*) <= 2 U_N + sample term, probability >= 1 - delta_S - beta"
    )
    ev.add(
        "single_release_unregularized",
        2 * un + st + ball(problem.mu * W * W / 2),
        "Corollary 4.11",
        "R_0(w_N) - R_0(w-bar) for every ||w-bar|| <= W, same event",
    )


def c13_cap(N_ref: int) -> int:
    """The largest N the Theorem C.13 search tries (and the checker accepts): max(20 N_ref, 1000), at most
    the cap ``c13_iterations`` of :data:`certify.limits.LIMITS`."""
    return min(max(20 * N_ref, 1000), cap("c13_iterations"))


def c13_seconds(prec: int) -> float:
    """Upper estimate of one Theorem C.13 verdict (:func:`certify.objpert.privacy.c13_verdict`) at ``prec`` bits.

    Measured (2-core machine, shared): 0.09 ms at 128 and 256 bits, 2.3 ms at 512, 3.2 ms at 1024, 5.1 ms at
    2048, 23 ms at 8192, 65 ms at 16384 (the confluent-U evaluation of Q1 changes algorithm above 256 bits);
    the model doubles it: 0.2 ms up to 256 bits, 6 ms (prec/1024)^1.2 beyond."""
    return 2e-4 if prec <= 256 else 6e-3 * max(1.0, prec / 1024) ** 1.2


def _int_field(container: dict, key: str, name: str) -> int:
    """An integer recorded in a certificate (JSON integer or exact text), for the work model."""
    return exact_int(container[key], name)


def work_theorem_4_1(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``objpert/theorem-4.1``: closed forms (0.06 s at 128 bits, x prec/128) plus one
    C.13 verdict (:func:`c13_seconds`) per N in 1..first_passing_iterations (the failure list and the pass)."""
    base = scaled(0.06, prec)
    w = witnesses.get("theorem_C13")
    if not isinstance(w, dict) or "target_delta" not in inputs:
        return base, "inputs"
    n1 = _int_field(w, "first_passing_iterations", "witnesses.theorem_C13.first_passing_iterations")
    refuse_above("c13_iterations", n1, "witnesses.theorem_C13.first_passing_iterations")
    return base + max(n1, 0) * c13_seconds(prec), "witnesses.theorem_C13.first_passing_iterations"


def work_gaussian_benchmark(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``objpert/gaussian-benchmark``: closed forms, 0.01 s at 128 bits x prec/128."""
    return scaled(0.01, prec), "inputs"


def _evaluate_c13(ev: Evaluation, problem: GLMProblem, c, eps: fmpq, target: fmpq, witnesses: dict, N_ref: int) -> None:
    w = witnesses.get("theorem_C13")
    if not isinstance(w, dict):
        raise InputError("witnesses", "theorem_C13 witness missing")
    unknown = set(w) - {"first_passing_iterations", "failures", "radii"}
    if unknown:
        raise InputError("witnesses", f"theorem_C13: unknown key(s) {sorted(map(str, unknown))}"[:200])
    if witness_field(w, "radii", "witnesses.theorem_C13.radii", str) != C13_RADII:
        raise InputError("witnesses", f"theorem_C13.radii must be {C13_RADII!r}")
    N1 = witness_int(w, "first_passing_iterations", "witnesses.theorem_C13.first_passing_iterations")
    if not 1 <= N1 <= c13_cap(N_ref):
        raise InputError("witnesses.theorem_C13.first_passing_iterations", f"must be in [1, {c13_cap(N_ref)}] (the search range), got {N1}")
    runs = witness_field(w, "failures", "witnesses.theorem_C13.failures", list)
    expected_from = 1
    last_fail = None
    previous = None
    for i, run in enumerate(runs):
        where = f"witnesses.theorem_C13.failures[{i}]"
        if not isinstance(run, dict) or set(run) != {"from", "to", "reason"}:
            raise InputError("witnesses", f"theorem_C13 failure runs are {{from, to, reason}} objects, got {run!r}"[:200])
        lo, hi = witness_int(run, "from", f"{where}.from"), witness_int(run, "to", f"{where}.to")
        reason = witness_field(run, "reason", f"{where}.reason", str)
        if lo != expected_from or not lo <= hi < N1 or reason not in P.REASONS:
            raise InputError("witnesses", f"theorem_C13 failure runs must cover 1..N-1 in order; bad run {run!r}"[:200])
        if reason == previous:  # search_c13 merges consecutive failures with one reason into one run
            raise InputError(where, f"continues the run before it (same reason {reason!r}): certify writes maximal runs")
        previous = reason
        for N in range(lo, hi + 1):
            verdict, q, delta = P.c13_verdict(problem, c, N, eps, target)
            if verdict != reason:
                raise InputError("witnesses", f"Theorem C.13 at N = {N}: recorded reason {reason!r} not confirmed (balls give {verdict!r})")
            last_fail = (N, verdict, q, delta)
        expected_from = hi + 1
    if expected_from != N1:
        raise InputError("witnesses", f"failure runs end at {expected_from - 1}, not at N - 1 = {N1 - 1}")
    ev.add(
        "witnessed_failures", arb(N1 - 1), "Theorem C.13", "number of smaller counts N re-checked to fail, each for its recorded reason", integer=True
    )
    ev.claim("c13_first", f"every N in 1..{N1 - 1} fails Theorem C.13 (witnessed)", "witnessed_failures", ">=", str(N1 - 1), "Theorem C.13")
    verdict, q, delta = P.c13_verdict(problem, c, N1, eps, target)
    ev.add("first_passing_iterations", arb(N1), "Theorem C.13", "first N certified by Theorem C.13", integer=True)
    ev.add("gamma_N", q.gamma_N, "Lemma A.9", "gamma_N = (1 - (1 - eta L)^N)/L")
    ev.add("nu_tilde_N", q.nu_tilde_N, "(22)", "nu~_N")
    ev.add("g_bar_N", q.g_bar_N, "Lemma C.5 (36)", "sup of g_N over [mu, L]")
    ev.add("alpha_bar", q.alpha_bar, "(47)", "alpha-bar = gamma_N - eta M R-bar B nu~_N rho^(N-1)")
    ev.add("radius_step", q.radius_step, "(47)", "G (1 - rho^N)/(mu alpha-bar)")
    ev.add("radius_gap", q.radius_gap, "(47)", "r' - r = 2 L G / mu")
    ev.add("Delta_xi", q.Delta_xi, "(48)", "Delta_xi = 2 mu rho^N R-bar")
    ev.add("tau", q.tau, "(48)", "log-determinant bound tau")
    ev.add("s_N", q.s_N, "C.4", "t-independent part of eps_total (49)")
    eps_text = exact_str(eps)
    ev.claim("alpha_bar_positive", f"alpha-bar > 0 at N = {N1}", "alpha_bar", ">", "0", "(47)")
    ev.claim("radius_condition", f"(47) holds at N = {N1}", "radius_step", "<=", "radius_gap", "(47)")
    ev.claim("epsilon_above_s_N", f"eps = {eps_text} >= s_N", eps_text, ">=", "s_N", "(49)")
    if delta is None:  # N1 fails one of the first three conditions: still record delta_N for the reader
        delta = P.truncation_mass(problem) + P.divergence_term(c, eps, q.s_N)
    ev.add("delta_N", delta, "(50)", f"delta_N(eps) at N = {N1}")
    target_text = exact_str(target)
    ev.claim(
        "dp_C13",
        f"Theorem C.13: the release at N = {N1} is ({eps_text}, delta_N)-DP with delta_N <= {target_text}",
        "delta_N",
        "<=",
        target_text,
        "Theorem C.13",
    )
    ev.conclude(
        "first_passing_c13",
        f"the first N certified by Theorem C.13 (radii of C.4) is N = {N1}: the "
        f"release is ({eps_text}, {target_text})-DP there and every smaller N fails ({loss_hypothesis(problem)})",
        "dp_C13",
        ["c13_first", "alpha_bar_positive", "radius_condition", "epsilon_above_s_N"],
    )
    if last_fail is not None and last_fail[0] == N1 - 1 and last_fail[1] == P.FAIL_DELTA:
        ev.add("delta_N_previous", last_fail[3], "(50)", f"delta_N(eps) at N = {N1 - 1} (fails the target)")


# --------------------------------------------------------------------------------------------
# Producer: Theorem 4.1 (+ C.13 search)
# --------------------------------------------------------------------------------------------
def _bracket(x) -> str:
    return f"[{lower_decimal(x, 8)}, {upper_decimal(x, 8)}]"


#: the largest iteration count accepted (integers have at most MAX_INT_DIGITS = 4000 digits)
MAX_ITERATIONS = fmpq(10) ** MAX_INT_DIGITS


def check_threshold_range(thr, flag: str = "--mu") -> None:
    """Decide the range before the ceiling: threshold (7) above the largest iteration count accepted (10^4000) is a
    refusal naming --mu (the threshold grows like 1/(eta mu)), not a ceiling left undecided at every precision."""
    if thr.is_finite() and thr.lower().fmpq() > MAX_ITERATIONS:
        raise InputError(
            flag,
            f"threshold (7) = {_bracket(thr)} iterations is beyond the largest iteration count accepted (10^{MAX_INT_DIGITS}): "
            "the threshold grows like log(...)/(eta mu); raise mu (or eta)",
        )


def certify_theorem_4_1(problem: GLMProblem, epsilon, iterations=None, target_delta=None, progress=None, utility: dict | None = None) -> Certificate:
    """Produce the Theorem 4.1 certificate (and the C.13 search with a target delta).

    Raises InputError for eps < eps_0, an iteration count below (7), or an unreachable target.
    """
    if not isinstance(problem, GLMProblem):
        raise InputError("problem", "must be a GLMProblem (certify.objpert.problem.make_problem)")
    eps = parse_epsilon(epsilon, "--epsilon")
    target = None if target_delta is None else parse_target_delta(target_delta, "--delta")
    N_given = None if iterations is None else parse_iterations(iterations, "--iterations")

    inputs = problem.inputs()
    inputs["epsilon"] = exact_str(eps)
    if N_given is not None:
        inputs["iterations"] = str(N_given)
    if target is not None:
        inputs["target_delta"] = exact_str(target)
    if utility is not None:
        inputs.update(utility_inputs(**utility))

    def attempt(prec: int) -> Certificate:
        c = constants(problem)
        thr = P.threshold_7(c)
        check_threshold_range(thr)
        if N_given is None:
            N = max(certain_ceil(thr, "ceil of threshold (7)"), 1)
            rule = RULE_SMALLEST
        else:
            N, rule = N_given, RULE_GIVEN
            if not decide(N, ">=", thr, "N >= threshold (7)"):
                raise InputError(
                    "--iterations", f"N = {N} is below threshold (7) = {_bracket(thr)}; Theorem 4.1 needs N >= {certain_ceil(thr) or _bracket(thr)}"
                )
        e0 = P.epsilon_0(problem, c, N)
        if not decide(eps, ">=", e0, "eps >= eps_0"):
            raise InputError("--epsilon", f"must be >= eps_0 = {_bracket(e0)} of (9) at N = {N}, got {exact_str(eps)}")
        delta = P.truncation_mass(problem) + P.divergence_term(c, eps, e0)
        witnesses = {"iterations": N, "iterations_rule": rule, "reported_delta": upper_decimal(delta, REPORT_DIGITS)}
        if target is not None:
            witnesses["theorem_C13"] = search_c13(problem, c, eps, target, N, progress)
        ev = evaluate_theorem_4_1(inputs, witnesses)
        return Certificate(KIND_41, inputs, ev, witnesses, None, prec)

    return escalate(attempt, what="the Theorem 4.1 certificate")


def search_c13(problem: GLMProblem, c, eps: fmpq, target: fmpq, N7: int, progress=None) -> dict:
    """First N >= 1 certified by Theorem C.13 (radii of C.4), with failure runs as witnesses."""
    floor = P.truncation_mass(problem)
    if compare(floor, ">=", target) is Tri.TRUE:
        raise InputError(
            "--delta", f"unreachable: every delta_N(eps) exceeds the truncation mass e^(-u^2/2) = {_bracket(floor)}; raise --u or the target"
        )
    top = c13_cap(N7)
    runs: list[dict] = []
    for N in range(1, top + 1):
        verdict, _, _ = P.c13_verdict(problem, c, N, eps, target)
        if verdict == P.PASS:
            return {"first_passing_iterations": N, "failures": runs, "radii": C13_RADII}
        if runs and runs[-1]["reason"] == verdict and runs[-1]["to"] == N - 1:
            runs[-1]["to"] = N
        else:
            runs.append({"from": N, "to": N, "reason": verdict})
        if progress is not None and N % 500 == 0:
            progress(N)
    raise InputError(
        "--delta",
        f"no N <= {top} is certified by Theorem C.13 for this target (the search tries N in [1, max(20 N, 1000)], at most "
        f"{cap('c13_iterations')}); raise the target delta or the noise",
    )


# --------------------------------------------------------------------------------------------
# Appendix C.5
# --------------------------------------------------------------------------------------------
#: the largest tail argument (sigma/G) eps - G/(2 sigma) of Appendix C.5 whose Gaussian tail a certificate holds
#: exactly (balls between 2^-1048576 and 2^1048576: Phi(-1200) is about 1e-312700)
MAX_BENCHMARK_TAIL = 1200


def parse_benchmark(noise_multiplier, epsilon, names=("--noise-multiplier", "--epsilon")) -> tuple[fmpq, fmpq]:
    """sigma/G > 0 and eps >= G^2/(2 sigma^2) (threshold t >= 0 in Lemma C.12), exact; the tail argument
    (sigma/G) eps - G/(2 sigma) at most MAX_BENCHMARK_TAIL (exact comparison: decided before any evaluation)."""
    s = exact_in(noise_multiplier, names[0], 0, what="sigma/G")
    eps = exact_in(epsilon, names[1], 0, None, "[)", shown=">= G^2/(2 sigma^2)")
    if eps < 1 / (2 * s**2):
        raise InputError(names[1], f"must be >= G^2/(2 sigma^2) = {exact_str(1 / (2 * s**2))} (threshold t >= 0 in Lemma C.12), got {exact_str(eps)}")
    if s * eps - 1 / (2 * s) > MAX_BENCHMARK_TAIL:
        raise InputError(
            names[1],
            f"the benchmark's Gaussian tail would be below 1e-312000 (the smallest number a certificate holds exactly): "
            f"admissible G^2/(2 sigma^2) <= eps <= ({MAX_BENCHMARK_TAIL} + G/(2 sigma)) G/sigma, i.e. (sigma/G) eps - G/(2 sigma) "
            f"<= {MAX_BENCHMARK_TAIL}",
        )
    return s, eps


def validate_gaussian_benchmark(inputs: dict) -> tuple[fmpq, fmpq]:
    return parse_benchmark(inputs["noise_multiplier"], inputs["epsilon"], ("noise_multiplier", "epsilon"))


def evaluate_gaussian_benchmark(inputs: dict, witnesses: dict) -> Evaluation:
    s, eps = validate_gaussian_benchmark(inputs)
    ev = Evaluation()
    eps_text = exact_str(eps)
    ev.add("epsilon_floor", ball(1 / (2 * s**2)), "C.5", "G^2/(2 sigma^2): Gaussian-ratio floor")
    ev.claim("epsilon_admissible", f"eps = {eps_text} >= G^2/(2 sigma^2)", eps_text, ">=", "epsilon_floor", "C.5")
    ev.add("delta_gaussian", gaussian_profile(s, eps), "C.5", "exact Gaussian-mechanism profile delta_G(eps) (Dong et al. 2022, Cor. 2.13)")
    ev.add(
        "delta_integrated_tail",
        integrated_tail_bound(s, eps),
        "C.5 / Lemma C.12",
        "integrated-tail certificate (2G/sigma) Q1((sigma/G)(eps - G^2/(2 sigma^2)))",
    )
    ev.claim("tail_dominates", "delta_G(eps) <= integrated-tail bound", "delta_gaussian", "<=", "delta_integrated_tail", "C.5")
    ev.conclude(
        "benchmark",
        f"at sigma/G = {exact_str(s)}, eps = {eps_text} the integrated-tail certificate "
        "(Lemma C.12) dominates the exact Gaussian profile delta_G(eps)",
        "tail_dominates",
        ["epsilon_admissible"],
    )
    ev.budget = Budget(arithmetic_rounding=f"ball arithmetic at {ctx.prec} bits", quadrature="none", tail_truncation="none", search_gap="no search")
    return ev


def certify_gaussian_benchmark(noise_multiplier, epsilon) -> Certificate:
    s, eps = parse_benchmark(noise_multiplier, epsilon)
    inputs = {"noise_multiplier": exact_str(s), "epsilon": exact_str(eps)}

    def attempt(prec: int) -> Certificate:
        ev = evaluate_gaussian_benchmark(inputs, {})
        return Certificate(KIND_C5, inputs, ev, {}, None, prec)

    return escalate(attempt, what="the C.5 benchmark certificate")


def _example_theorem_4_1() -> Certificate:
    from .tables import example_problem

    return certify_theorem_4_1(example_problem("1/100"), "1", "1500", "1e-7")


#: the work model of each kind (:func:`certify.limits.check_work`)
WORK = {KIND_41: work_theorem_4_1, KIND_C5: work_gaussian_benchmark}

register(KIND_41, evaluate_theorem_4_1, validate_theorem_4_1, THEOREM_4_1_INPUTS, THEOREM_4_1_WITNESSES, example=_example_theorem_4_1)
register(
    KIND_C5,
    evaluate_gaussian_benchmark,
    validate_gaussian_benchmark,
    ("noise_multiplier", "epsilon"),
    (),
    example=lambda: certify_gaussian_benchmark("5", "1"),
)
