"""Looking at a tape: ``operations``, the ``summary()`` table, the ``to_dot()`` Graphviz text and the pictures.

Read after ``tape_svg.py`` (the drawing) and before ``tape.py``:
``GradientTape`` inherits these views from ``TapeViews``, which reads the
records a tape keeps. Nothing here records or differentiates; it only renders
what a tape holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..core.registry import Op
from ..errors import InvalidArgumentError, explain
from ..core.formatting import format_number
from ..core.tensor import Tensor
from ..core.variable import Variable
from .backward import gradient_norms
from .results import Operation
from .tape_svg import layout, summary_html, svg

__all__ = ["TapeViews", "dot_graph", "summary_table"]

Record = tuple[Op, tuple[Tensor, ...], dict[str, object], Tensor, tuple[bool, ...]]


class TapeViews:
    """What a :class:`~microtape.GradientTape` shows of its records: ``operations``, ``summary()``,
    ``to_dot()``, ``to_svg()`` and its pictures in Jupyter. ``GradientTape`` inherits them.

    Examples:
        >>> issubclass(mt.GradientTape, TapeViews)
        True
    """

    _records: list[Record]
    _watched: dict[int, Tensor]
    _variables: dict[int, Variable]
    _used: bool
    _last: tuple[list[Tensor], list[list[float] | None]] | None

    @property
    def operations(self) -> list[Operation]:
        """The recorded ops in order, each with its name, input shapes, output shape and ids.

        Examples:
            >>> w = mt.variable(mt.tensor([1.0, 2.0]), name="w_ops")
            >>> with mt.GradientTape() as tape:
            ...     loss = (w * 3.0).sum()
            >>> for op in tape.operations:
            ...     print(op)
            #0 mul((2,), ()) -> (2,)
            #1 sum((2,)) -> ()
        """
        return [
            Operation(i, op.name, tuple(x.shape for x in inputs), out.shape, tuple(x.id for x in inputs), out.id)
            for i, (op, inputs, _, out, _) in enumerate(self._records)
        ]

    def summary(self) -> str:
        """A table of the recorded ops with value ranges and, after ``gradient()``,
        the norm of the gradient that reached each op's output.

        Read it bottom-up to follow the gradient from the loss back to the
        inputs; a norm that shrinks towards 0 shows where gradients vanish.

        Examples:
            >>> x = mt.tensor([1.0, 2.0])
            >>> with mt.GradientTape(persistent=True) as tape:
            ...     tape.watch(x)
            ...     y = (x * x).sum()
            >>> _ = tape.gradient(y, x)
            >>> print(tape.summary())
            #   op    output shape   value range   |grad out|
            0   mul   (2,)           [1.0, 4.0]    1.414
            1   sum   ()             [5.0, 5.0]    1.0
        """
        return summary_table(self._records, gradient_norms(self._records, self._last))

    def to_dot(self, grad_norms: bool = True, title: str = "tape", rankdir: str = "LR") -> str:
        """Graphviz text of the recorded graph: tensors as boxes, ops as ellipses.

        After ``gradient()``, edges into an op's output carry the gradient
        norm that flowed back through them (``grad_norms=False`` hides them).
        ``rankdir`` is Graphviz's layout direction: ``"LR"`` (left to right,
        the default) or ``"TB"`` (top to bottom, better for long chains).
        Render with ``dot -Tsvg``, or in the book with ``.. graphviz::``.

        Examples:
            >>> x = mt.scalar(2.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = mt.exp(x)
            >>> print(tape.to_dot().splitlines()[0])
            digraph tape {
        """
        return dot_graph(
            self._records, self._watched, self._variables, gradient_norms(self._records, self._last) if grad_norms else {}, title, rankdir
        )

    def to_svg(self, grad_norms: bool = True, title: str = "tape") -> str:
        """Draw the recorded graph as a standalone SVG, laid out by microtape (no Graphviz needed).

        Inputs are at the top (watched tensors yellow, variables blue by name,
        constants dashed), the loss at the bottom; each op's box shows its
        output's shape, value range and, after ``gradient()``, the norm of the
        gradient that reached it (``grad_norms=False`` hides it). Edges cross
        only where the layering forces them to. A notebook shows the tape as
        this picture: Jupyter prefers ``_repr_html_`` to ``_repr_svg_``, so the
        tape's HTML is this drawing with the ``summary()`` table folded under
        it. ``to_dot()`` is still there for Graphviz users.

        Examples:
            >>> x = mt.scalar(2.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = mt.exp(x)
            >>> picture = tape.to_svg()
            >>> picture.startswith('<svg xmlns="http://www.w3.org/2000/svg"'), picture.count('class="mt-node"')
            (True, 2)
        """
        norms = gradient_norms(self._records, self._last) if grad_norms else {}
        return svg(layout(self._records, self._watched, self._variables, norms), title, "" if self._records or not self._used else "used: records freed")

    def _repr_svg_(self) -> str:  # for front ends that show SVG only
        return self.to_svg()

    def _repr_html_(self) -> str:
        # Jupyter prefers HTML over SVG: the drawing first, then the summary() table folded under it.
        norms = gradient_norms(self._records, self._last)
        table = summary_html(self._records, norms) if self._records else ""
        return self.to_svg() + (f"<details><summary>summary()</summary>{table}</details>" if table else "")


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
