"""A release's ledger: the distinct mechanisms of an event tree with their counts, under one neighbouring relation.

Rényi divergences add under (adaptive) composition (Mironov 2017, Prop. 1), so the order of the events does not
matter: :func:`ledger_of` reads the tree once (:func:`certify.event_tree.walk`) and keeps each distinct
mechanism (same class, same exact parameters, same provenance notes) once with the sum of its counts. A mechanism
not certified under the relation, an event class no theorem covers, NonPrivate and an empty ledger are refused with
an InputError naming the event's path, its class and why.

The certificate records a ledger as exact text (:func:`ledger_inputs`): ``neighboring``, then per entry i
``event[i].class``, ``event[i].count`` and ``event[i].<parameter>`` (with ``event[i].<parameter>.note`` when the
value came as a binary float); :func:`ledger_from_inputs` reads it back with the same validators.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..balls import InputError, exact_int
from ..provenance import NOTE_SUFFIX, check_notes
from .mechanisms import MECHANISMS
from .mechanisms.base import DP_ACCOUNTING_NAMES, RELATIONS, Mechanism
from .mechanisms.unsupported import REASONS
from ..event_tree import walk

#: the most distinct mechanisms of one ledger
MAX_ENTRIES = 10_000
#: the largest count of one mechanism
MAX_COUNT = 10**18


@dataclass(frozen=True)
class Ledger:
    relation: str
    entries: tuple  # ((Mechanism, count), ...)

    @property
    def total(self) -> int:
        return sum(c for _, c in self.entries)


def parse_relation(value, name: str = "--neighboring") -> str:
    """Our relation name from ours (add-remove, replace-one, replace-special), dp_accounting's name or its enum."""
    raw = getattr(value, "name", value)
    if not isinstance(raw, str):
        raise InputError(name, f"must be one of {', '.join(RELATIONS)}, got {str(raw)[:40]!r}")
    key = raw.strip()
    for ours, theirs in DP_ACCOUNTING_NAMES.items():
        if key in (ours, theirs) or key.upper().replace("-", "_") == theirs:
            return ours
    raise InputError(name, f"must be one of {', '.join(RELATIONS)} (dp_accounting: {', '.join(DP_ACCOUNTING_NAMES.values())}), got {key[:40]!r}")


def _leaf(relation: str):
    def leaf(view) -> Mechanism:
        cls = view.cls
        if cls in REASONS:
            raise InputError(view.where, f"{cls} {REASONS[cls]}")
        mech = MECHANISMS.get(cls)
        if mech is None:
            raise InputError(view.where, f"unknown event class {cls[:60]!r} (certified: {', '.join(MECHANISMS)}, with Composed/SelfComposed/NoOp)")
        if relation not in mech.RELATIONS:
            allowed = ", ".join(r for r in RELATIONS if r in mech.RELATIONS)
            raise InputError(view.where, f"{cls} is certified under {allowed} only (as in dp_accounting's RdpAccountant), not {relation}")
        return mech.read_nested(view, relation) if getattr(mech, "NESTED", False) else mech.read(view)

    return leaf


def _too_many(n: int) -> str:
    return f"has more than {n} runs of distinct consecutive events"


def ledger_of(event, relation, name: str = "event", allow_empty: bool = False) -> Ledger:
    """The ledger of an event tree (any form :mod:`certify.event_tree` reads) under ``relation``; null mechanisms
    (sampling probability 0, epsilon 0, ...) are dropped like NoOp events; an empty ledger is refused unless
    ``allow_empty``."""
    relation = parse_relation(relation, "neighboring_relation")
    runs = walk(event, _leaf(relation), max_runs=10 * MAX_ENTRIES, too_many=_too_many, where=name)
    return merge(relation, [(m, c) for m, c, _ in runs if not m.is_null()], name, allow_empty)


def merge(relation: str, pairs, name: str = "event", allow_empty: bool = False) -> Ledger:
    """The ledger of (mechanism, count) pairs: equal mechanisms merged, counts and size checked."""
    counts: dict = {}
    for m, c in pairs:
        if c == 0:
            continue
        counts[m] = counts.get(m, 0) + c
        if len(counts) > MAX_ENTRIES:
            raise InputError(name, f"has more than {MAX_ENTRIES} distinct mechanisms")
    if not counts and not allow_empty:
        raise InputError(name, "contains no mechanism (only NoOp or null events, or counts of 0): nothing to certify")
    for m, c in counts.items():
        if c > MAX_COUNT:
            raise InputError(name, f"{m.CLASS} is composed {c} times, more than 10^18"[:200])
    return Ledger(relation, tuple(counts.items()))


