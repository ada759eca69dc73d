"""Point bounds J-lower(u) <= J(u) <= J-upper(u) for Bok (2026), Appendix B.3.1.

J(u) = log F(u) / (alpha - 1), F as in (15): the order-alpha Rényi moment of the 2-D Gaussian
mixtures of Theorem 1 / (5) at the angle parameter u in [0, 1/2]. Beta = Delta sqrt(2u).

Scheme used (and why). The paper writes F(u) by the binomial expansion (35) as alpha + 1 one-dimensional
integrals, each truncated to [-L, R] with the tails (II), (III) bounded by Phi. We keep (35) but
integrate the *summed* integrand once with Arb's rigorous adaptive Gauss-Legendre (``acb.integral``):

    F(u) = int phi(v) D(v)^(1-alpha) G(v) dv,  D(v) = 1-p + p e^(beta v - beta^2/2),
    G(v) = sum_k coef_k e^(k beta v / 2),   coef_k = C(alpha,k) (1-p)^(alpha-k) p^k e^(k(k-1)Delta^2/2 - k^2 beta^2/8).

One integral instead of alpha + 1 is what makes alpha = 64 affordable. The integrand is evaluated
in a *bounded form*: with y = s e^(beta v), s = p e^(-beta^2/2)/(1-p), A = sqrt(y/(1+y)),
B = sqrt(1/(1+y)) (both in [0, 1] on the real line),

    D(v)^(1-alpha) e^(k beta v/2) = (1-p)^(1-alpha) s^(-k/2) A^k B^(2 alpha - 2 - k),

so the complex-ball enclosures Arb needs for its error bounds do not multiply e^(+alpha beta v/2)
by e^(-(alpha-1) beta v) (which cost 10x more subdivisions in our measurements). The branch of
B = (1+y)^(-1/2) is cut where 1 + y <= 0, i.e. on Im(beta v) = pi: we honour the ``analytic``
flag (``rsqrt(analytic=...)``), so Arb's enclosure is rigorous. On (near-)point arguments we use
the cheaper, equally rigorous, rational form D^(1-alpha) G (a pole gives a non-finite ball).

The integral runs over a window [a, b] chosen by a float scan of the log-integrand (choosing only:
any window gives a valid bound). The tails are bounded rigorously and added to the upper bound only:

    left  (v < a):  <= (1-p)^(1-alpha) min(G(a), F(0)) Phi(a)
                    [D >= 1-p;  e^(k beta v/2) <= e^(k beta a/2);  int_{-inf}^a e^(k beta v/2) phi = e^(k^2 beta^2/8) Phi(a - k beta/2)]
    right (v > b):  <= min( p^(1-alpha) e^((alpha-1)(beta^2/2 - beta b)) G(b) Q(b),
                            (1-p)^(1-alpha) F(0) Q(b - alpha beta/2) )
                    [D >= p e^(beta v - beta^2/2) and (k/2 + 1 - alpha) <= 0 for k <= alpha, alpha >= 2;
                     or D >= 1-p and Q(b - k beta/2) <= Q(b - alpha beta/2)]

with F(0) = sum_k C(alpha,k) (1-p)^(alpha-k) p^k e^(k(k-1) Delta^2/2) (the u = 0 closed form, which is
also sum_k coef_k e^(k^2 beta^2/8)). Rounding: F_lower = lower endpoint of the integral ball over [a, b]
(the integrand is positive, so dropping the tails rounds down); F_upper = upper endpoint of the integral
ball plus the tail bounds (rounds up). J = log(F)/(alpha - 1) is monotone, so the bounds carry over.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from ..balls import InputError, Q, UndecidedError, acb, arb, ball, ctx, fmpq
from .problem import Problem

#: the default window of the paper (L = R = 8) is replaced by a float scan; this is the scan range.
SCAN_PAD = 40.0


@dataclass(frozen=True)
class PointBound:
    """Certified bounds at one u: F_lo <= F(u) <= F_hi and J_lo <= J(u) <= J_hi (balls; use lower/upper)."""

    u: fmpq
    a: fmpq | None          # window [a, b] of the integral (None at u = 0: closed form)
    b: fmpq | None
    F_lo: arb
    F_hi: arb
    J_lo: arb
    J_hi: arb
    tails: arb              # rigorous bound on the truncated tails (0 at u = 0)
    quad_rad: arb           # radius of the integral ball (quadrature + rounding)


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
        self.f0_terms = [self.binom[k] * self.q ** (al - k) * self.p ** k * (self.D2 * (k * (k - 1)) / 2).exp()
                         for k in range(al + 1)]
        self.F0 = sum(self.f0_terms[1:], self.f0_terms[0])
        self.inv_sqrt_2pi = 1 / (2 * arb.pi()).sqrt()
        self.q_pow_1ma = self.q ** (1 - al)
        self.p_pow_1ma = self.p ** (1 - al)


@lru_cache(maxsize=256)
def _consts(prob: Problem, prec: int) -> _Consts:
    return _Consts(prob)


def consts(prob: Problem) -> _Consts:
    return _consts(prob, ctx.prec)


def F_zero(prob: Problem) -> arb:
    """F(0) = exp((alpha-1) J(0)) = sum_k C(alpha,k)(1-p)^(alpha-k) p^k exp(k(k-1) Delta^2/2).

    The u = 0 closed form of (5) (b = 0: the classical subsampled-Gaussian moment). A ball
    containing the exact value (only rounding error).
    """
    return consts(prob).F0


def J_zero(prob: Problem) -> arb:
    """J(0) = log F(0) / (alpha - 1): ball containing the exact value."""
    return F_zero(prob).log() / (prob.alpha - 1)


# --------------------------------------------------------------------------------------------
# The integrand of (35), summed over k
# --------------------------------------------------------------------------------------------
class _Integrand:
    def __init__(self, prob: Problem, u: fmpq):
        c = consts(prob)
        al = prob.alpha
        self.alpha = al
        beta2 = c.D2 * 2 * ball(u)
        beta = beta2.sqrt()
        self.beta = beta
        self.beta2 = beta2
        # coef_k of G (rational form) and d_k of the bounded form
        self.coef = [c.binom[k] * c.q ** (al - k) * c.p ** k
                     * (c.D2 * (k * (k - 1)) / 2 - beta2 * (k * k) / 8).exp() for k in range(al + 1)]
        sq, sp = c.q.sqrt(), c.p.sqrt()
        self.d = [c.binom[k] * c.q / sq ** k * sp ** k
                  * (c.D2 * (k * (k - 1)) / 2 - beta2 * (k * k) / 8 + beta2 * k / 4).exp() for k in range(al + 1)]
        self.log_s = c.p.log() - beta2 / 2 - c.q.log()
        self.pp = c.p * (-beta2 / 2).exp()
        self.q = c.q
        self.q_pow_1ma = c.q_pow_1ma
        self.c = c
        self.half_beta = beta / 2
        self.small = arb(2) ** -30

    def G(self, v: arb) -> arb:
        """G(v) = sum_k coef_k e^(k beta v / 2) (real ball, Horner in e^(beta v/2))."""
        t = (self.half_beta * v).exp()
        g = self.coef[self.alpha]
        for k in range(self.alpha - 1, -1, -1):
            g = g * t + self.coef[k]
        return g

    def __call__(self, v: acb, analytic: bool) -> acb:
        al = self.alpha
        if v.rad() < self.small:
            if v.imag.is_zero():
                # a real (node) argument: the same rational form in real arithmetic (1.7x cheaper);
                # D > 0 on the real line, so there is no pole to detect
                x = v.real
                t = (self.half_beta * x).exp()
                g = self.coef[al]
                for k in range(al - 1, -1, -1):
                    g = g * t + self.coef[k]
                den = self.q + self.pp * t * t
                return acb(g / den ** (al - 1) * (-x * x / 2).exp() * self.c.inv_sqrt_2pi)
            # rational form: phi(v) D(v)^(1-alpha) G(v); a pole of D^(1-alpha) gives a non-finite ball
            t = (self.half_beta * v).exp()
            g = acb(self.coef[al])
            for k in range(al - 1, -1, -1):
                g = g * t + self.coef[k]
            den = self.q + self.pp * t * t
            return g / den ** (al - 1) * (-v * v / 2).exp() * self.c.inv_sqrt_2pi
        # bounded form (see module docstring); rsqrt honours the analytic flag (branch cut of (1+y)^(-1/2))
        z = self.beta * v + self.log_s
        y = z.exp()
        B = (1 + y).rsqrt(analytic=analytic)
        A = (z / 2).exp() * B
        h = acb(self.d[al])
        Bp = acb(1)
        for k in range(al - 1, -1, -1):
            Bp = Bp * B
            h = h * A + self.d[k] * Bp
        return h * B ** (al - 2) * (-v * v / 2).exp() * self.c.inv_sqrt_2pi

    def tail_bound(self, a: arb, b: arb) -> arb:
        """Rigorous upper bound on int_{-inf}^a + int_b^inf of the integrand (module docstring)."""
        c, al = self.c, self.alpha
        left = c.q_pow_1ma * self.G(a).min(c.F0) * Q(-a)
        r1 = c.p_pow_1ma * ((al - 1) * (self.beta2 / 2 - self.beta * b)).exp() * self.G(b) * Q(b)
        r2 = c.q_pow_1ma * c.F0 * Q(b - al * self.beta / 2)
        right = r1.min(r2)
        return left + right


@lru_cache(maxsize=4096)
def _integrand(prob: Problem, u: fmpq, prec: int) -> _Integrand:
    return _Integrand(prob, u)


# --------------------------------------------------------------------------------------------
# Window choice (floats: choosing only, never certifying)
# --------------------------------------------------------------------------------------------
def _log_coefs_float(prob: Problem, u: float) -> tuple[list[float], float, float, float]:
    al = prob.alpha
    p = float(prob.p.p) / float(prob.p.q)
    D2 = (2.0 * float(prob.sigma.q) / float(prob.sigma.p)) ** 2
    beta2 = 2.0 * u * D2
    lq, lp = math.log1p(-p), math.log(p)
    lc = [math.lgamma(al + 1) - math.lgamma(k + 1) - math.lgamma(al - k + 1) + (al - k) * lq + k * lp
          + D2 * k * (k - 1) / 2 - beta2 * k * k / 8 for k in range(al + 1)]
    return lc, math.sqrt(beta2), p, lq


def log_integrand_float(prob: Problem, u: float, vs):
    """Float log of the summed integrand of (35) on a numpy grid ``vs`` (for choosing windows and alpha)."""
    import numpy as np

    lc, beta, p, lq = _log_coefs_float(prob, u)
    al = prob.alpha
    ks = np.arange(al + 1, dtype=float)
    lg = np.logaddexp.reduce(np.asarray(lc)[:, None] + ks[:, None] * (beta * vs[None, :] / 2), axis=0)
    ld = np.logaddexp(lq, math.log(p) + beta * vs - beta * beta / 2)
    return lg - (al - 1) * ld - vs * vs / 2 - 0.5 * math.log(2 * math.pi)


def _log_Q_float(x: float) -> float:
    """log of the Gaussian tail Q(x) in floats (for choosing windows only)."""
    if x < 20:
        return math.log(max(math.erfc(x / math.sqrt(2)) / 2, 1e-300))
    return -x * x / 2 - math.log(x * math.sqrt(2 * math.pi)) + math.log1p(-1 / (x * x))


def _logsumexp(xs) -> float:
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def choose_window(prob: Problem, u: fmpq, drop: float) -> tuple[fmpq, fmpq]:
    """Window [a, b] (multiples of 1/8) for the quadrature at u (floats: choosing only).

    Starts from the region where the log-integrand is within ``drop`` of its maximum, then widens
    until the float estimates of the *rigorous* tail bounds used by :func:`point_bounds` are below
    e^-drop times the float estimate of F(u) (the right-tail bound is loose until p e^(beta b)
    dominates 1 - p, so b may have to go well past the visible mass).
    """
    import numpy as np

    uf = int(u.p) / int(u.q)
    lc, beta, p, lq = _log_coefs_float(prob, uf)
    al = prob.alpha
    hi = al * beta / 2 + SCAN_PAD
    vs = np.arange(-SCAN_PAD, hi, 1 / 16)
    lf = log_integrand_float(prob, uf, vs)
    m = lf.max()
    logF = m + math.log(np.exp(lf - m).sum() / 16)
    keep = vs[lf >= m - drop]
    a = math.floor((keep.min() - 1) * 8) / 8
    b = math.ceil((keep.max() + 1) * 8) / 8
    lp = math.log(p)
    logF0 = _logsumexp([c + k * k * beta * beta / 8 for k, c in enumerate(lc)])

    def logG(v):
        return _logsumexp([c + k * beta * v / 2 for k, c in enumerate(lc)])

    target = logF - drop
    for _ in range(400):
        left = (1 - al) * lq + min(logG(a), logF0) + _log_Q_float(-a)
        if left <= target:
            break
        a -= 0.5
    for _ in range(800):
        r1 = (1 - al) * lp + (al - 1) * (beta * beta / 2 - beta * b) + logG(b) + _log_Q_float(b)
        r2 = (1 - al) * lq + logF0 + _log_Q_float(b - al * beta / 2)
        if min(r1, r2) <= target:
            break
        b += 0.5
    return fmpq(int(round(a * 8)), 8), fmpq(int(round(b * 8)), 8)


# --------------------------------------------------------------------------------------------
# Point bounds
# --------------------------------------------------------------------------------------------
def point_bounds(prob: Problem, u: fmpq, window: tuple[fmpq, fmpq] | None, rel_bits: int) -> PointBound:
    """J-lower(u) <= J(u) <= J-upper(u) (B.3.1, summed-integrand scheme of the module docstring).

    ``window`` = (a, b) is the truncation [a, b] (a witness; any choice is valid); ``rel_bits`` sets the
    quadrature's relative tolerance 2^-rel_bits. At u = 0 the closed form is used (window ignored).
    Raises UndecidedError when the integral or a tail bound is not finite at this precision.
    """
    if not (0 <= u <= fmpq(1, 2)):
        raise InputError("u", f"must be in [0, 1/2], got {u}")
    if u == 0:
        F0 = F_zero(prob)
        J0 = F0.log() / (prob.alpha - 1)
        return PointBound(u, None, None, F0, F0, J0, J0, arb(0), F0.rad())
    a, b = window
    f = _integrand(prob, u, ctx.prec)
    I = acb.integral(f, ball(a), ball(b), rel_tol=arb(2) ** (-rel_bits), abs_tol=0,
                     eval_limit=200000, deg_limit=None)
    Ir = I.real
    tails = f.tail_bound(ball(a), ball(b))
    if not (Ir.is_finite() and tails.is_finite()):
        raise UndecidedError(f"point bound at u = {u}: integral or tail bound not finite")
    if not Ir.lower() > 0:
        raise UndecidedError(f"point bound at u = {u}: integral enclosure does not exclude 0")
    F_lo = arb(Ir.lower())
    F_hi = arb(Ir.upper()) + tails
    F_hi = arb(F_hi.upper())
    # F(u) >= 1 always (a Rényi divergence is >= 0): use it to keep log finite
    F_lo = F_lo.max(arb(1))
    al1 = prob.alpha - 1
    J_lo = F_lo.log() / al1
    J_hi = F_hi.log() / al1
    return PointBound(u, a, b, F_lo, F_hi, J_lo, J_hi, tails, Ir.rad())


def relative_width_ok(pb: PointBound, rel: arb) -> bool:
    """True when the point bound's relative F width (quadrature + tails) is within ``rel`` (decided in balls)."""
    w = (pb.F_hi - pb.F_lo) / pb.F_lo
    return bool(w.is_finite() and w < rel)
