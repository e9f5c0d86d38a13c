"""The tape as a picture, drawn by microtape itself: the layered SVG of ``GradientTape.to_svg()``.

This module needs no Graphviz and no other program. It draws in
the classic four steps of a layered ("Sugiyama") drawing:

1. **Nodes.** One per record (its op, the output's shape, a summary of its
   values and, after ``gradient()``, the norm of the gradient that reached
   it), and one per tensor the ops read that no recorded op made: a watched
   tensor (yellow, as in ``to_dot()``), a variable (by its name, blue) or a
   constant (dashed).
2. **Layers, by longest path.** Records are already in topological order, so
   one pass puts each op one layer below its lowest input; each input then
   moves down to just above its first reader. Inputs are at the top, the
   loss at the bottom.
3. **Dummy nodes.** An edge that spans several layers passes through one
   invisible dummy per layer it crosses. The dummies take part in the
   ordering, so long edges bend around boxes instead of crossing them. The
   edges that leave one node share its dummies (a trunk going down, each
   edge branching off above its op), so a constant read by 300 ops of a
   chain costs one dummy per layer, not one per layer and reader.
4. **Order, then coordinates.** A few barycentre sweeps (down, then up)
   sort each layer by the mean position of its neighbours, and the order with
   the fewest edge crossings is kept: where a layering allows a drawing
   without crossings, a tree or a chain gets one. Then each layer is packed
   and its nodes pulled towards their neighbours without overlapping.

Everything is computed from the records in order, so the same tape gives
the same bytes. ``layout`` returns the boxes, so tests can check them.
"""

from __future__ import annotations

import math
from bisect import bisect_right, insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ..engine.formatting import format_number
from ..language import tr
from .html import FONT, escape, table
from ..engine.tensor import Tensor
from ..engine.variable import Variable
from ..engine.backward import Record
from .tape_text import leaf_names

__all__ = ["Box", "Layout", "layout", "summary_html", "svg"]

CHAR: Final = 6.6  # width of one character of the 11px monospace font
LINE: Final = 14.0  # height of one line of text
GAP_X: Final = 24.0  # between neighbouring boxes of a layer
GAP_Y: Final = 40.0  # between layers
MARGIN: Final = 16.0
DUMMY: Final = 6.0  # width a long edge takes where it passes a layer
MAX_CHARS: Final = 30  # longer lines (a long variable name) are cut with "…"
SWEEPS: Final = 4

_FILL: Final = {"op": "#f4f4f5", "watched": "#fde68a", "variable": "#dbeafe", "constant": "#ffffff"}


@dataclass(frozen=True, slots=True)
class Box:
    """One drawn node: its kind (``"op"``, ``"watched"``, ``"variable"``, ``"constant"``), text and place.

    Examples:
        >>> from microtape.views.tape_svg import Box
        >>> Box("op0", "op", ("#0 mul", "shape (2,)"), 1, 16.0, 60.0, 80.0, 38.0).kind
        'op'
    """

    key: str
    kind: str
    lines: tuple[str, ...]
    layer: int
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True, slots=True)
class Layout:
    """Where ``to_svg()`` puts everything: the boxes, the edges and the size (in SVG units), the crossings left.

    ``edges`` are the arrows into the ops, one per edge: from the bottom of its
    source's box, or from the point where it leaves its source's trunk;
    ``trunks`` are the shared vertical paths of long edges, drawn without arrows.

    Examples:
        >>> from microtape.views.tape_svg import layout
        >>> layout([], {}, {}, {}).boxes      # an empty tape: nothing to place
        ()
    """

    boxes: tuple[Box, ...]
    edges: tuple[tuple[tuple[float, float], ...], ...]
    trunks: tuple[tuple[tuple[float, float], ...], ...]
    width: float
    height: float
    crossings: int


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def _values(t: Tensor) -> str:
    """What a box says of a tensor's values: ``= 5.0`` for one entry, every entry (``[0.5, 1.0, 1.5, 2.0]``)
    when they fit on the box's line, else the range of the finite ones said as one
    (``min..max -7.837..12.25 of 64``), and after a ``;`` how many are NaN or Inf (a box draws that
    on a line of its own).

    Examples:
        >>> from microtape.views.tape_svg import _values
        >>> _values(mt.scalar(5.0)), _values(mt.tensor([0.5, 1.0, 1.5, 2.0]))
        ('= 5.0', '[0.5, 1.0, 1.5, 2.0]')
        >>> _values(mt.tensor([float(i) for i in range(64)]))
        'min..max 0.0..63.0 of 64'
    """
    data = t._data
    if data is None:
        return tr("<freed>")
    if not data:
        return tr("[] (empty)")
    if len(data) == 1:
        return "= " + format_number(data[0])
    every = "[" + ", ".join(format_number(v) for v in data) + "]"
    if len(every) <= MAX_CHARS:
        return every
    finite = [v for v in data if math.isfinite(v)]
    bad = len(data) - len(finite)
    text = (
        tr("min..max {low}..{high} of {count}").format(low=format_number(min(finite)), high=format_number(max(finite)), count=len(data))
        if finite
        else tr("no finite entry")
    )
    return text + (f"; {bad} nan/inf" if bad else "")


