"""Small inline SVG line charts with a shaded band: no script, no font file, no external reference.

Floats are used here only to place points on the drawing (pixel coordinates); the numbers a reader can
rely on are printed in the page's tables, from the exact band endpoints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

WIDTH, HEIGHT = 560, 340
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 48, 50


@dataclass
class Series:
    """One curve: x, the band's lower and upper edges (floats for drawing), a label and a colour."""

    x: list[float]
    lo: list[float]
    hi: list[float]
    label: str
    colour: str = "#1f5fa8"
    #: which edge is drawn as the line (the certified edge): "hi" or "lo"
    line: str = "hi"


@dataclass
class Chart:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    #: points marked with a dot and a label: (x, y, label)
    marks: list[tuple[float, float, str]] = field(default_factory=list)
    #: a reference line (x0, y0, x1, y1, label), dashed
    guides: list[tuple[float, float, float, float, str]] = field(default_factory=list)
    #: y values are log10 of the quantity (tick labels say 1e-k)
    log_y: bool = False
    css_class: str = "figure"


def _ticks(lo: float, hi: float, n: int = 5, integer: bool = False) -> list[float]:
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    if integer:
        step = max(1, math.ceil(step))
    start = math.ceil(lo / step) * step
    out = []
    v = start
    while v <= hi + 1e-12 * step and len(out) < 20:
        out.append(round(v, 12))
        v += step
    return out


def _fmt(v: float, log: bool) -> str:
    if log:
        return "1" if v == 0 else f"1e{int(round(v))}"
    return f"{v:g}"


def render(chart: Chart) -> str:
    """The chart as an ``<svg>`` element (a string), with a ``<title>`` for screen readers."""
    xs = [v for s in chart.series for v in s.x] + [m[0] for m in chart.marks]
    ys = [v for s in chart.series for v in s.lo + s.hi] + [m[1] for m in chart.marks]
    ys = [v for v in ys if math.isfinite(v)]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if y1 - y0 < 1e-12:
        y0, y1 = y0 - 1, y1 + 1
    pad = 0.04 * (y1 - y0)
    y0, y1 = y0 - pad, y1 + pad
    if x1 <= x0:
        x1 = x0 + 1
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(v: float) -> float:
        return LEFT + (v - x0) / (x1 - x0) * pw

    def py(v: float) -> float:
        v = min(max(v, y0), y1)
        return TOP + (y1 - v) / (y1 - y0) * ph

    out = [
        f'<svg class="{escape(chart.css_class)}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img">',
        f"<title>{escape(chart.title)}</title>",
        f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="#fff" stroke="#444"/>',
    ]
    for t in _ticks(x0, x1):
        out.append(f'<line x1="{px(t):.1f}" y1="{TOP + ph}" x2="{px(t):.1f}" y2="{TOP + ph + 5}" stroke="#444"/>')
        out.append(f'<text x="{px(t):.1f}" y="{TOP + ph + 18}" text-anchor="middle" font-size="11">{escape(_fmt(t, False))}</text>')
    for t in _ticks(y0, y1, integer=chart.log_y):
        out.append(f'<line x1="{LEFT}" y1="{py(t):.1f}" x2="{LEFT + pw}" y2="{py(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{py(t) + 4:.1f}" text-anchor="end" font-size="11">{escape(_fmt(t, chart.log_y))}</text>')
    out.append(f'<text x="{LEFT + pw / 2}" y="{HEIGHT - 10}" text-anchor="middle" font-size="12">{escape(chart.xlabel)}</text>')
    out.append(
        f'<text x="16" y="{TOP + ph / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 16 {TOP + ph / 2})">{escape(chart.ylabel)}</text>'
    )
    out.append(f'<text x="{LEFT + pw / 2}" y="18" text-anchor="middle" font-size="13" font-weight="bold">{escape(chart.title)}</text>')
    for gx0, gy0, gx1, gy1, label in chart.guides:
        out.append(
            f'<line x1="{px(gx0):.1f}" y1="{py(gy0):.1f}" x2="{px(gx1):.1f}" y2="{py(gy1):.1f}" stroke="#888" stroke-dasharray="5,4"/>'
            f'<text x="{px((gx0 + gx1) / 2) + 6:.1f}" y="{py((gy0 + gy1) / 2) - 6:.1f}" font-size="10" fill="#666">{escape(label)}</text>'
        )
    for s in chart.series:
        pts = [(px(x), py(lo), py(hi)) for x, lo, hi in zip(s.x, s.lo, s.hi) if math.isfinite(lo) and math.isfinite(hi)]
        if not pts:
            continue
        band = " ".join(f"{x:.2f},{h:.2f}" for x, _, h in pts) + " " + " ".join(f"{x:.2f},{lo:.2f}" for x, lo, _ in reversed(pts))
        out.append(f'<polygon class="band" points="{band}" fill="{s.colour}" fill-opacity="0.25" stroke="{s.colour}" stroke-width="0.6"/>')
        edge = [(x, h if s.line == "hi" else lo) for x, lo, h in pts]
        out.append(
            f'<polyline class="curve" points="{" ".join(f"{x:.2f},{y:.2f}" for x, y in edge)}" fill="none" stroke="{s.colour}" stroke-width="2"/>'
        )
    for mx, my, label in chart.marks:
        right = px(mx) > LEFT + 0.6 * pw  # label on the side with room
        out.append(
            f'<circle cx="{px(mx):.1f}" cy="{py(my):.1f}" r="4" fill="#b00"/>'
            f'<text x="{px(mx) + (-7 if right else 7):.1f}" y="{py(my) - 7:.1f}" font-size="11" fill="#b00" '
            f'text-anchor="{"end" if right else "start"}">{escape(label)}</text>'
        )
    lx = LEFT
    for s in chart.series:  # the legend, between the title and the plot
        out.append(
            f'<rect x="{lx}" y="{TOP - 17}" width="14" height="10" fill="{s.colour}" fill-opacity="0.4" stroke="{s.colour}"/>'
            f'<text x="{lx + 20}" y="{TOP - 8}" font-size="11">{escape(s.label)}</text>'
        )
        lx += 20 + 7 * len(s.label)
    out.append("</svg>")
    return "\n".join(out)
