"""Point bounds J-lower(u) <= J(u) <= J-upper(u) for Bok (2026), Appendix B.3.1.

J(u) = log F(u) / (alpha - 1), F as in (15): the order-alpha Rényi moment of the 2-D Gaussian
mixtures of Theorem 1 / (5) at the angle parameter u in [0, 1/2]. Beta = Delta sqrt(2u).

Scheme used (and why). The paper writes F(u) by the binomial expansion (35) as alpha + 1 one-dimensional
integrals, each truncated to [-L, R] with the tails (II), (III) bounded by Phi. We keep (35) but sum it
under one integral over the whole real line,

    F(u) = int_R f,   f(v) = phi(v) D(v)^(1-alpha) G(v),   D(v) = 1-p + p e^(beta v - beta^2/2),
    G(v) = sum_k coef_k e^(k beta v / 2),   coef_k = C(alpha,k) (1-p)^(alpha-k) p^k e^(k(k-1)Delta^2/2 - k^2 beta^2/8) > 0,

and integrate it with the *trapezoidal rule on the real line*, T_h = h sum_(j in Z) f(j h), whose error
has a closed-form rigorous bound here (no adaptive quadrature, no complex-ball enclosures):

  Discretisation (Poisson summation; Trefethen & Weideman, SIAM Rev. 56 (2014), Thm 5.1). If f is
  analytic in the strip |Im v| < c, tends to 0 uniformly as |Re v| -> inf in it, and
  int_R |f(x + i y)| dx <= M for every |y| < c, then |T_h - F| <= 2M / (e^(2 pi c / h) - 1).
  [h sum_j f(jh) = sum_m f^(2 pi m / h) with f^(w) = int f(x) e^(-i w x) dx and F = f^(0); moving the
  line of integration to Im x = -/+ y gives |f^(w)| <= M e^(-|w| y) for every y < c.]

  Here D vanishes only on Im(beta v) = pi (mod 2 pi), so f is analytic for |Im v| < pi/beta. Take any
  strip half-width c with beta c < pi. For |y| < c: |phi(x+iy)| = phi(x) e^(y^2/2); |G(x+iy)| <= G(x)
  (coef_k > 0); and with w = p e^(beta x - beta^2/2) > 0, |D|^2 = (1-p)^2 + 2(1-p) w cos(beta y) + w^2,
  which is >= (1-p)^2 when cos(beta y) >= 0 and >= (1-p)^2 sin^2(beta y) >= (1-p)^2 sin^2(beta c) otherwise
  (minimise over w >= 0; sin decreases on [pi/2, pi)): |D| >= (1-p) s with s = sin(max(beta c, pi/2)).
  Since int_R phi G = sum_k coef_k e^(k^2 beta^2/8) = F(0) (the u = 0 closed form), one may take

      M = e^(c^2/2) ((1-p) s)^(1-alpha) F(0),   E_disc = 2M / (e^(2 pi c/h) - 1).

  Decay in the strip holds because phi(x) e^(alpha beta |x|/2) -> 0.

  A relative form: |a + b e^(i t)|^2 - cos^2(t/2)(a + b)^2 = (1 - cos t)(a - b)^2/2 >= 0
  for a, b >= 0, so |D(x+iy)| >= cos(beta y/2) D(x) >= cos(beta c/2) D(x) and int |f(x+iy)| dx <=
  e^(c^2/2) cos(beta c/2)^(1-alpha) F(u). Hence |T_h - F| <= eps F with
  eps = 2 e^(c^2/2) cos(beta c/2)^(1-alpha) / (e^(2 pi c/h) - 1), i.e. T_h/(1+eps) <= F <= T_h/(1-eps) (eps < 1).
  It avoids the factor (1-p)^(1-alpha) F(0)/F(u) of M, which is huge where F(0) >> F(u); both are used
  and the sharper one wins.

  Truncation of the sum. Only the nodes a <= jh <= b are evaluated (a <= 0 <= b on the grid); f > 0 on R,
  so the finite sum S is a lower bound of T_h, and the nodes outside are bounded by integrals of
  monotone majorants (h g(v_j) <= int of g over the neighbouring step):
    left  (v < a <= 0):  f <= (1-p)^(1-alpha) phi G = (1-p)^(1-alpha) sum_k coef_k e^(k^2 beta^2/8) phi(v - k beta/2),
                         increasing for v <= 0, so the left sum is
                         <= (1-p)^(1-alpha) min(G(a), F(0)) Phi(a);
    right (v > b >= 0):  f <= p^(1-alpha) e^((alpha-1) beta^2/2) sum_k coef_k phi(v) e^((k/2 + 1 - alpha) beta v)
                         (D >= p e^(beta v - beta^2/2); each exponent <= 0 since alpha >= 2, so each term
                         decreases for v >= 0): <= p^(1-alpha) e^((alpha-1)(beta^2/2 - beta b)) G(b) Q(b);
                         and when b >= alpha beta/2 also (D >= 1-p, phi(v - k beta/2) decreasing)
                         <= (1-p)^(1-alpha) F(0) Q(b - alpha beta/2). The smaller one is used.
    left, tangent form (for p near 1, where (1-p)^(1-alpha) is astronomically loose): v -> log D(v) is convex, so
                         log D(v) >= log D(a) + beta theta_a (v - a) for every v, theta_a = p e^(beta a - beta^2/2)/D(a)
                         (the tangent at a: the weighted AM-GM bound of :mod:`certify.dpsgd.curvature` point 1).
                         Hence f <= D(a)^(1-alpha) e^((alpha-1) beta theta_a a) sum_k coef_k e^(s_k^2/2) phi(v - s_k),
                         s_k = beta (k/2 - (alpha-1) theta_a). Each term is increasing on v <= a when a <= s_k
                         (left sum <= e^(s_k^2/2) Q(s_k - a)); otherwise it is unimodal and its left sum is <= its
                         integral plus h times its maximum, <= e^(s_k^2/2) (1 + h/sqrt(2 pi)). The smaller of the
                         two left bounds is used.
    Q(x) = Phi(-x) is bounded above by Mills' ratio phi(x)/x (x > 0) or 1/2 (x >= 0).

  Hence F_lower = max(h S - E_disc, h S/(1+eps)) (rounded down, and at least 1 since a Rényi divergence
  is >= 0) and F_upper = min(h S + tails + E_disc, (h S + tails)/(1-eps)) (rounded up). J = log(F)/(alpha - 1) is monotone, so the bounds carry over.

Why: f is analytic in a strip around R (its only singularities are the poles above) and decays like a
Gaussian, so the trapezoidal rule converges geometrically in 1/h with the explicit constant above. At
2^-38 on F it needs 35-45 real evaluations of f (Horner of G in C through ``arb_poly``; phi and
e^(beta v/2) updated along the grid by exact-ratio products), against 250-450 real and 60-110
complex-ball evaluations in Arb's adaptive Gauss-Legendre (``acb.integral``): a point bound takes
0.5-1.9 ms instead of 2.6-36 ms (alpha = 8 to 191). The rule (window, step h,
strip c) is a small exact witness that the checker re-evaluates as is; it is *chosen* by floats (a
choice only: every well-formed rule gives valid bounds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from ..balls import InputError, UndecidedError, arb, arb_poly, ball, ctx, float_of, fmpq, require_in
from ..limits import cap
from .problem import Problem

#: the window of the paper (L = R = 8) is replaced by a float scan (choosing only); this is the scan range.
SCAN_PAD = 40.0


@dataclass(frozen=True)
class Rule:
    """A trapezoidal rule at one u (the witness the checker re-evaluates): nodes v_j = j h with a <= v_j <= b,
    and the strip half-width c ("strip") of the discretisation bound. a, b are multiples of h, a <= 0 <= b."""

    a: fmpq
    b: fmpq
    h: fmpq
    strip: fmpq

    @property
    def nodes(self) -> int:
        return int((self.b - self.a) / self.h) + 1


#: most nodes a rule may ask for (protects the checker against a hostile witness)
MAX_NODES = cap("quadrature_nodes")


def check_rule(rule: Rule) -> None:
    """InputError unless the rule is well formed: h > 0, c > 0, a <= 0 <= b on the grid, few enough nodes."""
    name = "witnesses"
    if not (rule.h > 0 and rule.strip > 0):
        raise InputError(name, f"rule step h and strip must be > 0, got h = {rule.h}, strip = {rule.strip}")
    if not rule.a <= 0 <= rule.b:
        raise InputError(name, f"rule window [a, b] must contain 0, got [{rule.a}, {rule.b}]")
    for end in (rule.a, rule.b):
        if (end / rule.h).q != 1:
            raise InputError(name, f"rule window end {end} is not a multiple of the step h = {rule.h}")
    if (rule.b - rule.a) / rule.h + 1 > MAX_NODES:
        raise InputError(name, f"a rule asks for {(rule.b - rule.a) / rule.h + 1} nodes: at most {MAX_NODES} accepted")


@dataclass(frozen=True)
class PointBound:
    """Certified bounds at one u: F_lo <= F(u) <= F_hi and J_lo <= J(u) <= J_hi (balls; use lower/upper)."""

    u: fmpq
    rule: Rule | None  # the trapezoidal rule (None at u = 0: closed form)
    F_lo: arb
    F_hi: arb
    J_lo: arb
    J_hi: arb
    tails: arb  # rigorous bound on the nodes outside the window (0 at u = 0)
    disc: arb  # rigorous bound on the discretisation error E_disc (0 at u = 0)


# --------------------------------------------------------------------------------------------
# Constants (recomputed per working precision: a constant computed at one precision keeps that accuracy)
# --------------------------------------------------------------------------------------------
class _Consts:
    def __init__(self, prob: Problem):
        self.alpha = prob.alpha
        self.p = ball(prob.p)
        self.q = 1 - self.p
        D = ball(prob.delta_sens)
        self.D2 = D * D
        al = prob.alpha
        self.binom = [math.comb(al, k) for k in range(al + 1)]
        # terms of F(0), (5) at u = 0
        self.f0_terms = [self.binom[k] * self.q ** (al - k) * self.p**k * (self.D2 * (k * (k - 1)) / 2).exp() for k in range(al + 1)]
        self.F0 = sum(self.f0_terms[1:], self.f0_terms[0])
        # F(0) - 1 without cancellation: sum_k C(alpha,k)(1-p)^(alpha-k) p^k = 1, so
        # F(0) - 1 = sum_(k>=2) C(alpha,k)(1-p)^(alpha-k) p^k expm1(k(k-1) Delta^2/2), every term >= 0
        self.F0m1 = sum(
            (self.binom[k] * self.q ** (al - k) * self.p**k * (self.D2 * (k * (k - 1)) / 2).expm1() for k in range(3, al + 1)),
            self.binom[2] * self.q ** (al - 2) * self.p**2 * self.D2.expm1(),
        )
        self.J0 = self.F0m1.log1p() / (al - 1)
        self.inv_sqrt_2pi = 1 / (2 * arb.pi()).sqrt()
        self.q_pow_1ma = self.q ** (1 - al)
        self.p_pow_1ma = self.p ** (1 - al)


@lru_cache(maxsize=256)
def _consts(prob: Problem, prec: int) -> _Consts:
    return _Consts(prob)


def consts(prob: Problem) -> _Consts:
    return _consts(prob, ctx.prec)


#: most extra bits :func:`point_precision` adds (p so small that more is needed goes by the small-p route)
MAX_EXTRA_BITS = 4096


@lru_cache(maxsize=256)
def extra_bits(prob: Problem) -> int:
    """Extra working bits for the point bounds: about log2(1/(F(0) - 1)), so that F(u) - 1 = O(F(0) - 1) (of order
    p^2 for small p) keeps ~ctx.prec significant bits although F(u) itself is computed. A deterministic function of
    the exact inputs (F(0) - 1 at a fixed 64 bits, exact bit lengths), so producer and checker use the same value;
    any value is valid (it only sets a precision)."""
    with ctx.workprec(64):
        lo = _consts(prob, 64).F0m1.lower().fmpq()
    if not lo > 0:
        return MAX_EXTRA_BITS
    e = int(lo.q).bit_length() - int(lo.p).bit_length()
    return max(0, min(MAX_EXTRA_BITS, e + 8))


def point_precision(prob: Problem) -> int:
    """Working precision of :func:`point_bounds`: the caller's ctx.prec plus :func:`extra_bits`."""
    return ctx.prec + extra_bits(prob)


