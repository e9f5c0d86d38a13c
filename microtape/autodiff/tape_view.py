"""Looking at a tape: the ``summary()`` table and the ``to_dot()`` Graphviz text.

Read after ``tape.py``, whose ``GradientTape.summary`` and ``GradientTape.to_dot``
call these on the tape's records. Nothing here records or differentiates; it
only renders what a tape holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..core.registry import Op
from ..errors import InvalidArgumentError, explain
from ..core.formatting import format_number
from ..core.tensor import Tensor
from ..core.variable import Variable

__all__ = ["dot_graph", "summary_table"]

Record = tuple[Op, tuple[Tensor, ...], dict[str, object], Tensor, tuple[bool, ...]]


def summary_table(records: Sequence[Record], grad_norms: Mapping[int, float]) -> str:
    """The text of ``GradientTape.summary()``: one row per record, with the gradient norms known so far."""
    rows = [("#", "op", "output shape", "value range", "|grad out|")]
    for i, (op, _, _, out, _) in enumerate(records):
        data = out._data
        if data is None:
            vrange = "<freed>"
        elif data:
            vrange = f"[{format_number(min(data))}, {format_number(max(data))}]"
        else:
            vrange = "[]"
        norm = grad_norms.get(out.id)
        rows.append((str(i), op.name, str(out.shape), vrange, "-" if norm is None else format_number(norm)))
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    return "\n".join(
        "   ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows
    )


def dot_graph(
    records: Sequence[Record],
    watched: Mapping[int, Tensor],
    variables: Mapping[int, Variable],
    grad_norms: Mapping[int, float],
    title: str,
    rankdir: str,
) -> str:
    """The text of ``GradientTape.to_dot()``; ``grad_norms`` is empty when the norms are hidden.

    A record holds a variable's values as they were when the op ran, under the
    variable's id; ``variables`` gives the variable (so its name) for that id."""
    if rankdir not in ("LR", "TB", "RL", "BT"):
        raise InvalidArgumentError(
            explain(
                f"to_dot(rankdir={rankdir!r}) is not a Graphviz direction.",
                'rankdir is "LR", "TB", "RL" or "BT".',
                'use rankdir="TB" for a top-to-bottom drawing.',
            ),
            value=rankdir,
        )
    lines = [
        f"digraph {_dot_id(title)} {{",
        f"  rankdir={rankdir};",
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    seen: set[int] = set()

    def tensor_node(t: Tensor) -> str:
        name = f"t{t.id}"
        if t.id not in seen:
            seen.add(t.id)
            v = variables.get(t.id)
            label = _dot_text(v.name) if v is not None else f"#{t.id}"
            style = ', style=filled, fillcolor="#fde68a"' if t.id in watched else ""
            lines.append(f'  {name} [shape=box, label="{label}\\n{t.shape}"{style}];')
        return name

    for i, (op, inputs, _, out, _) in enumerate(records):
        node = f"op{i}"
        lines.append(f'  {node} [shape=ellipse, label="{_dot_text(op.name)}"];')
        for x in inputs:
            lines.append(f"  {tensor_node(x)} -> {node};")
        norm = grad_norms.get(out.id)
        edge = f' [label="|g|={format_number(norm)}"]' if norm is not None else ""
        lines.append(f"  {node} -> {tensor_node(out)}{edge};")
    lines.append("}")
    return "\n".join(lines)


def _dot_text(text: str) -> str:
    """``text`` inside a quoted DOT string: quotes and backslashes escaped, line breaks as ``\\n``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return escaped.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n")


def _dot_id(text: str) -> str:
    cleaned = "".join(c if c.isalnum() else "_" for c in text)
    return cleaned if cleaned and not cleaned[0].isdigit() else "g_" + cleaned
