"""Symbolic and certified checks of the papers' hand calculations.

One module per paper holds its catalogue of proof obligations (:mod:`.watkins_arora`, :mod:`.bok`,
:mod:`.referee`); :mod:`.core` holds the data model, the runner and the report; :mod:`.tools` the
deciding machinery (exact sympy reductions, sign proofs, certified ball evaluation over boxes);
:mod:`.commands` the ``certify proofs`` command.
"""
from __future__ import annotations

import importlib

from .core import CATALOGUE, FALSE, PROVED, UNDECIDED, Obligation, Outcome, Result, run  # noqa: F401

PAPER_MODULES = {"watkins-arora": "certify.proofs.watkins_arora", "bok": "certify.proofs.bok",
                 "referee": "certify.proofs.referee", "mtz-poisson": "certify.poisson.proofs",
                 "pld": "certify.proofs.pld"}


def load_all() -> None:
    """Import every paper module (registering its obligations); a missing module is skipped."""
    for name in PAPER_MODULES.values():
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name != name:
                raise


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
