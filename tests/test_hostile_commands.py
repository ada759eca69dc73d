"""Hostile input against every flag and file argument of every command, read from the parser itself.

The inventory below names every option and positional argument of every sub-command of ``certify`` with its kind
(a number, an integer, a word of a closed set, an argparse choice, a switch, an input file, an output file, a
folder); :func:`test_the_inventory_is_the_parser` fails when a command or flag is added without a line here, so
the corpus grows with the tool. Each case asserts: the exit status (2 for a refusal), exactly one stderr line
naming the parameter (and its admissible range where it has one), no traceback, no file left behind, a bounded
time; the slow cases run in one subprocess per command under ``RLIMIT_AS`` = 2 GiB (memory bounded, a crash or
hang kills only it). ``python -m certify_kernel FILE`` is driven the same way, in subprocesses.

What the corpus found in files this suite's author may not change is a strict xfail naming the file and the reason
(:data:`KNOWN`, :data:`KNOWN_EVENTS`, :data:`KNOWN_KERNEL`, :data:`KNOWN_DIRS`): the fix turns it into an XPASS failure,
and its line here is then removed. SIGINT / SIGTERM of the event commands are in ``test_signals.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import pytest

from fast_subset import fast_subset
from test_hostile import ROOT, run_inprocess

#: an event ledger (10 Gaussian steps), a family for calibrate-event, a DP-SGD claim, a sweep query file
EVENT = {"class_name": "SelfComposedDpEvent", "count": 10, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "2"}}
FAMILY = {"class_name": "SelfComposedDpEvent", "count": 10, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "$noise"}}
CLAIM = os.path.join(ROOT, "examples", "claims", "opacus_mnist.json")
QUERIES = "command,noise_multiplier,epsilon\ngaussian-benchmark,5,1\n"

POISSON = ["--sampling", "poisson", "--sampling-rate", "1/100", "--noise-multiplier", "2", "--delta", "1e-6"]

#: command -> a cheap valid command line ({EVENT}, {FAMILY}, {CERT}, {CLAIM}, {QUERIES} are files; {D} the test's folder)
BASES = {
    "objpert": ["objpert", "--example", "4.8"],
    "calibrate": ["calibrate", "--epsilon", "1", "--delta", "1e-7", "--n", "1000000", "--d", "10000"],
    "gaussian-benchmark": ["gaussian-benchmark", "--noise-multiplier", "5", "--epsilon", "1"],
    "rho": ["rho", "--alpha", "8", "--sampling-rate", "1/100", "--noise-multiplier", "2"],
    "dpsgd": ["dpsgd", "--sampling", "fixed-size", "--sampling-rate", "1/100", "--noise-multiplier", "2", "--steps", "100", "--delta", "1e-6"],
    "objpert-rdp": ["objpert-rdp", "--L", "1", "--nu", "2", "--s", "1/4", "--lambda", "1", "--alpha", "3"],
    "tables": ["tables", "--paper", "bok", "--check", "--cache-dir", ""],
    "plot": ["plot", "--figure", "5", "--out-dir", "{D}/figures", "--cache-dir", ""],
    "proofs": ["proofs", "--paper", "bok", "--report", "{D}/REPORT.md"],
    "verify": ["verify", "{CERT}"],
    "calibrate-dpsgd": ["calibrate-dpsgd", "--epsilon", "1", "--delta", "1e-5", "--steps", "100", "--sampling-rate", "1/100"],
    "audit": ["audit", "{CLAIM}", "--no-pld", "--no-floats"],
    "sweep": ["sweep", "{QUERIES}", "--out", "{D}/sweep", "--executor", "local", "--workers", "1"],
    "account": ["account", "{EVENT}", "--delta", "1e-6"],
    "calibrate-event": ["calibrate-event", "{FAMILY}", "--epsilon", "1", "--delta", "1e-5"],
    "report": ["report", "{CERT}", "--out", "{D}/report.html"],
}

#: (command, flag) -> the command line a flag needs to mean something (its own value is replaced or appended)
VARIANTS = {
    ("objpert", "--L1"): ["objpert", "--n", "1000000", "--d", "10000", "--mu", "1/100", "--zeta", "1", "--loss", "custom", "--L1", "1", "--L2", "1/4"]
    + ["--L3", "1/10", "--sigma", "1/100", "--u", "5", "--epsilon", "1"],
    ("objpert", "--sigma"): ["objpert", "--example", "4.8", "--sigma", "1e-5"],
    ("objpert", "--delta-S"): ["objpert", "--example", "4.8", "--utility"],
    ("calibrate", "--L1"): ["calibrate", "--epsilon", "1", "--delta", "1e-7", "--n", "1000000", "--d", "10000", "--loss", "custom"]
    + ["--L1", "1", "--L2", "1/4", "--L3", "1/10"],
    ("rho", "--batch-size"): ["rho", "--alpha", "8", "--batch-size", "6", "--dataset-size", "600", "--noise-multiplier", "2"],
    ("dpsgd", "--grid"): ["dpsgd", "--accountant", "pld", "--grid", "1e-2", "--steps", "100", *POISSON],
    ("dpsgd", "--composition"): ["dpsgd", "--accountant", "pld", "--grid", "1e-2", "--steps", "100", "--composition", "fft", *POISSON],
    ("dpsgd", "--batch-size"): ["dpsgd", "--sampling", "fixed-size", "--batch-size", "6", "--dataset-size", "600", "--noise-multiplier", "2"]
    + ["--steps", "100", "--delta", "1e-6"],
    ("dpsgd", "--epochs"): ["dpsgd", "--accountant", "renyi", "--epochs", "1", *POISSON],
    ("dpsgd", "--adjacency"): ["dpsgd", "--accountant", "renyi", "--steps", "100", "--adjacency", "add-remove", *POISSON],
    ("dpsgd", "--fractional-orders"): ["dpsgd", "--accountant", "renyi", "--steps", "100", *POISSON],
    ("dpsgd", "--schedule"): ["dpsgd", "--delta", "1e-6", "--schedule", "{D}/none.json"],
    ("dpsgd", "--opacus-history"): ["dpsgd", "--delta", "1e-6", "--opacus-history", "{D}/none.json"],
    ("calibrate-dpsgd", "--grid"): ["calibrate-dpsgd", "--epsilon", "1", "--delta", "1e-5", "--steps", "10", "--sampling-rate", "1/100"]
    + ["--accountant", "pld", "--grid", "1e-2"],
    ("account", "--epsilon"): ["account", "{EVENT}", "--epsilon", "1"],
    ("account", "--order"): ["account", "{EVENT}", "--order", "8"],
    ("account", "--grid"): ["account", "{EVENT}", "--accountant", "pld", "--delta", "1e-6", "--grid", "1e-2"],
    ("account", "--composition"): ["account", "{EVENT}", "--accountant", "pld", "--delta", "1e-6", "--grid", "1e-2", "--composition", "fft"],
    ("calibrate-event", "--grid"): ["calibrate-event", "{FAMILY}", "--accountant", "pld", "--epsilon", "1", "--delta", "1e-5", "--grid", "1e-2"],
    ("plot", "--run"): ["plot", "--run", "{CERT}", "--out", "{D}/run.png"],
    ("plot", "--out"): ["plot", "--run", "{CERT}", "--out", "{D}/run.png"],
}
#: the variants of a few flags that read another flag's value (--dataset-size with --batch-size ...)
for _c, _f, _like in [
    ("rho", "--dataset-size", "--batch-size"),
    ("dpsgd", "--dataset-size", "--batch-size"),
    ("objpert", "--L2", "--L1"),
    ("objpert", "--L3", "--L1"),
    ("calibrate", "--L2", "--L1"),
    ("calibrate", "--L3", "--L1"),
    ("objpert", "--comparator-norm", "--delta-S"),
    ("objpert", "--beta", "--delta-S"),
    ("objpert", "--gradient-norm", "--delta-S"),
]:
    VARIANTS[(_c, _f)] = VARIANTS[(_c, _like)]

NUMBER, INTEGER, WORD, CHOICE, SWITCH, IN_FILE, OUT_FILE, DIRECTORY = "number", "integer", "word", "choice", "switch", "in", "out", "dir"

#: every option and positional argument of every command, with its kind
FLAGS = {
    "objpert": {
        **dict.fromkeys(["--n", "--d", "--mu", "--zeta", "--L1", "--L2", "--L3", "--eta", "--noise-multiplier", "--sigma", "--u"], NUMBER),
        **dict.fromkeys(["--iterations", "--epsilon", "--delta", "--target-delta", "--delta-S", "--comparator-norm", "--beta"], NUMBER),
        "--gradient-norm": NUMBER,
        "--example": CHOICE,
        "--loss": CHOICE,
        "--utility": SWITCH,
        "--json": SWITCH,
        "--out": OUT_FILE,
    },
    "calibrate": {
        **dict.fromkeys(["--epsilon", "--delta", "--delta-S", "--comparator-norm", "--n", "--d", "--zeta", "--L1", "--L2", "--L3"], NUMBER),
        "--loss": CHOICE,
        "--method": CHOICE,
        "--json": SWITCH,
        "--out": OUT_FILE,
    },
    "gaussian-benchmark": {"--noise-multiplier": NUMBER, "--epsilon": NUMBER, "--json": SWITCH, "--out": OUT_FILE},
    "rho": {
        **dict.fromkeys(["--alpha", "--sampling-rate", "--batch-size", "--dataset-size", "--noise-multiplier", "--gamma", "--max-seconds"], NUMBER),
        "--max-evaluations": INTEGER,
        "--cache-dir": DIRECTORY,
        "--json": SWITCH,
        "--out": OUT_FILE,
    },
    "dpsgd": {
        **dict.fromkeys(
            ["--steps", "--delta", "--alpha", "--grid", "--sampling-rate", "--batch-size", "--dataset-size", "--noise-multiplier"], NUMBER
        ),
        **dict.fromkeys(["--gamma", "--max-seconds", "--epochs"], NUMBER),
        "--max-evaluations": INTEGER,
        "--accountant": CHOICE,
        "--composition": CHOICE,
        "--fractional-orders": CHOICE,
        "--sampling": WORD,
        "--adjacency": WORD,
        "--schedule": IN_FILE,
        "--opacus-history": IN_FILE,
        "--cache-dir": DIRECTORY,
        "--json": SWITCH,
        "--out": OUT_FILE,
    },
    "objpert-rdp": {
        **dict.fromkeys(["--L", "--nu", "--s", "--lambda", "--alpha", "--epsilon", "--delta"], NUMBER),
        "--json": SWITCH,
        "--out": OUT_FILE,
    },
    "tables": {
        "--paper": CHOICE,
        "--tables-dir": DIRECTORY,
        "--check": SWITCH,
        "--report-only": SWITCH,
        "--cache-dir": DIRECTORY,
        "--jobs": INTEGER,
        "--scheduler": WORD,
    },
    "plot": {"--figure": INTEGER, "--run": IN_FILE, "--out": OUT_FILE, "--out-dir": DIRECTORY, "--tables-dir": DIRECTORY, "--cache-dir": DIRECTORY},
    "proofs": {"--paper": CHOICE, "--report": OUT_FILE, "--no-report": SWITCH},
    "verify": {"file": IN_FILE, "--precision": INTEGER, "--quiet": SWITCH, "--kernel": SWITCH},
    "calibrate-dpsgd": {
        **dict.fromkeys(["--epsilon", "--delta", "--steps", "--sampling-rate", "--grid"], NUMBER),
        "--sampling": WORD,
        "--adjacency": WORD,
        "--accountant": CHOICE,
        "--orders": CHOICE,
        "--json": SWITCH,
        "--out": OUT_FILE,
        "--out-fail": OUT_FILE,
    },
    "audit": {
        "claim": IN_FILE,
        "--out": OUT_FILE,
        "--evidence": OUT_FILE,
        "--json": SWITCH,
        "--grid": NUMBER,
        "--no-pld": SWITCH,
        "--no-floats": SWITCH,
    },
    "sweep": {"queries": IN_FILE, "--out": DIRECTORY, "--workers": INTEGER, "--scheduler": WORD, "--executor": CHOICE},
    "account": {
        "event": IN_FILE,
        "--accountant": WORD,
        "--neighboring": WORD,
        "--delta": NUMBER,
        "--epsilon": NUMBER,
        "--order": NUMBER,
        "--grid": NUMBER,
        "--composition": CHOICE,
        "--json": SWITCH,
        "--out": OUT_FILE,
    },
    "calibrate-event": {
        "event": IN_FILE,
        "--epsilon": NUMBER,
        "--delta": NUMBER,
        "--neighboring": WORD,
        "--accountant": WORD,
        "--grid": NUMBER,
        "--json": SWITCH,
        "--out": OUT_FILE,
        "--out-fail": OUT_FILE,
    },
    "report": {"file": IN_FILE, "--out": OUT_FILE},
}

#: what the error line of an input file names (the metavar of a positional argument)
FILE_NAMES = {"file": ("FILE", "CERT", "certificate"), "claim": ("CLAIM",), "queries": ("QUERIES",), "event": ("EVENT.json", "event")}

UNREADABLE = ["1/0", "0/0", "", "nan", "inf", "\u0661\u0662", "x" * 10_000]
EXTREME = ["-0", "1e400", "1e-400", "9" * 10_000]
#: values for a word of a closed set (--sampling, --neighboring ...): none of them is admissible
WORDS = UNREADABLE + ["-0", "1e400", "poisson-ish", "\udcff", "é" * 10_000]
#: flags whose refusal names another spelling of the same option
ALIASES = {("objpert", "--target-delta"): ("--delta",)}

#: what the corpus found and this helper may not fix (another helper's file): (command, flag) -> (values, reason);
#: each is a strict xfail, so that the fix turns it into a failure to remove here
KNOWN: dict[tuple[str, str], tuple[set[str], str]] = {}


def known(cases):
    """``cases`` with the strict xfail of :data:`KNOWN` on the cases it lists."""
    out = []
    for c in cases:
        values, marks = (c.values, list(c.marks)) if hasattr(c, "values") else (c, [])  # a pytest.param of fast_subset
        bad, reason = KNOWN.get(tuple(values[:2]), (set(), ""))
        if values[2] in bad:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        out.append(pytest.param(*values, marks=marks) if marks else c)
    return out


def test_the_inventory_is_the_parser():
    """Every command and every option or positional argument of the parser has a line in FLAGS (and no stale one)."""
    from certify import cli

    parser = cli.build_parser()
    seen = {}
    for action in parser._actions:  # argparse keeps no public list of a parser's actions
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                seen[name] = {max(a.option_strings, key=len) if a.option_strings else a.dest: a for a in sub._actions if "-h" not in a.option_strings}
    assert sorted(seen) == sorted(FLAGS) == sorted(BASES)
    for name, actions in seen.items():
        assert sorted(actions) == sorted(FLAGS[name]), name
        for flag, a in actions.items():
            kind = FLAGS[name][flag]
            assert (kind == SWITCH) == (a.nargs == 0), (name, flag)
            assert (kind == CHOICE) == bool(a.choices) or (name, flag) == ("plot", "--figure"), (name, flag)


def _files(d: str) -> dict[str, str]:
    """The valid input files of the base command lines, written in ``d``."""
    from certify import verify

    paths = {"EVENT": f"{d}/event.json", "FAMILY": f"{d}/family.json", "CERT": f"{d}/cert.json", "QUERIES": f"{d}/q.csv", "CLAIM": CLAIM}
    with open(paths["EVENT"], "w") as fh:
        json.dump(EVENT, fh)
    with open(paths["FAMILY"], "w") as fh:
        json.dump(FAMILY, fh)
    with open(paths["CERT"], "w") as fh:
        fh.write(verify.spec_for("dpsgd/renyi-poisson").example().dumps())
    with open(paths["QUERIES"], "w") as fh:
        fh.write(QUERIES)
    return paths


def command_line(command: str, flag: str, value: str, d: str, files: dict[str, str]) -> list[str]:
    """The base (or variant) command line of ``flag`` with ``value`` in its place (a positional argument replaced)."""
    argv = list(VARIANTS.get((command, flag), BASES[command]))
    for key, path in files.items():
        argv = [a.replace("{" + key + "}", path) for a in argv]
    argv = [a.replace("{D}", d) for a in argv]
    if not flag.startswith("-"):  # a positional file argument: the base's first file
        i = next(i for i, a in enumerate(argv) if i > 0 and not a.startswith("-") and not argv[i - 1].startswith("-"))
        argv[i] = value
    elif flag in argv:
        argv[argv.index(flag) + 1] = value
    else:
        argv += [f"{flag}={value}"]  # '=' so that a value starting with '-' is read as the value
    return argv


def listing(d: str) -> set[str]:
    return {os.path.relpath(os.path.join(r, f), d) for r, ds, fs in os.walk(d) for f in fs + ds}


def names_of(command: str, flag: str) -> tuple[str, ...]:
    return FILE_NAMES.get(flag, (flag,))


def check_refusal(rc, out, err, names, before, after, range_words=("must be", "admissible", "in [", "in (", "one of", "expected")) -> str:
    """Exit 2, no traceback, exactly one stderr line naming one of ``names`` (and, when ``range_words``, saying what
    is admissible), nothing left behind; returns the line."""
    out, err = (t.encode("utf-8", "backslashreplace").decode("utf-8") for t in (out, err))  # a lone surrogate echoed (pytest-xdist)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2, (rc, err[-600:])
    assert "Traceback" not in out + err
    assert len(lines) == 1, err[-1000:]
    assert any(f"error: {n}" in lines[0] or f"error: argument {n}" in lines[0] or f"{n}:" in lines[0] for n in names), lines[0][:300]
    if range_words:
        assert any(w in lines[0] for w in range_words), lines[0][:300]
    assert after == before, after ^ before
    return lines[0]


# ------------------------------------------------------------------------------------------------ values
VALUE_CASES = [(c, f, v) for c, flags in FLAGS.items() for f, kind in flags.items() if kind in (NUMBER, INTEGER) for v in UNREADABLE + EXTREME]
WORD_CASES = [(c, f, v) for c, flags in FLAGS.items() for f, kind in flags.items() if kind == WORD for v in WORDS]
#: the fast suite: the new commands' and flags' unreadable values, one of each kind elsewhere
NEW = {"account", "calibrate-event", "report", "calibrate-dpsgd"}
NEW_FLAGS = {("dpsgd", "--epochs"), ("dpsgd", "--batch-size"), ("dpsgd", "--dataset-size"), ("calibrate-dpsgd", "--grid"), ("plot", "--figure")}
FAST_VALUES = [c for c in VALUE_CASES if c[2] == "1/0" or (c[2] in UNREADABLE and (c[0] in NEW or c[:2] in NEW_FLAGS))]
FAST_WORDS = [c for c in WORD_CASES if c[2] in ("", "nan", "poisson-ish", "\udcff")]


def _id(x):
    if not isinstance(x, str):
        return None
    return x.encode("unicode_escape").decode("ascii") if len(x) <= 16 else f"{len(x)}-chars"  # ids stay ASCII (pytest-xdist)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("inputs"))
    return _files(d)


@pytest.mark.parametrize("command,flag,value", known(fast_subset([c for c in VALUE_CASES if c[2] in UNREADABLE], keep=FAST_VALUES)), ids=_id)
def test_unreadable_value_is_refused_naming_the_flag_and_its_range(command, flag, value, files, tmp_path):
    d = str(tmp_path)
    argv = command_line(command, flag, value, d, files)
    t0 = time.process_time()
    rc, out, err = run_inprocess(argv, seconds=30)
    check_refusal(rc, out, err, ALIASES.get((command, flag), (flag,)), set(), listing(d))
    assert time.process_time() - t0 < 5


EXTREME_CASES = [c for c in VALUE_CASES if c[2] in EXTREME]
FAST_EXTREME = [
    c for c in EXTREME_CASES if (c[0] in NEW or c[:2] in NEW_FLAGS or c[:2] in KNOWN) and c != ("calibrate-dpsgd", "--sampling-rate", "1e-400")
]


@pytest.mark.parametrize("command,flag,value", known(fast_subset(EXTREME_CASES, keep=FAST_EXTREME)), ids=_id)
def test_extreme_value_ends_in_a_result_or_a_refusal_naming_the_flag(command, flag, value, files, tmp_path):
    """-0, 1e400, 1e-400, a 10,000-digit integer: a result, a refusal (exit 2, one line naming a parameter) or exit 6;
    never a traceback, an "undecided" (exit 3), a long run, or a file left by a failed run."""
    d = str(tmp_path)
    argv = command_line(command, flag, value, d, files)
    t0 = time.process_time()
    rc, out, err = run_inprocess(argv, seconds=60)
    assert "Traceback" not in out + err and rc in (0, 2, 6), (rc, err[-500:])
    if rc == 2:
        check_refusal(rc, out, err, ALIASES.get((command, flag), (flag,)) + ("--", "EVENT.json"), set(), listing(d), range_words=None)
        assert "inputs:" not in err, err  # a refusal names the flag that asks for it
    assert time.process_time() - t0 < 20


@pytest.mark.parametrize("command,flag,value", known(fast_subset(WORD_CASES, keep=FAST_WORDS)), ids=_id)
def test_word_outside_its_closed_set_is_refused(command, flag, value, files, tmp_path):
    d = str(tmp_path)
    rc, out, err = run_inprocess(command_line(command, flag, value, d, files), seconds=30)
    check_refusal(rc, out, err, (flag,), set(), listing(d), range_words=None)


def test_account_pld_is_refused_or_runs(files, tmp_path):
    """--accountant pld: "not yet" (exit 2, naming --accountant) until the PLD event accountant lands, then a result."""
    rc, out, err = run_inprocess(["account", files["EVENT"], "--delta", "1e-6", "--accountant", "pld"], seconds=60)
    if rc == 2 and "not yet" in err:
        check_refusal(rc, out, err, ("--accountant",), set(), set(), range_words=None)
    else:
        assert rc == 0 and "Traceback" not in err, err


CHOICE_CASES = [(c, f, v) for c, flags in FLAGS.items() for f, kind in flags.items() if kind == CHOICE for v in ("", "nan", "\udcff", "x" * 10_000)]
SWITCH_CASES = [(c, f) for c, flags in FLAGS.items() for f, kind in flags.items() if kind == SWITCH]


@pytest.mark.parametrize("command,flag,value", fast_subset(CHOICE_CASES, keep=[c for c in CHOICE_CASES if c[2] == "\udcff"]), ids=_id)
def test_choice_outside_its_set_is_refused_with_the_choices(command, flag, value, files, tmp_path):
    d = str(tmp_path)
    rc, out, err = run_inprocess(command_line(command, flag, value, d, files), seconds=30)
    check_refusal(rc, out, err, (flag,), set(), listing(d), range_words=("choose from",))


@pytest.mark.parametrize("command,flag", fast_subset(SWITCH_CASES, keep=[c for c in SWITCH_CASES if c[0] in NEW]), ids=_id)
def test_switch_given_a_value_is_refused(command, flag, files, tmp_path):
    d = str(tmp_path)
    argv = [a.replace("{D}", d) for a in VARIANTS.get((command, flag), BASES[command])]
    argv = [files.get(a[1:-1], a) if a.startswith("{") else a for a in argv] + [f"{flag}=nan"]
    rc, out, err = run_inprocess(argv, seconds=30)
    check_refusal(rc, out, err, (flag,), set(), listing(d), range_words=None)


DIR_ARGS = [(c, f) for c, flags in FLAGS.items() for f, kind in flags.items() if kind == DIRECTORY]


KNOWN_DIRS: dict[tuple[str, str], str] = {}


DIR_SPECIALS = ["regular-file", "fifo", "/dev/null", "dev-null-link", "under-a-file"]
DIR_CASES = [(c, f, k) for c, f in DIR_ARGS for k in DIR_SPECIALS]


@pytest.mark.parametrize(
    "command,flag,special", fast_subset(DIR_CASES, keep=[c for c in DIR_CASES if c[2] == "fifo" and c[:2] not in KNOWN_DIRS]), ids=_id
)
def test_folder_option_that_is_not_a_folder_is_refused_before_any_work(command, flag, special, files, tmp_path, request):
    if (command, flag) in KNOWN_DIRS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_DIRS[(command, flag)]))
    d = str(tmp_path)
    path = {"regular-file": f"{d}/file", "fifo": f"{d}/fifo", "dev-null-link": f"{d}/link", "under-a-file": f"{d}/file/sub"}.get(special, special)
    if special in ("regular-file", "under-a-file"):
        open(f"{d}/file", "w").close()
    elif special == "fifo":
        os.mkfifo(path)
    elif special == "dev-null-link":
        os.symlink("/dev/null", path)
    before = listing(d)
    t0 = time.process_time()
    rc, out, err = run_inprocess(command_line(command, flag, path, d, files), seconds=30)
    assert time.process_time() - t0 < 1.5, "refused after the work"
    check_refusal(rc, out, err, (flag,), before, listing(d), range_words=None)


# ------------------------------------------------------------------------------------------------ files
def _deep(n: int = 100_000) -> bytes:
    return b"[" * n + b"]" * n


#: hostile file kinds (None: a special file made by :func:`make_file`); the contents are what a reader must refuse
FILE_KINDS = {
    "directory": None,
    "dev-zero": None,  # the device itself
    "fifo": None,
    "dev-zero-link": None,
    "deep": _deep(),
    "deep-object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "not-utf8": b'{"class_name": "\xff\xfe"}\n',
    "encoded-surrogate": b'{"class_name": "\xed\xa0\x80"}\n',
    "surrogate-escape": b'{"class_name": "GaussianDpEvent", "noise_multiplier": "\\ud800"}\n',
    "duplicate-key": b'{"class_name": "GaussianDpEvent", "noise_multiplier": "2", "noise_multiplier": "9"}\n',
    "empty": b"",
}


def make_file(kind: str, path: str) -> str:
    """Make the hostile file ``kind`` at ``path``; the path to give the command (/dev/zero for the device itself)."""
    if kind == "dev-zero":
        return "/dev/zero"
    if kind == "directory":
        os.mkdir(path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero-link":
        os.symlink("/dev/zero", path)
    else:
        with open(path, "wb") as fh:
            fh.write(FILE_KINDS[kind])
    return path


#: the file arguments test_hostile_files.py drives already (verify FILE, audit CLAIM, --schedule, --opacus-history, sweep)
COVERED_ELSEWHERE = {("verify", "file"), ("audit", "claim"), ("dpsgd", "--schedule"), ("dpsgd", "--opacus-history"), ("sweep", "queries")}
FILE_ARGS = [(c, f) for c, flags in FLAGS.items() for f, kind in flags.items() if kind == IN_FILE]
FILE_CASES = [(c, f, k) for c, f in FILE_ARGS if (c, f) not in COVERED_ELSEWHERE for k in FILE_KINDS] + [
    ("verify", "file", k) for k in FILE_KINDS if k not in ("surrogate-escape", "duplicate-key")
]
VERIFY_KERNEL = ["verify", "--kernel"]


@pytest.mark.parametrize(
    "command,flag,kind", fast_subset(FILE_CASES, keep=[c for c in FILE_CASES if c[0] != "verify" or c[2] in ("fifo", "deep")]), ids=_id
)
def test_hostile_input_file(command, flag, kind, files, tmp_path):
    """Every file argument as a directory, a FIFO without a writer, a link to /dev/zero, 100,000-deep JSON, bytes that
    are not UTF-8, a lone surrogate, a repeated key, an empty file: exit 2, one line naming it, within the limit."""
    d = str(tmp_path)
    path = make_file(kind, os.path.join(d, "input.json"))
    argv = command_line(command, flag, path, d, files)
    if command == "verify":
        argv = VERIFY_KERNEL + argv[1:]  # the new --kernel path reads the same file
    before = listing(d)
    t0 = time.monotonic()
    rc, out, err = run_inprocess(argv, seconds=20)
    assert time.monotonic() - t0 < 20
    check_refusal(rc, out, err, names_of(command, flag), before, listing(d), range_words=None)


#: events that a reader must refuse (or certify) without a traceback: (name, event JSON, what the line must say)
EVENTS = [
    ("events-null", {"class_name": "ComposedDpEvent", "events": None}, "must be a list"),
    ("field-missing", {"class_name": "GaussianDpEvent"}, "lacks the field"),
    ("field-__class__", {"class_name": "GaussianDpEvent", "noise_multiplier": "2", "__class__": "x"}, "__class__"),
    ("class-__class__", {"class_name": "__class__"}, "unknown event class"),
    ("class-not-text", {"class_name": 7}, "class_name"),
    ("count-1e30", {"class_name": "SelfComposedDpEvent", "count": 10**30, "event": EVENT["event"]}, "more than 10^18"),
    ("count-float-1e30", {"class_name": "SelfComposedDpEvent", "count": 1e30, "event": EVENT["event"]}, "more than 10^18"),
    ("count-negative", {"class_name": "SelfComposedDpEvent", "count": -1, "event": EVENT["event"]}, "non-negative integer"),
    ("count-fraction", {"class_name": "SelfComposedDpEvent", "count": "1/2", "event": EVENT["event"]}, "non-negative integer"),
    ("noise-1e400-float", {"class_name": "GaussianDpEvent", "noise_multiplier": 1e400}, "NaN and infinities"),
    ("noise-1e400", {"class_name": "GaussianDpEvent", "noise_multiplier": "1e400"}, "must be in"),
    ("noise-1/0", {"class_name": "GaussianDpEvent", "noise_multiplier": "1/0"}, "noise_multiplier"),
    ("noise-list", {"class_name": "GaussianDpEvent", "noise_multiplier": [[["2"]]]}, "expected a number"),
    ("noise-bool", {"class_name": "GaussianDpEvent", "noise_multiplier": True}, "boolean"),
    ("no-mechanism", {"class_name": "ComposedDpEvent", "events": [{"class_name": "NoOpDpEvent"}]}, "no mechanism"),
    ("a-list", [], "expected an event"),
    ("null", None, "expected an event"),
    ("deep-101", json.loads('{"class_name": "SelfComposedDpEvent", "count": 1, "event": ' * 30 + json.dumps(EVENT) + "}" * 30), None),
    ("tiny-laplace", {"class_name": "LaplaceDpEvent", "noise_multiplier": "1e-400"}, None),
    (
        "tiny-poisson",
        {
            "class_name": "PoissonSampledDpEvent",
            "sampling_probability": "1e-400",
            "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1e-400"},
        },
        None,
    ),
    (
        "huge-bound",
        {
            "class_name": "PoissonSampledDpEvent",
            "sampling_probability": "1/100",
            "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "1e-400"},
        },
        "EVENT.json",
    ),
]
KNOWN_EVENTS: dict[str, str] = {}


@pytest.mark.parametrize(
    "name,event,want",
    EVENTS,
    ids=[e[0] for e in EVENTS],
)
@pytest.mark.parametrize("command", ["account", pytest.param("calibrate-event", marks=pytest.mark.slow)])
def test_hostile_event(command, name, event, want, tmp_path, request):
    """An event file that is valid JSON but not a valid ledger: exit 2 naming the event's path (or a result), one line."""
    if command == "account" and name in KNOWN_EVENTS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_EVENTS[name]))
    d = str(tmp_path)
    path = os.path.join(d, "e.json")
    if command == "calibrate-event":  # the family's placeholder where the event has a noise multiplier
        event = json.loads(json.dumps(event).replace('"noise_multiplier": "2"', '"noise_multiplier": "$noise"'))
    with open(path, "w") as fh:
        json.dump(event, fh)
    argv = ["account", path, "--delta", "1e-6"] if command == "account" else ["calibrate-event", path, "--epsilon", "1", "--delta", "1e-5"]
    before = listing(d)
    rc, out, err = run_inprocess(argv + ["--out", os.path.join(d, "c.json")], seconds=30)
    assert "Traceback" not in err
    if rc == 0:  # a result (an extreme but certifiable ledger): nothing on stderr but progress lines
        assert not [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("certify ")], err
        return
    line = check_refusal(rc, out, err, ("event", "EVENT.json"), before, listing(d), range_words=None)
    if want and command == "account":
        assert want in line, line


