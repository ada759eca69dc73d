"""``certify account EVENT.json``: certify a dp_accounting event ledger (the JSON of ``DpEvent.to_named_tuple()``)."""

from __future__ import annotations

import argparse
import json
import time

from .. import cli
from ..balls import InputError, lower_decimal, upper_decimal

MAX_FILE = 64 * 1024 * 1024

HELP = """\
Certifies the privacy of a release described by dp_accounting's event algebra, read from the JSON of
DpEvent.to_named_tuple() (objects with "class_name" and the event's fields; numbers written as JSON floats are the
binary floats dp_accounting held and are taken at their exact binary value, noted in the certificate; write
"1/100" or "0.01" as a string for an exact decimal).

Certified by RDP (--accountant rdp): Gaussian, Laplace, DiscreteLaplace, DiscreteGaussian (upper bound),
RandomizedResponse (replace-one, replace-special), EpsilonDelta, ZCDp, ExponentialMechanism (upper bound),
PermuteAndFlip (upper bound), SingleEpochTreeAggregation (replace-special), PoissonSampled(Gaussian)
(add-remove, replace-special), and SelfComposed / Composed / NoOp of these. Refused with the reason:
NonPrivate, SampledWithoutReplacement, RepeatAndSelect, MixtureOfGaussians, SampledWithReplacement,
TruncatedSubsampledGaussian.

Exit status: 0 certified; 2 bad input (the message names the parameter or the event's path and class);
3 undecided at the highest precision."""


def register(sub) -> None:
    p = sub.add_parser(
        "account",
        help="certify a dp_accounting DpEvent ledger (JSON): epsilon at delta, delta at epsilon, or RDP at an order",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=HELP,
        epilog="example: certify account event.json --neighboring add-remove --delta 1e-6",
    )
    p.add_argument("event", metavar="EVENT.json", help="the event: the JSON of DpEvent.to_named_tuple()")
    p.add_argument("--accountant", default="rdp", metavar="A", help="rdp (default); pld is not yet available here")
    p.add_argument(
        "--neighboring", default="add-remove", metavar="R", help="add-remove (default), replace-one or replace-special (dp_accounting's relation)"
    )
    q = p.add_mutually_exclusive_group(required=True)
    q.add_argument("--delta", type=cli.exact_text, metavar="D", help="epsilon at this delta in [0, 1); 0 gives the pure epsilon of a pure ledger")
    q.add_argument("--epsilon", type=cli.exact_text, metavar="E", help="delta at this epsilon in [0, 1e6]")
    q.add_argument("--order", type=cli.exact_text, metavar="A", help="the certified RDP at this Rényi order in (1, 4096]")
    cli.add_output_options(p)
    p.set_defaults(func=cmd_account)


def load_event(path: str, name: str = "EVENT.json"):
    """The event JSON (numbers as Python floats/ints, as dp_accounting held them); NaN/inf refused."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(MAX_FILE + 1)
    except OSError as err:
        raise InputError(name, f"cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(name, f"{path} is not UTF-8 text") from None
    if len(text) > MAX_FILE:
        raise InputError(name, f"{path} is larger than 64 MiB")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise InputError(name, f"{path} is nested too deeply") from None
    except json.JSONDecodeError as err:
        raise InputError(name, f"{path} is not valid JSON (malformed or truncated): {err}") from None
    except ValueError as err:
        raise InputError(name, f"{path}: {err}") from None


def _refuse_constant(text: str):
    raise ValueError(f"{text} is not a number (NaN and infinities are refused)")


def cmd_account(args) -> int:
    from .accountant import certify_events
    from .ledger import ledger_of, parse_relation

    if args.accountant not in ("rdp", "pld"):
        raise InputError("--accountant", f"must be rdp or pld, got {args.accountant!r}"[:200])
    if args.accountant == "pld":
        raise InputError("--accountant", "pld is not yet available for event ledgers (use --accountant rdp)")
    relation = parse_relation(args.neighboring, "--neighboring")
    obj = load_event(args.event)
    if isinstance(obj, dict) and "dp_event" in obj and "class_name" not in obj:
        obj = obj["dp_event"]
    t0 = time.perf_counter()
    ledger = ledger_of(obj, relation)
    with cli.Progress("certify account", every=2.0):
        cert = certify_events(ledger, delta=args.delta, epsilon=args.epsilon, order=args.order)
    cli.check_range(cert)
    cli.emit(cert, summary(cert, ledger, time.perf_counter() - t0), args)
    return 0


def summary(cert, ledger, seconds: float) -> str:
    from .certificates import caveats

    ins, qs = cert.inputs, cert.quantities
    n = sum(1 for k in ins if k.endswith(".class"))
    lines = [f"certify account: {n} distinct mechanism(s), {ins['neighboring']} (kind {cert.kind}, {seconds:.2f} s)"]
    for i in range(n):
        lines.append(f"  event[{i}] x {ins[f'event[{i}].count']}: {ins[f'event[{i}].class']}")
    if "alpha" in cert.witnesses:
        lines.append(f"  Rényi order alpha = {cert.witnesses['alpha']} (chosen by floats; any alpha > 1 is valid)")
    for name in ("rdp", "extra_delta", "epsilon", "delta"):
        if name in qs:
            v = qs[name].value
            lines.append(f"  {name:<12} in [{lower_decimal(v, 10)}, {upper_decimal(v, 10)}]")
    for c in cert.conclusions:
        lines.append(f"conclusion: {c.statement}")
    claim = cert.evaluation.claim_named("bound")
    if "target_delta" in ins and ins["target_delta"] != "0":
        lines.append(f"certified epsilon <= {claim.rhs} at delta = {ins['target_delta']}")
    elif "target_epsilon" in ins:
        lines.append(f"certified delta <= {claim.rhs} at epsilon = {ins['target_epsilon']}")
    elif "order" in ins:
        lines.append(f"certified RDP <= {claim.rhs} at order {ins['order']}")
    else:
        lines.append(f"certified pure epsilon <= {claim.rhs}")
    for caveat in caveats(ledger):
        lines.append(f"note: {caveat}")
    return "\n".join(lines) + "\n"
