"""A branch-and-bound stopped by its time limit (``budget.stopped_by = "seconds"``), and what the checker checks of it.

A time limit cannot be re-run, but the search is otherwise deterministic: it stops by time at the top of a loop
iteration where the evaluation budget is not reached, so its state is the state at which the same search, given
exactly the recorded number e of evaluations (``budget.evaluations``), stops by evaluations. The checker re-runs that
search (:func:`certify.dpsgd.certificates.check_seconds_state`) and demands the recorded partition, rules and u*.

Genuine time stops are made here with a fake clock in the search module (each reading of the clock advances it by
one second), so a producer run stops by time after a known number of loop iterations.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from types import SimpleNamespace

import pytest

from certify.balls import InputError, ctx, exact, fmpq
from certify.certificate import Evaluation
from certify.dpsgd import search
from certify.dpsgd.accountant import certify_rho, clear_memo
from certify.dpsgd.certificates import evaluate_rho_bok, fill_rho, witness_json
from certify.dpsgd.curvature import choose_levels, theta_choice
from certify.dpsgd.mixture import choose_rule, point_bounds
from certify.dpsgd.problem import Problem
from certify.dpsgd.search import HALF, SearchLimits, SearchResult, rel_bits_for
from certify.limits import check_work
from certify.verify import verify_text

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_forger import reseal  # noqa: E402

PROB = Problem(8, fmpq(1, 100), fmpq(2))  # a branch-and-bound of 5 point evaluations when it runs to its tolerance


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        self.now += 1.0
        return self.now


def time_stopped(seconds: int) -> dict:
    """A genuine rho-bok certificate whose search stopped by time: the budget block and the search read the fake clock."""
    clear_memo()
    real = search.time
    search.time = SimpleNamespace(monotonic=FakeClock().monotonic)
    try:
        with search.budget(SearchLimits(2000, fmpq(seconds))):
            cert = certify_rho(PROB).certificate
    finally:
        search.time = real
        clear_memo()
    return json.loads(cert.dumps())


@pytest.fixture(scope="module")
def stopped():
    """{e: document} for the time stops after e = 2, 3, 4 point evaluations."""
    out = {}
    for seconds in range(1, 8):
        doc = time_stopped(seconds)
        b = doc["witnesses"]["budget"]
        if b["stopped_by"] == "seconds":
            out.setdefault(int(b["evaluations"]), doc)
    assert {2, 3, 4} <= set(out), sorted(out)
    return out


def _text(doc: dict) -> str:
    from test_forger21 import canonical_text

    return canonical_text(reseal(copy.deepcopy(doc)))


def test_a_time_stop_records_its_evaluation_count_and_verifies(stopped):
    for e, doc in stopped.items():
        w = doc["witnesses"]
        budget = {"evaluations": str(e), "max_evaluations": "2000", "max_seconds": w["budget"]["max_seconds"], "stopped_by": "seconds"}
        assert w["stopped_early"] is True and w["budget"] == budget
        text = _text(doc)
        for p in (1, 2, 4):
            assert verify_text(text, precision=p * doc["precision"]).exit_code == 6, (e, p)  # a search stopped early: exit 6


def test_a_complete_search_records_no_evaluation_count():
    clear_memo()
    w = json.loads(certify_rho(PROB).certificate.dumps())["witnesses"]
    assert w["budget"]["stopped_by"] == "" and "evaluations" not in w["budget"]


def _refused(doc: dict, edit, parameter: str):
    d = copy.deepcopy(doc)
    edit(d["witnesses"])
    with ctx.workprec(d["precision"]), pytest.raises(InputError) as err:
        evaluate_rho_bok(d["inputs"], d["witnesses"])
    assert err.value.parameter == parameter, err.value
    assert verify_text(_text(d)).exit_code not in (0, 6)
    return err.value


@pytest.mark.parametrize("e, other", [(3, "2"), (3, "4"), (4, "3"), (2, "3")])
def test_the_evaluation_count_is_the_one_the_partition_was_cut_at(stopped, e, other):
    def edit(w):
        w["budget"]["evaluations"] = other

    leaves = len(stopped[e]["witnesses"]["leaves"])
    if int(other) < leaves + 1:  # fewer evaluations than leaf endpoints: refused by the reader
        _refused(stopped[e], edit, "witnesses.budget.evaluations")
    else:
        assert "never passes through" in _refused(stopped[e], edit, "witnesses.budget.stopped_by").message


@pytest.mark.parametrize("value", ["2000", "2001", "1", "0"])
def test_a_time_stop_happens_below_the_evaluation_budget(stopped, value):
    _refused(stopped[2], lambda w: w["budget"].update(evaluations=value), "witnesses.budget.evaluations")


def test_the_evaluation_count_is_written_exactly_after_a_time_stop(stopped):
    _refused(stopped[2], lambda w: w["budget"].pop("evaluations"), "witnesses.budget")
    clear_memo()
    doc = json.loads(certify_rho(PROB).certificate.dumps())
    _refused(doc, lambda w: w["budget"].update(evaluations="3"), "witnesses.budget")


def forged_partition(doc: dict, split: fmpq) -> dict:
    """A self-consistent witness (rules chosen as the search chooses them, the leaf keys and curvature of the checker's own
    evaluation, gap > gamma) for the partition [0, split], [split, 1/2] "stopped by time after 3 evaluations": the search
    splits [0, 1/2] at 1/4 first, so for split != 1/4 no run of it passes through this state."""
    w = doc["witnesses"]
    gamma = exact(w["gamma"])
    with ctx.workprec(doc["precision"]):
        bits = rel_bits_for(PROB, gamma)
        rules = {u: choose_rule(PROB, u, bits) for u in (split, HALF)}
        leaves = [(fmpq(0), split), (split, HALF)]
        res = SearchResult("branch-and-bound", gamma, leaves, rules, HALF, 3, 2)
        # the curvature levels and thetas as certify chooses them for these leaves and rules
        hi = {u: point_bounds(PROB, u, rules.get(u)).J_hi.upper().fmpq() for u in (fmpq(0), split, HALF)}
        res.levels = choose_levels(PROB, leaves, hi)[1]
        res.thetas = [theta_choice(PROB, l, r, lev) for (l, r), lev in zip(leaves, res.levels)]
        res.budget = SearchLimits(2000, exact(w["budget"]["max_seconds"]))
        res.stopped_by = "seconds"
        ev = Evaluation()
        facts = fill_rho(PROB, res, ev)
        assert facts.stopped_early, "the forged state must be incomplete (gap > gamma) to be recorded as a stop by time"
        return witness_json(res, facts.keys)


@pytest.mark.parametrize("split", [fmpq(1, 8), fmpq(3, 8), fmpq(1, 3)])
def test_a_partition_the_search_never_passes_through_is_refused(stopped, split):
    forged = forged_partition(stopped[3], split)

    def edit(w):
        w.update(forged)

    err = _refused(stopped[3], edit, "witnesses.budget.stopped_by")
    assert "never passes through" in err.message


def test_the_re_run_is_in_the_work_model(stopped):
    """The checker's re-run of the search is decided before it is done: the work model counts e evaluations."""
    from certify.limits import estimate_work

    doc = copy.deepcopy(stopped[4])
    base, _ = estimate_work(doc, None)
    doc["witnesses"]["budget"]["evaluations"] = "19999"
    doc["witnesses"]["budget"]["max_evaluations"] = "20000"
    with pytest.raises(InputError) as err:
        check_work(doc, None)
    assert err.value.parameter.endswith("witnesses.budget.evaluations"), err.value
    assert base < 1
