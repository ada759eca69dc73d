"""The certified Rényi accountant of an event ledger: choose the order by floats, bound in balls, certify.

For each distinct mechanism the float RDP curve (its ``rdp_floats``) is evaluated on :data:`ORDER_GRID` (or the
caller's orders), composed (sum of count x curve), converted with the float forms of :mod:`certify.renyi`, and the
order with the best float estimate is recorded exactly as the witness ``alpha``; the certificate is then the ball
evaluation of :mod:`certify.events.certificates` at that order (escalating the precision while a claim is
undecided). Floats choose, balls bound: a poor choice only loosens the bound.
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..balls import InputError, ball_endpoints, escalate, exact_str, float_of, fmpq, log_float
from ..certificate import Certificate
from ..poisson.rdp import COARSE
from .certificates import FLAGS, KIND, PARSERS, evaluate, parse_order
from .ledger import Ledger, ledger_inputs
from .mechanisms.base import Mechanism


def _grid() -> tuple:
    out = [fmpq(32 + j, 32) for j in range(1, 33)]  # (1, 2] by 1/32
    out += [fmpq(32 + j, 16) for j in range(1, 225)]  # (2, 16] by 1/16
    out += [fmpq(64 + j, 4) for j in range(1, 193)]  # (16, 64] by 1/4
    out += [fmpq(a) for a in range(65, 257)]
    out += [fmpq(a) for a in COARSE]
    out += [fmpq(a, 10) for a in range(11, 110) if fmpq(a, 10) not in out]  # dp_accounting's default orders 1.1 .. 10.9
    return tuple(sorted(out))


#: the orders the float choice scans (every one is one where each mechanism has a float estimate)
ORDER_GRID = _grid()


def snap_orders(orders) -> tuple:
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
    return tuple(sorted(set(out)))


@lru_cache(maxsize=4096)
def _curve(mech, relation: str, orders: tuple, fine: bool = False):
    import numpy as np

    al = np.array([float_of(a) for a in orders])
    return np.asarray((mech.rdp_floats_fine if fine else mech.rdp_floats)(al, relation), dtype=float)


def _scores(ledger: Ledger, query: str, target: fmpq, orders: tuple, fine: bool):
    import numpy as np

    from .. import renyi

    al = np.array([float_of(a) for a in orders])
    R = np.zeros(len(orders))
    for m, c in ledger.entries:
        R = R + float(c) * _curve(m, ledger.relation, orders, fine)
    extra = 1.0 - math.prod((1.0 - float_of(m.extra_delta)) ** float(c) for m, c in ledger.entries)
    if query == "target_delta":
        d = (float_of(target) - extra) / (1 - extra) if extra > 0 else None
        log_d = math.log(d) if d is not None and d > 0 else (log_float(target) if d is None else -math.inf)
        score = renyi.epsilons((al - 1) * R, al, log_d)
    else:
        score = renyi.log_deltas(R, al, float_of(target))
    return np.where(np.isnan(score), np.inf, score)


def choose_order(ledger: Ledger, query: str, target: fmpq, orders: tuple = ORDER_GRID) -> fmpq:
    """The order minimising the float estimate of epsilon (at delta) or of delta (at epsilon): a choice only.

    First every order with each mechanism's cheap estimate, then the fractional orders within 1 of the best with the
    finer estimates (the Poisson-subsampled Gaussian's defining integral), the best of all kept."""
    import numpy as np

    score = _scores(ledger, query, target, orders, False)
    i = int(np.argmin(score))
    best, best_score = orders[i], float(score[i])
    near = tuple(a for a in orders if a.q != 1 and abs(a - best) <= 1)
    if near and any(type(m).rdp_floats_fine is not Mechanism.rdp_floats_fine for m, _ in ledger.entries):
        fine = _scores(ledger, query, target, near, True)
        j = int(np.argmin(fine))
        if float(fine[j]) < best_score:
            best = near[j]
    return best


def certify_events(ledger: Ledger, *, delta=None, epsilon=None, order=None, orders: tuple | None = None, notes: dict | None = None) -> Certificate:
    """Certificate ``events/rdp`` of ``ledger`` for one query: ``delta`` (epsilon at delta; 0: pure epsilon),
    ``epsilon`` (delta at epsilon) or ``order`` (the RDP at that order). ``orders``: the candidate orders of the
    choice (default :data:`ORDER_GRID`). ``notes``: provenance notes of the query (``{"target_delta.note": ...}``)."""
    given = [(q, v) for q, v in (("target_delta", delta), ("target_epsilon", epsilon), ("order", order)) if v is not None]
    if len(given) != 1:
        raise InputError("--delta", "give exactly one of --delta, --epsilon, --order")
    query, raw = given[0]
    target = PARSERS[query](raw, FLAGS[query])
    pure = query == "target_delta" and target == 0
    if pure:
        for i, (m, _) in enumerate(ledger.entries):
            if m.pure_epsilon(ledger.relation) is None or m.extra_delta != 0:
                raise InputError("--delta", f"0 asks for pure DP, but event[{i}] {m.CLASS} is not a pure mechanism: give a delta in (0, 1)")
    alpha = None
    if query != "order" and not pure:
        alpha = choose_order(ledger, query, target, orders or ORDER_GRID)

    def compute(prec):
        return evaluate(ledger, query, target, alpha), prec

    ev, prec = escalate(compute, what=f"the event accountant at alpha = {exact_str(alpha or target)}")
    inputs = ledger_inputs(ledger)
    inputs[query] = exact_str(target)
    inputs.update(notes or {})
    witnesses = {"bound": ev.claim_named("bound").rhs}
    if alpha is not None:
        witnesses["alpha"] = exact_str(alpha)
    return Certificate(KIND, inputs, ev, witnesses, None, prec)


def certified_value(cert: Certificate) -> fmpq:
    """The certified bound: the exact upper endpoint of the headline quantity (epsilon, delta or rdp)."""
    for name in ("epsilon", "delta", "rdp"):
        if name in cert.quantities and (name != "rdp" or "order" in cert.inputs):
            return ball_endpoints(cert.quantities[name].value)[1]
    raise KeyError("no headline quantity")  # pragma: no cover


__all__ = ["ORDER_GRID", "certify_events", "choose_order", "certified_value", "parse_order", "snap_orders"]
