"""The direct discretisation of pairs with kinks (certify.pld.direct: losses rounded to the grid) against independent
references at 50 digits (mpmath, written here apart from the code under test).

* Laplace(b) T-fold: P's loss law is an atom eps0 (P-mass 1/2), an atom -eps0 (P-mass e^(-eps0)/2) and a density
  e^((l - eps0)/2)/4 on (-eps0, eps0) (from Lap(0, b) vs Lap(1, b) directly: x <= 0, x >= 1, 0 < x < 1). The T-fold
  delta(eps) = E[(1 - e^(eps - S))_+] is summed over the counts (n+, n-, k) of the three parts; the sum of k continuous
  parts has the density (e^(-eps0/2)/4)^k e^(s/2) U_k(s), U_k the k-fold convolution of the indicator of (-eps0, eps0)
  (an Irwin-Hall density), integrated piecewise by quadrature. Counts k > KMAX are dropped, and their probability added
  to the upper reference (a rigorous tail: the integrand is <= 1).
* randomized response and the KOV pair: exact enumeration of the T-fold outcomes.
Every certified epsilon bracket [lo, hi] must satisfy delta_ref(hi) <= delta < delta_ref(lo) (the exact epsilon is
inside) and be within 1% of the exact epsilon.
"""

from __future__ import annotations

from fractions import Fraction
import json

import mpmath as mp
import pytest

from certify import verify
from certify.balls import ball_endpoints
from certify.events.ledger import ledger_of
from certify.events.pld_certificates import certify_events_pld
from pld_event_helpers import eps_bracket, mp_of, ref_discrete_delta, selfc

KMAX = 14


def _irwin_hall(k, u):
    """Density of the sum of k uniforms on (0, 1) at u."""
    if u <= 0 or u >= k:
        return mp.mpf(0)
    return sum((-1) ** j * mp.binomial(k, j) * (u - j) ** (k - 1) for j in range(int(mp.floor(u)) + 1)) / mp.factorial(k - 1)


_GL = {}


def _gl(a, b, f, degree=4):
    """Gauss-Legendre with 3 * 2^(degree-1) nodes on [a, b] (mpmath's nodes at the working precision): the integrands
    here are a polynomial of degree < 15 times e^(+-s/2) on pieces of width 2 eps0 <= 0.04, far inside its exactness
    (test_laplace_reference_nodes compares 24 and 48 nodes)."""
    if degree not in _GL:
        _GL[degree] = mp.calculus.quadrature.GaussLegendre(mp.mp).calc_nodes(degree, mp.mp.prec)
    half, mid = (b - a) / 2, (a + b) / 2
    return half * sum(w * f(mid + half * x) for x, w in _GL[degree])


def laplace_delta(eps0, T, eps, degree=4):
    """(lower, upper) references of the T-fold Laplace delta(eps) (module docstring)."""
    eps0, eps = mp.mpf(eps0), mp.mpf(eps)
    A, B, C = mp.mpf(1) / 2, mp.e ** (-eps0) / 2, (1 - mp.e ** (-eps0)) / 2
    w = 2 * eps0
    pieces = {}

    def parts(k):  # knots and, per piece, the integrals of e^(+s/2) U_k and e^(-s/2) U_k (times the constant)
        if k not in pieces:
            top = k * eps0
            knots = [-top + w * m for m in range(k + 1)]
            scale = (mp.e ** (-eps0 / 2) / 4) ** k * w ** (k - 1)
            U = lambda s: scale * _irwin_hall(k, (s + top) / w)  # noqa: E731
            ints = [
                (_gl(a, b, lambda s: mp.e ** (s / 2) * U(s), degree), _gl(a, b, lambda s: mp.e ** (-s / 2) * U(s), degree))
                for a, b in zip(knots, knots[1:])
            ]
            pieces[k] = (knots, ints, U)
        return pieces[k]

    def J(k, c):  # int_{s > c} (1 - e^(c - s)) (e^(-eps0/2)/4)^k e^(s/2) U_k(s) ds
        knots, ints, U = parts(k)
        if c >= knots[-1]:
            return mp.mpf(0)
        out = mp.mpf(0)
        for i, (a, b) in enumerate(zip(knots, knots[1:])):
            if a >= c:
                out += ints[i][0] - mp.e**c * ints[i][1]
            elif b > c:
                out += _gl(c, b, lambda s: (1 - mp.e ** (c - s)) * mp.e ** (s / 2) * U(s), degree)
        return out

    total = mp.mpf(0)
    for k in range(min(T, KMAX) + 1):
        for npos in range(T - k + 1):
            nneg = T - k - npos
            a = (npos - nneg) * eps0
            coef = mp.factorial(T) / (mp.factorial(npos) * mp.factorial(nneg) * mp.factorial(k)) * A**npos * B**nneg
            if k == 0:
                total += coef * max(mp.mpf(0), 1 - mp.e ** (eps - a))
            else:
                total += coef * J(k, eps - a)
    tail = sum(mp.binomial(T, k) * C**k * (1 - C) ** (T - k) for k in range(KMAX + 1, T + 1))
    return total, total + tail


