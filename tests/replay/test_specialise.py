"""A replay's specialised kernels give the eager ops' floats bit for bit.

Each case is an op on arguments of ``mt.function`` (so nothing is folded
into a constant): the function is traced once, then replayed on many draws of
values, a third of them IEEE corner cases (both NaNs, both infinities, both
zeros, the largest finite numbers, so that ``fsum`` overflows and a division
meets zero). Every replay is compared with the same op run eagerly, as bytes.
Then the two things the compiler does besides: repeated op lines computed
once, and op lines on constants folded at trace time.
"""

from __future__ import annotations

import math
import random
import re
import struct
from collections.abc import Callable

import pytest

import microtape as mt
from microtape.engine.primitive import OPS
from microtape.engine.types import Shape
from microtape.replay.specialise import specialised

SPECIAL = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308, -1e308, 5e-324, 1.0, -1.0]

Case = tuple[str, Callable[..., mt.Tensor], list[Shape], dict[str, object]]
Binary = Callable[[mt.Tensor, mt.Tensor], mt.Tensor]

BROADCASTS: list[tuple[Shape, Shape]] = [((), ()), ((1,), (1,)), ((4, 3), (4, 3)), ((4, 3), (3,)), ((4, 3), (4, 1)), ((4, 3), ()), ((), (4, 3)), ((4, 1), (1, 3))]
BINARY: list[tuple[str, Binary]] = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b),
    ("greater", lambda a, b: mt.greater(a, b)),
]

CASES: list[Case] = [
    ("matmul", lambda a, b: a @ b, [(3, 1), (1, 4)], {}),
    ("matmul", lambda a, b: a @ b, [(1,), (1, 3)], {}),
    ("matmul", lambda a, b: a @ b, [(3, 2), (2, 4)], {}),
    ("matmul", lambda a, b: a @ b, [(2, 2), (2,)], {}),
    ("matmul", lambda a, b: a @ b, [(3, 5), (5, 2)], {}),
    ("matmul", lambda a, b: a @ b, [(5,), (5, 3)], {}),
    ("matmul", lambda a, b: a @ b, [(4, 3), (3,)], {}),
    *[
        (name, fn, list(shapes), {})
        for name, fn in BINARY
        for shapes in BROADCASTS
    ],
    ("relu", lambda a: mt.relu(a), [(4, 3)], {}),
    ("sum", lambda a: mt.sum(a, axis=0, keepdims=True), [(4, 3)], {"axis": 0, "keepdims": True}),
    ("sum", lambda a: mt.sum(a, axis=1), [(4, 3)], {"axis": 1, "keepdims": False}),
    ("sum", lambda a: mt.sum(a, axis=(0, 2)), [(2, 3, 4)], {"axis": (0, 2), "keepdims": False}),
    ("transpose", lambda a: mt.transpose(a), [(2, 3)], {"perm": None}),
    ("transpose", lambda a: mt.transpose(a, (1, 0, 2)), [(2, 3, 4)], {"perm": (1, 0, 2)}),
    ("broadcast_to", lambda a: mt.broadcast_to(a, (4, 3)), [(3,)], {"shape": (4, 3)}),
    ("broadcast_to", lambda a: mt.broadcast_to(a, (4, 3)), [(4, 1)], {"shape": (4, 3)}),
    ("clone", lambda a: mt.clone(a), [(4, 3)], {}),
]


def bits(values: list[float]) -> bytes:
    return struct.pack(f"<{len(values)}d", *values)


def draw(rng: random.Random, shape: Shape, special: float) -> mt.Tensor:
    n = math.prod(shape)
    data = [rng.choice(SPECIAL) if rng.random() < special else rng.gauss(0.0, 1.0) * 10.0 ** rng.randint(-3, 3) for _ in range(n)]
    return mt.tensor(data, shape=shape)


def result_shape(fn: Callable[..., mt.Tensor], shapes: list[Shape]) -> Shape:
    return mt.tidy(lambda: fn(*[mt.zeros(s) for s in shapes])).shape


