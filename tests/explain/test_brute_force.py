"""explain_gradient checked from outside: random small graphs whose paths are enumerated here by
brute force and compared with the explanation, entry by entry.

The reference knows nothing of microtape's explanation: each node of a random graph is one op
on earlier nodes, its pattern (which input entries each output entry reads) written here from
what the op means (broadcasting, reductions, matmul's rows and columns, where's three operands),
and each local derivative read from ``tape.jacobian`` of that op alone at its recorded inputs.
A path is a chain of such pairs from the output back to the explained entry; its contribution
the product of its factors. The explanation must count the same paths, list the same
contributions (the largest), sum the others into ``rest`` and give ``tape.gradient``'s entry.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest

import microtape as mt

Tensor = mt.Tensor
Shape = tuple[int, ...]


def _strides(shape: Shape) -> list[int]:
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


def _unravel(k: int, shape: Shape) -> tuple[int, ...]:
    idx = []
    for n in reversed(shape):
        idx.append(k % n)
        k //= n
    return tuple(reversed(idx))


def _size(shape: Shape) -> int:
    return math.prod(shape)


def broadcast_shape(a: Shape, b: Shape) -> Shape | None:
    """NumPy's broadcast of two shapes, or None."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(pa, pb)):
        return None
    return tuple(max(x, y) for x, y in zip(pa, pb))


def broadcast_reads(src: Shape, out: Shape) -> list[int]:
    """NumPy's rule, written out: out entry j reads src entry reads[j]."""
    pad = len(out) - len(src)
    st = _strides(src)
    found = []
    for j in range(_size(out)):
        idx = _unravel(j, out)[pad:]
        found.append(sum(0 if d == 1 else i * s for i, d, s in zip(idx, src, st)))
    return found


@dataclass
class Node:
    """One op of a random graph: its name, the nodes it reads, and the pattern of each operand."""

    op: str
    args: tuple[int, ...]
    call: Callable[..., Tensor]
    reads: Callable[[int, int], list[int]]
    """(output entry, operand number) -> the operand's entries it reads."""


def elementwise(op: str, call: Callable[..., Tensor], args: tuple[int, ...], shapes: list[Shape], out: Shape) -> Node:
    maps = [broadcast_reads(shapes[a], out) for a in args]
    return Node(op, args, call, lambda j, s: [maps[s][j]])