def test_laplace_reference_is_a_probability_profile():
    """The reference itself: at T = 1 it is Laplace's profile 1 - e^((eps - eps0)/2) (closed form, Koufogiannis et al.)."""
    lo, hi = laplace_delta(mp.mpf(1) / 2, 1, mp.mpf(1) / 10)
    want = 1 - mp.e ** ((mp.mpf(1) / 10 - mp.mpf(1) / 2) / 2)
    assert abs(lo - want) < mp.mpf("1e-40") and abs(hi - want) < mp.mpf("1e-40")


@pytest.mark.slow
def test_laplace_reference_nodes():
    """The quadrature of the reference: 24 and 48 nodes agree to 40 digits at T = 6 (several continuous parts)."""
    a = laplace_delta(mp.mpf(1) / 50, 6, mp.mpf(1) / 20)[0]
    b = laplace_delta(mp.mpf(1) / 50, 6, mp.mpf(1) / 20, degree=5)[0]
    assert a > 0 and abs(a - b) < mp.mpf("1e-40") * a


@pytest.mark.slow
def test_laplace_50_fold_within_one_percent():
    """Laplace(50) x 50 at delta = 1e-5, h = 1e-3: the kinks e^(+-eps0) fall on grid points (eps0 = 20 h); the
    tangent construction was about 3.4% wide here."""
    delta = mp.mpf("1e-5")
    (lo, hi), _ = eps_bracket(selfc({"class_name": "LaplaceDpEvent", "noise_multiplier": "50"}, 50), "add-remove", "1e-5", "1e-3")
    assert laplace_delta(mp.mpf(1) / 50, 50, hi)[1] <= delta < laplace_delta(mp.mpf(1) / 50, 50, lo)[0]
    assert hi - lo <= mp.mpf("0.01") * lo, (lo, hi)


def test_randomized_response_20_fold_within_one_percent():
    """RR(p = 1/2, k = 4) x 20 under replace-one: irrational losses log(a/b), rounded to the grid each way."""
    p, k, T = mp.mpf(1) / 2, 4, 20
    a, b = 1 - p + p / k, p / k
    L = mp.log(a / b)
    atoms = [(L, a), (-L, b), (mp.mpf(0), (k - 2) * b)]
    ev = selfc({"class_name": "RandomizedResponseDpEvent", "noise_parameter": "1/2", "num_buckets": 4}, T)
    delta = mp.mpf("1e-2")
    (lo, hi), _ = eps_bracket(ev, "replace-one", "1e-2", "1e-3")
    assert ref_discrete_delta(atoms, T, hi) <= delta < ref_discrete_delta(atoms, T, lo)
    assert hi - lo <= mp.mpf("0.01") * lo, (lo, hi)


def test_kov_with_exact_kinks_is_tight():
    """KOV(1/2, 0) x 10 at h = 1e-3: the losses +-1/2 are grid points, so both measures are the exact pair up to the
    2^-K rounding of the masses: the bracket is far inside 1% (the exact T-fold is KOV Thm 3.3's binary RR)."""
    e = mp.e ** mp.mpf("0.5")
    atoms = [(mp.mpf("0.5"), e / (1 + e)), (-mp.mpf("0.5"), 1 / (1 + e))]
    ev = selfc({"class_name": "EpsilonDeltaDpEvent", "epsilon": "1/2", "delta": "0"}, 10)
    delta = mp.mpf("1e-3")
    (lo, hi), _ = eps_bracket(ev, "add-remove", "1e-3", "1e-3")
    assert ref_discrete_delta(atoms, 10, hi) <= delta < ref_discrete_delta(atoms, 10, lo)
    assert hi - lo <= mp.mpf("1e-4") * lo, (lo, hi)


