"""One table of limits, and the checker's work decided from a certificate's shape before any evaluation.

Every loop or list whose length a command's flags or a certificate's fields control has ONE cap, here:
the producers refuse above it (InputError naming the flag and the cap) and the evaluators that
``certify verify`` runs refuse a certificate above it before evaluating (InputError naming the field).
A module that enforces a cap imports its value from :data:`LIMITS` (``cap("...")``), never a copy.

Work model. Each certificate kind's registering module exposes a hook ``WORK = {kind: work_fn}`` with
``work_fn(inputs, witnesses, prec) -> (seconds, field)``: an upper estimate of the CPU seconds its
evaluator takes at ``prec`` bits, computed from the shape alone (list lengths, recorded integers, the
precision; never a ball), and the certificate field that asks for most of it. The unit costs are measured
on the 2-core reference machine (python-flint 0.9, shared by other jobs) and doubled; each hook's
docstring states its model. :func:`check_work` (called by the checker before the evaluator) adds the
estimate at the working precision P and, when P exceeds the recorded precision R, the fallback
re-evaluation at R, and refuses above :data:`BUDGET_SECONDS` with an InputError naming the field
(``certify verify`` exits 2). A malformed shape costs nothing here: the evaluator refuses it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from .balls import PRECISION_LADDER, InputError

#: the most CPU seconds ``certify verify`` spends on one certificate (estimated before any evaluation)
BUDGET_SECONDS = 30.0
#: the checker's own fixed cost on a small certificate (digest, layout, comparisons, outward decimals): measured
#: 0.3-0.7 ms for a one-phase Poisson certificate; doubled and rounded up
CHECKER_SECONDS = 0.01


@dataclass(frozen=True)
class Limit:
    """One cap: its value, what it counts, who is refused above it (the flag of the producer and the field
    of the certificate), and where it is enforced."""

    value: int
    what: str
    flag: str
    field: str


#: every cap a certificate or a command controls (name -> Limit); docs/reference/work-limits.md lists them
LIMITS: dict[str, Limit] = {
    "precision_ladder_top": Limit(PRECISION_LADDER[-1], "bits of the producers' precision ladder (and of a recorded precision)", "-", "precision"),
    "verify_precision": Limit(1 << 16, "bits a checker may be asked for", "verify --precision", "-"),
    "schedule_phases": Limit(100_000, "phases of a Poisson schedule (file, Opacus history entries, DpEvent runs)", "--schedule", "inputs.phase[i]"),
    "fixed_size_phases": Limit(256, "phases of a fixed-size + replace-one schedule", "--schedule", "inputs.phase[i]"),
    "steps": Limit(10**15, "DP-SGD steps T of one phase", "--steps", "inputs.steps"),
    "renyi_order_poisson": Limit(4096, "Rényi order alpha of the Poisson accountant", "--alpha", "witnesses.alpha"),
    "renyi_order_bok": Limit(256, "Rényi order alpha of Bok's accountant", "--alpha", "inputs.alpha"),
    "c13_iterations": Limit(100_000, "counts N tried by the Theorem C.13 search (failures cover 1..N-1)", "--delta", "witnesses.theorem_C13"),
    "cor413_scan": Limit(100_000, "counts N' in [ceil(7), N-1] re-checked by the Corollary 4.13 calibration", "--epsilon", "witnesses.iterations"),
    "bb_evaluations": Limit(20_000, "point evaluations of the branch-and-bound (and leaves)", "--max-evaluations", "witnesses.leaves"),
    "quadrature_rules": Limit(20_001, "trapezoidal rules recorded by a rho witness (one per leaf endpoint)", "--max-evaluations", "witnesses.points"),
    "quadrature_nodes": Limit(100_000, "nodes of one trapezoidal rule", "-", "witnesses.points[i]"),
    "pld_one_step_points": Limit(400_000, "one-step grid points per profile of the PLD accountant", "--grid", "witnesses.layouts"),
    "pld_one_step_span": Limit(4_000_000, "one-step grid cells spanned per profile of the PLD accountant", "--grid", "witnesses.layouts"),
    "pld_atoms": Limit(4_000_000, "atoms of a composed PLD measure", "--steps", "inputs.steps"),
    "pld_bits": Limit(512, "bits K of the PLD masses", "--delta", "witnesses.K"),
    "pld_bands": Limit(16, "graded bands of a PLD grid layout", "-", "witnesses.layouts"),
    "sweep_rows": Limit(10_000_000, "rows of a sweep's queries", "QUERIES", "-"),
    "workers": Limit(256, "worker processes of a sweep", "--workers", "-"),
    "jobs": Limit(64, "worker processes of certify tables", "--jobs", "-"),
}


def cap(name: str) -> int:
    """The value of the cap ``name`` of :data:`LIMITS`."""
    return LIMITS[name].value


class OverCap(InputError):
    """A count above its cap (:func:`refuse_above`): work refused before it is done (exit 2 in ``certify verify``)."""


def refuse_above(name: str, count: int, parameter: str | None = None, what: str | None = None) -> int:
    """``count`` if it is within the cap ``name``; else :class:`OverCap` (an InputError) naming ``parameter``
    (default: the cap's flag) with the admissible range."""
    lim = LIMITS[name]
    if count > lim.value:
        raise OverCap(parameter or lim.flag, f"{what or lim.what}: at most {lim.value} accepted, this asks for {count}")
    return count


# --------------------------------------------------------------------------------------------
# The work model
# --------------------------------------------------------------------------------------------
def scaled(seconds_at_128: float, prec: int, exponent: float = 1.0) -> float:
    """``seconds_at_128`` (the cost at 128 bits) times (prec/128)^exponent. Measured whole evaluations of closed
    forms (the examples of every kind, fresh processes) grow like prec^0.6 to prec^0.9 between 128 and 4096
    bits; exponent 1 errs high; the hooks pass their own exponent where they measured another."""
    return seconds_at_128 * max(1.0, prec / 128) ** exponent


WorkFn = Callable[[dict, dict, int], "tuple[float, str]"]


def work_hook(kind: str) -> WorkFn | None:
    """The kind's ``work`` function (from its registering module's ``WORK`` hook), or None."""
    from . import registry

    module = registry.kind_modules().get(kind)
    if module is None:
        return None
    return getattr(importlib.import_module(module), "WORK", {}).get(kind)


def estimate_work(doc: dict, precision: int | None = None) -> tuple[float, str]:
    """(estimated CPU seconds, field) of checking ``doc`` at ``precision`` bits (default: the recorded one),
    the fallback at the recorded precision included. Never evaluates a ball; (0, "") when the kind has no hook
    or the shape is malformed (the checker then refuses the file on its own, at no cost)."""
    kind, rec = doc.get("kind"), doc.get("precision")
    if not isinstance(kind, str) or isinstance(rec, bool) or not isinstance(rec, int):
        return 0.0, ""
    inputs, witnesses = doc.get("inputs"), doc.get("witnesses")
    if not isinstance(inputs, dict) or not isinstance(witnesses, dict):
        return 0.0, ""
    fn = work_hook(kind)
    if fn is None:
        return 0.0, ""
    prec = max(precision or rec, rec)
    try:
        seconds, field = fn(inputs, witnesses, prec)
        if prec > rec and getattr(fn, "fallback_cost", True):  # a hook whose evaluator memoises sets it False
            seconds += fn(inputs, witnesses, rec)[0]
    except OverCap:  # a count above its cap (an InputError, so a ValueError: passed on before the malformed shapes)
        raise
    except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError, IndexError):
        return 0.0, ""  # a malformed or out-of-range value: the validators and the evaluator report it (exit 4 or 5)
    return CHECKER_SECONDS + float(seconds), field


