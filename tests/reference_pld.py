"""Independent mpmath ground truth for the PLD accountant (written apart from certify.pld; 30+ digits).

Pairs (Bok 2026 Proposition 1; Zhu, Dong, Wang 2022), z(x) = exp(D x - D^2/2):
  remove: P = (1-q) N(0,1) + q N(D,1), Q = N(0,1); privacy loss L(x) = log(1 - q + q z(x)).
  add:    P = N(0,1), Q = (1-q) N(0,1) + q N(D,1);  L(x) = -log(1 - q + q z(x)).
One-step curve: the closed forms f(gamma) = H_gamma(P||Q) of the notes.

Composition (T = 2, 3): H_gamma(P1 x P2 || Q1 x Q2) = E_{x ~ P2}[ H_{gamma e^{-L2(x)}}(P1 || Q1) ], integrated
over x with mpmath.quad (error estimate checked). Nested, T = 3 costs 15-20 min per value: use the fast path
at the end of this module (``fast_curve``: the inner dimension integrates the closed-form loss DENSITY, the
outer one the closed-form one-step curve; about 20 s - 4 min per parameter set on this machine, then seconds
per extra eps; proven truncation bound returned with every value).

Fixed-size replace-one uses the curve f* = max(f_remove, f_add) with D = 2/sigma. When f_remove >= f_add
exactly for gamma >= 1 and f_add >= f_remove below (checked numerically by ``max_structure_ok``), the
P-loss law of f* is: the remove pair's law on {L > 0} = {x > D/2}, the add pair's law on {L < 0} =
{x > D/2}, and an atom at loss 0 of mass gamma (f*'(1+) - f*'(1-)) = (1-q)(2 Phi(D/2) - 1).
"""

from __future__ import annotations

import mpmath as mp

DPS = 34


def _ncdf(x):
    return mp.ncdf(x)


def _sf(x):
    return mp.ncdf(-x)


def f_remove(g, q, D):
    if g <= 1 - q:
        return 1 - g
    x1 = (mp.log((g - 1 + q) / q) + D**2 / 2) / D
    return q * _sf(x1 - D) - (g - 1 + q) * _sf(x1)


def f_add(g, q, D):
    if g * (1 - q) >= 1:
        return mp.mpf(0)
    if g == 0:
        return mp.mpf(1)
    x2 = (mp.log((1 - g * (1 - q)) / (g * q)) + D**2 / 2) / D
    return (1 - g * (1 - q)) * _ncdf(x2) - g * q * _ncdf(x2 - D)


def f_max(g, q, D):
    return max(f_remove(g, q, D), f_add(g, q, D))


def loss(direction, x, q, D):
    v = mp.log(1 - q + q * mp.exp(D * x - D**2 / 2))
    return v if direction == "remove" else -v


def density(direction, x, q, D):
    phi = mp.npdf(x)
    if direction == "remove":
        return (1 - q) * phi + q * mp.npdf(x - D)
    return phi


def _quad(fn, a, b):
    val, err = mp.quad(fn, [a, b], error=True, maxdegree=10)
    if not err <= max(mp.mpf(10) ** (-28) * abs(val), mp.mpf(10) ** -35):
        raise AssertionError(f"reference quadrature not accurate: {val} +- {err}")
    return val


def x_at_loss(direction, c, q, D):
    """The x with L(x) = c (L is monotone in x), or None."""
    z = ((mp.exp(c) if direction == "remove" else mp.exp(-c)) - 1 + q) / q
    if z <= 0:
        return None
    return (mp.log(z) + D**2 / 2) / D


def kinks(direction, g, q, D):
    """x where g e^{-L(x)} hits a point where the one- or two-step curves are not smooth
    ((1-q)^k, k = -2..2: ends of the loss supports and their sums; 1: the max-profile's kink)."""
    out = []
    for k in ((1 - q) ** 2, 1 - q, mp.mpf(1), 1 / (1 - q), 1 / (1 - q) ** 2):
        x = x_at_loss(direction, mp.log(g / k), q, D)
        if x is not None and -40 < x < 40:
            out.append(x)
    return out


def _integrate_x(fn, a=None, extra=()):
    """Integral over x in (a, inf) (or the real line) split into pieces for mpmath."""
    pts = sorted(set([-40, -8, -3, 0, 3, 8, 40] + [x for x in extra]))
    if a is not None:
        pts = [a] + [p for p in pts if p > a]
    total = mp.mpf(0)
    for lo, hi in zip(pts, pts[1:]):
        total += _quad(fn, lo, hi)
    return total


