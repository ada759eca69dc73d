"""The certificate: a JSON document a person can read and a program can check.

Layout (schema ``certify/2``)::

    {
      "schema": "certify/2",
      "kind": "objpert/theorem-4.1",            # which evaluator re-derives it
      "precision": 128,                          # working precision (bits) of the recorded balls
      "inputs": {"mu": "1/100", ...},            # every input exact (rational strings), never floats
      "quantities": {                            # each quantity: exact ball + outward decimals
        "delta": {"equation": "(10)", "description": "...",
                  "ball": {"mid": ["123", -140], "rad": ["1", -170]},
                  "lower": "5.16e-8", "upper": "5.17e-8"}, ...},
      "claims": [{"name": ..., "statement": ..., "lhs": ..., "relation": "<=", "rhs": ...,
                  "holds": true, "equation": ...}, ...],
      "conclusions": [{"name": ..., "statement": ..., "claim": <claim name>,
                       "hypotheses": [<claim names>], "holds": true}, ...],
      "witnesses": {...},                        # what a search found (never re-searched)
      "budget": {...},                           # where the width went (re-derived at the recorded precision)
      "digest": "sha256:...",                    # of everything above (canonical JSON)
      "software": {"certify": ..., "python-flint": ...}   # informational, outside the digest
    }

A *conclusion* is what the certificate proves (the guarantee a user relies on: "(eps, delta)-DP by
Theorem 4.1", "first passing N = 519", "rho <= x"). It names the claim that states it and the claims
(hypotheses) it rests on; it holds only when its claim and every hypothesis hold. Every kind declares
at least one conclusion; ``certify verify`` exits 0 only when every conclusion holds.

A quantity may carry ``"bound": "upper"``: its ball is then an exact upper bound computed by a
procedure (e.g. the key (37) of a branch-and-bound leaf), and only its upper endpoint is a statement
(``upper`` >= the quantity described); without it, the ball encloses the true value.

``budget`` (where the width went) is set by the evaluator, so the checker re-derives it (at the
recorded precision: it quotes the precision and radii) and compares it. ``software`` is informational:
outside the digest, not vouched for. Schema ``certify/1`` (no conclusions) is no longer accepted.

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
from functools import lru_cache
from typing import Any

from . import __version__
from .balls import (
    PRECISION_LADDER,
    InputError,
    Tri,
    UndecidedError,
    arb,
    ball_to_json,
    compare,
    exact,
    fmpq,
    flint_version,
    lower_decimal,
    upper_decimal,
    decide,
)

SCHEMA = "certify/2"
OLD_SCHEMAS = ("certify/1",)
DIGITS = 10  # significant digits of the decimal enclosures written into certificates


@dataclass
class Quantity:
    """A named certified quantity: a ball containing the true value, and where it comes from."""

    name: str
    value: arb
    equation: str
    description: str = ""
    integer: bool = False  # an exactly known integer (e.g. an iteration count)
    bound: str = ""  # "" (the ball encloses the value) or "upper" (only the upper endpoint is a statement)

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
        if self.bound:
            d["bound"] = self.bound
        return d


#: the keys a quantity, claim or conclusion entry may have (the schema is closed)
QUANTITY_KEYS = frozenset({"equation", "description", "ball", "lower", "upper", "integer", "bound"})
CLAIM_KEYS = frozenset({"name", "statement", "lhs", "relation", "rhs", "holds", "equation"})
CONCLUSION_KEYS = frozenset({"name", "statement", "claim", "hypotheses", "holds"})


@dataclass
class Claim:
    """A statement ``lhs relation rhs`` decided in ball arithmetic."""

    name: str
    statement: str
    lhs: str  # quantity name or exact number text
    relation: str  # one of "<=", "<", ">=", ">"
    rhs: str  # quantity name or exact number text
    holds: bool
    equation: str = ""

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "statement": self.statement,
            "lhs": self.lhs,
            "relation": self.relation,
            "rhs": self.rhs,
            "holds": self.holds,
            "equation": self.equation,
        }


@dataclass
class Conclusion:
    """What a certificate proves: ``claim`` holds, resting on the ``hypotheses`` (claim names).

    It holds only when its claim and every hypothesis hold.
    """

    name: str
    statement: str
    claim: str
    hypotheses: tuple[str, ...]
    holds: bool

    def to_json(self) -> dict:
        return {"name": self.name, "statement": self.statement, "claim": self.claim, "hypotheses": list(self.hypotheses), "holds": self.holds}


@dataclass(frozen=True)
class Budget:
    """Where a certificate's width went (its ``budget`` entry): one text per source of width.

    The sources shared by the closed-form kinds are fields (None: not stated by this kind); a kind's own
    sources (a branch-and-bound gap, a discretisation) are ``other``, (name, JSON value) pairs in order.
    Set by the evaluator, so the checker re-derives it at the recorded precision; never a timing.
    """

    arithmetic_rounding: str | None = None
    publication_rounding: str | None = None
    quadrature: str | None = None
    tail_truncation: str | None = None
    search_gap: str | None = None
    other: tuple[tuple[str, Any], ...] = ()

    _FIELDS = ("arithmetic_rounding", "publication_rounding", "quadrature", "tail_truncation", "search_gap")

    @classmethod
    def of(cls, sources: dict) -> Budget:
        """A budget from a {source: text} mapping (the JSON form); a kind's own sources keep their order."""
        return cls(**{k: v for k, v in sources.items() if k in cls._FIELDS}, other=tuple((k, v) for k, v in sources.items() if k not in cls._FIELDS))

    def to_json(self) -> dict:
        out = {k: getattr(self, k) for k in self._FIELDS if getattr(self, k) is not None}
        out.update(self.other)
        return out


