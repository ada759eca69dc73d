"""The checker: re-derives every quantity, claim and conclusion of a certificate from inputs + witnesses.

It never re-runs a search. Each certificate kind registers an *evaluator*
``evaluate(inputs: dict[str, str], witnesses: dict) -> Evaluation`` that computes, at the current
working precision, every recorded quantity, claim and conclusion from the recorded inputs and
witnesses (a witness such as "N = 518 fails because delta_N(eps) > target" is re-checked by
evaluating that one comparison), together with the names of the inputs and witnesses the kind may
record and the *validator* of its inputs: the same functions the producer calls on its arguments, so
that producer and checker accept exactly the same inputs. Validators name a parameter the way the command
line knows it (``--mu``); the checker re-labels the error with the certificate's field (``inputs.mu``).
A kind's registering module is found through :mod:`certify.registry` (hook ``KINDS``) and imported on demand.

Verdicts (``Report.exit_code``):

* **0** the certificate is consistent and every conclusion holds;
* **4** inconsistent: the digest does not match, the layout is not the kind's (unknown keys in inputs,
  witnesses, quantity/claim/conclusion entries), a witness does not check out, or a quantity, claim
  or conclusion differs from its re-derivation;
* **5** consistent, but it proves nothing: an input is outside the range its theorem admits (a
  hypothesis fails: the validator names the parameter), or some conclusion does not hold because its
  claim or one of its hypotheses is false. The message names the failed hypothesis or conclusion;
* **6** consistent and every conclusion holds, but a search behind it stopped at its budget before
  reaching its tolerance (``search_met_gamma`` is false): the bound is valid, only looser than asked.

What is compared, for the certificate to be consistent:

1. the digest matches the content (any edit is caught even before recomputation);
2. the recomputed set of quantities, claims and conclusions is exactly the recorded one, field by field
   (names, equations, descriptions, statements, relations, hypotheses), and no entry has unknown keys;
3. each recorded ball is *proved* by a recomputation (see below), and each recorded ``lower``/``upper``
   decimal is the outward rounding of the recorded ball;
4. each claim's recorded ``holds`` equals what the recomputed balls decide (undecided rejects), and
   each conclusion's ``holds`` is its claim and all its hypotheses.

Containment, at any precision P >= the recorded precision R (``--precision``). A recorded quantity
makes one statement about a true value x: an *enclosure* (the default) states x in [m - r, m + r];
a quantity marked ``"bound": "upper"`` (e.g. the key (37) of a branch-and-bound leaf, an exact
rational produced by an upper-bound procedure whose output depends on the precision) states only
x <= m + r. The recomputation at P gives a ball B_P that provably contains x (resp. whose upper
endpoint provably bounds x). The statement is proved when B_P lies inside the recorded ball (an
enclosure) or when upper(B_P) <= m + r (an upper bound). A procedure's output at P need not lie
inside its output at R (a leaf key may move either way by rounding, a quadrature at another precision
gives another enclosure), so when the P-bit recomputation does not prove a recorded statement the
checker falls back to the recomputation at R, where the evaluator reproduces the recorded balls
exactly (same inputs, witnesses and precision: that is how the producer wrote them). Each check is
therefore sound (every accepted statement is proved by a rigorous recomputation at P or at R), and a
genuine certificate is accepted at every P >= R by construction. Claims are treated the same way: a
claim is confirmed when the balls at P, or else at R, decide it as recorded.

``budget`` (where the width went) is re-derived by the evaluator at the recorded precision and must
be identical. ``software`` is informational: outside the digest, and not vouched for.
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from contextvars import ContextVar
import re
from dataclasses import dataclass, field
from typing import Callable

from . import registry
from .limits import check_work
from .balls import (
    PRECISION_LADDER,
    InputError,
    UndecidedError,
    ball_contains,
    ball_from_json,
    ctx,
    fmpq,
    lower_decimal,
    upper_decimal,
    require_in,
)
from .certificate import (
    CLAIM_KEYS,
    CONCLUSION_KEYS,
    DIGITS,
    INFORMATIONAL_KEYS,
    MAX_PRECISION,
    QUANTITY_KEYS,
    SOFTWARE,
    Certificate,
    Evaluation,
    check_shape,
    check_software,
    check_spelling,
    digest_of,
    dumps_document,
    load,
    render_document,
)

from .exits import EXIT_INCONSISTENT, EXIT_NOT_PROVED, EXIT_OK, EXIT_STOPPED_EARLY  # noqa: F401

Evaluator = Callable[[dict, dict], Evaluation]
Validator = Callable[[dict], object]

#: claims that, when false in a consistent certificate, mean a search stopped early (exit 6); also when
#: prefixed ("phase[0].search_met_gamma": one phase of a schedule certificate)
STOPPED_EARLY_CLAIMS = ("search_met_gamma",)
MIN_PRECISION = 53


@dataclass(frozen=True)
class KindSpec:
    """What the checker needs for one certificate kind."""

    evaluator: Evaluator
    validate: Validator | None = None  # the producer's input validators (raise InputError)
    # input names the kind may record: a set, or a predicate name -> bool (None: not declared)
    inputs: frozenset | Callable[[str], bool] | None = None
    witnesses: frozenset | None = None  # top-level witness names the kind may record
    #: a small, fast genuine certificate of this kind (the conformance suite runs every kind's example)
    example: Callable[[], Certificate] | None = None
    #: producer parameter name (a CLI flag) -> recorded input name, where ``--x-y`` is not recorded as ``x_y``
    fields: dict = field(default_factory=dict)
    #: the working precision a producer records for these witnesses (None: a rung of the precision ladder)
    precision_of: Callable[[dict], int] | None = None


_KINDS: dict[str, KindSpec] = {}


def register(
    kind: str,
    evaluator: Evaluator,
    validate: Validator | None = None,
    inputs=None,
    witnesses=None,
    *,
    example: Callable[[], Certificate] | None = None,
    fields: dict[str, str] | None = None,
    precision_of: Callable[[dict], int] | None = None,
) -> None:
    """Register a certificate kind: its evaluator ``(inputs, witnesses) -> Evaluation``, the validator of its
    inputs, the input and witness names it may record, an example producer (required by the conformance
    suite) and the recorded name of every producer parameter not spelt ``--x-y`` -> ``x_y``."""
    known = inputs if inputs is None or callable(inputs) else frozenset(inputs)
    _KINDS[kind] = KindSpec(
        evaluator, validate, known, None if witnesses is None else frozenset(witnesses), example, dict(fields or {}), precision_of
    )


def unregister(kind: str) -> None:
    """Forget a kind registered at run time (tests)."""
    _KINDS.pop(kind, None)


def field_name(spec: KindSpec, parameter: str, inputs: dict) -> str:
    """The certificate field a producer parameter is recorded as: ``--noise-multiplier`` -> ``inputs.noise_multiplier``.

    Validators name their parameter the way a command-line user knows it (the flag); in ``certify verify``
    the user holds a JSON file, so the same error names the JSON field. A name that is neither a recorded
    input nor a flag is returned unchanged."""
    name = spec.fields.get(parameter)
    if name is None and parameter.startswith("--"):
        name = parameter[2:].replace("-", "_")
    if name is None:
        name = parameter
    return f"inputs.{name}" if name in inputs else parameter


def _as_field(spec: KindSpec, err: InputError, inputs: dict) -> InputError:
    """The validator's error, re-labelled with the certificate's field name."""
    if not isinstance(inputs, dict):
        return err
    return InputError(field_name(spec, err.parameter, inputs), err.message)


def spec_for(kind: str) -> KindSpec:
    if not isinstance(kind, str):
        raise InputError("certificate", "kind must be a string")
    if kind not in _KINDS:
        module = registry.kind_modules().get(kind)
        if module is not None:
            importlib.import_module(module)
    if kind not in _KINDS:
        raise InputError("certificate", f"unknown kind {kind[:80]!r}")
    return _KINDS[kind]


def registered_kinds() -> list[str]:
    """Every kind declared in the registry (its module imported) and every kind registered at run time."""
    for module in set(registry.kind_modules().values()):
        importlib.import_module(module)
    return sorted(_KINDS)


@dataclass
class Report:
    """What ``verify`` found. ``problems`` lists everything wrong (inconsistencies first)."""

    consistent: bool = True
    checked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: (statement, holds, why) per conclusion, in the certificate's order
    conclusions: list[tuple[str, bool, str]] = field(default_factory=list)
    #: a hypothesis on the inputs failed (the validator's message)
    hypothesis_failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: a search behind the certificate stopped at its budget before its tolerance (valid, looser bound)
    stopped_early: bool = False

    def good(self, msg: str) -> None:
        self.checked.append(msg)

    def bad(self, msg: str) -> None:
        self.consistent = False
        self.problems.append(msg)

    def hypothesis_fails(self, msg: str) -> None:
        self.hypothesis_failures.append(msg)
        self.problems.append(msg)

    def conclusion(self, statement: str, holds: bool, why: str = "") -> None:
        self.conclusions.append((statement, holds, why))
        if not holds:
            self.problems.append(f"conclusion does not hold: {statement} ({why})")

    @property
    def proved(self) -> bool:
        return not self.hypothesis_failures and bool(self.conclusions) and all(h for _, h, _ in self.conclusions)

    @property
    def ok(self) -> bool:
        return self.consistent and self.proved

    @property
    def exit_code(self) -> int:
        if not self.consistent:
            return EXIT_INCONSISTENT
        if not self.proved:
            return EXIT_NOT_PROVED
        return EXIT_STOPPED_EARLY if self.stopped_early else EXIT_OK


def check_precision(precision, name: str = "--precision") -> int:
    """A working precision (bits) in [53, MAX_PRECISION]; InputError otherwise."""
    if isinstance(precision, bool) or not isinstance(precision, int):
        raise InputError(name, f"must be an integer number of bits, got {precision!r}")
    require_in(name, precision, MIN_PRECISION, MAX_PRECISION, "[]", integer=True, shown=f"in [{MIN_PRECISION}, {MAX_PRECISION}] bits")
    return precision


#: the precision the certificate under check records, while its evaluator runs (None outside ``certify verify``)
RECORDED_PRECISION: ContextVar[int | None] = ContextVar("certify_recorded_precision", default=None)


@contextmanager
def recorded_precision(bits: int | None):
    """Tell the evaluator the recorded precision: a witness value that moves with precision (a branch-and-bound leaf
    key) is then demanded equal at that precision and merely confirmed above it."""
    token = RECORDED_PRECISION.set(bits)
    try:
        yield
    finally:
        RECORDED_PRECISION.reset(token)


class _Evaluations:
    """The evaluator's output at the requested precision P and (lazily) at the recorded precision R."""

    def __init__(self, spec: KindSpec, doc: dict, prec: int):
        self.spec, self.doc, self.prec, self.rec = spec, doc, prec, doc["precision"]
        self._cache: dict[int, Evaluation | str] = {}

    def at(self, prec: int) -> Evaluation | str:
        """The Evaluation at ``prec``, or the text of the error that stopped it."""
        if prec not in self._cache:
            with ctx.workprec(prec), recorded_precision(self.rec):
                try:
                    self._cache[prec] = self.spec.evaluator(self.doc["inputs"], self.doc["witnesses"])
                except InputError as err:
                    err = _as_field(self.spec, err, self.doc["inputs"])
                    self._cache[prec] = f"inputs or witnesses rejected at {prec} bits: {err}"
                except UndecidedError as err:
                    self._cache[prec] = f"a witness could not be re-checked at {prec} bits: {err}"
                except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError, RecursionError) as err:
                    self._cache[prec] = f"malformed inputs or witnesses: {type(err).__name__}: {str(err)[:200]}"
        return self._cache[prec]

    def fallback(self) -> Evaluation | None:
        """The recorded-precision Evaluation when P > R (None when P = R or it fails)."""
        if self.prec == self.rec:
            return None
        ev = self.at(self.rec)
        return ev if isinstance(ev, Evaluation) else None


