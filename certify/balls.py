"""Exact inputs and Arb balls: the only module of `certify` that imports python-flint.

Everything numeric in the toolkit goes through here:

* exact parsing of user inputs (ints, decimal strings such as ``"1e-7"``, fractions ``"1/3"``);
  floats are refused because ``0.1`` is not 1/10;
* ball versions of the Gaussian functions the papers use: the density ``phi``, the distribution
  function ``Phi``, the tail ``Q`` and the integrated tail ``Q1`` (Watkins-Arora (44)), evaluated in
  cancellation-free forms so that they stay sharp far into the tail;
* outward decimal rounding (an upper bound is rounded up, a lower bound down);
* three-valued comparisons (a comparison of balls may be undecided, and undecided is never read as
  true or false) and automatic precision escalation.

Each routine returns an Arb ball that contains the exact value of the function at every point of the
input ball (Arb's guarantee); where a routine chooses between formulas, the choice depends only on
which formula is valid on the whole input ball.
"""

from __future__ import annotations

import enum
import math
import sys
import re
from fractions import Fraction
from typing import Callable, Iterable, TypeVar, Union

import flint
from flint import acb, arb, arb_poly, ctx, fmpq, fmpz  # noqa: F401  (re-exported)

__all__ = [
    "exact_flag",
    "exact_in",
    "parse_int",
    "int_flag",
    "arb",
    "acb",
    "arb_poly",
    "ctx",
    "fmpq",
    "fmpz",
    "InputError",
    "UndecidedError",
    "Tri",
    "DEFAULT_PREC",
    "PRECISION_LADDER",
    "exact",
    "exact_int",
    "exact_str",
    "require_in",
    "ball",
    "workprec",
    "phi",
    "Phi",
    "Q",
    "Q1",
    "gaussian_delta",
    "compare",
    "decide",
    "certain_ceil",
    "escalate",
    "upper_decimal",
    "lower_decimal",
    "ball_to_json",
    "ball_from_json",
    "ball_endpoints",
    "ball_contains",
    "flint_version",
    "MAX_EXPONENT",
    "MAX_DECIMAL_EXPONENT",
    "MAX_DIGITS",
    "check_magnitude",
    "MAX_INT_DIGITS",
    "pow2_text",
]

DEFAULT_PREC = 128
#: Working precisions (bits) tried in turn when a claim is undecided.
PRECISION_LADDER = (128, 256, 512, 1024, 2048, 4096)

# python-flint starts at 53 bits; a ball computed outside escalate/workprec would silently use it.
if ctx.prec < DEFAULT_PREC:
    ctx.prec = DEFAULT_PREC

#: Every certified ball is kept between 2^-MAX_EXPONENT and 2^MAX_EXPONENT in magnitude (about
#: 1e-315652 .. 1e315652): inside that range its endpoints are exact rationals of at most ~1 Mbit,
#: cheap to print and to re-check; outside it they would need gigabytes (FLINT aborts or the process
#: is killed), so such a value is refused with an InputError (exit 2) instead of being printed.
MAX_EXPONENT = 2**20
#: Exact inputs: at most MAX_DIGITS digits in an integer or mantissa (enough for the canonical text
#: "1/10^200000" of 1e-100000/1e100000, so every exact_str round-trips), and a magnitude between
#: 1e-MAX_DECIMAL_EXPONENT and 1e+MAX_DECIMAL_EXPONENT for a decimal (1e100001 is refused).
MAX_DIGITS = 220000
MAX_DECIMAL_EXPONENT = 100000
#: Exact integers (counts: n, d, N, T, alpha, batch sizes) have at most MAX_INT_DIGITS digits, so that
#: Python can print them (it refuses int-to-str beyond 4300 digits).
MAX_INT_DIGITS = 4000
_MAX_INT = fmpz(10) ** MAX_INT_DIGITS
#: floor(log10(2) * 10^40): decimal exponents estimated from binary ones, then corrected exactly
_LOG10_2 = Fraction(3010299956639811952137388947244930267681, 10**40)

Number = Union[int, fmpq, fmpz, arb]
T = TypeVar("T")

flint_version = flint.__version__


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------
class InputError(ValueError):
    """Bad input: names the parameter and what would have been admissible."""

    def __init__(self, parameter: str, message: str):
        self.parameter = parameter
        self.message = message
        super().__init__(f"{parameter}: {message}")


class UndecidedError(RuntimeError):
    """A comparison stayed undecided at every precision of the ladder."""


