"""Poisson add direction read off the remove chains by H_g(Q||P) = 1 - g + g H_(1/g)(P||Q) (issue 13 speed work).

Soundness of the derived direction ALONE against independent mpmath references (tests/reference_pld.py:
closed form at T = 1, quadrature of the composed add pair at T = 2), validity for any K and tau (only
tightness depends on them), agreement with the directly composed add direction, and the certificate paths:
derived certificates verify, old certificates (an ``add`` layout) still verify, mixed fields fail cleanly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import mpmath as mp
import pytest
import reference_pld as R

from certify.balls import exact, fmpq
from certify.certificate import digest_of
from certify.contract import FIXED_SIZE_REPLACE_ONE, POISSON_ADD_REMOVE
from certify.pld import accountant, certify_pld, delta_interval, readoff
from certify.pld.discretise import EXTRA_PREC
from certify.balls import workprec
from certify.verify import verify_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _mp(x):
    return mp.mpf(int(x.p)) / int(x.q)


#: (q, sigma, eps): a far tail, a mid case, a large q, and a negative-loss-heavy small sigma
ADD_CASES = [
    ("0.001", "1", "0.3"),
    pytest.param("0.05", "1", "0.1", marks=pytest.mark.slow),
    pytest.param("0.05", "1", "0.6", marks=pytest.mark.slow),
    pytest.param("0.3", "2", "0.2", marks=pytest.mark.slow),  # about 1.7 s
    pytest.param("0.1", "0.8", "1.5", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("q,sigma,eps", ADD_CASES)
def test_derived_add_alone_contains_add_reference(q, sigma, eps):
    """T = 1 (closed form f_add) and T = 2 (nested quadrature): the add reference lies in the derived interval.
    Tightness: the derived interval's width is e^eps times the remove chain's absolute error at e^-eps, so it
    is small relative to the WORST direction's delta (what the accountant reports), not to a tiny add delta
    (e.g. q = 0.05, sigma = 1, eps = 0.1, T = 2: add 4.5e-10, remove 1.0e-2, width 8.0e-10, the same as the
    directly composed add direction's: the add curve's own discretisation error near its largest loss)."""
    D = 1 / mp.mpf(sigma)
    with mp.workdps(R.DPS):
        for T in (1, 2):
            g = mp.exp(mp.mpf(eps))
            if T == 1:
                truth, other = R.f_add(g, mp.mpf(q), D), R.f_remove(g, mp.mpf(q), D)
            else:
                truth, other = (R.composed_direction(d, mp.mpf(q), D, 2, eps) for d in ("add", "remove"))
            lo, up = delta_interval(POISSON_ADD_REMOVE, q, sigma, T, eps, "1e-3", direction="add")
            lo, up = _mp(lo), _mp(up)
            assert lo <= truth <= up, (q, sigma, eps, T, lo, truth, up)
            worst = max(truth, other)
            if worst > mp.mpf(10) ** -12:
                assert (up - lo) / worst < 5e-3, (q, sigma, eps, T, lo, truth, up, other)
            # the old path (add composed itself) brackets the same value: the intervals overlap
            lo2, up2 = delta_interval(POISSON_ADD_REMOVE, q, sigma, T, eps, "1e-3", direction="add", derive_add=False)
            assert _mp(lo2) <= up and lo <= _mp(up2)


def test_remove_direction_alone_unchanged():
    with mp.workdps(R.DPS):
        truth = R.composed_direction("remove", mp.mpf("0.05"), mp.mpf(1), 2, "0.3")
        lo, up = delta_interval(POISSON_ADD_REMOVE, "0.05", "1", 2, "0.3", "1e-3", direction="remove")
        assert _mp(lo) <= truth <= _mp(up)


@pytest.mark.parametrize("K,tau", [(40, 0), (40, 10**9), (33, 2**31), (96, 10**30)])
def test_derived_bound_valid_for_any_K_and_tau(K, tau):
    """K and tau decide tightness only: a plan with a tiny K or a huge tau still brackets the reference."""
    q, sigma, eps, T = "0.05", "1", "0.2", 2
    c = POISSON_ADD_REMOVE
    qq, ss, h = exact(q), exact(sigma), fmpq(1, 100)
    base = accountant.plan(c, qq, ss, T, fmpq(1, 10**6), h)
    pl = accountant.Plan(h, K, tau, base.layouts, "remove")
    r = accountant.run(c, qq, ss, T, pl)
    e = exact(eps)
    with workprec(K + EXTRA_PREC):
        up = readoff.delta_at(r.derived[True], e, h)
        lo = readoff.delta_at(r.derived[False], e, h)
    with mp.workdps(R.DPS):
        truth = R.composed_direction("add", mp.mpf(q), 1 / mp.mpf(sigma), T, eps)
        assert _mp(lo.lower().fmpq()) <= truth <= _mp(up.upper().fmpq()), (K, tau, lo, truth, up)


def test_plan_derives_add_for_poisson_only():
    d = fmpq(1, 10**6)
    p = accountant.plan(POISSON_ADD_REMOVE, fmpq(1, 100), fmpq(2), 10000, d, fmpq(1, 10**4))
    assert p.add_from == "remove" and set(p.layouts) == {"remove"}
    assert p.K == accountant.bits_for(d) + accountant.eps_bits(fmpq(1, 100), fmpq(2), 10000, d) and p.K > accountant.bits_for(d)
    f = accountant.plan(FIXED_SIZE_REPLACE_ONE, fmpq(1, 100), fmpq(2), 100, d, fmpq(1, 100))
    assert f.add_from is None and f.K == accountant.bits_for(d) and set(f.layouts) == {"max"}
    o = accountant.plan(POISSON_ADD_REMOVE, fmpq(1, 100), fmpq(2), 100, d, fmpq(1, 100), derive_add=False)
    assert o.add_from is None and set(o.layouts) == {"remove", "add"} and o.K == accountant.bits_for(d)


@pytest.fixture(scope="module")
def certs():
    new = certify_pld(POISSON_ADD_REMOVE, "0.02", "1.5", 50, "1e-5", "1e-2")
    old = certify_pld(POISSON_ADD_REMOVE, "0.02", "1.5", 50, "1e-5", "1e-2", derive_add=False)
    return new, old


def test_derived_and_old_certificates_verify_and_agree(certs):
    new, old = certs
    assert new.witnesses["add_from"] == "remove" and set(new.witnesses["layouts"]) == {"remove"}
    assert "add_from" not in old.witnesses and set(old.witnesses["layouts"]) == {"remove", "add"}
    assert verify_text(new.dumps()).ok and verify_text(old.dumps()).ok
    eu_n, el_n = new.quantities["epsilon_upper"].value, new.quantities["epsilon_lower"].value
    eu_o, el_o = old.quantities["epsilon_upper"].value, old.quantities["epsilon_lower"].value
    # both brackets contain the exact eps(delta): they overlap, and neither is much wider than the other
    assert el_n <= eu_o and el_o <= eu_n
    assert (eu_n - el_n) < 1.5 * (eu_o - el_o) + fmpq(1, 2**20)


def _verify_cli(tmp_path, doc) -> subprocess.CompletedProcess:
    doc["digest"] = digest_of(doc)
    f = tmp_path / "c.json"
    f.write_text(json.dumps(doc))
    return subprocess.run([sys.executable, "-m", "certify", "verify", str(f)], cwd=ROOT, capture_output=True, text=True, timeout=300)


def _mix(new, old, how):
    doc = json.loads(new.dumps())
    w = doc["witnesses"]
    if how == "add_from with an add layout":
        w["layouts"] = json.loads(old.dumps())["witnesses"]["layouts"]
    elif how == "no add_from, no add layout":
        del w["add_from"]
    elif how == "add_from = add":
        w["add_from"] = "add"
    elif how == "add_from not a string":
        w["add_from"] = ["remove"]
    elif how == "lower_profiles names add":
        w["lower_profiles"] = ["add"]
    return doc


MIXES = ["add_from with an add layout", "no add_from, no add layout", "add_from = add", "add_from not a string", "lower_profiles names add"]


@pytest.mark.parametrize("how", MIXES)
def test_mixed_fields_fail_cleanly(tmp_path, certs, how):
    r = _verify_cli(tmp_path, _mix(*certs, how))
    assert r.returncode in (2, 4, 5), (how, r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr


def test_forged_K_tau_on_derived_path_pass_only_if_proved(tmp_path, certs):
    """A derived certificate claiming other K / tau: the checker re-runs with them; the bound is valid for
    any K, tau, so the result is proved or not (exit 0 / 4 / 5), never a traceback; a smaller epsilon_upper
    than any valid one fails."""
    new, _ = certs
    for K, tau in ((33, "0"), (40, str(10**12)), (200, "1")):
        doc = json.loads(new.dumps())
        doc["witnesses"]["K"], doc["witnesses"]["tau"] = K, tau
        r = _verify_cli(tmp_path, doc)
        assert r.returncode in (0, 4, 5) and "Traceback" not in r.stderr, (K, tau, r.returncode, r.stderr)
    doc = json.loads(new.dumps())
    doc["witnesses"]["tau"] = str(10**12)
    doc["witnesses"]["epsilon_upper"] = "1/4"  # far below the true eps at this query
    assert _verify_cli(tmp_path, doc).returncode in (4, 5)


def test_add_from_on_fixed_size_is_malformed(tmp_path):
    cert = certify_pld(FIXED_SIZE_REPLACE_ONE, "1/100", "2", 20, "1e-5", grid="1e-2")
    assert "add_from" not in cert.witnesses
    doc = json.loads(cert.dumps())
    doc["witnesses"]["add_from"] = "remove"
    r = _verify_cli(tmp_path, doc)
    # the evaluator refuses the witnesses (InputError naming add_from); verify reports it as inconsistent (4)
    assert r.returncode in (2, 4) and "Traceback" not in r.stderr and "add_from" in r.stderr, (r.returncode, r.stderr)


@pytest.mark.slow
def test_derived_add_alone_t3_reference():
    """T = 3: the add direction alone (fast loss-density reference, ~1-4 min) lies in the derived interval."""
    q, sigma, eps = "0.3", "2", "0.2"
    with mp.workdps(R.DPS):
        v, tail = R.fast_curve("add", q, 1 / mp.mpf(sigma), 3, eps)
        lo, up = delta_interval(POISSON_ADD_REMOVE, q, sigma, 3, eps, "1e-3", direction="add")
        slack = mp.mpf("1e-12") * v
        assert _mp(lo) <= v + tail + slack and v - slack <= _mp(up), (lo, v, tail, up)
        assert (_mp(up) - _mp(lo)) / v < 5e-3


@pytest.mark.parametrize("K,tau,proves", [(36, 64, True), (40, 1000, True), (33, 8, False), (33, 10**8, False)])
def test_consistent_certificate_with_other_K_tau_is_still_sound(certs, K, tau, proves):
    """A consistent derived certificate made with a small K / huge tau (as a forger could): its eps_up is still above
    the exact eps (> the honest eps_low), and ``certify verify`` refuses it all the same (exit 4, naming witnesses.K):
    certify never writes it (the checker re-derives K and tau with the producer's plan)."""
    from certify.pld.certificates import make_certificate

    new, _ = certs
    qq, ss, h, delta, T = exact("0.02"), exact("1.5"), fmpq(1, 100), fmpq(1, 10**5), 50
    base = accountant.plan(POISSON_ADD_REMOVE, qq, ss, T, delta, h)
    pl = accountant.Plan(h, K, tau, base.layouts, "remove")
    r = accountant.run(POISSON_ADD_REMOVE, qq, ss, T, pl, lower=("remove",))
    up = readoff.epsilon_pass(r.side(True), delta, h)
    if not proves:  # K = 33: the rounding excess (6.7e-6 of mass) or tau (1e-2 per product) leaves nothing below delta
        assert up is None
        return
    assert up is not None
    low = readoff.epsilon_fail(r.side(False), delta, h, up)
    cert = make_certificate(new.inputs, pl, r, delta, up, low, h, ("remove",))
    rep = verify_text(cert.dumps())
    assert rep.exit_code == 4 and any("witnesses.K" in p for p in rep.problems), (rep.exit_code, rep.problems)
    assert up >= new.quantities["epsilon_lower"].value.upper().fmpq()
    assert low <= new.quantities["epsilon_upper"].value.lower().fmpq()
