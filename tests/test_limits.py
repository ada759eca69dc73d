"""The one table of limits and the checker's work model (certify.limits): every cap is respected by its producer and
refused by the checker before any evaluation, naming the field; genuine certificates stay within the budget."""

from __future__ import annotations

import copy
import json
import resource
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from certify import cli, limits, registry, verify
from certify.balls import InputError
from certify.limits import BUDGET_SECONDS, LIMITS, cap, check_work, estimate_work


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


_EXAMPLES: dict[str, dict] = {}


def example(kind: str) -> dict:
    """The kind's registered example, as the JSON document ``certify verify`` reads (made once per session)."""
    if kind not in _EXAMPLES:
        _EXAMPLES[kind] = json.loads(verify.spec_for(kind).example().dumps())
    return copy.deepcopy(_EXAMPLES[kind])


def refused(doc: dict, field: str, precision: int | None = None) -> InputError:
    with pytest.raises(InputError) as err:
        check_work(doc, precision)
    assert err.value.parameter == field, err.value
    return err.value


KINDS = sorted(registry.kind_modules())


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------
def test_every_kind_has_a_work_model():
    missing = [k for k in KINDS if limits.work_hook(k) is None]
    assert not missing, f"kinds without a WORK hook in their registering module: {missing}"


def test_the_table_is_what_the_modules_enforce():
    from certify.dpsgd import mixture
    from certify.pld import accountant
    from certify.poisson import fixed_size, schedule
    from certify import tables_command
    from certify.certificate import MAX_PRECISION, MAX_RECORDED_PRECISION

    assert schedule.MAX_PHASES == cap("schedule_phases") and schedule.MAX_STEPS == cap("steps")
    assert fixed_size.MAX_FIXED_SIZE_PHASES == cap("fixed_size_phases")
    assert mixture.MAX_NODES == cap("quadrature_nodes")
    assert (accountant.MAX_ONE_STEP_POINTS, accountant.MAX_ONE_STEP_SPAN, accountant.MAX_ATOMS) == (
        cap("pld_one_step_points"),
        cap("pld_one_step_span"),
        cap("pld_atoms"),
    )
    assert tables_command.MAX_JOBS == cap("jobs")
    from certify.dpsgd.problem import ALPHA_MAX as BOK_ALPHA
    from certify.poisson.rdp import ALPHA_MAX as POISSON_ALPHA
    from certify.sweep.executor import MAX_WORKERS
    from certify.sweep.queries import MAX_ROWS

    assert (BOK_ALPHA, POISSON_ALPHA) == (cap("renyi_order_bok"), cap("renyi_order_poisson"))
    assert (accountant.MAX_K, accountant.MAX_BANDS) == (cap("pld_bits"), cap("pld_bands"))
    assert (MAX_WORKERS, MAX_ROWS) == (cap("workers"), cap("sweep_rows"))  # (sweep/ keeps its copies: one value)
    assert MAX_PRECISION == cap("verify_precision") and MAX_RECORDED_PRECISION == cap("precision_ladder_top")


@pytest.mark.parametrize("kind", KINDS)
def test_genuine_examples_fit_the_budget_and_the_model_errs_high(kind):
    """Every kind's example is within the budget at 1x and 4x its precision (the conformance suite verifies at
    both); and the estimate at the recorded precision is above the measured CPU time of the check."""
    doc = example(kind)
    for factor in (1, 4):
        seconds, _ = estimate_work(doc, factor * doc["precision"])
        assert 0 < seconds < BUDGET_SECONDS, (kind, factor, seconds)
    t = _cpu()
    rep = verify.verify_document(doc)
    used = _cpu() - t
    assert rep.exit_code == 0
    assert estimate_work(doc)[0] >= used, (kind, used)


# --------------------------------------------------------------------------------------------
# The checker refuses a certificate above a cap, naming the field, before any evaluation
# --------------------------------------------------------------------------------------------
def test_theorem_4_1_failure_list_above_its_cap():
    doc = example("objpert/theorem-4.1")
    doc["witnesses"]["theorem_C13"]["first_passing_iterations"] = cap("c13_iterations") + 1
    err = refused(doc, "witnesses.theorem_C13.first_passing_iterations")
    assert str(cap("c13_iterations")) in err.message


def test_calibration_scan_above_its_cap():
    """The 1 KB calibration file whose loop the file sets (hours before): refused at once."""
    doc = example("objpert/calibration-4.13")
    doc["witnesses"]["threshold7_ceiling"] = 1
    doc["witnesses"]["iterations"] = 10**9
    refused(doc, "witnesses.iterations")
    # certify verify refuses it before any evaluation (exit 2 naming the field), at once
    t = _cpu()
    with pytest.raises(InputError, match="witnesses.iterations"):
        verify.verify_document(doc)
    assert _cpu() - t < 2


