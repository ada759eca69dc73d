"""Two output options of one command never name one file (certify.cli.check_paths): refused before any work, exit 2,
naming the second flag, nothing written; whatever the spelling (a relative detour, a hard link)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "certify", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


CALIBRATE = ["calibrate-dpsgd", "--epsilon", "1", "--delta", "1e-5", "--steps", "100", "--sampling-rate", "0.01"]


@pytest.mark.parametrize("spelling", ["same", "detour", "hardlink"])
def test_out_and_out_fail_naming_one_file_refused(tmp_path, spelling):
    (tmp_path / "o").mkdir()
    out = str(tmp_path / "o" / "x.json")
    if spelling == "same":
        fail = out
    elif spelling == "detour":
        fail = str(tmp_path / "o" / ".." / "o" / "x.json")
    else:
        with open(out, "w") as fh:
            fh.write("{}")
        fail = str(tmp_path / "o" / "y.json")
        os.link(out, fail)
    before = sorted(os.listdir(tmp_path / "o"))
    res = _run([*CALIBRATE, "--out", out, "--out-fail", fail], tmp_path)
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().count("\n") == 0 and "--out-fail" in res.stderr and "same file" in res.stderr
    assert sorted(os.listdir(tmp_path / "o")) == before
    if spelling == "hardlink":
        assert open(out).read() == "{}"


def test_distinct_outputs_still_written(tmp_path):
    res = _run([*CALIBRATE, "--out", "a.json", "--out-fail", "b.json"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert os.path.exists(tmp_path / "a.json") and os.path.exists(tmp_path / "b.json")
