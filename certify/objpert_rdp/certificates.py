"""Certificate ``referee/objpert-rdp``: the objective-perturbation Renyi curve at given inputs.

Inputs: L, nu, s, lambda (always); alpha (Renyi order), epsilon, delta (each optional). Quantities:
mu, eps_det, the zCDP constant rho_DP; at alpha: g(alpha), the Renyi bound and rho_DP alpha with the
claim D_alpha <= rho_DP alpha; at epsilon: delta(epsilon); at delta: the witnessed bracket
(eps_lower, eps_upper) with delta(eps_upper) <= delta proved (the release is (eps_upper, delta)-DP
by this profile) and delta(eps_lower) > delta proved (the bracket is tight to the witnessed width).
The evaluator recomputes everything from inputs and witnesses; it never searches.
"""

from __future__ import annotations

from ..balls import InputError, ball, ctx, escalate, exact, exact_str, upper_decimal
from ..certificate import Budget, Certificate, Evaluation, reported_bound, witness_field
from ..limits import scaled
from ..verify import register
from . import curve as C

KIND = "referee/objpert-rdp"
SOURCE = "Corollary 5.2"
INPUTS = ("L", "nu", "s", "lambda", "alpha", "epsilon", "delta")
WITNESSES = ("epsilon_upper", "epsilon_lower", "reported_delta")
REPORT_DIGITS = 10


def validate(inputs: dict):
    """The producer's validators on the inputs: (curve, alpha, epsilon, delta), absent ones None."""
    c = C.make_curve(inputs["L"], inputs["nu"], inputs["s"], inputs["lambda"])
    a = C.check_alpha(inputs["alpha"]) if "alpha" in inputs else None
    e = C.check_epsilon(inputs["epsilon"]) if "epsilon" in inputs else None
    d = C.check_delta(inputs["delta"]) if "delta" in inputs else None
    if a is None and e is None and d is None:
        raise InputError("inputs", "at least one of alpha, epsilon, delta is required")
    return c, a, e, d


def _check_witness_keys(inputs: dict, witnesses: dict) -> None:
    """The producer writes the bracket exactly when delta is an input and reported_delta exactly when epsilon is."""
    if not isinstance(witnesses, dict):
        raise InputError("witnesses", "must be an object")
    want = ({"epsilon_upper", "epsilon_lower"} if "delta" in inputs else set()) | ({"reported_delta"} if "epsilon" in inputs else set())
    if set(witnesses) != want:
        raise InputError("witnesses", f"certify writes exactly {', '.join(sorted(want)) or 'no witness'} for these inputs")


def evaluate(inputs: dict, witnesses: dict) -> Evaluation:
    c, _, _, _ = validate(inputs)
    _check_witness_keys(inputs, witnesses)
    ev = Evaluation()
    ev.add("mu", C.mu(c), "Cor. 5.2", "mu = L/nu")
    ev.add("eps_det", C.eps_det(c), "Cor. 5.2", "determinant term log(1 + s/lambda)")
    rho = ev.add("zcdp_rho", C.zcdp(c), "Cor. 5.2", "zCDP constant rho_DP = eps_det + mu^2/2 + sqrt(2/pi) mu")
    if "alpha" in inputs:
        a = C.check_alpha(inputs["alpha"])
        at = exact_str(a)
        ev.add("g_alpha", C.g(c, a), "Cor. 5.2", f"g({at}) = log(2 Phi(mu (alpha-1)))/(alpha-1)")
        ev.add("renyi_alpha", C.rdp(c, a), "Cor. 5.2", f"Renyi bound D_alpha at alpha = {at}")
        ev.add("zcdp_times_alpha", rho * ball(a), "Cor. 5.2", f"rho_DP * alpha at alpha = {at}")
        ev.claim("renyi_le_zcdp", f"D_{at} <= rho_DP * {at} (zCDP)", "renyi_alpha", "<=", "zcdp_times_alpha", SOURCE)
        ev.conclude(
            "renyi",
            f"the release satisfies Renyi DP of order {at} with D_{at} <= the Renyi bound, and D_{at} <= rho_DP * {at} (Corollary 5.2)",
            "renyi_le_zcdp",
        )
    if "epsilon" in inputs:
        e = C.check_epsilon(inputs["epsilon"])
        de = ev.add("delta_epsilon", C.delta(c, e), "profile", f"delta(eps) at eps = {exact_str(e)} (privacy profile)")
        rd = reported_bound(witnesses.get("reported_delta"), de, REPORT_DIGITS, "witnesses.reported_delta")
        if exact(rd, "witnesses.reported_delta") <= 0:
            raise InputError("witnesses.reported_delta", "must be exact text > 0 (the reported delta(eps))")
        ev.claim("dp_at_epsilon", f"delta({exact_str(e)}) <= {rd}", "delta_epsilon", "<=", rd, "profile")
        ev.conclude("dp_epsilon", f"the release is ({exact_str(e)}, {rd})-DP (privacy profile of Corollary 5.2)", "dp_at_epsilon")
    if "delta" in inputs:
        d = C.check_delta(inputs["delta"])
        dt = exact_str(d)
        # the bracket is the one the producer's search leaves (C.epsilon_bracket: at most 200 steps, see work)
        lo_want, hi_want = C.epsilon_bracket(c, d)
        recorded = (witness_field(witnesses, "epsilon_lower", "witnesses.epsilon_lower", type(None) if lo_want is None else str),)
        recorded += (witness_field(witnesses, "epsilon_upper", "witnesses.epsilon_upper", str),)
        if recorded != (None if lo_want is None else exact_str(lo_want), exact_str(hi_want)):
            raise InputError(
                "witnesses.epsilon_upper",
                f"(epsilon_lower, epsilon_upper) is not the bracket the search leaves: certify writes "
                f"({'none' if lo_want is None else exact_str(lo_want)[:60]}, {exact_str(hi_want)[:60]}]",
            )
        hi = exact(witnesses["epsilon_upper"], "witnesses.epsilon_upper")
        ev.add("epsilon_upper", ball(hi), "profile", "witnessed epsilon with delta(epsilon) <= delta")
        ev.add("delta_at_epsilon_upper", C.delta(c, hi), "profile", f"delta at eps = {exact_str(hi)}")
        ev.claim(
            "dp_at_delta", f"the release is ({exact_str(hi)}, {dt})-DP (delta(eps_upper) <= {dt})", "delta_at_epsilon_upper", "<=", dt, "profile"
        )
        ev.conclude("dp_delta", f"the release is ({exact_str(hi)}, {dt})-DP (privacy profile of Corollary 5.2)", "dp_at_delta")
        lo_text = witnesses.get("epsilon_lower")
        if lo_text is not None:
            lo = exact(lo_text, "witnesses.epsilon_lower")
            if not lo < hi:
                raise InputError("witnesses", "epsilon_lower must be < epsilon_upper")
            ev.add("epsilon_lower", ball(lo), "profile", "witnessed epsilon with delta(epsilon) > delta")
            ev.add("delta_at_epsilon_lower", C.delta(c, lo), "profile", f"delta at eps = {exact_str(lo)}")
            ev.claim(
                "bracket_lower", f"delta({exact_str(lo)}) > {dt}: no epsilon below the bracket works", "delta_at_epsilon_lower", ">", dt, "profile"
            )
            ev.conclude(
                "bracket",
                f"the smallest epsilon with delta(epsilon) <= {dt} lies in ({exact_str(lo)}, {exact_str(hi)}]",
                "bracket_lower",
                ["dp_at_delta"],
            )
        elif hi != 0:
            raise InputError("witnesses", "epsilon_lower is required unless epsilon_upper = 0")
    ev.budget = Budget(
        arithmetic_rounding=f"ball arithmetic at {ctx.prec} bits (closed forms; Phi via erfc / confluent U)",
        quadrature="none",
        tail_truncation="none",
        search_gap=("epsilon bracket of relative width <= 1e-9 (witnessed both ways)" if "delta" in inputs else "no search"),
    )
    return ev


