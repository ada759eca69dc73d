"""The certified PLD accountant of dp_accounting's events (kind ``events/pld``, ``certify account --accountant pld``,
``certify.accounting.PLDAccountant``) against independent references.

References written here at 50 digits with mpmath, apart from the code under test: the analytic Gaussian (Balle-Wang
2018) and its T-fold (a Gaussian with mu sqrt(T)); Laplace's privacy profile 1 - e^((eps - eps0)/2); exact T-fold
compositions of finite-output pairs by enumeration (randomized response, the Kairouz-Oh-Viswanath pair of an
(eps, delta) mechanism, the discrete Laplace shift); the Poisson-subsampled Gaussian by quadrature of
(p(x) - gamma q(x))_+ at T = 1 and 2. Every certified bracket must contain its reference (soundness) and be narrow
(within 1% of the exact epsilon). dp_accounting's own test expectations (google/differential-privacy,
python/dp_accounting/pld/pld_privacy_accountant_test.py and privacy_loss_mechanism_test.py; test names cited at each
case) must be consistent with the brackets.
"""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction

import mpmath as mp
import pytest

from certify import cli, verify
from certify.balls import InputError, ball_endpoints
from certify.certificate import digest_of
from certify.events.ledger import ledger_of
from certify.events.pld_certificates import certify_events_pld
from fast_subset import fast_subset
from pld_event_helpers import delta_bracket, eps_bracket, gauss, laplace, poisson_gauss, ref_discrete_delta, selfc


mp.mp.dps = MPMATH_DPS = 50  # this module's precision (tests/conftest.py sets it per test)


# ------------------------------------------------------------------------------------------------
# references (mpmath, 50 digits)
# ------------------------------------------------------------------------------------------------
def _Phi(x):
    return mp.ncdf(x)


def ref_gaussian_delta(mu, eps):
    """Balle-Wang 2018 Thm 8: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) for N(mu,1) vs N(0,1)."""
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return _Phi(-eps / mu + mu / 2) - mp.e**eps * _Phi(-eps / mu - mu / 2)


def ref_eps(delta_of, delta, lo=0, hi=60):
    """eps with delta_of(eps) = delta, by bisection at 50 digits (delta_of non-increasing)."""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    for _ in range(200):
        mid = (lo + hi) / 2
        if delta_of(mid) > delta:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _frac(text: str) -> mp.mpf:
    f = Fraction(text)
    return mp.mpf(f.numerator) / f.denominator


def assert_in(lo, ref, hi, rel_width=None):
    assert lo <= ref <= hi, (lo, ref, hi)
    if rel_width is not None:
        assert hi - lo <= rel_width * abs(ref), (lo, ref, hi)


# ------------------------------------------------------------------------------------------------
# Gaussian: closed form, T-fold = Gaussian with mu sqrt(T), both relations
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("relation,k", [("add-remove", 1), ("replace-one", 2)])
def test_gaussian_T_fold_is_the_gaussian_with_mu_sqrt_T(relation, k):
    z, T = 4, 16  # mu = k/z one step; T-fold mu sqrt(T) = 4k/4 = k
    mu = mp.mpf(k) / z * mp.sqrt(T)
    (lo, hi), _ = delta_bracket(selfc(gauss(str(z)), T), relation, "1", "1e-3")
    assert_in(lo, ref_gaussian_delta(mu, 1), hi, rel_width=1e-3)
    (lo, hi), _ = eps_bracket(selfc(gauss(str(z)), T), relation, "1e-5", "1e-3")
    assert_in(lo, ref_eps(lambda e: ref_gaussian_delta(mu, e), mp.mpf("1e-5")), hi, rel_width=0.01)


