"""A DP-SGD run as data: an accounting contract and phases of (sampling rate, noise multiplier, steps).

Schedules come from the command line (one phase), a JSON or CSV file (``--schedule FILE``), an Opacus
accountant history, or a dp_accounting event (:mod:`certify.poisson.ecosystem`). Every number is exact
(fmpq); a number that came from another library as a binary float is converted to its exact binary value
and the conversion is recorded in ``notes`` (input field -> text), which :func:`schedule_inputs` writes
into the certificate.

File formats (every number exact: an integer, a decimal such as ``0.01`` or ``1e-7``, or a fraction
``"1/3"``; JSON numbers are read from their decimal text, never through a binary float)::

    [{"sampling_rate": "0.01", "noise_multiplier": "1.1", "steps": 1000}, ...]
    {"contract": {"sampling": "poisson", "adjacency": "add-remove"}, "phases": [...]}

    sampling_rate,noise_multiplier,steps          (CSV, this header, one phase per row)
    0.01,1.1,1000
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from ..balls import InputError, exact_in, exact_str, fmpq, require_in, exact_int
from ..validators import parse_delta as dpsgd_delta, parse_steps as dpsgd_steps, steps_of_epochs
from ..inputfile import loads_strict, read_text
from ..contract import CONTRACT_FIELDS, POISSON_ADD_REMOVE, Contract, contract_from_inputs, parse_contract
from ..provenance import NOTE_SUFFIX, check_notes
from ..limits import cap

MAX_PHASES = cap("schedule_phases")
MAX_STEPS = cap("steps")
#: smallest noise multiplier accepted: below it exp(1/sigma^2) leaves any meaningful range (guard)
SIGMA_MIN = fmpq(1, 10**6)
SIGMA_MAX = fmpq(10**12)
FIELDS = ("sampling_rate", "noise_multiplier", "steps")


@dataclass(frozen=True)
class Phase:
    """``steps`` DP-SGD steps at sampling rate q in (0, 1] with noise multiplier sigma > 0 (exact)."""

    sampling_rate: fmpq
    noise_multiplier: fmpq
    steps: int


@dataclass(frozen=True)
class Schedule:
    """A run: the accounting contract and its phases (composition is over all phases)."""

    contract: Contract
    phases: tuple[Phase, ...]
    #: input field (e.g. "phase[0].sampling_rate") -> how the exact value was obtained (binary float ...)
    notes: tuple[tuple[str, str], ...] = ()
    #: where the schedule came from ("command line", "schedule file", "Opacus history", "dp_accounting event")
    source: str = ""
    #: how q and T were derived from a batch size, a dataset size and epochs (:func:`opacus_epochs`), recorded as
    #: the inputs batch_size, dataset_size, epochs (those given) and re-derived by the checker
    derivation: tuple[tuple[str, str], ...] = ()

    @property
    def total_steps(self) -> int:
        return sum(p.steps for p in self.phases)


# --------------------------------------------------------------------------------------------
# Validation of one phase (the ranges every accountant here relies on)
# --------------------------------------------------------------------------------------------
MAX_BITS = 8000  # numerator and denominator of an input: at most 8000 bits (~2400 digits)


def guard_size(x: fmpq, name: str) -> fmpq:
    """Refuse exact inputs whose numerator or denominator is astronomically long (guard before FLINT/text)."""
    if int(x.p).bit_length() > MAX_BITS or int(x.q).bit_length() > MAX_BITS:
        raise InputError(name, "has too many digits (numerator and denominator at most ~2400 digits each)")
    return x


def parse_sampling_rate(value, name: str = "--sampling-rate", allow_one: bool = True) -> fmpq:
    q = guard_size(exact_in(value, name, 0, 1, "(]" if allow_one else "()"), name)
    return q


def parse_noise_multiplier(value, name: str = "--noise-multiplier") -> fmpq:
    s = guard_size(exact_in(value, name, 0), name)
    return require_in(name, s, SIGMA_MIN, SIGMA_MAX, "[]", shown="in [1e-6, 1e12] (guard against meaningless magnitudes)")


def parse_steps(value, name: str = "--steps") -> int:
    """The DP-SGD step count (:func:`certify.dpsgd.certificates.parse_steps`), at most 1e15 here."""
    t = dpsgd_steps(value, name)
    if t > MAX_STEPS:
        raise InputError(name, f"must be at most 1e15, got {t}")
    return t


def parse_delta(value, name: str = "--delta") -> fmpq:
    """The target delta (:func:`certify.dpsgd.certificates.parse_delta`), with the size guard of this module."""
    return dpsgd_delta(guard_size(exact_in(value, name, 0, 1), name), name)


def make_phase(sampling_rate, noise_multiplier, steps, where: str = "") -> Phase:
    """A validated phase; ``where`` prefixes the field names in errors (e.g. "schedule row 3: ")."""
    return Phase(
        parse_sampling_rate(sampling_rate, f"{where}sampling_rate"),
        parse_noise_multiplier(noise_multiplier, f"{where}noise_multiplier"),
        parse_steps(steps, f"{where}steps"),
    )


def single(sampling_rate, noise_multiplier, steps, contract: Contract = POISSON_ADD_REMOVE) -> Schedule:
    """A one-phase schedule from command-line style values (field names as the CLI options)."""
    ph = Phase(parse_sampling_rate(sampling_rate), parse_noise_multiplier(noise_multiplier), parse_steps(steps))
    return Schedule(contract, (ph,), source="command line")


# --------------------------------------------------------------------------------------------
# Epochs, batch size and dataset size, the way Opacus counts them
# --------------------------------------------------------------------------------------------
#: the recorded inputs of a derivation (:func:`opacus_epochs`), in this order
DERIVATION_FIELDS = ("batch_size", "dataset_size", "epochs")
MAX_DATASET = 10**12


def batches_per_epoch(batch_size: int, dataset_size: int) -> int:
    """k = ceil(n / b): the length of a torch DataLoader of n examples in batches of b (drop_last=False, its default)."""
    return -(-dataset_size // batch_size)


def opacus_epochs(batch_size=None, dataset_size=None, epochs=None, sampling_rate=None, steps=None) -> tuple[fmpq, int, tuple]:
    """(q, T, derivation) of a Poisson-sampled run given the way Opacus describes it.

    Opacus's ``PrivacyEngine.make_private`` replaces a DataLoader of n examples in batches of b by a Poisson
    sampler of rate q = 1 / len(data_loader) = 1 / ceil(n / b) (``DPDataLoader.from_data_loader``), whose epoch
    has int(1 / q) = ceil(n / b) steps (``UniformWithReplacementSampler.__len__``); ``get_noise_multiplier`` with
    ``epochs`` counts T = int(epochs / q) steps. So, exactly:

      --batch-size b --dataset-size n:   q = 1 / ceil(n / b)    (= b / n when b divides n)
      --epochs E:                        T = floor(E / q)       (= E ceil(n / b) with --batch-size/--dataset-size)

    Each of q and T is either given or derived (never both). The derivation is recorded as the inputs
    batch_size, dataset_size, epochs and re-derived by the checker (:func:`check_derivation`).
    """
    has_b = batch_size is not None or dataset_size is not None
    if has_b and (batch_size is None or dataset_size is None):
        raise InputError("--batch-size", "--batch-size and --dataset-size go together (q = 1/ceil(n/b), as Opacus's DPDataLoader)")
    if has_b and sampling_rate is not None:
        raise InputError("--sampling-rate", "give either --sampling-rate or --batch-size with --dataset-size, not both")
    if epochs is not None and steps is not None:
        raise InputError("--epochs", "give either --epochs or --steps, not both")
    rec = []
    if has_b:
        n = exact_int(dataset_size, "--dataset-size")
        require_in("--dataset-size", n, 1, MAX_DATASET, "[]", integer=True)
        b = exact_int(batch_size, "--batch-size")
        require_in("--batch-size", b, 1, n, "[]", integer=True, shown=f"an integer in [1, dataset size {n}]")
        q = fmpq(1, batches_per_epoch(b, n))
        rec += [("batch_size", str(b)), ("dataset_size", str(n))]
    elif sampling_rate is not None:
        q = parse_sampling_rate(sampling_rate)
    else:
        raise InputError("--sampling-rate", "required (or --batch-size with --dataset-size)")
    if epochs is not None:
        e, t = steps_of_epochs(epochs, q)
        rec.append(("epochs", str(e)))
    elif steps is not None:
        t = parse_steps(steps)
    else:
        raise InputError("--steps", "required (or --epochs)")
    return q, t, tuple(rec)


def check_derivation(schedule: Schedule, inputs: dict) -> tuple[tuple[str, str], ...]:
    """The checker's side of :func:`opacus_epochs`: the recorded batch_size, dataset_size, epochs give exactly
    the recorded q and T of the one phase; InputError naming the field otherwise."""
    given = {k: inputs[k] for k in DERIVATION_FIELDS if k in inputs}
    if not given:
        return ()
    if len(schedule.phases) != 1:
        raise InputError(next(iter(given)), "is recorded only for a run of one phase")
    ph = schedule.phases[0]
    has_b = "batch_size" in given or "dataset_size" in given
    q, t, rec = opacus_epochs(
        given.get("batch_size"),
        given.get("dataset_size"),
        given.get("epochs"),
        None if has_b else exact_str(ph.sampling_rate),
        None if "epochs" in given else str(ph.steps),
    )
    if q != ph.sampling_rate:
        raise InputError("phase[0].sampling_rate", f"must be 1/ceil(dataset_size/batch_size) = {exact_str(q)} (Opacus's rule)")
    if t != ph.steps:
        raise InputError("phase[0].steps", f"must be floor(epochs/sampling_rate) = {t} (Opacus's rule)")
    if dict(rec) != given:
        raise InputError(next(iter(given)), "is not spelt as certify writes it")
    return rec


# --------------------------------------------------------------------------------------------
# Parsing schedules from JSON-like objects and files
# --------------------------------------------------------------------------------------------
def _contract_of(obj, name: str) -> Contract:
    if not isinstance(obj, dict) or "sampling" not in obj or "adjacency" not in obj:
        raise InputError(name, "must be an object with 'sampling' and 'adjacency'")
    return parse_contract(obj["sampling"], obj["adjacency"], sampling_name=f"{name}.sampling", adjacency_name=f"{name}.adjacency")


def parse_schedule(obj, *, contract: Contract | None = None, name: str = "schedule", default: Contract | None = POISSON_ADD_REMOVE) -> Schedule:
    """A Schedule from a list of phases or an object ``{"contract": {...}, "phases": [...]}``.

    A phase is an object with sampling_rate, noise_multiplier, steps (and optionally its own sampling
    and adjacency, which must agree with the schedule's contract). ``contract`` (e.g. from the command
    line) must agree with the file's contract when both are given; when neither declares one, ``default``
    (poisson + add-remove; None: refused, as ``certify dpsgd`` does).
    Raises InputError naming the field (and phase) for an empty, malformed or mixed-contract schedule.
    """
    declared = None
    if isinstance(obj, dict):
        unknown = set(obj) - {"contract", "phases"}
        if unknown:
            raise InputError(name, f"unknown key(s) {', '.join(sorted(map(str, unknown)))} (expected 'contract', 'phases')")
        if "contract" in obj:
            declared = _contract_of(obj["contract"], f"{name}.contract")
        if "phases" not in obj:
            raise InputError(f"{name}.phases", "missing: a schedule needs a list of phases")
        phases_obj = obj["phases"]
    else:
        phases_obj = obj
    if not isinstance(phases_obj, list):
        raise InputError(name, "must be a list of phases or an object with 'phases' (a list)")
    if not phases_obj:
        raise InputError(name, "is empty: a schedule needs at least one phase")
    if len(phases_obj) > MAX_PHASES:
        raise InputError(name, f"has {len(phases_obj)} phases, at most {MAX_PHASES} accepted")
    if declared is not None and contract is not None and declared != contract:
        raise InputError(
            f"{name}.contract",
            f"the file declares {declared.sampling} + {declared.adjacency} but "
            f"{contract.sampling} + {contract.adjacency} was asked for: mixed contracts are refused",
        )
    chosen = declared or contract or default
    if chosen is None:
        raise InputError(f"{name}.contract", _UNDECLARED)
    phases = []
    for i, ph in enumerate(phases_obj):
        where = f"{name} phase {i}: "
        if not isinstance(ph, dict):
            raise InputError(f"{name} phase {i}", f"must be an object with {', '.join(FIELDS)}, got {ph!r}"[:200])
        missing = [f for f in FIELDS if f not in ph]
        if missing:
            raise InputError(f"{name} phase {i}", f"missing field(s) {', '.join(missing)}")
        extra = set(ph) - set(FIELDS) - {"sampling", "adjacency"}
        if extra:
            raise InputError(f"{name} phase {i}", f"unknown field(s) {', '.join(sorted(map(str, extra)))}")
        if "sampling" in ph or "adjacency" in ph:
            own = parse_contract(
                ph.get("sampling", chosen.sampling),
                ph.get("adjacency", chosen.adjacency),
                sampling_name=f"{where}sampling",
                adjacency_name=f"{where}adjacency",
            )
            if own != chosen:
                raise InputError(
                    f"{name} phase {i}",
                    f"contract {own.sampling} + {own.adjacency} differs from the "
                    f"schedule's {chosen.sampling} + {chosen.adjacency}: mixed contracts are refused "
                    "(one schedule, one contract)",
                )
        phases.append(make_phase(ph["sampling_rate"], ph["noise_multiplier"], ph["steps"], where))
    return Schedule(chosen, tuple(phases), source="schedule")


_UNDECLARED = (
    "the file declares no contract: add --sampling poisson (Opacus, dp_accounting) or --sampling fixed-size (Bok's paper), "
    'or write {"contract": {"sampling": ..., "adjacency": ...}, "phases": [...]}'
)


def parse_csv(text: str, *, contract: Contract | None = None, name: str = "schedule", default: Contract | None = POISSON_ADD_REMOVE) -> Schedule:
    """A Schedule from CSV text with the header sampling_rate,noise_multiplier,steps (one phase a row)."""
    rows = list(csv.reader(io.StringIO(text)))
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        raise InputError(name, "is empty: expected the header sampling_rate,noise_multiplier,steps and one row a phase")
    header = [c.strip() for c in rows[0]]
    if header != list(FIELDS):
        raise InputError(name, f"the CSV header must be {','.join(FIELDS)}, got {','.join(header)[:100]}")
    if len(rows) == 1:
        raise InputError(name, "is empty: the CSV has a header but no phase")
    if len(rows) - 1 > MAX_PHASES:
        raise InputError(name, f"has {len(rows) - 1} phases, at most {MAX_PHASES} accepted")
    phases = []
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != 3:
            raise InputError(f"{name} row {i}", f"expected 3 values ({','.join(FIELDS)}), got {len(r)}")
        phases.append(make_phase(r[0].strip(), r[1].strip(), r[2].strip(), f"{name} row {i}: "))
    if (contract or default) is None:
        raise InputError(name, _UNDECLARED)
    return Schedule(contract or default, tuple(phases), source="schedule")


def load_schedule(
    path: str, *, contract: Contract | None = None, name: str = "--schedule", default: Contract | None = POISSON_ADD_REMOVE
) -> Schedule:
    """Read a schedule file: JSON (list or object, see the module docstring) or CSV (by content)."""
    text = read_text(path, name, 64 * 1024 * 1024)  # a regular UTF-8 file only; size counted while reading
    stripped = text.lstrip()
    if not stripped:
        raise InputError(name, f"{path} is empty")
    if stripped[0] in "[{":
        # numbers keep their decimal text (exact), never a binary float; depth, duplicate keys, NaN refused
        obj = loads_strict(text, name, parse_float=str, parse_int=str)
        return parse_schedule(obj, contract=contract, name=name, default=default)
    return parse_csv(text, contract=contract, name=name, default=default)


# --------------------------------------------------------------------------------------------
# The schedule as certificate inputs (exact text)
# --------------------------------------------------------------------------------------------
#: where a schedule's phases came from (the ``source`` input: a label, one of these; it proves nothing)
SOURCES = ("command line", "schedule", "calibration", "Opacus history", "dp_accounting event", "certify.api")


def check_source(source) -> None:
    if source not in SOURCES:
        raise InputError("source", f"must be one of {', '.join(SOURCES)} (where the phases came from), got {str(source)[:40]!r}")


#: sources whose reader makes exactly one phase (the command line's flags, a calibration's noise multiplier)
ONE_PHASE_SOURCES = ("command line", "calibration")
#: sources whose reader merges consecutive identical (q, sigma) entries into one phase (certify.poisson.ecosystem)
MERGED_SOURCES = ("Opacus history", "dp_accounting event")


def check_source_shape(source: str, phases, name: str = "phases") -> None:
    """The phases are ones the reader of ``source`` makes: one phase from the command line or a calibration,
    no two consecutive phases with the same (q, sigma) from an Opacus history or a dp_accounting event (their
    readers merge them). The producer (:func:`schedule_inputs`) and the checker (:func:`schedule_from_inputs`)
    both check it, so that certify never writes, and verify never accepts, another shape under that label."""
    if source in ONE_PHASE_SOURCES and len(phases) != 1:
        raise InputError(name, f"source {source!r} makes one phase, got {len(phases)}")
    if source in MERGED_SOURCES:
        for i in range(1, len(phases)):
            a, b = phases[i - 1], phases[i]
            if (a.sampling_rate, a.noise_multiplier) == (b.sampling_rate, b.noise_multiplier):
                raise InputError(
                    f"phase[{i}]", f"repeats the (q, sigma) of phase {i - 1}: the reader of source {source!r} merges consecutive identical entries"
                )


def schedule_inputs(schedule: Schedule) -> dict[str, str]:
    """Exact-text certificate inputs: contract, its conventions, and each phase's q, sigma, T."""
    c = schedule.contract
    d = dict(c.to_inputs())
    if schedule.source:
        check_source(schedule.source)
        check_source_shape(schedule.source, schedule.phases)
        d["source"] = schedule.source
    d["phases"] = str(len(schedule.phases))
    for i, ph in enumerate(schedule.phases):
        d[f"phase[{i}].sampling_rate"] = exact_str(ph.sampling_rate)
        d[f"phase[{i}].noise_multiplier"] = exact_str(ph.noise_multiplier)
        d[f"phase[{i}].steps"] = str(ph.steps)
    for key, note in schedule.notes:
        d[f"{key}.note"] = note
    d.update(schedule.derivation)
    return d


