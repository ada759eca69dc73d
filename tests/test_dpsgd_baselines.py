"""Baseline columns of Bok's tables (Wang, Birrell: certified; lossless: estimate) and the table checker."""

import mpmath as mp
import pytest

from certify.balls import exact, fmpq, workprec
from certify.dpsgd.baselines.birrell import rho_birrell
from certify.dpsgd.baselines.moments import M
from certify.dpsgd.baselines.wang import rho_wang
from certify.dpsgd import tables as BT

mp.mp.dps = MPMATH_DPS = 60  # this module's precision (tests/conftest.py sets it per test)


def contains(x, ref, rel="1e-45"):
    m, e = x.mid().man_exp()
    r, f = x.rad().man_exp()
    mid, rad = mp.mpf((int(m), int(e))), mp.mpf((int(r), int(f)))
    return abs(mid - ref) <= rad + abs(ref) * mp.mpf(rel)


def ref_M(k, sigma):
    D2 = mp.mpf(4) / mp.mpf(sigma) ** 2
    with mp.workdps(400):
        return +mp.fsum(mp.binomial(k, l) * (-1) ** (k - l) * mp.exp(l * (l - 1) * D2 / 2) for l in range(k + 1))


def ref_wang(alpha, p, sigma):
    p, s = mp.mpf(p), mp.mpf(sigma)
    Bk = lambda k: ref_M(k, sigma) if k % 2 == 0 else mp.sqrt(ref_M(k - 1, sigma) * ref_M(k + 1, sigma))  # noqa
    A = 1 + mp.fsum(p**j * mp.binomial(alpha, j) * min(4 * Bk(j), 2 * mp.exp((j - 1) * 2 * j / s**2)) for j in range(2, alpha + 1))
    return mp.log(A) / (alpha - 1)


@pytest.mark.parametrize("k,sigma", [(2, "2"), (3, "1/2"), (10, "8"), (40, "3"), (120, "8")])
def test_moments_contain_400_digit_reference(k, sigma):
    with workprec(128):
        x = M(k, exact(sigma))
    q = exact(sigma)
    assert contains(x, ref_M(k, mp.mpf(int(q.p)) / int(q.q)))
    if k % 2 == 0:
        assert x > 0  # an even moment


def test_wang_check_value_and_reference():
    with workprec(128):
        r = rho_wang(8, exact("0.01"), exact("2"))
    assert contains(r, ref_wang(8, "0.01", 2))
    assert abs(float(r.mid()) - 0.00268416501269) < 5e-15  # the notes' check value
    assert float(r.rad()) < 1e-30


@pytest.mark.parametrize("alpha,p,sigma", [(2, "0.0025", "1"), (17, "0.04", "3"), (64, "0.01", "8")])
def test_wang_reference(alpha, p, sigma):
    with workprec(128):
        r = rho_wang(alpha, exact(p), exact(sigma))
    assert contains(r, ref_wang(alpha, p, mp.mpf(sigma)))


def test_wang_matches_dp_accounting_with_half_sigma():
    rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    from dp_accounting import dp_event

    orders = [2, 3, 8, 33, 256]
    for sigma in ("1", "2", "8"):
        acc = rdp.RdpAccountant(orders=orders, neighboring_relation=rdp.NeighborRel.REPLACE_ONE)
        acc.compose(dp_event.SampledWithoutReplacementDpEvent(10000, 100, dp_event.GaussianDpEvent(float(sigma) / 2)))
        with workprec(128):
            ours = [float(rho_wang(a, exact("0.01"), exact(sigma)).mid()) for a in orders]
        for a, x, y in zip(orders, acc._rdp, ours):
            assert abs(x - y) <= 1e-9 * abs(y), (sigma, a, x, y)


def test_birrell_check_value_and_overflow_point():
    with workprec(128):
        r = rho_birrell(32, exact("0.01"), exact("4"), 4)
        big = rho_birrell(16, exact("0.004"), exact("1"), 5)  # the authors' float code returns inf here
    assert abs(float(r.mid()) - 0.00120253727024) < 5e-15
    assert big.is_finite() and 10 < float(big.mid()) < 1000 and float(big.rad()) < 1e-20


def test_birrell_leading_order_matches_proposition_5():
    """rho_B = alpha (e^(4/s^2) - e^(2/s^2)) p^2 + O(p^3) (Section 6.2): the ratio tends to 1 as p -> 0."""
    a, s = 4, 3
    lead = lambda p: a * (mp.exp(mp.mpf(4) / s**2) - mp.exp(mp.mpf(2) / s**2)) * p**2  # noqa
    with workprec(128):
        ratios = [float(rho_birrell(a, fmpq(1, 10**k), exact(str(s)), 4).mid()) / float(lead(mp.mpf(10) ** -k)) for k in (3, 5)]
    assert abs(ratios[1] - 1) < abs(ratios[0] - 1) and abs(ratios[1] - 1) < 1e-3


