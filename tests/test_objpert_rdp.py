"""`certify objpert-rdp`: balls against independent 60-digit mpmath references, certificates, bad input."""

import json
import os
import subprocess
import sys
from fractions import Fraction

import mpmath
import pytest

from certify import cli
from certify.balls import InputError, ctx, fmpq
from certify.objpert_rdp import curve as C
from certify.objpert_rdp.certificates import KIND, certify_curve
from certify.verify import verify_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
mp = mpmath.mp


def mpf(q):
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


# ------------------------------------------------------------------ independent references (mpmath, 60 digits)
def ref_rdp(L, nu, s, lam, alpha):
    with mpmath.workdps(60):
        m = mpf(L) / mpf(nu)
        a = mpf(alpha)
        g = mpmath.log(2 * mpmath.ncdf(m * (a - 1))) / (a - 1)
        return mpmath.log(1 + mpf(s) / mpf(lam)) + a * m**2 / 2 + g


def ref_zcdp(L, nu, s, lam):
    with mpmath.workdps(60):
        m = mpf(L) / mpf(nu)
        return mpmath.log(1 + mpf(s) / mpf(lam)) + m**2 / 2 + mpmath.sqrt(2 / mpmath.pi) * m


def ref_delta(L, nu, s, lam, eps):
    """delta(eps) = E[(1 - e^(eps - l))_+] for l = eps_det + mu^2/2 + mu|Z|, by numerical quadrature
    (independent of the closed form used by the accountant). The quadrature's error is absolute at the
    working precision, so it runs at 120 digits for delta values as small as 1e-60."""
    with mpmath.workdps(120):
        m = mpf(L) / mpf(nu)
        ed = mpmath.log(1 + mpf(s) / mpf(lam))
        e = mpf(eps) - ed
        f = lambda z: (1 - mpmath.exp(e - m**2 / 2 - m * z)) * mpmath.npdf(z)
        t = max(mpmath.mpf(0), e / m - m / 2)
        return 2 * mpmath.quad(f, [t, t + 1, t + 5, t + 20, mpmath.inf])


def inside(x, ref):
    lo, hi = x.lower().fmpq(), x.upper().fmpq()
    with mpmath.workdps(60):
        return mpf(Fraction(int(lo.p), int(lo.q))) <= ref <= mpf(Fraction(int(hi.p), int(hi.q)))


def rel_width(x):
    r, m = x.rad().fmpq(), abs(x.mid().fmpq())
    return Fraction(int(r.p), int(r.q)) / Fraction(int(m.p), int(m.q))


CASES = [
    ("1", "2", "1/4", "1", "3"),
    ("1", "1", "0", "1", "1000001/1000000"),
    ("5", "1", "1", "1e-3", "2"),
    ("1/10", "3", "2", "7", "50"),
    ("2", "1/2", "1/3", "1/5", "1.5"),
]


@pytest.mark.parametrize("L,nu,s,lam,alpha", CASES)
def test_rdp_and_zcdp_sound_and_tight(L, nu, s, lam, alpha):
    c = C.make_curve(L, nu, s, lam)
    a = C.check_alpha(alpha)
    with ctx.workprec(128):
        r, z = C.rdp(c, a), C.zcdp(c)
    aq = Fraction(int(a.p), int(a.q))
    assert inside(r, ref_rdp(L, nu, s, lam, aq))
    assert inside(z, ref_zcdp(L, nu, s, lam))
    assert rel_width(r) < Fraction(1, 10**30) and rel_width(z) < Fraction(1, 10**30)


@pytest.mark.parametrize(
    "L,nu,s,lam,eps",
    [
        ("1", "2", "1/4", "1", "2"),
        ("1", "1", "0", "1", "1/10"),
        ("1", "1", "1/4", "1", "0"),
        ("3", "1", "1", "1", "20"),
        ("1/2", "1", "1/1000", "1", "6"),
    ],
)
def test_delta_profile_sound_and_tight(L, nu, s, lam, eps):
    c = C.make_curve(L, nu, s, lam)
    with ctx.workprec(128):
        d = C.delta(c, C.check_epsilon(eps))
    ref = ref_delta(L, nu, s, lam, Fraction(eps))
    assert inside(d, ref), (d, ref)
    assert rel_width(d) < Fraction(1, 10**25)