# --------------------------------------------------------------------------------------------
# Exact inputs
# --------------------------------------------------------------------------------------------
_DECIMAL = re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(?:[eE]([+-]?\d+))?$")
#: the canonical text written by :func:`exact_str` ("3", "-1/7"): parsed without the decimal machinery
_RATIONAL = re.compile(r"^(-?\d+)(?:/(\d+))?$")


class _OutOfRange(ValueError):
    """An exact number too long or too far from 1 to be read (see MAX_DIGITS, MAX_DECIMAL_EXPONENT)."""


def _int_text(digits: str) -> int:
    """int of a string of ASCII digits, refusing more than MAX_DIGITS (FLINT's conversion: no 4300 limit)."""
    digits = digits.lstrip("0") or "0"
    if len(digits) > MAX_DIGITS:
        raise _OutOfRange(f"more than {MAX_DIGITS} digits")
    return int(fmpz(digits))


def _parse_decimal(text: str) -> fmpq | None:
    if not text.isascii():  # str.isdigit and \d accept other scripts' digits: only 0-9 are read
        return None
    m = _DECIMAL.match(text)
    if not m:
        return None
    sign, digits, exponent = m.group(1), m.group(2), m.group(3)
    if "." in digits:
        whole, frac = digits.split(".")
    else:
        whole, frac = digits, ""
    mantissa_text = ((whole or "0") + frac).lstrip("0")
    mantissa = _int_text(mantissa_text)
    if exponent and len(exponent.lstrip("+-").lstrip("0")) > 7:
        raise _OutOfRange(f"decimal exponent beyond +-{MAX_DECIMAL_EXPONENT}")
    e = (int(exponent) if exponent else 0) - len(frac)
    if mantissa == 0:
        return fmpq(0)
    # the magnitude is about 10^(e + digits of the mantissa): refuse it outside 1e-100000 .. 1e100000
    top = e + len(mantissa_text) - 1
    if top > MAX_DECIMAL_EXPONENT or top < -MAX_DECIMAL_EXPONENT:
        raise _OutOfRange(f"magnitude beyond 1e+-{MAX_DECIMAL_EXPONENT}")
    q = fmpq(mantissa) * fmpq(10) ** e if e >= 0 else fmpq(mantissa, fmpz(10) ** (-e))
    return -q if sign == "-" else q


def exact(value, name: str = "value") -> fmpq:
    """Parse ``value`` exactly into a rational.

    Accepts ``int``, ``fmpz``, ``fmpq``, ``fractions.Fraction`` and strings holding an integer, a
    decimal (``"0.01"``, ``"1e-7"``, ``"2.5E+3"``) or a fraction of two such (``"1/3"``,
    ``"1e-3/7"``). Refuses floats (a binary float is not the decimal the user typed) and booleans.
    Raises :class:`InputError` naming ``name``.
    """
    if isinstance(value, bool):
        raise InputError(name, f"expected an exact number, got the boolean {value!r}")
    if isinstance(value, float):
        raise InputError(
            name,
            f"a float ({value!r}) is not exact; pass a decimal string such as '0.01' or a fraction '1/3'",
        )
    try:
        if isinstance(value, (int, fmpz)):
            return _bounded(fmpq(int(value)))
        if isinstance(value, fmpq):
            return _bounded(value)
        if isinstance(value, Fraction):
            return _bounded(fmpq(value.numerator, value.denominator))
    except _OutOfRange as err:
        raise InputError(name, f"out of range ({err}); exact inputs have a numerator and a denominator of at most {_MAX_INPUT_BITS} bits") from None
    if isinstance(value, str):
        try:
            return _bounded(_exact_text(value, name))
        except _OutOfRange as err:
            raise InputError(
                name,
                f"{value[:40]!r}{'...' if len(value) > 40 else ''} is out of range ({err}); "
                f"exact inputs have at most {MAX_DIGITS} digits and a magnitude between "
                f"1e-{MAX_DECIMAL_EXPONENT} and 1e{MAX_DECIMAL_EXPONENT}",
            ) from None
    raise InputError(name, f"expected an exact number, got {type(value).__name__} {value!r}")


#: numerator and denominator of an exact input: at most this many bits (1e-100000/1e100000 fits)
_MAX_INPUT_BITS = 700000


def _bounded(q: fmpq) -> fmpq:
    if int(q.p).bit_length() > _MAX_INPUT_BITS or int(q.q).bit_length() > _MAX_INPUT_BITS:
        raise _OutOfRange(f"numerator or denominator longer than {_MAX_INPUT_BITS} bits")
    return q


