"""certify dpsgd as a practitioner meets it: no silent contract, Opacus's epochs, a compact --json, progress lines,
and a readable certify.api.Result.

Opacus's counts are re-derived here from its documented rules, apart from certify: a DataLoader of n examples in
batches of b has ceil(n/b) batches (drop_last=False); ``DPDataLoader.from_data_loader`` samples at rate
1/len(data_loader) and its sampler's epoch is int(1/q) steps; ``get_noise_multiplier(epochs=E)`` counts int(E/q).
"""

from __future__ import annotations

import io
import json
import math
import time
from fractions import Fraction

import pytest

from certify import api, cli
from certify.balls import InputError
from certify.poisson.schedule import opacus_epochs, schedule_from_inputs
from certify.progress import Progress, ticking
from certify.verify import verify_text

RUN = ["--noise-multiplier", "1.1", "--delta", "1e-5"]


def test_no_contract_is_one_line_naming_the_flags_and_the_libraries(capsys):
    assert cli.main(["dpsgd", "--sampling-rate", "0.01", "--steps", "1000", *RUN]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--sampling poisson" in err and "--sampling fixed-size" in err
    assert "Opacus" in err and "dp_accounting" in err and "Bok" in err


def test_a_schedule_file_must_declare_its_contract_or_the_flags_give_it(tmp_path, capsys):
    plain = tmp_path / "plain.json"
    plain.write_text('[{"sampling_rate": "0.01", "noise_multiplier": "1.1", "steps": 100}]')
    assert cli.main(["dpsgd", "--schedule", str(plain), "--delta", "1e-5"]) == 2
    assert "declares no contract" in capsys.readouterr().err
    assert cli.main(["dpsgd", "--sampling", "poisson", "--schedule", str(plain), "--delta", "1e-5"]) == 0
    declared = tmp_path / "declared.json"
    phases = '[{"sampling_rate": "0.01", "noise_multiplier": "1.1", "steps": 100}]'
    declared.write_text('{"contract": {"sampling": "poisson", "adjacency": "add-remove"}, "phases": ' + phases + "}")
    assert cli.main(["dpsgd", "--schedule", str(declared), "--delta", "1e-5"]) == 0
    assert "poisson sampling, add-remove adjacency" in capsys.readouterr().out


@pytest.mark.parametrize("b,n,epochs", [(256, 50_000, 100), (100, 1000, 3), (1, 7, 2), (7, 7, 5), (300, 1000, 1)])
def test_epochs_are_counted_as_opacus_counts(b, n, epochs):
    batches = math.ceil(n / b)  # len(DataLoader(range(n), batch_size=b)), drop_last=False
    q, t, rec = opacus_epochs(str(b), str(n), str(epochs))
    assert Fraction(int(q.p), int(q.q)) == Fraction(1, batches) and t == epochs * batches
    assert dict(rec) == {"batch_size": str(b), "dataset_size": str(n), "epochs": str(epochs)}
    assert opacus_epochs(sampling_rate="0.003", epochs="2")[1] == int(2 / Fraction("0.003"))  # get_noise_multiplier


def test_epochs_recorded_and_re_derived_by_the_checker(tmp_path, capsys):
    out = tmp_path / "run.json"
    argv = ["dpsgd", "--sampling", "poisson", "--batch-size", "256", "--dataset-size", "50000", "--epochs", "100", *RUN, "--out", str(out)]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "q=1/196" in text and "T=19600 steps" in text and "counted as Opacus counts" in text
    doc = json.loads(out.read_text())
    assert {k: doc["inputs"][k] for k in ("batch_size", "dataset_size", "epochs")} == {"batch_size": "256", "dataset_size": "50000", "epochs": "100"}
    assert doc["inputs"]["phase[0].sampling_rate"] == "1/196" and doc["inputs"]["phase[0].steps"] == "19600"
    assert verify_text(out.read_text()).ok
    for field, value in (("phase[0].steps", "19599"), ("phase[0].sampling_rate", "1/195"), ("epochs", "99"), ("epochs", "100.0")):
        bad = dict(doc["inputs"], **{field: value})
        with pytest.raises(InputError):
            schedule_from_inputs(bad)


@pytest.mark.parametrize(
    "argv,flag",
    [
        (["--sampling", "fixed-size", "--sampling-rate", "0.01", "--epochs", "3", "--steps", "300"], "--epochs"),
        (["--sampling", "fixed-size", "--batch-size", "10", "--epochs", "1"], "--batch-size"),
        (["--sampling", "poisson", "--accountant", "pld", "--batch-size", "10", "--dataset-size", "100", "--epochs", "0"], "--epochs"),
        (["--sampling", "poisson", "--batch-size", "10", "--steps", "5"], "--batch-size"),
        (["--sampling", "poisson", "--batch-size", "200", "--dataset-size", "100", "--epochs", "1"], "--batch-size"),
        (["--sampling", "poisson", "--sampling-rate", "0.01", "--epochs", "1", "--steps", "5"], "--epochs"),
        (["--sampling", "poisson", "--sampling-rate", "0.01", "--epochs", "1.5"], "--epochs"),
    ],
)
def test_bad_epoch_flags_are_one_line_errors(argv, flag, capsys):
    assert cli.main(["dpsgd", *argv, *RUN]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and flag in err


def test_compact_json_summary(tmp_path, capsys):
    out = tmp_path / "c.json"
    base = ["dpsgd", "--sampling", "poisson", "--sampling-rate", "0.01", "--steps", "1000", *RUN, "--json"]
    assert cli.main(base + ["--out", str(out)]) == 0
    short = json.loads(capsys.readouterr().out)
    doc = json.loads(out.read_text())
    assert short["certificate"] == str(out) and short["contract"] == {"sampling": "poisson", "adjacency": "add-remove"}
    assert short["accountant"] == "renyi" and short["epsilon_upper"] == doc["witnesses"]["epsilon_bound"] == "1.711716022e0"
    assert short["alpha"] == doc["witnesses"]["alpha"] and short["run"]["steps"] == "1000"
    assert (
        cli.main(
            ["dpsgd", "--sampling", "poisson", "--accountant", "pld", "--grid", "1e-2", "--sampling-rate", "0.01", "--steps", "10", *RUN, "--json"]
        )
        == 0
    )
    short = json.loads(capsys.readouterr().out)
    assert short["accountant"] == "pld" and short["certificate"] is None
    assert float(short["epsilon_lower"]) <= float(short["epsilon_upper"])
    assert (
        cli.main(
            [
                "dpsgd",
                "--sampling",
                "fixed-size",
                "--sampling-rate",
                "0.01",
                "--noise-multiplier",
                "2",
                "--steps",
                "10",
                "--delta",
                "1e-5",
                "--alpha",
                "4",
                "--json",
            ]
        )
        == 0
    )
    short = json.loads(capsys.readouterr().out)
    assert short["accountant"] == "bok" and short["contract"]["sampling"] == "fixed-size" and short["alpha"] == "4"


def test_progress_lines_wait_two_seconds_then_at_most_one_a_second():
    s = io.StringIO()
    p = Progress(after=0.0, every=1.0, stream=s)
    assert p("a") and not p("b")  # the second within a second is dropped
    assert s.getvalue().startswith("certify: a (")
    s = io.StringIO()
    with ticking("x", after=0.2, every=0.1, stream=s):
        time.sleep(0.55)
    lines = s.getvalue().splitlines()
    assert 2 <= len(lines) <= 4 and all(line.startswith("certify: x: working") for line in lines)
    s = io.StringIO()
    with ticking("quick", after=2.0, stream=s):
        pass
    assert s.getvalue() == ""


def test_result_repr_and_jupyter_rendering():
    r = api.dpsgd_epsilon(sampling="poisson", adjacency="add-remove", sampling_rate="0.01", noise_multiplier="1.1", steps=1000, delta="1e-5")
    text = repr(r)
    assert text.startswith("Result(epsilon <= 1.71172e0, delta=1/100000, accountant=renyi") and "poisson + add-remove" in text
    assert "q=1/100, sigma=11/10, T=1000" in text and "\n" not in text
    html = r._repr_html_()
    assert html.startswith("<table") and "&le; 1.711716022e0" in html and "<script" not in html
