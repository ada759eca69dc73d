"""``certify sweep QUERIES --out DIR``: run many certifying queries on Dask (or a local process pool).

Every row of QUERIES (CSV or JSON Lines, see :mod:`.queries`) is one ``certify COMMAND FLAGS`` query.
Its certificate goes to ``DIR/<command>-<sha256 of the canonical query, 16 hex digits>.json`` (written
by this process, atomically, as results arrive) and one row per query to ``DIR/summary.csv``: appended
(flushed) as results arrive, then rewritten in input order at the end, so the final file does not
depend on the number of workers, the executor or the order of completion. Timings go to stderr only.

A rerun skips every query whose certificate is present and verifies (:func:`certify.verify.verify_text`).
A bad row (malformed, unknown command or flag, bad value) is reported on its summary row and does not stop
the sweep; the exit status is then 1. A QUERIES file that cannot be read as a whole, bad options or an
unreachable scheduler: exit 2 and nothing written.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import time

from ..balls import InputError, int_flag
from ..limits import cap
from ..cli import write_atomically
from ..exits import EXIT_FAILED as EXIT_FAILED_ROWS, EXIT_INTERRUPTED
from . import runner
from .executor import make_executor
from .queries import read_queries

SUMMARY = "summary.csv"
COLUMNS = ("row", "command", "certificate", "status", "result", "error")
SUCCESS = ("ok", "stopped-early")
#: the headline result of a certificate: its privacy epsilon if it has one (certified upper bound), ...
PRIVACY_QUANTITIES = ("epsilon", "epsilon_upper")
#: ... else its last proved "(eps, delta)-DP" claim, else the first of these quantities, else its last proved claim
OTHER_QUANTITIES = ("rho", "delta_N", "delta", "renyi_alpha", "delta_gaussian")

_DESCRIPTION = """\
Run every query of QUERIES (one certifying command per row) on Dask distributed (a LocalCluster of
--workers processes on 127.0.0.1 by default, or the cluster at --scheduler) or on a local process pool
(--executor local; the fallback when dask is not installed: pip install '.[distributed]').

QUERIES is CSV with a header, or JSON Lines: a 'command' column naming the sub-command (dpsgd, rho,
objpert, objpert-rdp, calibrate, gaussian-benchmark, ...) and one column per flag, named as the flag
without its leading dashes and with underscores for dashes (sampling_rate, noise_multiplier, steps,
delta, ...). Cells are exact text; an empty cell means the flag is not given; a switch is true/false.

Writes DIR/<command>-<hash>.json (the certificate, named by a hash of the exact query) and
DIR/summary.csv (row, command, certificate, status ok/stopped-early/undecided/error, result, error),
identical whatever the workers and completion order. A rerun skips queries whose certificate is present
and verifies. Exit 0 if every row succeeded, 1 if a row failed (reported in the summary), 2 for bad
input (nothing written), 130 on Ctrl-C (a rerun completes only the missing rows).
"""


def register(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="run many certifying queries (CSV / JSON Lines) on Dask or a process pool",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: certify sweep queries.csv --out results/ --workers 2\n"
        "         certify sweep queries.csv --out results/ --scheduler tcp://HOST:8786",
    )
    p.add_argument("queries", metavar="QUERIES", help="CSV (with a header) or JSON Lines file of queries")
    p.add_argument(
        "--out", dest="out_dir", metavar="DIR", required=True, help="folder receiving the certificates and summary.csv (created if missing)"
    )
    p.add_argument(
        "--workers",
        type=int_flag(1, cap("workers")),
        metavar="N",
        help="worker processes of the LocalCluster or the local pool (default: the CPUs available)",
    )
    p.add_argument("--scheduler", metavar="ADDRESS", help="address of a running Dask scheduler (tcp://HOST:8786) instead of a LocalCluster")
    p.add_argument("--executor", choices=["dask", "local"], help="dask (default when installed) or local (concurrent.futures process pool)")
    p.set_defaults(func=run)


# ----------------------------------------------------------------------------------------------------------
# results
# ----------------------------------------------------------------------------------------------------------
def headline(text: str) -> str:
    """The result a summary row shows, found without knowing the command: the certificate's ``conclusion``
    if it states one; else the recorded ``upper`` decimal (outward-rounded) of its epsilon; else its last
    proved claim that the release is DP; else the upper decimal of its main quantity; else its last proved claim."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return ""
    if not isinstance(doc, dict):
        return ""
    conclusion = doc.get("conclusion")
    if isinstance(conclusion, dict):
        conclusion = conclusion.get("statement")
    if isinstance(conclusion, str) and conclusion.strip():
        return " ".join(conclusion.split())
    quantities = doc.get("quantities") if isinstance(doc.get("quantities"), dict) else {}

    def bound(names):
        for name in names:
            q = quantities.get(name)
            if isinstance(q, dict) and isinstance(q.get("upper"), str):
                return f"{name} <= {q['upper']}"
        return ""

    claims = doc.get("claims") if isinstance(doc.get("claims"), list) else []
    proved = [" ".join(str(c.get("statement", "")).split()) for c in claims if isinstance(c, dict) and c.get("holds")]
    dp = [c for c in proved if ")-DP" in c]
    return bound(PRIVACY_QUANTITIES) or (dp[-1] if dp else "") or bound(OTHER_QUANTITIES) or (proved[-1] if proved else "")


