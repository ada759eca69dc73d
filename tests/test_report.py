"""``certify report``: the HTML page of a certificate, its curves against independent references, and the
page in a real headless browser (Debian's chromium)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from fractions import Fraction
from html.parser import HTMLParser

import mpmath as mp
import pytest
from reference_poisson import log_A_sum

from certify import verify
from certify.balls import fmpq
from certify.cli import main
from certify.contract import POISSON_ADD_REMOVE
from certify.poisson.accountant import certify_poisson
from certify.poisson.schedule import Phase, Schedule
from certify.report import curves
from certify.report.page import render

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT)


# ------------------------------------------------------------------------------------------------
# a Poisson certificate at an integer order, and its independent 60-digit reference
# ------------------------------------------------------------------------------------------------
Q, SIGMA, T, DELTA, ALPHA = "1/100", "11/10", 1000, "1/100000", 8
NOTE = "binary float 0.01 from Opacus; exact binary value 5764607523034235/576460752303423488 used"


@pytest.fixture(scope="module")
def poisson_doc():
    cert = certify_poisson(
        Schedule(POISSON_ADD_REMOVE, (Phase(fmpq(1, 100), fmpq(11, 10), T),), source="command line"), fmpq(1, 100000), alpha=fmpq(ALPHA)
    )
    return json.loads(cert.dumps())


def _ref_rdp_step() -> mp.mpf:
    with mp.workdps(60):
        return log_A_sum(ALPHA, Q, SIGMA) / (ALPHA - 1)


def _ref_eps(rdp, alpha=ALPHA, delta=Fraction(1, 100000)):
    """Balle et al. (2020), Thm 21, written out here."""
    with mp.workdps(60):
        a = mp.mpf(alpha)
        return rdp + mp.log((a - 1) / a) - (mp.log(mp.mpf(delta.numerator) / delta.denominator) + mp.log(a)) / (a - 1)


def _ref_delta(rdp, eps, alpha=ALPHA, cap=True):
    """delta(eps) solved from Thm 21 by mpmath's root finder (not the closed form of the code under test)."""
    with mp.workdps(60):
        a = mp.mpf(alpha)

        def gap(log_d):
            return rdp + mp.log((a - 1) / a) - (log_d + mp.log(a)) / (a - 1) - eps

        log_d = mp.findroot(gap, -10)
        return min(mp.mpf(1), mp.exp(log_d)) if cap else mp.exp(log_d)


def _mp(q):
    return mp.mpf(int(q.p)) / int(q.q)


def test_record_reads_the_certificate(poisson_doc):
    rec = curves.privacy_record(poisson_doc)
    assert rec.alpha == ALPHA and rec.steps == T and str(rec.delta) == DELTA
    with mp.workdps(60):
        ref = T * _ref_rdp_step()
        lo, hi = rec.total[0] - rec.total[1], rec.total[0] + rec.total[1]
        assert _mp(lo) <= ref <= _mp(hi)


def test_profile_contains_the_reference_and_is_tight(poisson_doc):
    rec = curves.privacy_record(poisson_doc)
    band = curves.profile_band(rec)
    with mp.workdps(60):
        rdp = T * _ref_rdp_step()
        for x, lo, hi in zip(band.x, band.lo, band.hi):
            ref = _ref_delta(rdp, _mp(x))
            assert _mp(lo) <= ref <= _mp(hi), (x, lo, ref, hi)
            if ref < 1:
                assert (_mp(hi) - _mp(lo)) / ref < mp.mpf("1e-25")
    # at the certified epsilon the profile is at most the certified delta (the headline, re-read)
    i = band.x.index(rec.epsilon)
    assert band.hi[i] <= rec.delta


def test_epsilon_against_steps_contains_the_reference(poisson_doc):
    rec = curves.privacy_record(poisson_doc)
    band = curves.steps_band(rec)
    assert band.x[-1] == T and len(band.x) == curves.STEPS_POINTS
    with mp.workdps(60):
        step = _ref_rdp_step()
        for x, lo, hi in zip(band.x, band.lo, band.hi):
            ref = _ref_eps(int(x) * step)
            assert _mp(lo) <= ref <= _mp(hi)
            assert _mp(hi) - _mp(lo) < mp.mpf("1e-25")
    # the last point is the certificate's own epsilon ball
    assert band.hi[-1] <= rec.epsilon


