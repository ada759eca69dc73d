"""The graded one-step layout (certify.pld.discretise.grades / Layout.bands): the stride doubles every
GRADE_STEP standard deviations of the loss beyond z(delta)/sqrt(T) + GRADE_START, inside the dense core.

Any set of grid points is admissible for soundness (the checks run at every used point), so what is
tested here is (1) the layout itself (indices, recorded form, the checker's parsing and refusals),
(2) soundness against the independent mpmath references at T = 1, 2, 3 (tests/reference_pld*.py) with the
graded layouts in force, (3) tightness close to the dense layout's, (4) a graded certificate verifies and
a tampered one does not. ``plan`` passes steps and delta to ``discretise.layout`` through the fixture
``graded`` (the production wiring is one argument in accountant.plan).
"""

from __future__ import annotations

import json
import random

import pytest
import reference_pld as R
import test_pld_reference as TR

import certify.pld as P
from certify.balls import InputError, exact
from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.pld import accountant, compose, discretise
from certify.pld.accountant import Plan
from certify.pld.discretise import Layout
from certify.pld.pairs import profiles
from certify.verify import verify_text


class Graded:
    """The layouts made by plan while the fixture is active; ``on`` switches the grading."""

    def __init__(self):
        self.on, self.used = True, []


@pytest.fixture
def graded(monkeypatch):
    plan0, layout0 = accountant.plan, discretise.layout
    state = Graded()

    def plan(contract, q, sigma, steps, delta, h, K=None, **kw):
        def lay(prof, q_, d_, h_, eta, **_wired):  # whether or not plan already passes steps / target
            out = layout0(prof, q_, d_, h_, eta, steps=steps, target=float(delta)) if state.on else layout0(prof, q_, d_, h_, eta)
            state.used.append(out)
            return out

        with pytest.MonkeyPatch.context() as m:
            m.setattr(discretise, "layout", lay)
            return plan0(contract, q, sigma, steps, delta, h, K, **kw)

    monkeypatch.setattr(accountant, "plan", plan)
    monkeypatch.setattr(P, "plan", plan)
    compose.clear_cache()
    yield state
    compose.clear_cache()


def test_indices_of_random_graded_layouts():
    rng = random.Random(3)
    for _ in range(2000):
        lo, hi = rng.randint(-300, 0), rng.randint(0, 300)
        xs = sorted(rng.randint(lo, hi) for _ in range(2 * rng.randint(1, 4)))
        m = len(xs) // 2
        left, right = xs[:m][::-1], xs[m:]
        bands = tuple((left[i], right[i], 2**i * rng.randint(1, 3)) for i in range(1, m))
        lay = Layout(lo, hi, left[0], right[0], rng.randint(1, 9), bands)
        ix = lay.indices()
        assert ix == sorted(set(ix)) and ix[0] == lo and ix[-1] == hi
        assert set(range(left[0], right[0] + 1)) <= set(ix)
        assert 0 <= lay.points() - len(ix) <= 2
        accountant._check_layout(lay)


def test_grades_vanish_at_small_T_and_pay_at_large_T():
    prof = profiles(POISSON_ADD_REMOVE)[0]
    # T = 1, delta = 1e-10: the read-off is in the one-step tail, the whole core matters: no bands
    lay = discretise.layout(prof, exact("0.01"), exact("1/2"), exact("1e-3"), 1e-10 * 2**-20, steps=1, target=1e-10)
    assert lay.bands == ()
    lay = discretise.layout(prof, exact("0.01"), exact("1/2"), exact("1e-4"), 1e-6 * 2**-20 / 10**4, steps=10**4, target=1e-6)
    dense = Layout(lay.lo, lay.hi, lay.bands[-1][0], lay.bands[-1][1], lay.stride)
    assert dense == discretise.layout(prof, exact("0.01"), exact("1/2"), exact("1e-4"), 1e-6 * 2**-20 / 10**4)
    assert len(lay.bands) == discretise.GRADE_LEVELS and 3 * lay.points() < dense.points()