# --------------------------------------------------------------------------------------------
# the certificate's record of a ledger
# --------------------------------------------------------------------------------------------
_KEY = re.compile(r"event\[(0|[1-9][0-9]{0,5})\]\.([a-z_]{1,40})(\.note)?")


def is_ledger_input(name: str) -> bool:
    return name == "neighboring" or _KEY.fullmatch(name) is not None


def ledger_inputs(ledger: Ledger) -> dict[str, str]:
    out = {"neighboring": ledger.relation}
    for i, (m, c) in enumerate(ledger.entries):
        out[f"event[{i}].class"] = m.CLASS
        out[f"event[{i}].count"] = str(c)
        for k, t in m.texts().items():
            out[f"event[{i}].{k}"] = t
        for k, n in m.notes:
            out[f"event[{i}].{k}{NOTE_SUFFIX}"] = str(n)  # (a FloatNote: written now)
    return out


def ledger_from_inputs(inputs: dict) -> Ledger:
    """The ledger recorded in a certificate's inputs (InputError naming the field on anything malformed).

    Memoised by the exact inputs (every name and text, in order): the checker's validator, work model and evaluator
    each read the same ledger. A result depends on those texts only; a refusal is never memoised (re-raised each time);
    the last few ledgers only (one check needs one: a 10^4-entry ledger is not kept for long)."""
    if isinstance(inputs, dict) and all(type(k) is str and type(v) is str for k, v in inputs.items()):
        return _ledger_of_items(tuple(inputs.items()))
    return _read_ledger(inputs)


@lru_cache(maxsize=4)
def _ledger_of_items(items: tuple) -> Ledger:
    return _read_ledger(dict(items))


def _read_ledger(inputs: dict) -> Ledger:
    relation = parse_relation(inputs.get("neighboring"), "neighboring")
    by_index: dict[int, dict] = {}
    for k, v in inputs.items():
        m = _KEY.fullmatch(k)
        if m:
            by_index.setdefault(int(m[1]), {})[m[2] + (m[3] or "")] = v
    if not by_index or sorted(by_index) != list(range(len(by_index))):
        raise InputError("event[0].class", "the entries event[i] must be numbered 0, 1, 2, ... without gaps")
    pairs = []
    for i in range(len(by_index)):
        texts, where = by_index[i], f"event[{i}]"
        mech = MECHANISMS.get(texts.get("class"))
        if mech is None:
            raise InputError(f"{where}.class", f"must be one of {', '.join(MECHANISMS)}")
        allowed = {"class", "count", *mech.PARAMS} | {p + NOTE_SUFFIX for p in mech.PARAMS}
        extra = sorted(set(texts) - allowed)
        if extra:
            raise InputError(f"{where}.{extra[0]}", f"is not a field of {mech.CLASS}")
        count = exact_int(texts.get("count"), f"{where}.count")
        if not 1 <= count <= MAX_COUNT:
            raise InputError(f"{where}.count", f"must be an integer in [1, 10^18], got {count}"[:200])
        m = mech.from_texts(texts, where)
        if m.is_null():
            raise InputError(f"{where}.class", f"{m.describe()} is null (releases nothing): a ledger does not record it")
        if relation not in m.RELATIONS or getattr(m, "relation", relation) != relation:
            raise InputError(f"{where}.class", f"{m.CLASS} is not certified under {relation}")
        if m.texts() != {k: texts.get(k) for k in mech.PARAMS}:
            raise InputError(f"{where}.class", "parameters must be recorded in certify's spelling (lowest terms)")
        notes = {p: texts[p + NOTE_SUFFIX] for p in mech.PARAMS if p + NOTE_SUFFIX in texts}
        pairs.append((type(m)(m.params, tuple(sorted(notes.items()))), count))
    fields = {f"event[{i}].{p}" for i, (m, _) in enumerate(pairs) for p in m.PARAMS}
    check_notes({k: v for k, v in inputs.items() if _KEY.fullmatch(k)}, fields)
    ledger = merge(relation, pairs, "event")
    if len(ledger.entries) != len(pairs):
        raise InputError("event[0].class", "two entries record the same mechanism: a ledger lists each once")
    return ledger
