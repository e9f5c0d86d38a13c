"""Looking at a tape as text: ``tape.operations``, the ``summary()`` table and the ``to_dot()`` Graphviz text.

Nothing here records or differentiates; it only renders the records a tape
keeps (``autodiff/gradient_tape.py``'s ``GradientTape`` calls these).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ..engine.primitive import Op
from ..engine.types import Shape
from ..errors import InvalidArgumentError, explain
from ..language import tr
from ..engine.formatting import format_number
from ..engine.tensor import Tensor
from ..engine.variable import Variable

__all__ = ["Operation", "RankDir", "dot_graph", "operations_of", "summary_table"]

RankDir: TypeAlias = Literal["LR", "TB", "RL", "BT"]
"""``to_dot(rankdir=...)``: Graphviz's layout direction (left to right, top to bottom, and their reverses)."""

Record = tuple[Op, tuple[Tensor, ...], dict[str, object], Tensor, tuple[bool, ...]]


@dataclass(frozen=True, slots=True)
class Operation:
    """One recorded op, as ``tape.operations`` shows it.

    Examples:
        >>> x = mt.tensor([1.0, 2.0])
        >>> with mt.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = (x * x).sum()
        >>> [op.name for op in tape.operations]
        ['mul', 'sum']
        >>> print(tape.operations[0])
        #0 mul((2,), (2,)) -> (2,)
    """

    index: int
    name: str
    input_shapes: tuple[Shape, ...]
    output_shape: Shape
    input_ids: tuple[int, ...]
    output_id: int

    def __str__(self) -> str:
        shapes = ", ".join(str(s) for s in self.input_shapes)
        return f"#{self.index} {self.name}({shapes}) -> {self.output_shape}"


def operations_of(records: Sequence[Record]) -> list[Operation]:
    """``tape.operations``: each record as an :class:`Operation`."""
    return [
        Operation(i, op.name, tuple(x.shape for x in inputs), out.shape, tuple(x.id for x in inputs), out.id)
        for i, (op, inputs, _, out, _) in enumerate(records)
    ]


def summary_table(records: Sequence[Record], grad_norms: Mapping[int, float]) -> str:
    """The text of ``GradientTape.summary()``: one row per record, with the gradient norms known so far."""
    rows = [("#", tr("op"), tr("output shape"), tr("value range"), tr("|grad out|"))]
    for i, (op, _, _, out, _) in enumerate(records):
        data = out._data
        if data is None:
            vrange = tr("<freed>")
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