def F_zero(prob: Problem) -> arb:
    """F(0) = exp((alpha-1) J(0)) = sum_k C(alpha,k)(1-p)^(alpha-k) p^k exp(k(k-1) Delta^2/2).

    The u = 0 closed form of (5) (b = 0: the classical subsampled-Gaussian moment). A ball
    containing the exact value (only rounding error).
    """
    return consts(prob).F0


def J_zero(prob: Problem) -> arb:
    """J(0) = log F(0) / (alpha - 1) = log1p(F(0) - 1)/(alpha - 1), with F(0) - 1 summed as non-negative terms
    (no cancellation: the ball's relative width does not grow as p -> 0): ball containing the exact value."""
    return consts(prob).J0


# --------------------------------------------------------------------------------------------
# The integrand of (35), summed over k
# --------------------------------------------------------------------------------------------
def Q_upper(x: arb) -> arb:
    """An upper bound on the Gaussian tail Q(x) = Pr(N(0,1) > x), cheap: min(1/2, phi(x)/x) for x > 0 (Mills'
    ratio; phi(x)/x decreases, so the ball's upper endpoint bounds Q over the whole ball), 1/2 for x >= 0, else 1."""
    if x > 0:
        return arb((((-x * x) / 2).exp() / (x * (2 * arb.pi()).sqrt())).upper()).min(arb("0.5"))
    return arb("0.5") if x >= 0 else arb(1)


