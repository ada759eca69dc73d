"""The QUERIES file of ``certify sweep``: one certifying query per row, as exact text.

Two formats, told apart by the file name (``.csv``; ``.jsonl``, ``.ndjson``, ``.json``) or, failing that,
by the first non-blank character (``{`` means JSON Lines):

* CSV with a header row. A ``command`` column names the sub-command (``dpsgd``, ``rho``, ``objpert``,
  ``account``, ...); a column named after a positional argument gives it (``event``: the EVENT.json file of
  ``account``, a path as on the command line; the sweep names the certificate after the file's content too, so
  an edited file is a new query); every other column is a flag of that sub-command, named as the flag without its leading dashes
  and with underscores for dashes (``sampling_rate`` is ``--sampling-rate``, ``delta_S`` is
  ``--delta-S``, ``lambda`` is ``--lambda``). A cell is kept as the exact text written (never read as
  a number); an empty cell means the flag is not given; a flag without a value (``--utility``) is
  ``true`` (given) or ``false`` / empty (not given).
* JSON Lines: one object per line with the same keys. Numbers keep their exact text (``0.01`` stays
  ``"0.01"``, never a float); ``null`` means not given; ``true``/``false`` are booleans.

A row that cannot be read (a CSV row with the wrong number of cells, a line that is not a JSON object, a
missing command, a nested value) becomes a :class:`Query` with an ``error``: the sweep reports it in its
summary and goes on. A file that cannot be read as a whole (unreadable, not CSV or JSON Lines, no
``command`` column, no rows) is an :class:`~certify.balls.InputError` (exit 2, nothing written).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
from dataclasses import dataclass, field

from ..balls import InputError
from ..inputfile import loads_strict, read_text

COMMAND = "command"
MAX_BYTES = 1 << 30  # a QUERIES file larger than this is refused before it is read
MAX_ROWS = 10_000_000


@dataclass
class Query:
    """One row: its 1-based number in the file, the sub-command and its flags as exact text."""

    row: int
    command: str = ""
    cells: dict[str, str | bool] = field(default_factory=dict)  # column -> exact text (or bool); empty cells dropped
    error: str | None = None


def read_queries(path: str) -> list[Query]:
    """Read a QUERIES file (CSV or JSON Lines) into rows; raise InputError if the file as a whole is unusable."""
    # a regular UTF-8 file only (a FIFO, a device or a folder is refused unread); size counted while reading
    text = read_text(path, "QUERIES", MAX_BYTES, bom=True)
    if not text.strip():
        raise InputError("QUERIES", f"{path} is empty (expected a header row with a 'command' column, or JSON Lines)")
    lower = path.lower()
    if lower.endswith((".jsonl", ".ndjson", ".json")) or (not lower.endswith(".csv") and text.lstrip()[0] == "{"):
        return _read_jsonl(text, path)
    return _read_csv(text, path)


def _read_csv(text: str, path: str) -> list[Query]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except csv.Error as err:
        raise InputError("QUERIES", f"{path}: not CSV: {err}") from None
    header = [h.strip() for h in header]
    if COMMAND not in header:
        raise InputError("QUERIES", f"{path}: the header has no 'command' column (got: {', '.join(header)[:200]})")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise InputError("QUERIES", f"{path}: duplicate column(s) {', '.join(dup)}")
    if "" in header:
        raise InputError("QUERIES", f"{path}: a header cell is empty")
    queries: list[Query] = []
    try:
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue  # blank line
            q = Query(len(queries) + 1)
            queries.append(q)
            if len(cells) != len(header):
                q.error = f"row has {len(cells)} cells, the header has {len(header)}"
                continue
            _fill(q, dict(zip(header, cells)))
            if len(queries) > MAX_ROWS:
                raise InputError("QUERIES", f"{path}: more than {MAX_ROWS} rows")
    except csv.Error as err:
        raise InputError("QUERIES", f"{path}: not CSV at line {reader.line_num}: {err}") from None
    if not queries:
        raise InputError("QUERIES", f"{path}: no rows after the header")
    return queries


def _exact_number_text(text: str) -> str:
    return text  # json numbers keep the exact text written (parse_float / parse_int receive the literal)


def _read_jsonl(text: str, path: str) -> list[Query]:
    queries: list[Query] = []
    parsed = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        q = Query(len(queries) + 1)
        queries.append(q)
        if len(queries) > MAX_ROWS:
            raise InputError("QUERIES", f"{path}: more than {MAX_ROWS} rows")
        try:  # depth, duplicate keys and lone surrogates refused by the one reader
            obj = loads_strict(line, f"row {q.row}", parse_float=_exact_number_text, parse_int=_exact_number_text, parse_constant=lambda c: c)
        except InputError as err:
            q.error = f"not a JSON object: {err.message}"
            continue
        if not isinstance(obj, dict):
            q.error = f"not a JSON object (got a JSON {type(obj).__name__})"
            continue
        parsed += 1
        cells: dict[str, str | bool] = {}
        for key, value in obj.items():
            if value is None:
                continue
            if not isinstance(value, (str, bool)):
                q.error = f"{key}: a value must be a number, a string or true/false, got a JSON {type(value).__name__}"
                break
            cells[key] = value
        if q.error is None:
            _fill(q, cells)
    if not queries:
        raise InputError("QUERIES", f"{path}: no rows")
    if parsed == 0:
        raise InputError("QUERIES", f"{path}: not JSON Lines (no line is a JSON object) and not CSV")
    if not any(q.command for q in queries):
        raise InputError("QUERIES", f"{path}: no row has a 'command' key")
    return queries


def _fill(q: Query, cells: dict) -> None:
    """Set the command and the non-empty cells of a row (empty text and false are 'not given' only later)."""
    command = cells.pop(COMMAND, "")
    if isinstance(command, bool) or not str(command).strip():
        q.error = "no 'command' given in this row"
        return
    q.command = str(command).strip()
    for key, value in cells.items():
        key = key.strip()
        if isinstance(value, str):
            value = value.strip()
            if value == "":
                continue
        q.cells[key] = value


def flag_table(subparser) -> dict[str, object]:
    """Column name -> argparse action of a sub-command: ``--sampling-rate`` answers to ``sampling_rate``
    (and to ``sampling-rate``); found from the parser itself, so every present and future flag works."""
    table: dict[str, object] = {}
    for action in subparser._actions:  # argparse keeps no public list of a parser's actions
        for opt in action.option_strings:
            if opt.startswith("--"):
                table[opt[2:].replace("-", "_")] = action
                table[opt[2:]] = action
    return table


TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")


def positionals(subparser) -> list:
    """The positional arguments of a sub-command (e.g. ``account``'s EVENT.json, column ``event``), in order."""
    return [a for a in subparser._actions if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]


def argv_for(q: Query, subparser, reserved: tuple[str, ...] = ()) -> list[str]:
    """The flags of row ``q`` as argv (``--flag=value``, sorted by flag: the canonical form), then the values of
    the positional arguments (a column named after each one, e.g. ``event`` for ``account EVENT.json``).

    Raises InputError naming the column for an unknown flag, a reserved one (``--out``, set by the sweep)
    or a bad boolean."""
    table = flag_table(subparser)
    pairs: dict[str, str | None] = {}
    places = {a.dest: a for a in positionals(subparser)}
    given: dict[str, str] = {}
    for column, value in q.cells.items():
        if column in places:
            if not isinstance(value, str) or value.startswith("-"):
                raise InputError(column, f"the {places[column].metavar or column} of '{q.command}' must be text not beginning with '-'")
            given[column] = value
            continue
        action = table.get(column)
        if action is None:
            raise InputError(column, f"'{q.command}' has no flag --{column.replace('_', '-')}")
        flag = max(action.option_strings, key=len)
        if flag in reserved or column in ("help", "h"):
            raise InputError(column, f"{flag} cannot be given in a sweep row (the sweep sets it)")
        if flag in pairs:
            raise InputError(column, f"{flag} is given twice")
        if action.nargs == 0:  # a switch: true (given) or false (not given)
            text = str(value).lower() if isinstance(value, bool) else value.lower()
            if text in TRUE:
                pairs[flag] = None
            elif text not in FALSE:
                raise InputError(column, f"{flag} takes no value: write true or false, got {value!r}")
            continue
        if isinstance(value, bool):
            raise InputError(column, f"{flag} takes a value, got {str(value).lower()}")
        pairs[flag] = value
    return [f if v is None else f"{f}={v}" for f, v in sorted(pairs.items())] + [given[d] for d in places if d in given]


def certificate_name(command: str, argv: list[str]) -> str:
    """``<command>-<first 16 hex digits of sha256>.json`` of the canonical query (command + sorted argv)."""
    digest = hashlib.sha256(json.dumps([command, *argv], separators=(",", ":")).encode()).hexdigest()
    return f"{command}-{digest[:16]}.json"
