"""Soundness of the certified PLD accountant against independent mpmath ground truth (tests/reference_pld.py).

For T = 1 (closed form), T = 2 (quadrature of the composed loss distribution) and T = 3 (stored values of
the fast loss-density reference, >= 10 parameter sets per contract, recomputed by slow tests), the exact composed
delta(eps) of the dominating pair must lie in [delta_low, delta_up]; the interval must also be narrow
(its width is the discretisation cost: below 5 h relative here, larger relative widths occur only far in
the tails where delta changes by a large factor per unit of loss).
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath as mp
import pytest
import reference_pld as R
from fast_subset import fast_subset

from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.pld import delta_interval

#: (q, sigma) parameter sets: 12 per contract
SETS = [
    ("0.001", "1"),
    ("0.01", "0.8"),
    ("0.01", "2"),
    ("0.02", "1.5"),
    ("0.05", "1"),
    ("0.05", "3"),
    ("0.1", "1"),
    ("0.1", "2"),
    ("0.2", "1.2"),
    ("0.3", "2"),
    ("0.5", "4"),
    ("1/7", "5/3"),
]
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


# ------------------------------------------------------------------------------------------------
# T = 3: stored values of the fast loss-density reference (reference_pld.fast_curve), recomputed by the
# slow tests below. Each value v satisfies v <= delta_3 <= v + tail_bound (proven truncation) up to the
# quadrature / interpolation error, measured below 1e-13 relative (Gaussian closed form 4.5e-20; the two T = 2
# paths agree to 2.6e-20 / 1.7e-14); T3_REL_ERR = 1e-12 covers it, far below the certified width (< 5e-3).
# ------------------------------------------------------------------------------------------------
T3 = json.loads((Path(__file__).with_name("reference_pld_t3.json")).read_text())["values"]
T3_REL_ERR = mp.mpf("1e-12")
CONTRACTS = {"poisson": POISSON_ADD_REMOVE, "fixed": FIXED_SIZE_REPLACE_ONE}


def test_three_step_table_covers_ten_sets_per_contract():
    for c in CONTRACTS:
        assert len({(e["q"], e["sigma"]) for e in T3 if e["contract"] == c}) >= 10, c


# fast suite: per contract the far tail (q = 0.001, sigma = 1), a mid case and a large q; CI runs all 40
T3_FAST = [
    e
    for e in T3
    if (e["q"], e["sigma"], e["eps"]) in {("0.001", "1", "0.3"), ("0.05", "1", "0.3"), ("0.5", "4", "0.8")}
    and not (e["contract"] != "poisson" and e["q"] == "0.05")  # fixed-size q = 0.05: about 2 s, in the full suite
]


@pytest.mark.parametrize("entry", fast_subset(T3, keep=T3_FAST), ids=lambda e: f"{e['contract']}-q{e['q']}-s{e['sigma']}-e{e['eps']}")
def test_three_steps(entry):
    """T = 3 (both contracts; Poisson: worst direction): the reference lies in [delta_low, delta_up]."""
    with mp.workdps(R.DPS):
        v, tail = mp.mpf(entry["delta"]), mp.mpf(entry["tail_bound"])
        slack = T3_REL_ERR * v
        lo, up = delta_interval(CONTRACTS[entry["contract"]], entry["q"], entry["sigma"], 3, entry["eps"], "1e-3")
        lo, up = _mp(lo), _mp(up)
        assert lo <= v + tail + slack and v - slack <= up, (entry, lo, up)
        # tightness: the width comes from losses moved by up to a grid step h, so relative to delta it is
        # about h * k with k = -d log(delta) / d eps (large far in the tail): allow max(5 h, h k), k estimated
        # from the table's two eps values of the same set (a chord of log delta)
        others = [e for e in T3 if (e["contract"], e["q"], e["sigma"]) == (entry["contract"], entry["q"], entry["sigma"])]
        k = (
            max(
                abs(mp.log(mp.mpf(a["delta"]) / mp.mpf(b["delta"])) / (mp.mpf(a["eps"]) - mp.mpf(b["eps"])))
                for a in others
                for b in others
                if a["eps"] != b["eps"]
            )
            if len(others) > 1
            else mp.mpf(1)
        )
        if v > mp.mpf(10) ** -12:
            assert (up - lo) / v < max(5, k) * mp.mpf("1e-3"), (entry, lo, up, k)


def _fraction(s):
    return mp.mpf(int(s.split("/")[0])) / int(s.split("/")[1]) if "/" in s else mp.mpf(s)


@pytest.mark.slow
@pytest.mark.parametrize("index", [0, 1])
def test_three_step_table_reproduces(index):
    """The stored T = 3 values are what the reference computes (one set per contract; ~1-4 min each)."""
    want = [e for e in T3 if e["contract"] == ("poisson", "fixed")[index]][0]
    with mp.workdps(R.DPS):
        q, sigma = _fraction(want["q"]), _fraction(want["sigma"])
        f = R.fast_poisson_delta if want["contract"] == "poisson" else R.fast_fixed_size_delta
        v, _ = f(q, sigma, 3, want["eps"])
        assert abs(v - mp.mpf(want["delta"])) <= T3_REL_ERR * v


def test_fast_reference_t2_matches_nested_reference():
    """The fast path's T = 2 (u-coordinates, proven truncation) equals the nested reference to 30 digits."""
    with mp.workdps(R.DPS):
        v, tail = R.fast_curve("remove", "0.05", "1", 2, "0.3")
        old = R.composed_direction("remove", "0.05", "1", 2, "0.3")
        assert abs(v - old) <= mp.mpf(10) ** -30 * old + tail


