"""Cold starts: a fresh process imports only what its work needs (no timings: the modules a run leaves in sys.modules).

``certify verify`` of a certificate imports its kind's module and no other command's; a Poisson Rényi query (the
API and ``certify dpsgd``) imports no numpy; numpy, sympy, dask, mpmath, scipy, torch and matplotlib are never
imported by a check. The registry's hooks, read from the sources without importing them, are the modules' own,
and the sub-commands it names are the ones the modules add, in ``certify --help`` order.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest

from certify import cli, registry, verify
from fast_subset import fast_subset

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ("numpy", "sympy", "dask", "mpmath", "scipy", "torch", "matplotlib")
QUERY = "sampling='poisson', adjacency='add-remove', sampling_rate='0.01', noise_multiplier='1.1', steps=1000, delta='1e-5'"

#: runs ``certify`` in-process on argv[1:] (stdout swallowed) and prints [exit status, sorted sys.modules]
RUN_CLI = """
import contextlib, io, json, sys
from certify import cli
with contextlib.redirect_stdout(io.StringIO()):
    status = cli.main(sys.argv[1:])
print(json.dumps([status, sorted(sys.modules)]))
"""


def _fresh(code: str, *args: str) -> tuple[object, set[str]]:
    """Run ``code`` in a new interpreter; (what it printed first, the modules it had imported at the end)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    value, modules = json.loads(out.stdout.strip().splitlines()[-1])
    return value, set(modules)


def _command_modules_other_than(command: str) -> set[str]:
    return set(registry.command_modules()) - {registry.commands()[command]}


KINDS = sorted(registry.kind_modules())


@pytest.mark.parametrize("kind", fast_subset(KINDS, keep=["dpsgd/renyi-poisson", "pld/dpsgd"]))
def test_verify_imports_its_kind_only(kind, tmp_path):
    path = tmp_path / "cert.json"
    path.write_text(verify.spec_for(kind).example().dumps())
    status, modules = _fresh(RUN_CLI, "verify", str(path), "--quiet")
    assert status == 0
    own = registry.kind_modules()[kind]
    assert own in modules
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))
    assert not modules & _command_modules_other_than("verify"), sorted(modules & _command_modules_other_than("verify"))
    if kind == "dpsgd/renyi-poisson":  # the Rényi check: no other kind's module (the Bok accountant's included)
        others = set(registry.kind_modules().values()) - {own}
        assert not modules & others, sorted(modules & others)


def test_first_renyi_query_imports_no_numpy():
    code = f"import json, sys\nfrom certify import api\nr = api.dpsgd_epsilon({QUERY})\nprint(json.dumps([r.certificate.kind, sorted(sys.modules)]))"
    kind, modules = _fresh(code)
    assert kind == "dpsgd/renyi-poisson"
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_renyi_command_imports_neither_numpy_nor_bok():
    args = ["dpsgd", "--sampling", "poisson", "--adjacency", "add-remove", "--sampling-rate", "0.01", "--noise-multiplier", "1.1"]
    status, modules = _fresh(RUN_CLI, *args, "--steps", "1000", "--delta", "1e-5")
    assert status == 0
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))
    bok = {"certify.dpsgd.accountant", "certify.dpsgd.certificates", "certify.dpsgd.search", "certify.dpsgd.mixture"}
    assert not modules & bok, sorted(modules & bok)


@pytest.mark.parametrize("entry", registry.ENTRIES)
def test_hooks_read_from_source_are_the_modules_own(entry):
    origin = registry._source_file(entry)
    assert origin is not None and origin.startswith(os.path.join(ROOT, "certify"))
    read = registry._literal_hooks(entry, origin)
    module = importlib.import_module(entry)
    assert read == {h: getattr(module, h) for h in registry.HOOKS if hasattr(module, h)}
    assert read and "KEY" in read


def test_hooks_that_are_not_literals_are_imported(tmp_path, monkeypatch):
    (tmp_path / "cold_toy.py").write_text('KEY = "toy"\nKINDS = dict(a="b")  # not a literal: read by importing\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert registry._literal_hooks("cold_toy", registry._source_file("cold_toy")) is None
        assert registry.hooks("cold_toy") == {"KEY": "toy", "KINDS": {"a": "b"}}
        assert "cold_toy" in sys.modules
    finally:
        sys.modules.pop("cold_toy", None)


def test_named_commands_are_the_parsers_in_help_order():
    full = cli.build_parser()
    sub = next(a for a in full._actions if a.choices and "verify" in a.choices)
    assert list(registry.commands()) == list(sub.choices)  # every command named, in --help order
    help_text = full.format_help()
    positions = [help_text.index(f"\n    {name} ") if f"\n    {name} " in help_text else help_text.index(f"\n    {name}\n") for name in sub.choices]
    assert positions == sorted(positions)
    for name in ("verify", "dpsgd", "calibrate", "report"):  # the parser of one command: its module's commands alone
        alone = cli.build_parser(name)
        (only,) = [a for a in alone._actions if a.choices]
        assert list(only.choices) == [c for c, module in registry.commands().items() if module == registry.commands()[name]]
        assert only.choices[name].format_help() == sub.choices[name].format_help()


def test_options_and_unknown_commands_get_the_whole_parser():
    assert cli._command(["--help"]) is None and cli._command([]) is None and cli._command(["--version"]) is None
    assert cli._command(["verify", "x.json"]) == "verify"
    assert registry.command_modules("no-such-command") == registry.command_modules()
