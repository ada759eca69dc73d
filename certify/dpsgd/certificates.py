"""Certificates `dpsgd/rho-bok` (one-step rho, (5)) and `dpsgd/renyi-bok` (Corollary 1, (6)).

The evaluators re-derive every quantity and claim from the exact inputs and the witnesses of the
search (:class:`certify.dpsgd.search.SearchResult`): the leaves of the final partition of [0, 1/2]
(checked to cover it exactly), for each leaf endpoint its trapezoidal rule (window, step, strip), the
point of the lower bound, gamma. They never re-run the search: the work is one point bound per leaf
endpoint (B.3.1), one curvature bound kappa_neg per leaf (B.3.2, sharpened) and the key (37) per leaf.

Quantities (every ball contains the exact value; ``lower``/``upper`` round outward):
  ``J(0)``            closed form of (5) at u = 0;
  ``leaf[i]``         the key Q(l_i, r_i) of (37) >= max J on the i-th leaf (branch-and-bound only);
  ``J_lower(u*)``     J-lower at the lower-bound point u* (B.3.1);
  ``rho``             [max J-lower found, max over leaves of the key] (5);
  ``alpha``           the Rényi order (exact integer);
  ``epsilon``         (6) evaluated with the ball ``rho``: its upper endpoint is the certified epsilon.
  ``c2(1/2)``, ``remainder``, ``p2_term``  the small-p route (:mod:`certify.dpsgd.small_p`, method "small-p").
  ``search_gap``      max leaf key - J-lower(u*) (branch-and-bound); its equation text says "STOPPED EARLY"
                      when it exceeds gamma (the search hit its budget; witness ``stopped_early``, re-derived).
Claims: Proposition 2 (a) ((19)) or (b), when the certificate uses it to skip the search; ``small_p``
(p^2 c2(1/2) > R) for the small-p route.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..balls import (
    InputError,
    exact_in,
    Tri,
    arb,
    ball,
    compare,
    exact,
    exact_int,
    exact_str,
    fmpq,
    upper_decimal,
)
from ..certificate import Budget, Evaluation, reported_bound, witness_field, witness_int_text
from ..limits import BUDGET_SECONDS, refuse_above, scaled
from ..contract import CONTRACT_FIELDS, FIXED_SIZE_REPLACE_ONE, contract_from_inputs
from ..provenance import NOTE_SUFFIX, check_notes
from ..validators import parse_delta, parse_steps, steps_of_epochs  # noqa: F401  (re-exported: their home is certify.validators)
from ..verify import register
from .curvature import LEVELS, choose_levels, interval_key, kappa_neg, split_thetas, theta_choice
from .mixture import MAX_NODES, J_zero, Rule, check_rule, point_bounds
from .problem import ALPHA_MAX, ALPHA_MIN, Problem, parse_alpha, parse_batch, parse_p, parse_sigma  # noqa: F401  (re-exported)
from .search import HALF, SearchLimits, SearchResult, default_gamma, prop2a_sides, prop2b_sides, search_limits
from .small_p import small_p_bounds

KIND_RHO = "dpsgd/rho-bok"
KIND_RENYI = "dpsgd/renyi-bok"
METHODS = ("prop2a", "prop2b", "small-p", "branch-and-bound")
#: numeric inputs of a fixed-size DP-SGD certificate that may carry a provenance note ("<field>.note")
NOTED_INPUTS = ("sampling_rate", "noise_multiplier", "steps", "delta", "batch_size", "dataset_size")
#: the contract fields and notes every fixed-size replace-one DP-SGD certificate may carry
CONTRACT_INPUTS = CONTRACT_FIELDS + tuple(f + NOTE_SUFFIX for f in NOTED_INPUTS)


RHO_INPUTS = ("alpha", "sampling_rate", "noise_multiplier", "gamma")
RENYI_INPUTS = RHO_INPUTS + ("steps", "delta", "batch_size", "dataset_size", "epochs") + CONTRACT_INPUTS
SEARCH_WITNESSES = ("method", "gamma", "leaves", "points", "u_lower", "curvature", "stopped_early", "budget")
#: significant digits of the reported rho / epsilon in the conclusion (rounded up)
REPORT_DIGITS = 10
#: significant digits of a recorded branch-and-bound leaf key (rounded up)
KEY_DIGITS = 12
#: claims a method of the search rests on (Proposition 2 (a)/(b), the small-p route): hypotheses of rho
METHOD_CLAIMS = ("prop2a", "prop2b", "small_p")


# --------------------------------------------------------------------------------------------
# Witness (de)serialisation: exact text only
# --------------------------------------------------------------------------------------------
def witness_json(res: SearchResult, keys: list | None = None) -> dict:
    """Exact-text witness; with ``keys`` each leaf is [l, r, bound] where bound (a decimal rounded up)
    is the leaf's certified key Q(l, r) of (37), which the checker recomputes and compares."""
    if keys is not None and len(keys) == len(res.leaves):
        leaves = [[exact_str(l), exact_str(r), upper_decimal(k, KEY_DIGITS)] for (l, r), k in zip(res.leaves, keys)]
    else:
        leaves = [[exact_str(l), exact_str(r)] for l, r in res.leaves]
    return {
        "method": res.method,
        "gamma": exact_str(res.gamma),
        "leaves": leaves,
        "points": [
            {"u": exact_str(u), "a": exact_str(r.a), "b": exact_str(r.b), "h": exact_str(r.h), "strip": exact_str(r.strip)}
            for u, r in sorted(res.rules.items())
        ],
        "u_lower": exact_str(res.u_lower),
        # per leaf, the curvature level and the theta_k (numerators over 2^40) of its sums (42'),
        # so the checker never chooses
        "curvature": [{"level": lev, "thetas": list(t)} for lev, t in zip(res.levels, res.thetas)],
        # the branch-and-bound stopped at its budget before its gap reached gamma (re-derived by the checker)
        "stopped_early": bool(res.stopped_early),
        **({"budget": budget_json(res)} if res.budget is not None else {}),
    }