@dataclass
class Evaluation:
    """Quantities and claims evaluated from inputs (and witnesses) at one precision.

    Producers and the checker build the same Evaluation: producers after a search, the checker
    from the recorded witnesses. ``claim`` decides a relation and records it; an undecided relation
    raises :class:`UndecidedError` so that the caller can raise the precision.
    """

    quantities: dict[str, Quantity] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    conclusions: list[Conclusion] = field(default_factory=list)
    #: where the width went (quotes the working precision): set by the evaluator, re-derived by the checker
    budget: Budget = field(default_factory=Budget)
    #: exact claim operands supplied by the caller (``claim(values=...)``), by their checked text
    _exact_texts: dict = field(default_factory=dict, repr=False, compare=False)

    def add(self, name: str, value: arb, equation: str, description: str = "", integer: bool = False, bound: str = "") -> arb:
        if not value.is_finite():
            raise UndecidedError(f"quantity {name} ({equation}) is not finite at this precision")
        if bound not in ("", "upper"):
            raise ValueError(f"bound must be '' or 'upper', got {bound!r}")
        self.quantities[name] = Quantity(name, value, equation, description, integer, bound)
        return value

    def claim_named(self, name: str) -> Claim:
        for c in self.claims:
            if c.name == name:
                return c
        raise KeyError(f"no claim named {name!r}")

    def conclude(self, name: str, statement: str, claim: str, hypotheses=()) -> bool:
        """Declare a conclusion: ``claim`` (a claim name) resting on ``hypotheses`` (claim names).

        It holds iff its claim holds and every hypothesis holds; return whether it holds.
        """
        hyps = tuple(hypotheses)
        first: dict[str, Claim] = {}
        for c in self.claims:  # claim_named: the first claim of each name
            first.setdefault(c.name, c)

        def named(n: str) -> Claim:
            if n not in first:
                raise KeyError(f"no claim named {n!r}")
            return first[n]

        holds = named(claim).holds and all(named(h).holds for h in hyps)
        self.conclusions.append(Conclusion(name, statement, claim, hyps, holds))
        return holds

    def failed_conclusions(self) -> list[str]:
        """One line per conclusion that does not hold, naming the failed claim or hypotheses."""
        out = []
        for c in self.conclusions:
            if c.holds:
                continue
            bad = [h for h in c.hypotheses if not self.claim_named(h).holds]
            if not self.claim_named(c.claim).holds:
                bad.append(c.claim)
            out.append(f"{c.statement}: does not hold ({', '.join(self.claim_named(b).statement for b in bad)} fails)")
        return out

    def _given(self, ref: str, value) -> arb | fmpq:
        """The operand ``ref`` with its exact value supplied by the caller: checked to print as ``ref`` (once per
        text and evaluation; ValueError otherwise). A quantity's name stands for the quantity's ball."""
        q = self.quantities.get(ref)
        if q is not None:
            return q.value
        v = value if type(value) is fmpq else fmpq(value)
        known = self._exact_texts.get(ref)
        if known is None:
            if (str(v.p) if v.q == 1 else f"{v.p}/{v.q}") != ref:
                raise ValueError(f"claim operand {ref!r} is not the text of the value {v}")
            self._exact_texts[ref] = v
        elif known != v:
            raise ValueError(f"claim operand {ref!r} is not the text of the value {v}")
        return v

    def operand(self, ref: str) -> arb | fmpq:
        if ref in self.quantities:
            return self.quantities[ref].value
        return exact_operand(ref)

    def decide(self, lhs: str, relation: str, rhs: str) -> Tri:
        return compare(self.operand(lhs), relation, self.operand(rhs))

    def claim(self, name: str, statement: str, lhs: str, relation: str, rhs: str, equation: str = "", *, values: tuple | None = None) -> bool:
        """Decide and record a claim (true or false, as the balls decide it); return whether it holds.

        Raises UndecidedError when the balls cannot decide it. A false claim is recorded as false: the
        caller decides what it means (a producer refuses bad input before it gets here). A claim between
        two exact numbers (e.g. a hypothesis "q <= 1" on an input) is decided exactly, in rationals: always
        decided, and the same answer as the balls give whenever they decide it. ``values`` (optional) are
        the exact operands the caller already holds, saving a parse; each must print as its text
        (:func:`certify.balls.exact_str`), else ValueError: the recorded text stays the statement.
        """
        if values is None:
            a, b = self.operand(lhs), self.operand(rhs)
        else:
            a, b = self._given(lhs, values[0]), self._given(rhs, values[1])
        exact_relation = _EXACT_RELATIONS.get(relation)
        if exact_relation is not None and type(a) is fmpq and type(b) is fmpq:
            holds = exact_relation(a, b)
        else:
            holds = decide(a, relation, b, f"claim {name!r} ({statement}) is undecided")
        self.claims.append(Claim(name, statement, lhs, relation, rhs, holds, equation))
        return holds