@pytest.mark.slow
def test_gaussian_dp_accounting_expectations():
    """privacy_loss_mechanism_test.py, GaussianPrivacyLossTest.test_gaussian_get_delta_for_epsilon (sampling_prob 1:
    (sd 1, sensitivity 1, eps 1) -> 0.12693674, (1, 3, 1) -> 0.78760074, (1, 1, 2) -> 0.02092364; assertAlmostEqual,
    7 places) and pld_privacy_accountant_test.py, test_gaussian_basic (3 x Gaussian(sqrt 3) at eps 1: 0.126936 +- 1e-3)."""
    for z, eps, want in (("1", "1", "0.12693674"), ("1/3", "1", "0.78760074"), ("1", "2", "0.02092364")):
        (lo, hi), _ = delta_bracket(gauss(z), "add-remove", eps, "1e-3")
        assert lo - mp.mpf("1e-7") <= mp.mpf(want) <= hi + mp.mpf("1e-7"), (z, eps, lo, hi)
        assert_in(lo, ref_gaussian_delta(1 / _frac(z), eps), hi, rel_width=1e-3)
    # 3 x Gaussian(sqrt 3) = Gaussian(1); the float sqrt(3) is taken at its exact binary value
    (lo, hi), cert = delta_bracket(selfc(gauss(math.sqrt(3)), 3), "add-remove", "1", "1e-3")
    assert abs(lo - mp.mpf("0.126936")) <= 1e-3 and abs(hi - mp.mpf("0.126936")) <= 1e-3
    assert any(k.endswith(".note") for k in cert.inputs)  # the float's exact value is noted


# ------------------------------------------------------------------------------------------------
# Laplace: the profile 1 - e^((eps - eps0)/2) on [-eps0, eps0]
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "b,eps,want",
    [("1", "0", "0.39346934"), ("1/2", "1/2", "0.52763345"), ("1", "1", "0"), ("1/2", "2", "0")],
)
def test_laplace_profile_and_dp_accounting_expectations(b, eps, want):
    """privacy_loss_mechanism_test.py, LaplacePrivacyLossTest.test_laplace_get_delta_for_epsilon (parameter,
    sensitivity) = (1, 1) and (2, 4) i.e. b = parameter/sensitivity, sampling_prob 1."""
    eps0 = 1 / _frac(b)
    ref = max(mp.mpf(0), 1 - mp.e ** ((_frac(eps) - eps0) / 2))
    (lo, hi), _ = delta_bracket(laplace(b), "add-remove", eps, "1e-3")
    assert_in(lo, ref, hi)
    assert hi - lo <= 2e-3 * max(ref, mp.mpf("1e-3"))
    assert lo - mp.mpf("1e-7") <= mp.mpf(want) <= hi + mp.mpf("1e-7")


def test_laplace_basic_of_dp_accounting():
    """pld_privacy_accountant_test.py, test_laplace_basic: 3 x Laplace(1) + 2 x Laplace(2) is (4, 0)-DP: delta(4) ~ 0
    (their tolerance 1e-6) and epsilon at a tiny delta ~ 4."""
    ev = {"class_name": "ComposedDpEvent", "events": [selfc(laplace("1"), 3), selfc(laplace("2"), 2)]}
    (lo, hi), _ = delta_bracket(ev, "add-remove", "4", "1e-3")
    assert lo == 0 and hi <= 1e-6
    (lo, hi), _ = eps_bracket(ev, "add-remove", "1e-9", "1e-3")
    assert lo <= 4 <= hi + mp.mpf("1e-6") and hi <= 4 + mp.mpf("1e-3")


# ------------------------------------------------------------------------------------------------
# finite-output pairs: randomized response, KOV, discrete Laplace (exact enumeration)
# ------------------------------------------------------------------------------------------------
def test_randomized_response_T_fold():
    p, k, T = mp.mpf(1) / 2, 4, 5
    a, b = 1 - p + p / k, p / k
    L = mp.log(a / b)
    atoms = [(L, a), (-L, b), (mp.mpf(0), (k - 2) * b)]
    ev = selfc({"class_name": "RandomizedResponseDpEvent", "noise_parameter": "1/2", "num_buckets": 4}, T)
    (lo, hi), _ = delta_bracket(ev, "replace-one", "2", "1e-3")
    assert_in(lo, ref_discrete_delta(atoms, T, 2), hi, rel_width=0.01)
    (lo, hi), _ = eps_bracket(ev, "replace-one", "1e-3", "1e-3")
    assert_in(lo, ref_eps(lambda e: ref_discrete_delta(atoms, T, e), mp.mpf("1e-3"), 0, 20), hi, rel_width=0.01)


