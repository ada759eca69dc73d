"""The Rényi accountant of dp_accounting's event algebra (certify/events, certify/accounting.py, `certify account`).

References are independent of the code under test: mpmath at 60 digits, written here from the definitions
(divergences as direct sums or quadratures over the mechanisms' output laws, not the closed forms the modules use),
exact privacy profiles (analytic Gaussian, Laplace, the optimal composition of Kairouz-Oh-Viswanath) and the numeric
expectations of dp_accounting's own tests (file and test named at each). Soundness: the reference lies in the ball (or
below its upper endpoint for an upper bound); tightness: within 1e-6 relative where the RDP is known exactly.
"""

from __future__ import annotations

import copy
import itertools
import json
import math

import mpmath as mp
import pytest

from certify import cli
from certify.accounting import RdpAccountant
from certify.balls import float_above as round_up
from certify.balls import InputError, ball_endpoints, ctx, fmpq
from certify.certificate import digest_of
from certify.events.accountant import certified_value, certify_events
from certify.events.ledger import ledger_of
from certify.events.mechanisms import MECHANISMS
from certify.event_tree import as_json
from certify.verify import verify_document
from fast_subset import fast_subset

mp.mp.dps = MPMATH_DPS = 60  # this module's precision (tests/conftest.py sets it per test)
DPA_TEST = "dp_accounting 0.6.0 python/dp_accounting/dp_accounting/rdp/rdp_privacy_accountant_test.py"


def M(x) -> mp.mpf:
    return mp.mpf(int(x.p)) / mp.mpf(int(x.q)) if isinstance(x, fmpq) else mp.mpf(x)


def ev(cls: str, **fields) -> dict:
    return {"class_name": cls, **fields}


def mech(event: dict, relation: str = "add-remove"):
    ((m, c),) = ledger_of(event, relation).entries
    return m


def endpoints(x):
    lo, hi = ball_endpoints(x)
    return M(lo), M(hi)


# --------------------------------------------------------------------------------------------
# independent references (mpmath, from the definitions)
# --------------------------------------------------------------------------------------------
def renyi_discrete(P: list, Q: list, a) -> mp.mpf:
    """D_a(P||Q) = log(sum P^a Q^(1-a))/(a - 1) by a direct sum."""
    a = mp.mpf(a)
    return mp.log(mp.fsum(p**a * q ** (1 - a) for p, q in zip(P, Q) if p > 0)) / (a - 1)


def ref_laplace(a, b) -> mp.mpf:
    """Quadrature of Lap(0, b)^a Lap(1, b)^(1-a) over the real line (kinks at 0 and 1)."""
    a, b = mp.mpf(a), mp.mpf(b)

    def f(x):
        return mp.exp(-(a * abs(x) + (1 - a) * abs(x - 1)) / b) / (2 * b)

    return mp.log(mp.quad(f, [-mp.inf, 0, 1, mp.inf])) / (a - 1)


def ref_dlap_shift(a, t, k) -> mp.mpf:
    """Discrete Laplace DLap(t) vs DLap(t) + k by a direct sum over a window whose tails are below e^-300."""
    a, t = mp.mpf(a), mp.mpf(t)
    n = int(400 / t) + abs(k) + 10
    c = mp.tanh(t / 2)
    s = mp.fsum(c * mp.exp(-t * (a * abs(x) + (1 - a) * abs(x - k))) for x in range(-n, n + 1))
    return mp.log(s) / (a - 1)


def ref_dlap(a, t, sens) -> mp.mpf:
    """Worst coordinate-wise shift of l1 norm <= sens: max over integer partitions, enumerated."""
    best = mp.mpf(0)
    f = {k: ref_dlap_shift(a, t, k) for k in range(1, sens + 1)}
    for n in range(1, sens + 1):
        for parts in _partitions(n):
            best = max(best, mp.fsum(f[p] for p in parts))
    return best


def _partitions(n, largest=None):
    largest = n if largest is None else largest
    if n == 0:
        yield ()
        return
    for p in range(min(n, largest), 0, -1):
        for rest in _partitions(n - p, p):
            yield (p, *rest)


def ref_rr(a, p, k, relation) -> mp.mpf:
    p = mp.mpf(p)
    out = lambda i: [(1 - p) * (j == i) + p / k for j in range(k)]  # noqa: E731
    if relation == "replace-one":
        return renyi_discrete(out(0), out(1), a)
    U = [mp.mpf(1) / k] * k
    return max(renyi_discrete(out(0), U, a), renyi_discrete(U, out(0), a))


def ref_rr_eps(a, eps) -> mp.mpf:
    e = mp.e ** mp.mpf(eps)
    P, Q = [e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]
    return renyi_discrete(P, Q, a)


def ref_poisson(a, q, s) -> mp.mpf:
    """D_a((1-q) N(0,1) + q N(1/s,1) || N(0,1)) by quadrature of E_Q[(P/Q)^a] (the dominating direction)."""
    a, q, s = mp.mpf(a), mp.mpf(q), mp.mpf(s)

    def f(x):
        return mp.npdf(x) * (1 - q + q * mp.exp(x / s - 1 / (2 * s * s))) ** a

    mu = a / s
    return mp.log(mp.quad(f, [-mp.inf, -10, 0, mu / 2, mu, mu + 10, mp.inf])) / (a - 1)


