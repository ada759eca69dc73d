"""Proof obligations behind the closed forms of the event accountant (paper key ``events`` of ``certify proofs``).

Each obligation checks a displayed identity a mechanism module relies on, with sympy (exact reductions and
sign proofs from the symbols' assumptions); a check takes the claimed expression as a keyword argument so that a
test can feed a wrong one and watch it be rejected. alpha = 1 + s with s > 0 throughout (orders above 1).
"""

from __future__ import annotations

import sympy as sp

from ..proofs.core import PROVED, UNDECIDED, Outcome, combine, obligation
from ..proofs.tools import equal, positive

PAPER = "events"

s, b, t, e, k = sp.symbols("s b t epsilon k", positive=True)
x = sp.Symbol("x", real=True)
al = 1 + s  # alpha > 1


@obligation(
    PAPER,
    "E-rr-eps",
    "Mironov17 Sec. 6; KOV15 (certify.events.mechanisms.base.rr_eps_rdp)",
    "for R = (e^eps, 1)/(1 + e^eps) and R' = (1, e^eps)/(1 + e^eps): sum_y R(y)^alpha R'(y)^(1-alpha) = "
    "(e^(alpha eps) + e^((1-alpha) eps))/(1 + e^eps), and the same for the reversed pair (both orders agree)",
)
def rr_eps(claimed=(sp.exp(al * e) + sp.exp((1 - al) * e)) / (1 + sp.exp(e))) -> Outcome:
    p = [sp.exp(e) / (1 + sp.exp(e)), 1 / (1 + sp.exp(e))]
    q = [p[1], p[0]]
    fwd = sum(pi**al * qi ** (1 - al) for pi, qi in zip(p, q))
    rev = sum(qi**al * pi ** (1 - al) for pi, qi in zip(p, q))
    return combine([("D(R||R')", equal(sp.powsimp(sp.expand_power_base(fwd, force=True), force=True), claimed)), ("D(R'||R)", equal(rev, fwd))])


@obligation(
    PAPER,
    "E-laplace-rdp",
    "Mironov17 Prop. 6 (certify.events.mechanisms.laplace)",
    "int p(x)^alpha q(x)^(1-alpha) dx for p = Lap(0, b), q = Lap(1, b), as the three integrals over x < 0, 0 < x < 1, "
    "x > 1, equals alpha/(2alpha-1) e^((alpha-1)/b) + (alpha-1)/(2alpha-1) e^(-alpha/b)",
)
def laplace_rdp(claimed=al / (2 * al - 1) * sp.exp((al - 1) / b) + (al - 1) / (2 * al - 1) * sp.exp(-al / b)) -> Outcome:
    def dens(expo):  # p^alpha q^(1-alpha) on a piece where |x| and |x - 1| are linear
        return sp.exp(expo / b) / (2 * b)

    left = sp.integrate(dens(al * x + (1 - al) * (x - 1)), (x, -sp.oo, 0))  # |x| = -x, |x-1| = 1-x
    mid = sp.integrate(dens(-al * x + (1 - al) * (x - 1)), (x, 0, 1))  # |x| = x, |x-1| = 1-x
    right = sp.integrate(dens(-al * x - (1 - al) * (x - 1)), (x, 1, sp.oo))  # |x| = x, |x-1| = x-1
    return equal(sp.simplify(left + mid + right), claimed)


@obligation(
    PAPER,
    "E-laplace-superadditive",
    "our argument (certify.events.mechanisms.laplace): a vector shift of l1 norm <= 1 is no worse than one coordinate",
    "g(u) = log(alpha/(2alpha-1) e^((alpha-1)u) + (alpha-1)/(2alpha-1) e^(-alpha u)) (the log-moment of a Laplace shift "
    "u, scale 1) has g(0) = 0 and g'' = w1 w2 (2alpha-1)^2/(w1 + w2)^2 >= 0 with w1, w2 its two terms: g is convex "
    "with g(0) = 0, hence superadditive, so sum_i g(u_i) <= g(sum_i u_i) <= g(1) for u_i >= 0, sum u_i <= 1",
)
def laplace_superadditive() -> Outcome:
    u = sp.Symbol("u", positive=True)
    w1 = al / (2 * al - 1) * sp.exp((al - 1) * u)
    w2 = (al - 1) / (2 * al - 1) * sp.exp(-al * u)
    g = sp.log(w1 + w2)
    second = w1 * w2 * (2 * al - 1) ** 2 / (w1 + w2) ** 2
    return combine(
        [
            ("g(0) = 0", equal(g.subs(u, 0), 0)),
            ("g'' = w1 w2 (2alpha-1)^2/(w1+w2)^2", equal(sp.diff(g, u, 2), second)),
            ("g'' >= 0", positive(second, strict=False)),
        ]
    )


