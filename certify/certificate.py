"""The certificate: a JSON document a person can read and a program can check.

Layout (schema ``certify/3``)::

    {
      "schema": "certify/3",
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
outside the digest, not vouched for (its two version strings are checked for their spelling only). Schemas
``certify/1`` (no conclusions) and ``certify/2`` (not canonical) are no longer accepted.

**Canonical form** (schema ``certify/3``). A certificate is accepted only if it is, byte for byte, the document
certify writes (:func:`render_document`, :func:`dumps_document`): two-space indented JSON with ASCII escapes, the
top-level keys in the order above, inputs sorted by name (:func:`input_order`: ``phase[10]`` after ``phase[9]``),
witness objects with sorted keys at every depth, no duplicate keys, no JSON floats, every number written as
certify writes it (:func:`canonical_number`) and no character outside printable ASCII in an input or a witness
(:func:`check_spelling`). Every derived field (quantities, decimals, claims, conclusions and their statements,
budget) is re-rendered by the checker from its own re-derivation, never copied from the file.

Balls are stored as exact dyadic midpoint and radius; ``lower``/``upper`` are the outward decimal
roundings of the ball (``digits`` significant digits). A claim's ``lhs``/``rhs`` is either the name
of a quantity or an exact number (``"1/10000000"``). ``holds`` is ``true`` only when the balls
prove the relation and ``false`` only when they disprove it: an undecided claim is never written.
The checker in :mod:`certify.verify` re-derives all of it from ``inputs`` and ``witnesses``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from . import __version__
from .inputfile import loads_strict
from .balls import (
    PRECISION_LADDER,
    InputError,
    Tri,
    UndecidedError,
    arb,
    ball_endpoints,
    ball_to_json,
    compare,
    exact,
    exact_int,
    fmpq,
    flint_version,
    lower_decimal,
    upper_decimal,
    decide,
)

SCHEMA = "certify/3"
OLD_SCHEMAS = ("certify/1", "certify/2")
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
        lo, hi = ball_endpoints(self.value)  # (once for both decimals: the same roundings as of the ball itself)
        d = {
            "equation": self.equation,
            "description": self.description,
            "ball": ball_to_json(self.value),
            "lower": lower_decimal(lo, digits),
            "upper": upper_decimal(hi, digits),
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


#: the informational ``software`` entry certify writes (checked for its spelling only: see :func:`check_software`)
SOFTWARE = {"certify": __version__, "python-flint": flint_version}
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+-]{0,39}")


def input_order(name: str) -> tuple:
    """Sort key of an input name: ``phase[2].steps`` before ``phase[10].steps`` (numbers compared as numbers); a short
    name's is memoised (a producer and the checker sort the same few names on every certificate)."""
    return _short_input_order(name) if len(name) <= 80 else _input_order(name)


@lru_cache(maxsize=4096)
def _short_input_order(name: str) -> tuple:
    return _input_order(name)


def _input_order(name: str) -> tuple:
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"([0-9]+)", name))


def sorted_witnesses(obj):
    """Witnesses with the keys of every object sorted (lists keep their order: it is meaningful)."""
    if isinstance(obj, dict):
        return {k: sorted_witnesses(obj[k]) for k in sorted(obj)}
    if isinstance(obj, (list, tuple)):
        return [sorted_witnesses(v) for v in obj]
    return obj


def render_document(
    kind: str, precision: int, inputs: dict, evaluation: Evaluation, witnesses: dict, budget: dict | None, software: dict, digest: str | None = None
) -> dict:
    """The certificate certify writes, as a dict in canonical key order: the producer's writer and the checker's
    re-rendering (from its own re-derivation) are this one function. ``digest``: the digest already proved to be
    that of this content (the checker's, after comparing it with the file's content), else computed here."""
    doc = {
        "schema": SCHEMA,
        "kind": kind,
        "precision": precision,
        "inputs": {k: inputs[k] for k in sorted(inputs, key=input_order)},
        "quantities": {k: q.to_json() for k, q in evaluation.quantities.items()},
        "claims": [c.to_json() for c in evaluation.claims],
        "conclusions": [c.to_json() for c in evaluation.conclusions],
        "witnesses": sorted_witnesses(witnesses),
        "budget": evaluation.budget.to_json() if budget is None else budget,
    }
    doc["digest"] = digest_of(doc) if digest is None else digest
    doc["software"] = dict(software)
    return doc


def dumps_document(doc: dict) -> str:
    """The bytes certify writes for a rendered certificate (two-space indent, ASCII escapes, final newline):
    ``json.dumps(doc, indent=2, ensure_ascii=True) + "\\n"``, character for character. A document of JSON's own types
    (str keys; str, int, bool, None, dict and list values) is written by :func:`_write` (the standard library's
    indented encoder is its pure-Python one, 3x slower); anything else by ``json.dumps`` itself."""
    parts: list[str] = []
    try:
        _write(doc, "\n", parts)
    except _NotPlain:
        return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=True) + "\n"
    parts.append("\n")
    return "".join(parts)