def ref_dgauss(a, sigma, k) -> mp.mpf:
    """The discrete Gaussian's divergence for the integer shift k, by direct sums."""
    a, s2 = mp.mpf(a), 2 * mp.mpf(sigma) ** 2
    n = int(40 * mp.mpf(sigma)) + abs(k) + 10
    Z = mp.fsum(mp.exp(-(x * x) / s2) for x in range(-n, n + 1))
    s = mp.fsum(mp.exp(-(a * x * x + (1 - a) * (x - k) ** 2) / s2) for x in range(-n - 200, n + 200))
    return mp.log(s / Z) / (a - 1)


EXACT_CASES = [
    # (event, relation, order, reference)
    (ev("GaussianDpEvent", noise_multiplier="3/2"), "add-remove", "7/3", lambda a: M(a) / (2 * mp.mpf(9) / 4)),
    (ev("GaussianDpEvent", noise_multiplier="1/10"), "replace-one", "1025", lambda a: M(a) / (2 * mp.mpf("0.01"))),
    (ev("LaplaceDpEvent", noise_multiplier="1"), "add-remove", "3/2", lambda a: ref_laplace(M(a), 1)),
    (ev("LaplaceDpEvent", noise_multiplier="1/10"), "replace-special", "40", lambda a: ref_laplace(M(a), mp.mpf("0.1"))),
    (ev("LaplaceDpEvent", noise_multiplier="100"), "add-remove", "33/32", lambda a: ref_laplace(M(a), 100)),
    (ev("DiscreteLaplaceDpEvent", noise_parameter="1/2", sensitivity=1), "add-remove", "5/2", lambda a: ref_dlap(M(a), mp.mpf("0.5"), 1)),
    (ev("DiscreteLaplaceDpEvent", noise_parameter="3/10", sensitivity=4), "replace-one", "9", lambda a: ref_dlap(M(a), mp.mpf("0.3"), 4)),
    (ev("DiscreteLaplaceDpEvent", noise_parameter="2", sensitivity=3), "add-remove", "17/16", lambda a: ref_dlap(M(a), 2, 3)),
    (
        ev("RandomizedResponseDpEvent", noise_parameter="3/10", num_buckets=10),
        "replace-one",
        "5/2",
        lambda a: ref_rr(M(a), mp.mpf("0.3"), 10, "replace-one"),
    ),
    (
        ev("RandomizedResponseDpEvent", noise_parameter="1/20", num_buckets=2),
        "replace-one",
        "50",
        lambda a: ref_rr(M(a), mp.mpf("0.05"), 2, "replace-one"),
    ),
    (
        ev("RandomizedResponseDpEvent", noise_parameter="3/10", num_buckets=7),
        "replace-special",
        "3/2",
        lambda a: ref_rr(M(a), mp.mpf("0.3"), 7, "replace-special"),
    ),
    (
        ev("RandomizedResponseDpEvent", noise_parameter="9/10", num_buckets=3),
        "replace-special",
        "100",
        lambda a: ref_rr(M(a), mp.mpf("0.9"), 3, "replace-special"),
    ),
    (ev("EpsilonDeltaDpEvent", epsilon="1", delta="0"), "add-remove", "4", lambda a: ref_rr_eps(M(a), 1)),
    (ev("EpsilonDeltaDpEvent", epsilon="1/100", delta="1/1000"), "replace-one", "65/64", lambda a: ref_rr_eps(M(a), mp.mpf("0.01"))),
    (ev("ZCDpEvent", rho="1/8", xi="1/3"), "add-remove", "6", lambda a: mp.mpf(1) / 3 + M(a) / 8),
    (
        ev("SingleEpochTreeAggregationDpEvent", noise_multiplier="2", step_counts=[10, 400, 390]),
        "replace-special",
        "3",
        lambda a: M(a) * 9 / 8,  # depth ceil(log2(401)) = 9
    ),
    (
        ev("PoissonSampledDpEvent", sampling_probability="1/100", event=ev("GaussianDpEvent", noise_multiplier="1")),
        "add-remove",
        "12",
        lambda a: ref_poisson(M(a), mp.mpf("0.01"), 1),
    ),
    (
        ev("PoissonSampledDpEvent", sampling_probability="1/10", event=ev("GaussianDpEvent", noise_multiplier="2")),
        "replace-special",
        "21/2",
        lambda a: ref_poisson(M(a), mp.mpf("0.1"), 2),
    ),
]


@pytest.mark.parametrize(
    "event,relation,order,ref", fast_subset(EXACT_CASES, keep=EXACT_CASES[::2]), ids=lambda x: x["class_name"] if isinstance(x, dict) else None
)
def test_rdp_encloses_the_exact_divergence_tightly(event, relation, order, ref):
    m = mech(event, relation)
    alpha = fmpq(*map(int, order.split("/"))) if "/" in order else fmpq(int(order))
    r = ref(alpha)
    with ctx.workprec(128):
        lo, hi = endpoints(m.rdp(alpha, relation))
    assert lo <= r <= hi, (m.describe(), lo, r, hi)  # soundness (an exact RDP: the ball encloses it)
    assert hi - r <= mp.mpf("1e-6") * abs(r) + mp.mpf("1e-40"), (m.describe(), r, hi)  # tightness


