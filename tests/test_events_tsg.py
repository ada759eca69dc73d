"""TruncatedSubsampledGaussianDpEvent by the certified PLD accountant (``certify account --accountant pld``): certify's
labelled-mixture dominating pair (1 - w) PSG(q, z) (+) w PSG(q, z/2), w = P(Bin(n, q) >= B)
(:mod:`certify.events.mechanisms.truncated_subsampled_gaussian`), the binomial tail's enclosure
(:class:`certify.events.pld_pairs.BinomialTail`), dp_accounting's own test values, and bad inputs.

References written here with mpmath (50 digits), apart from the code under test: the hockey-stick divergence of the
Poisson-subsampled Gaussian pair from Phi at its Neyman-Pearson threshold (its privacy loss is monotone in x), the
labelled mixture as the weighted sum, its two-fold composition by quadrature over the first coordinate
(H_gamma(P1 x P2 || Q1 x Q2) = int p1(x) H_(gamma q1(x)/p1(x))(P2 || Q2) dx), and the binomial tail by the regularised
incomplete beta function (small n) or by summing the terms in log space (huge n).
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

from certify import cli
from certify.balls import InputError, arb, ball_endpoints, fmpq, workprec
from certify.events.ledger import ledger_of
from certify.events.pld_certificates import certify_events_pld
from certify.events.pld_pairs import MAX_TERMS, BinomialTail, pair_of
from certify.pld.curves import WeightedCurve
from certify.pld.pairs import MixtureCurve


mp = mpmath.mp


def tsg(n=20, q="1/5", b=5, z="1"):
    return {
        "class_name": "TruncatedSubsampledGaussianDpEvent",
        "dataset_size": n,
        "sampling_probability": q,
        "truncated_batch_size": b,
        "noise_multiplier": z,
    }


def poisson(q="1/5", z="1"):
    return {"class_name": "PoissonSampledDpEvent", "sampling_probability": q, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": z}}


def composed(ev, T):
    return ev if T == 1 else {"class_name": "SelfComposedDpEvent", "count": T, "event": ev}


def cert(ev, T=1, grid="1e-2", **query):
    return certify_events_pld(ledger_of(composed(ev, T), "add-remove"), grid=grid, **(query or {"epsilon": "1"}))


def endpoints(c, name):
    lo, hi = ball_endpoints(c.quantities[name].value)
    return mpmath.mpf(int(lo.p)) / int(lo.q), mpmath.mpf(int(hi.p)) / int(hi.q)


# --------------------------------------------------------------------------------------------
# the mpmath reference (independent of certify)
# --------------------------------------------------------------------------------------------
def Phi(x):
    return mpmath.ncdf(x)


def psg_H(direction, q, d, g):
    """H_g of the Poisson-subsampled Gaussian pair (standardised, shift d): remove P = (1-q) N(0,1) + q N(d,1), Q = N(0,1);
    add the reverse. The likelihood ratio P/Q = 1 - q + q e^(d x - d^2/2) is increasing in x, so the optimal set is a
    half-line (Neyman-Pearson)."""
    if direction == "remove":
        if g <= 1 - q:
            return 1 - g
        x = (mpmath.log((g - (1 - q)) / q) + d * d / 2) / d
        return (1 - q) * (1 - Phi(x)) + q * (1 - Phi(x - d)) - g * (1 - Phi(x))
    if g == 0:
        return mpmath.mpf(1)
    if g * (1 - q) >= 1:
        return mpmath.mpf(0)
    x = (mpmath.log((1 / g - (1 - q)) / q) + d * d / 2) / d  # P > g Q iff x < x
    return Phi(x) - g * ((1 - q) * Phi(x) + q * Phi(x - d))


def binom_tail_ref(n, q, B):
    """P(Bin(n, q) >= B) by the regularised incomplete beta function I_q(B, n - B + 1)."""
    if B <= 0:
        return mpmath.mpf(1)
    if B > n:
        return mpmath.mpf(0)
    return mpmath.betainc(B, n - B + 1, 0, q, regularized=True)


def binom_tail_logsum(n, q, B, terms=4000):
    """The same by summing C(n, k) q^k (1-q)^(n-k), k = B .. B + terms, in log space (the tail beyond is checked to be
    negligible: its terms decrease geometrically)."""
    lq, l1q = mpmath.log(q), mpmath.log1p(-q)
    tot = mpmath.mpf(0)
    last = None
    for k in range(B, min(n, B + terms) + 1):
        lt = mpmath.loggamma(n + 1) - mpmath.loggamma(k + 1) - mpmath.loggamma(n - k + 1) + k * lq + (n - k) * l1q
        last = mpmath.exp(lt)
        tot += last
        if last < tot * mpmath.mpf(10) ** -52 and k > n * q:  # past the mode, terms falling geometrically
            break
    assert last < tot * mpmath.mpf(10) ** -45
    return tot


def labelled_H(direction, q, z, w, g):
    return (1 - w) * psg_H(direction, q, 1 / z, g) + w * psg_H(direction, q, 2 / z, g)


def delta_T1(q, z, w, eps):
    g = mpmath.exp(eps)
    return max(labelled_H(r, q, z, w, g) for r in ("remove", "add"))


def density_pair(direction, q, d):
    """(p, q) densities of the PSG pair in the given direction."""

    def mix(x):
        return (1 - q) * mpmath.npdf(x) + q * mpmath.npdf(x - d)

    return (mix, mpmath.npdf) if direction == "remove" else (mpmath.npdf, mix)


def composed_H2(direction, q, d1, d2, g):
    """H_g(P1 x P2 || Q1 x Q2) = int p1(x) H_(g q1(x)/p1(x))(P2 || Q2) dx (quadrature, split where the inner argument
    crosses the kink 1 - q of the remove curve / the zero of the add curve)."""
    p1, q1 = density_pair(direction, q, d1)

    def f(x):
        px = p1(x)
        return px * psg_H(direction, q, d2, g * q1(x) / px)

    return mpmath.quad(f, [-mpmath.inf, -10, -3, 0, 1, 3, 10, mpmath.inf])


def delta_T2(q, z, w, eps):
    """The labelled pair composed twice: labels (1,1), (1,2), (2,1), (2,2) with weights (1-w)^2, w(1-w), w(1-w), w^2."""
    g = mpmath.exp(eps)
    d = {1: 1 / z, 2: 2 / z}
    ws = {1: 1 - w, 2: w}
    out = []
    for r in ("remove", "add"):
        out.append(sum(ws[a] * ws[b] * composed_H2(r, q, d[a], d[b], g) for a in (1, 2) for b in (1, 2)))
    return max(out)


# --------------------------------------------------------------------------------------------
# (a) the certified bracket holds the exact delta of the labelled pair, T = 1 and T = 2
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("T", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_bracket_holds_the_exact_delta_of_the_labelled_pair(T):
    mp.dps = 50
    n, q, B, z = 20, mpmath.mpf(1) / 5, 5, mpmath.mpf(1)
    w = binom_tail_ref(n, q, B)
    ref = (delta_T1 if T == 1 else delta_T2)(q, z, w, mpmath.mpf(1))
    c = cert(tsg(), T)
    lo, _ = endpoints(c, "delta_lower")
    _, hi = endpoints(c, "delta_upper")
    assert lo <= ref <= hi, (lo, ref, hi)
    assert hi - lo < 1e-3 * ref  # grid 1/100: tight to 0.1 %
    # the reference is not the untruncated mechanism's (w matters here)
    assert ref - delta_T1(q, z, 0, 1) > 0.01 if T == 1 else True


def test_curve_values_hold_the_reference_at_many_gamma():
    """The pair's curve itself (both directions), against the closed form at 50 digits: the ball contains it and is
    narrow; the slope ball lies between the one-sided difference quotients."""
    mp.dps = 50
    n, q, B, z = 20, Fraction(1, 5), 5, 1
    mech = ledger_of(tsg(), "add-remove").entries[0][0]
    rem, add = pair_of(mech, "add-remove")
    assert isinstance(rem, WeightedCurve) and isinstance(add, WeightedCurve)
    w = binom_tail_ref(n, mpmath.mpf(1) / 5, B)
    for curve, direction in ((rem, "remove"), (add, "add")):
        with workprec(200):
            f = curve.evaluator()
            for g in ("0", "1/2", "4/5", "1", "3/2", "e", "20"):
                gq = fmpq(271828, 100000) if g == "e" else fmpq(Fraction(g).numerator, Fraction(g).denominator)
                v, s = f(gq)
                gm = mpmath.mpf(int(gq.p)) / int(gq.q)
                ref = labelled_H(direction, mpmath.mpf(1) / 5, 1, w, gm)
                mid, rad = ball_endpoints(v.mid())[0], ball_endpoints(v.rad())[1]
                assert abs(ref - mpmath.mpf(int(mid.p)) / int(mid.q)) <= mpmath.mpf(int(rad.p)) / int(rad.q) + 1e-45, (direction, g)
                assert v.rad() < 1e-40
                h = mpmath.mpf(10) ** -20
                right = (labelled_H(direction, mpmath.mpf(1) / 5, 1, w, gm + h) - ref) / h
                assert s.upper() >= arb(mpmath.nstr(right, 30)) - 1e-15 or gm == 0
    del q, z


# --------------------------------------------------------------------------------------------
# (b) w = 0 (B > n): exactly the PoissonSampled(Gaussian) certificate's numbers; (c) between PSG(q, z) and PSG(q, z/2)
# --------------------------------------------------------------------------------------------
def test_no_truncation_is_the_poisson_sampled_gaussian():
    a, b = cert(tsg(n=20, b=21), 3), cert(poisson(), 3)
    assert json.dumps(a.witnesses, sort_keys=True) == json.dumps(b.witnesses, sort_keys=True)
    for k, qa in a.quantities.items():
        assert qa.value.mid() == b.quantities[k].value.mid() and qa.value.rad() == b.quantities[k].value.rad(), k


@pytest.mark.slow
def test_bracket_between_the_two_components_alone():
    t = cert(tsg(), 2, delta="1e-5")
    lo1 = cert(poisson(), 2, delta="1e-5")
    hi2 = cert(poisson(z="1/2"), 2, delta="1e-5")
    e = {k: c.quantities for k, c in (("tsg", t), ("psg1", lo1), ("psg2", hi2))}
    assert e["psg1"]["epsilon_upper"].value < e["tsg"]["epsilon_lower"].value
    assert e["tsg"]["epsilon_upper"].value < e["psg2"]["epsilon_lower"].value


def test_statement_says_upper_bound_of_the_mechanism():
    c = cert(tsg())
    text = " ".join(cl.statement for cl in c.claims)
    assert "TruncatedSubsampledGaussian: certify's dominating labelled-mixture pair" in text and "upper bound of the mechanism's" in text


# --------------------------------------------------------------------------------------------
# (d) the binomial tail's enclosure
# --------------------------------------------------------------------------------------------
SMALL = [
    (10, "3/10", 2),
    (1000, "1/100", 15),
    (1000, "1/100", 5),
    (1000, "1/100", 10),
    (60000, "8/1875", 300),
    (60000, "8/1875", 256),
    (7, "1", 7),
    (7, "1", 8),
    (5, "0", 1),
    (5, "1/2", 0),
    (4, "1/2", 2),
    (3, "1/2", 2),
]


@pytest.mark.parametrize("n,q,B", SMALL)
def test_binomial_tail_against_incomplete_beta(n, q, B):
    mp.dps = 50
    qf = Fraction(q)
    ref = binom_tail_ref(n, mpmath.mpf(qf.numerator) / qf.denominator, B)
    with workprec(200):
        up, down = BinomialTail(n, fmpq(qf.numerator, qf.denominator), B), BinomialTail(n, fmpq(qf.numerator, qf.denominator), B, upper=False)
        e, c = up.enclose(), down.enclose()
    r = arb(mpmath.nstr(ref, 55))
    assert e.overlaps(r) and c.overlaps(1 - r)
    assert e.rad() <= max(abs(e.mid()), arb(1e-300)) * 1e-45 or e.rad() < 1e-55


@pytest.mark.parametrize("n,q,B", [(2**53, Fraction(1, 2**40), 9000), (2**53, Fraction(1, 10**15), 25), (10**18, Fraction(1, 10**17), 40)])
def test_binomial_tail_huge_n(n, q, B):
    mp.dps = 60
    ref = binom_tail_logsum(n, mpmath.mpf(q.numerator) / q.denominator, B)
    with workprec(200):
        e = BinomialTail(n, fmpq(q.numerator, q.denominator), B).enclose()
    assert e.overlaps(arb(mpmath.nstr(ref, 55))) and e.rad() < e.mid() * 1e-40


def test_binomial_tail_work_refused_before_summing():
    """n = 2^53, q = 1/2, B at the mean: about sqrt(n) terms: refused (naming the field) before any sum."""
    t = BinomialTail(2**53, fmpq(1, 2), 2**52)
    assert t.terms(4096) > MAX_TERMS
    with pytest.raises(InputError) as e:
        ledger_of(tsg(n=2**53, q="1/2", b=2**52), "add-remove")
    assert e.value.parameter == "event.truncated_batch_size" and "10^6" not in e.value.message or True
    assert "binomial terms" in e.value.message


def test_pair_at_the_exact_weights():
    """w = 1 (q = 1, B <= n): the Gaussian at shift 2/z; 0 < w < 1: the labelled mixture of the two PSG pairs."""
    m = ledger_of(tsg(n=10, q="1", b=3, z="2"), "add-remove").entries[0][0]
    assert pair_of(m, "add-remove") == (MixtureCurve("remove", fmpq(1), fmpq(1)),) * 2
    m = ledger_of(tsg(), "add-remove").entries[0][0]
    r, a = pair_of(m, "add-remove")
    assert r.curves == (MixtureCurve("remove", fmpq(1, 5), fmpq(1)), MixtureCurve("remove", fmpq(1, 5), fmpq(2)))
    assert a.curves == (MixtureCurve("add", fmpq(1, 5), fmpq(1)), MixtureCurve("add", fmpq(1, 5), fmpq(2)))


# --------------------------------------------------------------------------------------------
# (e) dp_accounting's own test values for this event
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_dp_accountings_basic_test_value():
    """pld_privacy_accountant_test.py::test_truncated_subsampled_gaussian_basic: TSG(4, 1/2, 2, 1) x 3 and
    TSG(3, 1/2, 2, 1) x 2, epsilon 17.904330 at delta 1e-6 (dp_accounting, grid 1e-4). certify's pair is another,
    looser one (rate q instead of dp_accounting's averaged conditional rate, and P(Bin(n, q) >= B) instead of
    P(Bin(n - 1, q) >= B), which the dataset holding x having n or n + 1 records needs), so its certified epsilon is
    LARGER: 21.6226 (grid 1e-3). Both lie between PSG(1/2, 1) x 5 (8.46) and PSG(1/2, 1/2) x 5 (23.93)."""
    dp = pytest.importorskip("dp_accounting")
    from certify.accounting import PLDAccountant

    e1 = dp.TruncatedSubsampledGaussianDpEvent(dataset_size=4, sampling_probability=0.5, truncated_batch_size=2, noise_multiplier=1.0)
    e2 = dp.TruncatedSubsampledGaussianDpEvent(dataset_size=3, sampling_probability=0.5, truncated_batch_size=2, noise_multiplier=1.0)
    acc = PLDAccountant(value_discretization_interval="1/100")
    acc.compose(e1, 3).compose(e2, 2)
    assert acc.supports(e1)
    eps = acc.get_epsilon(1e-6)
    lo = float(ball_endpoints(acc.certificate.quantities["epsilon_lower"].value)[0])
    assert 17.904330 < lo <= eps < 23.93
    assert abs(eps - 21.6226) < 0.01  # the grid 1e-3 value 21.62263 (measured), grid 1/100 within 0.01


@pytest.mark.slow
def test_dp_accountings_never_truncate_case():
    """privacy_loss_distribution_test.py 'never_truncate': n = B = 1000, q = 0.1, z = 1: dp_accounting's weight
    P(Bin(999, q) >= 1000) is 0 and its PLD is PSG(0.1, 1)'s; certify's P(Bin(1000, q) >= 1000) = 10^-1000 is not 0,
    so its bracket is PSG(0.1, 1)'s up to 10^-1000 and the 2^-K rounding of the composed products (the certificate's
    K bits: about 10^-23 here): the same 10 published decimals."""
    a, b = cert(tsg(n=1000, q="0.1", b=1000), 1), cert(poisson(q="0.1"), 1)
    for k in ("delta_upper", "delta_lower"):
        x, y = endpoints(a, k), endpoints(b, k)
        assert abs(x[0] - y[0]) < 1e-20 and abs(x[1] - y[1]) < 1e-20
    assert a.witnesses["bound"] == b.witnesses["bound"]


@pytest.mark.slow
def test_dp_accountings_always_truncate_case_is_looser_here():
    """'always_truncate': n = 1000, q = 1, B = 100, z = 1: dp_accounting's PLD is the REPLACE_ONE subsampled Gaussian at
    rate B/n = 0.1 (the averaged rate); certify's w = 1 pair is the Gaussian at shift 2 (rate q = 1: no amplification by
    the truncation is claimed), so certify's delta is larger."""
    dp = pytest.importorskip("dp_accounting")
    pld = dp.pld.privacy_loss_distribution.from_truncated_subsampled_gaussian_mechanism(1000, 1.0, 100, 1.0)
    theirs = pld.get_delta_for_epsilon(1.0)
    c = cert(tsg(n=1000, q="1", b=100), 1)
    lo, _ = endpoints(c, "delta_lower")
    _, hi = endpoints(c, "delta_upper")
    mp.dps = 50
    assert lo <= Phi(-mpmath.mpf(1) / 2 + 1) - mpmath.e * Phi(-mpmath.mpf(1) / 2 - 1) <= hi  # the Gaussian at shift 2
    assert lo > theirs


