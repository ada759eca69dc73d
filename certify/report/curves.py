"""The privacy curves of a verified Rényi certificate, in ball arithmetic, as outward bands.

A Rényi certificate records an order alpha and a ball enclosing its bound R on the Rényi divergence of
order alpha of the whole run (``rdp_total``, or ``steps * rho`` for Bok's one-phase kinds). Every
alpha > 1 gives a valid (eps, delta) guarantee, so the curves below hold at the recorded alpha alone
(they are upper bounds on the true curves, not the true curves):

* the privacy profile, the inverse of the conversion of Balle et al. (2020), Theorem 21 (the one
  :func:`certify.poisson.certificates.epsilon_ball` and Bok's (6) evaluate):

      log delta(eps) = (alpha - 1) (R + log(1 - 1/alpha) - eps) - log alpha,   delta(eps) <= min(1, that);

* epsilon after t of the run's T steps (one phase): the conversion applied to t * rho, where rho = R/T is
  the one-step bound (Rényi composition, Mironov 2017, Prop. 1), by ``epsilon_ball`` itself;
* the hypothesis-testing trade-off: for a mechanism that is (eps, delta(eps))-DP for every eps, every
  test of "D" against "D'" with type I error a has type II error

      beta(a) >= max(0, sup_eps max(1 - delta(eps) - e^eps a, e^-eps (1 - delta(eps) - a)))

  (Kairouz, Oh, Viswanath 2015, Thm 2.1; Dong, Roth, Su 2022, Prop. 2.5); a supremum over a finite grid
  of eps is a valid (smaller) lower bound.

The referee's objective-perturbation certificates (``referee/objpert-rdp``) have a privacy profile of their
own, the exact profile of the dominating privacy loss (:func:`certify.objpert_rdp.curve.delta`, from the
recorded inputs); their profile and trade-off curves use it (no steps there).

Each point is a ball evaluated at the certificate's recorded precision from the recorded ball of R; a
band is the pair of its endpoints rounded outward (lower down, upper up) to exact rationals. The
statement is one-sided: delta(eps) and epsilon(t) are at most the band's upper edge, beta(a) at least the
band's lower edge. Floats appear only in :mod:`.svg`, to place points on the drawing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..balls import arb, ball, ball_from_json, ctx, exact, fmpq, lower_decimal, upper_decimal
from ..objpert_rdp import curve as objpert_curve
from ..poisson.certificates import epsilon_ball

#: kinds whose certificate records a Rényi order and a Rényi bound of the whole run
RENYI_KINDS = frozenset({"dpsgd/renyi-poisson", "dpsgd/renyi-bok", "dpsgd/renyi-wang", "dpsgd/renyi-birrell", "dpsgd/renyi-bok-schedule"})
#: kinds whose privacy profile is a function of the recorded inputs (the referee's objective perturbation)
PROFILE_KINDS = frozenset({"referee/objpert-rdp"})
#: every kind that gets privacy curves
CURVE_KINDS = RENYI_KINDS | PROFILE_KINDS
#: points per curve (cheap: a few thousand ball operations in all)
PROFILE_POINTS = 48
STEPS_POINTS = 40
TRADEOFF_POINTS = 100


@dataclass(frozen=True)
class PrivacyRecord:
    """What the curves need, read from a verified certificate (exact rationals).

    A Rényi kind sets ``alpha`` and ``total`` (and ``steps``, ``per_step`` for one phase); the referee's kind
    sets ``curve``. ``epsilon`` and ``delta`` are the certified guarantee the figures mark.
    """

    kind: str
    precision: int
    delta: fmpq
    epsilon: fmpq
    alpha: fmpq | None = None
    total: tuple[fmpq, fmpq] | None = None  # (mid, rad) of the Rényi bound of the whole run at alpha
    steps: int | None = None  # T, when the run has one phase (the epsilon-versus-steps curve needs it)
    per_step: tuple[fmpq, fmpq] | None = None  # (mid, rad) of the one-step bound, one phase only
    curve: objpert_curve.Curve | None = None

    def delta_ball(self, eps: fmpq) -> arb:
        """A ball containing the profile's value at eps (not capped at 1), at the current precision."""
        if self.curve is not None:
            return objpert_curve.delta(self.curve, eps)
        return log_delta_ball(_ball_of(self.total), self.alpha, eps).exp()


@dataclass(frozen=True)
class Band:
    """A curve as exact outward endpoints at exact abscissae: lo[i] <= value(x[i]) <= hi[i]."""

    x: tuple[fmpq, ...]
    lo: tuple[fmpq, ...]
    hi: tuple[fmpq, ...]


def _ball_of(pair: tuple[fmpq, fmpq]) -> arb:
    """The ball with the exact dyadic midpoint and radius of a recorded quantity (no rounding)."""
    return arb(pair[0], pair[1])


def privacy_record(doc: dict) -> PrivacyRecord | None:
    """The privacy guarantee and profile of a (verified) certificate, or None for a kind without curves."""
    kind = doc.get("kind")
    if kind in PROFILE_KINDS:
        return _profile_record(doc)
    if kind not in RENYI_KINDS:
        return None
    q, inputs = doc["quantities"], doc["inputs"]
    alpha_q = q.get("alpha") or q.get("phase[0].alpha")
    if alpha_q is None or "epsilon" not in q or "delta" not in inputs:
        return None
    mid, rad = ball_from_json(alpha_q["ball"])
    if rad != 0:
        return None
    one_phase = inputs.get("phases", "1") == "1"
    steps_text = inputs.get("steps", inputs.get("phase[0].steps"))
    steps = int(steps_text) if one_phase and steps_text is not None else None
    per_step = None
    if one_phase:
        key = "rho" if "rho" in q else "rdp[0]" if "rdp[0]" in q else None
        per_step = ball_from_json(q[key]["ball"]) if key else None
    if "rdp_total" in q:
        total = ball_from_json(q["rdp_total"]["ball"])
    elif per_step is not None and steps is not None:
        total = (per_step[0] * steps, per_step[1] * steps)
    else:
        return None
    eps = exact(q["epsilon"]["upper"])
    return PrivacyRecord(kind, doc["precision"], exact(inputs["delta"], "delta"), eps, mid, total, steps, per_step)