@pytest.mark.slow
def test_upper_bounds_lie_above_the_exact_divergence():
    """Discrete Gaussian (CKS20 Prop. 5), exponential mechanism and permute-and-flip: upper bounds, said so."""
    for sigma, k, order in (("1/2", 1, 3), ("2", 1, "3/2"), ("1", 2, 10)):
        a = fmpq(*map(int, str(order).split("/"))) if "/" in str(order) else fmpq(order)
        m = mech(ev("DiscreteGaussianDpEvent", sigma=sigma, sensitivity=k, dimension=None))
        true = ref_dgauss(M(a), M(fmpq(*map(int, sigma.split("/"))) if "/" in sigma else fmpq(int(sigma))), k)
        assert true <= endpoints(m.rdp(a, "add-remove"))[1]
        assert "upper bound only" in m.UPPER_ONLY
    for eps in ("1/10", "1", "5"):
        e = fmpq(*map(int, eps.split("/"))) if "/" in eps else fmpq(int(eps))
        for cls in ("ExponentialMechanismDpEvent", "PermuteAndFlipDpEvent"):
            m = mech(ev(cls, epsilon=eps), "replace-one")
            for a in (fmpq(3, 2), fmpq(8), fmpq(200)):
                hi = endpoints(m.rdp(a, "replace-one"))[1]
                if cls.startswith("Permute"):
                    assert ref_laplace(M(a), 1 / M(e)) <= hi  # the Laplace RDP dp_accounting uses for permute-and-flip
                assert hi <= M(e) * (1 + mp.mpf("1e-30"))  # and never above the pure epsilon
                if cls.startswith("Exp"):
                    assert hi <= M(a) * M(e) ** 2 / 8 * (1 + mp.mpf("1e-30"))  # and never above the zCDP bound


# --------------------------------------------------------------------------------------------
# dp_accounting's own test expectations (each cites the test); tolerance theirs
# --------------------------------------------------------------------------------------------
def _dpa_rdp(event: dict, relation: str, order) -> tuple:
    m = mech(event, relation)
    a = fmpq(*fractions_of(order))
    return endpoints(m.rdp(a, relation))


def fractions_of(x) -> tuple:
    from fractions import Fraction

    f = Fraction(x)
    return f.numerator, f.denominator


POISSON_EXPECTED = list(zip([1.5, 2.5, 5, 50, 100], [6.70579741e-04, 1.08548710e-03, 2.18075656e-03, 2.38460375e-02, 1.67416308e02]))


@pytest.mark.parametrize("order,expected", fast_subset(POISSON_EXPECTED, keep=[POISSON_EXPECTED[0], POISSON_EXPECTED[2]]))
def test_dp_accounting_poisson_sampled_gaussian(order, expected):
    """DPA_TEST::test_compute_rdp_poisson_sampled_gaussian (q = 0.01, z = 2.5, count 50, rtol 1e-4).

    At order 1.5 we disagree beyond their tolerance: their expectation 6.70579741e-4 is their own float evaluation of the
    fractional order, 3.2% above the exact value 6.5007089719e-4 (our ball and the independent 60-digit quadrature
    ref_poisson agree to 30 digits); theirs is the looser (still valid) upper bound. At the other orders we agree."""
    event = ev(
        "SelfComposedDpEvent",
        count=50,
        event=ev("PoissonSampledDpEvent", sampling_probability=0.01, event=ev("GaussianDpEvent", noise_multiplier=2.5)),
    )
    ((m, c),) = ledger_of(event, "add-remove").entries
    a = fmpq(*fractions_of(order))
    lo, hi = endpoints(c * m.rdp(a, "add-remove"))
    exact = c * ref_poisson(M(a), M(m["sampling_probability"]), M(m["noise_multiplier"]))
    assert lo <= exact <= hi and hi - lo < 1e-25
    if order == 1.5:
        assert hi < expected and abs(exact / mp.mpf("6.5007089719e-4") - 1) < 1e-9
    else:
        assert abs(hi / expected - 1) <= 1e-4 and abs(lo / expected - 1) <= 1e-4, (order, lo, hi, expected)


LOG_A_PARAMS = [(1e-7, 0.1, 1.01), (1e-6, 0.1, 256), (1e-5, 0.1, 256.1), (1e-6, 1, 27), (1e-4, 1.0, 1.5), (1e-3, 1.0, 2)]
LOG_A_PARAMS += [(0.01, 10, 20), (0.1, 100, 20.5), (0.99, 0.1, 256), (0.999, 100, 256.1)]


@pytest.mark.parametrize("q,sigma,order", fast_subset(LOG_A_PARAMS, keep=[LOG_A_PARAMS[3], LOG_A_PARAMS[4]]))
def test_dp_accounting_log_a_against_quadrature(q, sigma, order):
    """DPA_TEST::test_compute_log_a_equals_mp (their float log A against their mpmath quadrature, rtol 1e-4): the same
    (q, sigma, order) points, our ball against our own 60-digit quadrature: enclosed, and tight to 1e-6."""
    m = mech(ev("PoissonSampledDpEvent", sampling_probability=q, event=ev("GaussianDpEvent", noise_multiplier=sigma)))
    a = fmpq(*fractions_of(order))
    lo, hi = endpoints(m.rdp(a, "add-remove"))
    r = ref_poisson(M(a), M(m["sampling_probability"]), M(m["noise_multiplier"]))
    assert lo <= r <= hi and hi - r <= mp.mpf("1e-6") * r


RR_EXPECTED = {
    ("replace-special", 0.3, 10): [
        1.5030552584146897,
        1.7801182478869704,
        1.9091969256833639,
        1.9814516798923105,
        1.9846954517418232,
        1.9878743481543455,
    ],
    ("replace-special", 0.05, 20): [
        2.8985312222056674,
        2.9615414620514047,
        2.982908949957726,
        2.994685471627712,
        2.9952141594692665,
        2.995732273553991,
    ],
    ("replace-special", 0.01, 3): [3.851345343526459, 4.334924907685137, 4.503803908976894, 4.596895387863428, 4.601074578835478, 4.605170185988092],
    ("replace-one", 0.3, 10): [2.6946320226546314, 2.983865364028855, 3.11316970070507, 3.1854244842182466, 3.1886682560677593, 3.1918471524802814],
    ("replace-one", 0.05, 20): [5.850317703374384, 5.910360162307462, 5.930633082131939, 5.94180620835157, 5.942307807732949, 5.942799375126701],
    ("replace-one", 0.01, 3): [5.684126770932727, 5.692634596034571, 5.695421239467805, 5.696956976543137, 5.697025920968522, 5.697093486505405],
}


