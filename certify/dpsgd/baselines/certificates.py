"""Certificates for the certified baseline columns: kinds ``dpsgd/renyi-wang`` and ``dpsgd/renyi-birrell``.

No search is involved: the evaluator recomputes rho(alpha) for every integer alpha in [2, 256] (or the
given alpha) and the conversion (6), and records the enclosure of the minimum over alpha as
``epsilon`` (its upper endpoint is the certified epsilon of that column). The inputs are validated by
the same functions as the producer's (and the CLI's): 0 < p < 1, sigma > 0, integer steps >= 1,
0 < delta < 1, integer alpha in [2, 256], batch_size/dataset_size giving p. The conclusion
"(eps, delta)-DP" rests on the claims for those ranges.
"""

from __future__ import annotations

from ...balls import InputError, arb, ctx, escalate, exact_str, upper_decimal
from ...certificate import Budget, Certificate, Evaluation, reported_bound, witness_int
from ...limits import scaled
from ...verify import register
from ..certificates import (
    CONTRACT_INPUTS,
    REPORT_DIGITS,
    check_batch,
    conclude_dp,
    fixed_size_inputs,
    parse_delta,
    parse_steps,
    validate_fixed_size_contract,
)
from ..problem import ALPHA_MAX, ALPHA_MIN, check_baseline_sigma, parse_alpha, parse_p, parse_sigma
from .columns import _rhos, min_over_alpha, rho_column

KINDS = {"wang": "dpsgd/renyi-wang", "birrell": "dpsgd/renyi-birrell"}
EQUATION = {"wang": "Wang et al. 2019 (dp_accounting, replace-one, fixed size)", "birrell": "Birrell et al. 2024, Thm 3.4"}
NAMES = {"wang": "Wang et al. 2019", "birrell": "Birrell et al. 2024"}
INPUTS = ("sampling_rate", "noise_multiplier", "steps", "delta", "alpha", "batch_size", "dataset_size", "epochs") + CONTRACT_INPUTS
WITNESSES = ("alpha", "reported_epsilon")


def validate(inputs: dict):
    """The producer's validators on the inputs: (p, sigma, steps, delta, alpha or None)."""
    p = parse_p(inputs["sampling_rate"], "sampling_rate")
    sigma = parse_sigma(inputs["noise_multiplier"], "noise_multiplier")
    check_baseline_sigma(sigma, "noise_multiplier")
    check_batch(inputs, p)
    validate_fixed_size_contract(inputs)
    steps = parse_steps(inputs["steps"], "steps")
    delta = parse_delta(inputs["delta"], "delta")
    alpha = parse_alpha(inputs["alpha"], "alpha") if "alpha" in inputs else None
    return p, sigma, steps, delta, alpha


def _evaluate(column: str, inputs: dict, witnesses: dict | None) -> tuple[Evaluation, int, int, object]:
    """The quantities; ``witnesses`` None: the producer, before it records the order it found."""
    p, sigma, T, delta, alpha = validate(inputs)
    ev = Evaluation()
    if alpha is not None:
        alphas = [alpha]
        rhos = [rho_column(column, alpha, p, sigma)]
    else:
        alphas = list(range(ALPHA_MIN, ALPHA_MAX + 1))
        rhos = list(_rhos(column, p, sigma, ctx.prec))
    enc, best_alpha, best_rho = min_over_alpha(alphas, rhos, T, delta)
    if witnesses is not None and witness_int(witnesses, "alpha", "witnesses.alpha") != best_alpha:
        raise InputError("witnesses", "recorded alpha is not the order with the smallest bound")
    ev.add("rho", best_rho, EQUATION[column], f"one-step RDP of the {column} column at alpha = {best_alpha}")
    ev.add("alpha", arb(best_alpha), "(6)", "the Rényi order whose bound is smallest", integer=True)
    ev.add(
        "epsilon",
        enc,
        "(6)",
        "min over alpha of T rho(alpha) + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1)" if len(alphas) > 1 else "(6) at the given alpha",
    )
    return ev, best_alpha, T, (p, sigma, delta)


def evaluate(column: str, inputs: dict, witnesses: dict) -> Evaluation:
    """The checker's evaluator: quantities, the range claims and the conclusion "(eps, delta)-DP"."""
    ev, alpha, T, (p, sigma, delta) = _evaluate(column, inputs, witnesses)
    conclude_dp(
        ev,
        f"DP-SGD with p = {exact_str(p)}, sigma = {exact_str(sigma)} ({NAMES[column]} accountant)",
        alpha,
        T,
        delta,
        reported_bound(witnesses.get("reported_epsilon"), ev.quantities["epsilon"].value, REPORT_DIGITS, "witnesses.reported_epsilon"),
    )
    ev.budget = Budget(
        arithmetic_rounding=f"ball arithmetic at {ctx.prec} bits (moments with raised precision)",
        quadrature="none",
        tail_truncation="none",
        search_gap="none: every alpha evaluated",
    )
    return ev


def certify_baseline(column: str, p, sigma, steps, delta, alpha=None, extra_inputs: dict | None = None) -> Certificate:
    """Certificate of the Wang or Birrell column; every number exact (floats refused), validated like the CLI."""
    if column not in KINDS:
        raise InputError("column", f"must be one of {sorted(KINDS)}, got {column!r}")
    p, sigma = parse_p(p, "p"), parse_sigma(sigma, "sigma")
    check_baseline_sigma(sigma, "sigma")
    steps, delta = parse_steps(steps, "steps"), parse_delta(delta, "delta")
    inputs = {"sampling_rate": exact_str(p), "noise_multiplier": exact_str(sigma), "steps": str(steps), "delta": exact_str(delta)}
    if alpha is not None:
        inputs["alpha"] = str(parse_alpha(alpha, "alpha"))
    inputs.update(fixed_size_inputs(extra_inputs, p))

    def attempt(prec):
        ev, a, _, _ = _evaluate(column, inputs, None)
        wit = {"alpha": a, "reported_epsilon": upper_decimal(ev.quantities["epsilon"].value, REPORT_DIGITS)}
        ev = evaluate(column, inputs, wit)
        return Certificate(KINDS[column], inputs, ev, wit, None, prec)

    return escalate(attempt, what=f"the {column} column")


def work_baseline(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``dpsgd/renyi-wang`` and ``dpsgd/renyi-birrell``: rho at every integer alpha in [2, 256], no
    loop a certificate sets. Measured (fresh process, wang, the heavier): 0.25 s at 128 bits, 0.97 s at 1024,
    3.8 s at 4096; model 0.6 s x (prec/128)^0.8."""
    return scaled(0.6, prec, 0.8), "inputs"


#: the work model of each kind (:func:`certify.limits.check_work`)
WORK = {KINDS["wang"]: work_baseline, KINDS["birrell"]: work_baseline}

register(
    KINDS["wang"],
    lambda i, w: evaluate("wang", i, w),
    validate,
    INPUTS,
    WITNESSES,
    example=lambda: certify_baseline("wang", "1/100", "2", 1000, "1e-6"),
)
register(
    KINDS["birrell"],
    lambda i, w: evaluate("birrell", i, w),
    validate,
    INPUTS,
    WITNESSES,
    example=lambda: certify_baseline("birrell", "1/100", "2", 1000, "1e-6", alpha=8),
)
