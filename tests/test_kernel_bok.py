"""The second checker (certify_kernel.bok) on `dpsgd/renyi-bok`: Bok (2026), Theorem 1 / (5) on every recorded leaf.

References are independent of both checkers: mpmath quadrature of (15) (the 2-D Gaussian expectation) and of
(35) (its 1-D form) at 40 digits; the closed form at u = 0. Forgeries are re-sealed (tests/test_forger.py) and must
be refused or left undecided by the kernel, never accepted with a false conclusion; genuine certificates are
accepted by both checkers.
"""

import copy
import os
import subprocess
import sys
from fractions import Fraction

import mpmath as mp
import pytest

import certify_kernel
from certify_kernel import bok
from certify_kernel.numbers import printed, working_precision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_forger import reseal  # noqa: E402
from test_kernel_agreement import certify_verdict  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: J(1/8) at alpha = 8, p = 1/100, sigma = 2 by mpmath quad of the 2-D expectation (15) at 20 digits (55 s; run once:
#: F = E[(1-p+p e^X)^alpha (1-p+p e^Y)^(1-alpha)], X = Delta Z1 - Delta^2/2, Y = Delta(u Z1 + sqrt(2u-u^2) Z2) - Delta^2 u)
J_EIGHTH_2D = mp.mpf("0.000877038271978291")
PARAMS = {
    "p=1/100 sigma=2 T=1000 (max at u=0)": dict(sampling_rate="1/100", noise_multiplier="2", steps=1000, delta="1e-6"),
    "p=1/20 sigma=3/2 T=500 (max at u=1/2)": dict(sampling_rate="1/20", noise_multiplier="3/2", steps=500, delta="1e-5"),
}


def _J_35(alpha, p, sigma, u):
    """J(u) by (35): sum_k C(alpha,k)(1-p)^(alpha-k) p^k e^(k(k-1)D^2/2 - k^2 b^2/8) int (1-p+p e^(bv-b^2/2))^(1-alpha) e^(kbv/2) phi."""
    with mp.workdps(40):
        p, D = mp.mpf(p.numerator) / p.denominator, mp.mpf(2) / sigma
        b = D * mp.sqrt(2 * mp.mpf(u.numerator) / u.denominator)
        total = 0
        for k in range(alpha + 1):
            f = lambda v: (1 - p + p * mp.e ** (b * v - b * b / 2)) ** (1 - alpha) * mp.e ** (k * b * v / 2) * mp.npdf(v)  # noqa: E731
            w = mp.binomial(alpha, k) * (1 - p) ** (alpha - k) * p**k * mp.e ** (k * (k - 1) * D * D / 2 - k * k * b * b / 8)
            total += w * mp.quad(f, [-mp.inf, k * b / 2, mp.inf])
        return mp.log(total) / (alpha - 1)


def _mp(q: Fraction):
    return mp.mpf(q.numerator) / q.denominator


@pytest.mark.slow
@pytest.mark.parametrize("u", [Fraction(1, 8), Fraction(1, 2), Fraction(1, 1000)])
def test_point_encloses_the_quadrature_of_35(u):
    with working_precision(320):
        lo, hi = bok.point(8, Fraction(1, 100), Fraction(1), u)
    with mp.workdps(40):
        ref = _J_35(8, Fraction(1, 100), 2, u)
        assert _mp(lo) <= ref <= _mp(hi), (float(lo), ref, float(hi))
        assert _mp(hi - lo) <= ref * mp.mpf("1e-18")  # by design: discretisation e^(-2 pi STEPS) = e^-56, x e^(a^2/2)


def test_point_agrees_with_the_2d_definition_15():
    """The kernel's (35) at u = 1/8 agrees with the 2-D expectation (15) (a stored 20-digit mpmath value)."""
    with working_precision(320):
        lo, hi = bok.point(8, Fraction(1, 100), Fraction(1), Fraction(1, 8))
    assert abs(_mp(lo) - J_EIGHTH_2D) <= J_EIGHTH_2D * mp.mpf("1e-14") and _mp(hi - lo) <= J_EIGHTH_2D * mp.mpf("1e-18")


def test_point_at_zero_is_the_closed_form():
    with working_precision(320):
        lo, hi = bok.point(5, Fraction(1, 10), Fraction(4, 9), Fraction(0))
    with mp.workdps(120):
        p, d2 = mp.mpf(1) / 10, mp.mpf(4) / 9
        ref = mp.log(mp.fsum(mp.binomial(5, k) * (1 - p) ** (5 - k) * p**k * mp.e ** (k * (k - 1) * d2 / 2) for k in range(6))) / 4
        assert _mp(lo) <= ref <= _mp(hi) and _mp(hi - lo) < mp.mpf("1e-80")


def test_key_is_the_maximum_of_the_quadratic_37():
    assert bok.key(Fraction(1), Fraction(3), Fraction(0), Fraction(1)) == 3
    # (1-t) + 3t + 2 t(1-t) (c = 2 with kappa = 4, width 1): maximum at t = 1: 3
    assert bok.key(Fraction(1), Fraction(3), Fraction(4), Fraction(1)) == 3
    # jl = jr = 0, c = 8: 8 t(1-t) peaks at t = 1/2: 2
    assert bok.key(Fraction(0), Fraction(0), Fraction(16), Fraction(1)) == 2


@pytest.mark.slow
def test_kappa_is_at_most_kappa2_and_bounds_J_second_derivative():
    """kappa <= kappa2 of (45), and |J''| (mpmath finite differences of (35)) at u = 1/4 is below kappa on [0, 1/4]."""
    with working_precision(320):
        kap = bok.kappa(8, Fraction(1, 100), Fraction(1), Fraction(1, 4))
    assert kap <= 2 * 8 * (4 * 64 + 40 + 4)
    with mp.workdps(40):
        h = Fraction(1, 1000)
        u = Fraction(1, 4)
        d2 = (_J_35(8, Fraction(1, 100), 2, u + h) - 2 * _J_35(8, Fraction(1, 100), 2, u) + _J_35(8, Fraction(1, 100), 2, u - h)) / _mp(h) ** 2
        assert abs(d2) <= _mp(kap)


@pytest.fixture(scope="module")
def certificates():
    from certify import api

    return {name: api.dpsgd_epsilon(sampling="fixed-size", adjacency="replace-one", **kw).certificate for name, kw in PARAMS.items()}


@pytest.fixture(scope="module")
def genuine(certificates):
    return {name: c.to_json() for name, c in certificates.items()}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PARAMS))
