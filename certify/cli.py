"""The ``certify`` command.

Each paper package contributes its sub-commands through ``commands.register(subparsers)``; this
module owns what they share: exact-number argument types, writing a certificate (summary or JSON,
``--out`` written atomically and only after success), and turning errors into one clear line and a
non-zero exit status (2 bad input, 3 undecided at the highest precision, 4 verification failed).
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile

from . import __version__
from .balls import InputError, UndecidedError
from .certificate import Certificate

EXIT_INPUT, EXIT_UNDECIDED, EXIT_REJECTED = 2, 3, 4

# packages whose commands.register(subparsers) adds sub-commands, in --help order
COMMAND_MODULES = ["certify.objpert.commands", "certify.dpsgd.commands", "certify.referee.commands",
                   "certify.tables_command", "certify.plot_command", "certify.proofs.commands",
                   "certify.verify_command", "certify.poisson.commands",
                   "certify.audit.commands"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other input error
        hint = f"; see '{self.prog} --help'" if self.prog else ""
        sys.stderr.write(f"certify: error: {message}{hint} (a negative value is written --opt=-1/100)\n"
                         if "expected one argument" in message else f"certify: error: {message}{hint}\n")
        raise SystemExit(EXIT_INPUT)


def exact_text(value: str) -> str:
    """argparse type: keep the user's text; it is parsed exactly (and checked) by the problem."""
    return value


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename: never half-written."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError("--out", f"directory {directory} does not exist")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".certify-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the certificate (JSON) instead of the summary")
    p.add_argument("--out", metavar="FILE", help="also write the certificate JSON to FILE (atomically)")


def emit(cert: Certificate, summary: str, args) -> None:
    """Print the summary or the JSON certificate and write ``--out``; called only after success."""
    text = cert.dumps()
    if getattr(args, "out", None):
        write_atomically(args.out, text)
    sys.stdout.write(text if getattr(args, "json", False) else summary)
    if getattr(args, "out", None) and not getattr(args, "json", False):
        sys.stdout.write(f"certificate written to {args.out} (check it with: certify verify {args.out})\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="certify",
        description=(
            "Published differential-privacy bounds evaluated in Arb ball arithmetic. Every number "
            "printed as a bound is an outward-rounded endpoint of a ball that provably contains the "
            "true value; every claim comes with a JSON certificate that `certify verify` re-checks. "
            "Inputs are exact: integers, decimals (0.01, 1e-7) or fractions (1/3); floats are refused."
        ),
    )
    parser.add_argument("--version", action="version", version=f"certify {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name and name.startswith(err.name):  # that package is not there (yet)
                continue
            raise
        mod.register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InputError as err:
        sys.stderr.write(f"certify: error: {err}\n")
        return EXIT_INPUT
    except UndecidedError as err:
        sys.stderr.write(f"certify: undecided: {err}\n")
        return EXIT_UNDECIDED
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