def test_tradeoff_is_a_sound_lower_bound(poisson_doc):
    """Reference: sup over the same eps grid of Kairouz et al.'s two lines, with mpmath's delta(eps); and
    the bound never exceeds 1 - a (no test does worse than a coin flip) nor the Gaussian-free limit 1."""
    rec = curves.privacy_record(poisson_doc)
    band = curves.tradeoff_band(rec)
    grid = curves.profile_band(rec, 4 * rec.epsilon, 2 * curves.PROFILE_POINTS).x
    with mp.workdps(60):
        rdp = T * _ref_rdp_step()
        ds = [(_mp(e), _ref_delta(rdp, _mp(e), cap=False)) for e in grid]
        for a, lo, hi in zip(band.x, band.lo, band.hi):
            am = _mp(a)
            ref = max([mp.mpf(0)] + [max(1 - d - mp.exp(e) * am, mp.exp(-e) * (1 - d - am)) for e, d in ds])
            assert _mp(lo) <= ref <= _mp(hi)
            assert _mp(hi) - _mp(lo) < mp.mpf("1e-30")
            assert _mp(lo) <= 1 - am
    assert band.lo[0] < 1 and band.lo[-1] == 0


def test_no_curves_for_kinds_without_a_renyi_order():
    for kind in ("pld/dpsgd", "dpsgd/rho-bok", "objpert/theorem-4.1", "dpsgd/renyi-poisson-fails"):
        assert curves.privacy_record({"kind": kind, "quantities": {}, "inputs": {}}) is None


def test_referee_profile_against_an_independent_quadrature():
    """referee/objpert-rdp: the profile of the loss l = eps_det + mu^2/2 + mu|Z| by 50-digit quadrature of
    E_P[(1 - e^(eps - l))_+] (the definition, not the closed form), inside the band; the certified point below delta."""
    doc = json.loads(verify.spec_for("referee/objpert-rdp").example().dumps())
    rec = curves.privacy_record(doc)
    band = curves.profile_band(rec, points=6)
    inp = doc["inputs"]
    with mp.workdps(50):
        L, nu, s, lam = (mp.mpf(Fraction(inp[k]).numerator) / Fraction(inp[k]).denominator for k in ("L", "nu", "s", "lambda"))
        m, ed = L / nu, mp.log(1 + s / lam)

        def ref(eps):
            # loss under P: l(z) = ed + m^2/2 + m|z|, z ~ N(0, 1); delta = E[(1 - e^(eps - l))_+]
            f = lambda z: (1 - mp.exp(eps - ed - m * m / 2 - m * z)) * mp.npdf(z)
            kink = max(mp.mpf(0), (eps - ed - m * m / 2) / m)  # the integrand is 0 below it
            return 2 * mp.quad(f, [kink, kink + 1, kink + 4, kink + 12, kink + 40])

        for x, lo, hi in zip(band.x, band.lo, band.hi):
            r = ref(_mp(x))
            assert _mp(lo) - mp.mpf("1e-40") <= r <= _mp(hi) + mp.mpf("1e-40"), (x, lo, r, hi)
            assert _mp(hi) - _mp(lo) < mp.mpf("1e-25")
    assert str(rec.epsilon) == str(Fraction(doc["quantities"]["epsilon_upper"]["upper"]))
    assert curves.profile_band(rec, rec.epsilon, 1).hi[-1] <= rec.delta
    trade = curves.tradeoff_band(rec, points=10)
    assert all(0 <= lo <= 1 - a for a, lo in zip(trade.x, trade.lo)) and trade.lo[0] > 0


# ------------------------------------------------------------------------------------------------
# the page
# ------------------------------------------------------------------------------------------------
class _Page(HTMLParser):
    """Collects ids, tags and the visible text; fails on mismatched tags."""

    VOID = {"meta", "link", "br", "img", "rect", "line", "circle", "polygon", "polyline", "path"}

    def __init__(self):
        super().__init__()
        self.stack, self.ids, self.tags, self.text = [], set(), [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.ids.update(v for k, v in attrs if k == "id")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)

    @property
    def words(self) -> str:
        """The visible text with runs of white space made one space."""
        return " ".join(" ".join(self.text).split())


