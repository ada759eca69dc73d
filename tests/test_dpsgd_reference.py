"""Soundness and tightness of the certified rho (Bok 2026, (5)) against an independent mpmath reference.

The reference is written from the definition, not from the paper's (35): F(u) = E[(1-p+pe^X)^alpha
(1-p+pe^Y)^(1-alpha)] with X = <a,Z> - Delta^2/2, Y = <b,Z> - |b|^2/2; expanding only the first factor
and shifting Z by j*a (Cameron-Martin) gives
    F(u) = sum_j C(alpha,j)(1-p)^(alpha-j) p^j e^(j(j-1)Delta^2/2) E[(1-p+p e^(beta N + (j-1) u Delta^2))^(1-alpha)],
N ~ N(0,1), beta = Delta sqrt(2u), one 1-D mpmath.quad per j at 50 digits.
"""

import random

import mpmath as mp
import pytest

from certify.balls import ctx, fmpq
from certify.dpsgd.accountant import certify_rho, clear_memo
from certify.dpsgd.mixture import choose_rule, point_bounds, J_zero
from certify.dpsgd.problem import Problem
from fast_subset import fast_subset

mp.mp.dps = MPMATH_DPS = 50  # this module's precision (tests/conftest.py sets it per test)


def _mpf(q) -> mp.mpf:
    return mp.mpf(int(q.p)) / int(q.q)


def J_reference(alpha: int, p: mp.mpf, sigma: mp.mpf, u: mp.mpf) -> mp.mpf:
    D2 = (2 / sigma) ** 2
    beta = mp.sqrt(2 * u * D2)
    total = mp.mpf(0)
    for j in range(alpha + 1):
        shift = (j - 1) * u * D2
        g = lambda n: (1 - p + p * mp.exp(beta * n + shift)) ** (1 - alpha) * mp.npdf(n)
        # u = 0: b = 0, Y = 0 and (1-p+p)^(1-alpha) = 1
        inner = mp.quad(g, [-mp.inf, -6, 0, 6, mp.inf]) if u > 0 else mp.mpf(1)
        total += mp.binomial(alpha, j) * (1 - p) ** (alpha - j) * p**j * mp.exp(j * (j - 1) * D2 / 2) * inner
    return mp.log(total) / (alpha - 1)


def _random_problems(n: int, seed: int = 20261129):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        alpha = rng.randint(2, 9)
        p = fmpq(rng.randint(5, 100), 1000)  # 0.005 .. 0.1
        sigma = fmpq(rng.randint(8, 40), 10)  # 0.8 .. 4.0
        out.append(Problem(alpha, p, sigma))
    return out


# four random problems plus a larger order where the branch-and-bound is needed (Prop. 2 fails)
PROBLEMS = _random_problems(4) + [Problem(20, fmpq(1, 200), fmpq(3))]


@pytest.mark.slow
@pytest.mark.parametrize("prob", PROBLEMS, ids=lambda q: f"a{q.alpha}-p{q.p}-s{q.sigma}")
def test_reference_never_exceeds_rho_hi(prob):
    clear_memo()
    out = certify_rho(prob)
    rho = out.certificate.quantities["rho"].value
    lo, hi = rho.lower().fmpq(), rho.upper().fmpq()
    gamma = out.witness.gamma
    # tightness: the enclosure is at most gamma (+ rounding) wide
    assert hi - lo <= gamma + hi * fmpq(1, 10**15)
    p, sigma = _mpf(prob.p), _mpf(prob.sigma)
    step = 1 if prob.alpha <= 10 else 2  # the reference costs alpha + 1 quadratures per u
    grid = [mp.mpf(k) / 32 for k in range(0, 17, step)] + [mp.mpf(1) / 1000, mp.mpf(1) / 200]
    best = mp.mpf("-inf")
    for u in grid:
        ref = J_reference(prob.alpha, p, sigma, u)
        best = max(best, ref)
        assert ref <= _mpf(hi) * (1 + mp.mpf(10) ** -30), f"J({u}) = {ref} exceeds rho_hi = {hi}"
    # the reference maximum on the grid is within the enclosure's lower end up to gamma
    assert best >= _mpf(lo) - _mpf(gamma) - mp.mpf(10) ** -30