def budget_json(res: SearchResult) -> dict:
    """The branch-and-bound's limits, why it stopped, and after a stop by time (``"seconds"``, a machine-dependent
    stop) the number of point evaluations done when it stopped: the state the checker re-runs the deterministic
    search to (:func:`check_seconds_state`)."""
    out = {**res.budget.to_json(), "stopped_by": res.stopped_by}
    if res.stopped_by == "seconds":
        out["evaluations"] = str(res.evaluations)
    return out


#: why a branch-and-bound stopped (``budget.stopped_by``): "" when it met gamma, else its budget or its resolution
STOPPED_BY = ("", "evaluations", "seconds", "resolution")
_POINT_KEYS = ("u", "a", "b", "h", "strip")


def witness_from_json(w: dict) -> SearchResult:
    """The search witness as :func:`witness_json` writes it (a certificate's, or a cache file's): every key certify
    writes present, each in the JSON type certify writes (:func:`certify.certificate.witness_field`), leaves with
    their keys all or none, points once each in increasing u (leaf order), ``budget`` exactly when the method is
    the branch-and-bound, ``stopped_by`` one of :data:`STOPPED_BY` and "" exactly when the search did not stop early,
    the recorded limits ones certify runs with (the producer's check of its flags, :func:`search_limits`) and that allow
    the partition (a search evaluates at most max(2, max_evaluations)
    points, and every leaf endpoint is one). InputError naming the field otherwise."""
    if not isinstance(w, dict):
        raise InputError("witnesses", "must be an object")
    method = witness_field(w, "method", "witnesses.method", str)
    if method not in METHODS:
        raise InputError("witnesses", f"method must be one of {METHODS}, got {method[:40]!r}")
    gamma = parse_gamma(witness_field(w, "gamma", "witnesses.gamma", str), "witnesses.gamma")
    leaf_items = witness_field(w, "leaves", "witnesses.leaves", list)
    point_items = witness_field(w, "points", "witnesses.points", list)
    refuse_above("bb_evaluations", len(leaf_items), "witnesses.leaves", "leaves of the branch-and-bound partition")
    refuse_above("quadrature_rules", len(point_items), "witnesses.points")
    leaves, bounds = [], []
    for i, item in enumerate(leaf_items):
        if not (isinstance(item, list) and len(item) in (2, 3) and all(type(x) is str for x in item)):
            raise InputError(f"witnesses.leaves[{i}]", f"a leaf is [l, r] or [l, r, key] of exact text, got {str(item)[:80]}")
        if len(item) != len(leaf_items[0]):
            raise InputError(f"witnesses.leaves[{i}]", "certify writes every leaf with its key [l, r, key], or none")
        leaves.append((exact(item[0], "leaf"), exact(item[1], "leaf")))
        bounds.append(item[2] if len(item) == 3 else None)
        if len(item) == 3:
            exact(item[2], "leaf bound")
    rules = {}
    for i, pt in enumerate(point_items):
        where = f"witnesses.points[{i}]"
        if not isinstance(pt, dict) or set(pt) != set(_POINT_KEYS):
            raise InputError(where, f"a point is an object with the keys {', '.join(_POINT_KEYS)}")
        u, a, b, h, strip = (exact(witness_field(pt, k, f"{where}.{k}", str), f"{where}.{k}") for k in _POINT_KEYS)
        if rules and not u > max(rules):
            raise InputError(where, "certify writes the points once each, in increasing u (leaf order)")
        rule = Rule(a, b, h, strip)
        check_rule(rule)
        rules[u] = rule
    u_lower = exact(witness_field(w, "u_lower", "witnesses.u_lower", str), "witnesses.u_lower")
    curv = witness_field(w, "curvature", "witnesses.curvature", list)
    for i, c in enumerate(curv):
        where = f"witnesses.curvature[{i}]"
        if not isinstance(c, dict) or set(c) != {"level", "thetas"}:
            raise InputError(where, "curvature entries are {level, thetas} objects, one per leaf")
        witness_field(c, "level", f"{where}.level", str)
        if not all(type(t) is int for t in witness_field(c, "thetas", f"{where}.thetas", list)):
            raise InputError(f"{where}.thetas", "must be a list of JSON integers, as certify writes them")
    res = SearchResult(method, gamma, leaves, rules, u_lower, thetas=[tuple(c["thetas"]) for c in curv], levels=[c["level"] for c in curv])
    res.recorded_bounds = bounds
    res.recorded_stopped_early = witness_field(w, "stopped_early", "witnesses.stopped_early", bool)
    if method != "branch-and-bound":
        if "budget" in w:
            raise InputError("witnesses.budget", f"certify records the search budget of the branch-and-bound only (method {method})")
        return res
    b = witness_field(w, "budget", "witnesses.budget", dict)
    keys = {"max_evaluations", "max_seconds", "stopped_by"} | ({"evaluations"} if b.get("stopped_by") == "seconds" else set())
    if set(b) != keys:
        raise InputError("witnesses.budget", f"must be an object with the keys {', '.join(sorted(keys))} (evaluations after a stop by time only)")
    # the producer's own check of --max-evaluations / --max-seconds: a budget certify would run with
    res.budget = search_limits(
        witness_int_text(b, "max_evaluations", "witnesses.budget.max_evaluations"),
        exact(witness_field(b, "max_seconds", "witnesses.budget.max_seconds", str), "witnesses.budget.max_seconds"),
        ("witnesses.budget.max_evaluations", "witnesses.budget.max_seconds"),
    )
    res.stopped_by = witness_field(b, "stopped_by", "witnesses.budget.stopped_by", str)
    if res.stopped_by not in STOPPED_BY:
        raise InputError("witnesses.budget.stopped_by", f"must be one of {', '.join(map(repr, STOPPED_BY))}, got {res.stopped_by[:40]!r}")
    if (res.stopped_by == "") is res.recorded_stopped_early:
        raise InputError(
            "witnesses.budget.stopped_by",
            f"is {res.stopped_by!r} beside stopped_early = {str(res.recorded_stopped_early).lower()}: certify writes '' exactly when the "
            "search met gamma",
        )
    if len(leaves) + 1 > max(2, res.budget.max_evaluations):
        raise InputError(
            "witnesses.budget.max_evaluations",
            f"is {res.budget.max_evaluations}, but the {len(leaves)} leaves have {len(leaves) + 1} endpoints, each a point the search "
            f"evaluated (at most max(2, max_evaluations))",
        )
    if res.stopped_by == "seconds":
        # a stop by time happens at the top of the search loop, after the evaluation budget was found not reached
        e = witness_int_text(b, "evaluations", "witnesses.budget.evaluations")
        if not max(2, len(leaves) + 1) <= e < res.budget.max_evaluations:
            raise InputError(
                "witnesses.budget.evaluations",
                f"is {e}: a search stopped by time has evaluated every leaf endpoint ({len(leaves) + 1}, at least 2) and fewer "
                f"points than its max_evaluations ({res.budget.max_evaluations}), or it would have stopped by evaluations",
            )
        res.recorded_evaluations = e
    return res


