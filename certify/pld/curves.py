"""What the generic PLD engine takes from a mechanism: the hockey-stick curve of a dominating pair.

A dominating pair (P, Q) of a mechanism under a neighbouring relation is given to the engine by its curve

    f(gamma) = H_gamma(P || Q) = sup_A P(A) - gamma Q(A),        gamma >= 0,

convex and non-increasing, f(0) = P's mass (1), f(gamma) >= (1 - gamma)_+, f -> P(Q = 0) (the mass at +inf)
as gamma -> inf. A :class:`Curve` provides

* :meth:`Curve.evaluator` -> a function ``gamma -> (value, slope)`` valid at the current precision: at an
  EXACT gamma >= 0, balls whose upper endpoint bounds f(gamma) from above (value) and that contain a
  subgradient of f at gamma (slope: any s with f(x) >= f(gamma) + s (x - gamma) for every x >= 0), so that
  the tangent line is a global minorant (the optimistic discretisation of :mod:`certify.pld.discretise`);
* :meth:`Curve.loss_range` ``(eta)`` -> floats (lo, hi): privacy losses outside [lo, hi] carry P-mass about
  eta at most (a CHOICE that places the window and the grid; soundness never depends on it);
* a hashable identity (frozen dataclasses of exact parameters): the one-step measures and the composed
  chains are memoised on it;
* optionally ``loss_law(K)`` -> P's privacy-loss law (:class:`certify.pld.direct.LossLaw`): a curve with kinks
  (finite outputs, Laplace) is then discretised by rounding its losses to the grid (:mod:`certify.pld.direct`,
  used by the event ledger, :mod:`certify.pld.ledger`) instead of by tangents.

A :class:`CurveProfile` is one direction to compose: its curve is the pointwise maximum of its members'
curves (a maximum of hockey-stick curves of probability pairs is again convex, non-increasing, 1 at 0 and
>= (1 - gamma)_+, so the discretisation argument applies to it unchanged).

Generic curves here: :class:`AtomsCurve` (a pair with finitely many outputs, e.g. randomized response,
the (eps, delta) pair of Kairouz-Oh-Viswanath, the discrete Laplace mechanism; its curve is a finite sum of
hinges (p_i - gamma q_i)_+ plus the mass at +inf). The Gaussian mixtures of DP-SGD are in
:mod:`certify.pld.pairs`; the mechanisms of dp_accounting's events in :mod:`certify.events.pld_pairs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..balls import arb, fmpq

Evaluator = Callable[[fmpq], "tuple[arb, arb]"]


class Curve:
    """The hockey-stick curve of one ordered dominating pair (module docstring). Subclasses are frozen
    dataclasses of exact parameters (hashable, compared by value)."""

    def evaluator(self) -> Evaluator:  # pragma: no cover - every curve defines it
        raise NotImplementedError

    def value_and_slope(self, gamma: fmpq) -> tuple[arb, arb]:
        """(value, slope) balls at an exact gamma >= 0 at the current precision."""
        return self.evaluator()(gamma)

    def loss_range(self, eta: float) -> tuple[float, float]:  # pragma: no cover
        raise NotImplementedError


@dataclass(frozen=True)
class CurveProfile:
    """One direction to compose: its curve is the pointwise max of the members' curves."""

    name: str
    members: tuple


#: extra bits tried, in turn, to decide on which side of a kink an exact point lies (a kink e^l with l a nonzero
#: rational is irrational, so an exact rational point is decided at some precision; a point exactly at a rational kink
#: never is, and then every slope between the two one-sided ones is a subgradient)
DECIDE_EXTRA = (64, 256, 1024)


def sign_of(fn: Callable[[], arb]) -> int:
    """The sign of the number that ``fn()`` encloses at the current precision (+1, -1), retried at the current
    precision plus each of DECIDE_EXTRA bits; 0 when still undecided (or exactly 0)."""
    from ..balls import ctx, workprec

    base = ctx.prec
    for extra in (0,) + DECIDE_EXTRA:
        with workprec(base + extra):
            d = fn()
            if d > 0:
                return 1
            if d < 0:
                return -1
    return 0


def _hinge(p: arb, qm: arb, g: arb, decide: Callable[[], int]) -> tuple[arb, arb]:
    """A ball containing (p - g q)_+ and a ball containing a subgradient of gamma -> (p - gamma q)_+ at g:
    -q where p - g q > 0 is decided, 0 where p - g q < 0 is decided (``decide()``: the sign at more bits when the
    current ones do not tell), the union of both otherwise (exactly at the kink every s in [-q, 0] is a
    subgradient, and the lower endpoint of a tangent taken over the union is below both tangent lines)."""
    d = p - g * qm
    sgn = 1 if d > 0 else (-1 if d < 0 else decide())
    if sgn > 0:
        return d.max(arb(0)), -qm
    if sgn < 0:
        return arb(0), arb(0)
    return d.max(arb(0)), (-qm).union(arb(0))