class _NotPlain(Exception):
    """A value :func:`_write` leaves to ``json.dumps`` (a float, a subclass, a non-string key, a cycle...)."""


_quote = json.encoder.encode_basestring_ascii  # (the C escaper json.dumps uses with ensure_ascii)
_DEPTH = 64


def _write(obj, newline: str, parts: list) -> None:
    """Append the indented JSON of ``obj`` to ``parts``; ``newline`` is a newline and the current indentation."""
    t = type(obj)
    if t is str:
        parts.append(_quote(obj))
    elif t is dict:
        if not obj:
            parts.append("{}")
            return
        if len(newline) > _DEPTH:
            raise _NotPlain
        inner = newline + "  "
        sep = "{" + inner
        for k, v in obj.items():
            if type(k) is not str:
                raise _NotPlain
            parts.append(sep)
            parts.append(_quote(k))
            parts.append(": ")
            _write(v, inner, parts)
            sep = "," + inner
        parts.append(newline + "}")
    elif t is list:
        if not obj:
            parts.append("[]")
            return
        if len(newline) > _DEPTH:
            raise _NotPlain
        inner = newline + "  "
        sep = "[" + inner
        for v in obj:
            parts.append(sep)
            _write(v, inner, parts)
            sep = "," + inner
        parts.append(newline + "]")
    elif t is int:
        parts.append(int.__repr__(obj))
    elif obj is True:
        parts.append("true")
    elif obj is False:
        parts.append("false")
    elif obj is None:
        parts.append("null")
    else:
        raise _NotPlain


def check_software(software) -> str | None:
    """None when ``software`` is spelt as certify writes it ({"certify": V, "python-flint": V}, plain version
    strings), else what is wrong. Informational: the versions themselves are not vouched for."""
    if not isinstance(software, dict) or list(software) != list(SOFTWARE):
        return f"software must be an object with the keys {', '.join(SOFTWARE)} in that order"
    for k, v in software.items():
        if not isinstance(v, str) or not _VERSION.fullmatch(v):
            return f"software.{k} must be a plain version string (letters, digits, '.', '+', '-'; at most 40)"
    return None


#: how certify writes a number in an input or a witness: an integer, a fraction in lowest terms, or an outward
#: decimal of :func:`certify.balls.upper_decimal` (``1.725229560e0``)
_INTEGER = re.compile(r"0|-?[1-9][0-9]*")
_FRACTION = re.compile(r"-?[1-9][0-9]*/[1-9][0-9]*")
_DECIMAL = re.compile(r"-?[1-9](?:\.[0-9]+)?e(?:0|-?[1-9][0-9]*)")
#: the characters an input or witness text may hold (printable ASCII); labels are short
_TEXT = re.compile(r"[ -~]*")
_DIGIT = re.compile(r"[0-9]")
#: the first characters of a text :func:`certify.balls.exact` reads as a number (an integer, decimal or fraction)
_NUMBER_START = frozenset("+-.0123456789")
MAX_TEXT = 4096


def canonical_number(text: str) -> bool:
    """Is ``text`` a number spelt the way certify writes numbers (no sign '+', no spaces, no leading zeros, a
    fraction in lowest terms with denominator > 1)? A text that is not a number at all returns False too."""
    if _INTEGER.fullmatch(text) or _DECIMAL.fullmatch(text):
        return True
    if _FRACTION.fullmatch(text):
        a, b = text.split("/")
        return b != "1" and math.gcd(int(a), int(b)) == 1 if len(text) <= 5000 else False
    return False


def _looks_numeric(text: str) -> bool:
    """Text that :func:`certify.balls.exact` would read as a number (so it must be spelt canonically)."""
    try:
        exact(text, "text")
    except InputError:
        return False
    return True


