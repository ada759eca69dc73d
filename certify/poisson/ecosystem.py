"""Schedules from the ecosystem: Opacus accountant histories and dp_accounting events (no torch needed).

Both libraries hold binary floats. A float is converted to its exact binary value
(``fractions.Fraction(x)``: 0.01 becomes 5764607523034235/576460752303423488, not 1/100), and the schedule
records a note per converted field ("binary float 0.01 from ...; exact value ..."), which the certificate
carries as an input field ``<field>.note``. NaN and infinities are refused.

* Opacus: ``RDPAccountant.history`` is a list of ``(noise_multiplier, sample_rate, num_steps)``; its
  ``state_dict()`` is ``{"history": [...], ...}``. Opacus accounts Poisson sampling under add/remove
  adjacency, so the contract is poisson + add-remove. Consecutive identical entries are merged.
* dp_accounting (optional, never imported here: events are recognised by class name and fields):
  ``GaussianDpEvent(z)`` (one full-batch step: q = 1), ``PoissonSampledDpEvent(q, GaussianDpEvent(z))``
  (poisson + add-remove, sigma = z), ``SampledWithoutReplacementDpEvent(n, b, GaussianDpEvent(z))``
  (fixed-size + replace-one, p = b/n; dp_accounting measures z against the replace-one sensitivity 2C,
  so sigma relative to C is 2z), ``SelfComposedDpEvent(e, count)``, ``ComposedDpEvent([...])``,
  ``NoOpDpEvent``. Any other event is refused with an error naming its class; so is a mixture of
  contracts in one event.
"""

from __future__ import annotations


from ..balls import InputError, exact_str, fmpq
from ..inputfile import load_json
from ..contract import POISSON_ADD_REMOVE, Contract, parse_contract
from ..event_tree import EventView, from_library, walk
from ..provenance import ratio_note, replace_one_noise_note
from .schedule import MAX_PHASES, Phase, Schedule, parse_noise_multiplier, parse_sampling_rate, parse_steps


def _schedule(contract: Contract, entries: list, source: str, merge: bool) -> Schedule:
    """entries: (q, q_note, sigma, sigma_note, steps); consecutive identical entries merged if ``merge``."""
    phases: list[Phase] = []
    notes: list[list[tuple[str, str]]] = []
    for q, qn, s, sn, t in entries:
        if merge and phases and phases[-1].sampling_rate == q and phases[-1].noise_multiplier == s:
            phases[-1] = Phase(q, s, phases[-1].steps + t)
            continue
        phases.append(Phase(q, s, t))
        notes.append([(f, n) for f, n in (("sampling_rate", qn), ("noise_multiplier", sn)) if n])
    if not phases:
        raise InputError(source, "is empty: no DP-SGD step to account for")
    if len(phases) > MAX_PHASES:
        raise InputError(source, f"has {len(phases)} phases, at most {MAX_PHASES} accepted")
    flat = tuple((f"phase[{i}].{f}", n) for i, ns in enumerate(notes) for f, n in ns)
    return Schedule(contract, tuple(phases), flat, source)


# --------------------------------------------------------------------------------------------
# Opacus
# --------------------------------------------------------------------------------------------
def opacus_history(obj, name: str = "--opacus-history") -> Schedule:
    """A poisson + add-remove Schedule from an Opacus history or state dict (JSON-like object).

    ``[[noise_multiplier, sample_rate, num_steps], ...]`` or ``{"history": [...], ...}``; floats are
    converted exactly (and noted), consecutive identical entries merged.
    """
    if isinstance(obj, dict):
        if "history" not in obj:
            raise InputError(name, "a state dict must have a 'history' list")
        obj = obj["history"]
    if not isinstance(obj, (list, tuple)):
        raise InputError(name, "must be a list of [noise_multiplier, sample_rate, num_steps] or {'history': [...]}")
    if not obj:
        raise InputError(name, "is empty: no DP-SGD step to account for")
    entries = []
    for i, e in enumerate(obj):
        where = f"{name} entry {i}"
        if not isinstance(e, (list, tuple)) or len(e) != 3:
            raise InputError(where, f"must be [noise_multiplier, sample_rate, num_steps], got {e!r}"[:200])
        s, sn = from_library(e[0], f"{where}: noise_multiplier", "Opacus")
        q, qn = from_library(e[1], f"{where}: sample_rate", "Opacus")
        t_val, _ = from_library(e[2], f"{where}: num_steps", "Opacus")
        q = parse_sampling_rate(q, f"{where}: sample_rate")
        s = parse_noise_multiplier(s, f"{where}: noise_multiplier")
        t = parse_steps(t_val, f"{where}: num_steps")
        entries.append((q, qn, s, sn, t))
    return _schedule(POISSON_ADD_REMOVE, entries, "Opacus history", merge=True)


