"""The ``check_grads`` report as a picture for Jupyter: rows coloured by status, the culprit highlighted.

``GradCheckReport._repr_html_`` in ``gradcheck.py`` calls
``gradcheck_html``. ``str(report)`` stays the plain text it always was.
"""

from __future__ import annotations

import linecache
from collections.abc import Sequence

from ..views.html import BAD, FONT, GOOD, MARK, WARN, escape, number, table
from ..language import tr
from .numerical import Culprit, GradCheckRow

__all__ = ["gradcheck_html", "source_line"]

_STYLES = {"ok": GOOD, "FAIL": BAD, "kink": WARN, "inconclusive": WARN}


def source_line(where: str) -> str:
    """The text of the line ``where`` (``file:line``) names, or ``""`` when it cannot be read.

    Examples:
        >>> from microtape.checking.report_html import source_line
        >>> source_line("no such file.py:3"), source_line("<unknown>")
        ('', '')
    """
    path, _, line = where.rpartition(":")
    if not path or not line.isdigit():
        return ""
    return linecache.getline(path, int(line)).strip()


def gradcheck_html(
    headline: str, footer: str, rows: Sequence[GradCheckRow], culprit: Culprit | None, notes: Sequence[str],
    *, passed: bool, tests: str = "",
) -> str:
    """The report's HTML: its headline, the rows (worst first, coloured), the culprit and its line,
    in the language the text report is printed in (``passed`` colours the headline; ``tests`` is the
    line that says which test of ``modes`` failed).

    Examples:
        >>> report = mt.check_grads(mt.abs, [mt.tensor([0.0, 2.0])])
        >>> html = report._repr_html_()
        >>> [r.status for r in report.rows]
        ['kink', 'ok', 'ok', 'ok']
        >>> html.count('<tr style="background: #fef3c7">'), html.count('<tr style="background: #dcfce7">')
        (1, 3)
    """
    header = [tr(word) for word in ("input", "index", "out", "analytic", "numeric", "abs err", "rel err", "status")]
    cells = [
        [
            escape(r.test if r.test != "rev" else str(r.input)),
            escape(",".join(map(str, r.index)) or "()"),
            escape(",".join(map(str, r.output)) or "()"),
            number(r.analytic),
            number(r.numeric),
            escape(f"{r.abs_error:.2e}"),
            escape(f"{r.rel_error:.2e}"),
            f"<b>{escape(tr(r.status))}</b>" + ("" if r.order == 1 else escape(tr(" (order {order})").format(order=r.order))),
        ]
        for r in rows
    ]
    styles = [_STYLES.get(r.status, "") for r in rows]
    verdict = GOOD if passed else BAD
    parts = [
        f'<div style="{FONT}"><div style="{verdict}; padding: 4px 6px; font-weight: bold">{escape(headline)}</div>',
        f'<div style="margin: 4px 0">{escape(tests.strip())}</div>' if tests else "",
        table(header, cells, row_styles=styles) if rows else "",
        f'<div style="margin: 4px 0">{escape(footer)}</div>',
    ]
    if culprit is not None:
        lines = str(culprit).split("\n")
        code = source_line(culprit.where)
        parts.append(
            f'<div style="border-left: 4px solid #dc2626; padding: 4px 8px; margin: 4px 0">'
            f'<div style="{MARK}">{escape(lines[0])}</div>'
            + (f'<pre style="{MARK}; margin: 4px 0; padding: 2px 4px">{escape(code)}</pre>' if code else "")
            + "".join(f"<div>{escape(line.strip())}</div>" for line in lines[1:])
            + "</div>"
        )
    parts.extend(f'<div style="color: #52525b">{escape(tr("note"))}: {escape(tr(n))}</div>' for n in notes)
    parts.append("</div>")
    return "".join(parts)
