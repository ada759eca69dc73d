"""rho(alpha, p, Delta) = max_{u in [0, 1/2]} J(u) of Bok (2026) Theorem 1 / (5), certified.

* Proposition 2 (a), in the general form (19): p exp((alpha-1)(1-p) Delta^2/2) >= alpha/(alpha-1)
  implies the maximum is at u = 0, so rho = J(0) in closed form. Decided in balls; undecided means
  "not used" (never read as true).
* Proposition 2 (b): sigma^2 > alpha and
  p/(1-p) exp(2/sigma^2 + 6/(sigma^2-alpha)) (3 + ((12 sqrt2 + 8) alpha + 8 sqrt2 - 8)/(sigma^2-alpha)) <= 1
  (the last display of its proof, App. A.3) implies the maximum is at u = 0 or u = 1/2.
* The small-p route (:mod:`certify.dpsgd.small_p`): rho = log1p(p^2 c2(1/2) +- R)/(alpha-1) with the p^2 term
  of Proposition 5 and a rigorous third-order remainder R, used when its width is at most gamma (tiny p, where
  the point bounds would lose F - 1 = O(p^2) to rounding). No search, no witness beyond the method.
* Otherwise the branch-and-bound of Appendix B.2 with the key Q(l, r) of (37), point bounds of B.3.1
  (:mod:`certify.dpsgd.mixture`) and the one-sided curvature bound kappa_neg >= max(0, -J'') (B.3.2
  sharpened, :mod:`certify.dpsgd.curvature`; 0 on leaves where J is proven convex). It stops when the
  largest key minus the best lower bound B is at most gamma. Every interval ever pruned or left in the
  heap is a *leaf* whose key bounds J on it, so rho <= max over leaves of the key (rounded up) and
  rho >= B (rounded down). The leaves are then coarsened: adjacent leaves are merged while the key
  of the merged interval stays below the final upper bound (no new point evaluations; this keeps the
  certificate, and the checker's work, small). Finally the certificate is made economical: each
  leaf's slack (the upper bound minus its key) pays for coarser trapezoidal rules at its endpoints, and
  each leaf gets the cheapest curvature level (point 5 of :mod:`certify.dpsgd.curvature`) whose key stays
  below U, the largest key at the sharpest level with those rules (:func:`~certify.dpsgd.curvature.choose_levels`,
  a rule the checker re-derives from the witness), so the certified rho does not move.
* Budget (:class:`SearchLimits`): at most MAX_EVALUATIONS point evaluations (deterministic: the default
  mechanism) and MAX_SECONDS seconds (a safety net only: a stop by time depends on the machine). A search
  that stops at its budget keeps every leaf it has (they still cover [0, 1/2], so rho <= max key holds):
  the bound is valid but its gap exceeds gamma, and the witness says "stopped_early" (re-derived by the
  checker from the leaves: gap > gamma).

The witness (:class:`SearchResult`) lists the leaves, for each leaf endpoint its trapezoidal rule, for
each leaf its curvature level and theta_k, and the point giving the lower bound; the checker
re-evaluates exactly those and chooses nothing.
"""

from __future__ import annotations

import heapq
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..balls import Tri, UndecidedError, arb, ball, compare, exact_str, float_of, fmpq, require_in
from ..limits import refuse_above
from .curvature import search_key_kappa, choose_levels, interval_key, theta_choice
from .mixture import PointBound, Rule, choose_rule, point_bounds, point_precision, J_zero
from .problem import Problem
from .small_p import small_p_bounds

