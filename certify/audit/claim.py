"""A published or internal DP-SGD privacy claim, as a file: loading and validating it.

Format (JSON object; the ``claim file`` of ``certify audit``)::

    {
      "title": "TF Privacy MNIST tutorial, default setting",            (optional text)
      "source": "tensorflow/privacy tutorials/README.md, table row 1",  (optional citation text)
      "assumptions": "steps = 60 epochs x (60000 // 256) ...",           (optional text or list of texts)
      "epsilon": "2.92",                                                  (required, > 0)
      "delta": "1e-5",                                                    (required, in (0, 1))
      "contract": {"sampling": "poisson", "adjacency": "add-remove"},     (required)
      one mechanism, exactly one of:
      "schedule": [{"sampling_rate": "256/60000", "noise_multiplier": "1.12", "steps": 14040}, ...]
      "opacus_history": [[noise_multiplier, sample_rate, num_steps], ...]   (or {"history": [...]})
      "dp_event": {"class_name": "SelfComposedDpEvent", "count": 875,
                   "event": {"class_name": "PoissonSampledDpEvent", "sampling_probability": 0.08192,
                             "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 10.0}}}
    }

Numbers of the claim and of a ``schedule`` are exact: JSON numbers are read from their decimal text
(``0.01`` is 1/100), strings may hold decimals or fractions (``"256/60000"``). The numbers of an
``opacus_history`` and a ``dp_event`` are the binary floats those libraries held: each is taken at its
exact binary value and the certificate notes the conversion (:mod:`certify.poisson.ecosystem`).

``dp_event`` is the JSON form of dp_accounting's ``DpEvent.to_named_tuple()`` with each named tuple
written as an object of its fields (``class_name`` names the event; ``module_name`` is optional and
ignored). With a DP-SGD contract (``sampling`` and ``adjacency``) the event must be DP-SGD steps, read by
:func:`certify.poisson.ecosystem.from_dp_event` (ADD_OR_REMOVE_ONE or REPLACE_ONE). With a contract that states
only the neighbouring relation, ``{"adjacency": "add-remove" | "replace-one" | "replace-special"}`` (dp_accounting's
names also read), the event may be any event the certified event accountant reads (:mod:`certify.events`: Laplace,
randomized response, repeat-and-select, compositions, ...): the claim is audited by that accountant.

A claim without its contract is refused: an epsilon means nothing without the sampling scheme and the
adjacency it was computed under. So are shuffled batches, unknown contracts, NaN/infinities, empty
schedules, unknown keys and a mechanism whose own contract differs from the claim's. Every refusal is an
:class:`~certify.balls.InputError` naming the field (exit 2 on the command line).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..balls import exact_in, InputError, exact_str, fmpq
from ..contract import POISSON_ADD_REMOVE, Contract, parse_contract
from ..inputfile import loads_strict, read_text
from ..events.ledger import Ledger, ledger_of, parse_relation
from ..poisson.ecosystem import from_dp_event, opacus_history
from ..poisson.schedule import Schedule, parse_delta, parse_schedule

MECHANISMS = ("schedule", "opacus_history", "dp_event")
KEYS = ("title", "source", "assumptions", "epsilon", "delta", "contract") + MECHANISMS
#: guard: a claimed epsilon above this is not a privacy claim anyone audits (and keeps exp() in range)
EPSILON_MAX = fmpq(10**6)
MAX_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class AuditClaim:
    """A validated claim: (epsilon, delta)-DP of the run ``schedule`` under ``contract``, or (an event claim, contract
    None) of the event ledger ``ledger`` under its neighbouring relation."""

    epsilon: fmpq
    delta: fmpq
    contract: Contract | None
    schedule: Schedule | None
    mechanism: str  #: "schedule", "opacus_history" or "dp_event"
    title: str = ""
    source: str = ""
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    ledger: Ledger | None = None  #: an event claim's ledger (certify.events)
    event: object = None  #: an event claim's event as read (the JSON form), for the float cross-check

    def describe(self) -> str:
        """One line: the run, phase by phase (exact values); an event ledger, mechanism by mechanism."""
        if self.ledger is not None:
            es = self.ledger.entries
            parts = [f"{c} x {m.describe()}" for m, c in es[:4]]
            return f"{len(es)} distinct mechanism(s): " + "; ".join(parts) + (f", ... ({len(es)} in all)" if len(es) > 4 else "")
        ph = self.schedule.phases
        parts = [f"q={show(p.sampling_rate)}, sigma={show(p.noise_multiplier)}, T={p.steps}" for p in ph[:4]]
        more = f", ... ({len(ph)} phases)" if len(ph) > 4 else ""
        return f"{len(ph)} phase{'s' if len(ph) != 1 else ''}: " + "; ".join(parts) + more


def show(q: fmpq) -> str:
    """Readable exact text: the decimal when it terminates within 30 digits ("0.004", "1e-05" stays "0.00001"),
    a binary float's shortest repr marked as such (its exact value is in the certificate), else "p/q"."""
    p, d = int(q.p), int(q.q)
    twos = (d & -d).bit_length() - 1
    rest, fives = d >> twos, 0
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    if rest == 1:
        k = max(twos, fives)
        if k <= 30:
            digits = str(abs(p) * 10**k // d).rjust(k + 1, "0")
            text = (digits[:-k] + "." + digits[-k:]).rstrip("0").rstrip(".") if k else digits
            return ("-" if p < 0 else "") + text
        if fives == 0 and twos <= 1100:
            return f"{p / d!r} (binary float)"
    return exact_str(q)


class _NonFinite:
    """Marks NaN / Infinity in the JSON text, so that the refusal can name the field."""

    def __init__(self, text: str):
        self.text = text


def _find_nonfinite(obj, path: str) -> str | None:
    if isinstance(obj, _NonFinite):
        return path
    if isinstance(obj, dict):
        for k, v in obj.items():
            p = _find_nonfinite(v, f"{path}.{k}" if path else str(k))
            if p:
                return p
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            p = _find_nonfinite(v, f"{path}[{i}]")
            if p:
                return p
    return None


def _parse_epsilon(value) -> fmpq:
    if isinstance(value, (dict, list)) or value is None:
        raise InputError("epsilon", f"must be a number > 0, got {value!r}"[:200])
    e = exact_in(value, "epsilon", 0)
    if e > EPSILON_MAX:
        raise InputError("epsilon", f"must be at most 1e6, got {exact_str(e)}")
    return e


def _parse_contract(obj) -> Contract:
    if obj is None:
        raise InputError(
            "contract",
            "missing: a claim must state its accounting contract, e.g. "
            '{"sampling": "poisson", "adjacency": "add-remove"} (an epsilon without '
            "its sampling scheme and adjacency cannot be audited)",
        )
    if not isinstance(obj, dict):
        raise InputError("contract", 'must be an object {"sampling": ..., "adjacency": ...}')
    for k in ("sampling", "adjacency"):
        if k not in obj:
            raise InputError(f"contract.{k}", "missing: the contract must state both sampling and adjacency")
        if not isinstance(obj[k], str):
            raise InputError(f"contract.{k}", f"must be a string, got {obj[k]!r}"[:200])
    extra = set(obj) - {"sampling", "adjacency"}
    if extra:
        raise InputError("contract", f"unknown key(s) {', '.join(sorted(map(str, extra)))}")
    return parse_contract(obj["sampling"], obj["adjacency"], sampling_name="contract.sampling", adjacency_name="contract.adjacency")


class _Event:
    """A stand-in for a dp_accounting DpEvent, rebuilt from its named-tuple JSON form (no import needed)."""


def _event_of(obj, path: str, depth: int = 0):
    """Rebuild an event object whose class name and attributes are those of dp_accounting's event."""
    if depth > 100:
        raise InputError(path, "nested more than 100 levels deep")
    if isinstance(obj, list):
        return [_event_of(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(obj)]
    if not isinstance(obj, dict):
        return obj
    name = obj.get("class_name")
    if not isinstance(name, str) or not name.isidentifier():
        raise InputError(path, "an event must be an object with a 'class_name' (the JSON form of dp_accounting's DpEvent.to_named_tuple())")
    cls = type(name, (_Event,), {})
    ev = cls()
    for k, v in obj.items():
        if k in ("class_name", "module_name"):
            continue
        if not str(k).isidentifier() or str(k).startswith("__"):
            raise InputError(path, f"bad field name {k!r}")
        setattr(ev, k, _event_of(v, f"{path}.{k}", depth + 1))
    return ev


def parse_claim(exact_obj, float_obj=None) -> AuditClaim:
    """Validate a claim from its JSON object(s).

    ``exact_obj`` is the document read with numbers kept as decimal text (exact); ``float_obj`` the same
    document read with binary floats, used for the library sections (``opacus_history``, ``dp_event``),
    whose numbers are the floats those libraries held. Without ``float_obj`` the exact object is used
    for everything (library numbers then exact decimals, with no float note).
    """
    if float_obj is None:
        float_obj = exact_obj
    if not isinstance(exact_obj, dict):
        raise InputError("claim", "must be a JSON object (see `certify audit --help` for the format)")
    bad = _find_nonfinite(exact_obj, "")
    if bad:
        raise InputError(bad, "NaN and infinities are not numbers: refused")
    unknown = set(exact_obj) - set(KEYS)
    if unknown:
        raise InputError("claim", f"unknown key(s) {', '.join(sorted(map(str, unknown)))} (expected {', '.join(KEYS)})")
    for k in ("title", "source"):
        if k in exact_obj and not isinstance(exact_obj[k], str):
            raise InputError(k, "must be a string")
    assumptions = exact_obj.get("assumptions", ())
    if isinstance(assumptions, str):
        assumptions = (assumptions,)
    if not isinstance(assumptions, (list, tuple)) or not all(isinstance(a, str) for a in assumptions):
        raise InputError("assumptions", "must be a string or a list of strings")
    for k in ("epsilon", "delta"):
        if k not in exact_obj:
            raise InputError(k, "missing: a claim states (epsilon, delta)")
    epsilon = _parse_epsilon(exact_obj["epsilon"])
    if isinstance(exact_obj["delta"], (dict, list)) or exact_obj["delta"] is None:
        raise InputError("delta", "must be a number in (0, 1)")
    delta = parse_delta(exact_obj["delta"], "delta")
    given = [m for m in MECHANISMS if m in exact_obj]
    cobj = exact_obj.get("contract")
    if given == ["dp_event"] and isinstance(cobj, dict) and "sampling" not in cobj:
        return _event_claim(exact_obj, float_obj, epsilon, delta, cobj, tuple(assumptions))
    contract = _parse_contract(cobj)
    if not given:
        raise InputError("schedule", f"missing: a claim needs its mechanism, one of {', '.join(MECHANISMS)}")
    if len(given) > 1:
        raise InputError(given[1], f"give exactly one of {', '.join(MECHANISMS)} (got {', '.join(given)})")
    mech = given[0]
    if mech == "schedule":
        schedule = parse_schedule(exact_obj["schedule"], contract=contract, name="schedule")
    elif mech == "opacus_history":
        if contract != POISSON_ADD_REMOVE:
            raise InputError(
                "contract",
                f"an Opacus history is accounted by Opacus as poisson + add-remove, but the "
                f"claim states {contract.sampling} + {contract.adjacency}: mixed contracts are refused",
            )
        schedule = opacus_history(float_obj["opacus_history"], "opacus_history")
    else:
        event = _event_of(float_obj["dp_event"], "dp_event")
        relation = "ADD_OR_REMOVE_ONE" if contract.adjacency == "add-remove" else "REPLACE_ONE"
        try:
            schedule = from_dp_event(event, relation)
        except InputError as err:
            if "is not supported" not in err.message:
                raise
            raise InputError(
                "contract.sampling",
                f"the dp_event is not DP-SGD steps only ({err.message[:120]}): for any other event state the contract as "
                '{"adjacency": ...} (its neighbouring relation) without sampling, and the event accountant audits it',
            ) from None
        if schedule.contract != contract:
            c = schedule.contract
            raise InputError(
                "contract",
                f"the dp_event describes {c.sampling} sampling but the claim states "
                f"{contract.sampling} + {contract.adjacency}: mixed contracts are refused",
            )
    if contract.sampling == "fixed-size" and any(p.sampling_rate >= 1 for p in schedule.phases):
        raise InputError(f"{mech}", "fixed-size sampling needs a sampling rate b/n < 1")
    return AuditClaim(epsilon, delta, contract, schedule, mech, exact_obj.get("title", ""), exact_obj.get("source", ""), tuple(assumptions))


def _event_claim(exact_obj, float_obj, epsilon: fmpq, delta: fmpq, cobj: dict, assumptions: tuple) -> AuditClaim:
    """An event claim: the ledger of ``dp_event`` (its floats at their exact binary values) under the relation."""
    extra = set(cobj) - {"adjacency"}
    if extra:
        raise InputError("contract", f"unknown key(s) {', '.join(sorted(map(str, extra)))} (an event claim states only the adjacency)")
    if "adjacency" not in cobj:
        raise InputError("contract.adjacency", "missing: an event claim states its neighbouring relation")
    relation = parse_relation(cobj["adjacency"], "contract.adjacency")
    ledger = ledger_of(float_obj["dp_event"], relation, "dp_event")
    title, source = exact_obj.get("title", ""), exact_obj.get("source", "")
    return AuditClaim(epsilon, delta, None, None, "dp_event", title, source, assumptions, ledger=ledger, event=float_obj["dp_event"])


def loads_claim(text: str, name: str = "claim") -> AuditClaim:
    """Parse claim-file text (see the module docstring)."""
    if not text.strip():
        raise InputError(name, "is empty")
    # depth, duplicate keys and lone surrogates refused by the one reader; NaN/Infinity kept for parse_claim to name
    exact_obj = loads_strict(text, name, parse_float=str, parse_int=str, parse_constant=_NonFinite)
    float_obj = loads_strict(text, name, parse_constant=_NonFinite)
    return parse_claim(exact_obj, float_obj)


def load_claim(path: str) -> AuditClaim:
    """Read and validate a claim file."""
    text = read_text(path, "CLAIM", MAX_BYTES)  # a regular UTF-8 file only; size counted while reading
    return loads_claim(text, "CLAIM")
