"""dp_accounting's accountant interface, certified: ``from certify.accounting import RdpAccountant``.

A drop-in for ``dp_accounting.rdp.RdpAccountant`` (same constructor arguments and methods): events are
dp_accounting's own objects when it is installed (read through ``to_named_tuple()``) or the named-tuple JSON
(dicts with ``class_name``) when it is not. Every float inside an event is taken at its exact binary value and noted
in the certificate (:mod:`certify.provenance`). The floats returned for compatibility are the certified bounds
rounded up (never below the certified value); the certificate behind the last answer is ``acc.certificate``
(``certify verify`` re-checks it), built on first access: an answer decides first every refusal, the order, every
hypothesis and the headline ball it rounds (:func:`certify.events.accountant.answer_events`), so a float is never
returned that its certificate would not carry, and the certificate, when read, is the document written with the
answer before (the same bytes). What is certified, under which relation: ``docs/events.md``.

    acc = RdpAccountant(neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.1)), 1000)
    acc.get_epsilon(1e-5)          # a float >= the certified epsilon
    acc.certificate                # the events/rdp certificate

Differences from dp_accounting, each on purpose: an event that is not certified is refused by ``compose`` with an
:class:`~certify.balls.InputError` naming its class and why (``supports`` says False), where dp_accounting raises
its own ``UnsupportedEventError`` (NonPrivateDpEvent included: dp_accounting composes it as infinite epsilon);
``get_epsilon(0)`` of a ledger that is not pure returns ``inf`` as dp_accounting does, with no certificate.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .balls import InputError, ball_endpoints, exact_str, float_above, fmpq
from .certificate import Certificate
from .events.accountant import answer_events, certified_value, certify_events, snap_orders
from .events.ledger import Ledger, ledger_of, merge, parse_relation
from .event_tree import from_library
from .provenance import NOTE_SUFFIX

__all__ = ["RdpAccountant", "PLDAccountant", "calibrate_noise"]


def _event_form(event):
    """The event as read: dp_accounting objects through their attrs fields (what ``to_named_tuple()`` lists, read
    without building its named-tuple classes), dicts and named tuples as they are."""
    return event


class RdpAccountant:
    """Certified Rényi accountant with dp_accounting's interface (see the module docstring)."""

    def __init__(self, orders=None, neighboring_relation="ADD_OR_REMOVE_ONE"):
        self._relation = parse_relation(neighboring_relation, "neighboring_relation")
        self._relation_given = neighboring_relation
        self._orders = snap_orders(orders) if orders is not None else None
        self._pairs: list = []
        self._events: list = []
        self._single: Ledger | None = None  # the ledger of the only event, when composed once with count 1
        self._certificate: Certificate | None = None
        #: what builds the certificate of the last answer on first access (``certify_events``' arguments)
        self._pending: tuple | None = None
        #: the order of the last answer (None: none chosen)
        self._alpha = None

    @property
    def certificate(self) -> Certificate | None:
        """The certificate behind the last get_epsilon / get_delta answer (None before the first, or when none
        applies): built on first access (the same document as when built with the answer: ``certify_events`` at
        the recorded order), then kept."""
        if self._pending is not None:
            ledger, kw, name, value = self._pending
            self._pending = None
            self._certificate = certify_events(ledger, notes=_notes(name, value), **kw)
        return self._certificate

    @certificate.setter
    def certificate(self, value: Certificate | None) -> None:
        self._pending, self._certificate = None, value

    @property
    def neighboring_relation(self):
        return self._relation_given

    def _read(self, event, count) -> Ledger:
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InputError("count", f"must be a non-negative integer, got {count!r}"[:200])
        return ledger_of(_event_form(event), self._relation, allow_empty=True)

    def supports(self, event) -> bool:
        """Whether ``compose(event)`` would accept the event (certified under this accountant's relation)."""
        try:
            self._read(event, 1)
        except InputError:
            return False
        return True

    def compose(self, event, count: int = 1) -> RdpAccountant:
        """Add ``count`` applications of ``event`` to the ledger (InputError naming the event's class when refused)."""
        ledger = self._read(event, count)
        if count:
            self._single = ledger if count == 1 and not self._events else None
            self._pairs.extend((m, c * count) for m, c in ledger.entries)
            self._events.append((event, count))
        return self

    @property
    def ledger(self):
        """The composed events: a dp_accounting ComposedDpEvent when the events were dp_accounting objects, else its JSON."""
        parts = [e if c == 1 else _self_composed(e, c) for e, c in self._events]
        if parts and all(hasattr(e, "to_named_tuple") for e, _ in self._events):
            import dp_accounting

            return dp_accounting.ComposedDpEvent(parts)
        return {"class_name": "ComposedDpEvent", "events": [_event_form(p) for p in parts]}

    def _ledger(self) -> Ledger | None:
        if not self._pairs:
            return None
        if self._single is not None:  # one event composed once: its ledger is already merged (the same entries)
            return self._single
        return merge(self._relation, self._pairs)

    def _query(self, name: str, value, **kw) -> float:
        """The certified bound, rounded up to a float. Computed without the certificate (:func:`answer_events`: the
        same refusals, order, hypotheses and headline ball), which ``.certificate`` builds on first access; when the
        first precision does not decide everything, the certificate is built now (escalating or refusing)."""
        if type(value) is float and math.isfinite(value):  # from_library's exact value; its note when the certificate is written
            target = fmpq(*value.as_integer_ratio())
        else:
            target = from_library(value, name, "the caller")[0]
        ledger = self._ledger()
        self.certificate, self._alpha = None, None
        if ledger is None:  # nothing composed: 0 (as dp_accounting answers)
            return 0.0
        if name == "target_delta" and target == 0 and any(m.pure_epsilon(ledger.relation) is None or m.extra_delta != 0 for m, _ in ledger.entries):
            return math.inf
        query = {kw["as"]: target}
        answer = answer_events(ledger, orders=self._orders, **query)
        if answer is None:
            self.certificate = certify_events(ledger, orders=self._orders, notes=_notes(name, value), **query)
            return float_above(certified_value(self._certificate))
        hi, self._alpha = answer
        self._pending = (ledger, {"orders": self._orders, "chosen": self._alpha, **query}, name, value)
        return float_above(hi)

    def get_epsilon(self, target_delta) -> float:
        """The certified epsilon at ``target_delta`` (in [0, 1)), rounded up to a float; ``.certificate`` holds the proof."""
        return self._query("target_delta", target_delta, **{"as": "delta"})

    def get_delta(self, target_epsilon) -> float:
        """The certified delta at ``target_epsilon`` (>= 0), rounded up to a float; ``.certificate`` holds the proof."""
        return self._query("target_epsilon", target_epsilon, **{"as": "epsilon"})

    def get_epsilon_and_optimal_order(self, target_delta) -> tuple[float, float]:
        eps = self.get_epsilon(target_delta)
        return eps, self._order()

    def get_delta_and_optimal_order(self, target_epsilon) -> tuple[float, float]:
        d = self.get_delta(target_epsilon)
        return d, self._order()

    def _order(self) -> float:
        """The recorded order of the last answer as a float (0.0: none), without building the certificate."""
        if self._alpha is not None:
            return float(Fraction(exact_str(self._alpha)))
        return _order_of(self._certificate)


