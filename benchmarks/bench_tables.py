"""Speed of `certify tables --paper bok` (run: python benchmarks/bench_tables.py).

Cold: a fresh, empty cache directory (every rho witness searched, every cell computed, both cores).
Warm: the same command again with that cache (`--check`, nothing rewritten; the certified lossless column
is never cached, so a warm run recomputes it). Target: cold at most 15 minutes with peak memory at most
1 GiB per process (the per-task CPU and peak memory are printed on stderr). Also times the Watkins-Arora tables.
"""

import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(args):
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "certify", *args], cwd=ROOT, capture_output=True, text=True)
    return time.perf_counter() - t0, r


def main():
    with tempfile.TemporaryDirectory() as cache:
        out = tempfile.mkdtemp()
        os.symlink(os.path.join(ROOT, "tables", "published"), os.path.join(out, "published"))
        cold, r = timed(["tables", "--paper", "bok", "--cache-dir", cache, "--tables-dir", out, "--report-only"])
        print(r.stdout.strip())
        warm, r2 = timed(["tables", "--paper", "bok", "--cache-dir", cache, "--tables-dir", out, "--check"])
    wa, _ = timed(["tables", "--paper", "watkins-arora", "--check", "--report-only"])
    print(f"{'bok tables, cold cache (2 processes)':<45}{cold:8.1f} s   target <= 600 s: {'ok' if cold <= 600 else 'MISSED'}")
    print(f"{'bok tables --check, warm cache':<45}{warm:8.1f} s   target <= 60 s: {'ok' if warm <= 60 else 'MISSED'}")
    print(f"{'watkins-arora tables --check':<45}{wa:8.1f} s")


if __name__ == "__main__":
    main()
