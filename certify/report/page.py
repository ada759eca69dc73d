"""The HTML page of ``certify report``: one self-contained file, readable on screen and on paper.

Order of the page: the verdict of re-checking the certificate (red, with no figures, when it does not
verify), the conclusion in words, the accounting contract and the hypotheses, the inputs with their
provenance notes, the figures (Rényi privacy certificates), the certified quantities, every claim, the
command that re-checks the certificate, and the software that wrote it. Every text taken from the
certificate is HTML-escaped; the page holds no script and refers to no other file.
"""

from __future__ import annotations

import json
from html import escape

from ..balls import exact_str, fmpq, lower_decimal, upper_decimal
from ..exits import EXIT_INCONSISTENT, EXIT_NOT_PROVED, EXIT_OK, EXIT_STOPPED_EARLY
from ..provenance import NOTE_SUFFIX
from ..verify import Report, verify_document
from . import curves, svg

#: inputs that state the DP-SGD accounting contract (certify/contract.py)
CONTRACT_FIELDS = ("sampling", "adjacency", "sensitivity", "noise_multiplier_relative_to", "privacy_unit", "source")
#: at most this many characters of the witnesses are shown (a branch-and-bound witness can be long)
WITNESS_CHARS = 4000

VERDICTS = {
    EXIT_OK: ("verified", "VERIFIED: the certificate is consistent and every conclusion holds."),
    EXIT_STOPPED_EARLY: (
        "verified",
        "VERIFIED, but a search stopped early at its budget: every conclusion holds (the bound is valid, looser than its tolerance).",
    ),
    EXIT_INCONSISTENT: (
        "rejected",
        "NOT VERIFIED: the certificate is inconsistent (what it records disagrees with the recomputation). Nothing in it is proved.",
    ),
    EXIT_NOT_PROVED: (
        "rejected",
        "NOT VERIFIED: the certificate is consistent but a conclusion (or a hypothesis it rests on) does not hold. Nothing in it is proved.",
    ),
}

CSS = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem;
       color: #111; line-height: 1.45; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; } h2 { font-size: 1.15rem; border-bottom: 1px solid #ccc; margin-top: 1.6rem; }