@obligation(
    PAPER,
    "E-discrete-laplace",
    "our derivation (certify.events.mechanisms.discrete_laplace)",
    "for P = DLap(t), Q = DLap(t) + k (mass tanh(t/2) e^(-t|x|)), sum_x P^alpha Q^(1-alpha) = (e^(t(alpha-1)k) + "
    "e^(-t alpha k))/(1 + e^-t) + tanh(t/2) e^(t(alpha-1)k) sum_{x=1}^{k-1} e^(-t(2alpha-1)x): the three geometric "
    "series over x <= 0, 0 < x < k, x >= k",
)
def discrete_laplace() -> Outcome:
    kk = sp.Symbol("k", integer=True, positive=True)
    c = sp.tanh(t / 2)
    geo = 1 / (1 - sp.exp(-t))  # sum_{j >= 0} e^(-t j), a geometric series of ratio e^-t in (0, 1)
    left = c * sp.exp(t * (al - 1) * kk) * geo  # x <= 0: e^(t x) e^(t(alpha-1)k), x = -j
    right = c * sp.exp(t * (1 - al) * kk) * sp.exp(-t * kk) * geo  # x >= k: e^(-t x) e^(t(1-alpha)k), x = k + j
    claimed_outer = (sp.exp(t * (al - 1) * kk) + sp.exp(-t * al * kk)) / (1 + sp.exp(-t))
    pieces = [
        ("exponent for x <= 0", equal(al * (-x) + (1 - al) * (kk - x), -x + (1 - al) * kk)),
        ("exponent for 0 < x < k", equal(al * x + (1 - al) * (kk - x), (2 * al - 1) * x + (1 - al) * kk)),
        ("exponent for x >= k", equal(al * x + (1 - al) * (x - kk), x - (1 - al) * kk)),
        ("tanh(t/2) = (1 - e^-t)/(1 + e^-t)", equal(c.rewrite(sp.exp), (1 - sp.exp(-t)) / (1 + sp.exp(-t)))),
        ("outer series", equal(sp.simplify((left + right).rewrite(sp.exp)), claimed_outer)),
    ]
    return combine(pieces)


def _pb(expr):
    return sp.expand_power_base(expr, force=True)


@obligation(
    PAPER,
    "E-rr-sums",
    "Mironov17 Sec. 6 (certify.events.mechanisms.randomized_response)",
    "with a = 1 - p + p/k, b = p/k: a + (k-1) b = 1; REPLACE_ONE: sum_y P^alpha Q^(1-alpha) = a^alpha b^(1-alpha) + "
    "b^alpha a^(1-alpha) + (k-2) b; REPLACE_SPECIAL against U = 1/k: sum_y P^alpha U^(1-alpha) = ((ak)^alpha + (k-1)(bk)^alpha)/k "
    "and sum_y U^alpha P^(1-alpha) = ((ak)^(1-alpha) + (k-1)(bk)^(1-alpha))/k",
)
def rr_sums() -> Outcome:
    p = sp.Symbol("p", positive=True)
    a_, b_ = 1 - p + p / k, p / k
    A, B, K = sp.symbols("A B K", positive=True)  # a, b, k as free positive symbols for the power identities
    return combine(
        [
            ("a + (k-1) b = 1", equal(a_ + (k - 1) * b_, 1)),
            ("the k - 2 untouched buckets", equal(B**al * B ** (1 - al), B)),
            (
                "P^alpha U^(1-alpha) = (A K)^alpha / K",
                equal(sp.expand_power_base(A**al * (1 / K) ** (1 - al), force=True), sp.expand_power_base((A * K) ** al / K, force=True)),
            ),
            (
                "U^alpha P^(1-alpha) = (A K)^(1-alpha) / K",
                equal(sp.expand_power_base((1 / K) ** al * A ** (1 - al), force=True), sp.expand_power_base((A * K) ** (1 - al) / K, force=True)),
            ),
        ]
    )


@obligation(
    PAPER,
    "E-extra-delta",
    "KOV15 (certify.events.mechanisms.epsilon_delta, certify.events.certificates)",
    "with delta' = (delta - delta_x)/(1 - delta_x): delta_x + (1 - delta_x) delta' = delta (the effective delta left to the "
    "Rényi curve), and 1 - (1 - d1)(1 - d2) = d1 + d2 - d1 d2",
)
def extra_delta() -> Outcome:
    d, dx, d1, d2 = sp.symbols("delta delta_x d1 d2", positive=True)
    dp = (d - dx) / (1 - dx)
    return combine([("effective delta", equal(dx + (1 - dx) * dp, d)), ("two deltas", equal(1 - (1 - d1) * (1 - d2), d1 + d2 - d1 * d2))])


@obligation(
    PAPER,
    "E-conversion-inverse",
    "Balle20 Thm 21 solved for delta (certify.renyi.delta_of_rdp)",
    "delta = exp((alpha-1)(R - eps + log((alpha-1)/alpha)) - log alpha) makes R + log((alpha-1)/alpha) - (log delta + "
    "log alpha)/(alpha-1) equal eps, and that right side decreases strictly in delta",
)
def conversion_inverse() -> Outcome:
    R, eps, d = sp.symbols("R epsilon delta", positive=True)
    conv = lambda dd: R + sp.log(s / al) - (sp.log(dd) + sp.log(al)) / s  # noqa: E731  (alpha - 1 = s)
    delta = sp.exp(s * (R - eps + sp.log(s / al)) - sp.log(al))
    return combine(
        [
            ("(C) at (C')", equal(sp.expand_log(conv(delta), force=True), eps)),
            ("d/d delta of (C) = -1/((alpha-1) delta) < 0", equal(sp.diff(conv(d), d), -1 / (s * d))),
        ]
    )


