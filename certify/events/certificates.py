"""Certificate kind ``events/rdp``: a dp_accounting event ledger, certified by Rényi DP.

Inputs (exact text): the ledger (:func:`certify.events.ledger.ledger_inputs`: ``neighboring`` and per mechanism
``event[i].class``, ``event[i].count``, its parameters and provenance notes) and one query: ``target_delta`` (epsilon
at delta; ``0`` asks for the pure epsilon of a pure ledger), ``target_epsilon`` (delta at epsilon) or ``order`` (the
RDP at that order). Witnesses: the Rényi order ``alpha`` (chosen by floats; any alpha > 1 is valid, the checker
evaluates at it only; absent for ``order`` and pure queries) and the headline decimal ``bound``.

Quantities (balls; upper endpoints are the certified bounds):
  ``rdp[i]``        the RDP of one application of mechanism i at alpha (its module's theorem; EQUATION per class);
  ``rdp``           sum_i count_i rdp[i] (Rényi composition, Mironov 2017 Prop. 1);
  ``extra_delta``   1 - prod_i (1 - delta_i)^count_i of the (epsilon, delta) events (KOV15; only when > 0);
  ``epsilon``       (C) of :mod:`certify.renyi` at the effective delta (delta - extra_delta)/(1 - extra_delta);
  ``delta``         extra_delta + (1 - extra_delta) (C') of :mod:`certify.renyi` at epsilon;
  pure queries: ``epsilon[i]`` the pure epsilon of mechanism i and ``epsilon`` = sum_i count_i epsilon[i] (basic
  composition, Dwork-Roth 2014 Sec. 3.5).
Claims: the hypotheses on the query and the order, then the headline ``bound``: the certified quantity <= the
recorded decimal; the conclusion "(eps, delta)-DP" (or "(alpha, rdp)-RDP"), naming every mechanism whose bound is
only an upper bound.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..balls import (
    PRECISION_LADDER,
    InputError,
    Tri,
    UndecidedError,
    arb,
    ball,
    ball_endpoints,
    compare,
    ctx,
    exact,
    exact_str,
    fmpq,
    require_in,
    upper_decimal,
)
from ..certificate import Budget, Evaluation, exact_operand, reported_bound
from ..provenance import check_notes
from ..renyi import EQ_CONVERT, delta_of_rdp, epsilon_of_rdp
from ..limits import BUDGET_SECONDS
from ..verify import register
from .ledger import Ledger, is_ledger_input, ledger_from_inputs

KIND = "events/rdp"
ALPHA_MAX = 4096
QUERIES = ("target_delta", "target_epsilon", "order")
#: the most work one evaluation may ask for (estimated seconds, decided before any sum)
MAX_WORK_SECONDS = BUDGET_SECONDS  # the checker's budget (certify.limits: one table)
EQ_COMPOSE = "Mironov17 Prop. 1"
EQ_EXTRA = "KOV15 (delta outside the Rényi curve)"
EQ_PURE = "Dwork-Roth 2014 Sec. 3.5 (basic composition)"


def parse_order(value, name: str = "--order") -> fmpq:
    """A Rényi order: exact rational with 1 < alpha <= 4096."""
    a = exact(value, name)
    if a.q > 10**12:
        raise InputError(name, "the order's denominator must be below 10^12")
    return require_in(name, a, 1, ALPHA_MAX, "(]")


def parse_target_delta(value, name: str = "--delta") -> fmpq:
    return require_in(name, exact(value, name), 0, 1, "[)")


def parse_target_epsilon(value, name: str = "--epsilon") -> fmpq:
    return require_in(name, exact(value, name), 0, 10**6, "[]")


PARSERS = {"target_delta": parse_target_delta, "target_epsilon": parse_target_epsilon, "order": parse_order}
FLAGS = {"target_delta": "--delta", "target_epsilon": "--epsilon", "order": "--order"}


def check_work(ledger: Ledger, alpha: fmpq, prec: int) -> None:
    """InputError (naming ``alpha``) when the evaluation at ``alpha`` would exceed MAX_WORK_SECONDS."""
    w = sum(m.work_seconds(alpha, prec) for m, _ in ledger.entries)
    if w > MAX_WORK_SECONDS:
        raise InputError(
            "alpha",
            f"evaluating {len(ledger.entries)} mechanism(s) at alpha = {exact_str(alpha)} and {prec} bits would take about {w:.3g} s "
            f"(limit {MAX_WORK_SECONDS:g} s)",
        )


#: RepeatAndSelectDpEvents nested deeper than this are refused: PS22's bound evaluates the inner curve at two orders,
#: so each level doubles the work (and the work model itself, and the float choice of the order): decided first
MAX_NESTING = 8


def nesting(ledger: Ledger) -> int:
    """How deep RepeatAndSelectDpEvents nest in ``ledger`` (0: none); linear in the ledger's size."""
    inner = [m["inner"] for m, _ in ledger.entries if m.CLASS == "RepeatAndSelectDpEvent"]
    return max((1 + nesting(x) for x in inner), default=0)


