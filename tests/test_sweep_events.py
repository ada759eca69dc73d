"""`certify sweep` rows that name an event file (`account EVENT.json`): the positional column, the certificate
name that follows the file's content, resumption, and bad rows."""

from __future__ import annotations

import json
import os

from certify.sweep import queries as Q
from certify.sweep import runner
from certify.verify import verify_text
from sweep_helpers import sweep

LAPLACE = {"class_name": "SelfComposedDpEvent", "count": 10, "event": {"class_name": "LaplaceDpEvent", "noise_multiplier": "20"}}


def _rows(path) -> list[list[str]]:
    import csv

    with open(path, newline="") as f:
        return list(csv.reader(f))[1:]


def test_event_file_column_is_the_positional_argument(tmp_path):
    ev = tmp_path / "ev.json"
    ev.write_text(json.dumps(LAPLACE))
    q = Q.Query(1, "account", {"event": str(ev), "delta": "1e-6", "neighboring": "add-remove"})
    sub = runner.subparser("account")
    argv = Q.argv_for(q, sub)
    assert argv == ["--delta=1e-6", "--neighboring=add-remove", str(ev)]
    t1 = runner.task_for(q)
    ev.write_text(json.dumps({**LAPLACE, "count": 11}))
    t2 = runner.task_for(q)
    assert t1.argv == t2.argv and t1.certificate != t2.certificate  # a changed file is another query
    out = runner.run_query(t2)
    assert out.status == "ok" and verify_text(out.certificate).exit_code == 0
    assert json.loads(out.certificate)["inputs"]["event[0].count"] == "11"


def test_sweep_of_event_files_resumes_and_reports_bad_rows(tmp_path):
    ev = tmp_path / "ev.json"
    ev.write_text(json.dumps(LAPLACE))
    rows = [
        {"command": "account", "event": str(ev), "delta": "1e-6"},
        {"command": "account", "event": str(ev), "order": "3"},
        {"command": "account", "event": str(tmp_path / "missing.json"), "delta": "1e-6"},
        {"command": "account", "event": "-h", "delta": "1e-6"},
    ]
    qf = tmp_path / "q.jsonl"
    qf.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    r = sweep(qf, "--out", out, "--executor", "local", "--workers", "1")
    summary = _rows(out / "summary.csv")
    assert [s[3] for s in summary] == ["ok", "ok", "error", "error"], (r.stderr, summary)
    assert "missing.json" in summary[2][6] and "beginning with '-'" in summary[3][6]
    assert all(verify_text((out / s[2]).read_text()).exit_code == 0 for s in summary[:2])
    r = sweep(qf, "--out", out, "--executor", "local", "--workers", "1")
    assert "2 skipped" in r.stdout
    ev.write_text(json.dumps({**LAPLACE, "count": 12}))  # the file changed: its rows are computed again
    r = sweep(qf, "--out", out, "--executor", "local", "--workers", "1")
    assert "0 skipped" in r.stdout and len([f for f in os.listdir(out) if f.startswith("account-")]) == 4