def composed_direction(direction, q, D, T, eps):
    """H_{e^eps} of the T-fold product of one direction's pair (T = 1, 2, 3)."""
    with mp.workdps(DPS):
        q, D, eps = mp.mpf(q), mp.mpf(D), mp.mpf(eps)
        f = f_remove if direction == "remove" else f_add

        def H(t, g):
            if t == 1:
                return f(g, q, D)
            return _integrate_x(
                lambda x: density(direction, x, q, D) * H(t - 1, g * mp.exp(-loss(direction, x, q, D))), extra=kinks(direction, g, q, D)
            )

        return H(T, mp.exp(eps))


def poisson_delta(q, sigma, T, eps):
    """Worst direction of Poisson add/remove, D = 1/sigma."""
    D = 1 / mp.mpf(sigma)
    return max(composed_direction("remove", q, D, T, eps), composed_direction("add", q, D, T, eps))


def max_structure_ok(q, D) -> bool:
    with mp.workdps(DPS):
        q, D = mp.mpf(q), mp.mpf(D)
        for g in [mp.mpf(k) / 64 for k in range(1, 64)] + [1 + mp.mpf(k) / 16 for k in range(1, 200)]:
            a, b = f_remove(g, q, D), f_add(g, q, D)
            if g > 1 and a < b - mp.mpf(10) ** -30:
                return False
            if g < 1 and b < a - mp.mpf(10) ** -30:
                return False
        return True


def fixed_size_delta(q, sigma, T, eps):
    """T-fold composition of the max-profile f* = max(f_remove, f_add), D = 2/sigma (see the docstring)."""
    with mp.workdps(DPS):
        q, eps = mp.mpf(q), mp.mpf(eps)
        D = 2 / mp.mpf(sigma)
        atom = (1 - q) * (2 * mp.ncdf(D / 2) - 1)

        def H(t, g):
            if t == 1:
                return f_max(g, q, D)
            part = atom * H(t - 1, g)
            for direction in ("remove", "add"):
                part += _integrate_x(
                    lambda x, d=direction: density(d, x, q, D) * H(t - 1, g * mp.exp(-loss(d, x, q, D))), a=D / 2, extra=kinks(direction, g, q, D)
                )
            return part

        return H(T, mp.exp(eps))


# ================================================================================================
# Fast T = 2, 3: integrate the loss DENSITY, not the one-step curve, in the inner dimension
# ================================================================================================
# Every profile above has a P-loss law  mu = a delta_0 + rho(l) dl  (a = 0 for the Poisson directions; for
# the max-profile a and rho are given in the module docstring). The T-fold curve depends only on mu^(*T):
#
#   H_T(gamma) = E[ f(gamma e^(-S_(T-1))) ],   S_(T-1) = l_1 + ... + l_(T-1) i.i.d. ~ mu,
#
# with f the ONE-step curve in closed form (f_remove, f_add, f_max: valid for every gamma >= 0, i.e. every
# real c = log gamma, including c < 0 where f_remove = 1 - gamma). For T = 3:
#
#   H_3 = a^2 f(gamma) + 2a int rho(s) f(gamma e^-s) ds + int rho2(s) f(gamma e^-s) ds,  rho2 = rho * rho,
#
# and rho2(s) = int rho(l) rho(s - l) dl = 2 int_(l <= s/2) rho(l) rho(s - l) dl (symmetric in l <-> s-l).
# The inner integrand contains only exp/log (rho is closed form), no erfc, and rho2 does not depend on
# gamma: it is computed ONCE per law (Gauss-Legendre, then a Chebyshev interpolant in v, s = 2 M(v)) and
# shared by every outer node and every eps. That, not a cheaper integrand, is what makes T = 3 cost
# 15 s - 5 min per parameter set instead of 15-20 min per value with the nested curve quadrature above
# (which stays as a cross-check).
#
# Coordinates. Each law is the image of a "Gaussian" coordinate u with density w(u) under an increasing
# map l = M(u) (likelihood ratios of these pairs are monotone in the output: z(x) = e^(D x - D^2/2) is
# increasing, so L_remove(x) = log(1 - q + q z(x)) increases and L_add = -L_remove decreases; every
# threshold set {p > c q} is a half-line with a closed-form end, no root finding is needed):
#   remove: u = x ~ (1-q) N(0,1) + q N(D,1),  M(u) = L(u),            L(x) = log(1 - q + q z(x))
#   add:    u = -x, x ~ N(0,1),               M(u) = -L(-u)
#   max:    u >= D/2: the remove part (M = L(u), w = remove density); u < D/2: the add part mirrored,
#           x = D - u (M = -L(D - u), w = phi(D - u)); M(D/2) = 0 on both sides.
# Every integral over l (or s = 2 M(v)) is done in u (or v), where the mass sits like a Gaussian.
#
# Truncation (proven): u is restricted to [-X, D + X]. For any mixture of N(0,1) and N(D,1) (D >= 0)
# P(x < -X) <= Phibar(X) and P(x > D + X) <= Phibar(X); so each l_i falls outside the window with
# probability <= TAIL = 2 Phibar(X) (max-profile: each part <= Phibar(X) per side). Dropping pairs
# (l_1, l_2) with a coordinate outside, with 0 <= f <= 1, lowers H_3 by at most 2 TAIL (H_2: TAIL), and
# never raises it: the computed value v satisfies v <= H_T <= v + T_tail. X = 12.5: TAIL = 7.3e-36.
X_TRUNC = mp.mpf("12.5")


