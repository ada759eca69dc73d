"""Tight rho for tiny p: the small-p route and the search at extra precision, against 50-digit mpmath.

For p in {1e-30, 1e-12, 1e-6} and alpha in {2, 50, 256}: the certified rho has lower end >= 0 and relative width
<= 1e-6, and contains the independent mpmath reference of tests/reference_rho.py (max over u of J(u) in (5), each
F(u) a sum of mpmath quadratures at 60 + 2 log10(1/p) digits). The references of the tiny-rho cases are stored
below (30 digits, from ``rho_ref(alpha, p, sigma, grid=2)``; the slow test recomputes them); where rho is large
(p e^((alpha-1) Delta^2/2) >> 1) the maximum is at u = 0 by Proposition 2 (a), and the reference is the mpmath
sum at u = 0, computed here. p = 1e-2200 is checked against the p^2 term of Proposition 5 (the relative error of
that term is O(p)). The remainder R of certify.dpsgd.small_p is checked against mpmath F(u) - 1 - p^2 c2(u).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mpmath as mp
import pytest

from certify.balls import fmpq
from certify.dpsgd.accountant import certify_rho, clear_memo
from certify.dpsgd.problem import make_problem
from certify.dpsgd.small_p import remainder, small_p_bounds

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fast_subset import fast_subset  # noqa: E402
from reference_rho import F_ref, J_ref, rho_ref  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

#: (alpha, p, sigma) -> (rho, maximiser u) from reference_rho.rho_ref (mpmath, 60 + 2 log10(1/p) digits)
REFERENCE = {
    (2, "1e-30", 3): ("6.21549257210197089201880593253e-61", "0.5"),
    (2, "1e-12", 3): ("6.2154925720945739601869805694e-25", "0.5"),
    (2, "1e-6", 3): ("6.21548517520250279559313554974e-13", "0.5"),
    (50, "1e-30", 3): ("1.55387314302549272300470148313e-59", "0.5"),
    (50, "1e-12", 3): ("1.55387314302364349004879155535e-23", "0.5"),
    (50, "1e-6", 3): ("1.55387129584700974349381064029e-11", "0.5"),
    (2, "1e-30", 10): ("4.12188683312648331938016748674e-62", "0.5"),
    (2, "1e-12", 10): ("4.12188683312618422782285248587e-26", "0.5"),
    (2, "1e-6", 10): ("4.12188653403515351385462989981e-14", "0.5"),
    (50, "1e-30", 10): ("1.03047170828162082984504187169e-60", "0.5"),
    (50, "1e-12", 10): ("1.03047170828154605695571683241e-24", "0.5"),
    (50, "1e-6", 10): ("1.03047163351249931395535325979e-12", "0.5"),
    (256, "1e-30", 10): ("5.27601514640189864880661438303e-60", "0.5"),
    (256, "1e-12", 10): ("5.27601514640151581161375783409e-24", "0.5"),
    (256, "1e-6", 10): ("5.2760147640716473674310688443e-12", "0.5"),
    (2, "1e-30", 1): ("9.44181878684271777017596673249e-59", "0.5"),
    (2, "1e-12", 1): ("9.4418187708747788823795176842e-23", "0.5"),
    (2, "1e-6", 1): ("9.4270922538547511205564606033e-11", "0.5"),
}
#: large-rho cases (Proposition 2 (a) holds: the maximum is J(0)); reference = mpmath sum at u = 0
LARGE = [(256, "1e-12", 3), (256, "1e-6", 3), (50, "1e-30", 1), (256, "1e-30", 1), (50, "1e-12", 1), (256, "1e-6", 1)]
REL = fmpq(1, 10**6)


def _fmpq(x) -> fmpq:
    """An mpf as an exact rational (its binary value; no rounding to the ambient precision)."""
    m, e = x.man_exp
    return fmpq(int(m) * 2**e) if e >= 0 else fmpq(int(m), 2 ** (-e))


def _check(prob, ref: fmpq):
    clear_memo()
    out = certify_rho(prob)
    rho = out.certificate.quantities["rho"].value
    lo, hi = rho.lower().fmpq(), rho.upper().fmpq()
    assert lo >= 0, (prob, lo)
    assert (hi - lo) <= REL * hi, (prob, float((hi - lo) / hi))
    # the reference is a 30-digit decimal of the true maximum
    slack = ref / 10**25
    assert lo - slack <= ref <= hi + slack, (prob, float(lo), float(ref), float(hi))
    return out


@pytest.mark.parametrize("key", sorted(REFERENCE))
def test_tiny_rho_tight_and_inside_the_reference(key):
    alpha, p, sigma = key
    _check(make_problem(str(alpha), p, str(sigma)), _decimal(REFERENCE[key][0]))


def _decimal(text: str) -> fmpq:
    from fractions import Fraction

    f = Fraction(text)
    return fmpq(f.numerator, f.denominator)


@pytest.mark.parametrize("key", LARGE)
def test_large_rho_is_J0_of_the_closed_form(key):
    alpha, p, sigma = key
    with mp.workdps(60):
        ref = J_ref(alpha, mp.mpf(p), sigma, 0, 60)
    out = _check(make_problem(str(alpha), p, str(sigma)), _fmpq(ref))
    assert out.facts.method == "prop2a"


def test_issue_examples_have_nonnegative_tight_bounds():
    """alpha = 50, p = 1e-30, sigma = 3: a nonnegative, tight enclosure (a loose one would be [-7.76e-31, 6.32e-22])."""
    out = _check(make_problem("50", "1e-30", "3"), _decimal(REFERENCE[(50, "1e-30", 3)][0]))
    assert out.facts.method == "small-p"
    proc = subprocess.run(
        [sys.executable, "-m", "certify", "rho", "--alpha", "50", "--sampling-rate", "1e-30", "--noise-multiplier", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "in [1.553873143e-59, 1.553873144e-59]" in proc.stdout, proc.stdout


def test_p_1e_2200_against_proposition_5():
    """p = 1e-2200, alpha = 2, sigma = 1 (a loose enclosure would be [-1.35e-30, 1.16e-21]): rho = alpha (e^(D^2) - e^(D^2/2)) p^2
    (1 + O(p)) by Proposition 5; the O(p) term is far below the ball's relative width."""
    for alpha, sigma in ((2, 1), (50, 3), (256, 10)):
        prob = make_problem(str(alpha), "1e-2200", str(sigma))
        b = small_p_bounds(prob)
        lo, hi = b["rho_lo"].lower().fmpq(), b["rho_hi"].upper().fmpq()
        assert lo > 0 and (hi - lo) <= REL * hi
        with mp.workdps(50):
            D2 = mp.mpf(4) / sigma**2
            lead = alpha * (mp.exp(D2) - mp.exp(D2 / 2)) * mp.mpf("1e-2200") ** 2
            assert _fmpq(lead * (1 - mp.mpf(10) ** -40)) <= hi and lo <= _fmpq(lead * (1 + mp.mpf(10) ** -40))