def test_lossless_check_value():
    pytest.importorskip("dp_accounting")
    from certify.dpsgd.baselines.lossless import epsilon_lossless

    assert round(epsilon_lossless(0.01, 2.0, 250, 1e-6), 3) == 1.345  # the notes: not the two-direction 1.232


def test_table_classification_rules():
    lo, hi = exact("1.7651"), exact("1.7652")
    assert BT.classify_enclosure(lo, hi, "1.77")[0] == "confirmed"
    assert BT.classify_enclosure(lo, hi, "1.76")[0] == "mismatch"
    assert BT.classify_enclosure(exact("1.7749"), exact("1.80"), "1.77")[0] == "confirmed"  # meets
    assert BT.classify_estimate(1.3449, "1.34")[0] == "confirmed"
    assert BT.classify_estimate(1.3451, "1.34")[0] == "mismatch"
    rows = [
        {
            "table": "9",
            "delta": "1e-6",
            "p": "0.01",
            "sigma": "1",
            "T": ">=2000",
            "ours": ">=20",
            "birrell": ">=20",
            "wang": ">=20",
            "lossless": ">=20",
            "relative_difference": "",
        }
    ]
    cell = lambda v: {"ours": [v, v], "wang": [v, "100"], "birrell": ["25", "26"], "lossless": ["30", "31"]}  # noqa
    results = {"0.01|1": {f"{T}|1e-6": cell("21") for T in BT.T_GRID}}
    out = BT.classify(rows, results)[0]
    assert all(out[f"{c}_verdict"] == "confirmed" for c in BT.COLUMNS)
    results["0.01|1"]["64000|1e-6"] = cell("19.5")
    out = BT.classify(rows, results)[0]
    assert out["ours_verdict"] == "mismatch" and out["wang_verdict"] == "mismatch"


@pytest.mark.slow  # about 15 s: four certified columns of 18 rows from scratch, twice
def test_published_rows_of_one_table_group_are_confirmed(tmp_path):
    """Recompute all four columns (lossless certified) for the p = 0.0025, sigma = 8 rows of Tables 1 and 4
    from scratch on two local workers, then again in-process from the cache: same files, all confirmed."""
    import os

    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tables")
    rows = [r for r in BT.read_published(root) if r["p"] == "0.0025" and r["sigma"] == "8"]
    assert len(rows) == 18
    results = BT.compute_tables(rows, cache_dir=str(tmp_path), jobs=2, executor_kind="local")
    out = BT.classify(rows, results)
    bad = [(r["table"], r["T"], c) for r in out for c in BT.COLUMNS if r[f"{c}_verdict"] != "confirmed"]
    assert bad == []
    again = BT.compute_tables(rows, cache_dir=str(tmp_path), jobs=1)
    assert BT.outputs(BT.classify(rows, again)) == BT.outputs(out)


def _run(args):
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run([sys.executable, "-m", "certify", *args], capture_output=True, text=True, cwd=root)


@pytest.mark.slow  # about 6 CPU s: eight CLI subprocesses
def test_dpsgd_accountant_option(tmp_path):
    pytest.importorskip("dp_accounting")
    base = ["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "0.01", "--noise-multiplier", "2", "--steps", "1000", "--delta", "1e-6"]
    out = tmp_path / "w.json"
    r = _run(base + ["--accountant", "wang", "--out", str(out)])
    assert r.returncode == 0 and "4.0212" in r.stdout and "certified" in r.stdout
    v = _run(["verify", str(out)])
    assert v.returncode == 0, v.stdout
    import json

    doc = json.loads(out.read_text())
    doc["witnesses"]["alpha"] = 8
    from certify.certificate import digest_of

    doc["digest"] = digest_of(doc)
    out.write_text(json.dumps(doc))
    assert _run(["verify", str(out)]).returncode == 4
    r = _run(base + ["--accountant", "birrell"])
    assert r.returncode == 0 and "4.9270" in r.stdout
    r = _run(base + ["--accountant", "lossless"])
    assert r.returncode == 0 and "ESTIMATE" in r.stdout and "2.5128" in r.stdout
    r = _run(base + ["--accountant", "lossless", "--out", str(tmp_path / "l.json")])
    assert r.returncode == 2 and not (tmp_path / "l.json").exists()