def test_a_tiny_gaussian_noise_prints_no_warning(tmp_path):
    """In a subprocess: pytest would catch the warning in-process."""
    path = tmp_path / "e.json"
    path.write_text('{"class_name": "GaussianDpEvent", "noise_multiplier": "1e-400"}')
    r, _ = run_limited([sys.executable, "-m", "certify", "account", str(path), "--epsilon", "1"], timeout=60)
    assert r is not None and r.returncode in (0, 2) and "Traceback" not in r.stderr, r and r.stderr
    assert len(r.stderr.strip().splitlines()) <= 1 and "Warning" not in r.stderr, r.stderr


def test_cyclic_and_shared_events_are_refused_or_walked_once():
    """A ledger built in Python may contain itself (a cycle) or share one sub-event many times (a DAG of 10^30 leaves):
    the cycle is refused naming the nesting limit, the DAG walked once per distinct object."""
    from certify.balls import InputError
    from certify.events.ledger import ledger_of, parse_relation

    relation = parse_relation("add-remove", "--neighboring")
    cyclic = {"class_name": "ComposedDpEvent", "events": []}
    cyclic["events"].append(cyclic)
    with pytest.raises(InputError, match="nested more than 100 levels"):
        ledger_of(cyclic, relation)
    loop = {"class_name": "SelfComposedDpEvent", "count": 2, "event": None}
    loop["event"] = loop
    with pytest.raises(InputError, match="nested more than 100 levels"):
        ledger_of(loop, relation)
    shared = EVENT
    for _ in range(60):  # 2^60 * 10 Gaussian steps in 61 objects
        shared = {"class_name": "ComposedDpEvent", "events": [shared, shared]}
    t0 = time.process_time()
    with pytest.raises(InputError, match="more than 10\\^18"):
        ledger_of(shared, relation)
    assert time.process_time() - t0 < 1


