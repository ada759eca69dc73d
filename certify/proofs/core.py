"""Proof obligations: the catalogue's data model, the runner, and the Markdown report.

An :class:`Obligation` is one displayed identity, inequality or numeric claim of a paper, with its
location ("Lemma C.5, (36)"), the statement in words, and a ``check`` function. A check takes the
paper's claimed expressions as keyword arguments with the paper's values as defaults, so that the
tests can feed a deliberately perturbed claim (a wrong coefficient, a flipped sign) through the very
same machinery and watch it be rejected.

A check returns an :class:`Outcome`:

* ``proved``: sympy reduced the difference to exactly 0 or proved the sign, or ball arithmetic
  decided the inequality on every piece of the stated domain;
* ``false``: disproved, with a counterexample (a point where a ball excludes the claim) or the
  corrected statement;
* ``undecided``: neither; never counted as proved.

:func:`run` times each check and returns :class:`Result` rows; :func:`report_markdown` renders them.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import Callable

from .. import signals
from ..records import ProofVerdict

PROVED, FALSE, UNDECIDED = ProofVerdict.PROVED, ProofVerdict.FALSE, ProofVerdict.UNDECIDED
VERDICTS = tuple(ProofVerdict)


@dataclass
class Outcome:
    """Verdict of one check: ``verdict`` in VERDICTS, the ``method`` that decided it, details."""

    verdict: ProofVerdict
    method: str
    detail: str = ""

    def __post_init__(self):
        self.verdict = ProofVerdict(self.verdict)   # ValueError for an unknown verdict


@dataclass
class Obligation:
    """One proof obligation of a paper's hand calculations."""

    id: str
    paper: str
    location: str
    statement: str
    check: Callable[..., Outcome]

    def run(self, **claimed) -> Outcome:
        """Run the check (with optional perturbed claims); an exception is an undecided outcome."""
        try:
            out = self.check(**claimed)
        except Exception as err:  # a crash never counts as a proof
            signals.raise_if_arrived()  # a signal turned into an exception is the user's interruption
            tb = traceback.format_exception_only(type(err), err)[-1].strip()
            return Outcome(UNDECIDED, "error", f"the check raised {tb}")
        if not isinstance(out, Outcome):
            return Outcome(UNDECIDED, "error", f"the check returned {out!r}")
        return out


@dataclass
class Result:
    obligation: Obligation
    outcome: Outcome
    seconds: float


#: paper key -> list of obligations, in the order of the paper
CATALOGUE: dict[str, list[Obligation]] = {}


#: paper key -> remarks printed under the paper's table (scope, what is not checkable, findings)
PAPER_NOTES: dict[str, list[str]] = {}


def note(paper: str, text: str) -> None:
    """Attach a remark (scope, a gap, a finding) to a paper's section of the report."""
    PAPER_NOTES.setdefault(paper, []).append(text)


def obligation(paper: str, id: str, location: str, statement: str):
    """Decorator: register ``check`` as an obligation of ``paper``."""
    def wrap(check: Callable[..., Outcome]) -> Obligation:
        ob = Obligation(id, paper, location, statement, check)
        CATALOGUE.setdefault(paper, []).append(ob)
        return ob
    return wrap


def combine(parts: list[tuple[str, Outcome]]) -> Outcome:
    """Conjunction of sub-checks: proved only if every part is proved; false if any part is false.

    The method lists each part's method; the detail names each part's verdict (false parts first).
    """
    verdicts = [o.verdict for _, o in parts]
    if FALSE in verdicts:
        verdict = FALSE
    elif UNDECIDED in verdicts:
        verdict = UNDECIDED
    else:
        verdict = PROVED
    methods = []
    for _, o in parts:
        for m in o.method.split("; "):
            if m and m not in methods:
                methods.append(m)
    ordered = sorted(parts, key=lambda p: {FALSE: 0, UNDECIDED: 1, PROVED: 2}[p[1].verdict])
    detail = "; ".join(f"{name}: {o.verdict}" + (f" ({o.detail})" if o.detail and (
        o.verdict != PROVED or o.method.startswith("balls")) else "") for name, o in ordered)
    return Outcome(verdict, "; ".join(methods), detail)