def _Lr(x, q, D):
    return mp.log(1 - q + q * mp.exp(D * x - D**2 / 2))


def _Lr_inv(l, q, D):
    """x with L_remove(x) = l (None outside the range of L_remove)."""
    z = (mp.exp(l) - 1 + q) / q
    if z <= 0:
        return None
    return (mp.log(z) + D**2 / 2) / D


def _Lr_prime(x, q, D):
    qz = q * mp.exp(D * x - D**2 / 2)
    return D * qz / (1 - q + qz)


def _p_remove(x, q, D):
    return (1 - q) * mp.npdf(x) + q * mp.npdf(x - D)


class Law:
    """The P-loss law of one profile: atom a at 0, density via (M, w) on u in [lo, hi] (see above)."""

    def __init__(self, profile, q, D):
        self.profile, self.q, self.D = profile, q, D
        self.lo, self.hi = -X_TRUNC, (X_TRUNC if profile == "add" else D + X_TRUNC)
        self.a = (1 - q) * (2 * mp.ncdf(D / 2) - 1) if profile == "max" else mp.mpf(0)
        self.f = {"remove": f_remove, "add": f_add, "max": f_max}[profile]
        # gamma where the one-step curve is not analytic: ends of the loss supports, the max-profile's kink
        inv = 1 / (1 - q) if q < 1 else mp.inf
        self.f_kinks = {"remove": [1 - q], "add": [inv], "max": [1 - q, mp.mpf(1), inv]}[profile]
        self.u_kinks = [D / 2] if profile == "max" else []
        self.l_kinks = [mp.mpf(0)] if profile == "max" else []
        self.tail = 2 * mp.ncdf(-X_TRUNC)

    def _branch(self, u):
        """(sign, x): M(u) = sign * L_remove(x), density of u is remove's p(x) (sign +1) or phi(x) (-1)."""
        if self.profile == "remove" or (self.profile == "max" and u >= self.D / 2):
            return 1, u
        return -1, (-u if self.profile == "add" else self.D - u)

    def M(self, u):
        s, x = self._branch(u)
        return s * _Lr(x, self.q, self.D)

    def w(self, u):
        s, x = self._branch(u)
        return _p_remove(x, self.q, self.D) if s > 0 else mp.npdf(x)

    def Mprime(self, u):
        return _Lr_prime(self._branch(u)[1], self.q, self.D)

    def M_inv(self, l):
        """u with M(u) = l, or -inf / +inf if l is below / above the range of M."""
        q, D = self.q, self.D
        if self.profile == "remove" or (self.profile == "max" and l >= 0):
            x = _Lr_inv(l, q, D)
            return -mp.inf if x is None else x
        x = _Lr_inv(-l, q, D)
        if x is None:
            return mp.inf
        return -x if self.profile == "add" else D - x

    def rho(self, l):
        """Density of the loss at l inside the window (0 outside): w(u) / M'(u) at u = M^-1(l)."""
        u = self.M_inv(l)
        if not self.lo <= u <= self.hi:
            return mp.mpf(0)
        return self.w(u) / self.Mprime(u)

    def u_breaks(self, a, b, extra=()):
        """Split points of [a, b] in u: the Gaussian bulk (every 3 units), u-kinks, extras."""
        pts = {a, b}
        k = mp.floor(a / 3) * 3
        while k < b:
            pts.add(k)
            k += 3
        pts.update(self.u_kinks)
        pts.update(extra)
        return sorted(p for p in pts if a <= p <= b)

    def u_at_gamma_kinks(self, gamma, factor=1):
        """v with gamma e^(-factor M(v)) at a kink of f."""
        out = []
        for k in self.f_kinks:
            if not (k > 0 and mp.isfinite(k)):  # q = 1: no support end
                continue
            u = self.M_inv((mp.log(gamma) - mp.log(k)) / factor)
            if mp.isfinite(u):
                out.append(u)
        return out