@pytest.mark.parametrize("key", list(RR_EXPECTED), ids=lambda k: f"{k[0]}-{k[1]}-{k[2]}")
def test_dp_accounting_randomized_response(key):
    """DPA_TEST::test_compute_rdp_randomized_response_replace_special / _replace_one (orders 1.5, 2.5, 5, 50, 100, inf;
    rtol 1e-4); the order inf is the pure epsilon."""
    relation, p, k = key
    m = mech(ev("RandomizedResponseDpEvent", noise_parameter=p, num_buckets=k), relation)
    for order, expected in zip([1.5, 2.5, 5, 50, 100], RR_EXPECTED[key]):
        lo, hi = endpoints(m.rdp(fmpq(*fractions_of(order)), relation))
        assert lo <= hi and abs(hi / expected - 1) <= 1e-4 and abs(lo / expected - 1) <= 1e-4, (order, lo, hi, expected)
    lo, hi = endpoints(m.pure_epsilon(relation))
    assert abs(hi / RR_EXPECTED[key][-1] - 1) <= 1e-4


def test_dp_accounting_randomized_response_inf_order_and_boundaries():
    """DPA_TEST::test_compute_rdp_randomized_response_inf_order (p = 0.1, k = 10; assertAlmostEqual, 7 places) and
    ::test_compute_rdp_randomized_response_boundary (p = 1 or k = 1 give 0; p = 0 is infinite: refused here)."""
    for relation, expected in (("replace-special", 2.302585092994046), ("replace-one", 4.51085950651685)):
        lo, hi = endpoints(mech(ev("RandomizedResponseDpEvent", noise_parameter=0.1, num_buckets=10), relation).pure_epsilon(relation))
        assert abs(hi - expected) < 5e-8 and abs(lo - expected) < 5e-8
        for p, k in ((1, 2), (0.1, 1)):
            m = MECHANISMS["RandomizedResponseDpEvent"].make({"noise_parameter": fmpq(*fractions_of(p)), "num_buckets": fmpq(k)}, {}, "rr")
            assert endpoints(m.rdp(fmpq(11, 10), relation)) == (0, 0) and m.is_null()  # a null event: dropped from ledgers
            assert ledger_of(ev("RandomizedResponseDpEvent", noise_parameter=p, num_buckets=k), relation, allow_empty=True).entries == ()
        with pytest.raises(InputError, match="noise_parameter"):
            mech(ev("RandomizedResponseDpEvent", noise_parameter=0.0, num_buckets=2), relation)


def test_dp_accounting_gaussian_zcdp_and_composition():
    """DPA_TEST::test_compute_rdp_gaussian (alpha/(2 sigma^2)), ::test_compute_rdp_multi_zcdp, ::test_zcdp_matches_gaussian,
    ::test_rdp_composition (count, SelfComposed and Composed agree: 6 x the base RDP)."""
    a = fmpq(*fractions_of(3.14159))
    lo, hi = endpoints(mech(ev("GaussianDpEvent", noise_multiplier=2.71828)).rdp(a, "add-remove"))
    assert abs(hi - 3.14159 / (2 * 2.71828**2)) < 1e-7
    z = ledger_of(ev("ComposedDpEvent", events=[ev("ZCDpEvent", rho=2.71828, xi=3.14159), ev("ZCDpEvent", rho=6.28319, xi=1.23456)]), "add-remove")
    total = z.entries[0][0].rdp(fmpq(2), "add-remove") + z.entries[1][0].rdp(fmpq(2), "add-remove")
    assert abs(endpoints(total)[1] - (3.14159 + 2.71828 * 2 + 1.23456 + 6.28319 * 2)) < 1e-7
    g = endpoints(mech(ev("GaussianDpEvent", noise_multiplier="314159/100000")).rdp(fmpq(271828, 100000), "add-remove"))
    zc = endpoints(mech(ev("ZCDpEvent", rho=fmpq(1) / (2 * fmpq(314159, 100000) ** 2))).rdp(fmpq(271828, 100000), "add-remove"))
    assert zc[0] <= g[1] and g[0] <= zc[1]
    base = ev("GaussianDpEvent", noise_multiplier=3.14159)
    forms = [
        ev("SelfComposedDpEvent", event=base, count=6),
        ev("ComposedDpEvent", events=[base] * 6),
        ev("ComposedDpEvent", events=[ev("SelfComposedDpEvent", event=base, count=i) for i in (1, 2, 3)]),
        ev("SelfComposedDpEvent", event=ev("SelfComposedDpEvent", event=base, count=2), count=3),
    ]
    assert {ledger_of(f, "add-remove").entries[0][1] for f in forms} == {6}


def test_dp_accounting_conversion_pure_dp_by_hand():
    """DPA_TEST::test_compute_epsilon_delta_pure_dp: RDP 1.1 at order 32 and delta 1e-5 give epsilon 1.32783806176 (7 places),
    and back: delta 1e-5 at that epsilon."""
    from certify.renyi import delta_of_rdp, epsilon_of_rdp

    r = ctx.workprec(128)
    with r:
        e = endpoints(epsilon_of_rdp(ball_of("11/10"), fmpq(32), fmpq(1, 10**5)))
        d = endpoints(delta_of_rdp(ball_of("11/10"), fmpq(32), fmpq(132783806176, 10**11)))
    assert abs(e[1] - mp.mpf("1.32783806176")) < 5e-8 and abs(d[1] - mp.mpf("1e-5")) < 5e-13


