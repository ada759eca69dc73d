"""Cold starts: a first query and a fresh ``certify verify`` in a new process, against the same work warm.

    python benchmarks/bench_coldstart.py [--runs 7] [--root PATH] [--baseline PATH]

For each case, in the same run:
  * cold: CPU time (user + system) of a new ``python`` process doing it once (``python -m certify verify CERT --quiet`` for a
    ``dpsgd/renyi-poisson``, an ``objpert/theorem-4.1`` and a ``pld/dpsgd`` certificate; ``python -c "from certify
    import api; api.dpsgd_epsilon(...)"`` for the first Rényi query, Poisson sampling q = 0.01, sigma = 1.1,
    T = 1000, delta = 1e-5); median of ``--runs`` processes, after one process that writes the bytecode cache;
  * warm: the CPU time of the same call in one process after a first call (median of ``--runs`` calls; certify's memos of the
    Poisson and PLD accountants are cleared before each, so that a warm call does the work, not a memo lookup);
  * interpreter: ``python -c pass`` (the interpreter's own start, site packages included);
  * ratio: cold / (warm + interpreter); issue 24 asks for at most 1.5.
The floats libraries' first calls on the same events, when installed: dp_accounting's ``RdpAccountant``
(compose a ``PoissonSampledDpEvent`` of a ``GaussianDpEvent`` 1000 times, ``get_epsilon``) and Opacus's
``RDPAccountant`` (history (1.1, 0.01, 1000), ``get_epsilon``; importing ``opacus.accountants`` imports torch).
The row ``interpreter + python-flint`` is the floor of any certify process: ``python -c "import flint"``.

Child processes run with ``PYTHONPATH=ROOT`` (default: this repository; ``--root /other/checkout`` measures
another tree; ``--baseline /checkout/of/main`` adds that tree's cold figures, measured in turn with the first's)
and a bytecode cache in a temporary folder (``PYTHONPYCACHEPREFIX``), as an installed package
has: without one, every run would compile every imported module again. Milliseconds of CPU time, which other
load on a shared machine barely changes (these processes are single-threaded but for torch's; the last column
are the cold wall time, for the record, and the baseline tree's cold CPU time).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

QUERY = (
    "from certify import api\n"
    "api.dpsgd_epsilon(sampling='poisson', adjacency='add-remove', sampling_rate='0.01', noise_multiplier='1.1', steps=1000, delta='1e-5')\n"
)
DPA = (
    "import dp_accounting as dpa\n"
    "acc = dpa.rdp.RdpAccountant()\n"
    "acc.compose(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 1000)\n"
    "acc.get_epsilon(1e-5)\n"
)
OPACUS = "from opacus.accountants import RDPAccountant\nacc = RDPAccountant()\nacc.history = [(1.1, 0.01, 1000)]\nacc.get_epsilon(1e-5)\n"
#: writes the three certificates into the folder argv[1]
MAKE_CERTIFICATES = """
import sys
from certify import api, verify
from certify.pld import certify_pld
folder = sys.argv[1]
docs = {
    "renyi-poisson": api.dpsgd_epsilon(sampling="poisson", adjacency="add-remove", sampling_rate="0.01",
                                       noise_multiplier="1.1", steps=1000, delta="1e-5").certificate,
    "objpert": verify.spec_for("objpert/theorem-4.1").example(),
    "pld": certify_pld(("poisson", "add-remove"), "0.01", "1.1", 1000, "1e-5"),
}
for name, cert in docs.items():
    open(f"{folder}/{name}.json", "w").write(cert.dumps())
"""
#: times ``body`` (a statement) in one process: the first call, then ``runs`` calls after clearing the memos
WARM = """
import io, json, sys, time, contextlib
runs = int(sys.argv[1])
setup, body = sys.argv[2], sys.argv[3]
exec(setup)
def clear():  # the process-level memos of the Poisson and PLD accountants: a warm call redoes the work
    if "certify.poisson.accountant" in sys.modules:
        sys.modules["certify.poisson.accountant"].clear_memo()
    if "certify.pld.accountant" in sys.modules:
        sys.modules["certify.pld.accountant"]._one_steps.cache_clear()
        sys.modules["certify.pld.compose"].clear_cache()
out = io.StringIO()
times = []
for i in range(runs + 1):
    clear()
    with contextlib.redirect_stdout(out):
        t = time.process_time(); exec(body); times.append(time.process_time() - t)
