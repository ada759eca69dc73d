"""`certify objpert` and `certify gaussian-benchmark` on the command line: outputs, --out, verify, and a clear
one-line error + non-zero exit for bad input."""

import json
import os
import subprocess
import sys

import pytest

from fast_subset import fast_subset

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = [
    "objpert",
    "--n",
    "1000000",
    "--d",
    "10000",
    "--mu",
    "0.01",
    "--loss",
    "logistic",
    "--zeta",
    "1",
    "--noise-multiplier",
    "5",
    "--u",
    "6",
    "--epsilon",
    "1",
]


def run(args, **kw):
    return subprocess.run([sys.executable, "-m", "certify", *args], capture_output=True, text=True, cwd=ROOT, **kw)


def test_example_summary_and_json(tmp_path):
    r = run(["objpert", "--example", "4.8"])
    assert r.returncode == 0, r.stderr
    assert "(1, 5.17e-8)-DP" in r.stdout and "first passing N = 519" in r.stdout
    out = tmp_path / "c.json"
    r = run(BASE + ["--target-delta", "1e-7", "--json", "--out", str(out)])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert json.loads(out.read_text()) == doc
    for name in ("iterations", "threshold7", "tau_star", "epsilon0", "delta", "first_passing_iterations", "alpha_bar", "s_N", "delta_N"):
        assert name in doc["quantities"], name
    assert doc["witnesses"]["iterations"] == 1319
    v = run(["verify", str(out)])
    assert v.returncode == 0 and "VERIFIED" in v.stdout


def test_verify_rejects_tampered_file(tmp_path):
    out = tmp_path / "c.json"
    assert run(BASE + ["--out", str(out)]).returncode == 0
    doc = json.loads(out.read_text())
    doc["quantities"]["delta"]["upper"] = "1e-9"
    out.write_text(json.dumps(doc))
    v = run(["verify", str(out)])
    assert v.returncode == 4 and "delta" in v.stdout and "REJECTED" in v.stderr


@pytest.mark.parametrize("text", fast_subset(["", '{"schema": ', "garbage"], keep=['{"schema": ']))  # fast suite: truncated
def test_verify_rejects_malformed_file(tmp_path, text):
    f = tmp_path / "bad.json"
    f.write_text(text)
    v = run(["verify", str(f)])
    assert v.returncode == 2 and "certificate" in v.stderr and "Traceback" not in v.stderr


def test_gaussian_benchmark_cli():
    r = run(["gaussian-benchmark", "--noise-multiplier", "5", "--epsilon", "1", "--json"])
    assert r.returncode == 0
    q = json.loads(r.stdout)["quantities"]
    assert q["delta_gaussian"]["upper"].startswith("1.75463333")


def with_opt(opt, value):
    args = list(BASE)
    if value is None:  # --opt=value form
        name = opt.split("=")[0]
        i = args.index(name)
        args[i : i + 2] = [opt]
        return args
    if opt in args:
        args[args.index(opt) + 1] = value
    else:
        args += [opt, value]
    return args


BAD_INPUT = [
    ("--n", "0", "--n"),
    ("--n", "2.5", "--n"),
    ("--d", "-3", "--d"),
    ("--d", "abc", "--d"),
    ("--mu", "0", "--mu"),
    ("--mu", "-0.01", "--mu"),
    ("--mu=-1/100", None, "--mu"),
    ("--zeta", "0", "--zeta"),
    ("--eta", "4", "--eta"),
    ("--eta", "100", "eta*mu"),
    ("--eta", "0", "--eta"),
    ("--noise-multiplier", "0", "--noise-multiplier"),
    ("--u", "-1", "--u"),
    ("--epsilon", "0.01", "eps_0"),
    ("--iterations", "1000", "threshold (7)"),
    ("--mu", "nan", "--mu"),
    ("--mu", "0x1p-3", "--mu"),
    ("--epsilon", "inf", "--epsilon"),
    ("--delta", "0", "--delta"),
    ("--delta", "1e-9", "--delta"),
    ("--target-delta", "0", "--delta"),
]
# fast suite (one subprocess each): a non-integer count, the --opt=value form, a cross-parameter limit, nan
BAD_INPUT_FAST = [BAD_INPUT[1], BAD_INPUT[6], BAD_INPUT[9], BAD_INPUT[15]]


@pytest.mark.parametrize("opt,value,needle", fast_subset(BAD_INPUT, keep=BAD_INPUT_FAST))
def test_bad_input_one_line_error_nonzero_exit_nothing_written(tmp_path, opt, value, needle):
    out = tmp_path / "c.json"
    r = run(with_opt(opt, value) + ["--out", str(out)])
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0, r.stderr
    assert not out.exists() and os.listdir(tmp_path) == []
    assert r.stdout == ""


@pytest.mark.parametrize("value", fast_subset(["0", "-0.5"], keep=["0"]))
def test_sigma_nonpositive_rejected(tmp_path, value):
    args = list(BASE)
    i = args.index("--noise-multiplier")
    args[i : i + 2] = [f"--sigma={value}"]
    r = run(args + ["--out", str(tmp_path / "c.json")])
    assert r.returncode == 2 and "--sigma" in r.stderr and "> 0" in r.stderr
    assert os.listdir(tmp_path) == []


def test_python_api_refuses_floats():
    from certify.balls import InputError
    from certify.objpert.problem import make_loss, make_problem

    with pytest.raises(InputError, match="--mu: a float"):
        make_problem(n=1000, d=10, mu=0.01, zeta="1", loss=make_loss("logistic"), u="6", noise_multiplier="5")


def test_sigma_and_multiplier_are_exclusive():
    r = run(BASE + ["--sigma", "1e-5"])
    assert r.returncode == 2 and "--sigma" in r.stderr


def test_sigma_equivalent_to_multiplier():
    a = run(with_opt("--noise-multiplier", "5") + ["--json"])
    args = [x for x in BASE]
    i = args.index("--noise-multiplier")
    args[i : i + 2] = ["--sigma", "1e-5"]
    b = run(args + ["--json"])
    qa, qb = json.loads(a.stdout)["quantities"], json.loads(b.stdout)["quantities"]
    assert qa["delta"] == qb["delta"]


def test_eps_error_names_eps0():
    r = run(with_opt("--epsilon", "0.02"))
    assert r.returncode == 2 and "eps_0 = [2.00249" in r.stderr


def test_help_explains():
    r = run(["objpert", "--help"])
    assert r.returncode == 0 and "Theorem 4.1" in r.stdout and "--delta DELTA" in r.stdout