.kind { color: #555; margin-top: 0; }
.banner { padding: .7rem 1rem; border-radius: 4px; font-weight: bold; margin: 1rem 0; }
.banner.verified { background: #e6f4ea; border: 2px solid #1e7b34; color: #14532d; }
.banner.rejected { background: #fde8e8; border: 3px solid #c00; color: #c00; font-size: 1.15rem; }
.conclusion { font-size: 1.08rem; margin: .4rem 0; }
.holds { color: #14532d; font-weight: bold; } .fails { color: #c00; font-weight: bold; }
table { border-collapse: collapse; width: 100%; font-size: .88rem; margin: .5rem 0; }
th, td { border: 1px solid #ccc; padding: .25rem .45rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { font-family: "DejaVu Sans Mono", monospace; white-space: nowrap; }
code, pre { font-family: "DejaVu Sans Mono", monospace; font-size: .85rem; }
pre { background: #f6f6f6; padding: .5rem; white-space: pre-wrap; word-break: break-all; }
figure { margin: 1rem 0; page-break-inside: avoid; break-inside: avoid; }
figcaption { font-size: .85rem; color: #333; max-width: 560px; }
.note { color: #555; font-size: .85rem; }
@media print {
  body { max-width: none; margin: 0; font-size: 10pt; }
  .banner, .banner.rejected, .banner.verified { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  h2 { page-break-after: avoid; break-after: avoid; }
  tr, figure, .conclusion, section.fig { page-break-inside: avoid; break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
}
"""


def _e(x) -> str:
    return escape(str(x), quote=True)


def _row(cells, num=()) -> str:
    return "<tr>" + "".join(f'<td class="num">{_e(c)}</td>' if i in num else f"<td>{_e(c)}</td>" for i, c in enumerate(cells)) + "</tr>"


def _table(head, rows, num=()) -> str:
    return "<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>"


def _in_words(doc: dict, rec: curves.PrivacyRecord | None) -> str:
    """A plain-language reading of a DP-SGD (eps, delta) guarantee (empty for other kinds)."""
    inputs = doc.get("inputs", {})
    if "adjacency" not in inputs or "privacy_unit" not in inputs:
        return ""
    eps = None
    if rec is not None:
        eps = upper_decimal(rec.epsilon, 6)
    elif "epsilon_upper" in doc.get("quantities", {}):
        eps = doc["quantities"]["epsilon_upper"]["upper"]
    if eps is None or "delta" not in inputs:
        return ""
    unit = inputs["privacy_unit"]
    change = "adding or removing" if inputs["adjacency"] == "add-remove" else "replacing"
    return (
        f"In words: whatever is done with what the run releases, {change} {unit} of the training data changes the "
        f"probability of any outcome by at most a factor e^{eps} (epsilon <= {eps}), plus an additive delta = {inputs['delta']}, "
        f"provided the run followed the contract below ({inputs.get('sampling', '?')} sampling)."
    )


def _figures(rec: curves.PrivacyRecord) -> str:
    """The figures of a privacy certificate (profile, steps for one Rényi phase, trade-off) and their tables."""
    prof = curves.profile_band(rec)
    out = ['<h2 id="figures">Privacy curves (certified bands)</h2>']
    if rec.curve is None:
        out.append(
            f'<p class="note">All curves hold at the certificate\'s recorded Rényi order alpha = {_e(exact_str(rec.alpha))} '
            "(any order gives a valid guarantee; the best order differs from point to point, so each curve is an upper "
            "bound on the true curve). Each point is evaluated in ball arithmetic at the recorded precision from the "
            "recorded ball of the Rényi bound; the shaded band is that ball rounded outward (often too narrow to see).</p>"
        )
        source = "Balle et al. 2020, Thm 21, inverted at the recorded order"
    else:
        out.append(
            '<p class="note">The profile is that of the dominating privacy loss of Corollary 5.2 (arXiv:2411.13682, the '
            "referee report), evaluated from the recorded inputs in ball arithmetic at the recorded precision; the shaded "
            "band is each ball rounded outward (often too narrow to see).</p>"
        )
        source = "the dominating privacy loss of Corollary 5.2"
    what = "run" if rec.curve is None else "release"
    logs = [(_log10(lo), _log10(hi)) for lo, hi in zip(prof.lo, prof.hi)]
    chart = svg.Chart(
        "Privacy profile delta(epsilon)",
        "epsilon",
        "delta (log scale)",
        [svg.Series([float(x) for x in prof.x], [a for a, _ in logs], [b for _, b in logs], "certified upper bound on delta(eps)")],
        marks=[(float(rec.epsilon), _log10(rec.delta), f"certified ({upper_decimal(rec.epsilon, 4)}, {exact_str(rec.delta)})")],
        log_y=True,
        css_class="figure profile",
    )
    rows = [_row((lower_decimal(prof.x[i], 6),) + curves.decimals(prof, i), num=(0, 1, 2)) for i in range(0, len(prof.x), 6)]
    out.append(
        f'<section class="fig"><figure id="fig-profile">{svg.render(chart)}<figcaption>The {what} is (epsilon, delta(epsilon))-DP for every epsilon, '
        f"with delta(epsilon) at most the upper edge ({source}). The dot is the certified guarantee.</figcaption></figure>"
    )
    out.append(_table(("epsilon", "delta(eps) band: lower", "upper (certified bound)"), rows, num=(0, 1, 2)) + "</section>")
    steps = curves.steps_band(rec)
    if steps is not None:
        chart = svg.Chart(
            "Epsilon after t steps",
            "steps t",
            "epsilon",
            [
                svg.Series(
                    [float(x) for x in steps.x], [float(v) for v in steps.lo], [float(v) for v in steps.hi], "certified upper bound on epsilon(t)"
                )
            ],
            marks=[(float(rec.steps), float(rec.epsilon), f"T = {rec.steps}")],
            css_class="figure steps",
        )
        pick = sorted({0, len(steps.x) // 4, len(steps.x) // 2, 3 * len(steps.x) // 4, len(steps.x) - 1})
        rows = [_row((exact_str(steps.x[i]),) + curves.decimals(steps, i), num=(0, 1, 2)) for i in pick]
        out.append(
            f'<section class="fig"><figure id="fig-steps">{svg.render(chart)}<figcaption>'
            f"Epsilon at delta = {_e(exact_str(rec.delta))} after t of the "
            f"run's {rec.steps} steps: the conversion applied to t times the certified one-step Rényi bound (composition), at the "
            f"recorded order alpha = {_e(exact_str(rec.alpha))} (a smaller t would do better at another order). "
            "A negative value means (0, delta)-DP.</figcaption></figure>"
        )
        out.append(_table(("steps t", "epsilon band: lower", "upper (certified bound)"), rows, num=(0, 1, 2)) + "</section>")
    trade = curves.tradeoff_band(rec)
    chart = svg.Chart(
        "Hypothesis-testing trade-off",
        "type I error (false positive rate)",
        "type II error (false negative rate)",
        [
            svg.Series(
                [float(x) for x in trade.x], [float(v) for v in trade.lo], [float(v) for v in trade.hi], "certified lower bound", "#a8461f", "lo"
            )
        ],
        guides=[(0.0, 1.0, 1.0, 0.0, "perfect privacy: 1 - a")],
        css_class="figure tradeoff",
    )
    rows = [_row((exact_str(trade.x[i]),) + curves.decimals(trade, i), num=(0, 1, 2)) for i in (0, 1, 5, 10, 25, 50)]
    out.append(
        f'<section class="fig"><figure id="fig-tradeoff">{svg.render(chart)}<figcaption>No test that tries to tell whether one example was in the '
        "training data can have its type II error below the curve at its type I error (Kairouz et al. 2015, Thm 2.1, from the "
        "profile above). The dashed line is a coin flip.</figcaption></figure>"
    )
    out.append(_table(("type I error a", "type II bound: lower (certified)", "upper"), rows, num=(0, 1, 2)) + "</section>")
    return "\n".join(out)


def _log10(q: fmpq) -> float:
    """log10 of a nonnegative exact value, for placing it on a drawing (never a bound)."""
    from ..balls import log_float

    return -400.0 if q <= 0 else log_float(q) / 2.302585092994046


def render(doc: dict, source: str = "CERT.json", report: Report | None = None) -> str:
    """The HTML page for a loaded certificate ``doc``; ``report`` is verify's verdict (computed when None)."""
    rep = report if report is not None else verify_document(doc)
    code = rep.exit_code
    cls, verdict = VERDICTS.get(code, ("rejected", f"NOT VERIFIED (exit status {code})."))
    ok = cls == "verified"
    kind = doc.get("kind", "?")
    inputs = doc.get("inputs", {})
    rec = curves.privacy_record(doc) if ok else None
    body = [f'<h1>Certificate report</h1><p class="kind">kind <code>{_e(kind)}</code> &middot; file <code>{_e(source)}</code></p>']
    body.append(f'<div class="banner {cls}" id="verdict">{_e(verdict)}</div>')
    if not ok:
        body.append("<p><b>What the re-check found:</b></p><ul>" + "".join(f"<li>{_e(p)}</li>" for p in rep.problems[:20]) + "</ul>")
        body.append('<p class="note">No figure is drawn for a certificate that does not verify.</p>')

    body.append('<h2 id="conclusion">Conclusion</h2>')
    proved = {s: (h, why) for s, h, why in rep.conclusions}
    for c in doc.get("conclusions", []):
        st = c.get("statement", "")
        holds, why = proved.get(st, (False, "not re-derived"))
        holds = holds and ok
        tag = '<span class="holds">PROVED</span>' if holds else '<span class="fails">NOT PROVED</span>'
        body.append(f'<p class="conclusion">{tag}: {_e(st)}' + (f" <span class='note'>({_e(why)})</span>" if why and not holds else "") + "</p>")
    words = _in_words(doc, rec) if ok else ""
    if words:
        body.append(f'<p id="in-words">{_e(words)}</p>')

    contract = [(k, inputs[k]) for k in CONTRACT_FIELDS if k in inputs]
    claims = {c.get("name"): c for c in doc.get("claims", []) if isinstance(c, dict)}
    hyp_names = [h for c in doc.get("conclusions", []) for h in c.get("hypotheses", [])]
    body.append('<h2 id="contract">Contract and hypotheses</h2>')
    if contract:
        body.append(_table(("contract", "recorded"), [_row((k.replace("_", " "), v)) for k, v in contract]))
    rows = []
    for h in dict.fromkeys(hyp_names):
        c = claims.get(h, {})
        holds = "holds" if c.get("holds") and ok else "recorded as holding (not verified)" if c.get("holds") else "fails"
        rows.append(_row((h, c.get("statement", ""), f"{c.get('lhs', '')} {c.get('relation', '')} {c.get('rhs', '')}", holds)))
    body.append(
        "<p>The conclusion rests on these hypotheses, each decided in ball arithmetic:</p>"
        + _table(("hypothesis", "statement", "exact comparison", "verdict"), rows)
    )

    body.append('<h2 id="inputs">Inputs and their provenance</h2>')
    rows = [
        _row((k, v, inputs.get(k + NOTE_SUFFIX, "exact, as given")), num=(1,))
        for k, v in inputs.items()
        if not k.endswith(NOTE_SUFFIX) and k not in CONTRACT_FIELDS
    ]
    body.append(_table(("input", "exact value", "provenance"), rows, num=(1,)))

    body.append('<h2 id="recheck">Re-checking it</h2>')
    body.append(
        f"<p>This page was made by <code>certify report</code>, which re-checked the certificate first "
        f"(<code>certify.verify.verify_document</code>): exit status {code}; {len(rep.checked)} items re-derived and in agreement"
        f"{'' if ok else f', {len(rep.problems)} problem(s)'}.</p>"
    )
    if rep.notes:
        body.append("<ul>" + "".join(f'<li class="note">{_e(n)}</li>' for n in rep.notes) + "</ul>")
    body.append(f"<p>Re-check it yourself (exit status 0 when every conclusion holds):</p><pre>certify verify {_e(source)}</pre>")

    if rec is not None:
        body.append(_figures(rec))
    elif ok:
        body.append(
            f'<p class="note">No privacy curves for kind <code>{_e(kind)}</code>: the figures need a recorded Rényi order '
            "and bound, or a privacy profile of the recorded inputs.</p>"
        )

    q = doc.get("quantities", {})
    if ok:
        body.append('<h2 id="quantities">Certified quantities</h2>')
        body.append(
            '<p class="note">Each value lies in [lower, upper], rounded outward; where the bound column says "upper", only the '
            "upper endpoint is a statement.</p>"
        )
    else:
        body.append('<h2 id="quantities">Quantities as the file records them (NOT verified)</h2>')
    rows = [
        _row((k, v.get("lower", ""), v.get("upper", ""), v.get("bound", "two-sided"), v.get("equation", ""), v.get("description", "")), num=(1, 2))
        for k, v in q.items()
        if isinstance(v, dict)
    ]
    body.append(_table(("quantity", "lower", "upper", "bound", "equation", "description"), rows, num=(1, 2)))
    rows = [
        _row((c.get("name", ""), c.get("statement", ""), c.get("holds", ""), c.get("equation", "")))
        for c in doc.get("claims", [])
        if isinstance(c, dict) and c.get("name") not in hyp_names
    ]
    if rows:
        heading = "Other claims" if ok else "Other claims as the file records them (NOT verified)"
        body.append(f'<h2 id="claims">{heading}</h2>' + _table(("claim", "statement", "holds (as recorded)", "equation"), rows))
    wit = json.dumps(doc.get("witnesses", {}), sort_keys=True)
    more = f" ... ({len(wit) - WITNESS_CHARS} more characters in the file)" if len(wit) > WITNESS_CHARS else ""
    body.append(f'<h2 id="witnesses">Witnesses (what a search found; re-checked, never re-searched)</h2><pre>{_e(wit[:WITNESS_CHARS] + more)}</pre>')
    budget = doc.get("budget", {})
    if isinstance(budget, dict) and budget:
        body.append("<h2>Where the width went</h2>" + _table(("source", "amount"), [_row((k, v)) for k, v in budget.items()]))
    sw = doc.get("software", {})
    body.append(
        f'<p class="note">Written by {_e(", ".join(f"{k} {v}" for k, v in sw.items()) if isinstance(sw, dict) else sw)} '
        f"(informational, outside the digest); digest <code>{_e(doc.get('digest', ''))}</code>.</p>"
    )
    title = f"certify report: {kind}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
