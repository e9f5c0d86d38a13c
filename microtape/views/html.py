"""Pictures for Jupyter: the HTML and SVG pieces every ``_repr_html_`` of microtape is made of.

A notebook shows an object by calling its ``_repr_html_`` (or ``_repr_svg_``);
``repr`` and ``str`` stay plain text. This module knows nothing of tensors or
tapes: it turns escaped text, rows of cells and lists of floats into markup.

* ``escape`` is the one way user text (a variable's name, a message) enters
  markup: ``<script>`` in a name prints as text, never runs.
* ``table`` is a small table with inline styles (a notebook, GitHub and nbviewer
  keep inline styles; some drop ``<style>`` blocks); ``row_styles`` colours rows.
* ``heatmap`` draws a 2-D block of values as an SVG grid of coloured cells,
  ``sparkline_svg`` a series as an SVG line: both survive NaN, Inf and 1e308.
* ``tensor_html`` is a tensor's picture: a table of values, with a heat map beside it for 2-D.
* ``record_html`` shows any frozen record (``memory()``, ``profile()``, a
  leak report) as tables of its fields, under the first line of its ``str()``.
"""

from __future__ import annotations

import dataclasses
import html
import math
import re
from collections.abc import Sequence
from typing import Final

from ..engine.formatting import format_number, format_values
from ..engine.types import Shape
from ..language import tr

__all__ = ["escape", "heatmap", "number", "record_html", "sparkline_svg", "table", "tensor_html"]

FONT: Final = "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px"
GOOD: Final = "background: #dcfce7"
BAD: Final = "background: #fee2e2"
WARN: Final = "background: #fef3c7"
MARK: Final = "background: #fde68a; font-weight: bold"
MAX_ROWS: Final = 50  # rows of a table shown before "… N more"
MAX_CELLS: Final = 24  # rows and columns of a heat map shown before "…"
_CELL: Final = "border: 1px solid #d4d4d8; padding: 2px 6px; text-align: right"


_NOT_IN_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
"""Characters XML 1.0 forbids (control characters but tab and newlines, lone surrogates, U+FFFE/U+FFFF),
and DEL and the C1 controls it allows but no page can show."""


def escape(text: object) -> str:
    r"""``str(text)`` with ``& < > " '`` escaped, safe inside HTML text and attributes and in SVG
    (well-formed XML): a control character prints as its Python escape (``\x1b``), never raw.

    Examples:
        >>> from microtape.views.html import escape
        >>> escape('<script>alert("x&y")</script>')
        '&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;'
        >>> escape("w\x01\x1b[31m")
        'w\\x01\\x1b[31m'
    """
    return _NOT_IN_XML.sub(_visible, html.escape(str(text), quote=True))