def check_leaf_keys(res: SearchResult) -> None:
    """A certificate's search witness records each leaf's key (37) exactly when its method is the branch-and-bound
    (:func:`witness_json` with the evaluation's keys); and the branch-and-bound's points are exactly the leaf
    endpoints and u* (0 excepted: J(0) is a closed form), as :func:`certify.dpsgd.search.rho_search` records them."""
    keyed = any(b is not None for b in getattr(res, "recorded_bounds", ()))
    if keyed != (res.method == "branch-and-bound"):
        raise InputError("witnesses.leaves", f"certify writes the leaf keys exactly for the branch-and-bound (method {res.method})")
    if res.method == "branch-and-bound":
        want = ({l for l, _ in res.leaves} | {r for _, r in res.leaves} | {res.u_lower}) - {fmpq(0)}
        if set(res.rules) != want:
            raise InputError("witnesses.points", "certify records one point per leaf endpoint and u* (u > 0), no other")


def check_leaf_key(i: int, l: fmpq, r: fmpq, key: fmpq, text: str) -> None:
    """The recorded key of leaf i is the one certify writes: ``upper_decimal(key, KEY_DIGITS)`` of the key (37)
    recomputed at the certificate's recorded precision (the same code at the same precision gives the same balls:
    Arb is deterministic for a given FLINT, whose version the certificate records). The key moves with precision
    (a finer rule evaluation tightens J-upper), so above the recorded precision (``certify verify --precision P``)
    the recomputed key need only be <= the recorded one; ``certify verify`` then also re-derives the file at the
    recorded precision, where equality is demanded (:data:`certify.verify.RECORDED_PRECISION`). Outside
    ``certify verify`` the working precision is taken as the recorded one."""
    from ..balls import ctx
    from ..verify import RECORDED_PRECISION

    recorded = RECORDED_PRECISION.get()
    want = upper_decimal(key, KEY_DIGITS)
    if recorded is None or ctx.prec == recorded:
        if text != want:
            raise InputError(
                f"witnesses.leaves[{i}]",
                f"leaf [{exact_str(l)}, {exact_str(r)}]: recorded bound {text[:40]} is not the key certify writes at the recorded precision ({want})",
            )
    elif not key <= exact(text, "leaf bound"):
        raise InputError(
            f"witnesses.leaves[{i}]",
            f"leaf [{exact_str(l)}, {exact_str(r)}]: recorded bound {text[:40]} is below the key recomputed at {ctx.prec} bits ({want})",
        )


def check_seconds_state(prob: Problem, res: SearchResult) -> None:
    """A search stopped by time (``stopped_by = "seconds"``) cannot be re-run to the same time, but everything else
    about it is deterministic: its loop stops by time at the top of an iteration where the evaluation budget is not
    reached, so the state it leaves is the state at which the same search, given exactly the recorded number e of
    evaluations and no time limit, stops by evaluations (the first loop top with e evaluated points), and the
    post-processing (coarsening, economical rules, curvature levels) is deterministic too. The checker re-runs
    :func:`certify.dpsgd.search.rho_search` with the limit e at the recorded precision and demands the recorded
    leaves, rules, u* and curvature witnesses: a partition the search never passes through is refused.
    (e < max_evaluations and that the partition is incomplete, gap > gamma, are checked by the witness reader and
    :func:`fill_rho`.) Cost: the search's first e evaluations, estimated by :func:`rho_work` before any work and
    limited while it runs by the search's own time limit, the checker's budget (wall clock): a file asking for more
    is refused (exit 2). Refused although certify may write them (never a false acceptance): a time stop after a
    search longer than the checker's budget (``--max-seconds`` above 30 s on a slow problem), and a time stop after
    iterations that popped intervals narrower than MIN_WIDTH without evaluating (the re-run stops at the first loop
    top with e points, before them).

    Above the recorded precision (``certify verify --precision P``) the search is not re-run: it is a choice made at
    the recorded precision, where ``certify verify`` always re-derives the file too."""
    from ..balls import ctx
    from ..verify import RECORDED_PRECISION
    from .search import rho_search

    recorded = RECORDED_PRECISION.get()
    if recorded is not None and ctx.prec != recorded:
        return
    e = res.recorded_evaluations
    again = rho_search(prob, res.gamma, limits=SearchLimits(e, fmpq(int(BUDGET_SECONDS))))
    if again.stopped_by == "seconds":  # the re-run's own safety net: the work model erred low (or a slow machine)
        raise InputError(
            "witnesses.budget.evaluations",
            f"re-running the search to its recorded {e} evaluations took more than the checker's budget ({BUDGET_SECONDS:g} s): "
            "a stop by time after a longer search cannot be re-checked",
        )
    same = (
        again.method == res.method
        and again.stopped_by == "evaluations"
        and again.evaluations == e
        and again.leaves == res.leaves
        and again.rules == res.rules
        and again.u_lower == res.u_lower
        and list(again.levels) == list(res.levels)
        and [tuple(t) for t in again.thetas] == [tuple(t) for t in res.thetas]
    )
    if not same:
        raise InputError(
            "witnesses.budget.stopped_by",
            f'is "seconds" after {e} evaluations, but the search cut after {e} evaluations leaves another partition '
            f"({len(again.leaves)} leaves, method {again.method}, stopped by {again.stopped_by or 'its tolerance'}): "
            "a state the deterministic search never passes through",
        )


