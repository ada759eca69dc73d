"""The documentation cannot rot: every runnable example of ``docs/`` is executed, and the site builds strictly.

The convention (``docs/contributing-docs.md``): Python blocks run in order, one namespace and one fresh
folder per page (``>>>`` blocks as doctests; ``<!-- no-run -->`` before a block skips it); a
``console`` block preceded by ``<!-- run -->`` (``<!-- run: slow -->``, ``<!-- run: exit=N -->``) has
commands on ``$ `` lines, each followed by its expected output (doctest-style: ``...`` matches anything,
white space normalised). ``certify`` in a command is this checkout's ``python -m certify``.
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
#: a command of a runnable block must finish within this (the pages promise < 2 s; headroom for a loaded machine)
COMMAND_TIMEOUT = 60

FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M)
MARK = re.compile(r"<!--\s*(?P<what>run|no-run)(?::\s*(?P<opts>[^>]*?))?\s*-->\s*$")


@dataclass
class Block:
    page: str
    line: int
    lang: str
    body: str
    mark: str | None  # "run", "no-run" or None
    opts: str  # e.g. "slow", "exit=7"

    @property
    def slow(self) -> bool:
        return "slow" in self.opts.split()

    @property
    def exit_code(self) -> int:
        m = re.search(r"exit=(\d+)", self.opts)
        return int(m.group(1)) if m else 0


def pages() -> list[str]:
    out = []
    for folder, _, files in os.walk(DOCS):
        out += [os.path.relpath(os.path.join(folder, f), DOCS) for f in files if f.endswith(".md")]
    return sorted(out)


def blocks(page: str) -> list[Block]:
    text = open(os.path.join(DOCS, page), encoding="utf-8").read()
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mk = MARK.search(before)
        body = "\n".join(line[len(m.group("indent")) :] for line in m.group("body").split("\n"))
        out.append(Block(page, text.count("\n", 0, m.start()) + 1, m.group("lang"), body, mk and mk.group("what"), (mk and mk.group("opts")) or ""))
    return out


def python_blocks(page: str) -> list[Block]:
    return [b for b in blocks(page) if b.lang in ("python", "py", "pycon") and b.mark != "no-run"]


def shell_blocks(page: str) -> list[Block]:
    return [b for b in blocks(page) if b.mark == "run" and b.lang != "python"]


def commands(block: Block) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a runnable console block."""
    out: list[tuple[str, list[str]]] = []
    for line in block.body.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"{block.page}:{block.line}: output before any '$ ' command: {line!r}")
    return [(cmd, "\n".join(want)) for cmd, want in out]


CHECKER = doctest.OutputChecker()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _bin_dir(tmp_path) -> str:
    """A folder holding ``certify``: this checkout's ``python -m certify`` (not another installed copy)."""
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    script = d / "certify"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m certify "$@"\n')
    script.chmod(0o755)
    return str(d)


