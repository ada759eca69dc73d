"""Certificates for the certified baseline columns: kinds ``dpsgd/renyi-wang`` and ``dpsgd/renyi-birrell``.

No search is involved: the evaluator recomputes rho(alpha) for every integer alpha in [2, 256] (or the
given alpha) and the conversion (6), and records the enclosure of the minimum over alpha as
``epsilon`` (its upper endpoint is the certified epsilon of that column).
"""
from __future__ import annotations

from ...balls import arb, exact, exact_int, exact_str
from ...certificate import Certificate, Evaluation
from ...verify import register
from ..certificates import eps_ball
from ..problem import ALPHA_MAX, ALPHA_MIN, parse_alpha, parse_p, parse_sigma
from .columns import _rhos, rho_column

KINDS = {"wang": "dpsgd/renyi-wang", "birrell": "dpsgd/renyi-birrell"}
EQUATION = {"wang": "Wang et al. 2019 (dp_accounting, replace-one, fixed size)", "birrell": "Birrell et al. 2024, Thm 3.4"}


def evaluate(column: str, inputs: dict, witnesses: dict) -> Evaluation:
    from ...balls import ctx
    p = parse_p(inputs["sampling_rate"], "sampling_rate")
    sigma = parse_sigma(inputs["noise_multiplier"], "noise_multiplier")
    T = exact_int(inputs["steps"], "steps")
    delta = exact(inputs["delta"], "delta")
    ev = Evaluation()
    if "alpha" in inputs:
        alphas = [parse_alpha(inputs["alpha"], "alpha")]
        rhos = [rho_column(column, alphas[0], p, sigma)]
    else:
        alphas = list(range(ALPHA_MIN, ALPHA_MAX + 1))
        rhos = list(_rhos(column, p, sigma, ctx.prec))
    best, best_alpha, enc = None, None, None
    for a, r in zip(alphas, rhos):
        e = eps_ball(r, a, T, delta)
        enc = e if enc is None else enc.min(e)
        if best is None or e.upper() < best.upper():
            best, best_alpha, best_rho = e, a, r
    if exact_int(witnesses.get("alpha", best_alpha), "witnesses.alpha") != best_alpha:
        from ...balls import InputError
        raise InputError("witnesses", "recorded alpha is not the order with the smallest bound")
    ev.add("rho", best_rho, EQUATION[column], f"one-step RDP of the {column} column at alpha = {best_alpha}")
    ev.add("alpha", arb(best_alpha), "(6)", "the Rényi order whose bound is smallest", integer=True)
    ev.add("epsilon", enc, "(6)", "min over alpha of T rho(alpha) + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1)"
           if len(alphas) > 1 else "(6) at the given alpha")
    return ev


def certify_baseline(column: str, p, sigma, steps: int, delta, alpha: int | None = None,
                     extra_inputs: dict | None = None) -> Certificate:
    from ...balls import escalate
    inputs = {"sampling_rate": exact_str(p), "noise_multiplier": exact_str(sigma), "steps": str(steps),
              "delta": exact_str(delta)}
    if alpha is not None:
        inputs["alpha"] = str(alpha)
    if extra_inputs:
        inputs.update(extra_inputs)

    def attempt(prec):
        ev = evaluate(column, inputs, {})
        wit = {"alpha": int(ev.quantities["alpha"].value.mid().fmpq().p)}
        ev = evaluate(column, inputs, wit)
        budget = {"arithmetic_rounding": f"ball arithmetic at {prec} bits (moments with raised precision)",
                  "quadrature": "none", "tail_truncation": "none", "search_gap": "none: every alpha evaluated"}
        return Certificate(KINDS[column], inputs, ev, wit, budget, prec)

    return escalate(attempt, what=f"the {column} column")


register(KINDS["wang"], lambda i, w: evaluate("wang", i, w))
register(KINDS["birrell"], lambda i, w: evaluate("birrell", i, w))