def check_thetas(prob: Problem, i: int, l: fmpq, r: fmpq, level: str, thetas) -> None:
    """The theta_k of (42') recorded for leaf i are the ones certify chooses: :func:`certify.dpsgd.curvature.theta_choice`
    (the producer's own function, called by :func:`certify.dpsgd.search.rho_search`) at the leaf and its recorded level,
    demanded equal. Any theta in [0, 1] gives a valid bound, so only this refuses a file certify never writes. Floats
    choose them (the math module's log and exp): equality is demanded at every precision (the choice does not depend on it); on
    a platform whose libm lands on the other side of a rounding or a minimum (docs/reference/certificate.md, "Curvature
    thetas") a genuine certificate is refused, never a forgery accepted. Cost: one float choice per leaf (cached)."""
    split_thetas(prob, thetas, level)  # the list's layout first: integers in [0, 2^40], the level's count
    want = theta_choice(prob, l, r, level)
    if tuple(thetas) != want:
        k = next(k for k, (a, b) in enumerate(zip(thetas, want)) if a != b)
        raise InputError(
            f"witnesses.curvature[{i}].thetas",
            f"leaf [{exact_str(l)}, {exact_str(r)}] at level {level}: theta numerator {k} is {thetas[k]}, certify chooses "
            f"{want[k]} (curvature.theta_choice): a choice certify never makes",
        )


def check_levels(prob: Problem, res: SearchResult, hi) -> None:
    """The curvature level recorded for each leaf is the one certify chooses: :func:`certify.dpsgd.curvature.choose_levels`
    (the producer's own function, called by :func:`certify.dpsgd.search.rho_search`) re-derives U, the largest key (37)
    over the leaves at level "full" with the recorded rules, and for each leaf the first of crude, kneg, convex, full
    whose key is <= U; the recorded level must be that one. Any level gives a valid bound, so only this refuses a
    file certify never writes (a sharper level than certify's, or a cheaper one). Exact rationals only (the keys
    are upper endpoints): the same at every platform. Keys move with precision (a finer evaluation of a point
    tightens its J-upper), so the rule is applied at the recorded precision, where ``certify verify`` always
    re-derives the file (as :func:`check_leaf_key`). Cost: the level "full" on every leaf (the cheaper levels
    below a leaf's reuse its sums)."""
    from ..balls import ctx
    from ..verify import RECORDED_PRECISION

    recorded = RECORDED_PRECISION.get()
    if recorded is not None and ctx.prec != recorded:
        return
    U, want = choose_levels(prob, res.leaves, {u: hi(u) for u in sorted({x for leaf in res.leaves for x in leaf})})
    for i, ((l, r), got, lev) in enumerate(zip(res.leaves, res.levels, want)):
        if got != lev:
            raise InputError(
                f"witnesses.curvature[{i}].level",
                f"leaf [{exact_str(l)}, {exact_str(r)}]: recorded level {got}, certify chooses {lev} (curvature.choose_levels: "
                f"the first of {', '.join(LEVELS)} whose key (37) is <= U = {upper_decimal(U, KEY_DIGITS)}, the largest key "
                'at level "full"): a choice certify never makes',
            )


def check_cover(leaves: list[tuple[fmpq, fmpq]]) -> None:
    """The leaves, in order, must partition [0, 1/2] exactly: l_0 = 0, r_i = l_(i+1), r_last = 1/2, l < r."""
    if not leaves:
        raise InputError("witnesses", "no leaves: the partition of [0, 1/2] is empty")
    if leaves[0][0] != 0:
        raise InputError("witnesses", f"leaves must start at u = 0, start at {exact_str(leaves[0][0])}")
    for i, (l, r) in enumerate(leaves):
        if not l < r:
            raise InputError("witnesses", f"leaf {i} [{exact_str(l)}, {exact_str(r)}] is empty or reversed")
        if i + 1 < len(leaves) and leaves[i + 1][0] != r:
            raise InputError("witnesses", f"leaves {i} and {i + 1} do not meet at {exact_str(r)}: the leaves do not cover [0, 1/2]")
    if leaves[-1][1] != HALF:
        raise InputError("witnesses", f"leaves must end at u = 1/2, end at {exact_str(leaves[-1][1])}")


# --------------------------------------------------------------------------------------------
# rho from witnesses
# --------------------------------------------------------------------------------------------
def _pb(prob: Problem, u: fmpq, res: SearchResult, cache: dict | None):
    if u != 0 and u not in res.rules:
        raise InputError("witnesses", f"no trapezoidal rule recorded for u = {exact_str(u)}")
    rule = None if u == 0 else res.rules[u]
    if cache is not None and (u, rule) in cache:
        return cache[(u, rule)]
    pb = point_bounds(prob, u, rule)
    if cache is not None:
        cache[(u, rule)] = pb
    return pb


@dataclass
class RhoFacts:
    """What the rho evaluation found, for the command's summary (not part of the certificate)."""

    method: str  # the witness's route: prop2a, prop2b, small-p or the branch-and-bound
    u_star: str = ""  # where the lower bound was found (exact text)
    leaf: tuple[fmpq, fmpq] | None = None  # the interval holding the largest key
    point: object = None  # the point bound at u* (mixture.PointBound), when evaluated
    gap: fmpq | None = None  # largest leaf key - J-lower(u*) (branch-and-bound only)
    leaves: int = 0
    keys: list | None = None  # one certified key per leaf (branch-and-bound only)
    stopped_early: bool = False  # the search stopped at its budget before gamma


