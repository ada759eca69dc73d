"""Utility bounds (Section 4.3) and calibration (Corollary 4.13, Theorem C.13) of Watkins-Arora.

Soundness/tightness against independent 60-digit mpmath evaluations at randomized parameters, the
calibration round trip through `certify objpert`, the sharper method never worse, and bad input.
"""

import json
import os
import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import reference_objpert as R
from fast_subset import fast_subset
from certify.balls import exact, fmpq, workprec
from certify.objpert import calibrate as K
from certify.objpert.certificates import certify_theorem_4_1
from certify.objpert.problem import make_loss, make_problem
from certify.verify import verify_text
from test_objpert_reference import build, check, problems

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    problems,
    st.integers(1, 5000),
    st.fractions(Fraction(1, 1000), Fraction(99, 100), max_denominator=1000),
    st.fractions(Fraction(1, 10), 10, max_denominator=10),
    st.fractions(Fraction(1, 1000), Fraction(1, 2), max_denominator=1000),
)
def test_utility_bounds_contain_reference(prm, N, dS, W, beta):
    from certify.objpert import utility as U
    from certify.objpert.problem import constants

    p, ref = build(prm)
    r = R.utility(ref, N, dS, W, beta)
    f = lambda x: fmpq(x.numerator, x.denominator)  # noqa: E731
    with workprec(128):
        c = constants(p)
        got = {
            "E_opt": U.E_opt(p, c, N),
            "empirical_excess": U.empirical_excess(p, c, N),
            "sample_term": U.sample_term(p, f(dS)),
            "population_excess": U.population_excess(p, c, N, f(dS)),
            "unregularized_excess": U.unregularized_excess(p, c, N, f(dS), f(W)),
            "r_beta": U.r_beta(p, c, f(beta)),
            "R_beta": U.R_beta(p, c, f(beta)),
            "U_N": U.U_N(p, c, N, f(beta)),
        }
    for k, v in got.items():
        check(v, r[k], k)


def test_utility_in_certificate_and_given_gradient_norm():
    p = make_problem(n="1000000", d="10000", mu="0.01", zeta="1", loss=make_loss("logistic"), u="6", noise_multiplier="5")
    cert = certify_theorem_4_1(p, "1", "1500", utility={"delta_S": "0.01", "comparator_norm": "1", "beta": "0.05"})
    q = cert.quantities
    ref = R.utility(R.Ref(10**6, 10**4, "1/100", 1, 1, "1/4", 0, "1/100000", 6, logistic=True), 1500, Fraction(1, 100), 1, Fraction(1, 20))
    for k in ("E_opt", "population_excess", "unregularized_excess", "U_N", "single_release_unregularized"):
        check(q[k].value, ref[k], k)
    assert verify_text(cert.dumps()).ok
    cert0 = certify_theorem_4_1(p, "1", "200000", utility={"gradient_norm": "0"})
    assert q["E_opt"].value > cert0.quantities["E_opt"].value  # a_R = 0 shrinks (12)


@pytest.mark.parametrize(
    "eps,delta,dS,W,n,d",
    [
        ("1", "1e-7", "0.01", "1", 1000000, 10000),
        ("1/2", "1e-6", "0.05", "3", 200000, 50),
        ("1/10", "1e-9", "0.001", "1/2", 10**7, 10**5),
    ],
)
def test_corollary_4_13_round_trip_and_sharper_method(eps, delta, dS, W, n, d):
    loss = make_loss("logistic")
    cor = K.certify_corollary_4_13(eps, delta, dS, W, n, d, "1", loss)
    assert all(c.holds for c in cor.claims)
    assert verify_text(cor.dumps()).ok
    w = cor.to_json()["witnesses"]
    # independent reference for the corollary's irrational quantities
    G = Fraction(2, n)
    ref = R.corollary_4_13(
        eps, delta, dS, W, n, d, 1, 1, Fraction(1, 4), Fraction(int(exact(w["noise_multiplier"]).p), int(exact(w["noise_multiplier"]).q)) * G
    )
    for k in ("u", "mu_priv", "A", "mu_util"):
        check(cor.quantities[k].value, ref[k], k)
    # round trip: the published parameters, fed to Theorem 4.1, certify the target
    p = make_problem(n=n, d=d, mu=w["mu"], zeta="1", loss=loss, u=w["u"], noise_multiplier=w["noise_multiplier"])
    cert = certify_theorem_4_1(p, eps, w["iterations"], delta)
    assert all(c.holds for c in cert.claims)
    assert cert.quantities["delta"].value < exact(delta)
    # sharper: Theorem C.13 needs no more iterations and no more noise
    c13 = K.certify_calibration_c13(p, exact(eps), exact(delta), w["iterations"])
    cw = c13.to_json()["witnesses"]
    assert cw["theorem_C13"]["first_passing_iterations"] <= w["iterations"]
    assert exact(cw["sigma_bracket"]["pass"]) <= exact(w["noise_multiplier"])
    assert exact(cw["sigma_bracket"]["fail"]) < exact(cw["sigma_bracket"]["pass"])
    assert verify_text(c13.dumps()).ok


