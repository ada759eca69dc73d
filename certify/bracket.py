"""Grow-then-bisect: the bracket search shared by the calibrations (a search; the checker re-decides
both ends, so the search itself needs no proof).

For a predicate ``passes`` that is increasing in x (false below some point, true above it), the search
returns exact rationals (fail, ok) with ``passes(ok)`` and not ``passes(fail)`` as the predicate decided
them, and ok - fail <= rel_width * ok. The midpoints of exact dyadic ends stay short dyadics.
"""

from __future__ import annotations

from typing import Callable

from .balls import InputError, fmpq


def grow_then_bisect(
    passes: Callable[[fmpq], bool],
    fail: fmpq,
    ok: fmpq,
    rel_width: fmpq,
    *,
    grow_up: bool,
    too_far: Callable[[fmpq], bool],
    exhausted: InputError,
    max_steps: int | None = None,
) -> tuple[fmpq, fmpq]:
    """Bracket the switch point of ``passes`` to relative width ``rel_width``.

    ``grow_up``: ``fail`` is known to fail and ``ok`` is only a first guess: double it (the old guess
    becoming ``fail``) until it passes. Otherwise ``ok`` is known to pass and ``fail`` is a first guess:
    halve it (the old guess becoming ``ok``) until it fails. ``exhausted`` is raised when the moving end
    gets ``too_far``. Then bisect; ``max_steps`` (None: no limit) bounds the growth and bisection steps
    together (the bracket is then wider than asked, never wrong).
    """
    steps = 0
    while not passes(ok) if grow_up else passes(fail):
        if grow_up:
            fail, ok = ok, 2 * ok
        else:
            ok, fail = fail, fail / 2
        steps += 1
        if too_far(ok if grow_up else fail):
            raise exhausted
    while ok - fail > rel_width * ok and (max_steps is None or steps < max_steps):
        mid = (fail + ok) / 2
        if passes(mid):
            ok = mid
        else:
            fail = mid
        steps += 1
    return fail, ok
