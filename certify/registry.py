"""The one registry: every paper, accountant and tool of ``certify``, as one list of modules.

``cli`` (sub-commands), ``verify`` (certificate kinds), ``proofs`` (proof obligations and report titles)
and ``tables`` (published tables) all loop over :data:`ENTRIES`. Adding a paper or an accountant is
its own folder plus one line here.

Each entry is a module (a package ``__init__`` or a tool's command module) that exposes any of these
OPTIONAL hooks, all plain data so that reading them imports nothing heavy:

``COMMANDS``  dict sub-command name -> name of the module whose ``register(subparsers)`` adds it, in
              ``--help`` order (``certify --help`` lists them in the order of :data:`ENTRIES`); a tuple of
              module names is accepted too (its commands are then found by importing every command module);
``KINDS``     dict certificate kind -> name of the module that registers it with
              :func:`certify.verify.register` when imported (``verify`` imports it on demand);
``PROOFS``    name of the module holding the paper's proof obligations (``@obligation(KEY, ...)``);
``TABLES``    name of a module with ``regenerate(tables_dir, cache_dir, jobs) -> (rows, outputs)``: rows
              are :class:`certify.records.TableRow` (a printed value, its enclosure, a verdict), outputs
              map a file name under ``tables/`` to its text;
``KEY``       the paper's short name (``certify proofs --paper KEY``, ``certify tables --paper KEY``);
``TITLE``     the paper's heading in ``proofs/REPORT.md``;

The hooks are read WITHOUT importing the entry module (:func:`hooks`: each is a literal assignment at the top
level of its source, before its first function or class, ``__name__`` allowed), so that ``certify verify``
imports only the module of the certificate's kind and a sub-command only its own module. A module already
imported, or whose hooks are not literals, is read by importing it.
A package ``__init__`` holding hooks should still stay cheap to import (no side-effect imports: the registry,
not the import of a package, is what makes its kinds known).
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from functools import lru_cache

#: the hook names an entry module may define (see the module docstring)
HOOKS = ("KEY", "TITLE", "COMMANDS", "KINDS", "PROOFS", "TABLES")

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


def hooks(name: str) -> dict:
    """The hooks of the entry module ``name`` (hook name -> value), read from its source without importing it.

    Imported already: its attributes. Otherwise each top-level assignment ``HOOK = <literal>`` of the source
    before its first function or class is evaluated with :func:`ast.literal_eval` (``__name__`` stands for the
    module's name); a module without a source file or with a hook that is not a literal is imported instead
    (same values, only slower)."""
    module = sys.modules.get(name)
    if module is None:
        origin = _source_file(name)
        found = _literal_hooks(name, origin) if origin is not None else None
        if found is not None:
            return dict(found)
        module = importlib.import_module(name)
    return {h: getattr(module, h) for h in HOOKS if hasattr(module, h)}


def _source_file(name: str) -> str | None:
    """The path of module ``name``'s source file, found without importing it or its parent packages (None when
    it has no source file: the caller then imports it)."""
    from importlib.machinery import PathFinder, SourceFileLoader

    path, spec = None, None
    parts = name.split(".")
    for i in range(len(parts)):
        prefix = ".".join(parts[: i + 1])
        parent = sys.modules.get(prefix) if i < len(parts) - 1 else None
        if parent is not None:  # an imported package: its own search path
            path = getattr(parent, "__path__", None)
            continue
        spec = PathFinder.find_spec(prefix, path)
        if spec is None:
            return None
        path = spec.submodule_search_locations
    if spec is None or not isinstance(spec.loader, SourceFileLoader):
        return None
    return spec.origin


#: the first top-level function, class or decorator of a module's source
_FIRST_DEFINITION = re.compile(rb"^(?:def |async def |class |@)", re.MULTILINE)


@lru_cache(maxsize=None)
def _literal_hooks(name: str, origin: str) -> dict | None:
    """The hooks assigned at the top level of the source file ``origin`` of module ``name``, or None when one of
    them is not a literal (or the file cannot be read or parsed)."""
    try:
        with open(origin, "rb") as fh:
            source = fh.read()
        head = _FIRST_DEFINITION.search(source)
        try:  # hooks are assigned before the module's first function or class: parsing stops there (5x faster)
            tree = ast.parse(source if head is None else source[: head.start()], origin)
        except SyntaxError:  # the cut fell inside a string: the whole module
            tree = ast.parse(source, origin)
    except (OSError, SyntaxError, ValueError):
        return None
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            hook = node.targets[0].id
            if hook in HOOKS:
                try:
                    found[hook] = ast.literal_eval(_ModuleName(name).visit(node.value))
                except ValueError:
                    return None
    return found


class _ModuleName(ast.NodeTransformer):
    """Replace ``__name__`` in a hook's value by the module's name (``COMMANDS = {"verify": __name__}``)."""

    def __init__(self, name: str):
        self.name = name

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(self.name) if node.id == "__name__" else node


def commands() -> dict[str, str]:
    """Sub-command name -> the module adding it, for every entry whose ``COMMANDS`` hook names its commands."""
    out: dict[str, str] = {}
    for entry in ENTRIES:
        declared = hooks(entry).get("COMMANDS", ())
        if isinstance(declared, dict):
            out.update(declared)
    return out


def command_modules(command: str | None = None) -> list[str]:
    """Modules whose ``register(subparsers)`` adds sub-commands, in ``--help`` order: all of them, or with
    ``command``, only the one that adds it when an entry names it in its ``COMMANDS`` hook (else all: it may be
    added by a module whose commands are not named, or it is unknown and argparse says so)."""
    named = commands()
    if command is not None and command in named:
        return [named[command]]
    out: list[str] = []
    for entry in ENTRIES:
        declared = hooks(entry).get("COMMANDS", ())
        for module in declared.values() if isinstance(declared, dict) else declared:
            if module not in out:
                out.append(module)
    return out


def kind_modules() -> dict[str, str]:
    """Certificate kind -> the module registering it (``verify`` imports it on demand)."""
    return dict(_kind_modules(ENTRIES))


@lru_cache(maxsize=4)
def _kind_modules(entries: tuple) -> dict[str, str]:
    """:func:`kind_modules` of the entries ``entries``, read once per registry (each entry's source file is found on the
    file system: 0.2 ms, once per ``certify verify`` otherwise)."""
    out: dict[str, str] = {}
    for entry in entries:
        for kind, mod in hooks(entry).get("KINDS", {}).items():
            if kind in out:
                raise RuntimeError(f"certificate kind {kind!r} declared twice ({out[kind]}, {mod})")
            out[kind] = mod
    return out


def _papers(hook: str) -> dict[str, dict]:
    return {h["KEY"]: h for h in map(hooks, ENTRIES) if h.get(hook)}


def proof_papers() -> dict[str, tuple[str, str]]:
    """Paper key -> (title in the report, module of its proof obligations), in report order."""
    return {k: (h.get("TITLE", k), h["PROOFS"]) for k, h in _papers("PROOFS").items()}


def table_papers() -> dict[str, str]:
    """Paper key -> module with ``regenerate(tables_dir, cache_dir, jobs)``."""
    return {k: h["TABLES"] for k, h in _papers("TABLES").items()}
