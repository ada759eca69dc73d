"""``certify sweep QUERIES --out DIR``: run many certifying queries on Dask (or a local process pool).

Every row of QUERIES (CSV or JSON Lines, see :mod:`.queries`) is one ``certify COMMAND FLAGS`` query.
Its certificate goes to ``DIR/<command>-<sha256 of the canonical query, 16 hex digits>.json`` (written
by this process, atomically, as results arrive) and one row per query to ``DIR/summary.csv``: appended
(flushed) as results arrive, then rewritten in input order at the end, so the final file does not
depend on the number of workers, the executor or the order of completion. Timings go to stderr only.

A rerun skips every query whose certificate is present, verifies (:func:`certify.verify.verify_text`) and is
that query's own: ``DIR/index.jsonl`` records, for every certificate written, the query that wrote it and a
digest of its kind and inputs, and the query's flags must equal the inputs the certificate records under the
same names; any other file is recomputed, with one line on stderr saying so. ``summary.csv`` shows each
certificate's accounting contract (``sampling + adjacency``).
A bad row (malformed, unknown command or flag, bad value) is reported on its summary row and does not stop
the sweep; the exit status is then 1. A QUERIES file that cannot be read as a whole, bad options or an
unreachable scheduler: exit 2 and nothing written.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import sys
import time

from ..balls import InputError, int_flag
from ..cli import check_output_file, write_atomically
from ..inputfile import loads_strict, read_bytes, read_text
from .. import signals
from ..exits import EXIT_FAILED as EXIT_FAILED_ROWS
from ..limits import cap
from . import runner
from .executor import make_executor
from .queries import read_queries

SUMMARY = "summary.csv"
COLUMNS = ("row", "command", "certificate", "status", "result", "contract", "error")
#: which query wrote each certificate of the folder (one JSON object per line; see :func:`_reusable`)
INDEX = "index.jsonl"
MAX_SUMMARY_BYTES = 1 << 30
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
DIR/summary.csv (row, command, certificate, status ok/stopped-early/undecided/error, result, contract,
error) and DIR/index.jsonl (which query wrote each certificate), identical whatever the workers and
completion order. A rerun skips queries whose certificate is present, verifies and is that query's own
(recorded in index.jsonl with the same inputs); any other certificate file is recomputed. Exit 0 if
every row succeeded, 1 if a row failed (reported in the summary), 2 for bad input (nothing written),
130 on Ctrl-C, 143 on SIGTERM (a rerun completes only the missing rows).
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
        rows = list(csv.DictReader(io.StringIO(read_text(path, "--out", MAX_SUMMARY_BYTES), newline="")))
        return {int(r["row"]): r for r in rows if isinstance(r.get("row"), str) and r["row"].isdigit()}
    except (InputError, csv.Error, ValueError, KeyError):
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
    except KeyboardInterrupt as err:  # SIGINT/SIGTERM before the queries run (reading, verifying, starting Dask)
        sys.stderr.write(f"sweep: {signals.message(err)}; rerun the same command to complete the sweep\n")
        return signals.exit_status(err)


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
            rows[q.row] = [q.row, q.command, "", "error", "", "", " ".join((q.error or str(err)).split())]
            continue
        groups.setdefault(task, []).append(q.row)
    commands = {q.row: q.command for q in queries}
    # every file this run may write: a new or a regular file (never a device, FIFO or folder), checked before any work
    for name in (SUMMARY, INDEX, *sorted({t.certificate for t in groups})):
        check_output_file(os.path.join(out_dir, name), "--out")

    # resume: a query whose certificate is present, verifies and is that query's own certificate is not run again
    summary_path = os.path.join(out_dir, SUMMARY)
    index_path = os.path.join(out_dir, INDEX)
    old = _read_old_summary(summary_path) if os.path.isdir(out_dir) else {}
    index = _read_index(index_path) if os.path.isdir(out_dir) else {}
    todo: list[runner.Task] = []
    skipped = 0
    for task, members in groups.items():
        text, why = _reusable(out_dir, task, index)
        if text is None:
            if why:
                rows_text = ", ".join(map(str, members[:5])) + (", ..." if len(members) > 5 else "")
                sys.stderr.write(f"sweep: row {rows_text}: {task.certificate} {why}; recomputing\n")
            todo.append(task)
            continue
        skipped += len(members)
        for r in members:
            prev = old.get(r, {})
            status = prev.get("status") if prev.get("certificate") == task.certificate and prev.get("status") in SUCCESS else "ok"
            rows[r] = [r, commands[r], task.certificate, status, headline(text), contract_of(text), ""]

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
                with open(summary_path, "a", newline="") as summary, open(index_path, "a") as index_file:
                    for task, outcome in execute(executor, todo):
                        if outcome.status in SUCCESS:  # the index line first: a certificate is never there without it
                            index[task.certificate] = index_entry(task, outcome.certificate)
                            index_file.write(json.dumps(index[task.certificate], sort_keys=True) + "\n")
                            index_file.flush()
                            write_atomically(os.path.join(out_dir, task.certificate), outcome.certificate)
                        for r in groups[task]:
                            rows[r] = _row(r, commands[r], task, outcome)
                            summary.write(_csv_line(rows[r]))
                        summary.flush()
                        progress.update(len(rows), _failed(rows))
        except KeyboardInterrupt as err:  # SIGINT, or SIGTERM (signals.Terminated): stop the workers, keep what is done
            with signals.deferred():  # a second signal does not cut the cleanup short
                if executor is not None:
                    executor.close(abort=True)
                _write_summary_and_index(summary_path, index_path, rows, index)
            sys.stderr.write(
                f"sweep: {signals.message(err)} after {len(rows)} of {total} rows; rerun the same command to complete only the missing rows\n"
            )
            return signals.exit_status(err)
        progress.finish()
    except BaseException:  # e.g. a signal before the loop, or a disk error: stop the workers at once
        if executor is not None:
            with signals.deferred():
                executor.close(abort=True)
        raise
    finally:
        if executor is not None:
            executor.close()  # nothing left to do after an abort
    _write_summary_and_index(summary_path, index_path, rows, index)
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
        return [r, command, task.certificate, outcome.status, headline(outcome.certificate), contract_of(outcome.certificate), ""]
    return [r, command, "", outcome.status, "", "", outcome.error]


def _write_summary_and_index(summary_path: str, index_path: str, rows: dict[int, list], index: dict[str, dict]) -> None:
    """summary.csv in input order, and the index of the certificates the summary names (sorted by file name)."""
    write_atomically(summary_path, _csv_line(COLUMNS) + "".join(_csv_line(rows[r]) for r in sorted(rows)))
    named = sorted({v[2] for v in rows.values() if v[2] and v[2] in index})
    write_atomically(index_path, "".join(json.dumps(index[name], sort_keys=True) + "\n" for name in named))


def _document(text: str) -> dict:
    try:
        doc = loads_strict(text, "certificate")
    except InputError:
        return {}
    return doc if isinstance(doc, dict) else {}


def contract_of(text: str) -> str:
    """The accounting contract a certificate records (its ``sampling`` + ``adjacency`` inputs), or "" if none."""
    inputs = _document(text).get("inputs")
    if not isinstance(inputs, dict):
        return ""
    sampling, adjacency = inputs.get("sampling"), inputs.get("adjacency")
    if isinstance(sampling, str) and isinstance(adjacency, str):
        return f"{sampling} + {adjacency}"
    return ""


def inputs_digest(doc: dict) -> str:
    """sha256 of a certificate's canonical inputs: its kind and inputs, as sorted compact JSON."""
    canonical = json.dumps({"kind": doc.get("kind"), "inputs": doc.get("inputs")}, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def index_entry(task: runner.Task, certificate: str) -> dict:
    """The index line of a certificate: the file, the query that wrote it, the digest of its canonical inputs."""
    return {"certificate": task.certificate, "query": [task.command, *task.argv], "inputs": inputs_digest(_document(certificate))}


def _read_index(path: str) -> dict[str, dict]:
    """certificate file name -> its index entry (the last line wins); unreadable lines are ignored."""
    try:
        text = read_text(path, "--out", MAX_SUMMARY_BYTES)
    except InputError:
        return {}
    index: dict[str, dict] = {}
    for line in text.splitlines():
        try:
            entry = loads_strict(line, INDEX)
        except InputError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("certificate"), str) and isinstance(entry.get("query"), list):
            index[entry["certificate"]] = entry
    return index


