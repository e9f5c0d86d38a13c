"""Every op's pattern against its Jacobian, driven by the op table's samples (a new op is checked
as soon as it has samples): the explanation's edges into an input entry are exactly the output
entries the op connects to it, each with the Jacobian's entry as its local derivative; every
entry the Jacobian says is not 0 is an edge; and a path's contribution is its weight times that.

The Jacobian is ``tape.jacobian`` of the op alone (one backward pass per output entry), which
asks the VJP differently from the explanation (whole-tensor calls), so the two can disagree.
"""

from __future__ import annotations

import math

import pytest

import microtape as mt
from microtape.engine.primitive import OPS

from ..op_cases import ALL_CASES, Case, call, inputs_of

Tensor = mt.Tensor


def _jacobian(case: Case, xs: list[Tensor], slot: int) -> list[list[float]]:
    f = call(case)
    with mt.GradientTape() as tape:
        tape.watch(xs[slot])
        out = f(*xs)
    jac = tape.jacobian(out, xs[slot], unconnected_gradients="zero")
    assert jac is not None
    data = jac.data_sync()
    n = xs[slot].size
    return [data[j * n : (j + 1) * n] for j in range(out.size)]


@pytest.mark.parametrize("case", [c for c in ALL_CASES if OPS[c.name].differentiable], ids=str)
def test_the_explained_edges_are_the_jacobians_entries(case: Case) -> None:
    xs = inputs_of(case)
    f = call(case)
    out = f(*xs)
    weights = mt.tensor([1.0 + 0.25 * j for j in range(out.size)], out.shape if out.shape else None)

    def loss(*args: Tensor) -> Tensor:
        return (f(*args) * weights).sum()

    for slot, x in enumerate(xs):
        jac = _jacobian(case, xs, slot)
        for k in range(x.size):
            e = mt.explain_gradient(loss, xs, wrt=slot, index=k, top=10_000)
            assert not e.grouped
            found: dict[int, float] = {}
            for path in e.paths:
                assert [s.op for s in path.steps] == ["sum", "mul", case.name]  # the weights' sum and mul, then the op
                step = path.steps[-1]
                assert step.argument == slot and step.input_entry == _unflat(k, x.shape)
                j = _flat(step.entry, out.shape)
                assert j not in found  # one edge per pair of entries
                found[j] = step.local
                assert path.contribution == pytest.approx(weights.data_sync()[j] * step.local, rel=1e-12, nan_ok=True)
            for j, row in enumerate(jac):
                expected = row[k]
                if j in found:
                    assert found[j] == pytest.approx(expected, rel=1e-12, abs=1e-300, nan_ok=True), (j, k)
                else:
                    assert expected == 0.0, f"{case}: output entry {j} depends on input {slot}[{k}] (d = {expected}) but no path says so"
            total = math.fsum(weights.data_sync()[j] * row[k] for j, row in enumerate(jac))
            assert e.total == pytest.approx(total, rel=1e-12, abs=1e-15)


def _unflat(k: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for n in reversed(shape):
        out.append(k % n)
        k //= n
    return tuple(reversed(out))


def _flat(entry: tuple[int, ...], shape: tuple[int, ...]) -> int:
    k = 0
    for i, n in zip(entry, shape):
        k = k * n + i
    return k


EXTREMES = [
    Case("sqrt", ([0.0, 4.0, -1.0],)),
    Case("log", ([0.0, 1.0, -2.0],)),
    Case("div", ([1.0, 0.0, -1.0], [0.0, 0.0, 2.0])),
    Case("max", ([1.0, 1.0, 0.5],)),
    Case("max", ([[1.0, float("nan")], [2.0, 2.0]],), {"axis": 1}),
    Case("relu", ([0.0, -1.0, 2.0],)),
    Case("abs", ([0.0, -1.0, 2.0],)),
    Case("pow", ([0.0, -1.0, 2.0], [0.5, 2.0, -1.0])),
    Case("exp", ([1000.0, -1000.0, 0.0],)),
    Case("maximum", ([1.0, 2.0, 3.0], [1.0, 0.0, 5.0])),
    Case("where", ([1.0, 0.0, 1.0], [float("inf"), 1.0, 2.0], [3.0, float("nan"), 4.0])),
    Case("logsumexp", ([1000.0, -1000.0, 0.0],)),
    Case("matmul", ([[0.0, float("inf")], [1.0, 2.0]], [[float("nan"), 1.0], [0.0, 3.0]])),
]


@pytest.mark.parametrize("case", EXTREMES, ids=str)
def test_at_kinks_ties_and_non_finite_values_each_edge_is_the_jacobians_entry(case: Case) -> None:
    """Where a one-hot Jacobian row smears 0 * inf into entries the op does not connect, the
    explanation has no edge there; every edge it has carries the Jacobian's entry, NaN included."""
    xs = inputs_of(case)
    f = call(case)
    out = f(*xs)
    for slot, x in enumerate(xs):
        jac = _jacobian(case, xs, slot)
        grad = mt.grads(lambda *args: f(*args).sum())(xs)[slot].data_sync()
        for k in range(x.size):
            e = mt.explain_gradient(lambda *args: f(*args).sum(), xs, wrt=slot, index=k, top=10_000)
            assert e.total == grad[k] or (math.isnan(e.total) and math.isnan(grad[k]))
            edges = {_flat(p.steps[-1].entry, out.shape): p.steps[-1].local for p in e.paths}
            for j, row in enumerate(jac):
                if j in edges:
                    assert edges[j] == pytest.approx(row[k], rel=1e-12, nan_ok=True), (j, k)
                else:
                    assert row[k] == 0.0 or math.isnan(row[k]), (j, k, row[k])
