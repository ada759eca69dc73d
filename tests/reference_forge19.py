"""Independent references for the forger's tests of session 19 (written separately from certify/).

* :func:`outward_decimal`: the outward rounding of a rational to ``digits`` significant digits, in the
  spelling certificates use (``"1.725229560e0"``, ``"-3.000000000e-7"``, ``"0"``), with Python's
  ``fractions.Fraction`` and integer arithmetic only (no FLINT).
* :func:`dyadic`: the exact rational of a serialised dyadic [mantissa text, exponent], read the strict way
  (ASCII digits, optional leading minus): anything else is ``None``.
* :func:`renyi_poisson_reference`: epsilon of the Poisson-subsampled Gaussian at a given (possibly
  fractional, then by the chord) Rényi order, from the 60-digit mpmath binomial sum of
  ``tests/reference_poisson.py``.
"""

from __future__ import annotations

import re
from fractions import Fraction

import mpmath as mp

from reference_poisson import DPS, epsilon as mp_epsilon, log_A_sum


def _floor_log10(a: Fraction) -> int:
    """floor(log10(a)) for a > 0, by exact comparisons."""
    e = len(str(a.numerator)) - len(str(a.denominator))
    while Fraction(10) ** e > a:
        e -= 1
    while Fraction(10) ** (e + 1) <= a:
        e += 1
    return e


def outward_decimal(x: Fraction, up: bool, digits: int = 10) -> str:
    """The ``digits``-significant-digit decimal nearest ``x`` on the outward side (>= x if ``up``, else <= x)."""
    if x == 0:
        return "0"
    neg = x < 0
    a = -x if neg else x
    e = _floor_log10(a)
    scaled = a * Fraction(10) ** (digits - 1 - e)
    away = up != neg  # rounding x up means rounding |x| down when x < 0
    m = -((-scaled.numerator) // scaled.denominator) if away else scaled.numerator // scaled.denominator
    if m >= 10**digits:  # the carry of 9.999999999 -> 10.00000000
        m //= 10
        e += 1
    s = str(m)
    return f"{'-' if neg else ''}{s[0]}{'.' + s[1:] if len(s) > 1 else ''}e{e}"


_STRICT = re.compile(r"-?[0-9]+")


#: the documented range of a serialised ball: |exponent| <= 2^24, magnitude within 2^-(2^20 + 2^16) .. 2^(2^20 + 2^16)
MAX_EXPONENT, MAX_TOP = 1 << 24, (1 << 20) + (1 << 16)


def dyadic(pair) -> Fraction | None:
    """m 2^e of a serialised [mantissa text, exponent integer] (strict: ASCII digits) in the documented range,
    else None (never builds an astronomically long number)."""
    if type(pair) is not list or len(pair) != 2:
        return None
    m, e = pair
    if type(m) is not str or type(e) is not int or not _STRICT.fullmatch(m) or abs(e) > MAX_EXPONENT:
        return None
    m = int(m)
    if m == 0:
        return Fraction(0)
    if abs(e + abs(m).bit_length()) > MAX_TOP:
        return None
    return Fraction(m) * Fraction(2) ** e


def renyi_poisson_reference(alpha: Fraction, q: Fraction, sigma: Fraction, steps: int, delta: Fraction) -> dict:
    """60-digit references for one phase: rdp (one step; chord of K between the integers around a fractional
    alpha), rdp_total and epsilon (Balle et al. 2020, Thm 21). Returns mpmath numbers."""
    with mp.workdps(DPS):
        if alpha.denominator == 1:
            K = log_A_sum(int(alpha), q, sigma)
        else:
            a0 = alpha.numerator // alpha.denominator
            t = alpha - a0
            t_mp = mp.mpf(t.numerator) / t.denominator
            K0 = log_A_sum(a0, q, sigma) if a0 >= 2 else mp.mpf(0)
            K = (1 - t_mp) * K0 + t_mp * log_A_sum(a0 + 1, q, sigma)
        am1 = mp.mpf((alpha - 1).numerator) / (alpha - 1).denominator
        rdp = K / am1
        return {"rdp": rdp, "rdp_total": steps * rdp, "epsilon": mp_epsilon(steps * K, alpha, delta)}


def contains(lo: Fraction, hi: Fraction, x: mp.mpf) -> bool:
    """lo <= x <= hi with x an mpmath number of DPS digits (compared at twice that precision)."""
    with mp.workdps(2 * DPS):
        return mp.mpf(lo.numerator) / lo.denominator <= x <= mp.mpf(hi.numerator) / hi.denominator