# ------------------------------------------------------------------------------------------------ outputs
OUT_ARGS = [(c, f) for c, flags in FLAGS.items() for f, kind in flags.items() if kind == OUT_FILE]
SPECIALS = ["/dev/null", "fifo", "directory", "dev-null-link", ""]


OUT_CASES = [(c, f, k) for c, f in OUT_ARGS for k in SPECIALS]


@pytest.mark.parametrize(
    "command,flag,special",
    fast_subset(OUT_CASES, keep=[c for c in OUT_CASES if c[0] in NEW or c[:2] == ("plot", "--out") or c[2] == "fifo"]),
    ids=_id,
)
def test_special_output_is_refused_before_any_work(command, flag, special, files, tmp_path):
    """Every output file option as /dev/null, a FIFO, a folder, a link to a device, '': refused before any work (under
    1 CPU s), naming the option; the special file is still what it was."""
    d = str(tmp_path)
    path = {"fifo": f"{d}/fifo", "directory": f"{d}/directory", "dev-null-link": f"{d}/link"}.get(special, special)
    if special == "fifo":
        os.mkfifo(path)
    elif special == "directory":
        os.mkdir(path)
    elif special == "dev-null-link":
        os.symlink("/dev/null", path)
    mode = os.stat(path).st_mode if path else None
    argv = command_line(command, flag, path, d, files)
    before = listing(d)
    t0 = time.process_time()
    rc, out, err = run_inprocess(argv, seconds=20)
    assert time.process_time() - t0 < 1.5, "refused after the work"
    check_refusal(rc, out, err, (flag,), before, listing(d), range_words=None)
    if path:
        assert os.stat(path).st_mode == mode