HALF = fmpq(1, 2)
#: default gamma relative to J(0): small enough that T * gamma never moves a printed epsilon.
GAMMA_REL = fmpq(1, 10**7)
#: default evaluation budget of the branch-and-bound (point evaluations; deterministic: the certificate
#: does not depend on the machine). Measured: a few seconds in the hard cases (tiny p, p near 1).
MAX_EVALUATIONS = 2000
#: default wall-clock safety net (seconds). Only a safety net: a search cut by time depends on the
#: machine's speed, so its certificate is not reproducible (it says so: stopped_by = "seconds").
MAX_SECONDS = 60
#: the small-p route is tried only below this p (above it its remainder is never below gamma)
SMALL_P_MAX = fmpq(1, 1000)
#: intervals narrower than this are not split further
MIN_WIDTH = fmpq(1, 2**40)


@dataclass(frozen=True)
class SearchLimits:
    """The branch-and-bound's budget: at most ``max_evaluations`` point evaluations and ``max_seconds`` seconds."""

    max_evaluations: int = MAX_EVALUATIONS
    max_seconds: fmpq = fmpq(MAX_SECONDS)

    def to_json(self) -> dict:
        return {"max_evaluations": str(self.max_evaluations), "max_seconds": exact_str(self.max_seconds)}


def search_limits(max_evaluations: int, max_seconds: fmpq, names: tuple[str, str] = ("--max-evaluations", "--max-seconds")) -> SearchLimits:
    """The budget certify runs with: ``max_evaluations`` an integer in [2, cap ``bb_evaluations`` of
    :data:`certify.limits.LIMITS`], ``max_seconds`` > 0; else InputError naming ``names`` (the flags; the witness
    reader passes the recorded fields). The one check of a budget: the commands' flags and a recorded
    ``witnesses.budget`` both go through it, so a certificate records only a budget certify would run with."""
    require_in(names[0], max_evaluations, 2, None, "[)", integer=True)
    refuse_above("bb_evaluations", max_evaluations, names[0], "point evaluations of the branch-and-bound (at least 2)")
    require_in(names[1], max_seconds, 0)
    return SearchLimits(max_evaluations, max_seconds)


def _seconds(b: SearchLimits) -> float:
    return float_of(b.max_seconds)


#: the budget used by :func:`rho_search` when none is passed (set per command by :func:`budget`), with the
#: deadline of its block (None outside any block)
_BUDGET: list[tuple[SearchLimits, float | None]] = [(SearchLimits(), None)]


@contextmanager
def budget(b: SearchLimits):
    """Use ``b`` as the default budget of :func:`rho_search` inside the block (the commands' --max-evaluations,
    --max-seconds reach the search through here, whatever calls it). ``max_seconds`` bounds the whole block:
    every search inside it (the choice of alpha, each precision of the ladder) shares one deadline.
    ``b`` passes :func:`search_limits` (max_evaluations in [2, the cap ``bb_evaluations``], max_seconds > 0), the check the
    witness reader applies to a recorded budget."""
    search_limits(b.max_evaluations, b.max_seconds)
    _BUDGET.append((b, time.monotonic() + _seconds(b)))
    try:
        yield b
    finally:
        _BUDGET.pop()


@dataclass
class SearchResult:
    method: str  # "prop2a", "prop2b" or "branch-and-bound"
    gamma: fmpq
    leaves: list[tuple[fmpq, fmpq]]  # partition of [0, 1/2]
    rules: dict[fmpq, Rule]  # u -> trapezoidal rule for every u > 0 used
    u_lower: fmpq  # point whose J-lower is the lower bound
    evaluations: int = 0  # point evaluations done by the search
    stats: dict = field(default_factory=dict)
    #: per leaf, the theta_k of (42') used by its curvature bound (branch-and-bound only; recorded in the witness)
    thetas: list = field(default_factory=list)
    #: per leaf, the curvature level (:data:`certify.dpsgd.curvature.LEVELS`) of its bound
    levels: list = field(default_factory=list)
    #: point bounds computed by the search (in-process only; never serialised, never trusted by the checker)
    point_bounds: dict = field(default_factory=dict, repr=False)
    #: the search stopped before its gap (max leaf key - best J-lower) reached gamma; the evaluator re-derives it
    #: from the leaves (:func:`certify.dpsgd.certificates.fill_rho`) and overwrites this provisional value
    stopped_early: bool = False
    #: why: "evaluations" or "seconds" (budget), "resolution" (leaves at MIN_WIDTH), "" when it converged
    stopped_by: str = ""
    budget: SearchLimits | None = None


