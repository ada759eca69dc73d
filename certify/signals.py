"""SIGINT and SIGTERM: every command ends with one stderr line and exit 130 (interrupted) or 143 (terminated).

:func:`install` (called by :func:`certify.cli.main`) turns SIGTERM into :class:`Terminated`, a subclass of
``KeyboardInterrupt``: both unwind every ``finally`` block (temporary files removed, worker pools and Dask
clusters shut down) and every handler written for Ctrl-C treats a SIGTERM the same way. :func:`deferred`
holds both signals back during a section that must not be cut in half (starting a Dask ``LocalCluster``,
whose worker processes inherit a blocked SIGINT: a terminal's Ctrl-C is the client's to handle): a signal
that arrives there is raised as soon as the section ends, never dropped. :func:`early` covers the imports
of ``python -m certify`` before ``main`` runs. :func:`quiet_exit` makes a signal arriving after the command finished (while
the interpreter shuts down) end the process at once, without a traceback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

from .exits import EXIT_INTERRUPTED, EXIT_TERMINATED


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM (see :func:`install`)."""


_received: list[int] = []  # the signals that arrived since :func:`install` (the first one decides the status)


def _raise_terminated(signum, frame):
    _received.append(signum)
    raise Terminated()


def _raise_interrupted(signum, frame):
    _received.append(signum)
    raise KeyboardInterrupt()


def arrived() -> KeyboardInterrupt | None:
    """The interruption a signal since :func:`install` stands for, None when none arrived.

    An exception raised while a signal unwinds the stack is the signal's consequence, not a fault of its own:
    a ``KeyboardInterrupt`` that lands inside an extension module's import (numpy's, imported when the first query
    needs it) comes out as numpy's ``ImportError``; :func:`certify.cli.main` reports it as the signal."""
    if not _received:
        return None
    return Terminated() if _received[0] == signal.SIGTERM else KeyboardInterrupt()


def raise_if_arrived() -> None:
    """Raise the interruption a signal stands for when one arrived: called where an exception is absorbed (an
    optional import that failed, a check that crashed), so that a signal turned into that exception is not
    dropped. Outside a command run by :func:`certify.cli.main` (no :func:`install`), nothing."""
    interruption = arrived()
    if interruption is not None:
        raise interruption


def install() -> dict:
    """SIGTERM raises :class:`Terminated`; SIGINT raises ``KeyboardInterrupt`` (unless the parent made the process
    ignore it, as a shell does for a background job). Main thread only (elsewhere, e.g. embedded: nothing).
    Returns the previous handlers, for :func:`restore`."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    _received.clear()
    signal.signal(signal.SIGTERM, _raise_terminated)
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _raise_interrupted)
    return previous


def restore(previous: dict) -> None:
    """Put back the handlers :func:`install` replaced."""
    if threading.current_thread() is not threading.main_thread():
        return
    _received.clear()
    for s, handler in previous.items():
        signal.signal(s, handler if handler is not None else signal.SIG_DFL)


def exit_status(err: KeyboardInterrupt) -> int:
    return EXIT_TERMINATED if isinstance(err, Terminated) else EXIT_INTERRUPTED


def message(err: KeyboardInterrupt) -> str:
    return "terminated" if isinstance(err, Terminated) else "interrupted"


@contextlib.contextmanager
def sigint_blocked():
    """Block SIGINT in this thread while the block runs (``pthread_sigmask``); a SIGINT that arrives meanwhile stays
    pending and is delivered when the block ends, never dropped.

    Processes started inside the block inherit the blocked mask through fork and exec, and so do threads created
    inside it: a terminal's Ctrl-C, sent to the whole process group, never reaches a worker that is still importing
    (before it can ignore Ctrl-C itself); the parent stops its workers."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # a pending SIGINT is delivered here


@contextlib.contextmanager
def deferred():
    """Hold SIGINT and SIGTERM back while the block runs; raise the first one that arrived when it ends.

    For a section that an exception must not cut in half (a Dask ``LocalCluster`` being started: a cluster
    interrupted in its constructor cannot be closed, its processes would be left behind). The signals are
    recorded by a Python handler, never ignored, so none is dropped; SIGINT is also blocked
    (:func:`sigint_blocked`), so the processes the block starts do not receive a terminal's Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def record(signum, frame):
        if not pending:
            pending.append(signum)

    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in previous:
        signal.signal(s, record)
    try:
        with sigint_blocked():
            yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        if pending:  # also when the block failed: the signal is what the user asked for
            _received.append(pending[0])
            raise (Terminated() if pending[0] == signal.SIGTERM else KeyboardInterrupt())


def early() -> None:
    """Before the imports of a program (which take a while): SIGINT/SIGTERM write their one line and exit
    130/143 at once (there is nothing to clean up yet). :func:`install` replaces these handlers."""
    if threading.current_thread() is not threading.main_thread():
        return

    def leave(signum, frame):
        os.write(2, b"certify: terminated\n" if signum == signal.SIGTERM else b"certify: interrupted\n")
        os._exit(EXIT_TERMINATED if signum == signal.SIGTERM else EXIT_INTERRUPTED)

    signal.signal(signal.SIGTERM, leave)
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, leave)


def forget_caught_interrupt() -> None:
    """Clear CPython's record of an unhandled ``KeyboardInterrupt`` (called as the program ends with its status).

    CPython 3.11 records a ``KeyboardInterrupt`` raised inside ``exec``/``eval`` of a string (``dataclasses`` and
    ``namedtuple`` build their methods so, during imports) as unhandled even when our code catches it; the
    interpreter then ends the process by SIGINT (status -2) instead of with the status ``main`` returned (130).
    A string ``exec`` that completes clears that record (tests/test_signals.py shows both)."""
    exec("None")


def quiet_exit() -> None:
    """After the command: a SIGINT/SIGTERM during the interpreter's shutdown ends the process at once with the
    signal's status (130/143), no traceback (output already written is flushed first)."""
    if threading.current_thread() is not threading.main_thread():
        return

    def leave(signum, frame):
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os._exit(EXIT_TERMINATED if signum == signal.SIGTERM else EXIT_INTERRUPTED)

    signal.signal(signal.SIGTERM, leave)
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, leave)