def verify_document(doc: dict, precision: int | None = None, text: str | None = None) -> Report:
    """Check a parsed certificate; ``precision`` (bits) defaults to the recorded one (never below it). ``text``:
    the file's text, which must be byte for byte what certify writes (without it, the parsed document is
    compared in its key order)."""
    check_shape(doc)  # (load checked a file's; a dict handed to the API is checked the same way)
    rep = Report()
    spec = spec_for(doc["kind"])
    if precision is not None:
        check_precision(precision)
    check_work(doc, precision)  # the work the file asks for, decided from its shape before any evaluation (exit 2)
    prec = max(precision or doc["precision"], doc["precision"])
    try:
        if doc.get("digest") != digest_of(doc):
            rep.bad("digest does not match the content: the certificate was altered after it was written")
    except (RecursionError, TypeError, ValueError):
        rep.bad("digest cannot be computed: the content is not canonical JSON")
        return rep
    _check_layout(doc, spec, rep)
    for key in ("inputs", "witnesses"):
        bad = check_spelling(doc[key], key, decimals=key == "witnesses")
        if bad:
            rep.bad(bad)
    bad = check_software(doc.get("software"))
    if bad:
        rep.bad(bad)
    _check_recorded_precision(doc, spec, rep)
    if spec.validate is not None:
        try:
            with ctx.workprec(prec):
                spec.validate(doc["inputs"])
        except InputError as err:
            err = _as_field(spec, err, doc["inputs"])
            rep.hypothesis_fails(f"hypothesis fails: input {err}: the certificate proves nothing")
            return rep
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as err:
            rep.bad(f"malformed inputs: {type(err).__name__}: {str(err)[:200]}")
            return rep
    evs = _Evaluations(spec, doc, prec)
    ev = evs.at(prec)
    if prec == evs.rec and rep.consistent and isinstance(ev, Evaluation) and _accept_if_canonical(doc, text, ev, rep):
        return rep
    if not isinstance(ev, Evaluation):
        alt = evs.fallback()
        if alt is None:
            rep.bad(ev)
            return rep
        rep.notes.append(f"the {prec}-bit recomputation stopped ({ev}); everything was re-derived at the recorded {evs.rec} bits")
        ev = alt
    _compare_quantities(doc, ev, evs, rep)
    _compare_claims(doc, ev, evs, rep)
    _compare_conclusions(doc, ev, rep)
    # a branch-and-bound that stopped at its budget: the claim "gap <= gamma" is re-derived false
    rep.stopped_early = any(c.name.rsplit(".", 1)[-1] in STOPPED_EARLY_CLAIMS and not c.holds for c in ev.claims)
    ev_rec = evs.fallback() if prec > evs.rec else ev
    if ev_rec is None:  # the recorded precision cannot re-derive it: certify never wrote it at that precision
        rep.bad(f"the certificate cannot be re-derived at its recorded {evs.rec} bits ({evs.at(evs.rec)}): certify never writes such a file")
        return rep
    budget = ev_rec.budget.to_json()
    if doc["budget"] != budget:
        keys = set(doc["budget"]) | set(budget)
        diff = sorted(k for k in keys if doc["budget"].get(k) != budget.get(k))
        rep.bad(f"budget: {', '.join(map(str, diff))[:200]} differ(s) from the re-derivation at {evs.rec} bits")
    else:
        rep.good(f"budget re-derived at {evs.rec} bits")
    if rep.consistent:
        _check_canonical(doc, text, ev_rec, rep)
    if prec > evs.rec:
        rep.notes.append(f"re-derived at {prec} bits (recorded: {evs.rec} bits)")
    rep.notes.append(f"not vouched for (informational, outside the digest): {', '.join(INFORMATIONAL_KEYS)}")
    return rep


