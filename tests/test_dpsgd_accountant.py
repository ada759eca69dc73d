"""Corollary 1 / (6) on the certified rho: published cells, certificates, tampering, CLI errors."""

import json

import pytest

from certify import cli
from certify.balls import InputError, exact, fmpq
from certify.certificate import digest_of
from certify.dpsgd.accountant import certify_dpsgd, certify_rho, clear_memo
from certify.dpsgd.problem import Problem, make_problem, parse_p, parse_sigma
from certify.verify import verify_document, verify_text

# (delta, p, sigma, T) -> "Our bounds" of Bok (2026) Tables 1-6 (Appendix B.1)
CELLS = [
    ("1e-6", "0.01", "2", 250, "1.77"),
    ("1e-6", "0.01", "2", 1000, "2.44"),
    ("1e-6", "0.01", "2", 4000, "4.75"),
    ("1e-6", "0.0025", "4", 64000, "1.63"),
    ("1e-8", "0.04", "8", 64000, "18.27"),
]


def _round2(q: fmpq) -> str:
    n = int((q * 100 + fmpq(1, 2)).floor())
    return f"{n // 100}.{n % 100:02d}"


@pytest.mark.parametrize("delta,p,sigma,T,published", CELLS)
def test_published_cells(delta, p, sigma, T, published):
    clear_memo()
    out = certify_dpsgd(parse_p(p), parse_sigma(sigma), T, exact(delta))
    eps = out.certificate.quantities["epsilon"].value
    assert _round2(eps.upper().fmpq()) == published
    # the bound is tight: its width does not reach the printed digits
    assert eps.upper().fmpq() - eps.lower().fmpq() < fmpq(1, 10**6)
    assert verify_text(out.certificate.dumps()).ok


@pytest.fixture(scope="module")
def bnb_doc():
    clear_memo()
    out = certify_dpsgd(fmpq(1, 100), fmpq(2), 1000, fmpq(1, 10**6))
    assert out.witness.method == "branch-and-bound"
    return json.loads(out.certificate.dumps())


def _retamper(doc):
    doc["digest"] = digest_of(doc)  # re-seal so the semantic checks (not just the digest) must catch it
    return doc


def test_round_trip(bnb_doc):
    rep = verify_document(json.loads(json.dumps(bnb_doc)))
    assert rep.ok, rep.problems
    q = bnb_doc["quantities"]
    for name in ("rho", "alpha", "epsilon"):
        assert "lower" in q[name] and "upper" in q[name]


def test_tamper_digest_only(bnb_doc):
    doc = json.loads(json.dumps(bnb_doc))
    doc["inputs"]["steps"] = "999"
    assert not verify_document(doc).ok


def test_tamper_leaf_removed(bnb_doc):
    doc = json.loads(json.dumps(bnb_doc))
    del doc["witnesses"]["leaves"][1]
    rep = verify_document(_retamper(doc))
    assert not rep.ok
    assert any("cover" in p or "leaf" in p or "quantit" in p for p in rep.problems)