def test_p_1e_2200_end_to_end():
    """The CLI at p = 1e-2200 (rho ~ 1e-4399, whose exact text needs more than Python's default 4300 digits: the
    dpsgd package raises that limit) is tight, and the checker re-checks it."""
    args = ["rho", "--alpha", "2", "--sampling-rate", "1e-2200", "--noise-multiplier", "1"]
    proc = subprocess.run([sys.executable, "-m", "certify", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "small-p route" in proc.stdout and "in [9.441818786e-4399, 9.441818787e-4399]" in proc.stdout


REMAINDER_CASES = [(2, "1e-3", 2), (8, "1e-3", 3), (3, "1e-2", 2), (4, "1e-3", 1)]


# fast suite: the largest p (where the remainder is tightest); the other three are slow
@pytest.mark.parametrize("alpha,p,sigma", fast_subset(REMAINDER_CASES, keep=[REMAINDER_CASES[2]]))
def test_remainder_bounds_the_taylor_error(alpha, p, sigma):
    """|F(u) - 1 - p^2 c2(u)| <= R (small_p.remainder) at several u, F from the mpmath reference."""
    R = remainder(make_problem(str(alpha), p, str(sigma))).upper().fmpq()
    with mp.workdps(60):
        pp, D2 = mp.mpf(p), mp.mpf(4) / sigma**2
        for u in (mp.mpf(0), mp.mpf(1) / 3, mp.mpf(1) / 2):
            c2 = alpha * (alpha - 1) / mp.mpf(2) * (mp.exp(D2) + mp.exp(2 * u * D2) - 2 * mp.exp(u * D2))
            err = abs(F_ref(alpha, pp, sigma, u, 60) - 1 - pp**2 * c2)
            assert _fmpq(err) <= R, (alpha, p, sigma, u, err, float(R))
            assert err > 0


def test_small_p_certificate_is_rechecked(tmp_path):
    import json

    from certify.certificate import digest_of
    from certify.verify import verify_text

    cert = tmp_path / "c.json"
    proc = subprocess.run(
        [sys.executable, "-m", "certify", "rho", "--alpha", "2", "--sampling-rate", "1e-30", "--noise-multiplier", "1", "--out", str(cert)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(cert.read_text())
    assert doc["witnesses"]["method"] == "small-p"
    assert verify_text(cert.read_text()).ok
    # the small-p claim is decided by the checker: at p = 1/2 the remainder swamps the p^2 term
    doc["inputs"]["sampling_rate"] = "1/2"
    doc["digest"] = digest_of(doc)
    assert not verify_text(json.dumps(doc, indent=2) + "\n").ok


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(REFERENCE))
def test_stored_references_recomputed(key):
    alpha, p, sigma = key
    ref, u = rho_ref(alpha, p, sigma, grid=2)
    with mp.workdps(40):
        assert abs(ref / mp.mpf(REFERENCE[key][0]) - 1) < mp.mpf(10) ** -28
        assert mp.mpf(u) == mp.mpf(REFERENCE[key][1])