def ball_of(text):
    from certify.balls import ball, exact

    return ball(exact(text))


@pytest.mark.slow
def test_dp_accounting_gaussian_conversion_to_one():
    """DPA_TEST::test_compute_epsilon_delta_gaussian: z = 4.530877117 gives (1, 1e-6)-DP (7 places) on orders 1.000 .. 99.999;
    we certify epsilon within 1e-6 of 1 (our orders snapped to 2^-20) and delta within 1e-12 of 1e-6."""
    acc = RdpAccountant(orders=[0.001 * i for i in range(1000, 100000, 7)])
    acc.compose({"class_name": "GaussianDpEvent", "noise_multiplier": 4.530877117})
    eps = acc.get_epsilon(1e-6)
    assert abs(eps - 1) < 1e-6
    assert abs(acc.get_delta(1.0) - 1e-6) < 1e-12


@pytest.mark.parametrize("z,eps", [(1.13, 19.74), (8.83, 2.04)])
def test_dp_accounting_tree_aggregation(z, eps):
    """DPA_TEST::test_compute_eps_tree (1600 steps, delta 1e-6: epsilon below theirs) and ::test_no_tree_no_sampling (one
    step per tree is the Gaussian) and ::test_single_epoch_multi_tree_rdp (the deepest tree counts)."""
    acc = RdpAccountant(neighboring_relation="REPLACE_SPECIAL")
    acc.compose(ev("SingleEpochTreeAggregationDpEvent", noise_multiplier=z, step_counts=1600))
    assert acc.get_epsilon(1e-6) < eps
    tree = mech(ev("SingleEpochTreeAggregationDpEvent", noise_multiplier=0.1, step_counts=[1]), "replace-special")
    assert endpoints(tree.rdp(fmpq(5), "replace-special")) == endpoints(mech(ev("GaussianDpEvent", noise_multiplier=0.1)).rdp(fmpq(5), "add-remove"))
    multi = mech(ev("SingleEpochTreeAggregationDpEvent", noise_multiplier=0.1, step_counts=[10, 40, 30, 20]), "replace-special")
    one = mech(ev("SingleEpochTreeAggregationDpEvent", noise_multiplier=0.1, step_counts=40), "replace-special")
    assert endpoints(multi.rdp(fmpq(2), "replace-special")) == endpoints(one.rdp(fmpq(2), "replace-special"))


@pytest.mark.parametrize("eps,count", [(0.01, 1), (1.0, 1), (100.0, 1), (1.0, 100)])
def test_dp_accounting_laplace(eps, count):
    """DPA_TEST::test_laplace: basic composition, epsilon * count (they approach it with order 1e10 at delta 1e-10; we
    certify the pure epsilon exactly, and the RDP route never below it)."""
    acc = RdpAccountant()
    acc.compose(ev("LaplaceDpEvent", noise_multiplier=1 / eps), count)
    pure = acc.get_epsilon(0)
    assert abs(pure - eps * count) <= 1e-12 * eps * count and pure >= eps * count * (1 - 1e-15)
    assert acc.get_epsilon(1e-10) >= eps * count * (1 - 1e-9) or eps * count > 50


@pytest.mark.slow
def test_dp_accounting_supports():
    """DPA_TEST::test_supports: Gaussian and SelfComposed/Composed under add-remove and replace-one; Poisson-sampled
    Gaussian not under replace-one; randomized response not under add-remove; trees only under replace-special;
    SampledWithReplacement nowhere. (dp_accounting also folds a composition of Gaussians inside a PoissonSampledDpEvent and
    SampledWithoutReplacement only of a single Gaussian, see docs/events.md.)"""
    dpa = pytest.importorskip("dp_accounting")
    rel = dpa.NeighboringRelation
    aor, ro, rs = (RdpAccountant(neighboring_relation=r) for r in (rel.ADD_OR_REMOVE_ONE, rel.REPLACE_ONE, rel.REPLACE_SPECIAL))
    g = dpa.GaussianDpEvent(1.0)
    for e in (g, dpa.SelfComposedDpEvent(g, 6), dpa.ComposedDpEvent([g, dpa.GaussianDpEvent(2.0)]), dpa.ZCDpEvent(1.0, 2.0)):
        assert aor.supports(e) and ro.supports(e)
    p = dpa.PoissonSampledDpEvent(0.1, g)
    assert aor.supports(p) and not ro.supports(p) and rs.supports(p)
    r = dpa.RandomizedResponseDpEvent(0.3, 15)
    assert rs.supports(r) and ro.supports(r) and not aor.supports(r)
    t = dpa.SingleEpochTreeAggregationDpEvent(1.0, 1)
    assert rs.supports(t) and not aor.supports(t) and not ro.supports(t)
    w = dpa.SampledWithReplacementDpEvent(1000, 10, g)
    assert not aor.supports(w) and not ro.supports(w)