def test_replace_special_takes_the_add_remove_pair():
    """REPLACE_SPECIAL: the special record contributes nothing, so Laplace's and the Poisson-sampled Gaussian's
    neighbouring outputs are exactly their add/remove pairs: the same bracket as under add/remove."""
    for ev in (
        selfc({"class_name": "LaplaceDpEvent", "noise_multiplier": "2"}, 3),
        {"class_name": "PoissonSampledDpEvent", "sampling_probability": "1/10", "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1"}},
    ):
        assert eps_bracket(ev, "replace-special", "1e-5", "1e-2")[0] == eps_bracket(ev, "add-remove", "1e-5", "1e-2")[0]
    doc = json.loads(certify_events_pld(ledger_of(ev, "replace-special"), delta="1e-5", grid="1e-2").dumps())
    rep = verify.verify_document(doc, doc["precision"])
    assert rep.exit_code == 0 and rep.ok, rep.problems


def test_randomized_response_and_kov_are_refused_under_replace_special():
    from certify.balls import InputError

    rr = {"class_name": "RandomizedResponseDpEvent", "noise_parameter": "1/2", "num_buckets": 2}
    kov = {"class_name": "EpsilonDeltaDpEvent", "epsilon": "1", "delta": "0"}
    for ev, name in ((rr, "RandomizedResponseDpEvent"), (kov, "EpsilonDeltaDpEvent")):
        with pytest.raises(InputError, match=name):
            certify_events_pld(ledger_of(ev, "replace-special"), delta="1e-6", grid="1e-2")


# ------------------------------------------------------------------------------------------------
# DiscreteGaussian: the exact lattice pair N_Z(0, s^2) vs N_Z(D, s^2), references by direct summation
# ------------------------------------------------------------------------------------------------
def _dg_masses(sigma, D):
    """{x: (P(x), Q(x))} at 50 digits over |x| <= 80 sigma + D (the rest below 1e-1000)."""
    s2 = mp.mpf(sigma) ** 2
    R = int(80 * mp.mpf(sigma)) + D + 2
    w = {x: mp.e ** (-mp.mpf(x * x) / (2 * s2)) for x in range(-R - D, R + D + 1)}
    Z = sum(w[x] for x in range(-R, R + 1))
    return {x: (w[x] / Z, w[x - D] / Z) for x in range(-R, R + 1)}


def dg_delta(sigma, D, T, eps):
    """T-fold delta(eps) of the pair, T in {1, 2}: sum over outcomes of (P - e^eps Q)_+."""
    m, g = _dg_masses(sigma, D), mp.e ** mp.mpf(eps)
    if T == 1:
        return sum(max(mp.mpf(0), p - g * q) for p, q in m.values())
    items = [(p, q) for p, q in m.values() if p > mp.mpf("1e-60")]
    return sum(max(mp.mpf(0), p1 * p2 - g * q1 * q2) for p1, q1 in items for p2, q2 in items)


def dbracket(event, eps, grid="1e-3"):
    cert = certify_events_pld(ledger_of(event, "add-remove"), epsilon=eps, grid=grid)
    lo = ball_endpoints(cert.quantities["delta_lower"].value)[0]
    hi = ball_endpoints(cert.quantities["delta_upper"].value)[1]
    return mp_of(lo), mp_of(hi), cert


@pytest.mark.parametrize("sigma,D,T,eps", [("1", 1, 1, "1/2"), ("3/2", 1, 1, "1/4"), ("1", 1, 2, "1"), ("5/2", 1, 2, "1/10")])
def test_discrete_gaussian_exact_pair(sigma, D, T, eps):
    ev = selfc({"class_name": "DiscreteGaussianDpEvent", "sigma": sigma, "sensitivity": D}, T)
    lo, hi, cert = dbracket(ev, eps)
    ref = dg_delta(mp.mpf(Fraction(sigma).numerator) / Fraction(sigma).denominator, D, T, mp.mpf(Fraction(eps).numerator) / Fraction(eps).denominator)
    assert lo <= ref <= hi, (lo, ref, hi)
    assert hi - lo <= mp.mpf("0.01") * ref, (lo, ref, hi)
    doc = json.loads(cert.dumps())
    assert "N_Z(0, sigma^2)" in json.dumps(doc)  # the certificate says which pair
    rep = verify.verify_document(doc, doc["precision"])
    assert rep.exit_code == 0 and rep.ok, rep.problems