def check_nesting(ledger: Ledger) -> None:
    """InputError (naming ``event``) when RepeatAndSelectDpEvents nest deeper than MAX_NESTING."""
    if nesting(ledger) > MAX_NESTING:
        raise InputError("event", f"RepeatAndSelectDpEvents nest more than {MAX_NESTING} deep (each level doubles the work)")


def _hyp(ev: Evaluation, name: str, statement: str, lhs: str, rel: str, rhs: str, values=None) -> None:
    if not ev.claim(name, statement, lhs, rel, rhs, "hypothesis", values=values):
        raise InputError(name[4:], f"hypothesis fails: {statement}")


def caveats(ledger: Ledger) -> list[str]:
    """Why some bounds of the ledger are upper bounds only (quoted in the statement)."""
    return sorted({m.UPPER_ONLY for m, _ in ledger.entries if m.UPPER_ONLY})


def evaluate(ledger: Ledger, query: str, target: fmpq, alpha: fmpq | None, bound: str | None = None) -> Evaluation:
    """Every quantity, claim and conclusion at the current precision (producer and checker alike)."""
    ev = Evaluation()
    t = exact_str(target)
    n, total, rel = len(ledger.entries), ledger.total, ledger.relation
    what = f"the composition of {total} event(s) ({n} distinct mechanism(s); {rel})"
    notes = caveats(ledger)
    caveat = ("; " + "; ".join(notes)) if notes else ""
    if query == "target_delta" and target == 0:  # pure DP by basic composition
        eps = _pure_value(ev, ledger)
        lo, hi = ball_endpoints(eps)  # (once, for the headline and the width)
        bound = upper_decimal(hi, 10) if bound is None else reported_bound(bound, hi, 10, "bound")
        ev.claim("bound", f"{what} is ({bound}, 0)-DP (pure; basic composition){caveat}", "epsilon", "<=", bound, EQ_PURE)
        ev.conclude("dp", f"the release is ({bound}, 0)-DP under {rel}", "bound", [])
        ev.budget = Budget.of({"epsilon width (upper - lower)": _width(lo, hi)})
        return ev
    if query == "target_delta":
        _hyp(ev, "hyp:delta>0", f"delta = {t} > 0", t, ">", "0", (target, fmpq(0)))
        _hyp(ev, "hyp:delta<1", f"delta = {t} < 1", t, "<", "1", (target, fmpq(1)))
    elif query == "target_epsilon":
        _hyp(ev, "hyp:epsilon>=0", f"epsilon = {t} >= 0", t, ">=", "0", (target, fmpq(0)))
    else:
        alpha = target
    a = exact_str(alpha)
    _hyp(ev, "hyp:alpha>1", f"Rényi order alpha = {a} > 1", a, ">", "1", (alpha, fmpq(1)))
    _hyp(ev, f"hyp:alpha<={ALPHA_MAX}", f"Rényi order alpha = {a} <= {ALPHA_MAX}", a, "<=", str(ALPHA_MAX), (alpha, fmpq(ALPHA_MAX)))
    check_work(ledger, alpha, ctx.prec)
    head, value = _value(ev, ledger, query, target, alpha)
    # the headline is the one certify writes: the ball's upper decimal, or a calibration's claimed exact epsilon
    lo, hi = ball_endpoints(value)  # (once, for the headline and the width: the ball's own upper end)
    bound = upper_decimal(hi, 10) if bound is None else reported_bound(bound, hi, 10, "bound", claimed=query == "target_delta")
    if query == "order":
        statement = f"{what} satisfies (alpha, rdp)-RDP with alpha = {a}, rdp = {bound}{caveat}"
        concl = f"the release is ({a}, {bound})-RDP under {rel}"
    elif query == "target_delta":
        statement = f"{what} is (epsilon, delta)-DP with epsilon = {bound}, delta = {t} (Rényi bound at alpha = {a}){caveat}"
        concl = f"the release is ({bound}, {t})-DP under {rel}"
    else:
        statement = f"{what} is (epsilon, delta)-DP with epsilon = {t}, delta = {bound} (Rényi bound at alpha = {a}){caveat}"
        concl = f"the release is ({t}, {bound})-DP under {rel}"
    ev.claim("bound", statement, head, "<=", bound, EQ_CONVERT if head != "rdp" else EQ_COMPOSE)
    ev.conclude("dp", concl, "bound", [c.name for c in ev.claims if c.name.startswith("hyp:")])
    ev.budget = Budget.of(
        {"alpha": "recorded order (any alpha > 1 is valid; the checker never searches)", f"{head} width (upper - lower)": _width(lo, hi)}
    )
    return ev