def _exact_text(value: str, name: str) -> fmpq:
    text = value.strip()
    m = _RATIONAL.match(text) if text.isascii() else None
    if m:
        den = _int_text(m.group(2)) if m.group(2) is not None else 1
        if den == 0:
            raise InputError(name, f"division by zero in {value!r}")
        num = m.group(1)
        return fmpq(-_int_text(num[1:]) if num.startswith("-") else _int_text(num), den)
    if "/" in text:
        parts = text.split("/")
        if len(parts) == 2:
            a, b = _parse_decimal(parts[0].strip()), _parse_decimal(parts[1].strip())
            if a is not None and b is not None:
                if b == 0:
                    raise InputError(name, f"division by zero in {value!r}")
                return a / b
    else:
        q = _parse_decimal(text)
        if q is not None:
            return q
    raise InputError(
        name,
        f"cannot read {value[:40]!r}{'...' if len(value) > 40 else ''} as an exact number (use an integer, "
        "a decimal such as 0.01 or 1e-7, or a fraction such as 1/3)",
    )


def exact_int(value, name: str = "value") -> int:
    """Parse an exact integer (``"1000000"``, ``"1e6"`` and ``1000000`` are all accepted)."""
    q = exact(value, name)
    if q.q != 1:
        t = exact_str(q)
        raise InputError(name, f"expected an integer, got {t if len(t) <= 40 else t[:37] + '...'}")
    if abs(q.p) >= _MAX_INT:
        raise InputError(name, f"integers must be below 10^{MAX_INT_DIGITS} in absolute value (got one of {len(str(abs(q.p)))} digits)")
    return int(q.p)


