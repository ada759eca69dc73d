"""``certify verify FILE``: re-check a certificate from its inputs and witnesses, and say what it proves.

Output (stdout): one line per conclusion first (``conclusion: <statement>: HOLDS`` or ``DOES NOT HOLD`` with
the failed hypothesis or claim; a rejected certificate's conclusions are never shown as holding), then the
details (``ok``/``FAIL`` per quantity and claim, notes), then the verdict as the last line (a refusal is also
the one line on stderr). Every printed character that is not printable is escaped. Exit status: 0 consistent
and every conclusion holds; 4 inconsistent (digest, layout, witnesses, balls or claims disagree with the
recomputation, or the file is not the canonical document certify writes); 5 consistent but some conclusion does not
hold (or an input is outside its theorem's range); 2 the file or an option is bad (unreadable, not
UTF-8, too large, not JSON, nested too deeply, wrong schema, unknown kind, precision out of range).
"""

from __future__ import annotations

import sys

from .balls import InputError, int_flag
from .certificate import MAX_BYTES, MAX_PRECISION
from .inputfile import read_bytes
from .progress import ticking
from .verify import EXIT_INCONSISTENT, EXIT_OK, EXIT_STOPPED_EARLY, check_precision, verify_text

# registry hooks (see certify/registry.py)
KEY = "verify"
COMMANDS = {"verify": __name__}


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
    p.add_argument(
        "--kernel",
        action="store_true",
        help="also run the second checker (certify_kernel: no code shared with certify, mpmath intervals) and report "
        "both verdicts; a certificate certify accepts and the kernel refuses exits 4",
    )
    p.set_defaults(func=run)


def _read(path: str) -> bytes:
    if path == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        data = read_bytes(path, "FILE", MAX_BYTES)  # a regular file only; size counted while reading
    if len(data) > MAX_BYTES:
        raise InputError("FILE", f"larger than {MAX_BYTES} bytes: not a certificate")
    return data


def printable(text: str) -> str:
    """``text`` with every control or otherwise unprintable character escaped (``\\r``, ``\\x1b``, ``\\u202e``): what
    a terminal shows is what the text holds."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] if c in "\t\r\n" or ord(c) < 0x80 else f"\\u{ord(c):04x}" for c in text)


def _kernel():
    """The second checker's module (before any work); InputError naming --kernel when it is not installed."""
    try:
        import certify_kernel
    except ImportError:
        raise InputError("--kernel", "the second checker (package certify_kernel) is not installed: reinstall certify") from None
    return certify_kernel


def _with_kernel(data: bytes, code: int, verdict: str, lines: list) -> tuple[int, str]:
    """Run the second checker on the same bytes; add its verdict; a certificate certify accepts and the kernel
    refuses is a disagreement (exit 4: one of the two checkers is wrong, and the certificate is not accepted)."""
    k = _kernel().check_text(data)
    lines.append(f"kernel: {k.message} (status {k.status})")
    if code in (EXIT_OK, EXIT_STOPPED_EARLY) and k.status in (EXIT_INCONSISTENT, 5):
        return EXIT_INCONSISTENT, f"REJECTED: the checkers disagree: certify accepts, the kernel refuses ({k.message})"
    both = {0: "the kernel accepts too", 3: "the kernel cannot decide", 2: "the kernel does not cover this kind"}.get(
        k.status, "the kernel refuses too"
    )
    return code, f"{verdict}; {both}"


def run(args) -> int:
    if args.precision is not None:
        check_precision(args.precision)  # before any work
    if getattr(args, "kernel", False):
        _kernel()
    data = _read(args.file)
    with ticking("verify: re-deriving the certificate"):  # a line a second on stderr once past 2 s (a PLD certificate)
        rep = verify_text(data, args.precision)
    code = rep.exit_code
    accepted = code in (EXIT_OK, EXIT_STOPPED_EARLY)
    lines = []
    for statement, holds, why in rep.conclusions:  # (statements re-derived by the checker, never read from the file)
        if accepted:
            lines.append(f"conclusion: {statement}: HOLDS")
        elif code == EXIT_INCONSISTENT or holds:  # never "HOLDS" in a certificate that is not accepted
            state = "inconsistent" if code == EXIT_INCONSISTENT else "not proved"
            lines.append(f"conclusion (not accepted: the certificate is {state}): {statement}")
        else:
            lines.append(f"conclusion: {statement}: DOES NOT HOLD" + (f" ({why})" if why else ""))
    for line in rep.hypothesis_failures:
        lines.append(f"conclusion: none proved: {line}")
    if not args.quiet:
        lines.append("details:")
        lines += [f"  ok   {line}" for line in rep.checked]
        lines += [f"  FAIL {line}" for line in rep.problems]
        lines += [f"  note {line}" for line in rep.notes]
    name = args.file
    if code == EXIT_OK:
        verdict = f"VERIFIED: every conclusion holds; {len(rep.checked)} items re-derived and in agreement ({name})"
    elif code == EXIT_STOPPED_EARLY:
        verdict = (
            f"VERIFIED, but the search STOPPED EARLY at its budget: every conclusion holds (the bound is valid, "
            f"looser than its tolerance gamma); {len(rep.checked)} items re-derived ({name})"
        )
    elif code == EXIT_INCONSISTENT:
        first = next((p for p in rep.problems), "")
        verdict = f"REJECTED: inconsistent certificate, {len(rep.problems)} problem(s), first: {first} ({name})"
    else:
        failed = rep.hypothesis_failures or [p for p in rep.problems if p.startswith("conclusion")] or [""]
        n_bad = sum(not h for _, h, _ in rep.conclusions)
        what = (
            f"{n_bad} of {len(rep.conclusions)} conclusion(s) do not hold"
            if not rep.hypothesis_failures
            else "an input is outside its theorem's range"
        )
        verdict = f"NOT PROVED: the certificate is consistent but {what}: {failed[0]} ({name})"
    if getattr(args, "kernel", False):
        code, verdict = _with_kernel(data, code, verdict, lines)
        accepted = code in (EXIT_OK, EXIT_STOPPED_EARLY)
    # the verdict is the last line on stdout (a log of stdout alone says whether the certificate was accepted);
    # a refusal is also the one line on stderr
    print("\n".join(printable(line) for line in lines + [verdict]))
    if not accepted:
        print(printable(verdict), file=sys.stderr)
    return code
