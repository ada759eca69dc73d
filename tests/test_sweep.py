"""`certify sweep`: reading queries, argv mapping, the runner, executors, resumability and bad input.

The fast versions (a dozen rows); the 1,000-row and real-cluster runs are in test_sweep_cluster.py (slow).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from certify.balls import InputError
from certify.sweep import queries as Q
from certify.sweep import runner
from certify.sweep.commands import COLUMNS, headline
from certify.sweep.executor import LocalExecutor, dask_available, make_executor
from certify.verify import verify_text
from fast_subset import fast_subset
from sweep_helpers import ROOT, double_or_die, double_or_raise, renyi_rows, sweep, write_csv

MIXED = [  # good rows of several certifying commands, then bad rows of every kind
    {"command": "dpsgd", "sampling": "fixed-size", "sampling_rate": "0.01", "noise_multiplier": "2", "steps": "1000", "delta": "1e-6", "alpha": "8"},
    {"command": "rho", "alpha": "8", "sampling_rate": "1/100", "noise_multiplier": "2"},
    {
        "command": "dpsgd",
        "sampling": "fixed-size",
        "batch_size": "256",
        "dataset_size": "60000",
        "noise_multiplier": "1.1",
        "steps": "100",
        "delta": "1e-5",
        "alpha": "6",
    },
    {"command": "gaussian-benchmark", "noise_multiplier": "5", "epsilon": "1"},
    {"command": "objpert-rdp", "L": "1", "nu": "2", "s": "1/4", "lambda": "1", "alpha": "3"},
    {"command": "rho", "alpha": "8", "sampling_rate": "0.01", "noise_multiplier": "2"},  # row 2, p spelled otherwise
    {
        "command": "dpsgd",
        "sampling": "fixed-size",
        "sampling_rate": "0.01",
        "noise_multiplier": "2",
        "steps": "1000",
        "delta": "1e-6",
        "alpha": "8",
    },  # a duplicate of row 1
    {"command": "rho", "alpha": "300", "sampling_rate": "0.01", "noise_multiplier": "2"},  # bad value
    {"command": "frobnicate", "alpha": "8"},  # unknown command
    {"command": "rho", "alpha": "8", "sampling_rate": "0.01", "noise_multiplier": "2", "steps": "5"},  # no --steps
    {"command": "tables"},  # not certifying
    {
        "command": "dpsgd",
        "sampling": "fixed-size",
        "sampling_rate": "0.01",
        "noise_multiplier": "2",
        "steps": "1000",
        "delta": "1e-6",
        "accountant": "lossless",
    },  # writes no certificate
    {"command": "rho", "alpha": "x", "sampling_rate": "0.01", "noise_multiplier": "2"},  # not a number
]
GOOD = 7


def _files(d) -> dict[str, bytes]:
    return {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))}


# ---------------------------------------------------------------------------------------------- reading


def test_csv_cells_are_exact_text(tmp_path):
    f = tmp_path / "q.csv"
    f.write_text("command,sampling_rate,noise_multiplier,steps,delta\ndpsgd, 0.010 ,1/3,1000,1e-6\n\nrho,,2,,\n")
    qs = Q.read_queries(str(f))
    assert [q.row for q in qs] == [1, 2]
    assert qs[0].cells == {"sampling_rate": "0.010", "noise_multiplier": "1/3", "steps": "1000", "delta": "1e-6"}
    assert qs[1].command == "rho" and qs[1].cells == {"noise_multiplier": "2"}  # empty cells: not given


def test_jsonl_numbers_keep_their_text(tmp_path):
    f = tmp_path / "q.jsonl"
    f.write_text(
        '{"command": "rho", "alpha": 8, "sampling_rate": 0.010, "noise_multiplier": 1e-0, "gamma": null}\n'
        "\n"
        '{"command": "objpert", "utility": true, "example": "4.8"}\n'
        "[1, 2]\n"
        '{"command": "rho", "alpha": [8]}\n'
        '{"command": "rho", "alpha": \n'
    )
    qs = Q.read_queries(str(f))
    assert qs[0].cells == {"alpha": "8", "sampling_rate": "0.010", "noise_multiplier": "1e-0"}
    assert qs[1].cells == {"utility": True, "example": "4.8"} and qs[1].error is None
    assert "not a JSON object" in qs[2].error and "alpha" in qs[3].error and "not a JSON object" in qs[4].error
    assert [q.row for q in qs] == [1, 2, 3, 4, 5]


def test_bad_csv_rows_are_row_errors(tmp_path):
    f = tmp_path / "q.csv"
    f.write_text("command,alpha\nrho,8,9\nrho\n,8\n")
    qs = Q.read_queries(str(f))
    assert "3 cells" in qs[0].error and "1 cells" in qs[1].error and "command" in qs[2].error


UNUSABLE = [
    ("q.csv", "alpha,sampling_rate\n8,0.01\n"),  # no command column
    ("q.csv", ""),  # empty
    ("q.csv", "command\n"),  # no rows
    ("q.csv", "command,alpha,alpha\nrho,8,8\n"),  # duplicate column
    ("q.jsonl", "not json\nnor this\n"),  # no line is a JSON object
    ("q.jsonl", '{"alpha": 8}\n'),  # no command anywhere
    ("q.bin", "\x00\x01\x02"),  # binary
]


# fast suite: an empty CSV, a JSONL file without a command, a binary file (each one a subprocess)
@pytest.mark.parametrize("name,content", fast_subset(UNUSABLE, keep=[UNUSABLE[1], UNUSABLE[5], UNUSABLE[6]]))
def test_unusable_queries_file_is_exit_2_and_writes_nothing(tmp_path, name, content):
    f = tmp_path / name
    f.write_text(content)
    with pytest.raises(InputError):
        Q.read_queries(str(f))
    out = tmp_path / "out"
    r = sweep(f, "--out", out, "--executor", "local")
    assert r.returncode == 2 and r.stderr.startswith("certify: error: QUERIES") and "Traceback" not in r.stderr
    assert not out.exists()


def test_missing_file_and_bad_options_are_exit_2(tmp_path, capsys):
    from certify import cli

    good = write_csv(tmp_path / "q.csv", MIXED[:1])
    for args in (
        [tmp_path / "none.csv"],
        [good, "--workers", "0"],
        [good, "--workers", "x"],
        [good, "--scheduler", "tcp://127.0.0.1:1", "--executor", "local"],
        [good, "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"],
    ):
        try:
            code = cli.main(["sweep", *map(str, args), "--out", str(tmp_path / "out")])
        except SystemExit as stop:  # argparse's own errors (one line, exit 2, as cli._Parser writes them)
            code = stop.code
        assert code == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, (args, err)
        assert not (tmp_path / "out").exists()
    r = sweep(tmp_path / "none.csv", "--out", tmp_path / "out")  # and once through a process, as a user sees it
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr


# ---------------------------------------------------------------------------------------------- argv


def test_columns_map_to_flags_of_the_parser():
    sub = runner.subparser("objpert")
    q = Q.Query(1, "objpert", {"delta_S": "0.02", "L1": "1", "target-delta": "1e-7", "utility": "true", "n": "1000", "json": "false"})
    with pytest.raises(InputError, match="--json"):
        Q.argv_for(q, sub, reserved=("--out", "--json"))
    q.cells.pop("json")
    assert Q.argv_for(q, sub) == ["--L1=1", "--delta-S=0.02", "--n=1000", "--target-delta=1e-7", "--utility"]
    q.cells["utility"] = False
    assert "--utility" not in Q.argv_for(q, sub)
    assert Q.argv_for(Q.Query(1, "objpert-rdp", {"lambda": "1", "L": "1"}), runner.subparser("objpert-rdp")) == ["--L=1", "--lambda=1"]
    for cells, match in (
        ({"frob": "1"}, "no flag --frob"),
        ({"utility": "maybe"}, "true or false"),
        ({"n": True}, "takes a value"),
        ({"out": "x.json"}, "sweep sets it"),
    ):
        with pytest.raises(InputError, match=match):
            Q.argv_for(Q.Query(1, "objpert", cells), sub, reserved=("--out",))


def test_certificate_name_is_canonical():
    sub = runner.subparser("rho")
    a = Q.argv_for(Q.Query(1, "rho", {"alpha": "8", "sampling_rate": "0.01", "noise_multiplier": "2"}), sub)
    b = Q.argv_for(Q.Query(2, "rho", {"noise-multiplier": "2", "sampling_rate": "0.01", "alpha": "8"}), sub)
    c = Q.argv_for(Q.Query(3, "rho", {"alpha": "8", "sampling_rate": "1/100", "noise_multiplier": "2"}), sub)
    assert Q.certificate_name("rho", a) == Q.certificate_name("rho", b) != Q.certificate_name("rho", c)
    assert Q.certificate_name("rho", a).startswith("rho-") and len(Q.certificate_name("rho", a)) == 4 + 16 + 5


@pytest.mark.parametrize("command", ["sweep", "tables", "plot", "proofs", "verify", "nope"])
def test_refused_commands(command):
    with pytest.raises(InputError, match="command"):
        runner.task_for(Q.Query(1, command, {}))


# ---------------------------------------------------------------------------------------------- runner


def test_runner_captures_the_certificate_the_cli_writes():
    argv = ["--alpha=8", "--noise-multiplier=2", "--sampling-rate=0.01"]
    out = runner.run_query(runner.Task("rho", tuple(argv)))
    assert out.status == "ok" and out.exit == 0 and out.error == ""
    cli = subprocess.run([sys.executable, "-m", "certify", "rho", *argv, "--json"], capture_output=True, text=True, cwd=ROOT)
    assert cli.returncode == 0 and out.certificate == cli.stdout
    assert verify_text(out.certificate).ok
    doc = json.loads(out.certificate)
    assert headline(out.certificate) == f"rho <= {doc['quantities']['rho']['upper']}"


def test_runner_reports_errors_as_one_line():
    out = runner.run_query(runner.Task("rho", ("--alpha=300", "--noise-multiplier=2", "--sampling-rate=0.01")))
    assert out.status == "error" and out.exit == 2 and out.certificate is None
    assert out.error.startswith("--alpha: must be an integer in [2, 256]")
    out = runner.run_query(runner.Task("rho", ("--alpha=8",)))  # argparse: a required flag is missing
    assert out.status == "error" and out.exit == 2 and "--noise-multiplier" in out.error and "\n" not in out.error
    out = runner.run_query(
        runner.Task(
            "dpsgd", ("--sampling=fixed-size", "--accountant=lossless", "--delta=1e-6", "--noise-multiplier=2", "--sampling-rate=0.01", "--steps=10")
        )
    )
    assert out.status == "error" and "no certificate" in out.error


def test_headline_is_found_generically():
    q = {"rho": {"upper": "1e-3"}, "epsilon": {"upper": "2.436693804e0"}, "delta": {"upper": "5e-8"}}
    claims = [
        {"statement": "N = 3 satisfies (7)", "holds": True},
        {"statement": "the release is (1, 5.17e-8)-DP", "holds": True},
        {"statement": "the release is (1, 1e-9)-DP", "holds": False},
    ]
    doc = {"quantities": q, "claims": claims}
    assert headline(json.dumps(doc)) == "epsilon <= 2.436693804e0"
    assert headline(json.dumps({**doc, "conclusion": {"statement": "the run is (2.44, 1e-6)-DP"}})) == "the run is (2.44, 1e-6)-DP"
    del q["epsilon"]
    assert headline(json.dumps(doc)) == "the release is (1, 5.17e-8)-DP"
    assert headline(json.dumps({"quantities": q, "claims": claims[:1]})) == "rho <= 1e-3"
    assert headline(json.dumps({"quantities": {}, "claims": claims[:1]})) == "N = 3 satisfies (7)"
    assert headline("not json") == headline("[]") == ""


# ---------------------------------------------------------------------------------------------- executors


def test_local_pool_survives_a_killed_worker():
    items = list(range(60))
    got = {}
    with LocalExecutor(2) as ex:
        for k, (i, result, error) in enumerate(ex.map_unordered(double_or_die, items)):
            assert error is None
            got[i] = result
            if k == 5:
                pid = next(iter(ex._pool._processes))  # the pool's worker processes (no public accessor)
                os.kill(pid, signal.SIGKILL)
        assert ex.restarts >= 1
    assert got == {i: 2 * i for i in items}


def test_local_pool_reports_an_item_that_kills_its_worker():
    items = [1, 2, "poison", 3, 4, 5, 6, 7]
    with LocalExecutor(2) as ex:
        res = {i: (r, e) for i, r, e in ex.map_unordered(double_or_die, items)}
    assert set(res) == set(range(len(items)))
    assert res[2][0] is None and "died" in res[2][1]
    assert all(res[i] == (2 * items[i], None) for i in range(len(items)) if i != 2)


# starting Dask is slow; the "dask" group runs on one xdist worker (see test_sweep_cluster.py)
@pytest.mark.parametrize("kind", ["local", pytest.param("dask", marks=[pytest.mark.slow, pytest.mark.xdist_group("dask")])])
def test_a_raising_task_is_an_error_on_its_item(kind):
    if kind == "dask" and not dask_available():
        pytest.skip("dask is not installed")
    items = [1, "bad", 3, 4]
    with make_executor(kind, 2) as ex:
        res = {i: (r, e) for i, r, e in ex.map_unordered(double_or_raise, items)}
    assert res == {0: (2, None), 1: (None, "ValueError: no double for 'bad'"), 2: (6, None), 3: (8, None)}


def test_make_executor_choices():
    assert make_executor("local", 1).kind == "local"
    with pytest.raises(InputError, match="--workers"):
        make_executor("local", 0)
    with pytest.raises(InputError, match="--executor"):
        make_executor("threads", 1)


# ---------------------------------------------------------------------------------------------- the command


def _sweep_mixed(tmp_path, executor, workers) -> dict[str, bytes]:
    """The MIXED queries swept on `executor` with `workers` workers: the output files."""
    qs = tmp_path / "q.csv"
    if not qs.exists():
        write_csv(qs, MIXED)
    out = tmp_path / f"out-{executor}-{workers}"
    r = sweep(qs, "--out", out, "--executor", executor, "--workers", workers)
    assert r.returncode == 1, r.stderr  # bad rows: exit 1 at the end, after every good row is done
    assert f"{GOOD} ok" in r.stdout
    assert all(line.startswith("sweep: ") for line in r.stderr.splitlines()), r.stderr  # no Dask log noise
    return _files(out)


@pytest.mark.slow
@pytest.mark.xdist_group("dask")  # one Dask scheduler at a time (see test_sweep_cluster.py)
def test_sweep_same_output_for_any_worker_count_and_executor(tmp_path):
    runs = [("local", "1"), ("local", "2")] + ([("dask", "2")] if dask_available() else [])
    outputs = [_sweep_mixed(tmp_path, executor, workers) for executor, workers in runs]
    assert all(o == outputs[0] for o in outputs[1:])
    _check_mixed_output(outputs[0])


def test_sweep_summary_certificates_and_row_errors(tmp_path):
    """One local worker (the fast suite's share of the test above, which compares executors)."""
    _check_mixed_output(_sweep_mixed(tmp_path, "local", "1"))


def _check_mixed_output(files):
    """The summary rows, the certificates (each verified) and the row errors of the MIXED sweep."""
    assert len(files) == 2 + 6  # summary, index + 6 certificates: row 7 repeats row 1 (row 6 spells row 2's p otherwise)
    lines = files["summary.csv"].decode().splitlines()
    assert lines[0] == ",".join(COLUMNS) and len(lines) == 1 + len(MIXED)
    import csv

    rows = list(csv.DictReader(lines))
    assert [int(r["row"]) for r in rows] == list(range(1, len(MIXED) + 1))
    for r in rows[:GOOD]:
        assert r["status"] == "ok" and r["error"] == ""
        text = files[r["certificate"]].decode()
        assert verify_text(text).ok and r["result"] == headline(text)
    assert rows[6]["certificate"] == rows[0]["certificate"]
    assert rows[5]["certificate"] != rows[1]["certificate"] and rows[5]["result"] == rows[1]["result"]
    eps = json.loads(files[rows[0]["certificate"]])["quantities"]["epsilon"]["upper"]
    assert rows[0]["result"] == f"epsilon <= {eps}"
    errors = [r["error"] for r in rows[GOOD:]]
    assert all(r["status"] == "error" and r["certificate"] == "" for r in rows[GOOD:])
    for err, want in zip(
        errors,
        (
            "--alpha: must be an integer in [2, 256]",
            "unknown command 'frobnicate'",
            "'rho' has no flag --steps",
            "'tables' is not a certifying command",
            "no certificate",
            "cannot read 'x'",
        ),
    ):
        assert want in err, (want, err)


def test_sweep_resumes_only_missing_or_bad_certificates(tmp_path):
    qs = write_csv(tmp_path / "q.csv", MIXED[:GOOD])
    out = tmp_path / "out"
    r = sweep(qs, "--out", out, "--executor", "local", "--workers", "2")
    assert r.returncode == 0, r.stderr
    first = _files(out)
    r = sweep(qs, "--out", out, "--executor", "local", "--workers", "2")
    assert r.returncode == 0 and f"{GOOD} of {GOOD} rows skipped" in r.stderr and "on local" not in r.stderr
    assert _files(out) == first
    certs = sorted(f for f in first if f.endswith(".json"))
    doc = json.loads(first[certs[0]])
    doc["quantities"][next(iter(doc["quantities"]))]["upper"] = "1e-9"  # tampered: does not verify
    (out / certs[0]).write_text(json.dumps(doc))
    (out / certs[1]).unlink()
    (out / "summary.csv").unlink()
    r = sweep(qs, "--out", out, "--executor", "local", "--workers", "1")
    assert r.returncode == 0 and "(2 distinct queries)" in r.stderr, r.stderr
    assert _files(out) == first


@pytest.mark.slow
def test_interrupted_sweep_reruns_only_missing_rows(tmp_path):
    rows = renyi_rows(200)
    qs = write_csv(tmp_path / "q.csv", rows)
    out = tmp_path / "out"
    p = subprocess.Popen(
        [sys.executable, "-m", "certify", "sweep", qs, "--out", str(out), "--executor", "local", "--workers", "1"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        summary = out / "summary.csv"
        if summary.exists() and len(summary.read_text().splitlines()) > 20:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    if p.returncode == 0:
        pytest.skip("the sweep finished before it could be interrupted")
    assert p.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr, stderr
    done = len([f for f in os.listdir(out) if f.endswith(".json")])
    assert 20 <= done < len(rows)
    r = sweep(qs, "--out", out, "--executor", "local", "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert f"{done} of {len(rows)} rows skipped" in r.stderr
    assert f"{len(rows) - done} rows ({len(rows) - done} distinct queries)" in r.stderr
    ref = tmp_path / "ref"
    shutil.copy(qs, tmp_path / "q2.csv")
    assert sweep(tmp_path / "q2.csv", "--out", ref, "--executor", "local", "--workers", "2").returncode == 0
    assert _files(out) == _files(ref)


@pytest.mark.slow  # about 2 CPU s: two sweeps in subprocesses (each reader is tested in-process above)
def test_jsonl_and_csv_give_the_same_certificates(tmp_path):
    rows = MIXED[:5]
    f = tmp_path / "q.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows).replace('"alpha": "8"', '"alpha": 8'))
    a = sweep(f, "--out", tmp_path / "a", "--executor", "local", "--workers", "1")
    b = sweep(write_csv(tmp_path / "q.csv", rows), "--out", tmp_path / "b", "--executor", "local", "--workers", "1")
    assert a.returncode == b.returncode == 0
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


@pytest.mark.slow  # little CPU, but about 5 s of waiting for the connection to fail
def test_unreachable_scheduler_fails_fast_and_writes_nothing(tmp_path):
    if not dask_available():
        pytest.skip("dask is not installed")
    qs = write_csv(tmp_path / "q.csv", MIXED[:2])
    from sweep_helpers import free_port

    t0 = time.monotonic()
    r = sweep(qs, "--out", tmp_path / "out", "--scheduler", f"tcp://127.0.0.1:{free_port()}")
    assert time.monotonic() - t0 < 10
    assert r.returncode == 2 and "--scheduler: cannot reach the Dask scheduler" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