def _rendering(doc: dict, ev: Evaluation, digest: str | None = None) -> dict:
    """The document certify writes from the certificate's inputs and witnesses and the re-derivation ``ev``."""
    software = doc["software"] if check_software(doc.get("software")) is None else SOFTWARE
    return render_document(doc["kind"], doc["precision"], doc["inputs"], ev, doc["witnesses"], None, software, digest)


def _accept_if_canonical(doc: dict, text: str | None, ev: Evaluation, rep: Report) -> bool:
    """At the recorded precision, with the digest and layout already checked: when the file is byte for byte the
    re-rendering of ``ev``, every recorded ball, decimal, claim, conclusion and the budget *is* the re-derived one,
    so nothing is left to compare but the verdict (each item is reported as checked). False: compare field by
    field (:func:`verify_document`'s general path, which names what differs)."""
    if not all(q.value.is_finite() for q in ev.quantities.values()):
        return False  # (the general path reports it)
    try:
        want = _rendering(doc, ev, doc["digest"])  # (doc's digest was proved to be that of its content)
    except (InputError, ValueError):
        return False  # a value certify cannot print: the general path names it
    if (text if text is not None else dumps_document(doc)) != dumps_document(want):
        return False
    for name, q in want["quantities"].items():
        what = f"<= {q['upper']}" if q.get("bound") == "upper" else f"in [{q['lower']}, {q['upper']}]"
        rep.good(f"quantity {name} {q['equation']} {what}")
    for c in ev.claims:
        rep.good(f"claim {c.statement}: {'holds' if c.holds else 'fails (as recorded)'}")
    _compare_conclusions(doc, ev, rep)
    rep.stopped_early = any(c.name.rsplit(".", 1)[-1] in STOPPED_EARLY_CLAIMS and not c.holds for c in ev.claims)
    rep.good(f"budget re-derived at {doc['precision']} bits")
    rep.good("the file is the canonical document certify writes (re-rendered from the re-derivation)")
    rep.notes.append(f"not vouched for (informational, outside the digest): {', '.join(INFORMATIONAL_KEYS)}")
    return True


