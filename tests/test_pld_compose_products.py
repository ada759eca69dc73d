"""The +inf mass of a pessimistic product (certify.pld.compose.multiply) in every case of the operands' +inf
masses, squares (the same object twice) equal to the product of two equal copies, and the truncation's cut equal to a
linear scan's.

The +inf mass of A x B is a_inf |B| + b_inf |A| + a_inf b_inf, rounded up from units 2^-2K to 2^-K
(compose's module docstring); here it is recomputed with Python integers, independently of the code, which
evaluates the finite masses only where an infinite mass multiplies them and once for a square.
"""

from __future__ import annotations

import random

import pytest
from flint import fmpz_poly

from certify.pld import compose

K = 24


def _poly(rnd: random.Random, n: int) -> list[int]:
    return [rnd.randrange(1, 1 << (K - 6)) for _ in range(n)]


def _expected_inf(a: list[int], ai: int, b: list[int], bi: int) -> int:
    raw = ai * sum(b) + bi * sum(a) + ai * bi
    return -(-raw // (1 << K))  # ceiling of raw / 2^K


@pytest.mark.parametrize("ai,bi", [(0, 0), (0, 977), (1234, 0), (1234, 977)])
def test_inf_mass_of_a_product(ai, bi):
    rnd = random.Random(ai * 7 + bi)
    a, b = _poly(rnd, 40), _poly(rnd, 33)
    c = compose.multiply(compose.Pld(fmpz_poly(a), 0, ai, K, True), compose.Pld(fmpz_poly(b), 5, bi, K, True), 0)
    assert c.inf == _expected_inf(a, ai, b, bi)
    assert c.offset == 5 and c.atoms == len(a) + len(b) - 1


@pytest.mark.parametrize("inf", [0, 4321])
@pytest.mark.parametrize("pessimistic", [True, False])
def test_square_equals_product_of_two_copies(inf, pessimistic):
    rnd = random.Random(inf + pessimistic)
    a = _poly(rnd, 60)
    inf = inf if pessimistic else 0  # optimistic measures carry no +inf mass
    p = compose.Pld(fmpz_poly(a), -2, inf, K, pessimistic)
    q = compose.Pld(fmpz_poly(a), -2, inf, K, pessimistic)
    tau = 1 << 10
    sq, prod = compose.multiply(p, p, tau), compose.multiply(p, q, tau)
    assert (sq.poly, sq.offset, sq.inf) == (prod.poly, prod.offset, prod.inf)
    if pessimistic:
        # the cut high end goes to +inf on top of the product's own +inf mass: never below the formula
        assert sq.inf >= _expected_inf(a, inf, a, inf)


def _brute_cut(coeffs: list[int], tau: int, limit: int, from_top: bool) -> tuple[int, int]:
    """The largest k <= limit whose k lowest (highest) coefficients sum to <= tau, by a linear scan."""
    cs = coeffs[::-1] if from_top else coeffs
    s = k = 0
    while k < limit and s + cs[k] <= tau:
        s, k = s + cs[k], k + 1
    return k, s


def test_end_cut_finds_the_scan_s_cut():
    """The truncation's cut (exponential search, then interpolation on the logs of the end sums with bisection as a
    safeguard) equals a linear scan's on 3,000 random polynomials: small integers with zeros, geometric tails (the
    shape the interpolation is for), sparse big coefficients; tau 0, 1, random, the total and the total - 1."""
    rnd = random.Random(1)
    for _ in range(3000):
        n, kind = rnd.randint(1, 400), rnd.random()
        if kind < 0.3:
            coeffs = [rnd.randint(0, 5) for _ in range(n)]
        elif kind < 0.6:
            c = n // 2
            coeffs = [int(2 ** (60 - abs(i - c) * rnd.uniform(0.1, 1))) for i in range(n)]
        else:
            coeffs = [rnd.choice([0, 0, 1, rnd.getrandbits(rnd.randint(1, 80))]) for _ in range(n)]
        p = fmpz_poly(coeffs)
        coeffs = [int(x) for x in p.coeffs()]
        if not coeffs:
            continue
        tau = rnd.choice([0, 1, rnd.getrandbits(rnd.randint(1, 70)), sum(coeffs), sum(coeffs) - 1])
        limit = rnd.randint(0, len(coeffs) - 1)
        for top in (False, True):
            assert compose._end_cut(p, tau, limit, top) == _brute_cut(coeffs, tau, limit, top)


def test_end_cut_with_sums_beyond_a_float_s_resolution():
    """End sums of 10^400 that differ by a few units round to one float logarithm: the cut still equals the scan's."""
    big = 10**400
    coeffs = [1, 1, 1] + [0] * 100 + [big] + [1] * 200
    p = fmpz_poly(coeffs)
    for tau in (2, 3, big + 1, big + 3, big + 50, big + 10**6):
        for top in (False, True):
            assert compose._end_cut(p, tau, len(coeffs) - 1, top) == _brute_cut(coeffs, tau, len(coeffs) - 1, top)
