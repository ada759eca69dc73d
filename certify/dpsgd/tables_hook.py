"""The ``certify tables --paper bok`` hook: Tables 1-6 of Bok (2026) via :mod:`.tables`, summarised per column."""

from __future__ import annotations

import sys

from ..records import TableRow


def regenerate(tables_dir: str, cache_dir: str | None, jobs: int, scheduler: str | None = None) -> tuple[list[TableRow], dict[str, str]]:
    """Run :func:`certify.dpsgd.tables.run`, print the per-column and per-table counts, and return one
    comparison row per (table cell, column) and the files to write."""
    from ..cli import Progress
    from . import tables as B

    sys.stderr.write("bok: Tables 1-6, four certified columns (ours, Birrell, Wang; lossless at PLD grid 1e-4) ...\n")
    with Progress("bok"):  # a heartbeat line every 5 s, also when stderr is not a terminal
        rows, outputs = B.run(tables_dir, cache_dir, jobs, scheduler=scheduler)
    for col, c in B.counts(rows).items():
        print(f"  {col:<9} {B.count_text(c)}")
    by_table = {}
    for r in rows:
        by_table.setdefault(r["table"], []).append(r)
    for t, sub in sorted(by_table.items()):
        c = B.counts(sub)
        print(f"  table {t}: " + ", ".join(f"{col} {c[col]['confirmed']}/{len(sub)}" for col in B.COLUMNS))
    rows = [
        TableRow(f"table{r['table']} sigma={r['sigma']} T={r['T']} {col}", r[f"{col}_published"], r[col], r[f"{col}_distance"], r[f"{col}_verdict"])
        for r in rows
        for col in B.COLUMNS
    ]
    return rows, outputs
