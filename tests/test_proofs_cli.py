"""`certify proofs`: table, REPORT.md, exit status (non-zero when an obligation fails)."""

import os
import subprocess

import pytest
import sys

from certify import cli
from certify.proofs import core
from certify.proofs.core import FALSE, Outcome

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_cli_table_and_report(tmp_path):
    report = tmp_path / "REPORT.md"
    r = subprocess.run(
        [sys.executable, "-m", "certify", "proofs", "--paper", "referee", "--report", str(report)], capture_output=True, text=True, cwd=ROOT
    )
    assert r.returncode == 0, r.stdout + r.stderr
    for col in ("obligation", "location", "method", "verdict", "time"):
        assert col in r.stdout
    assert "R-decrease" in r.stdout and "proved" in r.stdout
    text = report.read_text()
    assert text.startswith("# Proof obligations") and "| R-limits |" in text and "**proved**" in text
    # the committed report carries no timings, so regenerating it is byte-identical
    assert "| time |" not in text and " s |" not in text
    again = tmp_path / "AGAIN.md"
    assert cli.main(["proofs", "--paper", "referee", "--report", str(again)]) == 0
    assert again.read_bytes() == report.read_bytes()


def test_failing_obligation_gives_nonzero_exit(tmp_path, monkeypatch, capsys):
    from certify.proofs import load_all

    load_all()
    bad = core.Obligation("X-false", "referee", "nowhere (test)", "1 = 2", lambda: Outcome(FALSE, "test", "counterexample: 1 != 2"))
    monkeypatch.setitem(core.CATALOGUE, "referee", core.CATALOGUE["referee"][:1] + [bad])
    rc = cli.main(["proofs", "--paper", "referee", "--report", str(tmp_path / "R.md")])
    out = capsys.readouterr().out
    assert rc == 1
    assert "X-false" in out and "FALSE" in out and "counterexample: 1 != 2" in out
    assert "counterexample: 1 != 2" in (tmp_path / "R.md").read_text()


def test_crashing_check_is_undecided_not_proved():
    ob = core.Obligation("X-crash", "referee", "test", "crash", lambda: 1 / 0)
    out = ob.run()
    assert out.verdict == "undecided" and "ZeroDivisionError" in out.detail


@pytest.mark.slow
def test_bad_report_directory(tmp_path):
    rc = cli.main(["proofs", "--paper", "referee", "--report", str(tmp_path / "missing" / "R.md")])
    assert rc == 2