def test_discrete_gaussian_is_below_the_continuous_gaussian_here():
    """Not relied on, a consistency check: at sigma = 1, D = 1 the exact lattice delta(1/2) is below the continuous
    Gaussian's Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), mu = 1 (Canonne-Kamath-Steinke 2020 compare them)."""
    ev = {"class_name": "DiscreteGaussianDpEvent", "sigma": "1", "sensitivity": 1}
    _, hi, _ = dbracket(ev, "1/2")
    mu, e = mp.mpf(1), mp.mpf(1) / 2
    assert hi < mp.ncdf(-e / mu + mu / 2) - mp.e**e * mp.ncdf(-e / mu - mu / 2)


def test_discrete_gaussian_refusals():
    from certify.balls import InputError

    for D in ("1/2", "2"):
        with pytest.raises(InputError, match="sensitivity 1 only"):
            certify_events_pld(ledger_of({"class_name": "DiscreteGaussianDpEvent", "sigma": "1", "sensitivity": D}, "add-remove"), epsilon="1")
    with pytest.raises(InputError, match="sigma"):
        certify_events_pld(ledger_of({"class_name": "DiscreteGaussianDpEvent", "sigma": "100000", "sensitivity": 1}, "add-remove"), epsilon="1")


# ------------------------------------------------------------------------------------------------
# PoissonSampled(Laplace), add/remove: the mixture pairs, by quadrature (T = 1) and a quadrature over one step (T = 2)
# ------------------------------------------------------------------------------------------------
def _lap(mu, b):
    return lambda x: mp.e ** (-abs(x - mu) / b) / (2 * b)


def _pl_densities(q, b, direction):
    L0, L1 = _lap(0, b), _lap(1, b)
    mix = lambda x: (1 - q) * L0(x) + q * L1(x)  # noqa: E731
    return (mix, L0) if direction == "remove" else (L0, mix)


def pl_delta1_quad(q, b, direction, eps):
    """T = 1: int (p - e^eps q)_+ over the line by quadrature, split at 0, 1 and the crossing in (0, 1)."""
    p, qd = _pl_densities(q, b, direction)
    g = mp.e**eps
    f = lambda x: max(mp.mpf(0), p(x) - g * qd(x))  # noqa: E731
    cross = (
        mp.findroot(lambda x: p(x) - g * qd(x), (mp.mpf("1e-30"), 1 - mp.mpf("1e-30")), solver="bisect")
        if ((p(mp.mpf("1e-30")) - g * qd(mp.mpf("1e-30"))) * (p(1 - mp.mpf("1e-30")) - g * qd(1 - mp.mpf("1e-30"))) < 0)
        else mp.mpf(1) / 2
    )
    return mp.quad(f, [-mp.inf, 0, cross, 1, mp.inf])


def pl_delta1_closed(q, b, direction, c):
    """The same at a real c by the closed forms of the Laplace masses (atoms x <= 0, x >= 1; the part (0, 1) on the
    side of its crossing x*: lambda(x*) = log((e^(+-c) - 1 + q)/q), lambda(x) = (2x - 1)/b)."""
    e0, g = 1 / b, mp.e**c
    L0 = lambda u, v: (mp.e ** (-e0 * u) - mp.e ** (-e0 * v)) / 2  # noqa: E731
    L1 = lambda u, v: (mp.e ** (-e0 * (1 - v)) - mp.e ** (-e0 * (1 - u))) / 2  # noqa: E731
    mix = lambda u, v: (1 - q) * L0(u, v) + q * L1(u, v)  # noqa: E731
    atoms = [((1 - q) / 2 + q * mp.e ** (-e0) / 2, mp.mpf(1) / 2), ((1 - q) * mp.e ** (-e0) / 2 + q / 2, mp.e ** (-e0) / 2)]
    P, Q = (mix, L0) if direction == "remove" else (L0, mix)
    if direction == "add":
        atoms = [(y, x) for x, y in atoms]
    out = sum(max(mp.mpf(0), a - g * b_) for a, b_ in atoms)
    t = (g if direction == "remove" else 1 / g) - 1 + q
    lam = mp.log(t / q) if t > 0 else -mp.inf
    xs = min(mp.mpf(1), max(mp.mpf(0), (lam / e0 + 1) / 2)) if lam != -mp.inf else mp.mpf(0)
    u, v = (xs, mp.mpf(1)) if direction == "remove" else (mp.mpf(0), xs)
    return out + max(mp.mpf(0), P(u, v) - g * Q(u, v))