@pytest.mark.slow
def test_fast_reference_gaussian_closed_form():
    """q = 1: the T-fold pair is the Gaussian mechanism with mu = D sqrt(T) (closed form); T = 3 via rho2."""
    with mp.workdps(R.DPS):
        v, tail = R.fast_curve("remove", "1", "1", 3, "0.5")
        exact = R.gaussian_delta(mp.sqrt(3), mp.mpf("0.5"))
        assert abs(v - exact) <= mp.mpf(10) ** -18 * exact


@pytest.mark.slow
def test_fast_reference_rho2_path_t2():
    """T = 2 from densities only (rho2 and the hinge) equals T = 2 from the closed-form one-step curve."""
    with mp.workdps(R.DPS):
        for prof, q, D in (("remove", "0.05", "1"), ("max", "0.05", "2")):
            a, _ = R.fast_curve(prof, q, D, 2, "0.3")
            b, _ = R.fast_curve(prof, q, D, 2, "0.3", via_rho2=True)
            assert abs(a - b) <= T3_REL_ERR * a, (prof, a, b)


def test_product_rescaling_rounds_small_masses_the_right_way():
    """Regression: FLINT's ``c // s`` leaves 0 where |c_i| < s, so the old -((-c) // s) rounded pessimistic masses
    in (0, 2^-K) DOWN to 0. Pessimistic rescaling must be >= the exact quotient, optimistic <= it, coefficientwise,
    checked against Python integers (independent of FLINT's division)."""
    import random

    from flint import fmpz, fmpz_poly

    from certify.pld import compose

    rnd = random.Random(7)
    for _ in range(300):
        K = rnd.randrange(1, 90)
        s = 1 << K
        cs = [rnd.choice([0, 1, s - 1, s, s + 1, 2 * s, rnd.getrandbits(K), rnd.getrandbits(2 * K + 5)]) for _ in range(rnd.randrange(1, 40))]
        cs[-1] = cs[-1] or 1
        up = [int(x) for x in compose.round_up(fmpz_poly(cs), fmpz(s)).coeffs()]
        down = [int(x) for x in compose.floor_div(fmpz_poly(cs), fmpz(s)).coeffs()]
        up += [0] * (len(cs) - len(up))
        down += [0] * (len(cs) - len(down))
        for c, u, d in zip(cs, up, down):
            assert u * s >= c and (u - 1) * s < max(c, 1), (K, c, u)  # a ceiling (1 allowed for c = 0)
            assert d * s <= c < (d + 1) * s, (K, c, d)  # the floor
