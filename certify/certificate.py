"""The certificate: a JSON document a person can read and a program can check.

Layout (schema ``certify/1``)::

    {
      "schema": "certify/1",
      "kind": "objpert/theorem-4.1",            # which evaluator re-derives it
      "precision": 128,                          # working precision (bits) of the recorded balls
      "inputs": {"mu": "1/100", ...},            # every input exact (rational strings), never floats
      "quantities": {                            # each quantity: exact ball + outward decimals
        "delta": {"equation": "(10)", "description": "...",
                  "ball": {"mid": ["123", -140], "rad": ["1", -170]},
                  "lower": "5.16e-8", "upper": "5.17e-8"}, ...},
      "claims": [{"name": ..., "statement": ..., "lhs": ..., "relation": "<=", "rhs": ...,
                  "holds": true, "equation": ...}, ...],
      "witnesses": {...},                        # what a search found (never re-searched)
      "budget": {...},                           # where the width went
      "digest": "sha256:...",                    # of everything above (canonical JSON)
      "software": {"certify": ..., "python-flint": ...}   # informational, outside the digest
    }

Balls are stored as exact dyadic midpoint and radius; ``lower``/``upper`` are the outward decimal
roundings of the ball (``digits`` significant digits). A claim's ``lhs``/``rhs`` is either the name
of a quantity or an exact number (``"1/10000000"``). ``holds`` is ``true`` only when the balls
prove the relation and ``false`` only when they disprove it: an undecided claim is never written.
The checker in :mod:`certify.verify` re-derives all of it from ``inputs`` and ``witnesses``.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from . import __version__
from .balls import (
    InputError, Tri, UndecidedError, arb, ball_to_json, compare, exact, fmpq, flint_version,
    lower_decimal, upper_decimal,
)

SCHEMA = "certify/1"
DIGITS = 10  # significant digits of the decimal enclosures written into certificates
RELATIONS = ("<=", "<", ">=", ">")


@dataclass
class Quantity:
    """A named certified quantity: a ball containing the true value, and where it comes from."""

    name: str
    value: arb
    equation: str
    description: str = ""
    integer: bool = False  # an exactly known integer (e.g. an iteration count)

    def to_json(self, digits: int = DIGITS) -> dict:
        d = {
            "equation": self.equation,
            "description": self.description,
            "ball": ball_to_json(self.value),
            "lower": lower_decimal(self.value, digits),
            "upper": upper_decimal(self.value, digits),
        }
        if self.integer:
            d["integer"] = True
        return d


@dataclass
class Claim:
    """A statement ``lhs relation rhs`` decided in ball arithmetic."""

    name: str
    statement: str
    lhs: str          # quantity name or exact number text
    relation: str     # one of RELATIONS
    rhs: str          # quantity name or exact number text
    holds: bool
    equation: str = ""

    def to_json(self) -> dict:
        return {
            "name": self.name, "statement": self.statement, "lhs": self.lhs,
            "relation": self.relation, "rhs": self.rhs, "holds": self.holds,
            "equation": self.equation,
        }


@dataclass
class Evaluation:
    """Quantities and claims evaluated from inputs (and witnesses) at one precision.

    Producers and the checker build the same Evaluation: producers after a search, the checker
    from the recorded witnesses. ``claim`` decides a relation and records it; an undecided relation
    raises :class:`UndecidedError` so that the caller can raise the precision.
    """

    quantities: dict[str, Quantity] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)

    def add(self, name: str, value: arb, equation: str, description: str = "",
            integer: bool = False) -> arb:
        if not value.is_finite():
            raise UndecidedError(f"quantity {name} ({equation}) is not finite at this precision")
        self.quantities[name] = Quantity(name, value, equation, description, integer)
        return value

    def operand(self, ref: str) -> arb | fmpq:
        if ref in self.quantities:
            return self.quantities[ref].value
        return exact(ref, ref)

    def decide(self, lhs: str, relation: str, rhs: str) -> Tri:
        return compare(self.operand(lhs), relation, self.operand(rhs))

    def claim(self, name: str, statement: str, lhs: str, relation: str, rhs: str,
              equation: str = "") -> bool:
        """Decide and record a claim (true or false, as the balls decide it); return whether it holds.

        Raises UndecidedError when the balls cannot decide it. A false claim is recorded as false: the
        caller decides what it means (a producer refuses bad input before it gets here).
        """
        t = self.decide(lhs, relation, rhs)
        if t is Tri.UNDECIDED:
            raise UndecidedError(f"claim {name!r} ({statement}) is undecided")
        holds = t is Tri.TRUE
        self.claims.append(Claim(name, statement, lhs, relation, rhs, holds, equation))
        return holds


def canonical(obj: Any) -> str:
    """Canonical JSON text (sorted keys, no spaces) used for the digest."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


CHECKED_KEYS = ("schema", "kind", "precision", "inputs", "quantities", "claims", "witnesses", "budget")


def digest_of(doc: dict) -> str:
    body = {k: doc[k] for k in CHECKED_KEYS}
    return "sha256:" + hashlib.sha256(canonical(body).encode()).hexdigest()


@dataclass
class Certificate:
    kind: str
    inputs: dict[str, str]
    evaluation: Evaluation
    witnesses: dict = field(default_factory=dict)
    budget: dict = field(default_factory=dict)
    precision: int = 128

    def to_json(self) -> dict:
        for k, v in self.inputs.items():
            if not isinstance(v, str):
                raise TypeError(f"input {k} must be recorded as exact text, got {type(v).__name__}")
        doc = {
            "schema": SCHEMA,
            "kind": self.kind,
            "precision": self.precision,
            "inputs": dict(self.inputs),
            "quantities": {k: q.to_json() for k, q in self.evaluation.quantities.items()},
            "claims": [c.to_json() for c in self.evaluation.claims],
            "witnesses": self.witnesses,
            "budget": self.budget,
        }
        doc["digest"] = digest_of(doc)
        doc["software"] = {"certify": __version__, "python-flint": flint_version}
        return doc

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False) + "\n"

    @property
    def quantities(self) -> dict[str, Quantity]:
        return self.evaluation.quantities

    @property
    def claims(self) -> list[Claim]:
        return self.evaluation.claims


def load(text: str) -> dict:
    """Parse certificate JSON and check its outer shape; raise InputError naming what is wrong."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError("certificate", f"not valid JSON (malformed or truncated): {err}") from None
    if not isinstance(doc, dict):
        raise InputError("certificate", "top level must be a JSON object")
    missing = [k for k in CHECKED_KEYS + ("digest",) if k not in doc]
    if missing:
        raise InputError("certificate", f"missing field(s): {', '.join(missing)}")
    if doc["schema"] != SCHEMA:
        raise InputError("certificate", f"unknown schema {doc['schema']!r} (expected {SCHEMA!r})")
    if not isinstance(doc["precision"], int) or isinstance(doc["precision"], bool) or not (
            53 <= doc["precision"] <= 1 << 16):
        raise InputError("certificate", "precision must be an integer number of bits in [53, 65536]")
    for key in ("inputs", "quantities", "witnesses", "budget"):
        if not isinstance(doc[key], dict):
            raise InputError("certificate", f"{key} must be an object")
    if not isinstance(doc["claims"], list):
        raise InputError("certificate", "claims must be a list")
    for k, v in doc["inputs"].items():
        if not isinstance(v, str):
            raise InputError("certificate", f"input {k} must be exact text, got {v!r}")
    return doc
