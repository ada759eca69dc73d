"""T-fold composition of a one-step measure: exact integer polynomial products with outward rounding.

Representation. A measure on the loss grid is ``Pld(poly, offset, inf, K, pessimistic)``: the atom at
loss (offset + i) h has mass poly[i] * 2^-K, and inf * 2^-K sits at +inf. Composition of independent
steps adds losses, so (finite part) the product measure is the polynomial product; the product is
computed EXACTLY by FLINT (``fmpz_poly`` multiplication: integers, no float FFT), giving masses in units
2^-2K, then rescaled to 2^-K:

* pessimistic: every coefficient rounded UP (:func:`round_up`, a ceiling; each mass only grows; by monotonicity
  of delta(eps) in every mass, see certified-pld.md "Objects", the read-off can only grow), and the +inf mass of the product
  A x B is exactly a_inf |B| + b_inf |A| + a_inf b_inf (every pair with at least one infinite loss has
  infinite loss), also rounded up;
* optimistic: floor of every coefficient (masses only shrink); the optimistic measures carry no +inf mass.
The rounding error per product is below (number of atoms) * 2^-K of total mass.

Speed of the products. ``a * a`` with the same object is FLINT's squaring (fmpz_poly_sqr: about 0.6x a
product), which :func:`power` uses for every squaring. An exact product through numpy's float FFT (b-bit
limbs small enough for an a-priori error bound below 1/2, then rounding) was measured against FLINT 3's
product at the chains' sizes and not adopted (``benchmarks/bench_pld_products.py``, benchmarks/README.md):
even with the limb size an optimistic constant allows, the transforms cost about what FLINT's product costs,
and python-flint moves coefficients only through Python ints, which costs more than the product itself.
The masses' bits (K) are the plan's (:mod:`certify.pld.accountant`), recorded in the certificate: a product
at fewer bits would change every composed measure, which old certificates pin (tests/test_pld_speed_invariance.py).

Truncation to a window after every product (the window is chosen by a deterministic rule on the exact
integers, see :func:`trim`, so the checker re-derives the same window; any window is valid):
* pessimistic: the mass of the lowest atoms (at most ``tau`` units) is moved UP onto the first kept atom
  (losses only grow), the mass of the highest atoms (at most ``tau`` units) is moved to +inf;
* optimistic: the lowest atoms are dropped (masses only shrink) and the highest are moved DOWN onto the
  last kept atom (losses only shrink).
Each operation moves the read-off delta(eps) = m_inf + sum m_i (1 - e^(eps - l_i))_+ in the intended
direction, because that expression is non-decreasing in every m_i, in m_inf and in every l_i (moving mass
to a larger loss or to +inf can only raise it). The product of measures whose curves bound the one-step
curve bounds the T-fold curve (:mod:`certify.pld.discretise`, Zhu-Dong-Wang Theorem 10), and the same
monotonicity makes every rounded/truncated product bound the exact product of the discretised measures.
So pessimistic results are upper bounds and optimistic ones lower bounds of the composed pair's curve.

Addition chains (the plan records which; both take floor(log2 T) squarings plus popcount(T) - 1 products, so the
rounding and truncation budgets are the same):
* right to left (``chain`` None, certificates written before the left-to-right chain): A^T is the product of the
  powers A^(2^j) over the set bits of T; the popcount products multiply two large powers;
* left to right (:data:`LEFT_TO_RIGHT`, what certify writes): read the bits of T from the top, square the running
  power at every bit and multiply it by A itself at every set bit: A^(2m) = (A^m)^2, A^(2m+1) = (A^m)^2 A. The
  squarings are the same size as the other chain's and each other product has the small one-step A as a factor
  (measured: the composition 20% faster at T = 1e4, 38% at T = 1e6, q = 0.01, sigma = 2, grid 1e-4).
Every product is an outward product of measures that bound the curves of A^m and A^n, so any chain bounds A^T.
The powers are cached per one-step measure, threshold and chain (the powers A^(2^j), or the prefix powers
A^(T >> k)), so a sweep over T shares them.

Size guard: :func:`multiply` refuses exactly any product above MAX_ATOMS; before that, :func:`power` refuses
at once (:func:`check_width`) when a Gaussian prediction of the widths of the powers, built from the exact
moments of the one-step measure and the truncation threshold, says a product will exceed it. The
prediction errs low (measured 2-6% below the actual products), so nothing that completes is refused.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from fractions import Fraction

from flint import fmpz, fmpz_poly

from ..balls import InputError
from .discretise import OneStep

#: no composed measure may exceed this many atoms (memory guard: about 40 bytes per atom)
MAX_ATOMS = 4_000_000
#: the name a plan records for the left-to-right addition chain (module docstring); None is the right-to-left one
LEFT_TO_RIGHT = "left-to-right"
CHAINS = (None, LEFT_TO_RIGHT)


@dataclass
class Pld:
    poly: fmpz_poly
    offset: int
    inf: int
    K: int
    pessimistic: bool

    @property
    def atoms(self) -> int:
        return self.poly.length()

    def finite_mass(self) -> int:
        return int(self.poly(1))


def from_one_step(s: OneStep) -> Pld:
    p = fmpz_poly(s.masses)
    first = next((i for i, m in enumerate(s.masses) if m), 0)
    if first:
        p = p.right_shift(first)
    return Pld(p, s.lo + first, s.inf, s.K, s.pessimistic)


def _end_sum(p: fmpz_poly, n: int, k: int, from_top: bool) -> int:
    """Sum of the k lowest (or highest) coefficients, in C (truncate / shift, then evaluate at 1)."""
    if k <= 0:
        return 0
    return int((p.right_shift(n - k) if from_top else p.truncate(k))(1))


def _end_cut(p: fmpz_poly, tau: int, limit: int, from_top: bool) -> tuple[int, int]:
    """(k, mass): the largest k <= limit such that the k lowest (or highest) coefficients sum to <= tau, and
    their sum. The coefficients are >= 0, so the end sums grow with k and any search finds the same k: an
    exponential search from that end, then a safeguarded interpolation on the logarithms of the end sums (a tail's
    sums grow about geometrically; a step that does not shrink the bracket to half is followed by a bisection), so a
    cut of k atoms costs a few O(k) sums instead of log2 k of them."""
    n = p.length()
    lo, s_lo, m = 0, 0, 64
    while True:
        m = min(m, limit)
        s_m = _end_sum(p, n, m, from_top)
        if s_m > tau:
            break
        lo, s_lo = m, s_m
        if m >= limit:
            return m, s_m
        m *= 4
    hi, s_hi = m, s_m  # invariant: sum(lo) = s_lo <= tau < s_hi = sum(hi)
    bisect = False
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if not bisect and s_lo > 0:
            den = math.log(s_hi) - math.log(s_lo)  # 0 when the two huge sums round to one float: bisect
            frac = (math.log(tau + 1) - math.log(s_lo)) / den if den > 0 else math.nan
            if 0 <= frac <= 1:
                mid = min(max(lo + int(frac * (hi - lo)), lo + 1), hi - 1)
        width = hi - lo
        s_mid = _end_sum(p, n, mid, from_top)
        if s_mid <= tau:
            lo, s_lo = mid, s_mid
        else:
            hi, s_hi = mid, s_mid
        bisect = not bisect and 2 * (hi - lo) > width
    return lo, s_lo


def trim(p: fmpz_poly, tau: int) -> tuple[int, int, int, int]:
    """(k_low, mass_low, k_high, mass_high): the largest k_low with the lowest k_low coefficients summing to
    <= tau, then the largest k_high with the highest k_high summing to <= tau, keeping at least one atom;
    deterministic on the exact integers."""
    n = p.length()
    k_low, m_low = _end_cut(p, tau, n - 1, False)
    k_high, m_high = _end_cut(p, tau, n - 1 - k_low, True)
    return k_low, m_low, k_high, m_high


_FILL: dict[int, fmpz_poly] = {}


def _fill(n: int, value: fmpz) -> fmpz_poly:
    """value * (1 + x + ... + x^(n-1)) (cached per value, grown by doubling; a truncated copy is returned)."""
    key = int(value)
    p = _FILL.get(key)
    if p is None:
        p = fmpz_poly([value])
    while p.length() < n:
        p = p + p.left_shift(p.length())
    _FILL[key] = p
    return p.truncate(n)


def floor_div(c: fmpz_poly, scale: fmpz) -> fmpz_poly:
    """Coefficient-wise floor(c_i / scale) of a polynomial with NONNEGATIVE coefficients, scale >= 1.

    FLINT's ``c // scale`` is Z[x] division by a constant polynomial: coefficient i of the quotient is 0 when
    |c_i| < scale and fdiv(c_i, scale) otherwise (fmpz_poly/div_basecase.c). For c_i >= 0 both branches
    equal floor(c_i / scale); for NEGATIVE c_i with |c_i| < scale it returns 0, not -1, which is why the
    ceiling is never computed as -((-c) // scale) (that rounded masses in (0, 2^-K) DOWN to 0)."""
    return c // scale


def round_up(c: fmpz_poly, scale: fmpz) -> fmpz_poly:
    """Coefficient-wise upward rounding of c / scale for NONNEGATIVE c_i, scale >= 1: floor((c_i - 1) / scale)
    + 1, which is exactly ceil(c_i / scale) for c_i >= 1; for c_i = 0 it is 0 or 1 (FLINT rounds -1 / scale
    to 0 when scale > 1, see :func:`floor_div`), in either case >= the exact 0. One FLINT division and two
    additions, about 1.6x faster than -((-c) // scale), which was also wrong (it rounded 0 < c_i < scale down)."""
    n = c.length()
    if n == 0:
        return c
    ones = _fill(n, fmpz(1))
    return (c - ones) // scale + ones


def multiply(a: Pld, b: Pld, tau: int) -> Pld:
    """The product measure, rescaled to 2^-K outward and truncated (module docstring)."""
    K = a.K
    if a.atoms + b.atoms - 1 > MAX_ATOMS or (a.atoms + b.atoms - 1) * product_bits(K) > MAX_PRODUCT_BITS:
        raise InputError(
            "--grid",
            f"too fine for this many steps: a composed PLD would need {a.atoms + b.atoms - 1} atoms of {product_bits(K)} bits "
            f"(at most {MAX_ATOMS} atoms, {MAX_PRODUCT_BITS // 8_000_000} MB per product); use a coarser grid or a larger delta",
        )
    scale = fmpz(1) << K
    c = a.poly * b.poly
    if a.pessimistic:
        c = round_up(c, scale)
        # the finite masses only where an infinite mass multiplies them, and once for a square (a is b)
        sa = a.finite_mass() if b.inf else 0
        sb = (sa if b is a else b.finite_mass()) if a.inf else 0
        raw = a.inf * sb + b.inf * sa + a.inf * b.inf
        inf = -((-raw) >> K)
    else:
        c = floor_div(c, scale)
        inf = 0
    offset = a.offset + b.offset
    if c.length() == 0:
        return Pld(c, offset, inf, K, a.pessimistic)
    k_low, m_low, k_high, m_high = trim(c, tau)
    n = c.length()
    keep = n - k_low - k_high
    if k_high:
        c = c.truncate(n - k_high)
    if k_low:
        c = c.right_shift(k_low)
    # c is a fresh polynomial here (the rescaled product or a copy of it): its end coefficients are set in place
    if a.pessimistic:
        if m_low:
            c[0] = c[0] + m_low  # onto the first kept atom (losses raised)
        inf += m_high  # the top atoms go to +inf
    elif m_high:
        c[keep - 1] = c[keep - 1] + m_high  # onto the last kept atom (losses lowered)
    return Pld(c, offset + k_low, inf, K, a.pessimistic)


#: a predicted width is refused only above MAX_ATOMS times this (room for tails lighter than a Gaussian's)
WIDTH_MARGIN = 1.1
#: memory guard: no exact product may hold more than this many bits of coefficients (about 150 MB); genuine
#: runs stay far below (T = 1e6 at delta 1e-6: about 0.2e9; T = 1e5 at delta 1e-130, K = 482: about 0.5e9)
MAX_PRODUCT_BITS = 1_200_000_000


def product_bits(K: int) -> int:
    """Bits per coefficient of an exact product before rescaling: masses in units 2^-2K, plus headroom."""
    return 2 * K + 64


def products(steps: int) -> int:
    """Number of products in :func:`power`: ceil(log2 T) squarings + popcount(T) - 1 (at most)."""
    return max(0, steps.bit_length() - 1) + bin(steps).count("1") - 1


def _moments(one: Pld) -> tuple[int, Fraction]:
    """(finite mass, variance in grid steps^2) of a measure, exactly (FLINT derivatives at 1), whatever K."""
    s0 = int(one.poly(1))
    d1 = one.poly.derivative()
    s1 = int(d1(1))
    s2 = int(d1.derivative()(1)) if one.atoms > 2 else 0
    return s0, Fraction(s0 * (s2 + s1) - s1 * s1, s0 * s0)  # E[i(i-1)] + E[i] - E[i]^2


def predicted_width(one: Pld, steps: int, tau: int, moments: tuple | None = None) -> float:
    """A float prediction (a choice, used only to refuse early) of the atoms of one^steps after the
    truncations: the central interval of a Gaussian with the T-fold variance that leaves a tail of
    (products x tau) units on each side, i.e. 2 z sqrt(T var) + 1 with Phibar(z) = products tau / mass,
    capped at the span T (atoms - 1) + 1. It errs LOW (the cut mass per side is at most tau per product, so
    the kept window is at least that wide), except for tails lighter than a Gaussian's (WIDTH_MARGIN).
    Measured 2-25% below the actual width (Poisson and fixed-size, T = 1e3..1e13, delta 1e-6..1e-100)."""
    n = one.atoms
    if n <= 1 or steps <= 1:
        return float(n)
    s0, var = _moments(one) if moments is None else moments
    p = Fraction(products(steps) * max(tau, 1), s0) if s0 > 0 else Fraction(1)
    if var <= 0 or p >= Fraction(1, 2):
        return 1.0
    pf = float(p) or 1e-300
    lo, hi = 0.0, 40.0  # Phibar(z) = erfc(z / sqrt 2) / 2 is decreasing: bisection for Phibar(z) = p
    for _ in range(60):
        mid = (lo + hi) / 2
        if math.erfc(mid / math.sqrt(2)) / 2 > pf:
            lo = mid
        else:
            hi = mid
    width = 2 * lo * math.sqrt(steps * float(var)) + 1
    span = float(steps) * (n - 1) + 1
    if one.pessimistic:
        # an exact floor: after a product every pessimistic coefficient is >= 1 unit (round_up maps 0 to 1
        # as well), so a truncation cuts at most tau atoms per end: w(a + b) >= w(a) + w(b) - 1 - 2 tau, hence
        # w(m) >= m (n - 1) + 1 - 2 tau (m - 1). With a tiny tau (a forged witness) the chain keeps nearly its
        # full span, whatever the Gaussian tails say; with a genuine tau the floor is far below the prediction
        width = max(width, span - 2.0 * tau * (steps - 1))
    return min(width, span)


def chain_products(steps: int, chain: str | None = None) -> list[tuple[int, int]]:
    """The products :func:`power` forms for ``steps``, in order, as pairs of exponents (m, n): A^m times A^n."""
    out = []
    if chain == LEFT_TO_RIGHT:
        m = 1
        for bit in bin(steps)[3:]:
            out.append((m, m))
            m *= 2
            if bit == "1":
                out.append((m, 1))
                m += 1
        return out
    result, j = 0, 0
    while steps >> j:
        if j:
            out.append((1 << (j - 1), 1 << (j - 1)))
        if (steps >> j) & 1:
            if result:
                out.append((result, 1 << j))
            result += 1 << j
        j += 1
    return out


def predicted_product_size(one: Pld, steps: int, tau: int, chain: str | None = None) -> float:
    """The largest a.atoms + b.atoms - 1 that :func:`power` would meet (the quantity :func:`multiply` tests
    against MAX_ATOMS), from :func:`predicted_width` of every factor of :func:`chain_products`."""
    if steps <= 1 or one.atoms <= 1:
        return float(one.atoms)
    mom = _moments(one)
    w = {}

    def width(m: int) -> float:
        if m not in w:
            w[m] = predicted_width(one, m, tau, mom)
        return w[m]

    return max(width(m) + width(n) - 1 for m, n in chain_products(steps, chain))


def check_width(one: Pld, steps: int, tau: int, chain: str | None = None, parameter: str = "--steps", fewer: str = "fewer steps") -> None:
    """Refuse (InputError naming ``parameter``, suggesting ``fewer``) before composing when
    :func:`predicted_product_size` says a product of the T-fold power cannot fit MAX_ATOMS (with WIDTH_MARGIN to
    spare): seconds instead of a long run that :func:`multiply` would refuse later anyway. :func:`multiply`'s exact
    test stays the final word."""
    est = predicted_product_size(one, steps, tau, chain)
    if est > MAX_ATOMS * WIDTH_MARGIN or est * product_bits(one.K) > MAX_PRODUCT_BITS * WIDTH_MARGIN:
        raise InputError(
            parameter,
            f"the {steps}-fold composition would need products of about {est:.3g} atoms of {product_bits(one.K)} bits at this grid "
            f"(at most {MAX_ATOMS} atoms, {MAX_PRODUCT_BITS // 8_000_000} MB per product); use a coarser --grid or {fewer}",
        )


_POWERS: "OrderedDict[tuple, dict[int, Pld]]" = OrderedDict()
_MAX_CHAINS = 4


def power(one: Pld, steps: int, tau: int, key: tuple | None = None, chain: str | None = None) -> Pld:
    """one^steps by the addition ``chain`` (module docstring: None right to left, :data:`LEFT_TO_RIGHT`); the powers
    it forms cached under ``key`` (a few chains kept, LRU). Refused at once (:func:`check_width`) when a product is
    predicted not to fit MAX_ATOMS."""
    if chain not in CHAINS:
        raise InputError("witnesses.chain", f"must be {LEFT_TO_RIGHT!r} or absent, got {chain!r}"[:200])
    check_width(one, steps, tau, chain)
    cache = None
    if key is not None:
        cache = _POWERS.get((key, tau, chain))
        if cache is not None:
            _POWERS.move_to_end((key, tau, chain))
    if cache is None:
        cache = {1: one}
        if key is not None:
            _POWERS[(key, tau, chain)] = cache
            while len(_POWERS) > _MAX_CHAINS:
                _POWERS.popitem(last=False)
    if chain == LEFT_TO_RIGHT:
        return _left_to_right(cache, steps, tau)
    result = None
    j = 0
    while steps >> j:
        if (1 << j) not in cache:
            prev = cache[1 << (j - 1)]
            cache[1 << j] = multiply(prev, prev, tau)
        if (steps >> j) & 1:
            result = cache[1 << j] if result is None else multiply(result, cache[1 << j], tau)
        j += 1
    return result


def _left_to_right(cache: dict[int, Pld], steps: int, tau: int) -> Pld:
    """A^steps from the top bit down (module docstring); ``cache`` holds prefix powers A^(steps >> k) of this and
    earlier queries (a sweep over T whose binary expansions share a prefix shares them)."""
    bits = bin(steps)[2:]
    k = len(bits)  # the longest cached prefix
    while int(bits[:k], 2) not in cache:
        k -= 1
    m = int(bits[:k], 2)
    result = cache[m]
    for bit in bits[k:]:
        m *= 2
        result = multiply(result, result, tau)
        if bit == "1":
            m += 1
            result = multiply(result, cache[1], tau)
        cache[m] = result
    return result


def clear_cache() -> None:
    _POWERS.clear()
