"""Every short figure printed beside a bound is on the safe side of the certified ball.

The README's commands (with small/fast parameters where the README's are slow) are run with ``--out``;
every figure the summary prints as a bound is parsed and compared, exactly, with the certificate's ball:
an upper figure must be >= the ball's upper endpoint, a lower figure <= its lower endpoint. A figure
rounded the way a paper prints it must be labelled "as the paper prints it" and never be the headline.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from certify.balls import ball_from_json
from fast_subset import fast_subset

ROOT = Path(__file__).resolve().parents[1]
NUM = r"[-+]?[0-9]*\.?[0-9]+(?:e[-+]?[0-9]+)?"

COMMANDS = {
    "objpert": ["objpert", "--example", "4.8"],
    "gaussian-benchmark": ["gaussian-benchmark", "--noise-multiplier", "5", "--epsilon", "1"],
    "calibrate": [
        "calibrate",
        "--epsilon",
        "1",
        "--delta",
        "1e-7",
        "--delta-S",
        "0.01",
        "--comparator-norm",
        "1",
        "--n",
        "1000000",
        "--d",
        "10000",
        "--loss",
        "logistic",
    ],
    "objpert-rdp": ["objpert-rdp", "--L", "1", "--nu", "2", "--s", "1/4", "--lambda", "1", "--alpha", "3", "--epsilon", "2", "--delta", "1e-6"],
    "rho": ["rho", "--alpha", "8", "--sampling-rate", "0.01", "--noise-multiplier", "2"],
    "rho-small-p": ["rho", "--alpha", "50", "--sampling-rate", "1e-30", "--noise-multiplier", "3"],
    "dpsgd": ["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "1000", "--delta", "1e-6"],
    "dpsgd-15.92": ["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "1", "--steps", "1000", "--delta", "1e-6"],
    "dpsgd-wang": [
        "dpsgd",
        "--sampling",
        "fixed-size",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "2",
        "--steps",
        "1000",
        "--delta",
        "1e-6",
        "--accountant",
        "wang",
    ],
    "dpsgd-poisson": [
        "dpsgd",
        "--sampling",
        "poisson",
        "--adjacency",
        "add-remove",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "1.1",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
    ],
    "dpsgd-pld": [
        "dpsgd",
        "--sampling",
        "fixed-size",
        "--accountant",
        "pld",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "2",
        "--steps",
        "100",
        "--delta",
        "1e-6",
        "--grid",
        "1e-2",
    ],
    "dpsgd-pld-poisson": [
        "dpsgd",
        "--accountant",
        "pld",
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
        "--grid",
        "1e-3",
    ],
    "dpsgd-birrell": [
        "dpsgd",
        "--sampling",
        "fixed-size",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "2",
        "--steps",
        "1000",
        "--delta",
        "1e-6",
        "--accountant",
        "birrell",
        "--alpha",
        "4",
    ],
}


def _run(args, tmp_path):
    out = tmp_path / "cert.json"
    proc = subprocess.run([sys.executable, "-m", "certify", *args, "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, json.loads(out.read_text())


def _endpoints(doc, name):
    m, r = ball_from_json(doc["quantities"][name]["ball"])
    m, r = Fraction(int(m.p), int(m.q)), Fraction(int(r.p), int(r.q))
    return m - r, m + r


def figures(summary: str, doc: dict) -> list[tuple[str, str, Fraction]]:
    """(quantity, "upper"/"lower", figure) for every short figure the summary prints beside a bound."""
    q = doc["quantities"]
    found = []
    for line in summary.splitlines():
        # table rows: "  name  equation  [lower, upper]  meaning"
        m = re.match(rf"^\s+(\S+)\s.*?\[({NUM}), ({NUM})\]", line)
        if m and m.group(1) in q:
            found += [(m.group(1), "lower", Fraction(m.group(2))), (m.group(1), "upper", Fraction(m.group(3)))]
        # the PLD accountant's two-sided figures: "epsilon <= X" is epsilon_upper, "epsilon >= X" epsilon_lower
        eps_up = "epsilon" if "epsilon" in q else "epsilon_upper"
        for m6 in re.finditer(rf"\bepsilon >= ({NUM})\b", line):
            found.append(("epsilon_lower", "lower", Fraction(m6.group(1))))
        # "rho(...) in [a, b]", "epsilon in [a, b]"
        for name in ("rho", "epsilon"):
            for m2 in re.finditer(rf"\b{name}(?:\([^)]*\))? in \[({NUM}), ({NUM})\]", line):
                found += [(name, "lower", Fraction(m2.group(1))), (name, "upper", Fraction(m2.group(2)))]
        # "epsilon <= X" (every occurrence: the headline and the 2-decimal figure)
        for m3 in re.finditer(rf"\bepsilon <= ({NUM})\b", line):
            found.append((eps_up, "upper", Fraction(m3.group(1))))
        # objpert verdicts: "(eps, X)-DP" with X an upper bound of delta; "delta_N(eps) <= X"
        m4 = re.search(rf"release is \({NUM}, ({NUM})\)-DP \(Theorem 4.1", line)
        if m4 and "delta" in q:
            found.append(("delta", "upper", Fraction(m4.group(1))))
        m5 = re.search(rf"delta_N\({NUM}\) <= ({NUM})", line)
        if m5 and "delta_N" in q:
            found.append(("delta_N", "upper", Fraction(m5.group(1))))
    return found


# fast suite: one command per summary printer family, the issue's 15.92 case and both ends of a PLD interval
FAST = ["objpert", "objpert-rdp", "rho-small-p", "dpsgd-15.92", "dpsgd-pld-poisson"]


@pytest.mark.parametrize("which", fast_subset(sorted(COMMANDS), keep=FAST))
def test_short_figures_are_on_the_safe_side(which, tmp_path):
    summary, doc = _run(COMMANDS[which], tmp_path)
    figs = figures(summary, doc)
    assert figs, f"no figure parsed from the summary of {which}:\n{summary}"
    for name, side, fig in figs:
        lo, hi = _endpoints(doc, name)
        if side == "upper":
            assert fig >= hi, f"{which}: upper figure {fig} for {name} is below the certified upper end {float(hi)}"
        else:
            assert fig <= lo, f"{which}: lower figure {fig} for {name} is above the certified lower end {float(lo)}"


def test_paper_rounding_is_labelled_and_not_the_headline(tmp_path):
    """The 2-decimal figure is the upper endpoint rounded up; the paper's rounding (nearest) is labelled as such."""
    import math

    summary, doc = _run(COMMANDS["dpsgd-15.92"], tmp_path)
    lo, hi = _endpoints(doc, "epsilon")
    line = next(ln for ln in summary.splitlines() if "epsilon <=" in ln)
    assert line.lstrip().startswith("epsilon <=")  # the headline is the certified bound
    headline = Fraction(re.search(rf"epsilon <= ({NUM})", line).group(1))
    assert headline >= hi
    two = re.search(r"to 2 decimals rounded up: epsilon <= ([0-9.]+)", line)
    assert two and Fraction(two.group(1)) == Fraction(math.ceil(hi * 100), 100)
    paper = re.search(r"as the paper prints it \(nearest, not a bound\): ([0-9.]+)", line)
    assert paper and Fraction(paper.group(1)) == Fraction(math.floor(hi * 100 + Fraction(1, 2)), 100)
    assert "printed to 2 decimals" not in summary


def test_two_decimals_of_the_issue():
    """A certified upper bound 15.9209 is 15.93 rounded up; the paper prints 15.92."""
    from certify.balls import ball, fmpq
    from certify.dpsgd.commands import _two_decimals

    x = ball(fmpq(159209, 10000))
    assert _two_decimals(x, up=True) == "15.93"
    assert _two_decimals(x, up=None) == "15.92"
    assert _two_decimals(x, up=False) == "15.92"
    assert _two_decimals(ball(fmpq(-1, 1000)), up=True) == "0.00"
    assert _two_decimals(ball(fmpq(-1, 1000)), up=False) == "-0.01"
