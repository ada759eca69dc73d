"""MixtureOfGaussiansDpEvent by the certified PLD accountant (``certify account --accountant pld``): the curve of
:class:`certify.events.pld_pairs.GaussianMixtureCurve` (both directions), the accountant's bracket, the certificate,
bad inputs, and TruncatedSubsampledGaussianDpEvent (now certified).

References written here with mpmath (30-50 digits), apart from the code under test: the one-step hockey-stick
divergence int (p(x) - gamma q(x))_+ dx by quadrature split at the crossing (found by mpmath's root finder), and the
two-step delta as E_(x ~ P)[H_(gamma e^(-L(x)))] by an outer quadrature of that one-step curve. dp_accounting's own
test expectations are cited by file and test name (dp_accounting 0.6.0, python/dp_accounting/pld/).
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import mpmath as mp
import pytest

from certify import cli, verify
from certify.balls import InputError, arb, ball_endpoints, fmpq, workprec
from certify.certificate import digest_of
from certify.events.ledger import ledger_of
from certify.events.pld_certificates import certify_events_pld
from certify.events.pld_pairs import GaussianMixtureCurve, pair_of
from certify.pld.pairs import MixtureCurve
from pld_event_helpers import selfc


mp.mp.dps = MPMATH_DPS = 30  # this module's precision (tests/conftest.py sets it per test)


def mog(sigma, c, p):
    return {"class_name": "MixtureOfGaussiansDpEvent", "standard_deviation": sigma, "sensitivities": c, "sampling_probs": p}


#: dp_accounting's mixture_gaussian_*_1 and *_2 (privacy_loss_mechanism_test.py) and a user-level case
A = (1, [0, 1, 2], ["1/5", "3/5", "1/5"])
B = (1, [1, 2], ["1/5", "4/5"])
C = (2, [0, 1, 2], ["81/100", "18/100", "1/100"])


# ------------------------------------------------------------------------------------------------
# mpmath references
# ------------------------------------------------------------------------------------------------
def _mpq(x):
    if isinstance(x, fmpq):
        return mp.mpf(int(x.p)) / int(x.q)
    f = Fraction(x)
    return mp.mpf(f.numerator) / f.denominator


def _densities(sigma, c, p, direction):
    """(p(x), q(x)) of the ordered pair: remove P = sum p_i N(c_i, sigma^2), Q = N(0, sigma^2); add the reverse."""
    s = _mpq(sigma)
    cs, ps = [_mpq(x) for x in c], [_mpq(x) for x in p]

    def n(x, m):
        return mp.npdf(x, m, s)

    def mix(x):
        return mp.fsum(pi * n(x, ci) for ci, pi in zip(cs, ps))

    if direction == "remove":
        return mix, lambda x: n(x, 0)
    return (lambda x: n(x, 0)), mix


def ref_hockey(sigma, c, p, direction, gamma):
    """int (p - gamma q)_+ by quadrature: the crossing p = gamma q found by findroot on log p - log gamma q (one
    crossing: the ratio is monotone), the integral taken on the side where p > gamma q."""
    P, Q = _densities(sigma, c, p, direction)
    g = mp.mpf(gamma)
    s = _mpq(sigma)
    lo, hi = -40 * s, 40 * s + max(_mpq(x) for x in c)

    def diff(x):
        return mp.log(P(x)) - mp.log(g * Q(x))

    a, b = lo, hi
    if diff(a) * diff(b) > 0:  # no crossing: p > gamma q everywhere or nowhere
        return max(mp.quad(lambda x: P(x) - g * Q(x), [lo, 0, hi]), mp.mpf(0))
    for _ in range(200):  # bisection to a bracket, then the secant-free refinement of findroot
        m = (a + b) / 2
        if (diff(m) > 0) == (diff(a) > 0):
            a = m
        else:
            b = m
        if b - a < mp.mpf(10) ** -8:
            break
    x0 = mp.findroot(diff, (a, b), solver="anderson")
    if diff(x0 + 1) > 0:  # p > gamma q to the right of the crossing
        return mp.quad(lambda x: P(x) - g * Q(x), [x0, x0 + 5, hi])
    return mp.quad(lambda x: P(x) - g * Q(x), [lo, x0 - 5, x0])


def ref_delta(sigma, c, p, eps, directions=("remove", "add")):
    return max(ref_hockey(sigma, c, p, d, mp.e ** mp.mpf(eps)) for d in directions)


def ref_curve_closed(sigma, c, p, direction, gamma):
    """The one-step curve by Neyman-Pearson in mpmath (checked against :func:`ref_hockey` in the test below): the
    crossing x* of the likelihood ratio with gamma (findroot), then P(A) - gamma Q(A) on the half-line A."""
    s, g = _mpq(sigma), mp.mpf(gamma)
    cs, ps = [_mpq(x) / s for x in c], [_mpq(x) for x in p]
    p0 = mp.fsum(pi for ci, pi in zip(cs, ps) if ci == 0)

    def ratio(x):  # M(x) / N(0, 1)(x) in standardised units
        return mp.fsum(pi * mp.e ** (ci * x - ci**2 / 2) for ci, pi in zip(cs, ps))

    def Mbar(x):
        return mp.fsum(pi * mp.ncdf(ci - x) for ci, pi in zip(cs, ps))

    def crossing(level):  # ratio(x) = level: bisection to 1e-6, then Newton on log ratio (increasing, convex)
        a, b = mp.mpf(-60), mp.mpf(60)
        for _ in range(28):
            m = (a + b) / 2
            a, b = (m, b) if ratio(m) < level else (a, m)
        x = (a + b) / 2
        for _ in range(8):
            r = ratio(x)
            dr = mp.fsum(pi * ci * mp.e ** (ci * x - ci**2 / 2) for ci, pi in zip(cs, ps))
            x -= (mp.log(r) - mp.log(level)) * r / dr
        return x

    if direction == "remove":
        if g <= p0:
            return 1 - g
        x = crossing(g)
        return Mbar(x) - g * mp.ncdf(-x)
    if g == 0:
        return mp.mpf(1)
    if g * p0 >= 1:
        return mp.mpf(0)
    x = crossing(1 / g)
    return mp.ncdf(x) - g * (1 - Mbar(x))


def ref_two_steps(sigma, c, p, direction, eps):
    """delta of the 2-fold product at eps: E_(x ~ P)[H_(e^eps e^(-L(x)))(P || Q)], L = log(p/q) (Zhu-Dong-Wang 2022's
    product identity), by quadrature of :func:`ref_curve_closed`."""
    P, Q = _densities(sigma, c, p, direction)
    g = mp.e ** mp.mpf(eps)
    s = _mpq(sigma)
    pts = [-12 * s, -4 * s, -1, 0, 1, 4 * s, 12 * s + 2]
    with mp.workdps(20):
        return mp.quad(lambda x: P(x) * ref_curve_closed(sigma, c, p, direction, g * Q(x) / P(x)), pts)


@pytest.mark.slow
def test_the_two_references_agree():
    for case in (A, B):
        for d in ("remove", "add"):
            for gamma in ("1/2", "1", "2.718281828", "7"):
                g = _mpq(gamma)
                assert abs(ref_curve_closed(*case, d, g) - ref_hockey(*case, d, g)) < mp.mpf(10) ** -20


# ------------------------------------------------------------------------------------------------
# the curve
# ------------------------------------------------------------------------------------------------
def _curves(sigma, c, p):
    m = ledger_of(mog(sigma, c, p), "add-remove").entries[0][0]
    return pair_of(m, "add-remove")


def _curve_at_e(curve, prec=128):
    """An enclosure of f(e) from f at exact rationals just below and above e (f non-increasing)."""
    with workprec(prec):
        e = arb(1).exp()
        lo, hi = e.lower().fmpq(), e.upper().fmpq()
        ev = curve.evaluator()
        return ev(hi)[0].lower(), ev(lo)[0].upper()


@pytest.mark.parametrize(
    "case,direction,want",
    [
        # privacy_loss_mechanism_test.py, MixtureGaussianPrivacyLossTest.test_get_delta_for_epsilon
        (A, "add", "0.036691263832032806"),  # mixture_gaussian_add_1
        (B, "add", "0.3894964356580768"),  # mixture_gaussian_add_2
        (A, "remove", "0.15768284088654105"),  # mixture_gaussian_remove_1
        (B, "remove", "0.433276675545065"),  # mixture_gaussian_remove_2
        # the same test's Gaussian and subsampled-Gaussian cases (one positive shift: the curves of certify.pld.pairs)
        ((1, [1], ["1"]), "add", "0.12693674"),  # gaussian_add_1
        ((1, [3], ["1"]), "add", "0.78760074"),  # gaussian_add_2
        ((1, [0, 1], ["1/5", "4/5"]), "add", "0.0231362104090899"),  # sampled_gaussian_add_1
        ((1, [0, 3], ["3/10", "7/10"]), "add", "0.1195051215523554"),  # sampled_gaussian_add_2
        ((1, [1], ["1"]), "remove", "0.12693674"),  # gaussian_remove_1
        ((1, [3], ["1"]), "remove", "0.78760074"),  # gaussian_remove_2
        ((1, [0, 1], ["1/5", "4/5"]), "remove", "0.0816951786585355"),  # sampled_gaussian_remove_1
        ((1, [0, 3], ["3/10", "7/10"]), "remove", "0.5356298793262404"),  # sampled_gaussian_remove_2
    ],
)
def test_one_step_curve_against_quadrature_and_dp_accounting(case, direction, want):
    rem, add = _curves(*case)
    if len(case[1]) - case[1].count(0) > 1:
        assert isinstance(rem, GaussianMixtureCurve) and rem.direction == "remove" and add.direction == "add"
    else:
        assert isinstance(rem, MixtureCurve)
    lo, hi = _curve_at_e(rem if direction == "remove" else add)
    with mp.workdps(50):  # the reference at 50 digits (our ball is about 1e-38 wide)
        lo, hi = _mpq(lo.fmpq()), _mpq(hi.fmpq())
        ref = ref_hockey(*case, direction, mp.e)
    assert lo <= ref <= hi and hi - lo < mp.mpf(10) ** -25  # sound and tight
    assert abs(ref - mp.mpf(want)) < 5e-8  # their assertAlmostEqual (7 places)


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_one_component_is_the_subsampled_gaussian_curve(direction):
    """A mixture with one positive shift d and the shift 0 is the Poisson-subsampled Gaussian pair of DP-SGD
    (:class:`certify.pld.pairs.MixtureCurve`): the two independently written curves agree in balls."""
    q, d = fmpq(1, 10), fmpq(3, 2)
    with workprec(160):
        g = GaussianMixtureCurve(direction, 1 - q, ((d, q),)).evaluator()
        m = MixtureCurve(direction, q, d).evaluator()
        for gamma in [fmpq(0), fmpq(1, 2), fmpq(9, 10), fmpq(1), fmpq(3, 2), fmpq(5), fmpq(100), fmpq(10, 9) - fmpq(1, 10**6)]:
            (v1, s1), (v2, s2) = g(gamma), m(gamma)
            assert v1.overlaps(v2) and s1.overlaps(s2), (gamma, v1, v2)
            assert v1.rad() < arb(2) ** -120


def test_curve_at_the_ends_of_its_range():
    """gamma <= p0 (remove: 1 - gamma, slope -1), gamma p0 >= 1 (add: 0), gamma = 0 (add: 1); a gamma far in the tail
    still brackets its root (value > 0, tiny)."""
    rem, add = _curves(*C)
    with workprec(128):
        r, a = rem.evaluator(), add.evaluator()
        assert r(fmpq(81, 100)) == (arb(fmpq(19, 100)), arb(-1)) or r(fmpq(81, 100))[0].overlaps(arb(fmpq(19, 100)))
        assert a(fmpq(0))[0].overlaps(arb(1)) and a(fmpq(100, 81))[0] == 0
        v, s = r(fmpq(10**6))
        assert v > 0 and v < arb(10) ** -12 and s < 0


# ------------------------------------------------------------------------------------------------
# the accountant: brackets against the references, and dp_accounting's float PLD
# ------------------------------------------------------------------------------------------------
def _bracket(cert, low, up):
    lo = ball_endpoints(cert.quantities[low].value)[0]
    hi = ball_endpoints(cert.quantities[up].value)[1]
    return _mpq(lo), _mpq(hi)


@pytest.mark.parametrize("case,grid", [(A, "1e-2"), pytest.param(B, "1e-2", marks=pytest.mark.slow), pytest.param(A, "1e-3", marks=pytest.mark.slow)])
def test_one_step_delta_bracket_contains_the_reference(case, grid):
    cert = certify_events_pld(ledger_of(mog(*case), "add-remove"), epsilon="1", grid=grid)
    lo, hi = _bracket(cert, "delta_lower", "delta_upper")
    ref = ref_delta(*case, 1)
    assert lo <= ref <= hi and (hi - lo) < 0.01 * ref, (lo, ref, hi)


@pytest.mark.slow
def test_two_steps_bracket_contains_the_reference():
    """The 2-fold of the asymmetric pair B (no shift 0): both directions, the larger delta."""
    cert = certify_events_pld(ledger_of(selfc(mog(*B), 2), "add-remove"), epsilon="2", grid="1e-3")
    lo, hi = _bracket(cert, "delta_lower", "delta_upper")
    ref = max(ref_two_steps(*B, d, 2) for d in ("remove", "add"))
    assert lo <= ref <= hi and (hi - lo) < 0.01 * ref, (lo, ref, hi)


def ref_with_gaussian(sigma, c, p, mu, eps):
    """delta at eps of MoG composed with the Gaussian pair N(mu, 1) vs N(0, 1) (symmetric), per direction of the
    mixture: E_(x ~ P)[H_(e^eps e^(-L(x)))(N(mu,1) || N(0,1))] with the Gaussian's profile of Balle-Wang 2018 Thm 8,
    H_g = Phi(-log(g)/mu + mu/2) - g Phi(-log(g)/mu - mu/2); the larger direction."""
    mu = mp.mpf(mu)

    def gauss(g):
        lg = mp.log(g)
        return mp.ncdf(-lg / mu + mu / 2) - g * mp.ncdf(-lg / mu - mu / 2)

    out = []
    for d in ("remove", "add"):
        P, Q = _densities(sigma, c, p, d)
        g = mp.e ** mp.mpf(eps)
        out.append(mp.quad(lambda x: P(x) * gauss(g * Q(x) / P(x)), [-14, -4, -1, 0, 1, 4, 16]))
    return max(out)


@pytest.mark.slow
def test_heterogeneous_ledger_with_a_gaussian_contains_the_reference():
    ev = {"class_name": "ComposedDpEvent", "events": [mog(*B), {"class_name": "GaussianDpEvent", "noise_multiplier": 2}]}
    cert = certify_events_pld(ledger_of(ev, "add-remove"), epsilon="1", grid="1e-3")
    lo, hi = _bracket(cert, "delta_lower", "delta_upper")
    with mp.workdps(20):
        ref = ref_with_gaussian(*B, "1/2", 1)
    assert lo <= ref <= hi and (hi - lo) < 0.01 * ref, (lo, ref, hi)


@pytest.mark.slow
def test_epsilon_bracket_is_narrow_and_consistent_with_dp_accounting():
    """Ten steps of the user-level case C at delta = 1e-6, grid 1e-3: the bracket is within 1%, and dp_accounting's
    float PLD (PLDAccountant, grid 1e-4, pessimistic: 2.054574021222545, measured in the same environment) lies above
    our lower bound and within its own grid error (1e-3 per step here) of our upper bound."""
    cert = certify_events_pld(ledger_of(selfc(mog(*C), 10), "add-remove"), delta="1e-6", grid="1e-3")
    lo, hi = _bracket(cert, "epsilon_lower", "epsilon_upper")
    theirs = mp.mpf("2.054574021222545")
    assert hi - lo < 0.01 * lo
    assert lo <= theirs <= hi + 10 * mp.mpf("1e-3")


@pytest.mark.slow
def test_dp_accounting_mixture_of_gaussians_basic():
    """pld_privacy_accountant_test.py, test_mixture_of_gaussians_basic: 3 x MoG(1, [0, 1, 2], [0.2, 0.6, 0.2]) and
    2 x MoG(2, [0, 2, 3], [0.33, 0.34, 0.33]); expected eps(1e-6) = 17.193115 (tolerance 1e-6, their grid 1e-4,
    pessimistic): it must lie above our certified lower bound, and our upper bound within the grid error of it."""
    ev = {
        "class_name": "ComposedDpEvent",
        "events": [selfc(mog(1, [0, 1, 2], ["0.2", "0.6", "0.2"]), 3), selfc(mog(2, [0, 2, 3], ["0.33", "0.34", "0.33"]), 2)],
    }
    cert = certify_events_pld(ledger_of(ev, "add-remove"), delta="1e-6", grid="1e-3")
    lo, hi = _bracket(cert, "epsilon_lower", "epsilon_upper")
    assert lo <= mp.mpf("17.193115") + mp.mpf("1e-6") and hi <= mp.mpf("17.193115") + 5 * mp.mpf("1e-3")
    assert hi - lo < 0.01 * lo


def test_replace_special_takes_the_add_remove_pairs_and_replace_one_is_refused():
    e = ledger_of(mog(*A), "replace-special")
    assert pair_of(e.entries[0][0], "replace-special") == _curves(*A)
    with pytest.raises(InputError, match="MixtureOfGaussiansDpEvent"):
        ledger_of(mog(*A), "replace-one")


def test_rdp_accountant_refuses_it_naming_the_class(tmp_path, capsys):
    path = tmp_path / "e.json"
    path.write_text(json.dumps(mog(*A)))
    assert cli.main(["account", str(path), "--delta", "1e-6"]) == 2
    err = capsys.readouterr().err
    assert "MixtureOfGaussiansDpEvent" in err and "--accountant pld" in err


def test_null_mixture_is_dropped_like_a_noop():
    with pytest.raises(InputError, match="nothing to certify"):
        ledger_of(mog(1, [0, 3], ["1", "0"]), "add-remove")


def test_truncated_subsampled_gaussian_is_certified_by_both_accountants(tmp_path, capsys):
    """No longer refused: certify's labelled-mixture pair (tests/test_events_tsg.py) under add-remove, both accountants."""
    path = tmp_path / "t.json"
    ev = {
        "class_name": "TruncatedSubsampledGaussianDpEvent",
        "dataset_size": 1000,
        "sampling_probability": "0.01",
        "truncated_batch_size": 15,
        "noise_multiplier": 1,
    }
    path.write_text(json.dumps(ev))
    for acc in ("rdp", "pld"):
        assert cli.main(["account", str(path), "--accountant", acc, "--delta", "1e-6", "--grid", "1e-2"][: 6 if acc == "rdp" else 8]) == 0
    assert "upper bound" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------------