def test_plan_json_roundtrip_and_refusals():
    lay = Layout(-100, 100, -5, 5, 8, ((-20, 30, 2), (-60, 60, 4)))
    pl = Plan(exact("1e-3"), 70, 5, {"remove": lay, "add": Layout(-9, 9, -3, 3, 8)})
    w = json.loads(json.dumps(pl.to_json()))
    assert "bands" not in w["layouts"]["add"]  # old layouts keep their old form
    back = Plan.from_json(pl.h, w)
    assert back.layouts == pl.layouts
    bads = ([[-20, 30]], [[-20, 30, 0]], [[-4, 30, 2]], [[-20, 30, 2], [-10, 60, 4]], "x", [[-20, 30, 2]] * 17, [[-20, 30, True]], [[-20, 30, 1.5]])
    for bad in bads:
        w2 = json.loads(json.dumps(w))
        w2["layouts"]["remove"]["bands"] = bad
        with pytest.raises(InputError):
            Plan.from_json(pl.h, w2)
    for field, bad in (("lo", float("inf")), ("lo", float("nan")), ("stride", "x")):  # JSON admits Infinity / NaN
        w2 = json.loads(json.dumps(w))
        w2["layouts"]["add"][field] = bad
        with pytest.raises(InputError):
            Plan.from_json(pl.h, w2)


@pytest.mark.slow  # the layout is graded by default now: tests/test_pld_reference.py covers the fast cases
def test_soundness_against_references_t1_t2(graded):
    for q, sigma in TR.FAST:
        for eps in TR.EPS:
            TR._check(POISSON_ADD_REMOVE, R.poisson_delta, q, sigma, 1, eps)
            TR._check(FIXED_SIZE_REPLACE_ONE, R.fixed_size_delta, q, sigma, 1, eps)
    TR.test_two_steps_fast()


@pytest.mark.slow  # as above
@pytest.mark.parametrize("entry", TR.T3_FAST, ids=lambda e: f"{e['contract']}-q{e['q']}-s{e['sigma']}-e{e['eps']}")
def test_soundness_against_references_t3(graded, entry):
    TR.test_three_steps(entry)
    assert any(lay.bands for lay in graded.used)  # the graded bands were in force


@pytest.mark.slow
@pytest.mark.parametrize("entry", TR.T3, ids=lambda e: f"{e['contract']}-q{e['q']}-s{e['sigma']}-e{e['eps']}")
def test_soundness_against_references_t3_all(graded, entry):
    TR.test_three_steps(entry)


def _bracket(contract, q, sigma, T, grid):
    cert = P.certify_pld(contract, q, sigma, T, "1e-6", grid)
    up, lo = cert.quantities["epsilon_upper"].value, cert.quantities["epsilon_lower"].value
    return cert, up.upper().fmpq() / lo.lower().fmpq() - 1


@pytest.mark.parametrize(
    "contract,q,sigma,T",
    [
        (POISSON_ADD_REMOVE, "0.01", "2", 1000),
        pytest.param(POISSON_ADD_REMOVE, "0.2", "0.8", 300, marks=pytest.mark.slow),
        pytest.param(FIXED_SIZE_REPLACE_ONE, "0.05", "1", 100, marks=pytest.mark.slow),
    ],
)
def test_tightness_close_to_dense_and_certificate_verifies(graded, contract, q, sigma, T):
    graded.on = False
    _, dense = _bracket(contract, q, sigma, T, "1e-3")
    assert not any(lay.bands for lay in graded.used)
    graded.on, graded.used = True, []
    cert, rel = _bracket(contract, q, sigma, T, "1e-3")
    lays = graded.used
    assert all(lay.bands for lay in lays)
    # tightness: eps_up / eps_low - 1 within 10% of the dense layout's (measured: within 0.1%)
    assert rel <= dense * exact("1.1"), (float(rel), float(dense))
    # cost: far fewer one-step points
    dense_points = sum(Layout(lay.lo, lay.hi, lay.bands[-1][0], lay.bands[-1][1], lay.stride).points() for lay in lays)
    assert sum(lay.points() for lay in lays) < 0.6 * dense_points  # measured 0.25-0.52
    # the checker re-runs the recorded graded layout; a tampered band is caught
    text = cert.dumps()
    assert verify_text(text).ok
    doc = json.loads(text)
    name = next(iter(doc["witnesses"]["layouts"]))
    doc["witnesses"]["layouts"][name]["bands"][0][2] += 1
    assert not verify_text(json.dumps(doc, indent=2) + "\n").ok
