"""Soundness and tightness of the Watkins-Arora enclosures against independent 60-digit mpmath values.

At randomized exact parameters, every certified ball must contain the mpmath reference (computed
by different routes: nu~_N by its sum, g-bar_N by a grid maximum, Q1 at extra precision) and be narrow.
"""

from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import reference_objpert as R
from certify.balls import certain_ceil, fmpq, workprec
from certify.objpert import privacy as P
from certify.objpert.benchmark import gaussian_profile, integrated_tail_bound
from certify.objpert.problem import constants, make_loss, make_problem


def to_mpf(x, which):
    m, e = (x.mid() if which == "mid" else x.rad()).man_exp()
    return mp.mpf((int(m), int(e)))


def check(ball, ref, name, max_rel=1e-25):
    """Soundness: ref in ball (up to the reference's own 1e-50 error). Tightness: radius small."""
    assert ball.is_finite(), name
    with mp.workdps(80):
        mid, rad = to_mpf(ball, "mid"), to_mpf(ball, "rad")
        assert abs(ref - mid) <= rad + abs(ref) * mp.mpf("1e-50"), (name, ball, ref)
        if ref != 0:
            assert rad <= abs(ref) * max_rel, (name, "too wide", ball)


problems = st.fixed_dictionaries(
    {
        "n": st.integers(10**3, 10**7),
        "d": st.integers(1, 10**5),
        "mu": st.fractions(Fraction(1, 10**4), Fraction(1, 2), max_denominator=10**4),
        "zeta": st.fractions(Fraction(1, 4), 4, max_denominator=100),
        "nm": st.fractions(1, 30, max_denominator=10),
        "u": st.fractions(0, 9, max_denominator=10),
        "eta_frac": st.fractions(Fraction(1, 2), 1, max_denominator=20),
        "loss": st.sampled_from(["logistic", "custom"]),
    }
)


def build(prm):
    if prm["loss"] == "logistic":
        loss = make_loss("logistic")
        L1, L2, L3 = 1, Fraction(1, 4), None
    else:
        L1, L2, L3 = Fraction(3, 2), Fraction(1, 3), Fraction(1, 5)
        loss = make_loss("custom", "3/2", "1/3", "1/5")
    L = prm["mu"] + L2 * prm["zeta"] ** 2
    eta = prm["eta_frac"] / L
    p = make_problem(
        n=prm["n"], d=prm["d"], mu=str(prm["mu"]), zeta=str(prm["zeta"]), loss=loss, u=str(prm["u"]), noise_multiplier=str(prm["nm"]), eta=str(eta)
    )
    G = 2 * Fraction(L1) * prm["zeta"] / prm["n"]
    ref = R.Ref(
        prm["n"], prm["d"], prm["mu"], prm["zeta"], L1, L2, L3 if L3 else 0, prm["nm"] * G, prm["u"], eta=eta, logistic=prm["loss"] == "logistic"
    )
    return p, ref


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems, st.fractions(0, 3, max_denominator=10), st.fractions(Fraction(1, 100), 2, max_denominator=100))
def test_theorem_4_1_quantities_contain_reference(prm, extra_N, extra_eps):
    p, ref = build(prm)
    with workprec(128):
        c = constants(p)
        thr = P.threshold_7(c)
        check(thr, ref.threshold7(), "threshold7")
        N7 = certain_ceil(thr)
        assume(N7 is not None and N7 < 10**6)
        N = int(N7 + extra_N * N7)
        check(P.tau_star(p, c, N), ref.tau_star(N), "tau*")
        e0 = P.epsilon_0(p, c, N)
        check(e0, ref.eps0(N), "eps0")
        # eps above eps_0, with (sigma/G)(eps - eps0) kept moderate so that the reference is accurate
        eps = fmpq(int(e0.upper().fmpq().ceil() * 1000) + 1, 1000) + fmpq(extra_eps.numerator, extra_eps.denominator)
        assume((eps - e0.mid().fmpq()) * p.sigma / p.G < 60)
        eps_f = Fraction(int(eps.p), int(eps.q))
        delta = P.truncation_mass(p) + P.divergence_term(c, eps, e0)
        check(delta, ref.delta(N, eps_f), "delta(eps)")


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems, st.integers(1, 3000), st.fractions(Fraction(1, 10), 3, max_denominator=100))
def test_theorem_C13_quantities_contain_reference(prm, N, eps):
    p, ref = build(prm)
    with workprec(128):
        c = constants(p)
        q = P.theorem_C13(p, c, N)
        r = ref.c13(N, eps)
        check(q.gamma_N, r["gamma_N"], "gamma_N")
        check(q.g_bar_N, r["g_bar_N"], "g_bar_N", max_rel=1e-20)
        if N > 1:
            check(q.nu_tilde_N, r["nu_tilde_N"], "nu_tilde_N", max_rel=1e-15)
        check(q.Delta_xi, r["Delta_xi"], "Delta_xi")
        check(q.alpha_bar, r["alpha_bar"], "alpha_bar", max_rel=1e-15)
        if q.alpha_bar > 0:
            check(q.radius_step, r["radius_step"], "radius_step", max_rel=1e-15)
            check(q.tau, r["tau"], "tau", max_rel=1e-15)
            check(q.s_N, r["s_N"], "s_N", max_rel=1e-15)
            epsq = fmpq(eps.numerator, eps.denominator)
            if q.s_N < epsq and (epsq - q.s_N.mid().fmpq()) * p.sigma / p.G < 60:
                d = P.truncation_mass(p) + P.divergence_term(c, epsq, q.s_N)
                check(d, r["delta_N"], "delta_N", max_rel=1e-15)


@pytest.mark.slow  # about 2 CPU s: a 400-point grid maximum at 50+ digits for five N
def test_g_bar_sup_is_at_h_equal_L():
    """Lemma C.5's supremum: the grid maximum never exceeds the value at h = L (monotonicity)."""
    p, ref = build(
        {
            "n": 1000,
            "d": 10,
            "mu": Fraction(1, 100),
            "zeta": Fraction(1),
            "nm": Fraction(5),
            "u": Fraction(6),
            "eta_frac": Fraction(3, 5),
            "loss": "logistic",
        }
    )
    for N in (1, 2, 5, 40, 700):
        with workprec(128):
            check(P.g_bar_N(p, N), ref.g_bar(N, grid=400), f"g_bar_{N}", max_rel=1e-20)
            assert ref.g(N, ref.L) >= max(ref.g(N, ref.mu + (ref.L - ref.mu) * k / 50) for k in range(51))


@settings(max_examples=25, deadline=None)
@given(st.fractions(Fraction(1, 2), 40, max_denominator=20), st.fractions(Fraction(1, 50), 4, max_denominator=100))
def test_gaussian_benchmark_contains_reference(s, eps):
    assume(eps >= 1 / (2 * s * s))
    with workprec(128):
        sq, eq = fmpq(s.numerator, s.denominator), fmpq(eps.numerator, eps.denominator)
        g = gaussian_profile(sq, eq)
        tail = integrated_tail_bound(sq, eq)
    ref_g = R.gaussian_profile(s, eps)
    assume(ref_g > mp.mpf("1e-40"))  # deeper, the exact profile cancels below the reference's 60 digits
    check(g, ref_g, "delta_G", max_rel=1e-10)
    check(tail, R.integrated_tail(s, eps), "integrated tail")
    assert g <= tail  # the certificate dominates the exact profile