@dataclass(frozen=True)
class AtomsCurve(Curve):
    """A pair with finitely many outputs: f(gamma) = m_inf + sum_i (p_i - gamma q_i)_+.

    ``atoms(prec)`` is a function returning [(p_i, q_i)] as balls at the current precision (the masses are
    often transcendental, e.g. e^eps / (1 + e^eps)); ``inf`` a function returning the ball of the P-mass where
    Q = 0 (or None); ``losses``: float privacy losses log(p_i / q_i) of the atoms (a choice: the window).
    The hinge sum is exact: for a pair with finitely many outputs the supremum of P(A) - gamma Q(A) is attained at
    A = {y: P(y) > gamma Q(y)}, so H_gamma = sum_y (P(y) - gamma Q(y))_+ (each hinge's slope change is obligation
    ``PLD-hinge`` of :mod:`certify.pld.proofs`)."""

    key: tuple
    atoms: Callable = None
    inf: Callable = None
    losses: tuple = ()
    #: per atom, its exact rational loss log(p_i / q_i) when known (e.g. eps of the KOV pair), else None
    exact_losses: tuple = ()

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        return isinstance(other, AtomsCurve) and self.key == other.key

    def evaluator(self) -> Evaluator:
        pq = self.atoms()
        m_inf = self.inf() if self.inf is not None else None

        def f(gamma: fmpq) -> tuple[arb, arb]:
            g = arb(gamma)
            v, s = (m_inf if m_inf is not None else arb(0)), arb(0)
            for i, (p, qm) in enumerate(pq):

                def decide(i=i):
                    return sign_of(lambda: (lambda pi, qi: pi - arb(gamma) * qi)(*self.atoms()[i]))

                hv, hs = _hinge(p, qm, g, decide)
                v, s = v + hv, s + hs
            return v, s

        return f

    def loss_law(self, K: int = 64):
        """P's loss law for the direct discretisation (:mod:`certify.pld.direct`): the atoms with p_i > 0 decided,
        their exact losses where known, the mass at +inf. None (the tangent construction) when some atom's P-mass
        is not decided positive."""
        from .direct import LossLaw

        ex = self.exact_losses or (None,) * len(self.atoms())

        def atoms():
            out = []
            for (p, q), lq in zip(self.atoms(), ex):
                if not (p > 0 and q > 0):
                    raise ValueError("atom masses not decided positive")
                out.append((p, q, lq))
            return out

        try:
            atoms()
        except ValueError:
            return None
        return LossLaw(atoms, self.inf)

    def loss_range(self, eta: float) -> tuple[float, float]:
        fin = [x for x in self.losses if x == x and abs(x) != float("inf")]
        return (min(fin, default=0.0), max(fin, default=0.0))


def weight_ball(w) -> arb:
    """The ball of one weight of a :class:`WeightedCurve` at the current precision: an exact rational (fmpq or int),
    or an object whose ``enclose()`` returns a ball containing the exact weight (e.g.
    :class:`certify.events.pld_pairs.BinomialTail`)."""
    from ..balls import ball

    if isinstance(w, (fmpq, int)):
        return ball(fmpq(w))
    return w.enclose()


@dataclass(frozen=True)
class WeightedCurve(Curve):
    """The labelled mixture of pairs: P = sum_i w_i (i, P_i), Q = sum_i w_i (i, Q_i) (the label i is released with the
    output), w_i >= 0 summing to 1. Its curve is f(gamma) = sum_i w_i f_i(gamma), f_i = H_gamma(P_i || Q_i): the set
    A = {(i, y): P_i(y) > gamma Q_i(y)} is optimal label by label (obligation ``E-pld-labelled-mixture`` of
    :mod:`certify.events.pld_proofs`).

    ``weights``: exact data (see :func:`weight_ball`: the exact weights or hashable objects that enclose them, e.g. a
    binomial tail and its complement); ``curves``: the component curves. Hashable and compared by these exact parameters.
    Value: sum_i w_i v_i (balls: each v_i contains f_i(gamma) and each w_i ball contains w_i, so the sum contains
    f(gamma)); slope: sum_i w_i s_i (a non-negative combination of subgradients is a subgradient of the combination).
    The weights' sum 1 is the caller's (a theorem about its weights, not checked here). loss_range: the union of the
    components' (a choice). No ``loss_law``: discretised by tangents (:mod:`certify.pld.discretise`)."""

    weights: tuple
    curves: tuple

    def evaluator(self) -> Evaluator:
        ws = [weight_ball(w) for w in self.weights]
        fs = [c.evaluator() for c in self.curves]

        def f(gamma: fmpq) -> tuple[arb, arb]:
            v, s = arb(0), arb(0)
            for w, fi in zip(ws, fs):
                vi, si = fi(gamma)
                v, s = v + w * vi, s + w * si
            return v, s

        return f

    def loss_range(self, eta: float) -> tuple[float, float]:
        lo, hi = 0.0, 0.0
        for c in self.curves:
            a, b = c.loss_range(eta)
            lo, hi = min(lo, a), max(hi, b)
        return lo, hi