def check_spelling(obj, where: str, decimals: bool = True) -> str | None:
    """None when every text in ``obj`` (an input or witness value, nested) is spelt as certify writes it: printable
    ASCII without leading or trailing spaces, at most MAX_TEXT characters, and a number in its canonical spelling
    (``decimals`` False: an input, which certify records as an integer or a fraction only, never as a decimal);
    else the first problem, naming the field."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            bad = check_spelling(k, f"{where} (a key)", decimals) or check_spelling(v, f"{where}.{k}", decimals)
            if bad:
                return bad
        return None
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            bad = check_spelling(v, f"{where}[{i}]", decimals)
            if bad:
                return bad
        return None
    if isinstance(obj, str):
        if len(obj) > MAX_TEXT or not _TEXT.fullmatch(obj) or obj != obj.strip(" ") or "  " in obj:
            return f"{where}: text certify would not write (printable ASCII, single spaces, at most {MAX_TEXT} characters)"
        spelt = canonical_number(obj) and (decimals or not _DECIMAL.fullmatch(obj))
        # (a number has a digit, and exact() reads one only from a text opening with a sign, a digit or a point)
        if not spelt and obj[:1] in _NUMBER_START and _DIGIT.search(obj) and _looks_numeric(obj):
            form = "1/100, 7, 1.725229560e0" if decimals else "an integer or a fraction in lowest terms: 7, 1/100000"
            return f"{where}: the number {obj[:40]!r} is not spelt as certify records it ({form})"
        return None
    if obj is None or isinstance(obj, (bool, int)):
        return None
    return f"{where}: a value of type {type(obj).__name__} is not written by certify"


#: how each JSON type certify writes in a witness is named in a refusal
_JSON_TYPES = {int: "a JSON integer", str: "exact text (a JSON string)", bool: "true or false", dict: "an object", list: "a list", type(None): "null"}


def witness_field(container, key: str, where: str, json_type: type):
    """``container[key]``, a witness field certify always writes, in the one JSON type certify writes it (``int``,
    ``str``, ``bool``, ``dict``, ``list`` or ``type(None)``; a JSON integer is never ``true``): the witness readers of every kind read
    their fields through here, so that a file with the field left out, or written as another type (``"8"`` where
    certify writes ``8``, or the reverse), is refused (InputError naming ``where``) rather than read with a default
    or converted."""
    if not isinstance(container, dict) or key not in container:
        raise InputError(where, "missing: certify always writes this witness")
    value = container[key]
    if type(value) is not json_type:
        got = "null" if value is None else _JSON_TYPES.get(type(value), type(value).__name__)
        raise InputError(where, f"must be {_JSON_TYPES[json_type]}, as certify writes it (got {got})")
    return value


def witness_int(container, key: str, where: str) -> int:
    """A witness certify writes as a JSON integer (:func:`witness_field`), within the exact-integer range."""
    return exact_int(witness_field(container, key, where, int), where)


def witness_int_text(container, key: str, where: str) -> int:
    """A witness certify writes as the exact text of an integer (``"2000"``, :func:`witness_field`)."""
    return exact_int(witness_field(container, key, where, str), where)


def reported_bound(text, value, digits: int, where: str, claimed: bool = False) -> str:
    """The text of a reported bound, checked to be the one certify writes: the outward decimal
    ``upper_decimal(value, digits)`` of the re-derived ball ``value`` (a producer's report), or, with ``claimed``, a
    bound someone claimed (an audit's or a calibration's target), which certify records as an integer or a fraction
    in lowest terms. Anything else (another digit count, a looser decimal) is not what certify writes: InputError."""
    if not isinstance(text, str):
        raise InputError(where, "must be exact text (the reported bound)")
    want = upper_decimal(value, digits)
    if text == want or (claimed and (_INTEGER.fullmatch(text) or _FRACTION.fullmatch(text)) and canonical_number(text)):
        return text
    raise InputError(where, f"must be the reported bound certify writes: {want} (the ball's upper end to {digits} digits)")


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
        return render_document(self.kind, self.precision, self.inputs, self.evaluation, self.witnesses, self.budget, SOFTWARE)

    def dumps(self) -> str:
        return dumps_document(self.to_json())

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


def _no_float(text: str):
    raise InputError("certificate", f"the JSON number {text[:40]} is a float: certify writes exact numbers as text")


def load(text: str | bytes) -> dict:
    """Parse certificate JSON and check its outer shape; raise InputError naming what is wrong.

    Refuses (InputError, never a traceback): non-UTF-8 bytes, files over MAX_BYTES, JSON nested too
    deeply for the parser, duplicate keys, JSON floats (NaN, Infinity), a top level that is not an object, unknown or missing top-level keys, the
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
        doc = loads_strict(text, "certificate", parse_float=_no_float)  # depth, duplicate keys, surrogates, NaN
    except json.JSONDecodeError as err:
        raise InputError("certificate", f"not valid JSON (malformed or truncated): {err}") from None
    except RecursionError:
        raise InputError("certificate", "JSON nested too deeply: not a certificate") from None
    except ValueError as err:  # e.g. an integer literal with too many digits
        raise InputError("certificate", f"not valid JSON: {err}") from None
    check_shape(doc)
    return doc


def check_shape(doc) -> None:
    """The outer shape of a parsed certificate (what :func:`load` checks after parsing, and
    :func:`certify.verify.verify_document` of a dict given directly): InputError naming what is wrong."""
    if not isinstance(doc, dict):
        raise InputError("certificate", "top level must be a JSON object")
    schema = doc.get("schema")
    if schema in OLD_SCHEMAS:
        raise InputError(
            "certificate",
            f"schema {schema!r} is no longer accepted ({'it records no conclusions' if schema == 'certify/1' else 'not in the canonical form'}); "
            f"re-create the certificate with this version of certify ({SCHEMA!r})",
        )
    if schema != SCHEMA:
        raise InputError("certificate", f"unknown schema {str(schema)[:40]!r} (expected {SCHEMA!r})")
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
