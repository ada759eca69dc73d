"""Certified read-off: delta(eps) in balls, and eps(delta) by bisection over dyadic eps.

For a measure on the grid (atoms m_i at l_i = (offset + i) h, m_inf at +inf; :mod:`certify.pld.discretise`, "Objects"):

    delta(eps) = m_inf + sum_(l_i > eps) m_i (1 - e^(eps - l_i))
               = m_inf + S1 - e^(eps - l_k) S2(e^(-h)),   S1 = sum_(i >= k) m_i,  S2(x) = sum_(i >= k) m_i x^(i-k),

with k the first atom with l_k > eps. S1 is an exact integer sum; S2 is the exact integer polynomial
evaluated at the ball e^(-h) (Arb, all terms positive, no cancellation); the one subtraction is done at
K + 96 bits. The ball contains the exact read-off of the (rounded) measure for any real eps: its upper
endpoint is taken for pessimistic measures, its lower endpoint for optimistic ones.

delta(eps) is non-increasing in eps (each term is), so for a target delta:
* eps_pass: a dyadic eps with upper(delta_up(eps)) <= delta -- decided in balls; every larger eps passes
  too. The run is (eps_pass, delta)-DP for the composed dominating pair.
* eps_fail: a dyadic eps with lower(delta_low(eps)) > delta -- then the exact composed curve is > delta
  at eps_fail and (monotone) at every smaller eps, so the pair's exact eps(delta) > eps_fail.
Both are found by bisection on dyadics of resolution 2^-RESOLUTION_BITS (a search; the checker only
re-evaluates the two recorded points).
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..balls import arb, ball, fmpq, outward_rational, workprec
from .compose import Pld
from .discretise import EXTRA_PREC

RESOLUTION_BITS = 24


def delta_at(p: Pld, eps: fmpq, h: fmpq) -> arb:
    """Ball of the measure's delta(eps) (value units) at an exact eps."""
    with workprec(p.K + EXTRA_PREC):
        n = p.poly.length()
        k = int((eps / h).floor()) - p.offset + 1
        k = max(k, 0)
        if k >= n:
            return ball(fmpq(p.inf, 1 << p.K))
        tail = p.poly.right_shift(k) if k else p.poly
        s1 = int(tail(1))
        hb = ball(h)
        s2 = tail((-hb).exp())
        lk = hb * (p.offset + k)
        d = (p.inf + s1) - (ball(eps) - lk).exp() * s2
        return d / (1 << p.K)


def _max(xs: Sequence[arb]) -> arb:
    out = xs[0]
    for x in xs[1:]:
        out = out.max(x)
    return out


def delta_upper(pess: Sequence[Pld], eps: fmpq, h: fmpq) -> arb:
    """Ball whose upper endpoint bounds the worst-direction delta(eps) of the composed pair from above."""
    return _max([delta_at(p, eps, h) for p in pess])


def delta_lower(opt: Sequence[Pld], eps: fmpq, h: fmpq) -> arb:
    """Ball whose lower endpoint bounds the worst-direction delta(eps) of the composed pair from below."""
    return _max([delta_at(p, eps, h) for p in opt])


def max_loss(ps: Sequence[Pld], h: fmpq) -> fmpq:
    return max(h * (p.offset + p.poly.length()) for p in ps)


def _bisect(ok: Callable[[fmpq], bool], lo: fmpq, hi: fmpq, want_ok_high: bool) -> fmpq:
    """Dyadic bisection: ok(hi) (want_ok_high) or ok(lo) holds; returns the end that holds."""
    step = fmpq(1, 1 << RESOLUTION_BITS)
    while hi - lo > step:
        mid = (lo + hi) / 2
        mid = fmpq(int((mid / step).floor()), 1 << RESOLUTION_BITS)
        if mid <= lo or mid >= hi:
            break
        if ok(mid) == want_ok_high:
            hi = mid
        else:
            lo = mid
    return hi if want_ok_high else lo


def _tiny(delta: fmpq) -> int:
    """Magnitudes below 2^-_tiny(delta) are far below delta: replaced on the safe side (balls.outward_rational)."""
    return 2 * int(fmpq(1) / delta).bit_length() + 256 if delta > 0 else 256


def epsilon_pass(pess: Sequence[Pld], delta: fmpq, h: fmpq) -> fmpq | None:
    """Smallest dyadic eps found with upper(delta_up(eps)) <= delta (None if even the top of the window fails)."""

    def passes(e: fmpq) -> bool:
        d = delta_upper(pess, e, h)
        return d.is_finite() and outward_rational(d, True, _tiny(delta)) <= delta

    if passes(fmpq(0)):
        return fmpq(0)
    top = max_loss(pess, h) + 1
    top = fmpq(int(top.ceil()))
    if not passes(top):
        return None
    return _bisect(passes, fmpq(0), top, True)


def epsilon_fail(opt: Sequence[Pld], delta: fmpq, h: fmpq, hi: fmpq) -> fmpq:
    """Largest dyadic eps found in [0, hi] with lower(delta_low(eps)) > delta (0 if none: no information)."""

    def fails(e: fmpq) -> bool:
        d = delta_lower(opt, e, h)
        return d.is_finite() and outward_rational(d, False, _tiny(delta)) > delta

    if not fails(fmpq(0)):
        return fmpq(0)
    if fails(hi):
        return hi
    return _largest_failing(fails, hi)


def _largest_failing(fails: Callable[[fmpq], bool], hi: fmpq) -> fmpq:
    lo = fmpq(0)
    step = fmpq(1, 1 << RESOLUTION_BITS)
    while hi - lo > step:
        mid = fmpq(int(((lo + hi) / 2 / step).floor()), 1 << RESOLUTION_BITS)
        if mid <= lo or mid >= hi:
            break
        if fails(mid):
            lo = mid
        else:
            hi = mid
    return lo
