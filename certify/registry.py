"""The one registry: every paper, accountant and tool of ``certify``, as one list of modules.

``cli`` (sub-commands), ``verify`` (certificate kinds), ``proofs`` (proof obligations and report titles)
and ``tables`` (published tables) all loop over :data:`ENTRIES`. Adding a paper or an accountant is
its own folder plus one line here.

Each entry is a module (a package ``__init__`` or a tool's command module) that exposes any of these
OPTIONAL hooks, all plain data so that reading them imports nothing heavy:

``COMMANDS``  tuple of module names; each has ``register(subparsers)`` adding its sub-commands
              (``certify --help`` lists them in the order of :data:`ENTRIES`);
``KINDS``     dict certificate kind -> name of the module that registers it with
              :func:`certify.verify.register` when imported (``verify`` imports it on demand);
``PROOFS``    name of the module holding the paper's proof obligations (``@obligation(KEY, ...)``);
``TABLES``    name of a module with ``regenerate(tables_dir, cache_dir, jobs) -> (rows, outputs)``: rows
              are :class:`certify.records.TableRow` (a printed value, its enclosure, a verdict), outputs
              map a file name under ``tables/`` to its text;
``KEY``       the paper's short name (``certify proofs --paper KEY``, ``certify tables --paper KEY``);
``TITLE``     the paper's heading in ``proofs/REPORT.md``;

A package ``__init__`` holding hooks must stay cheap to import (no side-effect imports: the registry,
not the import of a package, is what makes its kinds known).
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: one line per paper, accountant or tool; the order is the order of ``certify --help`` and of the proofs report
ENTRIES = (
    "certify.objpert",  # Watkins & Arora (2026): gradient descent on perturbed objectives
    "certify.dpsgd",  # Bok (2026): Renyi vs lossless accountants for DP-SGD (and the baselines)
    "certify.objpert_rdp",  # the referee report on arXiv:2411.13682: objective perturbation in Renyi DP
    "certify.tables_command",  # tool: certify tables
    "certify.plot_command",  # tool: certify plot
    "certify.proofs.commands",  # tool: certify proofs
    "certify.verify_command",  # tool: certify verify
    "certify.poisson",  # Mironov, Talwar, Zhang (2019): Renyi accounting of Poisson-sampled DP-SGD
    "certify.audit",  # tool: certify audit
    "certify.sweep",  # tool: certify sweep
    "certify.pld",  # the certified privacy-loss-distribution accountant
    "certify.events",  # dp_accounting's event algebra certified by Renyi DP (certify account)
    "certify.report",  # tool: certify report (an HTML page for a certificate)
)


def modules() -> list[ModuleType]:
    """The entry modules, imported (cheap: hooks are data)."""
    return [importlib.import_module(name) for name in ENTRIES]


def command_modules() -> list[str]:
    """Modules whose ``register(subparsers)`` adds sub-commands, in ``--help`` order."""
    return [c for m in modules() for c in getattr(m, "COMMANDS", ())]


def kind_modules() -> dict[str, str]:
    """Certificate kind -> the module registering it (``verify`` imports it on demand)."""
    out: dict[str, str] = {}
    for m in modules():
        for kind, mod in getattr(m, "KINDS", {}).items():
            if kind in out:
                raise RuntimeError(f"certificate kind {kind!r} declared twice ({out[kind]}, {mod})")
            out[kind] = mod
    return out


def _papers(hook: str) -> dict[str, ModuleType]:
    return {m.KEY: m for m in modules() if getattr(m, hook, None)}


def proof_papers() -> dict[str, tuple[str, str]]:
    """Paper key -> (title in the report, module of its proof obligations), in report order."""
    return {k: (getattr(m, "TITLE", k), m.PROOFS) for k, m in _papers("PROOFS").items()}


def table_papers() -> dict[str, str]:
    """Paper key -> module with ``regenerate(tables_dir, cache_dir, jobs)``."""
    return {k: m.TABLES for k, m in _papers("TABLES").items()}
