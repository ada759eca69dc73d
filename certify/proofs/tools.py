"""Deciding obligations: exact sympy reductions and certified ball evaluation over parameter boxes.

Everything here is exact or rigorous:

* :func:`equal` proves ``lhs == rhs`` when one of a fixed ladder of sympy simplifications reduces the
  difference to exactly 0; otherwise it looks for a certified counterexample (a rational point of the
  domain where a ball of the difference excludes 0); otherwise the verdict is undecided.
* :func:`positive` proves ``expr > 0`` (or ``>= 0``) from sympy's assumption system (symbols carry
  their domain: positive, integer, ...), and otherwise searches for a certified counterexample.
* :func:`poly_positive_above` proves a polynomial positive on ``(c, oo)`` by shifting ``x = c + s`` and
  checking the coefficients (all >= 0, not all 0): a certificate that can be read off the output.
* :func:`bernstein_nonneg` proves a polynomial nonnegative on ``[0, 1]`` from its Bernstein coefficients.
* :func:`prove_on_box` decides ``f(x) op c`` on a box of parameters by evaluating ``f`` on balls
  enclosing each piece and bisecting undecided pieces (Arb's enclosure holds for every point of the
  piece, so a decided piece is decided for all its points).
* :func:`ball_eval` evaluates a sympy expression in python-flint balls, walking the expression tree
  (no lambdify, no floats: a sympy Float is refused).

Symbols never get floats: sample points are sympy Rationals turned into balls through
:func:`certify.balls.ball` of an exact ``fmpq``.
"""
from __future__ import annotations

from typing import Callable, Iterable

import sympy as sp

from .. import signals
from ..balls import Tri, arb, ball, compare, ctx, fmpq, lower_decimal, upper_decimal
from .core import FALSE, PROVED, UNDECIDED, Outcome


def Phi_sym(t):
    """The standard normal CDF as a sympy expression (the one copy the proof modules share)."""
    return (1 + sp.erf(t / sp.sqrt(2))) / 2


def phi_sym(t):
    """The standard normal density as a sympy expression."""
    return sp.exp(-t ** 2 / 2) / sp.sqrt(2 * sp.pi)


# --------------------------------------------------------------------------------------------
# sympy -> balls
# --------------------------------------------------------------------------------------------
def _rational_ball(q: sp.Rational) -> arb:
    return ball(fmpq(int(q.p), int(q.q)))


def ball_eval(expr, env: dict) -> arb:
    """Enclose the value of the sympy expression ``expr`` with symbols bound to balls in ``env``.

    ``env`` maps sympy Symbols to arb balls (or sympy Rationals / ints, made exact balls).
    Supports + * ** (integer, half-integer and general powers), exp, log, sqrt, erf, erfc, Abs,
    pi and E. Raises TypeError on anything else (including floats).
    """
    if isinstance(expr, (int,)):
        return arb(expr)
    if expr.is_Integer:
        return arb(int(expr))
    if expr.is_Rational:
        return _rational_ball(expr)
    if isinstance(expr, sp.Float):
        raise TypeError("a float never enters a certified evaluation")
    if expr.is_Symbol:
        v = env[expr]
        if isinstance(v, arb):
            return v
        v = sp.Rational(v)
        return _rational_ball(v)
    if expr is sp.pi:
        return arb.pi()
    if expr is sp.E:
        return arb.const_e()
    if isinstance(expr, sp.Add):
        out = arb(0)
        for a in expr.args:
            out += ball_eval(a, env)
        return out
    if isinstance(expr, sp.Mul):
        out = arb(1)
        for a in expr.args:
            out *= ball_eval(a, env)
        return out
    if isinstance(expr, sp.Pow):
        base, e = expr.args
        b = ball_eval(base, env)
        if e.is_Integer:
            n = int(e)
            return b ** n if n >= 0 else 1 / (b ** (-n))
        if e == sp.Rational(1, 2):
            return b.sqrt()
        if e == sp.Rational(-1, 2):
            return 1 / b.sqrt()
        return (ball_eval(e, env) * b.log()).exp()
    if isinstance(expr, sp.exp):
        return ball_eval(expr.args[0], env).exp()
    if isinstance(expr, sp.log):
        return ball_eval(expr.args[0], env).log()
    if isinstance(expr, sp.erf):
        return ball_eval(expr.args[0], env).erf()
    if isinstance(expr, sp.erfc):
        return ball_eval(expr.args[0], env).erfc()
    if isinstance(expr, sp.Abs):
        return abs(ball_eval(expr.args[0], env))
    raise TypeError(f"cannot evaluate {type(expr).__name__} in balls: {expr}")


