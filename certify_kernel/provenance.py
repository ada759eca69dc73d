"""Provenance notes: an input ``<field>.note`` says how the field's exact value was obtained from another
library's number. A note is a statement about the recorded value, so the kernel checks that it is true:

* ``binary float R from L; exact binary value X used``: R is the shortest repr of a binary float, X is that
  float's exact value (Python's ``float`` parses R correctly rounded; ``Fraction`` of a float is exact), and the
  field records X;
* ``p = sample_size/source_dataset_size = b/n`` with integers 1 <= b < n: the field records b/n;
* ``dp_accounting noise multiplier z = Z under REPLACE_ONE is relative to the replace-one sensitivity 2C;
  relative to the clip norm C it is sigma = 2z`` (optionally `` (`` a binary-float note for Z ``)``): the field
  records 2Z.
Numbers in a note are written as certify writes them (X and Z as ``p`` or ``p/q`` in lowest terms).
"""

import math
import re
from fractions import Fraction
from .numbers import Malformed, parse_exact

_EXACT = r"[0-9]{1,400}(?:/[0-9]{1,400})?"
_BINARY = re.compile(r"binary float (?P<r>[0-9eE.+-]{1,32}) from (?P<lib>[^;()\x00-\x1f\x7f]{1,200}); exact binary value (?P<x>" + _EXACT + ") used")
_RATIO = re.compile(r"p = sample_size/source_dataset_size = (?P<b>[1-9][0-9]{0,2499})/(?P<n>[1-9][0-9]{0,2499})")
_REPLACE_ONE = re.compile(
    r"dp_accounting noise multiplier z = (?P<z>" + _EXACT + r") under REPLACE_ONE is relative to the replace-one sensitivity 2C; "
    r"relative to the clip norm C it is sigma = 2z(?: \((?P<inner>binary float [^()]{1,700})\))?"
)

def _canonical(text: str, name: str) -> Fraction:
    q = parse_exact(text, name)
    if (str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}") != text:
        raise Malformed(f"{name}: {text[:40]} is not written in lowest terms")
    return q

def _binary(m: re.Match, name: str) -> Fraction:
    """X of a binary-float note, after checking that X is the exact value of the float R."""
    try:
        r = float(m["r"])
    except ValueError:
        r = math.nan
    if not math.isfinite(r) or repr(r) != m["r"] or Fraction(r) != _canonical(m["x"], name):
        raise Malformed(f"{name}: {m['x'][:40]} is not the exact value of the binary float {m['r']}")
    return Fraction(r)

def noted_value(note, name: str) -> Fraction:
    """The value a note says its field records; Malformed when it is not one of the three forms or is false."""
    m = _BINARY.fullmatch(note) if isinstance(note, str) else None
    if m:
        return _binary(m, name)
    m = _RATIO.fullmatch(note) if isinstance(note, str) else None
    if m:
        b, n = int(m["b"]), int(m["n"])
        if not b < n:
            raise Malformed(f"{name}: sample_size must be below source_dataset_size")
        return Fraction(b, n)
    m = _REPLACE_ONE.fullmatch(note) if isinstance(note, str) else None
    if m:
        z = _canonical(m["z"], name)
        if m["inner"] is not None:
            inner = _BINARY.fullmatch(m["inner"])
            if inner is None or _binary(inner, name) != z:
                raise Malformed(f"{name}: the inner binary-float note is not z")
        return 2 * z
    raise Malformed(f"{name}: not a provenance note (binary float, sample_size/source_dataset_size, or REPLACE_ONE z)")

def check_notes(inputs: dict, failed: list) -> None:
    """Every ``<field>.note`` states the value its field records (else the failure is appended to ``failed``)."""
    for key, note in inputs.items():
        if not key.endswith(".note"):
            continue
        field = key[: -len(".note")]
        try:
            if field not in inputs or noted_value(note, f"inputs.{key}") != parse_exact(inputs[field], f"inputs.{field}"):
                failed.append(f"inputs.{key}: the note does not state the value {field} records")
        except Malformed as err:
            failed.append(str(err))