# fast suite: the first random problem (the second, alpha = 4, costs about twice as much)
@pytest.mark.parametrize("prob", fast_subset(PROBLEMS[:2], keep=[PROBLEMS[0]]), ids=lambda q: f"a{q.alpha}-p{q.p}-s{q.sigma}")
def test_point_bounds_enclose_reference(prob):
    p, sigma = _mpf(prob.p), _mpf(prob.sigma)
    for u in (fmpq(1, 2), fmpq(3, 16), fmpq(1, 64)):
        with ctx.workprec(128):
            pb = point_bounds(prob, u, choose_rule(prob, u, 48))
        ref = J_reference(prob.alpha, p, sigma, _mpf(u))
        assert _mpf(pb.J_lo.lower().fmpq()) <= ref <= _mpf(pb.J_hi.upper().fmpq())
        assert pb.J_hi.upper().fmpq() - pb.J_lo.lower().fmpq() < fmpq(1, 10**10)


@pytest.mark.parametrize(
    "alpha,p,sigma", [(2, fmpq(1, 100), fmpq(2)), (8, fmpq(1, 100), fmpq(2)), (64, fmpq(1, 400), fmpq(4)), (256, fmpq(1, 25), fmpq(8))]
)
def test_u0_closed_form(alpha, p, sigma):
    """J(0) = log(sum_k C(alpha,k)(1-p)^(alpha-k) p^k e^(k(k-1)Delta^2/2))/(alpha-1), matched at 50 digits."""
    prob = Problem(alpha, p, sigma)
    with ctx.workprec(128):
        j0 = J_zero(prob)
    ref = J_reference(alpha, _mpf(p), _mpf(sigma), mp.mpf(0))
    assert _mpf(j0.lower().fmpq()) <= ref <= _mpf(j0.upper().fmpq())
    assert j0.rad() < abs(j0.mid()) * fmpq(1, 10**25)


# --------------------------------------------------------------------------------------------
# The trapezoidal rule of certify.dpsgd.mixture: its discretisation bound and its rule checks
# --------------------------------------------------------------------------------------------
def _mp_trapezoid(alpha, p, sigma, u, h, jmax=400):
    """h sum_j f(j h) at 50 digits, f = phi D^(1-alpha) G of (35) summed, over |j h| <= jmax h (tails negligible)."""
    D2 = (2 / sigma) ** 2
    beta = mp.sqrt(2 * u * D2)
    coef = [mp.binomial(alpha, k) * (1 - p) ** (alpha - k) * p**k * mp.exp(k * (k - 1) * D2 / 2 - k * k * beta**2 / 8) for k in range(alpha + 1)]

    def f(v):
        G = mp.fsum(c * mp.exp(k * beta * v / 2) for k, c in enumerate(coef))
        return mp.npdf(v) * G * (1 - p + p * mp.exp(beta * v - beta**2 / 2)) ** (1 - alpha)

    return h * mp.fsum(f(j * h) for j in range(-jmax, jmax + 1))


TRAPEZOID_CASES = [
    (8, fmpq(1, 100), fmpq(2), fmpq(1, 2), fmpq(3, 2), fmpq(3, 2)),
    (8, fmpq(1, 100), fmpq(2), fmpq(1, 2), fmpq(1), fmpq(5, 2)),  # beta c > pi/2: the sin factor is used
    (5, fmpq(3, 100), fmpq(11, 10), fmpq(3, 16), fmpq(5, 4), fmpq(2)),
    (20, fmpq(1, 200), fmpq(3), fmpq(1, 64), fmpq(2), fmpq(4)),
]


# fast suite: the sin-factor branch and the smallest sigma; the other two cases are slow
@pytest.mark.parametrize("alpha,p,sigma,u,h,strip", fast_subset(TRAPEZOID_CASES, keep=TRAPEZOID_CASES[1:3]))
def test_trapezoid_discretisation_bound_is_sound(alpha, p, sigma, u, h, strip):
    """|T_h - F(u)| <= E_disc and <= eps F(u) for coarse steps h, where the error is large enough to see:
    T_h by mpmath (50 digits, the whole grid), F(u) by the independent reference, E_disc, eps certified."""
    from certify.dpsgd.mixture import _integrand

    prob = Problem(alpha, p, sigma)
    with ctx.workprec(128):
        disc, eps = _integrand(prob, u, 128).discretisation_bound(h, strip)
    F_ref = mp.exp((alpha - 1) * J_reference(alpha, _mpf(p), _mpf(sigma), _mpf(u)))
    err = abs(_mp_trapezoid(alpha, _mpf(p), _mpf(sigma), _mpf(u), _mpf(h)) - F_ref)
    bound = _mpf(disc.upper().fmpq())
    assert err <= bound, (err, bound)  # absolute form
    assert err <= _mpf(eps.upper().fmpq()) * F_ref, (err, eps)  # relative form
    assert err > mp.mpf(10) ** -40  # the step is coarse enough that the test can fail


