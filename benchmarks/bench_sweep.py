"""Speed of `certify sweep`: throughput from 1 to 2 workers, and the per-query overhead of the Dask path.

    python benchmarks/bench_sweep.py [--heavy N] [--light N] [--pld N]

* Throughput: N heavy Rényi queries (`certify rho` at alpha 80..191, p in {0.001, 0.0025, 0.005}, sigma 13/2..12,
  the heaviest one-step searches of the Bok accountant) and N certified PLD queries (`certify dpsgd
  --accountant pld`, Poisson add/remove, distinct (q, sigma, T), grid 1e-4: 0.3-1 s each) through each
  executor with 1 and 2 workers, as `certify sweep` sends them (cheap queries batched); the time counts
  the map only (workers started and warmed up first). The load average is printed: a speed-up needs two
  idle cores.
* Overhead: N light queries (`certify dpsgd --alpha A`, distinct (p, sigma) so no rho is memoised) run
  (a) by calling the accountant in-process (`certify_dpsgd`), (b) through the sweep's runner in-process
  (argv parsing + certificate capture), (c) through Dask with one worker (LocalCluster, 127.0.0.1):
  (c) - (a) per query is the overhead of the Dask path.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from certify.sweep.executor import DaskExecutor, LocalExecutor  # noqa: E402
from certify.sweep.commands import execute  # noqa: E402
from certify.sweep.runner import Task, run_query  # noqa: E402


def heavy_tasks(n: int) -> list[Task]:
    """Distinct one-step rho problems at alpha 80..191 that need a branch-and-bound search (25-140 ms each
    in-process on this machine, median about 45 ms; Proposition 2 decides none of them)."""
    grid = [(a, p, s) for a in (80, 96, 107, 128) for p in ("0.001", "0.0025", "0.005") for s in ("13/2", "7", "15/2", "8", "17/2", "9")]
    grid += [(a, p, s) for a in (160, 191) for p in ("0.001", "0.0025", "0.005") for s in ("9", "10", "11", "12")]
    grid = grid[::2] + grid[1::2]  # mix alphas, so both halves of a run cost about the same
    return [Task("rho", (f"--alpha={a}", f"--noise-multiplier={s}", f"--sampling-rate={p}")) for a, p, s in grid[:n]]


def light_tasks(n: int) -> list[Task]:
    out = []
    for i in range(n):
        p = f"{1 + i % 50}/10000"
        sigma = f"{2 + i // 50}"
        out.append(
            Task(
                "dpsgd", ("--sampling=fixed-size", "--alpha=8", "--delta=1e-6", f"--noise-multiplier={sigma}", f"--sampling-rate={p}", "--steps=1000")
            )
        )
    return out


def pld_tasks(n: int) -> list[Task]:
    """Distinct certified PLD queries (Poisson add/remove, grid 1e-4, the default)."""
    grid = [(q, s, t) for t in ("100", "200", "300") for q in ("0.005", "0.01", "0.02") for s in ("3/2", "2", "3")]
    return [
        Task(
            "dpsgd",
            (
                "--accountant=pld",
                "--sampling=poisson",
                "--adjacency=add-remove",
                f"--sampling-rate={q}",
                f"--noise-multiplier={s}",
                f"--steps={t}",
                "--delta=1e-6",
            ),
        )
        for q, s, t in grid[:n]
    ]


WARM = [Task("rho", ("--alpha=8", "--noise-multiplier=2", f"--sampling-rate={p}")) for p in ("0.01", "0.02", "0.03")]


def timed_map(ex, tasks, batched: bool = False) -> tuple[float, float]:
    """(wall seconds, client CPU seconds) to run ``tasks`` on ``ex`` (one executor task per query, or
    batched as `certify sweep` does). The client CPU includes a LocalCluster's scheduler (a thread here)."""
    list(ex.map_unordered(run_query, WARM))  # warm up the workers (imports, parser, first FLINT use)
    t0, c0 = time.perf_counter(), time.process_time()
    if batched:
        results = [(0, o, None) for _, o in execute(ex, tasks)]
    else:
        results = list(ex.map_unordered(run_query, tasks))
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    bad = [r for _, r, e in results if e or r.status != "ok"]
    assert len(results) == len(tasks) and not bad, bad[:3]
    return dt, cpu