def run(papers: list[str] | None = None) -> list[Result]:
    """Run every obligation of ``papers`` (default: all) and time each."""
    from . import load_all
    load_all()
    results = []
    for paper in (papers or list(CATALOGUE)):
        for ob in CATALOGUE.get(paper, []):
            t0 = time.perf_counter()
            out = ob.run()
            results.append(Result(ob, out, time.perf_counter() - t0))
    return results


def summary_counts(results: list[Result]) -> dict[str, int]:
    counts = {v: 0 for v in VERDICTS}
    for r in results:
        counts[r.outcome.verdict] += 1
    return counts


def table_text(results: list[Result]) -> str:
    """Plain-text table: obligation, location, method, verdict, time."""
    rows = [("obligation", "location", "method", "verdict", "time")]
    for r in results:
        method = r.outcome.method if len(r.outcome.method) <= 58 else r.outcome.method[:55] + "..."
        rows.append((r.obligation.id, r.obligation.location, method, r.outcome.verdict.upper()
                     if r.outcome.verdict != PROVED else PROVED, f"{r.seconds:.2f}s"))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    widths[1] = min(widths[1], 34)
    lines = []
    for i, row in enumerate(rows):
        cells = [row[c][:widths[c]].ljust(widths[c]) for c in range(5)]
        lines.append("  ".join(cells).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    bad = [r for r in results if r.outcome.verdict != PROVED]
    if bad:
        lines.append("")
        for r in bad:
            lines.append(f"{r.outcome.verdict.upper()}: {r.obligation.id} ({r.obligation.location}): "
                         f"{r.obligation.statement}\n  {r.outcome.detail}")
    c = summary_counts(results)
    total = sum(r.seconds for r in results)
    lines.append("")
    lines.append(f"{len(results)} obligations: {c[PROVED]} proved, {c[FALSE]} false, {c[UNDECIDED]} undecided "
                 f"({total:.1f}s)")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def report_markdown(results: list[Result], command: str = "certify proofs") -> str:
    """proofs/REPORT.md: one table per paper, then the statement and details of every obligation.

    The report is deterministic (no timings: the terminal table has them), so regenerating it leaves the
    repository clean.
    """
    c = summary_counts(results)
    out = ["# Proof obligations: the papers' hand calculations checked", "",
           f"Generated by `{command}` (do not edit by hand). {len(results)} obligations: "
           f"{c[PROVED]} proved, {c[FALSE]} false, {c[UNDECIDED]} undecided.", "",
           "A verdict *proved* means sympy reduced the difference to exactly 0 (or proved the sign of an "
           "expression) or ball arithmetic (python-flint/Arb) decided the inequality on every piece of the "
           "stated domain. *false* comes with a counterexample or the corrected statement. *undecided* is "
           "never counted as proved.", ""]
    from .. import registry
    titles = {key: title for key, (title, _module) in registry.proof_papers().items()}
    papers = []
    for r in results:
        if r.obligation.paper not in papers:
            papers.append(r.obligation.paper)
    for paper in papers:
        rows = [r for r in results if r.obligation.paper == paper]
        out += [f"## {titles.get(paper, paper)}", "",
                "| obligation | location | method | verdict |", "|---|---|---|---|"]
        for r in rows:
            out.append(f"| {r.obligation.id} | {_md(r.obligation.location)} | {_md(r.outcome.method)} | "
                       f"**{r.outcome.verdict}** |")
        out.append("")
        for text in PAPER_NOTES.get(paper, []):
            out.append(f"> {_md(text)}")
            out.append("")
        for r in rows:
            out.append(f"- **{r.obligation.id}** ({_md(r.obligation.location)}): {_md(r.obligation.statement)}")
            if r.outcome.detail:
                out.append(f"  - {r.outcome.verdict}: {_md(r.outcome.detail)}")
        out.append("")
    return "\n".join(out)
