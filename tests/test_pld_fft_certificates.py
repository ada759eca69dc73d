"""pld/dpsgd certificates composed by the tilted float FFT (issue 24; certify.pld.fft, witness ``fft``).

Genuine FFT certificates verify (both contracts, T = 1000-5000, grid 1e-2 / 1e-3) and state the composition method;
their brackets overlap the exact chain's and are no wider than 1.1x it. Forgeries are refused with exit 4 naming the
witness: a changed tilt, transform length, window, read-off range, threshold, any number of the plan; a stripped
witness; an unknown key; an empty or malformed plan; the exact chain's witnesses (``chain``, ``add_from``) on an FFT
certificate. Canonical: an FFT certificate carries ``fft`` and neither ``chain`` nor ``add_from``; a certificate
without ``fft`` is the exact chain (as before issue 24). The kernel (certify_kernel) never refuses a genuine FFT
certificate (it says it cannot decide: exit 3).
"""

from __future__ import annotations

import copy
import json

import pytest

from certify.balls import exact
from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.pld import certify_pld
from certify.pld.accountant import FFT_MAX_STEPS, FFT_MIN_STEPS, use_fft
from certify.verify import verify_document, verify_text
from test_forger import reseal

CONTRACTS = {"poisson": POISSON_ADD_REMOVE, "fixed-size": FIXED_SIZE_REPLACE_ONE}


def _text(contract: str, T: int, grid: str, method: str | None = "fft") -> str:
    return certify_pld(CONTRACTS[contract], "1/100", "2", T, "1e-6", grid, method=method).dumps()


def _cert(contract: str, T: int, grid: str, method: str | None = "fft") -> dict:
    return json.loads(_text(contract, T, grid, method))


@pytest.fixture(scope="module")
def genuine() -> dict:
    return _cert("poisson", 1000, "1e-2")


@pytest.fixture(scope="module")
def genuine_fixed() -> dict:
    return _cert("fixed-size", 1000, "1e-2")


def _refused(doc: dict, needle: str) -> None:
    rep = verify_document(reseal(doc))
    assert rep.exit_code == 4, (rep.exit_code, rep.problems)
    assert needle in " ".join(rep.problems), (needle, rep.problems)


@pytest.mark.parametrize(
    "contract,T,grid",
    [
        ("poisson", 1000, "1e-2"),
        ("fixed-size", 1000, "1e-2"),
        ("poisson", 1000, "1e-3"),
        ("fixed-size", 1000, "1e-3"),
        ("poisson", 5000, "1e-3"),
        ("fixed-size", 5000, "1e-2"),
    ],
)
def test_genuine_fft_certificates_verify_and_match_the_exact_chain(contract, T, grid):
    text = _text(contract, T, grid)
    doc = json.loads(text)
    w = doc["witnesses"]
    assert "fft" in w and "chain" not in w and "add_from" not in w
    assert set(w["fft"]) == ({"remove", "add"} if contract == "poisson" else {"max"})
    rep = verify_text(text)
    assert rep.exit_code == 0, rep.problems
    assert "tilted float FFT" in doc["conclusions"][0]["statement"]
    ex = _cert(contract, T, grid, "exact")
    assert "fft" not in ex["witnesses"] and "FFT" not in ex["conclusions"][0]["statement"]
    lo, up = (exact(w[k]) for k in ("epsilon_lower", "epsilon_upper"))
    elo, eup = (exact(ex["witnesses"][k]) for k in ("epsilon_lower", "epsilon_upper"))
    assert max(lo, elo) <= min(up, eup)  # two certified brackets of the same truth overlap
    assert up - lo <= (eup - elo) * exact("1.1"), (float(lo), float(up), float(elo), float(eup))


def test_default_method():
    assert use_fft(FFT_MIN_STEPS, None) and not use_fft(FFT_MIN_STEPS - 1, None)
    assert use_fft(FFT_MAX_STEPS, None) and not use_fft(FFT_MAX_STEPS + 1, None)
    assert use_fft(10, "fft") and not use_fft(10**6, "exact")
    doc = json.loads(certify_pld(POISSON_ADD_REMOVE, "1/100", "2", FFT_MIN_STEPS, "1e-6", "1e-2").dumps())
    assert "fft" in doc["witnesses"]
    small = json.loads(certify_pld(POISSON_ADD_REMOVE, "1/100", "2", 20, "1e-6", "1e-2").dumps())
    assert "fft" not in small["witnesses"] and small["witnesses"]["chain"] == "left-to-right"


