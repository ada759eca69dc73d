"""Every numeric flag of every command against hostile values: a value that cannot be read (1/0, 0/0, '', nan, inf,
Arabic-Indic digits) is refused with exit 2 and exactly one stderr line naming the flag and its admissible range;
an extreme one (1e400, 1e-400, -0, a 100,001-digit number) ends with a result, a documented refusal (exit 2, one
line naming a parameter) or exit 6, never a traceback, an "undecided" or a long run. In-process (cli.main)."""

from __future__ import annotations

import io
import json
import resource
import signal
from contextlib import redirect_stderr, redirect_stdout

import pytest

from certify import cli, verify
from fast_subset import fast_subset

UNREADABLE = ["1/0", "0/0", "", "nan", "inf", "\u0661\u0662"]
EXTREME = ["1e400", "1e-400", "-0", "1" + "0" * 100000]

#: (command line of a cheap valid run, its numeric flags)
BASES = {
    "objpert": (["objpert", "--example", "4.8"], ["--n", "--d", "--mu", "--zeta", "--eta", "--noise-multiplier", "--u", "--iterations", "--epsilon"]),
    "objpert-utility": (["objpert", "--example", "4.8", "--utility"], ["--delta-S", "--comparator-norm", "--beta", "--gradient-norm"]),
    "objpert-custom": (
        ["objpert", "--n", "1000000", "--d", "10000", "--mu", "1/100", "--zeta", "1", "--loss", "custom", "--L1", "1", "--L2", "1/4", "--L3", "1/10"]
        + ["--sigma", "1/100", "--u", "5", "--epsilon", "1"],
        ["--L1", "--L2", "--L3", "--sigma"],
    ),
    "calibrate": (
        ["calibrate", "--epsilon", "1/2", "--delta", "1e-6", "--n", "200000", "--d", "50"],
        ["--epsilon", "--delta", "--delta-S", "--comparator-norm", "--n", "--d", "--zeta"],
    ),
    "gaussian-benchmark": (["gaussian-benchmark", "--noise-multiplier", "5", "--epsilon", "1"], ["--noise-multiplier", "--epsilon"]),
    "rho": (
        ["rho", "--alpha", "8", "--sampling-rate", "1/100", "--noise-multiplier", "2"],
        ["--alpha", "--sampling-rate", "--noise-multiplier", "--gamma", "--max-evaluations", "--max-seconds"],
    ),
    "rho-batch": (
        ["rho", "--alpha", "8", "--batch-size", "6", "--dataset-size", "600", "--noise-multiplier", "2"],
        ["--batch-size", "--dataset-size"],
    ),
    "dpsgd": (
        ["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "1/100", "--noise-multiplier", "2", "--steps", "1000", "--delta", "1e-6"],
        ["--steps", "--delta", "--alpha", "--sampling-rate", "--noise-multiplier", "--gamma", "--max-evaluations", "--max-seconds"],
    ),
    "dpsgd-pld": (
        [
            "dpsgd",
            "--sampling",
            "fixed-size",
            "--accountant",
            "pld",
            "--sampling-rate",
            "1/100",
            "--noise-multiplier",
            "2",
            "--steps",
            "100",
            "--delta",
            "1e-6",
            "--grid",
            "1e-2",
        ],
        ["--grid", "--steps", "--sampling-rate", "--noise-multiplier", "--delta"],
    ),
    "dpsgd-renyi": (
        ["dpsgd", "--accountant", "renyi", "--sampling", "poisson", "--adjacency", "add-remove", "--sampling-rate", "1/100"]
        + ["--noise-multiplier", "2", "--steps", "100", "--delta", "1e-6"],
        ["--steps", "--sampling-rate", "--noise-multiplier", "--delta", "--alpha"],
    ),
    "objpert-rdp": (
        ["objpert-rdp", "--L", "1", "--nu", "2", "--s", "1/4", "--lambda", "1", "--alpha", "3"],
        ["--L", "--nu", "--s", "--lambda", "--alpha", "--epsilon", "--delta"],
    ),
    "calibrate-dpsgd": (
        ["calibrate-dpsgd", "--epsilon", "1", "--delta", "1e-5", "--steps", "100", "--sampling-rate", "1/100"],
        ["--epsilon", "--delta", "--steps", "--sampling-rate"],
    ),
    "verify": (["verify", "CERT"], ["--precision"]),
    "tables": (["tables", "--check", "--tables-dir", "MISSING"], ["--jobs"]),
    "plot": (["plot", "--out-dir", "MISSING"], ["--figure"]),
    "sweep": (["sweep", "MISSING.csv", "--out", "MISSING"], ["--workers"]),
}

CASES = [(base, flag, value) for base, (_, flags) in BASES.items() for flag in flags for value in UNREADABLE + EXTREME]
#: the fast suite: every flag with two unreadable values (milliseconds each), all of them for the integer flags and
#: --sampling-rate, the extremes of a few flags
ALL_UNREADABLE = {"--precision", "--jobs", "--workers", "--figure", "--max-evaluations", "--sampling-rate"}
FAST = (
    [c for c in CASES if c[2] in ("", "0/0") or (c[2] in UNREADABLE and c[1] in ALL_UNREADABLE)]
    + [("dpsgd-pld", f, v) for f in ("--grid", "--steps", "--sampling-rate", "--noise-multiplier") for v in EXTREME]
    + [("gaussian-benchmark", "--noise-multiplier", v) for v in EXTREME]
    + [("objpert", "--mu", v) for v in EXTREME]
)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(argv: list[str], seconds: int = 60) -> tuple[object, str]:
    """cli.main in this process: (exit status, stderr); an argparse refusal is a SystemExit(2)."""
    err = io.StringIO()

    def alarm(*_):
        raise TimeoutError(f"certify {' '.join(a[:20] for a in argv)} ran past {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            try:
                code = cli.main(argv)
            except SystemExit as e:
                code = e.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return code, err.getvalue()


@pytest.fixture(scope="module")
def cert_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("ranges") / "cert.json"
    path.write_text(verify.spec_for("dpsgd/renyi-poisson").example().dumps())
    return str(path)


def _id(x) -> str:
    return x if len(x) <= 20 else f"{len(x)}-digits"


@pytest.mark.parametrize("base,flag,value", fast_subset(CASES, keep=FAST), ids=_id)
def test_hostile_value(base, flag, value, cert_path, tmp_path):
    argv = [cert_path if a == "CERT" else str(tmp_path / a) if a.startswith("MISSING") else a for a in BASES[base][0]]
    if flag in argv:
        argv[argv.index(flag) + 1] = value
    else:
        argv += [flag, value]
    t = _cpu()
    code, err = run(argv)
    lines = err.strip().splitlines()
    assert "Traceback" not in err and "undecided" not in err, err[-500:]
    if value in UNREADABLE:
        assert code == 2 and len(lines) == 1, err
        assert flag in lines[0] and "must be" in lines[0], lines[0]  # the flag and its admissible range
    else:
        assert code in (0, 2, 6), (code, err[-300:])
        if code == 2:
            assert len(lines) == 1 and "--" in lines[0], err
    assert _cpu() - t < 20


def test_integer_flags_take_ascii_digits_only():
    from certify.balls import InputError, parse_int

    assert parse_int("64", "--jobs", 1, 64) == 64 and parse_int("1e2", "--precision", 53, 65536) == 100
    for text in ["\u0661\u0660\u0660", "\uff11\uff10", "\u0967\u0966", "1_0", " ", "0x10", "10.5"]:
        with pytest.raises(InputError) as err:
            parse_int(text, "--jobs", 1, 64)
        assert err.value.parameter == "--jobs" and "must be an integer in [1, 64]" in err.value.message


def test_empty_grid_is_refused_never_the_default(capsys):
    args = [
        "dpsgd",
        "--sampling",
        "fixed-size",
        "--accountant",
        "pld",
        "--sampling-rate",
        "1/100",
        "--noise-multiplier",
        "1",
        "--steps",
        "10",
        "--delta",
        "1e-5",
    ]
    code, err = run(args + ["--grid", ""])
    assert code == 2 and "--grid" in err and "empty value" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv,flag",
    [
        (["gaussian-benchmark", "--noise-multiplier", "1e400", "--epsilon", "1"], "--epsilon"),  # was exit 3 (undecided)
        (["objpert", "--example", "4.8", "--mu", "1e-99999"], "--mu"),  # was exit 3; "needs N >= None" with --iterations
        (["objpert-rdp", "--L", "1", "--nu", "2500", "--s", "1/4", "--lambda", "1", "--epsilon", "1"], "--epsilon"),  # was "inputs: ..."
        (["objpert-rdp", "--L", "1", "--nu", "1e-400", "--s", "1/4", "--lambda", "1", "--delta", "1e-5"], "--nu"),
        (
            [
                "dpsgd",
                "--sampling",
                "fixed-size",
                "--accountant",
                "pld",
                "--sampling-rate",
                "1/100",
                "--noise-multiplier",
                "1",
                "--steps",
                "1e400",
                "--delta",
                "1e-5",
            ],
            "--steps",
        ),
        (
            [
                "dpsgd",
                "--sampling",
                "fixed-size",
                "--accountant",
                "pld",
                "--sampling-rate",
                "1/100",
                "--noise-multiplier",
                "1",
                "--steps",
                "9",
                "--delta",
                "1e-5",
                "--grid",
                "1e-400",
            ],
            "--grid",
        ),
    ],
)
def test_documented_refusals_decided_first(argv, flag):
    code, err = run(argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"certify: error: {flag}"), err
    assert "None" not in lines[0] and "less extreme inputs" not in lines[0]


def test_ordinary_objpert_rdp_values_certify(capsys):
    """--nu 2500 is ordinary: the Renyi bound and a delta(epsilon) inside the range certify (exit 0)."""
    base = ["objpert-rdp", "--L", "1", "--nu", "2500", "--s", "1/4", "--lambda", "1"]
    for extra in (["--alpha", "3"], ["--epsilon", "0.4"], ["--delta", "1e-6"]):
        code, err = run(base + extra + ["--json"])
        assert code == 0, err


def test_flags_documented_in_the_reference_page():
    """docs/reference/work-limits.md lists every flag this file drives."""
    import pathlib

    page = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "reference" / "work-limits.md").read_text()
    missing = sorted({flag for _, flags in BASES.values() for flag in flags if f"`{flag}`" not in page})
    assert not missing, missing


def test_cert_fixture_is_genuine(cert_path):
    with open(cert_path) as fh:
        assert verify.verify_document(json.load(fh)).exit_code == 0
