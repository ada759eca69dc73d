"""Grow-then-bisect: the bracket search shared by the calibrations (a search; the checker re-decides
both ends, so the search itself needs no proof).

For a predicate ``passes`` that is increasing in x (false below some point, true above it), the search
returns exact rationals (fail, ok) with ``passes(ok)`` and not ``passes(fail)`` as the predicate decided
them, and ok - fail <= rel_width * ok. The midpoints of exact dyadic ends stay short dyadics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from .balls import InputError, fmpq

if TYPE_CHECKING:  # (annotations only)
    from .certificate import Certificate


@dataclass
class PldCalibration:
    """A certified PLD calibration of a noise parameter (``calibrate-dpsgd --accountant pld`` and
    ``calibrate-event --accountant pld``): s_fail < s_pass, the ``passing`` certificate's upper bound meets the
    target at s_pass and the ``failing`` certificate's lower bound exceeds it at s_fail; ``grid`` is the loss grid
    of both ends; ``runs`` lists every PLD run in order: (s, grid, epsilon_lower, epsilon_upper), or for a run not
    made (s, grid, the parameter that refused it or "work", None)."""

    s_fail: fmpq
    s_pass: fmpq
    passing: Certificate
    failing: Certificate
    grid: fmpq
    runs: list = field(default_factory=list)

    @property
    def relative_width(self) -> fmpq:
        return (self.s_pass - self.s_fail) / self.s_pass

    @property
    def queries(self) -> int:
        """How many certified PLD runs were made."""
        return sum(1 for r in self.runs if r[3] is not None)


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
