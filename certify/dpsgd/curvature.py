"""Curvature bounds for the key (37) of Bok (2026), Appendix B.3.2, sharpened.

The key Q(l, r) of (37) needs an upper bound of the interpolation error of J on the leaf [l, r]:
for x = l + t (r - l), J(x) - ((1-t) J(l) + t J(r)) = -J''(xi) (r-l)^2 t(1-t)/2 for some xi in (l, r)
(the classical interpolation-error formula behind (36)), so

    max_{[l, r]} J <= Q(l, r) computed with any  kappa >= max(0, max_{[l, r]} -J'').        (*)

The paper uses kappa = min(kappa1, kappa2) >= max |J''| (two-sided). Here:

* ``kappa(prob, l, r)``      >= max_{[l, r]} |J''|               (two-sided, as in the paper);
* ``kappa_neg(prob, l, r)``  >= max_{[l, r]} max(0, -J'')         (one-sided: what (*) needs; <= kappa).

Both are built from bounds on the tilted moments M_ij(u) = E[v^i w^j h(X, Y)] / F(u) of
Appendix A.2 (0 <= v, w <= 1; E' below is the tilted expectation E[. h]/F of (43)).

1. Where the paper's kappa loses. (42) bounds each term E[e^{mX + jY} D(Y)^{-n}] (m = i + k,
   n = alpha - 1 + j, D(y) = 1 - p + p e^y) with D >= 1-p or D >= p e^y, and then divides by F >= 1.
   Near u = 1/2 the terms with large k have a tilted Y around (k-1) Delta^2 u, where neither
   bound of D is good: kappa was 4 orders of magnitude above |J''| (alpha = 47, p = 1/400,
   sigma = 4: 0.48 against 2.1e-5). We replace the two endpoints by the whole family of weighted
   AM-GM bounds (the tangents of the convex y -> log D(y)):

       D(y) >= ((1-p)/(1-theta))^(1-theta) (p e^y / theta)^theta,   0 <= theta <= 1  (0^0 = 1),

   so D^(-n) <= ((1-theta)/(1-p))^(n(1-theta)) (theta/p)^(n theta) e^(-n theta y), and with
   s = j - n theta, by the Gaussian moment generating function of (X, Y) of Appendix A.2
   (X ~ N(-Delta^2/2, Delta^2), Y ~ N(-Delta^2 u, 2 Delta^2 u), Cov = Delta^2 u):

       E[e^{mX + sY}] = exp(Delta^2 m(m-1)/2 + Delta^2 u s (s + m - 1)).

   Hence (the binomial expansion of (42), every term >= 0)

       N_ij(u) := E[v^i w^j h] <= sum_{k=0}^{alpha-i} C(alpha-i, k) (1-p)^(alpha-i-k) p^(k+i+j)
                  ((1-theta_k)/(1-p))^(n(1-theta_k)) (theta_k/p)^(n theta_k)
                  exp(Delta^2 m(m-1)/2 + Delta^2 u s_k (s_k + m - 1)),                       (42')

   for ANY theta_k in [0, 1] (theta = 0 and theta = 1 give exactly the two branches of (42)).
   theta_k is *chosen* by floats (near the minimiser; a choice only: every theta gives a bound)
   and quantised to a dyadic rational; the bound is then evaluated in balls. The exponent is
   linear in u, so its maximum over [l, r] is at r when s_k (s_k + m - 1) >= 0 and at l otherwise:
   (42') evaluated that way holds for every u in [l, r].

2. A lower bound on F over [l, r] (instead of F >= 1). Expanding (1-p+pe^X)^alpha as in (35),
   F(u) = sum_k C(alpha,k)(1-p)^(alpha-k) p^k E[e^{kX}] E_k[D(Y)^(1-alpha)], with E_k the law
   tilted by e^{kX} (under it Y ~ N((k-1) Delta^2 u, 2 Delta^2 u)). Jensen twice (exp convex, log
   concave): E_k[D^(1-alpha)] >= exp((1-alpha) E_k[log D]) >= (1 - p + p E_k[e^Y])^(1-alpha)
   = (1 - p + p e^{k Delta^2 u})^(1-alpha), which decreases in u. So for u in [l, r]

       F(u) >= F_low(r) := max(1, sum_k C(alpha,k)(1-p)^(alpha-k) p^k e^{k(k-1)Delta^2/2} (1-p+p e^{k Delta^2 r})^(1-alpha))

   (F >= 1 because a Rényi divergence is >= 0; at r = 0 the sum is F(0) exactly).
   Then M_ij <= min(1, N_ij/F_low) and, as 0 <= v, w <= 1, M_ij <= M_i'j' for i' <= i, j' <= j.

3. Keeping the cancellation in (18). With A = w(w - v), (17) and (18) read
   F'/F = Delta^2 alpha(alpha-1) E'[A] and F''/F = Delta^4 alpha(alpha-1) E'[P] with
   P = alpha^2 A^2 + R,
   R = alpha(3w^4 - 2w^3 v - w^2 v^2) + 2w^4 - 4(alpha+1)w^3 + 5 alpha w^2 v - (alpha-1) w v^2 + 2w^2 - w v
   (expand (alpha+1)(alpha+2), 2 alpha(alpha+1), alpha(alpha-1) in (18)). By (38),

       J'' = (F''/F - (F'/F)^2)/(alpha-1) = Delta^4 alpha [alpha^2 Var'(A) + alpha E'[A]^2 + E'[R]],

   since alpha^2 E'[A^2] - alpha(alpha-1) E'[A]^2 = alpha^2 Var'(A) + alpha E'[A]^2. The first two
   terms are >= 0: the whole alpha^2 w^2 (w - v)^2 block of (18) together with (F'/F)^2 cancels
   to something non-negative. Dropping also the non-negative terms of R (v, w >= 0):

       -J'' <= Delta^4 alpha (2 alpha M13 + alpha M22 + 4(alpha+1) M03 + (alpha-1) M21 + M11) =: kneg.

   For the other side, J'' <= F''/F/(alpha-1) <= Delta^4 alpha((alpha+1)(alpha+2) M04
   + alpha(alpha-1) M22 + 5 alpha M12 + 2 M02) =: kpos (the positive terms of (18)).

4. Proving convexity. Keeping instead the positive terms of R, R+ = (3 alpha + 2) w^4 + 5 alpha w^2 v + 2 w^2,

       -J'' <= Delta^4 alpha (E'[R-] - E'[R+]) <= kneg - Delta^4 alpha ((3 alpha+2) m04 + 5 alpha m12 + 2 m02) =: kneg - poslo,

   with lower bounds m_ij <= M_ij on [l, r]: m_ij = (lower bound of N_ij) / (upper bound of F), where
   F = N_00 is bounded above by (42') with i = j = 0, and N_ij from below by Jensen as in point 2:
   E[e^{mX + jY} D(Y)^{-n}] = E[e^{mX + jY}] E~[D(Y)^{-n}] >= E[e^{mX+jY}] (1 - p + p E~[e^Y])^{-n}, where
   under the law tilted by e^{mX + jY}, Y ~ N((m + 2j - 1) Delta^2 u, 2 Delta^2 u), E~[e^Y] = e^{(m+2j) Delta^2 u}:

       N_ij(u) >= sum_k C(alpha-i,k)(1-p)^(alpha-i-k) p^(m+j) exp(Delta^2 m(m-1)/2 + Delta^2 l j(j+m-1))
                  (1 - p + p e^{(m+2j) Delta^2 r})^(-n)      for u in [l, r]

   (the first exponential increases and the last factor decreases in u). Where poslo >= kneg the
   bound proves J'' >= 0 on the leaf (J convex there) and the key (37) is max(J-upper(l), J-upper(r)).

kappa = min(max(kpos, kneg), kappa2) and kappa_neg = max(0, min(kneg - poslo, kappa)), kappa2 of (45).

5. Cheaper bounds for leaves with slack. Every step above only loosens the bound when a term is
   dropped or a moment is replaced by a larger one, so these are valid kappa_neg too ("levels"):
     "full"   the bound above (9 sums (42'), 3 Jensen sums and F_low);
     "convex" the same without the caps by M02, M12 (and without M04, which only kappa needs):
              6 sums (42'), 3 Jensen sums and F_low;
     "kneg"   max(0, min(kneg, kappa2)) without poslo and without the caps by M02, M12 (5 sums + F_low);
     "crude"  the same with M13 <= M03 and M22 <= M21 <= M11 (0 <= v, w <= 1):
              kneg <= Delta^4 alpha ((6 alpha + 4) M03 + 2 alpha M11)            (2 sums + F_low).
   The search uses "full"; the certificate records, per leaf, the first level (in the order above, reversed:
   crude, kneg, convex, full) whose key (37) is <= U, the largest key over the leaves at level "full"
   (:func:`choose_levels`, from the leaves, the recorded rules and the re-derived thetas only: the checker
   re-derives it and demands it), so the certified bound is at most U (the bound with "full" everywhere) and
   sharpness is recorded only where it matters.

Rounding: every quantity is an Arb ball containing the exact value of the bound it names. Upper
bounds use the balls' upper endpoints (rounded up), lower bounds (F_low, m_ij, poslo) their lower
endpoints (rounded down); the results are exact rationals. Floats only choose theta_k (any theta_k
is valid; the chosen ones are recorded in the certificate, and the checker re-derives them with the same
function so that it accepts only what certify writes: a platform whose libm rounds differently could make it
refuse a genuine certificate, never accept a forged one); the bounds are evaluated at KAPPA_PREC = 64 bits (they are needed to a few digits only).
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..balls import arb, ball, ctx, fmpq
from .mixture import consts, log_p_float
from .problem import Problem

# (i, j) pairs of M_ij needed by kpos and kneg (and by (39), (40))
_PAIRS = ((0, 2), (1, 1), (0, 3), (1, 2), (2, 1), (0, 4), (1, 3), (2, 2))
#: pairs bounded from above by (42'): the moments and (0, 0), i.e. F itself
_UPPER = _PAIRS + ((0, 0),)
#: pairs bounded from below (the positive terms of R)
_LOWER = ((0, 2), (1, 2), (0, 4))
#: theta is quantised to multiples of 2^-THETA_BITS (choosing only)
THETA_BITS = 40
#: working precision of the curvature bounds (bits); they are upper bounds needed to a few digits
KAPPA_PREC = 64


# --------------------------------------------------------------------------------------------
# The paper's bounds (kept for reference and for the tests)
# --------------------------------------------------------------------------------------------
def E_bound(prob: Problem, i: int, j: int, r: arb) -> arb:
    """Upper bound (42) on E[v^i w^j h(X, Y)] for u <= r (ball; use its upper endpoint)."""
    c = consts(prob)
    al = prob.alpha
    half_D2 = c.D2 / 2
    total = arb(0)
    lq, lp = c.q.log(), c.p.log()
    for k in range(al - i + 1):
        b = math.comb(al - i, k)
        s = i + k
        e1 = (1 - i - j - k) * lq + (i + j + k) * lp + half_D2 * (s * (s - 1) + 2 * r * (j * (i + j + k - 1)))
        e2 = (al - i - k) * lq + (1 + k + i - al) * lp + half_D2 * (s * (s - 1) + 2 * r * ((al - 1) * (al - i - k)))
        total = total + b * e1.min(e2).exp()
    return total


def kappa1(prob: Problem, r: fmpq) -> arb:
    """kappa1(l, r) of B.3.2 ((41) with (39), (40), (42) at u = r), merged term by term with kappa2.

    Each normalised moment E[v^i w^j h]/F(u) is bounded by min(E_ij(r), 1): E_ij(r) is (42) at u = r
    (sharpened by monotonicity in i, j) and F(u) >= 1, which is the route to (41); 1 is the route to
    (43)-(44). Both are valid for every u <= r, hence so is their minimum. Rounded up (ball).
    """
    al = prob.alpha
    c = consts(prob)
    rb = ball(r)
    raw = {(i, j): E_bound(prob, i, j, rb) for i in range(3) for j in range(5)}
    # 0 <= v, w <= 1, so E[v^i w^j h] <= E[v^i' w^j' h] for i' <= i, j' <= j: take the smallest bound
    E = {}
    for i, j in _PAIRS:
        best = raw[i, j]
        for i2 in range(i + 1):
            for j2 in range(j + 1):
                best = best.min(raw[i2, j2])
        E[i, j] = best
    # The tilted expectations E'[v^i w^j] = E[v^i w^j h]/F of (43)-(44) are <= E_ij / F <= E_ij (F >= 1)
    # and <= 1 (0 <= v, w <= 1): taking the smaller one term by term gives a bound that is never
    # worse than either kappa1 (all E_ij) or kappa2 (all 1) of the paper, and often much better.
    one = arb(1)
    E = {ij: e.min(one) for ij, e in E.items()}
    F1 = c.D2 * (al * (al - 1)) * (E[1, 1] + E[0, 2])
    F2 = (
        c.D2
        * c.D2
        * (al * (al - 1))
        * (
            (al + 1) * (al + 2) * E[0, 4]
            + 2 * al * (al + 1) * E[1, 3]
            + al * (al - 1) * E[2, 2]
            + 4 * (al + 1) * E[0, 3]
            + 5 * al * E[1, 2]
            + (al - 1) * E[2, 1]
            + 2 * E[0, 2]
            + E[1, 1]
        )
    )
    # (38): |J''| <= (|F''|/F + (F'/F)^2)/(alpha - 1)
    return (F2 + F1 * F1) / (al - 1)


def kappa2(prob: Problem) -> arb:
    """kappa2 (45) = 2 Delta^4 alpha (4 alpha^2 + 5 alpha + 4) >= |J''| for every u."""
    al = prob.alpha
    D2 = consts(prob).D2
    return 2 * D2 * D2 * al * (4 * al * al + 5 * al + 4)


def kappa_paper(prob: Problem, l: fmpq, r: fmpq) -> arb:
    """min(kappa1, kappa2): the paper's (41)-(45) with the monotone and min(., 1) sharpenings of :func:`kappa1`
    (the reference the tests compare :func:`kappa` and :func:`kappa_neg` against; rounded up)."""
    return arb(kappa1(prob, r).upper()).min(arb(kappa2(prob).upper()))


# --------------------------------------------------------------------------------------------
# theta choice (floats: choosing only)
# --------------------------------------------------------------------------------------------
#: Curvature bounds of increasing cost and sharpness (each one is a valid kappa_neg; see point 5 of the
#: module docstring) and the pairs (i, j) whose (42') sums each one needs, in witness order.
LEVELS = {
    "crude": ((1, 1), (0, 3)),
    "kneg": ((1, 1), (0, 3), (1, 3), (2, 1), (2, 2)),
    "convex": ((1, 1), (0, 3), (1, 3), (2, 1), (2, 2), (0, 0)),
    "full": _UPPER,
}


def theta_choice(prob: Problem, l: fmpq, r: fmpq, level: str = "full") -> tuple[int, ...]:
    """The theta_k of (42') for the leaf [l, r] and the pairs of ``level``, flattened (the certificate's witness)."""
    d = _theta_choice_cached(prob, l, r)
    return tuple(q for ij in LEVELS[level] for q in d[ij])


@lru_cache(maxsize=4096)
def _theta_choice_cached(prob: Problem, l: fmpq, r: fmpq) -> dict:
    return _theta_choice(prob, l, r)


def theta_count(prob: Problem, level: str = "full") -> int:
    """Number of theta_k in a leaf's witness at ``level``: sum over its pairs (i, j) of alpha - i + 1."""
    return sum(prob.alpha - i + 1 for i, _ in LEVELS[level])