def pl_delta2(q, b, direction, eps):
    """T = 2: E_(x ~ P)[delta1(eps - L(x))] over the first step by quadrature (the atoms x <= 0, x >= 1 exactly)."""
    p, qd = _pl_densities(q, b, direction)
    e0 = 1 / b
    L = lambda x: mp.log(p(x) / qd(x))  # noqa: E731
    P_lo = (1 - q) / 2 + q * mp.e ** (-e0) / 2 if direction == "remove" else mp.mpf(1) / 2  # P(x <= 0)
    P_hi = (1 - q) * mp.e ** (-e0) / 2 + q / 2 if direction == "remove" else mp.e ** (-e0) / 2  # P(x >= 1)
    out = P_lo * pl_delta1_closed(q, b, direction, eps - L(mp.mpf(-1)))
    out += P_hi * pl_delta1_closed(q, b, direction, eps - L(mp.mpf(2)))
    return out + mp.quad(lambda x: p(x) * pl_delta1_closed(q, b, direction, eps - L(x)), [0, mp.mpf(1) / 4, mp.mpf(1) / 2, mp.mpf(3) / 4, 1])


def _pl_event(q, b, T):
    return selfc(
        {"class_name": "PoissonSampledDpEvent", "sampling_probability": q, "event": {"class_name": "LaplaceDpEvent", "noise_multiplier": b}}, T
    )


@pytest.mark.parametrize("q,b,eps", [("1/10", "1", "1/20"), ("1/2", "1/2", "1/2")])
def test_poisson_laplace_one_step_by_quadrature(q, b, eps):
    qq, bb, ee = (mp.mpf(Fraction(x).numerator) / Fraction(x).denominator for x in (q, b, eps))
    refs = [pl_delta1_quad(qq, bb, d, ee) for d in ("remove", "add")]
    for d, r in zip(("remove", "add"), refs):  # the closed form used at T = 2 is the quadrature
        assert abs(pl_delta1_closed(qq, bb, d, ee) - r) < mp.mpf("1e-40"), d
    lo, hi, cert = dbracket(_pl_event(q, b, 1), eps)
    ref = max(refs)
    assert lo <= ref <= hi, (lo, ref, hi)
    assert hi - lo <= mp.mpf("0.03") * ref, (lo, ref, hi)
    doc = json.loads(cert.dumps())
    rep = verify.verify_document(doc, doc["precision"])
    assert rep.exit_code == 0 and rep.ok, rep.problems


@pytest.mark.slow
def test_poisson_laplace_two_steps_by_quadrature():
    qq, bb, ee = mp.mpf(1) / 5, mp.mpf(1), mp.mpf(1) / 10
    ref = max(pl_delta2(qq, bb, d, ee) for d in ("remove", "add"))
    lo, hi, _ = dbracket(_pl_event("1/5", "1", 2), "1/10")
    assert lo <= ref <= hi, (lo, ref, hi)
    assert hi - lo <= mp.mpf("0.03") * ref, (lo, ref, hi)


def test_poisson_laplace_at_q_1_is_laplace():
    """q = 1: the same pair as Laplace (the two loss laws are written differently: the brackets agree to 1e-15)."""
    a = dbracket(_pl_event("1", "2", 3), "1/10")[:2]
    b = dbracket(selfc({"class_name": "LaplaceDpEvent", "noise_multiplier": "2"}, 3), "1/10")[:2]
    assert abs(a[0] - b[0]) < mp.mpf("1e-15") and abs(a[1] - b[1]) < mp.mpf("1e-15")


def test_poisson_laplace_is_refused_by_the_rdp_accountant(tmp_path, capsys):
    from certify import cli

    path = tmp_path / "event.json"
    path.write_text(json.dumps(_pl_event("1/10", "1", 1)))
    assert cli.main(["account", str(path), "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert "use --accountant pld" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert cli.main(["account", str(path), "--accountant", "pld", "--delta", "1e-5", "--grid", "1e-2"]) == 0