@obligation(
    PAPER,
    "E-tree-depth",
    "KMSTTX21 App. D (certify.events.mechanisms.tree_aggregation)",
    "ceil(log2(n + 1)) = bit_length(n) for every integer n >= 0: with L = bit_length(n), 2^(L-1) <= n < 2^L (n >= 1), "
    "so 2^(L-1) < n + 1 <= 2^L and L - 1 < log2(n + 1) <= L (n = 0: both are 0); checked exhaustively for n < 2^16",
)
def tree_depth() -> Outcome:
    import math

    bad = [m for m in range(2**16) if math.ceil(math.log2(m + 1)) != m.bit_length()]
    exact_powers = all((2**j - 1).bit_length() == j for j in range(1, 200))
    if bad or not exact_powers:
        return Outcome(UNDECIDED, "exhaustive", f"mismatch at {bad[:3]}")
    return Outcome(PROVED, "integer argument (statement) + exhaustive check n < 2^16", "")


@obligation(
    PAPER,
    "E-noise-monotone",
    "certify.events.calibrate (the calibration's bracket)",
    "at every order alpha > 1 the RDP bounds of the calibrated families are non-increasing in their noise: "
    "d/dz alpha/(2z^2) = -alpha/z^3 <= 0 (Gaussian, tree aggregation, discrete Gaussian); for Laplace with eps = 1/b, "
    "d/deps of log(alpha/(2alpha-1) e^((alpha-1)eps) + (alpha-1)/(2alpha-1) e^(-alpha eps)) = "
    "alpha(alpha-1)/(2alpha-1) (e^((alpha-1)eps) - e^(-alpha eps)) / (w1 + w2) >= 0, so the bound grows with 1/b",
)
def noise_monotone() -> Outcome:
    z = sp.Symbol("z", positive=True)
    w1 = al / (2 * al - 1) * sp.exp((al - 1) * e)
    w2 = (al - 1) / (2 * al - 1) * sp.exp(-al * e)
    slope = al * (al - 1) / (2 * al - 1) * (sp.exp((al - 1) * e) - sp.exp(-al * e)) / (w1 + w2)
    return combine(
        [
            ("d/dz alpha/(2z^2)", equal(sp.diff(al / (2 * z**2), z), -al / z**3)),
            ("-alpha/z^3 <= 0", positive(al / z**3, strict=False)),
            ("Laplace slope", equal(sp.diff(sp.log(w1 + w2), e), slope)),
            ("e^((alpha-1)eps) >= e^(-alpha eps)", positive(sp.expand((al - 1) * e + al * e), strict=False)),
            ("the slope's other factors are positive", positive(al * (al - 1) / (2 * al - 1) / (w1 + w2))),
        ]
    )


@obligation(
    PAPER,
    "E-wor-forward-difference",
    "WBK19 Thm 27 (certify.events.mechanisms.sampled_without_replacement)",
    "for P = N(1, sigma^2), Q = N(0, sigma^2): E_Q[(P/Q)^k] = e^(k(k-1)/(2 sigma^2)) (a Gaussian integral), and "
    "(X - 1)^l = sum_{k=0..l} (-1)^(l-k) C(l,k) X^k (binomial theorem, checked for l <= 10), so the forward difference "
    "Delta^l = sum_k (-1)^(l-k) C(l,k) e^(k(k-1)/(2 sigma^2)) equals E_Q[(P/Q - 1)^l], which is >= 0 for even l",
)
def wor_forward_difference() -> Outcome:
    sg = sp.Symbol("sigma", positive=True)
    kk = sp.Symbol("k", positive=True)
    X = sp.Symbol("X", positive=True)
    q = sp.exp(-(x**2) / (2 * sg**2)) / (sg * sp.sqrt(2 * sp.pi))
    ratio = sp.exp((2 * x - 1) / (2 * sg**2))  # p/q with p the density of N(1, sigma^2)
    moment = sp.integrate(sp.simplify(q * sp.exp(kk * (2 * x - 1) / (2 * sg**2))), (x, -sp.oo, sp.oo), conds="none")
    pieces = [
        ("p/q", equal(sp.simplify(q.subs(x, x - 1) / q), ratio)),
        ("E_Q[(P/Q)^k]", equal(sp.simplify(moment), sp.exp(kk * (kk - 1) / (2 * sg**2)))),
    ]
    for ll in range(1, 11):
        pieces.append((f"binomial l={ll}", equal(sp.expand((X - 1) ** ll), sum((-1) ** (ll - j) * sp.binomial(ll, j) * X**j for j in range(ll + 1)))))
    return combine(pieces)


from . import pld_proofs  # noqa: E402,F401  (the PLD curves' obligations, registered under the same paper)
from . import calibrate_proofs  # noqa: E402,F401  (the PLD calibration's obligation, registered under the same paper)