def split_thetas(prob: Problem, thetas, level: str = "full") -> dict[tuple[int, int], list[int]]:
    """Check a witness's theta list (integers in [0, 2^THETA_BITS], the right count) and split it by (i, j)."""
    from ..balls import InputError

    if level not in LEVELS:
        raise InputError("witnesses", f"curvature level must be one of {tuple(LEVELS)}, got {level!r}")
    if not isinstance(thetas, (list, tuple)) or len(thetas) != theta_count(prob, level):
        raise InputError("witnesses", f"a leaf's theta list must hold {theta_count(prob, level)} integers at level {level}")
    one = 1 << THETA_BITS
    if not all(type(q) is int for q in thetas) or not 0 <= min(thetas) <= max(thetas) <= one:
        bad = next(q for q in thetas if type(q) is not int or not 0 <= q <= one)
        raise InputError("witnesses", f"theta numerators must be integers in [0, 2^{THETA_BITS}], got {bad!r}")
    out, pos = {}, 0
    for i, j in LEVELS[level]:
        out[i, j] = list(thetas[pos : pos + prob.alpha - i + 1])
        pos += prob.alpha - i + 1
    return out


def _theta_choice(prob: Problem, l: fmpq, r: fmpq) -> dict[tuple[int, int], list[int]]:
    """For every (i, j) of _PAIRS and k = 0..alpha-i, an integer q with theta_k = q / 2^THETA_BITS.

    The log of the k-th term of (42') at u is, up to theta-free terms,
        f(theta, u) = n[(1-theta) log((1-theta)/(1-p)) + theta log(theta/p)] + Delta^2 u s(s+m-1),
    s = j - n theta, m = i + k, n = alpha - 1 + j, convex in theta with derivative
    n(logit theta - logit p) - n u Delta^2 (2s + m - 1). Its minimisers at u in {l, (l+r)/2, r} (safeguarded
    Newton steps in the logit variable, which is then rounded to a multiple of 1/16 so that few distinct theta
    occur) and theta = 0, 1 are the candidates; the one with the smallest max(f(theta, l), f(theta, r)) (the
    bound used on [l, r]; the first on ties) is kept. Floats only choose: any theta in [0, 1] gives a valid
    bound. Plain Python floats (the math module), so that the checker, which re-derives the choice, imports no
    numpy; producer and checker run this one function.
    """
    al = prob.alpha
    lp, lq = log_p_float(prob)
    D2 = (2.0 * int(prob.sigma.q) / int(prob.sigma.p)) ** 2
    lgp = lp - lq
    lf, rf = float(l), float(r)
    scale = float(2**THETA_BITS)
    slopes = [u * D2 for u in (lf, 0.5 * (lf + rf), rf)]
    # the choice depends on (j, m = i + k) only: pairs with the same j share it (5 (alpha + 1) choices, not 9)
    memo: dict[tuple[int, int], int] = {}
    out = {}
    for i, j in _UPPER:
        row = []
        for m in range(i, al + 1):
            q = memo.get((j, m))
            if q is None:
                q = memo[j, m] = _theta_q(lgp, lp, lq, D2, lf, rf, slopes, float(j), float(m), al - 1.0 + j, scale)
            row.append(q)
        out[i, j] = row
    return out


