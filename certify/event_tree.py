"""The one reader of dp_accounting event trees: ``DpEvent`` objects, their ``to_named_tuple()`` form, or its JSON.

dp_accounting describes a release as a tree of events: leaves (mechanisms) and the composition nodes
``ComposedDpEvent(events)``, ``SelfComposedDpEvent(event, count)`` and ``NoOpDpEvent()``. This module walks the
tree once, whatever its form, and hands every leaf to the caller's ``leaf`` function (the DP-SGD reading of
:mod:`certify.poisson.ecosystem`, the mechanisms of :mod:`certify.events.mechanisms`). It depends on neither (a
module of the core, beside :mod:`certify.provenance` and :mod:`certify.inputfile`), so both read through it and the
import arrows run one way:

* an event is a dp_accounting object (class name = the event's class), a named tuple of
  ``to_named_tuple()`` (its ``class_name`` field), or a JSON object ``{"class_name": ..., <fields>}``
  (``module_name`` optional and ignored);
* a field is read by :meth:`EventView.field`: a missing field, a field named like ``__class__`` and (for the
  named-tuple and JSON forms, whose field lists are complete) an unknown field are refused with an
  :class:`~certify.balls.InputError` naming the event's path, class and field;
* ``ComposedDpEvent.events`` must be a list; ``SelfComposedDpEvent.count`` a non-negative integer;
* the walk is memoised on object identity (a DAG of a few hundred objects standing for 10^8 events costs no more
  than its distinct objects), a cycle or a nesting deeper than :data:`MAX_EVENT_DEPTH` is refused (a shared
  sub-event's height counts at every depth it is reached), and the result is a list of runs
  ``[key, count, where]`` whose consecutive equal keys are merged, with at most ``max_runs`` runs.

Numbers handed over by a library (:func:`from_library`): a binary float becomes its exact binary value with a
provenance note (:mod:`certify.provenance`); NaN and infinities are refused; ints, exact strings and rationals
are taken as they are.
"""

from __future__ import annotations

import math
from typing import Callable

from .balls import InputError, exact, exact_str, fmpq
from .provenance import binary_float_note, noted_float

#: the deepest nesting of dp_accounting events read
MAX_EVENT_DEPTH = 100

#: the composition nodes of the algebra (handled by :func:`walk` itself) and their fields
COMPOSITION_FIELDS = {"NoOpDpEvent": (), "SelfComposedDpEvent": ("event", "count"), "ComposedDpEvent": ("events",)}


def from_library(value, name: str, library: str) -> tuple[fmpq, str | None]:
    """Exact value of a number handed over by another library, and a note when it was a binary float.

    Floats (including numpy floats) become their exact binary value; NaN/inf are refused. Ints, exact
    strings, Fractions and fmpq are taken as they are (no note).
    """
    if isinstance(value, bool):
        raise InputError(name, f"expected a number, got the boolean {value!r}")
    is_float = isinstance(value, float) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") == "f")
    if is_float:
        x = float(value)
        if math.isnan(x) or math.isinf(x):
            raise InputError(name, f"{x!r} is not a number: NaN and infinities are refused")
        return binary_float_note(x, library)
    if hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu":
        value = int(value)
    if value is None or isinstance(value, (dict, list, tuple)):
        raise InputError(name, f"expected a number, got {str(value)[:60]}")
    return exact(value, name), None


_MISSING = object()
#: the field names of the attrs classes read so far (a class's own ``__attrs_attrs__``, fixed when it is defined)
_ATTRS_NAMES: dict = {}


class EventView:
    """One event of the tree, whatever its form: its class name, its path and its fields."""

    __slots__ = ("event", "cls", "where", "names", "_get")

    def __init__(self, event, where: str):
        self.event, self.where = event, where
        names = _ATTRS_NAMES.get(type(event))
        if names is not None:  # an attrs class seen before (dp_accounting's events): its fields, as below
            self.cls, self.names = type(event).__name__, names
            self._get = lambda k: getattr(event, k, _MISSING)
            return
        if isinstance(event, dict):
            cls = event.get("class_name")
            if not isinstance(cls, str) or not cls.isidentifier():
                raise InputError(where, "an event must be an object with a 'class_name' (the JSON form of dp_accounting's DpEvent.to_named_tuple())")
            self.names = {k for k in event if k not in ("class_name", "module_name")}
            self._get = lambda k: event.get(k, _MISSING)
        elif isinstance(event, tuple) and "class_name" in getattr(event, "_fields", ()):
            cls = event.class_name
            self.names = {k for k in event._fields if k not in ("class_name", "module_name")}
            self._get = lambda k: getattr(event, k, _MISSING)
        elif event is None or isinstance(event, (int, float, str, list, tuple, bytes)):
            hint = " (a named tuple saved by json.dumps becomes a list: write each as an object of its fields)" if isinstance(event, list) else ""
            raise InputError(where, f"expected an event, got {type(event).__name__} {str(event)[:40]}{hint}")
        else:
            cls = type(event).__name__
            attrs = getattr(type(event), "__attrs_attrs__", None)
            self.names = {a.name for a in attrs} if attrs is not None else None  # a plain object: fields unknown
            if attrs is not None and isinstance(cls, str) and type(event).__dict__.get("__attrs_attrs__") is attrs:
                _ATTRS_NAMES[type(event)] = frozenset(self.names)
            self._get = lambda k: getattr(event, k, _MISSING)
        if not isinstance(cls, str):
            raise InputError(where, "the event's class_name must be text")
        self.cls = cls
        checked = self.names if isinstance(event, (dict, tuple)) else ()  # an attrs class's own fields need no check
        bad = sorted(k for k in checked if not isinstance(k, str) or k.startswith("__") or not k.isidentifier())
        if bad:
            raise InputError(f"{where}.{bad[0]}"[:200], f"{cls} has a field named {str(bad[0])[:40]!r}: not a dp_accounting field")

    def field(self, name: str, default=_MISSING):
        """The field's value; a missing field (without a default) is refused, naming the class and the field."""
        value = self._get(name)
        if value is _MISSING:
            if default is not _MISSING:
                return default
            raise InputError(f"{self.where}.{name}", f"{self.cls} lacks the field {name!r}")
        return value

    def number(self, name: str, library: str = "dp_accounting", default=_MISSING) -> tuple[fmpq, str | None]:
        """A numeric field at its exact value (and a note when it was a binary float)."""
        return from_library(self.field(name, default), f"{self.where}.{name}", library)

    def number_noted(self, name: str, library: str = "dp_accounting", default=_MISSING):
        """:meth:`number` with a binary float's note a :class:`certify.provenance.FloatNote` (written when read)."""
        value = self.field(name, default)
        if type(value) is float and math.isfinite(value):
            return noted_float(value, library)
        return from_library(value, f"{self.where}.{name}", library)

    def check_fields(self, expected, optional=()) -> None:
        """Refuse an unknown field (the named-tuple and JSON forms list all fields) or a missing required one."""
        for k in expected:
            if k not in optional:
                self.field(k)
        if self.names is not None:
            extra = sorted(self.names - set(expected))
            if extra:
                known = ", ".join(expected) or "none"
                raise InputError(f"{self.where}.{extra[0]}"[:200], f"{self.cls} has no field {extra[0]!r} (its fields: {known})")