def fill_rho(prob: Problem, res: SearchResult, ev: Evaluation, cache: dict | None = None) -> RhoFacts:
    """Add the rho quantities/claims to ``ev`` from the witness ``res``; return summary facts."""
    if not (0 <= res.u_lower <= HALF):
        raise InputError("witnesses", "u_lower must be in [0, 1/2]")
    check_cover(res.leaves)
    if cache is None:
        cache = {}  # one point bound per (u, rule), shared by the leaf keys and J_lower(u*)
    J0 = ev.add("J(0)", J_zero(prob), "(5) at u = 0", "closed form: log(sum_k C(alpha,k)(1-p)^(alpha-k) p^k exp(k(k-1)Delta^2/2))/(alpha-1)")
    facts = RhoFacts(res.method)
    if res.method == "prop2a":
        if res.leaves != [(fmpq(0), HALF)]:
            raise InputError("witnesses", "Proposition 2 (a) certificates have the single leaf [0, 1/2]")
        lhs, rhs = prop2a_sides(prob)
        ev.add("prop2a_lhs", lhs, "(19)", "p exp((alpha-1)(1-p) Delta^2/2)")
        ev.add("prop2a_rhs", rhs, "(19)", "alpha/(alpha-1)")
        holds = ev.claim("prop2a", "Proposition 2 (a), (19): the maximum of (5) is at u = 0", "prop2a_lhs", ">=", "prop2a_rhs", "(19)")
        if not holds:
            raise InputError("witnesses", "the certificate uses Proposition 2 (a) but (19) fails")
        rho = J0
        facts.u_star, facts.leaf = "0", (fmpq(0), HALF)
    elif res.method == "small-p":
        if res.leaves != [(fmpq(0), HALF)]:
            raise InputError("witnesses", "small-p certificates have the single leaf [0, 1/2]")
        sp = small_p_bounds(prob)
        ev.add("c2(1/2)", sp["c2"], "Prop. 5", "p^2 coefficient of F(1/2) - 1: alpha(alpha-1) e^(Delta^2/2) expm1(Delta^2/2)")
        ev.add("remainder", sp["R"], "small_p", "R >= |F(u) - 1 - p^2 c2(u)| for all u (third-order Taylor remainder)")
        ev.add("p2_term", sp["main"], "Prop. 5", "p^2 c2(1/2)")
        holds = ev.claim(
            "small_p", "the p^2 term exceeds the remainder: p^2 c2(1/2) > R (rho is bounded below)", "p2_term", ">", "remainder", "small_p"
        )
        if not holds:
            raise InputError("witnesses", "the certificate uses the small-p route but p^2 c2(1/2) > R fails")
        rho = sp["rho_lo"].union(sp["rho_hi"])
        facts.u_star, facts.leaf = "1/2", (fmpq(0), HALF)
    elif res.method == "prop2b":
        sides = prop2b_sides(prob)
        if sides is None:
            raise InputError("witnesses", "Proposition 2 (b) needs sigma^2 > alpha")
        ev.add(
            "prop2b_lhs",
            sides[0],
            "Prop. 2 (b)",
            "p/(1-p) exp(2/sigma^2 + 6/(sigma^2-alpha)) (3 + ((12 sqrt2+8) alpha + 8 sqrt2 - 8)/(sigma^2-alpha))",
        )
        holds = ev.claim("prop2b", "Proposition 2 (b): the maximum of (5) is at u = 0 or u = 1/2", "prop2b_lhs", "<=", "1", "Prop. 2 (b)")
        if not holds:
            raise InputError("witnesses", "the certificate uses Proposition 2 (b) but its condition fails")
        pb = _pb(prob, HALF, res, cache)
        ev.add("J_lower(1/2)", pb.J_lo, "B.3.1", "lower bound of J at u = 1/2 (quadrature, tails dropped)")
        ev.add("J_upper(1/2)", pb.J_hi, "B.3.1", "upper bound of J at u = 1/2 (quadrature + tail bounds)")
        lo = J0.max(pb.J_lo)
        hi = J0.max(pb.J_hi)
        rho = lo.union(hi)
        at_half = compare(pb.J_lo, ">", J0) is Tri.TRUE
        facts.u_star = "1/2" if at_half else ("0" if compare(J0, ">", pb.J_hi) is Tri.TRUE else "0 or 1/2")
        facts.leaf, facts.point = (fmpq(0), HALF), pb
    else:
        keys = []
        his: dict[fmpq, fmpq] = {}

        def hi(u):
            if u not in his:
                his[u] = _pb(prob, u, res, cache).J_hi.upper().fmpq()
            return his[u]

        if len(res.thetas) != len(res.leaves) or len(res.levels) != len(res.leaves):
            raise InputError("witnesses", f"curvature: {len(res.leaves)} entries expected (one per leaf), got {len(res.thetas)}")
        for i, (l, r) in enumerate(res.leaves):
            if res.levels[i] not in LEVELS:
                raise InputError("witnesses", f"curvature level of leaf {i} must be one of {tuple(LEVELS)}, got {res.levels[i]!r}")
            check_thetas(prob, i, l, r, res.levels[i], res.thetas[i])
        check_levels(prob, res, hi)
        for i, (l, r) in enumerate(res.leaves):
            kap = kappa_neg(prob, l, r, tuple(res.thetas[i]), res.levels[i]).upper().fmpq()
            k = interval_key(hi(l), hi(r), kap, l, r)
            keys.append(k)
            rec = getattr(res, "recorded_bounds", None)
            if rec and rec[i] is not None:
                check_leaf_key(i, l, r, k, rec[i])
            ev.add(
                f"leaf[{i}]",
                ball(k),
                "(37)",
                f"key Q(l, r) >= max J on the leaf [{exact_str(l)}, {exact_str(r)}] (kappa >= max(0, -J'') "
                f"on the leaf, B.3.2 sharpened, level {res.levels[i]})",
                bound="upper",
            )
        if getattr(res, "recorded_evaluations", None) is not None:
            check_seconds_state(prob, res)
        pbl = _pb(prob, res.u_lower, res, cache)
        jl = ev.add("J_lower(u*)", pbl.J_lo, "B.3.1", f"J-lower at u* = {exact_str(res.u_lower)}")
        imax = max(range(len(keys)), key=lambda i: keys[i])
        top = ball(keys[imax])
        rho = jl.union(top)
        gap = keys[imax] - jl.lower().fmpq()
        # "stopped early" is re-derived here, never taken from the witness: the gap exceeds gamma
        stopped = not gap <= res.gamma
        rec = getattr(res, "recorded_stopped_early", None)
        if rec is not None and rec is not stopped:
            raise InputError(
                "witnesses",
                f"stopped_early is recorded as {str(rec).lower()} but the leaves give a gap "
                f"{upper_decimal(gap, 3)} {'>' if stopped else '<='} gamma = {exact_str(res.gamma)}",
            )
        res.stopped_early = stopped
        # the witness gamma: the search stops when the largest key minus the best lower bound is <= gamma, or
        # earlier at its evaluation budget; then the claim below is false (the bound rho is valid either way)
        ev.add("gamma", ball(res.gamma), "B.2", "branch-and-bound tolerance gamma (witness)")
        ev.add(
            "search_gap",
            top - arb(jl.lower()),
            "B.2",
            "largest leaf key minus J-lower(u*)"
            + (": above gamma, the search STOPPED EARLY at its budget (rho is valid, looser than gamma)" if stopped else ""),
            bound="upper",
        )
        ev.claim("search_met_gamma", "the search stopped at its tolerance: largest key - J-lower(u*) <= gamma", "search_gap", "<=", "gamma", "B.2")
        facts.u_star, facts.leaf, facts.point = exact_str(res.u_lower), res.leaves[imax], pbl
        facts.gap, facts.leaves, facts.keys, facts.stopped_early = gap, len(res.leaves), keys, stopped
    ev.add("rho", rho, "(5)", "one-step Rényi bound rho(alpha, p, 2/sigma) = max_u J(u)")
    ev.add("alpha", arb(prob.alpha), "(5)", "Rényi order", integer=True)
    ev.budget = Budget.of(budget_of(ev, facts, res))
    return facts