def parse(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    p.close()
    assert not p.stack, p.stack
    return p


def test_page_of_a_verified_certificate(poisson_doc):
    html = render(poisson_doc, "run.json")
    page = parse(html)
    text = page.words
    assert {"verdict", "conclusion", "in-words", "contract", "inputs", "recheck", "fig-profile", "fig-steps", "fig-tradeoff"} <= page.ids
    assert page.tags.count("svg") == 3
    assert "VERIFIED: the certificate is consistent" in text and "NOT VERIFIED" not in text
    # the conclusion first, as recorded; the inputs as recorded; the re-check command
    statement = poisson_doc["conclusions"][0]["statement"]
    assert text.index("PROVED") < text.index("Contract and hypotheses")
    assert statement in text
    for k in ("phase[0].sampling_rate", "phase[0].noise_multiplier", "delta"):
        assert poisson_doc["inputs"][k] in text
    assert "certify verify run.json" in text
    assert poisson_doc["quantities"]["epsilon"]["upper"] in text
    # self-contained: no script, no reference to another file or host
    assert "<script" not in html and not re.search(r"""(src|href)=["'](?!data:|#)""", html)
    assert "@media print" in html


def test_provenance_notes_are_shown():
    doc = json.loads(
        certify_poisson(
            Schedule(POISSON_ADD_REMOVE, (Phase(fmpq(5764607523034235, 576460752303423488), fmpq(11, 10), 100),), source="Opacus history"),
            fmpq(1, 100000),
            notes={"phase[0].sampling_rate.note": NOTE},
        ).dumps()
    )
    text = parse(render(doc)).words
    assert NOTE in text


def _tampered(doc: dict) -> dict:
    bad = json.loads(json.dumps(doc))
    bad["inputs"]["source"] = '<script>alert("x")</script> & <b>bold</b>'
    return bad


def test_a_certificate_that_does_not_verify_says_so_in_red_with_no_figures(poisson_doc):
    html = render(_tampered(poisson_doc), "bad.json")
    page = parse(html)
    text = page.words
    assert '<div class="banner rejected" id="verdict">NOT VERIFIED' in html
    assert html.index("banner rejected") < html.index('id="conclusion"')
    assert "svg" not in page.tags and "fig-profile" not in page.ids
    assert "PROVED:" not in text.replace("NOT PROVED:", "")
    assert "digest does not match" in text
    assert "Certified quantities" not in text and "Quantities as the file records them (NOT verified)" in text
    # text from the file is escaped, never markup
    assert "<script>" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in html


def _example_kinds():
    return verify.registered_kinds()


@pytest.mark.slow
@pytest.mark.parametrize("kind", _example_kinds())
def test_every_kind_gets_a_page(kind):
    doc = json.loads(verify.spec_for(kind).example().dumps())
    html = render(doc, "x.json")
    page = parse(html)
    text = page.words
    assert "VERIFIED: " in text and "NOT VERIFIED" not in text
    for c in doc["conclusions"]:
        assert c["statement"] in text
    assert ("fig-profile" in page.ids) == (kind in curves.CURVE_KINDS)


def test_pld_page_has_no_curves_but_says_why():
    doc = json.loads(verify.spec_for("pld/dpsgd").example().dumps())
    text = parse(render(doc)).words
    assert "No privacy curves for kind pld/dpsgd" in text and "VERIFIED: " in text


# ------------------------------------------------------------------------------------------------
# the command
# ------------------------------------------------------------------------------------------------
def test_command_writes_the_page_and_exits_with_the_verdict(tmp_path, poisson_doc, capsys):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(poisson_doc, indent=2) + "\n")
    bad.write_text(json.dumps(_tampered(poisson_doc), indent=2) + "\n")
    assert main(["report", str(good), "--out", str(tmp_path / "good.html")]) == 0
    assert main(["report", str(bad), "--out", str(tmp_path / "bad.html")]) == 4
    assert "NOT VERIFIED" in (tmp_path / "bad.html").read_text()
    assert "report written to" in capsys.readouterr().out