class _Integrand:
    """f(v) = phi(v) D(v)^(1-alpha) G(v) of the module docstring at one u (constants at the working precision)."""

    def __init__(self, prob: Problem, u: fmpq):
        c = consts(prob)
        al = prob.alpha
        self.alpha = al
        beta2 = c.D2 * 2 * ball(u)
        beta = beta2.sqrt()
        self.beta = beta
        self.beta2 = beta2
        self.coef = [c.binom[k] * c.q ** (al - k) * c.p**k * (c.D2 * (k * (k - 1)) / 2 - beta2 * (k * k) / 8).exp() for k in range(al + 1)]
        self.G_poly = arb_poly(self.coef)  # G(v) = G_poly(e^(beta v/2)), Horner in C
        self.pp = c.p * (-beta2 / 2).exp()  # D(v) = q + pp t^2, t = e^(beta v/2)
        self.q = c.q
        self.c = c
        self.half_beta = beta / 2

    def G(self, v: arb) -> arb:
        """G(v) = sum_k coef_k e^(k beta v / 2) (real ball)."""
        return self.G_poly((self.half_beta * v).exp())

    def node_sum(self, rule: Rule) -> arb:
        """S = sum over the nodes v_j = j h in [a, b] of f(v_j) (ball; every term is > 0).

        Along the grid t_j = e^(beta v_j/2) and phi(v_j) are updated by exact-ratio multiplications:
        t_(j+1) = t_j e^(beta h/2); phi(v_(j+1)) = phi(v_j) r_j with r_j = e^(-h v_j - h^2/2), r_(j+1) = r_j e^(-h^2).
        """
        al1 = self.alpha - 1
        h, a = rule.h, rule.a
        n = rule.nodes
        t = (self.half_beta * ball(a)).exp()
        t_step = (self.half_beta * ball(h)).exp()
        ph = ball(-a * a / 2).exp() * self.c.inv_sqrt_2pi
        r = ball(-h * a - h * h / 2).exp()
        r_step = ball(-h * h).exp()
        q, pp, Gp = self.q, self.pp, self.G_poly
        S = arb(0)
        for _ in range(n):
            S += Gp(t) * ph / (q + pp * (t * t)) ** al1
            t *= t_step
            ph *= r
            r *= r_step
        return S

    def tail_bound(self, a: fmpq, b: fmpq, h: fmpq) -> arb:
        """Rigorous upper bound on h sum of f over the nodes v < a and v > b (module docstring), a <= 0 <= b."""
        c, al = self.c, self.alpha
        ab, bb = ball(a), ball(b)
        left = c.q_pow_1ma * self.G(ab).min(c.F0) * Q_upper(-ab)
        left = left.min(self._left_tangent(ab, ball(h)))
        right = c.p_pow_1ma * ((al - 1) * (self.beta2 / 2 - self.beta * bb)).exp() * self.G(bb) * Q_upper(bb)
        shift = bb - al * self.beta / 2
        if shift >= 0:  # decided in balls: only then is phi(v - k beta/2) decreasing past b for every k
            right = right.min(c.q_pow_1ma * c.F0 * Q_upper(shift))
        return left + right

    def _left_tangent(self, ab: arb, hb: arb) -> arb:
        """The tangent form of the left tail bound (module docstring): log D >= its tangent at a (ball; upper bound)."""
        al1 = self.alpha - 1
        w = self.pp * (self.beta * ab).exp()  # p e^(beta a - beta^2/2)
        Da = self.q + w
        theta = w / Da
        tot = arb(0)
        peak = 1 + hb * self.c.inv_sqrt_2pi
        for k, ck in enumerate(self.coef):
            s = self.beta * (arb(k) / 2 - al1 * theta)
            tail = Q_upper(s - ab) if ab <= s else peak
            tot += ck * (s * s / 2).exp() * tail
        return Da ** (-al1) * (al1 * self.beta * theta * ab).exp() * tot

    def discretisation_bound(self, h: fmpq, strip: fmpq) -> tuple[arb, arb]:
        """(E_disc, eps): |T_h - F| <= E_disc = 2M/(e^(2 pi c/h) - 1) with M = e^(c^2/2) ((1-p) s)^(1-alpha) F(0),
        s = sin(max(beta c, pi/2)); and |T_h - F| <= eps F with eps = 2 e^(c^2/2) cos(beta c/2)^(1-alpha)/(e^(2 pi c/h) - 1)
        (module docstring). Upper bounds (balls; use the upper endpoints)."""
        c = ball(strip)
        bc = self.beta * c
        pi = arb.pi()
        if not bc < pi:
            if bc >= pi:
                raise InputError("witnesses", f"rule strip {strip} reaches the poles of f (beta * strip >= pi)")
            raise UndecidedError("beta * strip < pi is undecided at this precision")
        # |D| >= (1-p) s on the strip, s = 1 if beta c <= pi/2 else sin(beta c), i.e. s = sin(max(beta c, pi/2))
        s = arb(bc.max(pi / 2).sin().lower()).min(arb(1))
        if not s > 0:
            raise UndecidedError("sin(beta * strip) > 0 is undecided at this precision")
        denom = (2 * pi * c / ball(h)).exp() - 1
        gauss = (c * c / 2).exp()
        M = gauss * (self.q * s) ** (1 - self.alpha) * self.c.F0
        # |D(x+iy)| >= cos(beta y/2) D(x) >= cos(beta c/2) D(x): relative to F itself
        cs = arb((bc / 2).cos().lower())
        eps = 2 * gauss * cs ** (1 - self.alpha) / denom if cs > 0 else arb("inf")
        return 2 * M / denom, eps