class Graph:
    """A random function of x (3,) and y (2, 3); every node kept, later nodes drawing on earlier ones."""

    def __init__(self, seed: int, n_ops: int, safe: bool = True) -> None:
        rng = random.Random(seed)
        self.nodes: list[Node] = []
        shapes: list[Shape] = [(3,), (2, 3)]
        for _ in range(n_ops):
            a = rng.randrange(len(shapes))
            b = rng.choice(range(max(0, len(shapes) - 4), len(shapes)))
            sa, sb = shapes[a], shapes[b]
            kind = rng.randrange(12)
            c = rng.uniform(-1.5, 1.5)
            both = broadcast_shape(sa, sb)
            if kind in (0, 1, 2) and both is not None:
                name, fn = [("add", mt.add), ("sub", mt.sub), ("mul", mt.mul)][kind]
                node, out = elementwise(name, fn, (a, b), shapes, both), both
            elif kind == 3:
                node, out = elementwise("tanh", mt.tanh, (a,), shapes, sa), sa
            elif kind == 4:
                node, out = elementwise("sin", mt.sin, (a,), shapes, sa), sa
            elif kind == 5 and sa == (2, 3):
                node = Node("sum", (a,), lambda t: t.sum(axis=0), lambda j, s: [j, 3 + j])
                out = (3,)
            elif kind == 6 and sa == (2, 3):
                node = Node("max", (a,), lambda t: t.max(axis=1), lambda j, s: [3 * j, 3 * j + 1, 3 * j + 2])
                out = (2,)
            elif kind == 7 and sa == (2, 3):
                w = mt.tensor([[rng.uniform(-1, 1) for _ in range(2)] for _ in range(3)])
                shapes.append((3, 2))
                self.nodes.append(Node("const", (), lambda w=w: w, lambda j, s: []))
                node = Node("matmul", (a, len(shapes) - 1), mt.matmul, lambda j, s: [3 * (j // 2) + k for k in range(3)] if s == 0 else [2 * k + j % 2 for k in range(3)])
                out = (2, 2)
            elif kind == 8 and sa == (2, 3):
                node = Node("transpose", (a,), lambda t: t.transpose(), lambda j, s: [3 * (j % 2) + j // 2])
                out = (3, 2)
            elif kind == 9 and not safe:
                node, out = elementwise("relu", mt.relu, (a,), shapes, sa), sa
            elif kind == 10 and sa == sb:  # where(a > 0, a, b): the comparison is a node of its own
                self.nodes.append(elementwise("greater", lambda t: t.greater(0.0), (a,), shapes, sa))
                shapes.append(sa)
                node = Node("where", (len(shapes) - 1, a, b), mt.where, lambda j, s: [j])
                out = sa
            else:
                node, out = elementwise("mul", lambda t, c=c: t * c, (a,), shapes, sa), sa
            self.nodes.append(node)
            shapes.append(out)
        self.shapes = shapes

    def run(self, x: Tensor, y: Tensor) -> tuple[Tensor, list[Tensor]]:
        values = [x, y]
        for node in self.nodes:
            values.append(node.call(*[values[a] for a in node.args]))
        last = values[-1]
        return last.sum() + values[-2].mean() * 0.5, values


def jacobian_of(call: Callable[..., Tensor], args: list[Tensor], which: int) -> list[list[float]]:
    """d call(*args) / d args[which], one row per output entry, from microtape's tape.jacobian of that op alone."""
    watched = args[which]
    args = [a if i == which or a is not watched else mt.tensor(a.data_sync(), a.shape) for i, a in enumerate(args)]  # x * x: one operand at a time
    with mt.GradientTape() as tape:
        tape.watch(watched)
        out = call(*args)
    jac = tape.jacobian(out, watched, unconnected_gradients="zero")
    assert jac is not None
    data = jac.data_sync()
    n_in = args[which].size
    return [data[j * n_in : (j + 1) * n_in] for j in range(out.size)]


def brute_force(graph: Graph, x: Tensor, y: Tensor, source: int, entry: int) -> list[float]:
    """Every path's contribution from the output back to node ``source``'s entry, by depth-first search."""
    _, values = graph.run(x, y)
    n = len(values)
    # the output is last.sum() + values[-2].mean() * 0.5: two more ops, written as node edges here
    edges: dict[tuple[int, int], list[tuple[tuple[int, int], float]]] = {}
    top = (n, 0)
    edges[top] = [((n - 1, j), 1.0) for j in range(values[-1].size)] + [((n - 2, j), 0.5 / values[-2].size) for j in range(values[-2].size)]
    for i, node in enumerate(graph.nodes, start=2):
        if node.op == "const":
            continue
        args = [values[a] for a in node.args]
        jacs = [jacobian_of(node.call, args, s) for s in range(len(args))]
        for j in range(values[i].size):
            found = edges.setdefault((i, j), [])
            for s, a in enumerate(node.args):
                for k in node.reads(j, s):
                    found.append(((a, k), jacs[s][j][k]))
    node_is = (source, entry)
    paths: list[float] = []
    stack = [(top, 1.0)]
    while stack:
        here, c = stack.pop()
        if here == node_is:
            paths.append(c)
            continue
        for child, local in edges.get(here, ()):
            stack.append((child, c * local))
    return paths


def inputs(seed: int) -> tuple[Tensor, Tensor]:
    rng = random.Random(500 + seed)
    return mt.tensor([rng.uniform(-1, 1) for _ in range(3)]), mt.tensor([[rng.uniform(-1, 1) for _ in range(3)] for _ in range(2)])


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("safe", [True, False])
def test_the_paths_are_the_ones_enumerated_by_brute_force(seed: int, safe: bool) -> None:
    graph = Graph(seed, 9, safe)
    x, y = inputs(seed)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        loss, _ = graph.run(x, y)
    for which, source in enumerate((x, y)):
        grad = tape.gradient(loss, source, unconnected_gradients="zero")
        assert grad is not None
        for k in range(source.size):
            expected = brute_force(graph, x, y, which, k)
            e = tape.explain(loss, source, index=k, top=4)
            assert e.path_count == len(expected) == (e.count if not e.grouped else e.path_count)
            assert e.connected == bool(expected)
            assert e.total == grad.data_sync()[k] or (math.isnan(e.total) and math.isnan(grad.data_sync()[k]))  # bit for bit
            listed = sorted(p.contribution for p in e.paths)
            largest = sorted(sorted(expected, key=lambda c: -abs(c))[: len(listed)])
            assert len(listed) == min(4, len(expected))
            assert all(_close(a, b) for a, b in zip(listed, largest)), (listed, largest)
            if expected:
                scale = math.fsum(abs(c) for c in expected)
                assert math.isclose(math.fsum([*listed, e.rest]), e.total, rel_tol=1e-12, abs_tol=1e-12 * scale)
                assert math.isclose(math.fsum(expected), e.total, rel_tol=1e-12, abs_tol=1e-12 * scale)
            for p in e.paths:
                assert p.contribution == math.prod(s.local for s in p.steps)
    tape.release()


@pytest.mark.parametrize("seed", range(6))
def test_grouped_explanations_split_the_same_total_and_dominant_is_the_largest_path(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from microtape.explain import paths

    graph = Graph(seed, 9)
    x, y = inputs(seed)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        loss, _ = graph.run(x, y)
    listed = [tape.explain(loss, y, index=k) for k in range(y.size)]
    monkeypatch.setattr(paths, "MAX_PATHS", 0)  # as if every graph had more than 10,000 paths
    grouped = [tape.explain(loss, y, index=k, top=2) for k in range(y.size)]
    tape.release()
    for k, (a, b) in enumerate(zip(listed, grouped)):
        if not a.connected:
            assert not b.connected
            continue
        assert b.grouped and b.total == a.total and b.path_count == a.path_count
        expected = brute_force(graph, x, y, 1, k)
        assert b.dominant is not None
        assert _close(abs(b.dominant.contribution), max(abs(c) for c in expected))
        scale = math.fsum(abs(p.contribution) for p in b.paths) + abs(b.rest)
        assert math.isclose(math.fsum([p.contribution for p in b.paths]) + b.rest, b.total, rel_tol=1e-12, abs_tol=1e-12 * scale)
