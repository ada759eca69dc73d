"""``certify verify FILE``: re-check a certificate from its inputs and witnesses."""
from __future__ import annotations

import sys

from .balls import InputError
from .verify import verify_text


def register(sub) -> None:
    p = sub.add_parser(
        "verify", help="re-check a certificate (JSON) without re-running any search",
        description="Load a certificate, recompute every quantity from its inputs and witnesses at the "
                    "recorded precision (or --precision, if higher), confirm every claim, and print what "
                    "was checked. Exit 0 only if everything agrees; 4 if anything disagrees; 2 if the file "
                    "is malformed.")
    p.add_argument("file", metavar="FILE", help="certificate JSON written by --out or --json ('-' for stdin)")
    p.add_argument("--precision", type=int, default=None, metavar="BITS",
                   help="recompute at this many bits (at least the recorded precision)")
    p.add_argument("--quiet", action="store_true", help="print only the verdict")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.file == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(args.file) as fh:
                text = fh.read()
        except OSError as err:
            raise InputError("FILE", f"cannot read {args.file}: {err.strerror}") from None
    rep = verify_text(text, args.precision)
    if not args.quiet:
        for line in rep.checked:
            print(f"  ok   {line}")
        for line in rep.problems:
            print(f"  FAIL {line}")
    if rep.ok:
        print(f"VERIFIED: {len(rep.checked)} items re-derived and in agreement ({args.file})")
        return 0
    print(f"REJECTED: {len(rep.problems)} disagreement(s) ({args.file})", file=sys.stderr)
    return 4
