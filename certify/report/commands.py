"""``certify report CERT.json --out report.html``: re-check a certificate and write its HTML report.

Exit status: verify's (0 verified, 6 verified with a search stopped early, 4 inconsistent, 5 not proved;
the page is written in every one of these cases and says which at the top), or 2 with nothing written for
an unreadable or malformed file or an unwritable ``--out`` (checked before any work).
"""

from __future__ import annotations

from ..certificate import load
from ..verify_command import _read


def register(sub) -> None:
    p = sub.add_parser(
        "report",
        help="write a self-contained HTML report of a certificate (re-checked first)",
        description="Re-check a certificate (as certify verify does) and write one self-contained HTML page for an auditor: "
        "the conclusion in words, the contract and hypotheses, the inputs with their provenance notes, the verdict, the "
        "privacy curves of a Renyi certificate as inline SVG with their certified band, and the command that re-checks it. "
        "A certificate that does not verify gets a page that says so at the top, in red, and no figures. Exit status: "
        "verify's (0, 4, 5, 6), the page written in each case; 2 (nothing written) for a malformed file or an unwritable --out.",
    )
    p.add_argument("file", metavar="CERT", help="certificate JSON written by --out or --json ('-' for stdin)")
    p.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write (checked before any work)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..cli import write_atomically
    from ..verify import verify_document
    from .page import render

    data = _read(args.file)
    doc = load(data)
    rep = verify_document(doc, text=data.decode("utf-8"))  # byte for byte what certify writes (load checked UTF-8)
    write_atomically(args.out, render(doc, args.file, rep))
    state = {0: "verified", 6: "verified (search stopped early)", 4: "NOT VERIFIED (inconsistent)", 5: "NOT VERIFIED (not proved)"}
    print(f"report written to {args.out}: certificate {state.get(rep.exit_code, 'NOT VERIFIED')} (check it with: certify verify {args.file})")
    return rep.exit_code
