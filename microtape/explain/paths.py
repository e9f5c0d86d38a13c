"""``explain_gradient``: why one entry of a gradient has its value, path by path.

``GradientTape.explain`` (``autodiff/gradient_tape.py``) and ``explain_gradient``
(``functional.py``) call it. The chain rule says ``d out / d x[i]`` is a sum over every path from
the output to ``x[i]`` through the graph of (tensor, entry) nodes, each path
the product of its local derivatives. This module finds those local
derivatives by asking each op's VJP about one output entry at a time (a
one-hot output gradient gives one row of the op's Jacobian), so broadcasting
and reductions need nothing special. It counts the paths first (dynamic
programming, no enumeration); when there are too many to list, it splits the
gradient by the edges into the ops that read ``x[i]`` instead: the gradient
that reached each op's output entry times that op's local derivative.

All of it runs quietly (no tape records it, no observer sees it, its tensors
stay outside the arena), like ``gradient_norms`` in ``backward.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from ..engine import arena
from ..ops.creation import fill
from ..engine.arena import STATE, new
from ..engine.tensor import Tensor
from ..engine.types import Shape
from ..errors import InvalidArgumentError, ShapeError, TapeError, explain
from ..engine.backward import Record
from .report import GradientExplanation, GradientPath, GradientStep

__all__ = ["GradientExplanation", "GradientPath", "GradientStep", "check_top", "explain_records"]

MAX_PATHS = 10_000
"""More paths than this are grouped by the edges into the ops that read the input."""
MAX_STEPS = 200_000
"""Nor are paths listed whose steps add up to more than this (a long chain with many branches)."""
MAX_WORK = 5_000_000
"""The one-hot VJPs of the exact walk may touch this many entries in all (out.size * (out.size + inputs' sizes) per op)."""

Node = tuple[int, int]
"""(tensor id, flat entry)."""
Edge = tuple[Node, float, int, int]
"""(the input node, the local derivative, the record's position, which of its inputs)."""


def check_top(top: object) -> int:
    """``top`` is a whole number of rows, at least 1."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise InvalidArgumentError(
            explain(
                f"explain: top={top!r} is not a number of paths to list.",
                "top is how many of the largest contributions get a row of their own (the rest are summed).",
                "pass a whole number of at least 1, such as top=10.",
            ),
            value=top,
        )
    return top


def explain_records(
    records: Sequence[Record],
    tracked: set[int],
    target: object,
    source: object,
    index: object,
    top: object,
    lines: Mapping[int, str] | None = None,
    label: str = "source",
) -> GradientExplanation:
    """The work of ``GradientTape.explain`` on a tape's records (``tracked``: the ids the tape follows)."""
    n_top = check_top(top)
    if not isinstance(target, Tensor):
        raise InvalidArgumentError(
            explain(f"explain: target must be a tensor, got {type(target).__name__}.", "The target is the scalar whose gradient is explained.", "pass the loss tensor computed inside the tape."),
            value=target,
        )
    if target.size != 1:
        raise ShapeError(
            explain(
                f"explain: the target has shape {target.shape} ({target.size} entries), not one number.",
                "A gradient entry is explained for a scalar output, such as a loss.",
                "reduce it first: tape.explain(y.sum(), x), or pick one entry: y[0].",
            ),
            shapes=(target.shape,),
        )
    if not isinstance(source, Tensor) or source.id not in tracked:
        what = f"Tensor#{source.id} (shape {source.shape})" if isinstance(source, Tensor) else type(source).__name__
        raise TapeError(
            explain(
                f"explain: the source {what} is not on this tape.",
                "Only tensors the tape watched (or trainable variables it read) have gradients.",
                "call tape.watch(x) inside the `with` block, before computing with x.",
            ),
            value=source,
        )
    token = STATE.set(STATE.get().replace(tapes=(), observers=(), backward=STATE.get().backward + 1, skip_arena=True))
    try:
        return _explain(records, target, source, index, n_top, lines or {}, label)
    finally:
        STATE.reset(token)


def _explain(
    records: Sequence[Record], target: Tensor, source: Tensor, index: object, top: int, lines: Mapping[int, str], label: str
) -> GradientExplanation:
    if source is target:
        entry = _entry_index(index, source.shape, [1.0], label)
        return GradientExplanation(1.0, (GradientPath(1.0, ()),), 0.0, 1, False, True, label, entry, GradientPath(1.0, ()))
    on_path, connected = _records_between(records, target, source)
    if not connected:
        entry = _entry_index(index, source.shape, [0.0] * source.size, label)
        return GradientExplanation(0.0, (), 0.0, 0, False, False, label, entry, None)
    seen: dict[int, str] = {}
    observers = bool(STATE.get().observers)

    def where(t: Tensor) -> str:
        found = seen.get(t.id)
        if found is None:
            found = seen[t.id] = lines.get(t.id) or (observers and arena.origin_of(t)) or "?"
        return found

    work = 0
    for i in on_path:
        _, inputs, _, out, _ = records[i]
        work += out.size * (out.size + sum([x.size for x in inputs]))
    paths: list[GradientPath] | None = None
    if work <= MAX_WORK:
        edges, adjoint = _jacobian_edges(records, on_path, target, source)
        values = [adjoint.get((source.id, k), 0.0) for k in range(source.size)]
        entry = _entry_index(index, source.shape, values, label)
        flat = _flat(entry, source.shape)
        paths = _paths(records, on_path, edges, (target.id, 0), (source.id, flat), where)
        if paths is None:
            paths = _split(records, on_path, edges, adjoint, (source.id, flat), where)
            dominant = _dominant(records, on_path, edges, (target.id, 0), (source.id, flat), where)
            grouped = True
        else:
            grouped = False
    else:  # tensors too large for one Jacobian row per entry: one backward pass, then the edges into the source
        grads = _adjoints(records, on_path, target, source)
        grad = grads.get(source.id)
        values = grad._data if grad is not None and grad._data is not None else [0.0] * source.size
        entry = _entry_index(index, source.shape, values, label)
        flat = _flat(entry, source.shape)
        paths, grouped, dominant = _groups(records, on_path, grads, source, flat, where), True, None
    total = values[flat]
    key: Callable[[GradientPath], float] = lambda p: -math.inf if math.isnan(p.contribution) else -abs(p.contribution)
    ranked = sorted(paths, key=key)
    rest = math.fsum([p.contribution for p in ranked[top:]])
    if not grouped:
        dominant = ranked[0] if ranked else None
    return GradientExplanation(total, tuple(ranked[:top]), rest, len(paths), grouped, True, label, entry, dominant)


def _records_between(records: Sequence[Record], target: Tensor, source: Tensor) -> tuple[list[int], bool]:
    """Positions of the records on some path from ``source`` to ``target`` (tensor level), in
    order, and whether there is such a path at all."""
    ahead = {source.id}
    sid = source.id
    for _, inputs, _, out, needs in records:
        if out.id == sid:
            continue
        for x, w in zip(inputs, needs):
            if w and x.id in ahead:
                ahead.add(out.id)
                break
    behind = {target.id}
    found: list[int] = []
    for i in range(len(records) - 1, -1, -1):
        _, inputs, _, out, needs = records[i]
        oid = out.id
        if oid in behind and oid in ahead and oid != sid:
            found.append(i)
            for x, w in zip(inputs, needs):
                if w:
                    behind.add(x.id)
    found.reverse()
    return found, sid in behind


def _vjp(record: Record, dout: Tensor) -> tuple[Tensor | None, ...]:
    op, inputs, params, out, needs = record
    vjp = op.vjp
    assert vjp is not None  # only differentiable ops are recorded
    if op.wants_needs:
        return tuple(vjp(dout, out, *inputs, needs=needs, **params))
    return tuple(vjp(dout, out, *inputs, **params))


def _adjoints(records: Sequence[Record], on_path: list[int], target: Tensor, source: Tensor) -> dict[int, Tensor]:
    """The gradient that reaches each tensor on the path, by id: the backward pass of
    ``backward.walk`` (same ops, same order, so the source's is ``tape.gradient``'s)."""
    grads: dict[int, Tensor] = {target.id: fill(target.shape, 1.0)}
    for i in reversed(on_path):
        record = records[i]
        inputs, out, needs = record[1], record[3], record[4]
        dout = grads.get(out.id)
        if dout is None:
            continue
        for x, dx, wanted in zip(inputs, _vjp(record, dout), needs):
            if dx is None or not wanted:
                continue
            prev = grads.get(x.id)
            grads[x.id] = dx if prev is None else prev + dx
    return grads


def _one_hot(size: int, j: int, shape: Shape) -> Tensor:
    data = [0.0] * size
    data[j] = 1.0
    return new(Tensor, data, shape, "one_hot")


def _jacobian_edges(
    records: Sequence[Record], on_path: list[int], target: Tensor, source: Tensor
) -> tuple[dict[int, dict[int, list[Edge]]], dict[Node, float]]:
    """For each record on the path, by position: for each output entry the target
    reaches, its nonzero local derivatives (one-hot VJPs, one Jacobian row each);
    and the gradient that reaches each node (the chain rule over those rows)."""
    keep = {records[i][3].id for i in on_path} | {source.id}
    reached: dict[int, set[int]] = {target.id: {0}}
    adjoint: dict[Node, float] = {(target.id, 0): 1.0}
    edges: dict[int, dict[int, list[Edge]]] = {}
    for i in reversed(on_path):
        record = records[i]
        inputs, out, needs = record[1], record[3], record[4]
        raw: list[tuple[int, list[tuple[int, Tensor, list[float]]]]] = []
        for j in sorted(reached.pop(out.id, ())):
            found = [
                (slot, x, dx._data)
                for slot, (x, dx, wanted) in enumerate(zip(inputs, _vjp(record, _one_hot(out.size, j, out.shape)), needs))
                if dx is not None and wanted and x.id in keep and dx._data is not None
            ]
            raw.append((j, found))
        solid = _solid(raw)
        rows: dict[int, list[Edge]] = {}
        for j, found in raw:
            row: list[Edge] = []
            up = adjoint[(out.id, j)]
            for slot, x, data in found:
                hit = reached.setdefault(x.id, set())
                for k, v in enumerate(data):
                    if v != 0.0 and (v == v or (slot, k) not in solid):
                        row.append(((x.id, k), v, i, slot))
                        hit.add(k)
                        adjoint[(x.id, k)] = adjoint.get((x.id, k), 0.0) + up * v
            rows[j] = row
        edges[i] = rows
    return edges, adjoint


def _solid(raw: list[tuple[int, list[tuple[int, Tensor, list[float]]]]]) -> set[tuple[int, int]]:
    """The (input, entry) pairs that some Jacobian row gives a number (not NaN, not 0). A one-hot
    row has zeros for the other output entries, and 0 * inf is NaN: ``sqrt`` at [0, 4] gives
    the row of out[1] a NaN for x[0]. A NaN at a pair another row gives a number is that,
    not a derivative."""
    return {(slot, k) for _, found in raw for slot, _, data in found for k, v in enumerate(data) if v == v and v != 0.0}


def _dominant(
    records: Sequence[Record],
    on_path: list[int],
    edges: dict[int, dict[int, list[Edge]]],
    start: Node,
    end: Node,
    where: Callable[[Tensor], str],
) -> GradientPath | None:
    """The single path with the largest |contribution| (a NaN or infinite factor counts as
    largest), found without listing the paths: the largest sum of log|factor| from each
    node down to ``end``, inputs before outputs; ties go to the first edge."""
    best: dict[Node, tuple[float, Edge | None]] = {end: (0.0, None)}
    for i in on_path:
        oid = records[i][3].id
        for j, row in edges[i].items():
            choice: tuple[float, Edge | None] | None = None
            for edge in row:
                below = best.get(edge[0])
                if below is None:
                    continue
                v = abs(edge[1])
                score = below[0] + (math.inf if v != v or v == math.inf else math.log(v))
                if choice is None or score > choice[0]:
                    choice = (score, edge)
            if choice is not None:
                best[(oid, j)] = choice
    if start not in best:
        return None
    shape_of = {records[i][3].id: records[i][3].shape for i in on_path}
    steps: list[GradientStep] = []
    product, node = 1.0, start
    while node != end:
        chosen = best[node][1]
        assert chosen is not None
        child, v, i, slot = chosen
        op, inputs, _, out, _ = records[i]
        steps.append(GradientStep(op.name, v, where(out), _unflat(node[1], shape_of[node[0]]), slot, _unflat(child[1], inputs[slot].shape)))
        product *= v
        node = child
    return GradientPath(product, tuple(steps))


def _split(
    records: Sequence[Record],
    on_path: list[int],
    edges: dict[int, dict[int, list[Edge]]],
    adjoint: Mapping[Node, float],
    end: Node,
    where: Callable[[Tensor], str],
) -> list[GradientPath]:
    """The gradient at ``end`` split by the edges into it: the gradient that reached
    each op's output entry times that op's local derivative."""
    found: list[GradientPath] = []
    for i in on_path:
        op, inputs, _, out, _ = records[i]
        for j, row in edges[i].items():
            for child, v, _, slot in row:
                if child == end:
                    up = adjoint[(out.id, j)]
                    step = GradientStep(op.name, v, where(out), _unflat(j, out.shape), slot, _unflat(end[1], inputs[slot].shape))
                    found.append(GradientPath(up * v, (step,), up))
    return found


def _paths(
    records: Sequence[Record],
    on_path: list[int],
    edges: dict[int, dict[int, list[Edge]]],
    start: Node,
    end: Node,
    where: Callable[[Tensor], str],
) -> list[GradientPath] | None:
    """Every path from ``start`` to ``end``, or None when they are too many to list."""
    count: dict[Node, int] = {end: 1}
    steps: dict[Node, int] = {end: 0}
    for i in on_path:  # inputs before outputs: count the paths from each node down to ``end``
        oid = records[i][3].id
        for j, row in edges[i].items():
            c = s = 0
            for child, _, _, _ in row:
                cc = count.get(child)
                if cc:
                    c += cc
                    s += steps[child] + cc
            if c:
                count[(oid, j)] = min(c, MAX_PATHS + 1)
                steps[(oid, j)] = min(s, MAX_STEPS + 1)
    n = count.get(start, 0)
    if n > MAX_PATHS or steps.get(start, 0) > MAX_STEPS:
        return None
    shape_of = {records[i][3].id: records[i][3].shape for i in on_path}
    found: list[GradientPath] = []
    stack: list[tuple[Node, float, tuple[GradientStep, object] | None]] = [(start, 1.0, None)]
    by_node = {(records[i][3].id, j): row for i in on_path for j, row in edges[i].items()}
    while stack:
        node, product, link = stack.pop()
        if node == end:
            chain: list[GradientStep] = []
            while link is not None:
                chain.append(link[0])
                link = link[1]  # type: ignore[assignment]  # a cons list of steps
            found.append(GradientPath(product, tuple(reversed(chain))))
            continue
        for child, v, i, slot in reversed(by_node.get(node, [])):
            if not count.get(child):
                continue
            op, inputs, _, out, _ = records[i]
            step = GradientStep(op.name, v, where(out), _unflat(node[1], shape_of[node[0]]), slot, _unflat(child[1], inputs[slot].shape))
            stack.append((child, product * v, (step, link)))
    return found


def _groups(
    records: Sequence[Record], on_path: list[int], adjoints: Mapping[int, Tensor], source: Tensor, flat: int, where: Callable[[Tensor], str]
) -> list[GradientPath]:
    """``_split`` from a backward pass's gradients, for tensors too large for ``_jacobian_edges``."""
    found: list[GradientPath] = []
    for i in on_path:
        record = records[i]
        inputs, out, needs = record[1], record[3], record[4]
        if not any(w and x.id == source.id for x, w in zip(inputs, needs)):
            continue
        dout = adjoints.get(out.id)
        if dout is None or dout._data is None:
            continue
        raw: list[tuple[int, list[tuple[int, Tensor, list[float]]]]] = []
        for j, up in enumerate(dout._data):
            if up != 0.0:
                rows = zip(inputs, _vjp(record, _one_hot(out.size, j, out.shape)), needs)
                raw.append((j, [(slot, x, dx._data) for slot, (x, dx, w) in enumerate(rows) if dx is not None and w and x.id == source.id and dx._data is not None]))
        solid = _solid(raw)
        for j, row in raw:
            up = dout._data[j]
            for slot, _, data in row:
                v = data[flat]
                if v != 0.0 and (v == v or (slot, flat) not in solid):
                    step = GradientStep(record[0].name, v, where(out), _unflat(j, out.shape), slot, _unflat(flat, source.shape))
                    found.append(GradientPath(up * v, (step,), up))
    return found


def _entry_index(index: object, shape: Shape, values: list[float], label: str) -> tuple[int, ...]:
    """``index`` as a tuple into ``shape``; None picks the entry with the largest |gradient|."""
    size = len(values)
    if index is None:
        if size == 0:
            raise InvalidArgumentError(
                explain(f"explain: {label} has shape {shape}, with no entries.", "A gradient entry needs an entry of the input.", "explain the gradient of an input with at least one entry."),
                value=index,
            )
        best = max(range(size), key=lambda k: math.inf if math.isnan(values[k]) else abs(values[k]))
        return _unflat(best, shape)
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < size:
        return _unflat(index, shape)
    if isinstance(index, tuple) and len(index) == len(shape) and all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i, n in zip(index, shape)):
        return tuple(index)
    raise InvalidArgumentError(
        explain(
            f"explain: index={index!r} is not an entry of {label}, which has shape {shape} ({size} entries).",
            "index is a flat position (an int from 0) or a tuple with one int per dimension, inside the shape.",
            f"pass an int from 0 to {size - 1}, a tuple such as {tuple(0 for _ in shape)}, or None for the largest entry." if size else "this input has no entries.",
        ),
        value=index,
    )


def _flat(entry: tuple[int, ...], shape: Shape) -> int:
    k = 0
    for i, n in zip(entry, shape):
        k = k * n + i
    return k


def _unflat(k: int, shape: Shape) -> tuple[int, ...]:
    if not shape:
        return ()
    out: list[int] = []
    for n in reversed(shape):
        out.append(k % n)
        k //= n
    return tuple(reversed(out))
