"""Certified PLD accountant: discretisation directions, rounding directions, certificates, CLI, bad input."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import mpmath as mp
import pytest
import reference_pld as R

from certify.balls import exact, fmpq
from certify.certificate import digest_of
from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.pld import certify_pld, delta_interval
from certify.pld import compose, discretise
from certify.pld.pairs import profiles, shift
from certify.verify import verify_text
from fast_subset import fast_subset

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _mp(x):
    return mp.mpf(int(x.p)) / int(x.q)


def _curve(s: discretise.OneStep, h: fmpq, g):
    """g(gamma) of a one-step measure, evaluated independently in mpmath."""
    hh = _mp(h)
    out = mp.mpf(s.inf) / 2**s.K
    for i, m in enumerate(s.masses):
        if m:
            out += mp.mpf(m) / 2**s.K * max(0, 1 - g * mp.exp(-(s.lo + i) * hh))
    return out


# about 2 CPU s per contract (mpmath at 60 random gammas per profile): the fast suite checks the composed interval
# against the reference instead (test_pld_reference.py)
@pytest.mark.slow
@pytest.mark.parametrize("contract,q,sigma", [(POISSON_ADD_REMOVE, "0.05", "1"), (FIXED_SIZE_REPLACE_ONE, "0.1", "2")])
def test_one_step_measures_bracket_the_curve_everywhere(contract, q, sigma):
    """g_low <= f <= g_up at random gamma in [0, 40], on and between grid points and below the window."""
    h = fmpq(1, 100)
    qq, d = exact(q), shift(contract, exact(sigma))
    rnd = random.Random(5)
    with mp.workdps(R.DPS):
        for prof in profiles(contract):
            lay = discretise.layout(prof, qq, d, h, 1e-14)
            sm = discretise.sample(prof, qq, d, h, lay, 96)
            up, lo = discretise.pessimistic(sm, 96), discretise.optimistic(sm, 96)
            assert all(m >= 0 for m in up.masses) and all(m >= 0 for m in lo.masses)
            ref = {"remove": R.f_remove, "add": R.f_add}
            for _ in range(60):
                g = mp.mpf(rnd.random()) * (3 if rnd.random() < 0.8 else 40)
                f = max(ref[m](g, _mp(qq), _mp(d)) for m in prof.members)
                assert _curve(lo, h, g) <= f <= _curve(up, h, g), (prof, g)
            # tight: mid-cell around gamma = 1 the two one-step curves differ by less than 5 h f(1)
            tv = max(ref[m](mp.mpf(1), _mp(qq), _mp(d)) for m in prof.members)
            for g in (mp.exp(_mp(h) / 2), mp.exp(-_mp(h) * 3 / 2)):
                assert _curve(up, h, g) - _curve(lo, h, g) < 5 * _mp(h) * tv


def test_products_round_outward():
    """Pessimistic products dominate the exact product coefficientwise (and carry the +inf mass), optimistic ones
    are dominated; checked against exact rational convolution."""
    rnd = random.Random(1)
    K = 20
    a = [rnd.randrange(0, 1 << K) for _ in range(30)]
    b = [rnd.randrange(0, 1 << K) for _ in range(25)]
    exact = [sum(a[i] * b[k - i] for i in range(len(a)) if 0 <= k - i < len(b)) for k in range(len(a) + len(b) - 1)]
    from flint import fmpz_poly

    P = compose.Pld(fmpz_poly(a), -3, 5, K, True)
    Q = compose.Pld(fmpz_poly(b), 2, 7, K, True)
    c = compose.multiply(P, Q, 0)
    got = c.poly.coeffs()
    assert c.offset == -1
    for k, e in enumerate(exact):
        assert int(got[k]) * (1 << K) >= e and (int(got[k]) - 1) * (1 << K) < e
    assert c.inf * (1 << K) >= 5 * sum(b) + 7 * sum(a) + 35
    c = compose.multiply(compose.Pld(fmpz_poly(a), 0, 0, K, False), compose.Pld(fmpz_poly(b), 0, 0, K, False), 0)
    for k, e in enumerate(exact):
        assert int(c.poly.coeffs()[k]) * (1 << K) <= e


def test_truncation_moves_mass_the_right_way():
    from flint import fmpz_poly

    p = compose.Pld(fmpz_poly([1, 1, 1000, 1000, 1, 1]), 0, 0, 0, True)
    one = compose.Pld(fmpz_poly([1]), 0, 0, 0, True)
    c = compose.multiply(p, one, 2)
    assert c.offset == 2 and c.inf == 2 and [int(x) for x in c.poly.coeffs()] == [1002, 1000]
    p.pessimistic = one.pessimistic = False
    c = compose.multiply(p, one, 2)
    assert c.offset == 2 and c.inf == 0 and [int(x) for x in c.poly.coeffs()] == [1000, 1002]


def test_certificate_verifies_and_tampering_is_caught():
    cert = certify_pld(POISSON_ADD_REMOVE, "0.02", "1.5", 50, "1e-5", "1e-2")
    q = cert.quantities
    assert q["epsilon_lower"].value <= q["epsilon_upper"].value
    assert {c.name: c.holds for c in cert.claims} == {  # Poisson: the add direction is read off the remove chains
        "dominates[remove]": True,
        "dominated[remove]": True,
        "privacy": True,
        "tightness": True,
    }
    text = cert.dumps()
    assert verify_text(text).ok
    doc = json.loads(text)
    doc["witnesses"]["epsilon_upper"] = doc["witnesses"]["epsilon_lower"]  # claim a smaller epsilon
    doc["digest"] = digest_of(doc)
    rep = verify_text(json.dumps(doc, indent=2) + "\n")
    assert not rep.ok
    doc = json.loads(text)
    doc["witnesses"]["K"] = 40  # a different composition
    doc["digest"] = digest_of(doc)
    assert not verify_text(json.dumps(doc, indent=2) + "\n").ok


def test_fixed_size_certificate_and_interval_monotone():
    cert = certify_pld(FIXED_SIZE_REPLACE_ONE, "0.01", "2", 100, "1e-6", "1e-2")
    assert verify_text(cert.dumps()).ok
    eu, el = cert.quantities["epsilon_upper"].value, cert.quantities["epsilon_lower"].value
    assert (eu / el - 1) < 0.05  # second order in h: about 2.7e-4 at h = 1e-3, T = 1000
    lo1, up1 = delta_interval(FIXED_SIZE_REPLACE_ONE, "0.01", "2", 100, "0.5", "1e-2")
    lo2, up2 = delta_interval(FIXED_SIZE_REPLACE_ONE, "0.01", "2", 100, "0.6", "1e-2")
    assert lo1 <= up1 and lo2 <= up2 and up2 <= up1 and lo2 <= lo1


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "certify", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


BASE = [
    "dpsgd",
    "--sampling",
    "fixed-size",
    "--accountant",
    "pld",
    "--sampling-rate",
    "0.01",
    "--noise-multiplier",
    "2",
    "--steps",
    "20",
    "--delta",
    "1e-6",
]


def test_cli_summary_json_and_verify(tmp_path):
    out = tmp_path / "c.json"
    r = _cli(*BASE, "--grid", "1e-2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "epsilon <=" in r.stdout and "epsilon >=" in r.stdout and "replace-one" in r.stdout
    r = _cli("verify", str(out))
    assert r.returncode == 0, r.stdout + r.stderr


BAD_INPUT = [
    ("--grid", "0"),
    ("--grid", "-1e-4"),
    ("--grid", "1"),
    ("--grid", "x"),
    ("--grid", "1e-9"),
    ("--sampling-rate", "1"),
    ("--noise-multiplier", "0"),
    ("--steps", "0"),
    ("--delta", "1"),
    ("--delta", "0"),
    ("--noise-multiplier", "0.001"),
]


# fast suite: a zero and a non-number grid, a grid too fine to allocate, a noise too small to allocate (subprocesses)
@pytest.mark.parametrize("flag,value", fast_subset(BAD_INPUT, keep=[BAD_INPUT[0], BAD_INPUT[3], BAD_INPUT[4], BAD_INPUT[10]]))
def test_cli_bad_input(flag, value):
    args = list(BASE)
    if flag in args:
        i = args.index(flag)
        args[i + 1] = value
    else:
        args += [flag, value]
    r = _cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and flag in r.stderr and "Traceback" not in r.stderr


def test_trim_matches_brute_force():
    from flint import fmpz_poly

    from certify.pld.compose import trim

    rnd = random.Random(3)
    for _ in range(200):
        n = rnd.randrange(1, 3000)
        cs = [rnd.choice([0, 0, 1, 5, 100, 10**6]) for _ in range(n - 1)] + [1]
        tau = rnd.choice([0, 1, 10, 1000, 10**7, 10**9])
        acc, k = 0, 0
        while k < n - 1 and acc + cs[k] <= tau:
            acc, k = acc + cs[k], k + 1
        acc2, k2 = 0, 0
        while k2 < n - 1 - k and acc2 + cs[n - 1 - k2] <= tau:
            acc2, k2 = acc2 + cs[n - 1 - k2], k2 + 1
        assert trim(fmpz_poly(cs), tau) == (k, acc, k2, acc2)


def test_cli_refuses_huge_composition_quickly():
    r = _cli(*BASE[:-4], "--steps", "1e12", "--delta", "1e-6", "--grid", "1e-2")
    assert r.returncode == 2 and "--steps" in r.stderr and r.stderr.count("\n") == 1


def test_tables_classification():
    from certify.pld.tables import classify

    lo, up = fmpq(72316, 100000), fmpq(72714, 100000)
    assert classify("0.73", lo, up) == "confirmed"  # [0.725, 0.735] meets the enclosure
    assert classify("0.72", lo, up) == "confirmed"
    assert classify("0.74", lo, up) == "above"
    assert classify("0.71", lo, up) == "below"
    assert classify(">=20", fmpq(21), fmpq(22)) == "confirmed"
    assert classify(">=20", fmpq(19), fmpq(22)) == "below"


@pytest.mark.parametrize("contract", [FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE])
@pytest.mark.parametrize("sigma", ["1000000", "10000000000000"])
def test_huge_noise_multiplier_certifies_quickly(contract, sigma):
    """A far Gaussian tail (1e-21501706 at sigma = 1e6) once became an exact rational of millions of digits
    (a hang) or one FLINT cannot build (an abort at sigma >= 1e8); it is now bounded on the safe side."""
    import time

    t0 = time.perf_counter()
    cert = certify_pld(contract, "1/100", sigma, 10, "1e-5")
    assert time.perf_counter() - t0 < 20
    doc = cert.to_json()
    assert verify_text(cert.dumps()).ok
    up = exact(doc["witnesses"]["epsilon_upper"])
    assert 0 <= up < fmpq(1, 1000)


def test_tiny_delta_certified_down_to_1e130_and_refused_below():
    """delta = 1e-130 makes K = 482 bits (at 1e-300 the width guard once overflowed a float: a traceback,
    and K = 1047 was beyond what the checker admits); below 1e-130: a one-line error naming --delta, exit 2."""
    cert = certify_pld(FIXED_SIZE_REPLACE_ONE, "1/1000000", "1000000", 1, "1e-130")
    assert verify_text(cert.dumps()).ok
    base = [
        sys.executable,
        "-m",
        "certify",
        "dpsgd",
        "--sampling",
        "fixed-size",
        "--accountant",
        "pld",
        "--sampling-rate",
        "0.01",
        "--noise-multiplier",
        "2",
        "--steps",
        "10",
    ]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run(base + ["--delta", "1e-131"], cwd=root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and "--delta" in r.stderr and "1e-130" in r.stderr
