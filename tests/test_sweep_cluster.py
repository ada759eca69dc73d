"""`certify sweep` at scale (slow): 1,000 Rényi queries give a byte-identical summary (and certificates) with
1 and 2 local workers, a 2-worker Dask LocalCluster, and a real `dask scheduler` with two `dask worker`
processes on 127.0.0.1 reached by its address, one of which is killed in the middle of the sweep."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from certify.sweep.executor import dask_available
from sweep_helpers import ROOT, DaskServices, renyi_rows, sweep, write_csv

# under `pytest -n auto --dist loadgroup` one xdist worker runs every test of the "dask" group in turn: the 1,000-row
# reference is swept once, and no two Dask schedulers compete for the HTTP port 8787 (a warning on stderr otherwise)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("dask")]
N = 1000


def _files(d) -> dict[str, bytes]:
    return {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))}


@pytest.fixture(scope="module")
def queries(tmp_path_factory):
    return write_csv(tmp_path_factory.mktemp("q") / "renyi.csv", renyi_rows(N))


@pytest.fixture(scope="module")
def reference(queries, tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "out"
    r = sweep(queries, "--out", out, "--executor", "local", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert f"{N} rows: {N} ok" in r.stdout
    files = _files(out)
    assert len(files) == N + 2 and len(files["summary.csv"].decode().splitlines()) == N + 1  # + index.jsonl
    return files


@pytest.mark.parametrize("executor", ["local", "dask"])
def test_two_workers_match_one(queries, reference, tmp_path, executor):
    if executor == "dask" and not dask_available():
        pytest.skip("dask is not installed")
    out = tmp_path / "out"
    r = sweep(queries, "--out", out, "--executor", executor, "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert all(line.startswith("sweep: ") for line in r.stderr.splitlines()), r.stderr
    assert _files(out) == reference


def test_scheduler_address_with_a_worker_killed_midway(queries, reference, tmp_path):
    if not dask_available():
        pytest.skip("dask is not installed")
    out = tmp_path / "out"
    with DaskServices(workers=2) as dask:
        p = subprocess.Popen(
            [sys.executable, "-m", "certify", "sweep", queries, "--out", str(out), "--scheduler", dask.address],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            killed = False
            deadline = time.monotonic() + 300
            while p.poll() is None and time.monotonic() < deadline:
                summary = out / "summary.csv"
                if not killed and summary.exists() and len(summary.read_text().splitlines()) > N // 5:
                    dask.worker_procs[0].kill()  # SIGKILL: its tasks are lost and re-run on the other worker
                    killed = True
                time.sleep(0.05)
            stdout, stderr = p.communicate(timeout=300)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        assert killed, "the sweep finished before a worker could be killed"
        assert dask.worker_procs[0].poll() is not None and dask.worker_procs[1].poll() is None
    assert p.returncode == 0, stderr
    assert all(line.startswith("sweep: ") for line in stderr.splitlines()), stderr  # no Dask log noise
    assert _files(out) == reference