def _pure_value(ev: Evaluation, ledger: Ledger) -> arb:
    """The pure query's quantities (``epsilon[i]``, ``epsilon``) recorded in ``ev``; the ball ``epsilon``.
    InputError when a mechanism is not pure. Shared by :func:`evaluate` and :func:`headline`."""
    rel = ledger.relation
    eps = arb(0)
    for i, (m, c) in enumerate(ledger.entries):
        e = m.pure_epsilon(rel)
        if e is None or m.extra_delta != 0:
            raise InputError("target_delta", f"0 asks for pure DP, but event[{i}] {m.CLASS} is not a pure mechanism: give a delta > 0")
        eps = eps + c * ev.add(f"epsilon[{i}]", e, m.EQUATION, f"pure epsilon of one {m.describe()}")
    return ev.add("epsilon", eps, EQ_PURE, "sum_i count_i epsilon[i]: the composition is (epsilon, 0)-DP; upper endpoint is the certified epsilon")


def _value(ev: Evaluation, ledger: Ledger, query: str, target: fmpq, alpha: fmpq, prose: bool = True) -> tuple[str, arb]:
    """The quantities at ``alpha`` (``alpha``, ``rdp[i]``, ``rdp``, ``extra_delta``, the headline) recorded in ``ev``
    in this order, with the claim ``hyp:delta>extra_delta`` (InputError when it fails); (headline name, its ball).
    Shared by :func:`evaluate` and :func:`headline` (``prose=False``: the mechanisms' descriptions left empty and the
    witness ``alpha`` not recorded, neither enters a ball): the same balls in the same order at the same precision."""
    rel = ledger.relation
    if query != "order" and prose:  # (the witness as a quantity: the document's, not the headline's)
        ev.add("alpha", ball(alpha), "witness", "Rényi order (chosen by float estimates; any alpha > 1 is valid)", integer=alpha.q == 1)
    rdp = arb(0)
    log_keep = arb(0)  # sum_i count_i log(1 - delta_i)
    for i, (m, c) in enumerate(ledger.entries):
        r = ev.add(f"rdp[{i}]", m.rdp(alpha, rel), m.EQUATION, f"Rényi divergence bound of one {m.describe()} at alpha" if prose else "")
        rdp = rdp + c * r
        if m.extra_delta != 0:
            log_keep = log_keep + c * (-ball(m.extra_delta)).log1p()
    rdp = ev.add("rdp", rdp, EQ_COMPOSE, "sum_i count_i rdp[i] (Rényi composition); upper endpoint bounds the release's RDP at alpha")
    extra = None
    if any(m.extra_delta != 0 for m, _ in ledger.entries):
        extra = ev.add("extra_delta", -log_keep.expm1(), EQ_EXTRA, "1 - prod_i (1 - delta_i)^count_i of the (epsilon, delta) events")
    if query == "order":
        return "rdp", rdp
    if query == "target_delta":
        d_eff = ball(target)
        if extra is not None:
            t = exact_str(target)
            statement = f"delta = {t} > extra_delta (the (epsilon, delta) events' own delta)"
            if not ev.claim("hyp:delta>extra_delta", statement, t, ">", "extra_delta", EQ_EXTRA):
                raise InputError("target_delta", f"delta = {t} is not above the (epsilon, delta) events' own delta {upper_decimal(extra, 6)}")
            d_eff = (ball(target) - extra) / (1 - extra)
        value = ev.add(
            "epsilon",
            epsilon_of_rdp(rdp, alpha, d_eff).max(arb(0)),  # epsilon >= 0 always holds: (C) floored at 0
            EQ_CONVERT,
            "max(0, rdp + log((alpha-1)/alpha) - (log delta' + log alpha)/(alpha-1)), delta' the delta left to the Rényi curve; "
            "upper endpoint is the certified epsilon",
        )
        return "epsilon", value
    d = delta_of_rdp(rdp, alpha, target).min(arb(1))  # delta <= 1 always holds: (C') capped at 1
    if extra is not None:
        d = extra + (1 - extra) * d
    value = ev.add(
        "delta",
        d,
        EQ_CONVERT,
        "min(1, exp((alpha-1)(rdp - epsilon + log((alpha-1)/alpha)) - log alpha)) (+ extra_delta); upper endpoint is the certified delta",
    )
    return "delta", value


