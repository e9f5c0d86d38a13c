"""``explain_gradient``: why one entry of a gradient has its value, path by path.

``GradientTape.explain`` (``autodiff/gradient_tape.py``) and ``explain_gradient``
(``functional.py``) call it. The chain rule says ``d out / d x[i]`` is a sum over every path from
the output to ``x[i]`` through the graph of (tensor, entry) nodes, each path the product of its
local derivatives. The work, each part linear in the size of the recorded graph:

1. the backward pass itself (``backward.walk``, as ``tape.gradient`` runs it): the total, bit for
   bit, and the gradient that reached every op's output;
2. forward from ``x[i]``, the entries that depend on it through each op's pattern (``links.py``);
3. back from the output, over those entries only, the edges, each with its local derivative,
   which ``links.py`` asks of the op's VJP in a few whole-tensor calls;
4. the number of paths (dynamic programming, exact), then either every path (at most
   ``MAX_PATHS``: the listed ones built in a second walk) or, past that, the gradient split by
   the edges into the ops that read ``x[i]``, with the largest single path found without listing;
5. what made the entry NaN, Inf or 0: the factor that is not finite and the 0 that met it, and
   the ops whose factor 0 stops the paths, with how many of their entries were 0.

All of it runs quietly (no tape records it, no observer sees it, its tensors stay outside the
arena), like ``gradient_norms`` in ``backward.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from ..engine.arena import STATE
from ..engine.backward import Record, walk
from ..engine.formatting import format_number
from ..engine.tensor import Grads, Tensor
from ..engine.primitive import Op
from ..engine.types import Shape
from ..engine.user_line import frame_text
from ..errors import InvalidArgumentError, ShapeError, TapeError, explain
from ..language import tr
from .links import Links, links_of
from .report import BlockedOp, GradientExplanation, GradientPath, GradientStep, line_words, through
from .source_text import SourceTexts

__all__ = ["MAX_PATHS", "GradientExplanation", "GradientPath", "GradientStep", "check_top", "explain_records", "fsum_of"]

MAX_PATHS: Final = 10_000
"""More paths than this are grouped by the edges into the ops that read the input (the one rule)."""
MAX_STORIES: Final = 5
"""At most this many sentences on where a NaN or an Inf came from."""
MAX_BLOCKED: Final = 8
"""At most this many ops that stop paths with a factor 0 (those with the most zeros)."""

Node = tuple[int, int]
"""(tensor id, flat entry)."""
Edge = tuple[Node, Node, float, bool, int, int]
"""(the output node, the input node, the local derivative, whether it blocks, the record's position, which input)."""


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


def fsum_of(values: Sequence[float]) -> float:
    """``math.fsum`` that gives what IEEE addition gives where fsum raises: NaN for inf + -inf,
    inf for a sum that overflows.

    Examples:
        >>> from microtape.explain.paths import fsum_of
        >>> fsum_of([0.1] * 10), fsum_of([float("inf"), -float("inf")]), fsum_of([1e308, 1e308])
        (1.0, nan, inf)
    """
    try:
        return math.fsum(values)
    except ValueError:  # -inf + inf
        return math.nan
    except OverflowError:  # finite values whose sum overflows: IEEE addition gives +-inf
        total = 0.0
        for v in values:
            total += v
        return total


def explain_records(
    records: Sequence[Record],
    wheres: Sequence[tuple[str, int] | None],
    tracked: set[int],
    target: object,
    source: object,
    index: object,
    top: object,
    label: str = "source",
    names: Mapping[int, str] | None = None,
) -> GradientExplanation:
    """The work of ``GradientTape.explain`` on a tape's records (``wheres``: each record's call site;
    ``tracked``: the ids the tape follows; ``names``: variables' names by id)."""
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
        return _Explainer(records, wheres, target, source, label, names or {}).run(index, n_top)
    finally:
        STATE.reset(token)


class _Explainer:
    """One explanation: the records, the graph of entries built from them, and the texts."""

    def __init__(
        self, records: Sequence[Record], wheres: Sequence[tuple[str, int] | None], target: Tensor, source: Tensor, label: str, names: Mapping[int, str]
    ) -> None:
        self.records = records
        self.wheres = wheres
        self.target = target
        self.source = source
        self.label = label
        self.names = names
        self.texts = SourceTexts()
        self.edges: dict[Node, list[Edge]] = {}
        self.order: list[tuple[int, list[int]]] = []
        """(record position, its output entries on paths), from the output back."""
        self.links: dict[int, Links] = {}
        self.douts: dict[int, list[float]] = {}
        self.made_by: dict[int, int] = {}
        self._steps: dict[tuple[int, int, int, int], GradientStep] = {}

    # -- the whole explanation -------------------------------------------------------

    def run(self, index: object, top: int) -> GradientExplanation:
        source, target, label = self.source, self.target, self.label
        values = self._backward()
        entry = _entry_index(index, source.shape, values, label)
        flat = _flat(entry, source.shape)
        total = values[flat]
        if source is target:
            return GradientExplanation(total, (GradientPath(1.0, ()),), 0.0, 1, False, True, label, entry, GradientPath(1.0, ()), 1)
        on_path = _records_between(self.records, target, source)
        end: Node = (source.id, flat)
        start: Node = (target.id, 0)
        if on_path:
            self._graph(on_path, flat)
        down = self._down(end)
        count = down.get(start, 0)
        notes = self._notes(count, total)
        if count == 0:
            return GradientExplanation(total, (), 0.0, 0, False, False, label, entry, None, 0, (), (), notes)
        blocked, stopped = self._blocked(start, end, down, count) if math.isfinite(total) else ((), 0)  # a 0 that met an Inf is in the stories
        if count <= MAX_PATHS:
            contributions = self._contributions(start, end, down)
            order = sorted(range(len(contributions)), key=lambda i: _rank(contributions[i]))
            chosen = order[:top]
            listed = self._listed(start, end, down, set(chosen))
            paths = tuple(listed[i] for i in chosen)
            rest = fsum_of([contributions[i] for i in order[top:]])
            dominant: GradientPath | None = paths[0]
            grouped, rows = False, len(contributions)
        else:
            split = self._split(end)
            ranked = sorted(split, key=lambda p: _rank(p.contribution))
            paths = tuple(ranked[:top])
            rest = fsum_of([p.contribution for p in ranked[top:]])
            dominant = self._dominant(start, end, down)
            grouped, rows = True, len(split)
        stories = _stories([*paths, *([dominant] if grouped and dominant is not None else [])], total)
        return GradientExplanation(total, paths, rest, rows, grouped, True, label, entry, dominant, count, blocked, stories, notes, stopped)

    def _backward(self) -> list[float]:
        """The backward pass of ``tape.gradient(target, source)``: the same walk over the same
        records, so the same numbers; the gradient that reached each op's output is kept."""
        douts = self.douts

        def keep(op: Op, out: Tensor, dout: Tensor, dxs: Grads, grads: dict[int, Tensor]) -> None:
            if dout._data is not None:
                douts[out.id] = dout._data

        (grad,) = walk(self.records, [self.target], [None], [self.source], False, (), keep)
        if grad is None or grad._data is None:
            return [0.0] * self.source.size
        return grad._data

    # -- the graph of entries -------------------------------------------------------------

    def _graph(self, on_path: list[int], flat: int) -> None:
        """Forward from source[flat] to the entries that depend on it; back from the output over
        those, the edges with their local derivatives."""
        records, source = self.records, self.source
        ahead: dict[int, set[int]] = {source.id: {flat}}
        for pos in on_path:
            _, inputs, _, out, needs = records[pos]
            self.made_by[out.id] = pos
            if out.id == source.id:
                continue
            hit: set[int] = set()
            for slot, (x, wanted) in enumerate(zip(inputs, needs)):
                entries = ahead.get(x.id)
                if wanted and entries:
                    links = self.links.get(pos)
                    if links is None:
                        links = self.links[pos] = links_of(records[pos])
                    hit |= links.forward(slot, entries)
            if hit:
                ahead[out.id] = hit
        live: dict[int, set[int]] = {self.target.id: {0} & ahead.get(self.target.id, set())}
        for pos in reversed(on_path):
            _, inputs, _, out, needs = records[pos]
            wanted_out = live.pop(out.id, None)
            if not wanted_out or out.id == source.id or pos not in self.links:
                continue
            links = self.links[pos]
            slots = [slot for slot, (x, w) in enumerate(zip(inputs, needs)) if w and x.id in ahead]
            js = sorted(wanted_out)
            links.prepare(js, slots)
            for j in js:
                row: list[Edge] = []
                for slot in slots:
                    x = inputs[slot]
                    reachable = ahead[x.id]
                    for k in links.reads(j, slot):
                        if k in reachable:
                            local, blocks = links.local(j, slot, k)
                            row.append(((out.id, j), (x.id, k), local, blocks, pos, slot))
                            live.setdefault(x.id, set()).add(k)
                self.edges[(out.id, j)] = row
            self.order.append((pos, js))

    def _down(self, end: Node) -> dict[Node, int]:
        """The number of paths from each node down to ``end`` (exact: Python's ints do not overflow)."""
        down: dict[Node, int] = {end: 1}
        for pos, js in reversed(self.order):
            oid = self.records[pos][3].id
            for j in js:
                n = 0
                for edge in self.edges[(oid, j)]:
                    n += down.get(edge[1], 0)
                if n:
                    down[(oid, j)] = n
        return down

    # -- listing the paths ------------------------------------------------------------

    def _walk(self, start: Node, end: Node, down: Mapping[Node, int], visit: Callable[[int, float, list[Edge]], None]) -> None:
        """Every path from ``start`` to ``end``, depth first, each with its contribution and edges."""
        stack: list[tuple[Node, float, int, Edge | None]] = [(start, 1.0, 0, None)]
        trail: list[Edge] = []
        n = 0
        while stack:
            node, c, depth, edge = stack.pop()
            if edge is not None:
                del trail[depth - 1 :]
                trail.append(edge)
            if node == end:
                visit(n, c, trail)
                n += 1
                continue
            for e in reversed(self.edges.get(node, ())):
                if down.get(e[1]):
                    stack.append((e[1], through(c, e[2], e[3]), depth + 1, e))

    def _contributions(self, start: Node, end: Node, down: Mapping[Node, int]) -> list[float]:
        found: list[float] = []
        self._walk(start, end, down, lambda n, c, trail: found.append(c))
        return found

    def _listed(self, start: Node, end: Node, down: Mapping[Node, int], chosen: set[int]) -> dict[int, GradientPath]:
        found: dict[int, GradientPath] = {}

        def visit(n: int, c: float, trail: list[Edge]) -> None:
            if n in chosen:
                found[n] = GradientPath(c, tuple(self._step(e) for e in trail))

        self._walk(start, end, down, visit)
        return found

    def _split(self, end: Node) -> list[GradientPath]:
        """The gradient at ``end`` split by the edges into it: the gradient that reached each op's
        output entry (from the backward pass) times that op's local derivative."""
        found: list[GradientPath] = []
        for pos, js in reversed(self.order):
            out = self.records[pos][3]
            dout = self.douts.get(out.id)
            for j in js:
                for e in self.edges[(out.id, j)]:
                    if e[1] == end:
                        up = 0.0 if dout is None else dout[j]
                        found.append(GradientPath(through(up, e[2], e[3]), (self._step(e),), up))
        return found

    def _dominant(self, start: Node, end: Node, down: Mapping[Node, int]) -> GradientPath | None:
        """The single path with the largest |contribution|, found without listing the paths: the
        largest sum of log|factor| from each node down to ``end`` (a factor that is not finite
        counts as largest), inputs before outputs; ties go to the first edge."""
        best: dict[Node, tuple[tuple[bool, float], Edge | None]] = {end: ((False, 0.0), None)}
        for pos, js in reversed(self.order):
            oid = self.records[pos][3].id
            for j in js:
                choice: tuple[tuple[bool, float], Edge | None] | None = None
                for e in self.edges[(oid, j)]:
                    below = best.get(e[1])
                    if below is None:
                        continue
                    v = e[2]
                    odd = not math.isfinite(v)
                    score = (below[0][0] or odd, below[0][1] + (0.0 if odd else math.log(abs(v)) if v != 0.0 else -math.inf))
                    if choice is None or score > choice[0]:
                        choice = (score, e)
                if choice is not None:
                    best[(oid, j)] = choice
        if start not in best:
            return None
        trail: list[Edge] = []
        c, node = 1.0, start
        while node != end:
            chosen = best[node][1]
            assert chosen is not None
            trail.append(chosen)
            c = through(c, chosen[2], chosen[3])
            node = chosen[1]
        return GradientPath(c, tuple(self._step(e) for e in trail))

    # -- why 0 ---------------------------------------------------------------------------

    def _blocked(self, start: Node, end: Node, down: Mapping[Node, int], count: int) -> tuple[tuple[BlockedOp, ...], int]:
        """The ops whose factor 0 stops paths, each with the number of paths that have a 0 there,
        and the number of paths with a 0 anywhere."""
        zeros: dict[int, int] = {}
        entries: dict[int, int] = {}
        for pos, js in self.order:
            oid = self.records[pos][3].id
            for j in js:
                for e in self.edges[(oid, j)]:
                    if down.get(e[1]):
                        entries[pos] = entries.get(pos, 0) + 1
                        if e[2] == 0.0:
                            zeros[pos] = zeros.get(pos, 0) + 1
        if not zeros:
            return (), 0
        stopped = count - self._paths_without(start, end, lambda e: e[2] == 0.0)
        found = []
        for pos in sorted(zeros, key=lambda q: (-zeros[q], q))[:MAX_BLOCKED]:
            n = count - self._paths_without(start, end, lambda e: e[4] == pos and e[2] == 0.0)  # noqa: B023 - called at once
            if not n:
                continue
            op = self.records[pos][0]
            site = self.texts.site(self.wheres[pos], op.name, op.n_inputs)
            found.append(BlockedOp(op.name, frame_text(self.wheres[pos]), site.expression, zeros[pos], entries[pos], n, n == count))
        return tuple(sorted(found, key=lambda b: -b.paths)), stopped

    def _paths_without(self, start: Node, end: Node, dropped: Callable[[Edge], bool]) -> int:
        """The number of paths from ``start`` to ``end`` that use no edge ``dropped`` picks."""
        down: dict[Node, int] = {end: 1}
        for pos, js in reversed(self.order):
            oid = self.records[pos][3].id
            for j in js:
                n = 0
                for e in self.edges[(oid, j)]:
                    if not dropped(e):
                        n += down.get(e[1], 0)
                if n:
                    down[(oid, j)] = n
        return down.get(start, 0)

    def _notes(self, count: int, total: float) -> tuple[str, ...]:
        """What microtape cannot know: an op without a pattern reads a 0 in its Jacobian as no edge."""
        blind = [pos for pos, links in self.links.items() if links.kind == "jacobian"]
        if not blind or (count and total != 0.0):
            return ()
        names = ", ".join(f"`{self.records[pos][0].name}` at {line_words(frame_text(self.wheres[pos]))}" for pos in sorted(blind)[:3])
        return (
            f"Inconclusive where a path would cross {names}: microtape knows no pattern for that op, so a 0 in its "
            "Jacobian reads as no edge there, and a path it blocks is not listed.",
        )

    # -- steps -----------------------------------------------------------------------

    def _step(self, e: Edge) -> GradientStep:
        """The step of an edge (made once, shared by the paths through it)."""
        (_, j), (xid, k), local, blocks, pos, slot = e
        key = (pos, j, slot, k)
        found = self._steps.get(key)
        if found is None:
            op, inputs, _, out, _ = self.records[pos]
            x = inputs[slot]
            site = self.texts.site(self.wheres[pos], op.name, op.n_inputs)
            data = x._data
            found = self._steps[key] = GradientStep(
                op.name, local, frame_text(self.wheres[pos]), _unflat(j, out.shape), slot, _unflat(k, x.shape),
                self._operand(x, site.operands, slot), None if data is None else data[k], blocks, site.expression,
            )  # fmt: skip
        return found

    def _operand(self, x: Tensor, texts: tuple[str, ...] | None, slot: int) -> str:
        """The input's name: the explained input's label, a variable's name, its text in the op's
        expression, or the text of the expression that made it."""
        if x.id == self.source.id:
            return self.label
        name = self.names.get(x.id)
        if name:
            return name
        if texts is not None and slot < len(texts):
            return texts[slot]
        pos = self.made_by.get(x.id)
        if pos is not None:
            op = self.records[pos][0]
            made = self.texts.site(self.wheres[pos], op.name, op.n_inputs).expression
            return made or tr("{op} at {line}").format(op=op.name, line=line_words(frame_text(self.wheres[pos])))
        return ""


def _rank(c: float) -> float:
    """Sort key: NaN first, then the largest magnitude."""
    return -math.inf if c != c else -abs(c)


def _stories(paths: Sequence[GradientPath], total: float) -> tuple[str, ...]:
    """Where each non-finite path's NaN or Inf came from, once per distinct sentence."""
    found: list[str] = []
    for path in paths:
        if math.isfinite(path.contribution):
            continue
        story = _story(path)
        if story and story not in found:
            found.append(story)
        if len(found) == MAX_STORIES:
            break
    if not math.isfinite(total) and not found:
        signs = {math.copysign(1.0, p.contribution) for p in paths if math.isinf(p.contribution)}
        if total != total and len(signs) == 2:
            found.append("paths of +inf and -inf add up to NaN")
        else:
            found.append(f"no listed path is {format_number(total)}: the paths left out carry it (ask for more rows with top=)")
    return tuple(found)


def _story(path: GradientPath) -> str:
    """The factor that is infinite or NaN and the 0 that met it, along one path, from the output back:
    '`sqrt` at line 7 has derivative inf at 0.0; `where` at line 8 passed 0.0 to it: 0·inf = NaN'."""
    c = path.upstream
    zero: GradientStep | None = None
    told = ""
    for step in path.steps:
        before = c
        c = through(c, step.local, step.blocks)
        if c == 0.0 and before != 0.0 and math.isfinite(before):
            zero = step
        if math.isfinite(c) or not math.isfinite(before):
            if c != c and math.isinf(before) and step.local == 0.0:  # an Inf, then a 0: NaN
                return f"{told}; `{step.op}` at {line_words(step.where)} has derivative 0.0{_at(step)}: {format_number(before)}·0 = NaN"
            continue
        here = f"`{step.op}` at {line_words(step.where)} has derivative {format_number(step.local)}{_at(step)}"
        if not math.isfinite(step.local):
            if before == 0.0:
                met = f"`{zero.op}` at {line_words(zero.where)} passed 0.0 to it" if zero is not None else "the gradient that reached it was 0.0"
                return f"{here}; {met}: 0·{format_number(step.local)} = NaN"
            told = here
        else:
            told = f"the product overflows at {here} (the gradient that reached it was {format_number(before)})"
        if c != c:
            return told
    return told


def _at(step: GradientStep) -> str:
    return "" if step.value is None else f" at {format_number(step.value)}"


def _records_between(records: Sequence[Record], target: Tensor, source: Tensor) -> list[int]:
    """Positions of the records on some path from ``source`` to ``target`` (tensor level), in order."""
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