def test_tamper_leaf_bound_lowered(bnb_doc):
    doc = json.loads(json.dumps(bnb_doc))
    leaf = doc["quantities"]["leaf[0]"]
    m, e = leaf["ball"]["mid"]
    leaf["ball"]["mid"] = [str(int(m) * 9 // 10), e]
    assert not verify_document(_retamper(doc)).ok


def test_tamper_witness_leaf_bound_lowered(bnb_doc):
    doc = json.loads(json.dumps(bnb_doc))
    leaf = doc["witnesses"]["leaves"][0]
    assert len(leaf) == 3  # [l, r, certified bound of the leaf]
    leaf[2] = str(exact(leaf[2]) * fmpq(999, 1000))
    rep = verify_document(_retamper(doc))
    assert not rep.ok
    assert any("recorded bound" in p for p in rep.problems)


def test_tamper_rho_upper_lowered(bnb_doc):
    doc = json.loads(json.dumps(bnb_doc))
    doc["quantities"]["rho"]["ball"]["rad"] = ["0", 0]
    assert not verify_document(_retamper(doc)).ok


def test_tamper_input_changed(bnb_doc):
    doc = json.loads(json.dumps(bnb_doc))
    doc["inputs"]["noise_multiplier"] = "21/10"
    assert not verify_document(_retamper(doc)).ok


def test_tamper_window_shrunk(bnb_doc):
    doc = json.loads(json.dumps(bnb_doc))
    pt = doc["witnesses"]["points"][0]
    pt["b"] = str(exact(pt["a"]) + 1)  # a window that misses most of the mass
    assert not verify_document(_retamper(doc)).ok


def test_prop2a_certificate_and_false_shortcut():
    clear_memo()
    out = certify_rho(Problem(12, fmpq(1, 100), fmpq(2)))
    assert out.witness.method == "prop2a"
    doc = json.loads(out.certificate.dumps())
    assert verify_document(doc).ok
    # claiming Proposition 2 (a) where (19) fails must be rejected
    doc["inputs"]["alpha"] = "8"
    assert not verify_document(_retamper(doc)).ok


def test_memo_and_disk_cache(tmp_path):
    clear_memo()
    prob = Problem(8, fmpq(1, 100), fmpq(2))
    a = certify_rho(prob, cache_dir=str(tmp_path))
    assert a.source == "search"
    clear_memo()
    b = certify_rho(prob, cache_dir=str(tmp_path))
    assert b.source == "disk"
    assert b.certificate.dumps() == a.certificate.dumps()
    c = certify_rho(prob, cache_dir=str(tmp_path))
    assert c.source == "memo"
    # a tampered cache entry is detected by the evaluator and replaced by a fresh search
    (path,) = [p for p in tmp_path.iterdir() if p.name.startswith("rho-")]
    w = json.loads(path.read_text())
    del w["leaves"][0]
    path.write_text(json.dumps(w))
    clear_memo()
    d = certify_rho(prob, cache_dir=str(tmp_path))
    assert d.source == "search"
    assert verify_text(d.certificate.dumps()).ok


def test_fixed_alpha_is_valid_bound():
    clear_memo()
    out = certify_dpsgd(fmpq(1, 100), fmpq(2), 1000, fmpq(1, 10**6), alpha=20)
    best = certify_dpsgd(fmpq(1, 100), fmpq(2), 1000, fmpq(1, 10**6))
    assert out.certificate.inputs["alpha"] == "20"
    assert best.certificate.quantities["epsilon"].value.upper() < out.certificate.quantities["epsilon"].value.upper()


# ------------------------------------------------------------------------------------------
# Input errors
# ------------------------------------------------------------------------------------------
def test_floats_refused():
    with pytest.raises(InputError):
        make_problem(8, 0.01, 2)
    with pytest.raises(InputError):
        make_problem(8, "0.01", 2.0)


BAD = [
    ["rho", "--alpha", "8", "--sampling-rate", "3/2", "--noise-multiplier", "2"],
    ["rho", "--alpha", "8", "--sampling-rate", "0", "--noise-multiplier", "2"],
    ["rho", "--alpha", "8", "--sampling-rate", "0.01", "--noise-multiplier", "0"],
    ["rho", "--alpha", "8", "--sampling-rate", "0.01", "--noise-multiplier", "-1"],
    ["rho", "--alpha", "1", "--sampling-rate", "0.01", "--noise-multiplier", "2"],
    ["rho", "--alpha", "257", "--sampling-rate", "0.01", "--noise-multiplier", "2"],
    ["rho", "--alpha", "8.5", "--sampling-rate", "0.01", "--noise-multiplier", "2"],
    ["rho", "--alpha", "8", "--sampling-rate", "abc", "--noise-multiplier", "2"],
    ["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "0", "--delta", "1e-6"],
    ["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "10.5", "--delta", "1e-6"],
    ["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "100", "--delta", "1"],
    ["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "100", "--delta", "0"],
    [
        "dpsgd",
        "--sampling",
        "fixed-size",
        "--batch-size",
        "600",
        "--dataset-size",
        "500",
        "--noise-multiplier",
        "2",
        "--steps",
        "100",
        "--delta",
        "1e-6",
    ],
    ["dpsgd", "--sampling", "fixed-size", "--batch-size", "5", "--noise-multiplier", "2", "--steps", "100", "--delta", "1e-6"],
    [
        "dpsgd",
        "--sampling",
        "fixed-size",
        "--sampling-rate",
        "0.01",
        "--batch-size",
        "5",
        "--dataset-size",
        "500",
        "--noise-multiplier",
        "2",
        "--steps",
        "100",
        "--delta",
        "1e-6",
    ],
    [
        "dpsgd",
        "--sampling",
        "fixed-size",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "2",
        "--steps",
        "100",
        "--delta",
        "1e-6",
        "--alpha",
        "300",
    ],
]


@pytest.mark.parametrize("argv", BAD, ids=lambda a: " ".join(a[1:]))
def test_bad_input_exit_and_nothing_written(argv, tmp_path, capsys):
    out = tmp_path / "cert.json"
    code = cli.main(argv + ["--out", str(out)])
    err = capsys.readouterr().err
    assert code == cli.EXIT_INPUT
    assert err.startswith("certify: error: --")
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_cli_rho_json_and_dpsgd_batch(tmp_path, capsys):
    assert cli.main(["rho", "--alpha", "8", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "dpsgd/rho-bok"
    assert {"rho", "alpha"} <= set(doc["quantities"])
    out = tmp_path / "c.json"
    assert (
        cli.main(
            [
                "dpsgd",
                "--sampling",
                "fixed-size",
                "--batch-size",
                "1",
                "--dataset-size",
                "100",
                "--noise-multiplier",
                "2",
                "--steps",
                "1000",
                "--delta",
                "1e-6",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "epsilon <=" in text and "2.44" in text and "maximiser" in text
    doc = json.loads(out.read_text())
    assert doc["kind"] == "dpsgd/renyi-bok"
    assert doc["inputs"]["sampling_rate"] == "1/100"
    assert verify_text(out.read_text()).ok


def test_help_explains(capsys):
    with pytest.raises(SystemExit):
        cli.main(["dpsgd", "--help"])
    text = capsys.readouterr().out
    assert "Corollary 1" in text and "--batch-size" in text and "--alpha" in text


def test_prop2b_certificate_round_trip():
    clear_memo()
    out = certify_dpsgd(fmpq(1, 25), fmpq(8), 64000, fmpq(1, 10**8), alpha=3)
    assert out.witness.method == "prop2b"
    doc = json.loads(out.certificate.dumps())
    assert verify_document(doc).ok
    assert [c["name"] for c in doc["claims"]][0] == "prop2b" and doc["claims"][0]["holds"] is True
    assert all(c["holds"] for c in doc["claims"])
    assert [c["name"] for c in doc["conclusions"]] == ["dp"] and "prop2b" in doc["conclusions"][0]["hypotheses"]
    doc["inputs"]["alpha"] = "70"  # sigma^2 = 64 <= alpha: Proposition 2 (b) does not apply
    assert not verify_document(_retamper(doc)).ok


def test_tamper_curvature_witness(bnb_doc, monkeypatch):
    """The checker never chooses theta or the curvature level: a bad list or a level too cheap is refused."""
    curv = bnb_doc["witnesses"]["curvature"]
    assert len(curv) == len(bnb_doc["witnesses"]["leaves"])
    # a theta list of the wrong length, and a theta outside [0, 1]
    doc = json.loads(json.dumps(bnb_doc))
    doc["witnesses"]["curvature"][0]["thetas"].pop()
    rep = verify_document(_retamper(doc))
    assert not rep.ok and any("theta list" in p for p in rep.problems)
    doc = json.loads(json.dumps(bnb_doc))
    doc["witnesses"]["curvature"][0]["thetas"][0] = 2**41
    assert not verify_document(_retamper(doc)).ok
    # a leaf that needs a sharp bound, downgraded to the crude one (thetas re-chosen, so only the key can fail)
    from certify.dpsgd.curvature import theta_choice

    full = [i for i, c in enumerate(curv) if c["level"] in ("convex", "full")]
    assert full, "the benchmark query has a leaf that needs a convexity proof (level convex or full)"
    i = full[0]
    doc = json.loads(json.dumps(bnb_doc))
    l, r = (exact(x) for x in doc["witnesses"]["leaves"][i][:2])
    prob = Problem(int(doc["inputs"]["alpha"]), exact(doc["inputs"]["sampling_rate"]), exact(doc["inputs"]["noise_multiplier"]))
    doc["witnesses"]["curvature"][i] = {"level": "crude", "thetas": list(theta_choice(prob, l, r, "crude"))}
    rep = verify_document(_retamper(doc))
    # refused for its level first (certify's rule, curvature.choose_levels, re-derived) ...
    assert not rep.ok and any(f"recorded level crude, certify chooses {curv[i]['level']}" in p for p in rep.problems)
    # ... and, that check switched off, by its key (the crude bound's key is not the recorded one)
    from certify.dpsgd import certificates

    monkeypatch.setattr(certificates, "check_levels", lambda *a: None)
    rep = verify_document(_retamper(doc))
    assert not rep.ok and any("recorded bound" in p for p in rep.problems)


def test_economical_witness_keeps_the_bound(monkeypatch):
    """Coarser rules and cheaper curvature levels on leaves with slack never move the certified rho."""
    from certify.dpsgd.certificates import fill_rho
    from certify.dpsgd.search import rho_search
    from certify.certificate import Evaluation
    from certify.dpsgd.mixture import choose_rule

    prob = Problem(8, fmpq(1, 100), fmpq(2))
    res = rho_search(prob)
    ev = Evaluation()
    fill_rho(prob, res, ev)
    rho = ev.quantities["rho"].value
    # the same partition with tight rules everywhere and the full curvature bound on every leaf
    from certify.dpsgd.search import rel_bits_for

    tight = {u: choose_rule(prob, u, rel_bits_for(prob, res.gamma)) for u in res.rules}
    from certify.dpsgd.curvature import theta_choice
    import copy

    res2 = copy.copy(res)
    res2.rules = tight
    res2.levels = ["full"] * len(res.leaves)
    res2.thetas = [theta_choice(prob, l, r, "full") for l, r in res.leaves]
    from certify.dpsgd import certificates

    with pytest.raises(InputError, match="recorded level full, certify chooses"):  # not what certify writes ...
        fill_rho(prob, res2, Evaluation())
    monkeypatch.setattr(certificates, "check_levels", lambda *a: None)  # ... but a valid bound: evaluate it
    ev2 = Evaluation()
    fill_rho(prob, res2, ev2)
    assert rho.upper() == ev2.quantities["rho"].value.upper()
    assert any(lev != "full" for lev in res.levels)  # the economy is used ...
    assert any(res.rules[u].nodes < tight[u].nodes for u in res.rules)  # ... on both counts