def bracket(x: arb, digits: int = 6) -> str:
    """Outward-rounded decimal enclosure [lower, upper] of a finite ball."""
    if not x.is_finite():
        return "[non-finite]"
    return f"[{lower_decimal(x, digits)}, {upper_decimal(x, digits)}]"


def _point_text(point: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


# --------------------------------------------------------------------------------------------
# Exact identities
# --------------------------------------------------------------------------------------------
def _simplifiers():
    return [
        ("expand", sp.expand),
        ("cancel", lambda e: sp.cancel(sp.together(e))),
        ("expand+powsimp", lambda e: sp.expand(sp.powsimp(sp.expand(e, power_exp=True), force=False))),
        ("simplify", sp.simplify),
        ("erfc -> 1 - erf", lambda e: sp.simplify(sp.expand(e.rewrite(sp.erf)))),
        ("exp/log normal form", lambda e: sp.simplify(sp.expand_log(sp.expand(sp.powsimp(e)), force=False))),
    ]


def reduces_to_zero(expr) -> str | None:
    """Name of the first sympy simplification that turns ``expr`` into exactly 0, else None."""
    expr = sp.sympify(expr)
    if expr == 0:
        return "exact"
    for name, f in _simplifiers():
        try:
            if f(expr) == 0:
                return name
        except Exception:  # a simplifier that fails simply does not decide
            signals.raise_if_arrived()
            continue
    return None


def counterexample(expr, samples: Iterable[dict], relation: str = "!=0", prec: int = 256):
    """First sample point where balls prove the claim ``expr relation`` wrong.

    relation ``"!=0"``: the claim is expr == 0 and a ball excluding 0 refutes it; ``">0"`` / ``">=0"``:
    a ball <= 0 (resp. < 0) refutes it. Returns (point, ball) or None.
    """
    expr = sp.sympify(expr)
    for point in samples:
        env = {sp.Symbol(k) if isinstance(k, str) else k: sp.Rational(v) for k, v in point.items()}
        # match symbols by name so callers may pass plain names
        byname = {s.name: s for s in expr.free_symbols}
        env2 = {}
        for k, v in env.items():
            s = byname.get(k.name, k)
            env2[s] = v
        if any(s not in env2 for s in expr.free_symbols):
            continue
        with ctx.workprec(prec):
            try:
                val = ball_eval(expr, env2)
            except (TypeError, ZeroDivisionError, ValueError):
                continue
            if not val.is_finite():
                continue
            if relation == "!=0" and (val > 0 or val < 0):
                return point, val
            if relation == ">0" and val <= 0:
                return point, val
            if relation == ">=0" and val < 0:
                return point, val
    return None


def default_samples(expr) -> list[dict]:
    """A few rational points: integers 2..5 for integer symbols, values in (0, 1/2) otherwise."""
    syms = sorted(sp.sympify(expr).free_symbols, key=lambda s: s.name)
    pts = []
    for shift in range(3):
        pt = {}
        for i, s in enumerate(syms):
            if s.is_integer:
                pt[s.name] = 2 + (i + shift) % 4
            else:
                pt[s.name] = sp.Rational(1 + (i + 2 * shift) % 5, 11)
        pts.append(pt)
    return pts


def equal(lhs, rhs, samples: list[dict] | None = None, what: str = "") -> Outcome:
    """Prove lhs == rhs exactly (sympy) or refute it at a certified sample point."""
    diff = sp.sympify(lhs) - sp.sympify(rhs)
    if isinstance(diff, sp.MatrixBase):
        hows = [reduces_to_zero(e) for e in diff]
        if all(hw is not None for hw in hows):
            return Outcome(PROVED, "sympy (entrywise " + ", ".join(sorted(set(hows))) + ")", what)
        bad = [e for e, hw in zip(diff, hows) if hw is None]
        return equal(bad[0], 0, samples, what + " (first entry not reduced)")
    how = reduces_to_zero(diff)
    if how is not None:
        return Outcome(PROVED, f"sympy ({how})", what)
    pts = samples if samples is not None else default_samples(diff)
    ce = counterexample(diff, pts, "!=0")
    if ce is not None:
        point, val = ce
        return Outcome(FALSE, "sympy + balls (counterexample)",
                       f"{what + ': ' if what else ''}claimed {sp.sstr(rhs)}; at {_point_text(point)} "
                       f"the two sides differ by {bracket(val)}")
    return Outcome(UNDECIDED, "sympy", f"{what + ': ' if what else ''}difference not reduced to 0: "
                                        f"{sp.sstr(sp.simplify(diff))[:200]}")


def positive(expr, strict: bool = True, samples: list[dict] | None = None, what: str = "") -> Outcome:
    """Prove expr > 0 (or >= 0) from sympy's assumptions on the symbols, or refute it by balls."""
    expr = sp.sympify(expr)
    attr = "is_positive" if strict else "is_nonnegative"
    for name, f in [("assumptions", lambda e: e), ("factor", sp.factor), ("simplify", sp.simplify),
                    ("expand", sp.expand)]:
        try:
            if getattr(f(expr), attr) is True:
                return Outcome(PROVED, f"sympy sign ({name})", what)
        except Exception:
            signals.raise_if_arrived()
            continue
    pts = samples if samples is not None else default_samples(expr)
    ce = counterexample(expr, pts, ">0" if strict else ">=0")
    if ce is not None:
        point, val = ce
        return Outcome(FALSE, "balls (counterexample)",
                       f"{what + ': ' if what else ''}at {_point_text(point)} the expression is {bracket(val)}")
    return Outcome(UNDECIDED, "sympy sign", f"{what + ': ' if what else ''}sign of {sp.sstr(expr)[:160]} not decided")


def unit_power(base, exponent, what: str = "") -> Outcome:
    """Prove 0 < base^exponent <= 1: base^exponent = exp(exponent log base) with exponent log base <= 0
    (sign decided by sympy's assumptions, e.g. base = 1/(1 + t), t > 0, exponent >= 0)."""
    e = sp.expand_log(exponent * sp.log(base), force=False)
    if e.is_nonpositive is True or (exponent * sp.log(base)).is_nonpositive is True:
        return Outcome(PROVED, "sympy sign (exponent * log base <= 0)", what)
    return Outcome(UNDECIDED, "sympy sign", f"{what}: sign of {sp.sstr(e)} not decided")


def poly_positive_above(expr, var, c=0, what: str = "") -> Outcome:
    """Prove the polynomial ``expr`` in ``var`` is > 0 for var > c (coefficients after var = c + s).

    Certificate: every coefficient of expr(c + s) in s is >= 0 (as a sympy expression whose sign is
    decided by the assumptions, e.g. positive symbols), and some coefficient of positive degree is > 0.
    """
    s = sp.Symbol("s_shift", positive=True)
    poly = sp.Poly(sp.expand(sp.sympify(expr).subs(var, c + s)), s)
    coeffs = poly.all_coeffs()[::-1]  # constant first
    signs = [sp.simplify(co) for co in coeffs]
    if all(co.is_nonnegative is True for co in signs) and any(co.is_positive is True for co in signs[1:]):
        return Outcome(PROVED, f"sympy (coefficients of the shift {var} = {c} + s are >= 0)",
                       f"{what + ': ' if what else ''}coefficients {[sp.sstr(co) for co in signs]}")
    neg = [sp.sstr(co) for co in signs if co.is_negative is True]
    if neg:
        # look for a certified counterexample on the ray
        for num in (1, 2, 5, 11, 50):
            val = sp.Rational(num, 10) + c
            v = sp.sympify(expr).subs(var, val)
            if v.free_symbols:
                break
            ce = counterexample(v, [{}], ">0")
            if ce is not None:
                return Outcome(FALSE, "balls (counterexample)",
                               f"{what + ': ' if what else ''}at {var} = {val} the polynomial is {bracket(ce[1])}")
    return Outcome(UNDECIDED, "sympy (shifted coefficients)",
                   f"{what + ': ' if what else ''}shifted coefficients {[sp.sstr(co) for co in signs]} "
                   "do not certify positivity")


def bernstein_nonneg(expr, var, what: str = "") -> Outcome:
    """Prove the polynomial ``expr`` in ``var`` is >= 0 on [0, 1] (all Bernstein coefficients >= 0)."""
    poly = sp.Poly(sp.expand(expr), var)
    n = poly.degree()
    if n <= 0:
        c = poly.all_coeffs()[0] if poly.degree() == 0 else sp.Integer(0)
        return (Outcome(PROVED, "sympy (constant)", what) if sp.sympify(c) >= 0
                else Outcome(FALSE, "sympy (constant)", f"{what}: constant {c} < 0"))
    a = poly.all_coeffs()[::-1]
    a += [0] * (n + 1 - len(a))
    b = [sum(sp.binomial(i, k) / sp.binomial(n, k) * a[k] for k in range(i + 1)) for i in range(n + 1)]
    if all(sp.Rational(x) >= 0 for x in b):
        return Outcome(PROVED, "sympy (Bernstein coefficients >= 0 on [0,1])", what)
    # refute at a rational point if possible
    for num in range(0, 21):
        t = sp.Rational(num, 20)
        if poly.eval(t) < 0:
            return Outcome(FALSE, "sympy (exact counterexample)", f"{what}: value {poly.eval(t)} < 0 at {var} = {t}")
    return Outcome(UNDECIDED, "sympy (Bernstein)", f"{what}: Bernstein coefficients not all >= 0")


# --------------------------------------------------------------------------------------------
# Certified evaluation over boxes
# --------------------------------------------------------------------------------------------
def _interval(lo: fmpq, hi: fmpq) -> arb:
    """A ball containing [lo, hi] (the union of the two exact endpoint balls)."""
    return ball(lo).union(ball(hi))


def prove_on_box(f: Callable[[list], arb], box: list[tuple], op: str = ">", rhs=0, names=None,
                 max_pieces: int = 20000, prec: int = 128, what: str = "",
                 grad: Callable[[list], list] | None = None) -> Outcome:
    """Decide ``f(x) op rhs`` for every x in the closed box by bisection in ball arithmetic.

    ``box`` is a list of (lo, hi) exact rationals (sympy Rational, fmpq, int or "a/b" text).
    ``f`` receives a list of balls (one per coordinate) and returns a ball. Every piece on which the
    relation is decided TRUE is proved for all of its points; a piece whose midpoint gives FALSE is a
    counterexample; pieces left undecided after ``max_pieces`` evaluations make the verdict undecided.

    With ``grad`` (a function returning the list of partial derivatives as balls over the piece),
    the centered (mean-value) form f(mid) + sum_i f_i(piece) (x_i - mid_i), which contains f on the
    piece, is intersected with the direct enclosure: it removes most of the dependency width.
    """
    def q(v) -> fmpq:
        if isinstance(v, fmpq):
            return v
        v = sp.Rational(v)
        return fmpq(int(v.p), int(v.q))

    names = names or [f"x{i}" for i in range(len(box))]
    start = [(q(a), q(b)) for a, b in box]
    stack = [start]
    pieces = 0
    with ctx.workprec(prec):
        rhs_b = ball(q(rhs)) if not isinstance(rhs, arb) else rhs
        while stack:
            piece = stack.pop()
            pieces += 1
            if pieces > max_pieces:
                return Outcome(UNDECIDED, f"balls ({prec}-bit bisection)",
                               f"{what + ': ' if what else ''}{len(stack) + 1} pieces still undecided after "
                               f"{max_pieces} evaluations")
            xs = [_interval(a, b) for a, b in piece]
            val = f(xs)
            if grad is not None:
                mids = [(a + b) / 2 for a, b in piece]
                centered = f([ball(mm) for mm in mids])
                for gi, (a, b), mm in zip(grad(xs), piece, mids):
                    centered += gi * (_interval(a, b) - ball(mm))
                if centered.is_finite():
                    val = centered if not val.is_finite() else val.intersection(centered)
            t = compare(val, op, rhs_b) if val.is_finite() else Tri.UNDECIDED
            if t is Tri.TRUE:
                continue
            mid = [(a + b) / 2 for a, b in piece]
            vm = f([ball(m) for m in mid])
            if vm.is_finite() and compare(vm, op, rhs_b) is Tri.FALSE:
                pt = ", ".join(f"{n}={m}" for n, m in zip(names, mid))
                return Outcome(FALSE, "balls (counterexample)",
                               f"{what + ': ' if what else ''}at {pt} the value is {bracket(vm)}, "
                               f"not {op} {bracket(rhs_b)}")
            widths = [b - a for a, b in piece]
            i = max(range(len(piece)), key=lambda k: widths[k] / (abs(start[k][1] - start[k][0]) or 1))
            a, b = piece[i]
            m = (a + b) / 2
            left, right = list(piece), list(piece)
            left[i] = (a, m)
            right[i] = (m, b)
            stack += [left, right]
    return Outcome(PROVED, f"balls ({prec}-bit bisection)",
                   f"{what + ': ' if what else ''}decided on all {pieces} pieces of the box "
                   + " x ".join(f"{n} in [{a}, {b}]" for n, (a, b) in zip(names, start)))


def numeric_claim(value: arb, printed: str, digits: int, what: str = "") -> Outcome:
    """A printed decimal (``digits`` significant digits) is a correct rounding of the value in the ball.

    Proved when the whole ball lies within half a unit of the last printed digit of ``printed``;
    false when the whole ball lies outside; undecided otherwise.
    """
    p = sp.Rational(printed)
    if p == 0:
        raise ValueError("printed value 0 has no last digit")
    e = sp.floor(sp.log(abs(p), 10))
    # exact floor(log10|p|)
    while sp.Rational(10) ** e > abs(p):
        e -= 1
    while sp.Rational(10) ** (e + 1) <= abs(p):
        e += 1
    half_ulp = sp.Rational(10) ** (e - digits + 1) / 2
    lo, hi = p - half_ulp, p + half_ulp
    lo_b, hi_b = _rational_ball(lo), _rational_ball(hi)
    if value >= lo_b and value <= hi_b:
        return Outcome(PROVED, "balls (printed digits confirmed)",
                       f"{what}: value {bracket(value, digits + 3)}; printed {printed}")
    if value < lo_b or value > hi_b:
        return Outcome(FALSE, "balls (printed digits wrong)",
                       f"{what}: value {bracket(value, digits + 3)} but printed {printed}")
    return Outcome(UNDECIDED, "balls", f"{what}: value {bracket(value, digits + 3)} straddles the rounding "
                                       f"boundary of {printed}")