_PHASE_FIELD = re.compile(r"^phase\[(0|[1-9][0-9]{0,5})\]\.(sampling_rate|noise_multiplier|steps)$")


def is_schedule_input(name: str, extra=()) -> bool:
    """Whether ``name`` may appear in the inputs of a schedule certificate (the closed schema of verify)."""
    base = name[: -len(NOTE_SUFFIX)] if name.endswith(NOTE_SUFFIX) else name
    return (
        base in CONTRACT_FIELDS
        or base in ("phases", "source", "delta")
        or name in DERIVATION_FIELDS
        or base in extra
        or _PHASE_FIELD.match(base) is not None
    )


def schedule_from_inputs(inputs: dict) -> Schedule:
    """Inverse of :func:`schedule_inputs` (for the checker); InputError on anything malformed."""
    c = contract_from_inputs(inputs)
    n = exact_in(inputs.get("phases"), "phases", 1, MAX_PHASES, "[]", integer=True)
    phases = tuple(
        make_phase(inputs[f"phase[{i}].sampling_rate"], inputs[f"phase[{i}].noise_multiplier"], inputs[f"phase[{i}].steps"], f"phase[{i}].")
        for i in range(n)
    )
    known = set(CONTRACT_FIELDS) | {"phases", "source", "delta"}
    known |= {f"phase[{i}].{f}" for i in range(n) for f in FIELDS}
    notes = []
    for k, v in inputs.items():
        if k.endswith(NOTE_SUFFIX) and k[: -len(NOTE_SUFFIX)] in known:
            notes.append((k[: -len(NOTE_SUFFIX)], v))
        elif k not in known and k not in DERIVATION_FIELDS:
            raise InputError(k, "unknown input field")
    check_notes(inputs, known)  # each note states the value its field records (certify.provenance)
    if "source" in inputs:
        check_source(inputs["source"])
        check_source_shape(inputs["source"], phases)
        if inputs["source"] == "Opacus history" and c != POISSON_ADD_REMOVE:
            raise InputError("source", "an Opacus history is accounted as poisson + add-remove only (it declares Poisson sampling)")
    sch = Schedule(c, phases, tuple(notes), inputs.get("source", ""))
    derivation = check_derivation(sch, inputs)
    return Schedule(c, phases, tuple(notes), inputs.get("source", ""), derivation) if derivation else sch
