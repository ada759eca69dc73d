"""Dominating pairs of dp_accounting's mechanisms for the certified PLD accountant, as hockey-stick curves.

:func:`pair_of` ``(mechanism, relation) -> (remove, add)``: two :class:`certify.pld.curves.Curve` (the same object
for a symmetric pair), or an InputError naming the class and why. Gamma = e^eps throughout; each curve is
f(gamma) = H_gamma(P || Q), its theorem cited below, each identity an obligation of :mod:`certify.events.proofs`
(``E-pld-*``).

* GaussianDpEvent(z): P = N(Delta, 1), Q = N(0, 1) with Delta = 1/z (add/remove) or 2/z (replace-one: dp_accounting's
  convention, the replaced record moves the mean from -1 to +1): Balle, Wang (2018), Thm 8 (the analytic Gaussian):
  delta(eps) = Phi(-eps/Delta + Delta/2) - e^eps Phi(-eps/Delta - Delta/2). The curve is
  :class:`certify.pld.pairs.MixtureCurve` at q = 1 (its "remove" formula with q = 1 IS this closed form: obligation
  ``E-pld-gaussian``); symmetric. In a ledger (:func:`entries_of`) all Gaussian entries are folded into one Gaussian
  pair of shift M, M^2 = sum_i c_i Delta_i^2 exact (:func:`certify.pld.ledger.fold_gaussians`, obligation
  ``E-pld-gaussian-fold``; the curve :class:`certify.pld.pairs.GaussianCurve`, the same formula).
* LaplaceDpEvent(b), add/remove: P = Lap(0, b), Q = Lap(1, b), eps0 = 1/b; the loss is eps0 on x <= 0, -eps0 on
  x >= 1 and linear between, and (Koufogiannis, Han, Pappas 2015; dp_accounting's LaplacePrivacyLoss)
  f(gamma) = max(1 - gamma, 1 - sqrt(gamma) e^(-eps0/2), 0) (obligation ``E-pld-laplace``); symmetric.
* RandomizedResponseDpEvent(p, k), replace-one: P = (a, b, b, ...), Q = (b, a, b, ...), a = 1 - p + p/k, b = p/k
  (the worst pair: two inputs in different buckets); finite support, f = sum_y (P(y) - gamma Q(y))_+ exactly.
* EpsilonDeltaDpEvent(eps, delta), any relation: the pair of Kairouz, Oh, Viswanath (2015), Thm 2.1 (every
  (eps, delta)-DP mechanism's pair is a post-processing of it, hence dominated): four outputs,
  P = (delta, (1-delta) e^eps/(1+e^eps), (1-delta)/(1+e^eps), 0), Q the reverse; symmetric.
* DiscreteLaplaceDpEvent(t, D), add/remove: P = DLap(t), Q = DLap(t) + D (the shift by the sensitivity, as
  dp_accounting's DiscreteLaplacePrivacyLoss), D + 1 loss values t D, t(D - 2x) (0 < x < D), -t D with the
  masses of the geometric series (obligation ``E-pld-discrete-laplace``); symmetric.
* PoissonSampledDpEvent(q, GaussianDpEvent(z)), add/remove: the mixture pairs of :mod:`certify.pld.pairs`
  (remove: (1-q) N(0,1) + q N(Delta,1) vs N(0,1); add: the reverse; Delta = 1/z), both directions composed.
* DiscreteGaussianDpEvent(s, 1), add/remove: the exact pair N_Z(0, s^2) vs N_Z(1, s^2) by lattice sums with an
  explicit tail bound (:class:`DiscreteGaussianCurve`); sensitivity >= 2 refused; symmetric.
* MixtureOfGaussiansDpEvent(sigma, c_i, p_i), add/remove: M = sum_i p_i N(c_i, sigma^2) vs N(0, sigma^2) and the
  reverse (:class:`GaussianMixtureCurve`; one positive shift: the Poisson-subsampled Gaussian's MixtureCurve).
* TruncatedSubsampledGaussianDpEvent(n, q, B, z), add/remove only: certify's labelled-mixture dominating pair
  (1 - w) PSG(q, z) (+) w PSG(q, z/2), w = P(Bin(n, q) >= B) (:func:`tsg_pair`, :class:`certify.pld.curves.WeightedCurve`,
  the weight enclosed by :class:`BinomialTail`; the theorem and its proof:
  :mod:`.mechanisms.truncated_subsampled_gaussian`): an upper bound of the mechanism's curve.
Refused (PLD): the rest, naming why (:mod:`.mechanisms.unsupported`, :data:`NO_PLD`).
REPLACE_SPECIAL: Gaussian, Laplace, DiscreteLaplace, PoissonSampled(Gaussian) and MixtureOfGaussians take their add/remove pairs (the
special record contributes nothing, so the neighbouring outputs ARE an add/remove pair: :data:`SPECIAL_AS_ADD_REMOVE`);
RandomizedResponse and EpsilonDelta are refused under it, naming the class and why.
Discretisation: the pairs with kinks (finite outputs, Laplace) give their privacy-loss law (``loss_law``) and are
discretised by rounding losses to the grid (:mod:`certify.pld.direct`); the Gaussian ones by tangents and
connect-the-dots (:mod:`certify.pld.discretise`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..balls import InputError, arb, ball, exact_str, float_of, fmpq, log1m_float, log_float
from ..pld.curves import AtomsCurve, Curve, WeightedCurve, sign_of
from ..pld.pairs import MixtureCurve
from .mechanisms.base import ADD_REMOVE, REPLACE_ONE, REPLACE_SPECIAL

#: the relations the PLD accountant certifies, per event class (REPLACE_SPECIAL: :data:`SPECIAL_AS_ADD_REMOVE`)
PLD_RELATIONS = {
    "GaussianDpEvent": (ADD_REMOVE, REPLACE_ONE, REPLACE_SPECIAL),
    "LaplaceDpEvent": (ADD_REMOVE, REPLACE_SPECIAL),
    "DiscreteLaplaceDpEvent": (ADD_REMOVE, REPLACE_SPECIAL),
    "DiscreteGaussianDpEvent": (ADD_REMOVE, REPLACE_SPECIAL),
    "RandomizedResponseDpEvent": (REPLACE_ONE,),
    "EpsilonDeltaDpEvent": (ADD_REMOVE, REPLACE_ONE),
    "PoissonSampledDpEvent": (ADD_REMOVE, REPLACE_SPECIAL),
    "PoissonSampledDpEvent/LaplaceDpEvent": (ADD_REMOVE, REPLACE_SPECIAL),
    "MixtureOfGaussiansDpEvent": (ADD_REMOVE, REPLACE_SPECIAL),
    "TruncatedSubsampledGaussianDpEvent": (ADD_REMOVE,),
}

#: REPLACE_SPECIAL (a record x replaced by a special record that contributes nothing to the output): for these classes
#: the neighbouring outputs M(D + x) and M(D + special) = M(D) are exactly an add/remove pair, so the add/remove pairs
#: (both directions) dominate; dp_accounting's PLDAccountant accepts REPLACE_SPECIAL for them too (pld_privacy_accountant.py:
#: Gaussian passes the relation through, Laplace / DiscreteLaplace / PoissonSampled accept ADD_OR_REMOVE_ONE or
#: REPLACE_SPECIAL). RandomizedResponseDpEvent is refused: dp_accounting's REPLACE_SPECIAL pair for it is a different
#: one (the special record's own output law), which certify does not certify; EpsilonDeltaDpEvent stays under
#: ADD_OR_REMOVE_ONE and REPLACE_ONE (as before).
SPECIAL_AS_ADD_REMOVE = frozenset(
    {
        "GaussianDpEvent",
        "LaplaceDpEvent",
        "DiscreteLaplaceDpEvent",
        "DiscreteGaussianDpEvent",
        "PoissonSampledDpEvent",
        "PoissonSampledDpEvent/LaplaceDpEvent",
        "MixtureOfGaussiansDpEvent",
    }
)

#: the largest lattice half-width X of the discrete Gaussian's pair (atoms x in [-X, X + D]); beyond it refused
MAX_LATTICE = 200_000

#: why an event class certified by the Rényi accountant has no certified PLD here
NO_PLD = {
    "ZCDpEvent": "has no PLD (a zCDP budget is not a pair of distributions; dp_accounting's PLDAccountant refuses it too); use --accountant rdp",
    "ExponentialMechanismDpEvent": "has no PLD in dp_accounting's PLDAccountant nor here; use --accountant rdp",
    "PermuteAndFlipDpEvent": "has no PLD in dp_accounting's PLDAccountant nor here; use --accountant rdp",
    "SingleEpochTreeAggregationDpEvent": "has no PLD in dp_accounting's PLDAccountant nor here; use --accountant rdp",
}


@dataclass(frozen=True)
class LaplaceCurve(Curve):
    """f(gamma) = max(1 - gamma, 1 - sqrt(gamma) e^(-eps0/2), 0) for Lap(0, b) vs Lap(1, b), eps0 = 1/b (module
    docstring). Value: a ball of the max; slope: that of the piece decided largest (-1, -e^(-eps0/2)/(2 sqrt gamma),
    0), or the union of the pieces not decided smaller (each piece's tangent is a minorant of the max)."""

    eps0: fmpq

    def evaluator(self):
        c = (-ball(self.eps0) / 2).exp()

        eps0 = self.eps0

        def f(gamma: fmpq):
            if gamma == 0:
                return arb(1), arb(-1)
            g = arb(gamma)
            r = g.sqrt()
            pieces = [(1 - g, arb(-1)), (1 - r * c, -c / (2 * r)), (arb(0), arb(0))]
            # the region: gamma < e^-eps0 (first piece), e^-eps0 < gamma < e^eps0 (middle), gamma > e^eps0 (zero);
            # decided at more bits near a kink (sign_of), the max of all three otherwise
            left = sign_of(lambda: (-ball(eps0)).exp() - arb(gamma))
            right = sign_of(lambda: arb(gamma) - ball(eps0).exp())
            if left > 0:
                return pieces[0][0], pieces[0][1]
            if right > 0:
                return arb(0), arb(0)
            if left < 0 and right < 0:
                return pieces[1][0], pieces[1][1]
            return _max_piece(pieces)

        return f

    def loss_range(self, eta: float) -> tuple[float, float]:
        e = float_of(self.eps0)
        return -e, e

    def loss_law(self, K: int = 64):
        """P's loss law (for :mod:`certify.pld.direct`): P = Lap(0, b) has density e^(-|x|/b) / (2b), b = 1/eps0, and
        L(x) = (|x - 1| - |x|) eps0: an atom eps0 of P-mass P(x <= 0) = 1/2 (Q-mass e^(-eps0)/2), an atom -eps0 of
        P-mass P(x >= 1) = e^(-eps0)/2 (Q-mass 1/2), and on 0 < x < 1 the loss (1 - 2x) eps0, so
        P(l1 < L <= l2, 0 < x < 1) = F(l2) - F(l1) with F(l) = e^((l - eps0)/2) / 2 on [-eps0, eps0]
        (L <= l iff x >= (1 - l/eps0)/2, and P(x0 <= x < 1) = (e^(-x0 eps0) - e^(-eps0))/2). Total mass:
        1/2 + e^(-eps0)/2 + (1 - e^(-eps0))/2 = 1; its curve E_P[(1 - gamma e^(-L))_+] is the profile of
        ``E-pld-laplace`` (checked against it at T = 1 in tests/test_events_pld.py, the T-fold in test_events_pld_rounding.py)."""
        from ..pld.direct import LossLaw

        eps0 = self.eps0

        def atoms():
            half = arb(1) / 2
            r = (-ball(eps0)).exp() / 2
            return [(half, r, eps0), (r, half, -eps0)]

        return LossLaw(atoms, None, (-eps0, eps0, lambda l: ((l - ball(eps0)) / 2).exp() / 2))


def _max_piece(pieces):
    """(ball of max v_i, a ball containing the slope of a maximal piece) for pieces (v_i, s_i)."""
    v = pieces[0][0]
    for p, _ in pieces[1:]:
        v = v.max(p)
    cands = [(pv, ps) for pv, ps in pieces if not any(o > pv for o, _ in pieces)]
    s = cands[0][1]
    for _, ps in cands[1:]:
        s = s.union(ps)
    return v, s


def _rr_curve(p: fmpq, k: fmpq) -> AtomsCurve:
    a, b = 1 - p + p / k, p / k
    atoms = [(a, b), (b, a)] + ([((k - 2) * b, (k - 2) * b)] if k > 2 else [])
    la = math.log(float_of(a) / float_of(b))
    z = fmpq(0) if a == b else None  # log(a / b) of rationals a != b is irrational: decided in balls
    ex = (z, z) + ((fmpq(0),) if k > 2 else ())
    return AtomsCurve(("rr", a, b, k), lambda: [(ball(x), ball(y)) for x, y in atoms], None, (la, -la, 0.0), ex)


def _kov_curve(eps: fmpq, delta: fmpq) -> AtomsCurve:
    def atoms():
        e = ball(eps).exp()
        A = (1 - ball(delta)) * e / (1 + e)
        B = (1 - ball(delta)) / (1 + e)
        return [(A, B), (B, A)]

    e = float_of(eps)
    return AtomsCurve(("kov", eps, delta), atoms, (lambda: ball(delta)) if delta > 0 else None, (e, -e), (eps, -eps))


def _dlap_curve(t: fmpq, D: int) -> AtomsCurve:
    """P = DLap(t), Q = P shifted by D: P(x <= 0) = 1/(1+r), Q(x <= 0) = r^D/(1+r), the mirror at x >= D, and
    P(x) = c r^x, Q(x) = c r^(D-x) for 0 < x < D; r = e^-t, c = (1-r)/(1+r)."""

    def atoms():
        r = (-ball(t)).exp()
        rD = (-ball(t) * D).exp()
        out = [(1 / (1 + r), rD / (1 + r)), (rD / (1 + r), 1 / (1 + r))]
        c = -(-ball(t)).expm1() / (1 + r)
        for x in range(1, D):
            out.append((c * (-ball(t) * x).exp(), c * (-ball(t) * (D - x)).exp()))
        return out

    tf = float_of(t)
    ex = (t * D, -t * D) + tuple(t * (D - 2 * x) for x in range(1, D))  # the order of atoms()
    return AtomsCurve(("dlap", t, D), atoms, None, tuple(tf * (D - 2 * x) for x in range(D + 1)), ex)


@dataclass(frozen=True)
class DiscreteGaussianCurve(Curve):
    """The exact pair of the discrete Gaussian (Canonne, Kamath, Steinke 2020, Def. 1): P = N_Z(0, s^2), Q = N_Z(D, s^2)
    (the shift by the sensitivity, as dp_accounting's DiscreteGaussianPrivacyLoss; :func:`pair_of` takes D = 1 only: an
    integer vector of norm 1 is a unit vector, so in any dimension the other coordinates agree and this IS the pair),
    P(x) = w(x) / Z, w(x) = e^(-x^2 / (2 s^2)), Z = sum_(x in Z) w(x). The loss at x is log(w(x) / w(x - D)) =
    (D^2 - 2 D x) / (2 s^2), an exact rational, decreasing in x; symmetric (x -> D - x swaps P and Q).

    Lattice sums with an explicit tail bound: for x >= X + 1, w(x + 1) / w(x) = e^(-(2x + 1)/(2 s^2)) <= r_X =
    e^(-(2X + 3)/(2 s^2)), so sum_(x > X) w(x) <= w(X + 1) / (1 - r_X) =: tail(X). Z lies in [S, S + 2 tail(X)],
    S = sum_(|x| <= X) w(x). The loss law (:mod:`certify.pld.direct`): the atoms x in [-X, X + D] at their exact
    losses with masses w(x) / Z; the P-mass of x > X + D (losses below that of X + D + 1) as one atom at the loss of
    X + D + 1 with the mass ball [0, tail(X + D) / S] (rounding a loss up is allowed for the pessimistic measure, and
    the optimistic one takes the lower endpoint 0); the P-mass of x < -X (the largest losses) as the mass at +inf,
    ball [0, tail(X) / S] (likewise). X: the tails below 2^-(K + 40) (a choice, from floats)."""

    sigma: fmpq
    D: int

    def _X(self, K: int) -> int:
        s = float_of(self.sigma)
        return int(math.ceil(s * math.sqrt(2 * (K + 40) * math.log(2)))) + 2

    def loss_law(self, K: int = 64):
        from ..pld.direct import LossLaw

        s2, D = self.sigma * self.sigma, self.D
        X = self._X(K)
        memo = {}

        def w(x):
            return (-ball(fmpq(x * x) / (2 * s2))).exp()

        def tail(n):  # >= sum_(x > n) w(x)
            return w(n + 1) / (1 - (-ball(fmpq(2 * n + 3) / (2 * s2))).exp())

        def sums():  # memoised per precision (both sides and the mass at +inf share them)
            from ..balls import ctx

            if ctx.prec not in memo:
                S = sum((w(x) for x in range(-X, X + 1)), arb(0))
                memo[ctx.prec] = (S, S.union(S + 2 * tail(X)))
            return memo[ctx.prec]

        def atoms():
            S, Z = sums()
            out = [(w(x) / Z, w(x - D) / Z, fmpq(D * D - 2 * D * x) / (2 * s2)) for x in range(-X, X + D + 1)]
            x = X + D + 1
            out.append((arb(0).union(tail(X + D) / S), w(x - D) / Z, fmpq(D * D - 2 * D * x) / (2 * s2)))
            return out

        def inf():
            S, _ = sums()
            return arb(0).union(tail(X) / S)

        return LossLaw(atoms, inf)

    def evaluator(self):  # pragma: no cover - composed through its loss law only
        raise NotImplementedError("the discrete Gaussian is discretised from its loss law")

    def loss_range(self, eta: float) -> tuple[float, float]:
        s2 = float_of(self.sigma) ** 2
        X = int(math.ceil(float_of(self.sigma) * math.sqrt(2 * math.log(1 / max(eta, 1e-300))))) + 1
        return (self.D**2 - 2 * self.D * (X + self.D)) / (2 * s2), (self.D**2 + 2 * self.D * X) / (2 * s2)


@dataclass(frozen=True)
class PoissonLaplaceCurve(Curve):
    """The Poisson-subsampled Laplace pairs, add/remove (as the Gaussian mixtures; dp_accounting's LaplacePrivacyLoss
    with sampling_prob): with L0 = Lap(0, b), L1 = Lap(1, b), eps0 = 1/b and lambda(x) = log(L1(x) / L0(x)) = -eps0
    (x <= 0), (2x - 1) eps0 (0 < x < 1), eps0 (x >= 1):

    * remove: P = (1-q) L0 + q L1, Q = L0, loss log(1 - q + q e^lambda) (increasing in x);
    * add: P = L0, Q = (1-q) L0 + q L1, loss -log(1 - q + q e^lambda) (decreasing in x).

    Loss law (:mod:`certify.pld.direct`): two atoms (x <= 0, x >= 1) with their P- and Q-masses (L0(x <= 0) = 1/2,
    L0(x >= 1) = e^(-eps0)/2, L1 the mirror), and the part 0 < x < 1 as a grid CDF: loss <= l iff lambda <= mu(l)
    (remove, mu(l) = log((e^l - 1 + q)/q)) or lambda >= mu(-l) (add), i.e. x <= x(l) or x >= x(-l) with
    x = (mu/eps0 + 1)/2 clamped to [0, 1] (mu = -inf when e^(+-l) - 1 + q <= 0); L0((0, x]) = (1 - e^(-x eps0))/2,
    L1((0, x]) = (e^(-(1-x) eps0) - e^(-eps0))/2, L0([x, 1)) = (e^(-x eps0) - e^(-eps0))/2. The grid range [jlo, jhi]
    is widened until the clamps at both ends are decided, so G(jlo) = 0 and G(jhi) = the part's total exactly."""

    q: fmpq
    eps0: fmpq
    direction: str

    def _x(self, j: int, h: fmpq):
        """(clamp flag, x ball): flag -1 (x = 0 decided), +1 (x = 1 decided), 0 (x the clamped ball) at l = +-j h."""
        q, e0 = ball(self.q), ball(self.eps0)
        sgn = 1 if self.direction == "remove" else -1
        t = (ball(h) * (sgn * j)).exp() - 1 + q
        if not t > 0:
            # mu = -inf (t <= 0) or below -eps0 decided: x = 0; else only x in [0, 1] is known (a valid enclosure)
            return (-1, None) if t < (q * (-e0).exp()) else (0, arb(0).union(arb(1)))
        mu = (t / q).log()
        if mu <= -e0:
            return -1, None
        if mu >= e0:
            return 1, None
        return 0, ((mu / e0 + 1) / 2).max(arb(0)).min(arb(1))

    def loss_law(self, K: int = 64):

        q, eps0, rem = self.q, self.eps0, self.direction == "remove"

        def atoms():
            Q, r = ball(q), (-ball(eps0)).exp()
            hi_p, hi_q = (1 - Q) * r / 2 + Q / 2, r / 2  # x >= 1: (1-q) L0 + q L1 vs L0
            lo_p, lo_q = (1 - Q) / 2 + Q * r / 2, arb(1) / 2  # x <= 0
            pairs = [(hi_p, hi_q), (lo_p, lo_q)] if rem else [(hi_q, hi_p), (lo_q, lo_p)]
            ex = [eps0, -eps0] if q == 1 else [None, None]
            if not rem:
                ex = [-x if x is not None else None for x in ex]
            return [(p, qq, x) for (p, qq), x in zip(pairs, ex)]

        def G_of(h):
            def G(j):
                flag, x = self._x(j, h)
                e0 = ball(eps0)
                total = -(-e0).expm1() / 2  # L0((0, 1)) = L1((0, 1)) = (1 - e^-eps0)/2
                if rem:  # loss <= j h iff x' <= x
                    if flag < 0:
                        return arb(0)
                    if flag > 0:
                        return total
                    Q = ball(q)
                    return (1 - Q) * (-(-x * e0).expm1()) / 2 + Q * (((x - 1) * e0).exp() - (-e0).exp()) / 2
                # add: loss <= j h iff lambda >= mu(-j h): x' >= x
                if flag < 0:
                    return total
                if flag > 0:
                    return arb(0)
                return ((-x * e0).exp() - (-e0).exp()) / 2

            return G

        return _PoissonLaplaceLaw(atoms, self, G_of)

    def evaluator(self):  # pragma: no cover - composed through its loss law only
        raise NotImplementedError("the Poisson-sampled Laplace pair is discretised from its loss law")

    def loss_range(self, eta: float) -> tuple[float, float]:
        q, e = float_of(self.q), float_of(self.eps0)
        a = math.log1p(q * math.expm1(-e))
        b = math.log1p(q * math.expm1(e)) if e < 1 else e + math.log(q + (1 - q) * math.exp(-e))  # log(1 - q + q e^e), no overflow
        return (a, b) if self.direction == "remove" else (-b, -a)


class _PoissonLaplaceLaw:
    """A loss law whose grid CDF depends on h (built by :meth:`at`)."""

    def __init__(self, atoms, curve, G_of):
        self.atoms, self.curve, self.G_of = atoms, curve, G_of

    def at(self, h: fmpq):
        from ..pld.direct import LossLaw

        c = self.curve
        lo, hi = c.loss_range(0.0)
        jlo, jhi = int(math.floor(lo / float_of(h))) - 2, int(math.ceil(hi / float_of(h))) + 2
        lo_end = -1 if c.direction == "remove" else 1  # the clamp decided at the low end of the losses
        for _ in range(64):
            if c._x(jlo, h)[0] == lo_end:
                break
            jlo -= 1 + (jhi - jlo)
        for _ in range(64):
            if c._x(jhi, h)[0] == -lo_end:
                break
            jhi += 1 + (jhi - jlo)
        if c._x(jlo, h)[0] != lo_end or c._x(jhi, h)[0] != -lo_end:
            from ..pld.discretise import DiscretisationError

            raise DiscretisationError("Poisson-sampled Laplace: the ends of its loss range are undecided")
        return LossLaw(self.atoms, None, None, (jlo, jhi, self.G_of(h)))


def _lse(terms) -> float:
    """log sum exp of floats (a choice only: float guesses of roots and windows)."""
    m = max(terms)
    if m == -math.inf:
        return m
    return m + math.log(sum(math.exp(t - m) for t in terms))


@dataclass(frozen=True)
class GaussianMixtureCurve(Curve):
    """One direction of the mixture-of-Gaussians pair (MixtureOfGaussiansDpEvent; dp_accounting's
    MixtureGaussianPrivacyLoss; Choquette-Choo, Ganesh, Steinke, Thakurta 2023, arXiv:2310.15526, Sec. 4), standardised
    (x / sigma): M = p0 N(0, 1) + sum_i p_i N(d_i, 1), d_i = c_i / sigma > 0 distinct, p_i > 0, p0 + sum p_i = 1.

    * ``remove``: P = M, Q = N(0, 1); ``add``: P = N(0, 1), Q = M (dp_accounting's REMOVE and ADD, up to x -> -x).

    The likelihood ratio M / N(0, 1) at x is p0 + S(x), S(x) = sum_i p_i e^(d_i x - d_i^2/2) (phi(x - d) / phi(x) =
    e^(d x - d^2/2): obligation ``E-pld-mog-ratio``), strictly increasing from 0 to +inf (every d_i > 0), so the set
    where P - gamma Q > 0 is a half-line bounded by the unique root x* of S(x*) = t (Neyman-Pearson), and

    * remove: gamma <= p0: f = 1 - gamma, slope -1; else t = gamma - p0,
      f = sum_i p_i Phibar(x* - d_i) - (gamma - p0) Phibar(x*), slope -Phibar(x*);
    * add: gamma p0 >= 1: f = 0, slope 0; gamma = 0: f = 1, slope -1; else t = (1 - gamma p0) / gamma,
      f = (1 - gamma p0) Phi(x*) - gamma sum_i p_i Phi(x* - d_i), slope -(p0 Phi(x*) + sum_i p_i Phi(x* - d_i))

    (P(A) - gamma Q(A) on the half-line A, and -Q(A): obligation ``E-pld-mog-curve``; at one component this is
    :class:`certify.pld.pairs.MixtureCurve`'s formula with q = p_1, Delta = d_1). The root: a float Newton guess
    (log S is convex and increasing, so Newton converges from any start), Newton steps on the ball midpoints, then a
    bracket [a, b] of exact dyadics with S(a) < t < S(b) DECIDED in balls (the proof that x* lies in it: S is
    continuous and increasing); f and the slope are evaluated on the ball [a, b], which contains x*, so the balls
    contain f(gamma) and the subgradient -Q(A). Rounding: outward (Arb); erfc is rigorous."""

    direction: str
    p0: fmpq
    comps: tuple  # ((d, p), ...): d > 0 increasing, p > 0

    def _consts(self):
        return [(ball(p), ball(d), ball(d * d / 2)) for d, p in self.comps]

    def _floats(self):
        return [(log_float(p), float_of(d), float_of(d) ** 2 / 2) for d, p in self.comps]

    def _root(self, t: fmpq, consts, fl, state: list) -> arb:
        """A ball [a, b] (exact dyadic ends) containing the root x* of S(x*) = t > 0, at the current precision."""
        from ..balls import ctx
        from ..pld.discretise import DiscretisationError

        lt = log_float(t)
        x = state[0] if state else 0.0
        for _ in range(200):  # float Newton on F(x) = log S(x) - log t (convex, increasing: converges from any start)
            terms = [lp + d * x - h for lp, d, h in fl]
            top = max(terms)
            w = [math.exp(u - top) for u in terms]
            sw = sum(w)
            step = (top + math.log(sw) - lt) * sw / sum(wi * d for wi, (_, d, _) in zip(w, fl))
            x -= step
            if abs(step) <= 1e-15 * max(1.0, abs(x)):
                break
        if not math.isfinite(x):
            raise DiscretisationError("mixture of Gaussians: the float guess of a root is not finite")
        state[:] = [x]
        tb = ball(t)

        def S(xb: arb) -> arb:
            return sum(((d * xb - h).exp() * p for p, d, h in consts), arb(0))

        m = arb(fmpq(*x.as_integer_ratio()))
        tiny = arb(2) ** (-(ctx.prec // 2) - 8) * (1 + abs(m))
        for _ in range(8):  # Newton on S at the ball midpoints (quadratic): a centre only, the bracket below is the proof
            E = [((d * m - h).exp() * p, d) for p, d, h in consts]
            step = (sum((e for e, _ in E), arb(0)) - tb) / sum((e * d for e, d in E), arb(0))
            if not step.is_finite():
                break
            m = (m - step).mid()
            if abs(step.mid()) < tiny:  # the next error is about step^2: below 2^-prec
                break
        mq = m.mid().fmpq() if m.is_finite() else fmpq(*x.as_integer_ratio())
        scale = max(1, int(abs(mq).ceil()))
        e = fmpq(1, 2 ** max(ctx.prec - 24 - scale.bit_length(), 1))
        for _ in range(12):
            a, b = mq - e, mq + e
            if S(ball(a)) < tb and S(ball(b)) > tb:
                return ball(a).union(ball(b))
            e *= 2**16
        raise DiscretisationError("mixture of Gaussians: a root of the likelihood ratio was not bracketed")

    def evaluator(self):
        consts, fl = self._consts(), self._floats()
        p0, rem = self.p0, self.direction == "remove"
        r2 = 1 / arb(2).sqrt()
        state: list = []

        def f(gamma: fmpq):
            if rem:
                if gamma <= p0:
                    return ball(1 - gamma), arb(-1)
                X = self._root(gamma - p0, consts, fl, state)
                tail = (X * r2).erfc() / 2
                v = sum((p * ((X - d) * r2).erfc() / 2 for p, d, _ in consts), arb(0)) - ball(gamma - p0) * tail
                return v, -tail
            if gamma == 0:
                return arb(1), arb(-1)
            if gamma * p0 >= 1:
                return arb(0), arb(0)
            X = self._root((1 - gamma * p0) / gamma, consts, fl, state)
            head = (-X * r2).erfc() / 2
            mix = sum((p * (-(X - d) * r2).erfc() / 2 for p, d, _ in consts), arb(0))
            return ball(1 - gamma * p0) * head - ball(gamma) * mix, -(ball(p0) * head + mix)

        return f

    def _L(self, x: float) -> float:
        """log(p0 + S(x)) in floats (the remove loss at x)."""
        terms = [log_float(p) + float_of(d) * x - float_of(d) ** 2 / 2 for d, p in self.comps]
        if self.p0 > 0:
            terms.append(log_float(self.p0))
        return _lse(terms)

    def loss_range(self, eta: float) -> tuple[float, float]:
        """Losses up to tail mass ~eta (a choice): remove, P = M: x in [dlo - z, d_max + z] (dlo = 0 when p0 > 0, else
        d_1); add, P = N(0, 1): x in [-z, z], loss -L(x); z = sqrt(2 log(1/eta)) + 1."""
        z = math.sqrt(2 * math.log(1 / max(eta, 1e-300))) + 1
        if self.direction == "remove":
            dlo = 0.0 if self.p0 > 0 else float_of(self.comps[0][0])
            return self._L(dlo - z), self._L(float_of(self.comps[-1][0]) + z)
        return -self._L(z), -self._L(-z)


# --------------------------------------------------------------------------------------------
# TruncatedSubsampledGaussianDpEvent: the weight P(Bin(n, q) >= B) and the labelled-mixture pair
# --------------------------------------------------------------------------------------------
#: the most binomial terms one enclosure of P(Bin(n, q) >= B) may sum (decided before summing: BinomialTail.terms)
MAX_TERMS = 10**6
#: the precision (bits) at which the work of a binomial tail is decided when the event is read (about 4x the usual
#: K + 96 bits, so that verify at 4x precision stays within it): every evaluation up to this precision stays within
#: MAX_TERMS terms (the count grows like sqrt(bits) near the mean, linearly far from it); a higher --precision may be
#: refused (an InputError naming truncated_batch_size)
TAIL_CHECK_BITS = 1024
_TAIL_MEMO: dict = {}


@dataclass(frozen=True)
class BinomialTail:
    """The exact number P(Bin(n, q) >= B) (``upper``) or its complement P(Bin(n, q) < B) (not ``upper``), q rational in
    [0, 1], n, B >= 0 integers; :meth:`enclose` returns a ball containing it at the current precision.

    The terms t_k = C(n, k) q^k (1 - q)^(n - k) are summed away from the mode, from the end of the tail that does not
    hold it: t_(k+1) / t_k = (n - k) q / ((k + 1)(1 - q)) < 1 iff k + 1 > (n + 1) q, so when B + 1 > (n + 1) q the upper
    tail k = B, B + 1, ... decreases (ratio rho_k decreasing in k), and otherwise the lower tail k = B - 1, B - 2, ...
    does (t_(k-1) / t_k = k (1 - q) / ((n - k + 1) q) < 1 iff k < (n + 1) q, increasing in k). The first term from
    lgamma in balls (extra bits for the cancellation of lgamma(n + 1)), the next ones by the exact ratio; after L terms
    the rest is at most t_L / (1 - rho_L) (a geometric series: every later ratio is at most rho_L), added as [0, R];
    0 when the tail's L terms are all of them. The other tail is 1 minus this one. L is decided BEFORE summing
    (:meth:`terms`) from float log-ratios, and more than MAX_TERMS terms is refused (an InputError naming the field)."""

    n: int
    q: fmpq
    B: int
    upper: bool = True

    def _trivial(self) -> fmpq | None:
        """The exact value where it is known without summing."""
        n, q, B = self.n, self.q, self.B
        if B <= 0:
            v = fmpq(1)
        elif B > n or q == 0:
            v = fmpq(0)
        elif q == 1:
            v = fmpq(1)
        else:
            return None
        return v if self.upper else 1 - v

    def _direction(self) -> tuple[bool, int, int]:
        """(summing the upper tail?, first index k0, number of terms of that tail)."""
        n, q, B = self.n, self.q, self.B
        if (B + 1) * q.q > (n + 1) * q.p:  # B + 1 > (n + 1) q: the upper tail decreases
            return True, B, n - B + 1
        return False, B - 1, B

    def terms(self, bits: int) -> int:
        """The number L of terms summed at ``bits`` of precision (a choice from floats: the remainder bound after L terms
        is about 2^-(bits + 20) of the first term), capped by the tail's length; ``MAX_TERMS + 1`` when more are needed."""
        if self._trivial() is not None:
            return 0
        n, q = self.n, self.q
        up, k0, count = self._direction()
        lq, l1q = log_float(q), log1m_float(q)

        def g(i: int) -> float:  # |log of the ratio| after i steps (increasing in i)
            k = k0 + i if up else k0 - i
            if up:
                if k >= n:
                    return math.inf
                return -(math.log(n - k) - math.log(k + 1) + lq - l1q)
            if k <= 0:
                return math.inf
            return -(math.log(k) - math.log(n - k + 1) + l1q - lq)

        target = (bits + 20) * math.log(2) + 1
        L = 1
        while L <= MAX_TERMS:
            if L >= count:
                return count
            gl = g(L)
            # sum_{i<L} |g(i)| >= (L - L//2) |g(L//2)|; the remainder factor 1/(1 - rho_L) ~ 1/|g(L)|
            if gl > 0 and (L - L // 2) * g(L // 2) >= target + max(0.0, -math.log(-math.expm1(-gl))):
                return L
            L *= 2
        return MAX_TERMS + 1

    def check_work(self, where: str) -> None:
        """InputError (naming ``where``) when an enclosure at TAIL_CHECK_BITS would sum more than MAX_TERMS terms."""
        if self.terms(TAIL_CHECK_BITS) > MAX_TERMS:
            raise InputError(
                where,
                f"P(Bin(dataset_size, sampling_probability) >= truncated_batch_size) would need more than {MAX_TERMS} binomial "
                "terms to enclose (truncated_batch_size within a few sqrt(n q (1 - q)) of (n + 1) q with n q (1 - q) above "
                "about 10^9); such events are not certified",
            )

    def enclose(self) -> arb:
        from ..balls import ctx, workprec

        t = self._trivial()
        if t is not None:
            return ball(t)
        prec = ctx.prec
        key = (self.n, self.q, self.B, prec)
        tail = _TAIL_MEMO.get(key)
        if tail is None:
            L = self.terms(prec)
            if L > MAX_TERMS:
                raise InputError("truncated_batch_size", f"P(Bin(n, q) >= B) needs more than {MAX_TERMS} terms at {prec} bits")
            up, k0, count = self._direction()
            n, a, b = self.n, int(self.q.p), int(self.q.q)
            with workprec(prec + 2 * n.bit_length() + 64 + L.bit_length()):
                lt = arb(n + 1).lgamma() - arb(k0 + 1).lgamma() - arb(n - k0 + 1).lgamma()
                lt += k0 * ball(self.q).log() + (n - k0) * (-ball(self.q)).log1p()
                t = lt.exp()
                s = arb(0)
                k = k0
                # q / (1 - q) (or its inverse) once: a rational with a huge denominator is not re-read at every term
                odds = arb(a) / (b - a) if up else arb(b - a) / a
                for _ in range(L):
                    s += t
                    if up:
                        t = t * odds * (n - k) / (k + 1)
                        k += 1
                    else:
                        t = t * odds * k / (n - k + 1)
                        k -= 1
                if L < count:  # the rest: t_L + t_(L+1) + ... <= t_L / (1 - rho_L)
                    rho = odds * (n - k) / (k + 1) if up else odds * k / (n - k + 1)
                    rest = t / (1 - rho) if rho < 1 else arb(1)
                    s += arb(0).union(rest.upper())
                s = s.max(arb(0)).min(arb(1))
                tail = (s, up)
            if len(_TAIL_MEMO) > 64:
                _TAIL_MEMO.clear()
            _TAIL_MEMO[key] = tail
        s, up = tail
        return s if up == self.upper else 1 - s


def tsg_pair(mech) -> tuple[Curve, Curve]:
    """(remove, add) of TruncatedSubsampledGaussianDpEvent(n, q, B, z) under ADD_OR_REMOVE_ONE: the labelled mixture
    (1 - w) PSG(q, z) (+) w PSG(q, z/2), w = P(Bin(n, q) >= B) (certify's theorem: the module docstring of
    :mod:`certify.events.mechanisms.truncated_subsampled_gaussian`); PSG(r, s) is :class:`MixtureCurve` at rate r,
    shift 1/s. w = 0 (B > n) is PSG(q, z) itself, w = 1 (q = 1, B <= n) PSG(1, z/2), the Gaussian of shift 2/z."""
    n, q, B, z = (mech[k] for k in ("dataset_size", "sampling_probability", "truncated_batch_size", "noise_multiplier"))
    n, B = int(n.p), int(B.p)
    d1, d2 = 1 / z, 2 / z
    w = BinomialTail(n, q, B)
    exact_w = w._trivial()
    if exact_w == 0:
        return MixtureCurve("remove", q, d1), MixtureCurve("add", q, d1)
    if exact_w == 1:
        if q == 1:
            c = MixtureCurve("remove", fmpq(1), d2)
            return c, c
        return MixtureCurve("remove", q, d2), MixtureCurve("add", q, d2)
    weights = (BinomialTail(n, q, B, upper=False), w)
    return (
        WeightedCurve(weights, (MixtureCurve("remove", q, d1), MixtureCurve("remove", q, d2))),
        WeightedCurve(weights, (MixtureCurve("add", q, d1), MixtureCurve("add", q, d2))),
    )


def mixture_pair(mech) -> tuple[Curve, Curve]:
    """(remove, add) of a MixtureOfGaussiansDpEvent: one positive shift is the Poisson-subsampled Gaussian pair
    (:class:`certify.pld.pairs.MixtureCurve` with q = 1 - p0, Delta = d_1; at p0 = 0 the Gaussian, symmetric), more
    are :class:`GaussianMixtureCurve` (both directions)."""
    p0, comps = mech.components()
    if len(comps) == 1:
        d, q = comps[0]
        if p0 == 0:
            c = MixtureCurve("remove", fmpq(1), d)
            return c, c
        return MixtureCurve("remove", q, d), MixtureCurve("add", q, d)
    return GaussianMixtureCurve("remove", p0, comps), GaussianMixtureCurve("add", p0, comps)


def pair_of(mech, relation: str, where: str = "event") -> tuple[Curve, Curve]:
    """(remove, add) curves of a mechanism under ``relation`` (module docstring); InputError naming the class and why."""
    cls = mech.CLASS
    if cls in NO_PLD:
        raise InputError(where, f"{cls} {NO_PLD[cls]}")
    rels = PLD_RELATIONS.get(cls)
    if rels is None:
        raise InputError(where, f"{cls} has no certified PLD here; use --accountant rdp")
    if relation not in rels:
        raise InputError(
            where,
            f"{cls} is certified by the PLD accountant under {', '.join(rels)} only, not {relation} "
            "(dp_accounting's PLDAccountant supports no other, or certify does not certify its REPLACE_SPECIAL pair)",
        )
    if relation == REPLACE_SPECIAL and cls in SPECIAL_AS_ADD_REMOVE:
        relation = ADD_REMOVE  # the same pair (SPECIAL_AS_ADD_REMOVE)
    if cls == "GaussianDpEvent":
        z = mech["noise_multiplier"]
        c = MixtureCurve("remove", fmpq(1), (1 if relation == ADD_REMOVE else 2) / z)
        return c, c
    if cls == "LaplaceDpEvent":
        c = LaplaceCurve(1 / mech["noise_multiplier"])
        return c, c
    if cls == "RandomizedResponseDpEvent":
        c = _rr_curve(mech["noise_parameter"], mech["num_buckets"])
        return c, c
    if cls == "EpsilonDeltaDpEvent":
        c = _kov_curve(mech["epsilon"], mech["delta"])
        return c, c
    if cls == "DiscreteGaussianDpEvent":
        sigma, D = mech["sigma"], mech["sensitivity"]
        if D != 1:
            raise InputError(
                f"{where}.sensitivity",
                "the PLD of DiscreteGaussianDpEvent is certified for sensitivity 1 only (in any dimension the shift is then a unit "
                "lattice vector, the one-dimensional pair; a shift of norm D >= 2 need not be, and the event's dimension is not "
                f"recorded), got {exact_str(D)}; use --accountant rdp",
            )
        c = DiscreteGaussianCurve(sigma, int(D.p))
        if 2 * c._X(512) + c.D > MAX_LATTICE:
            raise InputError(
                f"{where}.sigma",
                f"the PLD of DiscreteGaussianDpEvent takes 56 sigma + sensitivity <= {MAX_LATTICE} (its lattice sums); use --accountant rdp",
            )
        return c, c
    if cls == "DiscreteLaplaceDpEvent":
        c = _dlap_curve(mech["noise_parameter"], int(mech["sensitivity"].p))
        return c, c
    if cls == "PoissonSampledDpEvent/LaplaceDpEvent":
        q, e0 = mech["sampling_probability"], 1 / mech["noise_multiplier"]
        return PoissonLaplaceCurve(q, e0, "remove"), PoissonLaplaceCurve(q, e0, "add")
    if cls == "MixtureOfGaussiansDpEvent":
        return mixture_pair(mech)
    if cls == "TruncatedSubsampledGaussianDpEvent":
        return tsg_pair(mech)
    if cls == "PoissonSampledDpEvent":
        q, d = mech["sampling_probability"], 1 / mech["noise_multiplier"]
        return MixtureCurve("remove", q, d), MixtureCurve("add", q, d)
    raise InputError(where, f"{cls} has no certified PLD here")  # pragma: no cover


def entries_of(ledger, name: str = "event", fold: bool = True):
    """The ledger's entries for the generic engine (:class:`certify.pld.ledger.Entry`), in ledger order; with ``fold``
    (what certify certifies) every entry whose pair is the Gaussian one (GaussianDpEvent under any relation, and any
    other mechanism whose pair :func:`pair_of` gives as the Gaussian) folded into one exact Gaussian entry
    (:func:`certify.pld.ledger.fold_gaussians`: the composition of Gaussian mechanisms is a Gaussian mechanism)."""
    from ..pld.ledger import Entry, fold_gaussians

    out = []
    for i, (m, c) in enumerate(ledger.entries):
        r, a = pair_of(m, ledger.relation, f"{name}[{i}]")
        out.append(Entry(r, a, c))
    return fold_gaussians(out) if fold else out


def gaussian_fold(ledger) -> tuple[int, int, fmpq] | None:
    """(events, distinct mechanisms, M^2) of the Gaussian entries :func:`entries_of` folds, or None when there is none."""
    from ..pld.ledger import gaussian_m2

    n = k = 0
    m2 = fmpq(0)
    for e in entries_of(ledger, fold=False):
        d2 = gaussian_m2(e)
        if d2 is not None:
            n, k, m2 = n + e.count, k + 1, m2 + e.count * d2
    return (n, k, m2) if k else None
