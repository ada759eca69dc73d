"""The second checker on genuine `dpsgd/renyi-bok` certificates across a sweep (issue 25), and the soundness of its sharpened curvature.

The sweep of /work/data/bok27 (q in {0.001, 0.01, 0.3} x sigma in {0.6, 1, 4} x T in {1, 50, 5000}, delta 1e-5, fixed-size +
replace-one) had 16 of 27 genuine certificates undecided by the kernel: 7 skipped the search by Proposition 2 (a) (method
``prop2a``), 9 had leaves the paper's curvature (42)-(45) bounds far too loosely (q = 0.001, sigma = 0.6: kappa about 14,800 beyond
u = 1/8). Each certificate is produced here by certify, then judged by both checkers.

References for soundness are independent of both checkers: F(u) by mpmath quadrature of (35) at 50 digits, its derivatives by
central differences of that quadrature (step 1e-12: errors about 1e-24, far inside the enclosures), never the kernel's moment formulas.
"""

import os
import sys
from fractions import Fraction

import mpmath as mp
import pytest

import certify_kernel
from certify_kernel import bok
from certify_kernel.numbers import interval, working_precision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_kernel_agreement import certify_verdict  # noqa: E402

SWEEP = [(q, s, t) for q in ("0.001", "0.01", "0.3") for s in ("0.6", "1", "4") for t in (1, 50, 5000)]
#: previously undecided by the kernel, small T: the paper's curvature too loose (two), Proposition 2 (a) (two)
FAST = [("0.001", "0.6", 1), ("0.001", "1", 50), ("0.01", "0.6", 1), ("0.3", "1", 1)]


def _genuine(q: str, sigma: str, steps: int) -> dict:
    from certify import api

    cert = api.dpsgd_epsilon(sampling="fixed-size", adjacency="replace-one", sampling_rate=q, noise_multiplier=sigma, steps=steps, delta="1e-5")
    return cert.certificate.to_json()


def _accepted_by_both(doc: dict) -> None:
    import copy

    v = certify_kernel.check_document(copy.deepcopy(doc))
    assert v.status == 0, v.message
    assert certify_verdict(doc) == 0


@pytest.mark.parametrize("q,sigma,steps", FAST)
def test_previously_undecided_configurations_are_accepted(q, sigma, steps):
    doc = _genuine(q, sigma, steps)
    assert doc["witnesses"]["method"] == ("prop2a" if q != "0.001" else "branch-and-bound")
    _accepted_by_both(doc)


@pytest.mark.slow  # about 50 CPU s (27 certificates, the kernel about 1.7 s each)
def test_the_whole_sweep_is_accepted_by_both():
    for q, sigma, steps in SWEEP:
        _accepted_by_both(_genuine(q, sigma, steps))


def _F(alpha: int, p: Fraction, sigma: Fraction, u):
    """F(u) by (35), each of the alpha+1 integrals by mpmath quad (split at its Gaussian's centre), at the caller's precision."""
    p, D = mp.mpf(p.numerator) / p.denominator, 2 / (mp.mpf(sigma.numerator) / sigma.denominator)
    b = D * mp.sqrt(2 * u)
    total = 0
    for k in range(alpha + 1):
        f = lambda v: (1 - p + p * mp.e ** (b * v - b * b / 2)) ** (1 - alpha) * mp.e ** (k * b * v / 2) * mp.npdf(v)  # noqa: E731
        w = mp.binomial(alpha, k) * (1 - p) ** (alpha - k) * p**k * mp.e ** (k * (k - 1) * D * D / 2 - k * k * b * b / 8)
        total += w * mp.quad(f, [-mp.inf, k * b / 2 - 8, k * b / 2, k * b / 2 + 8, mp.inf])
    return total


def _fr(x) -> Fraction:
    return Fraction(str(x)) if not isinstance(x, Fraction) else x


#: (alpha, p, sigma, leaf [l, r]): the q = 0.001, sigma = 0.6 leaf the paper's kappa bounded by 1.86 (J about 0.06), and two more
CASES = [
    (2, Fraction(1, 1000), Fraction(3, 5), Fraction(1, 4), Fraction(9, 32)),
    (2, Fraction(1, 1000), Fraction(3, 5), Fraction(7, 16), Fraction(15, 32)),
    (12, Fraction(3, 10), Fraction(4), Fraction(1, 8), Fraction(3, 16)),
]


