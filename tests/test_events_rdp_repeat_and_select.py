"""RepeatAndSelectDpEvent by RDP (certify/events/mechanisms/repeat_and_select.py): Papernot-Steinke 2022 Thms 2 and 6.

References: the theorems written again in mpmath at 50 digits (gamma solved by mpmath's root finder from the
truncated negative binomial's mean, independently of the module's bisection), the closed forms of PS22 Cors. 3-4
that dp_accounting's own tests use, and the expectations of dp_accounting 0.6.0
``python/dp_accounting/rdp/rdp_privacy_accountant_test.py`` (test named at each).
"""

from __future__ import annotations

import copy
import json
import math

import mpmath as mp
import pytest

from certify.balls import InputError, ball_endpoints, fmpq
from certify.certificate import digest_of
from certify.events.accountant import certified_value, certify_events
from certify.events.ledger import ledger_of
from certify.events.mechanisms.repeat_and_select import _tnb_order, gamma_lower
from certify.verify import verify_document

mp.mp.dps = MPMATH_DPS = 50  # this module's precision (tests/conftest.py sets it per test)


def ev(cls, **fields):
    return {"class_name": cls, **fields}


def rs(inner, mean, shape):
    return ev("RepeatAndSelectDpEvent", event=inner, mean=mean, shape=shape)


def gauss(z):
    return ev("GaussianDpEvent", noise_multiplier=z)


def mech(event, relation="add-remove"):
    ((m, _),) = ledger_of(event, relation).entries
    return m


def M(q) -> mp.mpf:
    return mp.mpf(int(q.p)) / int(q.q)


def bounds(m, alpha):
    lo, hi = ball_endpoints(m.rdp(alpha, "add-remove"))
    return M(lo), M(hi)


def tnb_gamma(mean, shape) -> mp.mpf:
    """gamma of TNB(shape, gamma) with the given mean (PS22 Def. 1), by mpmath's root finder."""
    mean, shape = mp.mpf(mean), mp.mpf(shape)
    if shape == 0:
        f = lambda g: (1 / g - 1) / mp.log(1 / g) - mean  # noqa: E731
    else:
        f = lambda g: shape * (1 / g - 1) / (1 - g**shape) - mean  # noqa: E731
    return mp.findroot(f, (mp.mpf(10) ** -30, 1 - mp.mpf(10) ** -30), solver="anderson")


@pytest.mark.parametrize("mean,shape,z,alpha", [(10, 1, "2", 10), (10, 0, "2", 5), (1000, "1/2", "3", 32), (50, 5, "1", "5/2")])
def test_truncated_negative_binomial_encloses_theorem_2(mean, shape, z, alpha):
    m = mech(rs(gauss(z), mean, shape))
    a, lh, zz = fmpq(*map(int, str(alpha).split("/"))) if "/" in str(alpha) else fmpq(alpha), _tnb_order(m), M(fmpq(int(z)))
    sh = mp.mpf(1) / 2 if shape == "1/2" else mp.mpf(shape)
    eps = lambda x: x / (2 * zz**2)  # noqa: E731  the Gaussian's RDP
    g = tnb_gamma(mean, sh)
    ref = eps(M(a)) + (1 + sh) * ((1 - 1 / M(lh)) * eps(M(lh)) + mp.log(1 / g) / M(lh)) + mp.log(mean) / (M(a) - 1)
    lo, hi = bounds(m, a)
    assert ref <= hi <= ref * (1 + mp.mpf("1e-6"))
    assert hi - lo < mp.mpf("1e-20") * ref
    assert M(gamma_lower(fmpq(mean), m["shape"])) <= g * (1 + mp.mpf("1e-45"))  # the root, to mpmath's accuracy


@pytest.mark.parametrize(
    "rho,gamma,shape",
    [(0.01, 0.01, 0), (1, 0.1, 0), (10, 0.99, 0), (0.01, 0.01, 0.5), (1, 0.1, 1), (10, 0.99, 1), (1, 0.1, 5), (0.01, 0.01, 5)],
)
def test_dp_accounting_repeat_select_gaussian_negative_binomial(rho, gamma, shape):
    """test_repeat_select_gaussian_negative_binomial (PS22 Cor. 4): at orders above 1 + sqrt(log(mean)/rho) the RDP
    is rho (alpha - 1) + log(mean)/(alpha - 1) + 2 (1 + shape) sqrt(rho log(1/gamma)) - shape rho. Ours lies above
    (soundness: Cor. 4 is Thm 2 at its best lambda_hat) and within 1e-3 of it (lambda_hat on a grid). (Below that order
    dp_accounting uses the monotonicity of the RDP in the order, which we do not: not compared there.)"""
    R = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    mean = R._truncated_negative_binomial_mean(gamma, shape)
    rho = min(rho, -math.log(gamma))
    m = mech(rs(gauss(math.sqrt(0.5 / rho)), mean, shape))
    # the exact values the event holds (binary floats), and gamma from the exact mean
    z = M(m["inner"].entries[0][0]["noise_multiplier"])
    r = 1 / (2 * z**2)
    g = tnb_gamma(M(m["mean"]), shape)
    for a in (3, 5, 10, 100, 1000):
        if a <= 1 + math.sqrt(math.log(mean) / rho) or mp.sqrt(mp.log(1 / g) / r) < 1:
            continue
        ref = r * (a - 1) + mp.log(M(m["mean"])) / (a - 1) + 2 * (1 + shape) * mp.sqrt(r * mp.log(1 / g)) - shape * r
        lo, hi = bounds(m, fmpq(a))
        assert ref <= hi <= ref * (1 + mp.mpf("1e-3")) + mp.mpf("1e-9"), (a, hi, ref)