def budget_of(ev: Evaluation, facts: RhoFacts, res: SearchResult) -> dict:
    """Where the width of rho went (re-derived by the checker from the same evaluation)."""
    rho = ev.quantities["rho"].value
    b = {
        "gamma (branch-and-bound tolerance)": exact_str(res.gamma),
        "rho width (upper - lower)": upper_decimal(rho.upper().fmpq() - rho.lower().fmpq(), 3),
    }
    if facts.gap is not None:
        b["branch-and-bound gap (max leaf key - best J-lower)"] = upper_decimal(facts.gap, 3)
    pb = facts.point
    if pb is not None and pb.u != 0:
        b["point bound width at u* (J-upper - J-lower)"] = upper_decimal(pb.J_hi.upper().fmpq() - pb.J_lo.lower().fmpq(), 3)
        b["trapezoid discretisation at u* (on F)"] = upper_decimal(pb.disc, 3)
        b["tail truncation at u* (on F)"] = upper_decimal(pb.tails, 3)
    b["rounding at u = 0 (radius of J(0))"] = upper_decimal(ev.quantities["J(0)"].value.rad(), 3)
    return b


def eps_ball(rho: arb, alpha: int, steps: int, delta: fmpq) -> arb:
    """(6): eps = T rho + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1) (ball; upper = certified eps)."""
    al = arb(alpha)
    return steps * rho + (1 - 1 / al).log() - (ball(delta).log() + al.log()) / (alpha - 1)


def parse_gamma(value, name: str = "--gamma") -> fmpq:
    """The branch-and-bound tolerance gamma on rho: exact, 0 < gamma <= 1."""
    return exact_in(value, name, 0, 1, "(]")


def check_batch(inputs: dict, p: fmpq, names=("batch_size", "dataset_size")) -> None:
    """Recorded batch_size/dataset_size (both or neither) must give the recorded sampling rate p = b/n; a recorded
    epochs E (with the recorded steps) must give T = floor(E / p) (:func:`steps_of_epochs`)."""
    if "epochs" in inputs and "steps" in inputs:
        e, t = steps_of_epochs(inputs["epochs"], p, "epochs")
        if inputs["epochs"] != str(e):
            raise InputError("epochs", "is not spelt as certify writes it")
        if t != parse_steps(inputs["steps"], "steps"):
            raise InputError("steps", f"must be floor(epochs/sampling_rate) = {t} (Opacus's count)")
    b, n = inputs.get("batch_size"), inputs.get("dataset_size")
    if b is None and n is None:
        return
    if b is None or n is None:
        raise InputError(names[0] if b is None else names[1], "batch_size and dataset_size go together")
    q = parse_batch(b, n, *names)
    if q != p:
        raise InputError(names[0], f"batch_size/dataset_size = {exact_str(q)} disagrees with the sampling rate p = {exact_str(p)}")


def fixed_size_inputs(extra: dict | None, p: fmpq) -> dict[str, str]:
    """The contract fields (fixed-size + replace-one) plus validated ``extra`` inputs of a producer.

    ``extra`` may hold batch_size/dataset_size (which must give p = b/n), epochs (checked with the steps by
    :func:`check_batch` once the inputs are complete), the contract fields (which must
    say fixed-size + replace-one: never answered under another contract) and provenance notes.
    """
    extra = dict(extra or {})
    unknown = set(extra) - {"batch_size", "dataset_size", "epochs"} - set(CONTRACT_INPUTS)
    if unknown:
        raise InputError("extra_inputs", f"only batch_size, dataset_size, epochs, the contract fields and notes are recorded, got {sorted(unknown)}")
    check_batch(extra, p)
    out = {**FIXED_SIZE_REPLACE_ONE.to_inputs(), **extra}
    validate_fixed_size_contract(out, partial=True)
    return out


def validate_fixed_size_contract(inputs: dict, partial: bool = False) -> None:
    """The recorded contract is fixed-size + replace-one and every note names a numeric input and states its
    recorded value (:func:`certify.provenance.check_notes`; ``partial``: a producer's extra inputs)."""
    contract_from_inputs(inputs, FIXED_SIZE_REPLACE_ONE)
    check_notes(inputs, NOTED_INPUTS, partial)