def _csv_line(values) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue()


def _read_old_summary(path: str) -> dict[int, dict]:
    """Rows of a previous run's summary (to keep the status of skipped queries); empty if unreadable."""
    try:
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
        return {int(r["row"]): r for r in rows if r.get("row", "").isdigit()}
    except (OSError, csv.Error, ValueError, KeyError):
        return {}


class Progress:
    """done/total, failed and rate on stderr: a bar redrawn in place on a tty, else a plain line every few seconds."""

    def __init__(self, total: int, stream=None, every: float = 5.0):
        self.total, self.stream = total, stream or sys.stderr
        self.tty = self.stream.isatty()
        self.every = 0.1 if self.tty else every
        self.t0 = self.last = time.monotonic()
        self.done = self.failed = 0
        self.start: int | None = None  # rows already known at the first update (skipped, bad): not in the rate

    def update(self, done: int, failed: int, force: bool = False) -> None:
        self.done, self.failed = done, failed
        if self.start is None:
            self.start = done
        now = time.monotonic()
        if not force and now - self.last < self.every:
            return
        self.last = now
        rate = (done - self.start) / max(now - self.t0, 1e-9)
        left = f", about {(self.total - done) / rate:.0f} s left" if 0 < rate and done < self.total else ""
        text = f"{done}/{self.total} done, {failed} failed" + (f", {rate:.1f} queries/s{left}" if rate else "")
        if self.tty:
            width = 30
            fill = width * done // max(self.total, 1)
            self.stream.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {text}\x1b[K")
        else:
            self.stream.write(f"sweep: {text}\n")
        self.stream.flush()

    def finish(self) -> None:
        self.update(self.done, self.failed, force=True)
        if self.tty:
            self.stream.write("\n")
        elapsed = time.monotonic() - self.t0
        self.stream.write(f"sweep: {self.done} queries in {elapsed:.2f} s\n")
        self.stream.flush()


# ----------------------------------------------------------------------------------------------------------
# the command
# ----------------------------------------------------------------------------------------------------------
def run(args) -> int:
    try:
        return _sweep(args)
    except KeyboardInterrupt:  # before the queries run (reading, verifying present certificates, starting Dask)
        sys.stderr.write("sweep: interrupted; rerun the same command to complete the sweep\n")
        return EXIT_INTERRUPTED


def _sweep(args) -> int:
    out_dir = args.out_dir
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise InputError("--out", f"{out_dir} exists and is not a folder")
    queries = read_queries(args.queries)
    top = runner.parser()

    rows: dict[int, list] = {}  # row number -> summary values, once known
    groups: dict[runner.Task, list[int]] = {}  # identical queries run once
    for q in queries:
        try:
            task = runner.task_for(q, top)
        except InputError as err:
            rows[q.row] = [q.row, q.command, "", "error", "", " ".join((q.error or str(err)).split())]
            continue
        groups.setdefault(task, []).append(q.row)
    commands = {q.row: q.command for q in queries}

    # resume: a query whose certificate is present and verifies is not run again
    summary_path = os.path.join(out_dir, SUMMARY)
    old = _read_old_summary(summary_path) if os.path.isdir(out_dir) else {}
    todo: list[runner.Task] = []
    skipped = 0
    for task, members in groups.items():
        text = _verified_certificate(os.path.join(out_dir, task.certificate))
        if text is None:
            todo.append(task)
            continue
        skipped += len(members)
        for r in members:
            prev = old.get(r, {})
            status = prev.get("status") if prev.get("certificate") == task.certificate and prev.get("status") in SUCCESS else "ok"
            rows[r] = [r, commands[r], task.certificate, status, headline(text), ""]

    executor = make_executor(args.executor, args.workers, args.scheduler) if todo else None
    try:
        os.makedirs(out_dir, exist_ok=True)
        write_atomically(summary_path, _csv_line(COLUMNS) + "".join(_csv_line(rows[r]) for r in sorted(rows)))
        total = len(queries)
        if skipped:
            sys.stderr.write(f"sweep: {skipped} of {total} rows skipped (certificate present and verified)\n")
        if executor is not None:
            n = sum(len(groups[t]) for t in todo)
            sys.stderr.write(
                f"sweep: {n} row{'s' if n != 1 else ''} ({len(todo)} distinct quer{'ies' if len(todo) != 1 else 'y'}) on {executor.describe()}\n"
            )
        progress = Progress(total)
        progress.update(len(rows), _failed(rows), force=bool(rows))
        try:
            if executor is not None:
                with open(summary_path, "a", newline="") as summary:
                    for task, outcome in execute(executor, todo):
                        if outcome.status in SUCCESS:
                            write_atomically(os.path.join(out_dir, task.certificate), outcome.certificate)
                        for r in groups[task]:
                            rows[r] = _row(r, commands[r], task, outcome)
                            summary.write(_csv_line(rows[r]))
                        summary.flush()
                        progress.update(len(rows), _failed(rows))
        except KeyboardInterrupt:
            if executor is not None:
                executor.close(abort=True)
            progress.finish()
            write_atomically(summary_path, _csv_line(COLUMNS) + "".join(_csv_line(rows[r]) for r in sorted(rows)))
            sys.stderr.write(f"sweep: interrupted after {len(rows)} of {total} rows; rerun the same command to complete only the missing rows\n")
            return EXIT_INTERRUPTED
        progress.finish()
    finally:
        if executor is not None:
            executor.close()
    write_atomically(summary_path, _csv_line(COLUMNS) + "".join(_csv_line(rows[r]) for r in sorted(rows)))
    counts = {s: sum(1 for v in rows.values() if v[3] == s) for s in ("ok", "stopped-early", "undecided", "error")}
    sys.stdout.write(
        f"sweep: {len(rows)} rows: "
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + f" ({skipped} skipped: certificate present and verified); summary in {summary_path}\n"
    )
    return EXIT_FAILED_ROWS if _failed(rows) else 0


BATCH_SECONDS = 0.25  # cheap queries are sent in batches of about this many seconds of work
MAX_BATCH = 64


def batch_size(seconds: list[float], remaining: int, workers: int) -> int:
    """Queries per task: 1 unless the queries measured so far are cheap (median well under BATCH_SECONDS),
    then enough to make a task of about BATCH_SECONDS, keeping at least 4 tasks per worker."""
    if not seconds or remaining <= 0:
        return 1
    median = sorted(seconds)[len(seconds) // 2]
    b = min(MAX_BATCH, int(BATCH_SECONDS / max(median, 1e-3)), remaining // (4 * max(workers, 1)))
    return max(1, b)


def execute(executor, todo: list[runner.Task]):
    """Yield ``(task, outcome)`` for every task, in completion order.

    The first 2 x workers tasks run one per executor task and their cost sets the batch size of the rest
    (:func:`batch_size`: one executor task per query for expensive queries, batches for cheap ones, whose
    per-task scheduling overhead would otherwise dominate). A batch the executor could not run (its worker
    kept dying) is split and its queries re-run one by one, so one bad query costs only its own row."""

    def one_by_one(tasks):
        for i, outcome, error in executor.map_unordered(runner.run_query, tasks):
            yield tasks[i], outcome if error is None else runner.Outcome("error", 2, None, error, 0.0)

    workers = max(1, executor.worker_count())
    first, rest = todo[: 2 * workers], todo[2 * workers :]
    seconds = []
    for task, outcome in one_by_one(first):
        seconds.append(outcome.seconds)
        yield task, outcome
    b = batch_size(seconds, len(rest), workers)
    if b > 1:
        sys.stderr.write(f"sweep: cheap queries (median {1000 * sorted(seconds)[len(seconds) // 2]:.0f} ms): sent in batches of {b}\n")
    if b == 1:
        yield from one_by_one(rest)
        return
    batches = [tuple(rest[j : j + b]) for j in range(0, len(rest), b)]
    retry: list[runner.Task] = []
    for i, outcomes, error in executor.map_unordered(runner.run_batch, batches):
        if error is not None:
            retry.extend(batches[i])
            continue
        yield from zip(batches[i], outcomes)
    yield from one_by_one(retry)


def _failed(rows: dict[int, list]) -> int:
    return sum(1 for v in rows.values() if v[3] not in SUCCESS)


def _row(r: int, command: str, task: runner.Task, outcome: runner.Outcome) -> list:
    if outcome.status in SUCCESS:
        return [r, command, task.certificate, outcome.status, headline(outcome.certificate), ""]
    return [r, command, "", outcome.status, "", outcome.error]


def _verified_certificate(path: str) -> str | None:
    """The certificate text at ``path`` if it exists and verifies, else None."""
    if not os.path.isfile(path):
        return None
    from ..verify import verify_text

    try:
        with open(path) as fh:
            text = fh.read()
        return text if verify_text(text).ok else None
    except (OSError, UnicodeDecodeError, InputError, ValueError, KeyError, TypeError):
        return None
    except Exception:  # a certificate the checker cannot handle is simply recomputed  # noqa: BLE001
        return None