def test_randomized_response_is_refused_under_replace_special():
    """dp_accounting's PLDAccountant takes REPLACE_SPECIAL for randomized response; certify does not certify that pair."""
    rr = {"class_name": "RandomizedResponseDpEvent", "noise_parameter": "1/2", "num_buckets": 2}
    with pytest.raises(InputError, match="RandomizedResponseDpEvent"):
        certify_events_pld(ledger_of(rr, "replace-special"), delta="1e-6", grid="1e-2")


def _kov_atoms(eps):
    e = mp.e ** mp.mpf(eps)
    return [(mp.mpf(eps), e / (1 + e)), (-mp.mpf(eps), 1 / (1 + e))]


def test_kov_optimal_composition_of_pure_mechanisms():
    """Kairouz-Oh-Viswanath (2015) Thm 3.3: the k-fold composition of (eps, 0) mechanisms is exactly the k-fold of
    the binary randomized response pair: delta(eps') = sum_i C(k, i) (e^(eps(k-i)) - e^(eps') e^(eps i)) / (1+e^eps)^k
    over (k - 2i) eps > eps' -- the enumeration below."""
    k = 10
    ev = selfc({"class_name": "EpsilonDeltaDpEvent", "epsilon": "1/2", "delta": "0"}, k)
    atoms = _kov_atoms("0.5")
    (lo, hi), _ = delta_bracket(ev, "add-remove", "2", "1e-3")
    assert_in(lo, ref_discrete_delta(atoms, k, 2), hi, rel_width=0.01)
    (lo, hi), _ = eps_bracket(ev, "add-remove", "1e-4", "1e-3")
    assert_in(lo, ref_eps(lambda e: ref_discrete_delta(atoms, k, e), mp.mpf("1e-4"), 0, 6), hi, rel_width=0.01)


def test_kov_with_delta_is_an_upper_bound_containing_the_optimal_composition():
    """KOV Thm 3.3 with delta > 0: delta_k(eps') = 1 - (1 - delta)^k + (1 - delta)^k delta_RR,k(eps')."""
    k, d = 5, mp.mpf("1e-4")
    ev = selfc({"class_name": "EpsilonDeltaDpEvent", "epsilon": "1/2", "delta": "1e-4"}, k)
    ref = 1 - (1 - d) ** k + (1 - d) ** k * ref_discrete_delta(_kov_atoms("0.5"), k, 1)
    (lo, hi), _ = delta_bracket(ev, "replace-one", "1", "1e-3")
    assert lo <= ref <= hi and hi <= ref * (1 + mp.mpf("0.01"))


def test_discrete_laplace_T_fold():
    t, D, T = mp.mpf(1) / 2, 2, 3
    r = mp.e ** (-t)
    c = (1 - r) / (1 + r)
    atoms = [(t * D, 1 / (1 + r)), (-t * D, r**D / (1 + r))] + [(t * (D - 2 * x), c * r**x) for x in range(1, D)]
    ev = selfc({"class_name": "DiscreteLaplaceDpEvent", "noise_parameter": "1/2", "sensitivity": 2}, T)
    (lo, hi), _ = delta_bracket(ev, "add-remove", "1", "1e-3")
    assert_in(lo, ref_discrete_delta(atoms, T, 1), hi, rel_width=0.01)


# ------------------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian: quadrature at T = 1, 2 (both directions)
# ------------------------------------------------------------------------------------------------
def _root(f, a, b):
    """The root of f in [a, b] (f(a), f(b) of opposite signs) by bisection to the working precision."""
    fa = f(a) > 0
    for _ in range(mp.mp.prec + 10):
        m = (a + b) / 2
        if (f(m) > 0) == fa:
            a = m
        else:
            b = m
    return (a + b) / 2


def _hockey(p, q, g, lo=-40, hi=40):
    """H_g(P || Q) = int (p(x) - g q(x))_+ dx for a monotone likelihood ratio: the one crossing of p - g q found by a
    bracketing root finder, the integral split there."""
    f = lambda x: p(x) - g * q(x)  # noqa: E731
    a, b = mp.mpf(lo), mp.mpf(hi)
    if (f(a) > 0) == (f(b) > 0):
        return mp.quad(lambda x: max(f(x), 0), [a, b])
    c = _root(f, a, b)
    return mp.quad(lambda x: max(f(x), 0), [a, c]) + mp.quad(lambda x: max(f(x), 0), [c, b])