def dp_hypotheses(ev: Evaluation, alpha: int, steps: int, delta: fmpq) -> list[str]:
    """Claims for the ranges Corollary 1 / (6) (and the baselines' (6)) rest on; returns their names."""
    d = exact_str(delta)
    ev.claim("alpha_at_least_2", f"alpha = {alpha} >= {ALPHA_MIN}", str(alpha), ">=", str(ALPHA_MIN), "(6)")
    ev.claim("alpha_at_most_256", f"alpha = {alpha} <= {ALPHA_MAX}", str(alpha), "<=", str(ALPHA_MAX), "(6)")
    ev.claim("steps_positive", f"T = {steps} >= 1", str(steps), ">=", "1", "(6)")
    ev.claim("delta_positive", f"delta = {d} > 0", d, ">", "0", "(6)")
    ev.claim("delta_below_1", f"delta = {d} < 1", d, "<", "1", "(6)")
    return ["alpha_at_least_2", "alpha_at_most_256", "steps_positive", "delta_positive", "delta_below_1"]


def method_hypotheses(ev: Evaluation) -> list[str]:
    """The claims of :data:`METHOD_CLAIMS` the evaluation made: the hypotheses of its rho."""
    return [c.name for c in ev.claims if c.name in METHOD_CLAIMS]


def conclude_rho(ev: Evaluation, prob: Problem, rho_text: str) -> None:
    """Claim + conclusion "rho <= x" (x: the reported upper bound)."""
    ev.claim("rho_bound", f"rho({prob.alpha}, {exact_str(prob.p)}, 2/{exact_str(prob.sigma)}) <= {rho_text}", "rho", "<=", rho_text, "(5)")
    hyps = method_hypotheses(ev)
    ev.conclude(
        "rho",
        f"one DP-SGD step (alpha = {prob.alpha}, p = {exact_str(prob.p)}, sigma = "
        f"{exact_str(prob.sigma)}) has Renyi divergence rho <= {rho_text} (Theorem 1 / (5))",
        "rho_bound",
        hyps,
    )


def conclude_dp(ev: Evaluation, what: str, alpha: int, steps: int, delta: fmpq, eps_text: str, extra_hypotheses=()) -> None:
    """Claim + conclusion "(eps, delta)-DP" resting on the ranges of (6)."""
    hyps = dp_hypotheses(ev, alpha, steps, delta) + list(extra_hypotheses)
    ev.claim("dp", f"epsilon <= {eps_text}", "epsilon", "<=", eps_text, "(6)")
    ev.conclude("dp", f"{what}: T = {steps} steps are ({eps_text}, {exact_str(delta)})-DP (Corollary 1 / (6) at alpha = {alpha})", "dp", hyps)


def fill_renyi(prob: Problem, steps: int, delta: fmpq, res: SearchResult, ev: Evaluation, cache: dict | None = None) -> RhoFacts:
    facts = fill_rho(prob, res, ev, cache)
    rho = ev.quantities["rho"].value
    ev.add(
        "epsilon",
        eps_ball(rho, prob.alpha, steps, delta),
        "(6)",
        "Corollary 1: T rho + log(1 - 1/alpha) - (log delta + log alpha)/(alpha - 1); upper endpoint is the certified epsilon",
    )
    return facts


# --------------------------------------------------------------------------------------------
# Registered evaluators (the checker's entry points): inputs + witnesses -> Evaluation, no search
# --------------------------------------------------------------------------------------------
def _problem_from_inputs(inputs: dict) -> Problem:
    return Problem(
        parse_alpha(inputs["alpha"], "alpha"),
        parse_p(inputs["sampling_rate"], "sampling_rate"),
        parse_sigma(inputs["noise_multiplier"], "noise_multiplier"),
    )


def validate_rho(inputs: dict) -> Problem:
    """The producer's validators on a `dpsgd/rho-bok` certificate's inputs."""
    prob = _problem_from_inputs(inputs)
    if "gamma" in inputs:
        parse_gamma(inputs["gamma"], "gamma")
    return prob


def validate_renyi(inputs: dict) -> tuple[Problem, int, fmpq]:
    """The producer's validators on a `dpsgd/renyi-bok` certificate's inputs: (problem, steps, delta)."""
    prob = validate_rho(inputs)
    check_batch(inputs, prob.p)
    validate_fixed_size_contract(inputs)
    return prob, parse_steps(inputs["steps"], "steps"), parse_delta(inputs["delta"], "delta")


def _search_witness(witnesses: dict, extra: str) -> SearchResult:
    if not isinstance(witnesses, dict):
        raise InputError("witnesses", "must be an object")
    unknown = set(witnesses) - set(SEARCH_WITNESSES) - {extra}
    if unknown:
        raise InputError("witnesses", f"unknown key(s) {sorted(map(str, unknown))}"[:200])
    res = witness_from_json({k: v for k, v in witnesses.items() if k != extra})
    check_leaf_keys(res)
    return res


def check_gamma(prob: Problem, inputs: dict, res: SearchResult) -> None:
    """The witness gamma is the recorded input gamma (``--gamma``) or else the default of the search."""
    want = parse_gamma(inputs["gamma"], "gamma") if "gamma" in inputs else default_gamma(prob)
    if res.gamma != want:
        raise InputError(
            "witnesses.gamma",
            f"is {exact_str(res.gamma)}, but the search ran with {'the given' if 'gamma' in inputs else 'the default'} gamma = {exact_str(want)}",
        )


def evaluate_rho_bok(inputs: dict, witnesses: dict) -> Evaluation:
    prob = validate_rho(inputs)
    ev = Evaluation()
    res = _search_witness(witnesses, "reported_rho")
    check_gamma(prob, inputs, res)
    fill_rho(prob, res, ev)
    conclude_rho(ev, prob, reported_bound(witnesses.get("reported_rho"), ev.quantities["rho"].value, REPORT_DIGITS, "witnesses.reported_rho"))
    return ev


def evaluate_renyi_bok(inputs: dict, witnesses: dict) -> Evaluation:
    prob, steps, delta = validate_renyi(inputs)
    ev = Evaluation()
    res = _search_witness(witnesses, "reported_epsilon")
    check_gamma(prob, inputs, res)
    fill_renyi(prob, steps, delta, res, ev)
    hyps = method_hypotheses(ev)
    conclude_dp(
        ev,
        f"DP-SGD with p = {exact_str(prob.p)}, sigma = {exact_str(prob.sigma)} (Bok 2026)",
        prob.alpha,
        steps,
        delta,
        reported_bound(witnesses.get("reported_epsilon"), ev.quantities["epsilon"].value, REPORT_DIGITS, "witnesses.reported_epsilon"),
        hyps,
    )
    return ev