def _value_lines(t: Tensor) -> tuple[str, ...]:
    """``_values`` as a box draws it: the count of NaN and Inf on a line of its own."""
    return tuple(_cut(part) for part in _values(t).split("; "))


class _Graph:
    """Nodes (real and dummy), their layers and the edges between neighbouring layers, as plain lists."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.kinds: list[str] = []
        self.lines: list[tuple[str, ...]] = []
        self.layer: list[int] = []
        self.up: list[list[int]] = []  # neighbours in the layer above
        self.down: list[list[int]] = []  # neighbours in the layer below

    def add(self, key: str, kind: str, lines: tuple[str, ...], layer: int) -> int:
        self.keys.append(key)
        self.kinds.append(kind)
        self.lines.append(lines)
        self.layer.append(layer)
        self.up.append([])
        self.down.append([])
        return len(self.keys) - 1

    def width(self, n: int) -> float:
        if self.kinds[n] == "dummy":
            return DUMMY
        return max(60.0, max(len(line) for line in self.lines[n]) * CHAR + 16.0)

    def height(self, n: int) -> float:
        return 0.0 if self.kinds[n] == "dummy" else len(self.lines[n]) * LINE + 10.0


def _build(
    records: Sequence[Record], watched: Mapping[int, Tensor], variables: Mapping[int, Variable], grad_norms: Mapping[int, float]
) -> tuple[_Graph, list[list[int]], list[list[int]]]:
    """The graph with its longest-path layers, each edge as a chain of nodes (dummies inside), and the trunks."""
    producer: dict[int, int] = {}  # tensor id -> index of the record that made it
    leaf_of: dict[int, int] = {}  # tensor id -> its input node
    g = _Graph()
    names = leaf_names(records, watched, variables)
    op_node: list[int] = []
    inputs_of: list[list[int]] = []
    first_reader: dict[int, int] = {}  # input node -> layer of its highest reader
    for i, (op, inputs, _, out, _) in enumerate(records):
        sources: list[int] = []
        for x in inputs:
            if x.id in producer:
                n = op_node[producer[x.id]]
            elif x.id in leaf_of:
                n = leaf_of[x.id]
            else:
                v = variables.get(x.id)
                kind = "watched" if x.id in watched else "variable" if v is not None else "constant"
                name = names[x.id]
                shape = _cut(tr("shape {shape}").format(shape=x.shape))
                n = leaf_of[x.id] = g.add(f"t{len(leaf_of)}", kind, (_cut(name), shape, *_value_lines(x)), 0)
                first_reader[n] = len(records)
            if n not in sources:
                sources.append(n)
        norm = grad_norms.get(out.id)
        lines = [_cut(f"#{i} {op.name}"), _cut(tr("shape {shape}").format(shape=out.shape)), *_value_lines(out)]
        if norm is not None:
            lines.append(_cut(tr("|grad| {norm}").format(norm=format_number(norm))))
        layer = 1 + max((g.layer[s] for s in sources), default=0)
        op_node.append(g.add(f"op{i}", "op", tuple(lines), layer))
        for s in sources:
            if s in first_reader:
                first_reader[s] = min(first_reader[s], layer)
        producer[out.id] = i
        inputs_of.append(sources)
    for n, layer in first_reader.items():  # an input sits just above its highest reader
        g.layer[n] = layer - 1
    chains: list[list[int]] = []
    trunks: dict[int, list[int]] = {}  # source node -> its dummies, one per layer below it, shared by its edges

    def link(a: int, b: int) -> None:
        g.down[a].append(b)
        g.up[b].append(a)

    for i, srcs in enumerate(inputs_of):
        target = op_node[i]
        for s in srcs:
            trunk = trunks.setdefault(s, [])
            while g.layer[s] + len(trunk) + 1 < g.layer[target]:  # extend the trunk down to above the target
                d = g.add(f"d{len(g.keys)}", "dummy", (), g.layer[s] + len(trunk) + 1)
                link(trunk[-1] if trunk else s, d)
                trunk.append(d)
            chain = [s, *trunk[: g.layer[target] - g.layer[s] - 1], target]
            link(chain[-2], target)
            chains.append(chain)
    return g, chains, [[s, *trunk] for s, trunk in trunks.items() if trunk]


def _crossings(g: _Graph, layers: list[list[int]], pos: list[int]) -> int:
    """Edge crossings between neighbouring layers: inversions of the lower ends, edges sorted by their upper ends."""
    total = 0
    for layer in layers[:-1]:
        edges = sorted((pos[a], pos[b]) for a in layer for b in g.down[a])
        seen: list[int] = []
        for _, b in edges:
            total += len(seen) - bisect_right(seen, b)
            insort(seen, b)
    return total


def _order(g: _Graph) -> tuple[list[list[int]], int]:
    """Each layer's nodes left to right after barycentre sweeps, the order with the fewest crossings."""
    depth = max(g.layer) + 1
    layers: list[list[int]] = [[] for _ in range(depth)]
    for n in range(len(g.keys)):
        layers[g.layer[n]].append(n)
    pos = [0] * len(g.keys)

    def number() -> None:
        for layer in layers:
            for p, n in enumerate(layer):
                pos[n] = p

    number()
    best = [list(layer) for layer in layers]
    fewest = _crossings(g, layers, pos)
    for sweep in range(SWEEPS * 2):
        downward = sweep % 2 == 0
        for li in range(1, depth) if downward else range(depth - 2, -1, -1):
            def barycentre(n: int) -> float:
                near = g.up[n] if downward else g.down[n]
                return math.fsum(pos[m] for m in near) / len(near) if near else float(pos[n])

            layers[li].sort(key=barycentre)  # stable: ties keep their order
            for p, n in enumerate(layers[li]):
                pos[n] = p
        count = _crossings(g, layers, pos)
        if count < fewest:
            fewest, best = count, [list(layer) for layer in layers]
        if fewest == 0:
            break
    return best, fewest


