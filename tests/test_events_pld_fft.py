"""Products of different PLDs by the FFT (issue 24): certify.pld.fft's factors and events/pld certificates.

Independent references only:
* the float cyclic product prod_k x_k^(*c_k) against EXACT integer arithmetic (FLINT fmpz_poly powers and products
  reduced mod x^N - 1): the claimed bound E holds coefficient by coefficient, with and without the refinement, with
  a factor of count 1;
* the read-off of each side against the EXACT untruncated product of the same one-step measures (FLINT powers and
  products, then certify.pld.readoff): the FFT's pessimistic upper endpoint above it, the optimistic lower endpoint
  below it, tight near eps(delta);
* the events/pld certificate composed by the FFT against the same ledger composed by exact products, and the
  50-digit mpmath analytic Gaussian (a ledger of Gaussians only): the brackets overlap / contain the truth, the
  FFT's is no wider than 1.1x; a forger's edits of the plan, the method and the texts are refused.
"""

from __future__ import annotations

import copy
import json
import random

import mpmath as mp
import numpy as np
import pytest
from flint import arb, fmpq, fmpz_poly

from certify import cli, verify
from certify.balls import InputError, exact, workprec
from certify.certificate import digest_of
from certify.events.ledger import ledger_of
from certify.events.pld_certificates import certify_events_pld, uses_fft
from certify.events.pld_pairs import entries_of
from certify.pld import fft, ledger, readoff
from certify.pld.compose import Pld
from pld_event_helpers import bracket, composed, gauss, laplace, poisson_gauss, selfc

mp.mp.dps = 50


def poisson_laplace(q, b):
    return {"class_name": "PoissonSampledDpEvent", "sampling_probability": q, "event": laplace(b)}


DELTA = exact("1e-6")


# ------------------------------------------------------------------------------------------------
# the float product against exact integers
# ------------------------------------------------------------------------------------------------
def _exact_cyclic(factors: list[tuple[list[int], int]], N: int) -> list[int]:
    c = fmpz_poly([1])
    for ints, T in factors:
        c *= fmpz_poly(ints) ** T
    out = [0] * N
    for k, v in enumerate(c.coeffs()):
        out[k % N] += int(v)
    return out