print(json.dumps(times))
"""


def _env(pycache: str, root: str) -> dict:
    env = dict(os.environ, PYTHONPATH=root, PYTHONPYCACHEPREFIX=pycache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cold(argv: list[str], envs: list[dict], runs: int) -> list[tuple[float, float]]:
    """For each environment (a source tree), medians (ms) of the CPU time and the wall time of a new process running
    ``argv``, after one process that fills the bytecode cache; the trees take turns, run after run, so that they
    share the machine's load alike."""
    for env in envs:
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    cpu: list[list[float]] = [[] for _ in envs]
    wall: list[list[float]] = [[] for _ in envs]
    for _ in range(runs):
        for k, env in enumerate(envs):
            c, t = _children_cpu(), time.perf_counter()
            subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            wall[k].append(time.perf_counter() - t)
            cpu[k].append(_children_cpu() - c)
    return [(1e3 * statistics.median(c), 1e3 * statistics.median(w)) for c, w in zip(cpu, wall)]


def warm(setup: str, body: str, env: dict, runs: int) -> float:
    """Median in-process CPU time (ms) of ``body`` after a first call (memos of the Poisson and PLD accountants cleared)."""
    out = subprocess.run([sys.executable, "-c", WARM, str(runs), setup, body], env=env, capture_output=True, text=True, check=True)
    return 1e3 * statistics.median(json.loads(out.stdout.strip().splitlines()[-1])[1:])


def installed(module: str, env: dict) -> bool:
    return subprocess.run([sys.executable, "-c", f"import {module}"], env=env, capture_output=True).returncode == 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="processes (cold) and calls (warm) per case; medians")
    ap.add_argument("--root", default=ROOT, help="the certify source tree to measure (default: this repository)")
    ap.add_argument("--baseline", metavar="PATH", help="another certify tree (e.g. a checkout of main) measured cold alongside")
    args = ap.parse_args(argv)
    root, py = os.path.abspath(args.root), sys.executable
    trees = [root] + ([os.path.abspath(args.baseline)] if args.baseline else [])
    with tempfile.TemporaryDirectory() as tmp:
        envs = [_env(os.path.join(tmp, f"pycache{k}"), tree) for k, tree in enumerate(trees)]
        env = envs[0]
        os.chdir(tmp)  # children put their working folder first on sys.path: it must hold no other certify
        subprocess.run([py, "-c", MAKE_CERTIFICATES, tmp], env=env, check=True)
        interp = cold([py, "-c", "pass"], [env], args.runs)[0]
        rows = [("interpreter (python -c pass)", [interp], None)]
        rows.append(("interpreter + python-flint", cold([py, "-c", "import flint"], [env], args.runs), None))
        for name in ("renyi-poisson", "objpert", "pld"):
            cert = os.path.join(tmp, f"{name}.json")
            body = f"cli.main(['verify', {cert!r}, '--quiet'])"
            fresh = cold([py, "-m", "certify", "verify", cert, "--quiet"], envs, args.runs)
            rows.append((f"certify verify ({name})", fresh, warm("from certify import cli", body, env, args.runs)))
        setup, body = QUERY.splitlines()
        rows.append(("certify: first Rényi query (api)", cold([py, "-c", QUERY], envs, args.runs), warm(setup, body, env, args.runs)))
        for label, module, code in (("dp_accounting RdpAccountant", "dp_accounting", DPA), ("Opacus RDPAccountant", "opacus", OPACUS)):
            if not installed(module, env):
                print(f"({label}: {module} not installed, skipped)")
                continue
            setup, body = code.split("\n", 1)
            rows.append((f"{label}: first call", cold([py, "-c", code], [env], args.runs), warm(setup, body, env, args.runs)))
    print(f"Cold starts, CPU milliseconds (median of {args.runs}; tree {root})\n")
    extra = f" before: cold ({trees[1]}) |" if len(trees) > 1 else ""
    print(f"| case | cold | warm | interpreter | cold / (warm + interpreter) | cold, wall ms |{extra}")
    print("|---|---:|---:|---:|---:|---:|" + ("---:|" if extra else ""))
    for label, measured, w in rows:
        (c, wall), before = measured[0], (f" {measured[1][0]:.0f} |" if len(measured) > 1 else " |" if extra else "")
        if w is None:
            print(f"| {label} | {c:.0f} | | | | {wall:.0f} |{before}")
        else:
            print(f"| {label} | {c:.0f} | {w:.1f} | {interp[0]:.0f} | {c / (w + interp[0]):.2f} | {wall:.0f} |{before}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