def _closest(want: list[float], gaps: list[float]) -> list[float]:
    """Positions as close as possible (least squares) to ``want``, in order, with ``x[k+1] - x[k] >= gaps[k]``.

    With ``y[k] = x[k] - (gaps before k)`` the constraint is ``y`` non-decreasing:
    isotonic regression, solved by pooling adjacent violators (each pool sits at its mean).
    """
    offset, shifted = 0.0, []
    for k, v in enumerate(want):
        if k:
            offset += gaps[k - 1]
        shifted.append(v - offset)
    pools: list[list[float]] = []  # [sum, count]
    for v in shifted:
        pools.append([v, 1.0])
        while len(pools) > 1 and pools[-2][0] / pools[-2][1] > pools[-1][0] / pools[-1][1]:
            total, count = pools.pop()
            pools[-1][0] += total
            pools[-1][1] += count
    out, offset, k = [], 0.0, 0
    for total, count in pools:
        for _ in range(int(count)):
            if k:
                offset += gaps[k - 1]
            out.append(total / count + offset)
            k += 1
    return out


def _place(g: _Graph, layers: list[list[int]]) -> tuple[list[float], list[float]]:
    """Centre x of each node: packed, then moved as close as it can to its neighbours without overlapping.

    A neighbour pulls with weight 1 / (its own number of neighbours on this side), so an input read by
    twenty ops (a shared ``x``) does not drag all twenty towards itself.
    """
    cx = [0.0] * len(g.keys)
    w = [g.width(n) for n in range(len(g.keys))]
    for layer in layers:
        x = 0.0
        for n in layer:
            cx[n] = x + w[n] / 2
            x += w[n] + GAP_X
    for sweep in range(SWEEPS * 2 + 1):  # ending with a downward sweep: an op sits under its inputs
        downward = sweep % 2 == 0
        for li in range(1, len(layers)) if downward else range(len(layers) - 2, -1, -1):
            layer = layers[li]
            want = []
            for n in layer:
                near = g.up[n] if downward else g.down[n]
                weights = [1.0 / len(g.down[m] if downward else g.up[m]) for m in near]
                want.append(math.fsum(cx[m] * q for m, q in zip(near, weights)) / math.fsum(weights) if near else cx[n])
            gaps = [(w[a] + w[b]) / 2 + GAP_X for a, b in zip(layer, layer[1:])]
            for n, x in zip(layer, _closest(want, gaps)):
                cx[n] = x
    left = min(cx[n] - w[n] / 2 for n in range(len(g.keys)))
    cx = [x - left + MARGIN for x in cx]
    tops, y = [], MARGIN + 22.0  # room for the legend
    for layer in layers:
        tops.append(y)
        y += max(g.height(n) for n in layer) + GAP_Y
    return cx, tops


