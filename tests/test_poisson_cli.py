"""`certify dpsgd --sampling poisson --adjacency add-remove`: summaries, certificates, and bad input (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from certify import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POISSON = ["dpsgd", "--sampling", "poisson", "--adjacency", "add-remove"]
GOOD = ["--sampling-rate", "0.01", "--noise-multiplier", "1.1", "--steps", "1000", "--delta", "1e-5"]


def run(args):
    return subprocess.run([sys.executable, "-m", "certify", *args], capture_output=True, text=True, cwd=ROOT)


def test_summary_states_the_contract(capsys):
    assert cli.main(POISSON + GOOD) == 0
    out = capsys.readouterr().out
    assert "epsilon <= 1.71172" in out
    assert "contract: poisson sampling, add-remove adjacency" in out and "privacy unit: one example" in out
    assert "not covered: shuffled batches" in out


def test_json_out_and_verify_subprocess(tmp_path):
    out = tmp_path / "p.json"
    r = run(POISSON + GOOD + ["--alpha", "10", "--json", "--out", str(out)])
    assert r.returncode == 0, r.stderr
    short = json.loads(r.stdout)  # the compact summary; the certificate is the file
    assert short["certificate"] == str(out) and short["alpha"] == "10" and short["accountant"] == "renyi"
    doc = json.loads(out.read_text())
    assert doc["kind"] == "dpsgd/renyi-poisson" and doc["witnesses"]["alpha"] == "10"
    assert short["epsilon_upper"] == doc["witnesses"]["epsilon_bound"]
    v = run(["verify", str(out)])
    assert v.returncode == 0 and "VERIFIED" in v.stdout
    doc["witnesses"]["alpha"] = "11"
    out.write_text(json.dumps(doc))
    assert run(["verify", str(out)]).returncode == 4


def test_schedule_and_opacus_history(tmp_path, capsys):
    sched = tmp_path / "s.csv"
    sched.write_text("sampling_rate,noise_multiplier,steps\n0.01,1.1,500\n0.02,0.9,200\n0.1,2.5,50\n")
    out = tmp_path / "s.json"
    assert cli.main(POISSON + ["--schedule", str(sched), "--delta", "1e-5", "--out", str(out)]) == 0
    assert "3 phases, 750 steps" in capsys.readouterr().out
    from certify.verify import verify_text

    assert verify_text(out.read_text()).ok
    hist = tmp_path / "h.json"
    hist.write_text(json.dumps({"history": [[1.1, 0.01, 500], [0.9, 0.02, 200], [2.5, 0.1, 50]], "mechanism": "rdp"}))
    out2 = tmp_path / "h.cert.json"
    assert cli.main(["dpsgd", "--opacus-history", str(hist), "--delta", "1e-5", "--out", str(out2)]) == 0
    doc = json.loads(out2.read_text())
    assert doc["inputs"]["phases"] == "3" and doc["inputs"]["source"] == "Opacus history"
    assert doc["inputs"]["phase[0].sampling_rate.note"].startswith("binary float 0.01")
    assert verify_text(out2.read_text()).ok


def test_negative_epsilon_is_explained(capsys):
    assert cli.main(POISSON + ["--sampling-rate", "0.5", "--noise-multiplier", "1e12", "--steps", "1", "--delta", "0.5", "--alpha", "4096"]) == 0
    assert "in particular (0, delta)-DP" in capsys.readouterr().out


def test_fixed_size_runs_bok(capsys):
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
            ]
        )
        == 0
    )
    assert "Corollary 1" in capsys.readouterr().out


def _p(q="0.01", s="1.1", t="10", d="1e-5"):
    return POISSON + ["--sampling-rate", q, f"--noise-multiplier={s}", "--steps", t, "--delta", d]


BAD = [
    (_p(q="0"), "--sampling-rate"),
    (_p(q="1.5"), "--sampling-rate"),
    (_p(s="0"), "--noise-multiplier"),
    (_p(s="-1"), "--noise-multiplier"),
    (_p(t="0"), "--steps"),
    (_p(d="0"), "--delta"),
    (_p(d="1"), "--delta"),
    (_p(q="1e-100000"), "--sampling-rate"),  # guarded before it reaches FLINT or a text conversion
    (_p(s="1e-7"), "--noise-multiplier"),
    (_p(t="1e16"), "--steps"),
    (["dpsgd", "--sampling", "bernoulli", "--adjacency", "add-remove"] + GOOD, "--sampling"),
    (["dpsgd", "--sampling", "poisson", "--adjacency", "swap"] + GOOD, "--adjacency"),
    (["dpsgd", "--sampling", "shuffling", "--adjacency", "add-remove"] + GOOD, "shuffl"),
    (["dpsgd", "--sampling", "poisson", "--adjacency", "replace-one"] + GOOD, "not certified"),
    (POISSON + GOOD + ["--alpha", "1"], "--alpha"),
    (POISSON + GOOD + ["--accountant", "wang"], "--accountant"),
    (POISSON + ["--noise-multiplier", "1.1", "--steps", "10", "--delta", "1e-5"], "--sampling-rate"),
]


@pytest.mark.parametrize("args,field", BAD)
def test_bad_input_exit_2_nothing_written(tmp_path, capsys, args, field):
    out = tmp_path / "never.json"
    assert cli.main(args + ["--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and field in err, err
    assert not out.exists()


@pytest.mark.parametrize(
    "text,field", [("[]", "empty"), ('[{"sampling_rate": 0.1', "not valid JSON"), ("sampling_rate,noise_multiplier,steps\n0.1,x,1\n", "row 2")]
)
def test_bad_schedule_exit_2(tmp_path, capsys, text, field):
    sched = tmp_path / "bad"
    sched.write_text(text)
    out = tmp_path / "never.json"
    assert cli.main(POISSON + ["--schedule", str(sched), "--delta", "1e-5", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("certify: error: --schedule") and field in err and "\n" not in err
    assert not out.exists()


def test_opacus_history_conflicts(tmp_path, capsys):
    hist = tmp_path / "h.json"
    hist.write_text("[[1.1, 0.01, 10]]")
    assert cli.main(["dpsgd", "--sampling", "fixed-size", "--adjacency", "replace-one", "--opacus-history", str(hist), "--delta", "1e-5"]) == 2
    assert "mixed contracts" in capsys.readouterr().err
    hist.write_text("[[NaN, 0.01, 10]]")
    assert cli.main(["dpsgd", "--opacus-history", str(hist), "--delta", "1e-5"]) == 2
    assert "NaN" in capsys.readouterr().err


def test_poisson_contract_with_the_pld_and_renyi_accountants(tmp_path):
    base = [
        "dpsgd",
        "--sampling",
        "poisson",
        "--adjacency",
        "add-remove",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "2",
        "--steps",
        "100",
        "--delta",
        "1e-6",
    ]
    out = tmp_path / "pld.json"
    r = subprocess.run(
        [sys.executable, "-m", "certify", *base, "--accountant", "pld", "--grid", "1e-2", "--out", str(out)], capture_output=True, text=True, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr
    assert "certified PLD" in r.stdout and "poisson sampling, add-remove adjacency" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["kind"] == "pld/dpsgd" and doc["inputs"]["sampling"] == "poisson"
    r = subprocess.run([sys.executable, "-m", "certify", "verify", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "certify", *base, "--accountant", "renyi", "--json"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and json.loads(r.stdout)["kind"] == "dpsgd/renyi-poisson", r.stderr
    assert json.loads(r.stdout)["certificate"] is None
    r = subprocess.run([sys.executable, "-m", "certify", *base, "--accountant", "bok"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--accountant" in r.stderr
