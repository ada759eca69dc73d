"""The checker: re-derives every quantity and claim of a certificate from inputs + witnesses.

It never re-runs a search. Each certificate kind registers an *evaluator*
``evaluate(inputs: dict[str, str], witnesses: dict) -> Evaluation`` that computes, at the current
working precision, every recorded quantity and claim from the recorded inputs and witnesses
(a witness such as "N = 518 fails because delta_N(eps) > target" is re-checked by evaluating that
one comparison). The checker then demands, for the certificate to be accepted:

1. the digest matches the content (any edit is caught even before recomputation);
2. the recomputed set of quantities and claims is exactly the recorded one;
3. each recorded ball contains the recomputed ball (exact rational comparison; at the recorded
   precision both are the same ball), and each recorded ``lower``/``upper`` decimal is the outward
   rounding of the recorded ball;
4. each claim's recorded ``holds`` equals what the recomputed balls decide (undecided rejects).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable

from .balls import (
    InputError, UndecidedError, ball_contains, ball_from_json, ctx, fmpq, lower_decimal, upper_decimal,
)
from .certificate import DIGITS, Evaluation, digest_of, load

Evaluator = Callable[[dict, dict], Evaluation]

# kind prefix -> module that registers its evaluators on import
_PACKAGES = {"objpert": "certify.objpert", "dpsgd": "certify.dpsgd", "referee": "certify.referee",
             "pld": "certify.pld"}
_EVALUATORS: dict[str, Evaluator] = {}


def register(kind: str, evaluator: Evaluator) -> None:
    _EVALUATORS[kind] = evaluator


def evaluator_for(kind: str) -> Evaluator:
    if kind not in _EVALUATORS:
        prefix = kind.split("/", 1)[0]
        if prefix in _PACKAGES:
            importlib.import_module(_PACKAGES[prefix])
    if kind not in _EVALUATORS:
        raise InputError("certificate", f"unknown kind {kind!r}")
    return _EVALUATORS[kind]


@dataclass
class Report:
    ok: bool = True
    checked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def good(self, msg: str) -> None:
        self.checked.append(msg)

    def bad(self, msg: str) -> None:
        self.ok = False
        self.problems.append(msg)


def verify_document(doc: dict, precision: int | None = None) -> Report:
    """Check a parsed certificate; ``precision`` (bits) defaults to the recorded one."""
    rep = Report()
    if doc.get("digest") != digest_of(doc):
        rep.bad("digest does not match the content: the certificate was altered after it was written")
    evaluate = evaluator_for(doc["kind"])
    prec = max(precision or doc["precision"], doc["precision"])
    with ctx.workprec(prec):
        try:
            ev = evaluate(doc["inputs"], doc["witnesses"])
        except InputError as err:
            rep.bad(f"inputs or witnesses rejected: {err}")
            return rep
        except UndecidedError as err:
            rep.bad(f"a witness could not be re-checked at {prec} bits: {err}")
            return rep
        except (KeyError, TypeError, ValueError) as err:
            rep.bad(f"malformed inputs or witnesses: {type(err).__name__}: {err}")
            return rep
        _compare_quantities(doc, ev, rep, same_precision=(prec == doc["precision"]))
        _compare_claims(doc, ev, rep)
    return rep


def _compare_quantities(doc: dict, ev: Evaluation, rep: Report, same_precision: bool) -> None:
    recorded = doc["quantities"]
    for name in sorted(set(recorded) - set(ev.quantities)):
        rep.bad(f"quantity {name}: recorded but not derivable from the inputs")
    for name, q in ev.quantities.items():
        if name not in recorded:
            rep.bad(f"quantity {name}: missing from the certificate")
            continue
        rec = recorded[name]
        try:
            mid_rad = ball_from_json(rec["ball"])
        except (KeyError, TypeError, ValueError) as err:
            rep.bad(f"quantity {name}: malformed ball ({err})")
            continue
        if not ball_contains(mid_rad, q.value):
            rep.bad(f"quantity {name} {q.equation}: recorded ball does not contain the recomputed one "
                    f"[{lower_decimal(q.value, DIGITS)}, {upper_decimal(q.value, DIGITS)}]")
            continue
        m, r = mid_rad
        _, r_new = q.value.mid().fmpq(), q.value.rad().fmpq()
        slack = abs(m) * fmpq(1, 2 ** (doc["precision"] - 4))
        if same_precision and r > 2 * r_new + slack:
            rep.bad(f"quantity {name} {q.equation}: recorded ball is wider than the recomputation justifies")
            continue
        if rec.get("lower") != lower_decimal(m - r, DIGITS) or rec.get("upper") != upper_decimal(m + r, DIGITS):
            rep.bad(f"quantity {name}: recorded decimals {rec.get('lower')!r}..{rec.get('upper')!r} are not "
                    "the outward rounding of its ball")
            continue
        if rec.get("equation") != q.equation:
            rep.bad(f"quantity {name}: equation recorded as {rec.get('equation')!r}, expected {q.equation!r}")
            continue
        rep.good(f"quantity {name} {q.equation} in [{rec['lower']}, {rec['upper']}]")


def _compare_claims(doc: dict, ev: Evaluation, rep: Report) -> None:
    recorded = doc["claims"]
    if len(recorded) != len(ev.claims):
        rep.bad(f"claims: {len(recorded)} recorded, {len(ev.claims)} re-derived")
    for rec, c in zip(recorded, ev.claims):
        if not isinstance(rec, dict):
            rep.bad("claims: an entry is not an object")
            continue
        fields = ("name", "statement", "lhs", "relation", "rhs", "equation")
        diff = [f for f in fields if rec.get(f) != getattr(c, f)]
        if diff:
            rep.bad(f"claim {c.name}: field(s) {', '.join(diff)} differ from the re-derived claim "
                    f"({c.statement})")
            continue
        if rec.get("holds") is not c.holds:
            rep.bad(f"claim {c.name} ({c.statement}): recorded holds={rec.get('holds')!r} but the balls "
                    f"decide {str(c.holds).lower()}")
            continue
        rep.good(f"claim {c.statement}: {'holds' if c.holds else 'fails (as recorded)'}")


def verify_text(text: str, precision: int | None = None) -> Report:
    return verify_document(load(text), precision)
