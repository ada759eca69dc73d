"""``certify audit CLAIM``: decide a DP-SGD privacy claim (holds / not certified / refuted).

Exit status: 0 holds (certificate written with --out), 7 not certified (best certified upper bound
exceeds the claim, nothing refutes it), 8 refuted (a certified lower bound proves the claim false for the
contract's attained worst-case pair), 2 bad input (one line naming the field, nothing written),
3 undecided at the highest precision.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from .. import cli
from ..balls import InputError, exact_str, fmpq, lower_decimal, upper_decimal
from ..progress import ticking
from .audit import DEFAULT_GRID, EXIT, HOLDS, NOT_CERTIFIED, REFUTED, Verdict, audit, grid_ladder
from .claim import load_claim, show
from .floats import cross_check
from .statement import statement

HELP = """\
Decide a DP-SGD privacy claim "(epsilon, delta)-DP for this run under this accounting contract", or a claim on
any release described by dp_accounting's event algebra.

The claim file (JSON) holds epsilon, delta, the contract {"sampling": "poisson"|"fixed-size",
"adjacency": "add-remove"|"replace-one"} (required: a claim without its contract is refused), and one
mechanism: "schedule" (phases of sampling_rate, noise_multiplier, steps; exact numbers), "opacus_history"
([[noise_multiplier, sample_rate, num_steps], ...]: Opacus's floats) or "dp_event" (dp_accounting's
DpEvent.to_named_tuple() as JSON objects with "class_name"); optional "title", "source", "assumptions".
An event claim states the contract as {"adjacency": "add-remove"|"replace-one"|"replace-special"} only: its
dp_event may then be any event `certify account` reads, audited by the certified Rényi event accountant.

