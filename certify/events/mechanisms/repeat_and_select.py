"""RepeatAndSelectDpEvent(event, mean, shape): run the event K times (K random) and release only the best run.

Papernot, Steinke (2022), "Hyperparameter tuning with Rényi differential privacy", arXiv:2110.03620, for an inner
release Q with RDP curve eps(.) (here the inner ledger's certified bound: the sum of its mechanisms' bounds):

* Thm 2, K truncated negative binomial TNB(eta, gamma) (shape eta >= 0: eta = 0 logarithmic, eta = 1 geometric),
  for every lambda > 1 and every lambda_hat >= 1:
      eps'(lambda) = eps(lambda) + (1 + eta) ((1 - 1/lambda_hat) eps(lambda_hat) + log(1/gamma)/lambda_hat)
                     + log(E[K]) / (lambda - 1);
* Thm 6, K Poisson of mean mu (shape = inf): if Q is also (eps_hat, delta_hat)-DP with
  eps_hat = log(1 + 1/(lambda - 1)), then eps'(lambda) = eps(lambda) + mu delta_hat + log(mu)/(lambda - 1).
  delta_hat: 0 when Q is pure with epsilon <= eps_hat (decided in balls), else the conversion (C') of
  :mod:`certify.renyi` (Balle20 Thm 21) of eps(lambda_hat) at eps_hat, capped at 1.

lambda_hat is chosen by floats on a fixed grid (any choice is valid: the bound holds for each; the checker makes
the same choice). gamma is the TNB parameter with mean E[K] = eta (1/gamma - 1)/(1 - gamma^eta) (eta > 0;
(1/gamma - 1)/log(1/gamma) at eta = 0; PS22 Def. 1), which decreases in gamma: we use a rational gamma_lo whose
mean is certified (balls) to be >= the event's mean, so gamma_lo <= gamma and log(1/gamma_lo) >= log(1/gamma).
mean = 1 with a finite shape: K >= 1 and E[K] = 1 force K = 1, the inner release itself.
The certificate records the inner ledger as the canonical JSON of its inputs (:func:`certify.events.ledger.ledger_inputs`)
in ``event[i].inner``. Inner (epsilon, delta) events are refused (the theorems take an RDP curve). UPPER BOUND only.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache

from ...balls import InputError, arb, ball, exact, exact_str, float_of, fmpq, require_in
from ...renyi import delta_of_rdp
from ...event_tree import EventView
from .base import Mechanism

MAX_MEAN = fmpq(10) ** 15
MAX_SHAPE = fmpq(1000)
INF = "inf"


def _grid() -> tuple:
    out = [fmpq(64 + j, 64) for j in range(1, 65)] + [fmpq(32 + j, 16) for j in range(1, 225)]
    out += [fmpq(32 + j, 2) for j in range(1, 97)] + [fmpq(a) for a in range(65, 257)]
    return tuple(out)


#: the candidate orders lambda_hat (exact) and their floats
GRID = _grid()
_GRID_F = tuple(float_of(a) for a in GRID)


def tnb_mean(gamma: arb, shape: fmpq) -> arb:
    """E[K] of TNB(shape, gamma) (PS22 Def. 1), a ball; gamma in (0, 1)."""
    if shape == 0:
        return (1 / gamma - 1) / (-gamma.log())
    return ball(shape) * (1 / gamma - 1) / (1 - (ball(shape) * gamma.log()).exp())


def _tnb_mean_float(g: float, shape: float) -> float:
    if shape == 0:
        return (1 / g - 1) / -math.log(g)
    return shape * (1 / g - 1) / -math.expm1(shape * math.log(g))


@lru_cache(maxsize=256)
def gamma_lower(mean: fmpq, shape: fmpq) -> fmpq:
    """A rational gamma_lo <= gamma with E[K](gamma_lo) >= mean certified in balls (the mean decreases in gamma)."""
    if shape == 1:
        return 1 / mean  # geometric: E[K] = 1/gamma exactly
    lo, hi = 0.0, 1.0
    m, s = float_of(mean), float_of(shape)
    for _ in range(200):  # float bisection: a guess only
        mid = (lo + hi) / 2
        if mid <= lo or mid >= hi:
            break
        if _tnb_mean_float(mid, s) < m:
            hi = mid
        else:
            lo = mid
    g0 = fmpq(max(int(lo * 2**60), 1), 2**60)
    step = fmpq(1, 2**50)
    for _ in range(200):  # lower gamma by a relative step growing 4x until the balls decide
        g = g0 * (1 - step)
        if tnb_mean(ball(g), shape).lower() >= ball(mean).upper():
            return g
        step = min(step * 4, fmpq(1, 2))
    raise InputError("mean", f"could not bracket the truncated negative binomial's gamma for mean {exact_str(mean)}")  # pragma: no cover


class RepeatAndSelect(Mechanism):
    CLASS = "RepeatAndSelectDpEvent"
    FIELDS = ("event", "mean", "shape")
    PARAMS = ("mean", "shape", "inner")
    EQUATION = "PS22 Thm 2 (truncated negative binomial) / Thm 6 (Poisson); upper bound"
    UPPER_ONLY = "repeat-and-select is bounded by Papernot-Steinke 2022 Thms 2/6: an upper bound only"
    NESTED = True

    # ---- reading ---------------------------------------------------------------------------------
    @classmethod
    def _check(cls, mean, shape, inner, where: str) -> None:
        require_in(f"{where}.mean", mean, 1, MAX_MEAN, "[]")
        if shape != INF:
            require_in(f"{where}.shape", shape, 0, MAX_SHAPE, "[]", shown="[0, 1000] or inf (Poisson)")
        for m, _ in inner.entries:
            if m.extra_delta != 0:
                raise InputError(f"{where}.event", f"RepeatAndSelectDpEvent of an {m.CLASS}: the theorems of PS22 take an RDP curve (no delta)")

    @classmethod
    def read_nested(cls, view, relation: str) -> RepeatAndSelect:
        from ..ledger import ledger_of

        view.check_fields(cls.FIELDS)
        mean, mean_note = view.number("mean")
        raw = view.field("shape")
        if (isinstance(raw, float) and math.isinf(raw) and raw > 0) or (isinstance(raw, str) and raw.strip().lower() in ("inf", "infinity")):
            shape, shape_note = INF, None
        else:
            shape, shape_note = view.number("shape")
        inner = ledger_of(EventView(view.field("event"), f"{view.where}.event").event, relation, f"{view.where}.event")
        cls._check(mean, shape, inner, view.where)
        notes = tuple(sorted((k, n) for k, n in (("mean", mean_note), ("shape", shape_note)) if n))
        return cls((("mean", mean), ("shape", shape), ("inner", inner)), notes)

    @classmethod
    def from_texts(cls, texts: dict, where: str) -> RepeatAndSelect:
        from ..ledger import ledger_from_inputs

        mean = exact(texts.get("mean"), f"{where}.mean")
        shape = INF if texts.get("shape") == INF else exact(texts.get("shape"), f"{where}.shape")
        raw = texts.get("inner")
        try:
            inputs = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            inputs = None
        if not isinstance(inputs, dict) or not all(isinstance(v, str) for v in inputs.values()):
            raise InputError(f"{where}.inner", "must be the JSON object of the inner ledger's recorded inputs")
        inner = ledger_from_inputs(inputs)
        cls._check(mean, shape, inner, where)
        return cls((("mean", mean), ("shape", shape), ("inner", inner)))

    def texts(self) -> dict:
        from ..ledger import ledger_inputs

        shape = self["shape"]
        return {
            "mean": exact_str(self["mean"]),
            "shape": INF if shape == INF else exact_str(shape),
            "inner": json.dumps(ledger_inputs(self["inner"]), sort_keys=True, separators=(",", ":")),
        }

    def describe(self) -> str:
        inner = " + ".join(f"{c} x {m.describe()}" for m, c in self["inner"].entries)
        return f"{self.CLASS}(mean={exact_str(self['mean'])}, shape={self.texts()['shape']}, event=[{inner}])"

    @property
    def relation(self) -> str:
        return self["inner"].relation

    # ---- the inner curve ---------------------------------------------------------------------------
    def _inner(self, alpha: fmpq) -> arb:
        out = arb(0)
        for m, c in self["inner"].entries:
            out = out + c * m.rdp(alpha, self.relation)
        return out

    def _inner_floats(self, alphas):
        import numpy as np

        out = np.zeros(len(alphas))
        for m, c in self["inner"].entries:
            out = out + float(c) * np.asarray(m.rdp_floats(alphas, self.relation), dtype=float)
        return out

    def _inner_pure(self) -> arb | None:
        out = arb(0)
        for m, c in self["inner"].entries:
            e = m.pure_epsilon(self.relation)
            if e is None:
                return None
            out = out + c * e
        return out

    # ---- the bound ---------------------------------------------------------------------------------
    def rdp(self, alpha, relation):
        mean, shape = self["mean"], self["shape"]
        base = self._inner(alpha)
        log_mean = ball(mean).log() / ball(alpha - 1)
        if shape != INF:
            if mean == 1:
                return base
            lh = _tnb_order(self)
            L = -ball(gamma_lower(mean, shape)).log()
            c = (1 + ball(shape)) * ((1 - 1 / ball(lh)) * self._inner(lh) + L / ball(lh))
            return base + c + log_mean
        eps_hat = (ball(alpha) / ball(alpha - 1)).log()
        pure = self._inner_pure()
        if pure is not None and pure.upper() <= eps_hat.lower():
            d = arb(0)
        else:
            lh = _poisson_order(self, alpha)
            d = delta_of_rdp(self._inner(lh), lh, eps_hat).min(arb(1))
        return base + ball(mean) * d + log_mean

    def rdp_floats(self, alphas, relation):
        import numpy as np

        mean, shape = self["mean"], self["shape"]
        base = self._inner_floats(alphas)
        lm = math.log(float_of(mean)) / (alphas - 1)
        if shape != INF:
            if mean == 1:
                return base
            return base + _tnb_constant_float(self) + lm
        return base + float_of(mean) * np.array([_poisson_delta_float(self, float(a))[0] for a in alphas]) + lm

    def work_seconds(self, alpha: fmpq, prec: int) -> float:
        return sum(m.work_seconds(alpha, prec) + m.work_seconds(fmpq(256), prec) for m, _ in self["inner"].entries) + 1e-3


@lru_cache(maxsize=256)
def _grid_curve(mech: RepeatAndSelect):
    import numpy as np

    return mech._inner_floats(np.array(_GRID_F))


@lru_cache(maxsize=256)
def _tnb_choice(mech: RepeatAndSelect) -> tuple:
    import numpy as np

    g = np.array(_GRID_F)
    L = -math.log(float_of(gamma_lower(mech["mean"], mech["shape"])))
    score = (1 - 1 / g) * _grid_curve(mech) + L / g
    score = np.where(np.isfinite(score), score, np.inf)
    i = int(np.argmin(score))
    return GRID[i], (1 + float_of(mech["shape"])) * float(score[i])


def _tnb_order(mech) -> fmpq:
    return _tnb_choice(mech)[0]


def _tnb_constant_float(mech) -> float:
    return _tnb_choice(mech)[1]


@lru_cache(maxsize=4096)
def _poisson_delta_float(mech: RepeatAndSelect, alpha: float) -> tuple:
    """(delta_hat estimate, index of its order in GRID) at eps_hat = log(alpha/(alpha-1)), by floats."""
    import numpy as np

    g = np.array(_GRID_F)
    eh = math.log(alpha / (alpha - 1))
    pure = mech._inner_pure()
    if pure is not None and float(pure.mid()) < eh * (1 - 1e-9):
        return 0.0, 0
    with np.errstate(over="ignore", invalid="ignore"):
        logd = (g - 1) * (_grid_curve(mech) - eh + np.log1p(-1 / g)) - np.log(g)
    logd = np.where(np.isnan(logd), np.inf, logd)
    i = int(np.argmin(logd))
    return float(min(1.0, math.exp(min(logd[i], 0.0)))), i


def _poisson_order(mech, alpha: fmpq) -> fmpq:
    return GRID[_poisson_delta_float(mech, float_of(alpha))[1]]