def count_of(view: EventView) -> int:
    """``SelfComposedDpEvent.count``: a non-negative integer."""
    c, _ = view.number("count")
    if c.q != 1 or c < 0:
        raise InputError(f"{view.where}.count", f"SelfComposedDpEvent.count must be a non-negative integer, got {exact_str(c)}"[:200])
    return int(c.p)


def _merge_into(runs: list, run: list, max_runs: int, too_many: Callable[[int], str]) -> None:
    if runs and runs[-1][0] == run[0]:
        runs[-1] = [run[0], runs[-1][1] + run[1], runs[-1][2]]
    else:
        runs.append(list(run))
    if len(runs) > max_runs:
        raise InputError("event", too_many(max_runs))


def walk(event, leaf: Callable[[EventView], object], *, max_runs: int, too_many: Callable[[int], str], where: str = "event") -> list:
    """The runs ``[key, count, where]`` of the event tree: ``leaf(view)`` gives a leaf's key (a hashable value),
    counts multiply through ``SelfComposedDpEvent`` and consecutive equal keys merge (composition is commutative, so a
    caller that does not care about order may merge further)."""
    return _walk(event, leaf, where, 0, {}, max_runs, too_many)


def _walk(event, leaf, where: str, depth: int, memo: dict, max_runs: int, too_many) -> list:
    if depth > MAX_EVENT_DEPTH:
        raise InputError("event", f"nested more than {MAX_EVENT_DEPTH} levels deep")
    key = id(event)
    if key in memo:  # walked before, at another depth: its own height still counts from here
        _, runs, height = memo[key]
        if depth + height - 1 > MAX_EVENT_DEPTH:  # its deepest event would sit at depth + height - 1
            raise InputError("event", f"nested more than {MAX_EVENT_DEPTH} levels deep")
        return runs
    view = EventView(event, where)
    runs: list = []
    children: list = []
    if view.cls in COMPOSITION_FIELDS:
        view.check_fields(COMPOSITION_FIELDS[view.cls])
    if view.cls == "NoOpDpEvent":
        pass
    elif view.cls == "SelfComposedDpEvent":
        c = count_of(view)
        child = view.field("event")
        children = [child]
        if c > 0:  # the count multiplies every run of the inner event
            runs = [[k, n * c, w] for k, n, w in _walk(child, leaf, f"{where}.event", depth + 1, memo, max_runs, too_many)]
    elif view.cls == "ComposedDpEvent":
        events = view.field("events")
        if not isinstance(events, (list, tuple)) or (isinstance(events, tuple) and hasattr(events, "_fields")):
            raise InputError(f"{where}.events", f"ComposedDpEvent.events must be a list of events, got {type(events).__name__}")
        children = list(events)
        for i, e in enumerate(children):
            for r in _walk(e, leaf, f"{where}.events[{i}]", depth + 1, memo, max_runs, too_many):
                _merge_into(runs, r, max_runs, too_many)
    else:
        runs = [[leaf(view), 1, where]]
    height = 1 + max((memo[id(e)][2] for e in children if id(e) in memo), default=0)
    memo[key] = (event, runs, height)  # the event is kept alive with its runs, so that its id is not reused
    return runs


def as_json(event):
    """The JSON form read here of a dp_accounting event or of its ``to_named_tuple()``: each named tuple written as an
    object of its fields (``json.dumps`` of a named tuple would write a list, which loses the field names)."""
    if hasattr(event, "to_named_tuple"):
        event = event.to_named_tuple()
    if isinstance(event, tuple) and hasattr(event, "_asdict"):
        return {k: as_json(v) for k, v in event._asdict().items()}
    if isinstance(event, (list, tuple)):
        return [as_json(v) for v in event]
    return event