@pytest.mark.parametrize(
    "key,change",
    [
        ("lam", lambda v: str(exact(v) * exact("1.01"))),
        ("lam", lambda v: str(exact(v) / 2)),
        ("N", lambda v: v * 2),
        ("N", lambda v: v // 2),
        ("a", lambda v: v + 1),
        ("j0", lambda v: v + 1),
        ("j1", lambda v: v - 1),
        ("threshold", lambda v: "0"),
        ("threshold", lambda v: "1/512"),
        ("s_alias_hi", lambda v: str(exact(v) + 1)),
        ("s_alias_lo", lambda v: str(exact(v) / 3)),
        ("s_top", lambda v: str(exact(v) * 2)),
        ("base", lambda v: v - 1),
        ("T", lambda v: v + 1),
        ("h", lambda v: "1/1000"),
    ],
)
def test_forged_plan_refused(genuine, key, change):
    doc = copy.deepcopy(genuine)
    p = doc["witnesses"]["fft"]["remove"]
    p[key] = change(p[key])
    _refused(doc, "witnesses.fft.remove")


@pytest.mark.parametrize(
    "value,needle",
    [
        ({}, "witnesses.fft"),
        ([], "witnesses.fft"),
        ("fft", "witnesses.fft"),
        ({"remove": 1}, "witnesses.fft.remove"),
    ],
)
def test_malformed_witness_refused(genuine, value, needle):
    doc = copy.deepcopy(genuine)
    doc["witnesses"]["fft"] = value
    _refused(doc, needle)


def test_malformed_plan_entries_refused(genuine):
    for mutate, needle in [
        (lambda p: p.update(junk=1), "witnesses.fft.remove"),
        (lambda p: p.pop("lam"), "witnesses.fft.remove"),
        (lambda p: p.update(N=1000), "witnesses.fft.remove.N"),
        (lambda p: p.update(N=2**40), "witnesses.fft.remove.N"),
        (lambda p: p.update(N=True), "witnesses.fft.remove.N"),
        (lambda p: p.update(N="1024"), "witnesses.fft.remove.N"),
        (lambda p: p.update(lam=0.25), "witnesses.fft.remove.lam"),
        (lambda p: p.update(lam="2/4"), "witnesses.fft.remove.lam"),
        (lambda p: p.update(lam="1/0"), "witnesses.fft.remove.lam"),
        (lambda p: p.update(lam="x"), "witnesses.fft.remove.lam"),
        (lambda p: p.update(threshold="0.5"), "witnesses.fft.remove.threshold"),
    ]:
        doc = copy.deepcopy(genuine)
        mutate(doc["witnesses"]["fft"]["remove"])
        _refused(doc, needle)


def test_missing_or_extra_direction_refused(genuine, genuine_fixed):
    doc = copy.deepcopy(genuine)
    del doc["witnesses"]["fft"]["add"]
    _refused(doc, "witnesses.fft")
    doc = copy.deepcopy(genuine_fixed)
    doc["witnesses"]["fft"]["remove"] = doc["witnesses"]["fft"]["max"]
    _refused(doc, "witnesses.fft")


def test_stripped_witness_refused(genuine, genuine_fixed):
    """Without ``fft`` the checker re-runs the exact chain (right to left: no ``chain``): other numbers, other
    statement; adding the chain witness too still differs (the statement names the FFT)."""
    for g in (genuine, genuine_fixed):
        doc = copy.deepcopy(g)
        del doc["witnesses"]["fft"]
        rep = verify_document(reseal(doc))
        assert rep.exit_code == 4, rep.problems
        doc["witnesses"]["chain"] = "left-to-right"
        rep = verify_document(reseal(doc))
        assert rep.exit_code == 4, rep.problems


def test_exact_chain_witnesses_on_an_fft_certificate_refused(genuine):
    doc = copy.deepcopy(genuine)
    doc["witnesses"]["chain"] = "left-to-right"
    _refused(doc, "witnesses.chain")
    doc = copy.deepcopy(genuine)
    doc["witnesses"]["add_from"] = "remove"
    rep = verify_document(reseal(doc))
    assert rep.exit_code == 4, rep.problems


def test_fft_witness_on_an_exact_certificate_refused(genuine):
    """An exact-chain certificate given an ``fft`` witness (and its chain removed): the checker re-derives the FFT
    composition, whose recorded statement and numbers are not the exact chain's."""
    ex = json.loads(certify_pld(POISSON_ADD_REMOVE, "1/100", "2", 1000, "1e-6", "1e-2", method="exact", derive_add=False).dumps())
    assert verify_document(copy.deepcopy(ex)).exit_code == 0
    doc = copy.deepcopy(ex)
    doc["witnesses"]["fft"] = copy.deepcopy(genuine["witnesses"]["fft"])
    rep = verify_document(reseal(doc))
    assert rep.exit_code == 4, rep.problems  # chain present: refused naming witnesses.chain
    assert "witnesses.chain" in " ".join(rep.problems)
    del doc["witnesses"]["chain"]
    rep = verify_document(reseal(doc))
    assert rep.exit_code == 4, rep.problems


def test_forged_numbers_refused(genuine):
    doc = copy.deepcopy(genuine)
    doc["witnesses"]["epsilon_upper"] = str(exact(doc["witnesses"]["epsilon_upper"]) - exact("1/1000"))
    rep = verify_document(reseal(doc))
    assert rep.exit_code == 4, rep.problems
    doc = copy.deepcopy(genuine)
    doc["quantities"]["delta_upper"]["upper"] = "1e-9"
    rep = verify_document(reseal(doc))
    assert rep.exit_code == 4, rep.problems


@pytest.mark.parametrize("contract,grid", [("poisson", "1e-2"), ("fixed-size", "1e-2"), ("poisson", "1e-3")])
def test_kernel_accepts_a_genuine_fft_certificate(contract, grid):
    """certify_kernel decides pld/dpsgd by its own exact composition whatever certify composed with: a genuine FFT
    certificate (both directions composed apart, the witness fft ignored like K and tau, certify's FFT wording
    re-derived) is accepted (T = 1000: the two brackets agree to the printed digits)."""
    import certify_kernel

    res = certify_kernel.check_text(_text(contract, 1000, grid))
    assert res.status == 0, res


def test_kernel_refuses_or_cannot_decide_what_certify_refuses(genuine):
    """The FFT certificates certify refuses for their witnesses (fft beside chain or add_from, an fft object naming
    other directions, fft stripped while its wording stays) are never accepted by the kernel either."""
    import certify_kernel

    forged = []
    for extra in ({"chain": "left-to-right"}, {"add_from": "remove"}):
        d = copy.deepcopy(genuine)
        d["witnesses"].update(extra)
        forged.append(d)
    d = copy.deepcopy(genuine)
    d["witnesses"]["fft"] = {"remove": d["witnesses"]["fft"]["remove"]}
    forged.append(d)
    d = copy.deepcopy(genuine)
    del d["witnesses"]["fft"]
    forged.append(d)
    for d in forged:
        text = json.dumps(reseal(d))
        assert verify_text(text).exit_code == 4
        assert certify_kernel.check_text(text).status != 0


_CLI = ["dpsgd", "--sampling-rate", "1/100", "--noise-multiplier", "2", "--delta", "1e-6"]


@pytest.mark.parametrize("composition, fft", [("fft", True), ("exact", False)])
def test_cli_composition_flag_chooses_the_method_and_the_summary_names_it(tmp_path, capsys, composition, fft):
    """``certify dpsgd --accountant pld --composition fft|exact`` (T = 100, below the FFT default's range, so the flag
    decides): the certificate carries ``fft`` exactly when asked, verifies, and the summary names the method."""
    from certify import cli

    out = tmp_path / "c.json"
    argv = [*_CLI, "--sampling", "poisson", "--steps", "100", "--accountant", "pld", "--grid", "1e-2", "--composition", composition]
    assert cli.main([*argv, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert ("fft" in doc["witnesses"]) is fft and verify_text(out.read_text()).exit_code == 0
    assert ("tilted float FFT composition" in text) is fft and ("exact integer composition" in text) is not fft


@pytest.mark.parametrize("flag, value", [("--grid", "1e-3"), ("--composition", "fft"), ("--composition", "exact")])
@pytest.mark.parametrize("contract", [["--sampling", "poisson"], ["--sampling", "fixed-size", "--adjacency", "replace-one"]])
def test_cli_pld_options_refused_with_another_accountant(capsys, flag, value, contract):
    """A PLD setting given to a Renyi accountant (the default of each contract) is refused (exit 2, naming the option),
    not silently ignored."""
    from certify import cli

    assert cli.main([*_CLI, *contract, "--steps", "10", flag, value]) == 2
    err = capsys.readouterr().err
    assert f"{flag}: is an option of --accountant pld only" in err