# --------------------------------------------------------------------------------------------
# Work model (:func:`certify.limits.check_work`)
# --------------------------------------------------------------------------------------------
def node_seconds(alpha: int, prec: int) -> float:
    """Upper estimate of one trapezoidal node of a point bound (:meth:`certify.dpsgd.mixture._Integrand.node_sum`)
    at ``prec`` working bits (the caller's precision plus :func:`~certify.dpsgd.mixture.extra_bits`). Measured:
    3.2 us (alpha 8), 7.3 us (64), 30 us (256) at 128 bits; x5, x3.6, x3.6 at 1024 bits; x13, x25, x20 at 4096.
    Model: (3 + 0.12 alpha) us x (prec/128)^0.9."""
    return (3e-6 + 1.2e-7 * alpha) * max(1.0, prec / 128) ** 0.9


def kappa_seconds(alpha: int) -> float:
    """Upper estimate of one leaf's curvature work (always at 64 bits): its level re-derived
    (:func:`certify.dpsgd.curvature.choose_levels`: the bound kappa_neg at level full with the float theta choice,
    then the cheaper levels on the same sums) and its key at the recorded level. Measured (CPU, caches cleared, two
    busy cores) 3.8 ms at alpha 8, 20 ms at 64, 65-73 ms at 256; model 3 ms + 0.32 ms alpha."""
    return 3e-3 + 3.2e-4 * alpha


def _extra_bits_estimate(inputs: dict) -> int:
    """An upper estimate of :func:`certify.dpsgd.mixture.extra_bits` from bit lengths (no ball): 2 log2(1/p) +
    2 log2(sigma) + 16, at most 4096."""
    p, s = exact(inputs["sampling_rate"], "sampling_rate"), exact(inputs["noise_multiplier"], "noise_multiplier")
    lp = max(0, int(p.q).bit_length() - int(p.p).bit_length())
    ls = max(0, int(s.p).bit_length() - int(s.q).bit_length())
    return min(4096, 2 * lp + 2 * ls + 16)


def rho_work(alpha: int, extra: int, witness: dict, prec: int) -> tuple[float, str]:
    """(seconds, field) of re-checking one rho witness: every recorded rule's nodes (an upper bound: only the leaf
    endpoints' rules are evaluated) at :func:`node_seconds`, one :func:`kappa_seconds` per leaf, 0.02 s x prec/128
    of closed forms (J(0), Proposition 2, the small-p route)."""
    leaves, points = witness.get("leaves") or [], witness.get("points") or []
    refuse_above("bb_evaluations", len(leaves), "witnesses.leaves", "leaves of the branch-and-bound partition")
    refuse_above("quadrature_rules", len(points), "witnesses.points")
    nodes = 0
    for pt in points:
        a, b, h = exact(pt["a"], "rule a"), exact(pt["b"], "rule b"), exact(pt["h"], "rule h")
        nodes += min(int((b - a) / h) + 1, MAX_NODES) if h > 0 and b >= a else 0
    quad = nodes * node_seconds(alpha, prec + extra)
    curv = len(leaves) * kappa_seconds(alpha)
    rerun = _rerun_seconds(alpha, extra, witness, prec)
    if rerun > quad + curv:
        return scaled(0.02, prec) + quad + curv + rerun, "witnesses.budget.evaluations"
    return scaled(0.02, prec) + quad + curv + rerun, ("witnesses.points" if quad >= curv else "witnesses.leaves")


def _rerun_seconds(alpha: int, extra: int, witness: dict, prec: int) -> float:
    """Estimate of re-running a search stopped by time (:func:`check_seconds_state`) to its recorded e evaluations: per
    evaluation twice the nodes of the finest recorded rule (u* keeps the search's own rule; the others are coarser)
    and two curvature keys. The witness sets e and the rules, so the re-run is also cut at the checker's budget
    while it runs (the search's own time limit)."""
    b = witness.get("budget")
    if not isinstance(b, dict) or b.get("stopped_by") != "seconds" or not isinstance(b.get("evaluations"), str):
        return 0.0
    e = refuse_above("bb_evaluations", exact_int(b["evaluations"], "witnesses.budget.evaluations"), "witnesses.budget.evaluations")
    most = 1
    for pt in witness.get("points") or []:
        a, bb, h = exact(pt["a"], "rule a"), exact(pt["b"], "rule b"), exact(pt["h"], "rule h")
        most = max(most, min(int((bb - a) / h) + 1, MAX_NODES) if h > 0 and bb >= a else 0)
    return e * (2 * most * node_seconds(alpha, prec + extra) + 2 * kappa_seconds(alpha))


def work_rho_bok(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``dpsgd/rho-bok`` and ``dpsgd/renyi-bok``: :func:`rho_work` of the witness."""
    return rho_work(exact_int(inputs["alpha"], "alpha"), _extra_bits_estimate(inputs), witnesses, prec)


def _example_rho():
    from .accountant import certify_rho

    return certify_rho(Problem(8, exact("1/100"), exact("2"))).certificate


def _example_renyi():
    from .accountant import certify_dpsgd

    return certify_dpsgd("1/100", "2", 1000, "1e-6", extra_inputs={"batch_size": "6", "dataset_size": "600"}).certificate


#: the work model of each kind (:func:`certify.limits.check_work`)
WORK = {KIND_RHO: work_rho_bok, KIND_RENYI: work_rho_bok}

register(KIND_RHO, evaluate_rho_bok, validate_rho, RHO_INPUTS, SEARCH_WITNESSES + ("reported_rho",), example=_example_rho)
register(KIND_RENYI, evaluate_renyi_bok, validate_renyi, RENYI_INPUTS, SEARCH_WITNESSES + ("reported_epsilon",), example=_example_renyi)