def _profile_record(doc: dict) -> PrivacyRecord | None:
    """``referee/objpert-rdp``: the curve from the recorded inputs; the guarantee marked is the witnessed
    (epsilon_upper, delta) when ``delta`` was given, else (epsilon, delta(epsilon))."""
    q, inputs = doc["quantities"], doc["inputs"]
    c = objpert_curve.Curve(exact(inputs["L"]), exact(inputs["nu"]), exact(inputs["s"]), exact(inputs["lambda"]))
    if "epsilon_upper" in q and "delta" in inputs:
        eps, delta = exact(q["epsilon_upper"]["upper"]), exact(inputs["delta"])
    elif "delta_epsilon" in q and "epsilon" in inputs:
        eps, delta = exact(inputs["epsilon"]), exact(q["delta_epsilon"]["upper"])
    else:
        return None
    return PrivacyRecord(doc["kind"], doc["precision"], delta, eps, curve=c)


def _outward(x: arb) -> tuple[fmpq, fmpq]:
    if not x.is_finite():
        raise ArithmeticError("a curve point is not finite")
    return x.lower().fmpq(), x.upper().fmpq()


def log_delta_ball(total: arb, alpha: fmpq, eps: fmpq) -> arb:
    """log delta(eps) = (alpha - 1)(R + log(1 - 1/alpha) - eps) - log alpha (inverse of Balle et al. 2020, Thm 21); a ball."""
    al = ball(alpha)
    return ball(alpha - 1) * (total + (1 - 1 / al).log() - ball(eps)) - al.log()


def profile_band(rec: PrivacyRecord, eps_max: fmpq | None = None, points: int = PROFILE_POINTS) -> Band:
    """delta(eps) at eps = k eps_max / points (k = 0..points), eps_max = 2 x the certified epsilon by default.

    Each point's band is the ball of min(1, exp(log delta(eps))) rounded outward; the upper edge is a
    certified upper bound on the run's delta at that eps.
    """
    top = eps_max if eps_max is not None else 2 * rec.epsilon
    xs, lo, hi = [], [], []
    with ctx.workprec(rec.precision):
        for k in range(points + 1):
            e = top * k / points
            a, b = _outward(rec.delta_ball(e))
            xs.append(e)
            lo.append(min(a, fmpq(1)))
            hi.append(min(b, fmpq(1)))
    return Band(tuple(xs), tuple(lo), tuple(hi))


def steps_band(rec: PrivacyRecord, points: int = STEPS_POINTS) -> Band | None:
    """epsilon(t) for t = ceil(k T / points) steps (k = 1..points) at the recorded alpha and delta, by
    :func:`certify.poisson.certificates.epsilon_ball` on t * rho (one phase only; None otherwise)."""
    if rec.steps is None or rec.per_step is None:
        return None
    ts = sorted({max(1, -(-k * rec.steps // points)) for k in range(1, points + 1)})
    xs, lo, hi = [], [], []
    with ctx.workprec(rec.precision):
        rho = _ball_of(rec.per_step)
        for t in ts:
            a, b = _outward(epsilon_ball(t * rho, rec.alpha, rec.delta))
            xs.append(fmpq(t))
            lo.append(a)
            hi.append(b)
    return Band(tuple(xs), tuple(lo), tuple(hi))


def tradeoff_band(rec: PrivacyRecord, points: int = TRADEOFF_POINTS) -> Band:
    """The certified lower bound on the type II error beta(a) at a = k/points (k = 0..points), from the
    profile's ball on the grid eps = 4 k eps_cert / (2 PROFILE_POINTS) (large eps matter at small a;
    Kairouz et al. 2015, Thm 2.1). Band: the endpoints of the ball of the bound function (the profile's
    ball inside), rounded outward; its lower edge is the certified statement."""
    top, n = 4 * rec.epsilon, 2 * PROFILE_POINTS
    xs, lo, hi = [], [], []
    with ctx.workprec(rec.precision):
        terms = []
        for k in range(n + 1):
            e = top * k / n
            terms.append((ball(e).exp(), 1 - rec.delta_ball(e)))
        for k in range(points + 1):
            a = fmpq(k, points)
            best_lo, best_hi = fmpq(0), fmpq(0)
            for ee, one_minus_d in terms:
                for v in (one_minus_d - ee * a, (one_minus_d - a) / ee):
                    v_lo, v_hi = _outward(v)
                    best_lo, best_hi = max(best_lo, v_lo), max(best_hi, v_hi)
            xs.append(a)
            lo.append(best_lo)
            hi.append(best_hi)
    return Band(tuple(xs), tuple(lo), tuple(hi))


def decimals(band: Band, i: int, digits: int = 6) -> tuple[str, str]:
    """The i-th point's band as decimals rounded outward (lower down, upper up)."""
    return lower_decimal(band.lo[i], digits), upper_decimal(band.hi[i], digits)
