"""Provenance notes: where an input value came from, written and checked in one place.

A certificate input ``<field>`` may carry ``<field>.note``, a sentence saying how its exact value was obtained
from another library's number. Every note is a statement about the recorded value, so the validators (of the
producer and of ``certify verify`` alike) check it; a note that certify would not have written, or that does
not describe the recorded value, is refused (a certificate must not say that an Opacus float was accounted at
its exact binary value while another value was used). The three forms:

* ``binary float R from L; exact binary value X used``: the library handed over the binary float whose
  shortest repr is R; X is that float's exact value (``fractions.Fraction(float(R))``) and the input is X;
* ``p = sample_size/source_dataset_size = b/n``: the fixed-size sampling rate of a dp_accounting
  ``SampledWithoutReplacementDpEvent``; the input is b/n;
* ``dp_accounting noise multiplier z = Z under REPLACE_ONE is relative to the replace-one sensitivity 2C;
  relative to the clip norm C it is sigma = 2z`` (optionally followed by `` (`` a binary-float note for Z
  ``)``): the input is 2Z.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from .balls import InputError, exact, exact_str, fmpq

#: suffix of an input field noting where a value came from
NOTE_SUFFIX = ".note"

_BINARY = "binary float {r} from {library}; exact binary value {x} used"
_EXACT_RE = r"[0-9]{1,400}(?:/[0-9]{1,400})?"  # the exact value of a positive float: at most 309 + 324 digits
#: where the binary floats certify takes come from (the only names a note may give; "the caller": a float handed to
#: certify.api by a Python caller)
LIBRARIES = ("Opacus", "dp_accounting", "the caller")
_BINARY_RE = re.compile(
    r"binary float (?P<r>[0-9eE.+-]{1,32}) from (?P<lib>" + "|".join(LIBRARIES) + "); exact binary value (?P<x>" + _EXACT_RE + ") used"
)
_RATIO = "p = sample_size/source_dataset_size = {b}/{n}"
_RATIO_RE = re.compile(r"p = sample_size/source_dataset_size = (?P<b>[0-9]{1,2500})/(?P<n>[0-9]{1,2500})")
_REPLACE_ONE = (
    "dp_accounting noise multiplier z = {z} under REPLACE_ONE is relative to the replace-one sensitivity 2C; "
    "relative to the clip norm C it is sigma = 2z"
)
_REPLACE_ONE_RE = re.compile(
    re.escape(_REPLACE_ONE).replace(re.escape("{z}"), "(?P<z>" + _EXACT_RE + ")") + r"(?: \((?P<inner>binary float [^()]{1,700})\))?"
)


def binary_float_note(x: float, library: str) -> tuple[fmpq, str]:
    """The exact value of the finite binary float ``x`` from ``library``, and the note recording it.

    (Python integers throughout, no Fraction: ``float.as_integer_ratio`` is in lowest terms with a positive
    denominator, as fmpq is, so the text is :func:`certify.balls.exact_str`'s, digit for digit: tested.)"""
    p, d = float(x).as_integer_ratio()
    return fmpq(p, d), _BINARY.format(r=repr(x), library=library, x=str(p) if d == 1 else f"{p}/{d}")


class FloatNote:
    """The note :func:`binary_float_note` writes for the float ``x`` from ``library``, written when first read as
    text (``str``): reading an event takes its floats' exact values at once and their notes only when a certificate
    records them. Equal to that text and to another FloatNote of the same float (bit for bit: -0.0 is not 0.0) and
    library; hashed as the text (written then). Its length is below MAX_LENGTH: repr(x) has at most 24 characters and
    the exact value p/q of a float at most 309 + 1 + 324 digits (|p| < 2^1024, q <= 2^1074)."""

    __slots__ = ("x", "library", "_text")
    MAX_LENGTH = len(_BINARY) + 24 + 40 + 310 + 1 + 325

    def __init__(self, x: float, library: str):
        self.x, self.library, self._text = x, library, None

    def __str__(self) -> str:
        if self._text is None:
            self._text = binary_float_note(self.x, self.library)[1]
        return self._text

    def __repr__(self) -> str:
        return repr(str(self))

    def __eq__(self, other) -> bool:
        if type(other) is FloatNote:
            return self.library == other.library and self.x == other.x and math.copysign(1.0, self.x) == math.copysign(1.0, other.x)
        return str(self) == other if isinstance(other, str) else NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))


def noted_float(x: float, library: str) -> tuple[fmpq, FloatNote]:
    """:func:`binary_float_note` with the note a :class:`FloatNote` (its text written when read)."""
    return fmpq(*x.as_integer_ratio()), FloatNote(x, library)


def ratio_note(b: fmpq, n: fmpq) -> str:
    """The note of a fixed-size sampling rate p = b/n taken from a dp_accounting event."""
    return _RATIO.format(b=exact_str(b), n=exact_str(n))


def replace_one_noise_note(z: fmpq, z_note: str | None) -> str:
    """The note of sigma = 2z for dp_accounting's REPLACE_ONE noise multiplier z (and z's own note, if any)."""
    return _REPLACE_ONE.format(z=exact_str(z)) + (f" ({z_note})" if z_note else "")


