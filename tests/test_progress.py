"""Progress lines of long runs (certify/progress.py): nothing for a run under 2 s, then at most one line a second on
stderr, never on stdout; `certify verify` of a slow certificate (a PLD certificate takes seconds) prints them too."""

from __future__ import annotations

import json
import re
import time

from certify import cli, verify_command
from certify.verify import verify_text as real_verify_text

LINE = re.compile(r"^certify: verify: re-deriving the certificate: working \((\d+) s\)$")


def _certificate(tmp_path, capsys) -> str:
    out = tmp_path / "run.json"
    assert (
        cli.main(
            [
                "dpsgd",
                "--sampling",
                "poisson",
                "--sampling-rate",
                "0.01",
                "--noise-multiplier",
                "1.1",
                "--steps",
                "10",
                "--delta",
                "1e-5",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    capsys.readouterr()
    return str(out)


def test_a_slow_verify_prints_progress_on_stderr_at_most_once_a_second(tmp_path, capsys, monkeypatch):
    path = _certificate(tmp_path, capsys)

    def slow(data, precision=None):  # a verify that lasts 3.6 s of wall time (sleeping: no CPU)
        time.sleep(3.6)
        return real_verify_text(data, precision)

    monkeypatch.setattr(verify_command, "verify_text", slow)
    assert cli.main(["verify", "--quiet", path]) == 0
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert "working" not in out and out.rstrip().splitlines()[-1].startswith("VERIFIED")
    assert 1 <= len(lines) <= 2 and all(LINE.match(x) for x in lines)  # from 2 s on, one a second: at 2 s and 3 s
    seconds = [int(LINE.match(x).group(1)) for x in lines]
    assert seconds[0] >= 2 and seconds == sorted(set(seconds))


def test_a_quick_verify_prints_nothing_on_stderr(tmp_path, capsys):
    path = _certificate(tmp_path, capsys)
    assert cli.main(["verify", "--quiet", path]) == 0
    assert capsys.readouterr().err == ""


def test_a_slow_audit_prints_progress_on_stderr(tmp_path, capsys, monkeypatch):
    from certify.audit import commands as audit_commands

    claim = tmp_path / "claim.json"
    phase = {"sampling_rate": "0.01", "noise_multiplier": "1.1", "steps": 100}
    claim.write_text(
        json.dumps({"epsilon": "2", "delta": "1e-5", "contract": {"sampling": "poisson", "adjacency": "add-remove"}, "schedule": [phase]})
    )
    real = audit_commands.audit

    def slow(*a, **k):  # an audit that lasts 2.6 s of wall time (sleeping: no CPU)
        time.sleep(2.6)
        return real(*a, **k)

    monkeypatch.setattr(audit_commands, "audit", slow)
    assert cli.main(["audit", str(claim), "--no-floats", "--no-pld"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and re.match(r"^certify: audit: working \(2 s\)$", err[0])
