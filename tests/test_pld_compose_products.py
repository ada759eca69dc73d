"""The +inf mass of a pessimistic product (certify.pld.compose.multiply) in every case of the operands' +inf
masses, and squares (the same object twice) equal to the product of two equal copies.

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