def _binary_value(m: re.Match, field: str) -> fmpq:
    """X of a binary-float note, after checking that X is the exact value of the float R."""
    try:
        r = float(m["r"])
    except ValueError:
        r = math.nan
    x = exact(m["x"], field)
    if not math.isfinite(r) or repr(r) != m["r"] or exact_str(x) != m["x"]:  # the spellings certify writes, only
        raise InputError(field, f"the note's float {m['r']} or value {m['x'][:40]} is not written as certify writes it")
    if fmpq(*Fraction(r).as_integer_ratio()) != x:
        raise InputError(field, f"the note says {m['x']} is the exact value of the binary float {m['r']}, which it is not")
    return x


#: the fields a note of each form may describe (the last component of the field's name); a binary float is never
#: a count (certify takes counts as integers, never from a float), so no binary-float note stands on one of these
_COUNT_FIELDS = ("steps", "count", "phases", "batch_size", "dataset_size", "sample_size", "source_dataset_size", "num_steps", "epochs")
_RATIO_FIELDS = ("sampling_rate",)
_REPLACE_ONE_FIELDS = ("noise_multiplier",)


def _base(field: str) -> str:
    """``phase[3].sampling_rate.note`` -> ``sampling_rate``."""
    name = field[: -len(NOTE_SUFFIX)] if field.endswith(NOTE_SUFFIX) else field
    return name.rsplit(".", 1)[-1]


def _where(field: str, allowed: tuple, form: str, contract_ok: bool, contract: str) -> None:
    if _base(field) not in allowed:
        raise InputError(field, f"a {form} note describes {' or '.join(allowed)} only, not {_base(field)}")
    if not contract_ok:
        raise InputError(field, f"a {form} note is written under {contract} only")


def noted_value(note: str, field: str, sampling: str | None = None, adjacency: str | None = None) -> fmpq:
    """The value a note says its input holds; InputError when certify would not have written the note, or would
    not have written it on this field or under this contract (``sampling``, ``adjacency``: the certificate's;
    None: not checked)."""
    m = _BINARY_RE.fullmatch(note)
    if m:
        if _base(field) in _COUNT_FIELDS:
            raise InputError(field, f"a binary-float note never describes a count ({_base(field)}): counts are integers")
        return _binary_value(m, field)
    m = _RATIO_RE.fullmatch(note)
    if m:
        _where(field, _RATIO_FIELDS, "sample_size/source_dataset_size", sampling in (None, "fixed-size"), "fixed-size sampling")
        b, n = int(m["b"]), int(m["n"])
        if not 1 <= b < n or f"{b}/{n}" != f"{m['b']}/{m['n']}":
            raise InputError(field, "the note's sample_size/source_dataset_size must be integers 1 <= b < n, written plainly")
        return fmpq(b, n)
    m = _REPLACE_ONE_RE.fullmatch(note)
    if m:
        _where(field, _REPLACE_ONE_FIELDS, "REPLACE_ONE", adjacency in (None, "replace-one"), "replace-one adjacency")
        z = exact(m["z"], field)
        if m["inner"] is not None:
            inner = _BINARY_RE.fullmatch(m["inner"])
            if inner is None or _binary_value(inner, field) != z:
                raise InputError(field, "the note's binary float is not the noise multiplier z it names")
        return 2 * z
    raise InputError(field, "not a provenance note certify writes (binary float, sample_size/source_dataset_size, or REPLACE_ONE z)")


#: the libraries whose floats each recorded ``source`` hands over (None: a certificate without a source, e.g. a
#: dp_accounting ledger); "the caller" is a float passed to certify.api (a delta), possible with any source
_SOURCE_LIBRARIES = {
    "Opacus history": ("Opacus", "the caller"),
    "dp_accounting event": ("dp_accounting", "the caller"),
    None: ("dp_accounting", "the caller"),
}
_DP_ACCOUNTING_FORMS = (_RATIO_RE, _REPLACE_ONE_RE)  # notes only a dp_accounting event gives


def _check_source(note: str, field: str, source) -> None:
    """The note's library (or form) is one the recorded ``source`` hands over (one table: _SOURCE_LIBRARIES)."""
    allowed = _SOURCE_LIBRARIES.get(source, ("the caller",))
    m = _BINARY_RE.fullmatch(note)
    library = m["lib"] if m else "dp_accounting" if any(r.fullmatch(note) for r in _DP_ACCOUNTING_FORMS) else None
    if library is not None and library not in allowed:
        where = f"source {source!r}" if source is not None else "this kind"
        raise InputError(field, f"a note from {library} under {where}: certify writes notes from {', '.join(allowed)} only there")


def check_notes(inputs: dict, fields, partial: bool = False) -> None:
    """Every ``<field>.note`` input names a known input field, is text in one of the forms above, and states the
    value the field records. ``partial``: a producer's extra inputs, before the noted fields are added (a field
    that is absent is not compared; the checker always passes the whole inputs)."""
    for k, v in inputs.items():
        if not k.endswith(NOTE_SUFFIX):
            continue
        field = k[: -len(NOTE_SUFFIX)]
        if field not in fields:
            raise InputError(k, f"a note must name an input field ({', '.join(sorted(fields))})")
        if not isinstance(v, str):
            raise InputError(k, "must be text")
        value = noted_value(v, k, inputs.get("sampling"), inputs.get("adjacency"))
        _check_source(v, k, inputs.get("source"))
        recorded = inputs.get(field)
        if recorded is None and partial:
            continue
        if recorded is None or exact(recorded, field) != value:
            raise InputError(k, f"the note states the value {exact_str(value)}, but {field} records {recorded!r}")
