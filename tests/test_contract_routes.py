"""One contract, resolved once: every input route of ``certify dpsgd`` (flags, a --schedule file that declares a
contract, an Opacus history) against every accountant that certifies it gives a certificate recorded under the
contract the input declares (an Opacus history accounted by the PLD was certified under the flags' default
fixed-size + replace-one contract before: epsilon 27.85 for a run whose Rényi epsilon is about 3.5)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from certify import cli
from certify.verify import verify_text
from fast_subset import fast_subset

POISSON = ("poisson", "add-remove")
FIXED = ("fixed-size", "replace-one")


PHASE = {"sampling_rate": "1/100", "noise_multiplier": "11/10", "steps": 100}


def _files(tmp_path):
    (tmp_path / "poisson.json").write_text(json.dumps({"contract": {"sampling": "poisson", "adjacency": "add-remove"}, "phases": [PHASE]}))
    (tmp_path / "fixed.json").write_text(json.dumps({"contract": {"sampling": "fixed-size", "adjacency": "replace-one"}, "phases": [PHASE]}))
    (tmp_path / "history.json").write_text(json.dumps([[1.1, 0.01, 100]]))


ONE = ["--sampling-rate", "0.01", "--noise-multiplier", "1.1", "--steps", "100"]
ROUTES = {
    "flags poisson": (["--sampling", "poisson", *ONE], POISSON),
    "flags adjacency add-remove": (["--adjacency", "add-remove", *ONE], POISSON),
    "flags fixed-size": (["--sampling", "fixed-size", *ONE], FIXED),
    "flags adjacency replace-one": (["--adjacency", "replace-one", *ONE], FIXED),
    "schedule declaring poisson": (["--schedule", "poisson.json"], POISSON),
    "schedule declaring fixed-size": (["--schedule", "fixed.json"], FIXED),
    "opacus history": (["--opacus-history", "history.json"], POISSON),
}
ACCOUNTANTS = {POISSON: ("renyi", "pld"), FIXED: ("bok", "wang", "birrell", "pld")}
CASES = [(route, acc) for route, (_, declared) in ROUTES.items() for acc in ACCOUNTANTS[declared]]
FAST = [("opacus history", "pld"), ("schedule declaring poisson", "pld"), ("flags poisson", "renyi"), ("schedule declaring fixed-size", "wang")]


@pytest.mark.parametrize("route, accountant", fast_subset(CASES, keep=FAST))
def test_every_route_is_certified_under_the_contract_it_declares(tmp_path, route, accountant):
    _files(tmp_path)
    argv, declared = ROUTES[route]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.chdir(tmp_path):
        rc = cli.main(["dpsgd", *argv, "--accountant", accountant, "--delta", "1e-5", "--out", "cert.json"])
    assert rc == 0, err.getvalue()
    text = (tmp_path / "cert.json").read_text()
    doc = json.loads(text)
    assert (doc["inputs"]["sampling"], doc["inputs"]["adjacency"]) == declared, (route, accountant, doc["kind"])
    assert verify_text(text).ok


@pytest.mark.parametrize("accountant", ["renyi", "bok", "pld"])
def test_no_route_without_a_contract(tmp_path, accountant):
    """No flag, no file declaring a contract: refused whatever the accountant (there is no default contract)."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err), contextlib.chdir(tmp_path):
        rc = cli.main(["dpsgd", *ONE, "--accountant", accountant, "--delta", "1e-5", "--out", "cert.json"])
    assert rc == 2 and "no accounting contract given" in err.getvalue() and not (tmp_path / "cert.json").exists()


@pytest.mark.parametrize("route", ["flags poisson", "schedule declaring poisson", "opacus history"])
def test_a_poisson_route_refuses_a_fixed_size_accountant(tmp_path, route):
    _files(tmp_path)
    argv, _ = ROUTES[route]
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err), contextlib.chdir(tmp_path):
        rc = cli.main(["dpsgd", *argv, "--accountant", "bok", "--delta", "1e-5", "--out", "cert.json"])
    assert rc == 2 and "--accountant" in err.getvalue() and not (tmp_path / "cert.json").exists(), err.getvalue()
