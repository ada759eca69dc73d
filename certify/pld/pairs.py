"""Dominating pairs per accounting contract, and their one-step hockey-stick curves in balls.

Notation. For a pair of measures (P, Q) and gamma = e^eps >= 0 the hockey-stick curve is
``f(gamma) = H_gamma(P || Q) = sup_A P(A) - gamma Q(A)``. Every pair used here is a pair of
mixtures of N(0, 1) and N(Delta, 1) whose likelihood ratio X = dP/dQ is monotone in the output x,
so the supremum is attained on a half-line S_gamma = {X > gamma} and

    f(gamma)  = P(S_gamma) - gamma Q(S_gamma),        f'(gamma) = -Q(S_gamma)      (f convex, non-increasing).

Two ordered pairs ("directions") occur, with z(x) = exp(Delta x - Delta^2/2):

* ``remove``: P = (1-q) N(0,1) + q N(Delta,1), Q = N(0,1). X = 1-q+q z. For gamma <= 1-q, f = 1-gamma;
  else with x1 = (log((gamma-1+q)/q) + Delta^2/2)/Delta,
  f = q Phibar(x1 - Delta) - (gamma - 1 + q) Phibar(x1),  f' = -Phibar(x1)
  (Bok 2026, H_gamma(Pt||Qt) of Proposition 1).
* ``add``: the same two distributions in the other order. X = 1/(1-q+q z). For gamma (1-q) >= 1, f = 0;
  else with x2 = (log((1 - gamma(1-q))/(gamma q)) + Delta^2/2)/Delta,
  f = (1 - gamma(1-q)) Phi(x2) - gamma q Phi(x2 - Delta),  f' = -[(1-q) Phi(x2) + q Phi(x2 - Delta)]
  (Bok 2026, H_gamma(Qt||Pt) of Proposition 1).

Contracts (``Profile``: a list of directions composed separately, each with a curve that is the
pointwise maximum of its members):

* Poisson sampling, add/remove adjacency, Delta = 1/sigma (Mironov, Talwar, Zhang 2019; Zhu, Dong, Wang 2022): the two
  directions ``remove`` and ``add`` bound separately and the larger delta is reported (a pair of
  neighbouring datasets differs in the same direction at every step, so each direction's T-fold product
  dominates that case; the worst case over both is the max). The add pair is the remove pair swapped, so
  only ``remove`` is discretised and composed and the add direction is read off by H_g(Q||P) = 1 - g +
  g H_(1/g)(P||Q) (:mod:`certify.pld.readoff`, "The add direction derived from the remove chain"); at a
  large float estimate of eps, and in certificates that record an ``add`` layout, both are composed.
* Fixed-size batches, replace-one adjacency, Delta = 2/sigma: one profile, the pointwise maximum
  max(H(Pt||Qt), H(Qt||Pt)) of Bok (2026) Proposition 1 / Zhu, Dong, Wang (2022) Corollary 32, which is at
  least Proposition 1's curve (H(Pt||Qt) for gamma >= 1, H(Qt||Pt) below) and is what the tables'
  lossless column composes. The maximum of two hockey-stick curves of probability pairs is again convex,
  non-increasing, equal to 1 at gamma = 0 and >= (1-gamma)_+, so everything below applies to it.

Only these curves enter the accountant; what composes is domination of curves for EVERY gamma >= 0
(Zhu, Dong, Wang 2022, Theorem 10; see :mod:`certify.pld.discretise` for the form used here).

Rounding: :func:`value_and_slope` returns balls of f(t) and f'(t) at an exact point t; the caller
(:func:`certify.pld.discretise.sample`) evaluates at t = the exact lower endpoint of the ball e^(jh), so
the upper endpoint of f(t) bounds f(e^(jh)) from above (f non-increasing) and the tangent at t is a
global minorant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..balls import arb, ball, float_of, fmpq, log1m_float, log_float
from ..contract import Contract
from .curves import Curve, CurveProfile


@dataclass(frozen=True)
class Profile:
    """One direction to compose: its curve is the pointwise max of the members' curves."""

    name: str
    members: tuple[str, ...]