The certified Rényi accountant is tried first (milliseconds); if it does not prove the claim, the certified
PLD accountant (one phase, or phases of equal sampling rate and noise multiplier) at grids 100h, 10h, h (h = --grid).
exit status: 0 holds, 7 not certified, 8 refuted, 2 bad input, 3 undecided.
"""


def register(sub) -> None:
    p = sub.add_parser(
        "audit",
        help="check a DP-SGD privacy claim: holds (0), not certified (7), refuted (8)",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("claim", metavar="CLAIM", help="the claim file (JSON; see above and NOTES/README)")
    p.add_argument(
        "--out",
        metavar="CERT",
        help="when the claim holds: write the certificate that proves it (check it with `certify verify CERT`); nothing is written otherwise",
    )
    p.add_argument(
        "--evidence",
        metavar="FILE",
        help="when the claim does not hold: write the certificate of the "
        "best certified bounds (for a refutation, the PLD certificate whose claim 'tightness' refutes it)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the audit report as JSON (it embeds the certificate; "
        "the report itself is not a certificate: `certify verify` checks the embedded certificate)",
    )
    p.add_argument(
        "--grid",
        metavar="H",
        default=DEFAULT_GRID,
        help=f"finest PLD loss grid (default {DEFAULT_GRID}); 100h and 10h are tried first (any grid "
        "gives valid bounds; finer is tighter and slower)",
    )
    p.add_argument("--no-pld", action="store_true", help="Rényi only (milliseconds)")
    p.add_argument("--no-floats", action="store_true", help="skip dp_accounting's float cross-check")
    p.set_defaults(func=run)


def _dec_up(x: fmpq | None) -> str:
    return upper_decimal(x, 6) if x is not None else "-"


def _attempt_line(a) -> str:
    name = {"renyi": "Rényi (Poisson, MTZ19)", "bok": "Rényi (fixed-size, Bok)", "pld": "PLD", "events-rdp": "Rényi (event accountant)"}[a.accountant]
    if a.accountant == "pld":
        name += f" grid {show(a.grid)}"
    bounds = f"epsilon <= {_dec_up(a.epsilon_upper)}"
    if a.accountant == "pld":
        lo = lower_decimal(a.epsilon_lower, 6) if a.epsilon_lower else "0"
        bounds = f"{lo} <= eps(delta) of the composed pair <= {_dec_up(a.epsilon_upper)}"
    if a.alpha and a.accountant != "pld":
        bounds += f"  (alpha = {a.alpha})"
    tag = "  -> proves the claim" if a.proves else ("  -> refutes the claim" if a.refutes else "")
    out = f"    {name:<28} {bounds}   [{a.seconds:.3f} s]{tag}"
    if a.note:
        out += f"\n      note: {a.note}"
    return out


def summary(v: Verdict, floats, seconds: float) -> str:
    cl = v.claim
    L = [f"certify audit: {cl.title or 'claim'}"]
    if cl.source:
        L.append(f"  source: {cl.source}")
    L.append(f"  claim: ({show(cl.epsilon)}, {show(cl.delta)})-DP")
    L.append(f"  mechanism ({cl.mechanism.replace('_', ' ')}): {cl.describe()}")
    if cl.contract is not None:
        L.append(f"  contract: {cl.contract.sampling} sampling, {cl.contract.adjacency} adjacency")
    else:
        L.append(f"  neighbouring relation: {cl.ledger.relation}")
    L.append("  certified accountants tried:")
    L += [_attempt_line(a) for a in v.attempts]
    for s in v.skipped:
        L.append(f"    skipped: {s}")
    d = v.deciding
    if v.outcome == HOLDS:
        L.append(
            f"VERDICT: HOLDS (exit 0): certified epsilon <= {_dec_up(d.epsilon_upper)} <= "
            f"{show(cl.epsilon)} at delta = {show(cl.delta)} ({d.accountant}" + (f", grid {show(d.grid)}" if d.grid is not None else "") + ")"
        )
    elif v.outcome == REFUTED:
        L.append(
            f"VERDICT: REFUTED (exit 8): certified epsilon >= {lower_decimal(d.epsilon_lower, 6)} > "
            f"{show(cl.epsilon)} at delta = {show(cl.delta)}, for the dominating pair of the contract:"
        )
        L.append(
            "  no pair of neighbouring datasets gives more, and a worst-case pair attains it (one example whose "
            "clipped gradient is the same vector of norm C at every step, all others with zero gradient);"
        )
        L.append(
            "  so DP-SGD under this contract is NOT (epsilon, delta)-DP as claimed, for every loss that admits such a pair (e.g. a linear term)."
        )
        L.append(
            "  (Zhu, Dong, Wang 2022; Nasr et al. 2021.) This concerns releasing all noisy gradients / iterates; "
            "a final-model-only analysis is not refuted."
        )
    else:
        b, lo = v.best_upper, v.best_lower
        L.append(
            f"VERDICT: NOT CERTIFIED (exit 7): best certified upper bound epsilon <= "
            f"{_dec_up(b.epsilon_upper) if b else '-'} ({b.accountant if b else 'none'}) exceeds the claimed "
            f"{show(cl.epsilon)}; nothing refutes it" + (f" (best certified lower bound {lower_decimal(lo.epsilon_lower, 6)})" if lo else "")
        )
    version, values = floats
    if version is None and values == []:
        L.append("float cross-check: dp_accounting not installed (or --no-floats): none")
    else:
        L.append(f"float cross-check (dp_accounting {version}; float, NOT certified):")
        for f in values:
            val = f"epsilon = {f.epsilon:.6g}" if f.epsilon is not None else f.note
            L.append(f"    {f.name:<34} {val}   [{f.seconds:.3f} s]")
    L.append(statement(v).rstrip("\n"))
    L.append(f"({seconds:.2f} s in all)")
    return "\n".join(L) + "\n"


def report(v: Verdict, floats, seconds: float) -> dict:
    """The audit report (JSON). Not a certificate: the embedded one is what `certify verify` checks."""
    cl = v.claim
    cert = v.deciding.certificate if v.outcome == HOLDS else v.evidence
    version, values = floats
    return {
        "report": "certify/audit-report (not a certificate; check the embedded certificate with certify verify)",
        "verdict": v.outcome,
        "exit_status": v.exit_code,
        "claim": {
            "title": cl.title,
            "source": cl.source,
            "epsilon": exact_str(cl.epsilon),
            "delta": exact_str(cl.delta),
            "contract": cl.contract.to_inputs() if cl.contract is not None else {"adjacency": cl.ledger.relation},
            "mechanism": cl.mechanism,
            "phases": [
                {"sampling_rate": exact_str(p.sampling_rate), "noise_multiplier": exact_str(p.noise_multiplier), "steps": p.steps}
                for p in cl.schedule.phases
            ]
            if cl.schedule is not None
            else [],
            "events": [{"count": c, "event": m.describe()} for m, c in cl.ledger.entries] if cl.ledger is not None else [],
            "assumptions": list(cl.assumptions),
        },
        "attempts": [
            {
                "accountant": a.accountant,
                "grid": exact_str(a.grid) if a.grid is not None else None,
                "epsilon_upper": exact_str(a.epsilon_upper) if a.epsilon_upper is not None else None,
                "epsilon_lower": exact_str(a.epsilon_lower) if a.epsilon_lower is not None else None,
                "proves": a.proves,
                "refutes": a.refutes,
                "seconds": round(a.seconds, 4),
                "note": a.note,
            }
            for a in v.attempts
        ],
        "skipped": v.skipped,
        "float_cross_check": {
            "library": "dp_accounting",
            "version": version,
            "certified": False,
            "values": [{"accountant": f.name, "epsilon": f.epsilon, "note": f.note, "seconds": round(f.seconds, 4)} for f in values],
        },
        "statement": statement(v),
        "certificate": cert.to_json() if cert is not None and v.outcome == HOLDS else None,
        "evidence": cert.to_json() if cert is not None and v.outcome != HOLDS else None,
        "seconds": round(seconds, 3),
    }


def run(args) -> int:
    t0 = time.perf_counter()
    claim = load_claim(args.claim)
    grid_ladder(args.grid)  # validate --grid and the output directories before any work
    for opt, path in (("--out", args.out), ("--evidence", args.evidence)):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise InputError(opt, f"directory {os.path.dirname(os.path.abspath(path))} does not exist")
    with ticking("audit"):  # a line a second on stderr once past 2 s (PLD queries, the float cross-checks)
        v = audit(claim, grid=args.grid, use_pld=not args.no_pld)
        floats = (None, []) if args.no_floats else cross_check(claim, grid_ladder(args.grid)[-1], pld=not args.no_pld)
    seconds = time.perf_counter() - t0
    # write only after success, atomically; --out only for a claim that holds
    if v.outcome == HOLDS and args.out:
        cli.write_atomically(args.out, v.deciding.certificate.dumps())
    if v.outcome in (NOT_CERTIFIED, REFUTED) and args.evidence and v.evidence is not None:
        cli.write_atomically(args.evidence, v.evidence.dumps())
    if args.json:
        sys.stdout.write(json.dumps(report(v, floats, seconds), indent=2) + "\n")
    else:
        sys.stdout.write(summary(v, floats, seconds))
        if v.outcome == HOLDS and args.out:
            sys.stdout.write(f"certificate written to {args.out} (check it with: certify verify {args.out})\n")
        elif v.outcome != HOLDS and args.out:
            sys.stdout.write(f"nothing written to {args.out}: the claim is {v.outcome}\n")
        if v.outcome != HOLDS and args.evidence and v.evidence is not None:
            sys.stdout.write(f"evidence certificate written to {args.evidence} (certify verify {args.evidence})\n")
    return EXIT[v.outcome]
