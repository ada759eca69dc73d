"""Hostile files: every file argument of every command, every output path, empty values, caches and sweep reruns.

Every input file argument (certificate, claim, schedule, Opacus history, sweep queries) is given as a directory,
a FIFO without a writer, a link to /dev/zero, JSON nested 100,000 deep, bytes that are not UTF-8 (an encoded lone
surrogate), a JSON lone-surrogate escape and a repeated key; every output option as /dev/null, a FIFO and a
directory; every run must end with exit 2, exactly one stderr line naming the flag, no traceback, no file left
behind and no process left, within a time limit. The in-process runs (fast) go through ``certify.cli.main`` with
an alarm; the same matrix runs in subprocesses in the slow suite (a hang or a crash kills only the subprocess).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time

import pytest

from fast_subset import fast_subset
from test_hostile import ROOT, run_inprocess

from certify.balls import InputError, fmpq
from certify.inputfile import MAX_DEPTH, json_depth_exceeds, loads_strict, read_bytes, read_text

TIMEOUT = 20  # seconds: a hang is a failure

#: every input file argument: (name, argv with {F} for the file, the flag the error must name)
INPUTS = [
    ("verify", ["verify", "{F}"], ("FILE", "certificate")),
    ("audit", ["audit", "{F}"], ("CLAIM",)),
    ("schedule", ["dpsgd", "--schedule", "{F}", "--delta", "1e-5"], ("--schedule",)),
    ("opacus", ["dpsgd", "--opacus-history", "{F}", "--delta", "1e-5"], ("--opacus-history",)),
    ("sweep", ["sweep", "{F}", "--out", "{D}/out"], ("QUERIES",)),
]


def _deep(n: int = 100_000) -> str:
    return "[" * n + "]" * n


#: hostile file kinds: name -> how to make it at a path (None: a special file made by _make)
KINDS = {
    "directory": None,
    "fifo": None,
    "dev-zero-link": None,
    "deep": _deep().encode(),
    "deep-object": ('{"a":' * 100_000 + "1" + "}" * 100_000).encode(),
    "not-utf8": b'{"title": "\xff\xfe"}\n',
    "encoded-surrogate": b'{"title": "\xed\xa0\x80"}\n',
    "surrogate-escape": b'{"command": "rho", "title": "\\ud800"}\n',
    "duplicate-key": b'{"command": "rho", "command": "dpsgd"}\n',
}


def _make(kind: str, path: str) -> None:
    if kind == "directory":
        os.mkdir(path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero-link":
        os.symlink("/dev/zero", path)
    else:
        with open(path, "wb") as fh:
            fh.write(KINDS[kind])


def _cases():
    out = []
    for name, argv, flags in INPUTS:
        for kind in KINDS:
            if name == "verify" and kind in ("surrogate-escape", "duplicate-key"):
                continue  # certificate.load's own checks (the lead's), not this reader's
            if name == "sweep" and kind in ("surrogate-escape", "duplicate-key"):
                continue  # a bad JSON Lines row is reported on its summary row (below), not a file error
            out.append((name, argv, flags, kind))
    return out


CASES = _cases()
IDS = [f"{c[0]}-{c[3]}" for c in CASES]


def _argv(argv, path, d):
    return [a.replace("{F}", path).replace("{D}", d) for a in argv]


def _listing(d) -> set[str]:
    return {os.path.relpath(os.path.join(r, f), d) for r, ds, fs in os.walk(d) for f in fs + ds}


def _check_refusal(rc, out, err, flags, before, after):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2, (rc, err)
    assert "Traceback" not in out + err
    assert len(lines) == 1, err
    assert any(f"error: {f}" in lines[0] or f"error: argument {f}" in lines[0] for f in flags), lines[0]
    assert after == before, after - before  # nothing written, no temporary file left


@pytest.mark.parametrize("name,argv,flags,kind", CASES, ids=IDS)
def test_hostile_input_file_inprocess(name, argv, flags, kind, tmp_path):
    path = str(tmp_path / "input.json")
    _make(kind, path)
    before = _listing(tmp_path)
    t0 = time.monotonic()
    rc, out, err = run_inprocess(_argv(argv, path, str(tmp_path)), seconds=TIMEOUT)
    assert time.monotonic() - t0 < TIMEOUT
    _check_refusal(rc, out, err, flags, before, _listing(tmp_path))
    if kind == "fifo":
        assert stat.S_ISFIFO(os.stat(path).st_mode)


def _run(args, timeout=TIMEOUT, **kw):
    return subprocess.run([sys.executable, "-m", "certify", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, **kw)


FAST_SUBPROCESS = [c for c in CASES if (c[0], c[3]) in (("verify", "fifo"), ("schedule", "dev-zero-link"))]


@pytest.mark.parametrize("name,argv,flags,kind", fast_subset(CASES, keep=FAST_SUBPROCESS), ids=IDS)
def test_hostile_input_file_subprocess(name, argv, flags, kind, tmp_path):
    """The same in a subprocess (a hang or a crash of the reader would kill only it): exit 2 within the limit."""
    path = str(tmp_path / "input.json")
    _make(kind, path)
    before = _listing(tmp_path)
    r = _run(_argv(argv, path, str(tmp_path)))
    _check_refusal(r.returncode, r.stdout, r.stderr, flags, before, _listing(tmp_path))


def test_sweep_row_with_a_lone_surrogate_or_a_repeated_key_is_a_row_error(tmp_path):
    from certify.sweep.queries import read_queries

    f = tmp_path / "q.jsonl"
    good = b'{"command": "gaussian-benchmark", "noise_multiplier": "5", "epsilon": "1"}\n'
    f.write_bytes(good + KINDS["surrogate-escape"] + KINDS["duplicate-key"] + b'{"command": "rho", "alpha": ' + _deep(1000).encode() + b"}\n")
    ok, a, b, c = read_queries(str(f))
    assert ok.error is None
    assert "lone surrogate" in a.error and "duplicate key" in b.error and "nested deeper than 64" in c.error


# ------------------------------------------------------------------------------------------------ the reader
def test_json_depth_scan_is_exact_at_the_limit():
    for depth in (1, MAX_DEPTH - 1, MAX_DEPTH):
        text = '{"a": ' * depth + "[]" + "}" * depth  # depth + 1 levels
        assert json_depth_exceeds(text) == (depth + 1 > MAX_DEPTH)
        assert json_depth_exceeds("[" * depth + "]" * depth) is False
    assert json_depth_exceeds("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert not json_depth_exceeds('["' + "[" * 1000 + '"]')  # brackets inside a string do not count
    assert not json_depth_exceeds('["\\"' + "[" * 1000 + '"]')  # nor after an escaped quote
    assert json_depth_exceeds("[" * 100_000)  # unclosed: refused before the parser sees it
    assert not json_depth_exceeds("[" * 10)  # ... but a short truncated file is left to the parser's message
    t0 = time.process_time()
    assert json_depth_exceeds(_deep(300_000))
    assert time.process_time() - t0 < 1


def test_loads_strict_refusals_name_the_parameter():
    cases = [
        ('{"a": 1, "a": 2}', "duplicate key"),
        ('{"a": {"b": 1, "b": 1}}', "duplicate key"),
        ('["\\ud800"]', "lone surrogate"),
        ('{"\\udfff": 1}', "lone surrogate"),
        ("[NaN]", "NaN is not a number"),
        ("[Infinity]", "Infinity is not a number"),
        ("[1,", "not valid JSON"),
        (_deep(65), "nested deeper than 64"),
    ]
    for text, want in cases:
        with pytest.raises(InputError) as e:
            loads_strict(text, "--schedule")
        assert e.value.parameter == "--schedule" and want in e.value.message, (text[:20], e.value)
    assert loads_strict('{"a": ["\\ud83d\\ude00", 0.1]}', "x", parse_float=str) == {"a": ["\U0001f600", "0.1"]}
    assert loads_strict(_deep(64), "x") is not None


def test_read_bytes_counts_the_size_while_reading(tmp_path):
    f = tmp_path / "big.json"
    f.write_bytes(b" " * 1001)
    with pytest.raises(InputError, match="larger than 1000 bytes"):
        read_bytes(str(f), "--schedule", 1000)
    assert read_bytes(str(f), "--schedule", 1001) == b" " * 1001
    with pytest.raises(InputError, match="character device"):
        read_bytes("/dev/zero", "--schedule", 1000)
    with pytest.raises(InputError, match="empty file name"):
        read_bytes("", "--schedule")
    with pytest.raises(InputError, match="NUL character"):
        f.write_bytes(b"a\x00b")
        read_text(str(f), "QUERIES")
    with pytest.raises(InputError, match="cannot read"):
        read_bytes(str(tmp_path / "missing"), "QUERIES")


# ------------------------------------------------------------------------------------------------ outputs
GAUSS = ["gaussian-benchmark", "--noise-multiplier", "5", "--epsilon", "1"]
OUTPUTS = [  # (argv before the output path, the flag)
    (GAUSS + ["--out"], "--out"),
    (["calibrate-dpsgd", "--epsilon", "1", "--delta", "1e-5", "--steps", "100", "--sampling-rate", "0.01", "--out-fail"], "--out-fail"),
    (["audit", os.path.join(ROOT, "examples", "claims", "opacus_mnist.json"), "--evidence"], "--evidence"),
    (["proofs", "--paper", "bok", "--report"], "--report"),
]
SPECIALS = ["/dev/null", "fifo", "directory"]


@pytest.mark.parametrize("argv,flag", OUTPUTS, ids=[f for _, f in OUTPUTS])
@pytest.mark.parametrize("special", SPECIALS)
def test_special_output_path_is_refused_before_any_work(argv, flag, special, tmp_path):
    path = special if special.startswith("/") else str(tmp_path / special)
    if special == "fifo":
        os.mkfifo(path)
    elif special == "directory":
        os.mkdir(path)
    mode = os.stat(path).st_mode
    before = _listing(tmp_path)
    t0 = time.process_time()
    rc, out, err = run_inprocess([*argv, path], seconds=TIMEOUT)
    assert time.process_time() - t0 < 1  # refused before the work
    _check_refusal(rc, out, err, (flag,), before, _listing(tmp_path))
    assert os.stat(path).st_mode == mode  # still the device / FIFO / folder it was


def test_all_outputs_are_checked_before_any_is_written(tmp_path):
    ok = tmp_path / "ok.json"
    argv = ["calibrate-dpsgd", "--epsilon", "1", "--delta", "1e-5", "--steps", "100", "--sampling-rate", "0.01"]
    rc, out, err = run_inprocess([*argv, "--out", str(ok), "--out-fail", "/proc/x.json"], seconds=TIMEOUT)
    _check_refusal(rc, out, err, ("--out-fail",), set(), _listing(tmp_path))
    assert not ok.exists()


def test_write_atomically_never_renames_over_a_special_file(tmp_path):
    from certify.cli import write_atomically

    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="exists and is a FIFO"):
        write_atomically(str(fifo), "x", "--out")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and _listing(tmp_path) == {"f"}
    with pytest.raises(InputError, match="character device"):
        write_atomically("/dev/null", "x", "--out")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_sweep_tables_and_plot_outputs(tmp_path):
    qs = tmp_path / "q.csv"
    qs.write_text("command,noise_multiplier,epsilon\ngaussian-benchmark,5,1\n")
    (tmp_path / "file").write_text("")
    rc, out, err = run_inprocess(["sweep", str(qs), "--out", str(tmp_path / "file")], seconds=TIMEOUT)
    _check_refusal(rc, out, err, ("--out",), _listing(tmp_path), _listing(tmp_path))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    os.mkfifo(out_dir / "summary.csv")
    before = _listing(tmp_path)
    rc, out, err = run_inprocess(["sweep", str(qs), "--out", str(out_dir), "--executor", "local"], seconds=TIMEOUT)
    _check_refusal(rc, out, err, ("--out",), before, _listing(tmp_path))
    tables = tmp_path / "tables"
    shutil.copytree(os.path.join(ROOT, "tables", "published"), tables / "published")
    os.mkfifo(tables / "bok_2026_table1.csv")
    before = _listing(tmp_path)
    t0 = time.process_time()
    rc, out, err = run_inprocess(["tables", "--paper", "bok", "--tables-dir", str(tables), "--cache-dir", ""], seconds=TIMEOUT)
    _check_refusal(rc, out, err, ("--tables-dir",), before, _listing(tmp_path))
    figures = tmp_path / "figures"
    figures.mkdir()
    os.mkfifo(figures / "bok_2026_figure2.png")
    rc, out, err = run_inprocess(["plot", "--figure", "2", "--out-dir", str(figures), "--cache-dir", ""], seconds=TIMEOUT)
    _check_refusal(rc, out, err, ("--out-dir",), before | {"figures", "figures/bok_2026_figure2.png"}, _listing(tmp_path))
    assert time.process_time() - t0 < 2


EMPTY = [
    (GAUSS + ["--out", ""], "--out"),
    (["sweep", "q.csv", "--out", ""], "--out"),
    (["sweep", "q.csv", "--out", "o", "--scheduler", ""], "--scheduler"),
    (["tables", "--check", "--scheduler", ""], "--scheduler"),
    (
        ["dpsgd", "--accountant", "pld", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "10", "--delta", "1e-5", "--grid", ""],
        "--grid",
    ),
    (["audit", "x.json", "--evidence", ""], "--evidence"),
    (["proofs", "--report", ""], "--report"),
    (["verify", ""], "FILE"),
]


@pytest.mark.parametrize("argv,flag", EMPTY, ids=[" ".join(a)[:40] for a, _ in EMPTY])
def test_empty_values_are_refused_not_read_as_the_default(argv, flag, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_inprocess(argv, seconds=TIMEOUT)
    _check_refusal(rc, out, err, (flag,), set(), _listing(tmp_path))


# ------------------------------------------------------------------------------------------------ caches
BAD_WITNESSES = {
    "fifo": None,
    "directory": None,
    "deep": _deep().encode(),
    "nested-lists": json.dumps({"method": "bnb", "leaves": [[[["0"]], "1/2"]], "points": [[1]], "curvature": [{"thetas": [[[1]]]}]}).encode(),
    "wrong-types": json.dumps({"method": 7, "leaves": "x", "u_lower": {"a": 1}}).encode(),
    "duplicate-key": b'{"method": "bnb", "method": "bnb"}',
    "not-utf8": b"\xff",
}


@pytest.mark.parametrize("kind", BAD_WITNESSES)
def test_bad_rho_cache_entry_is_discarded_with_one_warning(kind, tmp_path, capsys):
    from certify.balls import ctx
    from certify.dpsgd import accountant
    from certify.dpsgd.problem import Problem

    prob = Problem(8, fmpq(1, 100), fmpq(2))
    accountant.clear_memo()
    clean = accountant.certify_rho(prob).certificate.dumps()
    accountant.clear_memo()
    path = os.path.join(str(tmp_path), f"rho-{accountant._disk_key(prob, None, ctx.prec)}.json")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        os.mkdir(path)
    else:
        with open(path, "wb") as fh:
            fh.write(BAD_WITNESSES[kind])
    capsys.readouterr()
    run = accountant.certify_rho(prob, cache_dir=str(tmp_path))
    err = capsys.readouterr().err
    assert run.certificate.dumps() == clean
    warnings = [ln for ln in err.splitlines() if "warning" in ln]
    assert len(warnings) == 1 and ("discarded" in warnings[0] or "rejected" in warnings[0]), err
    accountant.clear_memo()


# ------------------------------------------------------------------------------------------------ sweep reruns
@pytest.mark.slow  # about 3 CPU s: three sweeps in subprocesses
def test_sweep_rerun_recomputes_a_certificate_that_is_not_its_rows_own(tmp_path):
    from sweep_helpers import write_csv

    rows = [
        {"command": "gaussian-benchmark", "noise_multiplier": "5", "epsilon": "1"},
        {"command": "gaussian-benchmark", "noise_multiplier": "3", "epsilon": "1"},
        {
            "command": "dpsgd",
            "sampling": "fixed-size",
            "sampling_rate": "0.01",
            "noise_multiplier": "2",
            "steps": "100",
            "delta": "1e-5",
            "alpha": "8",
        },
    ]
    qs = write_csv(tmp_path / "q.csv", rows)
    out = tmp_path / "out"
    args = [qs, "--out", str(out), "--executor", "local", "--workers", "1"]
    r = _run(["sweep", *args], timeout=120)
    assert r.returncode == 0, r.stderr
    first = {f: (out / f).read_bytes() for f in os.listdir(out)}
    import csv

    summary = list(csv.DictReader((out / "summary.csv").read_text().splitlines()))
    assert [s["contract"] for s in summary] == ["", "", "fixed-size + replace-one"]
    a, b = summary[0]["certificate"], summary[1]["certificate"]
    (out / a).write_bytes(first[b])  # swap two rows' certificates: both still verify
    (out / b).write_bytes(first[a])
    r = _run(["sweep", *args], timeout=120)
    assert r.returncode == 0, r.stderr
    recomputed = [ln for ln in r.stderr.splitlines() if "recomputing" in ln]
    assert len(recomputed) == 2 and all("not recorded" in ln or "other inputs" in ln or "records" in ln for ln in recomputed), r.stderr
    assert "1 of 3 rows skipped" in r.stderr and "2 rows (2 distinct queries)" in r.stderr
    assert {f: (out / f).read_bytes() for f in os.listdir(out)} == first
    # an index edited to match the swapped file: the row's own flags still tell
    (out / a).write_bytes(first[b])
    index = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    from certify.sweep.commands import inputs_digest

    for e in index:
        if e["certificate"] == a:
            e["inputs"] = inputs_digest(json.loads(first[b]))
    (out / "index.jsonl").write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in index))
    r = _run(["sweep", *args], timeout=120)
    assert r.returncode == 0 and "records noise_multiplier = 3, the row asks for 5" in r.stderr, r.stderr
    assert {f: (out / f).read_bytes() for f in os.listdir(out)} == first
