"""SVG charts and the HTML around them, for the live training page and its saved report.

``render.py`` draws with it. Everything here is a pure function from numbers
to text: a chart is one ``<svg>`` element whose lines are ``<polyline>``
elements, so a browser shows it, a test can count its points, and the book
can embed it. Python draws every chart (there is no second renderer in
JavaScript): the live page's small script only swaps in the SVG the server
sends. No font, script or style is loaded from anywhere else, so the page and
the report work offline.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..language import current, tr

__all__ = ["Line", "Panel", "esc", "histogram_chart", "line_chart", "page", "report", "short"]

WIDTH: Final = 640
HEIGHT: Final = 280
LEFT, RIGHT, TOP, BOTTOM = 62, 16, 54, 40  # margins around the plot area
PALETTE: Final = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000")
"""Okabe and Ito's colours, readable with every common kind of colour blindness."""
EXPLODE_COLOR: Final = "#d62728"
VANISH_COLOR: Final = "#1f77b4"


@dataclass(frozen=True, slots=True)
class Line:
    """One series of a line chart: (step, value) points, a colour, a legend name."""

    name: str
    points: Sequence[tuple[int, float]]
    color: str
    dashed: bool = False


@dataclass(frozen=True, slots=True)
class Panel:
    """One histogram in a row of histograms: a name and the values to bin."""

    name: str
    values: Sequence[float]
    color: str
    bins: int = 30


def short(v: float) -> str:
    """A short label for an axis tick or a value.

    Examples:
        >>> from microtape.dashboard.charts import short
        >>> [short(v) for v in (1e-7, 0.0123, 3.5, 1000.0, 2.5e12, float("nan"))]
        ['1e-7', '0.0123', '3.5', '1000', '2.5e12', 'NaN']
    """
    if v == 0:
        return "0"
    if not math.isfinite(v):
        return "NaN" if v != v else ("Inf" if v > 0 else "-Inf")
    a = abs(v)
    if v == int(v) and a < 1e5:
        return str(int(v))
    if 1e-3 <= a < 1e4:
        text = f"{v:.3g}"
        return text
    return f"{v:.2g}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")


def _nice_step(span: float, ticks: int = 5) -> float:
    raw = span / max(ticks, 1)
    if raw <= 0 or not math.isfinite(raw):
        return 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0, 10.0):
        if raw <= m * power:
            return m * power
    return 10.0 * power


def _linear_ticks(lo: float, hi: float, ticks: int = 5) -> tuple[float, float, list[float]]:
    if hi <= lo:
        lo, hi = (lo - 1.0, hi + 1.0) if abs(lo) < 1e300 else (lo, lo * 0.5) if lo < 0 else (lo * 0.5, hi)
    if not abs(lo) < 1e300 or not abs(hi) < 1e300:  # near the float range's ends: no rounding outwards
        return lo, hi, [lo * (1 - i / ticks) + hi * (i / ticks) for i in range(ticks + 1)]
    step = _nice_step(hi - lo, ticks)
    start, stop = math.floor(lo / step) * step, math.ceil(hi / step) * step
    count = int(round((stop - start) / step))
    return start, stop, [start + i * step for i in range(count + 1)]