@pytest.mark.parametrize("shape,z", [(0, "1"), ("1/2", "10"), (1, "1/10"), (2, "1")])
def test_dp_accounting_repeat_select_trivial(shape, z):
    """test_repeat_select_trivial: mean 1 (K = 1) is the inner mechanism itself."""
    m = mech(rs(gauss(z), 1, shape))
    zz = fmpq(*map(int, z.split("/"))) if "/" in z else fmpq(int(z))
    for a in (2, 7, 64, 1024):
        lo, hi = bounds(m, fmpq(a))
        assert lo <= M(fmpq(a) / (2 * zz * zz)) <= hi


@pytest.mark.parametrize("eps,mean", [(1, 1), (0.1, 2), (10, 10), (0.001, 100), (2, 1000), (1, 1e10)])
def test_dp_accounting_repeat_and_select_pure_poisson(eps, mean):
    """test_repeat_and_select_pure_poisson (PS22 Cor. 3 via Thm 6): Laplace(1/eps), Poisson repetitions, at the order
    alpha = 1 + 1/expm1(eps) where eps_hat = eps, so delta_hat = 0. We evaluate at a rational just below it (so that
    eps_hat > eps is decided) and compare with their closed form at 1e-3 relative, as their test does."""
    m = mech(rs(ev("LaplaceDpEvent", noise_multiplier=1 / eps), mean, math.inf))
    e = M(m["inner"].entries[0][0]["noise_multiplier"]) ** -1
    alpha = 1 + 1 / mp.expm1(e)
    a = fmpq(int(mp.floor(alpha * 2**40)) - 1, 2**40)
    ans = e + mp.log1p(mp.expm1((1 - 2 * alpha) * e) * (alpha - 1) / (2 * alpha - 1)) / (alpha - 1) + mp.log(mean) * mp.expm1(e)
    lo, hi = bounds(m, a)
    assert abs(hi / ans - 1) < 1e-3


@pytest.mark.parametrize("sigma,mean", [(0.5, 1), (1, 1000), (1, 1e9), (1000, 1000)])
def test_dp_accounting_repeat_and_select_gaussian_poisson(sigma, mean):
    """test_repeat_and_select_gaussian_poisson: a lower bound from the Gaussian's exact privacy profile at eps_hat
    (alpha/(2 sigma^2) + mean delta(eps_hat) + log(mean)/(alpha - 1)) lies below the bound at every order."""
    m = mech(rs(gauss(sigma), mean, math.inf))
    s = M(m["inner"].entries[0][0]["noise_multiplier"])
    for a in (2, 3, 10, 64):
        eh = mp.log1p(mp.mpf(1) / (a - 1))
        delta = mp.ncdf(-eh * s + 1 / (2 * s)) - mp.e**eh * mp.ncdf(-eh * s - 1 / (2 * s))
        ref = a / (2 * s**2) + M(m["mean"]) * delta + mp.log(M(m["mean"])) / (a - 1)
        assert ref <= bounds(m, fmpq(a))[1]


def test_epsilon_no_looser_than_dp_accounting_and_verifies():
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import RdpAccountant as TheirRdp

    for shape in (0, 1, 0.5, math.inf):
        event = rs(ev("SelfComposedDpEvent", count=5, event=gauss(4.0)), 10, shape)
        cert = certify_events(ledger_of(event, "add-remove"), delta="1e-6")
        theirs = TheirRdp()
        theirs.compose(dpa.dp_event.RepeatAndSelectDpEvent(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(4.0), 5), 10, shape))
        assert float(certified_value(cert)) <= theirs.get_epsilon(1e-6) * 1.001, shape
        doc = json.loads(cert.dumps())
        assert verify_document(doc).exit_code == 0
        assert "upper bound only" in cert.evaluation.claim_named("bound").statement


def test_forged_inner_ledger_is_refused():
    cert = certify_events(ledger_of(rs(gauss("4"), 10, 1), "add-remove"), delta="1e-6")
    doc = json.loads(cert.dumps())
    forged = copy.deepcopy(doc)
    forged["inputs"]["event[0].inner"] = forged["inputs"]["event[0].inner"].replace('"4"', '"40"')
    forged["digest"] = digest_of(forged)
    assert _code(forged) != 0
    bad = copy.deepcopy(doc)
    bad["inputs"]["event[0].inner"] = "{not json"
    bad["digest"] = digest_of(bad)
    assert _code(bad) != 0
    assert _code(doc) == 0


def _code(doc) -> int:
    try:
        return verify_document(copy.deepcopy(doc)).exit_code
    except InputError:
        return 2


@pytest.mark.parametrize(
    "event,pattern",
    [
        (rs(gauss(1), 0.5, 1), r"mean.*\[1, "),
        (rs(gauss(1), 2, -1), r"shape"),
        (rs(gauss(1), 2, float("nan")), r"NaN"),
        (rs(ev("EpsilonDeltaDpEvent", epsilon=1, delta=1e-6), 2, 1), r"RDP curve"),
        (rs(ev("NoOpDpEvent"), 2, 1), r"no mechanism"),
        (rs(ev("RandomizedResponseDpEvent", noise_parameter=0.5, num_buckets=2), 2, 1), r"replace-one, replace-special only"),
    ],
)
def test_bad_events_are_refused_naming_the_field(event, pattern):
    with pytest.raises(InputError, match=pattern):
        ledger_of(event, "add-remove")


def test_verified_at_1x_2x_4x_precision():
    from certify.verify import verify_text

    for shape in (0, math.inf):
        text = certify_events(ledger_of(rs(gauss("3"), 100, shape), "add-remove"), delta="1e-6").dumps()
        for bits in (128, 256, 512):
            assert verify_text(text, precision=bits).exit_code == 0, (shape, bits)