@lru_cache(maxsize=256)
def _term_index(prob: Problem):
    """Float arrays (j, m = i + k, n = alpha - 1 + j) over all terms of all _PAIRS (choosing only)."""
    import numpy as np

    al = prob.alpha
    J, Mx = [], []
    for i, j in _UPPER:
        for k in range(al - i + 1):
            J.append(j)
            Mx.append(i + k)
    j_ = np.asarray(J, dtype=float)
    return j_, np.asarray(Mx, dtype=float), al - 1 + j_


def _theta_choice_numpy(prob: Problem, l: fmpq, r: fmpq) -> dict[tuple[int, int], list[int]]:
    """The search's copy of :func:`_theta_choice` in numpy (vectorised: the branch-and-bound evaluates keys of
    hundreds of intervals at alpha up to 256, 8x faster than the plain floats). Only the search's own keys use it
    (:func:`search_key_kappa`); every theta a certificate records comes from :func:`_theta_choice`, which gives the
    same choices (tested on 92,000 sampled terms). For every (i, j) of _PAIRS and k = 0..alpha-i, an integer q with theta_k = q / 2^THETA_BITS.

    The log of the k-th term of (42') at u is, up to theta-free terms,
        f(theta, u) = n[(1-theta) log((1-theta)/(1-p)) + theta log(theta/p)] + Delta^2 u s(s+m-1),
    s = j - n theta, convex in theta with derivative n(logit theta - logit p) - n u Delta^2 (2s + m - 1).
    Its minimisers at u in {l, (l+r)/2, r} (safeguarded Newton steps in the logit variable, which is
    then rounded to a multiple of 1/16 so that few distinct theta occur) and theta = 0, 1 are the
    candidates; the one with the smallest max(f(theta, l), f(theta, r)) (the bound used on [l, r]) is
    kept. Floats only choose: any theta in [0, 1] gives a valid bound.
    """
    import numpy as np

    al = prob.alpha
    lp, lq = log_p_float(prob)
    D2 = (2.0 * int(prob.sigma.q) / int(prob.sigma.p)) ** 2
    j_, m, n = _term_index(prob)
    lgp = lp - lq
    lf, rf = float(l), float(r)
    scale = float(2**THETA_BITS)
    # Newton on g(t) = t - lgp - a(2j + m - 1 - 2n sigmoid(t)) (increasing in t), for the three u at once
    a = (np.asarray([lf, 0.5 * (lf + rf), rf]) * D2)[:, None]
    lo = lgp - a * 2 * n - 1.0
    hi = lgp + a * (2 * j_ + m - 1) + 1.0
    t = np.minimum(np.maximum(lgp + a * (2 * j_ + m - 1 - n), lo), hi)
    with np.errstate(over="ignore"):
        for _ in range(6):
            sg = 1.0 / (1.0 + np.exp(-t))
            g = t - lgp - a * (2 * j_ + m - 1 - 2 * n * sg)
            t = np.minimum(np.maximum(t - g / (1.0 + 2 * n * a * sg * (1 - sg)), lo), hi)
        t = np.clip(np.round(t * 16) / 16, -60.0, 60.0)
        th = np.round(scale / (1.0 + np.exp(-t))) / scale
    cands = np.concatenate([np.zeros((1, len(m))), np.ones((1, len(m))), th])
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.where(cands < 1, n * (1 - cands) * (np.log1p(-np.minimum(cands, 0.75)) - lq), 0.0)
        e1 = np.where((cands < 1) & (cands > 0.75), n * (1 - cands) * (np.log(np.maximum(1 - cands, 1e-300)) - lq), e1)
        e0 = np.where(cands > 0, n * cands * (np.log(np.maximum(cands, 1e-300)) - lp), 0.0)
    s = j_ - n * cands
    c = D2 * s * (s + m - 1)
    vals = e1 + e0 + np.maximum(lf * c, rf * c)
    vals = np.where(np.isnan(vals), np.inf, vals)  # overflowed estimates never win
    # ties go to the first minimum (deterministic); float noise can only change which valid theta is used
    best = np.argmin(vals, axis=0)
    chosen = cands[best, np.arange(len(m))]
    chosen = np.where(np.isfinite(chosen), np.clip(chosen, 0.0, 1.0), 0.0)
    qs = np.round(chosen * scale).astype(np.int64).tolist()
    out, pos = {}, 0
    for i, j in _UPPER:
        out[i, j] = qs[pos : pos + al - i + 1]
        pos += al - i + 1
    return out