def prop2a_sides(prob: Problem) -> tuple[arb, arb]:
    """(19): lhs = p exp((alpha-1)(1-p) Delta^2/2), rhs = alpha/(alpha-1) (balls)."""
    al = prob.alpha
    p = ball(prob.p)
    D = ball(prob.delta_sens)
    lhs = p * ((al - 1) * (1 - p) * D * D / 2).exp()
    rhs = arb(al) / (al - 1)
    return lhs, rhs


def prop2b_sides(prob: Problem) -> tuple[arb, arb] | None:
    """Prop. 2 (b): (lhs, 1) with lhs as in the module docstring, or None when sigma^2 <= alpha."""
    al = prob.alpha
    s2 = prob.sigma * prob.sigma
    if not s2 > al:
        return None
    p = ball(prob.p)
    s2b = ball(s2)
    gap = ball(s2 - al)
    r2 = arb(2).sqrt()
    lhs = p / (1 - p) * (2 / s2b + 6 / gap).exp() * (3 + ((12 * r2 + 8) * al + 8 * r2 - 8) / gap)
    return lhs, arb(1)


def _halvings(t: fmpq, limit: int = 4096) -> int:
    """Smallest k >= 0 with 2^-k <= t (exact; at most ``limit``), for t > 0."""
    k, x = 0, fmpq(1)
    while x > t and k < limit:
        x /= 2
        k += 1
    return k


def default_gamma(prob: Problem) -> fmpq:
    """Largest power of two <= GAMMA_REL * J(0) (J(0) > 0 is the u = 0 closed form)."""
    target = J_zero(prob).lower().fmpq() * GAMMA_REL
    if not target > 0:
        return fmpq(1, 2**60)
    return fmpq(1, 2 ** _halvings(target))


def rel_bits_for(prob: Problem, gamma: fmpq) -> int:
    """Rule tolerance 2^-bits (on F, relative) so that the J width at a point stays under gamma / 8."""
    return max(24, min(_halvings((prob.alpha - 1) * gamma / 8) + 2, point_precision(prob) - 16))


class _Evaluator:
    def __init__(self, prob: Problem, gamma: fmpq):
        self.prob = prob
        self.gamma = gamma
        self.bits = rel_bits_for(prob, gamma)
        self.points: dict[fmpq, PointBound] = {}
        self.rules: dict[fmpq, Rule] = {}
        self.B = None
        self.u_best = None

    def __call__(self, u: fmpq) -> PointBound:
        if u in self.points:
            return self.points[u]
        half_gamma = ball(self.gamma) / 2
        bits = self.bits
        for _ in range(4):
            rule = None if u == 0 else choose_rule(self.prob, u, bits)
            pb = point_bounds(self.prob, u, rule)
            if u == 0 or (pb.J_hi - pb.J_lo) < half_gamma:
                break
            bits = min(bits + 10, point_precision(self.prob) - 8)
        self.points[u] = pb
        if u != 0:
            self.rules[u] = rule
        lo = pb.J_lo.lower().fmpq()
        if self.B is None or lo > self.B:
            self.B, self.u_best = lo, u
        return pb

    def hi(self, u: fmpq) -> fmpq:
        return self(u).J_hi.upper().fmpq()

    def key(self, l: fmpq, r: fmpq) -> fmpq:
        kap = search_key_kappa(self.prob, l, r).upper().fmpq()
        return interval_key(self.hi(l), self.hi(r), kap, l, r)


