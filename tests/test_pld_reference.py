"""Soundness of the certified PLD accountant against independent mpmath ground truth (tests/reference_pld.py).

For T = 1 (closed form) and T = 2, 3 (quadrature of the composed loss distribution), the exact composed
delta(eps) of the dominating pair must lie in [delta_low, delta_up]; the interval must also be narrow
(its width is the discretisation cost: below 5 h relative here, larger relative widths occur only far in
the tails where delta changes by a large factor per unit of loss).
"""
from __future__ import annotations

import mpmath as mp
import pytest
import reference_pld as R

from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.pld import delta_interval

#: (q, sigma) parameter sets: 12 per contract
SETS = [("0.001", "1"), ("0.01", "0.8"), ("0.01", "2"), ("0.02", "1.5"), ("0.05", "1"), ("0.05", "3"),
        ("0.1", "1"), ("0.1", "2"), ("0.2", "1.2"), ("0.3", "2"), ("0.5", "4"), ("1/7", "5/3")]
EPS = ("0.1", "0.6")


def _mp(x):
    return mp.mpf(int(x.p)) / int(x.q)


def _check(contract, ref, q, sigma, T, eps, grid="1e-3", rel_width=5e-3):
    with mp.workdps(R.DPS):
        truth = ref(q, sigma, T, eps)
        lo, up = delta_interval(contract, q, sigma, T, eps, grid)
        lo, up = _mp(lo), _mp(up)
        assert lo <= truth <= up, (contract, q, sigma, T, eps, lo, truth, up)
        if truth > mp.mpf(10) ** -12:
            assert (up - lo) / truth < rel_width, (q, sigma, T, eps, lo, truth, up)


FAST = [SETS[2], SETS[5], SETS[9]]


def _slow_unless_fast(sets):
    return [s if s in FAST else pytest.param(*s, marks=pytest.mark.slow) for s in sets]


@pytest.mark.parametrize("q,sigma", _slow_unless_fast(SETS))
def test_one_step_poisson(q, sigma):
    for eps in EPS:
        _check(POISSON_ADD_REMOVE, R.poisson_delta, q, sigma, 1, eps)


@pytest.mark.parametrize("q,sigma", _slow_unless_fast(SETS))
def test_one_step_fixed_size(q, sigma):
    D = 2 / mp.mpf(sigma)
    assert R.max_structure_ok(q, D)
    for eps in EPS:
        _check(FIXED_SIZE_REPLACE_ONE, R.fixed_size_delta, q, sigma, 1, eps)


def test_two_steps_fast():
    _check(POISSON_ADD_REMOVE, R.poisson_delta, "0.01", "2", 2, "0.2")
    _check(FIXED_SIZE_REPLACE_ONE, R.fixed_size_delta, "0.05", "3", 2, "0.2")


def test_finer_grid_is_tighter_and_still_sound():
    """The interval shrinks with the grid (about linearly in h at T = 2) and keeps containing the truth."""
    q, sigma, eps = "0.05", "1", "0.3"
    with mp.workdps(R.DPS):
        truth = R.poisson_delta(q, sigma, 2, eps)
        widths = []
        for grid in ("1e-2", "1e-3"):
            lo, up = delta_interval(POISSON_ADD_REMOVE, q, sigma, 2, eps, grid)
            lo, up = _mp(lo), _mp(up)
            assert lo <= truth <= up
            widths.append(up - lo)
        assert widths[1] < widths[0] / 4


@pytest.mark.slow
@pytest.mark.parametrize("q,sigma", SETS)
def test_two_steps_all_sets(q, sigma):
    _check(POISSON_ADD_REMOVE, R.poisson_delta, q, sigma, 2, "0.2")
    _check(FIXED_SIZE_REPLACE_ONE, R.fixed_size_delta, q, sigma, 2, "0.2")


@pytest.mark.slow
@pytest.mark.parametrize("q,sigma", [("0.05", "1"), ("0.1", "2")])
def test_three_steps(q, sigma):
    """T = 3 by nested quadrature (minutes per value at 34 digits)."""
    _check(POISSON_ADD_REMOVE, R.poisson_delta, q, sigma, 3, "0.3")
    _check(FIXED_SIZE_REPLACE_ONE, R.fixed_size_delta, q, sigma, 3, "0.3")
