"""Typed records that cross modules: the verdicts, as enums whose members *are* their text, and the row a
tables hook hands to ``certify tables``.

A member compares equal to its text (``ProofVerdict.PROVED == "proved"``) and prints, formats and
serialises (JSON, CSV, Markdown) as that text, so typing a verdict changes no file that is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class TextEnum(str, Enum):
    """An enum whose members are strings: ``str()``, f-strings, JSON and CSV see the value."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class ProofVerdict(TextEnum):
    """Verdict of a proof obligation (``certify proofs``): undecided is never counted as proved."""

    PROVED = "proved"
    FALSE = "false"
    UNDECIDED = "undecided"


class TableVerdict(TextEnum):
    """A printed value against its certified enclosure (``certify tables``, :mod:`certify.published`)."""

    CONFIRMED = "confirmed"
    MISMATCH = "mismatch"
    UNDECIDED = "undecided"


class AuditOutcome(TextEnum):
    """Outcome of ``certify audit`` on a published or internal claim."""

    HOLDS = "holds"
    NOT_CERTIFIED = "not certified"
    REFUTED = "refuted"


@dataclass(frozen=True)
class TableRow:
    """One printed number of a paper against its certified enclosure: what a ``TABLES`` hook's ``regenerate``
    returns to ``certify tables`` (the files it writes keep each paper's own columns)."""

    id: str
    published: str
    certified_enclosure: str
    distance: str
    verdict: TableVerdict | str  # a TableVerdict, or a column's own verdict text (e.g. "below"): not confirmed
    explanation: str = ""