def _visible(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def number(v: float) -> str:
    """A float as ``repr`` shows it (four significant digits), ready for markup.

    Examples:
        >>> from microtape.views.html import number
        >>> number(2.0 / 3.0), number(float("nan")), number(-1e308)
        ('0.6667', 'nan', '-1e+308')
    """
    return escape(format_number(v))


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    caption: str = "",
    row_styles: Sequence[str] | None = None,
    total: int | None = None,
) -> str:
    """An HTML table; ``header`` and ``caption`` are escaped here, cells must already be markup.

    ``row_styles`` gives one inline style per row (``GOOD``, ``BAD``...);
    ``total`` is the number of rows there really are, so a cut table says how
    many it leaves out.

    Examples:
        >>> from microtape.views.html import table
        >>> print(table(["a&b"], [["1"]]))  # doctest: +ELLIPSIS
        <table ...><thead><tr><th ...>a&amp;b</th></tr></thead><tbody><tr><td ...>1</td></tr></tbody></table>
    """
    head = "".join(f'<th style="{_CELL}; text-align: center; background: #f4f4f5">{escape(h)}</th>' for h in header)
    body = []
    for i, row in enumerate(rows[:MAX_ROWS]):
        style = f' style="{row_styles[i]}"' if row_styles is not None and row_styles[i] else ""
        body.append(f"<tr{style}>" + "".join(f'<td style="{_CELL}">{cell}</td>' for cell in row) + "</tr>")
    left = (len(rows) if total is None else total) - len(body)
    if left > 0:
        body.append(f'<tr><td colspan="{max(len(header), 1)}" style="{_CELL}; text-align: left">… {left} more</td></tr>')
    cap = f'<caption style="text-align: left; font-weight: bold; padding: 2px 0">{escape(caption)}</caption>' if caption else ""
    return (
        f'<table style="border-collapse: collapse; {FONT}">{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _colour(v: float, scale: float) -> str:
    """Blue for negative, white for 0, red for positive; grey for NaN, black for ±Inf."""
    if v != v:
        return "#a1a1aa"
    if math.isinf(v):
        return "#18181b"
    t = min(1.0, abs(v) / scale) if scale > 0 else 0.0  # scale is the largest |v|: the ratio cannot overflow
    light = 255 - int(round(t * 200))
    return f"#{light:02x}{light:02x}ff" if v < 0 else f"#ff{light:02x}{light:02x}"


def heatmap(data: Sequence[float], rows: int, cols: int, cell: int = 14) -> str:
    """An SVG grid of a row-major ``rows × cols`` block, one coloured square per entry.

    Colours are scaled by the largest finite ``|v|``; only the first
    ``MAX_CELLS`` rows and columns are drawn (an ellipsis marks the cut).
    Each cell's ``<title>`` is its index and value (a tooltip in a notebook).

    Examples:
        >>> from microtape.views.html import heatmap
        >>> svg = heatmap([1.0, -1.0, float("nan"), 1e308], 2, 2)
        >>> svg.startswith("<svg") and svg.count("<rect") == 4
        True
    """
    shown_r, shown_c = min(rows, MAX_CELLS), min(cols, MAX_CELLS)
    finite = [abs(v) for v in data if math.isfinite(v)]
    scale = max(finite) if finite else 0.0
    width = shown_c * cell + (cell if cols > shown_c else 0)
    height = shown_r * cell + (cell if rows > shown_r else 0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(tr("heat map"))}">'
    ]
    for r in range(shown_r):
        for c in range(shown_c):
            v = data[r * cols + c]
            parts.append(
                f'<rect x="{c * cell}" y="{r * cell}" width="{cell}" height="{cell}" fill="{_colour(v, scale)}" '
                f'stroke="#ffffff" stroke-width="1"><title>[{r}, {c}] = {number(v)}</title></rect>'
            )
    if cols > shown_c:
        parts.append(f'<text x="{shown_c * cell + 2}" y="{cell - 3}" font-size="{cell - 2}">…</text>')
    if rows > shown_r:
        parts.append(f'<text x="2" y="{height - 3}" font-size="{cell - 2}">…</text>')
    parts.append("</svg>")
    return "".join(parts)


def sparkline_svg(values: Sequence[float], log: bool = False, width: int = 160, height: int = 28) -> str:
    """A series as a small SVG line; ``log=True`` scales by log10; NaN and Inf are red marks at the top.

    The scaling is :func:`~microtape.sparkline`'s (that one draws bars of text):
    on a log scale, zeros sit at the bottom.

    Examples:
        >>> from microtape.views.html import sparkline_svg
        >>> svg = sparkline_svg([1.0, 10.0, float("inf"), 1e308], log=True)
        >>> svg.count("<polyline"), svg.count('fill="#dc2626"')
        (1, 1)
    """
    scaled = [(math.log10(v) if v > 0 else -math.inf) if log else v for v in values]
    finite = [v for v, raw in zip(scaled, values) if math.isfinite(v) and math.isfinite(raw)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 0.0)
    half_span = hi / 2 - lo / 2
    n = len(values)
    pad = 3.0

    def x_of(i: int) -> float:
        return pad + (width - 2 * pad) * (i / (n - 1) if n > 1 else 0.5)

    def y_of(v: float) -> float:
        place = (v / 2 - lo / 2) / half_span if half_span else 0.5
        return height - pad - (height - 2 * pad) * place

    points, marks = [], []
    for i, (v, raw) in enumerate(zip(scaled, values)):
        if not math.isfinite(raw):
            marks.append(f'<circle cx="{x_of(i):.1f}" cy="{pad:.1f}" r="2.5" fill="#dc2626"><title>{number(raw)}</title></circle>')
        else:
            y = y_of(v) if math.isfinite(v) else height - pad
            points.append(f"{x_of(i):.1f},{y:.1f}")
    line = f'<polyline points="{" ".join(points)}" fill="none" stroke="#2563eb" stroke-width="1.5"/>'
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(tr("sparkline"))}">{line}{"".join(marks)}</svg>'
    )