def _check_recorded_precision(doc: dict, spec: KindSpec, rep: Report) -> None:
    """The recorded precision is one a producer writes: a rung of the ladder (128, 256, ..., 4096: producers start at
    128 and double while undecided), or the kind's own (the PLD accountant's K + EXTRA_PREC)."""
    rec = doc["precision"]
    if spec.precision_of is None:
        if rec not in PRECISION_LADDER:
            rep.bad(f"precision {rec}: producers record a rung of {', '.join(map(str, PRECISION_LADDER))} bits")
        return
    try:
        want = spec.precision_of(doc["witnesses"])
    except (InputError, KeyError, TypeError, ValueError):
        return  # the evaluator reports the malformed witness
    if rec != want:
        rep.bad(f"precision {rec}: the producer of {doc['kind']} records {want} bits for these witnesses")


def _check_canonical(doc: dict, text: str | None, ev: Evaluation, rep: Report) -> None:
    """The file is byte for byte the document certify writes from these inputs and witnesses: every derived
    field re-rendered from the re-derivation ``ev`` at the recorded precision (:func:`render_document`)."""
    want = _rendering(doc, ev)
    written = dumps_document(want)
    if (text if text is not None else dumps_document(doc)) == written:
        rep.good("the file is the canonical document certify writes (re-rendered from the re-derivation)")
        return
    order = list(doc)
    keys = [k for k in want if k not in doc or dumps_document({k: want[k]}) != dumps_document({k: doc[k]}) or order.index(k) != list(want).index(k)]
    where = f"field(s) {', '.join(keys)[:200]}" if keys else "layout (spacing, key order, escapes or the final newline)"
    rep.bad(f"not the canonical document certify writes from these inputs and witnesses: {where} differ(s) from the re-rendering")


