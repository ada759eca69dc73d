"""Bok (2026) Tables 1-6, lossless column: certified enclosures and a classification of the printed values.

Standalone (does not touch :mod:`certify.dpsgd.tables`):  ``python -m certify.pld.tables [--table N]
[--grid 1e-4] [--out FILE]``.

The column's object: the pointwise-maximum profile max(H(Pt||Qt), H(Qt||Pt)) of one fixed-size
replace-one step (Delta = 2/sigma), composed T times, read off at delta -- the pair the certified PLD
accountant composes for the fixed-size contract. For each cell :func:`lossless_group` returns the
certified enclosure [eps_low, eps_up] of that composed pair's exact eps(delta) at grid h (the paper's
1e-4 by default). All T of one (delta, p, sigma) group share one one-step discretisation (window sized
for the group's largest T) and one chain of squared powers; :func:`lossless_cells` shares them across
the deltas of a (p, sigma) too (what ``certify tables --paper bok`` runs, one task per (p, sigma)).

What "confirmed" means. The published column was computed in floats from a pessimistic connect-the-dots
PMF at grid 1e-4 (an estimate of the same pair's eps, from above, with float FFT error) and printed to
two decimals. A printed value x is classified against the set of reals that print as x (rounded to
nearest, :func:`certify.published.printed_interval`):
* ``confirmed``: the printed interval meets [eps_low, eps_up] (some value the pair can have prints as x);
* ``above``: every value of the enclosure prints below x (the printed value overstates the pair's eps:
  still a valid upper bound, but not the lossless value);
* ``below``: every value of the enclosure prints above x (the printed value understates the exact eps of
  the column's pair: refuted as an upper bound);
* ``>=20`` cells: confirmed when eps_low >= 20 (certified), else ``below``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from collections import defaultdict

from ..balls import exact, fmpq, int_flag, lower_decimal, upper_decimal
from ..contract import FIXED_SIZE_REPLACE_ONE
from ..published import printed_interval
from . import compose, readoff
from .accountant import parse_grid, plan, run

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tables", "published", "bok2026_tables_1_to_6.csv")


def lossless_group(p: str, sigma: str, delta: str, steps: list[int], grid: str = "1e-4") -> dict[int, tuple]:
    """{T: (eps_low, eps_up)} (exact rationals) for one (p, sigma, delta) group, sharing the powers."""
    cells = lossless_cells(p, sigma, [(T, delta) for T in steps], grid)
    return {T: cells[(T, delta)] for T in sorted(steps)}


def lossless_cells(p: str, sigma: str, cells: list[tuple[int, str]], grid: str = "1e-4") -> dict[tuple[int, str], tuple]:
    """{(T, delta): (eps_low, eps_up)} (exact rationals; (None, None) when eps_up is not found in the window)
    for every cell of one (p, sigma), all deltas sharing one plan and one chain of squared powers.

    The plan is made for the group's largest T and smallest delta (window tail mass eta = delta 2^-20 / T per
    step, K = :func:`certify.pld.accountant.bits_for`, tau = delta 2^(K-30)): every choice of a plan gives a
    sound enclosure (the run and the read-off are certified for any plan), and the plan of the smallest delta
    only truncates less mass than the other deltas' own plans would, so sharing it costs no tightness. With a
    single delta it is exactly the plan of :func:`lossless_group`. Each power 2^j is computed once and used by
    every T of the group; the group's chains are dropped at the end (bounded memory per worker).
    """
    c = FIXED_SIZE_REPLACE_ONE
    q, s, h = exact(p), exact(sigma), parse_grid(grid)
    deltas = {d: exact(d) for _, d in cells}
    pl = plan(c, q, s, max(T for T, _ in cells), min(deltas.values()), h)
    out = {}
    try:
        for T in sorted({T for T, _ in cells}):
            r = run(c, q, s, T, pl)
            for d_text in sorted({d for t, d in cells if t == T}, key=lambda x: deltas[x]):
                d = deltas[d_text]
                up = readoff.epsilon_pass(r.side(True), d, h)
                out[(T, d_text)] = (None, None) if up is None else (readoff.epsilon_fail(r.side(False), d, h, up), up)
    finally:
        compose.clear_cache()
    return out


def classify(text: str, lo: fmpq, up: fmpq) -> str:
    text = text.strip()
    if text.startswith(">="):
        return "confirmed" if lo >= exact(text[2:]) else "below"
    a, b, _, _ = printed_interval(text, "nearest")
    if up < a:
        return "above"
    if lo > b:
        return "below"
    return "confirmed"


def _rows(table: int | None):
    with open(DATA) as f:
        for row in csv.DictReader(f):
            if table is None or int(row["table"]) == table:
                yield row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", type=int_flag(1, 6))
    ap.add_argument("--grid", default="1e-4")
    ap.add_argument("--out", help="write the cells (JSON lines) here, appended as groups finish")
    a = ap.parse_args(argv)
    groups = defaultdict(list)
    for row in _rows(a.table):
        p = row["p"].rstrip(".")
        T = row["T"].lstrip(">=")
        groups[(row["delta"], p, row["sigma"])].append((row, int(T)))
    counts = defaultdict(int)
    # cheapest groups first (large sigma: narrow loss range), so a partial run classifies the most cells
    for (delta, p, sigma), items in sorted(groups.items(), key=lambda kv: -float(exact(kv[0][2]))):
        t0 = time.perf_counter()
        res = lossless_group(p, sigma, delta, sorted({T for _, T in items}), a.grid)
        for row, T in items:
            lo, up = res[T]
            verdict = "undecided" if lo is None else classify(row["lossless"], lo, up)
            counts[verdict] += 1
            cell = {
                "table": row["table"],
                "delta": delta,
                "p": p,
                "sigma": sigma,
                "T": row["T"],
                "published": row["lossless"],
                "eps_low": None if lo is None else lower_decimal(lo, 8),
                "eps_up": None if up is None else upper_decimal(up, 8),
                "verdict": verdict,
            }
            line = json.dumps(cell)
            print(line, flush=True)
            if a.out:
                with open(a.out, "a") as f:
                    f.write(line + "\n")
        sys.stderr.write(f"group delta={delta} p={p} sigma={sigma}: {time.perf_counter() - t0:.1f} s\n")
    print(json.dumps({"counts": counts}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