def _log_ticks(lo: float, hi: float) -> tuple[float, float, list[float]]:
    """Decade bounds (as exponents) around [lo, hi] and the exponents to label."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if a == b:
        a, b = a - 1, b + 1
    every = max(1, math.ceil((b - a) / 6))
    return float(a), float(b), [float(e) for e in range(a, b + 1) if (e - a) % every == 0]


def esc(text: str) -> str:
    """Escape user text (a title, a variable's name, a mark's label) for the page's HTML and SVG.

    Examples:
        >>> from microtape.dashboard.charts import esc
        >>> esc('<img src=x onerror="alert(1)">')
        '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
    """
    return html.escape(text, quote=True)


def _frame(kind: str, title: str, note: str, body: list[str], points: int, last_step: int | None) -> str:
    step_attr = f' data-last-step="{last_step}"' if last_step is not None else ""
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="mt-chart" data-chart="{kind}" data-points="{points}"{step_attr} '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{esc(title)}">'
        f"<title>{esc(title)}</title>"
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>'
        f'<text x="12" y="20" class="mt-title">{esc(title)}</text>'
    )
    tail = f'<text x="{WIDTH - 12}" y="20" class="mt-note" text-anchor="end">{esc(note)}</text>' if note else ""
    return head + tail + "".join(body) + "</svg>"


def _legend(items: list[tuple[str, str, bool]], y: float) -> list[str]:
    out, x = [], 12.0
    for name, color, dashed in items:
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        out.append(f'<line x1="{x:.0f}" y1="{y - 4:.0f}" x2="{x + 18:.0f}" y2="{y - 4:.0f}" stroke="{color}" stroke-width="2.5"{dash}/>')
        out.append(f'<text x="{x + 23:.0f}" y="{y:.0f}" class="mt-legend">{esc(name)}</text>')
        x += 32 + 6.6 * len(name)
    return out


def line_chart(
    kind: str,
    title: str,
    lines: Sequence[Line],
    *,
    log_y: bool = True,
    y_label: str = "",
    note: str = "",
    hlines: Sequence[tuple[float, str, str]] = (),
    marks: Sequence[tuple[int, str]] = (),
) -> str:
    """Draw series against the training step as one ``<svg>`` (log or linear y axis).

    Non-finite values (NaN, Inf) break the line and show as a red cross at the
    top edge; on a log axis, zeros and negative values sit at the bottom edge.
    ``hlines`` are (value, label, colour) thresholds, ``marks`` (step, label)
    events such as "clipping on".

    Examples:
        >>> from microtape.dashboard.charts import Line, line_chart
        >>> svg = line_chart("loss", "loss", [Line("loss", [(0, 1.0), (1, 0.5), (2, 0.25)], "#000")])
        >>> svg.startswith("<svg") and svg.count("<polyline") == 1
        True
        >>> 'data-points="3"' in svg
        True
    """
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    xs = [s for line in lines for s, _ in line.points]
    finite = [v for line in lines for _, v in line.points if math.isfinite(v)]
    if log_y and any(v <= 0 for v in finite) and not any(v > 0 for v in finite):
        log_y = False
    body: list[str] = []
    if not xs:
        body.append(f'<text x="{WIDTH / 2:.0f}" y="{TOP + plot_h / 2:.0f}" class="mt-empty" text-anchor="middle">' + esc(tr("waiting for the first step…")) + "</text>")
        body += _legend([(line.name, line.color, line.dashed) for line in lines], 40)
        return _frame(kind, title, note, body, 0, None)
    x_lo, x_hi, x_ticks = _linear_ticks(min(xs), max(max(xs), min(xs) + 1), 6)
    x_ticks = [t for t in x_ticks if x_lo <= t <= x_hi]
    values = [v for v in finite if v > 0] if log_y else list(finite)
    values += [v for v, _, _ in hlines if (v > 0 or not log_y)]
    if log_y:
        lo, hi, y_ticks = _log_ticks(min(values, default=1e-3), max(values, default=1.0))
    else:
        lo, hi, y_ticks = _linear_ticks(min(values, default=0.0), max(values, default=1.0))

    def sx(step: float) -> float:
        return LEFT + (step - x_lo) / (x_hi - x_lo) * plot_w

    lo2, hi2 = lo / 2, hi / 2  # halves: the span of -1e308 and 1e308 does not overflow

    def ty(t: float) -> float:  # t in axis units: the value, or its log10 on a log axis
        return TOP + plot_h - (min(max(t, lo), hi) / 2 - lo2) / (hi2 - lo2) * plot_h

    def sy(v: float) -> float:
        return ty((math.log10(v) if v > 0 else lo) if log_y else v)

    body.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" class="mt-plot"/>')
    gap = y_ticks[1] - y_ticks[0] if len(y_ticks) > 1 else 0.0
    digits = 0 if log_y or not 0 < gap < math.inf else max(0, -math.floor(math.log10(gap) + 1e-9))
    powers = any(t <= -3 or t >= 4 for t in y_ticks)  # a wide log axis labels every tick as 1eN
    for t in y_ticks:
        y = ty(t)
        label = (f"1e{int(t)}" if powers else short(10.0**t)) if log_y else (f"{t:.{digits}f}" if abs(t) < 1e5 else short(t))
        body.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + plot_w}" y2="{y:.1f}" class="mt-grid"/>')
        body.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" class="mt-tick" text-anchor="end">{label}</text>')
    for t in x_ticks:
        x = sx(t)
        body.append(f'<line x1="{x:.1f}" y1="{TOP + plot_h}" x2="{x:.1f}" y2="{TOP + plot_h + 4}" class="mt-axis"/>')
        body.append(f'<text x="{x:.1f}" y="{TOP + plot_h + 17}" class="mt-tick" text-anchor="middle">{short(t)}</text>')
    body.append(f'<text x="{LEFT + plot_w / 2:.0f}" y="{HEIGHT - 6}" class="mt-axis-label" text-anchor="middle">' + esc(tr("step")) + "</text>")
    if y_label:
        body.append(
            f'<text transform="translate(14 {TOP + plot_h / 2:.0f}) rotate(-90)" class="mt-axis-label" text-anchor="middle">'
            f"{esc(y_label + (tr(' (log scale)') if log_y else ''))}</text>"
        )
    labelled: list[float] = []
    for value, label, color in hlines:
        if log_y and value <= 0:
            continue
        y = sy(value)
        # on a very wide axis two thresholds nearly meet: the lower one's label goes under its line
        text_y = y + 13 if any(abs(y - other) < 14 for other in labelled) else y - 4
        labelled.append(y)
        body.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + plot_w}" y2="{y:.1f}" stroke="{color}" stroke-width="1.2" stroke-dasharray="2 3"/>')
        body.append(f'<text x="{LEFT + plot_w - 4}" y="{text_y:.1f}" class="mt-threshold" fill="{color}" text-anchor="end">{esc(label)}</text>')
    for step, label in marks:
        if x_lo <= step <= x_hi:
            x = sx(step)
            body.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + plot_h}" class="mt-mark"/>')
            body.append(f'<text x="{x + 4:.1f}" y="{TOP + 12}" class="mt-mark-label">{esc(label)}</text>')
    total = 0
    kx, ky = plot_w / (x_hi - x_lo), plot_h / (hi2 - lo2)  # the inner loop inlines sx and sy: it runs per point
    bx, base = LEFT - x_lo * kx, TOP + plot_h
    log10, isfinite = math.log10, math.isfinite
    for line in lines:
        dash = ' stroke-dasharray="6 3"' if line.dashed else ""
        segment: list[str] = []
        segments: list[list[str]] = []
        bad: list[float] = []
        for step, v in line.points:
            if isfinite(v):
                t = (log10(v) if v > 0 else lo) if log_y else v
                t = lo if t < lo else hi if t > hi else t
                segment.append(f"{step * kx + bx:.1f},{base - (t / 2 - lo2) * ky:.1f}")
            else:
                bad.append(step * kx + bx)
                if segment:
                    segments.append(segment)
                segment = []
        if segment:
            segments.append(segment)
        for seg in segments:
            total += len(seg)
            pts = " ".join(seg if len(seg) > 1 else seg * 2)
            body.append(f'<polyline points="{pts}" fill="none" stroke="{line.color}" stroke-width="1.8"{dash} data-series="{esc(line.name)}"/>')
        for x in bad[:200]:
            body.append(f'<path d="M{x - 3:.1f},{TOP - 3} l6,6 m0,-6 l-6,6" stroke="{EXPLODE_COLOR}" stroke-width="1.5"/>')
        total += len(bad)
    body += _legend([(line.name, line.color, line.dashed) for line in lines], 40)
    return _frame(kind, title, note, body, total, int(max(xs)))


def histogram_chart(kind: str, title: str, panels: Sequence[Panel], note: str = "", empty: str = "no gradients logged yet") -> str:
    """Draw one small histogram per panel, side by side, as one ``<svg>``; with no panels, the text ``empty``.

    Examples:
        >>> from microtape.dashboard.charts import Panel, histogram_chart
        >>> svg = histogram_chart("hist", "gradients", [Panel("w", [0.0, 0.5, 1.0], "#000", bins=2)])
        >>> svg.count("<rect class=\\"mt-bar\\"")
        2
    """
    body: list[str] = []
    if not panels:
        body.append(f'<text x="{WIDTH / 2:.0f}" y="{HEIGHT / 2:.0f}" class="mt-empty" text-anchor="middle">{esc(empty)}</text>')
        return _frame(kind, title, note, body, 0, None)
    per_row = min(len(panels), 4)
    rows = math.ceil(len(panels) / per_row)
    cell_w = (WIDTH - 24) / per_row
    cell_h = (HEIGHT - 34) / rows
    total = 0
    for i, panel in enumerate(panels):
        x0 = 12 + (i % per_row) * cell_w
        y0 = 34 + (i // per_row) * cell_h
        data = [v for v in panel.values if math.isfinite(v)]
        bad = len(panel.values) - len(data)
        plot_x, plot_y, plot_w, plot_h = x0 + 6, y0 + 22, cell_w - 18, cell_h - 48
        count = (tr(" ({n} value)") if len(panel.values) == 1 else tr(" ({n} values)")).format(n=len(panel.values))
        room = max(4, int((cell_w - 12) / 7) - len(count))  # about 7 px a character: a long name is cut, not overlapped
        name = panel.name if len(panel.name) <= room else panel.name[: room - 1] + "…"
        body.append(f'<text x="{x0 + 6:.1f}" y="{y0 + 14:.1f}" class="mt-panel-title">{esc(name)}{count}<title>{esc(panel.name)}</title></text>')
        body.append(f'<rect x="{plot_x:.1f}" y="{plot_y:.1f}" width="{plot_w:.1f}" height="{plot_h:.1f}" class="mt-plot"/>')
        if not data:
            body.append(f'<text x="{plot_x + plot_w / 2:.1f}" y="{plot_y + plot_h / 2:.1f}" class="mt-empty" text-anchor="middle">{esc(tr("all NaN/Inf") if bad else tr("no values"))}</text>')
            continue
        lo, hi = min(data), max(data)
        half_span = (hi / 2 - lo / 2) or 0.5  # halves: the span of -1e308 and 1e308 does not overflow
        counts = [0] * panel.bins
        for v in data:
            counts[min(panel.bins - 1, int((v / 2 - lo / 2) / half_span * panel.bins))] += 1
        top = max(counts)
        bar_w = plot_w / panel.bins
        for b, c in enumerate(counts):
            if c:
                h = max(1.0, c / top * (plot_h - 4))
                body.append(
                    f'<rect class="mt-bar" x="{plot_x + b * bar_w:.1f}" y="{plot_y + plot_h - h:.1f}" '
                    f'width="{max(bar_w - 1, 0.5):.1f}" height="{h:.1f}" fill="{panel.color}"><title>{c}</title></rect>'
                )
                total += 1
        if lo <= 0 <= hi and hi > lo:
            zx = plot_x + (0 - lo / 2) / half_span * plot_w
            body.append(f'<line x1="{zx:.1f}" y1="{plot_y:.1f}" x2="{zx:.1f}" y2="{plot_y + plot_h:.1f}" class="mt-zero"/>')
        body.append(f'<text x="{plot_x:.1f}" y="{plot_y + plot_h + 13:.1f}" class="mt-tick">{short(lo)}</text>')
        body.append(f'<text x="{plot_x + plot_w:.1f}" y="{plot_y + plot_h + 13:.1f}" class="mt-tick" text-anchor="end">{short(hi)}</text>')
        if bad:
            body.append(f'<text x="{plot_x + plot_w / 2:.1f}" y="{plot_y + plot_h + 13:.1f}" class="mt-bad" text-anchor="middle">{bad} NaN/Inf</text>')
    return _frame(kind, title, note, body, total, None)


CSS: Final = """
.mt-dash{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1d2430;background:#f4f6f9;padding:16px;border-radius:8px}
.mt-dash h1{font-size:20px;margin:0 0 4px 0;font-weight:600}
.mt-dash .mt-status{font-size:14px;color:#3b4656;margin:0 0 10px 0}
.mt-dash .mt-status b{color:#1d2430}
.mt-dash .mt-grid-charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:12px}
.mt-dash .mt-card{background:#fff;border:1px solid #dde2ea;border-radius:6px;padding:4px}
.mt-dash .mt-card svg{display:block;width:100%;height:auto}
.mt-dash .mt-flags{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#fff;border:1px solid #dde2ea;border-radius:6px;padding:8px 10px;margin:0 0 12px 0;white-space:pre-wrap;color:#8a1c1c;min-height:1.2em}
.mt-dash .mt-flags.mt-calm{color:#2b6b2b}
.mt-dash .mt-foot{font-size:12px;color:#5b6676;margin-top:10px}
.mt-dash .mt-backward{padding:8px;overflow-x:auto}
.mt-dash .mt-backward h2{font-size:15px;font-weight:600;margin:0 0 6px 0}
.mt-dash .mt-backward table{border-collapse:collapse;font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.mt-dash .mt-backward th,.mt-dash .mt-backward td{border-bottom:1px solid #e6e9ee;padding:2px 6px;text-align:left;vertical-align:top}
.mt-chart text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;fill:#1d2430}
.mt-chart .mt-title{font-size:15px;font-weight:600}
.mt-chart .mt-note{font-size:11px;fill:#5b6676}
.mt-chart .mt-legend{font-size:12px}
.mt-chart .mt-tick{font-size:11px;fill:#4a5566}
.mt-chart .mt-axis-label{font-size:11px;fill:#4a5566}
.mt-chart .mt-threshold{font-size:11px;font-weight:600;paint-order:stroke;stroke:#ffffff;stroke-width:3px}
.mt-chart .mt-panel-title{font-size:12px;font-weight:600}
.mt-chart .mt-empty{font-size:13px;fill:#7a8596}
.mt-chart .mt-bad{font-size:11px;fill:#d62728}
.mt-chart .mt-mark-label{font-size:11px;fill:#444;paint-order:stroke;stroke:#ffffff;stroke-width:3px}
.mt-chart .mt-plot{fill:#fbfcfd;stroke:#c9d0da}
.mt-chart .mt-grid{stroke:#e6e9ee;stroke-width:1}
.mt-chart .mt-axis{stroke:#9aa4b2}
.mt-chart .mt-zero{stroke:#555;stroke-width:1;stroke-dasharray:2 2}
.mt-chart .mt-mark{stroke:#555;stroke-width:1.2;stroke-dasharray:4 3}
"""

SCRIPT: Final = """
(function () {
  "use strict";
  var status = document.getElementById("mt-status");
  var flags = document.getElementById("mt-flags");
  function apply(msg) {
    Object.keys(msg.charts).forEach(function (id) {
      var box = document.getElementById("mt-chart-" + id);
      if (box) { box.innerHTML = msg.charts[id]; }
    });
    var backward = document.getElementById("mt-backward");
    if (backward && typeof msg.backward === "string") { backward.innerHTML = msg.backward; }
    status.innerHTML = msg.status;
    flags.textContent = msg.flags;
    flags.className = msg.flags_calm ? "mt-flags mt-calm" : "mt-flags";
  }
  var words = status.dataset;  // the page's language: data-no-live, data-retrying, data-stopped
  if (!window.EventSource) { status.textContent = words.noLive; return; }
  var source = new EventSource("events");
  source.addEventListener("update", function (e) { apply(JSON.parse(e.data)); });
  source.addEventListener("done", function (e) { apply(JSON.parse(e.data)); source.close(); });
  source.onerror = function () {
    if (source.readyState !== EventSource.CLOSED) { status.textContent = words.retrying; }
    else { status.textContent = words.stopped; }
  };
})();
"""


def _body(title: str, status: str, flags: str, calm: bool, charts: dict[str, str], foot: str, backward: str) -> str:
    cards = "".join(f'<div class="mt-card" id="mt-chart-{esc(k)}">{svg}</div>' for k, svg in charts.items())
    return (
        f'<div class="mt-dash"><h1>{esc(title)}</h1>'
        f'<p class="mt-status" id="mt-status" data-no-live="{esc(tr("this browser cannot receive live updates"))}"'
        f' data-retrying="{esc(tr("connection lost: retrying (is the training script still running?)"))}"'
        f' data-stopped="{esc(tr("the training script has stopped serving this page"))}">{status}</p>'
        f'<div class="{"mt-flags mt-calm" if calm else "mt-flags"}" id="mt-flags">{esc(flags)}</div>'
        f'<div class="mt-grid-charts">{cards}</div>'
        f'<div class="mt-card" id="mt-backward">{backward}</div>'
        f'<p class="mt-foot">{foot}</p></div>'
    )


def report(title: str, status: str, flags: str, calm: bool, charts: dict[str, str], foot: str, backward: str = "") -> str:
    """The charts (and the Backward panel's table) as an HTML fragment with its own scoped style (no script)."""
    return f"<style>{CSS}</style>" + _body(title, status, flags, calm, charts, foot, backward)


def page(title: str, status: str, flags: str, calm: bool, charts: dict[str, str], foot: str, live: bool, backward: str = "") -> str:
    """A whole HTML document: the report, plus (when ``live``) the script that follows updates."""
    # The script is one constant (the server's Content-Security-Policy allows it by its hash); the words
    # it may show in the reader's language are attributes of the status line.
    script = f"<script>{SCRIPT}</script>" if live else ""
    return (
        f'<!DOCTYPE html>\n<html lang="{current()}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>body{{margin:0;background:#f4f6f9}}{CSS}</style></head>"
        f"<body>{_body(title, status, flags, calm, charts, foot, backward)}{script}</body></html>\n"
    )