class PLDAccountant(RdpAccountant):
    """Certified PLD accountant with dp_accounting's interface: ``PLDAccountant(neighboring_relation,
    value_discretization_interval=1e-4)``, ``supports`` / ``compose`` / ``ledger`` / ``get_epsilon`` / ``get_delta``.

    Each answer is the upper end of the certified two-sided bracket of kind ``events/pld``
    (:mod:`certify.events.pld_certificates`) on the loss grid h = ``value_discretization_interval``, rounded up to a
    float; ``.certificate`` holds the bracket (``epsilon_lower`` / ``delta_lower``: certified lower bounds of the
    exact value of the composed dominating pairs). The grid is a choice of the accountant, not a privacy parameter
    (every h gives a sound bracket): a float h is read at its shortest decimal (``repr``), so 1e-4 means 1/10000.
    ``supports`` is False for an event without a certified PLD here (:mod:`certify.events.pld_pairs`)."""

    def __init__(self, neighboring_relation="ADD_OR_REMOVE_ONE", value_discretization_interval=1e-4):
        from .pld.accountant import parse_grid

        super().__init__(None, neighboring_relation)
        h = value_discretization_interval
        self._grid = parse_grid(repr(h) if isinstance(h, float) else h, "value_discretization_interval")

    @property
    def value_discretization_interval(self):
        return self._grid

    def _read(self, event, count) -> Ledger:
        from .events.pld_pairs import entries_of

        ledger = super()._read(event, count)
        entries_of(ledger)  # every mechanism has a certified pair under the relation (InputError naming it otherwise)
        return ledger

    def _query(self, name: str, value, **kw) -> float:
        from .events.pld_certificates import certify_events_pld

        target, note = from_library(value, name, "the caller")
        ledger = self._ledger()
        self.certificate = None
        if ledger is None:
            return 0.0
        if name == "target_delta" and target == 0:
            return math.inf  # the PLD accountant answers a delta > 0 (a pure ledger: use RdpAccountant's get_epsilon(0))
        notes = {f"{name}{NOTE_SUFFIX}": note} if note else {}
        self.certificate = certify_events_pld(ledger, grid=self._grid, notes=notes, **{kw["as"]: target})
        q = self.certificate.quantities["epsilon_upper" if name == "target_delta" else "delta_upper"].value
        return float_above(ball_endpoints(q)[1])


