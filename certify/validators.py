"""Validators shared by several packages (one per field; each names its flag and the admissible range).

Kept here so that no package imports its caller for a validator: :mod:`certify.pld` (called by ``certify dpsgd``)
and :mod:`certify.poisson` read the same fields as :mod:`certify.dpsgd` (which re-exports these names where they
lived before: ``dpsgd.certificates.parse_steps`` / ``parse_delta``, ``dpsgd.problem.parse_sigma``).
"""

from __future__ import annotations

from .balls import InputError, exact_in, exact_str, fmpq
from .limits import cap

#: the smallest noise multiplier of Bok's accountant: the budget at alpha = 2 (no alpha is admissible below it)
SIGMA_MIN = fmpq(1, 500)


def short(q: fmpq) -> str:
    """The exact text of q, cut to 40 characters for a message."""
    t = exact_str(q)
    return t if len(t) <= 40 else t[:37] + "..."


def parse_steps(value, name: str = "--steps") -> int:
    """A step count: an integer >= 1."""
    return exact_in(value, name, 1, None, "[)", integer=True)


def parse_delta(value, name: str = "--delta") -> fmpq:
    """A target delta: exact, in (0, 1)."""
    return exact_in(value, name, 0, 1)


def parse_sigma(value, name: str = "--noise-multiplier") -> fmpq:
    """A noise multiplier: exact, >= 1/500."""
    s = exact_in(value, name, SIGMA_MIN, None, "[)", shown=">= 1/500 (= 0.002)")
    if not s >= SIGMA_MIN:
        raise InputError(name, f"must be >= {exact_str(SIGMA_MIN)} (= 0.002; at alpha the bound is 2 sqrt((alpha-1)/10^6)), got {short(s)}")
    return s


def steps_of_epochs(epochs, rate: fmpq, name: str = "--epochs") -> tuple[int, int]:
    """(E, T): E epochs at sampling rate ``rate`` are T = floor(E / rate) steps, as Opacus counts them
    (``get_noise_multiplier(epochs=E, sample_rate=rate)`` takes int(E / rate) steps); E an integer >= 1, and
    T must be at most ``limits.cap("steps")`` (exact: floor of an exact rational, no rounding)."""
    e = exact_in(epochs, name, 1, cap("steps"), "[]", integer=True)
    t = int((fmpq(e) / rate).floor())
    if t > cap("steps"):
        raise InputError(name, f"gives {t} steps, at most {cap('steps')} accepted")
    return e, t