def headline(ledger: Ledger, query: str, target: fmpq, alpha: fmpq | None) -> fmpq | None:
    """The certified bound :func:`evaluate` records (the exact upper endpoint of its headline ball) when its first
    precision of the ladder decides everything, computed without the prose: the hypotheses decided exactly, the
    work model, the same balls as :func:`evaluate` (:func:`_pure_value`, :func:`_value`: one code), the headline
    decimal and its claim, the width. None when anything is not plainly decided there (a hypothesis fails, a claim
    or quantity is undecided, an InputError): the caller then runs the full evaluation, which refuses or escalates
    as it always did. A bound returned here is the one the certificate of the same query records."""
    try:
        with ctx.workprec(PRECISION_LADDER[0]):
            return _headline(ledger, query, target, alpha)
    except (UndecidedError, InputError):
        return None


class _Bare:
    """What :func:`_value` and :func:`_pure_value` need of an :class:`Evaluation` when nothing is recorded (the
    answer path): ``add`` refuses a non-finite ball as ``Evaluation.add`` does (UndecidedError) and returns it, the
    ball kept by name only; ``claim`` is ``Evaluation.claim`` on an Evaluation holding the quantities added so far
    (decided the same way, its operands the same balls: its outcome matters)."""

    __slots__ = ("_balls",)

    def __init__(self):
        self._balls = {}

    def add(self, name: str, value, equation: str, description: str = "", integer: bool = False, bound: str = ""):
        if not value.is_finite():
            raise UndecidedError(f"quantity {name} ({equation}) is not finite at this precision")
        self._balls[name] = value
        return value

    def claim(self, *args, **kw) -> bool:
        ev = Evaluation()
        for name, value in self._balls.items():
            ev.add(name, value, "")
        return ev.claim(*args, **kw)


def _headline(ledger: Ledger, query: str, target: fmpq, alpha: fmpq | None) -> fmpq | None:
    ev = _Bare()
    if query == "target_delta" and target == 0:
        value = _pure_value(ev, ledger)
    else:
        if query == "target_delta":
            hyps = target > 0 and target < 1
        elif query == "target_epsilon":
            hyps = target >= 0
        else:
            hyps, alpha = True, target
        if not (hyps and alpha > 1 and alpha <= ALPHA_MAX):
            return None
        check_work(ledger, alpha, ctx.prec)
        value = _value(ev, ledger, query, target, alpha, prose=False)[1]
    lo, hi = ball_endpoints(value)
    if compare(value, "<=", exact_operand(upper_decimal(hi, 10))) is not Tri.TRUE:  # the claim "bound"
        return None
    # The budget's width (_width) is upper_decimal(hi - lo), whose _bounded_endpoint(hi - lo) never refuses here:
    # ball_endpoints(value) returned, so check_magnitude(value) passed: value's radius rad is 0 or 2^(k-1) <= rad <
    # 2^k with |k| <= MAX_EXPONENT + 2^16. hi - lo = 2 rad exactly (lo = mid - rad, hi = mid + rad in rationals), so
    # hi - lo = 0 (not checked) or 2^k <= p/q < 2^(k+1) in lowest terms, where 2^(bp-1) <= p < 2^bp and 2^(bq-1) <=
    # q < 2^bq (bit lengths) give k - 1 < bp - bq < k + 2: |bp - bq| <= |k| + 1 <= MAX_EXPONENT + 2^16 + 1, within the
    # bound MAX_EXPONENT + 2^16 + 2 it refuses beyond. (The claim "bound" above is decided by the balls, not skipped:
    # value <= ball(decimal) can be undecided at 128 bits when the decimal is not dyadic and lies within about
    # 2^-128 of hi, and the certificate then escalates.)
    return hi