@lru_cache(maxsize=4096)
def _integrand(prob: Problem, u: fmpq, prec: int) -> _Integrand:
    return _Integrand(prob, u)


# --------------------------------------------------------------------------------------------
# Window choice (floats: choosing only, never certifying)
# --------------------------------------------------------------------------------------------
def log_p_float(prob: Problem) -> tuple[float, float]:
    """(log p, log(1-p)) in floats from the exact rational (choosing only; no float of p itself is needed,
    so p within 1e-16 of 1 or below 1e-308 works)."""
    pn, pd = int(prob.p.p), int(prob.p.q)
    return math.log(pn) - math.log(pd), math.log(pd - pn) - math.log(pd)


def _log_coefs_float(prob: Problem, u: float) -> tuple[list[float], float, float, float]:
    """(log coef_k, beta, log p, log(1-p)) in floats (choosing only)."""
    al = prob.alpha
    lp, lq = log_p_float(prob)
    D2 = math.exp(2 * (math.log(2 * int(prob.sigma.q)) - math.log(int(prob.sigma.p))))
    beta2 = 2.0 * u * D2
    lc = [
        math.lgamma(al + 1) - math.lgamma(k + 1) - math.lgamma(al - k + 1) + (al - k) * lq + k * lp + D2 * k * (k - 1) / 2 - beta2 * k * k / 8
        for k in range(al + 1)
    ]
    return lc, math.sqrt(beta2), lp, lq


