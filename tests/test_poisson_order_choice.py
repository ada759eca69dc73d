"""The plain-Python choice of the Rényi order (certify.poisson.order_choice) against the numpy scan of every order.

References: :func:`certify.poisson.choice.choose` (numpy: eps at every order of the grid, then every a +- j/16,
written apart from the binary search under test), and the estimates it searches against mpmath at 50 digits
(the binomial sum of MTZ19 and the defining integral of a fractional order, evaluated independently here).
"""

from __future__ import annotations

import itertools
import math
import random

import mpmath
import pytest

from certify.poisson import choice, order_choice
from fast_subset import fast_subset

GRID = list(itertools.product([1e-4, 1e-3, 0.01, 0.1, 0.5, 1.0], [0.3, 0.6, 1.0, 2.0, 5.0, 20.0], [1, 100, 10**4, 10**6], [1e-5, 1e-10]))
FAST = [(0.01, 1.1, 1000, 1e-5), (1e-4, 0.6, 10**6, 1e-10), (0.5, 20.0, 1, 1e-5), (1.0, 0.3, 100, 1e-10), (0.003, 0.7, 30000, 1e-8)]


def _check_same(phases, delta, fractional):
    ours = order_choice.choose(phases, math.log(delta), fractional)
    assert ours == choice.choose(phases, math.log(delta), fractional), (phases, delta, fractional)


@pytest.mark.parametrize("fractional", ["chord", "integral"])
@pytest.mark.parametrize("q,sigma,T,delta", FAST)
def test_same_order_as_the_numpy_scan(q, sigma, T, delta, fractional):
    _check_same(((q, sigma, T),), delta, fractional)


@pytest.mark.slow
def test_same_order_as_the_numpy_scan_on_the_grid():
    for (q, sigma, T, delta), fractional in itertools.product(GRID, ["chord", "integral"]):
        _check_same(((q, sigma, T),), delta, fractional)


@pytest.mark.slow
def test_same_order_as_the_numpy_scan_for_schedules():
    rng = random.Random(7)
    for _ in range(150):
        phases = tuple((10 ** rng.uniform(-4, 0), 10 ** rng.uniform(-0.5, 1.3), rng.randint(1, 10**5)) for _ in range(rng.randint(2, 4)))
        _check_same(phases, 10 ** rng.uniform(-12, -3), rng.choice(["chord", "integral"]))


def _log_A_int_mp(alpha: int, q: float, sigma: float) -> mpmath.mpf:
    q, sigma = mpmath.mpf(q), mpmath.mpf(sigma)
    terms = (mpmath.binomial(alpha, k) * (1 - q) ** (alpha - k) * q**k * mpmath.exp(k * (k - 1) / (2 * sigma**2)) for k in range(alpha + 1))
    return mpmath.log(sum(terms))


def _log_A_frac_mp(alpha: float, q: float, sigma: float) -> mpmath.mpf:
    """log E_{x ~ N(0,1)} (1 - q + q exp((x - c)/sigma))^alpha, c = 1/(2 sigma): the defining integral by mpmath.quad."""
    a, q, sigma = mpmath.mpf(alpha), mpmath.mpf(q), mpmath.mpf(sigma)
    c = 1 / (2 * sigma)
    mu = a / sigma

    def f(x):
        return mpmath.npdf(x) * (1 - q + q * mpmath.exp((x - c) / sigma)) ** a

    return mpmath.log(mpmath.quad(f, [-mpmath.inf, -10, 0, mu / 2, mu, mu + 10, mpmath.inf]))


INT_CASES = [(2, 0.01, 1.1), (10, 0.01, 1.1), (37, 0.3, 3.0), (256, 1e-3, 0.8), (4096, 1e-4, 20.0), (5, 1.0, 0.7)]
FRAC_CASES = [(9.5625, 0.01, 1.1), (1.0625, 0.5, 0.3), (17.25, 0.02, 2.0), (100.5, 1e-3, 0.9), (3.5, 0.01, 0.05)]


@pytest.mark.parametrize("alpha,q,sigma", fast_subset(INT_CASES, keep=INT_CASES[:4] + INT_CASES[5:]))
def test_log_A_int_matches_mpmath(alpha, q, sigma):
    with mpmath.workdps(50):
        ref = _log_A_int_mp(alpha, q, sigma)
    got = order_choice.log_A_int.__wrapped__(alpha, q, sigma)
    assert abs(got - float(ref)) <= 1e-12 * max(1.0, abs(float(ref)))


@pytest.mark.parametrize("alpha,q,sigma", fast_subset(FRAC_CASES, keep=FRAC_CASES[:3]))
def test_log_A_frac_matches_mpmath(alpha, q, sigma):
    with mpmath.workdps(50):
        ref = _log_A_frac_mp(alpha, q, sigma)
    got = order_choice.log_A_frac.__wrapped__(alpha, q, sigma)
    assert abs(got - float(ref)) <= 1e-11 * max(1.0, abs(float(ref)))


def test_fractional_estimate_gives_up_beyond_its_grid():
    assert math.isnan(order_choice.log_A_frac.__wrapped__(200.5, 0.01, 1e-4))  # 2e6 points: the chord decides


def test_choice_is_fast_for_tiny_noise():
    order_choice.clear_memo()
    assert order_choice.choose(((0.01, 1e-4, 1000),), math.log(1e-5), "integral") == (2, 1)  # bounded work, a valid order