def small_p_applies(prob: Problem, gamma: fmpq) -> bool:
    """The small-p route (:mod:`certify.dpsgd.small_p`) is used when p <= SMALL_P_MAX and its width is <= gamma."""
    if not prob.p <= SMALL_P_MAX:
        return False
    b = small_p_bounds(prob)
    if b["rho_lo"] is None:
        return False
    # a rho below ~10^-(limit - 100) cannot be written as exact text under Python's int-to-str digit limit
    # (sys.set_int_max_str_digits; 4300 by default): decline rather than crash while serialising; the
    # package lifts the limit (certify/dpsgd/__init__.py), which makes the route reach p ~ 1e-2200 and below
    limit = sys.get_int_max_str_digits()
    if limit and not b["main"] > arb(10) ** (100 - limit):
        return False
    return b["rho_hi"].upper().fmpq() - b["rho_lo"].lower().fmpq() <= gamma


def rho_search(prob: Problem, gamma: fmpq | None = None, use_shortcuts: bool = True, limits: SearchLimits | None = None) -> SearchResult:
    """Certify rho(alpha, p, Delta) (5): shortcut by Prop. 2 when it holds, else branch-and-bound (B.2).

    The branch-and-bound stops at its tolerance gamma or at its budget (``limits``, default the innermost
    :func:`budget` block, else ``SearchLimits()``), whichever comes first; a stop at the budget leaves a valid but
    looser bound and sets ``stopped_early`` (recorded in the witness, re-derived by the checker).
    """
    if gamma is None:
        gamma = default_gamma(prob)
    block_deadline = None
    if limits is None:
        limits, block_deadline = _BUDGET[-1]
    deadline = time.monotonic() + _seconds(limits)  # a safety net only
    if block_deadline is not None:
        deadline = min(deadline, block_deadline)
    ev = _Evaluator(prob, gamma)
    if use_shortcuts:
        lhs, rhs = prop2a_sides(prob)
        if compare(lhs, ">=", rhs) is Tri.TRUE:
            ev(fmpq(0))
            return SearchResult("prop2a", gamma, [(fmpq(0), HALF)], {}, fmpq(0), 1, 1)
        if small_p_applies(prob, gamma):
            return SearchResult("small-p", gamma, [(fmpq(0), HALF)], {}, HALF, 0, 1)
        sides = prop2b_sides(prob)
        if sides is not None and compare(sides[0], "<=", sides[1]) is Tri.TRUE:
            ev(fmpq(0))
            ev(HALF)
            res = SearchResult("prop2b", gamma, [(fmpq(0), HALF)], dict(ev.rules), ev.u_best, 2, 1)
            res.point_bounds = ev.points
            return res
    ev(fmpq(0))
    ev(HALF)
    heap = [(-ev.key(fmpq(0), HALF), fmpq(0), HALF)]
    # heapq needs comparable items: store (neg key, l, r) with fmpq (ordered)
    leaves: list[tuple[fmpq, fmpq]] = []
    iters = 0
    stopped_by = ""
    while heap:
        negk, l, r = heap[0]
        if -negk - ev.B <= gamma:
            break
        if len(ev.points) >= limits.max_evaluations:
            stopped_by = "evaluations"
            break
        if time.monotonic() > deadline:
            stopped_by = "seconds"
            break
        heapq.heappop(heap)
        if r - l < MIN_WIDTH:
            # the point bounds cannot resolve this interval any further: keep it as a leaf (its key
            # is still a valid bound; the gap is reported, never hidden)
            leaves.append((l, r))
            stopped_by = stopped_by or "resolution"
            continue
        m = (l + r) / 2
        ev(m)
        iters += 1
        for a, b in ((l, m), (m, r)):
            k = ev.key(a, b)
            if k > ev.B:
                heapq.heappush(heap, (-k, a, b))
            else:
                leaves.append((a, b))
        # intervals already in the heap whose key fell below B stay valid leaves; nothing to do
    leaves.extend((l, r) for _, l, r in heap)
    leaves.sort()
    n_before = len(leaves)
    upper = max(ev.key(l, r) for l, r in leaves)
    # coarsen up to the tolerance the caller accepted: rho_hi - rho_lo stays <= gamma (or the gap
    # the search ended with, if larger); fewer leaves make the certificate and its check cheaper
    target = upper if upper > ev.B + gamma else ev.B + gamma
    merged = _coarsen(ev, leaves, target)
    R = max(ev.key(l, r) for l, r in merged)  # the certified upper bound of rho
    res = SearchResult("branch-and-bound", gamma, merged, {}, ev.u_best, len(ev.points), n_before)
    res.rules, pbs = _economical_rules(ev, merged, R)
    hi = {u: pb.J_hi.upper().fmpq() for u, pb in pbs.items()}
    res.levels = choose_levels(prob, merged, hi)[1]
    res.thetas = [theta_choice(prob, l, r, lev) for (l, r), lev in zip(merged, res.levels)]
    res.stats = {"iterations": iters, "converged": bool(upper - ev.B <= gamma)}
    res.stopped_early = not (R - ev.B <= gamma)
    res.stopped_by = (stopped_by or "resolution") if res.stopped_early else ""
    res.budget = limits
    res.point_bounds = pbs
    return res