def _quad_pieces(fn, pts):
    total = mp.mpf(0)
    for lo, hi in zip(pts, pts[1:]):
        if hi > lo:
            total += _quad(fn, lo, hi)
    return total


#: inner rule of rho2: Gauss-Legendre with 3 * 2^(GL_DEGREE-1) nodes on pieces of length <= GL_PIECE (the
#: inner integrand is analytic on each piece); its accuracy is checked against GL_DEGREE + 1 in the tests and
#: by the T = 2 cross-check (rho2 path vs closed-form path, 30 digits)
GL_DEGREE = 4
GL_PIECE = mp.mpf(1)
_GL_NODES: dict = {}


def _gl(fn, a, b, degree):
    key = (degree, mp.mp.prec)
    if key not in _GL_NODES:
        from mpmath.calculus.quadrature import GaussLegendre

        _GL_NODES[key] = GaussLegendre(mp.mp).calc_nodes(degree, mp.mp.prec)
    c, r = (a + b) / 2, (b - a) / 2
    return r * mp.fsum(wt * fn(c + r * x) for x, wt in _GL_NODES[key])


def _graded(c):
    """Break points approaching a kink c geometrically from both sides: each one-sided branch formula of the
    max-profile's density has a complex singularity within |log(1-q)| of the kink (e^l - 1 + q = 0), so
    pieces next to the kink must be short for Gauss-Legendre / Chebyshev to converge fast."""
    if not mp.isfinite(c):
        return []
    return [c] + [c + sg * mp.mpf(2) ** -k for k in range(1, 11) for sg in (1, -1)]


def rho2(law, s, degree=None):
    """(rho * rho)(s) = 2 int_(M(u) <= s/2) w(u) rho(s - M(u)) du on the truncated window: u is the SMALLER
    of the two coordinates, so the other one, M^-1(s - M(u)) >= u, stays away from the bottom of the
    support where M^-1 is singular; Gauss-Legendre on short pieces."""
    degree = degree or GL_DEGREE
    hi = min(law.hi, law.M_inv(s / 2))
    lo = max(law.lo, law.M_inv(s - law.M(law.hi)))
    if not hi > lo:
        return mp.mpf(0)
    pts = {lo, hi}
    pts.update(law.u_kinks)
    for k in law.l_kinks:  # rho(s - M(u)) not smooth where s - M(u) is a kink;
        pts.update(_graded(law.M_inv(s - k)))  # graded: a branch's singularity lies just beyond it
    k = hi - GL_PIECE
    while k > lo:
        pts.add(k)
        k -= GL_PIECE
    pts = sorted(p for p in pts if mp.isfinite(p) and lo <= p <= hi)
    fn = lambda u: law.w(u) * law.rho(s - law.M(u))  # noqa: E731
    return 2 * mp.fsum(_gl(fn, a, b, degree) for a, b in zip(pts, pts[1:]) if b > a)


def _H_from_density(law, gamma, kernel):
    """int rho(s) kernel(gamma e^-s) ds over the window, in u (s = M(u))."""
    pts = law.u_breaks(law.lo, law.hi, law.u_at_gamma_kinks(gamma))
    return _quad_pieces(lambda u: law.w(u) * kernel(gamma * mp.exp(-law.M(u))), pts)


#: the v-density G(v) = rho2(2 M(v)) 2 M'(v) of s/2 is analytic on every piece between the breaks below
#: (its only non-smooth point is s = 0 for the max-profile): it is sampled at CHEB_N Chebyshev points per
#: piece of length <= CHEB_PIECE and interpolated (barycentric); ``density_check`` compares the
#: interpolant with direct evaluations. Only then is the outer integral, whose integrand f(gamma e^-s)
#: has the (flat, non-analytic) junctions of the one-step curve, done by adaptive tanh-sinh (mp.quad).
CHEB_N = 20
CHEB_PIECE = mp.mpf("1.5")