def _width(lo: fmpq, hi: fmpq) -> str:
    """The width hi - lo of a ball with these exact endpoints, rounded up to 3 digits."""
    return upper_decimal(hi - lo, 3)


# --------------------------------------------------------------------------------------------
# the checker's side
# --------------------------------------------------------------------------------------------
_OTHER = re.compile(r"(target_delta|target_epsilon|order)(\.note)?")


def is_input(name: str) -> bool:
    return is_ledger_input(name) or _OTHER.fullmatch(name) is not None


def parse_inputs(inputs: dict) -> tuple[Ledger, str, fmpq]:
    """(ledger, query, target) from a certificate's inputs; InputError naming the field otherwise.

    Memoised by the exact inputs (every name and text, in order): the checker's validator and evaluator read the
    same inputs. A result depends on those texts only; a refusal is never memoised (re-raised each time); the last few
    only (one check needs one)."""
    if not isinstance(inputs, dict):
        raise InputError("inputs", "must be an object")
    if all(type(k) is str and type(v) is str for k, v in inputs.items()):
        return _parse_items(tuple(inputs.items()))
    return _parse_inputs(inputs)


@lru_cache(maxsize=4)
def _parse_items(items: tuple) -> tuple[Ledger, str, fmpq]:
    return _parse_inputs(dict(items))


def _parse_inputs(inputs: dict) -> tuple[Ledger, str, fmpq]:
    given = [q for q in QUERIES if q in inputs]
    if len(given) != 1:
        raise InputError("target_delta", "exactly one of target_delta, target_epsilon, order must be recorded")
    query = given[0]
    target = PARSERS[query](inputs[query], query)
    check_notes({k: v for k, v in inputs.items() if _OTHER.fullmatch(k)}, {query})
    ledger = ledger_from_inputs(inputs)
    check_nesting(ledger)
    return ledger, query, target


def evaluate_events_rdp(inputs: dict, witnesses: dict) -> Evaluation:
    """The checker's evaluator: re-evaluates at the recorded order (never searches)."""
    ledger, query, target = parse_inputs(inputs)
    pure = query == "target_delta" and target == 0
    need = {"bound"} if pure or query == "order" else {"alpha", "bound"}
    if not isinstance(witnesses, dict) or set(witnesses) != need:
        raise InputError("witnesses", f"must be exactly {{{', '.join(sorted(need))}}}")
    bound = witnesses["bound"]
    if not isinstance(bound, str):
        raise InputError("bound", "must be exact text")
    try:
        exact_operand(bound)
    except InputError as err:
        raise InputError("bound", err.message) from None
    alpha = parse_order(witnesses["alpha"], "alpha") if "alpha" in need else None
    return evaluate(ledger, query, target, alpha, bound)


def work(inputs: dict, witnesses: dict, prec: int) -> tuple[float, str]:
    """Work model of ``events/rdp``: each distinct mechanism's own estimate at the recorded order (its
    ``work_seconds``: a closed form, or the Poisson binomial sum / quadrature) at ``prec`` bits."""
    ledger = ledger_from_inputs(inputs)
    check_nesting(ledger)
    alpha = parse_order(witnesses["alpha"], "witnesses.alpha") if "alpha" in witnesses else fmpq(2)
    return sum(m.work_seconds(alpha, prec) for m, _ in ledger.entries), "inputs.event"


#: the work model of the kind (:func:`certify.limits.check_work`)
WORK = {KIND: work}


def validate(inputs: dict) -> None:
    parse_inputs(inputs)


def _example():
    from .accountant import certify_events
    from .ledger import ledger_of

    event = {
        "class_name": "ComposedDpEvent",
        "events": [
            {"class_name": "SelfComposedDpEvent", "count": 10, "event": {"class_name": "LaplaceDpEvent", "noise_multiplier": "2"}},
            {"class_name": "GaussianDpEvent", "noise_multiplier": "5"},
            {
                "class_name": "PoissonSampledDpEvent",
                "sampling_probability": "1/100",
                "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1"},
            },
        ],
    }
    return certify_events(ledger_of(event, "add-remove"), delta="1e-6")


register(
    KIND,
    evaluate_events_rdp,
    validate,
    is_input,
    ("alpha", "bound"),
    example=_example,
    fields={"--delta": "target_delta", "--epsilon": "target_epsilon"},
)