def _check_layout(doc: dict, spec: KindSpec, rep: Report) -> None:
    """The schema is closed: unknown input/witness names and unknown entry keys are rejected."""
    if spec.inputs is not None:
        known = spec.inputs if callable(spec.inputs) else spec.inputs.__contains__
        extra = sorted(k for k in doc["inputs"] if not known(k))
        if extra:
            rep.bad(f"inputs: unknown input(s) {', '.join(extra)[:200]} for kind {doc['kind']}")
    if spec.witnesses is not None:
        extra = sorted(set(doc["witnesses"]) - spec.witnesses)
        if extra:
            rep.bad(f"witnesses: unknown witness(es) {', '.join(map(str, extra))[:200]} for kind {doc['kind']}")
    for name, q in doc["quantities"].items():
        if not isinstance(q, dict):
            rep.bad(f"quantity {name}: not an object")
        elif not q.keys() <= QUANTITY_KEYS:
            rep.bad(f"quantity {name}: unknown key(s) {', '.join(sorted(set(q) - QUANTITY_KEYS))[:200]}")
    for what, entries, keys in (("claims", doc["claims"], CLAIM_KEYS), ("conclusions", doc["conclusions"], CONCLUSION_KEYS)):
        for i, e in enumerate(entries):
            if not isinstance(e, dict):
                rep.bad(f"{what}[{i}]: not an object")
            elif e.keys() != keys:
                diff = sorted(set(e) ^ keys)
                rep.bad(f"{what}[{i}]: unknown or missing key(s) {', '.join(map(str, diff))[:200]}")


