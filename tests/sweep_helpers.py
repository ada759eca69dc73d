"""Shared by the sweep tests and benchmarks/bench_sweep.py: query files, running `certify sweep`, Dask services."""

from __future__ import annotations

import csv
import itertools
import os
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def renyi_rows(n: int) -> list[dict]:
    """n fast DP-SGD queries of the Bok accountant at a fixed alpha (about 4-30 ms each)."""
    grid = itertools.product(
        ["1000", "10000", "100", "100000", "2500"],
        ["1e-5", "1e-6"],
        ["4", "8", "16", "32", "64"],
        ["0.001", "0.0025", "0.005", "0.01"],
        ["2", "3", "4", "6", "8"],
    )
    rows = []
    for steps, delta, alpha, p, sigma in itertools.islice(grid, n):
        rows.append(
            {
                "command": "dpsgd",
                "sampling": "fixed-size",
                "sampling_rate": p,
                "noise_multiplier": sigma,
                "steps": steps,
                "delta": delta,
                "alpha": alpha,
            }
        )
    return rows


def write_csv(path, rows: list[dict], columns=None) -> str:
    columns = columns or list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for r in rows:
            w.writerow([r.get(c, "") for c in columns])
    return str(path)


def sweep(*args, env=None, timeout=600):
    """Run `python -m certify sweep ARGS` from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "certify", "sweep", *map(str, args)], capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaskServices:
    """A real `dask scheduler` and `dask worker` processes on 127.0.0.1, stopped on exit (also on failure)."""

    def __init__(self, workers: int = 2):
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.workers = workers
        self.procs: list[subprocess.Popen] = []
        self.env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def _start(self, module: str, *args) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, "-m", module, *args], cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def __enter__(self):
        try:
            self._start("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard")
            self.worker_procs = [
                self._start("distributed.cli.dask_worker", self.address, "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1", "--no-dashboard")
                for _ in range(self.workers)
            ]
            self.wait_for_workers(self.workers)
        except BaseException:
            self.stop()
            raise
        return self

    def wait_for_workers(self, n: int, timeout: float = 60) -> None:
        from distributed import Client

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with Client(self.address, timeout=5, set_as_default=False) as c:
                    c.wait_for_workers(n, timeout=max(1, deadline - time.monotonic()))
                    return
            except (OSError, TimeoutError):
                time.sleep(0.5)
        raise TimeoutError(f"{n} Dask workers did not register at {self.address}")

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def __exit__(self, *exc):
        self.stop()


def double_or_die(x):
    """For the executor tests (runs in a spawned worker): 'poison' kills its own worker process."""
    if x == "poison":
        os._exit(9)
    time.sleep(0.02)
    return 2 * x


def double_or_raise(x):
    """For the executor tests: a task that raises is reported as an error on its item, the others complete."""
    if x == "bad":
        raise ValueError("no double for 'bad'")
    return 2 * x
