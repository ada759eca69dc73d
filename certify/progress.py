"""Progress lines on stderr for long runs: none before ``after`` seconds, then at most one a second.

Used by the command layer only (a long single PLD query, a PLD calibration); the computations themselves take no
callback, so a run that prints nothing and one that prints progress compute the same thing.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager


class Progress:
    """``progress(text)`` prints ``certify: text (N s)`` on stderr when the run has lasted ``after`` seconds and the
    previous line is at least ``every`` seconds old; otherwise it stays silent."""

    def __init__(self, after: float = 2.0, every: float = 1.0, stream=None):
        self.t0 = time.monotonic()
        self.after, self.every = after, every
        self.last = None
        self.stream = stream if stream is not None else sys.stderr

    def __call__(self, text: str) -> bool:
        now = time.monotonic()
        if now - self.t0 < self.after or (self.last is not None and now - self.last < self.every):
            return False
        self.last = now
        self.stream.write(f"certify: {text} ({now - self.t0:.0f} s)\n")
        self.stream.flush()
        return True


@contextmanager
def ticking(label: str, after: float = 2.0, every: float = 1.0, stream=None):
    """While the body runs, print ``certify: LABEL: working (N s)`` on stderr once a second after ``after`` seconds
    (a daemon thread; nothing is printed for a run shorter than ``after``)."""
    p = Progress(after, every, stream)
    stop = threading.Event()

    def tick():
        while not stop.wait(min(every, after) / 4):
            p(f"{label}: working")

    t = threading.Thread(target=tick, daemon=True)
    t.start()
    try:
        yield p
    finally:
        stop.set()
        t.join()
