"""Hostile input: no input crashes, hangs or exhausts memory; files are clean.

Every run must end with exit 0, 2 or 3 (6 where a search stops early), write at most one line on stderr
when it fails (progress lines of long runs aside), never print a traceback, never die from a signal,
finish within a bounded time and write nothing when it fails.

* crash reproducers run in subprocesses (a FLINT abort or a segfault kills the process);
* a property-based test (hypothesis) runs hostile argument strings through ``certify.cli.main``
  in-process (fast);
* the full corpus (every numeric flag of every command x every hostile string) is marked slow and runs
  in a worker subprocess (``python tests/test_hostile.py worker``), so that a signal is caught too.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys

import pytest

from fast_subset import fast_subset

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:  # also when run as a script (the worker)
    sys.path.insert(0, ROOT)

OK_CODES = (0, 2, 3, 6)

#: base command and its numeric flags
BASES = {
    "objpert": (
        ["objpert", "--example", "4.8"],
        ["--n", "--d", "--mu", "--zeta", "--eta", "--noise-multiplier", "--u", "--iterations", "--epsilon", "--target-delta"],
    ),
    "objpert-sigma": (["objpert", "--example", "4.8", "--sigma", "1e-5"], ["--sigma"]),
    "objpert-custom": (
        [
            "objpert",
            "--n",
            "1000",
            "--d",
            "10",
            "--mu",
            "0.1",
            "--zeta",
            "1",
            "--loss",
            "custom",
            "--L1",
            "1",
            "--L2",
            "1",
            "--L3",
            "1",
            "--noise-multiplier",
            "5",
            "--u",
            "6",
            "--epsilon",
            "1",
        ],
        ["--L1", "--L2", "--L3"],
    ),
    "objpert-utility": (["objpert", "--example", "4.8", "--utility"], ["--delta-S", "--comparator-norm", "--beta", "--gradient-norm"]),
    "calibrate": (
        ["calibrate", "--epsilon", "1", "--delta", "1e-7", "--n", "1000000", "--d", "10000"],
        ["--epsilon", "--delta", "--delta-S", "--comparator-norm", "--n", "--d", "--zeta"],
    ),
    "gaussian-benchmark": (["gaussian-benchmark", "--noise-multiplier", "5", "--epsilon", "1"], ["--noise-multiplier", "--epsilon"]),
    "rho": (
        ["rho", "--alpha", "8", "--sampling-rate", "0.01", "--noise-multiplier", "2"],
        ["--alpha", "--sampling-rate", "--noise-multiplier", "--gamma"],
    ),
    "dpsgd": (
        ["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "1000", "--delta", "1e-6"],
        ["--sampling-rate", "--noise-multiplier", "--steps", "--delta", "--alpha", "--gamma"],
    ),
    "dpsgd-batch": (
        [
            "dpsgd",
            "--sampling",
            "fixed-size",
            "--batch-size",
            "600",
            "--dataset-size",
            "60000",
            "--noise-multiplier",
            "2",
            "--steps",
            "1000",
            "--delta",
            "1e-6",
        ],
        ["--batch-size", "--dataset-size"],
    ),
    "dpsgd-wang": (
        [
            "dpsgd",
            "--sampling",
            "fixed-size",
            "--accountant",
            "wang",
            "--alpha",
            "8",
            "--sampling-rate",
            "0.01",
            "--noise-multiplier",
            "2",
            "--steps",
            "1000",
            "--delta",
            "1e-6",
        ],
        ["--sampling-rate", "--noise-multiplier", "--steps", "--delta", "--alpha"],
    ),
    "objpert-rdp": (
        ["objpert-rdp", "--L", "1", "--nu", "2", "--s", "1/4", "--lambda", "1", "--alpha", "3", "--epsilon", "2", "--delta", "1e-6"],
        ["--L", "--nu", "--s", "--lambda", "--alpha", "--epsilon", "--delta"],
    ),
}

HOSTILE = [
    "1e+400",
    "1e-400",
    "1e99999",
    "1e-99999",
    "1e100001",
    "1e-100001",
    "nan",
    "inf",
    "-inf",
    "",
    " ",
    "١٢",
    "١",
    "½",
    "0x10",
    "1/0",
    "--",
    "0",
    "-1",
    "1/3",
    "-1/100",
    "1e-300",
    "1e300",
    "1e-5000",
    "1e5000",
    "1e30",
    "1e-30",
    "1e6",
    "1e-9",
    "1e10",
    "100",
    "0.5",
    "2",
    "1" + "0" * 5000,
    "9" * 20000,
    "1e-100000",
    "1e100000",
    "1e",
    ".",
    "+",
    "1_000",
    "1,5",
    " 7 ",
    "3/-4",
    "1e-7/3",
    "1e99999/1e-99999",
    "\t1\n",
    "1e99999999999999999999",
    "1" * 220001,
]


def corpus() -> list[list[str]]:
    return [base + [f"{flag}={v}"] for base, flags in BASES.values() for flag in flags for v in HOSTILE]


def run_inprocess(argv: list[str], seconds: int = 60) -> tuple[object, str, str]:
    """certify.cli.main(argv) with stdout/stderr captured; (exit code, stdout, stderr); a Python
    exception other than SystemExit propagates (a test failure: it would be a traceback)."""
    from certify import cli

    out, err = io.StringIO(), io.StringIO()

    def alarm(*_):
        raise TimeoutError(f"certify {' '.join(argv)} ran longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = cli.main(argv)
            except SystemExit as e:
                rc = e.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return rc, out.getvalue(), err.getvalue()


_PROGRESS = re.compile(r"^[\w .-]+: .* \(\d+ s\)$")


def _error_lines(err: str) -> list[str]:
    """stderr lines other than the progress lines of long runs ('<what>: <state> (<seconds> s)', every 5 s)."""
    return [line for line in err.strip().splitlines() if line.strip() and not _PROGRESS.match(line.strip())]


def check_outcome(argv, rc, out, err, out_path=None) -> None:
    assert rc in OK_CODES, (argv, rc, err[-500:])
    assert "Traceback" not in out + err, (argv, err[-2000:])
    if rc != 0:
        assert len(_error_lines(err)) <= 1, (argv, err)
        if out_path is not None:
            assert not os.path.exists(out_path), (argv, "a file was written on failure")


def run_cli(args: list[str], timeout: float = 120, cwd: str = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "certify", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


# --------------------------------------------------------------------------------------------
# Reproducers of crashes (subprocesses: a FLINT abort or a segfault kills the process, not the test)
# --------------------------------------------------------------------------------------------
REPRODUCERS = [
    # segfaults
    (["gaussian-benchmark", "--noise-multiplier", "1e6", "--epsilon", "1"], (2,)),
    (["objpert", "--example", "4.8", "--epsilon", "1e6"], (2,)),
    # FLINT aborts "arf_get_fmpq: cannot convert to rational"
    (["objpert", "--example", "4.8", "--iterations", "1e30"], (2,)),
    (["objpert", "--example", "4.8", "--u", "1e10"], (2,)),
    (["objpert", "--example", "4.8", "--epsilon", "1e30"], (2,)),
    (["rho", "--alpha", "8", "--sampling-rate", "0.01", "--noise-multiplier", "1e-9"], (2,)),
    # the hang
    (["gaussian-benchmark", "--noise-multiplier", "1e7", "--epsilon", "1"], (2,)),
    # Python's 4300-digit limit: now computed and printed from the binary exponent
    (["objpert", "--example", "4.8", "--iterations", "520000"], (0,)),
    (["objpert", "--example", "4.8", "--u", "140"], (0,)),
    (["objpert", "--example", "4.8", "--epsilon", "100"], (0,)),
    (["rho", "--alpha", "8", "--sampling-rate", "0.01", "--noise-multiplier", "0.02"], (0,)),
    (["calibrate", "--epsilon", "1e-30", "--delta", "1e-7", "--n", "1000000", "--d", "10000"], (0, 2)),
    # OverflowError in float estimates: computed
    (["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "1e400", "--delta", "1e-6"], (0,)),
    (["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "1000", "--delta", "1e-400"], (0,)),
    # the 15 TiB allocation: refused before any work
    (["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "1e-9", "--steps", "1000", "--delta", "1e-6"], (2,)),
    (
        [
            "dpsgd",
            "--sampling",
            "fixed-size",
            "--accountant",
            "lossless",
            "--sampling-rate",
            "0.01",
            "--noise-multiplier",
            "0.002",
            "--steps",
            "10",
            "--delta",
            "1e-6",
        ],
        (2,),
    ),
    (
        [
            "dpsgd",
            "--sampling",
            "fixed-size",
            "--accountant",
            "wang",
            "--sampling-rate",
            "0.01",
            "--noise-multiplier",
            "1e300",
            "--steps",
            "10",
            "--delta",
            "1e-6",
        ],
        (2,),
    ),
]


# fast suite: one reproducer of each kind of failure (segfault, FLINT abort, hang, digit limit, allocation)
REPRODUCERS_FAST = [REPRODUCERS[i] for i in (0, 2, 6, 7, 14)]


@pytest.mark.parametrize("args,codes", fast_subset(REPRODUCERS, keep=REPRODUCERS_FAST), ids=[" ".join(a)[:60] for a, _ in REPRODUCERS])
def test_issue_reproducers(args, codes, tmp_path):
    out = tmp_path / "cert.json"
    r = run_cli(args + ["--out", str(out)], timeout=120)
    assert r.returncode >= 0, f"killed by signal {-r.returncode}"
    assert r.returncode in codes, (r.returncode, r.stderr[-800:])
    check_outcome(args, r.returncode, r.stdout, r.stderr, str(out))
    if r.returncode == 0:
        assert out.exists()
    else:
        assert r.stderr.startswith("certify: error: ") and r.stdout == ""


def test_tiny_values_printed_from_the_exponent():
    """exp(-10000) ~ 1.1354838653e-4343 and 2^-1000000: beyond Python's 4300-digit limit, printed exactly."""
    from certify.balls import arb, lower_decimal, upper_decimal
    import mpmath

    mpmath.mp.dps = 60
    x = arb(-10000).exp()
    ref = mpmath.e**-10000
    lo, hi = mpmath.mpf(lower_decimal(x)), mpmath.mpf(upper_decimal(x))
    assert lo <= ref <= hi and (hi - lo) / ref < mpmath.mpf("3e-9")
    assert upper_decimal(arb(2) ** -1000000) == "1.010034060e-301030"  # mpmath: 1.0100340591980302247e-301030
    assert lower_decimal(arb(2) ** 1000000) == "9.900656229e301029"
    assert lower_decimal(-(arb(2) ** 1000000)) == "-9.900656230e301029"