def test_command_bad_input_exits_2_and_writes_nothing(tmp_path, poisson_doc, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(poisson_doc, indent=2) + "\n")
    (tmp_path / "trunc.json").write_text((json.dumps(poisson_doc, indent=2) + "\n")[:100])
    assert main(["report", str(tmp_path / "trunc.json"), "--out", str(tmp_path / "a.html")]) == 2
    assert main(["report", str(good), "--out", str(tmp_path / "no" / "a.html")]) == 2
    assert main(["report", str(tmp_path / "missing.json"), "--out", str(tmp_path / "a.html")]) == 2
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe" + bytes(range(256)))
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (tmp_path / "old.json").write_text(json.dumps(dict(poisson_doc, schema="certify/1")))
    for bad in ("binary.json", "deep.json", "old.json", "."):
        assert main(["report", str(tmp_path / bad), "--out", str(tmp_path / "a.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 7 and all(line.startswith("certify: error:") for line in err)
    assert sorted(os.listdir(tmp_path)) == ["binary.json", "deep.json", "good.json", "old.json", "trunc.json"]


# ------------------------------------------------------------------------------------------------
# a real headless browser
# ------------------------------------------------------------------------------------------------
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs Debian's chromium)")


def _chromium(tmp_path, url: str, *flags: str) -> subprocess.CompletedProcess:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]
    cmd += ["--enable-logging=stderr", "--v=0", *flags, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _console_errors(stderr: str) -> list[str]:
    """Console messages and page errors chromium logs on stderr (its own dbus/GPU noise is not the page's)."""
    return [line for line in stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line or "Failed to load resource" in line]


def _pixels(png_path, colour: tuple[int, int, int], box=None, tol: int = 12) -> int:
    from PIL import Image

    im = Image.open(png_path).convert("RGB")
    if box:
        im = im.crop(box)
    return sum(n for n, px in im.getcolors(im.width * im.height) if all(abs(a - b) <= tol for a, b in zip(px, colour)))


@pytest.mark.slow
@needs_browser
def test_console_error_detection_can_fail(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><body><script>console.error("boom"); undefined_fn();</script><img src="missing.png"></body></html>')
    out = _chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert _console_errors(out.stderr), out.stderr[-2000:]


@pytest.mark.slow
@needs_browser
def test_report_in_a_headless_browser(tmp_path, poisson_doc):
    cert = tmp_path / "run.json"
    cert.write_text(json.dumps(poisson_doc, indent=2) + "\n")
    html = tmp_path / "report.html"
    run = subprocess.run([sys.executable, "-m", "certify", "report", str(cert), "--out", str(html)], env=ENV, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    dom = _chromium(tmp_path, html.as_uri(), "--dump-dom")
    assert dom.returncode == 0 and not _console_errors(dom.stderr), dom.stderr[-2000:]
    page = parse(dom.stdout)
    text = page.words
    assert poisson_doc["conclusions"][0]["statement"] in text and "VERIFIED: the certificate is consistent" in text
    assert page.tags.count("svg") == 3 and page.tags.count("polyline") == 3
    shot = tmp_path / "shot.png"
    out = _chromium(tmp_path, html.as_uri(), f"--screenshot={shot}", "--window-size=1000,2600", "--hide-scrollbars")
    assert shot.exists() and not _console_errors(out.stderr)
    # on screen: the green banner at the top, the blue curves and the red certified point further down
    assert _pixels(shot, (0xE6, 0xF4, 0xEA), box=(0, 0, 1000, 200)) > 5000
    assert _pixels(shot, (0x1F, 0x5F, 0xA8), box=(0, 1200, 1000, 2600), tol=30) > 300
    assert _pixels(shot, (0xBB, 0x00, 0x00), tol=30) > 20
    # printed: the print styles give a PDF (the figures kept whole is the CSS's break-inside rule)
    pdf = tmp_path / "report.pdf"
    out = _chromium(tmp_path, html.as_uri(), f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
    assert pdf.read_bytes().startswith(b"%PDF") and pdf.stat().st_size > 20000 and not _console_errors(out.stderr)


@pytest.mark.slow
@needs_browser
def test_rejected_report_in_a_headless_browser(tmp_path, poisson_doc):
    html = tmp_path / "bad.html"
    html.write_text(render(_tampered(poisson_doc), "bad.json"))
    dom = _chromium(tmp_path, html.as_uri(), "--dump-dom")
    assert not _console_errors(dom.stderr)
    assert "svg" not in parse(dom.stdout).tags
    shot = tmp_path / "bad.png"
    _chromium(tmp_path, html.as_uri(), f"--screenshot={shot}", "--window-size=1000,1200", "--hide-scrollbars")
    assert _pixels(shot, (0xFD, 0xE8, 0xE8), box=(0, 0, 1000, 250)) > 5000  # the red banner, at the top
    assert _pixels(shot, (0x1F, 0x5F, 0xA8), tol=30) == 0  # no curve