def _lse0(x):
    """log-sum-exp over axis 0 of a 2-D numpy array (floats: choosing only)."""
    import numpy as np

    m = x.max(axis=0)
    return m + np.log(np.exp(x - m[None, :]).sum(axis=0))


def log_integrand_float(prob: Problem, u: float, vs):
    """Float log of the summed integrand of (35) on a numpy grid ``vs`` (for choosing windows and alpha)."""
    import numpy as np

    lc, beta, lp, lq = _log_coefs_float(prob, u)
    al = prob.alpha
    ks = np.arange(al + 1, dtype=float)
    lg = _lse0(np.asarray(lc)[:, None] + ks[:, None] * (beta * vs[None, :] / 2))
    ld = np.logaddexp(lq, lp + beta * vs - beta * beta / 2)
    return lg - (al - 1) * ld - vs * vs / 2 - 0.5 * math.log(2 * math.pi)


def _log_Q_array(x):
    """log Q(x) on a numpy array (floats: choosing only)."""
    import numpy as np

    x = np.asarray(x, dtype=float)
    small = np.minimum(x, 20.0)
    erfc = np.frompyfunc(math.erfc, 1, 1)
    out = np.log(np.maximum(erfc(small / math.sqrt(2)).astype(float) / 2, 1e-300))
    big = np.maximum(x, 20.0)
    asym = -big * big / 2 - np.log(big * math.sqrt(2 * math.pi)) + np.log1p(-1 / (big * big))
    return np.where(x < 20, out, asym)