def throughput(n: int, label: str = "heavy rho", make_tasks=heavy_tasks) -> None:
    tasks = make_tasks(n)
    costs = []
    for t in tasks:
        c0 = time.process_time()
        run_query(t)
        costs.append(time.process_time() - c0)
    work = sum(costs)
    print(
        f"{label} queries ({n}): CPU per query in-process: median {1000 * statistics.median(costs):.0f} ms "
        f"(min {1000 * min(costs):.0f}, max {1000 * max(costs):.0f}), total {work:.2f} s"
    )
    for name, make in (("local", LocalExecutor), ("dask", lambda w: DaskExecutor(workers=w))):
        times = {}
        for w in (1, 2):
            with make(w) as ex:
                times[w], client = timed_map(ex, tasks, batched=True)
            print(
                f"  {name:5} {w} worker{'s' if w > 1 else ' '}: {n} queries in {times[w]:.2f} s "
                f"({n / times[w]:.1f} queries/s); client CPU {1000 * client / n:.2f} ms per query"
            )
        print(
            f"  {name:5} speed-up 1 -> 2 workers: {times[1] / times[2]:.2f}x (on 2 idle cores at most "
            f"2W/(W+C) = {2 * work / (work + client):.2f}x, W the queries' CPU, C the client's)"
        )


def overhead(n: int) -> None:
    from certify.dpsgd.accountant import certify_dpsgd, clear_memo
    from certify.dpsgd.certificates import parse_delta, parse_steps
    from certify.dpsgd.problem import parse_alpha, parse_p, parse_sigma

    tasks = light_tasks(n)
    clear_memo()
    t0 = time.perf_counter()
    for t in tasks:
        a = dict(x[2:].split("=", 1) for x in t.argv)
        certify_dpsgd(
            parse_p(a["sampling-rate"]),
            parse_sigma(a["noise-multiplier"]),
            parse_steps(a["steps"]),
            parse_delta(a["delta"]),
            parse_alpha(a["alpha"]),
            None,
            None,
            {},
        ).certificate.dumps()
    direct = (time.perf_counter() - t0) / n
    clear_memo()
    t0 = time.perf_counter()
    for t in tasks:
        assert run_query(t).status == "ok"
    runner = (time.perf_counter() - t0) / n
    with DaskExecutor(workers=1) as ex:
        dask1 = timed_map(ex, tasks)[0] / n
        dask1b = timed_map(ex, light_tasks(2 * n)[n:], batched=True)[0] / n
    with LocalExecutor(1) as ex:
        local1 = timed_map(ex, tasks)[0] / n
    print(f"light dpsgd queries ({n}, distinct, alpha fixed): per query")
    print(f"  accountant in-process (certify_dpsgd + dumps): {1000 * direct:.2f} ms")
    print(f"  sweep runner in-process (parse argv, run, capture --out): {1000 * runner:.2f} ms (+{1000 * (runner - direct):.2f} ms)")
    print(f"  local pool, 1 worker: {1000 * local1:.2f} ms (+{1000 * (local1 - direct):.2f} ms)")
    print(f"  Dask LocalCluster, 1 worker, one task per query: {1000 * dask1:.2f} ms (overhead +{1000 * (dask1 - direct):.2f} ms)")
    print(f"  Dask LocalCluster, 1 worker, batched as certify sweep does: {1000 * dask1b:.2f} ms (overhead +{1000 * (dask1b - direct):.2f} ms)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--heavy", type=int, default=64)
    ap.add_argument("--light", type=int, default=300)
    ap.add_argument("--pld", type=int, default=27)
    args = ap.parse_args()
    with open("/proc/loadavg") as fh:  # the machine is shared: a load above its 2 cores caps any speed-up
        print(f"load average before: {fh.read().split()[:3]}, CPUs available: {len(os.sched_getaffinity(0))}")
    overhead(args.light)
    throughput(args.heavy)
    throughput(args.pld, "certified PLD", pld_tasks)


if __name__ == "__main__":
    main()