def load_opacus_history(path: str, name: str = "--opacus-history") -> Schedule:
    """Read an Opacus history / state dict saved as JSON (numbers are the floats Opacus held)."""
    # a regular UTF-8 file only, size counted while reading; depth, duplicate keys, NaN refused
    obj = load_json(path, name, 64 * 1024 * 1024)
    return opacus_history(obj, name)


# --------------------------------------------------------------------------------------------
# dp_accounting
# --------------------------------------------------------------------------------------------
SUPPORTED_EVENTS = (
    "GaussianDpEvent",
    "PoissonSampledDpEvent",
    "SampledWithoutReplacementDpEvent",
    "SelfComposedDpEvent",
    "ComposedDpEvent",
    "NoOpDpEvent",
)


def adjacency_of(neighboring_relation) -> str:
    """'add-remove' or 'replace-one' from a dp_accounting NeighboringRelation (or its name / our name)."""
    name = getattr(neighboring_relation, "name", neighboring_relation)
    key = str(name).strip().upper().replace("-", "_")
    table = {"ADD_OR_REMOVE_ONE": "add-remove", "ADD_REMOVE": "add-remove", "REPLACE_ONE": "replace-one"}
    if key not in table:
        raise InputError("neighboring_relation", f"must be ADD_OR_REMOVE_ONE or REPLACE_ONE, got {name!r} (REPLACE_SPECIAL is not covered)")
    return table[key]


def _gaussian_z(view: EventView) -> tuple[fmpq, str | None]:
    inner = EventView(view.field("event"), f"{view.where}.event")
    if inner.cls != "GaussianDpEvent":
        raise InputError("event", f"{inner.where}: the sampled event must be a GaussianDpEvent here, got {inner.cls}")
    return inner.number("noise_multiplier")


def _leaf(adjacency: str):
    """The DP-SGD reading of one leaf: its key (contract, q, q_note, sigma, sigma_note) for :func:`certify.event_tree.walk`."""

    def leaf(view: EventView) -> tuple:
        cls, where = view.cls, view.where
        if cls == "GaussianDpEvent":
            contract = parse_contract("poisson", adjacency, sampling_name="event", adjacency_name="neighboring_relation")
            z, zn = view.number("noise_multiplier")
            return (contract, fmpq(1), None, z, zn)
        if cls == "PoissonSampledDpEvent":
            contract = parse_contract("poisson", adjacency, sampling_name="event", adjacency_name="neighboring_relation")
            q, qn = view.number("sampling_probability")
            z, zn = _gaussian_z(view)
            return (contract, q, qn, z, zn)
        if cls == "SampledWithoutReplacementDpEvent":
            contract = parse_contract("fixed-size", adjacency, sampling_name="event", adjacency_name="neighboring_relation")
            n, _ = view.number("source_dataset_size")
            b, _ = view.number("sample_size")
            if n.q != 1 or b.q != 1 or not (1 <= b < n):
                raise InputError("event", f"{where}: need integers 1 <= sample_size < source_dataset_size, got {exact_str(b)} and {exact_str(n)}")
            z, zn = _gaussian_z(view)
            return (contract, b / n, ratio_note(b, n), 2 * z, replace_one_noise_note(z, zn))
        raise InputError("event", f"{cls} is not supported (supported: {', '.join(SUPPORTED_EVENTS)})")

    return leaf


def _too_many(n: int) -> str:
    return f"has more than {n} distinct consecutive steps (at most {n} phases accepted)"


def from_dp_event(event, neighboring_relation) -> Schedule:
    """The Schedule of a dp_accounting DpEvent under a declared neighbouring relation (see module doc)."""
    adjacency = adjacency_of(neighboring_relation)
    leaves = [(*key, count, where) for key, count, where in walk(event, _leaf(adjacency), max_runs=MAX_PHASES, too_many=_too_many)]
    if not leaves:
        raise InputError("event", "contains no DP-SGD step (only NoOp events)")
    contracts = {c for c, *_ in leaves}
    if len(contracts) > 1:
        names = " and ".join(sorted(f"{c.sampling} + {c.adjacency}" for c in contracts))
        raise InputError("event", f"mixes contracts ({names}): one certificate, one contract")
    contract = contracts.pop()
    entries = []
    for _, q, qn, z, zn, count, where in leaves:
        q = parse_sampling_rate(q, f"{where}: sampling rate", allow_one=True)
        s = parse_noise_multiplier(z, f"{where}: noise multiplier")
        t = parse_steps(count, f"{where}: count")
        entries.append((q, qn, s, zn, t))
    return _schedule(contract, entries, "dp_accounting event", merge=True)