# --------------------------------------------------------------------------------------------
# An economical certificate: the checker pays for precision only where the bound needs it
# --------------------------------------------------------------------------------------------
def _bits_for_budget(prob: Problem, budget: fmpq) -> int:
    """Rule tolerance 2^-bits (on F) that moves J-upper by at most ~budget/2: 2^-bits <= (alpha-1) budget / 4."""
    return max(8, _halvings((prob.alpha - 1) * budget / 4))


def _economical_rules(ev: _Evaluator, leaves: list[tuple[fmpq, fmpq]], R: fmpq):
    """Per point, the cheapest rule found that keeps every leaf key <= R: half of each leaf's slack R - key
    goes to each endpoint (keys are 1-Lipschitz in each endpoint's J-upper, see interval_key). The point of
    the lower bound keeps its tight rule. Returns (rules for u > 0, point bounds for every point used)."""
    budget: dict[fmpq, fmpq] = {}
    for l, r in leaves:
        slack = (R - ev.key(l, r)) / 2
        for u in (l, r):
            budget[u] = min(budget.get(u, slack), slack)
    rules, pbs = {}, {}
    for u in sorted(set(budget) | {ev.u_best}):
        pb = ev(u)
        if u == 0:
            pbs[u] = pb
            continue
        rule = ev.rules[u]
        d = budget.get(u, fmpq(0))
        if u != ev.u_best and d > 0:
            bits = _bits_for_budget(ev.prob, d)
            if bits < ev.bits:
                try:
                    r2 = choose_rule(ev.prob, u, bits)
                    pb2 = point_bounds(ev.prob, u, r2)
                    if r2.nodes < rule.nodes and pb2.J_hi.upper().fmpq() <= pb.J_hi.upper().fmpq() + d:
                        rule, pb = r2, pb2
                except UndecidedError:
                    pass
        rules[u], pbs[u] = rule, pb
    return rules, pbs


def _coarsen(ev: _Evaluator, leaves: list[tuple[fmpq, fmpq]], upper: fmpq) -> list[tuple[fmpq, fmpq]]:
    """Merge adjacent leaves while the merged key stays <= upper (keys only: no new point evaluations)."""
    out = []
    i, n = 0, len(leaves)
    while i < n:
        l, r = leaves[i]
        j = i
        # galloping extension: try to jump as far as possible
        step = 1
        while j + 1 < n:
            jj = min(n - 1, j + step)
            if ev.key(l, leaves[jj][1]) <= upper:
                j = jj
                step *= 2
            elif step > 1:
                step = 1
            else:
                break
        out.append((l, leaves[j][1]))
        i = j + 1
    return out