def _mix(q, D):
    phi = mp.npdf
    return (lambda x: (1 - q) * phi(x) + q * phi(x - D)), phi


def _mixture_curve(q, D, gamma, direction):
    """H_gamma of one step in closed form (the threshold sets of the monotone likelihood ratio): remove (mixture over
    N(0,1)): 1 - gamma for gamma <= 1 - q, else q Phibar(x1 - D) - (gamma - 1 + q) Phibar(x1) with
    x1 = (log((gamma - 1 + q)/q) + D^2/2)/D; add (reversed): 0 for gamma (1 - q) >= 1, else
    (1 - gamma (1-q)) Phi(x2) - gamma q Phi(x2 - D) with x2 = (log((1 - gamma(1-q))/(gamma q)) + D^2/2)/D.
    Checked against the direct integral of (p - gamma q)_+ in the one-step test."""
    if direction == "remove":
        if gamma <= 1 - q:
            return 1 - gamma
        x1 = (mp.log((gamma - 1 + q) / q) + D**2 / 2) / D
        return q * _Phi(D - x1) - (gamma - 1 + q) * _Phi(-x1)
    if gamma * (1 - q) >= 1:
        return mp.mpf(0)
    x2 = (mp.log((1 - gamma * (1 - q)) / (gamma * q)) + D**2 / 2) / D
    return (1 - gamma * (1 - q)) * _Phi(x2) - gamma * q * _Phi(x2 - D)


def ref_poisson_delta(q, z, eps, T):
    """max over the two directions of H_(e^eps) of the T-fold pair, T in {1, 2}. T = 1: the direct integral of
    (p - gamma q)_+. T = 2: the product identity H_g(A^2||B^2) = int a(y) H_(g b(y)/a(y))(A||B) dy with the closed
    one-step curve, the outer integral split where g b/a crosses 1 - q and 1/(1 - q) (the inner curve's kinks)."""
    q, D, g = mp.mpf(q), 1 / mp.mpf(z), mp.e ** mp.mpf(eps)
    P, Q = _mix(q, D)
    out = []
    for (A, B), direction in (((P, Q), "remove"), ((Q, P), "add")):
        if T == 1:
            out.append(_hockey(A, B, g))
            continue
        cuts = []
        for level in (1 - q, 1 / (1 - q)):
            h = lambda y: mp.log(g * B(y) / A(y)) - mp.log(level)  # noqa: E731
            if (h(mp.mpf(-14)) > 0) != (h(mp.mpf(14)) > 0):
                cuts.append(_root(h, mp.mpf(-14), mp.mpf(14)))
        pts = sorted([mp.mpf(-14), mp.mpf(14)] + cuts)
        out.append(mp.quad(lambda y: A(y) * _mixture_curve(q, D, g * B(y) / A(y), direction), pts))
    return max(out)


def test_poisson_subsampled_gaussian_one_step_by_quadrature():
    (lo, hi), _ = delta_bracket(poisson_gauss("1/5", "1/2"), "add-remove", "1", "1e-3")
    assert_in(lo, ref_poisson_delta("0.2", "0.5", 1, 1), hi, rel_width=0.005)
    q, D = mp.mpf("0.2"), mp.mpf(2)  # the closed one-step curve used at T = 2 agrees with the direct integral
    P, Q = _mix(q, D)
    for gamma in (mp.mpf("0.5"), mp.mpf(1), mp.mpf(3)):
        assert abs(_mixture_curve(q, D, gamma, "remove") - _hockey(P, Q, gamma)) < mp.mpf("1e-40")
        assert abs(_mixture_curve(q, D, gamma, "add") - _hockey(Q, P, gamma)) < mp.mpf("1e-40")


