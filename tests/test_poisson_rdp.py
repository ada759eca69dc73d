"""Soundness and tightness of the Poisson-subsampled Gaussian RDP in balls against mpmath (50+ digits)."""

from __future__ import annotations

import random

import mpmath as mp
import pytest

from certify.balls import ball_endpoints, ctx, fmpq
from certify.poisson.choice import log_A_floats
from certify.poisson.rdp import K_ball, log_A_int, ORDERS

from reference_poisson import DPS, log_A_quad, log_A_sum


def _cases():
    rng = random.Random(12)
    cases = [
        (256, fmpq(1, 100), fmpq(3, 10)),
        (256, fmpq(999, 1000), fmpq(3, 10)),
        (2, fmpq(1), fmpq(3, 10)),
        (37, fmpq(999999, 1000000), fmpq(2)),
        (256, fmpq(1, 2), fmpq(1, 100)),
        (3, fmpq(1, 10**9), fmpq(5)),
    ]
    while len(cases) < 50:
        alpha = rng.choice([2, 3, 5, 8, 17, 64, 100, 255, 256])
        near_one = rng.random() >= 0.7
        q = fmpq(10**6 - rng.randint(0, 10), 10**6) if near_one else fmpq(rng.randint(1, 10**6), 10**6)
        sigma = rng.choice([fmpq(3, 10), fmpq(rng.randint(30, 1000), 100), fmpq(1, 2), fmpq(7, 5)])
        cases.append((alpha, q, sigma))
    return cases


def _mp(q: fmpq):
    return mp.mpf(int(q.p)) / int(q.q)


@pytest.mark.parametrize("alpha,q,sigma", _cases())
def test_log_A_contains_reference_and_is_tight(alpha, q, sigma):
    with ctx.workprec(128):
        b = log_A_int(alpha, q, sigma)
    lo, hi = ball_endpoints(b)
    with mp.workdps(DPS):
        ref = log_A_sum(alpha, f"{q.p}/{q.q}", f"{sigma.p}/{sigma.q}")
        assert _mp(lo) <= ref <= _mp(hi), (alpha, q, sigma)
        width = _mp(hi - lo)
        assert width <= mp.mpf("1e-25") * abs(ref), f"relative radius {width / abs(ref)}"


def test_q_one_is_the_plain_gaussian():
    # q = 1: log A_alpha = alpha (alpha-1) / (2 sigma^2) exactly
    b = log_A_int(10, fmpq(1), fmpq(1, 2))
    assert ball_endpoints(b) == (fmpq(180), fmpq(180))


def test_extreme_small_sigma_stays_finite():
    # sigma = 0.01, alpha = 256: exp(k(k-1)/(2 sigma^2)) ~ exp(3.3e8); Arb has no overflow
    b = log_A_int(256, fmpq(1, 100), fmpq(1, 100))
    assert b.is_finite()
    lo, hi = ball_endpoints(b)
    ref = fmpq(256 * 255, 2) * 10000  # the k = alpha term dominates: log A ~ alpha(alpha-1)/(2 sigma^2) + alpha log q
    assert lo < ref and hi - lo < fmpq(1, 10**20) * ref


@pytest.mark.parametrize(
    "alpha,q,sigma", [(fmpq(5, 2), "0.01", "1.1"), (fmpq(37, 4), "0.05", "2"), (fmpq(17, 16), "0.3", "0.8"), (fmpq(31, 8), "0.9", "1.5")]
)
def test_chord_dominates_the_fractional_integral(alpha, q, sigma):
    """K(alpha) at fractional alpha (the integral) lies below the certified chord (convexity of K)."""
    b = K_ball(alpha, fmpq(*map(int, _frac(q))), fmpq(*map(int, _frac(sigma))))
    ref = log_A_quad(f"{alpha.p}/{alpha.q}", q, sigma)
    with mp.workdps(DPS):
        assert ref <= _mp(ball_endpoints(b)[1])
        # and below the larger endpoint value K(ceil(alpha)) (K is increasing, the chord lies between)
        a1 = int(alpha.floor()) + 1
        assert ref <= log_A_sum(a1, q, sigma)


def _frac(text):
    from fractions import Fraction

    f = Fraction(text)
    return f.numerator, f.denominator


def test_quadrature_reference_agrees_with_the_sum_at_integers():
    # the two references are independent routes to the same value
    with mp.workdps(DPS):
        assert abs(log_A_quad(4, "0.1", "1.3") - log_A_sum(4, "0.1", "1.3")) < mp.mpf("1e-40")


def test_float_choice_values_track_the_balls():
    fl = log_A_floats(0.01, 1.1)
    for idx in (1, 9, 100, 255, len(ORDERS) - 1):
        a = int(ORDERS[idx])
        b = log_A_int(a, fmpq(1, 100), fmpq(11, 10))
        mid = float(b.mid())
        # the floats are the exact binary 0.01 and 1.1, not 1/100 and 11/10: agreement to float accuracy only
        assert abs(fl[idx] - mid) <= 1e-9 * max(1.0, abs(mid))


FRACTIONAL_CASES = [
    ("48/5", "1/100", "11/10"),
    ("3/2", "1/100", "1/50"),
    ("17/16", "1/100", "1/10"),
    ("33/16", "1/50", "7/10"),
    ("5/4", "1/2", "3/10"),
    ("5/4", "999/1000", "3/10"),
    ("201/2", "1/1000", "8"),
    ("21/8", "1/3", "1"),
]


@pytest.mark.parametrize("alpha,q,sigma", FRACTIONAL_CASES)
def test_fractional_integral_contains_the_quadrature_reference(alpha, q, sigma):
    from certify.balls import exact
    from certify.poisson.rdp import log_A_frac

    b = log_A_frac(exact(alpha), exact(q), exact(sigma))
    lo, hi = ball_endpoints(b)
    ref = log_A_quad(alpha, q, sigma)
    with mp.workdps(DPS):
        assert _mp(lo) <= ref <= _mp(hi)
        assert _mp(hi - lo) <= mp.mpf("1e-25") * abs(ref)
    # and it is never above the chord (both enclose K; the chord is the looser upper bound)
    assert ball_endpoints(K_ball(exact(alpha), exact(q), exact(sigma)))[1] >= lo


def test_fractional_integral_matches_the_sum_at_an_integer():
    from certify.poisson.rdp import _log_A_frac_cached

    b = _log_A_frac_cached(fmpq(9), fmpq(1, 100), fmpq(11, 10), 128)
    s = log_A_int(9, fmpq(1, 100), fmpq(11, 10))
    lo, hi = ball_endpoints(b)
    slo, shi = ball_endpoints(s)
    assert lo <= slo and shi <= hi
