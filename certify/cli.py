"""The ``certify`` command.

Each entry of :mod:`certify.registry` contributes its sub-commands (hook ``COMMANDS``); this
module owns what they share: exact-number argument types, writing a certificate (summary or JSON,
``--out`` written atomically and only after success), and turning errors into one clear line and a
non-zero exit status (2 bad input, 3 undecided at the highest precision, 4 verification failed).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import tempfile

from . import __version__
from .balls import InputError, UndecidedError
from .certificate import Certificate
from .exits import EXIT_INPUT, EXIT_STOPPED_EARLY, EXIT_UNDECIDED  # noqa: F401  (re-exported)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other input error
        hint = f"; see '{self.prog} --help'" if self.prog else ""
        sys.stderr.write(
            f"certify: error: {message}{hint} (a negative value is written --opt=-1/100)\n"
            if "expected one argument" in message
            else f"certify: error: {message}{hint}\n"
        )
        raise SystemExit(EXIT_INPUT)


def exact_text(value: str) -> str:
    """argparse type: keep the user's text; it is parsed exactly (and checked) by the problem."""
    return value


def _umask_mode() -> int:
    """0o666 filtered by the process umask: the mode open() would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _file_error(flag: str, path: str, err: OSError) -> InputError:
    return InputError(flag, f"cannot write {path}: {err.strerror or err}")


def _special_file(path: str) -> str | None:
    """What ``path`` is if it exists and is not a regular file (a link is followed): "a directory", "a FIFO" ...; else None."""
    import stat

    from .inputfile import kind_of

    try:
        st = os.stat(path)
    except (OSError, ValueError):  # missing, a dangling link, a NUL in the name: nothing there to destroy
        return None
    return None if stat.S_ISREG(st.st_mode) else kind_of(st.st_mode)


def check_output_file(path: str, flag: str = "--out") -> None:
    """InputError unless ``path`` names a new file or an existing regular file (never a device, FIFO, folder...)."""
    if not path:
        raise InputError(flag, "empty file name; give the path of a file to write")
    kind = _special_file(path)
    if kind is not None:
        raise InputError(flag, f"{path} exists and is {kind}; admissible: a new file or an existing regular file")


def check_writable(path: str, flag: str = "--out") -> None:
    """InputError (exit 2) unless a file can be written at ``path``; called BEFORE any long work.

    ``path`` must be a new file or an existing regular file (a device such as /dev/null, a FIFO, a socket or
    a folder is refused, never replaced), its folder must exist and accept a new file (tried for real: a
    temporary file is created and removed).
    """
    check_output_file(path, flag)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(flag, f"directory {directory} does not exist")
    err = _write_probe(directory)
    if err is not None:
        raise _file_error(flag, path, err)


def check_directory(path: str, flag: str, create: bool = True) -> None:
    """InputError (exit 2) unless ``path`` is (or, with ``create``, can become) a writable folder.

    Nothing is created here: the nearest existing ancestor must be a writable folder.
    """
    if not path:
        raise InputError(flag, "empty folder name")
    probe = os.path.abspath(path)
    if os.path.exists(probe) and not os.path.isdir(probe):
        raise InputError(flag, f"{path} exists and is not a directory")
    if not create and not os.path.isdir(probe):
        raise InputError(flag, f"directory {path} does not exist")
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise InputError(flag, f"{probe} is not a directory, so {path} cannot be created")
    err = _write_probe(probe)
    if err is not None:
        raise InputError(flag, f"cannot write in {probe}: {err.strerror or err}")


def _write_probe(directory: str) -> OSError | None:
    """Create and remove a temporary file in ``directory`` (tried for real); the OSError if that fails."""
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".certify-", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as err:
        return err
    return None


def write_atomically(path: str, data: str | bytes, flag: str = "--out") -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename.

    The file is never seen half-written, gets the mode a plain open() would give (0o666 minus the
    umask, not mkstemp's 0600), and the temporary file is removed on any error. An OSError becomes
    an InputError naming ``flag`` (one line, exit 2). The one atomic-write helper of the package.
    """
    check_output_file(path, flag)  # a device, FIFO or folder is never renamed over
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(flag, f"directory {directory} does not exist")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".certify-", suffix=".tmp")
        os.fchmod(fd, _umask_mode())
        with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w") as fh:
            fh.write(data)
        check_output_file(path, flag)  # again: it may have appeared while the data was written
        os.replace(tmp, path)
        tmp = None
    except OSError as err:
        raise _file_error(flag, path, err) from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