def certify_curve(L, nu, s, lam, alpha=None, epsilon=None, delta=None) -> Certificate:
    """Producer: validate, search the epsilon bracket (if delta is given), evaluate, certificate.

    Every number exact (str, int, fractions.Fraction or fmpq; floats refused), validated like the CLI.
    """
    c = C.make_curve(L, nu, s, lam)
    inputs = c.inputs()
    if alpha is not None:
        inputs["alpha"] = exact_str(C.check_alpha(alpha))
    if epsilon is not None:
        inputs["epsilon"] = exact_str(C.check_epsilon(epsilon))
        C.check_profile_range(c, exact(inputs["epsilon"]))
    if delta is not None:
        inputs["delta"] = exact_str(C.check_delta(delta))
        C.check_profile_range(c)
    if alpha is None and epsilon is None and delta is None:
        raise InputError("--alpha", "give at least one of --alpha, --epsilon, --delta")

    def attempt(prec: int) -> Certificate:
        witnesses = {}
        if delta is not None:
            lo, hi = C.epsilon_bracket(c, exact(inputs["delta"], "--delta"))
            witnesses = {"epsilon_upper": exact_str(hi), "epsilon_lower": None if lo is None else exact_str(lo)}
        if epsilon is not None:
            e = exact(inputs["epsilon"], "--epsilon")
            witnesses["reported_delta"] = upper_decimal(C.delta(c, e), REPORT_DIGITS)
        ev = evaluate(inputs, witnesses)
        return Certificate(KIND, inputs, ev, witnesses, None, prec)

    return escalate(attempt, what="the objective-perturbation Renyi certificate")


#: the most evaluations of delta(eps) the bracket search makes (C.epsilon_bracket: delta(0), then at most 200 steps)
BRACKET_EVALUATIONS = 202


def work(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of the kind: closed forms (measured 3 ms at 128 bits, 30 ms at 4096; model 0.02 s x prec/128), and
    with delta the re-run of the bracket search, at most BRACKET_EVALUATIONS evaluations of delta(eps) (measured
    0.38 ms at 128 bits, 1.6 ms at 1024, 6.8 ms at 4096, 18 ms at 8192; model 0.8 ms x prec/128)."""
    search = BRACKET_EVALUATIONS * scaled(8e-4, prec) if "delta" in inputs else 0.0
    return scaled(0.02, prec) + search, "inputs.delta" if search else "inputs"


#: the work model of the kind (:func:`certify.limits.check_work`)
WORK = {KIND: work}

register(KIND, evaluate, validate, INPUTS, WITNESSES, example=lambda: certify_curve("1", "2", "1/4", "1", alpha="3", epsilon="2", delta="1e-6"))
