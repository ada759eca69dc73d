"""Section 6 of Bok (2026) in balls: Lemma 3, Proposition 4, Corollary 2, Proposition 5."""

import mpmath as mp
import pytest

from certify.balls import exact, fmpq, workprec
from certify.dpsgd import asymptotics as A
from certify.dpsgd.baselines.birrell import rho_birrell

mp.mp.dps = MPMATH_DPS = 50  # this module's precision (tests/conftest.py sets it per test)


def close(x, ref, rel=1e-30):
    m, e = x.mid().man_exp()
    r, f = x.rad().man_exp()
    return abs(mp.mpf((int(m), int(e))) - ref) <= mp.mpf((int(r), int(f))) + abs(ref) * rel


@pytest.mark.parametrize("eps,nu,sigma", [("2", "1/2", "2"), ("4", "1/2", "2"), ("1", "3", "1"), ("3", "1/10", "5")])
def test_lemma3_and_prop4_against_mpmath(eps, nu, sigma):
    e, n, s = (mp.mpf(int(exact(x).p)) / int(exact(x).q) for x in (eps, nu, sigma))
    mu = mp.sqrt(2 * n * (mp.exp(4 / s**2) * mp.ncdf(3 / s) + 3 * mp.ncdf(-1 / s) - 2))
    dL = mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)
    lam = 2 * n * (mp.exp(4 / s**2) - mp.exp(2 / s**2))
    alpha = 1 + e / lam  # Proposition 4's choice in (7)
    d7 = 1 / alpha * (1 - 1 / alpha) ** (alpha - 1) * mp.exp((alpha - 1) * (lam * alpha / 2 - e))
    with workprec(128):
        got_L = A.delta_lossless_limit(exact(eps), exact(nu), exact(sigma))
        got_4 = A.delta_ours_limit_bound(exact(eps), exact(nu), exact(sigma))
    assert close(got_L, dL, 1e-25)
    assert close(got_4, d7, 1e-25)  # the closed form equals (7) at alpha = 1 + eps/lambda


def test_corollary2_mu2_exceeds_lambda_on_a_sigma_grid():
    with workprec(128):
        for k in range(1, 81):
            sigma = fmpq(k, 8)  # 1/8 .. 10
            assert A.corollary2_gap(sigma) > 0, sigma


def test_prop5_birrell_p3_coefficient_matches_the_bound():
    """(rho_B - alpha c p^2)/p^3 tends to the p^3 coefficient of (9) (Birrell, m = 4)."""
    alpha, sigma = 3, exact("3")
    with workprec(256):
        co = A.prop5_coefficients(alpha, sigma)
        vals = []
        for k in (4, 6):
            p = fmpq(1, 10**k)
            vals.append(float(((rho_birrell(alpha, p, sigma, 4) - co["p2"] * p**2) / p**3).mid()))
        target = float(co["birrell_p3"].mid())
    assert abs(vals[1] - target) < abs(vals[0] - target) + 1e-12
    assert abs(vals[1] - target) < 1e-3 * abs(target)


def test_prop5_signs():
    with workprec(128):
        for sigma in ("1/2", "1", "2", "8"):
            co = A.prop5_coefficients(5, exact(sigma))
            assert co["ours_p3"] < 0 and co["birrell_p3"] > 0 and co["p2"] > 0


def test_prop5_ours_p3_coefficient_matches_the_certified_rho():
    """(rho - alpha c p^2)/p^3 from the certified rho of (5) tends to -(alpha/2) d (Proposition 5, (8))."""
    from certify.dpsgd.accountant import certify_rho
    from certify.dpsgd.problem import Problem

    alpha, sigma = 3, exact("3")
    with workprec(128):
        co = A.prop5_coefficients(alpha, sigma)
        target = co["ours_p3"]
        errs = []
        for k in (2, 3, 4):
            p = fmpq(1, 10**k)
            rho = certify_rho(Problem(alpha, p, sigma)).certificate.quantities["rho"].value
            x = (rho - co["p2"] * p**2) / p**3
            errs.append(abs(float((x - target).mid())))
    assert errs[0] > errs[1] > errs[2] * 0.9 and errs[1] < 1e-2
