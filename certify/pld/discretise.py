"""One-step discretisations on the loss grid l_j = j h: a pessimistic one that dominates the curve and an
optimistic one that the curve dominates, each proved by a check in balls.

Objects. A finite nonnegative measure on losses {j h} with masses m_j >= 0 and a mass m_inf >= 0 at +inf
has the curve

    g(gamma) = m_inf + sum_j m_j (1 - gamma e^(-j h))_+ ,

piecewise linear in gamma with kinks only at grid points gamma_j = e^(j h), convex, non-increasing,
g(0) = m_inf + sum_j m_j and g = m_inf beyond the last atom.

Why only curves matter (domination composes). For measures P1, Q1, P2, Q2 (not necessarily probability
measures),  H_gamma(P1 x P2 || Q1 x Q2) = E_{y ~ P2}[ H_{gamma e^(-L2(y))}(P1 || Q1) ]  (integrate
(p1 p2 - gamma q1 q2)_+ over x first; where q2 = 0 the argument is gamma e^(-inf) = 0 and H_0 = P1's
mass). So if g1 >= f1 for EVERY gamma in [0, inf) then replacing (P1, Q1) by a measure with curve g1 can
only raise the product's curve, for any P2; applying this step by step, the T-fold product of a measure
with curve g >= f dominates the T-fold product of the pair with curve f; likewise g <= f everywhere
gives a lower bound. This is Zhu, Dong, Wang (2022) Theorem 10 in the form we use; it needs domination
for every gamma >= 0 (not only gamma >= 1), which is why the checks below cover [0, inf). Total mass 1
or a Q-side mass <= 1 is not needed by this argument (it is reported, not relied on). Adaptivity (DP-SGD
steps depend on the past): apply the identity with the LAST step inside, conditionally on the past
outputs (its conditional curve is dominated by g for every past, Bok's Proposition 1 holds step-wise),
then swap the order of integration (Fubini, valid for any nonnegative measures) and replace the earlier
steps one by one; by induction the T-fold product of the discretised measure bounds the adaptive run.

Why a check at the grid points suffices. f is convex; g is linear on every [gamma_j, gamma_(j+1)].
* Upper: if g(gamma_j) >= d_j >= f(gamma_j) at every grid point of the window, then on each interval
  f <= chord of f <= g (a convex function lies below its chords, a linear one above them at the ends).
  Left of the window, g is linear on [0, gamma_lo] with g(0) >= 1 = f(0) and g(gamma_lo) >= f(gamma_lo):
  the same argument. Right of it g = m_inf >= d_hi >= f(gamma_hi) >= f (f non-increasing).
  Construction: "connect the dots" (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022) of the upper
  values d_j (their running minimum, still >= f because f is non-increasing) and the point (0, 1),
  replaced by the LOWER CONVEX HULL of those points: still >= f at every grid point (f is itself a convex
  function below all the points, so below their lower hull), and its slope changes (= masses /
  gamma_j) are >= 0 by construction. The hull is computed in exact integer arithmetic on approximate
  coordinates (a choice) with a margin of 2^-K added to every point, masses are rounded UP to multiples
  of 2^-K (g only grows), and then the inequality g(gamma_j) >= d_j is CHECKED at every grid point in
  balls (that check, not the construction, is the proof).
* Lower: on each interval I_j = [gamma_j, gamma_(j+1)] take the tangent line ell_j of the curve (of its
  larger member) at an exact point t_j inside I_j: ell_j <= f everywhere (convexity). Put
  w_j = min(ell_(j-1)(gamma_j), ell_j(gamma_j)) (lower ball endpoints), and at the left end also
  w_lo <= 1 - gamma_lo (the line 1 - gamma is below every curve here). If g(gamma_j) <= w_j at both ends
  of I_j then g <= ell_j <= f on I_j. The curve is cut to 0 at the first index c where the tangent values
  stop being certainly positive (requiring ell_(c-1)(gamma_c) >= 0, so the last segment is still below
  ell_(c-1)); beyond gamma_c, g = 0 <= f. On [0, gamma_lo]: g(0) = sum m_j <= 1 and g(gamma_lo) <= 1 -
  gamma_lo give g <= 1 - gamma <= f. Construction: lower hull of the points lowered by 2^-K, masses
  rounded DOWN; then g(gamma_j) <= w_j is CHECKED in balls at every grid point.
  Which line ell_j: any global minorant of f will do, and a convex combination (1 - theta) ell + theta ell'
  (theta in [0, 1] exact) of two global minorants is one (f >= ell and f >= ell' pointwise). Plans written
  before issue 24 use the average of the tangents at the interval's ends; new plans (``Layout.lift``) mix
  that line with the tangent at the interval's left end where it would lie below the minorant 1 - gamma at
  gamma_j (:func:`optimistic`: why it matters).
Masses are integers M_j = m_j 2^K (fixed point); nothing here is a float except the window choice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..balls import arb, ball, fmpq, fmpz, outward_rational, workprec
from .curves import CurveProfile

#: construction guard bits above K (approximate hull coordinates carry K + GUARD fractional bits)
GUARD = 40
#: working precision of the one-step checks and read-offs: K + EXTRA_PREC bits; of the curve values:
#: K + CURVE_PREC bits (they need absolute accuracy well below 2^-K only)
EXTRA_PREC = 96
CURVE_PREC = 48
#: lifted layouts: mixing in the left tangent (to keep g >= 1 - gamma at a cell's left end) gives up at most this
#: fraction of the right end's value where gamma >= 1 (:func:`optimistic`)
MIX_KEEP = 0.5


def tiny_bits(K: int) -> int:
    """Below 2^-tiny_bits(K) a curve value is replaced, on the safe side, by 0 or 2^-tiny_bits(K) before it
    becomes an exact rational (a far Gaussian tail such as 1e-21501706 would otherwise need millions of
    digits, or more than FLINT can build). Far below the 2^-(K + GUARD) resolution of the integer masses."""
    return 4 * K + 4 * GUARD + 256


class DiscretisationError(RuntimeError):
    """A check of the discretisation failed (never expected; reported, never ignored)."""


@dataclass
class OneStep:
    """A one-step discretised measure: masses[i] * 2^-K at loss (lo + i) h, plus inf * 2^-K at +inf."""

    profile: str
    pessimistic: bool
    K: int
    lo: int
    masses: list[int]
    inf: int
    checks: dict = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.masses) + self.inf


# ------------------------------------------------------------------------------------------------
# Window (a float choice, recorded as integer indices)
# ------------------------------------------------------------------------------------------------
#: tail mass of the dense core of the one-step grid: at most CORE_ETA, and at most 2^10 times the window's
#: tail eta (so the strided region only holds mass far below delta / T); outside it every STRIDE-th point
CORE_ETA = 1e-10
CORE_FACTOR = 2.0**10
STRIDE = 8


#: graded layout (issue 13 speed): for a T-fold composition read at delta, the one-step losses that matter
#: lie within about z(delta)/sqrt(T) + GRADE_START standard deviations of the loss (the T-fold tail event is
#: reached by a shift of z(delta)/sqrt(T) std per step); beyond that the stride doubles every GRADE_STEP
#: std, GRADE_LEVELS times (2, 4, ..., 2^GRADE_LEVELS), inside the dense core (tail mass ~ CORE_ETA);
#: beyond the core STRIDE as before. A choice (floats place indices only), recorded as ``bands``.
GRADE_START = 2.5
GRADE_STEP = 1.0
GRADE_LEVELS = 4


def grades(steps: int, target: float) -> list[tuple[float, int]]:
    """[(tail mass eta_k, stride 2^k)]: eta_k = exp(-z_k^2 / 2) at z_k = z(delta)/sqrt(T) + GRADE_START + (k-1) GRADE_STEP,
    with z(delta) = sqrt(2 log(1/delta)) (the window's z for eta_k is then z_k + 1)."""
    z0 = math.sqrt(2 * math.log(1 / max(target, 1e-300))) / math.sqrt(max(steps, 1)) + GRADE_START
    return [(math.exp(-((z0 + k * GRADE_STEP) ** 2) / 2), 2 ** (k + 1)) for k in range(GRADE_LEVELS)]


@dataclass(frozen=True)
class Layout:
    """Which grid indices carry points: all of [core_lo, core_hi], every STRIDE-th one in [lo, hi] outside.

    Graded (``bands`` nonempty, a tuple of nested (band_lo, band_hi, band_stride) from the core outwards):
    all of [core_lo, core_hi]; between each band and the next inner one, every band_stride-th index
    counted outwards from the inner one's ends; beyond the last band every ``stride``-th index counted
    outwards likewise, and lo and hi themselves. Without bands: today's layout, indices aligned on lo / hi.

    Any subset of the grid is admissible (kinks of g sit at used points only, and the checks run at
    every used point, so the convexity argument of the module docstring applies to the used partition);
    the layout only trades one-step cost against tightness in the far tails. Recorded exactly."""

    lo: int
    hi: int
    core_lo: int
    core_hi: int
    stride: int
    bands: tuple[tuple[int, int, int], ...] = ()
    #: the optimistic lines are lifted to 1 - gamma at their left ends (:func:`optimistic`); recorded as
    #: ``"tangents": "lifted"`` (absent: the average of the end tangents as it is, plans written before issue 24)
    lift: bool = False

    def indices(self) -> list[int]:
        s = self.stride
        if not self.bands:
            out = [j for j in range(self.lo, self.core_lo) if (j - self.lo) % s == 0]
            out += list(range(max(self.lo, self.core_lo), min(self.hi, self.core_hi) + 1))
            out += [j for j in range(self.core_hi + 1, self.hi + 1) if (self.hi - j) % s == 0]
            return out
        left, right = [], []
        a, b = self.core_lo, self.core_hi
        for blo, bhi, bs in self.bands + ((self.lo, self.hi, s),):
            left += range(a - bs, blo - 1, -bs)
            right += range(b + bs, bhi + 1, bs)
            a = left[-1] if left and left[-1] < a else a
            b = right[-1] if right and right[-1] > b else b
        if self.lo < self.core_lo and (not left or left[-1] != self.lo):
            left.append(self.lo)
        if self.hi > self.core_hi and (not right or right[-1] != self.hi):
            right.append(self.hi)
        return left[::-1] + list(range(self.core_lo, self.core_hi + 1)) + right

    def points(self) -> int:
        """Number of used indices (without building them)."""
        if not self.bands:
            span = self.hi - self.lo + 1
            core = self.core_hi - self.core_lo + 1
            return core + (span - core) // self.stride + 2
        n, a, b = self.core_hi - self.core_lo + 1, self.core_lo, self.core_hi
        for blo, bhi, bs in self.bands + ((self.lo, self.hi, self.stride),):  # as indices(), by arithmetic
            nl, nr = max(0, (a - blo) // bs), max(0, (bhi - b) // bs)
            n += nl + nr
            a, b = a - nl * bs, b + nr * bs
        return n + 2

    def to_json(self) -> dict:
        out = {"lo": self.lo, "hi": self.hi, "core_lo": self.core_lo, "core_hi": self.core_hi, "stride": self.stride}
        if self.bands:
            out["bands"] = [list(b) for b in self.bands]
        if self.lift:
            out["tangents"] = "lifted"
        return out


def _bound(profile, q, delta) -> CurveProfile:
    """A DP-SGD contract profile (member names) with its (q, Delta) as curves; a CurveProfile as it is."""
    if isinstance(profile, CurveProfile):
        return profile
    from .pairs import bind

    return bind(profile, q, delta)


def layout(profile, q: fmpq, delta: fmpq, h: fmpq, eta: float, steps: int | None = None, target: float | None = None, lift: bool = False) -> Layout:
    """:func:`layout_of` for a DP-SGD profile (:class:`certify.pld.pairs.Profile`) of the pair (q, Delta)."""
    return layout_of(_bound(profile, q, delta), h, eta, steps, target, lift)


def layout_of(profile: CurveProfile, h: fmpq, eta: float, steps: int | None = None, target: float | None = None, lift: bool = False) -> Layout:
    """The window (tail mass ~eta), the dense core (tail mass ~max(eta, min(CORE_ETA, eta CORE_FACTOR)))
    and, when ``steps`` and the read-off level ``target`` (delta) are given, the graded bands inside that
    core (:func:`grades`); ``lift``: lifted optimistic lines (:attr:`Layout.lift`). A choice; floats place indices only."""
    lo, hi = window_of(profile, h, eta)
    core_eta = max(eta, min(CORE_ETA, eta * CORE_FACTOR))
    clo, chi = window_of(profile, h, core_eta)
    clo, chi = max(lo, clo), min(hi, chi)
    gr = [(g, st) for g, st in grades(steps, target) if g > core_eta] if steps and target else []
    if not gr:
        return Layout(lo, hi, clo, chi, STRIDE, (), lift)
    wins = [window_of(profile, h, g) for g, _ in gr[1:]] + [(clo, chi)]
    wins = [(max(clo, a), min(chi, b)) for a, b in wins]
    dlo, dhi = window_of(profile, h, gr[0][0])
    dlo, dhi = max(clo, dlo), min(chi, dhi)
    bands = tuple((a, b, st) for (a, b), (_, st) in zip(wins, gr))
    return Layout(lo, hi, dlo, dhi, STRIDE, bands, lift)


def window(profile, q: fmpq, delta: fmpq, h: fmpq, eta: float) -> tuple[int, int]:
    """:func:`window_of` for a DP-SGD profile of the pair (q, Delta)."""
    return window_of(_bound(profile, q, delta), h, eta)


def window_of(profile: CurveProfile, h: fmpq, eta: float) -> tuple[int, int]:
    """Grid indices [lo, hi] covering the losses of each member up to tail mass ~eta (a choice:
    :meth:`certify.pld.curves.Curve.loss_range`), and loss 0.

    Outside the window the construction stays sound (the chord from (0, 1) and the mass at +inf take
    care of it); the window only decides tightness and size."""
    lo, hi = 0.0, 0.0
    for m in profile.members:
        a, b = m.loss_range(eta)
        lo, hi = min(lo, a), max(hi, b)
    # indices in exact arithmetic: a grid h = 1e-400 is no float 0 (the span guard then refuses the layout)
    lo_q, hi_q = fmpq(*lo.as_integer_ratio()) / h, fmpq(*hi.as_integer_ratio()) / h
    return int(lo_q.floor()) - 1, int(hi_q.ceil()) + 1


# ------------------------------------------------------------------------------------------------
# Exact integer lower hull on approximate coordinates (a construction; checked afterwards)
# ------------------------------------------------------------------------------------------------
def _lower_hull(xs: list[int], ys: list[int]) -> list[int]:
    """Indices of the lower convex hull of the points (xs strictly increasing), monotone chain."""
    st: list[int] = []
    for k in range(len(xs)):
        while len(st) >= 2:
            o, a = st[-2], st[-1]
            cross = (xs[a] - xs[o]) * (ys[k] - ys[o]) - (ys[a] - ys[o]) * (xs[k] - xs[o])
            if cross > 0:
                break
            st.pop()
        st.append(k)
    return st


def _hull_masses(xs: list[int], ys: list[int], hull: list[int], scale_shift: int, up: bool) -> dict[int, int]:
    """Masses (units 2^-K) at hull vertices except the first (the virtual point gamma = 0):
    m_v = gamma_v (slope_right - slope_left), slope right of the last vertex = 0; rounded up or down.
    xs, ys are in units 2^-S with S = K + scale_shift."""
    out = {}
    for n in range(1, len(hull)):
        u, v = hull[n - 1], hull[n]
        dxl, dyl = xs[v] - xs[u], ys[v] - ys[u]
        if n + 1 < len(hull):
            w = hull[n + 1]
            dxr, dyr = xs[w] - xs[v], ys[w] - ys[v]
        else:
            dxr, dyr = 1, 0
        num = xs[v] * (dyr * dxl - dyl * dxr)
        den = dxr * dxl * (1 << scale_shift)
        # m_v * 2^K = xs[v]/2^S * (slope_r - slope_l) * 2^K = num / (dxr dxl 2^(S-K))
        val = -((-num) // den) if up else num // den
        out[v] = max(val, 0)
    return out


# ------------------------------------------------------------------------------------------------
# The check in balls: g(gamma_j) at every grid point, by suffix sums
# ------------------------------------------------------------------------------------------------
def curve_at_grid(masses: dict[int, int], inf: int, idx: list[int], gammas: list[arb]) -> list[arb]:
    """Balls of 2^K g(gamma_j) for j in idx (increasing; every atom index is in idx), g the curve of the
    measure {j: masses[j]} + inf:  2^K g(gamma_j) = inf + sum_(i>j) M_i - gamma_j sum_(i>j) M_i e^(-i h)."""
    out = [arb(0)] * len(idx)
    A, B = 0, arb(0)
    for k in range(len(idx) - 1, -1, -1):
        g = gammas[k]
        out[k] = (inf + A) - g * B
        M = masses.get(idx[k], 0)
        if M:
            A += M
            B += M / g
    return out


def _gamma_balls(idx: list[int], h: fmpq) -> list[arb]:
    hb = ball(h)
    return [(hb * j).exp() for j in idx]


def _scaled(x: fmpq, S: int, up: bool) -> int:
    """ceil (``up``) or floor of x 2^S for S >= 0, exactly (Python integers)."""
    n = int(x.p) << S
    d = int(x.q)
    return -((-n) // d) if up else n // d


def _mid_scaled(g: arb, S: int) -> int:
    """floor(mid(g) 2^S), exactly: the midpoint is m 2^e (Python's >> is a floor)."""
    m, e = g.mid().man_exp()
    m, sh = int(m), int(e) + S
    return m << sh if sh >= 0 else m >> -sh


# ------------------------------------------------------------------------------------------------
# One evaluation of the curve per used grid point, shared by both discretisations
# ------------------------------------------------------------------------------------------------
@dataclass
class Samples:
    """At each used grid index j: the ball gamma_j = e^(j h), the exact point t_j = lower endpoint of
    that ball (t_j <= gamma_j), an exact upper value d_j >= f(t_j) >= f(gamma_j) (f non-increasing), and
    for every member the balls (v, s) of its f(t_j), f'(t_j): each member's tangent line at t_j is below
    that member's curve, hence below the max-profile, everywhere. ``lift``: the layout's :attr:`Layout.lift`."""

    profile: CurveProfile
    idx: list[int]
    gammas: list[arb]
    t: list[fmpq]
    d: list[fmpq]
    tangents: list[list[tuple[arb, arb]]]
    lift: bool = False


def sample(profile, q: fmpq, delta: fmpq, h: fmpq, lay: Layout, K: int) -> Samples:
    """:func:`sample_of` for a DP-SGD profile of the pair (q, Delta)."""
    return sample_of(_bound(profile, q, delta), h, lay, K)


def sample_of(profile: CurveProfile, h: fmpq, lay: Layout, K: int) -> Samples:
    """One evaluation of every member curve per used grid point (:class:`Samples`), at K + CURVE_PREC bits."""
    idx = lay.indices()
    with workprec(K + EXTRA_PREC):
        gammas = _gamma_balls(idx, h)
    ts, ds, tans = [], [], []
    tb = tiny_bits(K)
    zero = fmpq(0)
    with workprec(K + CURVE_PREC):
        evals = [m.evaluator() for m in profile.members]  # constants of each curve: computed once per precision
        for g in gammas:
            t = g.lower().fmpq()
            if t < 0:
                t = zero
            up, lines = None, []
            for ev in evals:
                v, sl = ev(t)
                u = outward_rational(v, True, tb)
                up = u if up is None or u > up else up
                lines.append((v, sl))
            ts.append(t)
            ds.append(up)
            tans.append(lines)
    return Samples(profile, idx, gammas, ts, ds, tans, lay.lift)


# ------------------------------------------------------------------------------------------------
# Pessimistic: connect the dots with the lower-convex-hull rule
# ------------------------------------------------------------------------------------------------
def pessimistic(sm: Samples, K: int) -> OneStep:
    """A measure whose curve is >= the profile's curve for every gamma >= 0 (module docstring), checked."""
    S = K + GUARD
    idx, gammas, profile = sm.idx, sm.gammas, sm.profile
    lo, hi = idx[0], idx[-1]
    with workprec(K + EXTRA_PREC):
        d: list[fmpq] = []
        for v in sm.d:
            d.append(v if not d or v < d[-1] else d[-1])  # running minimum: still >= f
        margin = 1 << GUARD  # 2^-K in units 2^-S
        xs = [0] + [_mid_scaled(g, S) for g in gammas]
        ys = [1 << S] + [_scaled(v, S, True) + margin for v in d]
        hull = _lower_hull(xs, ys)
        hm = _hull_masses(xs, ys, hull, GUARD, up=True)
        masses = {idx[k - 1]: M for k, M in hm.items() if M}
        inf = -((-ys[hull[-1]]) >> GUARD)  # ceil(y_last / 2^(S-K))
        # the proof: g(gamma_j) >= d_j at every used grid point, g(0) >= 1
        vals = curve_at_grid(masses, inf, idx, gammas)
        total = sum(masses.values()) + inf
        margin = fmpq(total - (1 << K))  # g(0) - 1, units 2^-K
        unit = fmpz(1) << K
        for j, (gv, dj) in enumerate(zip(vals, d)):
            if not gv.is_finite():
                raise DiscretisationError(f"pessimistic check undecided at grid index {idx[j]}")
            margin = min(margin, gv.lower().fmpq() - dj * unit)
        if margin < 0:
            raise DiscretisationError("pessimistic check failed: the curve is not >= the upper values")
        pos = {j: k for k, j in enumerate(idx)}
        q_side = sum((M / gammas[pos[j]] for j, M in masses.items()), arb(0)) / 2**K
    vec = [0] * (hi - lo + 1)
    for j, M in masses.items():
        vec[j - lo] = M
    checks = {
        "margin": margin / (fmpz(1) << K),
        "grid_points_checked": len(idx),
        "atoms": len(masses),
        "masses_nonnegative": True,
        "total_P_mass_upper": _dec(fmpq(total, 1 << K)),
        "Q_side_mass_upper": _dec(q_side.upper().fmpq()),
    }
    return OneStep(profile.name, True, K, lo, vec, inf, checks)


# ------------------------------------------------------------------------------------------------
# Optimistic: tangent lines, lower hull, masses rounded down
# ------------------------------------------------------------------------------------------------
def optimistic(sm: Samples, K: int) -> OneStep:
    """A measure whose curve is <= the profile's curve for every gamma >= 0 (module docstring), checked.

    On each interval [gamma_k, gamma_(k+1)] between consecutive used points the line is the average of
    the tangent lines at t_k and t_(k+1): an average of two global minorants of a convex function is a
    global minorant (and its error at the ends is about half that of either tangent alone).

    Lifted lines (``sm.lift``, new plans; a choice: soundness is the convex-combination argument of the module
    docstring). A node value w_k below 1 - gamma_k by d costs far more than d at one node: g is convex with
    g(0) <= 1, so every node left of k is pulled below 1 - gamma by about d gamma_j / gamma_k, which moves the
    measure's whole low end (its mean loss drops by about d, against h d for an isolated node deficit), and
    composition adds that T times. It happens where the loss law piles up within a cell above its floor (the
    remove pair: L > log(1 - q), and 30% of the P-mass within 1e-4 of it at q = 1e-3, sigma = 0.6): there the
    tangent from the cell's right end, extended to its left end, drops below 1 - gamma. Then the line is
    (1 - theta) line + theta ell_left with the least theta (midpoint rounding of a float, a choice) that lifts
    its left value to 1 - gamma_k (ell_left, the tangent at t_k, is >= 1 - gamma there up to rounding), except
    that at a right end gamma_(k+1) >= 1 (where 1 - gamma <= 0 and g = 0 at a node would cut every larger loss)
    theta keeps at least 1 - MIX_KEEP of the right value (:func:`_lift`). Measured at q = 1e-3, sigma = 0.6,
    h = 1e-4 (true one-step mean loss 7.11e-6): the optimistic measure's mean is 6.7e-6 low without the lift;
    at T = 5000, delta = 1e-8 eps_up / eps_low - 1 went from 8.2e-3 to 1.9e-5 (2.2e-2 to 9.9e-5 at h = 2e-4).
    (Tangents at the cells' midpoints with the same lift gave 1.4e-5 and 8.5e-5 and halved the width of the
    benchmark query at T = 1e3 and 1e4, for one more curve evaluation per cell: not taken.)"""
    S = K + GUARD
    idx, gammas, profile = sm.idx, sm.gammas, sm.profile
    lo = idx[0]
    with workprec(K + EXTRA_PREC):
        n = len(idx)
        a = [None] * n  # lower bound of ell_(k-1)(gamma_k)
        b = [None] * n  # lower bound of ell_k(gamma_k)
        a[0] = (1 - gammas[0]).lower().fmpq()
        tb = tiny_bits(K)
        tans, ts = sm.tangents, sm.t
        single = len(profile.members) == 1
        lift = sm.lift
        prev = None  # (tangent, s * (gamma_k - t_k)) of the previous interval's right end: reused, same ball
        for k in range(n - 1):
            t0, t1 = ts[k], ts[k + 1]
            g0, g1 = gammas[k], gammas[k + 1]
            if single:
                tan0, tan1 = tans[k][0], tans[k + 1][0]
                (v0, s0), (v1, s1) = tan0, tan1
                far0, far1 = s0 * (g1 - t0), s1 * (g0 - t1)
            else:
                # any member's tangent is a valid minorant; pick (on midpoints: a choice) the one that is
                # larger at the far end of the interval (matters only at a kink of a max-profile); the
                # product s (gamma_far - t) of the chosen one is reused below (the same ball)
                far0, tan0 = max(((vs[1] * (g1 - t0), vs) for vs in tans[k]), key=lambda pv: (pv[1][0] + pv[0]).mid())
                far1, tan1 = max(((vs[1] * (g0 - t1), vs) for vs in tans[k + 1]), key=lambda pv: (pv[1][0] + pv[0]).mid())
                (v0, s0), (v1, s1) = tan0, tan1
            own0 = prev[1] if prev is not None and prev[0] is tan0 else s0 * (g0 - t0)
            own1 = s1 * (g1 - t1)
            left, right = (v0 + own0 + v1 + far1) / 2, (v0 + far0 + v1 + own1) / 2
            if lift:
                left, right = _lift(left, right, v0 + own0, v0 + far0, g0, g1)
            b[k] = outward_rational(left, False, tb)
            a[k + 1] = outward_rational(right, False, tb)
            prev = (tan1, own1)
        b[n - 1] = a[n - 1]
        w = [min(x, y) for x, y in zip(a, b)]
        c = next((k for k in range(1, n) if not w[k] > 0), n - 1)
        if a[c] < 0:
            c -= 1
        if c < 1:
            raise DiscretisationError("optimistic discretisation: no positive tangent values in the window (grid too coarse)")
        margin = 1 << GUARD
        xs = [0] + [_mid_scaled(g, S) for g in gammas[: c + 1]]
        ys = [1 << S] + [max(0, _scaled(x, S, False) - margin) for x in w[:c]] + [0]
        hull = _lower_hull(xs, ys)
        hm = _hull_masses(xs, ys, hull, GUARD, up=False)
        masses = {idx[k - 1]: M for k, M in hm.items() if M}
        vals = curve_at_grid(masses, 0, idx[: c + 1], gammas[: c + 1])
        margin = fmpq((1 << K) - sum(masses.values()))  # 1 - g(0), units 2^-K
        unit = fmpz(1) << K
        for k in range(c):
            if not vals[k].is_finite():
                raise DiscretisationError(f"optimistic check undecided at grid index {idx[k]}")
            margin = min(margin, w[k] * unit - vals[k].upper().fmpq())
        if margin < 0:
            raise DiscretisationError("optimistic check failed: the curve is not <= the tangent values")
    vec = [0] * (idx[c] - lo + 1)
    for j, M in masses.items():
        vec[j - lo] = M
    checks = {
        "margin": margin / (fmpz(1) << K),
        "grid_points_checked": c + 1,
        "atoms": len(masses),
        "masses_nonnegative": True,
        "cut_index": idx[c],
        "total_P_mass_lower": _dec(fmpq(sum(masses.values()), 1 << K)),
    }
    return OneStep(profile.name, False, K, lo, vec, 0, checks)


def _lift(left: arb, right: arb, l0: arb, l1: arb, g0: arb, g1: arb) -> tuple[arb, arb]:
    """The values at gamma_k, gamma_(k+1) of (1 - theta) line + theta ell_left (values ``left``, ``right`` and ``l0``,
    ``l1``; ell_left the tangent at t_k): the least theta that lifts the left value to 1 - gamma_k, at a right end
    gamma_(k+1) >= 1 keeping at least 1 - MIX_KEEP of the right value (:func:`optimistic`); a convex combination of
    two global minorants is one, whatever theta."""
    floor = 1 - g0
    if not (left - floor).mid() < 0:
        return left, right
    theta = _mix_weight((floor - left) / (l0 - left))
    if g1.mid() >= 1 and (right - l1).mid() > 0 and right.mid() > 0:
        theta = min(theta, _mix_weight(MIX_KEEP * right / (right - l1), up=False))
    return (1 - theta) * left + theta * l0, (1 - theta) * right + theta * l1


def _mix_weight(x: arb, up: bool = True) -> fmpq:
    """An exact weight in [0, 1] at or just above (``up``) or below the midpoint of x (a choice: any weight mixes two
    minorants into one)."""
    if not x.is_finite():
        return fmpq(1) if up else fmpq(0)
    m = x.mid()
    if m >= 1 or m <= 0:  # outside (0, 1): clamped before any float (a huge midpoint is no float)
        return fmpq(1) if m >= 1 else fmpq(0)
    r = float(m) * 2**30
    return fmpq(int(math.ceil(r) if up else math.floor(r)), 2**30)


def _dec(x: fmpq) -> str:
    from ..balls import upper_decimal

    return upper_decimal(ball(x), 12)