def _cell(value: object) -> str:
    if isinstance(value, float):
        return number(value)
    if isinstance(value, tuple):
        return escape(", ".join(str(v) for v in value) if value and isinstance(value[0], tuple) else str(value))
    text = str(value) if isinstance(value, (bool, int, str)) else repr(value)
    return escape(text if len(text) <= 80 else text[:77] + "...")


def record_html(record: object) -> str:
    """A dataclass as HTML: the first line of its ``str()``, its plain fields, then each list of records as a table.

    Used as ``_repr_html_`` of ``memory()``'s, ``profile()``'s and
    ``leak_check``'s results.

    Examples:
        >>> print(mt.memory()._repr_html_()[:32])
        <div style="font-family: ui-mono
    """
    plain: list[list[str]] = []
    tables: list[str] = []
    fields = dataclasses.fields(record) if dataclasses.is_dataclass(record) else ()
    for f in fields:
        value = getattr(record, f.name)
        if isinstance(value, list) and (not value or dataclasses.is_dataclass(value[0])):
            columns = [g.name for g in dataclasses.fields(value[0])] if value else [tr("(none)")]
            rows = [[_cell(getattr(item, c)) for c in columns] for item in value]
            tables.append(table(columns, rows, caption=f.name))
        else:
            plain.append([f'<span style="text-align: left">{escape(f.name)}</span>', _cell(value)])
    title = escape(str(record).split("\n", 1)[0])
    return (
        f'<div style="{FONT}"><div style="font-weight: bold; margin-bottom: 4px">{title}</div>'
        + (table([tr("field"), tr("value")], plain) if plain else "")
        + "".join(f'<div style="margin-top: 6px">{t}</div>' for t in tables)
        + "</div>"
    )


def _values_table(data: Sequence[float], rows: int, cols: int) -> str:
    """A ``rows × cols`` block of values as a table, cut to ``MAX_CELLS`` each way with "…"."""
    shown_r, shown_c = min(rows, MAX_CELLS), min(cols, MAX_CELLS)
    body = []
    for r in range(shown_r):
        cells = [number(data[r * cols + c]) for c in range(shown_c)]
        body.append(cells + (["…"] if cols > shown_c else []))
    if rows > shown_r:
        body.append(["…"] * (shown_c + (1 if cols > shown_c else 0)))
    header = [str(c) for c in range(shown_c)] + (["…"] if cols > shown_c else [])
    return table(header, body)


def tensor_html(kind: str, data: Sequence[float] | None, shape: Shape, extra: str = "") -> str:
    """A tensor's picture: shape, range and NaN/Inf counts, its values, and a heat map for 2-D.

    ``kind`` is the class name and ``extra`` what ``repr`` adds after the shape
    (a variable's name): both are escaped. Rank 3 and up print as ``repr`` does.

    Examples:
        >>> html = mt.tensor([[1.0, -2.0], [float("nan"), 4.0]])._repr_html_()
        >>> "<svg" in html, "1 NaN" in html
        (True, True)
    """
    head = f"{escape(kind)} shape={escape(shape)}{escape(extra)}"
    if data is None:
        return f'<div style="{FONT}"><b>{head}</b> {escape(tr("(disposed)"))}</div>'
    finite = [v for v in data if math.isfinite(v)]
    nans = sum(1 for v in data if v != v)
    infs = len(data) - len(finite) - nans
    facts = [tr("{0} entries").format(len(data))]  # the template translated first: the values are numbers
    if finite:
        facts.append(tr("range [{0}, {1}]").format(number(min(finite)), number(max(finite))))
    if nans:
        facts.append(f'<span style="color: #dc2626">{nans} NaN</span>')
    if infs:
        facts.append(f'<span style="color: #dc2626">{infs} Inf</span>')
    if len(shape) == 2 and data:
        body = (
            '<div style="display: flex; gap: 12px; align-items: flex-start">'
            f"{_values_table(data, shape[0], shape[1])}{heatmap(data, shape[0], shape[1])}</div>"
        )
    elif len(shape) <= 1:
        body = _values_table(data, 1, len(data)) if data else ""
    else:
        body = f"<pre>{escape(format_values(list(data), shape))}</pre>"
    return f'<div style="{FONT}"><div><b>{head}</b> · {", ".join(facts)}</div>{body}</div>'
