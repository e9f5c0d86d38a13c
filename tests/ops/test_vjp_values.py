"""The VJPs on values give the very floats the tensor VJPs give.

A first-order backward pass that nothing else watches runs each op's VJP on
flat lists (``Op.vjp_values``, ``backward.walk_values``) instead of its
tensor VJP. Both must agree bit for bit, NaN's sign included, or a
gradient would change with whether a profiler happens to be on. The op
table drives these tests, so a new VJP on values cannot go unchecked.
"""

from __future__ import annotations

import itertools
import math
import random
import struct
from collections.abc import Iterator, Sequence

import pytest

import microtape as mt
from microtape.core import runtime
from microtape.core.registry import OPS, Op
from microtape.core.runtime import DISPATCH

from ..op_cases import CASES, Case, call, inputs_of

WITH_VALUES = sorted(name for name, op in OPS.items() if op.vjp_values is not None)
SPECIAL = [0.0, -0.0, 1.0, -2.5, 1e308, -1e308, 5e-324, math.inf, -math.inf, math.nan, -math.nan]


@pytest.fixture(autouse=True)
def _dispose_what_each_test_left() -> Iterator[None]:
    before = set(runtime.LIVE)
    yield
    mt.dispose([t for i, t in list(runtime.LIVE.items()) if i not in before])


def bits(values: Sequence[float] | None) -> list[bytes] | None:
    return None if values is None else [struct.pack("<d", v) for v in values]


def both_vjps(op: Op, case: Case, xs: list[mt.Tensor], dout: list[float], needs: tuple[bool, ...]) -> tuple[list[list[bytes] | None], list[list[bytes] | None]]:
    """(tensor VJP's gradients, VJP on values' gradients) as bytes, for one call."""
    out = call(case)(*xs)
    assert op.vjp is not None and op.vjp_values is not None
    d = mt.tensor(dout).reshape(out.shape) if out.shape else mt.scalar(dout[0])
    with mt.GradientTape(persistent=True):  # another tape open: the tensor VJP runs as ops, as under higher orders
        grads = op.vjp(d, out, *xs, needs=needs, **case.params) if op.wants_needs else op.vjp(d, out, *xs, **case.params)
    values = op.vjp_values(dout, out, tuple(xs), needs, case.params)
    tensor_side = [bits(g.data_sync()) if g is not None and wanted else None for g, wanted in zip(grads, needs)]
    if values is None:  # handed to the tensor VJP: walk_values runs that one, nothing else to compare
        return tensor_side, tensor_side
    value_side = [bits(v) if v is not None and wanted else None for v, wanted in zip(values, needs)]
    return tensor_side, value_side


def test_the_ops_a_training_step_uses_have_vjps_on_values() -> None:
    assert {"add", "sub", "mul", "div", "neg", "tanh", "exp", "log", "relu", "sigmoid", "matmul", "sum", "reshape"} <= set(WITH_VALUES)


@pytest.mark.parametrize("name", WITH_VALUES)
def test_vjp_on_values_matches_the_tensor_vjp_bit_for_bit(name: str) -> None:
    op = OPS[name]
    rng = random.Random(name)
    for case in CASES[name]:
        for special in (False, True):
            xs = inputs_of(case)
            if special:  # the same shapes, entries drawn from the IEEE corner cases
                xs = [mt.tensor([rng.choice(SPECIAL) for _ in x.data_sync()]).reshape(x.shape) for x in xs]
            size = call(case)(*xs).size
            douts = [[rng.uniform(-3.0, 3.0) for _ in range(size)], [rng.choice(SPECIAL) for _ in range(size)]]
            for dout, needs in itertools.product(douts, itertools.product((True, False), repeat=len(xs))):
                if True not in needs:
                    continue
                want, got = both_vjps(op, case, xs, dout, needs)
                assert got == want, f"{case} needs={needs} special={special}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_on_values_matches_the_pass_on_tensors(name: str) -> None:
    """Every op, with a VJP on values or not: ``gradient()`` (on lists) against the
    steps of ``backward_steps`` (the same pass on tensors), bit for bit."""
    if not OPS[name].differentiable:
        pytest.skip(f"{name} is not differentiable: no backward pass to compare")
    for case in CASES[name]:
        xs = inputs_of(case)
        fn = DISPATCH["sum"]
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(xs)
            y = fn(mt.square(call(case)(*xs)))
        on_values = tape.gradient(y, xs)
        *_, last = tape.backward_steps(y, xs)
        on_tensors = last.accumulated
        assert isinstance(on_tensors, list)
        assert [bits(g.data_sync()) if g is not None else None for g in on_values] == [
            bits(g.data_sync()) if isinstance(g, mt.Tensor) else None for g in on_tensors
        ], str(case)
        tape.release()


def test_a_first_order_pass_makes_only_its_results() -> None:
    """A scalar chain of mul, add and tanh: gradient() makes one tensor, the result
    (ids only grow, so the ids it used count every tensor it made)."""
    x = mt.scalar(0.3)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for i in range(300):
            y = mt.tanh(y * 1.01 + 0.1) if i % 3 == 0 else y * 0.99 + 0.01
    first = runtime.next_id()
    g = tape.gradient(y, x)
    assert g is not None and runtime.next_id() - first == 2  # g, then the id taken to measure
    assert math.isfinite(g.item())
