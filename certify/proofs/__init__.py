"""Symbolic and certified checks of the papers' hand calculations.

Each paper keeps its catalogue of proof obligations in its own folder (``certify/<paper>/proofs.py``,
found through the registry hook ``PROOFS``); :mod:`.core` holds the data model, the runner and the
report; :mod:`.tools` the deciding machinery (exact sympy reductions, sign proofs, certified ball
evaluation over boxes); :mod:`.commands` the ``certify proofs`` command.
"""
from __future__ import annotations

import importlib

from .. import registry
from .core import CATALOGUE, FALSE, PROVED, UNDECIDED, Obligation, Outcome, Result, run  # noqa: F401


def papers() -> list[str]:
    """Paper keys with proof obligations, in report order (the registry's)."""
    return list(registry.proof_papers())


def load_all() -> None:
    """Import every paper's proof obligations (hook ``PROOFS`` of each registry entry)."""
    for _title, module in registry.proof_papers().values():
        importlib.import_module(module)


def obligations(paper: str | None = None) -> list[Obligation]:
    load_all()
    if paper is None:
        return [ob for obs in CATALOGUE.values() for ob in obs]
    return list(CATALOGUE.get(paper, []))


def get(obligation_id: str) -> Obligation:
    for ob in obligations():
        if ob.id == obligation_id:
            return ob
    raise KeyError(obligation_id)
