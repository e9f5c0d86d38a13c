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
from ..language import N_, tr
from ..engine.formatting import format_number
from ..engine.tensor import Tensor
from ..engine.variable import Variable

__all__ = ["Operation", "RankDir", "dot_graph", "leaf_names", "operations_of", "summary_table"]

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


def leaf_names(records: Sequence[Record], watched: Mapping[int, Tensor], variables: Mapping[int, Variable]) -> dict[int, str]:
    """A name for each tensor the records read that no record made: a variable's own name, else
    ``watched 1``, ``constant 1``, ``constant 2``, ... in the order the ops first read them, so the
    same program draws the same names in every process (a tensor's id depends on what ran before).

    Examples:
        >>> from microtape.views.tape_text import leaf_names
        >>> x = mt.tensor([1.0, 2.0])
        >>> with mt.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = (x * 3.0 + 1.0).sum()
        >>> sorted(leaf_names(tape._records, {x.id: x}, {}).values())
        ['constant 1', 'constant 2', 'watched 1']
    """
    made = {out.id for _, _, _, out, _ in records}
    names: dict[int, str] = {}
    counts = {"watched": 0, "constant": 0}
    for _, inputs, _, _, _ in records:
        for x in inputs:
            if x.id in made or x.id in names:
                continue
            v = variables.get(x.id)
            if v is not None:
                names[x.id] = v.name
                continue
            kind = "watched" if x.id in watched else "constant"
            counts[kind] += 1
            names[x.id] = (tr("watched {n}") if kind == "watched" else tr("constant {n}")).format(n=counts[kind])
    return names


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
                N_("to_dot(rankdir={0}) is not a Graphviz direction.").format(repr(rankdir)),
                N_('rankdir is "LR", "TB", "RL" or "BT".'),
                N_('use rankdir="TB" for a top-to-bottom drawing.'),
            ),
            value=rankdir,
        )
    lines = [
        f"digraph {_dot_id(title)} {{",
        f"  rankdir={rankdir};",
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    nodes: dict[int, str] = {}  # tensor id -> its node, numbered as first drawn: the same text in every process
    labels = leaf_names(records, watched, variables)
    for i, (op, _, _, out, _) in enumerate(records):
        labels.setdefault(out.id, f"#{i} {op.name}")  # an op's output, by the record that made it

    def tensor_node(t: Tensor) -> str:
        name = nodes.get(t.id)
        if name is None:
            name = nodes[t.id] = f"t{len(nodes)}"
            style = ', style=filled, fillcolor="#fde68a"' if t.id in watched else ""
            lines.append(f'  {name} [shape=box, label="{_dot_text(labels[t.id])}\\n{t.shape}"{style}];')
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
