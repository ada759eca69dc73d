"""Reading an input file: the one reader every command uses (certificates, claims, schedules, histories,
sweep queries, caches, summaries).

A file is read only if it is a regular file: it is opened with ``O_NONBLOCK | O_NOCTTY`` (a FIFO without a
writer does not block the open, a terminal is not adopted) and ``fstat`` must say "regular file", so a
directory, a FIFO, a socket, a device (``/dev/zero``, ``/dev/urandom``, a tape) or a link to one is refused
before a byte is read. Its size is counted while it is read, and reading stops at the limit (``stat`` alone
would see 0 bytes for a device or a file that grows). Text must be UTF-8 (a lone surrogate, written as an
escape or as bytes, is refused); JSON must nest at most :data:`MAX_DEPTH` levels (checked by a scan of its
brackets before the parser runs, without recursion) and may not repeat a key within an object (a person or
another parser would read the first copy, Python the last).

Every refusal is an :class:`~certify.balls.InputError` naming the flag the file came from (``--schedule``,
``FILE``, ``--opacus-history``, ``QUERIES``, ...) and what is admissible: one line, exit 2.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys

from .balls import InputError

#: deepest JSON nesting accepted (objects and arrays); a certificate nests about 6 levels
MAX_DEPTH = 64
#: default size limit of an input file
MAX_BYTES = 64 << 20
_CHUNK = 1 << 20

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words ("a directory", "a FIFO (named pipe)", ...); the helper of
    :mod:`certify.cli`'s output checks too."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def _size_text(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n} bytes"


def read_bytes(path: str, what: str, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at ``path`` (at most ``max_bytes``); InputError naming ``what`` otherwise.

    Refused without reading: an empty path, a path that is not a regular file (checked with ``stat`` before
    opening and with ``fstat`` on the open descriptor, so a link swapped in between is caught too). The size is
    counted while reading: reading stops at ``max_bytes + 1`` bytes."""
    if not isinstance(path, str) or path == "":
        raise InputError(what, "empty file name; give the path of a regular file")
    admissible = f"a regular file of at most {_size_text(max_bytes)}"
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(what, f"{path} is {kind_of(st.st_mode)}; admissible: {admissible}")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except InputError:
        raise
    except (OSError, ValueError) as err:  # ValueError: a NUL character in the path
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise InputError(what, f"cannot read {path}: {reason}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(what, f"{path} is {kind_of(st.st_mode)}; admissible: {admissible}")
        if st.st_size > max_bytes:
            raise InputError(what, f"{path} is larger than {_size_text(max_bytes)}; admissible: {admissible}")
        chunks, total = [], 0
        while True:
            try:
                chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - total))
            except BlockingIOError:  # pragma: no cover (a regular file never blocks)
                raise InputError(what, f"{path} would block; admissible: {admissible}") from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise InputError(what, f"{path} is larger than {_size_text(max_bytes)}; admissible: {admissible}")
    except OSError as err:
        reason = "it is a directory" if err.errno == errno.EISDIR else (err.strerror or str(err))
        raise InputError(what, f"cannot read {path}: {reason}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def decode(data: bytes, what: str, *, bom: bool = False) -> str:
    """UTF-8 text of ``data`` (a leading byte-order mark dropped with ``bom``); InputError naming ``what``
    for invalid bytes (an encoded surrogate included) or a NUL character."""
    try:
        text = data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as err:
        raise InputError(what, f"not UTF-8 text (invalid byte at offset {err.start}); admissible: a UTF-8 text file") from None
    if "\x00" in text:
        raise InputError(what, f"contains a NUL character at offset {text.index(chr(0))} (a binary file?); admissible: a UTF-8 text file")
    return text


def read_text(path: str, what: str, max_bytes: int = MAX_BYTES, *, bom: bool = False) -> str:
    """:func:`read_bytes` then :func:`decode`."""
    return decode(read_bytes(path, what, max_bytes), what, bom=bom)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKETS = str.maketrans("{}", "[]")


def json_depth_exceeds(text: str, max_depth: int = MAX_DEPTH) -> bool:
    """True if the JSON text nests arrays/objects deeper than ``max_depth`` (no recursion, no parsing).

    Strings are removed, only brackets kept; each pass deletes every innermost ``[]`` pair, so a pair
    deleted by pass k encloses k - 1 levels: a pass beyond ``max_depth`` that still deletes means too deep.
    What remains of a malformed text is ``]...][...[``: its opening brackets are unclosed levels."""
    if text.count("[") + text.count("{") <= max_depth:  # each level opens a bracket (so do some strings: an upper bound)
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_BRACKETS)
    for _ in range(max_depth):
        shorter = brackets.replace("[]", "")
        if len(shorter) == len(brackets):
            break
        brackets = shorter
    else:
        if "[]" in brackets:
            return True
    return brackets.count("[") > max_depth


def _has_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_strings(obj, what: str) -> None:
    """InputError if any string (key or value) of the parsed JSON holds a lone surrogate (iterative walk)."""
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            if _has_surrogate(x):
                raise InputError(what, f"a string holds a lone surrogate character ({ascii(x)[:60]}); admissible: valid Unicode text")
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)


def loads_strict(text: str, what: str, *, max_depth: int = MAX_DEPTH, **kwargs):
    """``json.loads`` of ``text`` with the limits of every input file: nesting at most ``max_depth`` (checked
    before parsing), no duplicate key in an object, no lone surrogate, no NaN/Infinity unless ``kwargs`` give a
    ``parse_constant``; other ``kwargs`` (``parse_float=str``...) go to ``json.loads``. InputError naming ``what``.

    For :func:`certify.certificate.load` too: it may call ``loads_strict(text, "certificate")``."""
    if json_depth_exceeds(text, max_depth):
        raise InputError(what, f"JSON nested deeper than {max_depth} levels; admissible: at most {max_depth} levels of arrays/objects")

    def pairs(items):
        obj = {}
        for key, value in items:
            if key in obj:
                raise InputError(what, f"duplicate key {ascii(key)[:80]} in a JSON object; admissible: each key once")
            obj[key] = value
        return obj

    def constant(name):
        raise InputError(what, f"{name} is not a number (NaN and infinities are refused)")

    kwargs.setdefault("parse_constant", constant)
    try:
        obj = json.loads(text, object_pairs_hook=pairs, **kwargs)
    except InputError:
        raise
    except json.JSONDecodeError as err:
        raise InputError(what, f"not valid JSON (malformed or truncated): {err}") from None
    except RecursionError:  # pragma: no cover (the depth scan comes first)
        raise InputError(what, "JSON nested too deeply") from None
    except ValueError as err:  # e.g. an integer literal with too many digits
        raise InputError(what, f"not valid JSON: {' '.join(str(err).split())}"[:300]) from None
    if _SURROGATE_ESCAPE.search(text) or _has_surrogate(text):  # else no string of the document can hold one
        _check_strings(obj, what)
    return obj


def load_json(path: str, what: str, max_bytes: int = MAX_BYTES, **kwargs):
    """Read the regular file at ``path`` and parse it with :func:`loads_strict`."""
    return loads_strict(read_text(path, what, max_bytes), what, **kwargs)


def warn_discarded(path: str, err: BaseException) -> None:
    """One stderr line: a cache entry (a file certify wrote earlier) could not be used and is recomputed."""
    reason = " ".join(str(err).split())[:200] or type(err).__name__
    sys.stderr.write(f"certify: warning: cache entry {path} discarded ({reason}); recomputing\n")
