"""Certified read-off: delta(eps) in balls, and eps(delta) by bisection over dyadic eps.

For a measure on the grid (atoms m_i at l_i = (offset + i) h, m_inf at +inf; :mod:`certify.pld.discretise`, "Objects"):

    delta(eps) = m_inf + sum_(l_i > eps) m_i (1 - e^(eps - l_i))
               = m_inf + S1 - e^(eps - l_k) S2(e^(-h)),   S1 = sum_(i >= k) m_i,  S2(x) = sum_(i >= k) m_i x^(i-k),

with k the first atom with l_k > eps. S1 is an exact integer sum; S2 is the exact integer polynomial
evaluated at the ball e^(-h) (Arb, all terms positive, no cancellation); the one subtraction is done at
K + 96 bits. The ball contains the exact read-off of the (rounded) measure for any real eps: its upper
endpoint is taken for pessimistic measures, its lower endpoint for optimistic ones.

delta(eps) is non-increasing in eps (each term is), so for a target delta:
* eps_pass: a dyadic eps with upper(delta_up(eps)) <= delta -- decided in balls; the exact curve is
  then <= delta at every larger eps too. The run is (eps_pass, delta)-DP for the composed dominating pair.
  (The read-off of a derived direction, below, need not be monotone in eps: only the exact curve is; the
  search assumes nothing from it, and the claim rests on the recorded point alone.)
* eps_fail: a dyadic eps with lower(delta_low(eps)) > delta -- then the exact composed curve is > delta
  at eps_fail and (monotone) at every smaller eps, so the pair's exact eps(delta) > eps_fail.
Both are found by bisection on dyadics of resolution 2^-RESOLUTION_BITS (a search; the checker only
re-evaluates the two recorded points).

The add direction derived from the remove chain (Poisson add/remove; :class:`Swapped`). For probability
measures P, Q and gamma > 0, (q - gamma p)_+ = (q - gamma p) + gamma (p - q/gamma)_+ integrates to

    H_gamma(Q || P) = 1 - gamma + gamma H_(1/gamma)(P || Q)                                        (*)

(proof obligation ``PLD-swap`` in :mod:`certify.pld.proofs`). The add pair is the remove pair swapped at
every step, so its T-fold product is the remove pair's T-fold product swapped and, with g = e^eps,
delta_add,T(e^eps) = 1 - g + g delta_rem,T(1/g): (*) is applied to the TRUE T-fold pair (masses 1 and 1),
never to a discretised measure. The map G -> 1 - g + g G(1/g) preserves pointwise order (g > 0,
obligation ``PLD-swap-monotone``), so a composed measure whose curve G bounds delta_rem,T from above
(below) at gamma' = 1/g < 1 bounds delta_add,T from above (below). The pessimistic and optimistic remove
chains bound delta_rem,T at EVERY gamma' >= 0: the one-step checks cover [0, inf)
(:mod:`certify.pld.discretise`, "Why a check at the grid points suffices": left of the window, between
grid points, right of it), the composition argument (Zhu-Dong-Wang Theorem 10 as stated there) holds
for every gamma >= 0, and every rounding / truncation of :mod:`certify.pld.compose` moves
m_inf + sum m_i (1 - gamma' e^(-l_i))_+ in the intended direction for every gamma' >= 0 (the monotonicity
in m_i, m_inf, l_i used there does not depend on gamma'). So both bounds hold for ANY K and tau; those
only decide tightness.

Evaluation (precision). With the composed measure's atoms (l_i, m_i), m_inf, total M = m_inf + sum m_i and
Q-side mass W = sum m_i e^(-l_i) (m_inf carries no Q-mass), expanding G(1/g) = m_inf + sum_(l_i > -eps)
m_i (1 - e^(-eps - l_i)) gives

    1 - g + g G(1/g) = sum_(l_i <= -eps) m_i (e^(-l_i) - g)  +  g (M - 1)  +  (1 - W),

a sum of nonnegative terms (the "tilted" head: l_i <= -eps means e^(-l_i) >= g) plus two corrections:
g (M - 1) is an exact integer times the ball g (the pessimistic measure's excess mass from rounding up,
amplified by e^eps: the plan adds about eps log2(e) bits to K for it), and 1 - W is evaluated once per
measure (all terms positive; the low-loss truncation of the remove chain lowers W, so the plan scales
tau by e^(-eps)). Everything is in balls at K + EXTRA_PREC bits; the direct form 1 - g + g G(1/g) would
cancel two terms of size g.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence, Union

from ..balls import arb, ball, fmpq, outward_rational, workprec
from .compose import Pld
from .discretise import EXTRA_PREC

RESOLUTION_BITS = 24


@dataclass(eq=False)
class Swapped:
    """The direction read off from a composed measure ``of`` by identity (*) (module docstring): its delta at
    eps is 1 - e^eps + e^eps G(e^-eps), G the curve of ``of``. Bounds the swapped pair's curve in the same
    direction (upper / lower) as ``of`` bounds its own."""

    of: Pld
    _W: dict = field(default_factory=dict)  # precision -> ball of the Q-side mass (constant in eps)

    def q_mass(self, h: fmpq) -> arb:
        """Ball of W = sum m_i e^(-l_i) at the current precision (positive terms; cached)."""
        from ..balls import ctx

        key = (ctx.prec, h)
        if key not in self._W:
            p, hb = self.of, ball(h)
            self._W[key] = (-(hb * p.offset)).exp() * p.poly((-hb).exp()) / (1 << p.K)
        return self._W[key]


Direction = Union[Pld, Swapped]


def swapped_delta_at(s: Swapped, eps: fmpq, h: fmpq) -> arb:
    """Ball of 1 - g + g G(1/g), g = e^eps, G the curve of ``s.of``, as the tilted head sum plus g (M - 1)
    plus (1 - W) (module docstring; no cancellation of terms of size g)."""
    p = s.of
    with workprec(p.K + EXTRA_PREC):
        n = p.poly.length()
        kk = int((-eps / h).floor()) - p.offset + 1  # atoms 0 .. kk-1 have l_i <= -eps
        kk = min(max(kk, 0), n)
        hb = ball(h)
        g = ball(eps).exp()
        if kk:
            head = p.poly.truncate(kk)
            tilted = (-(hb * p.offset)).exp() * head((-hb).exp()) - g * int(head(1))
            tilted = tilted / (1 << p.K)
        else:
            tilted = arb(0)
        excess = fmpq(p.inf + p.finite_mass() - (1 << p.K), 1 << p.K)  # M - 1, exact
        return tilted + g * ball(excess) + (1 - s.q_mass(h))


def delta_at(p: Direction, eps: fmpq, h: fmpq) -> arb:
    """Ball of the measure's delta(eps) (value units) at an exact eps (a :class:`Swapped` direction: by (*))."""
    if isinstance(p, Swapped):
        return swapped_delta_at(p, eps, h)
    if not isinstance(p, Pld):  # an FFT composition (certify.pld.fft; imported only when one exists)
        from .fft import FftDirection

        if isinstance(p, FftDirection):
            return p.delta_at(eps, h)
        raise TypeError(f"not a read-off direction: {type(p).__name__}")
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