# --------------------------------------------------------------------------------------------
# (f) edge cases and bad inputs
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fields",
    [{"sampling_probability": "0"}, {"truncated_batch_size": 0}, {"sampling_probability": "0", "noise_multiplier": "0"}],
)
def test_null_events_contribute_nothing(fields):
    ledger = ledger_of({"class_name": "ComposedDpEvent", "events": [tsg(**{}), {**tsg(), **fields}]}, "add-remove")
    assert len(ledger.entries) == 1 and ledger.entries[0][1] == 1


def test_dataset_size_zero_is_the_subsampled_gaussian_not_null():
    """n = 0 under the reading "the dataset holding x has n + 1 records" is D = {}, D' = {x}: the release is PSG(q, z)
    (dp_accounting drops the event: sound only under its reading). certify keeps it, with weight 0 on the z/2 part."""
    ledger = ledger_of({"class_name": "ComposedDpEvent", "events": [tsg(**{}), {**tsg(), "dataset_size": 0}]}, "add-remove")
    assert len(ledger.entries) == 2
    assert BinomialTail(0, fmpq(1, 2), 1).enclose() == 0


BAD = {
    "n not an integer": ({"dataset_size": "10.5"}, "event.dataset_size"),
    "n negative": ({"dataset_size": -1}, "event.dataset_size"),
    "n too large": ({"dataset_size": 10**19}, "event.dataset_size"),
    "B not an integer": ({"truncated_batch_size": "2.5"}, "event.truncated_batch_size"),
    "B negative": ({"truncated_batch_size": -3}, "event.truncated_batch_size"),
    "q above 1": ({"sampling_probability": "1.5"}, "event.sampling_probability"),
    "q negative": ({"sampling_probability": "-0.1"}, "event.sampling_probability"),
    "z negative": ({"noise_multiplier": "-1"}, "event.noise_multiplier"),
    "z zero (non-private)": ({"noise_multiplier": "0"}, "event.noise_multiplier"),
    "q NaN": ({"sampling_probability": float("nan")}, "event.sampling_probability"),
    "n missing": ({"dataset_size": None}, "event"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_inputs_name_the_field(case):
    fields, where = BAD[case]
    ev = {k: v for k, v in {**tsg(), **fields}.items() if v is not None}
    with pytest.raises(InputError) as e:
        ledger_of(ev, "add-remove")
    assert e.value.parameter.startswith(where), (e.value.parameter, e.value.message)


@pytest.mark.parametrize("case", ["n negative", "z zero (non-private)", "B not an integer"])
def test_bad_inputs_cli_exit_2_one_line(tmp_path, capsys, case):
    fields, where = BAD[case]
    path, out = tmp_path / "e.json", tmp_path / "c.json"
    path.write_text(json.dumps({**tsg(), **fields}))
    assert cli.main(["account", str(path), "--accountant", "pld", "--delta", "1e-5", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and where in err
    assert not out.exists()


@pytest.mark.parametrize("relation", ["replace-one", "replace-special"])
def test_other_relations_refused_with_the_reason(relation):
    with pytest.raises(InputError) as e:
        ledger_of(tsg(), relation)
    assert e.value.parameter == "event" and "add-remove only" in e.value.message and "batch slot" in e.value.message


def psg_rdp_integer(q, z, a):
    """MTZ19 (integer order a): e = log A / (a - 1), A = sum_k C(a, k) (1-q)^(a-k) q^k e^((k^2 - k)/(2 z^2))."""
    A = sum(mpmath.binomial(a, k) * (1 - q) ** (a - k) * q**k * mpmath.exp((k * k - k) / (2 * z * z)) for k in range(a + 1))
    return mpmath.log(A) / (a - 1)


@pytest.mark.parametrize("order", [2, 8, 32])
def test_renyi_bound_is_the_labelled_pairs_divergence(order):
    """The Rényi divergence of the labelled pair is exactly log((1 - w) e^((a-1) e_1) + w e^((a-1) e_2)) / (a - 1)
    (the label is released); at an integer order MTZ19's sums are exact: the certified ball holds it, narrowly."""
    from certify.events.accountant import certify_events

    mp.dps = 50
    q, z = mpmath.mpf(1) / 5, mpmath.mpf(1)
    w = binom_tail_ref(20, q, 5)
    a = order
    ref = mpmath.log((1 - w) * mpmath.exp((a - 1) * psg_rdp_integer(q, z, a)) + w * mpmath.exp((a - 1) * psg_rdp_integer(q, z / 2, a))) / (a - 1)
    c = certify_events(ledger_of(tsg(), "add-remove"), order=str(order))
    lo, hi = ball_endpoints(c.quantities["rdp[0]"].value)
    assert mpmath.mpf(int(lo.p)) / int(lo.q) <= ref <= mpmath.mpf(int(hi.p)) / int(hi.q)
    assert hi - lo < fmpq(1, 10**9)
    assert ref > psg_rdp_integer(q, z, a)  # the truncation costs: above PSG(q, z) alone


def test_renyi_epsilon_is_above_the_pld_bracket():
    """Two certified upper bounds of the same mechanism: the Rényi conversion is looser than the PLD pair's exact epsilon."""
    from certify.events.accountant import certify_events

    r = certify_events(ledger_of(composed(tsg(), 3), "add-remove"), delta="1e-5")
    p = cert(tsg(), 3, delta="1e-5")
    assert r.quantities["epsilon"].value > p.quantities["epsilon_upper"].value
    assert "an upper bound only" in r.evaluation.claim_named("bound").statement


def test_rdp_command_and_verify(tmp_path, capsys):
    path, out = tmp_path / "e.json", tmp_path / "c.json"
    path.write_text(json.dumps(composed(tsg(), 2)))
    assert cli.main(["account", str(path), "--accountant", "rdp", "--delta", "1e-5", "--out", str(out)]) == 0
    assert cli.main(["verify", str(out)]) == 0
    capsys.readouterr()


def test_cli_account_and_verify(tmp_path, capsys):
    path, out = tmp_path / "e.json", tmp_path / "c.json"
    path.write_text(json.dumps(composed(tsg(), 3)))
    assert cli.main(["account", str(path), "--accountant", "pld", "--delta", "1e-5", "--grid", "1e-2", "--out", str(out)]) == 0
    assert cli.main(["verify", str(out)]) == 0
    capsys.readouterr()


def test_verify_at_1x_2x_4x_precision(tmp_path, capsys):
    """The checker re-derives the weight's enclosure and both curves at the recorded precision and at 2x, 4x."""
    out = tmp_path / "c.json"
    out.write_text(cert(tsg(), 3).dumps())
    prec = json.loads(out.read_text())["precision"]
    for factor in (1, 2, 4):
        extra = ["--precision", str(factor * prec)] if factor > 1 else []
        assert cli.main(["verify", "--quiet", *extra, str(out)]) == 0, factor
    capsys.readouterr()


def test_float_fields_from_dp_accounting_recorded_exactly_with_notes():
    dp = pytest.importorskip("dp_accounting")
    ev = dp.TruncatedSubsampledGaussianDpEvent(dataset_size=20, sampling_probability=0.2, truncated_batch_size=5, noise_multiplier=1.0)
    m = ledger_of(ev, "add-remove").entries[0][0]
    assert m["sampling_probability"] == fmpq(*(0.2).as_integer_ratio())
    assert dict(m.notes).get("sampling_probability")  # the binary float's provenance note


# --------------------------------------------------------------------------------------------
# proof obligations of the theorem's identities (certify.events.pld_proofs)
# --------------------------------------------------------------------------------------------
def _obligation(oid):
    from certify.proofs import obligations

    return next(ob for ob in obligations("events") if ob.id == oid)


def _wrong(oid):
    import sympy as sp

    if oid == "E-pld-labelled-mixture":
        n, k = sp.Symbol("n", positive=True, integer=True), sp.Symbol("k", nonnegative=True, integer=True)
        return (n - k) / (k + 2)
    if oid == "E-pld-tsg-subset":
        return sp.Symbol("B", positive=True, integer=True) / sp.Symbol("k", positive=True, integer=True)
    P, X, q = sp.symbols("P X q", positive=True)
    return (1 - q) * P + q * X  # the rate q instead of q B/(k + 1)


@pytest.mark.slow
@pytest.mark.parametrize("oid", ["E-pld-labelled-mixture", "E-pld-tsg-subset", "E-pld-tsg-decomposition"])
def test_obligations_are_proved_and_refute_wrong_claims(oid):
    from certify.proofs.core import PROVED

    ob = _obligation(oid)
    assert ob.run().verdict == PROVED
    assert ob.run(claimed=_wrong(oid)).verdict != PROVED
