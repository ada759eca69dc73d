"""``certify account EVENT.json``: certify a dp_accounting event ledger (the JSON of ``DpEvent.to_named_tuple()``)."""

from __future__ import annotations

import argparse
import json
import sys
import time

from .. import cli
from ..inputfile import load_json
from ..balls import InputError, exact_in, lower_decimal, upper_decimal

MAX_FILE = 64 * 1024 * 1024

HELP = """\
Certifies the privacy of a release described by dp_accounting's event algebra, read from the JSON of
DpEvent.to_named_tuple() (objects with "class_name" and the event's fields; numbers written as JSON floats are the
binary floats dp_accounting held and are taken at their exact binary value, noted in the certificate; write
"1/100" or "0.01" as a string for an exact decimal).

Certified by RDP (--accountant rdp): Gaussian, Laplace, DiscreteLaplace, DiscreteGaussian (upper bound),
RandomizedResponse (replace-one, replace-special), EpsilonDelta, ZCDp, ExponentialMechanism (upper bound),
PermuteAndFlip (upper bound), SingleEpochTreeAggregation (replace-special), PoissonSampled(Gaussian)
(add-remove, replace-special), SampledWithoutReplacement(Gaussian) (replace-one; upper bound),
RepeatAndSelect (upper bound), TruncatedSubsampledGaussian (add-remove; certify's labelled-mixture pair, upper bound),
and SelfComposed / Composed / NoOp of these. Refused with the reason: NonPrivate, MixtureOfGaussians (PLD only),
SampledWithReplacement.

Certified by PLD (--accountant pld, kind events/pld: a two-sided bracket of the composed dominating pairs' exact
epsilon or delta; --grid H, default the finest grid that fits): Gaussian (add-remove, replace-one), Laplace,
DiscreteLaplace, PoissonSampled(Gaussian) (add-remove), RandomizedResponse (replace-one), EpsilonDelta (add-remove,
replace-one), MixtureOfGaussians (add-remove, replace-special; both directions), TruncatedSubsampledGaussian
(add-remove; certify's dominating labelled-mixture pair, an upper bound), and SelfComposed / Composed / NoOp of these.

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
    p.add_argument("--accountant", default="rdp", metavar="A", help="rdp (default) or pld (the certified two-sided PLD bracket, kind events/pld)")
    p.add_argument("--grid", default=None, metavar="H", help="--accountant pld: the loss-grid spacing h (default: the finest grid that fits)")
    p.add_argument(
        "--composition",
        choices=["fft", "exact"],
        default=None,
        help="--accountant pld: how the events are composed: fft (a tilted float FFT with a proven error bound) or exact "
        "(integer products). Default: fft from 1000 events in all (up to 1e7), exact otherwise and where the FFT cannot decide",
    )
    p.add_argument(
        "--neighboring", default="add-remove", metavar="R", help="add-remove (default), replace-one or replace-special (dp_accounting's relation)"
    )
    q = p.add_mutually_exclusive_group(required=True)
    q.add_argument("--delta", type=cli.exact_text, metavar="D", help="epsilon at this delta in [0, 1); 0 gives the pure epsilon of a pure ledger")
    q.add_argument("--epsilon", type=cli.exact_text, metavar="E", help="delta at this epsilon in [0, 1e6]")
    q.add_argument("--order", type=cli.exact_text, metavar="A", help="the certified RDP at this Rényi order in (1, 4096]")
    cli.add_output_options(p)
    p.set_defaults(func=cmd_account)

    c = sub.add_parser(
        "calibrate-event",
        help='calibrate the smallest certified noise of an event family ("$noise" in EVENT.json) to an (epsilon, delta) target',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            'EVENT.json is an event (as for `certify account`) whose noise fields hold the placeholder "$noise":\n'
            "GaussianDpEvent.noise_multiplier (also inside a PoissonSampledDpEvent), LaplaceDpEvent.noise_multiplier,\n"
            "SingleEpochTreeAggregationDpEvent.noise_multiplier, DiscreteGaussianDpEvent.sigma; all take the same value s.\n"
            "Returns exact dyadics s_fail < s_pass, relative width <= 1e-4: s_pass certified to meet (epsilon, delta)\n"
            "(kind events/rdp) and s_fail certified not to (kind events/rdp-fails), by the same accountant (the Rényi\n"
            "bound, min over the integer orders 2..256 and a grid to 4096). The bound is non-increasing in s (proof\n"
            "obligations E-noise-monotone, `certify proofs --paper events`, and P-sigma-monotone), so s_pass is the\n"
            "smallest passing noise of this accountant up to the bracket.\n\n"
            "--accountant pld: the accountant is the exact epsilon at delta of the composed dominating pairs (certified PLD).\n"
            "Noise fields: GaussianDpEvent.noise_multiplier (also in PoissonSampledDpEvent), LaplaceDpEvent.noise_multiplier\n"
            "(also in PoissonSampledDpEvent), MixtureOfGaussiansDpEvent.standard_deviation; DiscreteGaussian is refused (no\n"
            "proof that a larger sigma is a post-processing). Both ends carry an events/pld certificate: s_pass with\n"
            "epsilon_upper <= E (conclusion dp), s_fail with epsilon_lower > E (conclusion tightness: the exact epsilon\n"
            "exceeds E). Relative width <= 1e-3 (at the default grid). A larger noise is the smaller one plus independent\n"
            "noise, so the exact epsilon is non-increasing in s (obligation E-pld-noise-channel). --grid H: the fine grid\n"
            "(default: the finest whose runs fit the limits). The search is a few coarse runs (grid 1e-3) and at most 12\n"
            "fine runs, its work decided before the fine runs (over the limit: exit 2 naming --grid).\n\n"
            "Exit status: 0 bracket certified; 2 bad input (an unreachable target included); 3 undecided."
        ),
        epilog="example: certify calibrate-event family.json --epsilon 1 --delta 1e-5",
    )
    c.add_argument("event", metavar="EVENT.json", help='the event family: an event whose noise fields are "$noise"')
    c.add_argument("--epsilon", type=cli.exact_text, required=True, metavar="E", help="target epsilon in (0, 1e6]; pld: (0, 1000]")
    c.add_argument("--delta", type=cli.exact_text, required=True, metavar="D", help="delta in (0, 1); pld: [1e-130, 1)")
    c.add_argument("--neighboring", default="add-remove", metavar="R", help="add-remove (default), replace-one or replace-special")
    c.add_argument(
        "--accountant", default="rdp", metavar="A", help="rdp (default: the Rényi bound, events/rdp and events/rdp-fails) or pld (events/pld)"
    )
    c.add_argument("--grid", default=None, metavar="H", help="--accountant pld: the fine loss-grid spacing h (default: the finest that fits)")
    c.add_argument("--json", action="store_true", help="print {s_fail, s_pass, pass and fail certificates} as JSON")
    c.add_argument("--out", metavar="FILE", help="write the passing certificate (events/rdp, or events/pld) to FILE")
    c.add_argument("--out-fail", metavar="FILE", help="write the failing certificate (events/rdp-fails, or events/pld) to FILE")
    c.set_defaults(func=cmd_calibrate)


def load_event(path: str, name: str = "EVENT.json"):
    """The event JSON (numbers as Python floats/ints, as dp_accounting held them), read as every input file is
    (:func:`certify.inputfile.load_json`: a regular file, size and depth limits, no duplicate key, NaN/inf refused)."""
    return load_json(path, name, MAX_FILE)


def _refuse_constant(text: str):
    raise ValueError(f"{text} is not a number (NaN and infinities are refused)")


def cmd_account(args) -> int:
    from .accountant import certify_events
    from .ledger import ledger_of, parse_relation

    if args.accountant not in ("rdp", "pld"):
        raise InputError("--accountant", f"must be rdp or pld, got {args.accountant!r}"[:200])
    relation = parse_relation(args.neighboring, "--neighboring")
    for flag, value, lo, hi, ends in (
        ("--delta", args.delta, 0, 1, "[)"),
        ("--epsilon", args.epsilon, 0, 10**6, "[]"),
        ("--order", args.order, 1, 4096, "(]"),
    ):
        if value is not None:  # decided before the file is read; an unreadable value is refused with its range
            exact_in(value, flag, lo, hi, ends)
    if args.accountant == "pld":
        return _account_pld(args, relation)
    for flag in ("grid", "composition"):  # PLD settings are refused with another accountant, not silently ignored
        if getattr(args, flag, None) is not None:
            raise InputError(f"--{flag}", "is an option of --accountant pld only")
    obj = load_event(args.event)
    if isinstance(obj, dict) and "dp_event" in obj and "class_name" not in obj:
        obj = obj["dp_event"]
    t0 = time.perf_counter()
    ledger = ledger_of(obj, relation)
    with cli.Progress("certify account", every=2.0):
        cert = certify_events(ledger, delta=args.delta, epsilon=args.epsilon, order=args.order)
    cli.check_range(
        cert, {name: ("EVENT.json", "events whose bound stays below 2^1048576 (larger noise, smaller counts)") for name in cert.quantities}
    )
    cli.emit(cert, summary(cert, ledger, time.perf_counter() - t0), args)
    return 0


def _account_pld(args, relation: str) -> int:
    """``certify account --accountant pld``: kind ``events/pld`` (:mod:`certify.events.pld_certificates`)."""
    from .ledger import ledger_of
    from .pld_certificates import certify_events_pld, summary_pld

    if args.order is not None:
        raise InputError("--order", "is an option of --accountant rdp only (the PLD accountant answers --delta or --epsilon)")
    if args.grid is not None:
        from ..pld.accountant import parse_grid

        parse_grid(args.grid, "--grid")
    obj = load_event(args.event)
    if isinstance(obj, dict) and "dp_event" in obj and "class_name" not in obj:
        obj = obj["dp_event"]
    t0 = time.perf_counter()
    ledger = ledger_of(obj, relation)
    with cli.Progress("certify account", every=2.0):
        cert = certify_events_pld(ledger, delta=args.delta, epsilon=args.epsilon, grid=args.grid, composition=getattr(args, "composition", None))
    cli.check_range(cert)
    if args.grid is not None and args.delta is not None:  # one stderr line: a given grid too coarse for a useful lower bound
        from ..pld import tightness_note

        note = tightness_note(cert, auto=False)
        if note is not None:
            sys.stderr.write(f"certify: {note}\n")
    cli.emit(cert, summary_pld(cert, time.perf_counter() - t0), args)
    return 0


def cmd_calibrate(args) -> int:
    from ..balls import exact_str
    from .ledger import parse_relation

    if args.accountant not in ("rdp", "pld"):
        raise InputError("--accountant", f"must be rdp or pld, got {args.accountant!r}"[:200])
    if args.grid is not None and args.accountant != "pld":
        raise InputError("--grid", "is an option of --accountant pld only")
    if args.out_fail:
        cli.check_writable(args.out_fail, "--out-fail")
    relation = parse_relation(args.neighboring, "--neighboring")
    if args.accountant == "pld":
        from ..pld.accountant import parse_grid, parse_pld_delta
        from .calibrate_pld import calibrate_pld as run
        from .calibrate_pld import summary as cal_summary

        target = exact_in(args.epsilon, "--epsilon", 0, 1000, "(]", shown="in (0, 1000]")
        delta = parse_pld_delta(args.delta, "--delta")
        if args.grid is not None:
            from .calibrate_pld import MIN_GRID

            if parse_grid(args.grid, "--grid") < MIN_GRID:
                raise InputError("--grid", "a calibration takes a grid in [1e-5, 1/2] (its fine runs cost about 1/h each)")
    else:
        from .calibrate import calibrate as run
        from .calibrate import summary as cal_summary

        target = exact_in(args.epsilon, "--epsilon", 0, 10**6, "(]", shown="in (0, 1e6]")  # calibrate.parse_target_epsilon, with the range
        delta = exact_in(args.delta, "--delta", 0, 1)
    template = load_event(args.event)
    with cli.Progress("certify calibrate-event", every=2.0) as progress:
        if args.accountant == "pld":
            cal = run(template, target, delta, relation, grid=args.grid, progress=progress.update)
        else:
            cal = run(template, target, delta, relation)
    _write_both(cal, args)
    if args.json:
        doc = {"s_fail": exact_str(cal.s_fail), "s_pass": exact_str(cal.s_pass), "pass": cal.passing.to_json(), "fail": cal.failing.to_json()}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(cal_summary(cal, target, delta))
        for path, what in ((args.out, "passing"), (args.out_fail, "failing")):
            if path:
                sys.stdout.write(f"{what} certificate written to {path} (check it with: certify verify {path})\n")
    return 0


def _write_both(cal, args) -> None:
    """Both certificate files or none: the writes run with SIGINT/SIGTERM held back (raised after them), and the
    passing file is removed when the failing one cannot be written."""
    import os

    from .. import signals

    with signals.deferred():
        if args.out:
            cli.write_atomically(args.out, cal.passing.dumps(), "--out")
        if args.out_fail:
            try:
                cli.write_atomically(args.out_fail, cal.failing.dumps(), "--out-fail")
            except BaseException:
                if args.out and os.path.exists(args.out):
                    os.unlink(args.out)
                raise


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