# ------------------------------------------------------------------------------------------------ floats
def _certificate_with_a_float(files, d) -> str:
    with open(files["CERT"]) as fh:
        text = fh.read()
    assert '"phase[0].noise_multiplier": "11/10"' in text
    path = os.path.join(d, "float.json")
    with open(path, "w") as fh:
        fh.write(text.replace('"phase[0].noise_multiplier": "11/10"', '"phase[0].noise_multiplier": 1.1'))
    return path


@pytest.mark.parametrize(
    "argv,names",
    [
        (["verify", "{F}"], ("certificate",)),
        (["verify", "--kernel", "{F}"], ("certificate",)),
        (["report", "{F}", "--out", "{D}/r.html"], ("certificate",)),
        (["plot", "--run", "{F}", "--out", "{D}/r.png"], ("--run",)),
    ],
    ids=["verify", "verify-kernel", "report", "plot-run"],
)
def test_a_float_in_a_certificate_is_refused(argv, names, files, tmp_path):
    """A certificate holds exact text: a JSON float where an exact number is required is refused, naming the file."""
    d = str(tmp_path)
    path = _certificate_with_a_float(files, d)
    before = listing(d)
    rc, out, err = run_inprocess([a.replace("{F}", path).replace("{D}", d) for a in argv], seconds=20)
    line = check_refusal(rc, out, err, names, before, listing(d), range_words=None)
    assert "float" in line