def test_tampered_sigma_bracket_rejected():
    loss = make_loss("logistic")
    cor = K.certify_corollary_4_13("1", "1e-7", "0.01", "1", 10**6, 10**4, "1", loss)
    w = cor.to_json()["witnesses"]
    p = make_problem(n=10**6, d=10**4, mu=w["mu"], zeta="1", loss=loss, u=w["u"], noise_multiplier=w["noise_multiplier"])
    doc = json.loads(K.certify_calibration_c13(p, exact("1"), exact("1e-7"), w["iterations"]).dumps())
    from certify.certificate import digest_of
    from certify.verify import verify_document

    lo = exact(doc["witnesses"]["sigma_bracket"]["fail"])
    doc["witnesses"]["sigma_bracket"]["pass"] = str(lo.p) + "/" + str(lo.q * 2)  # claims a pass far below
    doc["digest"] = digest_of(doc)
    rep = verify_document(doc)
    assert not rep.ok and "not the bracket the bisection leaves" in " ".join(rep.problems)  # (re-run by the checker)
    # and a tampered corollary witness (N one smaller) is caught
    doc = json.loads(cor.dumps())
    doc["witnesses"]["iterations"] -= 1
    doc["digest"] = digest_of(doc)
    assert not verify_document(doc).ok


def run(args):
    return subprocess.run([sys.executable, "-m", "certify", *args], capture_output=True, text=True, cwd=ROOT)


def test_calibrate_cli_prints_replay_command_that_certifies(tmp_path):
    r = run(["calibrate", "--epsilon", "1", "--delta", "1e-7", "--n", "1000000", "--d", "10000"])
    assert r.returncode == 0, r.stderr
    line = [x for x in r.stdout.splitlines() if x.strip().startswith("certify objpert")][0].split()
    r2 = run(line[1:] + ["--json"])
    assert r2.returncode == 0, r2.stderr
    doc = json.loads(r2.stdout)
    assert all(c["holds"] for c in doc["claims"])


CALIBRATE_BAD_INPUT = [
    (["--epsilon", "2"], "--epsilon"),
    (["--epsilon", "0"], "--epsilon"),
    (["--delta", "1"], "--delta"),
    (["--comparator-norm", "0"], "--comparator-norm"),
    (["--delta-S", "1"], "--delta-S"),
    (["--delta-S", "0"], "--delta-S"),
    (["--n", "0"], "--n"),
    (["--epsilon", "1.0e0x"], "--epsilon"),
]


# fast suite: an upper range end, a zero count, a malformed number (subprocesses); the rest slow
@pytest.mark.parametrize("args,needle", fast_subset(CALIBRATE_BAD_INPUT, keep=[CALIBRATE_BAD_INPUT[i] for i in (2, 6, 7)]))
def test_calibrate_bad_input(args, needle, tmp_path):
    base = {"--epsilon": "1", "--delta": "1e-7", "--n": "1000000", "--d": "10000"}
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    out = tmp_path / "c.json"
    r = run(["calibrate", *[x for kv in base.items() for x in kv], "--out", str(out)])
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "opt,value",
    fast_subset(
        [("--beta", "1"), ("--beta", "0"), ("--delta-S", "1.5"), ("--comparator-norm", "-0.5")], keep=[("--beta", "1"), ("--comparator-norm", "-0.5")]
    ),
)
def test_objpert_utility_bad_input(opt, value):
    r = run(["objpert", "--example", "4.8", "--utility", opt, value])
    assert r.returncode == 2 and opt in r.stderr
