"""``certify proofs``: run the catalogue of proof obligations, print the table, write proofs/REPORT.md."""
from __future__ import annotations

import argparse
import os
import sys

from ..balls import InputError
from ..exits import EXIT_FAILED  # an obligation is false or undecided
from . import papers
from .core import FALSE, UNDECIDED, report_markdown, run, table_text

# registry hooks (see certify/registry.py)
KEY = "proofs"
COMMANDS = {"proofs": __name__}


def _default_report() -> str:
    """proofs/REPORT.md under the current directory (the repository root, like tables/)."""
    return os.path.join("proofs", "REPORT.md")


def register(sub) -> None:
    p = sub.add_parser(
        "proofs", help="check the papers' hand calculations (sympy + ball arithmetic), write proofs/REPORT.md",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Runs the catalogue of proof obligations: displayed identities, inequalities and numeric\n"
            "claims of the papers, each checked by exact sympy simplification (difference reduced to 0,\n"
            "sign proved from the symbols' domains) or by certified ball arithmetic over the stated domain\n"
            "(a parameter box bisected until every piece is decided). Prints a table (obligation,\n"
            "location, method, verdict, time) and writes the Markdown report. A claim found false is\n"
            "reported with its counterexample or corrected statement.\n\n"
            "Exit status: 0 if every obligation is proved, 1 if any is false or undecided."))
    p.add_argument("--paper", choices=sorted(papers()), action="append",
                   help="only this paper (repeatable; default: all)")
    p.add_argument("--report", metavar="FILE", default=None,
                   help="where to write the Markdown report (default: proofs/REPORT.md under the current directory)")
    p.add_argument("--no-report", action="store_true", help="print the table only")
    p.set_defaults(func=run_proofs)


def run_proofs(args) -> int:
    from ..cli import check_directory, check_writable, write_atomically
    selected = args.paper or papers()
    path = None
    if not args.no_report:  # checked before the (long) run: a bad --report fails at once, exit 2
        path = args.report or _default_report()
        if args.report is None:
            check_directory(os.path.dirname(os.path.abspath(path)), "--report")
        else:
            check_writable(path, "--report")
    results = run(selected)
    sys.stdout.write(table_text(results))
    if path is not None:
        directory = os.path.dirname(os.path.abspath(path))
        if args.report is None:
            os.makedirs(directory, exist_ok=True)
        if not os.path.isdir(directory):
            raise InputError("--report", f"directory {directory} does not exist")
        cmd = "certify proofs" + "".join(f" --paper {p}" for p in (args.paper or []))
        write_atomically(path, report_markdown(results, cmd) + "\n", "--report")
        sys.stdout.write(f"report written to {path}\n")
    bad = [r for r in results if r.outcome.verdict in (FALSE, UNDECIDED)]
    return EXIT_FAILED if bad else 0
