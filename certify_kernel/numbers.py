"""Exact numbers and intervals, the kernel's whole arithmetic: exact rationals (:class:`fractions.Fraction`, parsed from
the text with no float in between) and mpmath's outward-rounded ``mpmath.iv`` intervals, each turned back into exact
rationals (lo, hi) that enclose the true value; an endpoint that is not finite raises :class:`Undecided`."""

import contextlib
import math
import re
from fractions import Fraction
from mpmath import iv
from mpmath.libmp import finf, fnan, fninf

#: largest number of digits of a numerator or denominator read from a certificate
MAX_DIGITS = 3000
#: largest decimal exponent read from a certificate's text: certify's balls reach 2^-(2^20) ~ 1e-315653 (1e-14232 is genuine)
MAX_EXPONENT10 = 315653
#: largest binary exponent of a recorded ball
MAX_EXPONENT2 = 1 << 20
#: a zero mantissa may carry any exponent up to this (certify writes zero radii with their own exponents)
ZERO_EXPONENT = 1 << 24

_DECIMAL = re.compile(r"([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE]([+-]?[0-9]{1,7}))?")
_MANTISSA = re.compile(r"-?[0-9]{1,%d}" % MAX_DIGITS)

class Undecided(Exception):
    """The kernel's intervals cannot decide something (never a verdict of true or false)."""

class Malformed(ValueError):
    """A certificate field that the kernel cannot read as what it must be."""

def _decimal(text: str) -> Fraction | None:
    m = _DECIMAL.fullmatch(text)
    if not m:
        return None
    sign, digits, exponent = m.groups()
    whole, _, frac = digits.partition(".")
    mantissa = (whole + frac).lstrip("0") or "0"
    if len(mantissa) > MAX_DIGITS:
        raise Malformed(f"{text[:40]!r} has more than {MAX_DIGITS} digits")
    e = int(exponent or 0) - len(frac)
    if mantissa != "0" and abs(e + len(mantissa)) > MAX_EXPONENT10:
        raise Malformed(f"{text[:40]!r} is outside 1e-{MAX_EXPONENT10} .. 1e{MAX_EXPONENT10}")
    q = Fraction(int(mantissa)) * Fraction(10) ** e
    return -q if sign == "-" else q

def parse_exact(text, name: str) -> Fraction:
    """An exact rational from text: an integer, a decimal (``0.01``, ``1e-5``) or a fraction of two such (``1/3``)."""
    if not isinstance(text, str) or not text.isascii() or len(text) > 2 * MAX_DIGITS + 20:
        raise Malformed(f"{name}: {str(text)[:40]!r} is not an exact number written as text")
    parts = text.strip().split("/")
    if len(parts) > 2:
        raise Malformed(f"{name}: cannot read {text[:40]!r} as an exact number")
    values = [_decimal(p.strip()) for p in parts]
    if any(v is None for v in values):
        raise Malformed(f"{name}: cannot read {text[:40]!r} as an exact number")
    if len(values) == 2:
        if values[1] == 0:
            raise Malformed(f"{name}: division by zero in {text[:40]!r}")
        return values[0] / values[1]
    return values[0]

def parse_int(text, name: str) -> int:
    q = parse_exact(text, name)
    if q.denominator != 1:
        raise Malformed(f"{name}: expected an integer, got {text[:40]!r}")
    return q.numerator

def exact_input(inputs: dict, key: str, failed: list, max_bits: int = 8000) -> Fraction | None:
    """The exact ``inputs[key]``, or None with the reason appended to ``failed`` (unreadable, or longer than ``max_bits`` bits)."""
    try:
        v = parse_exact(inputs.get(key), f"inputs.{key}")
    except Malformed as err:
        failed.append(str(err))
        return None
    if max(v.numerator.bit_length(), v.denominator.bit_length()) > max_bits:
        failed.append(f"inputs.{key}: numerator or denominator longer than {max_bits} bits")
        return None
    return v