@pytest.mark.parametrize(("name", "fn", "shapes", "params"), CASES, ids=[f"{c[0]}-{'-'.join(map(str, c[2]))}" for c in CASES])
def test_the_replay_of_a_specialised_op_is_the_eager_op_bit_for_bit(
    name: str, fn: Callable[..., mt.Tensor], shapes: list[Shape], params: dict[str, object]
) -> None:
    out_shape = result_shape(fn, shapes)
    if math.prod(out_shape) > 1:  # a one-entry result is written inline by program.py instead
        assert specialised(name, params, shapes, out_shape, eager=lambda *a: []) is not None
    step = mt.function(fn)
    rng = random.Random(f"{name}{shapes}")
    for trial in range(60):
        special = 0.0 if trial == 0 else (0.35 if trial % 3 else 0.9)
        inputs = [draw(rng, s, special) for s in shapes]
        if trial in (1, 2):  # two NaNs of opposite signs meet: which one comes out is part of the bits
            signs = [math.nan, -math.nan] if trial == 1 else [-math.nan, math.nan]
            inputs = [mt.fill(s, v) for s, v in zip(shapes, signs)]
        eager = mt.tidy(lambda: fn(*inputs))
        replayed = step(*inputs)
        assert replayed.shape == eager.shape
        assert bits(replayed.data_sync()) == bits(eager.data_sync()), ([t.data_sync() for t in inputs], replayed, eager)
        mt.dispose([*inputs, eager, replayed])
    assert step.traces == 1


def test_fsum_of_a_zero_is_positive_which_the_small_products_rely_on() -> None:
    # the inner sizes 1 and 2 of matmul skip fsum; they write ``or 0.0`` for its +0.0
    assert math.copysign(1.0, math.fsum([-0.0])) == 1.0
    assert math.copysign(1.0, math.fsum([-0.0, -0.0])) == 1.0


def counting(name: str, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the calls of an op's eager forward (what a replay runs for an op it does not specialise)."""
    calls = [0]
    op = OPS[name]
    forward = op.forward

    def counted(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        return forward(*args, **kwargs)

    monkeypatch.setattr(op, "forward", counted)
    return calls


def test_a_repeated_op_line_is_computed_once_per_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counting("exp", monkeypatch)

    @mt.function
    def step(x: mt.Tensor) -> mt.Tensor:
        return mt.exp(x) * mt.exp(x) + mt.exp(x)  # three equal lines: the same op, input and parameters

    x = mt.tensor([0.5, -1.0, 2.0])
    first = step(x)
    assert calls[0] == 3  # the trace runs the function eagerly
    assert len(step.program) == 3 + 4  # the listing keeps every line the trace met, and marks the repeats
    assert [re.sub(r" line \d+", "", line) for line in step.program.lines if " exp " in line] == [
        "  %1 = exp %0  # (3,)",
        "  %2 = exp %0  # (3,), repeats %1",
        "  %4 = exp %0  # (3,), repeats %1",
    ]
    again = step(x)
    assert calls[0] == 4  # the replay computes exp once
    assert again.data_sync() == first.data_sync() == mt.tidy(lambda: mt.exp(x) * mt.exp(x) + mt.exp(x)).data_sync()


def test_an_op_line_on_constants_is_folded_at_trace_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counting("exp", monkeypatch)
    c = mt.keep(mt.tensor([1.0, 2.0]))

    @mt.function
    def step(x: mt.Tensor) -> mt.Tensor:
        return x * mt.exp(c)  # exp of a tensor made outside: the same at every call

    x = mt.tensor([3.0, 4.0])
    first = step(x)
    assert calls[0] == 2  # the trace, then the fold while compiling
    for _ in range(3):
        assert step(x).data_sync() == first.data_sync()
    assert calls[0] == 2  # no replay runs it again
    assert [re.sub(r" line \d+", "", line) for line in step.program.lines if " exp " in line] == ["  %2 = exp %1  # (2,), folded"]
    c.dispose()


def test_a_folded_or_repeated_result_is_still_a_fresh_tensor() -> None:
    c = mt.keep(mt.tensor([1.0, 2.0]))

    @mt.function
    def step(x: mt.Tensor) -> tuple[mt.Tensor, mt.Tensor, mt.Tensor, mt.Tensor]:
        # a result on constants, and one that repeats a line on constants: computed at every call
        return mt.exp(c), mt.exp(c), mt.exp(x), mt.exp(x)

    x = mt.tensor([0.0, 1.0])
    first = step(x)
    a, a_again, b, d = step(x)
    assert a.data_sync() == a_again.data_sync() == [math.exp(1.0), math.exp(2.0)]
    assert b.data_sync() == d.data_sync() == [1.0, math.exp(1.0)]
    later = step(x)
    assert later[0]._data is not a._data and later[1]._data is not a_again._data  # no list shared between calls
    assert "folded" not in str(step.program)
    mt.dispose([*first, a, a_again, b, d, *later, c])
