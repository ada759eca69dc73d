"""The certified Rényi accountant of an event ledger: choose the order by floats, bound in balls, certify.

For each distinct mechanism the float RDP curve (its ``rdp_floats``) is evaluated on :data:`ORDER_GRID` (or the
caller's orders), composed (sum of count x curve), converted with the float forms of :mod:`certify.renyi`, and the
order with the best float estimate is recorded exactly as the witness ``alpha``; the certificate is then the ball
evaluation of :mod:`certify.events.certificates` at that order (escalating the precision while a claim is
undecided). Floats choose, balls bound: a poor choice only loosens the bound.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from functools import lru_cache

from ..balls import InputError, ball_endpoints, escalate, exact_str, float_of, fmpq, log_float
from ..certificate import MAX_TEXT, Certificate
from ..poisson.rdp import COARSE
from ..provenance import FloatNote
from .certificates import FLAGS, KIND, PARSERS, check_nesting, evaluate, headline, parse_order
from .ledger import Ledger, ledger_inputs
from .mechanisms.base import Mechanism
from .mechanisms.gaussian import Gaussian
from .mechanisms.laplace import Laplace
from .mechanisms.tree_aggregation import TreeAggregation
from .mechanisms.zcdp import ZCDp


class Orders:
    """A set of candidate orders: exact rationals (the recordable choices) and their floats (computed once)."""

    __slots__ = ("exact", "floats", "_array", "_constants")

    def __init__(self, exact, floats=None):
        self.exact = tuple(exact)
        self.floats = tuple(float_of(a) for a in self.exact) if floats is None else tuple(floats)
        self._array = None
        self._constants = None

    def array(self):
        """The floats as a numpy array (made once)."""
        if self._array is None:
            import numpy as np

            self._array = np.array(self.floats)
        return self._array

    def constants(self):
        """The per-order constants of the float conversion (made once): a - 1, 1/(a - 1),
        c_eps = log(1 - 1/a) - log(a)/(a - 1) and c_delta = (a - 1) log(1 - 1/a) - log a, so that (C) of
        :mod:`certify.renyi` is R + c_eps - log(delta)/(a - 1) and the log of (C') is (a - 1)(R - eps) + c_delta."""
        if self._constants is None:
            import numpy as np

            a = self.array()
            am1 = a - 1
            l1 = np.log1p(-1 / a)
            self._constants = (am1, 1 / am1, l1 - np.log(a) / am1, am1 * l1 - np.log(a))
        return self._constants

    def __len__(self) -> int:
        return len(self.exact)


def _fine() -> tuple:
    out = {fmpq(32 + j, 32) for j in range(1, 33)}  # (1, 2] by 1/32
    out |= {fmpq(32 + j, 16) for j in range(1, 225)}  # (2, 16] by 1/16
    out |= {fmpq(64 + j, 4) for j in range(1, 193)}  # (16, 64] by 1/4
    out |= {fmpq(a) for a in range(65, 257)} | {fmpq(a) for a in COARSE}
    out |= {fmpq(a, 10) for a in range(11, 110)}  # dp_accounting's default orders 1.1 .. 10.9
    return tuple(sorted(out))


def _coarse() -> tuple:
    out = {fmpq(a, 10) for a in range(11, 110)} | {fmpq(a) for a in range(11, 64)} | {fmpq(a) for a in range(64, 257, 8)}
    return tuple(sorted(out | {fmpq(a) for a in COARSE}))


#: every order the float choice may pick (each one where every mechanism has a float estimate) ...
ORDER_GRID = Orders(_fine())
#: ... scanned in two stages: these first (about dp_accounting's default orders), then ORDER_GRID near the best
FIRST_STAGE = Orders(_coarse())
#: the integer orders of ORDER_GRID: the only candidates when more than MAX_FRACTIONAL_HEAVY mechanisms would need a
#: quadrature at a fractional order (the Poisson-subsampled Gaussian: 3-5 ms each, for the producer and the checker)
INTEGER_STAGE = Orders(a for a in _fine() if a.q == 1)
MAX_FRACTIONAL_HEAVY = 256


def snap_orders(orders) -> Orders:
    """A caller's orders (dp_accounting's floats) as exact rationals on a 2^-20 grid, kept where 1 < a <= 4096 and
    the Poisson float estimate exists (a <= 256, or an order of the coarse grid)."""
    out = []
    for a in orders:
        x = float(a)
        if not math.isfinite(x) or not 1 < x <= 4096:
            continue
        q = fmpq(round(x * 2**20), 2**20)
        if q > 1 and (q <= 256 or (q.q == 1 and int(q.p) in COARSE)):
            out.append(q)
    if not out:
        raise InputError("orders", "no usable order: give orders in (1, 256] or integers of the coarse grid up to 4096")
    return Orders(sorted(set(out)))


@lru_cache(maxsize=8192)
def _curve(mech, relation: str, orders: Orders, fine: bool = False):
    """The float curve of ``mech`` on ``orders`` (+inf where undefined); called under the
    ``np.errstate(all="ignore")`` (of :func:`_scores`): an infinite or undefined float estimate is a choice, never a bound."""
    import numpy as np

    try:
        curve = np.asarray((mech.rdp_floats_fine if fine else mech.rdp_floats)(orders.array(), relation), dtype=float)
    except (ZeroDivisionError, OverflowError):  # a parameter whose float is 0 or inf (say a noise of 1e-400)
        raise InputError(
            "EVENT.json",
            f"{mech.CLASS}: a parameter is too extreme for the float choice of the order (its binary float is 0 or infinite); "
            "admissible: noise multipliers and sampling probabilities of at least 1e-300 and at most 1e300",
        ) from None
    return np.where(np.isnan(curve), np.inf, curve)


def _scores(ledger: Ledger, query: str, target: fmpq, orders: Orders, fine: bool):
    """The float estimate of epsilon (at delta) or log delta (at epsilon) at each order: (C) / (C') of
    :mod:`certify.renyi` with the per-order constants of :meth:`Orders.constants` (a choice only; +inf where not finite)."""
    import numpy as np

    with np.errstate(all="ignore"):  # (overflow, 0 * inf, log 0 in a float estimate: +inf scores, never a bound)
        return _raw_scores(ledger, query, target, orders, fine, np)


def _raw_scores(ledger: Ledger, query: str, target: fmpq, orders: Orders, fine: bool, np, finite: bool = True):
    """:func:`_scores` under the caller's ``np.errstate(all="ignore")``; ``finite=False``: the scores as computed,
    for curves that are never NaN nor -inf (ELEMENTWISE: every score is then finite or +inf, as ``finite`` makes it)."""

    (m0, c0), *rest = ledger.entries
    R = float(c0) * _curve(m0, ledger.relation, orders, fine)
    for m, c in rest:
        R += float(c) * _curve(m, ledger.relation, orders, fine)
    am1, inv, c_eps, c_delta = orders.constants()
    if query == "target_delta":
        score = R + c_eps - _log_delta(ledger, target) * inv
    else:
        score = am1 * (R - float_of(target)) + c_delta
    return np.where(np.isfinite(score), score, np.inf) if finite else score


def _log_delta(ledger: Ledger, target: fmpq) -> float:
    """The float log of the delta left to the Rényi curve, (delta - extra) / (1 - extra) with extra the float
    1 - prod_i (1 - delta_i)^count_i of the (epsilon, delta) events (-inf when none is left): a choice only."""
    extra = 1.0 - math.prod((1.0 - float_of(m.extra_delta)) ** float(c) for m, c in ledger.entries if m.extra_delta)
    d = ((float_of(target) - extra) / (1 - extra) if extra < 1 else 0.0) if extra > 0 else None  # (1.0: every score +inf)
    return math.log(d) if d is not None and d > 0 else (log_float(target) if d is None else -math.inf)


@lru_cache(maxsize=1024)
def _window(lo: int, hi: int) -> Orders:
    """The orders ORDER_GRID[lo:hi] (one object per window: its arrays and constants are made once)."""
    return Orders(ORDER_GRID.exact[lo:hi], ORDER_GRID.floats[lo:hi])


def choose_order(ledger: Ledger, query: str, target: fmpq, orders: Orders | None = None) -> fmpq:
    """The order minimising the float estimate of epsilon (at delta) or of delta (at epsilon): a choice only.

    Default: the orders of FIRST_STAGE with each mechanism's cheap estimate, then the orders of ORDER_GRID within 1
    (10% above 10) of the best with the finer estimates (the Poisson-subsampled Gaussian's defining integral at
    fractional orders), the best of all kept. Given ``orders``: those only, with the cheap estimates."""
    if orders is None and all(type(m) in LINEAR for m, _ in ledger.entries):  # (floats only, no numpy)
        best = _choose_linear(ledger, query, target)
        if best is not None:
            return best
    import numpy as np

    with np.errstate(all="ignore"):  # (overflow, 0 * inf, log 0 in a float estimate: +inf scores, never a bound)
        return _choose(ledger, query, target, orders, np)


def _choose(ledger: Ledger, query: str, target: fmpq, orders: Orders | None, np) -> fmpq:
    if orders is None and all(type(m) in ELEMENTWISE for m, _ in ledger.entries):
        return _choose_on_one_grid(ledger, query, target, np)
    first = orders or FIRST_STAGE
    heavy = sum(1 for m, _ in ledger.entries if type(m).rdp_floats_fine is not Mechanism.rdp_floats_fine)
    if orders is None and heavy > MAX_FRACTIONAL_HEAVY:  # many quadratures at a fractional order: integer orders only
        first = INTEGER_STAGE
    score = _raw_scores(ledger, query, target, first, False, np)
    i = int(np.argmin(score))
    best, best_score = first.exact[i], float(score[i])
    if orders is not None or first is INTEGER_STAGE:
        return best
    b = first.floats[i]
    span = max(1.0, 0.1 * b)
    grid = ORDER_GRID.array()
    lo, hi = int(np.searchsorted(grid, b - span)), int(np.searchsorted(grid, b + span, side="right"))
    near = _window(lo, hi)
    if len(near):
        fine = _raw_scores(ledger, query, target, near, True, np)
        j = int(np.argmin(fine))
        if float(fine[j]) < best_score:
            best = near.exact[j]
    return best


#: the mechanisms whose float curve is a closed form evaluated element by element (one float per order, whatever the
#: other orders of the array) and the same for the cheap and the fine estimate: their scores on ORDER_GRID, read at
#: FIRST_STAGE's orders and then in the window, are the scores :func:`_choose`'s two stages compute
ELEMENTWISE = frozenset({Gaussian, Laplace, ZCDp, TreeAggregation})


def _choose_on_one_grid(ledger: Ledger, query: str, target: fmpq, np) -> fmpq:
    """:func:`_choose`'s two stages (FIRST_STAGE, then ORDER_GRID near its best) from one evaluation of the scores on
    ORDER_GRID: the same order (the same floats, the same first minimum), half the numpy calls."""
    full = _raw_scores(ledger, query, target, ORDER_GRID, False, np, finite=False)
    first = full[_first_index(np)]
    i = int(first.argmin())
    best, best_score = FIRST_STAGE.exact[i], float(first[i])
    b = FIRST_STAGE.floats[i]
    span = max(1.0, 0.1 * b)
    grid = ORDER_GRID.floats  # (bisect on the sorted floats: numpy's searchsorted, left and right)
    lo, hi = bisect_left(grid, b - span), bisect_right(grid, b + span)
    if hi > lo:
        j = lo + int(np.argmin(full[lo:hi]))
        if float(full[j]) < best_score:
            best = ORDER_GRID.exact[j]
    return best


# --------------------------------------------------------------------------------------------
# alpha-linear ledgers: the same choice from a few scores
# --------------------------------------------------------------------------------------------
#: the mechanisms whose float curve is alpha-linear, rdp(a) = x + s a with x, s >= 0 (ZCDp: xi + rho a; the tree's
#: a depth / (2 z^2) and the Gaussian's a / (2 z^2)): :func:`_linear_term` evaluates it at one order, float for float
LINEAR = frozenset({Gaussian, ZCDp, TreeAggregation})
#: the most scores :func:`_choose_linear` computes before leaving the choice to :func:`_choose_on_one_grid`
LINEAR_MAX_SCORES = 48
_U40 = 2.0**-40


def _linear_term(m, c: int):
    """(float(c), kind, p, q) whose :func:`_linear_score` term is ``float(c) * curve`` of :func:`_raw_scores` at one
    order, bit for bit: the same IEEE operations in the same order as the mechanism's ``rdp_floats`` (numpy's float64
    add, multiply and divide are correctly rounded, as Python's are; tested against the arrays on every order).
    None when a float is not finite or a divisor is 0 (the arrays' inf and NaN: the caller then takes the arrays)."""
    if type(m) is ZCDp:
        kind, p, q = 0, float_of(m["xi"]), float_of(m["rho"])
    elif type(m) is TreeAggregation:
        z = float_of(m["noise_multiplier"])
        kind, p, q = 1, m.depth(), 2 * z * z
    else:
        z = float_of(m["noise_multiplier"])
        kind, p, q = 2, 0, 2 * z * z
    if not (math.isfinite(p) and math.isfinite(q)) or (kind and q == 0):
        return None
    return float(c), kind, p, q


def _linear_R(terms, a: float) -> float:
    """R of :func:`_raw_scores` at the order ``a``: sum_i float(c_i) * curve_i(a), left to right, float for float."""
    R = None
    for c, kind, p, q in terms:
        v = c * ((p + q * a) if kind == 0 else ((a * p) / q if kind == 1 else a / q))
        R = v if R is None else R + v
    return R


def _linear_score(terms, query: str, k: int, a: float, K, t: float) -> float:
    """:func:`_raw_scores` at ORDER_GRID's k-th order ``a`` (float for float): ``K`` the grid's constants as lists,
    ``t`` the float log delta (target_delta) or epsilon (target_epsilon)."""
    R = _linear_R(terms, a)
    am1, inv, c_eps, c_delta = K
    if query == "target_delta":
        return R + c_eps[k] - t * inv[k]
    return am1[k] * (R - t) + c_delta[k]


@lru_cache(maxsize=1)
def _grid_lists():
    """ORDER_GRID's constants as Python lists, their largest magnitudes, and FIRST_STAGE's positions in it (made once)."""
    import numpy as np

    am1, inv, c_eps, c_delta = ORDER_GRID.constants()
    a = ORDER_GRID.array()
    K = tuple(x.tolist() for x in (am1, inv, c_eps, c_delta))
    l1 = np.log1p(-1 / a)
    bounds = {
        "inv": float(np.max(inv)),
        "am1": float(np.max(am1)),
        "l1": float(np.max(np.abs(l1))),
        "la": float(np.max(np.abs(np.log(a) / am1))),
        "log_a": float(np.max(np.log(a))),
        "c_delta": float(np.max(np.abs(c_delta))),
    }
    return K, bounds, _first_index(np).tolist()


def _choose_linear(ledger: Ledger, query: str, target: fmpq) -> fmpq | None:
    """:func:`_choose_on_one_grid`'s order for a ledger of alpha-linear mechanisms (:data:`LINEAR`), from the scores at
    a few orders only (None: not decided within LINEAR_MAX_SCORES scores, or a float not finite: the caller scans).

    Why the same order. Let R(a) = X + P a be the exact real line through the floats (X = sum c x, P = sum c s >= 0,
    the floats of :func:`_linear_term` read as reals) and, with the float t of the query read as a real,
        target_delta:    F(a) = R(a) + log(1 - 1/a) - log(a)/(a - 1) - t/(a - 1),
            F'(a) = P + (log a - t')/(a - 1)^2 with t' = -t: its sign is that of P (a-1)^2 + log a - t', increasing;
        target_epsilon:  F(a) = (a - 1)(R(a) - t) + (a - 1) log(1 - 1/a) - log a,
            F'(a) = R(a) - t + P (a - 1) + log(1 - 1/a), increasing.
    Either way F decreases and then increases on (1, inf): it is quasiconvex, F(y) <= max(F(x), F(z)) for x < y < z.
    The float score s_k at ORDER_GRID's k-th order a_k is within E of F(a_k) for every k (``bound`` below: each
    float operation errs by at most 2^-53 of its result, numpy's log and log1p by a few units in the last place, the
    sum of n >= 1 nonnegative terms by (n + 4) 2^-53 of it; E takes 2^-40 with factors 16, a margin of 2^13 over
    all of them; R is largest at the largest order, the constants are bounded by their largest magnitudes on the grid).
    Among consecutive positions [lo, hi) of a sorted list of orders, scan [l, r] with m the least score in it; if
    l == lo or s_l > m + 2E, every j < l has s_j > m: m = s_q for some q in (l, r], and F(a_l) >= s_l - E > m + E >=
    F(a_q) with a_l < a_q, so quasiconvexity gives F(a_j) >= F(a_l) (else F(a_l) > max(F(a_j), F(a_q))), and s_j >=
    F(a_j) - E >= s_l - 2E > m. The same on the right. So the first least score of [l, r] is the first least score of
    [lo, hi): numpy's argmin. FIRST_STAGE's scores (its positions in ORDER_GRID), then the window's, as
    :func:`_choose_on_one_grid` takes them: the same order."""
    terms = []
    for m, c in ledger.entries:
        term = _linear_term(m, c)
        if term is None:
            return None
        terms.append(term)
    K, B, first_pos = _grid_lists()
    floats = ORDER_GRID.floats
    t = _log_delta(ledger, target) if query == "target_delta" else float_of(target)
    if not math.isfinite(t):
        return None
    top = len(floats) - 1
    r_max = _linear_R(terms, floats[top])  # (R is nondecreasing in a: its largest value on the grid, up to rounding)
    n = len(terms)
    if query == "target_delta":
        bound = (n + 16) * abs(r_max) + 16 * (B["l1"] + B["la"] + B["inv"] + abs(t) * B["inv"] + 1)
    else:
        bound = (n + 16) * B["am1"] * (abs(r_max) + abs(t)) + 16 * (B["c_delta"] + B["log_a"] + 3)
    gap = 2 * (2 * _U40 * bound)  # (2E, with E = 2^-40 bound doubled for the rounding of r_max and of E itself)
    if not math.isfinite(gap):
        return None
    memo: dict = {}

    def score(k: int) -> float:
        v = memo.get(k)
        if v is None:
            v = memo[k] = _linear_score(terms, query, k, floats[k], K, t)
        return v

    # the first stage: FIRST_STAGE's positions, from the order where F' changes sign (a float guess: any start is sound)
    guess = _linear_guess(terms, query, t)
    i0 = min(bisect_left(FIRST_STAGE.floats, guess), len(first_pos) - 1)
    found = _scan(lambda i: score(first_pos[i]), i0, 0, len(first_pos), gap)
    if found is None or len(memo) > LINEAR_MAX_SCORES:
        return None
    i, best_score = found
    best = FIRST_STAGE.exact[i]
    b = FIRST_STAGE.floats[i]
    span = max(1.0, 0.1 * b)
    lo, hi = bisect_left(floats, b - span), bisect_right(floats, b + span)
    if hi > lo:
        found = _scan(score, min(max(first_pos[i], lo), hi - 1), lo, hi, gap)
        if found is None or len(memo) > 2 * LINEAR_MAX_SCORES:
            return None
        j, s = found
        if s < best_score:
            best = ORDER_GRID.exact[j]
    return best


def _scan(score, start: int, lo: int, hi: int, gap: float):
    """(position, score) of the first least score among positions [lo, hi) of ``score`` (a quasiconvex function up
    to gap / 2, :func:`_choose_linear`), scanning from ``start`` until each end of the scanned run is an end of
    [lo, hi) or exceeds the least score by more than ``gap``; None beyond LINEAR_MAX_SCORES scores or at a score
    that is not finite."""
    l = r = start
    m = sl = sr = score(start)
    if not -math.inf < m < math.inf:
        return None
    while True:
        moved = False
        while l > lo and not sl > m + gap:
            l -= 1
            sl = score(l)
            if not -math.inf < sl < math.inf:
                return None
            if sl < m:
                m = sl
            moved = True
        while r < hi - 1 and not sr > m + gap:
            r += 1
            sr = score(r)
            if not -math.inf < sr < math.inf:
                return None
            if sr < m:
                m = sr
            moved = True
        if not moved:
            break
        if r - l > LINEAR_MAX_SCORES:
            return None
    k = l
    while score(k) != m:  # (the first position of the least score: numpy's argmin)
        k += 1
    return k, m


def _linear_guess(terms, query: str, t: float) -> float:
    """Where the F' of :func:`_choose_linear` changes sign, roughly (a few Newton steps in floats; only where the scan
    starts)."""
    P = sum(c * (q if kind == 0 else (p / q if kind == 1 else 1 / q)) for c, kind, p, q in terms)
    X = sum(c * p for c, kind, p, q in terms if kind == 0)
    a = 1 + math.sqrt(-t / P) if query == "target_delta" and P > 0 and t < 0 else 2.0  # (the root without log a)
    try:
        for _ in range(12):
            if query == "target_delta":  # P (a-1)^2 + log a + t = 0
                f, d = P * (a - 1) ** 2 + math.log(a) + t, 2 * P * (a - 1) + 1 / a
            else:  # X + P a - t + P (a - 1) + log(1 - 1/a) = 0
                f, d = X + P * (2 * a - 1) - t + math.log1p(-1 / a), 2 * P + 1 / (a * (a - 1))
            step = f / d
            a = min(max(a - step, 1.0 + 1 / 64), 4096.0)
            if abs(step) < 0.01 * a:
                break
    except (OverflowError, ValueError, ZeroDivisionError):
        return 2.0
    return a if math.isfinite(a) else 2.0


@lru_cache(maxsize=1)
def _first_index(np):
    """Where FIRST_STAGE's orders sit in ORDER_GRID (FIRST_STAGE is a subset of it), made once."""
    position = {a: i for i, a in enumerate(ORDER_GRID.exact)}
    return np.array([position[a] for a in FIRST_STAGE.exact], dtype=np.intp)


def certify_events(
    ledger: Ledger,
    *,
    delta=None,
    epsilon=None,
    order=None,
    orders: Orders | None = None,
    notes: dict | None = None,
    bound: str | None = None,
    chosen: fmpq | None = None,
) -> Certificate:
    """Certificate ``events/rdp`` of ``ledger`` for one query: ``delta`` (epsilon at delta; 0: pure epsilon),
    ``epsilon`` (delta at epsilon) or ``order`` (the RDP at that order). ``orders``: the candidate orders of the
    choice (:func:`snap_orders`; default the two stages of :func:`choose_order`). ``notes``: provenance notes of the
    query (``{"target_delta.note": ...}``). ``bound`` (exact text): the headline claim states this bound instead of the
    computed one (a certificate is issued only when the balls prove it). ``chosen``: the order :func:`choose_order`
    chose for this very query (:func:`answer_events` returns it), so that it is not chosen twice."""
    query, target, inputs, alpha = _prepare(ledger, delta, epsilon, order, orders, chosen)

    def compute(prec):
        return evaluate(ledger, query, target, alpha, bound), prec

    try:
        ev, prec = escalate(compute, what=f"the event accountant at alpha = {exact_str(alpha or target)}")
    except InputError as err:  # the evaluator names the recorded field; the caller knows the option
        raise InputError(FLAGS.get(err.parameter, err.parameter), err.message) from None
    inputs[query] = exact_str(target)
    inputs.update(notes or {})
    witnesses = {"bound": ev.claim_named("bound").rhs}
    if alpha is not None:
        witnesses["alpha"] = exact_str(alpha)
    return Certificate(KIND, inputs, ev, witnesses, None, prec)


def _texts_fit(ledger: Ledger) -> bool:
    """True when no text :func:`ledger_inputs` would record can exceed MAX_TEXT characters, decided without
    writing them (False: not known; the caller then writes them and checks each, as :func:`_prepare` always did).

    The texts are ``neighboring`` and per entry its class, its count (at most 10^18: 19 digits), its parameters'
    texts and its notes (already text). A parameter of a mechanism class that records :meth:`Mechanism.texts`'s
    ``exact_str`` of an fmpq p/q (TreeAggregation's too, and its step counts, integers in [0, 10^18], joined by commas:
    at most 20 characters each) has at most dp(p) + 1 + dp(q) characters with dp(n) = the digits of |n| plus a
    sign, and |n| < 2^b (b its bit length) has at most floor(b log10 2) + 1 <= b * 30103 // 100000 + 1 digits (log10 2
    < 0.30103); any other class or value: not known here."""
    if len(ledger.relation) > MAX_TEXT:
        return False  # pragma: no cover - a relation is one of three names
    for m, _ in ledger.entries:
        if len(m.CLASS) > MAX_TEXT:
            return False  # pragma: no cover - a class name is short
        for k, v in m.params:
            if type(m) is TreeAggregation and k == "step_counts":  # (its texts(): step counts of at most 19 digits, commas between)
                if 20 * len(v) > MAX_TEXT:
                    return False
            elif type(v) is not fmpq or (int(v.p).bit_length() + int(v.q).bit_length()) * 30103 // 100000 + 4 > MAX_TEXT:
                return False
        if type(m).texts is not Mechanism.texts and type(m) is not TreeAggregation:
            return False
        for _, n in m.notes:
            if (FloatNote.MAX_LENGTH if type(n) is FloatNote else len(n)) > MAX_TEXT:
                return False
    return True


def _prepare(ledger: Ledger, delta, epsilon, order, orders: Orders | None, chosen: fmpq | None, record: bool = True):
    """(query, target, the ledger's inputs, alpha) of :func:`certify_events`: every refusal of the query and the
    ledger before the evaluation (InputError), and the order's float choice (``chosen`` when given). ``record=False``
    (the answer path, which records nothing): the inputs are written only when :func:`_texts_fit` cannot tell that
    each fits (None otherwise), the same refusals either way."""
    given = [(q, v) for q, v in (("target_delta", delta), ("target_epsilon", epsilon), ("order", order)) if v is not None]
    if len(given) != 1:
        raise InputError("--delta", "give exactly one of --delta, --epsilon, --order")
    query, raw = given[0]
    target = PARSERS[query](raw, FLAGS[query])
    check_nesting(ledger)  # before the order's float choice, whose work doubles with each level
    inputs = ledger_inputs(ledger) if record or not _texts_fit(ledger) else None
    for name, text in (inputs or {}).items():  # certify verify reads texts of at most MAX_TEXT characters
        if len(text) > MAX_TEXT:
            raise InputError("event", f"{name} would record {len(text)} characters (a certificate records at most {MAX_TEXT}): record less")
    pure = query == "target_delta" and target == 0
    if pure:
        for i, (m, _) in enumerate(ledger.entries):
            if m.pure_epsilon(ledger.relation) is None or m.extra_delta != 0:
                raise InputError("--delta", f"0 asks for pure DP, but event[{i}] {m.CLASS} is not a pure mechanism: give a delta in (0, 1)")
    alpha = None
    if query != "order" and not pure:
        alpha = chosen if chosen is not None else choose_order(ledger, query, target, orders)
    return query, target, inputs, alpha


def answer_events(ledger: Ledger, *, delta=None, epsilon=None, orders: Orders | None = None) -> tuple[fmpq, fmpq | None] | None:
    """The certified bound of :func:`certify_events` for the same query, without the certificate: (the exact
    upper endpoint its headline quantity records, the chosen order or None). The same refusals first (every
    InputError of :func:`certify_events` before its evaluation), the same order, every hypothesis and the headline
    claim decided (:func:`certify.events.certificates.headline`); None when the first precision does not decide
    them all (the caller then builds the certificate, which escalates or refuses). ``certify_events(ledger, ...,
    chosen=alpha)`` then writes the certificate of this very bound."""
    query, target, _, alpha = _prepare(ledger, delta, epsilon, None, orders, None, record=False)
    hi = headline(ledger, query, target, alpha)
    return None if hi is None else (hi, alpha)


def certified_value(cert: Certificate) -> fmpq:
    """The certified bound: the exact upper endpoint of the headline quantity (epsilon, delta or rdp)."""
    for name in ("epsilon", "delta", "rdp"):
        if name in cert.quantities and (name != "rdp" or "order" in cert.inputs):
            return ball_endpoints(cert.quantities[name].value)[1]
    raise KeyError("no headline quantity")  # pragma: no cover


__all__ = ["ORDER_GRID", "FIRST_STAGE", "Orders", "answer_events", "certify_events", "choose_order", "certified_value", "parse_order", "snap_orders"]