class Interpolant:
    def __init__(self, fn, pts):
        self.pieces = []
        n = CHEB_N
        for a, b in zip(pts, pts[1:]):
            c, r = (a + b) / 2, (b - a) / 2
            th = [(2 * k + 1) * mp.pi / (2 * n) for k in range(n)]
            xs = [c + r * mp.cos(t) for t in th]
            ws = [(-1) ** k * mp.sin(t) for k, t in enumerate(th)]
            self.pieces.append((a, b, xs, ws, [fn(x) for x in xs]))

    def __call__(self, x):
        for a, b, xs, ws, ys in self.pieces:
            if a <= x <= b:
                num = den = mp.mpf(0)
                for xk, wk, yk in zip(xs, ws, ys):
                    if x == xk:
                        return yk
                    t = wk / (x - xk)
                    num += t * yk
                    den += t
                return num / den
        return mp.mpf(0)


def density_of_half_sum(law):
    """Interpolant of G(v) = rho2(2 M(v)) 2 M'(v) on [lo, hi] (zero outside: truncation)."""
    key = (law.profile, law.q, law.D, mp.mp.prec)
    if key not in _G_CACHE:
        pts = {law.lo, law.hi}
        for k in law.u_kinks:
            pts.update(_graded(k))
        k = law.lo + CHEB_PIECE
        while k < law.hi:
            pts.add(k)
            k += CHEB_PIECE
        pts = sorted(pts)
        _G_CACHE[key] = Interpolant(lambda v: rho2(law, 2 * law.M(v)) * 2 * law.Mprime(v), pts)
    return _G_CACHE[key]


_G_CACHE: dict = {}


def density_check(law, points=6):
    """max |interpolant - direct| / max G at piece midpoints (the interpolation error estimate)."""
    G = density_of_half_sum(law)
    worst, top = mp.mpf(0), mp.mpf(0)
    for a, b, _xs, _ws, ys in G.pieces[:: max(1, len(G.pieces) // points)]:
        m = (a + b) / 2 + (b - a) / 7
        direct = rho2(law, 2 * law.M(m)) * 2 * law.Mprime(m)
        worst = max(worst, abs(G(m) - direct))
        top = max(top, max(abs(y) for y in ys))
    return worst / top


def _H_from_rho2(law, gamma, kernel):
    """int rho2(s) kernel(gamma e^-s) ds, in v with s = 2 M(v), ds = 2 M'(v) dv."""
    G = density_of_half_sum(law)
    pts = sorted(set([p[0] for p in G.pieces] + [G.pieces[-1][1]] + law.u_at_gamma_kinks(gamma, 2)))
    pts = [p for p in pts if law.lo <= p <= law.hi]
    return _quad_pieces(lambda v: G(v) * kernel(gamma * mp.exp(-2 * law.M(v))), pts)


def fast_curve(profile, q, D, T, eps, via_rho2=False):
    """H_T(e^eps) of one profile's law, T = 1, 2, 3 (value, proven truncation bound: v <= H_T <= v + bound).

    T = 2 ``via_rho2``: int rho2(s) (1 - gamma e^-s)_+ ds + ... (densities only, no closed-form curve): an
    independent check of the rho2 machinery that T = 3 uses."""
    with mp.workdps(DPS):
        q, D, g = mp.mpf(q), mp.mpf(D), mp.exp(mp.mpf(eps))
        law = Law(profile, q, D)
        f, a = law.f, law.a
        if T == 1:
            return +f(g, q, D), mp.mpf(0)
        fk = lambda x: f(x, q, D)  # noqa: E731
        if T == 2 and not via_rho2:
            return a * f(g, q, D) + _H_from_density(law, g, fk), law.tail
        if T == 2:
            hinge = lambda x: max(1 - x, mp.mpf(0))  # noqa: E731
            law.f_kinks = [mp.mpf(1)]
            v = a * a * hinge(g) + 2 * a * _H_from_density(law, g, hinge) + _H_from_rho2(law, g, hinge)
            return v, 2 * law.tail
        if T == 3:
            v = a * a * f(g, q, D) + 2 * a * _H_from_density(law, g, fk) + _H_from_rho2(law, g, fk)
            return v, 2 * law.tail
        raise ValueError(T)


def fast_poisson_delta(q, sigma, T, eps):
    """Worst direction of Poisson add/remove, D = 1/sigma: (value, truncation bound)."""
    D = 1 / mp.mpf(sigma)
    r = [fast_curve(d, q, D, T, eps) for d in ("remove", "add")]
    return max(r, key=lambda vb: vb[0])


def fast_fixed_size_delta(q, sigma, T, eps):
    """Max-profile f* at D = 2/sigma: (value, truncation bound)."""
    return fast_curve("max", q, 2 / mp.mpf(sigma), T, eps)


def gaussian_delta(mu, eps):
    """Closed form: the Gaussian mechanism with sensitivity/noise ratio mu (q = 1, T steps: mu = D sqrt T)."""
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)