def test_dp_accounting_epsilon_delta_consistency():
    """DPA_TEST::test_epsilon_delta_consistency (a subset): delta at the certified epsilon never exceeds the target delta
    by more than the float rounding, for Poisson-sampled Gaussians (q = 0 gives epsilon 0: DPA_TEST::test_zero_poisson_sample)."""
    for q, z in ((0.01, 1.0), (0.1, 10.0), (1.0, 100.0)):
        acc = RdpAccountant()
        acc.compose(ev("PoissonSampledDpEvent", sampling_probability=q, event=ev("GaussianDpEvent", noise_multiplier=z)))
        for delta in (0.1, 1e-5, 1e-12):
            e = acc.get_epsilon(delta)
            assert acc.get_delta(e) <= delta * (1 + 1e-6)
    zero = RdpAccountant()
    zero.compose(ev("PoissonSampledDpEvent", sampling_probability=0, event=ev("GaussianDpEvent", noise_multiplier=1.0)))
    assert zero.get_epsilon(1e-10) <= 1e-8


# --------------------------------------------------------------------------------------------
# exact privacy profiles below the certified (epsilon, delta)
# --------------------------------------------------------------------------------------------
def test_analytic_gaussian_profile_lies_below_the_certified_delta():
    """Balle-Wang 2018 Thm 8: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), mu = sqrt(T)/z, the exact profile."""
    for z, T, eps in (("1", 1, "1"), ("3", 10, "1/2"), ("1/2", 3, "8")):
        cert = certify_events(
            ledger_of(ev("SelfComposedDpEvent", count=T, event=ev("GaussianDpEvent", noise_multiplier=z)), "add-remove"), epsilon=eps
        )
        e = M(fmpq(*map(int, eps.split("/"))) if "/" in eps else fmpq(int(eps)))
        mu = mp.sqrt(T) / M(fmpq(*map(int, z.split("/"))) if "/" in z else fmpq(int(z)))
        exact = mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)
        assert exact <= M(certified_value(cert))


def test_laplace_profile_lies_below_the_certified_delta():
    """Laplace scale b, sensitivity 1: delta(eps) = 1 - exp((eps - 1/b)/2) for eps < 1/b (exact profile; quadrature here)."""
    b = mp.mpf(1) / 2
    for eps in ("1/2", "1", "3/2"):
        e = M(fmpq(*map(int, eps.split("/"))) if "/" in eps else fmpq(int(eps)))
        kink = (1 - e * b) / 2  # where the two densities' ratio crosses e^eps
        exact = mp.quad(lambda x: max(0, mp.exp(-abs(x) / b) - mp.exp(e) * mp.exp(-abs(x - 1) / b)) / (2 * b), [-mp.inf, 0, kink, 1, mp.inf])
        assert abs(exact - (1 - mp.exp((e - 1 / b) / 2))) < mp.mpf("1e-20")
        cert = certify_events(ledger_of(ev("LaplaceDpEvent", noise_multiplier="1/2"), "add-remove"), epsilon=eps)
        assert exact <= M(certified_value(cert))


def test_kov_optimal_composition_lies_below_the_certified_delta():
    """Kairouz-Oh-Viswanath 2015 Thm 3.3: k-fold (eps0, delta0)-DP composes exactly to
    delta(eps) = 1 - (1 - delta0)^k (1 - E[(1 - e^(eps - L))_+]), L = (k - 2J) eps0, J ~ Bin(k, 1/(1 + e^eps0))."""
    for e0, d0, k, eps in (("1/10", "1/1000", 20, "1"), ("1", "0", 5, "3"), ("1/2", "1/100000", 50, "4")):
        E0, D0, E = (M(fmpq(*map(int, s.split("/"))) if "/" in s else fmpq(int(s))) for s in (e0, d0, eps))
        w = 1 / (1 + mp.exp(E0))
        hs = mp.fsum(mp.binomial(k, j) * (1 - w) ** (k - j) * w**j * max(0, 1 - mp.exp(E - (k - 2 * j) * E0)) for j in range(k + 1))
        exact = 1 - (1 - D0) ** k * (1 - hs)
        led = ledger_of(ev("SelfComposedDpEvent", count=k, event=ev("EpsilonDeltaDpEvent", epsilon=e0, delta=d0)), "replace-one")
        assert exact <= M(certified_value(certify_events(led, epsilon=eps)))
        if d0 != "0":  # the certified epsilon at a delta above the events' own delta
            cert = certify_events(led, delta="1/10")
            assert "extra_delta" in cert.quantities


# --------------------------------------------------------------------------------------------
# the parser and the refusals
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "event,relation,pattern",
    [
        (ev("ComposedDpEvent", events=None), "add-remove", r"event\.events.*list"),
        (ev("GaussianDpEvent"), "add-remove", r"GaussianDpEvent lacks the field 'noise_multiplier'"),
        (ev("GaussianDpEvent", noise_multiplier=1.0, __class__="x"), "add-remove", r"__class__"),
        (ev("GaussianDpEvent", noise_multiplier=1.0, sigma=2), "add-remove", r"has no field 'sigma'"),
        (ev("FancyDpEvent", x=1), "add-remove", r"unknown event class 'FancyDpEvent'"),
        (ev("NonPrivateDpEvent"), "add-remove", r"nothing to certify"),
        (ev("NoOpDpEvent"), "add-remove", r"nothing to certify"),
        (ev("RepeatAndSelectDpEvent", event=ev("NoOpDpEvent"), mean=2, shape=1), "add-remove", r"contains no mechanism"),
        (ev("RandomizedResponseDpEvent", noise_parameter=0.5, num_buckets=2), "add-remove", r"replace-one, replace-special only"),
        (ev("LaplaceDpEvent", noise_multiplier=-1.0), "add-remove", r"noise_multiplier.*must be in"),
        (ev("LaplaceDpEvent", noise_multiplier=float("nan")), "add-remove", r"NaN"),
        (ev("SelfComposedDpEvent", event=ev("LaplaceDpEvent", noise_multiplier=1), count=-2), "add-remove", r"count"),
        (ev("SelfComposedDpEvent", event=ev("LaplaceDpEvent", noise_multiplier=1), count=10**19), "add-remove", r"10\^18"),
        (
            ev("PoissonSampledDpEvent", sampling_probability=0.1, event=ev("DiscreteLaplaceDpEvent", noise_parameter=1, sensitivity=1)),
            "add-remove",
            r"GaussianDpEvent only",
        ),
        (ev("DiscreteLaplaceDpEvent", noise_parameter=1, sensitivity=65), "add-remove", r"sensitivity.*\[1, 64\]"),
        (["dp_accounting.dp_event", "GaussianDpEvent", 1.0], "add-remove", r"write each as an object"),
        (ev("GaussianDpEvent", noise_multiplier=1), "replace-all", r"must be one of"),
    ],
)
def test_parser_refuses_naming_class_and_field(event, relation, pattern):
    with pytest.raises(InputError, match=pattern):
        ledger_of(event, relation)


