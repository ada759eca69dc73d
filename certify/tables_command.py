"""``certify tables``: regenerate the papers' published tables and compare them with the printed values."""

from __future__ import annotations

import importlib
import os
import time

from . import registry
from .balls import InputError, int_flag, require_in
from .cli import write_atomically
from .records import TableVerdict
from .limits import cap

# registry hooks (see certify/registry.py)
KEY = "tables"
COMMANDS = {"tables": __name__}


def register(sub) -> None:
    p = sub.add_parser(
        "tables",
        help="check the papers' tables: regenerate them and compare each printed number with its enclosure",
        description="Regenerate tables/<paper>.{csv,md} from certified enclosures, each printed value beside "
        "its enclosure and a verdict (confirmed / mismatch). Prints counts; exits 1 on any "
        "mismatch unless --report-only. Run from the repository root (or pass --tables-dir).",
    )
    p.add_argument("--paper", choices=list(registry.table_papers()), action="append", help="which paper's tables (repeatable; default: all)")
    p.add_argument(
        "--tables-dir", default="tables", metavar="DIR", help="folder holding published/ and receiving the regenerated tables (default: tables)"
    )
    p.add_argument("--check", action="store_true", help="compare only: do not rewrite the files (still exits 1 on a mismatch)")
    p.add_argument("--report-only", action="store_true", help="exit 0 even if a printed value mismatches")
    p.add_argument(
        "--cache-dir",
        default=".certify-cache",
        metavar="DIR",
        help="on-disk cache of rho witnesses and computed cells (default .certify-cache; '' to disable)",
    )
    p.add_argument("--jobs", type=int_flag(1, MAX_JOBS), default=2, metavar="N", help=f"worker processes for bok, 1 to {MAX_JOBS} (default 2)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="bok: run on the Dask cluster at ADDRESS (its workers; --jobs unused)")
    p.set_defaults(func=run)


MAX_JOBS = cap("jobs")


def check_tables_dir(d: str, flag: str = "--tables-dir") -> None:
    """InputError naming ``flag`` unless ``d`` is a readable folder whose ``published/*.csv`` are regular files
    (a FIFO or a device there would block the reader or never end). Nothing is read here but the listing."""
    if not os.path.isdir(d):
        raise InputError(flag, f"{d} is not a directory (a folder holding published/; run from the repository root)")
    published = os.path.join(d, "published")
    try:
        names = sorted(os.listdir(published))
    except OSError as err:
        raise InputError(flag, f"cannot read {published}: {err.strerror or err} (run from the repository root)") from None
    for name in names:
        path = os.path.join(published, name)
        if name.endswith(".csv") and not os.path.isfile(path):
            raise InputError(flag, f"{path} is not a regular file")


def check_flags(args) -> None:
    """Decide every flag before anything is printed (a refusal is the only line on stderr): ``--tables-dir`` by
    :func:`check_tables_dir` (with ``--check`` too: writability is checked by :func:`certify.cli.check_paths`
    only when the files are rewritten), ``--scheduler`` a Dask scheduler that
    answers (connected once and closed; the paper hooks connect again)."""
    require_in("--jobs", args.jobs, 1, MAX_JOBS, "[]", integer=True)
    check_tables_dir(args.tables_dir)
    if args.scheduler is not None:
        from .sweep.executor import make_executor

        with make_executor(None, None, args.scheduler):  # InputError naming --scheduler if nothing usable answers
            pass


def run(args) -> int:
    check_flags(args)
    papers = args.paper or list(registry.table_papers())
    mismatches = 0
    hooks = registry.table_papers()
    for paper in papers:
        t0 = time.perf_counter()
        rows, outputs = importlib.import_module(hooks[paper]).regenerate(args.tables_dir, args.cache_dir or None, args.jobs, scheduler=args.scheduler)
        if not args.check:
            for name, text in outputs.items():
                write_atomically(os.path.join(args.tables_dir, name), text, "--tables-dir")
        bad = [r for r in rows if r.verdict != TableVerdict.CONFIRMED]
        bad = list({(r.id, r.published): r for r in bad}.values())  # a row may appear in two tables
        mismatches += len(bad)
        print(
            f"{paper}: {len(rows) - len(bad)} confirmed, {len(bad)} mismatch "
            f"({time.perf_counter() - t0:.2f} s)" + ("" if args.check else f"; wrote {', '.join(outputs)}")
        )
        for r in bad:
            print(
                f"  MISMATCH {r.id}: published {r.published}, certified {r.certified_enclosure}, "
                f"distance {r.distance}" + (f"; {r.explanation}" if r.explanation else "")
            )
    return 1 if mismatches and not args.report_only else 0
