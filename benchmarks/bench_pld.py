"""Benchmark: the certified PLD accountant side by side with dp_accounting's float PLD at the same grid and
Opacus's PRV accountant.

Usage:  python benchmarks/bench_pld.py [--steps 1000,10000,100000,1000000] [--grid 1e-4]
                                        [--q 0.01] [--sigma 2] [--delta 1e-6] [--contract poisson|fixed-size]
                                        [--no-float] [--no-prv] [--no-ledger] [--markdown]

Each T and each accountant runs in a fresh subprocess (cold caches), so its wall time and peak RSS are its own.
For each T it prints: certified eps_low / eps_up, their gap and eps_up/eps_low - 1, seconds and peak RSS
(MiB), the composition method (the default: the FFT from 1e4 steps on) with the exact chain beside it, and the
command-line production and ``certify verify`` of the certificate timed in fresh processes; dp_accounting's
pessimistic (connect-the-dots) and optimistic (privacy buckets) eps at the same grid, their seconds, their sum
("both", the pair that brackets eps) and their bracket; Opacus's PRVAccountant (where
installed) with its default eps_error 0.01 (the upper estimate it returns, its own [lower, upper] bracket, its
mesh) and with the eps_error that makes its mesh equal to the grid; and the time ratios. dp_accounting and
Opacus compute in floats; certify's bracket is certified. ``--markdown`` ends with the table rows of
benchmarks/README.md. Last (unless ``--no-ledger``), the heterogeneous 1000-event ledger at the same grid
(bench_events.py's PLD row: dp_accounting's pessimistic and optimistic PLDs, certify's ``events/pld`` bracket).
The default composition from 1e4 steps on is the certified float FFT (certify.pld.fft); the exact chain is timed beside it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _timed(module, names: tuple[str, ...], acc: dict) -> None:
    """Wrap module.<name> so that its wall time adds up in acc[name] (the breakdown of a run)."""
    for name in names:
        f = getattr(module, name)

        def g(*a, _f=f, _n=name, **k):
            t = time.perf_counter()
            try:
                return _f(*a, **k)
            finally:
                acc[_n] = acc.get(_n, 0.0) + time.perf_counter() - t

        setattr(module, name, g)


def _ours(contract: str, q: str, sigma: str, steps: int, delta: str, grid: str, method: str | None = None, out: str | None = None) -> dict:
    """certify's pld/dpsgd certificate (``method`` None: the default composition, the FFT from accountant.FFT_MIN_STEPS steps on; "exact":
    the exact chain), written to ``out`` when given (then timed by ``certify verify``, :func:`_verify`)."""
    sys.path.insert(0, ROOT)
    from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
    from certify.pld import certify_pld, compose
    from certify.pld import fft  # noqa: F401  numpy imported before the timer, as dp_accounting's is by its import (like for like)

    acc: dict = {}
    _timed(compose, ("power", "multiply", "round_up", "floor_div", "trim"), acc)
    c = POISSON_ADD_REMOVE if contract == "poisson" else FIXED_SIZE_REPLACE_ONE
    t, cpu = time.perf_counter(), time.process_time()
    cert = certify_pld(c, q, sigma, steps, delta, grid, method=method)
    sec, cpu = time.perf_counter() - t, time.process_time() - cpu
    if out:
        with open(out, "w") as f:
            f.write(cert.dumps())
    qs = cert.quantities
    up = float(qs["epsilon_upper"].value.upper().fmpq())  # display only
    lo = float(qs["epsilon_lower"].value.lower().fmpq())
    rescale = acc.get("round_up", 0.0) + acc.get("floor_div", 0.0)
    return {
        "eps_up": up,
        "eps_low": lo,
        "seconds": sec,
        "cpu_seconds": cpu,
        "breakdown": {  # wall seconds: the exact products (FLINT) and the rest of multiply, rescaling, trimming, the rest
            "products": acc.get("multiply", 0.0) - rescale - acc.get("trim", 0.0),
            "rescale": rescale,
            "trim": acc.get("trim", 0.0),
            "other": sec - acc.get("power", 0.0),
        },
        "budget": cert.budget,
        "method": "fft" if "fft" in cert.witnesses else "exact",
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _float(contract: str, q: str, sigma: str, steps: int, delta: str, grid: str) -> dict:
    from dp_accounting.pld import privacy_loss_distribution as PLD

    if contract != "poisson":
        raise SystemExit("dp_accounting side-by-side is for the Poisson contract (its fixed-size PLD differs)")
    out = {}
    for pess in (True, False):
        t, cpu = time.perf_counter(), time.process_time()
        p = PLD.from_gaussian_mechanism(
            float(sigma), sampling_prob=float(q), value_discretization_interval=float(grid), pessimistic_estimate=pess, use_connect_dots=pess
        )
        e = p.self_compose(steps).get_epsilon_for_delta(float(delta))
        out["pessimistic" if pess else "optimistic"] = {"eps": e, "seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - cpu}
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _verify(contract: str, q: str, sigma: str, steps: int, delta: str, grid: str, path: str) -> dict:
    """Like for like, each in a fresh process (imports included, as a user runs them): wall seconds of the command
    that produces the certificate (``certify dpsgd --accountant pld ... --out FILE``) and of ``certify verify FILE``."""
    samp = ["--sampling", "poisson"] if contract == "poisson" else ["--sampling", "fixed-size"]
    cmd = [sys.executable, "-m", "certify", "dpsgd", "--accountant", "pld", *samp, "--sampling-rate", q, "--noise-multiplier", sigma]
    cmd += ["--steps", str(steps), "--delta", delta, "--grid", grid, "--out", path]
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    produce = time.perf_counter() - t
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "certify", "verify", "--quiet", path], cwd=ROOT, capture_output=True, text=True)
    return {"seconds": time.perf_counter() - t, "exit": r.returncode, "produce_seconds": produce, "produce_exit": p.returncode}


def _prv(contract: str, q: str, sigma: str, steps: int, delta: str, grid: str) -> dict:
    """Opacus's PRVAccountant (Gopi, Lee, Wutschitz 2021): what its ``get_epsilon`` runs, timed (the discrete PRV
    and its epsilon bracket; get_epsilon returns the upper end), through the private ``_get_dprv``."""
    import math

    from opacus.accountants import PRVAccountant

    if contract != "poisson":
        raise SystemExit("Opacus's PRV accountant is for the Poisson contract")
    d = float(delta)
    out = {}
    mesh_eps_error = float(grid) * math.sqrt(steps * math.log(12 / (d / 1000)) / 2)  # its mesh = eps_error / that root
    for name, eps_error in (("default", 0.01), ("grid", mesh_eps_error)):
        acc = PRVAccountant()
        acc.history = [(float(sigma), float(q), steps)]
        t = time.perf_counter()
        lo, _, up = acc._get_dprv(eps_error=eps_error, delta_error=d / 1000).compute_epsilon(d, d / 1000, eps_error)
        sec = time.perf_counter() - t
        out[name] = {"eps": up, "eps_low": lo, "eps_up": up, "seconds": sec, "eps_error": eps_error}
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
    ap.add_argument("--child", choices=["ours", "exact", "float", "prv"], help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--no-exact", action="store_true", help="skip the exact chain's run (the column beside the default)")
    ap.add_argument("--no-verify", action="store_true", help="skip timing certify verify of the default's certificate")
    ap.add_argument("--no-float", action="store_true")
    ap.add_argument("--no-prv", action="store_true")
    ap.add_argument("--no-ledger", action="store_true", help="skip the 1000-event ledger row (bench_events.py's, at --grid)")
    ap.add_argument("--markdown", action="store_true", help="end with markdown table rows")
    a = ap.parse_args()
    if a.child:
        if a.child in ("ours", "exact"):
            res = _ours(a.contract, a.q, a.sigma, int(a.steps), a.delta, a.grid, None if a.child == "ours" else "exact", a.out)
        else:
            res = {"float": _float, "prv": _prv}[a.child](a.contract, a.q, a.sigma, int(a.steps), a.delta, a.grid)
        print(json.dumps(res))
        return
    print(
        f"certified PLD vs dp_accounting float PLD and Opacus PRV: {a.contract}, q={a.q}, sigma={a.sigma}, delta={a.delta}, grid={a.grid}", flush=True
    )
    # not imported here: a child process inherits the parent's peak RSS (Linux keeps it across fork and exec)
    have_prv = not a.no_prv and a.contract == "poisson" and importlib.util.find_spec("opacus") is not None
    rows = []
    for T in [int(float(x)) for x in a.steps.split(",")]:
        base = [sys.executable, __file__, "--steps", str(T), "--grid", a.grid, "--q", a.q, "--sigma", a.sigma, "--delta", a.delta]
        base += ["--contract", a.contract]

        def child(name: str, *extra: str) -> dict:
            return json.loads(subprocess.run(base + ["--child", name, *extra], capture_output=True, text=True, check=True).stdout)

        import tempfile

        path = os.path.join(tempfile.mkdtemp(prefix="bench_pld_"), "cert.json")
        ours = child("ours")
        gap = ours["eps_up"] - ours["eps_low"]
        line = (
            f"T={T:>8}: certified eps in [{ours['eps_low']:.6f}, {ours['eps_up']:.6f}] (gap {gap:.2e}, "
            f"eps_up/eps_low-1 = {ours['eps_up'] / ours['eps_low'] - 1:.2e}) {ours['seconds']:.2f} s ({ours['cpu_seconds']:.2f} CPU s), "
            f"peak RSS {ours['peak_rss_mib']:.0f} MiB, composition {ours['method']}\n    where: "
            + ", ".join(f"{k} {v:.2f} s" for k, v in ours["breakdown"].items())
        )
        row = {"T": T, "ours": ours}
        if not a.no_verify:
            ver = row["verify"] = _verify(a.contract, a.q, a.sigma, T, a.delta, a.grid, path)
            line += (
                f"\n    command line (fresh processes): produce {ver['produce_seconds']:.2f} s (exit {ver['produce_exit']}), "
                f"certify verify {ver['seconds']:.2f} s (exit {ver['exit']}), verify / produce {ver['seconds'] / ver['produce_seconds']:.2f}x"
            )
        if not a.no_exact and ours["method"] != "exact":
            ex = row["exact"] = child("exact")
            line += (
                f"\n    exact chain: [{ex['eps_low']:.6f}, {ex['eps_up']:.6f}] (gap {ex['eps_up'] - ex['eps_low']:.2e}) {ex['seconds']:.2f} s; "
                f"default / exact {ours['seconds'] / ex['seconds']:.2f}x"
            )
        if not a.no_float and a.contract == "poisson":
            fl = row["float"] = child("float")
            pe, op = fl["pessimistic"], fl["optimistic"]
            both, fgap = pe["seconds"] + op["seconds"], pe["eps"] - op["eps"]
            line += (
                f"\n    dp_accounting pess {pe['eps']:.6f} ({pe['seconds']:.2f} s), opt {op['eps']:.6f} ({op['seconds']:.2f} s), "
                f"both {both:.2f} s; float bracket {fgap:.4f} ({fgap / max(gap, 1e-300):.0f}x the certified gap); "
                f"certify / both {ours['seconds'] / both:.1f}x (CPU {ours['cpu_seconds'] / (pe['cpu_seconds'] + op['cpu_seconds']):.1f}x), "
                f"/ pess {ours['seconds'] / pe['seconds']:.1f}x"
            )
        if have_prv:
            pr = row["prv"] = child("prv")
            for name in ("default", "grid"):
                v = pr[name]
                line += (
                    f"\n    Opacus PRV ({name}, eps_error {v['eps_error']:.3g}): eps {v['eps']:.6f} in its bracket [{v['eps_low']:.6f}, "
                    f"{v['eps_up']:.6f}], {v['seconds']:.2f} s; certify / PRV {ours['seconds'] / v['seconds']:.1f}x"
                )
        rows.append(row)
        print(line, flush=True)
    if a.markdown:
        print()
        print(
            "| T | certified [eps_low, eps_up] | gap | certify s (CPU s) | products / rescale / trim / rest s | RSS MiB | dp_acc pess / opt eps |"
            " pess / opt / both s | certify / both (CPU) |"
            " PRV (0.01) eps [low, up] | PRV s | PRV (mesh = grid) s | certify / PRV (0.01) |"
            " method | exact chain [eps_low, eps_up] | exact s | CLI produce s | CLI verify s | verify / produce |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            o = r["ours"]
            cells = [
                f"{r['T']:.0e}".replace("e+0", "e"),
                f"[{o['eps_low']:.6f}, {o['eps_up']:.6f}]",
                f"{o['eps_up'] - o['eps_low']:.2e}",
                f"{o['seconds']:.2f} ({o['cpu_seconds']:.2f})",
                " / ".join(f"{v:.2f}" for v in o["breakdown"].values()),
                f"{o['peak_rss_mib']:.0f}",
            ]
            if "float" in r:
                pe, op = r["float"]["pessimistic"], r["float"]["optimistic"]
                both = pe["seconds"] + op["seconds"]
                cells += [
                    f"{pe['eps']:.6f} / {op['eps']:.6f}",
                    f"{pe['seconds']:.2f} / {op['seconds']:.2f} / {both:.2f}",
                    f"{o['seconds'] / both:.1f}x ({o['cpu_seconds'] / (pe['cpu_seconds'] + op['cpu_seconds']):.1f}x)",
                ]
            else:
                cells += ["-"] * 3
            if "prv" in r:
                d, g = r["prv"]["default"], r["prv"]["grid"]
                cells += [
                    f"{d['eps']:.4f} [{d['eps_low']:.4f}, {d['eps_up']:.4f}]",
                    f"{d['seconds']:.2f}",
                    f"{g['seconds']:.2f}",
                    f"{o['seconds'] / d['seconds']:.1f}x",
                ]
            else:
                cells += ["-"] * 4
            cells.append(o["method"])
            if "exact" in r:
                ex = r["exact"]
                cells += [f"[{ex['eps_low']:.6f}, {ex['eps_up']:.6f}]", f"{ex['seconds']:.2f}"]
            else:
                cells += ["-"] * 2
            if "verify" in r:
                v = r["verify"]
                cells += [f"{v['produce_seconds']:.2f}", f"{v['seconds']:.2f}", f"{v['seconds'] / v['produce_seconds']:.2f}x"]
            else:
                cells += ["-"] * 3
            print("| " + " | ".join(cells) + " |")
    if not a.no_ledger and not a.no_float:
        _ledger_row(float(a.grid), float(a.delta))


#: the events/pld rows besides the ledger (dp_accounting expressions, evaluated with ``d`` = dp_accounting): one
#: mechanism self-composed, through ``certify account --accountant pld``'s engine (certify.accounting.PLDAccountant)
EVENT_ROWS = (
    ("PSG(0.01, 2) x 1e4", "d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.01, d.GaussianDpEvent(2.0)), 10**4)"),
    ("PSG(0.01, 2) x 1e6", "d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.01, d.GaussianDpEvent(2.0)), 10**6)"),
    ("Laplace(1000) x 1e4", "d.SelfComposedDpEvent(d.LaplaceDpEvent(1000.0), 10**4)"),
)


def _ledger_row(grid: float, delta: float) -> None:
    """The heterogeneous 1000-event ledger (300 Gaussian, 200 Laplace, 500 Poisson-sampled Gaussian events) at the
    same grid, then the EVENT_ROWS, each in a fresh process: bench_events.py's PLD row (dp_accounting's pessimistic
    and optimistic PLDs and certify's events/pld bracket, their times, the certified bracket, the method, and
    ``certify verify`` of the certificate in the same process, caches cleared)."""
    here = os.path.dirname(__file__)
    print()
    for label, expr in (("PLD, 1000-event ledger, grid", None),) + EVENT_ROWS:
        ev = "None" if expr is None else f"(lambda d: {expr})(__import__('dp_accounting'))"
        code = f"import sys; sys.path.insert(0, {here!r}); import bench_events; bench_events.pld_rows([{grid!r}], {delta!r}, {ev}, {label!r})"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        print(out, end="", flush=True)


if __name__ == "__main__":
    main()