@pytest.mark.slow
def test_poisson_subsampled_gaussian_two_steps_by_quadrature():
    (lo, hi), _ = delta_bracket(selfc(poisson_gauss("1/5", "1"), 2), "add-remove", "1/2", "1e-3")
    with mp.workdps(30):  # a nested quadrature: 30 digits are plenty against a bracket of relative width 1e-5
        ref = ref_poisson_delta("0.2", "1", "0.5", 2)
    assert_in(lo, ref, hi, rel_width=0.01)


POISSON_CASES = [("4/5", "1", "1", "0.0816951786585355"), ("7/10", "1/3", "1", "0.5356298793262404"), ("3/10", "1", "2", "0.0003341102928869332")]


@pytest.mark.parametrize("q,z,eps,want", fast_subset(POISSON_CASES, keep=[POISSON_CASES[0]]))
def test_poisson_dp_accounting_mechanism_expectations(q, z, eps, want):
    """privacy_loss_mechanism_test.py, GaussianPrivacyLossTest.test_gaussian_get_delta_for_epsilon (sampling_prob < 1;
    the larger of their REMOVE and ADD values: the worst direction, which our bracket bounds)."""
    (lo, hi), _ = delta_bracket(poisson_gauss(q, z), "add-remove", eps, "1e-2")  # a coarse grid: containment is what is asked
    assert lo - mp.mpf("1e-7") <= mp.mpf(want) <= hi + mp.mpf("1e-7"), (lo, want, hi)
    assert hi - lo <= 0.01 * mp.mpf(want)


@pytest.mark.slow
def test_poisson_dp_accounting_accountant_expectation():
    """pld_privacy_accountant_test.py, test_poisson_subsampled_gaussian: 3 x PoissonSampled(0.2, Gaussian(0.5)) at
    eps 1: delta 0.15594 (their tolerance 1e-3)."""
    (lo, hi), _ = delta_bracket(selfc(poisson_gauss("1/5", "1/2"), 3), "add-remove", "1", "1e-3")
    assert lo - mp.mpf("1e-3") <= mp.mpf("0.15594") <= hi + mp.mpf("1e-3") and hi - lo <= 1e-3


# ------------------------------------------------------------------------------------------------
# heterogeneous ledgers, dp_accounting at the same grid, refusals
# ------------------------------------------------------------------------------------------------
HETERO = {
    "class_name": "ComposedDpEvent",
    "events": [selfc(gauss("4"), 10), selfc(laplace("10"), 5), selfc(poisson_gauss("1/20", "1"), 20), {"class_name": "NoOpDpEvent"}],
}


@pytest.mark.slow
def test_heterogeneous_ledger_matches_dp_accounting_at_the_same_grid():
    """dp_accounting's PLDAccountant (pessimistic, connect-the-dots, floats) at the same grid: an upper estimate of the
    exact value, so at least our certified lower bound, and close to our upper bound."""
    dpa = pytest.importorskip("dp_accounting")
    from certify.events.parse import as_json  # noqa: F401  (the JSON form is what both read)

    E = dpa.dp_event
    ev = E.ComposedDpEvent(
        [
            E.SelfComposedDpEvent(E.GaussianDpEvent(4.0), 10),
            E.SelfComposedDpEvent(E.LaplaceDpEvent(10.0), 5),
            E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.05, E.GaussianDpEvent(1.0)), 20),
        ]
    )
    acc = dpa.pld.PLDAccountant(value_discretization_interval=1e-3)
    acc.compose(ev)
    theirs = acc.get_epsilon(1e-5)
    (lo, hi), _ = eps_bracket(HETERO, "add-remove", "1e-5", "1e-3")
    assert lo <= theirs <= hi + 1e-3, (lo, theirs, hi)
    assert hi - lo <= 0.01 * hi


@pytest.mark.parametrize(
    "event,relation,words",
    [
        ({"class_name": "ZCDpEvent", "rho": "1", "xi": "0"}, "add-remove", "ZCDpEvent"),
        ({"class_name": "DiscreteGaussianDpEvent", "sigma": "2", "sensitivity": 1, "dimension": None}, "replace-one", "DiscreteGaussianDpEvent"),
        (laplace("1"), "replace-one", "LaplaceDpEvent"),
        ({"class_name": "EpsilonDeltaDpEvent", "epsilon": "1", "delta": "0"}, "replace-special", "EpsilonDeltaDpEvent"),
    ],
)
def test_unsupported_events_are_refused_naming_the_class(event, relation, words):
    with pytest.raises(InputError, match=words):
        certify_events_pld(ledger_of(event, relation), delta="1e-6", grid="1e-2")