def dyadic(pair, name: str) -> Fraction:
    """The exact value m 2^e of a recorded ``[mantissa text, exponent]`` pair (strict layout)."""
    if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str or type(pair[1]) is not int:
        raise Malformed(f"{name}: must be [mantissa text, exponent integer]")
    if not _MANTISSA.fullmatch(pair[0]) or abs(pair[1]) > (MAX_EXPONENT2 if pair[0].strip("-0") else ZERO_EXPONENT):
        raise Malformed(f"{name}: mantissa must be decimal digits (at most {MAX_DIGITS}) and |exponent| <= {MAX_EXPONENT2}")
    return Fraction(int(pair[0])) * Fraction(2) ** pair[1] if pair[0].strip("-0") else Fraction(0)

def _floor_log10(a: Fraction) -> int:
    """floor(log10(a)) for a > 0, exactly (estimate from bit lengths, then exact correction; no int-to-str)."""
    e = (a.numerator.bit_length() - a.denominator.bit_length()) * 30103 // 100000
    while Fraction(10) ** e > a:
        e -= 1
    while Fraction(10) ** (e + 1) <= a:
        e += 1
    return e

def printed(q: Fraction, up: bool, digits: int = 10) -> str:
    """q rounded to ``digits`` significant digits towards +inf (``up``) or -inf as ``d.ddde-4`` (``lower``/``upper``'s layout); "0" for zero."""
    if q == 0:
        return "0"
    a = abs(q)
    e = _floor_log10(a)
    scaled = a * Fraction(10) ** (digits - 1 - e)
    away = up != (q < 0)  # rounding q up rounds |q| up exactly when q > 0
    m = -(-scaled.numerator // scaled.denominator) if away else scaled.numerator // scaled.denominator
    if m >= 10**digits:
        m, e = m // 10, e + 1
    s = str(m)
    return f"{'-' if q < 0 else ''}{s[0]}{'.' + s[1:] if len(s) > 1 else ''}e{e}"

@contextlib.contextmanager
def working_precision(bits: int):
    """Run with ``mpmath.iv`` at ``bits`` bits (restored afterwards)."""
    old = iv.prec
    iv.prec = bits
    try:
        yield
    finally:
        iv.prec = old

def interval(q: Fraction):
    """An mpmath interval containing the rational q (numerator and denominator rounded outward)."""
    return iv.mpf(q.numerator) / iv.mpf(q.denominator)

def _mpf_fraction(t) -> Fraction:
    if t in (finf, fninf, fnan):
        raise Undecided("an interval endpoint is not finite")
    sign, man, exp, _ = t
    v = Fraction(int(man)) * Fraction(2) ** int(exp)
    return -v if sign else v

def span(lo: Fraction, hi: Fraction):
    """An mpmath interval containing [lo, hi] (exact rationals, rounded outward)."""
    return iv.mpf([interval(lo).a, interval(hi).b])

def iv_max(*xs):
    """max of intervals (or numbers): [max of the lower ends, max of the upper ends]."""
    xs = [iv.mpf(x) for x in xs]
    return iv.mpf([max(x.a for x in xs), max(x.b for x in xs)])

def iv_min(*xs):
    """min of intervals (or numbers): -max of their negations (exact)."""
    return -iv_max(*(-iv.mpf(x) for x in xs))

def bounds(x) -> tuple[Fraction, Fraction]:
    """Exact (lo, hi) of an mpmath interval; Undecided when it is not finite."""
    lo, hi = x._mpi_
    return _mpf_fraction(lo), _mpf_fraction(hi)

def log_interval(q: Fraction):
    """log of a positive rational, as an interval (mpmath.iv.log is rigorous)."""
    if q <= 0:
        raise Undecided("log of a non-positive number")
    return iv.log(interval(q))

def expm1_interval(x):
    """exp(x) - 1 for an interval x >= 0, without cancellation when x is small.
    For x < 1/2: Taylor sum_{j=1..m} x^j/j! plus the remainder, which lies in [0, 2 x^(m+1)/(m+1)!] (Lagrange form, e^xi <= e^(1/2) < 2), with m
    such that the remainder is below 2^-prec relative. For larger x: iv.exp(x) - 1 (relative accuracy is kept since exp(x) - 1 >= x > 1/2 there)."""
    if x.b < 0.5:
        total, term, j = iv.mpf(0), iv.mpf(1), 0
        while True:
            j += 1
            term = term * x / j
            total = total + term
            if j > iv.prec + 16 or j > 2 and (term * x).b <= total.a * iv.mpf(2) ** (-iv.prec - 8):
                break
        rem = 2 * term * x / (j + 1)
        return total + iv.mpf([0, rem.b])
    return iv.exp(x) - 1

def log1p_interval(s):
    """log(1 + s) for an interval s >= 0, without cancellation when s is small. For s < 1/4: the alternating series sum_{j>=1} (-1)^(j+1) s^j / j,
    truncated after a term t_m; the tail is bounded by |t_{m+1}| (alternating, decreasing terms), added as [-|t|, |t|]. Else iv.log(1 + s)."""
    if s.b < 0.25:
        total, power, j = iv.mpf(0), iv.mpf(1), 0
        while True:
            j += 1
            power = power * s
            total = total + (power / j if j % 2 else -power / j)
            if j > iv.prec + 16 or j > 2 and (power * s).b <= total.a * iv.mpf(2) ** (-iv.prec - 8):
                break
        tail = (power * s / (j + 1)).b
        return total + iv.mpf([-tail, tail])
    return iv.log(1 + s)

def normal_tail_at(x: Fraction, floor=None):
    """Q(x) = P(N(0,1) > x) at an exact x, an interval: (1 -+ E(|x|))/2, E(s) = erf(s/sqrt 2) = sqrt(2/pi) e^(-s^2/2)
    sum_n s^(2n+1)/(1*3*...*(2n+1)), all terms > 0, summed in fixed point 2^-P (P: the precision plus the 0.72 s^2 bits
    that 1 - E cancels) with floors and ceilings; once the ratio s^2/(2n+3) < 1/2 the rest is at most the last term.
    Where Mills' bound phi(s)/s is below ``floor`` (an absolute accuracy): Q(s) in [0, phi(s)/s]."""
    s, prec = abs(x), iv.prec
    if floor and s > 1 and (bound := (iv.exp(-interval(s * s / 2)) / iv.sqrt(2 * iv.pi) / interval(s)).b) < floor:
        return iv.mpf([0, bound]) if x > 0 else iv.mpf([1 - bound, 1])
    P = prec + math.ceil(0.75 * float(s) ** 2) + 16
    lo = term_lo = s.numerator * 2**P // s.denominator
    hi = term_hi = term_lo + 1
    n, (a, b), last = 0, (s * s).as_integer_ratio(), math.ceil(s * s)
    while term_hi > 1 or n < last:
        term_lo, term_hi = term_lo * a // (b * (2 * n + 3)), -(-term_hi * a // (b * (2 * n + 3)))
        lo, hi, n = lo + term_lo, hi + term_hi, n + 1
    with working_precision(P):
        e = iv.sqrt(2 / iv.pi) * iv.exp(-interval(s * s / 2)) * span(Fraction(lo, 2**P), Fraction(hi + 2 * term_hi, 2**P))
        return (1 - e) / 2 if x >= 0 else (1 + e) / 2

def normal_tail(t, floor=None):
    """Q over an interval t: [Q(hi), Q(lo)] (Q is decreasing); a thin t (width < 2^-20) by one series, Q(mid) -+ phi(a) (hi - lo)/2,
    a = min |x| on t (the mean value theorem: |Q'| = phi, which decreases in |x|)."""
    lo, hi = bounds(t)
    if hi - lo >= Fraction(1, 2**20):
        return iv.mpf([normal_tail_at(hi, floor).a, normal_tail_at(lo, floor).b])
    w = interval((hi - lo) / 2) * iv.exp(-interval(0 if lo <= 0 <= hi else min(lo * lo, hi * hi) / 2)) / iv.sqrt(2 * iv.pi)
    return normal_tail_at((lo + hi) / 2, floor) + iv.mpf([-w.b, w.b])
