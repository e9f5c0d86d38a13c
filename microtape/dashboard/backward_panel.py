"""The "Backward" panel: the steps of one backward pass as a table on the page.

``Dashboard.log_backward`` hands ``rows_of`` the steps of
``tape.backward_steps``; they become plain strings at once (the tensors are
not kept), one row per VJP, so the page can be drawn from another thread and
served as strict JSON.
"""

from __future__ import annotations

from typing import Final

from .charts import esc
from ..engine.formatting import format_number
from ..engine.tensor import Tensor
from ..ops.floats import safe_norm
from ..explain.steps import BackwardStep, accumulated_text, tensor_text
from ..errors import InvalidArgumentError, explain
from ..language import N_, tr

__all__ = ["CELL_ENTRIES", "COLUMNS", "KEYS", "MAX_ROWS", "Row", "cell_text", "rows_of", "table"]

Row = tuple[str, str, str, str, str, str]
"""One step as text: step, op, line, incoming gradient, VJP's gradients, gradients so far."""

COLUMNS: Final = (N_("step"), N_("op"), N_("line"), N_("incoming gradient"), N_("VJP returned"), N_("gradients so far"))
KEYS: Final = ("step", "op", "where", "dout", "grads", "accumulated")
"""The same columns as keys of ``/data.json``'s rows (the names of ``BackwardStep``'s attributes)."""
CELL_ENTRIES: Final = 8
"""A gradient of at most this many entries is shown whole in a cell; a larger one by its norm."""
MAX_ROWS: Final = 200
"""A long pass (a recurrent net) keeps its first rows; the panel says how many were left out."""


def rows_of(steps: object) -> tuple[list[Row], int]:
    """The table rows of ``steps`` (an iterable of ``BackwardStep``), at most ``MAX_ROWS``,
    and how many steps there were; a value that is not such steps is refused before anything changes."""
    try:
        items = list(steps)  # type: ignore[call-overload]  # checked just below
    except TypeError:
        items = None
    if items is None or not all(isinstance(s, BackwardStep) for s in items):
        bad = type(steps).__name__ if items is None else next(type(s).__name__ for s in items if not isinstance(s, BackwardStep))
        raise InvalidArgumentError(
            explain(
                f"Dashboard.log_backward() needs the steps of a backward pass, got {bad}.",
                "The Backward panel shows one row per BackwardStep, as tape.backward_steps() yields them.",
                "dash.log_backward(tape.backward_steps(loss, sources)) with a tape that recorded the loss.",
            ),
            value=bad,
        )
    rows = [
        (str(s.index), s.op, s.where, cell_text(s.dout), ", ".join(cell_text(g) for g in s.grads), accumulated_text(s, text=cell_text))
        for s in items[:MAX_ROWS]
    ]
    return rows, len(items)


def cell_text(t: Tensor | None) -> str:
    """A gradient as a cell shows it: its values up to ``CELL_ENTRIES`` entries, else its shape and size.

    A recurrent net's matrices would fill the page and ``/data.json`` with
    thousands of numbers nobody reads in a table; their norm and largest
    entry say what the panel is for (where a gradient grows or vanishes).

    Examples:
        >>> cell_text(mt.tensor([1.0, -2.0]))
        '[1.0, -2.0]'
        >>> cell_text(mt.fill((8, 8), -0.5))
        '(8, 8): norm 4.0, max |g| 0.5'
    """
    data = None if t is None else t._data
    if t is None or data is None or t.size <= CELL_ENTRIES:
        return tensor_text(t)
    return tr("{shape}: norm {norm}, max |g| {top}").format(shape=t.shape, norm=format_number(safe_norm(data)), top=format_number(max(map(abs, data))))


def table(rows: list[Row], total: int, step: int | None) -> str:
    """The panel's HTML: a title, then the rows (every text escaped), or a line saying how to fill it."""
    at = tr(" (logged after step {step})").format(step=step) if step is not None else ""
    head = '<div class="mt-backward"><h2>' + esc(tr("Backward pass, one VJP a row") + at) + "</h2>"
    if not rows:
        return head + "<p>" + esc(tr("No backward pass logged yet:")) + " <code>dash.log_backward(tape.backward_steps(loss, sources))</code>.</p></div>"
    cells = "".join(f"<th>{esc(tr(c))}</th>" for c in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>" for row in rows)
    more = "<p>" + esc(tr("{n} more steps are left out.").format(n=total - len(rows))) + "</p>" if total > len(rows) else ""
    return f"{head}<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>{more}</div>"