def test_genuine_accepted_by_both(genuine, name):
    doc = genuine[name]
    v = certify_kernel.check_document(copy.deepcopy(doc))
    assert v.status == 0, v.message
    assert certify_verdict(doc) == 0


@pytest.mark.slow
def test_certify_verify_kernel_reports_both(certificates, tmp_path):
    path = tmp_path / "bok.json"
    path.write_text(certificates[list(PARAMS)[0]].dumps())
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-m", "certify", "verify", "--kernel", str(path)], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "kernel: accept: dpsgd/renyi-bok" in out.stdout and "the kernel accepts too" in out.stdout


def _set_ball(doc, name, value: Fraction):
    """Quantity ``name`` set to the exact dyadic nearest ``value`` (radius 0) with its decimals (a careful forger)."""
    e = -200
    m = round(value * Fraction(2) ** -e)
    q = doc["quantities"][name]
    q["ball"] = {"mid": [str(m), e], "rad": ["0", 0]}
    v = Fraction(m) * Fraction(2) ** e
    q["lower"], q["upper"] = printed(v, up=False), printed(v, up=True)


def _forgeries(doc):
    q = doc["quantities"]
    j0 = Fraction(int(q["J(0)"]["ball"]["mid"][0])) * Fraction(2) ** q["J(0)"]["ball"]["mid"][1]
    out = {}
    d = copy.deepcopy(doc)
    _set_ball(d, "rho", j0 * Fraction(9, 10))
    out["rho lowered"] = d
    d = copy.deepcopy(doc)
    _set_ball(d, "rho", j0 * Fraction(3, 2))
    out["rho raised"] = d
    d = copy.deepcopy(doc)
    del d["witnesses"]["leaves"][1]
    out["leaf removed from the partition"] = d
    d = copy.deepcopy(doc)
    n = len(d["witnesses"]["leaves"]) - 1
    del d["witnesses"]["leaves"][n], d["quantities"][f"leaf[{n}]"]
    out["last leaf and its key removed"] = d
    d = copy.deepcopy(doc)
    _set_ball(d, "leaf[1]", j0 / 2)
    out["leaf bound lowered"] = d
    d = copy.deepcopy(doc)
    d["inputs"]["sampling_rate"] = "1/50"
    out["sampling rate raised, numbers kept"] = d
    return {k: reseal(v) for k, v in out.items()}


@pytest.mark.slow
def test_forgeries_refused_or_undecided(genuine):
    for gname, doc in genuine.items():
        for fname, forged in _forgeries(doc).items():
            v = certify_kernel.check_document(copy.deepcopy(forged))
            assert v.status in (3, 4, 5), (gname, fname, v.message)
            assert certify_verdict(forged) != 0, (gname, fname)


def test_a_removed_leaf_is_refused_before_any_work(genuine):
    forged = _forgeries(genuine[list(PARAMS)[0]])["leaf removed from the partition"]
    v = certify_kernel.check_document(forged)
    assert v.status == 4 and "partition" in v.message