def _recorded_inputs_agree(task: runner.Task, inputs: dict) -> str:
    """ "" if every flag of the query that the certificate records under the same name has the same exact value;
    else which one differs."""
    from ..balls import exact

    for arg in task.argv:
        name, sep, value = arg.partition("=")
        field = name.lstrip("-").replace("-", "_")
        if not sep or field not in inputs:
            continue
        recorded = inputs[field]
        try:
            same = exact(value, field) == exact(recorded, field)
        except (InputError, TypeError, ValueError):
            same = value == recorded
        if not same:
            return f"records {field} = {str(recorded)[:40]!s}, the row asks for {value[:40]}"
    return ""


def _reusable(out_dir: str, task: runner.Task, index: dict[str, dict]) -> tuple[str | None, str]:
    """(certificate text, "") if the row's certificate file can be kept, else (None, why; "" when it is simply missing).

    Kept only if it verifies AND it is this query's own certificate: the index names this query as its writer
    with the digest of exactly its kind and inputs, and every flag of the query recorded among its inputs
    under the same name has the same exact value (a file copied from another row fails one or the other)."""
    path = os.path.join(out_dir, task.certificate)
    if not os.path.lexists(path):
        return None, ""
    text = _verified_certificate(path)
    if text is None:
        return None, "does not verify"
    doc = _document(text)
    entry = index.get(task.certificate)
    if entry is None or entry.get("query") != [task.command, *task.argv]:
        return None, f"is not recorded in {INDEX} as written by this row's query"
    if entry.get("inputs") != inputs_digest(doc):
        return None, f"has other inputs than the ones this row's query produced ({INDEX})"
    differs = _recorded_inputs_agree(task, doc.get("inputs") if isinstance(doc.get("inputs"), dict) else {})
    if differs:
        return None, differs
    return text, ""


def _verified_certificate(path: str) -> str | None:
    """The certificate text at ``path`` if it is a regular file and verifies, else None."""
    from ..certificate import MAX_BYTES
    from ..verify import verify_text

    try:
        data = read_bytes(path, "--out", MAX_BYTES)
        text = data.decode("utf-8")
        return text if verify_text(text).ok else None
    except (UnicodeDecodeError, InputError, ValueError, KeyError, TypeError):
        signals.raise_if_arrived()
        return None
    except Exception:  # a certificate the checker cannot handle is simply recomputed  # noqa: BLE001
        signals.raise_if_arrived()
        return None