def test_calibration_C13_failure_list_above_its_cap():
    doc = example("objpert/calibration-C13")
    doc["witnesses"]["theorem_C13"]["first_passing_iterations"] = 10**6
    refused(doc, "witnesses.theorem_C13.first_passing_iterations")


def test_branch_and_bound_leaves_and_rules_above_their_caps():
    doc = example("dpsgd/renyi-bok")
    w = doc["witnesses"]
    w["leaves"] = [["0", "1/2"]] * (cap("bb_evaluations") + 1)
    refused(doc, "witnesses.leaves")
    doc = example("dpsgd/renyi-bok")
    doc["witnesses"]["points"] = doc["witnesses"]["points"][:1] * (cap("quadrature_rules") + 1)
    refused(doc, "witnesses.points")


def test_quadrature_rules_within_the_caps_but_above_the_budget():
    """The number of quadrature rules had no cap (76 s CPU for a small file): rules of 100,000 nodes each."""
    doc = example("dpsgd/rho-bok")
    rule = {"u": "1/4", "a": "-50", "b": "50", "h": "1/1000", "strip": "1"}
    doc["witnesses"]["points"] = [dict(rule, u=f"1/{4 + i}") for i in range(200)]
    err = refused(doc, "witnesses.points")
    assert "budget" in err.message


def test_poisson_phases_above_the_cap_and_the_budget():
    doc = example("dpsgd/renyi-poisson")
    inp = doc["inputs"]
    ph = {k[len("phase[0].") :]: v for k, v in inp.items() if k.startswith("phase[0].")}
    for k in [k for k in inp if k.startswith("phase[")]:
        del inp[k]

    def phases(n):
        inp["phases"] = str(n)
        for i in range(n):
            inp[f"phase[{i}].sampling_rate"] = f"1/{100 + i}"
            inp[f"phase[{i}].noise_multiplier"] = ph["noise_multiplier"]
            inp[f"phase[{i}].steps"] = ph["steps"]

    phases(100)
    assert estimate_work(doc)[0] < 1
    inp["phases"] = str(cap("schedule_phases") + 1)
    refused(doc, "inputs.phases")
    phases(90_000)  # 20,000 or 100,000 distinct phases ran past 90 s: refused at once
    t = _cpu()
    refused(doc, "inputs.phases")
    assert _cpu() - t < 2


def test_poisson_integral_mode_estimate():
    """The integral mode's estimate was 2x low: a fractional alpha in integral mode at 1024 bits for 200 pairs."""
    from certify.balls import fmpq
    from certify.poisson.rdp import work_seconds

    assert work_seconds(fmpq(21, 2), 1, 1024, "integral") >= 2 * 0.35  # measured 0.05-0.35 s per integral at 1024 bits
    assert work_seconds(fmpq(21, 2), 1, 128, "integral") >= 2 * 5e-3


def test_fixed_size_schedule_phases_above_the_cap():
    doc = example("dpsgd/renyi-bok-schedule")
    doc["witnesses"]["phases"] = doc["witnesses"]["phases"][:1] * (cap("fixed_size_phases") + 1)
    refused(doc, "witnesses.phases")


def test_pld_layout_above_the_budget():
    doc = example("pld/dpsgd")
    lay = next(iter(doc["witnesses"]["layouts"].values()))
    lay.update({"lo": -150_000, "hi": 150_000, "core_lo": -150_000, "core_hi": 150_000, "stride": 1})
    lay.pop("bands", None)
    assert "budget" in refused(doc, "witnesses.layouts").message  # 300,001 points: within the cap, above the budget
    lay.update({"lo": -300_000, "hi": 300_000, "core_lo": -300_000, "core_hi": 300_000})
    assert str(cap("pld_one_step_points")) in refused(doc, "witnesses.layouts").message


def test_precision_asked_of_the_checker():
    doc = example("dpsgd/renyi-wang")
    assert estimate_work(doc, 512)[0] < BUDGET_SECONDS
    refused(doc, "inputs", 1 << 16)


def test_a_malformed_shape_costs_nothing_and_is_left_to_the_checker():
    doc = example("dpsgd/renyi-bok")
    doc["witnesses"]["points"] = "not a list"
    assert estimate_work(doc) == (0.0, "")
    assert estimate_work({"kind": "no/such-kind", "precision": 128, "inputs": {}, "witnesses": {}}) == (0.0, "")


# --------------------------------------------------------------------------------------------
# Producers refuse above the same caps (InputError naming the flag)
# --------------------------------------------------------------------------------------------
def test_branch_and_bound_budget_flag(capsys):
    n = cap("bb_evaluations") + 1
    with pytest.raises(SystemExit) as code:  # refused by argparse (type=)
        cli.main(["rho", "--alpha", "8", "--sampling-rate", "1/100", "--noise-multiplier", "2", "--max-evaluations", str(n)])
    code = code.value.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--max-evaluations" in err[0] and str(cap("bb_evaluations")) in err[0]