def test_g_decreases_and_limits():
    c = C.make_curve("1", "1", "0", "1")
    with ctx.workprec(128):
        vals = [C.g(c, fmpq(1) + fmpq(1, 10**k)) for k in (0, 2, 6, 12)]
        top = (2 / C.arb.pi()).sqrt()
    for a, b in zip(vals, vals[1:]):
        assert a < b  # g decreases in alpha (alpha decreasing along the list)
    assert abs(vals[-1] - top) < C.arb(10) ** -11  # -> sqrt(2/pi) L/nu as alpha -> 1


def test_certificate_verifies_and_rejects_tampering():
    cert = certify_curve("1", "2", "1/4", "1", alpha="3", epsilon="2", delta="1e-6")
    assert cert.kind == KIND
    text = cert.dumps()
    rep = verify_text(text)
    assert rep.ok, rep.problems
    doc = json.loads(text)
    w = doc["witnesses"]
    hi, lo = Fraction(w["epsilon_upper"]), Fraction(w["epsilon_lower"])
    assert lo < hi and (hi - lo) / hi < Fraction(1, 10**8)
    # the bracket contains the reference epsilon: delta(lo) > 1e-6 >= delta(hi)
    assert ref_delta("1", "2", "1/4", "1", hi) <= mpmath.mpf("1e-6") < ref_delta("1", "2", "1/4", "1", lo)
    doc["witnesses"]["epsilon_upper"] = w["epsilon_lower"]  # a too-small epsilon claimed to work
    bad = verify_text(json.dumps(doc, indent=2) + "\n")
    assert not bad.ok


@pytest.mark.parametrize(
    "opt,value,param",
    [
        ("--nu", "0", "--nu"),
        ("--L", "-1", "--L"),
        ("--s", "-1/2", "--s"),
        ("--lambda", "0", "--lambda"),
        ("--alpha", "1", "--alpha"),
        ("--delta", "1", "--delta"),
        ("--epsilon", "-1", "--epsilon"),
        ("--L", "0.x", "--L"),
    ],
)
def test_bad_input_one_line_error(opt, value, param, capsys):
    args = {"--L": "1", "--nu": "1", "--s": "1/4", "--lambda": "1", "--alpha": "2"}
    args[opt] = value
    argv = ["objpert-rdp"] + [f"{k}={v}" for k, v in args.items()]
    rc = cli.main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and param in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_floats_refused():
    with pytest.raises(InputError):
        C.make_curve(0.1, "1", "0", "1")


def test_cli_json_and_verify(tmp_path):
    out = tmp_path / "r.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "certify",
            "objpert-rdp",
            "--L",
            "1",
            "--nu",
            "2",
            "--s",
            "1/4",
            "--lambda",
            "1",
            "--alpha",
            "3",
            "--json",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["kind"] == "referee/objpert-rdp" and "renyi_alpha" in doc["quantities"]
    v = subprocess.run([sys.executable, "-m", "certify", "verify", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert v.returncode == 0 and "VERIFIED" in v.stdout
    h = subprocess.run([sys.executable, "-m", "certify", "objpert-rdp", "--help"], capture_output=True, text=True, cwd=ROOT)
    for word in ("--L", "--nu", "--s", "--lambda", "--alpha", "--epsilon", "--delta", "zCDP"):
        assert word in h.stdout


def test_tiny_mu_needs_no_epsilon():
    # mu = 1e-8, s = 0: delta(0) = 1 - 2 Phi(-mu) ~ 8e-9 <= 1e-6, so epsilon = 0 is certified
    cert = certify_curve("1", "100000000", "0", "1", delta="1e-6")
    assert cert.to_json()["witnesses"] == {"epsilon_upper": "0", "epsilon_lower": None}
    assert verify_text(cert.dumps()).ok


@pytest.mark.parametrize("alpha", ["1000000", "1e-12/1e-12", "1000000000001/1000000000000"])
def test_extreme_orders(alpha):
    c = C.make_curve("3", "1", "1/2", "1")
    a = C.check_alpha(alpha) if alpha != "1e-12/1e-12" else None
    if a is None:
        with pytest.raises(InputError):
            C.check_alpha(alpha)
        return
    with ctx.workprec(128):
        r = C.rdp(c, a)
    assert inside(r, ref_rdp("3", "1", "1/2", "1", Fraction(int(a.p), int(a.q))))