def check_produced(cert, flag: str) -> None:
    """The producers' backstop: refuse (InputError naming ``flag``) a certificate just made whose check would exceed
    the budget, so that no producer writes what its checker refuses (their own estimates run first, before the work)."""
    doc = {"kind": cert.kind, "precision": cert.precision, "inputs": cert.inputs, "witnesses": cert.witnesses}
    seconds, field = estimate_work(doc)
    if seconds > BUDGET_SECONDS:
        raise InputError(flag, f"the certificate would take about {seconds:.3g} CPU s to check ({field}; budget {BUDGET_SECONDS:g} s)")


def check_work(doc: dict, precision: int | None = None) -> None:
    """Refuse (InputError naming the field, exit 2 in ``certify verify``) a certificate whose check would take
    more than :data:`BUDGET_SECONDS` CPU seconds by :func:`estimate_work`; called before any evaluation."""
    seconds, field = estimate_work(doc, precision)
    if seconds > BUDGET_SECONDS:
        at = f" at {max(precision or doc['precision'], doc['precision'])} bits" if precision else ""
        raise InputError(
            field or "certificate",
            f"checking this certificate{at} would take about {seconds:.3g} CPU s (the checker's budget is {BUDGET_SECONDS:g} s); "
            "the certificate asks for more work than certify ever writes",
        )
