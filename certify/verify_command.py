"""``certify verify FILE``: re-check a certificate from its inputs and witnesses, and say what it proves.

Output: one line per conclusion first (``conclusion: <statement>: HOLDS`` or ``DOES NOT HOLD`` with the
failed hypothesis or claim), then the details (``ok``/``FAIL`` per quantity and claim, notes), then
the verdict. Exit status: 0 consistent and every conclusion holds; 4 inconsistent (digest, layout,
witnesses, balls or claims disagree with the recomputation); 5 consistent but some conclusion does not
hold (or an input is outside its theorem's range); 2 the file or an option is bad (unreadable, not
UTF-8, too large, not JSON, nested too deeply, wrong schema, unknown kind, precision out of range).
"""

from __future__ import annotations

import os
import sys

from .balls import InputError, int_flag
from .certificate import MAX_BYTES, MAX_PRECISION
from .verify import EXIT_INCONSISTENT, EXIT_OK, EXIT_STOPPED_EARLY, check_precision, verify_text

# registry hooks (see certify/registry.py)
KEY = "verify"
COMMANDS = (__name__,)


def register(sub) -> None:
    p = sub.add_parser(
        "verify",
        help="check a certificate (JSON) without re-running any search",
        description="Load a certificate, recompute every quantity from its inputs and witnesses at the "
        "recorded precision (or --precision, if higher), confirm every claim and conclusion, and "
        "print the conclusions first, then what was checked. Exit 0 only if the certificate is "
        "consistent and every conclusion holds; 4 if anything disagrees with the recomputation; "
        "5 if it is consistent but a conclusion (or a hypothesis it rests on) fails; 2 if the file "
        "is malformed.",
    )
    p.add_argument("file", metavar="FILE", help="certificate JSON written by --out or --json ('-' for stdin)")
    p.add_argument(
        "--precision",
        type=int_flag(53, MAX_PRECISION),
        default=None,
        metavar="BITS",
        help=f"recompute at this many bits (53..{MAX_PRECISION}; never below the recorded precision)",
    )
    p.add_argument("--quiet", action="store_true", help="print only the conclusions and the verdict")
    p.set_defaults(func=run)


def _read(path: str) -> bytes:
    if path == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        try:
            if os.path.isdir(path):
                raise InputError("FILE", f"{path} is a directory, not a certificate")
            if os.path.getsize(path) > MAX_BYTES:
                raise InputError("FILE", f"{path} is larger than {MAX_BYTES} bytes: not a certificate")
            with open(path, "rb") as fh:
                data = fh.read(MAX_BYTES + 1)
        except OSError as err:
            raise InputError("FILE", f"cannot read {path}: {err.strerror}") from None
    if len(data) > MAX_BYTES:
        raise InputError("FILE", f"larger than {MAX_BYTES} bytes: not a certificate")
    return data


def run(args) -> int:
    if args.precision is not None:
        check_precision(args.precision)  # before any work
    rep = verify_text(_read(args.file), args.precision)
    for statement, holds, why in rep.conclusions:
        print(f"conclusion: {statement}: {'HOLDS' if holds else 'DOES NOT HOLD'}" + (f" ({why})" if why else ""))
    for line in rep.hypothesis_failures:
        print(f"conclusion: none proved: {line}")
    if not args.quiet:
        print("details:")
        for line in rep.checked:
            print(f"  ok   {line}")
        for line in rep.problems:
            print(f"  FAIL {line}")
        for line in rep.notes:
            print(f"  note {line}")
    code = rep.exit_code
    if code == EXIT_OK:
        print(f"VERIFIED: every conclusion holds; {len(rep.checked)} items re-derived and in agreement ({args.file})")
    elif code == EXIT_STOPPED_EARLY:
        print(
            f"VERIFIED, but the search STOPPED EARLY at its budget: every conclusion holds (the bound is valid, "
            f"looser than its tolerance gamma); {len(rep.checked)} items re-derived ({args.file})"
        )
    elif code == EXIT_INCONSISTENT:
        first = next((p for p in rep.problems), "")
        print(f"REJECTED: inconsistent certificate, {len(rep.problems)} problem(s), first: {first} ({args.file})", file=sys.stderr)
    else:
        failed = rep.hypothesis_failures or [p for p in rep.problems if p.startswith("conclusion")] or [""]
        n_bad = sum(not h for _, h, _ in rep.conclusions)
        what = (
            f"{n_bad} of {len(rep.conclusions)} conclusion(s) do not hold"
            if not rep.hypothesis_failures
            else "an input is outside its theorem's range"
        )
        print(f"NOT PROVED: the certificate is consistent but {what}: {failed[0]} ({args.file})", file=sys.stderr)
    return code