# ------------------------------------------------------------------------------------------------
# the certificate: verify at 1x/2x/4x, forgeries, the command line, the accountant interface
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cert_doc():
    cert = certify_events_pld(ledger_of(HETERO, "add-remove"), delta="1e-6", grid="1e-2")
    return json.loads(cert.dumps())


def test_verifies_at_1x_2x_4x(cert_doc):
    for factor in (1, 2, 4):
        rep = verify.verify_document(copy.deepcopy(cert_doc), factor * cert_doc["precision"])
        assert rep.exit_code == 0 and rep.ok, (factor, rep.problems)


def test_forged_epsilon_is_refused(cert_doc):
    """A forger lowers the recorded epsilon_upper to the certified lower bound (where the exact delta exceeds the
    target), re-derives nothing, re-seals: the checker re-reads delta there and refuses."""
    doc = copy.deepcopy(cert_doc)
    doc["witnesses"]["epsilon_upper"] = doc["witnesses"]["epsilon_lower"]
    doc["digest"] = digest_of(doc)
    rep = verify.verify_document(doc, doc["precision"])
    assert rep.exit_code != 0 and not rep.ok


def test_forged_delta_bound_is_refused():
    cert = certify_events_pld(ledger_of(gauss("2"), "add-remove"), epsilon="1", grid="1e-2")
    doc = json.loads(cert.dumps())
    doc["witnesses"]["bound"] = doc["witnesses"]["lower"]  # claims delta <= the certified LOWER bound
    doc["digest"] = digest_of(doc)
    rep = verify.verify_document(doc, doc["precision"])
    assert rep.exit_code != 0 and not rep.ok


def _resealed_and_refused(doc, needle):
    doc["digest"] = digest_of(doc)
    rep = verify.verify_document(doc, doc["precision"])
    assert rep.exit_code == 4 and not rep.ok and any(needle in p for p in rep.problems), (rep.exit_code, rep.problems)


def test_a_wider_true_bracket_is_refused(cert_doc):
    """A bracket the balls confirm (a larger epsilon_upper, a smaller epsilon_lower: both claims stay true) but no
    search leaves is a file certify never writes: the evaluator refuses it, so no re-derived file can carry it
    (before, the evaluator re-derived every quantity from it and verify accepted the wider bracket)."""
    from certify.balls import InputError
    from certify.events.pld_certificates import evaluate_events_pld

    up = str(2 * Fraction(cert_doc["witnesses"]["epsilon_upper"]))
    for key, value in (("epsilon_upper", up), ("epsilon_lower", "0")):
        w = copy.deepcopy(cert_doc["witnesses"]) | {key: value}
        with pytest.raises(InputError, match=key):
            evaluate_events_pld(copy.deepcopy(cert_doc["inputs"]), w)
    w = copy.deepcopy(cert_doc["witnesses"]) | {"lower_directions": ["add"] if cert_doc["witnesses"]["lower_directions"] != ["add"] else ["remove"]}
    with pytest.raises(InputError):
        evaluate_events_pld(copy.deepcopy(cert_doc["inputs"]), w)


def test_a_looser_true_delta_bound_is_refused():
    """At a target epsilon the recorded decimals are the re-derived bracket's: a looser (still true) bound is refused."""
    doc = json.loads(certify_events_pld(ledger_of(gauss("2"), "add-remove"), epsilon="1", grid="1e-2").dumps())
    doc["witnesses"]["bound"] = "1/2"
    _resealed_and_refused(doc, "bound")