def profiles(contract: Contract) -> tuple[Profile, ...]:
    """The profiles composed for a contract (Poisson: two directions; fixed-size: one max-profile)."""
    if contract.sampling == "poisson" and contract.adjacency == "add-remove":
        return (Profile("remove", ("remove",)), Profile("add", ("add",)))
    if contract.sampling == "fixed-size" and contract.adjacency == "replace-one":
        return (Profile("max", ("remove", "add")),)
    raise ValueError(f"no PLD dominating pair for contract {contract}")


def shift(contract: Contract, sigma: fmpq) -> fmpq:
    """Delta = k/sigma (k = 1 add/remove, 2 replace-one), exact."""
    return fmpq(contract.shift_numerator) / sigma


def _consts(q: fmpq, delta: fmpq) -> tuple:
    """Balls of q, 1-q, Delta, Delta^2/2, 1/sqrt 2 at the current precision (cached per precision)."""
    from ..balls import ctx

    key = (q, delta, ctx.prec)
    c = _CONSTS.get(key)
    if c is None:
        d = ball(delta)
        c = (ball(q), ball(1 - q), d, d * d / 2, 1 / arb(2).sqrt())
        if len(_CONSTS) > 64:
            _CONSTS.clear()
        _CONSTS[key] = c
    return c


_CONSTS: dict = {}


#: below this sampling rate, gamma - (1 - q) and 1 - gamma (1 - q) are formed exactly before rounding: the ball of
#: 1 - q at the working precision would swallow q (q = 1e-300 gave a non-finite curve); at larger q the two
#: forms enclose the same number and the ball form is kept (issued certificates re-derive bit for bit)
TINY_Q = fmpq(1, 2**32)


def curve_constants(q: fmpq, delta: fmpq) -> tuple:
    """The constants of :func:`value_and_slope` at the current precision, for a loop over many points at one
    precision (the exact thresholds 1 - q and the balls of q, 1-q, Delta, Delta^2/2, 1/sqrt 2)."""
    return (1 - q,) + _consts(q, delta)


def value_and_slope(member: str, q: fmpq, delta: fmpq, gamma: fmpq, consts: tuple | None = None) -> tuple[arb, arb]:
    """Balls of f(gamma) and f'(gamma) for one direction at an EXACT gamma >= 0 (formulas of the docstring).

    The region tests (gamma <= 1-q, gamma (1-q) >= 1) are exact rational comparisons; inside the smooth
    region Phibar(t) = erfc(t/sqrt 2)/2 and Phi(t) = erfc(-t/sqrt 2)/2 (Arb's erfc is rigorous).
    ``consts``: :func:`curve_constants` ``(q, delta)`` computed at the current precision (else computed here)."""
    p, qb, pb, d, d2, r2 = curve_constants(q, delta) if consts is None else consts
    if member == "remove":
        if gamma <= p:
            return ball(1 - gamma), arb(-1)
        g = arb(gamma)
        excess = ball(gamma - p) if q < TINY_Q else g - pb  # gamma - 1 + q > 0 (exact when 1 - q is not resolved)
        x1 = ((excess / qb).log() + d2) / d
        tail = (x1 * r2).erfc() / 2
        return qb * ((x1 - d) * r2).erfc() / 2 - excess * tail, -tail
    if member == "add":
        if gamma * p >= 1:
            return arb(0), arb(0)
        if gamma == 0:
            return arb(1), -arb(1)
        g = arb(gamma)
        gap = ball(1 - gamma * p) if q < TINY_Q else 1 - g * pb  # 1 - gamma (1-q) > 0 (exact for a tiny q)
        x2 = ((gap / (g * qb)).log() + d2) / d
        c1, c2 = (-x2 * r2).erfc() / 2, (-(x2 - d) * r2).erfc() / 2
        return gap * c1 - g * qb * c2, -(pb * c1 + qb * c2)
    raise ValueError(member)


def _log_mix(l1q: float, lq: float, u: float) -> float:
    """log(1 - q + q e^u) without overflow, from l1q = log(1 - q) and lq = log q (floats of the exact q, so that
    q = 1e-400 or 1 - 1e-30 are no float 0 or 1)."""
    a, b = l1q, lq + u
    m = max(a, b)
    return m + math.log(math.exp(a - m) + math.exp(b - m))