#: a recorded ball's mantissa (decimal digits) and exponent (bits) are bounded before any exact arithmetic
MAX_MANTISSA_DIGITS, MAX_EXPONENT = 4 * MAX_PRECISION, 1 << 24


def _check_ball_size(obj) -> None:
    """Refuse a serialised ball whose mantissa or exponent would make exact arithmetic huge."""
    if not isinstance(obj, dict):
        raise ValueError("a ball must be an object")
    for part in ("mid", "rad"):
        pair = obj.get(part)
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], int)):
            raise ValueError(f"{part} must be [mantissa string, exponent integer]")
        if len(pair[0]) > MAX_MANTISSA_DIGITS or abs(pair[1]) > MAX_EXPONENT:
            raise ValueError(f"{part} is out of range (mantissa at most {MAX_MANTISSA_DIGITS} digits, |exponent| at most {MAX_EXPONENT})")


def _proves(rec_ball: tuple[fmpq, fmpq], value, bound: str) -> bool:
    """Does the recomputed ball ``value`` prove the recorded statement (see the module docstring)?"""
    if bound == "upper":
        m, r = rec_ball
        return value.upper().fmpq() <= m + r
    return ball_contains(rec_ball, value)


def _compare_quantities(doc: dict, ev: Evaluation, evs: _Evaluations, rep: Report) -> None:
    recorded = doc["quantities"]
    for name in sorted(set(recorded) - set(ev.quantities)):
        rep.bad(f"quantity {name}: recorded but not derivable from the inputs")
    for name, q in ev.quantities.items():
        if name not in recorded:
            rep.bad(f"quantity {name}: missing from the certificate")
            continue
        rec = recorded[name]
        if not isinstance(rec, dict):
            continue  # reported by the layout check
        if not q.value.is_finite():  # (Evaluation.add refuses these; an evaluator that bypasses it is caught here)
            rep.bad(f"quantity {name}: the re-derived ball is not finite")
            continue
        # a short enclosure re-derived at the recorded precision: every check below in integers first
        small = _small_ball(rec.get("ball")) if evs.prec == evs.rec and not q.bound else None
        try:
            mid_rad = None
            if small is None:  # (a short ball passed stricter checks than these)
                _check_ball_size(rec.get("ball"))
                mid_rad = ball_from_json(rec.get("ball"))
        except (KeyError, TypeError, ValueError) as err:
            rep.bad(f"quantity {name}: malformed ball ({str(err)[:120]})")
            continue
        for key, want in (
            ("equation", q.equation),
            ("description", q.description),
            ("integer", True if q.integer else None),
            ("bound", q.bound or None),
        ):
            if rec.get(key) != want:
                rep.bad(f"quantity {name}: {key} recorded as {rec.get(key)!r}, re-derived {want!r}")
                break
        else:
            if small is not None:
                if _small_ball_proved(small, q.value, evs.rec, rec):
                    rep.good(f"quantity {name} {q.equation} in [{rec['lower']}, {rec['upper']}]")
                    continue
                _check_ball_size(rec.get("ball"))  # the general path finds and reports what is wrong
                mid_rad = ball_from_json(rec.get("ball"))
            proved_at = _prove_quantity(name, mid_rad, q, evs, rep)
            if proved_at is None:
                continue
            m, r = mid_rad
            if rec.get("lower") != lower_decimal(m - r, DIGITS) or rec.get("upper") != upper_decimal(m + r, DIGITS):
                rep.bad(f"quantity {name}: recorded decimals {rec.get('lower')!r}..{rec.get('upper')!r} are not the outward rounding of its ball")
                continue
            what = f"<= {rec['upper']}" if q.bound == "upper" else f"in [{rec['lower']}, {rec['upper']}]"
            rep.good(f"quantity {name} {q.equation} {what}{proved_at}")


# --------------------------------------------------------------------------------------------
# The same checks in integers, for short balls (the common case): a recorded ball whose mantissas have at
# most _SMALL_DIGITS digits and whose exponents are at most _SMALL_EXPONENT in absolute value, and a
# recomputed ball of that size, are compared as dyadics m 2^e with Python integers instead of rationals.
# _small_ball_proved accepts exactly when the general path (_check_ball_size, ball_from_json,
# _prove_quantity at the recorded precision, lower_decimal/upper_decimal) accepts; when it does not accept,
# the general path runs and reports. Nothing is cached: every call re-derives from the certificate at hand.
# --------------------------------------------------------------------------------------------
_SMALL_DIGITS, _SMALL_EXPONENT = 300, 4096
_SMALL_MANTISSA = re.compile(r"-?[0-9]{1,%d}" % _SMALL_DIGITS)