def _scan_window(prob: Problem, u: fmpq, drop: float):
    """Window [a, b] (multiples of 1/8, a <= 0 <= b) for the trapezoidal rule at u (floats: choosing only).

    The smallest a <= 0 and b >= 0 on a 1/2 grid where the float estimates of the *rigorous* tail bounds
    used by :func:`point_bounds` are below e^-drop times the float estimate of F(u) (the right-tail bound
    is loose until p e^(beta b) dominates 1 - p, so b may have to go well past the visible mass).
    Returns (a, b, log F estimate, log F(0), log(1-p), beta).
    """
    import numpy as np

    uf = float_of(u)
    lc, beta, lp, lq = _log_coefs_float(prob, uf)
    al = prob.alpha
    step = 0.5
    vs = np.arange(-SCAN_PAD, al * beta / 2 + SCAN_PAD, step)
    lf = log_integrand_float(prob, uf, vs)
    m = lf.max()
    logF = m + math.log(np.exp(lf - m).sum() * step)
    lca = np.asarray(lc)
    ks = np.arange(al + 1, dtype=float)
    logF0 = float(np.logaddexp.reduce(lca + ks * ks * beta * beta / 8))
    target = logF - drop

    def logG(v):
        return _lse0(lca[:, None] + ks[:, None] * (beta * v[None, :] / 2))

    A = -np.arange(0.0, SCAN_PAD, step)
    left = (1 - al) * lq + np.minimum(logG(A), logF0) + _log_Q_array(-A)
    ok = np.nonzero(left <= target)[0]
    a = float(A[ok[0]]) if len(ok) else float(A[-1])
    Bv = np.arange(0.0, al * beta / 2 + SCAN_PAD, step)
    r1 = (1 - al) * lp + (al - 1) * (beta * beta / 2 - beta * Bv) + logG(Bv) + _log_Q_array(Bv)
    r2 = np.where(Bv >= al * beta / 2, (1 - al) * lq + logF0 + _log_Q_array(Bv - al * beta / 2), np.inf)
    ok = np.nonzero(np.minimum(r1, r2) <= target)[0]
    b = float(Bv[ok[0]]) if len(ok) else float(Bv[-1])
    return fmpq(int(round(a * 8)), 8), fmpq(int(round(b * 8)), 8), logF, logF0, lq, beta


# --------------------------------------------------------------------------------------------
# Rule choice (floats: choosing only) and point bounds
# --------------------------------------------------------------------------------------------
#: rules use steps, strips and window ends on this grid (exact dyadic rationals)
RULE_GRID = 64