#: the relations of a claim, decided exactly between two rationals
_EXACT_RELATIONS = {"<=": fmpq.__le__, "<": fmpq.__lt__, ">=": fmpq.__ge__, ">": fmpq.__gt__}


@lru_cache(maxsize=1024)
def exact_operand(ref: str) -> fmpq:
    """``exact(ref, ref)``, memoised: a claim's constant operand ("0", "1", an input's text) is parsed once."""
    return exact(ref, ref)


#: the encoder of the canonical form, built once (``json.dumps`` with these options builds one per call)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def canonical(obj: Any) -> str:
    """Canonical JSON text (sorted keys, no spaces) used for the digest: ``json.dumps(obj, sort_keys=True,
    separators=(",", ":"), ensure_ascii=True)``, character for character."""
    return _CANONICAL.encode(obj)


CHECKED_KEYS = ("schema", "kind", "precision", "inputs", "quantities", "claims", "conclusions", "witnesses", "budget")
#: informational fields: outside the digest, not vouched for by ``certify verify``
INFORMATIONAL_KEYS = ("software",)
TOP_LEVEL_KEYS = frozenset(CHECKED_KEYS + ("digest",) + INFORMATIONAL_KEYS)
#: the largest working precision (bits) ``verify --precision`` may ask for
MAX_PRECISION = 1 << 16
#: the largest precision a certificate may record: the top of the producers' ladder (``escalate`` never goes
#: higher), so that a forged file cannot make the checker work at 65536 bits unasked
MAX_RECORDED_PRECISION = PRECISION_LADDER[-1]