def test_a_float_in_a_schedule_or_claim_is_its_decimal_text(tmp_path):
    """A person's schedule or claim may write 0.01 as a JSON number: it is read as the decimal text written (1/100),
    never as the binary float 0.01000000000000000020816681711721685...; recorded so in the certificate."""
    schedule = tmp_path / "s.json"
    schedule.write_text('[{"sampling_rate": 0.01, "noise_multiplier": 1.1, "steps": 10}]')
    out_path = tmp_path / "cert.json"
    rc, out, err = run_inprocess(
        ["dpsgd", "--schedule", str(schedule), "--delta", "1e-5", "--sampling", "poisson", "--out", str(out_path)], seconds=30
    )
    assert rc == 0, err
    inputs = json.loads(out_path.read_text())["inputs"]
    assert inputs["phase[0].sampling_rate"] == "1/100" and inputs["phase[0].noise_multiplier"] == "11/10", inputs
    with open(CLAIM) as fh:
        claim = json.load(fh)
    claim["epsilon"] = 1.19
    (tmp_path / "c.json").write_text(json.dumps(claim))
    rc, out, err = run_inprocess(["audit", str(tmp_path / "c.json"), "--no-pld", "--no-floats", "--json"], seconds=60)
    assert rc in (0, 7) and "Traceback" not in err, err
    assert '"epsilon": "119/100"' in out


