"""Run one sweep query in a worker process, exactly as ``certify COMMAND FLAGS --out FILE`` would.

Nothing here knows any sub-command: the argv of a row is parsed by the parser of ``certify`` itself
(:func:`certify.cli.build_parser`), so every command and flag, present or future, works the same way in
a sweep as on the command line. The command runs in-process with ``--out`` pointing at a scratch file
of the worker (``--out`` is the contract every certifying command shares: the certificate JSON,
written only after success); its text is returned to the client, which writes it (atomically) into the
sweep's folder, so workers on other machines need no shared file system. stdout and stderr of the
command are captured; an error becomes one line in the returned :class:`Outcome`, never an exception:
a bad row never stops a sweep.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import io
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass

from ..balls import InputError, UndecidedError
from ..certificate import MAX_BYTES
from ..exits import EXIT_STOPPED_EARLY, EXIT_UNDECIDED
from ..inputfile import read_text
from .queries import Query, argv_for, certificate_name

#: sub-commands that do not certify one query (or would recurse); refused in a row
NOT_CERTIFYING = ("sweep", "tables", "plot", "proofs", "verify")
OUT_FLAG = "--out"

_PARSER: argparse.ArgumentParser | None = None
_SCRATCH: str | None = None
_LOCK = threading.Lock()  # one query at a time per process: stdout/stderr capture and FLINT's precision are global


@dataclass(frozen=True)
class Task:
    """What a worker receives: the sub-command and its canonical argv (without ``--out``)."""

    command: str
    argv: tuple[str, ...]
    files: str = ""  #: sha256 of the input files the argv names (a positional EVENT.json): a changed file is a new query

    @property
    def certificate(self) -> str:
        return certificate_name(self.command, list(self.argv) + ([f"#files={self.files}"] if self.files else []))


@dataclass(frozen=True)
class Outcome:
    """What a worker returns: ``status`` in ok / stopped-early / undecided / error, the command's exit
    status, the certificate JSON text (ok and stopped-early only), one error line, and the seconds spent."""

    status: str
    exit: int
    certificate: str | None
    error: str
    seconds: float


def parser() -> argparse.ArgumentParser:
    """The ``certify`` parser, built once per process."""
    global _PARSER
    if _PARSER is None:
        from ..cli import build_parser

        _PARSER = build_parser()
    return _PARSER


def subparser(command: str, top: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The parser of sub-command ``command``; InputError if it does not exist or does not certify one query."""
    top = top or parser()
    choices: dict = {}
    for action in top._actions:  # argparse keeps no public list of sub-parsers
        if isinstance(action, argparse._SubParsersAction):
            choices = action.choices
    if command in NOT_CERTIFYING:
        raise InputError("command", f"'{command}' is not a certifying command and cannot be a sweep row")
    if command not in choices:
        raise InputError("command", f"unknown command '{command}' (certifying commands: {', '.join(c for c in choices if c not in NOT_CERTIFYING)})")
    sub = choices[command]
    if not any(OUT_FLAG in a.option_strings for a in sub._actions):
        raise InputError("command", f"'{command}' writes no certificate (no --out) and cannot be a sweep row")
    return sub


def task_for(q: Query, top: argparse.ArgumentParser | None = None) -> Task:
    """The task of a readable row (InputError for an unknown or refused command or an unknown flag)."""
    if q.error is not None:
        raise InputError(f"row {q.row}", q.error)
    sub = subparser(q.command, top)
    argv = argv_for(q, sub, reserved=(OUT_FLAG, "--json"))
    return Task(q.command, tuple(argv), _files_digest(q, sub))


def _files_digest(q: Query, sub) -> str:
    """sha256 over the contents of the files named by the row's positional arguments ("" when there are none);
    an unreadable file is left to the command, which names it."""
    import hashlib

    from .queries import positionals

    h, any_file = hashlib.sha256(), False
    for a in positionals(sub):
        path = q.cells.get(a.dest)
        if isinstance(path, str) and os.path.isfile(path):
            try:
                h.update(read_text(path, a.dest, MAX_BYTES).encode())
                any_file = True
            except InputError:
                continue
    return h.hexdigest()[:32] if any_file else ""


def _scratch() -> str:
    global _SCRATCH
    if _SCRATCH is None or not os.path.isdir(_SCRATCH):
        _SCRATCH = tempfile.mkdtemp(prefix="certify-sweep-")
        atexit.register(shutil.rmtree, _SCRATCH, True)
    return _SCRATCH


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = lines[-1] if lines else ""
    for prefix in ("certify: error: ", "certify: "):
        if line.startswith(prefix):
            return line[len(prefix) :]
    return line


def run_query(task: Task) -> Outcome:
    """Run one query in this process and capture its certificate; never raises (except KeyboardInterrupt)."""
    with _LOCK:
        return _run(task)


def run_batch(tasks: tuple[Task, ...]) -> list[Outcome]:
    """Run several queries one after the other in this process (fewer, longer tasks for cheap queries)."""
    return [run_query(t) for t in tasks]


def _run(task: Task) -> Outcome:
    top = parser()  # built once per process, not part of a query's time
    t0 = time.perf_counter()
    out = os.path.join(_scratch(), f"{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}.json")
    captured = io.StringIO()
    code, error = 0, ""
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(captured):
            args = top.parse_args([task.command, *task.argv, f"{OUT_FLAG}={out}"])
            code = int(args.func(args) or 0)
    except SystemExit as err:  # argparse: a bad flag value (the message is on the captured stderr)
        code = err.code if isinstance(err.code, int) else 2
        error = _last_line(captured.getvalue()) or f"exit status {code}"
    except InputError as err:
        code, error = 2, str(err)
    except UndecidedError as err:
        code, error = EXIT_UNDECIDED, f"undecided: {err}"
    except (Exception, RecursionError, MemoryError) as err:  # a bug must not stop the sweep: report it on the row
        code, error = 70, f"internal error: {type(err).__name__}: {err}"
    text = None
    if os.path.lexists(out):
        try:
            text = read_text(out, OUT_FLAG, MAX_BYTES)  # the one reader (a regular UTF-8 file only)
        except InputError as err:
            code, error = 2, str(err)
        finally:
            os.unlink(out)
    seconds = time.perf_counter() - t0
    if text is not None and code in (0, EXIT_STOPPED_EARLY):
        return Outcome("ok" if code == 0 else "stopped-early", code, text, "", seconds)
    if code == EXIT_UNDECIDED:
        return Outcome("undecided", code, None, error or _last_line(captured.getvalue()), seconds)
    if code == 0:
        error = "the command wrote no certificate (not a certifying query)"
    return Outcome("error", code or 2, None, " ".join((error or _last_line(captured.getvalue()) or f"exit status {code}").split()), seconds)