def test_account_command_pld(tmp_path, capsys):
    path = tmp_path / "event.json"
    path.write_text(json.dumps(HETERO))
    out = tmp_path / "c.json"
    assert cli.main(["account", str(path), "--accountant", "pld", "--delta", "1e-6", "--grid", "1e-2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "epsilon <=" in text and "epsilon >=" in text and "events/pld" in text
    assert cli.main(["verify", str(out)]) == 0
    assert cli.main(["account", str(path), "--accountant", "pld", "--order", "2"]) == 2
    zc = tmp_path / "z.json"
    zc.write_text(json.dumps({"class_name": "ZCDpEvent", "rho": "1", "xi": "0"}))
    assert cli.main(["account", str(zc), "--accountant", "pld", "--delta", "1e-6"]) == 2
    assert "ZCDpEvent" in capsys.readouterr().err


@pytest.mark.slow
def test_pld_accountant_interface():
    dpa = pytest.importorskip("dp_accounting")
    from certify.accounting import PLDAccountant

    E = dpa.dp_event
    acc = PLDAccountant(value_discretization_interval=1e-3)
    assert acc.supports(E.GaussianDpEvent(1.0)) and not acc.supports(E.ZCDpEvent(1.0, 0.0))
    acc.compose(E.PoissonSampledDpEvent(0.2, E.GaussianDpEvent(0.5)), 3)
    eps = acc.get_epsilon(1e-3)
    lo, hi = ball_endpoints(acc.certificate.quantities["epsilon_upper"].value)
    assert acc.certificate.kind == "events/pld" and Fraction(eps) >= Fraction(int(hi.p), int(hi.q))
    d = acc.get_delta(1.0)
    assert abs(d - 0.15594) <= 1e-3  # pld_privacy_accountant_test.py, test_poisson_subsampled_gaussian
    empty = PLDAccountant()
    empty.compose(E.PoissonSampledDpEvent(0.0, E.GaussianDpEvent(1.0)))
    assert empty.get_delta(0.0) == 0 and empty.get_epsilon(0.0) == 0  # test_poisson_subsampling_with_zero_probability


# ------------------------------------------------------------------------------------------------
# proof obligations of the curves (E-pld-*): proved, and a wrong claim refuted
# ------------------------------------------------------------------------------------------------
def _obligation(oid):
    from certify.proofs import obligations

    return next(ob for ob in obligations("events") if ob.id == oid)


@pytest.mark.slow
@pytest.mark.parametrize("oid", ["E-pld-gaussian", "E-pld-laplace", "E-pld-discrete-laplace", "E-pld-kov"])
def test_pld_obligations_are_proved(oid):
    from certify.proofs.core import PROVED

    out = _obligation(oid).run()
    assert out.verdict == PROVED, out.detail


@pytest.mark.slow
def test_pld_obligations_refute_wrong_claims():
    import sympy as sp

    from certify.proofs.core import PROVED

    r = sp.Symbol("r", positive=True)
    assert _obligation("E-pld-discrete-laplace").run(claimed=1 / (1 - r)).verdict != PROVED
    e, d = sp.symbols("epsilon delta", positive=True)
    ep = sp.Symbol("epsilon_prime", nonnegative=True)
    assert _obligation("E-pld-kov").run(claimed=d + (1 - d) * (sp.exp(e) - sp.exp(ep)) / (2 + sp.exp(e))).verdict != PROVED
    b, l = sp.Symbol("b", positive=True), sp.Symbol("l", real=True)
    assert _obligation("E-pld-laplace").run(claimed=1 - sp.exp(l) * sp.exp(-1 / (2 * b))).verdict != PROVED


def test_a_count_too_large_for_the_grid_names_the_entry_not_dpsgd_s_steps(tmp_path, capsys):
    """The width guard of the composition names dpsgd's --steps; for a ledger the refusal names the event entry and its
    count (``certify account`` has no --steps), at once and with exit 2."""
    ev = selfc(laplace("1000"), 10**15)
    with pytest.raises(InputError, match=r"^event: entry 0: the 1000000000000000-fold composition .* smaller count$"):
        certify_events_pld(ledger_of(ev, "add-remove"), delta="1e-6", grid="1e-3")
    path = tmp_path / "event.json"
    path.write_text(json.dumps(ev))
    assert cli.main(["account", str(path), "--accountant", "pld", "--delta", "1e-6", "--grid", "1e-3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error: event: entry 0:") and "--steps" not in err