@pytest.mark.parametrize("bits", fast_subset([10, 20, 48], keep=[10]))  # fast suite: the coarsest rule
def test_point_bounds_with_any_tolerance_enclose_reference(bits):
    """Coarse rules give wide but valid bounds (the checker may use them where the leaves have slack)."""
    prob = Problem(8, fmpq(1, 100), fmpq(2))
    ref = J_reference(8, _mpf(prob.p), _mpf(prob.sigma), mp.mpf(1) / 2)
    with ctx.workprec(128):
        pb = point_bounds(prob, fmpq(1, 2), choose_rule(prob, fmpq(1, 2), bits))
    lo, hi = _mpf(pb.J_lo.lower().fmpq()), _mpf(pb.J_hi.upper().fmpq())
    assert lo <= ref <= hi
    # width tracks the requested tolerance (relative on F, divided by alpha - 1 on J)
    assert hi - lo < mp.mpf(2) ** (-bits + 4) / 7


def test_bad_rules_are_refused():
    from certify.balls import InputError
    from certify.dpsgd.mixture import Rule

    prob = Problem(8, fmpq(1, 100), fmpq(2))
    u = fmpq(1, 2)  # beta = Delta = 1: the poles of f sit on Im v = pi
    good = choose_rule(prob, u, 30)
    for bad in (
        Rule(good.a, good.b, good.h, fmpq(16, 5)),  # strip beyond pi / beta
        Rule(fmpq(1), good.b, good.h, good.strip),  # window does not contain 0
        Rule(good.a + good.h / 3, good.b, good.h, good.strip),  # window end off the grid
        Rule(good.a, good.b, fmpq(0), good.strip),
    ):  # no step
        with pytest.raises(InputError):
            point_bounds(prob, u, bad)


def J_reference_far(alpha: int, p: mp.mpf, sigma: mp.mpf, u: mp.mpf) -> mp.mpf:
    """The same expansion as J_reference, each expectation integrated around the mode of its (log-concave)
    integrand, found by bisection: for extreme parameters the mass sits far from N = 0, where fixed
    break points miss it. Terms below e^-200 of the largest (Laplace estimate) are skipped."""
    D2 = (2 / sigma) ** 2
    beta = mp.sqrt(2 * u * D2)
    logit = mp.log(p) - mp.log(1 - p)

    def log_g(N, m):
        return -N * N / 2 + (1 - alpha) * mp.log(1 - p + p * mp.exp(beta * N + m))

    def mode(m):  # g'(N) = -N - (alpha-1) beta sigmoid(beta N + m + logit), decreasing in N
        lo, hi = -(alpha - 1) * beta - 1, mp.mpf(1)
        for _ in range(200):
            mid = (lo + hi) / 2
            if -mid - (alpha - 1) * beta / (1 + mp.exp(-(beta * mid + m + logit))) > 0:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    terms = []
    for j in range(alpha + 1):
        lc = mp.log(mp.binomial(alpha, j)) + (alpha - j) * mp.log(1 - p) + j * mp.log(p) + j * (j - 1) * D2 / 2
        m = (j - 1) * u * D2
        N0 = mode(m)
        terms.append((lc, m, N0, lc + log_g(N0, m)))
    top = max(t[3] for t in terms)
    total = mp.mpf(0)
    for lc, m, N0, est in terms:
        if est < top - 200:
            continue
        g0 = log_g(N0, m)
        val = mp.quad(lambda N: mp.exp(log_g(N, m) - g0), [N0 + d for d in (-40, -20, -10, -5, -2, 0, 2, 5, 10, 20, 40)])
        total += val * mp.exp(lc + g0) / mp.sqrt(2 * mp.pi)
    return mp.log(total) / (alpha - 1)


@pytest.mark.parametrize(
    "alpha,p,sigma,u",
    [
        (64, fmpq(9, 10), fmpq(1, 2), fmpq(1, 2)),  # F(0)/F(u) ~ 1e3434: the absolute form alone is vacuous
        (64, fmpq(1, 1000), fmpq(1), fmpq(1, 4)),
        (8, 1 - fmpq(1, 10**20), fmpq(2), fmpq(1, 2)),  # p has no float (1 - 1e-20 rounds to 1)
    ],
)
def test_point_bounds_tight_where_F0_dwarfs_F(alpha, p, sigma, u):
    """The relative discretisation bound keeps the point bound tight (and sound) in extreme regimes."""
    prob = Problem(alpha, p, sigma)
    with ctx.workprec(128):
        pb = point_bounds(prob, u, choose_rule(prob, u, 40))
    ref = J_reference_far(alpha, _mpf(p), _mpf(sigma), _mpf(u))
    lo, hi = _mpf(pb.J_lo.lower().fmpq()), _mpf(pb.J_hi.upper().fmpq())
    assert lo <= ref <= hi
    assert hi - lo <= abs(ref) * mp.mpf(10) ** -10