def test_cycles_and_huge_dags_are_refused_or_cheap():
    c = ev("ComposedDpEvent", events=[])
    c["events"].append(c)
    with pytest.raises(InputError, match="nested"):
        ledger_of(c, "add-remove")
    d = ev("LaplaceDpEvent", noise_multiplier=1)
    for _ in range(60):  # 2^60 leaves as a DAG of 61 objects
        d = ev("ComposedDpEvent", events=[d, d])
    with pytest.raises(InputError, match="10\\^18"):
        ledger_of(d, "add-remove")
    e = ev("LaplaceDpEvent", noise_multiplier=1)
    for _ in range(40):
        e = ev("ComposedDpEvent", events=[e, e])
    assert ledger_of(e, "add-remove").entries[0][1] == 2**40


def test_pure_epsilon_and_its_refusal():
    led = ledger_of(
        ev(
            "ComposedDpEvent",
            events=[
                ev("LaplaceDpEvent", noise_multiplier="1/2"),
                ev("SelfComposedDpEvent", count=3, event=ev("PermuteAndFlipDpEvent", epsilon="1/4")),
            ],
        ),
        "add-remove",
    )
    cert = certify_events(led, delta=0)
    assert certified_value(cert) == fmpq(11, 4) and "0)-DP" in cert.conclusions[0].statement
    assert verify_document(json.loads(cert.dumps())).exit_code == 0
    with pytest.raises(InputError, match="--delta.*not a pure mechanism"):
        certify_events(ledger_of(ev("GaussianDpEvent", noise_multiplier=1), "add-remove"), delta=0)


def test_every_mechanism_certifies_and_verifies_under_each_relation():
    """One certificate per (mechanism, relation) it supports, each query kind once, re-checked by the checker."""
    events = {
        "GaussianDpEvent": ev("GaussianDpEvent", noise_multiplier="2"),
        "LaplaceDpEvent": ev("LaplaceDpEvent", noise_multiplier="3"),
        "DiscreteLaplaceDpEvent": ev("DiscreteLaplaceDpEvent", noise_parameter="1/2", sensitivity=2),
        "DiscreteGaussianDpEvent": ev("DiscreteGaussianDpEvent", sigma="3", sensitivity=1),
        "RandomizedResponseDpEvent": ev("RandomizedResponseDpEvent", noise_parameter="1/2", num_buckets=4),
        "EpsilonDeltaDpEvent": ev("EpsilonDeltaDpEvent", epsilon="1/2", delta="1/1000000000"),
        "ZCDpEvent": ev("ZCDpEvent", rho="1/100"),
        "ExponentialMechanismDpEvent": ev("ExponentialMechanismDpEvent", epsilon="1/2"),
        "PermuteAndFlipDpEvent": ev("PermuteAndFlipDpEvent", epsilon="1/2"),
        "SingleEpochTreeAggregationDpEvent": ev("SingleEpochTreeAggregationDpEvent", noise_multiplier="5", step_counts=[100, 50]),
        "PoissonSampledDpEvent": ev("PoissonSampledDpEvent", sampling_probability="1/50", event=ev("GaussianDpEvent", noise_multiplier="1")),
        "SampledWithoutReplacementDpEvent": ev(
            "SampledWithoutReplacementDpEvent", source_dataset_size=100, sample_size=2, event=ev("GaussianDpEvent", noise_multiplier="1")
        ),
        "RepeatAndSelectDpEvent": ev("RepeatAndSelectDpEvent", event=ev("LaplaceDpEvent", noise_multiplier="3"), mean=5, shape=1),
    }
    # PLD only (tests/test_events_pld_rounding.py, test_events_pld_mixture.py), and TruncatedSubsampledGaussian (read under
    # every relation to refuse all but add-remove with its reason: tests/test_events_tsg.py)
    pld_only = {"PoissonSampledDpEvent/LaplaceDpEvent", "MixtureOfGaussiansDpEvent", "TruncatedSubsampledGaussianDpEvent"}
    assert set(events) == set(MECHANISMS) - pld_only
    queries = ({"delta": "1e-5"}, {"epsilon": "2"}, {"order": "5/2"})
    n = 0
    for cls, event in events.items():
        for relation in sorted(MECHANISMS[cls].RELATIONS):
            q = queries[n % 3]
            n += 1
            cert = certify_events(ledger_of(ev("SelfComposedDpEvent", count=10, event=event), relation), **q)
            doc = json.loads(cert.dumps())
            assert verify_document(doc).exit_code == 0, (cls, relation, q)
            if MECHANISMS[cls].UPPER_ONLY:
                assert "upper bound only" in cert.evaluation.claim_named("bound").statement