# the certificate and the command line
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cert_doc():
    cert = certify_events_pld(ledger_of(selfc(mog(*A), 2), "add-remove"), delta="1e-5", grid="1e-2")
    return json.loads(cert.dumps())


def test_account_and_verify_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "e.json"
    path.write_text(json.dumps(selfc(mog(*A), 2)))
    out = tmp_path / "c.json"
    assert cli.main(["account", str(path), "--accountant", "pld", "--delta", "1e-5", "--grid", "1e-2", "--out", str(out)]) == 0
    assert "MixtureOfGaussiansDpEvent" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["inputs"]["event[0].sensitivities"] == "0,1,2" and doc["inputs"]["event[0].sampling_probs"] == "1/5,3/5,1/5"
    assert cli.main(["verify", str(out)]) == 0


def test_verifies_at_1x_2x_4x(cert_doc):
    for factor in (1, 2, 4):
        rep = verify.verify_document(copy.deepcopy(cert_doc), factor * cert_doc["precision"])
        assert rep.exit_code == 0 and rep.ok, (factor, rep.problems)


@pytest.mark.parametrize(
    "field,value",
    [
        ("event[0].sensitivities", "0,1,1"),  # a smaller shift: a smaller epsilon
        ("event[0].sampling_probs", "1/5,4/5,0"),  # still sums to 1, less mass on the largest shift
        ("event[0].sampling_probs", "1/5,3/5,1/10"),  # does not sum to 1
        ("event[0].sensitivities", "0,2/2,2"),  # not certify's spelling
        ("event[0].sensitivities", "0,-1,2"),  # negative
        ("event[0].sensitivities", "0,1"),  # lengths differ
        ("event[0].sensitivities", ",".join(["1"] * 17)),  # too long
        ("event[0].standard_deviation", "1/2"),
    ],
)
def test_forged_fields_are_refused(cert_doc, field, value):
    doc = copy.deepcopy(cert_doc)
    doc["inputs"][field] = value
    doc["digest"] = digest_of(doc)
    rep = verify.verify_document(doc, doc["precision"])
    assert rep.exit_code != 0 and not rep.ok