@lru_cache(maxsize=4096)
def _theta_choice_numpy_cached(prob: Problem, l: fmpq, r: fmpq) -> tuple:
    d = _theta_choice_numpy(prob, l, r)
    return tuple(q for ij in _UPPER for q in d[ij])


def search_key_kappa(prob: Problem, l: fmpq, r: fmpq) -> arb:
    """kappa_neg at level full with the numpy theta choice: the branch-and-bound's own keys (never recorded)."""
    return kappa_neg(prob, l, r, _theta_choice_numpy_cached(prob, l, r))


def _exp_or_inf(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _theta_q(lgp, lp, lq, D2, lf, rf, slopes, j, m, n, scale) -> int:
    """The chosen theta numerator of one term of (42') (see :func:`_theta_choice`; floats choose only)."""
    c1 = 2 * j + m - 1
    cands = [0.0, 1.0]
    for a in slopes:  # Newton on g(t) = t - lgp - a(2j + m - 1 - 2n sigmoid(t)), increasing in t
        lo, hi = lgp - a * 2 * n - 1.0, lgp + a * c1 + 1.0
        t = min(max(lgp + a * (c1 - n), lo), hi)
        for _ in range(6):
            sg = 1.0 / (1.0 + _exp_or_inf(-t))
            g = t - lgp - a * (c1 - 2 * n * sg)
            t = min(max(t - g / (1.0 + 2 * n * a * sg * (1 - sg)), lo), hi)
        t = min(max(round(t * 16) / 16, -60.0), 60.0)
        cands.append(round(scale / (1.0 + math.exp(-t))) / scale)
    best, low = 0.0, math.inf
    for c in cands:
        e1 = n * (1 - c) * ((math.log1p(-c) if c <= 0.75 else math.log(1 - c)) - lq) if c < 1 else 0.0
        e0 = n * c * (math.log(c) - lp) if c > 0 else 0.0
        s = j - n * c
        cc = D2 * s * (s + m - 1)
        v = e1 + e0 + max(lf * cc, rf * cc)
        if v < low:  # a NaN (an overflowed estimate) never wins; ties keep the first
            best, low = c, v
    return int(round(min(max(best, 0.0), 1.0) * scale))


# --------------------------------------------------------------------------------------------
# Ball evaluation of (42') and of F_low
# --------------------------------------------------------------------------------------------
class _KConsts:
    def __init__(self, prob: Problem):
        c = consts(prob)
        al = prob.alpha
        self.D2 = c.D2
        self.alpha = al
        self.lq, self.lp = c.q.log(), c.p.log()
        self.half_D2_mm1 = [self.D2 * (m * (m - 1)) / 2 for m in range(al + 1)]  # Delta^2 m(m-1)/2
        self.comb = {i: [math.comb(al - i, k) for k in range(al - i + 1)] for i in range(3)}
        self._base: dict[tuple[int, int], list[arb]] = {}
        self.f0_terms = c.f0_terms
        self.p, self.q = c.p, c.q
        self.theta_part: dict[int, arb] = {}

    def base(self, i: int, j: int) -> list[arb]:
        """theta-free part of the log of the k-th term of (42') without log C(alpha-i, k) (the sums multiply
        by the exact binomial instead): (alpha-i-k-n) log q + (m+j) log p + Delta^2 m(m-1)/2, m = i + k."""
        b = self._base.get((i, j))
        if b is None:
            al, n = self.alpha, self.alpha - 1 + j
            b = [(al - i - k - n) * self.lq + (i + k + j) * self.lp + self.half_D2_mm1[i + k] for k in range(al - i + 1)]
            self._base[i, j] = b
        return b


@lru_cache(maxsize=256)
def _kconsts(prob: Problem, prec: int) -> _KConsts:
    return _KConsts(prob)


def _theta_part(kc: "_KConsts", n: int, q: int) -> arb:
    """n theta (log theta - log p + log q) + n (1-theta) log(1-theta) for theta = q/2^THETA_BITS.

    Added to the theta-free part (which carries -n log q) it gives
    n(1-theta) log((1-theta)/q) + n theta log(theta/p), the log of the AM-GM factor of (42'); 0 log 0 = 0.
    The n-free factor is cached per theta (it recurs across the pairs (i, j) and the leaves).
    """
    g = kc.theta_part.get(q)
    if g is None:
        B = THETA_BITS
        one = 1 << B
        if q == 0:
            g = arb(0)
        elif q == one:
            g = kc.lq - kc.lp
        else:
            g = arb((q, -B)) * (arb((q, -B)).log() - kc.lp + kc.lq) + arb((one - q, -B)) * arb((one - q, -B)).log()
        kc.theta_part[q] = g
    return n * g


def N_bound(prob: Problem, i: int, j: int, l: fmpq, r: fmpq, qs: list[int] | None = None) -> arb:
    """(42'): a ball whose upper endpoint bounds E[v^i w^j h(X, Y)] for every u in [l, r].

    ``qs`` are the theta choices (theta_k = qs[k] / 2^THETA_BITS); by default from :func:`_theta_choice`.
    Term k: exp(base_k + theta part + Delta^2 u* s(s + m - 1)) with u* = r if s(s+m-1) >= 0 else l.
    """
    kc = _kconsts(prob, ctx.prec)
    al = prob.alpha
    n = al - 1 + j
    if qs is None:
        qs = _theta_choice_cached(prob, l, r)[i, j]
    B = THETA_BITS
    one = 1 << B
    base = kc.base(i, j)
    comb = kc.comb[i]
    scale = arb((1, -2 * B))  # exact 2^(-2B)
    D2l, D2r = kc.D2 * ball(l) * scale, kc.D2 * ball(r) * scale
    cache = kc.theta_part
    total = arb(0)
    for k, q in enumerate(qs):
        # s = j - n theta = S / 2^B;  s(s + m - 1) = S (S + (m-1) 2^B) / 2^(2B), m = i + k
        S = j * one - n * q
        cnum = S * (S + (i + k - 1) * one)
        g = cache.get(q)
        e = base[k] + (n * g if g is not None else _theta_part(kc, n, q))
        if cnum > 0:
            e += D2r * cnum
        elif cnum < 0:
            e += D2l * cnum
        total += comb[k] * e.exp()
    return total


@lru_cache(maxsize=8192)
def _F_low(prob: Problem, r: fmpq, prec: int) -> arb:
    kc = _kconsts(prob, prec)
    al = prob.alpha
    tot = arb(0)
    x = (kc.D2 * ball(r)).exp()  # e^(Delta^2 r); e^(k Delta^2 r) = x^k
    xk = arb(1)
    for k in range(al + 1):
        tot += kc.f0_terms[k] * (kc.q + kc.p * xk) ** (1 - al)
        xk *= x
    return tot.max(arb(1))


def F_low(prob: Problem, r: fmpq) -> arb:
    """Ball whose lower endpoint bounds F(u) from below for every u in [0, r] (point 2 of the docstring)."""
    return _F_low(prob, r, ctx.prec)


def N_lower(prob: Problem, i: int, j: int, l: fmpq, r: fmpq) -> arb:
    """A ball whose lower endpoint bounds E[v^i w^j h(X, Y)] from below for every u in [l, r] (point 4)."""
    kc = _kconsts(prob, ctx.prec)
    al = prob.alpha
    n = al - 1 + j
    D2 = kc.D2
    D2l, D2r = D2 * ball(l), D2 * ball(r)
    base = kc.base(i, j)  # carries -n log q: add it back, the Jensen factor is (q + p e^(...))^(-n)
    comb = kc.comb[i]
    total = arb(0)
    for k in range(al - i + 1):
        m = i + k
        e = base[k] + n * kc.lq + D2l * (j * (j + m - 1))
        total += comb[k] * e.exp() * (kc.q + kc.p * (D2r * (2 * j + m)).exp()) ** (-n)
    return total


def moment_bounds(prob: Problem, l: fmpq, r: fmpq, lower: bool = False, thetas=None):
    """Upper bounds (upper endpoints of the balls) on M_ij = E'[v^i w^j], valid for every u in [l, r].

    With ``lower=True`` returns (upper bounds, lower bounds of M_ij for (i, j) in _LOWER) (point 4).
    ``thetas`` (flattened, as in a certificate) fixes the theta_k; by default they are chosen here.
    """
    Fl = arb(F_low(prob, r).lower())
    one = arb(1)
    M = {}
    qs = split_thetas(prob, thetas) if thetas is not None else _theta_choice_cached(prob, l, r)
    for i, j in _PAIRS:
        M[i, j] = arb((_N_upper(prob, i, j, l, r, tuple(qs[i, j]), ctx.prec) / Fl).upper()).min(one)
    # 0 <= v, w <= 1: M_ij <= M_i'j' for i' <= i, j' <= j
    M[0, 3] = M[0, 3].min(M[0, 2])
    M[0, 4] = M[0, 4].min(M[0, 3])
    M[1, 2] = M[1, 2].min(M[1, 1]).min(M[0, 2])
    M[2, 1] = M[2, 1].min(M[1, 1])
    M[1, 3] = M[1, 3].min(M[1, 2]).min(M[0, 3])
    M[2, 2] = M[2, 2].min(M[2, 1]).min(M[1, 2])
    if not lower:
        return M
    return M, _lower_moments(prob, l, r, tuple(qs[0, 0]), ctx.prec)


@lru_cache(maxsize=65536)
def _N_upper(prob: Problem, i: int, j: int, l: fmpq, r: fmpq, qs: tuple, prec: int) -> arb:
    """:func:`N_bound` at the working precision ``prec``, cached: the levels of a leaf share their sums (42')
    (the same pair, leaf and thetas give the same ball), so checking the levels below a leaf's costs no new sum."""
    return N_bound(prob, i, j, l, r, qs)


@lru_cache(maxsize=16384)
def _lower_moments(prob: Problem, l: fmpq, r: fmpq, q00: tuple, prec: int) -> dict:
    """Lower bounds of M_ij for (i, j) in _LOWER (point 4), with the upper bound of F from the pair (0, 0)
    (cached as :func:`_N_upper`: levels "convex" and "full" share them; callers do not mutate the dict)."""
    Fu = arb(_N_upper(prob, 0, 0, l, r, q00, prec).upper())
    return {ij: arb((N_lower(prob, ij[0], ij[1], l, r) / Fu).lower()).max(arb(0)) for ij in _LOWER}


def _kneg(D4a: arb, al: int, M: dict) -> arb:
    """kneg of point 3: -J'' <= kneg on [l, r], from upper bounds M of the tilted moments."""
    return D4a * (2 * al * M[1, 3] + al * M[2, 2] + 4 * (al + 1) * M[0, 3] + (al - 1) * M[2, 1] + M[1, 1])


def _poslo(D4a: arb, al: int, Ml: dict) -> arb:
    """poslo of point 4: -J'' <= kneg - poslo, from lower bounds Ml of the tilted moments."""
    return D4a * ((3 * al + 2) * Ml[0, 4] + 5 * al * Ml[1, 2] + 2 * Ml[0, 2])


def _sides(prob: Problem, l: fmpq, r: fmpq, thetas=None) -> tuple[arb, arb, arb]:
    """(kpos, kneg, poslo): J'' <= kpos, -J'' <= kneg - poslo on [l, r] (balls; point 3 and 4)."""
    al = prob.alpha
    D2 = consts(prob).D2
    M, Ml = moment_bounds(prob, l, r, lower=True, thetas=thetas)
    D4a = D2 * D2 * al
    kpos = D4a * ((al + 1) * (al + 2) * M[0, 4] + al * (al - 1) * M[2, 2] + 5 * al * M[1, 2] + 2 * M[0, 2])
    return kpos, _kneg(D4a, al, M), _poslo(D4a, al, Ml)


@lru_cache(maxsize=16384)
def _kappa_pair(prob: Problem, l: fmpq, r: fmpq, prec: int, thetas: tuple | None = None) -> tuple[fmpq, fmpq]:
    with ctx.workprec(min(prec, KAPPA_PREC)):
        kpos, kneg, poslo = _sides(prob, l, r, thetas)
        k2 = kappa2(prob).upper().fmpq()
        if not (kpos.is_finite() and kneg.is_finite() and poslo.is_finite()):
            return k2, k2  # (45) alone is always valid
        two = max(kpos.upper().fmpq(), kneg.upper().fmpq())
        two = min(two, k2)
        # -J'' <= kneg - poslo <= kneg: the smaller upper endpoint (rounded up), at least 0
        neg = max(fmpq(0), min((kneg - poslo).upper().fmpq(), kneg.upper().fmpq(), two))
    return two, neg


def kappa(prob: Problem, l: fmpq, r: fmpq) -> arb:
    """kappa(l, r) >= max_{u in [l, r]} |J''(u)| (an exact upper endpoint, as a ball). See the docstring."""
    if not (0 <= l < r <= fmpq(1, 2)):
        raise ValueError(f"leaf [{l}, {r}] must satisfy 0 <= l < r <= 1/2")
    return arb(_kappa_pair(prob, l, r, ctx.prec)[0])


def kappa_neg(prob: Problem, l: fmpq, r: fmpq, thetas: tuple | None = None, level: str = "full") -> arb:
    """kappa_neg(l, r) >= max_{u in [l, r]} max(0, -J''(u)): what the key (37) needs (see (*)); <= kappa at level "full".

    ``level`` picks one of the bounds of point 5 of the module docstring ("full" is the sharpest).
    ``thetas``: the theta_k of (42') for the level's pairs, as recorded in a certificate (any values in [0, 1]
    are valid); by default they are chosen by floats (:func:`theta_choice`)."""
    if not (0 <= l < r <= fmpq(1, 2)):
        raise ValueError(f"leaf [{l}, {r}] must satisfy 0 <= l < r <= 1/2")
    if thetas is None:
        thetas = theta_choice(prob, l, r, level)
    if level == "full":
        return arb(_kappa_pair(prob, l, r, ctx.prec, tuple(thetas))[1])
    return arb(_kappa_neg_light(prob, l, r, ctx.prec, tuple(thetas), level))


@lru_cache(maxsize=16384)
def _kappa_neg_light(prob: Problem, l: fmpq, r: fmpq, prec: int, thetas: tuple, level: str) -> fmpq:
    """kneg of point 3 with fewer (42') sums (point 5): "convex" drops the caps by M02, M12 (and M04, which
    only kappa needs); "kneg" also drops poslo; "crude" also bounds M13 by M03 and M22, M21 by M11."""
    al = prob.alpha
    qs = split_thetas(prob, thetas, level)
    with ctx.workprec(min(prec, KAPPA_PREC)):
        Fl = arb(F_low(prob, r).lower())
        one = arb(1)
        M = {ij: arb((_N_upper(prob, ij[0], ij[1], l, r, tuple(qs[ij]), ctx.prec) / Fl).upper()).min(one) for ij in qs}
        if level == "crude":
            M[1, 3] = M[0, 3]
            M[2, 1] = M[2, 2] = M[1, 1]
        else:
            M[1, 3] = M[1, 3].min(M[0, 3])
            M[2, 1] = M[2, 1].min(M[1, 1])
            M[2, 2] = M[2, 2].min(M[2, 1])
        D2 = consts(prob).D2
        D4a = D2 * D2 * al
        kneg = _kneg(D4a, al, M)
        k2 = kappa2(prob).upper().fmpq()
        if not kneg.is_finite():
            return k2
        best = min(kneg.upper().fmpq(), k2)
        if level == "convex":
            # point 4 with the upper bound of F from the pair (0, 0): subtract poslo
            poslo = _poslo(D4a, al, _lower_moments(prob, l, r, tuple(qs[0, 0]), ctx.prec))
            if poslo.is_finite():
                best = min(best, (kneg - poslo).upper().fmpq())
        return max(fmpq(0), best)


def interval_key(A_hi: fmpq, B_hi: fmpq, kap: fmpq, l: fmpq, r: fmpq) -> fmpq:
    """Q(l, r) of (37): max over t in [0,1] of (1-t)A + tB + kap (r-l)^2 t(1-t)/2, exactly in rationals.

    A_hi, B_hi are upper bounds of J at l and r, kap an upper bound of max(0, -J'') on [l, r]
    (e.g. ``kappa_neg``; any bound of |J''| also works); the maximum is increasing in all three,
    so the exact rational result is an upper bound of max_{[l,r]} J ((36) and (*) of the module docstring).
    """
    c = kap * (r - l) ** 2 / 2
    d = B_hi - A_hi
    if c > 0 and abs(d) <= c:
        return (A_hi + B_hi) / 2 + c / 4 + d * d / (4 * c)
    return A_hi if A_hi >= B_hi else B_hi


def choose_levels(prob: Problem, leaves, hi) -> tuple[fmpq, list[str]]:
    """The curvature level of every leaf, as certify records it (point 5 of the module docstring): (U, levels).

    ``leaves`` partition [0, 1/2]; ``hi[u]`` is the upper bound of J at each leaf endpoint u (an exact rational:
    the upper endpoint of the point bound with the recorded rule). U is the largest key (37) over the leaves at
    level "full" (thetas from :func:`theta_choice`); a leaf's level is the first of LEVELS (crude, kneg, convex,
    full: increasing cost) whose key is <= U ("full" always is). Only exact rationals are compared, from the
    leaves, the endpoints' bounds and the re-derived thetas: the producer (:func:`certify.dpsgd.search.rho_search`)
    and the checker (:func:`certify.dpsgd.certificates.fill_rho`) call this one function. The largest key over the
    chosen levels (the certified upper bound of rho) is at most U, the bound with "full" on every leaf.
    Cost: the full bound on every leaf; the cheaper levels below a leaf's reuse its sums (42') (cached)."""
    full = [interval_key(hi[l], hi[r], kappa_neg(prob, l, r).upper().fmpq(), l, r) for l, r in leaves]
    U = max(full)
    levels = []
    for l, r in leaves:
        for level in LEVELS:
            if level == "full" or interval_key(hi[l], hi[r], kappa_neg(prob, l, r, level=level).upper().fmpq(), l, r) <= U:
                levels.append(level)
                break
    return U, levels