def run_shell_block(block: Block, cwd, bin_dir: str) -> None:
    env = dict(os.environ, PYTHONPATH=ROOT, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    for cmd, want in commands(block):
        proc = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
        where = f"{block.page}:{block.line}: $ {cmd}"
        assert proc.returncode == block.exit_code, f"{where}\nexit {proc.returncode}\n{proc.stderr[-2000:]}"
        if want.strip():
            assert CHECKER.check_output(want + "\n", proc.stdout, FLAGS), f"{where}\nexpected:\n{want}\ngot:\n{proc.stdout}"


def run_python_block(block: Block, namespace: dict) -> None:
    where = f"{block.page}:{block.line}"
    if block.body.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(block.body, namespace, where, block.page, block.line)
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        runner.run(test, out=lambda s: None)
        assert runner.failures == 0, f"{where}: doctest failed"
        namespace.update(test.globs)
    else:
        exec(compile(block.body, where, "exec"), namespace)


PAGES = pages()
RUNNABLE = [p for p in PAGES if python_blocks(p) or shell_blocks(p)]


def _page_params():
    """A page that runs commands costs more than a CPU second (a process each): slow; Python-only pages are fast."""
    for p in RUNNABLE:
        yield pytest.param(p, marks=[pytest.mark.slow] if shell_blocks(p) else [], id=p)


@pytest.mark.parametrize("page", list(_page_params()))
def test_examples_of_a_page_run(page, tmp_path, monkeypatch, request):
    """Shell and Python blocks in page order, in one folder: a Python block may read what a command wrote."""
    if request.node.get_closest_marker("slow") is None and any(b.slow for b in shell_blocks(page)):
        pytest.fail("a page with a slow block must be marked slow")
    monkeypatch.chdir(tmp_path)
    for name in ("examples", "tables"):  # read by the examples (tables: --check only, never rewritten)
        os.symlink(os.path.join(ROOT, name), tmp_path / name)
    bin_dir = _bin_dir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for block in blocks(page):
        if block in shell_blocks(page):
            run_shell_block(block, tmp_path, bin_dir)
        elif block in python_blocks(page):
            run_python_block(block, namespace)


def test_the_guide_has_runnable_examples():
    """Every page of the user guide (and getting started) runs at least one example."""
    guide = [p for p in PAGES if p.startswith("guide/")] + ["getting-started.md"]
    assert len(guide) >= 7
    assert [p for p in guide if p not in RUNNABLE] == []


def test_the_checker_can_fail(tmp_path):
    """A wrong expected output, a wrong exit status and a failing Python block are caught."""
    bin_dir = _bin_dir(tmp_path)
    wrong = Block("x.md", 1, "console", "$ echo 1.72523\n2.0\n", "run", "")
    with pytest.raises(AssertionError, match="expected"):
        run_shell_block(wrong, tmp_path, bin_dir)
    with pytest.raises(AssertionError, match="exit 3"):
        run_shell_block(Block("x.md", 1, "console", "$ exit 3\n", "run", ""), tmp_path, bin_dir)
    run_shell_block(Block("x.md", 1, "console", "$ echo 'a  b'\na ...\n", "run", ""), tmp_path, bin_dir)
    with pytest.raises(AssertionError):
        run_python_block(Block("x.md", 1, "python", "assert 1 == 2\n", None, ""), {})
    with pytest.raises(AssertionError, match="doctest failed"):
        run_python_block(Block("x.md", 1, "python", ">>> 1 + 1\n3\n", None, ""), {})


def test_the_markers_parse():
    text = "<!-- run: slow exit=7 -->\n```console\n$ certify x\nout\n```\n"
    m = FENCE.search(text)
    assert m and MARK.search(text[: m.start()].rstrip("\n"))
    b = Block("x.md", 1, "console", "$ a\nA\n...\n$ b\n", "run", "slow exit=7")
    assert b.slow and b.exit_code == 7 and commands(b) == [("a", "A\n..."), ("b", "")]


# ------------------------------------------------------------------------------------------------
# the site, built strictly
# ------------------------------------------------------------------------------------------------
def _mkdocs():
    try:
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError:
        pytest.skip("mkdocs / mkdocstrings not installed: pip install '.[docs]' (CI installs it)")


def _build(root, site) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", os.path.join(root, "mkdocs.yml"), "-d", str(site)],
        cwd=root,
        env=dict(os.environ, PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_site_builds_strictly(tmp_path):
    _mkdocs()
    proc = _build(ROOT, tmp_path / "site")
    assert proc.returncode == 0, proc.stderr[-3000:]
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    assert "dpsgd_epsilon" in api and "verify_document" in api  # generated from the docstrings
    for page in ("guide/report", "guide/dpsgd", "events", "kernel", "reference/exit-statuses", "reference/ranges"):
        assert (tmp_path / "site" / page / "index.html").exists(), page


@pytest.mark.slow
def test_strict_build_fails_on_a_broken_link(tmp_path):
    _mkdocs()
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copytree(DOCS, root / "docs")
    shutil.copy(os.path.join(ROOT, "mkdocs.yml"), root / "mkdocs.yml")
    with open(root / "docs" / "index.md", "a") as fh:
        fh.write("\nSee [nowhere](no-such-page.md).\n")
    proc = _build(str(root), tmp_path / "site")
    assert proc.returncode != 0 and "no-such-page.md" in proc.stderr
