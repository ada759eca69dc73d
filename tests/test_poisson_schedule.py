"""Schedules: JSON / CSV files, contracts, and clear errors naming the field and the phase or row."""

from __future__ import annotations

import json

import pytest

from certify.balls import InputError, fmpq
from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.poisson.schedule import load_schedule, parse_schedule, schedule_from_inputs, schedule_inputs


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_json_list_keeps_decimals_exact(tmp_path):
    path = _write(
        tmp_path,
        "s.json",
        '[{"sampling_rate": 0.01, "noise_multiplier": "1.1", "steps": 1000}, {"sampling_rate": "1/50", "noise_multiplier": 0.8, "steps": "2e3"}]',
    )
    s = load_schedule(path)
    assert s.contract == POISSON_ADD_REMOVE
    assert s.phases[0].sampling_rate == fmpq(1, 100)  # the decimal text 0.01, not the binary float
    assert s.phases[1].noise_multiplier == fmpq(4, 5) and s.phases[1].steps == 2000
    assert s.total_steps == 3000


def test_json_object_with_contract_and_csv(tmp_path):
    obj = {
        "contract": {"sampling": "fixed-size", "adjacency": "replace-one"},
        "phases": [{"sampling_rate": "0.01", "noise_multiplier": "2", "steps": 10}],
    }
    s = load_schedule(_write(tmp_path, "s.json", json.dumps(obj)))
    assert s.contract == FIXED_SIZE_REPLACE_ONE
    c = load_schedule(_write(tmp_path, "s.csv", "sampling_rate,noise_multiplier,steps\n0.01,1.1,100\n1/20, 2 ,5\n"))
    assert [p.steps for p in c.phases] == [100, 5] and c.phases[1].sampling_rate == fmpq(1, 20)


def test_inputs_round_trip():
    s = parse_schedule(
        [{"sampling_rate": "0.01", "noise_multiplier": "1.1", "steps": 3}, {"sampling_rate": "1", "noise_multiplier": "7", "steps": 1}]
    )
    d = schedule_inputs(s)
    assert d["phases"] == "2" and d["phase[1].sampling_rate"] == "1" and d["sensitivity"] == "C"
    assert schedule_from_inputs(d).phases == s.phases


@pytest.mark.parametrize(
    "text,field",
    [
        ("[]", "is empty"),
        ("", "is empty"),
        ('[{"sampling_rate": "0.01", "noise_multiplier": "1.1"', "not valid JSON"),
        ('[{"sampling_rate": "0.01", "noise_multiplier": "1.1"}]', "phase 0: missing field(s) steps"),
        ('[{"sampling_rate": 0, "noise_multiplier": 1, "steps": 1}]', "phase 0: sampling_rate: must be in (0, 1]"),
        ('[{"sampling_rate": 1.5, "noise_multiplier": 1, "steps": 1}]', "phase 0: sampling_rate"),
        (
            '[{"sampling_rate": 0.1, "noise_multiplier": 1, "steps": 1}, {"sampling_rate": 0.1, "noise_multiplier": -1, "steps": 1}]',
            "phase 1: noise_multiplier: must be > 0",
        ),
        ('[{"sampling_rate": 0.1, "noise_multiplier": 1, "steps": 0}]', "phase 0: steps: must be an integer >= 1"),
        ('[{"sampling_rate": 0.1, "noise_multiplier": NaN, "steps": 1}]', "NaN"),
        ('[{"sampling_rate": 0.1, "noise_multiplier": 1, "steps": 1, "batch": 3}]', "unknown field"),
        ("[[0.1, 1, 1]]", "must be an object"),
        ('{"phases": []}', "is empty"),
        ('{"contract": {"sampling": "shuffle", "adjacency": "add-remove"}, "phases": []}', "shuffl"),
        (
            '[{"sampling_rate": 0.1, "noise_multiplier": 1, "steps": 1},'
            ' {"sampling_rate": 0.1, "noise_multiplier": 1, "steps": 1, "sampling": "fixed-size",'
            ' "adjacency": "replace-one"}]',
            "mixed contracts",
        ),
        ("sampling_rate,noise_multiplier,steps\n", "no phase"),
        ("q,sigma,T\n0.1,1,1\n", "header"),
        ("sampling_rate,noise_multiplier,steps\n0.1,1,1\n0.1,0,1\n", "row 3: noise_multiplier"),
        ("sampling_rate,noise_multiplier,steps\n0.1,1\n", "row 2"),
    ],
)
def test_bad_schedules_name_the_field(tmp_path, text, field):
    path = _write(tmp_path, "bad.txt", text)
    with pytest.raises(InputError) as err:
        load_schedule(path)
    assert field in str(err.value), str(err.value)
    assert str(err.value).startswith("--schedule")


def test_file_contract_must_match_the_asked_contract(tmp_path):
    obj = {
        "contract": {"sampling": "fixed-size", "adjacency": "replace-one"},
        "phases": [{"sampling_rate": "0.01", "noise_multiplier": "2", "steps": 10}],
    }
    with pytest.raises(InputError, match="mixed contracts"):
        load_schedule(_write(tmp_path, "s.json", json.dumps(obj)), contract=POISSON_ADD_REMOVE)


def test_missing_file():
    with pytest.raises(InputError, match="cannot read"):
        load_schedule("/nonexistent/schedule.json")
