"""Rényi DP of the Poisson-subsampled Gaussian mechanism, certified in balls.

One DP-SGD step with Poisson sampling (rate q), add/remove adjacency and Gaussian noise of standard
deviation sigma*C on the sum of clipped gradients is, after scaling by the noise, the pair

    remove:  P = (1-q) N(0,1) + q N(1/sigma, 1),   Q = N(0,1);     add: the same pair in the other order.

Mironov, Talwar, Zhang (2019), "Rényi Differential Privacy of the Sampled Gaussian Mechanism"
(arXiv:1908.10530), Section 3.3, Case I (integer alpha): for integer alpha >= 2 the remove-direction
moment is the all-positive binomial sum

    A_alpha = E_Q[(P/Q)^alpha] = sum_{k=0..alpha} C(alpha,k) (1-q)^(alpha-k) q^k exp(k(k-1)/(2 sigma^2)),
    eps_RDP(alpha) = log(A_alpha) / (alpha - 1).

(Section 3.3, Case II is the fractional-alpha computation; :func:`log_A_frac` encloses the same integral.)
Where these numbers come from: the paper's own text is in none of the sources we could search (only its
abstract is); dp_accounting 0.6's ``rdp_privacy_accountant._compute_log_a_frac`` says "Computation derived
in Sec 3.3 of https://arxiv.org/pdf/1908.10530", and a public Julia DP-SGD accountant labels its two
branches "Section 3.3, Case I: Integer α" and "Section 3.3, Case II: Fractional".

Add/remove adjacency needs both orders of the pair: A_alpha >= B_alpha = E_P[(Q/P)^alpha] for every real
alpha >= 1 (the remove direction dominates the add direction for this mechanism), which makes eps_RDP(alpha)
an RDP bound for add/remove adjacency; Opacus and dp_accounting rely on the same statement (they evaluate
A_alpha only), which MTZ19 make in Sec. 3 (its theorem number could not be confirmed from any source we could
read). We do not rest on the citation: the statement is proved in :mod:`certify.poisson.proofs` (obligation
``P-remove-dominates-add`` of ``certify proofs --paper mtz-poisson``: a Gaussian shift symmetry reduces it to
a pointwise inequality, each algebraic step checked by sympy), and tests/test_poisson_dominance.py compares
both directions by an independent 50-digit quadrature.

Fractional alpha: K(alpha) = log E_Q[(P/Q)^alpha] = (alpha-1) eps_RDP(alpha) is a cumulant generating
function (of log(P/Q) under Q), hence convex in alpha, with K(1) = 0; the chord between the neighbouring
integers a0 = floor(alpha) and a0 + 1 is therefore an upper bound on K(alpha) (:func:`K_ball`).

Rounding: every function returns an Arb ball containing the exact value (the sum has only positive
terms, so there is no cancellation; it is summed by the exact term ratio, with no overflow because Arb
exponents are unbounded). The float versions (:mod:`certify.poisson.choice`) are used only to *choose* alpha.
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..balls import InputError, acb, arb, ball, ctx, float_of, fmpq, log1m_float, log_float
from ..limits import BUDGET_SECONDS, cap

#: Largest Rényi order accepted (the sum has alpha + 1 terms).
ALPHA_MAX = cap("renyi_order_poisson")


@lru_cache(maxsize=4096)
def _log_A_int_cached(alpha: int, qp: int, qq: int, sp: int, sq: int, prec: int) -> arb:
    # keyed on the integers of q = qp/qq and sigma = sp/sq (hashing an fmpq costs microseconds)
    q, sigma = fmpq(qp, qq), fmpq(sp, sq)
    if q == 1:  # only k = alpha survives: A = exp(alpha(alpha-1)/(2 sigma^2))
        return ball(fmpq(alpha * (alpha - 1), 2) / (sigma * sigma))
    # A - 1 = sum_k w_k (exp(k(k-1)c) - 1) with the binomial weights w_k = C(alpha,k)(1-q)^(alpha-k) q^k
    # (they sum to 1), c = 1/(2 sigma^2): the terms k = 0, 1 vanish and every other term is positive, so
    # log A = log1p(A - 1) keeps full relative accuracy even when A - 1 is tiny (q -> 0 or sigma -> oo).
    # A term is w_k expm1(x_k) when x_k = k(k-1)c < 1, else t_k - w_k with t_k = w_k exp(x_k) >= e w_k
    # (that difference loses at most two bits); w_k and t_k follow from their exact term ratios.
    # The ball operations are exactly those of the first version (issued certificates re-derive to the
    # same balls); only Python overhead was removed (ball() of a rational inlined as arb(p) / arb(q)).
    c = 1 / ball(2 * sigma * sigma)
    E = (2 * c).exp()
    rp, rq = qp, qq - qp  # r = q / (1 - q) = rp / rq
    two_s2 = int((2 * sigma * sigma).ceil())  # an integer n is < 2 sigma^2 iff n < ceil(2 sigma^2)
    w = ball(1 - q) ** alpha  # w_0
    t = w  # t_0 = w_0 exp(0)
    g = arb(1)  # exp(k/sigma^2) = exp(x_(k+1) - x_k) at the current k
    excess = arb(0)
    for k in range(alpha):
        x = fmpq(rp * (alpha - k), rq * (k + 1))  # w_(k+1) / w_k = r (alpha - k) / (k + 1), exact (in lowest terms)
        ratio = arb(x.p) if x.q == 1 else arb(x.p) / arb(x.q)  # = ball(x)
        w = w * ratio
        t = t * g * ratio
        g = g * E
        j = k + 1
        if j >= 2:
            excess = excess + (w * (fmpq(j * (j - 1)) * c).expm1() if j * (j - 1) < two_s2 else t - w)
    return excess.log1p()


def log_A_int(alpha: int, q: fmpq, sigma: fmpq) -> arb:
    """Ball containing log(A_alpha) of MTZ (2019), Sec. 3.3 Case I, integer alpha >= 1, 0 < q <= 1, sigma > 0.

    Evaluated at the current working precision (memoised by exact inputs and precision). log A_1 = 0.
    """
    if alpha == 1:
        return arb(0)
    return _log_A_int_cached(int(alpha), int(q.p), int(q.q), int(sigma.p), int(sigma.q), ctx.prec)


def K_ball(alpha: fmpq, q: fmpq, sigma: fmpq) -> arb:
    """Ball containing an upper bound on K(alpha) = (alpha-1) eps_RDP(alpha) for rational alpha > 1.

    Integer alpha: K = log A_alpha exactly (MTZ 2019). Fractional alpha in (a0, a0 + 1): the convexity
    chord (a0 + 1 - alpha) K(a0) + (alpha - a0) K(a0 + 1), an upper bound on K(alpha) (K is a cumulant
    generating function, hence convex). The ball's upper endpoint is the bound used.
    """
    if alpha.q == 1:
        return log_A_int(int(alpha.p), q, sigma)
    a0 = int(alpha.floor())
    t = alpha - a0
    return ball(1 - t) * log_A_int(a0, q, sigma) + ball(t) * log_A_int(a0 + 1, q, sigma)


FRACTIONAL = ("chord", "integral")


#: the most work one Rényi evaluation may ask for, in estimated seconds on the 2-core reference machine; decided
#: from the inputs, witnesses and precision before any sum (a forged certificate cannot keep the checker busy)
MAX_WORK_SECONDS = BUDGET_SECONDS


def work_seconds(alpha: fmpq, pairs: int, prec: int, fractional: str = "chord", phases: int = 0) -> float:
    """Estimated seconds of evaluating a schedule of ``phases`` phases with ``pairs`` distinct (q, sigma) pairs at
    ``alpha`` and ``prec`` bits (:func:`certify.poisson.certificates.evaluate`, and the checker's comparisons).

    Measured (python-flint 0.9): about 1.3 us per binomial term up to 512 bits, growing linearly in the precision
    beyond and quadratically beyond 8192 bits (alpha = 4096: 5.5 ms at 128 bits, 42 ms at 4096, 2.3 s at 65536);
    the integral of ``fractional="integral"`` 3-10 ms at 128 bits, 0.05-0.7 s at 1024 and 2-22 s at 4096 (about
    (prec/128)^2.3); a small sum costs 12-16 us whatever alpha; every phase, distinct or not, costs 0.17 ms at 128
    bits and 0.29 ms at 1024 of claims, quantities and their checks (a 2000-phase certificate: 0.34 s to verify in
    a fresh process). The estimate errs high (twice the idle cost, for a shared machine): 50 us per pair, 3 us per
    term, 10 ms (prec/128)^2.5 per integral, 0.35 ms (prec/128)^0.3 per phase."""
    a0 = min(int(alpha.p // alpha.q), 10**12)  # (callers parse alpha <= 4096 first; no float overflow regardless)
    terms = a0 + 1 if alpha.q == 1 else 2 * a0 + 3  # the chord: the sums at floor(alpha) and floor(alpha) + 1
    per_pair = 5e-5 + terms * 3e-6 * max(1.0, prec / 512) * max(1.0, prec / 8192)  # 5e-5: the fixed cost of a sum
    if alpha.q != 1 and fractional == "integral":
        per_pair += 1e-2 * max(1.0, prec / 128) ** 2.5
    return pairs * per_pair + phases * 3.5e-4 * max(1.0, prec / 128) ** 0.3


def check_work(alpha: fmpq, pairs: int, prec: int, fractional: str = "chord", phases: int = 0) -> None:
    """InputError (naming ``alpha``) when :func:`work_seconds` exceeds MAX_WORK_SECONDS."""
    w = work_seconds(alpha, pairs, prec, fractional, phases)
    if w > MAX_WORK_SECONDS:
        mode = " in integral mode" if alpha.q != 1 and fractional == "integral" else ""
        raise InputError(
            "alpha",
            f"evaluating alpha = {alpha} for {phases or pairs} phase(s), {pairs} distinct (q, sigma) pair(s), at {prec} bits{mode} would "
            f"take about {w:.3g} s (limit {MAX_WORK_SECONDS:g} s); use fewer distinct phases, a smaller or integer alpha, or the chord",
        )


def rdp_ball(alpha: fmpq, q: fmpq, sigma: fmpq, fractional: str = "chord") -> arb:
    """Ball whose upper endpoint bounds eps_RDP(alpha) of one step (MTZ 2019).

    Fractional alpha: ``fractional="chord"`` the convexity chord; ``"integral"`` the enclosure of the
    defining integral (:func:`log_A_frac`) when it is finite and its upper endpoint is below the chord's
    (both are valid; the smaller upper bound is kept), else the chord.
    """
    k = K_ball(alpha, q, sigma)
    if fractional == "integral" and alpha.q != 1:
        exact_k = log_A_frac(alpha, q, sigma)
        if exact_k.is_finite() and exact_k.upper() < k.upper():
            k = exact_k
    return k / ball(alpha - 1)


# --------------------------------------------------------------------------------------------
# The order grid of the float choice of alpha (:mod:`certify.poisson.choice`, numpy, imported only to choose)
# --------------------------------------------------------------------------------------------
#: integer orders on which the float choice scans every value; beyond it, a coarse grid
DENSE_MAX = 256
COARSE = (288, 320, 384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 2048, 2560, 3072, 4096)
#: every order the float choice scans (1 first: K(1) = 0)
ORDERS = tuple(range(1, DENSE_MAX + 1)) + COARSE


# --------------------------------------------------------------------------------------------
# Fractional orders exactly: the defining integral in balls (opt-in, tighter than the chord)
# --------------------------------------------------------------------------------------------
_LN2 = math.log(2)


def _rat(x: float, up: bool, den: int = 64) -> fmpq:
    return fmpq(math.ceil(x * den) if up else math.floor(x * den), den)


def _plan(alpha: fmpq, q: fmpq, sigma: fmpq, prec: int):
    """Float choices for the integral: integration windows (exact rationals) and the split point.

    With Y = exp((x - c)/sigma), c = 1/(2 sigma), mu = alpha/sigma, E2 = alpha(alpha-1)/(2 sigma^2):
    (1-q+qY)^alpha <= 2^(alpha-1) ((1-q)^alpha + q^alpha Y^alpha) and phi(x) Y^alpha = exp(E2) phi(x - mu), so
    the integrand is below two Gaussian bumps of masses M0 = 2^(alpha-1)(1-q)^alpha (at 0) and
    M1 = 2^(alpha-1) q^alpha exp(E2) (at mu). A bump's window is wide enough that its mass outside is below
    2^-(prec+20) of A >= max(1, q^alpha exp(E2)); a negligible bump gets no window. Returns
    (windows [(m, W or None)], merged intervals, split) -- all choices: the enclosure adds the exact tails.
    """
    af, sf = float_of(alpha), float_of(sigma)
    lq, l1q = log_float(q), log1m_float(q)  # from the exact q: q = 1e-400 or 1 - 1e-20 are no float 0 or 1
    e2 = float_of(alpha * (alpha - 1) / (2 * sigma * sigma))
    lm = [(af - 1) * _LN2 + af * l1q, (af - 1) * _LN2 + af * lq + e2]
    low = max(0.0, af * lq + e2)
    need = (prec + 20) * _LN2
    wins = []
    for m, l in zip((fmpq(0), alpha / sigma), lm):
        r = l - low + need
        wins.append((m, _rat(math.sqrt(2 * r) + 1, up=True) if r > 0 else None))
    merged: list[tuple[fmpq, fmpq]] = []
    for lo, hi in sorted((m - W, m + W) for m, W in wins if W is not None):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    split = _rat(1 / (2 * sf) + sf * (l1q - lq), up=False)  # where qY = 1 - q
    return wins, merged, split


@lru_cache(maxsize=1024)
def _log_A_frac_cached(alpha: fmpq, q: fmpq, sigma: fmpq, prec: int) -> arb:
    from ..balls import Q

    a, s, qb = ball(alpha), ball(sigma), ball(q)
    E2 = ball(alpha * (alpha - 1) / (2 * sigma * sigma))
    c = 1 / (2 * s)
    mu = ball(alpha / sigma)
    log_norm = -(2 * arb.pi()).sqrt().log()
    r = qb / (1 - qb)
    wins, merged, split = _plan(alpha, q, sigma, prec)

    # A = (1-q)^alpha int_{x<split} phi(x) (1 + r Y)^alpha dx
    #     + q^alpha exp(E2) int_{x>split} phi(x-mu) (1 + Y^-1/r)^alpha dx,  r = q/(1-q)
    def f_low(x, analytic):
        return (-(x * x) / 2 + log_norm + a * (1 + r * ((x - c) / s).exp()).log(analytic=analytic)).exp()

    def f_high(x, analytic):
        y = x - mu
        return (-(y * y) / 2 + log_norm + a * (1 + (-(x - c) / s).exp() / r).log(analytic=analytic)).exp()

    tol = arb(2) ** (-prec - 10)
    low, high = arb(0), arb(0)
    for lo, hi in merged:
        pieces = [(lo, split), (split, hi)] if lo < split < hi else [(lo, hi)]
        for plo, phi_ in pieces:
            upper = plo >= split
            val = acb.integral(f_high if upper else f_low, acb(ball(plo)), acb(ball(phi_)), rel_tol=tol, abs_tol=tol)
            if upper:
                high += val.real
            else:
                low += val.real
    two = arb(2) ** (a - 1)
    masses = (two * ball(1 - q) ** a, two * qb**a * E2.exp())
    outside = arb(0)
    for (_, W), M in zip(wins, masses):
        outside += M if W is None else 2 * M * Q(ball(W))  # Gaussian mass outside [m - W, m + W]
    e = outside.upper()
    total = ball(1 - q) ** a * low + qb**a * E2.exp() * high + arb(e / 2, e / 2)
    return total.log()


def log_A_frac(alpha: fmpq, q: fmpq, sigma: fmpq) -> arb:
    """Ball containing K(alpha) = log E[(1 - q + q Y)^alpha] for rational alpha > 1 (any, also fractional).

    The defining integral over x ~ N(0,1) (MTZ19 Sec. 3.3 Case II; Y = exp(x/sigma - 1/(2 sigma^2))), split where the
    two summands are equal and written on each side in a cancellation-free form, integrated by Arb
    (acb.integral, with the analytic flag forwarded so the branch cut of log is never crossed) over windows
    around the two Gaussian bumps that bound the integrand; the mass outside the windows is bounded by
    Gaussian tails (Q) and added to the radius. May be non-finite when the integrator fails (callers then
    keep the chord). q = 1: K = alpha(alpha-1)/(2 sigma^2) exactly (E[Y^alpha] of a lognormal).
    """
    if q == 1:
        return ball(alpha * (alpha - 1) / (2 * sigma * sigma))
    return _log_A_frac_cached(alpha, q, sigma, ctx.prec)