def _small_dyadic(pair) -> tuple[int, int] | None:
    if type(pair) is not list or len(pair) != 2:
        return None
    m, e = pair
    if type(m) is not str or type(e) is not int or abs(e) > _SMALL_EXPONENT or not _SMALL_MANTISSA.fullmatch(m):
        return None
    return int(m), e


def _small_ball(obj) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """((mid mantissa, exponent), (rad mantissa, exponent)) of a short, well-formed serialised ball, else None."""
    if type(obj) is not dict or len(obj) != 2:
        return None
    mid, rad = _small_dyadic(obj.get("mid")), _small_dyadic(obj.get("rad"))
    if mid is None or rad is None or rad[0] < 0:
        return None
    return mid, rad


def _dy_add(a: int, ea: int, b: int, eb: int) -> tuple[int, int]:
    """a 2^ea + b 2^eb, exactly, as (mantissa, exponent)."""
    e = min(ea, eb)
    return (a << (ea - e)) + (b << (eb - e)), e


def _dy_le(x: tuple[int, int], y: tuple[int, int]) -> bool:
    """x <= y for dyadics (mantissa, exponent), exactly."""
    (a, ea), (b, eb) = x, y
    return (a << (ea - eb)) <= b if ea >= eb else a <= (b << (eb - ea))


def _small_ball_proved(small, value, rec_prec: int, rec: dict) -> bool:
    """The recomputed ``value`` (at the recorded precision) proves the recorded enclosure ``small``: the recorded
    ball contains it, is at most twice as wide up to the slack of :func:`_prove_quantity`, and ``lower``/``upper``
    are its outward roundings. False also when a number is not short (then the general path decides)."""
    (m, em), (r, er) = small
    vm, ve = value.mid().man_exp()
    vr, vre = value.rad().man_exp()
    vm, ve, vr, vre = int(vm), int(ve), int(vr), int(vre)
    if max(abs(ve), abs(vre)) > _SMALL_EXPONENT or max(vm.bit_length(), vr.bit_length()) > 4 * _SMALL_EXPONENT:
        return False
    lo, hi = _dy_add(m, em, -r, er), _dy_add(m, em, r, er)
    if not (_dy_le(lo, _dy_add(vm, ve, -vr, vre)) and _dy_le(_dy_add(vm, ve, vr, vre), hi)):
        return False
    if not _dy_le((r, er), _dy_add(2 * vr, vre, abs(m), em - (rec_prec - 4))):  # r <= 2 r_new + |m| 2^-(R-4)
        return False
    # the decimals by the one rounding routine of the package (as the general path)
    return rec.get("lower") == lower_decimal(_dyadic(lo), DIGITS) and rec.get("upper") == upper_decimal(_dyadic(hi), DIGITS)


def _dyadic(x: tuple[int, int]) -> fmpq:
    m, e = x
    return fmpq(m << e) if e >= 0 else fmpq(m, 1 << -e)


def _prove_quantity(name, mid_rad, q, evs: _Evaluations, rep: Report) -> str | None:
    """Return a note on where the recorded ball was proved, or None (and report) when it was not."""
    m, r = mid_rad
    if evs.prec > evs.rec and _proves(mid_rad, q.value, q.bound):
        return ""
    if evs.prec > evs.rec:
        alt = evs.fallback()
        q_rec = None if alt is None else alt.quantities.get(name)
        note = f" (proved at the recorded {evs.rec} bits)"
    else:
        q_rec, note = q, ""
    if q_rec is None or not _proves(mid_rad, q_rec.value, q.bound):
        v = q.value
        rep.bad(
            f"quantity {name} {q.equation}: recorded ball does not contain the recomputed one "
            f"[{lower_decimal(v, DIGITS)}, {upper_decimal(v, DIGITS)}]"
        )
        return None
    # at the recorded precision the recomputation is the recorded ball: it may not be wider
    r_new = q_rec.value.rad().fmpq()
    slack = abs(m) * fmpq(1, 2 ** (evs.rec - 4))
    if r > 2 * r_new + slack:
        rep.bad(f"quantity {name} {q.equation}: recorded ball is wider than the recomputation justifies")
        return None
    return note


