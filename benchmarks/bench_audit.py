"""Time of ``certify audit`` on the example claims (examples/claims/), step by step, one process.

    python benchmarks/bench_audit.py [--grid 1e-4] [--skip-slow]

For each claim: the verdict, the time of each certified accountant run (Rényi, then PLD per grid), the time
of checking the deciding certificate (``verify_text``), and dp_accounting's float accountants on the same
contract (when installed). Memos (Rényi choices, PLD one-step measures and powers) are cleared between claims
(fresh queries); the check re-runs the deterministic PLD pipeline and may reuse powers the run just cached.
``--skip-slow`` leaves out the
claim that needs the PLD accountant at the finest grid (about 20-30 s on 2 shared cores).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from certify.audit import audit, load_claim  # noqa: E402
from certify.audit.claim import show  # noqa: E402
from certify.audit.floats import cross_check  # noqa: E402
from certify.balls import exact, lower_decimal, upper_decimal  # noqa: E402
from certify.pld import accountant as pld_accountant  # noqa: E402
from certify.pld import compose as pld_compose  # noqa: E402
from certify.poisson.accountant import clear_memo  # noqa: E402
from certify.verify import verify_text  # noqa: E402

SLOW = {"tf_privacy_mnist_pld.json"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grid", default="1e-4")
    ap.add_argument("--skip-slow", action="store_true")
    args = ap.parse_args()
    folder = os.path.join(ROOT, "examples", "claims")
    print("| claim | verdict | accountant runs (bounds, seconds) | check s | total s | dp_accounting RDP / PLD (float) |")
    print("|---|---|---|---|---|---|")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json") or (args.skip_slow and name in SLOW):
            continue
        clear_memo()
        pld_compose.clear_cache()
        pld_accountant._one_steps.cache_clear()
        c = load_claim(os.path.join(folder, name))
        t0 = time.perf_counter()
        v = audit(c, grid=args.grid)
        total = time.perf_counter() - t0
        runs = []
        for a in v.attempts:
            tag = a.accountant + (f" h={show(a.grid)}" if a.grid is not None else "")
            lo = (lower_decimal(a.epsilon_lower, 4) if a.epsilon_lower else "0") if a.accountant == "pld" else "-"
            up = upper_decimal(a.epsilon_upper, 5) if a.epsilon_upper is not None else "-"
            runs.append(f"{tag}: [{lo}, {up}] {a.seconds:.2f}")
        d = v.deciding or v.best_upper
        t1 = time.perf_counter()
        ok = verify_text(d.certificate.dumps()).ok if d else None
        check = time.perf_counter() - t1
        _, floats = cross_check(c, exact(args.grid))
        fl = " / ".join(f"{f.epsilon:.4f} ({f.seconds:.2f} s)" if f.epsilon is not None else "-" for f in floats)
        print(
            f"| {name} (eps {show(c.epsilon)}) | {v.outcome}{'' if ok else ' (CHECK FAILED)'} | "
            f"{'; '.join(runs)} | {check:.2f} | {total:.2f} | {fl or 'not installed'} |"
        )


if __name__ == "__main__":
    main()