def choose_rule(prob: Problem, u: fmpq, bits: int) -> Rule:
    """A trapezoidal rule for F(u) with (float-estimated) truncation and discretisation below 2^-bits F(u).

    Window from :func:`_scan_window`. Strip c and step h: for each candidate c (beta c < pi) the largest h whose
    discretisation bound (the sharper of the absolute and relative forms of the module docstring) is below
    e^-drop F; the c giving the largest h wins; h and c are rounded down to dyadic rationals. Floats only
    choose; :func:`point_bounds` certifies whatever rule it is given.
    """
    drop = bits * math.log(2) + 3.0
    a, b, logF, logF0, lq, beta = _scan_window(prob, u, drop)
    al = prob.alpha
    cmax = 0.97 * math.pi / beta if beta > 0 else 60.0
    best = (0.0, 1.0)
    for i in range(1, 121):
        c = min(cmax, 0.25 * i)
        s = 1.0 if beta * c <= math.pi / 2 else math.sin(beta * c)
        # absolute form: log(2M) - log F;  relative form: log(2 e^(c^2/2) cos(beta c/2)^(1-alpha))
        log_abs = c * c / 2 + (1 - al) * (lq + math.log(s)) + logF0 + math.log(2) - logF
        log_rel = c * c / 2 - (al - 1) * math.log(math.cos(beta * c / 2)) + math.log(2)
        h = 2 * math.pi * c / max(min(log_abs, log_rel) + drop, 1.0)
        if h > best[0]:
            best = (h, c)
        if c >= cmax:
            break
    h = _dyadic_below(best[0])
    c = _dyadic_below(best[1])
    return Rule(fmpq((a / h).floor()) * h, fmpq((b / h).ceil()) * h, h, c)


def _dyadic_below(x: float) -> fmpq:
    """A dyadic rational <= x > 0: a multiple of 1/RULE_GRID, or a power of two below 1/RULE_GRID."""
    if x >= 1 / RULE_GRID:
        return fmpq(int(x * RULE_GRID), RULE_GRID)
    k = math.ceil(-math.log2(x))
    return fmpq(1, 2**k)


def point_bounds(prob: Problem, u: fmpq, rule: Rule | None) -> PointBound:
    """J-lower(u) <= J(u) <= J-upper(u) (B.3.1, trapezoidal scheme of the module docstring).

    ``rule`` is the trapezoidal rule (a witness; any well-formed rule is valid). At u = 0 the closed form is
    used (rule ignored). Raises UndecidedError when a bound is not finite at this precision. Evaluated at
    :func:`point_precision` (F(u) - 1 may be of order p^2: the extra bits keep it resolved).
    """
    require_in("u", u, 0, fmpq(1, 2), "[]")
    if u == 0:
        F0 = F_zero(prob)
        J0 = J_zero(prob)
        return PointBound(u, None, F0, F0, J0, J0, arb(0), arb(0))
    check_rule(rule)
    with ctx.workprec(point_precision(prob)):
        pb = _point_bounds(prob, u, rule)
    # back to the caller's precision (unary plus rounds outward: each ball still contains the exact value); J itself
    # needs no extra bits, only F - 1 did, and short endpoints keep the exact text of the certificate short
    return PointBound(u, rule, +pb.F_lo, +pb.F_hi, +pb.J_lo, +pb.J_hi, +pb.tails, +pb.disc)


def _point_bounds(prob: Problem, u: fmpq, rule: Rule) -> PointBound:
    f = _integrand(prob, u, ctx.prec)
    hb = ball(rule.h)
    S = hb * f.node_sum(rule)
    tails = f.tail_bound(rule.a, rule.b, rule.h)
    disc, eps = f.discretisation_bound(rule.h, rule.strip)
    if not (S.is_finite() and tails.is_finite() and disc.is_finite()):
        raise UndecidedError(f"point bound at u = {u}: a bound is not finite")
    F_lo = arb((S - disc).lower())
    F_hi = arb((S + tails + disc).upper())
    if eps.is_finite() and eps < 1:
        # the relative form: T_h/(1+eps) <= F <= T_h/(1-eps), S <= T_h <= S + tails
        lo2, hi2 = arb((S / (1 + eps)).lower()), arb(((S + tails) / (1 - eps)).upper())
        if lo2 > F_lo:
            F_lo = lo2
        if hi2 < F_hi:
            F_hi = hi2
        disc = disc.min(arb((eps * hi2).upper()))
    # F(u) >= 1 always (a Rényi divergence is >= 0): use it to keep log finite
    F_lo = F_lo.max(arb(1))
    al1 = prob.alpha - 1
    return PointBound(u, rule, F_lo, F_hi, F_lo.log() / al1, F_hi.log() / al1, tails, disc)