@pytest.mark.parametrize(
    "event,field",
    [
        (mog(1, [0, -1], ["1/2", "1/2"]), "event.sensitivities[1]"),
        (mog(1, [0, 1], ["1/2", "1/3"]), "event.sampling_probs"),
        (mog(1, [0, 1], [0.9, 0.1]), "event.sampling_probs"),  # binary floats: their exact sum is not 1
        (mog(1, [], []), "event.sensitivities"),
        (mog(1, [1] * 17, ["1/17"] * 17), "event.sensitivities"),
        (mog(1, [1] * 10**5, ["0"] * 10**5), "event.sensitivities"),  # refused before reading the elements
        (mog(1, [0, 1], ["1"]), "event.sampling_probs"),
        (mog(0, [0, 1], ["1/2", "1/2"]), "event.standard_deviation"),
        (mog(1, "0,1", ["1/2", "1/2"]), "event.sensitivities"),
        (mog(1, [0, 1], ["1/2", "3/2"]), "event.sampling_probs[1]"),
        (mog("1e-6", [0, 1], ["1/2", "1/2"]), "event.standard_deviation"),  # shift 10^6 > 10^4
        ({"class_name": "MixtureOfGaussiansDpEvent", "standard_deviation": 1, "sensitivities": [1]}, "event.sampling_probs"),
    ],
)
def test_bad_inputs_exit_2_naming_the_field(tmp_path, capsys, event, field):
    path = tmp_path / "e.json"
    path.write_text(json.dumps(event))
    assert cli.main(["account", str(path), "--accountant", "pld", "--delta", "1e-6", "--grid", "1e-2"]) == 2
    err = capsys.readouterr().err
    assert field in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_pld_accountant_interface_with_dp_accounting_objects():
    dpa = pytest.importorskip("dp_accounting")
    from certify.accounting import PLDAccountant

    E = dpa.dp_event
    acc = PLDAccountant(value_discretization_interval=1e-2)
    ev = E.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0, 2.0], [0.25, 0.5, 0.25])  # binary floats that sum to 1 exactly
    assert acc.supports(ev)
    acc.compose(ev, 2)
    d = acc.get_delta(1.0)
    assert acc.certificate.kind == "events/pld" and 0 < d < 1


# ------------------------------------------------------------------------------------------------
# proof obligations of the curve
# ------------------------------------------------------------------------------------------------
def _obligation(oid):
    from certify.proofs import obligations

    return next(ob for ob in obligations("events") if ob.id == oid)


@pytest.mark.slow
@pytest.mark.parametrize("oid", ["E-pld-mog-ratio", "E-pld-mog-curve"])
def test_mixture_obligations_are_proved_and_refute_wrong_claims(oid):
    import sympy as sp

    from certify.proofs.core import PROVED
    from certify.proofs.tools import phi_sym

    ob = _obligation(oid)
    assert ob.run().verdict == PROVED
    x, d1 = sp.Symbol("x", real=True), sp.Symbol("d1", positive=True)
    t, g, p0 = sp.Symbol("t", real=True), sp.Symbol("gamma", positive=True), sp.Symbol("p0", positive=True)
    wrong = sp.exp(d1 * x + d1**2 / 2) if oid == "E-pld-mog-ratio" else phi_sym(t) * (g + p0)
    assert ob.run(claimed=wrong).verdict != PROVED
