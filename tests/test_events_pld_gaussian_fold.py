"""The Gaussian entries of an ``events/pld`` ledger folded into one exact Gaussian (certify.pld.ledger.fold_gaussians).

References written here, apart from the code under test: the analytic Gaussian of Balle-Wang 2018 (Thm 8) at 50 digits
(mpmath) for the shift M = sqrt(sum_i c_i Delta_i^2), its epsilon by bisection; the same ledger certified WITHOUT the fold
(``entries_of(..., fold=False)``: every Gaussian entry discretised and powered on its own, as before the fold), whose
bracket the folded one must improve on; dp_accounting's own PLDs (pessimistic connect-the-dots, optimistic privacy
buckets) of a mixed ledger, which the certified bracket must be consistent with. The certificate: verify at 1x, 2x, 4x,
and forgeries of the events (a count, a noise multiplier: another M^2), of the statement's M^2 and of the layout names
refused.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import mpmath as mp
import pytest

from certify import verify
from certify.balls import fmpq
from certify.certificate import digest_of
from certify.events.ledger import ledger_of
from certify.events.pld_certificates import certify_events_pld
from pld_event_helpers import composed, eps_bracket, gauss, laplace, mp_of, poisson_gauss, selfc

MPMATH_DPS = 50  # this module's precision (tests/conftest.py sets it per test)


# ------------------------------------------------------------------------------------------------
# references
# ------------------------------------------------------------------------------------------------
def ref_gaussian_delta(m2, eps):
    """Balle-Wang 2018 Thm 8 for N(M, 1) vs N(0, 1), M = sqrt(m2): Phi(-eps/M + M/2) - e^eps Phi(-eps/M - M/2)."""
    mu, eps = mp.sqrt(mp.mpf(m2.numerator) / m2.denominator), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)


def ref_gaussian_eps(m2, delta):
    """eps with delta(eps) = delta, bisection at 50 digits (delta non-increasing in eps)."""
    with mp.workdps(50):
        lo, hi = mp.mpf(0), mp.mpf(60)
        target = mp.mpf(delta.numerator) / delta.denominator
        for _ in range(200):
            mid = (lo + hi) / 2
            if ref_gaussian_delta(m2, mid) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2


def unfolded_bracket(event, relation, delta, grid):
    """The bracket of the same ledger with every Gaussian entry composed on its own (before the fold): the engine's own
    plan, run and read-off searches on ``entries_of(..., fold=False)``."""
    from certify.balls import exact
    from certify.events.pld_pairs import entries_of
    from certify.pld import readoff
    from certify.pld.ledger import plan, run

    entries = entries_of(ledger_of(event, relation), fold=False)
    target, h = exact(delta), exact(grid)
    r = run(entries, plan(entries, target, h))
    up = readoff.epsilon_pass(r.side(True), target, h)
    lo = readoff.epsilon_fail(r.side(False), target, h, up)
    return mp_of(lo), mp_of(up)


# ------------------------------------------------------------------------------------------------
# the fold itself
# ------------------------------------------------------------------------------------------------
GAUSS_ONLY = composed(selfc(gauss("2"), 3), gauss("3"), selfc(gauss("4"), 5))
GAUSS_ONLY_M2 = Fraction(3, 4) + Fraction(1, 9) + Fraction(5, 16)  # sum_i c_i / z_i^2 (add/remove: Delta = 1/z)


def test_the_fold_is_one_exact_gaussian_entry():
    from certify.events.pld_pairs import entries_of
    from certify.pld.ledger import GAUSSIAN
    from certify.pld.pairs import GaussianCurve

    ledger = ledger_of(composed(laplace("20"), GAUSS_ONLY, poisson_gauss("1/100", "1")), "add-remove")
    es = entries_of(ledger)
    assert [e.name for e in es] == ["0", GAUSSIAN, "4"]  # the Laplace is event[0], the PoissonSampled event[4]
    g = es[1]
    assert isinstance(g.remove, GaussianCurve) and g.remove is g.add
    assert g.count == 8  # 9 Gaussian events: 2^3 <= 9 < 2^4
    assert g.count * g.remove.m2 == fmpq(GAUSS_ONLY_M2.numerator, GAUSS_ONLY_M2.denominator)
    # replace-one: Delta = 2/z, so M^2 is four times the add/remove one
    es1 = entries_of(ledger_of(GAUSS_ONLY, "replace-one"))
    assert len(es1) == 1 and es1[0].count * es1[0].remove.m2 == 4 * fmpq(GAUSS_ONLY_M2.numerator, GAUSS_ONLY_M2.denominator)
    # a ledger without a Gaussian keeps its entries, named by their indices
    es2 = entries_of(ledger_of(composed(laplace("20"), poisson_gauss("1/100", "1")), "add-remove"))
    assert [e.name for e in es2] == [None, None] and len(es2) == 2


@pytest.mark.parametrize(
    "relation,factor,delta", [("add-remove", 1, Fraction(1, 10**6)), ("replace-one", 4, Fraction(1, 10**6)), ("add-remove", 1, Fraction(1, 10**10))]
)
def test_gaussian_ledger_contains_the_analytic_gaussian_and_is_narrower_than_unfolded(relation, factor, delta):
    """(a): the certified bracket holds the exact epsilon of N(M, 1) vs N(0, 1) and is narrower than the same ledger's
    bracket before the fold (one discretisation of 2^k factors instead of three entries' own powers and products)."""
    m2 = factor * GAUSS_ONLY_M2
    ref = ref_gaussian_eps(m2, delta)
    d = f"{delta.numerator}/{delta.denominator}"
    (lo, up), _ = eps_bracket(GAUSS_ONLY, relation, d, "1e-3")
    assert lo <= ref <= up, (lo, ref, up)
    ulo, uup = unfolded_bracket(GAUSS_ONLY, relation, d, "1e-3")
    assert ulo <= ref <= uup, (ulo, ref, uup)
    assert up - lo < uup - ulo, ((lo, up), (ulo, uup))
    assert up - lo < 5e-3 * ref


def test_a_wrong_m2_is_not_contained():
    """The reference can fail: the bracket of GAUSS_ONLY excludes the epsilon of a ledger with one Gaussian(4) less."""
    (lo, up), _ = eps_bracket(GAUSS_ONLY, "add-remove", "1/1000000", "1e-3")
    wrong = ref_gaussian_eps(GAUSS_ONLY_M2 - Fraction(1, 16), Fraction(1, 10**6))
    assert not lo <= wrong <= up


# ------------------------------------------------------------------------------------------------
# (b) a mixed ledger against dp_accounting
# ------------------------------------------------------------------------------------------------
def _their_eps(h: float, delta: float, pessimistic: bool) -> float:
    """dp_accounting's PLD of MIXED_FLOAT, built as its PLDAccountant builds each event (connect-the-dots when
    pessimistic, privacy buckets otherwise), self_compose per count and compose across events."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    kw = {"value_discretization_interval": h, "pessimistic_estimate": pessimistic, "use_connect_dots": pessimistic}
    parts = [
        pld.from_gaussian_mechanism(10.0, **kw).self_compose(40),
        pld.from_gaussian_mechanism(5.0, **kw).self_compose(7),
        pld.from_laplace_mechanism(50.0, **kw).self_compose(30),
        pld.from_gaussian_mechanism(1.25, sampling_prob=0.0625, **kw).self_compose(50),
    ]
    out = parts[0]
    for p in parts[1:]:
        out = out.compose(p)
    return out.get_epsilon_for_delta(delta)


MIXED = composed(selfc(gauss("10"), 40), selfc(gauss("5"), 7), selfc(laplace("50"), 30), selfc(poisson_gauss("1/16", "5/4"), 50))


@pytest.mark.parametrize("grid", ["1e-3", pytest.param("1e-4", marks=pytest.mark.slow)])
def test_mixed_ledger_is_consistent_with_dp_accounting(grid):
    """(b): dp_accounting's pessimistic epsilon is an upper estimate and its optimistic one a lower estimate of the same
    exact epsilon (float round-off aside): the certified bracket must meet [optimistic, pessimistic], lie above the
    optimistic value and below the pessimistic one within 1e-6, and be narrower than their gap. The fold changed it
    only inward: it lies within the unfolded bracket up to the discretisation's own width."""
    (lo, up), cert = eps_bracket(MIXED, "add-remove", "1/1000000", grid)
    pess, opt = _their_eps(float(grid), 1e-6, True), _their_eps(float(grid), 1e-6, False)
    assert lo <= pess + 1e-6 and opt <= up + 1e-6, (lo, up, opt, pess)
    assert up - lo < pess - opt
    assert any(w.startswith("gaussian/") for w in cert.witnesses["layouts"])
    if grid == "1e-3":
        ulo, uup = unfolded_bracket(MIXED, "add-remove", "1/1000000", grid)
        assert up - lo <= uup - ulo, ((lo, up), (ulo, uup))


# ------------------------------------------------------------------------------------------------
# (c) the certificate
# ------------------------------------------------------------------------------------------------
HETERO = composed(selfc(gauss("2"), 3), laplace("20"), gauss("3"), selfc(poisson_gauss("1/100", "1"), 2))


@pytest.fixture(scope="module")
def cert_doc():
    return json.loads(certify_events_pld(ledger_of(HETERO, "add-remove"), delta="1e-6", grid="1e-2").dumps())


def test_statement_names_m2_and_verifies_at_1x_2x_4x(cert_doc):
    privacy = next(c for c in cert_doc["claims"] if c["name"] == "privacy")
    assert "M^2 = sum_i c_i Delta_i^2 = 31/36" in privacy["statement"]  # 3/4 + 1/9
    assert "discretised as 4 factor(s) of shift sqrt(31/144)" in privacy["statement"]
    assert sorted(cert_doc["witnesses"]["layouts"]) == ["1/add", "1/remove", "3/add", "3/remove", "gaussian/add", "gaussian/remove"]
    for factor in (1, 2, 4):
        rep = verify.verify_document(copy.deepcopy(cert_doc), factor * cert_doc["precision"])
        assert rep.exit_code == 0 and rep.ok, (factor, rep.problems)


def _refused(doc):
    doc["digest"] = digest_of(doc)
    rep = verify.verify_document(doc, doc["precision"])
    assert rep.exit_code != 0 and not rep.ok, rep.problems
    return rep


@pytest.mark.parametrize(
    "key,value",
    [
        ("event[0].count", "4"),  # one Gaussian(2) more: M^2 = 1 + 1/9, the bound no longer holds
        ("event[0].count", "2"),  # one less: the recorded read-off points are not the ones certify leaves
        ("event[2].noise_multiplier", "6"),  # Delta = 1/6: another M^2 (the statement's 31/36 no longer re-derived)
        ("event[2].noise_multiplier", "3/2"),
    ],
)
def test_a_forged_ledger_m2_is_refused(cert_doc, key, value):
    """(c): the M^2 of the fold is re-derived from the recorded events, never read from the file: a forger who changes a
    Gaussian's count or noise multiplier (another M^2) and re-seals is refused."""
    doc = copy.deepcopy(cert_doc)
    assert key in doc["inputs"]
    doc["inputs"][key] = value
    _refused(doc)


def test_a_forged_statement_m2_is_refused(cert_doc):
    doc = copy.deepcopy(cert_doc)
    for c in doc["claims"]:
        c["statement"] = c["statement"].replace("= 31/36", "= 1/36")
    assert any("= 1/36" in c["statement"] for c in doc["claims"])
    rep = _refused(doc)
    assert any("statement" in p for p in rep.problems), rep.problems


def test_unfolded_layout_names_are_refused(cert_doc):
    """A file laid out as before the fold (the Gaussian entries under their own indices) is not what certify writes."""
    doc = copy.deepcopy(cert_doc)
    lays = doc["witnesses"]["layouts"]
    for d in ("remove", "add"):
        lays[f"0/{d}"] = lays.pop(f"gaussian/{d}")
    _refused(doc)


# ------------------------------------------------------------------------------------------------
# the proof obligation
# ------------------------------------------------------------------------------------------------
def test_fold_obligation_is_proved_and_refutes_a_wrong_m2():
    import sympy as sp

    from certify.proofs import obligations
    from certify.proofs.core import PROVED

    ob = next(o for o in obligations("events") if o.id == "E-pld-gaussian-fold")
    assert ob.run().verdict == PROVED
    d1, d2 = sp.symbols("d1 d2", positive=True)
    c1, c2 = sp.symbols("c1 c2", positive=True, integer=True)
    for wrong in (c1 * d1 + c2 * d2, (c1 * d1 + c2 * d2) ** 2, d1**2 + d2**2, c1 * d1**2 + c2 * d2**2 / 2):
        assert ob.run(claimed=wrong).verdict != PROVED, wrong