# --------------------------------------------------------------------------------------------
# forgeries, the command, the accountant interface
# --------------------------------------------------------------------------------------------
def _reseal(doc):
    doc["digest"] = digest_of(doc)
    return doc


def _verdict(doc):
    try:
        return verify_document(copy.deepcopy(doc)).exit_code
    except InputError:
        return 2


def test_forged_rdp_or_epsilon_is_refused():
    led = ledger_of(
        ev("ComposedDpEvent", events=[ev("LaplaceDpEvent", noise_multiplier="1"), ev("GaussianDpEvent", noise_multiplier="4")]), "add-remove"
    )
    doc = json.loads(certify_events(led, delta="1e-6").dumps())
    assert _verdict(doc) == 0
    for name in ("rdp[0]", "rdp", "epsilon"):
        d = copy.deepcopy(doc)
        d["quantities"][name]["ball"]["mid"][0] = str(int(d["quantities"][name]["ball"]["mid"][0]) * 9 // 10)
        assert _verdict(_reseal(d)) in (4, 5), name
    d = copy.deepcopy(doc)  # a smaller headline bound, statements rewritten to match
    old = d["witnesses"]["bound"]
    d["witnesses"]["bound"] = "1"
    for c in d["claims"] + d["conclusions"]:
        for k in ("statement", "rhs"):
            if k in c:
                c[k] = c[k].replace(old, "1")
    assert _verdict(_reseal(d)) in (4, 5)
    d = copy.deepcopy(doc)  # a weaker mechanism claimed (the noise multiplier raised)
    d["inputs"]["event[1].noise_multiplier"] = "40"
    assert _verdict(_reseal(d)) in (4, 5)
    d = copy.deepcopy(doc)  # a parameter with a note that does not state it
    d["inputs"]["event[0].noise_multiplier.note"] = "binary float 2.0 from dp_accounting; exact binary value 2 used"
    assert _verdict(_reseal(d)) in (2, 4, 5)


def test_account_command_writes_a_certificate_verify_accepts(tmp_path, capsys):
    dpa = pytest.importorskip("dp_accounting")
    e = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(2.0), 10), dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0))])
    path = tmp_path / "e.json"
    path.write_text(json.dumps(as_json(e)))
    out = tmp_path / "c.json"
    assert cli.main(["account", str(path), "--delta", "1e-6", "--out", str(out)]) == 0
    assert "certified epsilon <=" in capsys.readouterr().out
    assert cli.main(["verify", str(out)]) == 0
    assert cli.main(["account", str(path), "--delta", "0"]) == 2
    assert cli.main(["account", str(path), "--order", "2", "--accountant", "pld"]) == 2  # pld answers --delta or --epsilon
    err = capsys.readouterr().err
    assert "not a pure mechanism" in err and "is an option of --accountant rdp only" in err and "Traceback" not in err
    (tmp_path / "bad.json").write_text('{"class_name": "ComposedDpEvent", "events": null}')
    assert cli.main(["account", str(tmp_path / "bad.json"), "--epsilon", "1"]) == 2
    assert "ComposedDpEvent.events must be a list" in capsys.readouterr().err


def test_rdp_accountant_interface_matches_dp_accounting_and_rounds_up():
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import RdpAccountant as TheirRdp

    e = dpa.ComposedDpEvent([dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), dpa.LaplaceDpEvent(10.0)])
    ours, theirs = RdpAccountant(), TheirRdp()
    assert ours.compose(e, 100) is ours
    theirs.compose(e, 100)
    eps = ours.get_epsilon(1e-5)
    assert eps >= M(certified_value(ours.certificate)) and eps == round_up(certified_value(ours.certificate))
    assert verify_document(json.loads(ours.certificate.dumps())).exit_code == 0
    assert "binary float 0.01 from dp_accounting" in ours.certificate.inputs["event[0].sampling_probability.note"]
    assert eps <= theirs.get_epsilon(1e-5) * 1.001  # no looser than the float accountant (here, tighter or equal)
    assert abs(ours.get_delta(2.0) / theirs.get_delta(2.0) - 1) < 0.05
    assert isinstance(ours.ledger, dpa.ComposedDpEvent)
    assert not ours.supports(dpa.NonPrivateDpEvent())
    with pytest.raises(InputError, match="NonPrivateDpEvent"):
        ours.compose(dpa.NonPrivateDpEvent())
    empty = RdpAccountant()
    assert empty.get_epsilon(1e-5) == 0.0 and empty.certificate is None
    assert RdpAccountant().compose(dpa.GaussianDpEvent(1.0)).get_epsilon(0) == math.inf


def test_without_dp_accounting_the_named_tuple_json_is_read():
    acc = RdpAccountant(neighboring_relation="replace-one")
    acc.compose({"class_name": "RandomizedResponseDpEvent", "module_name": "dp_accounting.dp_event", "noise_parameter": 0.5, "num_buckets": 4}, 3)
    assert acc.get_epsilon(1e-6) > 0 and acc.certificate.inputs["event[0].count"] == "3"
    assert acc.ledger["events"][0]["class_name"] == "SelfComposedDpEvent"


def test_partitions_reference_is_complete():
    assert len(list(_partitions(6))) == 11 and all(sum(p) == 6 for p in _partitions(6))
    assert list(itertools.islice(_partitions(3), 3)) == [(3,), (2, 1), (1, 1, 1)]