_CLAIM_FIELDS = ("name", "statement", "lhs", "relation", "rhs", "equation")


def _compare_claims(doc: dict, ev: Evaluation, evs: _Evaluations, rep: Report) -> None:
    recorded = doc["claims"]
    if len(recorded) != len(ev.claims):
        rep.bad(f"claims: {len(recorded)} recorded, {len(ev.claims)} re-derived")
    alt = None
    for i, (rec, c) in enumerate(zip(recorded, ev.claims)):
        if not isinstance(rec, dict):
            continue  # reported by the layout check
        same = (rec.get("name"), rec.get("statement"), rec.get("lhs"), rec.get("relation"), rec.get("rhs"), rec.get("equation")) == (
            c.name,
            c.statement,
            c.lhs,
            c.relation,
            c.rhs,
            c.equation,
        )
        diff = [] if same else [f for f in _CLAIM_FIELDS if rec.get(f) != getattr(c, f)]
        if diff:
            rep.bad(f"claim {c.name}: field(s) {', '.join(diff)} differ from the re-derived claim ({c.statement})")
            continue
        holds, note = c.holds, ""
        if rec.get("holds") is not holds and evs.prec > evs.rec:
            alt = alt or evs.fallback()
            if alt is not None and i < len(alt.claims) and alt.claims[i].name == c.name:
                holds, note = alt.claims[i].holds, f" (decided at the recorded {evs.rec} bits)"
        if rec.get("holds") is not holds:
            rep.bad(f"claim {c.name} ({c.statement}): recorded holds={rec.get('holds')!r} but the balls decide {str(holds).lower()}")
            continue
        rep.good(f"claim {c.statement}: {'holds' if holds else 'fails (as recorded)'}{note}")


def _compare_conclusions(doc: dict, ev: Evaluation, rep: Report) -> None:
    recorded = doc["conclusions"]
    if not ev.conclusions:  # pragma: no cover - every registered kind declares one
        rep.bad(f"kind {doc['kind']} declares no conclusion")
        return
    if len(recorded) != len(ev.conclusions):
        rep.bad(f"conclusions: {len(recorded)} recorded, {len(ev.conclusions)} re-derived ({'; '.join(c.statement for c in ev.conclusions)})")
    # the verdict rests on the recorded claims, which were just compared with their re-derivation
    holds_of = {c.get("name"): c.get("holds") is True for c in doc["claims"] if isinstance(c, dict)}
    statement_of = {c.name: c.statement for c in ev.claims}
    for rec, c in zip(recorded, ev.conclusions):
        if not isinstance(rec, dict):
            continue
        want = c.to_json()
        diff = [f for f in ("name", "statement", "claim", "hypotheses") if rec.get(f) != want[f]]
        if diff:
            rep.bad(f"conclusion {c.name}: field(s) {', '.join(diff)} differ from the re-derived conclusion ({c.statement})")
            continue
        failed = [h for h in c.hypotheses if not holds_of.get(h, False)]
        claim_holds = holds_of.get(c.claim, False)
        holds = claim_holds and not failed
        if rec.get("holds") is not holds:
            rep.bad(
                f"conclusion {c.name} ({c.statement}): recorded holds={rec.get('holds')!r} but its claim and hypotheses give {str(holds).lower()}"
            )
        why = ""
        if failed:
            why = "failed hypothesis: " + "; ".join(f"{h} ({statement_of.get(h, h)})" for h in failed)
        if not claim_holds:
            why = (why + "; " if why else "") + f"the conclusion's claim fails: {c.claim} ({statement_of.get(c.claim, c.claim)})"
        rep.conclusion(c.statement, holds, why)
    if not recorded:
        for c in ev.conclusions:
            rep.conclusion(c.statement, False, "not recorded in the certificate")


def verify_text(text: str | bytes, precision: int | None = None) -> Report:
    doc = load(text)
    if isinstance(text, bytes):
        text = text.decode("utf-8")  # (load checked it)
    return verify_document(doc, precision, text)