def delta_upper(pess: Sequence[Direction], eps: fmpq, h: fmpq) -> arb:
    """Ball whose upper endpoint bounds the worst-direction delta(eps) of the composed pair from above."""
    return _max([delta_at(p, eps, h) for p in pess])


def delta_lower(opt: Sequence[Direction], eps: fmpq, h: fmpq) -> arb:
    """Ball whose lower endpoint bounds the worst-direction delta(eps) of the composed pair from below."""
    return _max([delta_at(p, eps, h) for p in opt])


def max_loss(ps: Sequence[Direction], h: fmpq) -> fmpq:
    ms = [p.of if isinstance(p, Swapped) else p for p in ps]
    return max(h * (p.offset + p.poly.length()) if isinstance(p, Pld) else p.max_loss(h) for p in ms)


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


def epsilon_pass(pess: Sequence[Direction], delta: fmpq, h: fmpq) -> fmpq | None:
    """Smallest dyadic eps found with upper(delta_up(eps)) <= delta (None if even the top of the window fails)."""

    def passes(e: fmpq) -> bool:  # every direction passes (stops at the first that does not: same verdict)
        for p in pess:
            d = delta_at(p, e, h)
            if not (d.is_finite() and outward_rational(d, True, _tiny(delta)) <= delta):
                return False
        return True

    if passes(fmpq(0)):
        return fmpq(0)
    top = max_loss(pess, h) + 1
    top = fmpq(int(top.ceil()))
    # a derived (Swapped) direction's bound is not monotone in eps (its g (M - 1) term grows with e^eps);
    # the true curve is, so any passing point is valid: if the top fails, try smaller tops (a search)
    for k in range(32):
        t = fmpq(int((top * (32 - k) / 32).ceil()), 1) if top >= 32 else top * (32 - k) / 32
        if passes(t):
            return _bisect(passes, fmpq(0), t, True)
    return None


def epsilon_fail(opt: Sequence[Direction], delta: fmpq, h: fmpq, hi: fmpq) -> fmpq:
    """Largest dyadic eps found in [0, hi] with lower(delta_low(eps)) > delta (0 if none: no information)."""

    def fails(e: fmpq) -> bool:  # some direction fails (stops at the first that does: same verdict)
        for p in opt:
            d = delta_at(p, e, h)
            if d.is_finite() and outward_rational(d, False, _tiny(delta)) > delta:
                return True
        return False

    if not fails(fmpq(0)):
        return fmpq(0)
    if fails(hi):
        return hi
    # eps_low is usually within 2^-12 relative of eps_up (= hi): gallop down from hi first (a search only)
    for k in (12, 8, 4):
        lo = fmpq(int((hi * (1 - fmpq(1, 1 << k)) * (1 << RESOLUTION_BITS)).floor()), 1 << RESOLUTION_BITS)
        if lo <= 0:
            break
        if fails(lo):
            return _largest_failing(fails, hi, lo)
        hi = lo
    return _largest_failing(fails, hi)


def _largest_failing(fails: Callable[[fmpq], bool], hi: fmpq, lo: fmpq = fmpq(0)) -> fmpq:
    """Bisection keeping fails(lo) (or lo = 0) and not fails(hi)."""
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