def test_prop2a_certificates_are_decided():
    """Proposition 2 (a) skips the search: the kernel checks (19) and rho = J(0) (closed form) and accepts, as certify does;
    the same numbers at a rate where (19) fails (p = 1/1000: 1/1000 e^(3 (999/1000)/2) < 4/3) are refused by both."""
    from certify import api

    doc = api.dpsgd_epsilon(
        sampling="fixed-size", adjacency="replace-one", sampling_rate="1/10", noise_multiplier="1", steps=100, delta="1e-5", alpha="4"
    )
    doc = doc.certificate.to_json()
    assert doc["witnesses"]["method"] == "prop2a"
    assert certify_kernel.check_document(copy.deepcopy(doc)).status == 0 and certify_verdict(doc) == 0
    forged = copy.deepcopy(doc)
    forged["inputs"]["sampling_rate"] = "1/1000"
    forged["conclusions"][0]["statement"] = forged["conclusions"][0]["statement"].replace("p = 1/10,", "p = 1/1000,")
    v = certify_kernel.check_document(reseal(copy.deepcopy(forged)))
    assert v.status in (4, 5), v.message
    assert certify_verdict(reseal(forged)) != 0
    with working_precision(320):
        der = bok.derive(reseal(forged))
    assert der.values["prop2a_lhs"][1] < der.values["prop2a_rhs"][0] == Fraction(4, 3)  # (19) decided false


def _example():
    import json

    from certify.verify import spec_for

    return json.loads(spec_for("dpsgd/renyi-bok").example().dumps())


@pytest.mark.slow
def test_registered_example_accepted_by_both():
    """The kind's registered example records b = 6 of n = 600: p = b/n is re-checked exactly."""
    doc = _example()
    assert certify_kernel.check_document(copy.deepcopy(doc)).status == 0 and certify_verdict(doc) == 0


def test_batch_size_not_matching_the_sampling_rate_is_refused():
    forged = _example()
    forged["inputs"]["batch_size"] = "7"
    v = certify_kernel.check_document(reseal(forged))
    assert v.status == 4 and "batch_size/dataset_size" in v.message
    assert certify_verdict(forged) != 0


@pytest.mark.slow  # about 3 CPU s (two derivations of a bok certificate)
def test_a_warm_memo_gives_the_verdict_of_a_cold_one(genuine):
    """The kernel's memo of derivations is keyed by the recorded leaf keys too (search_gap, B.2, is arithmetic on them):
    a leaf key raised after a genuine check makes search_met_gamma false, as on a cold start (it was accepted warm)."""
    doc = genuine[list(PARAMS)[0]]
    assert certify_kernel.check_document(copy.deepcopy(doc)).status == 0
    forged = copy.deepcopy(doc)
    _set_ball(forged, "leaf[0]", Fraction(1, 10))
    m, e = forged["quantities"]["leaf[0]"]["ball"]["mid"]  # the witness's key text follows the ball (a careful forger)
    forged["witnesses"]["leaves"][0][2] = printed(Fraction(int(m)) * Fraction(2) ** e, up=True, digits=12)
    forged = reseal(forged)
    warm = certify_kernel.check_document(copy.deepcopy(forged))
    certify_kernel._MEMO.clear()
    cold = certify_kernel.check_document(copy.deepcopy(forged))
    assert warm == cold and cold.status == 4 and "search_gap" in cold.message, (warm, cold)


@pytest.mark.slow  # about 2 CPU s: the kernel's and certify's derivations of the example
def test_a_rule_certify_would_not_choose_is_a_designed_disagreement():
    """Documented (docs/kernel.md, renyi-bok, "Designed disagreement"): the kernel reads witnesses.points for their layout (one
    well-formed rule per leaf end and u*) but bounds J by its own quadrature, so a well-formed rule certify would not
    choose (here the step halved, still on the window's grid) changes no truth: the kernel accepts, certify (which
    re-evaluates with the recorded rule and finds another leaf key) refuses. A rule off its grid is refused by both."""
    doc = _example()
    point = doc["witnesses"]["points"][0]
    finer = copy.deepcopy(doc)
    finer["witnesses"]["points"][0]["h"] = str(Fraction(point["h"]) / 2)
    off_grid = copy.deepcopy(doc)
    off_grid["witnesses"]["points"][0]["h"] = "1/2"  # a = -121/16 is not a multiple of 1/2
    assert (certify_kernel.check_document(reseal(copy.deepcopy(finer))).status, certify_verdict(reseal(finer))) == (0, 4)
    assert (certify_kernel.check_document(reseal(copy.deepcopy(off_grid))).status, certify_verdict(reseal(off_grid))) == (4, 4)