@dataclass(frozen=True)
class MixtureCurve(Curve):
    """The curve of one direction (``member``: "remove" or "add", module docstring) of the pair
    (1-q) N(0,1) + q N(Delta,1) vs N(0,1), as a :class:`certify.pld.curves.Curve` for the generic engine.
    q = 1 is the Gaussian mechanism itself (N(Delta,1) vs N(0,1), both directions alike): the formulas of
    :func:`value_and_slope` hold unchanged (1 - q = 0), only the window of :meth:`loss_range` differs."""

    member: str
    q: fmpq
    delta: fmpq

    def evaluator(self):
        member, q, d = self.member, self.q, self.delta
        consts = curve_constants(q, d)  # the same balls at every point of one precision: computed once
        return lambda gamma: value_and_slope(member, q, d, gamma, consts)

    def loss_range(self, eta: float) -> tuple[float, float]:
        """Losses up to tail mass ~eta: remove, P = mixture: [log(1-q), L(Delta + z)]; add, P = N(0,1):
        [-L(z), -log(1-q)], L(u) = log(1 - q + q e^(Delta u - Delta^2/2)), z = sqrt(2 log(1/eta)) + 1 (a choice).
        q = 1: the Gaussian's (:func:`gaussian_loss_range`)."""
        df = float_of(self.delta)
        z = math.sqrt(2 * math.log(1 / max(eta, 1e-300))) + 1
        if self.q == 1:
            return gaussian_loss_range(df, eta)
        lq, l1q = log_float(self.q), log1m_float(self.q)
        if self.member == "remove":
            return l1q, _log_mix(l1q, lq, df * z + df * df / 2)
        return -_log_mix(l1q, lq, df * z - df * df / 2), -l1q


def gaussian_loss_range(df: float, eta: float) -> tuple[float, float]:
    """The window of the Gaussian pair N(Delta, 1) vs N(0, 1) (a choice, floats; ``df`` = float Delta): its loss
    Delta x - Delta^2/2 ~ N(Delta^2/2, Delta^2) (either direction), so Delta^2/2 +- Delta z, z = sqrt(2 log(1/eta)) + 1."""
    z = math.sqrt(2 * math.log(1 / max(eta, 1e-300))) + 1
    c = df * df / 2
    return c - df * z, c + df * z


@dataclass(frozen=True)
class GaussianCurve(Curve):
    """The Gaussian pair N(M, 1) vs N(0, 1) given by its EXACT squared shift ``m2`` = M^2 > 0 (a rational; M itself is
    in general irrational, e.g. the shift of a composition of Gaussians, :func:`certify.pld.ledger.fold_gaussians`).
    Symmetric (x -> M - x swaps the two). The curve is the one formula of :func:`value_and_slope` (member "remove" at
    q = 1, Balle-Wang 2018 Thm 8, obligation ``E-pld-gaussian``), fed with the balls Delta = sqrt(ball(M^2)) (Arb's
    sqrt: a ball containing M) and Delta^2/2 = ball(M^2/2) (M^2/2 exact before rounding), instead of ball(Delta) and
    ball(Delta)^2/2: every ball of :func:`value_and_slope` still contains its exact value, so the value ball contains
    f(gamma) and the slope ball the derivative. At q = 1 the constants 1 - q = 0 (exact) and the balls q = 1, 1 - q = 0
    are exact, as :func:`curve_constants` gives them."""

    m2: fmpq

    def constants(self) -> tuple:
        """:func:`curve_constants` ``(1, sqrt(m2))`` at the current precision, from the exact M^2."""
        from ..balls import ctx

        key = ("m2", self.m2, ctx.prec)
        c = _CONSTS.get(key)
        if c is None:
            c = (fmpq(0), arb(1), arb(0), ball(self.m2).sqrt(), ball(self.m2 / 2), 1 / arb(2).sqrt())
            if len(_CONSTS) > 64:
                _CONSTS.clear()
            _CONSTS[key] = c
        return c

    def evaluator(self):
        consts = self.constants()
        one = fmpq(1)
        return lambda gamma: value_and_slope("remove", one, None, gamma, consts)

    def loss_range(self, eta: float) -> tuple[float, float]:
        return gaussian_loss_range(math.sqrt(float_of(self.m2)), eta)


def bind(profile: Profile, q: fmpq, delta: fmpq) -> CurveProfile:
    """The contract's profile as curves of the generic engine (members = :class:`MixtureCurve` of (q, Delta))."""
    return CurveProfile(profile.name, tuple(MixtureCurve(m, q, delta) for m in profile.members))
