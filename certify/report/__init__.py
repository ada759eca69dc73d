"""``certify report CERT.json --out report.html``: one self-contained HTML page for an auditor.

The page is built from the certificate alone, after :func:`certify.verify.verify_document` has re-checked
it: the conclusion first, in words; the accounting contract and the hypotheses the conclusion rests on;
the inputs with their provenance notes; the verdict of the re-check; the certified quantities; for a
Rényi privacy certificate (and the referee's objective perturbation) the certified privacy profile delta(eps),
the epsilon-versus-steps curve (one Rényi phase) and the hypothesis-testing trade-off curve, drawn as
inline SVG with their certified band; and the command that re-checks the certificate. A certificate that
does not verify gets a page that says so at the top, in red, and no figures.

* :mod:`.curves`   the curves in ball arithmetic from the recorded Rényi order and bound (outward band);
* :mod:`.svg`      small inline SVG line charts (no script, no external file);
* :mod:`.page`     the HTML page (every text taken from the certificate is HTML-escaped; print CSS);
* :mod:`.commands` the ``certify report`` command.

Python API::

    from certify.report.page import render
    html_text = render(json.load(open("cert.json")), source="cert.json")
"""

# registry hooks (see certify/registry.py)
KEY = "report"
COMMANDS = {"report": "certify.report.commands"}