def parse_int(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """The one exact integer parser of the command line's integer flags: :func:`exact_int` (ASCII digits only --
    Python's int() would read Arabic-Indic or full-width digits --, ``1e3`` accepted, floats refused) in
    [lo, hi] (None: unbounded). Every refusal, the empty value included, names ``name`` and the range."""
    rng = "in " + (f"[{lo}, {hi}]" if lo is not None and hi is not None else f"[{lo}, inf)" if lo is not None else f"(-inf, {hi}]")
    if isinstance(value, str) and not value.strip():
        raise InputError(name, f"empty value: must be an integer {rng}")
    try:
        k = exact_int(value, name)
    except InputError:
        text = repr(value) if len(str(value)) <= 40 else repr(str(value)[:37]) + "..."
        ascii_only = " (digits 0-9 only)" if isinstance(value, str) and not value.isascii() else ""
        raise InputError(name, f"must be an integer {rng}, got {text}{ascii_only}") from None
    return require_in(name, k, lo, hi, "[]", integer=True)


def int_flag(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """argparse ``type=`` of an integer flag: :func:`parse_int` in [lo, hi]; argparse names the flag
    ("argument --jobs: must be an integer in [1, 64], got 0")."""

    def integer(text: str) -> int:
        import argparse

        try:
            return parse_int(text, "value", lo, hi)
        except InputError as err:
            raise argparse.ArgumentTypeError(err.message) from None

    return integer


def exact_flag(lo=None, hi=None, ends: str = "()", shown: str | None = None) -> Callable[[str], str]:
    """argparse ``type=`` of an exact-number flag checked at once: :func:`exact_in` in the range, the text kept
    (parsed exactly again where it is used); argparse names the flag."""

    def number(text: str) -> str:
        import argparse

        try:
            exact_in(text, "value", lo, hi, ends, shown=shown)
        except InputError as err:
            raise argparse.ArgumentTypeError(err.message) from None
        return text

    return number


def exact_str(q: fmpq | int) -> str:
    """Canonical exact text of a rational: ``"3"``, ``"-1/7"``; parsed back by :func:`exact`."""
    q = fmpq(q) if not isinstance(q, fmpq) else q
    return str(q.p) if q.q == 1 else f"{q.p}/{q.q}"


# Floats of exact numbers, for choices only (which alpha, which window): never part of a bound
def float_above(x) -> float:
    """The smallest float >= the exact rational ``x`` (fmpq or Fraction): a library-compatible float that never
    understates a certified upper bound; +inf beyond the float range. The one such helper of the package."""
    p, q = (int(x.p), int(x.q)) if isinstance(x, fmpq) else (x.numerator, x.denominator)
    exact_x = Fraction(p, q)
    try:
        f = p / q
    except OverflowError:
        return math.inf if exact_x > 0 else -sys.float_info.max
    if Fraction(f) < exact_x:
        f = math.nextafter(f, math.inf)
    return f


def float_of(x: fmpq) -> float:
    """The float nearest the rational ``x`` (numerator / denominator, correctly rounded, also for huge numerators
    and denominators whose ratio is a float; 0.0 when it underflows, +-inf when it overflows)."""
    try:
        return int(x.p) / int(x.q)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def log_float(x: fmpq) -> float:
    """log of a positive rational in floats, from its numerator and denominator (no underflow: 1e-400 works)."""
    return math.log(int(x.p)) - math.log(int(x.q))


def log1m_float(x: fmpq) -> float:
    """log(1 - x) of a rational x < 1 in floats, from the exact 1 - x (no rounding of x to 1.0 first)."""
    return math.log(int(x.q - x.p)) - math.log(int(x.q))


def require_in(name: str, value, lo=None, hi=None, ends: str = "()", *, integer: bool = False, shown: str | None = None, what: str = ""):
    """Return ``value`` if it lies in the interval from ``lo`` to ``hi``, else raise InputError naming ``name``.

    ``ends`` is "()", "(]", "[)" or "[]" (open or closed ends); ``lo`` or ``hi`` None leaves that side
    unbounded. The message names the admissible range: "must be in (0, 1), got 2" ("must be an integer
    in [1, 64], got 0" with ``integer``; "must be > 0, got 0" with one side only); ``shown`` replaces the
    printed range when a bound reads better as text (e.g. "in (0, 1e6]"); ``what`` names the symbol
    ("noise scale must be > 0, got 0"). The one range check of the package: every parser uses it.
    """
    above = lo is None or (lo < value if ends[0] == "(" else lo <= value)
    below = hi is None or (value < hi if ends[1] == ")" else value <= hi)
    if above and below:
        return value
    raise InputError(name, f"{_admissible(lo, hi, ends, integer, shown, what)}, got {_text(value)}")


def _admissible(lo, hi, ends: str, integer: bool, shown: str | None, what: str) -> str:
    """'noise scale must be > 0', 'must be an integer in [1, 64]': the admissible range of :func:`require_in`."""
    if shown is None:
        if hi is None:
            shown = f"{'>' if ends[0] == '(' else '>='} {_text(lo)}"
        elif lo is None:
            shown = f"{'<' if ends[1] == ')' else '<='} {_text(hi)}"
        else:
            shown = f"in {ends[0]}{_text(lo)}, {_text(hi)}{ends[1]}"
    return f"{what + ' ' if what else ''}must be {'an integer ' if integer else ''}{shown}"


def exact_in(value, name: str, lo=None, hi=None, ends: str = "()", *, integer: bool = False, shown: str | None = None, what: str = ""):
    """:func:`exact` (or :func:`exact_int` with ``integer``) then :func:`require_in`: a value that cannot be read
    (``1/0``, ``0/0``, ``''``, ``nan``, other scripts' digits) is refused with the admissible range too."""
    try:
        x = exact_int(value, name) if integer else exact(value, name)
    except InputError as err:
        if not isinstance(value, str):  # a float, a boolean: the message says what to pass instead
            raise
        raise InputError(name, f"{_admissible(lo, hi, ends, integer, shown, what)}; {err.message}") from None
    return require_in(name, x, lo, hi, ends, integer=integer, shown=shown, what=what)


def _text(x) -> str:
    return exact_str(x) if isinstance(x, (int, fmpz, fmpq)) else str(x)


# --------------------------------------------------------------------------------------------
# Balls
# --------------------------------------------------------------------------------------------
def ball(x: Number) -> arb:
    """The ball of an exact number at the current precision (exact when the number is dyadic)."""
    if isinstance(x, arb):
        return x
    if isinstance(x, float):
        raise TypeError("floats never enter a certified computation")
    if isinstance(x, (int, fmpz)):
        return arb(x)
    if isinstance(x, fmpq):
        if x.q == 1:
            return arb(x.p)
        return arb(x.p) / arb(x.q)
    raise TypeError(f"cannot make a ball of {type(x).__name__}")


def workprec(bits: int):
    """Context manager setting the working precision (bits) of every ball operation inside."""
    return ctx.workprec(bits)


# --------------------------------------------------------------------------------------------
# Gaussian functions
# --------------------------------------------------------------------------------------------
def phi(t: Number) -> arb:
    """Standard normal density exp(-t^2/2)/sqrt(2 pi)."""
    t = ball(t)
    return (-(t * t) / 2).exp() / (2 * arb.pi()).sqrt()


def _monotone(f, t: arb) -> arb:
    """Enclose a monotone f over the ball t from its values at the two exact endpoints.

    Arb's hypgeom_u propagates an inexact argument crudely (a radius of 1e-37 in z came back as a
    relative radius of 1e-25); evaluating at exact endpoints and taking the union is rigorous for
    a monotone f and keeps the full working accuracy.
    """
    if not t.is_finite():
        return arb.nan()
    if t.rad() == 0:
        return f(t)
    return f(arb(t.lower())).union(f(arb(t.upper())))


def _half_square(t: arb) -> arb:
    """z = t^2/2, exact when t is exact (computed with enough bits); hypgeom_u needs an exact z."""
    with ctx.workprec(2 * ctx.prec + 64 if t.rad() == 0 and t.mid().bits() <= 2 * ctx.prec else ctx.prec):
        return t * t / 2


def _Q_point(t: arb) -> arb:
    if t > 1:
        z = _half_square(t)
        return (-z).exp() / (2 * arb.pi().sqrt()) * z.hypgeom_u(arb(1) / 2, arb(1) / 2)
    if t < -1:
        return 1 - _Q_point(-t)
    return (t / arb(2).sqrt()).erfc() / 2


def Q(t: Number) -> arb:
    """Gaussian tail Q(t) = Pr(N(0,1) > t) = erfc(t/sqrt 2)/2 (decreasing in t).

    For t > 1 the confluent form exp(-z)/(2 sqrt(pi)) U(1/2, 1/2, z) with z = t^2/2 is used: it
    keeps full relative accuracy far into the tail, where erfc of a large inexact argument loses
    everything. For t < -1, Q(t) = 1 - Q(-t). Otherwise erfc directly. An inexact t is handled by
    evaluating at its exact endpoints (Q is monotone).
    """
    return _monotone(_Q_point, ball(t))


def Phi(t: Number) -> arb:
    """Standard normal distribution function Phi(t) = Q(-t)."""
    return Q(-ball(t))


def _Q1_point(t: arb) -> arb:
    if t > 1:
        z = _half_square(t)
        return (-z).exp() / (2 * (2 * arb.pi()).sqrt()) * z.hypgeom_u(arb(1), arb(1) / 2)
    return phi(t) - t * _Q_point(t)


def Q1(t: Number) -> arb:
    """Integrated Gaussian tail Q1(t) = int_t^inf Q(s) ds = phi(t) - t Q(t) (Watkins-Arora (44)).

    For t > 1 the cancellation-free form exp(-z)/(2 sqrt(2 pi)) U(1, 1/2, z), z = t^2/2, is used
    (phi(t) - t Q(t) cancels catastrophically for large t); elsewhere the difference itself, which
    does not cancel badly there. Q1 is decreasing (Q1' = -Q), so an inexact t is handled by
    evaluating at its exact endpoints.
    """
    return _monotone(_Q1_point, ball(t))


def gaussian_delta(half_mu: arb, eps_over_mu: arb, eps: arb) -> arb:
    """The privacy profile of the Gaussian mechanism with mu = sensitivity / standard deviation,

        delta_G(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)

    (Balle and Wang 2018, Theorem 8; Dong, Roth and Su 2022, Corollary 2.13), from its two arguments
    mu/2 and eps/mu as the caller computes them (two-sided ball; the one copy of the formula).
    """
    return Phi(half_mu - eps_over_mu) - eps.exp() * Phi(-half_mu - eps_over_mu)


# --------------------------------------------------------------------------------------------
# Three-valued comparisons and precision escalation
# --------------------------------------------------------------------------------------------
class Tri(enum.Enum):
    """Outcome of a comparison of balls: proved, disproved, or undecided."""

    TRUE = "true"
    FALSE = "false"
    UNDECIDED = "undecided"

    @property
    def decided(self) -> bool:
        return self is not Tri.UNDECIDED

    def __bool__(self):  # a Tri must never be used as a truth value by accident
        raise TypeError("a Tri has no truth value: compare with Tri.TRUE / Tri.FALSE explicitly")


def _as_ball(x: Number) -> arb:
    return x if isinstance(x, arb) else ball(x)


def compare(a: Number, op: str, b: Number) -> Tri:
    """Decide ``a op b`` for op in ``<=, <, >=, >`` on balls (or exact numbers).

    TRUE only if it holds for every point of both balls, FALSE only if it fails for every point,
    UNDECIDED otherwise (including any non-finite ball).
    """
    a, b = _as_ball(a), _as_ball(b)
    if not (a.is_finite() and b.is_finite()):
        return Tri.UNDECIDED
    if op == "<=":
        yes, no = a <= b, a > b
    elif op == "<":
        yes, no = a < b, a >= b
    elif op == ">=":
        yes, no = a >= b, a < b
    elif op == ">":
        yes, no = a > b, a <= b
    else:
        raise ValueError(f"unknown relation {op!r}")
    if yes:
        return Tri.TRUE
    if no:
        return Tri.FALSE
    return Tri.UNDECIDED


def decide(a: Number, op: str, b: Number, what: str) -> bool:
    """``a op b`` decided in balls: True or False, and :class:`UndecidedError` (message ``what``) when the
    balls do not decide it (undecided is never read as true or false)."""
    t = compare(a, op, b)
    if t is Tri.UNDECIDED:
        raise UndecidedError(what)
    return t is Tri.TRUE


def certain_ceil(x: arb, what: str | None = None) -> int | None:
    """The integer ceil(x) if the ball decides it (k-1 < x <= k on the whole ball), else None
    (or, given ``what``, :class:`UndecidedError` with that message)."""
    k = None
    if x.is_finite():
        check_magnitude(x)
        k_lo, k_hi = int(x.lower().fmpq().ceil()), int(x.upper().fmpq().ceil())
        if k_lo == k_hi:
            k = k_hi
    if k is None and what is not None:
        raise UndecidedError(what)
    return k


def escalate(compute: Callable[[int], T], ladder: Iterable[int] = PRECISION_LADDER, what: str = "the computation") -> T:
    """Run ``compute(prec)`` at increasing working precision until it stops raising UndecidedError.

    ``compute`` raises :class:`UndecidedError` when a comparison it needs is undecided; the last
    failure is re-raised with a clear message naming ``what`` and the highest precision tried.
    """
    last = None
    for prec in ladder:
        with ctx.workprec(prec):
            try:
                return compute(prec)
            except UndecidedError as err:
                last = err
    raise UndecidedError(f"{what} is still undecided at {max(ladder)} bits: {last}")


# --------------------------------------------------------------------------------------------
# Reading balls out: exact endpoints, outward decimal rounding, JSON
# --------------------------------------------------------------------------------------------
def _top_exponent(m, e) -> int | None:
    """k with 2^(k-1) <= |m 2^e| < 2^k (None for 0), from the mantissa's bit length: no big numbers."""
    m = int(m)
    return None if m == 0 else int(e) + abs(m).bit_length()


def pow2_text(k: int) -> str:
    """'2^k' for messages, short even when k has thousands of digits (FLINT prints it: no 4300 limit)."""
    t = str(fmpz(abs(int(k))))
    sign = "-" if k < 0 else ""
    if len(t) <= 15:
        return f"2^{sign}{t} (about 1e{sign}{int(t) * 30103 // 100000})"
    return f"2^({sign}{t[0]}.{t[1:4]}e{len(t) - 1})"


def check_magnitude(x: arb) -> None:
    """Refuse a ball whose endpoints cannot be handled exactly (see MAX_EXPONENT).

    Called before any exact conversion of a ball (``arf.fmpq()`` of a number such as 2^-(10^12)
    would need terabytes: FLINT aborts or the process is killed). Raises :class:`InputError`.
    """
    if not x.is_finite():
        return
    mid, rad = x.mid().man_exp(), x.rad().man_exp()
    # the radius may sit 2^16 bits below the value: mid and rad within MAX_EXPONENT + 2^16, then mid within MAX_EXPONENT
    for (m, e), bound in ((mid, MAX_EXPONENT + 2**16), (rad, MAX_EXPONENT + 2**16), (mid, MAX_EXPONENT)):
        k = _top_exponent(m, e)
        if k is not None and abs(k) > bound:
            raise InputError(
                "inputs",
                f"a certified value of magnitude about {pow2_text(k)} is outside the range "
                f"2^-{MAX_EXPONENT} .. 2^{MAX_EXPONENT} (about 1e-315652 .. 1e315652) that certify prints "
                "and re-checks exactly; choose less extreme inputs (see the admissible ranges in the README)",
            )


def ball_endpoints(x: arb) -> tuple[fmpq, fmpq]:
    """Exact rational endpoints (mid - rad, mid + rad) of a finite ball (magnitude checked first)."""
    if not x.is_finite():
        raise ValueError("non-finite ball has no endpoints")
    check_magnitude(x)
    m, r = x.mid().fmpq(), x.rad().fmpq()
    return m - r, m + r


def outward_rational(x: arb, up: bool, tiny_bits: int) -> fmpq:
    """An exact rational >= every point of the finite ball ``x`` (``up``) or <= every point (not ``up``).

    The endpoint itself, except that an endpoint of magnitude below 2^-tiny_bits is replaced, on the safe
    side, by 0 or by +-2^-tiny_bits: a value such as 1e-21501706 (a Gaussian tail far out) would otherwise
    become a rational with millions of digits, or one FLINT cannot build at all. Large endpoints go
    through :func:`check_magnitude` (InputError)."""
    if not x.is_finite():
        raise UndecidedError("a non-finite ball has no outward rational bound")
    point = x.upper() if up else x.lower()
    m, e = point.man_exp()
    k = _top_exponent(m, e)
    if k is None:
        return fmpq(0)
    if k < -tiny_bits:
        negative = int(m) < 0
        if up:
            return fmpq(0) if negative else fmpq(1, fmpz(1) << tiny_bits)
        return -fmpq(1, fmpz(1) << tiny_bits) if negative else fmpq(0)
    if -MAX_EXPONENT <= k <= MAX_EXPONENT:
        # fast path, the same value: ``point`` is exact (radius 0), so check_magnitude would test only this
        return point.fmpq()
    check_magnitude(point)
    return point.fmpq()


def _floor_log10(q: fmpq) -> int:
    """floor(log10(q)) for a rational q > 0, exactly.

    Estimated from the bit lengths of numerator and denominator (2^(b-1) < q < 2^(b+1)), never by
    printing them (Python refuses int-to-str beyond 4300 digits), then corrected by exact comparisons.
    """
    b = int(q.p).bit_length() - int(q.q).bit_length()
    e = (b * _LOG10_2.numerator) // _LOG10_2.denominator  # within one or two of the answer
    while _pow10(e) > q:
        e -= 1
    while _pow10(e + 1) <= q:
        e += 1
    return e


def _pow10(e: int) -> fmpq:
    return fmpq(10) ** e if e >= 0 else fmpq(1, fmpz(10) ** (-e))


#: a rational whose numerator and denominator have at most this many bits is rounded in Python integers
_SHORT_BITS = 2048


def _round_decimal(q: fmpq, digits: int, up: bool) -> str:
    """The ``digits``-significant-digit decimal next to ``q`` upwards (``up``) or downwards, exactly."""
    p, d = int(q.p), int(q.q)
    if p.bit_length() <= _SHORT_BITS and d.bit_length() <= _SHORT_BITS:
        return _round_short(p, d, digits, up)
    return _round_fmpq(q, digits, up)


def _round_short(p: int, d: int, digits: int, up: bool) -> str:
    """:func:`_round_fmpq` of p/d (d > 0) in Python integers: the same decimal (a short rational: 3x faster)."""
    if p == 0:
        return "0"
    neg = p < 0
    a = -p if neg else p
    b = a.bit_length() - d.bit_length()
    e = (b * _LOG10_2.numerator) // _LOG10_2.denominator  # within one or two of floor(log10(a/d))
    while (d * 10**e > a) if e >= 0 else (d > a * 10 ** (-e)):  # 10^e > a/d
        e -= 1
    while (d * 10 ** (e + 1) <= a) if e + 1 >= 0 else (d <= a * 10 ** (-e - 1)):  # 10^(e+1) <= a/d
        e += 1
    k = digits - 1 - e
    num, den = (a * 10**k, d) if k >= 0 else (a, d * 10 ** (-k))
    m, rem = divmod(num, den)  # floor of the scaled magnitude
    away = up != neg  # magnitude rounding direction: rounding q up means rounding |q| down when q < 0
    if away and rem:
        m += 1
    if m >= 10**digits:  # carry into a new digit
        m //= 10
        e += 1
        k = e - digits + 1
        if away and ((m * 10**k * d < a) if k >= 0 else (m * d < a * 10 ** (-k))):  # pragma: no cover - exact guard
            m += 1
    t = str(m)
    mant = t[0] + ("." + t[1:] if len(t) > 1 else "")
    return f"{'-' if neg else ''}{mant}e{e}"


def _round_fmpq(q: fmpq, digits: int, up: bool) -> str:
    if q == 0:
        return "0"
    neg = q < 0
    a = -q if neg else q
    e = _floor_log10(a)
    scale = _pow10(digits - 1 - e)
    scaled = a * scale
    # magnitude rounding direction: rounding q up means rounding |q| down when q < 0
    away = up != neg
    m = int(scaled.ceil()) if away else int(scaled.floor())
    if m >= 10**digits:  # carry into a new digit
        m //= 10
        e += 1
        if away and fmpq(m) * _pow10(e - digits + 1) < a:  # pragma: no cover - exact guard
            m += 1
    s = str(m)
    mant = s[0] + ("." + s[1:] if len(s) > 1 else "")
    return f"{'-' if neg else ''}{mant}e{e}"


def upper_decimal(x: arb | fmpq, digits: int = 10) -> str:
    """Smallest ``digits``-significant-digit decimal >= every point of ``x`` (rounded up)."""
    return _outward_decimal(x, digits, up=True)


def lower_decimal(x: arb | fmpq, digits: int = 10) -> str:
    """Largest ``digits``-significant-digit decimal <= every point of ``x`` (rounded down)."""
    return _outward_decimal(x, digits, up=False)


def _outward_decimal(x: arb | fmpq, digits: int, up: bool) -> str:
    if isinstance(x, arb):
        x = ball_endpoints(x)[1 if up else 0]  # exact, independent of the working precision
    _bounded_endpoint(x)
    return _round_decimal(x, digits, up=up)


def _bounded_endpoint(q: fmpq) -> None:
    """A rational endpoint must lie in the printable range too (it may come from a certificate)."""
    if q != 0:
        b = int(q.p).bit_length() - int(q.q).bit_length()
        if abs(b) > MAX_EXPONENT + 2**16 + 2:
            raise InputError(
                "inputs",
                f"a value of magnitude about {pow2_text(b)} is outside the range 2^-{MAX_EXPONENT} .. 2^{MAX_EXPONENT} that certify prints exactly",
            )


def ball_to_json(x: arb) -> dict:
    """Exact JSON form of a finite ball: midpoint and radius as [mantissa string, exponent]."""
    if not x.is_finite():
        raise ValueError("cannot serialise a non-finite ball")
    check_magnitude(x)
    mm, me = x.mid().man_exp()
    rm, re_ = x.rad().man_exp()
    return {"mid": [str(fmpz(mm)), int(me)], "rad": [str(fmpz(rm)), int(re_)]}  # FLINT's str: no digit limit


def _dyadic(pair) -> fmpq:
    if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
        raise ValueError(f"expected [mantissa, exponent], got {pair!r}")
    m, e = pair
    if isinstance(m, bool) or isinstance(e, bool) or not isinstance(e, int):
        raise ValueError(f"bad dyadic {pair!r}")
    text = str(m)
    if not re.fullmatch(r"-?[0-9]{1,%d}" % MAX_DIGITS, text):
        raise ValueError(f"bad mantissa {text[:40]!r} (at most {MAX_DIGITS} decimal digits)")
    m = int(fmpz(text))
    k = _top_exponent(m, e)
    if k is not None and abs(k) > MAX_EXPONENT + 2**16:
        raise ValueError(f"exponent {e} outside the range 2^-{MAX_EXPONENT} .. 2^{MAX_EXPONENT}")
    return fmpq(m) * fmpq(2) ** e if e >= 0 else fmpq(m, 2 ** (-e))


def ball_from_json(obj: dict) -> tuple[fmpq, fmpq]:
    """Exact (midpoint, radius) rationals of a serialised ball (no rounding, no reloading)."""
    if not isinstance(obj, dict) or set(obj) != {"mid", "rad"}:
        raise ValueError(f"a ball must be {{'mid': [m, e], 'rad': [m, e]}}, got {obj!r}")
    mid, rad = _dyadic(obj["mid"]), _dyadic(obj["rad"])
    if rad < 0:
        raise ValueError("negative radius")
    return mid, rad


def ball_contains(outer: tuple[fmpq, fmpq], inner: arb) -> bool:
    """Exact test that the (mid, rad) ball ``outer`` contains every point of ``inner``."""
    lo, hi = ball_endpoints(inner)
    m, r = outer
    return m - r <= lo and hi <= m + r