def _notes(name: str, value) -> dict:
    """The provenance note of a query's target (``target_delta.note`` when it came as a binary float), as recorded."""
    note = from_library(value, name, "the caller")[1]
    return {f"{name}{NOTE_SUFFIX}": note} if note else {}


def _order_of(cert) -> float:
    if cert is None or "alpha" not in cert.witnesses:
        return 0.0
    a = Fraction(cert.witnesses["alpha"])
    return float(a)


def _self_composed(event, count):
    if hasattr(event, "to_named_tuple"):
        import dp_accounting

        return dp_accounting.SelfComposedDpEvent(event, count)
    return {"class_name": "SelfComposedDpEvent", "event": event, "count": count}


def calibrate_noise(event_family, target_epsilon, target_delta, neighboring_relation="ADD_OR_REMOVE_ONE", accountant="rdp", grid=None, progress=None):
    """The smallest noise of an event family meeting (target_epsilon, target_delta), as a certified bracket.

    ``event_family``: the named-tuple JSON of an event whose noise fields hold ``"$noise"`` (a dp_accounting object cannot
    hold the placeholder; build the dict with :func:`certify.event_tree.as_json` and put ``"$noise"`` in). Returns a
    :class:`certify.events.calibrate.Calibration` (``s_fail``, ``s_pass`` exact, ``passing`` and ``failing``
    certificates). Floats for the targets are taken at their exact binary value.

    ``accountant="pld"``: the exact epsilon of the composed dominating pairs, certified by PLD
    (:func:`certify.events.calibrate_pld.calibrate_pld`: both ends ``events/pld`` certificates, relative width 1e-3,
    ``grid`` the fine loss-grid spacing, default the finest that fits; ``progress`` a callable taking one line of text);
    returns a :class:`certify.bracket.PldCalibration`."""
    eps, eps_note = from_library(target_epsilon, "target_epsilon", "the caller")
    delta, delta_note = from_library(target_delta, "target_delta", "the caller")
    notes = {f"{name}{NOTE_SUFFIX}": note for name, note in (("target_delta", delta_note), ("target_epsilon", eps_note)) if note}
    relation = parse_relation(neighboring_relation, "neighboring_relation")
    if accountant == "pld":
        from .events.calibrate_pld import calibrate_pld

        delta_notes = {k: v for k, v in notes.items() if k.startswith("target_delta")}  # events/pld's only target input
        return calibrate_pld(event_family, eps, delta, relation, grid=grid, progress=progress, notes=delta_notes)
    if accountant != "rdp":
        raise InputError("accountant", f"must be rdp or pld, got {accountant!r}"[:200])
    if grid is not None:
        raise InputError("grid", "is an option of accountant='pld' only")
    from .events.calibrate import calibrate

    return calibrate(event_family, eps, delta, relation, notes=notes)