def test_c13_search_respects_its_cap(monkeypatch):
    from certify.objpert.certificates import certify_theorem_4_1
    from certify.objpert.tables import example_problem

    monkeypatch.setitem(LIMITS, "c13_iterations", limits.Limit(100, "test", "--delta", "witnesses.theorem_C13"))
    with pytest.raises(InputError) as err:
        certify_theorem_4_1(example_problem("1/100"), "1", "1500", "1e-7")
    assert err.value.parameter == "--delta" and "100" in err.value.message


def test_poisson_producer_decides_its_work_first():
    from certify.contract import POISSON_ADD_REMOVE
    from certify.poisson.accountant import certify_poisson
    from certify.poisson.schedule import parse_schedule

    phases = [{"sampling_rate": f"1/{100 + i}", "noise_multiplier": "11/10", "steps": 10} for i in range(20_000)]
    t = _cpu()
    with pytest.raises(InputError) as err:
        certify_poisson(parse_schedule(phases, contract=POISSON_ADD_REMOVE), "1e-5")
    assert err.value.parameter == "--schedule" and "budget" in err.value.message
    assert _cpu() - t < 5


def test_pld_producer_refuses_a_grid_above_the_budget(capsys):
    args = [
        "dpsgd",
        "--sampling",
        "fixed-size",
        "--accountant",
        "pld",
        "--sampling-rate",
        "1/100",
        "--noise-multiplier",
        "1/2",
        "--steps",
        "1",
        "--delta",
        "1e-5",
    ]
    code = cli.main(args + ["--grid", "2e-4"])
    err = capsys.readouterr().err.strip().splitlines()
    # the search limits of the Python API: the same cap, named as the flag
    from certify.dpsgd.search import SearchLimits, budget

    with pytest.raises(InputError, match="--max-evaluations"):
        with budget(SearchLimits(cap("bb_evaluations") + 1)):
            pass
    assert code == 2 and len(err) == 1 and "--grid" in err[0] and "budget" in err[0]


# --------------------------------------------------------------------------------------------
# Property: certificates driven at every cap are refused or checked within the budget
# --------------------------------------------------------------------------------------------
def _poisson_phases(doc: dict, n: int) -> None:
    inp = doc["inputs"]
    steps, sigma = inp["phase[0].steps"], inp["phase[0].noise_multiplier"]
    for k in [k for k in inp if k.startswith("phase[")]:
        del inp[k]
    inp["phases"] = str(n)
    for i in range(n):
        inp[f"phase[{i}].sampling_rate"], inp[f"phase[{i}].noise_multiplier"], inp[f"phase[{i}].steps"] = f"1/{100 + i}", sigma, steps


SHAPES = {
    "dpsgd/renyi-poisson": _poisson_phases,
    "objpert/theorem-4.1": lambda d, n: d["witnesses"]["theorem_C13"].__setitem__("first_passing_iterations", n),
    "objpert/calibration-C13": lambda d, n: d["witnesses"]["theorem_C13"].__setitem__("first_passing_iterations", n),
    "objpert/calibration-4.13": lambda d, n: d["witnesses"].__setitem__("iterations", d["witnesses"]["threshold7_ceiling"] + n),
    "dpsgd/renyi-bok": lambda d, n: d["witnesses"].__setitem__("leaves", [["0", "1/2"]] * n),
    "dpsgd/renyi-bok-schedule": lambda d, n: d["witnesses"].__setitem__("phases", d["witnesses"]["phases"][:1] * max(1, n // 100)),
}
CAPS = {
    "dpsgd/renyi-poisson": "schedule_phases",
    "objpert/theorem-4.1": "c13_iterations",
    "objpert/calibration-C13": "c13_iterations",
    "objpert/calibration-4.13": "cor413_scan",
    "dpsgd/renyi-bok": "bb_evaluations",
    "dpsgd/renyi-bok-schedule": "fixed_size_phases",
}


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(SHAPES)), where=st.sampled_from(["below", "at", "above"]), precision=st.sampled_from([None, 256, 1024]))
def test_checker_time_stays_under_the_budget_at_every_cap(kind, where, precision):
    top = cap(CAPS[kind]) * (100 if kind == "dpsgd/renyi-bok-schedule" else 1)
    n = {"below": max(1, top // 7), "at": top, "above": top + 1}[where]
    doc = example(kind)
    SHAPES[kind](doc, n)
    t = _cpu()
    try:
        check_work(doc, precision)
    except InputError:
        assert _cpu() - t < 2
        return
    verify.verify_document(doc, precision)
    assert _cpu() - t < BUDGET_SECONDS


def test_verify_refuses_over_budget_quickly_in_process():
    """What ``certify verify`` does once the lead calls check_work from verify_document: the refusal costs nothing."""
    doc = example("dpsgd/renyi-poisson")
    doc["inputs"]["phases"] = str(10**9)
    t = time.perf_counter()
    refused(doc, "inputs.phases")
    assert time.perf_counter() - t < 1
