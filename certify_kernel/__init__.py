"""certify_kernel: a second, small checker of certify's certificates that shares no code with certify.

It imports nothing from ``certify``; its arithmetic is exact rationals (:mod:`fractions`) and mpmath's interval context ``mpmath.iv``. From a
certificate's inputs and witnesses alone it re-derives the numbers its conclusions rest on and decides whether they hold (a :class:`Verdict`, exit
statuses as ``certify verify``). Reading order and review guide: docs/kernel.md."""

from dataclasses import dataclass
from . import bok, document, events, events_fails, objpert, pld, poisson, poisson_fails
from .document import EXIT_INCONSISTENT, EXIT_INPUT, EXIT_NOT_PROVED, EXIT_OK, EXIT_UNDECIDED, Refused
from .numbers import Malformed, Undecided, working_precision

#: kind -> module with ``derive(doc) -> Derivation``
KINDS = {m.KIND: m for m in (bok, poisson, poisson_fails, objpert, events, events_fails, pld)}
#: bits of the kernel's intervals: well above the recorded precision, so its enclosures sit inside recorded balls
EXTRA_BITS = 64

@dataclass(frozen=True)
class Verdict:
    """``status``: 0 accept (every conclusion holds by the kernel's own arithmetic), 2 not a certificate or a kind not covered, 3 cannot decide,
    4 inconsistent (digest, layout, a recorded number or verdict contradicted), 5 a hypothesis or a conclusion fails; ``message``: one line."""

    status: int
    message: str

def check_text(text: str | bytes) -> Verdict:
    """Check a certificate given as JSON text (the CLI's entry point)."""
    try:
        return check_document(document.load(text))
    except Refused as r:
        return Verdict(r.status, r.message)

def check_document(doc) -> Verdict:
    """Check a parsed certificate: the kernel's verdict (never raises on any JSON value)."""
    try:
        document.check_shape(doc)
        module = KINDS.get(doc["kind"])
        if module is None:
            return Verdict(EXIT_INPUT, f"kind {str(doc['kind'])[:60]!r} is not covered by the kernel (covered: {', '.join(sorted(KINDS))})")
        document.check_digest(doc)
        with working_precision(2 * doc["precision"] + EXTRA_BITS):
            return _judge(doc, module)
    except Refused as r:
        return Verdict(r.status, r.message)
    except (Malformed, KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
        return Verdict(EXIT_INCONSISTENT, f"malformed certificate: {str(err)[:200]}")
    except (Undecided, ArithmeticError, RecursionError, MemoryError) as err:
        return Verdict(EXIT_UNDECIDED, f"cannot decide: {type(err).__name__}: {str(err)[:200]}")
    except Exception as err:  # noqa: BLE001 - a kernel failure never becomes a verdict of true or false
        return Verdict(EXIT_UNDECIDED, f"cannot decide: the kernel failed ({type(err).__name__}: {str(err)[:160]})")

#: the last derivations, keyed by all they depend on (kind, precision, inputs, witnesses, the recorded quantities the
#: kind reads): a pure function of it
_MEMO: dict = {}

def _derive(doc: dict, module):
    # a kind's READS names (by prefix) the recorded quantities its derive reads (all of them if it does not say): a
    # fractional "integral" order reads which bound certify took (rdp[i]), bok its leaf keys
    read = sorted((k, v) for k, v in doc["quantities"].items() if k.startswith(getattr(module, "READS", ("",))))
    key = document.canonical([doc["kind"], doc["precision"], doc["inputs"], doc["witnesses"], read])
    if key not in _MEMO:
        if len(_MEMO) >= 8:
            _MEMO.clear()
        _MEMO[key] = module.derive(doc)
    return _MEMO[key]

def _judge(doc: dict, module) -> Verdict:
    der = _derive(doc, module)
    if der.failed:
        return Verdict(EXIT_NOT_PROVED, f"hypothesis fails: {der.failed[0]} (the certificate proves nothing)")
    problems, unsure = [], list(der.unsure)
    document.compare_quantities(doc, der, problems, unsure)
    decided = document.compare_claims(doc, der, problems, unsure)
    failing = document.compare_conclusions(doc, der, decided, problems, unsure)
    if problems:
        return Verdict(EXIT_INCONSISTENT, f"reject (inconsistent): {problems[0]}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""))
    if failing:
        return Verdict(EXIT_NOT_PROVED, f"reject: {failing[0]}")
    if unsure:
        return Verdict(EXIT_UNDECIDED, f"cannot decide: {unsure[0]}")
    n = len(doc["conclusions"])
    return Verdict(EXIT_OK, f"accept: {doc['kind']}: {n} conclusion(s) hold by the kernel's own arithmetic")

__all__ = ["Verdict", "check_document", "check_text", "KINDS"]