# ------------------------------------------------------------------------------------------------ python -m certify_kernel
TWO_GIB = 2 << 30


def limit_memory():
    """preexec_fn of the subprocess cases: address space at most 2 GiB (a huge allocation fails instead of swapping)."""
    resource.setrlimit(resource.RLIMIT_AS, (TWO_GIB, TWO_GIB))


def run_limited(argv: list[str], timeout: float = 30, cwd: str = ROOT) -> tuple[subprocess.CompletedProcess | None, float]:
    """``argv`` in a subprocess under RLIMIT_AS = 2 GiB; (the completed process or None on a timeout, wall seconds)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.monotonic()
    try:
        r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, preexec_fn=limit_memory, env=env)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - t0
    return r, time.monotonic() - t0


KERNEL_KINDS = [k for k in FILE_KINDS if k != "surrogate-escape"] + ["float", "missing"]
KNOWN_KERNEL: dict[str, str] = {}


@pytest.mark.parametrize("kind", fast_subset(KERNEL_KINDS, keep=["dev-zero-link", "deep", "float"]))
def test_kernel_entry_point_refuses_hostile_files(kind, files, tmp_path, request):
    """``python -m certify_kernel FILE``: exit 2 (or 4) with one line, within 10 s and 2 GiB, for every hostile file."""
    path = str(tmp_path / "input.json")
    if kind == "float":
        path = _certificate_with_a_float(files, str(tmp_path))
    elif kind != "missing":
        path = make_file(kind, path)
    if kind in KNOWN_KERNEL:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_KERNEL[kind]))
    r, seconds = run_limited([sys.executable, "-m", "certify_kernel", path], timeout=10)
    assert r is not None, f"python -m certify_kernel ran past 10 s on a {kind}"
    assert r.returncode in (2, 4), (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "MemoryError" not in r.stderr, r.stderr[-800:]
    assert len((r.stdout + r.stderr).strip().splitlines()) == 1, (r.stdout, r.stderr)


# ------------------------------------------------------------------------------------------------ the full corpus (slow)
def _worker(command: str, d: str) -> None:
    """Every numeric flag of ``command`` against every hostile value, in this process (run by :func:`test_full_corpus`
    under RLIMIT_AS); one JSON line per case, then {"end": true} (a crash or a kill shows as a missing end)."""
    files = _files(d)
    for flag, kind in FLAGS[command].items():
        if kind not in (NUMBER, INTEGER):
            continue
        for value in UNREADABLE + EXTREME:
            if value in KNOWN.get((command, flag), ((), ""))[0]:
                continue  # a strict xfail of the fast tests
            case = os.path.join(d, "case")
            os.makedirs(case)
            argv = command_line(command, flag, value, case, files)
            problem = None
            t0 = time.process_time()
            try:
                rc, out, err = run_inprocess(argv, seconds=30)
                lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(("certify", "bok"))]  # progress lines aside
                errors = [ln for ln in err.splitlines() if ln.startswith("certify: error") or ln.startswith("certify: undecided")]
                if "Traceback" in out + err or lines:
                    problem = f"stray stderr: {err[-300:]}"
                elif value in UNREADABLE:
                    try:
                        check_refusal(rc, out, err, ALIASES.get((command, flag), (flag,)), set(), set(os.listdir(case)))
                    except AssertionError as e:
                        problem = f"exit {rc}: {str(e)[:300]}"
                elif rc not in (0, 2, 6):
                    problem = f"exit {rc}: {err[-300:]}"
                elif rc == 2 and (len(errors) != 1 or "--" not in errors[0] and "EVENT" not in errors[0]):
                    problem = f"refusal without one line naming a parameter: {err[-300:]}"
                elif rc != 0 and os.listdir(case):
                    problem = f"left {os.listdir(case)}"
            except BaseException as e:  # a traceback, the time limit, a MemoryError
                problem = f"{type(e).__name__}: {str(e)[:300]}"
            seconds = time.process_time() - t0
            if problem is None and seconds > 20:
                problem = f"{seconds:.0f} CPU s"
            print(json.dumps({"flag": flag, "value": _id(value), "problem": problem}), flush=True)
            subprocess.run(["rm", "-rf", case], check=True)
    print(json.dumps({"end": True}), flush=True)


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in FLAGS if any(k in (NUMBER, INTEGER) for k in FLAGS[c].values())])
def test_full_corpus(command, tmp_path):
    """Every numeric flag x every hostile value (the extremes included), in one subprocess per command under
    RLIMIT_AS = 2 GiB: exit 0/2/6, one line naming the parameter, no traceback, no file left, under 20 CPU s each."""
    r, _ = run_limited([sys.executable, os.path.abspath(__file__), "worker", command, str(tmp_path)], timeout=3000)
    assert r is not None, "the corpus worker ran past 3000 s"
    lines = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert r.returncode == 0 and lines and lines[-1] == {"end": True}, (r.returncode, lines[-1:], r.stderr[-1500:])
    bad = [c for c in lines[:-1] if c["problem"]]
    assert not bad, bad[:8]


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "worker":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    _worker(sys.argv[2], sys.argv[3])


def test_calibrate_event_refuses_an_over_budget_family_before_any_work(tmp_path):
    family = {
        "class_name": "ComposedDpEvent",
        "events": [
            {
                "class_name": "SelfComposedDpEvent",
                "count": 100,
                "event": {
                    "class_name": "PoissonSampledDpEvent",
                    "sampling_probability": f"{k}/1000",
                    "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "$noise"},
                },
            }
            for k in range(1, 201)
        ],
    }
    path = tmp_path / "family.json"
    path.write_text(json.dumps(family))
    t0 = time.process_time()
    rc, out, err = run_inprocess(["calibrate-event", str(path), "--epsilon", "1", "--delta", "1e-5"], seconds=120)
    assert rc == 2 and "limit 30 s" in err, err
    assert time.process_time() - t0 < 2, f"refused after {time.process_time() - t0:.1f} CPU s of work"