@pytest.mark.slow  # about 10-30 CPU s per case (50-digit quadratures, 3 per point)
@pytest.mark.parametrize("alpha,p,sigma,lo,hi", CASES)
def test_the_kernel_bounds_contain_50_digit_references(alpha, p, sigma, lo, hi):
    """At points of the leaf: J(u) (50-digit (35)) lies in the kernel's point enclosure and below its leaf bound; the kernel's
    enclosures of F' (17) and F'' (18) over a thin piece around u hold the differences of the 50-digit F; kappa_neg of the leaf is >= -J''."""
    d2 = 4 / sigma**2
    with working_precision(320):
        ev = bok.Points(alpha, p, d2, 40)
        kap = bok.kappa_neg(alpha, p, d2, lo, hi)
        leaf = bok.leaf_bound(ev, lo, hi, Fraction(-1))  # an unreachable target: the bound of the budget's finest pieces
        for t in (Fraction(1, 7), Fraction(6, 7)):
            u = lo + t * (hi - lo)
            with mp.workdps(50):
                um, h = mp.mpf(u.numerator) / u.denominator, mp.mpf("1e-12")
                fm, f0, fp = (_F(alpha, p, sigma, um + s * h) for s in (-1, 0, 1))
                f1, f2 = (fp - fm) / (2 * h), (fp - 2 * f0 + fm) / h**2
                J, J2 = mp.log(f0) / (alpha - 1), (f2 / f0 - (f1 / f0) ** 2) / (alpha - 1)
            jlo, jhi = bok.point(alpha, p, d2, u)
            assert jlo <= _fr(J) <= jhi and _fr(J) <= leaf[1], (u, J, jlo, jhi, leaf)
            thin = bok.kappa_neg(alpha, p, d2, u - Fraction(1, 10**9), u + Fraction(1, 10**9))  # about max(0, -J''(u)) itself
            assert -_fr(J2) <= kap and max(0, -_fr(J2)) <= thin <= max(0, -_fr(J2)) * Fraction(101, 100) + Fraction(1, 10**6), (u, J2, kap, thin)
            n = bok.moments(alpha, p, d2, u - Fraction(1, 10**6), u + Fraction(1, 10**6), 4)
            a = alpha
            e1 = interval(d2) * a * (a - 1) * (n[0, 2] - n[1, 1])
            e2 = interval(d2 * d2) * a * (a - 1) * sum((c2 * a * a + c1 * a + c0) * n[ij] for ij, (c2, c1, c0) in bok.C18.items())
            for enclosure, ref in ((n[0, 0], f0), (e1, f1), (e2, f2)):
                assert mp.mpf(enclosure.a) <= ref <= mp.mpf(enclosure.b), (u, enclosure, ref)


def _prop2a_forgeries(doc: dict) -> dict:
    """Careful forgeries of a Proposition 2 (a) certificate: balls with their decimals, texts with their numbers, re-sealed."""
    import copy

    from test_forger import reseal
    from test_kernel_bok import _set_ball

    out, q = {}, doc["quantities"]
    rho = Fraction(int(q["rho"]["ball"]["mid"][0])) * Fraction(2) ** q["rho"]["ball"]["mid"][1]
    for name, value in (("rho", rho / 2), ("J(0)", rho / 2), ("prop2a_lhs", Fraction(100)), ("epsilon", Fraction(1, 10))):
        d = copy.deepcopy(doc)
        _set_ball(d, name, value)
        out[f"{name} ball moved"] = d
    d = copy.deepcopy(doc)  # a smaller epsilon claimed everywhere it is written
    old = doc["witnesses"]["reported_epsilon"]
    new = str(Fraction(old) * 9 / 10) if "/" in old else f"{float(old) * 0.9:.9e}".replace("e+0", "e").replace("e-0", "e-")
    d["witnesses"]["reported_epsilon"] = new
    for c in d["claims"] + d["conclusions"]:
        c["statement"] = c["statement"].replace(old, new)
    d["claims"][-1]["rhs"] = new
    out["epsilon claimed 0.9 x"] = d
    d = copy.deepcopy(doc)
    d["conclusions"][0]["hypotheses"] = d["conclusions"][0]["hypotheses"][:-1]
    out["conclusion without prop2a"] = d
    d = copy.deepcopy(doc)
    d["witnesses"]["u_lower"] = "3/4"  # outside [0, 1/2] (inside it, u* is read by neither checker)
    out["u* = 3/4"] = d
    d = copy.deepcopy(doc)
    d["inputs"]["noise_multiplier"] = "3/2"  # (19) fails at sigma = 3/2, alpha = 2, p = 1/100
    for c in d["conclusions"]:
        c["statement"] = c["statement"].replace("sigma = 3/5", "sigma = 3/2")
    out["sigma raised, numbers kept"] = d
    return {k: reseal(v) for k, v in out.items()}


def test_prop2a_forgeries_refused_by_both():
    import copy

    doc = _genuine("0.01", "0.6", 50)
    assert doc["witnesses"]["method"] == "prop2a"
    forgeries = _prop2a_forgeries(doc)
    assert len(forgeries) == 8
    for name, forged in forgeries.items():
        v = certify_kernel.check_document(copy.deepcopy(forged))
        assert v.status in (4, 5), (name, v.message)
        assert certify_verdict(forged) != 0, name
