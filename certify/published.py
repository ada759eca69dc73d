"""Comparing a certified enclosure with a number a paper printed.

A printed decimal stands for the set of reals that print as it under the paper's stated rounding:

* ``nearest``: [p - h, p + h] with h half a unit in the last printed place (ties either way);
* ``upward``: (p - unit, p] (the paper says "rounded upward": p is the smallest such decimal >= x);
* ``exact``: {p} (integers such as iteration counts).

A cell is *confirmed* when the enclosure lies inside that set, a *mismatch* when it is disjoint from
it, and *undecided* otherwise (the enclosure straddles a rounding boundary: raise the precision).
"""

from __future__ import annotations

import re

from .balls import arb, ball_endpoints, exact, fmpq
from .records import TableVerdict

CONFIRMED, MISMATCH, UNDECIDED = TableVerdict.CONFIRMED, TableVerdict.MISMATCH, TableVerdict.UNDECIDED


def last_place(text: str) -> fmpq:
    """The unit of the last printed digit of a decimal string: '9.895e-8' -> 1e-11, '0.0200' -> 1e-4."""
    m = re.fullmatch(r"\s*[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*", text)
    if not m:
        raise ValueError(f"not a decimal: {text!r}")
    frac = m.group(2) or ""
    e = (int(m.group(3)) if m.group(3) else 0) - len(frac)
    return fmpq(10) ** e if e >= 0 else fmpq(1, 10 ** (-e))


def printed_interval(text: str, rounding: str) -> tuple[fmpq, fmpq, bool, bool]:
    """(lo, hi, lo_closed, hi_closed) of the reals that print as ``text`` under ``rounding``."""
    p = exact(text, "published")
    if rounding == "exact":
        return p, p, True, True
    unit = last_place(text)
    if rounding == "nearest":
        return p - unit / 2, p + unit / 2, True, True
    if rounding == "upward":
        return p - unit, p, False, True
    raise ValueError(f"unknown rounding {rounding!r}")


def classify(value: arb, text: str, rounding: str) -> tuple[TableVerdict, fmpq]:
    """Verdict of an enclosure against a printed value, and the distance |midpoint - printed|."""
    lo, hi = ball_endpoints(value)
    a, b, a_closed, b_closed = printed_interval(text, rounding)
    inside_lo = lo >= a if a_closed else lo > a
    inside_hi = hi <= b if b_closed else hi < b
    if inside_lo and inside_hi:
        verdict = CONFIRMED
    elif hi < a or lo > b or (hi == a and not a_closed) or (lo == b and not b_closed):
        verdict = MISMATCH
    else:
        verdict = UNDECIDED
    mid = value.mid().fmpq()
    p = exact(text, "published")
    return verdict, abs(mid - p)