class Progress:
    """Progress of a long run on stderr, also when stderr is not a terminal.

    On a terminal the line is redrawn in place; otherwise one line is written at most every
    ``every`` seconds (so logs of CI runs show the run is alive without flooding). Used as a context
    manager it also writes a heartbeat line every ``every`` seconds while the block runs (for work
    that reports no intermediate state, e.g. a process pool).
    """

    def __init__(self, what: str, every: float = 5.0):
        import time

        self.what, self.every, self._clock = what, every, time.monotonic
        self.t0 = self._last = self._clock()
        self.tty = sys.stderr.isatty()
        self._stop = None

    def update(self, state: str) -> None:
        now = self._clock()
        if self.tty:
            sys.stderr.write(f"\r{self.what}: {state} ({now - self.t0:.0f} s)   ")
        elif now - self._last >= self.every:
            sys.stderr.write(f"{self.what}: {state} ({now - self.t0:.0f} s)\n")
            self._last = now
        else:
            return
        sys.stderr.flush()

    def done(self) -> None:
        if self.tty:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()

    def __enter__(self):
        import threading

        self._stop = threading.Event()

        def beat():
            while not self._stop.wait(self.every):
                self._last = 0.0
                self.update("still running")

        threading.Thread(target=beat, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.done()
        return False


#: file and folder options checked up front by main(): (attribute, flag, kind)
_PATH_OPTIONS = (
    ("out", "--out", "file"),
    ("out_fail", "--out-fail", "file"),
    ("evidence", "--evidence", "file"),
    ("report", "--report", "file"),
    ("out_dir", "--out-dir", "dir"),
    ("cache_dir", "--cache-dir", "dir"),
)
#: options whose empty value has a documented meaning ('' disables the on-disk cache)
EMPTY_ALLOWED = ("--cache-dir",)


def check_paths(args) -> None:
    """Check every output file/folder option of the parsed command before its work starts (all of them before
    any file is written): a file option names a new or regular file in a writable folder, a folder option an
    existing or creatable folder. ``sweep --out`` is a folder (``out_dir``)."""
    seen: dict[str, str] = {}  # real path -> the flag that names it: two output files are never one file
    for attr, flag, kind in _PATH_OPTIONS:
        value = getattr(args, attr, None)
        if value is None or (value == "" and attr == "cache_dir"):  # '' disables a cache
            continue
        if getattr(args, "command", None) == "sweep" and attr == "out_dir":
            flag = "--out"
        if kind == "file":
            check_writable(value, flag)
            real = _file_identity(value)
            if real in seen:
                raise InputError(flag, f"names the same file as {seen[real]} ({value}): give each output its own file")
            seen[real] = flag
        else:
            check_directory(value, flag)
    if getattr(args, "command", None) == "tables" and not getattr(args, "check", False):
        check_directory(args.tables_dir, "--tables-dir", create=False)
        check_no_special_outputs(args.tables_dir, "--tables-dir", (".csv", ".md"))
    if getattr(args, "command", None) == "plot" and getattr(args, "out_dir", None):
        check_no_special_outputs(args.out_dir, "--out-dir", (".png",))


def _file_identity(path: str):
    """(device, inode) of an existing file (hard links and other spellings alike), else its real path."""
    try:
        st = os.stat(path)
        return (st.st_dev, st.st_ino)
    except OSError:
        return os.path.realpath(path)


def check_no_special_outputs(directory: str, flag: str, suffixes: tuple[str, ...]) -> None:
    """InputError if an entry of ``directory`` ending in one of ``suffixes`` (a file a command may rewrite there)
    exists and is not a regular file: it would otherwise be found only after the work."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return
    for name in names:
        if name.endswith(suffixes):
            check_output_file(os.path.join(directory, name), flag)


def check_empty_values(parser: argparse.ArgumentParser, args) -> None:
    """InputError naming the flag for an option given as the empty string (never read as "use the default"),
    except those of :data:`EMPTY_ALLOWED`."""
    actions = list(parser._actions)  # argparse keeps no public list of a parser's actions
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub = action.choices.get(getattr(args, "command", None))
            actions += list(sub._actions) if sub is not None else []
    for action in actions:
        if not action.option_strings or action.default == "" or getattr(args, action.dest, None) != "":
            continue
        flag = max(action.option_strings, key=len)
        if flag not in EMPTY_ALLOWED:
            what = " ".join(str(action.help or "").replace("%%", "%").split())
            raise InputError(flag, f"must be a value{f' ({what})' if what else ''}, not empty; give one or leave the option out")


def check_range(cert: Certificate, hints: dict[str, tuple[str, str]] | None = None) -> None:
    """InputError naming a parameter unless every quantity of ``cert`` lies in the exact range.

    Certificates hold balls exactly (rationals), so every certified value must lie between
    2^-MAX_EXPONENT and 2^MAX_EXPONENT in magnitude (about 1e-315652 .. 1e315652; see
    :data:`certify.balls.MAX_EXPONENT`). Called right after certifying, before anything is printed
    or written. ``hints`` maps a quantity name to (the flag that drives it, what is admissible).
    """
    from .balls import MAX_EXPONENT, check_magnitude, pow2_text

    for name, q in cert.quantities.items():
        try:
            check_magnitude(q.value)
        except InputError:
            m, e = q.value.mid().man_exp()
            if m == 0:  # a ball centred at 0: its size is its radius
                m, e = q.value.rad().man_exp()
            k = int(e) + abs(int(m)).bit_length()
            flag, admissible = (hints or {}).get(name, ("inputs", "less extreme inputs"))
            raise InputError(
                flag,
                f"{name} {q.equation} would be about {pow2_text(k)}, outside the "
                f"range 2^-{MAX_EXPONENT} .. 2^{MAX_EXPONENT} (about 1e-315652 .. 1e315652) "
                f"that certificates hold exactly; admissible: {admissible}",
            ) from None


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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``certify`` parser: every sub-command (``--help``, an unknown command), or with ``command`` only that
    sub-command when the registry names the module adding it (a fresh ``certify verify`` imports no paper)."""
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
    from . import registry

    for name in registry.command_modules(command):  # every entry's COMMANDS (or the command's), in --help order
        importlib.import_module(name).register(sub)
    return parser


def _command(argv: list[str]) -> str | None:
    """The sub-command ``argv`` names when it comes first (the top-level options take no value); None when an
    option comes first (``--help``, ``--version``: the whole parser answers them)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


_LONG_NUMBER = re.compile(r"\d{41,}")


def _short_numbers(text: str) -> str:
    """Messages stay one readable line: a number of more than 40 digits is shown as its first 20 digits."""
    return _LONG_NUMBER.sub(lambda m: f"{m.group(0)[:20]}...({len(m.group(0))} digits)", text)


def _ending(err: BaseException) -> int:
    """The status and the one stderr line of a command that raised ``err``; re-raises what is not an ending.

    A signal that arrived (:func:`certify.signals.arrived`) decides first: a ``KeyboardInterrupt`` can turn into
    another exception on its way up (numpy's import makes it an ``ImportError``; an optional import made an
    ``InputError`` of it), and it is still the user's interruption, not a fault."""
    from . import signals

    interruption = signals.arrived() or (err if isinstance(err, KeyboardInterrupt) else None)
    if interruption is not None:  # SIGINT, or SIGTERM (signals.Terminated)
        sys.stderr.write(f"certify: {signals.message(interruption)}\n")
        return signals.exit_status(interruption)
    if isinstance(err, InputError):
        sys.stderr.write(_short_numbers(f"certify: error: {err}").replace("\n", " ") + "\n")
        return EXIT_INPUT
    if isinstance(err, UndecidedError):
        sys.stderr.write(_short_numbers(f"certify: undecided: {err}").replace("\n", " ") + "\n")
        return EXIT_UNDECIDED
    if isinstance(err, BrokenPipeError):  # pragma: no cover
        return 0
    raise err


def main(argv=None) -> int:
    """Run one command; every ending is an exit status and at most one stderr line (see :mod:`certify.exits`).

    SIGINT and SIGTERM (:mod:`certify.signals`) end it with "interrupted" / "terminated" and 130 / 143 after
    every ``finally`` block ran (temporary files removed, workers and clusters shut down)."""
    from . import signals

    previous = signals.install()
    try:
        parser = build_parser(_command(sys.argv[1:] if argv is None else list(argv)))
        args = parser.parse_args(argv)
        check_empty_values(parser, args)
        check_paths(args)
        return int(args.func(args) or 0)
    except (InputError, UndecidedError, KeyboardInterrupt, Exception) as err:
        return _ending(err)
    finally:
        if argv is None:  # the program: a signal while the interpreter shuts down ends it at once, no traceback
            signals.quiet_exit()
            signals.forget_caught_interrupt()
        else:  # called in-process (tests, embedding): the caller's handlers back
            signals.restore(previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