def digest_of(doc: dict) -> str:
    body = {k: doc[k] for k in CHECKED_KEYS}
    return "sha256:" + hashlib.sha256(canonical(body).encode()).hexdigest()


@dataclass
class Certificate:
    kind: str
    inputs: dict[str, str]
    evaluation: Evaluation
    witnesses: dict = field(default_factory=dict)
    budget: dict | None = None  # default: the evaluation's (the checker re-derives it)
    precision: int = 128

    def __post_init__(self):
        if self.budget is None:
            self.budget = self.evaluation.budget.to_json()
        # a producer never writes a certificate that proves nothing (only a forger can make one)
        if not self.evaluation.conclusions:
            raise ValueError(f"kind {self.kind} declares no conclusion")
        failed = self.evaluation.failed_conclusions()
        if failed:
            raise InputError("inputs", f"the certificate would not prove its conclusion: {failed[0]}")

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
            "conclusions": [c.to_json() for c in self.evaluation.conclusions],
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

    @property
    def conclusions(self) -> list[Conclusion]:
        return self.evaluation.conclusions


#: certificates larger than this are refused before parsing (a genuine one is well under 10 MB)
MAX_BYTES = 64 << 20


def load(text: str | bytes) -> dict:
    """Parse certificate JSON and check its outer shape; raise InputError naming what is wrong.

    Refuses (InputError, never a traceback): non-UTF-8 bytes, files over MAX_BYTES, JSON nested too
    deeply for the parser, a top level that is not an object, unknown or missing top-level keys, the
    old schema ``certify/1``, a precision outside [53, MAX_PRECISION].
    """
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            raise InputError("certificate", f"file too large ({len(text)} bytes; at most {MAX_BYTES})")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError("certificate", f"not UTF-8 text (byte {err.start}): not a certificate") from None
    if len(text) > MAX_BYTES:
        raise InputError("certificate", f"file too large ({len(text)} characters; at most {MAX_BYTES})")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError("certificate", f"not valid JSON (malformed or truncated): {err}") from None
    except RecursionError:
        raise InputError("certificate", "JSON nested too deeply: not a certificate") from None
    except ValueError as err:  # e.g. an integer literal with too many digits
        raise InputError("certificate", f"not valid JSON: {err}") from None
    if not isinstance(doc, dict):
        raise InputError("certificate", "top level must be a JSON object")
    schema = doc.get("schema")
    if schema in OLD_SCHEMAS:
        raise InputError(
            "certificate",
            f"schema {schema!r} is no longer accepted (it records no conclusions); "
            f"re-create the certificate with this version of certify ({SCHEMA!r})",
        )
    if schema != SCHEMA:
        raise InputError("certificate", f"unknown schema {schema!r} (expected {SCHEMA!r})")
    missing = [k for k in CHECKED_KEYS + ("digest",) if k not in doc]
    if missing:
        raise InputError("certificate", f"missing field(s): {', '.join(missing)}")
    unknown = sorted(set(doc) - TOP_LEVEL_KEYS)
    if unknown:
        raise InputError("certificate", f"unknown top-level field(s): {', '.join(map(str, unknown))[:200]}")
    if not isinstance(doc["precision"], int) or isinstance(doc["precision"], bool) or not (53 <= doc["precision"] <= MAX_RECORDED_PRECISION):
        raise InputError("certificate", f"precision must be an integer number of bits in [53, {MAX_RECORDED_PRECISION}] (what a producer records)")
    if not isinstance(doc["kind"], str):
        raise InputError("certificate", "kind must be a string")
    for key in ("inputs", "quantities", "witnesses", "budget"):
        if not isinstance(doc[key], dict):
            raise InputError("certificate", f"{key} must be an object")
    for key in ("claims", "conclusions"):
        if not isinstance(doc[key], list):
            raise InputError("certificate", f"{key} must be a list")
    for k, v in doc["inputs"].items():
        if not isinstance(v, str):
            raise InputError("certificate", f"input {k} must be exact text, got {str(v)[:80]!r}")
    return doc