@pytest.mark.parametrize("thr", [fmpq(0), fmpq(1, 2**10)])
@pytest.mark.parametrize("seed,shape,N", [(1, [(20, 7), (9, 1), (30, 3)], 128), (2, [(5, 40), (12, 30)], 256), (3, [(40, 1), (40, 1)], 128)])
def test_cyclic_product_bound_holds_coefficientwise(seed, shape, N, thr):
    rng = random.Random(seed)
    e = 16  # x_i = k_i 2^-e exactly, so FLINT's integer product is the exact convolution
    xs, kp_all, ko_all = [], [], []
    for n, c in shape:
        kp = [rng.randrange(0, 2**e // n) if rng.random() > 0.3 else 0 for _ in range(n)]
        ko = [rng.randrange(0, 2**e // n) for _ in range(n)]
        kp[0] = kp[0] or 1
        kp = [k * 2**e // sum(kp) for k in kp]  # total mass just below 1: the low frequencies matter
        xs.append((np.array([k * 2.0**-e for k in kp]), np.array([k * 2.0**-e for k in ko]), c))
        kp_all.append((kp, c))
        ko_all.append((ko, c))
    Yp, Yo, E, parts = fft.cyclic_product_pair(xs, N, thr)
    T = sum(c for _, c in shape)
    assert E.is_finite() and E < 1e-9, E
    worst = 0.0
    with workprec(fft.PREC):
        for Y, ks in ((Yp, kp_all), (Yo, ko_all)):
            ex = _exact_cyclic(ks, N)
            for p in range(N):
                err = abs(arb(float(Y[p])) / N - arb(fmpq(ex[p], 2 ** (e * T))))
                assert err <= E, (p, err, E)  # decided in balls
                worst = max(worst, float(err.upper().mid()))
    assert worst > 0  # the float result is not exact: E = 0 would fail
    if thr and seed == 2:
        assert parts["refined"]["p"] > 0  # the refinement of a factor is exercised


def test_one_factor_is_the_t_fold_power():
    """x^(*20) as one factor and as the product x^(*12) x^(*8): other float operations, the same exact convolution,
    so the two results differ by at most the sum of their bounds (coefficients scaled by N)."""
    rng = random.Random(7)
    x = np.array([rng.random() for _ in range(30)])
    x /= x.sum() * 1.001
    a = fft.cyclic_product_pair([(x, x, 20)], 64, fmpq(0))
    b = fft.cyclic_product_pair([(x, x, 12), (x, x, 8)], 64, fmpq(0))
    assert np.allclose(a[0], b[0], rtol=0, atol=float((a[2] + b[2]).upper().mid()) * 64)


# ------------------------------------------------------------------------------------------------
# a ledger's product against the exact product of its one-step measures
# ------------------------------------------------------------------------------------------------
def _power(p: Pld, T: int) -> Pld:
    F = p.finite_mass()
    return Pld(p.poly**T, p.offset * T, (F + p.inf) ** T - F**T, p.K * T, p.pessimistic)


def _times(a: Pld, b: Pld) -> Pld:
    Fa, Fb = a.finite_mass(), b.finite_mass()
    inf = (Fa + a.inf) * (Fb + b.inf) - Fa * Fb
    return Pld(a.poly * b.poly, a.offset + b.offset, inf, a.K + b.K, a.pessimistic)


SMALL = composed(selfc(laplace("20"), 6), selfc(poisson_gauss("1/10", "2"), 12), gauss("4"))


def _factors(event, grid, relation="add-remove"):
    entries = entries_of(ledger_of(event, relation))
    h = exact(grid)
    pl = ledger.plan(entries, DELTA, h, fft=True)
    out = ledger.LedgerRun(pl)
    return {d: ledger.fft_factors(entries, out, d) for d in ledger.directions(entries)}, h


def test_ledger_product_encloses_the_exact_product():
    facs, h = _factors(SMALL, "1e-2")
    assert len(facs) == 2 and all(len(fs) == 3 for fs in facs.values())  # both directions, three factors
    for d, fs in facs.items():
        fp = fft.fft_plan(fs, DELTA, h)
        assert fp.T == sum(c for *_, c in fs) and fp.threshold == 0  # several factors: the plain bound
        up, lo = fft.compose_pair(fs, fp)
        ex = {}
        for side in (0, 1):
            acc = None
            for f in fs:
                p = _power(f[side], f[2])
                acc = p if acc is None else _times(acc, p)
            ex[side] = acc
        with workprec(fft.PREC):
            e_up = readoff.epsilon_pass([up], DELTA, h)
        assert e_up is not None and e_up >= up.La
        near = [e_up - fmpq(1, 20), e_up, e_up + fmpq(1, 20)]
        for eps in [up.La, (up.La + up.Ltop) / 2, up.Ltop] + near:
            xu, xl = readoff.delta_at(ex[0], eps, h), readoff.delta_at(ex[1], eps, h)
            fu, fl = readoff.delta_at(up, eps, h), readoff.delta_at(lo, eps, h)
            assert fu.is_finite() and arb(fu.upper()) >= xu, (d, eps, fu, xu)  # sound, decided in balls
            assert fl.is_finite() and arb(fl.lower()) <= xl, (d, eps, fl, xl)
            if eps in near:
                assert fu.upper() <= xu * (1 + arb(1e-6)) + arb(1e-15), (d, eps, fu, xu)  # tight
                assert fl.lower() >= xl * (1 - arb(1e-6)) - arb(1e-15), (d, eps, fl, xl)


def test_mixed_units_and_bad_factors_are_refused():
    facs, h = _factors(SMALL, "1e-2")
    fs = facs["remove"]
    with pytest.raises(InputError):
        fft.fft_plan([], DELTA, h)
    with pytest.raises(InputError):
        fft.fft_plan([(fs[0][0], fs[0][1], 0)], DELTA, h)  # count 0
    with pytest.raises(InputError):
        fft.fft_plan([(fs[0][0], fs[0][1])], DELTA, h)  # not a triple
    odd = Pld(fs[1][0].poly, fs[1][0].offset, fs[1][0].inf, fs[1][0].K + 1, True)
    with pytest.raises(InputError):
        fft.fft_plan([fs[0], (odd, fs[1][1], 2)], DELTA, h)  # different units 2^-K
    fp = fft.fft_plan(fs, DELTA, h)
    with pytest.raises(InputError):
        fft.compose_pair(fs[:2], fp)  # the plan was made for other factors


# ------------------------------------------------------------------------------------------------
# events/pld certificates composed by the FFT
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fft_cert():
    return certify_events_pld(ledger_of(SMALL, "add-remove"), delta="1e-6", grid="1e-2", composition="fft")


def test_fft_certificate_verifies_and_agrees_with_the_exact_products(fft_cert):
    doc = json.loads(fft_cert.dumps())
    assert set(doc["witnesses"]["fft"]) == {"remove", "add"} and "chain" not in doc["witnesses"]
    for factor in (1, 2):
        rep = verify.verify_document(copy.deepcopy(doc), factor * doc["precision"])
        assert rep.exit_code == 0 and rep.ok, rep.problems
    ex = certify_events_pld(ledger_of(SMALL, "add-remove"), delta="1e-6", grid="1e-2", composition="exact")
    assert "fft" not in ex.witnesses
    lo_f, up_f = bracket(fft_cert, "epsilon_lower", "epsilon_upper")
    lo_e, up_e = bracket(ex, "epsilon_lower", "epsilon_upper")
    assert lo_f <= up_e and lo_e <= up_f  # both enclose the exact epsilon of the composed pairs
    assert up_f - lo_f <= mp.mpf("1.1") * (up_e - lo_e)
    assert "FFT" in next(c.statement for c in fft_cert.claims if c.name == "privacy")
    assert not any("FFT" in c.statement for c in ex.claims)


def test_gaussian_ledger_by_fft_contains_the_analytic_truth():
    """2000 Gaussian events (folded into one Gaussian of shift M = sqrt(2000) / 40, discretised as factors): the
    default composition is the FFT (>= 1000 events); the bracket contains the 50-digit analytic Gaussian's epsilon
    (Balle-Wang 2018 Thm 8) and is within 1e-3 relative."""
    event = selfc(gauss("40"), 2000)
    assert uses_fft(ledger_of(event, "add-remove"), None) and not uses_fft(ledger_of(selfc(gauss("40"), 999), "add-remove"), None)
    cert = certify_events_pld(ledger_of(event, "add-remove"), delta="1e-6", grid="1e-3")
    assert "fft" in cert.witnesses
    mu = mp.sqrt(2000) / 40

    def dlt(eps):
        return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)

    lo, hi = mp.mpf(0), mp.mpf(60)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if dlt(mid) > mp.mpf("1e-6") else (lo, mid)
    truth = (lo + hi) / 2
    el, eu = bracket(cert, "epsilon_lower", "epsilon_upper")
    assert el <= truth <= eu and eu / el - 1 < mp.mpf("1e-3"), (el, truth, eu)


def test_target_epsilon_query_by_fft():
    led = ledger_of(SMALL, "add-remove")
    f = certify_events_pld(led, epsilon="1", grid="1e-2", composition="fft")
    e = certify_events_pld(led, epsilon="1", grid="1e-2", composition="exact")
    lf, uf = bracket(f, "delta_lower", "delta_upper")
    le, ue = bracket(e, "delta_lower", "delta_upper")
    assert lf <= ue and le <= uf and "fft" in f.witnesses
    rep = verify.verify_document(json.loads(f.dumps()), f.precision)
    assert rep.ok, rep.problems


def _refused(doc, needle=None):
    doc["digest"] = digest_of(doc)
    rep = verify.verify_document(doc, doc["precision"])
    assert rep.exit_code != 0 and not rep.ok, rep.problems
    if needle is not None:
        assert any(needle in p for p in rep.problems), rep.problems


@pytest.mark.parametrize(
    "edit",
    [
        ("lam", lambda v: str(fmpq(v) * fmpq(3, 4))),
        ("N", lambda v: v * 2),
        ("a", lambda v: v + 1),
        ("base", lambda v: v - 1),
        ("j0", lambda v: v + 1),
        ("threshold", lambda v: "1/1024"),
        ("T", lambda v: v + 1),
    ],
    ids=lambda e: e[0],
)
def test_forged_plan_is_refused(fft_cert, edit):
    doc = json.loads(fft_cert.dumps())
    key, f = edit
    doc["witnesses"]["fft"]["remove"][key] = f(doc["witnesses"]["fft"]["remove"][key])
    _refused(doc, "witnesses.fft.remove")


def test_forged_method_and_texts_are_refused(fft_cert):
    doc = json.loads(fft_cert.dumps())
    d = copy.deepcopy(doc)
    d["witnesses"]["chain"] = "left-to-right"  # both methods at once
    _refused(d, "witnesses.chain")
    d = copy.deepcopy(doc)
    del d["witnesses"]["fft"]  # the exact products instead: the read-off points are not theirs
    _refused(d)
    d = copy.deepcopy(doc)
    d["witnesses"]["fft"] = {"remove": d["witnesses"]["fft"]["remove"]}  # a direction missing
    _refused(d, "witnesses.fft")
    d = copy.deepcopy(doc)
    i = next(i for i, c in enumerate(d["claims"]) if c["name"] == "privacy")
    text = d["claims"][i]["statement"]
    d["claims"][i]["statement"] = text.replace(", composed by a tilted float FFT with a proven error bound", "")
    assert d["claims"][i]["statement"] != text
    _refused(d)  # the texts are re-derived from the checker's own run
    d = copy.deepcopy(doc)
    for q in ("delta_upper", "delta_lower"):
        d["quantities"][q]["equation"] = d["quantities"][q]["equation"].replace("fft:", "readoff:")
    _refused(d)


def test_cli_composition_flag(tmp_path):
    path = tmp_path / "ev.json"
    path.write_text(json.dumps(SMALL))
    out = tmp_path / "c.json"
    args = ["account", str(path), "--accountant", "pld", "--delta", "1e-6", "--grid", "1e-2"]
    assert cli.main(args + ["--composition", "fft", "--out", str(out)]) == 0
    assert "fft" in json.loads(out.read_text())["witnesses"]
    assert cli.main(["verify", str(out)]) == 0
    assert cli.main(["account", str(path), "--delta", "1e-6", "--composition", "fft"]) == 2  # an rdp run: refused
    with pytest.raises(SystemExit) as e:
        cli.main(args + ["--composition", "float"])
    assert e.value.code == 2


def test_summary_names_the_method(fft_cert):
    from certify.events.pld_certificates import summary_pld

    assert "tilted float FFT composition" in summary_pld(fft_cert, 1.0).splitlines()[0]


def test_a_given_grid_too_coarse_for_a_lower_bound_is_said(tmp_path, capsys):
    """A Poisson-sampled Laplace at grid 1e-2: each step's loss (about 5e-4) rounds to a whole grid step, so the
    bracket is as wide as T h: the command says so in one stderr line (as certify dpsgd does); a tight run says
    nothing."""
    coarse, tight = tmp_path / "coarse.json", tmp_path / "tight.json"
    coarse.write_text(json.dumps(selfc(poisson_laplace("1/100", "20"), 100)))
    tight.write_text(json.dumps(selfc(gauss("4"), 3)))
    base = ["--accountant", "pld", "--delta", "1e-6", "--grid", "1e-2"]
    assert cli.main(["account", str(coarse), *base]) == 0
    assert "too coarse for a useful lower bound" in capsys.readouterr().err
    assert cli.main(["account", str(tight), *base]) == 0
    assert "too coarse" not in capsys.readouterr().err