def layout(
    records: Sequence[Record], watched: Mapping[int, Tensor], variables: Mapping[int, Variable], grad_norms: Mapping[int, float]
) -> Layout:
    """Lay out the recorded graph: the boxes (dummies left out), the edges as polylines, the size.

    ``GradientTape.to_svg`` calls it with the tape's records, watched tensors,
    variables and gradient norms.

    Examples:
        >>> from microtape.views.tape_svg import layout
        >>> empty = layout([], {}, {}, {})
        >>> empty.width, empty.height, empty.crossings
        (460.0, 40.0, 0)
    """
    if not records:
        return Layout((), (), (), 460.0, 40.0, 0)
    g, chains, trunk_chains = _build(records, watched, variables, grad_norms)
    layers, crossings = _order(g)
    cx, tops = _place(g, layers)
    band = [max(g.height(n) for n in layer) for layer in layers]
    boxes = tuple(
        Box(g.keys[n], g.kinds[n], g.lines[n], g.layer[n], cx[n] - g.width(n) / 2, tops[g.layer[n]], g.width(n), g.height(n))
        for n in range(len(g.keys))
        if g.kinds[n] != "dummy"
    )

    def down_through(n: int) -> list[tuple[float, float]]:  # a node's own slot of its layer, top to bottom
        top = tops[g.layer[n]] + (g.height(n) if g.kinds[n] != "dummy" else 0.0)
        return [(cx[n], top), (cx[n], tops[g.layer[n]] + band[g.layer[n]])]

    def polyline(points: list[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
        return tuple(p for k, p in enumerate(points) if k == 0 or p != points[k - 1])

    trunks = tuple(polyline([p for n in chain for p in down_through(n)]) for chain in trunk_chains)
    edges = tuple(polyline([*down_through(chain[-2]), (cx[chain[-1]], tops[g.layer[chain[-1]]])]) for chain in chains)
    width = max(b.x + b.width for b in boxes) + MARGIN
    width = max(width, max((cx[n] + DUMMY for n in range(len(g.keys))), default=0.0) + MARGIN, 420.0)
    height = tops[-1] + band[-1] + MARGIN
    return Layout(boxes, edges, trunks, width, height, crossings)


def _f(v: float) -> str:
    return f"{v:.1f}"


def svg(lay: Layout, title: str, note: str = "") -> str:
    """The SVG text of a layout: a standalone document (``xmlns``, ``viewBox``, ``width``/``height``).

    Examples:
        >>> from microtape.views.tape_svg import layout, svg
        >>> print(svg(layout([], {}, {}, {}), "a <tape>").splitlines()[1])
        <title>a &lt;tape&gt;</title>
    """
    w, h = _f(lay.width), _f(lay.height)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="mt-tape" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" font-size="11" role="img" aria-label="{escape(tr(title))}">',
        f"<title>{escape(tr(title))}</title>",
        '<defs><marker id="mt-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto">'
        '<path d="M0,0 L8,4 L0,8 z" fill="#52525b"/></marker></defs>',
        f'<rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>',
    ]
    x = MARGIN
    for kind, label in (("watched", tr("watched")), ("variable", tr("variable")), ("constant", tr("constant")), ("op", tr("op"))):
        dash = ' stroke-dasharray="3 2"' if kind == "constant" else ""
        rx = ' rx="5"' if kind == "op" else ""
        out.append(f'<rect x="{_f(x)}" y="{_f(MARGIN - 8)}" width="12" height="10" fill="{_FILL[kind]}" stroke="#52525b"{rx}{dash}/>')
        out.append(f'<text x="{_f(x + 16)}" y="{_f(MARGIN + 1)}" fill="#3f3f46">{label}</text>')
        x += 28 + CHAR * len(label)
    if note or not lay.boxes:
        out.append(f'<text x="{_f(x + 8)}" y="{_f(MARGIN + 1)}" fill="#3f3f46">{escape(tr(note) if note else tr("no op recorded"))}</text>')
    for points in lay.trunks:
        path = " ".join(f"{_f(px)},{_f(py)}" for px, py in points)
        out.append(f'<polyline class="mt-trunk" points="{path}" fill="none" stroke="#52525b" stroke-width="1.2"/>')
    for points in lay.edges:
        path = " ".join(f"{_f(px)},{_f(py)}" for px, py in points)
        out.append(f'<polyline class="mt-edge" points="{path}" fill="none" stroke="#52525b" stroke-width="1.2" marker-end="url(#mt-arrow)"/>')
    last = max((b for b in lay.boxes if b.kind == "op"), key=lambda b: int(b.key[2:]), default=None)
    for b in lay.boxes:
        stroke, width = ("#1d4ed8", "2") if b is last else ("#52525b", "1")
        dash = ' stroke-dasharray="4 3"' if b.kind == "constant" else ""
        rx = ' rx="8"' if b.kind == "op" else ' rx="1"'
        out.append(
            f'<g class="mt-node" data-kind="{b.kind}" data-key="{b.key}">'
            f'<rect x="{_f(b.x)}" y="{_f(b.y)}" width="{_f(b.width)}" height="{_f(b.height)}"{rx} '
            f'fill="{_FILL[b.kind]}" stroke="{stroke}" stroke-width="{width}"{dash}/>'
        )
        for k, line in enumerate(b.lines):
            weight = ' font-weight="bold"' if k == 0 else ""
            fill = "#dc2626" if k >= 2 and ("nan" in line or "inf" in line) else "#18181b"
            out.append(
                f'<text x="{_f(b.x + b.width / 2)}" y="{_f(b.y + 16 + k * LINE)}" text-anchor="middle" fill="{fill}"{weight}>'
                f"{escape(line)}</text>"
            )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def summary_html(records: Sequence[Record], grad_norms: Mapping[int, float]) -> str:
    """The rows of ``summary()`` as an HTML table (what ``tape._repr_html_`` shows under the drawing).

    Examples:
        >>> from microtape.views.tape_svg import summary_html
        >>> "<table" in summary_html([], {})
        True
    """
    rows = [
        [str(i), escape(op.name), escape(out.shape), escape(_values(out)), "-" if out.id not in grad_norms else escape(format_number(grad_norms[out.id]))]
        for i, (op, _, _, out, _) in enumerate(records)
    ]
    return f'<div style="{FONT}">' + table(["#", tr("op"), tr("output shape"), tr("values"), tr("|grad out|")], rows) + "</div>"
