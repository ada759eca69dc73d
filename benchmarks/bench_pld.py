"""Benchmark: the certified PLD accountant side by side with dp_accounting's float PLD at the same grid.

Usage:  python benchmarks/bench_pld.py [--steps 1000,10000,100000,1000000] [--grid 1e-4]
                                        [--q 0.01] [--sigma 2] [--delta 1e-6] [--contract poisson|fixed-size]

Each T runs in a fresh subprocess (cold caches), so its wall time and peak RSS are its own. For each T it
prints: certified eps_up / eps_low, eps_up/eps_low - 1, seconds and peak RSS (MiB); dp_accounting's
pessimistic (connect-the-dots) and optimistic (privacy buckets) eps at the same grid, their seconds
and their bracket; and the ratio of the two brackets. dp_accounting is float; ours is certified.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _ours(contract: str, q: str, sigma: str, steps: int, delta: str, grid: str) -> dict:
    sys.path.insert(0, ROOT)
    from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
    from certify.pld import certify_pld

    c = POISSON_ADD_REMOVE if contract == "poisson" else FIXED_SIZE_REPLACE_ONE
    t = time.perf_counter()
    cert = certify_pld(c, q, sigma, steps, delta, grid)
    sec = time.perf_counter() - t
    qs = cert.quantities
    up = float(qs["epsilon_upper"].value.upper().fmpq())  # display only
    lo = float(qs["epsilon_lower"].value.lower().fmpq())
    return {
        "eps_up": up,
        "eps_low": lo,
        "seconds": sec,
        "budget": cert.budget,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _float(contract: str, q: str, sigma: str, steps: int, delta: str, grid: str) -> dict:
    from dp_accounting.pld import privacy_loss_distribution as PLD

    out = {}
    for pess in (True, False):
        t = time.perf_counter()
        if contract == "poisson":
            p = PLD.from_gaussian_mechanism(
                float(sigma), sampling_prob=float(q), value_discretization_interval=float(grid), pessimistic_estimate=pess, use_connect_dots=pess
            )
        else:
            raise SystemExit("dp_accounting side-by-side is for the Poisson contract (its fixed-size PLD differs)")
        e = p.self_compose(steps).get_epsilon_for_delta(float(delta))
        out["pessimistic" if pess else "optimistic"] = {"eps": e, "seconds": time.perf_counter() - t}
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", default="1000,10000,100000,1000000")
    ap.add_argument("--grid", default="1e-4")
    ap.add_argument("--q", default="0.01")
    ap.add_argument("--sigma", default="2")
    ap.add_argument("--delta", default="1e-6")
    ap.add_argument("--contract", default="poisson", choices=["poisson", "fixed-size"])
    ap.add_argument("--child", choices=["ours", "float"], help=argparse.SUPPRESS)
    ap.add_argument("--no-float", action="store_true")
    a = ap.parse_args()
    if a.child:
        f = _ours if a.child == "ours" else _float
        print(json.dumps(f(a.contract, a.q, a.sigma, int(a.steps), a.delta, a.grid)))
        return
    print(f"certified PLD vs dp_accounting float PLD: {a.contract}, q={a.q}, sigma={a.sigma}, delta={a.delta}, grid={a.grid}", flush=True)
    for T in [int(float(x)) for x in a.steps.split(",")]:
        base = [
            sys.executable,
            __file__,
            "--steps",
            str(T),
            "--grid",
            a.grid,
            "--q",
            a.q,
            "--sigma",
            a.sigma,
            "--delta",
            a.delta,
            "--contract",
            a.contract,
        ]
        ours = json.loads(subprocess.run(base + ["--child", "ours"], capture_output=True, text=True, check=True).stdout)
        line = (
            f"T={T:>8}: certified eps in [{ours['eps_low']:.6f}, {ours['eps_up']:.6f}] "
            f"(eps_up/eps_low-1 = {ours['eps_up'] / ours['eps_low'] - 1:.2e}) {ours['seconds']:.2f} s, "
            f"peak RSS {ours['peak_rss_mib']:.0f} MiB"
        )
        if not a.no_float and a.contract == "poisson":
            fl = json.loads(subprocess.run(base + ["--child", "float"], capture_output=True, text=True, check=True).stdout)
            pe, op = fl["pessimistic"], fl["optimistic"]
            fsec = pe["seconds"] + op["seconds"]
            line += (
                f" | dp_accounting pess {pe['eps']:.6f} ({pe['seconds']:.2f} s), opt {op['eps']:.6f} "
                f"({op['seconds']:.2f} s), float bracket {pe['eps'] - op['eps']:.4f} vs certified "
                f"{ours['eps_up'] - ours['eps_low']:.2e} "
                f"({(pe['eps'] - op['eps']) / max(ours['eps_up'] - ours['eps_low'], 1e-300):.0f}x narrower); "
                f"time ratio {ours['seconds'] / fsec:.1f}x (vs pess+opt), "
                f"{ours['seconds'] / pe['seconds']:.1f}x (vs pess only)"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main()
