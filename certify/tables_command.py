"""``certify tables``: regenerate the papers' published tables and compare them with the printed values."""
from __future__ import annotations

import os
import sys
import time

from .balls import InputError
from .cli import Progress, write_atomically

PAPERS = ["watkins-arora", "bok"]


def register(sub) -> None:
    p = sub.add_parser(
        "tables", help="regenerate the papers' tables and compare each printed number with its enclosure",
        description="Regenerate tables/<paper>.{csv,md} from certified enclosures, each printed value beside "
                    "its enclosure and a verdict (confirmed / mismatch). Prints counts; exits 1 on any "
                    "mismatch unless --report-only. Run from the repository root (or pass --tables-dir).")
    p.add_argument("--paper", choices=PAPERS, action="append",
                   help="which paper's tables (repeatable; default: all)")
    p.add_argument("--tables-dir", default="tables", metavar="DIR",
                   help="folder holding published/ and receiving the regenerated tables (default: tables)")
    p.add_argument("--check", action="store_true",
                   help="compare only: do not rewrite the files (still exits 1 on a mismatch)")
    p.add_argument("--report-only", action="store_true", help="exit 0 even if a printed value mismatches")
    p.add_argument("--cache-dir", default=".certify-cache", metavar="DIR",
                   help="on-disk cache of rho witnesses and computed cells (default .certify-cache; '' to disable)")
    p.add_argument("--jobs", type=int, default=2, metavar="N",
                   help=f"worker processes for bok, 1 to {MAX_JOBS} (default 2)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="bok: run on the Dask cluster at ADDRESS (its workers; --jobs unused)")
    p.set_defaults(func=run)


MAX_JOBS = 64


def run(args) -> int:
    if not 1 <= args.jobs <= MAX_JOBS:
        raise InputError("--jobs", f"must be an integer in [1, {MAX_JOBS}], got {args.jobs}")
    papers = args.paper or PAPERS
    mismatches = 0
    for paper in papers:
        t0 = time.perf_counter()
        if paper == "watkins-arora":
            from .objpert import tables as T
            sys.stderr.write("watkins-arora: re-deriving Example 4.8, C.4 (mu = 1e-2, 1e-3) and C.5 ...\n")
            tables = T.compare_tables(args.tables_dir)
            rows = [r for stem in tables for r in tables[stem]]
            outputs = T.outputs(tables)
        elif paper == "bok":
            from .dpsgd import tables as B
            sys.stderr.write("bok: Tables 1-6, four certified columns (ours, Birrell, Wang; lossless at PLD grid 1e-4) ...\n")
            with Progress("bok"):  # a heartbeat line every 5 s, also when stderr is not a terminal
                rows, outputs = B.run(args.tables_dir, args.cache_dir or None, args.jobs, scheduler=args.scheduler)
            for col, c in B.counts(rows).items():
                print(f"  {col:<9} {B.count_text(c)}")
            by_table = {}
            for r in rows:
                by_table.setdefault(r["table"], []).append(r)
            for t, sub in sorted(by_table.items()):
                c = B.counts(sub)
                print(f"  table {t}: " + ", ".join(f"{col} {c[col]['confirmed']}/{len(sub)}" for col in B.COLUMNS))
            rows = [{"id": f"table{r['table']} sigma={r['sigma']} T={r['T']} {col}", "published": r[f"{col}_published"],
                     "certified_enclosure": r[col], "distance": r[f"{col}_distance"],
                     "verdict": r[f"{col}_verdict"]} for r in rows for col in B.COLUMNS]
        if not args.check:
            for name, text in outputs.items():
                write_atomically(os.path.join(args.tables_dir, name), text, "--tables-dir")
        bad = [r for r in rows if r["verdict"] != "confirmed"]
        bad = list({(r["id"], r["published"]): r for r in bad}.values())  # a row may appear in two tables
        mismatches += len(bad)
        print(f"{paper}: {len(rows) - len(bad)} confirmed, {len(bad)} mismatch "
              f"({time.perf_counter() - t0:.2f} s)" + ("" if args.check else f"; wrote {', '.join(outputs)}"))
        for r in bad:
            print(f"  MISMATCH {r['id']}: published {r['published']}, certified {r['certified_enclosure']}, "
                  f"distance {r['distance']}" + (f"; {r['explanation']}" if r.get("explanation") else ""))
    return 1 if mismatches and not args.report_only else 0