@pytest.mark.parametrize(
    "args",
    [
        ["objpert", "--example", "4.8", "--iterations", "520000"],  # rho^(N/2) ~ 1e-8700
        ["gaussian-benchmark", "--noise-multiplier", "1000", "--epsilon", "1"],  # delta ~ 1e-217000
        ["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "1e400", "--delta", "1e-400"],
    ],
)
def test_extreme_but_representable_values_certify_and_verify(args, tmp_path):
    out = str(tmp_path / "c.json")
    rc, o, e = run_inprocess(args + ["--out", out])
    assert rc == 0, e
    assert "e-" in o  # printed in scientific notation from the binary exponent
    rc, o, e = run_inprocess(["verify", out])
    assert rc == 0, (o, e)


def test_values_beyond_the_exact_range_are_refused():
    from certify.balls import InputError, arb, ball_endpoints, ball_to_json, certain_ceil, upper_decimal

    for x in (arb(-(10**12)).exp(), arb(2) ** (2**21)):
        for f in (upper_decimal, ball_to_json, ball_endpoints, certain_ceil):
            with pytest.raises(InputError, match="outside the range"):
                f(x)


@pytest.mark.parametrize("text", ["1e100001", "1e-100001", "1" * 220001, "1e99999999999999999", "١٢", "nan", "inf", "0x10", "1/0", "", "--", "1_000"])
def test_exact_refuses_with_a_message(text):
    from certify.balls import InputError, exact

    with pytest.raises(InputError, match="^--x: "):
        exact(text, "--x")


def test_integers_are_bounded():
    from certify.balls import InputError, exact_int

    assert exact_int("1e3999", "--n") == 10**3999
    with pytest.raises(InputError, match="below 10\\^4000"):
        exact_int("1e4000", "--n")


def test_noise_range_of_the_dpsgd_problem():
    from certify.balls import InputError, fmpq
    from certify.dpsgd.problem import Problem, max_alpha, parse_sigma

    assert parse_sigma("0.002") == fmpq(1, 500)
    with pytest.raises(InputError, match="--noise-multiplier: must be >= 1/500"):
        parse_sigma("0.0019")
    assert max_alpha(fmpq(1, 500)) == 2 and max_alpha(fmpq(2)) == 256
    Problem(256, fmpq(1, 100), fmpq(32, 1000))  # (alpha - 1) Delta^2 = 996,094 <= 10^6
    with pytest.raises(InputError, match="at alpha = 256"):
        Problem(256, fmpq(1, 100), fmpq(31, 1000))


# --------------------------------------------------------------------------------------------
# Property-based: hostile strings through every numeric flag (in-process, fast commands)
# --------------------------------------------------------------------------------------------
FAST_BASES = ["gaussian-benchmark", "rho", "dpsgd", "objpert-rdp", "calibrate", "objpert-custom", "dpsgd-batch"]


def test_hostile_strings_property(tmp_path):
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies
    value = st.one_of(
        st.sampled_from(HOSTILE),
        st.integers(min_value=-(10**50), max_value=10**50).map(str),
        st.builds(lambda m, e: f"{m}e{e}", st.integers(1, 999), st.integers(-120000, 120000)),
        st.text(alphabet="0123456789eE+-./ x٣", max_size=12),
    )
    pairs = [(name, flag) for name in FAST_BASES for flag in BASES[name][1]]
    out = str(tmp_path / "cert.json")

    @hyp.settings(max_examples=70, deadline=None, derandomize=True, suppress_health_check=list(hyp.HealthCheck))
    @hyp.given(pair=st.sampled_from(pairs), v=value)
    def prop(pair, v):
        name, flag = pair
        argv = BASES[name][0] + [f"{flag}={v}", "--out", out]
        if os.path.exists(out):
            os.unlink(out)
        rc, o, e = run_inprocess(argv, seconds=60)
        check_outcome(argv, rc, o, e, out)

    prop()


# --------------------------------------------------------------------------------------------
# Files: checked before any work, one line and exit 2, nothing left behind; umask mode; PNG bytes
# --------------------------------------------------------------------------------------------
GB = ["gaussian-benchmark", "--noise-multiplier", "5", "--epsilon", "1"]


@pytest.mark.parametrize("where", ["dir", "missing", "proc", "under-file"])
def test_bad_out_is_one_line_exit_2(where, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    path = {"dir": str(tmp_path), "missing": str(tmp_path / "no" / "c.json"), "proc": "/proc/certify-x.json", "under-file": str(f / "c.json")}[where]
    rc, o, e = run_inprocess(GB + ["--out", path])
    assert rc == 2 and len(e.strip().splitlines()) == 1 and e.startswith("certify: error: --out: "), e
    assert o == ""
    assert sorted(os.listdir(tmp_path)) == ["file"]


def test_bad_report_out_dir_cache_dir_fail_before_work(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    cases = [
        (["proofs", "--report", str(tmp_path)], "--report"),
        (["plot", "--figure", "5", "--out-dir", str(f)], "--out-dir"),
        (["plot", "--figure", "5", "--out-dir", "/proc/certify-figs"], "--out-dir"),
        (["tables", "--paper", "bok", "--cache-dir", str(f / "cache")], "--cache-dir"),
        (["tables", "--paper", "bok", "--cache-dir", "/proc/certify-cache"], "--cache-dir"),
        (["rho", "--alpha", "8", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--cache-dir", str(f)], "--cache-dir"),
        (["tables", "--paper", "bok", "--tables-dir", str(tmp_path / "none")], "--tables-dir"),
    ]
    import time

    for argv, flag in cases:
        t = time.perf_counter()
        rc, o, e = run_inprocess(argv, seconds=30)
        assert rc == 2 and e.startswith(f"certify: error: {flag}: ") and len(e.strip().splitlines()) == 1, (argv, e)
        assert time.perf_counter() - t < 5, argv
    assert sorted(os.listdir(tmp_path)) == ["file"]


def test_written_files_get_the_umask_mode(tmp_path):
    from certify.cli import write_atomically

    old = os.umask(0o022)
    try:
        rc, _, e = run_inprocess(GB + ["--out", str(tmp_path / "c.json")])
        assert rc == 0, e
        assert (tmp_path / "c.json").stat().st_mode & 0o777 == 0o644
        rc, _, e = run_inprocess(
            ["rho", "--alpha", "8", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--cache-dir", str(tmp_path / "cache")]
        )
        assert rc == 0, e
        cached = list((tmp_path / "cache").iterdir())
        assert cached and all(f.stat().st_mode & 0o777 == 0o644 for f in cached), cached
        os.umask(0o027)
        write_atomically(str(tmp_path / "b.bin"), b"\x00\x01")
        assert (tmp_path / "b.bin").stat().st_mode & 0o777 == 0o640
        assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    finally:
        os.umask(old)
    assert sorted(os.listdir(tmp_path)) == ["b.bin", "c.json", "cache"]  # no temporary left behind


def test_write_atomically_cleans_up_on_error(tmp_path, monkeypatch):
    from certify.balls import InputError
    from certify.cli import write_atomically

    def boom(*a):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(InputError, match="--out: cannot write .*No space left"):
        write_atomically(str(tmp_path / "c.json"), "{}")
    assert os.listdir(tmp_path) == []


def test_png_bytes_are_reproducible(tmp_path):
    pytest.importorskip("matplotlib")
    from certify.dpsgd.plots import _plt, _save

    plt = _plt()
    blobs = []
    for name in ("a.png", "b.png"):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3], [3, 1, 2])
        _save(fig, str(tmp_path / name))
        plt.close(fig)
        blobs.append((tmp_path / name).read_bytes())
    assert blobs[0] == blobs[1]
    assert b"Software" not in blobs[0] and b"Matplotlib" not in blobs[0]


_LOSSLESS_SCRIPT = """
import sys
from certify.dpsgd.baselines.lossless import epsilon_lossless
Ts = [250, 1000, 4000]
for T in (Ts if sys.argv[1] == "fwd" else Ts[::-1]):
    print(T, repr(epsilon_lossless(0.0025, 1.0, T, 1e-8)))
"""


@pytest.mark.slow
def test_lossless_estimate_is_deterministic():
    """Tables 4-6 (p = 0.0025, delta = 1e-8): the float PLD estimate is bit-identical across fresh
    processes and orders of composition (the lru caches hold the one-step PLD, never a mutated one)."""
    pytest.importorskip("dp_accounting")
    runs = []
    for order in ("fwd", "rev", "fwd"):
        r = subprocess.run([sys.executable, "-c", _LOSSLESS_SCRIPT, order], cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-1000:]
        runs.append(sorted(r.stdout.splitlines(), key=lambda line: int(line.split()[0])))
    assert runs[0] == runs[1] == runs[2]
    assert [line.split()[1][:6] for line in runs[0]] == ["7.1057", "8.8476", "12.531"]  # Table 4, sigma = 1


@pytest.mark.slow
def test_figure_is_byte_reproducible(tmp_path):
    """`certify plot --figure 4` twice (with and without a cache): identical PNG bytes, umask mode."""
    pytest.importorskip("matplotlib")
    blobs = []
    for name, cache in (("a", str(tmp_path / "cache")), ("b", "")):
        r = run_cli(["plot", "--figure", "4", "--out-dir", str(tmp_path / name), "--cache-dir", cache], timeout=600)
        assert r.returncode == 0, r.stderr[-1000:]
        blobs.append((tmp_path / name / "bok_2026_figure4.png").read_bytes())
    assert blobs[0] == blobs[1] and blobs[0].startswith(b"\x89PNG")


def test_progress_lines_without_a_terminal(monkeypatch):
    from certify.cli import Progress

    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    p = Progress("search", every=0.0)
    p.update("N = 5")
    p.update("N = 6")
    assert err.getvalue().splitlines()[0].startswith("search: N = 5")
    assert len(err.getvalue().splitlines()) == 2


# --------------------------------------------------------------------------------------------
# The full corpus (slow): every numeric flag of every command x every hostile string
# --------------------------------------------------------------------------------------------
def _worker(names: list[str]) -> None:
    """Run the corpus of ``names`` in this process; one JSON line per case (a signal shows as a missing end)."""
    for name in names:
        base, flags = BASES[name]
        for flag in flags:
            for v in HOSTILE:
                argv = base + [f"{flag}={v}"]
                try:
                    rc, o, e = run_inprocess(argv, seconds=90)
                    problem = None
                    try:
                        check_outcome(argv, rc, o, e)
                    except AssertionError as err:
                        problem = str(err)[:400]
                except Exception as err:  # a traceback or the time limit
                    problem = f"{type(err).__name__}: {str(err)[:300]}"
                print(json.dumps({"argv": argv[-1][:80], "name": name, "problem": problem}), flush=True)
    print(json.dumps({"end": True}), flush=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BASES))
def test_full_corpus(name):
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "worker", name], cwd=ROOT, capture_output=True, text=True, timeout=3600)
    lines = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert r.returncode == 0 and lines and lines[-1] == {"end": True}, (r.returncode, lines[-1:], r.stderr[-1500:])
    cases = lines[:-1]
    assert len(cases) == len(BASES[name][1]) * len(HOSTILE)
    bad = [c for c in cases if c["problem"]]
    assert not bad, bad[:5]


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "worker":
    _worker(sys.argv[2:] or sorted(BASES))
