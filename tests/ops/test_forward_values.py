"""Forward values of every op's sample inputs, checked against ``math`` and nothing of microtape's.

The doctests show a few values and the gradient tests compare the engine with
itself (central differences of its own forward pass), so a wrong forward
value with a matching VJP would pass both. Here each op has a reference
written again from its definition, on flat lists with ``math`` (broadcasting,
axes and all), and every case of ``tests/op_cases.py`` must agree with it.
The op table drives the test: a new op without a reference fails.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

import pytest

from microtape.engine.primitive import OPS

from ..op_cases import ALL_CASES, Case, call, inputs_of

Shape = tuple[int, ...]
Array = tuple[list[float], Shape]  # row-major values and a shape


def array(value: object) -> Array:
    """A nested list (or a number) as values and shape."""
    shape: list[int] = []
    probe = value
    while isinstance(probe, (list, tuple)):
        shape.append(len(probe))
        probe = probe[0] if probe else 0.0
    flat: list[float] = []

    def walk(v: object) -> None:
        if isinstance(v, (list, tuple)):
            for item in v:
                walk(item)
        else:
            flat.append(float(cast(float, v)))

    walk(value)
    return flat, tuple(shape)


def size(shape: Shape) -> int:
    return math.prod(shape)


def indices(shape: Shape) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(d) for d in shape)))


def at(a: Array, index: tuple[int, ...]) -> float:
    """The entry of ``a`` at ``index`` (row-major)."""
    flat, shape = a
    offset = 0
    for i, d in zip(index, shape):
        offset = offset * d + i
    return flat[offset]


def broadcast_shape(*shapes: Shape) -> Shape:
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + s for s in shapes]
    out = []
    for dims in zip(*padded):
        sizes = {d for d in dims if d != 1}
        assert len(sizes) <= 1, f"the sample shapes {shapes} do not broadcast"
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast(a: Array, shape: Shape) -> list[float]:
    """``a``'s values stretched to ``shape``, NumPy's rule."""
    lead = len(shape) - len(a[1])
    return [at(a, tuple(0 if d == 1 else i for i, d in zip(index[lead:], a[1]))) for index in indices(shape)]


def elementwise(fn: Callable[..., float]) -> Callable[..., Array]:
    def run(*args: object) -> Array:
        arrays = [array(v) for v in args]
        shape = broadcast_shape(*(a[1] for a in arrays))
        columns = [broadcast(a, shape) for a in arrays]
        return [fn(*values) for values in zip(*columns)], shape

    return run


def axes_of(axis: object, rank: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(rank))
    items = axis if isinstance(axis, (list, tuple)) else (axis,)
    return tuple(sorted(int(cast(int, a)) % rank for a in items))


def reduction(combine: Callable[[list[float]], float]) -> Callable[..., Array]:
    def run(x: object, axis: object = None, keepdims: bool = False) -> Array:
        a = array(x)
        axes = axes_of(axis, len(a[1]))
        kept = tuple(1 if i in axes else d for i, d in enumerate(a[1]))
        values = []
        for index in indices(kept):
            ranges = [range(d) if i in axes else (index[i],) for i, d in enumerate(a[1])]
            values.append(combine([at(a, full) for full in itertools.product(*ranges)]))
        shape = kept if keepdims else tuple(d for i, d in enumerate(a[1]) if i not in axes)
        return values, shape

    return run


def logsumexp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def matmul(x: object, y: object) -> Array:
    a, b = array(x), array(y)
    rows = [a[0][i * a[1][-1]:(i + 1) * a[1][-1]] for i in range(size(a[1][:-1]))] if len(a[1]) == 2 else [a[0]]
    cols_n = b[1][1] if len(b[1]) == 2 else 1
    cols = [[b[0][k * cols_n + j] for k in range(b[1][0])] for j in range(cols_n)]
    values = [math.fsum(p * q for p, q in zip(row, col)) for row in rows for col in cols]
    shape = (a[1][0],) * (len(a[1]) == 2) + (cols_n,) * (len(b[1]) == 2)
    return values, shape


def transpose(x: object, perm: Sequence[int] | None = None) -> Array:
    a = array(x)
    p = tuple(perm) if perm is not None else tuple(reversed(range(len(a[1]))))
    shape = tuple(a[1][i] for i in p)
    values = []
    for index in indices(shape):
        source = [0] * len(p)
        for k, axis in enumerate(p):
            source[axis] = index[k]
        values.append(at(a, tuple(source)))
    return values, shape


def reshape(x: object, shape: Sequence[int]) -> Array:
    flat, old = array(x)
    known = math.prod(d for d in shape if d != -1)
    return flat, tuple(size(old) // known if d == -1 else d for d in shape)


def broadcast_to(x: object, shape: Sequence[int]) -> Array:
    return broadcast(array(x), tuple(shape)), tuple(shape)


def slice_(x: object, begin: Sequence[int], size: Sequence[int]) -> Array:
    a = array(x)
    stop = [d - b if s == -1 else s for b, s, d in zip(begin, size, a[1])]
    ranges = [range(b, b + s) for b, s in zip(begin, stop)]
    return [at(a, index) for index in itertools.product(*ranges)], tuple(stop)


def pad(x: object, paddings: Sequence[tuple[int, int]], constant_value: float = 0.0) -> Array:
    a = array(x)
    shape = tuple(before + d + after for (before, after), d in zip(paddings, a[1]))
    values = []
    for index in indices(shape):
        inner = tuple(i - before for i, (before, _) in zip(index, paddings))
        inside = all(0 <= i < d for i, d in zip(inner, a[1]))
        values.append(at(a, inner) if inside else constant_value)
    return values, shape


def concat(*xs: object, axis: int = 0) -> Array:
    arrays = [array(x) for x in xs]
    ax = axis % len(arrays[0][1])
    shape = tuple(sum(a[1][ax] for a in arrays) if i == ax else d for i, d in enumerate(arrays[0][1]))
    values = []
    for index in indices(shape):
        offset = index[ax]
        for a in arrays:
            if offset < a[1][ax]:
                values.append(at(a, index[:ax] + (offset,) + index[ax + 1:]))
                break
            offset -= a[1][ax]
    return values, shape


def zeros_like(x: object) -> Array:
    flat, shape = array(x)
    return [0.0] * len(flat), shape


def sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def softplus(v: float) -> float:
    return math.log(1.0 + math.exp(v))


def norm(x: object, ord: object = 2, axis: object = None, keepdims: bool = False) -> Array:
    p = 2.0 if ord in ("euclidean", "fro") else float(cast(float, ord))

    def combine(values: list[float]) -> float:
        if p == 2.0:
            return math.sqrt(math.fsum(v * v for v in values))
        if p == 1.0:
            return math.fsum(abs(v) for v in values)
        return max(abs(v) for v in values) if p > 0 else min(abs(v) for v in values)

    return reduction(combine)(x, axis, keepdims)


def arg_reduce(largest: bool) -> Callable[..., Array]:
    def run(x: object, axis: int = 0) -> Array:
        a = array(x)
        ax = axis % len(a[1])

        def pick(values: list[float]) -> float:
            best = max(values) if largest else min(values)
            return float(values.index(best))

        values, shape = reduction(pick)(x, ax, False)
        return values, shape

    return run


def one_hot(indices: object, depth: int, on_value: float = 1.0, off_value: float = 0.0) -> Array:
    flat, shape = array(indices)
    return [on_value if int(i) == k else off_value for i in flat for k in range(depth)], shape + (depth,)


def gather(x: object, indices: object, axis: int = 0) -> Array:
    a = array(x)
    picks, ishape = array(indices)
    ax = axis % len(a[1])
    shape = a[1][:ax] + ishape + a[1][ax + 1:]
    values = []
    for index in indices_of(shape):
        outer, inner = index[:ax], index[ax + len(ishape):]
        picked = index[ax:ax + len(ishape)]
        flat_pick = 0
        for i, d in zip(picked, ishape):
            flat_pick = flat_pick * d + i
        values.append(at(a, outer + (int(picks[flat_pick]),) + inner))
    return values, shape


def indices_of(shape: Shape) -> list[tuple[int, ...]]:
    return indices(shape)


def sigmoid_cross_entropy(labels: object, logits: object, reduction: str = "mean") -> Array:
    zs, shape = array(labels)
    xs, _ = array(logits)
    losses = [-z * math.log(sigmoid(x)) - (1 - z) * math.log(1 - sigmoid(x)) for z, x in zip(zs, xs)]
    if reduction == "none":
        return losses, shape
    total = math.fsum(losses)
    return [total / len(losses) if reduction == "mean" else total], ()


def softmax_cross_entropy(labels: object, logits: object, axis: int = -1, reduction: str = "mean") -> Array:
    z, x = array(labels), array(logits)
    ax = axis % len(x[1])
    rows_shape = tuple(d for i, d in enumerate(x[1]) if i != ax)
    losses = []
    for row in indices(rows_shape):
        spots = [row[:ax] + (k,) + row[ax:] for k in range(x[1][ax])]
        xs = [at(x, s) for s in spots]
        total = math.fsum(math.exp(v) for v in xs)
        losses.append(-math.fsum(at(z, s) * math.log(math.exp(v) / total) for s, v in zip(spots, xs)))
    if reduction == "none":
        return losses, rows_shape
    total = math.fsum(losses)
    return [total / len(losses) if reduction == "mean" else total], ()


# name -> the op written again with math; arguments as the case gives them (nested lists, params)
REFERENCE: dict[str, Callable[..., Array]] = {
    "add": elementwise(lambda x, y: x + y),
    "sub": elementwise(lambda x, y: x - y),
    "mul": elementwise(lambda x, y: x * y),
    "div": elementwise(lambda x, y: x / y),
    "neg": elementwise(lambda x: -x),
    "clone": elementwise(lambda x: x),
    "square": elementwise(lambda x: x * x),
    "sqrt": elementwise(math.sqrt),
    "pow": elementwise(math.pow),
    "exp": elementwise(math.exp),
    "log": elementwise(math.log),
    "abs": elementwise(math.fabs),
    "sin": elementwise(math.sin),
    "cos": elementwise(math.cos),
    "tanh": elementwise(math.tanh),
    "sigmoid": elementwise(sigmoid),
    "relu": elementwise(lambda x: x if x > 0 else 0.0),
    "maximum": elementwise(max),
    "minimum": elementwise(min),
    "clip_by_value": lambda x, clip_value_min, clip_value_max: elementwise(
        lambda v: min(max(v, clip_value_min), clip_value_max))(x),
    "where": elementwise(lambda c, x, y: x if c else y),
    "greater": elementwise(lambda x, y: float(x > y)),
    "greater_equal": elementwise(lambda x, y: float(x >= y)),
    "less": elementwise(lambda x, y: float(x < y)),
    "less_equal": elementwise(lambda x, y: float(x <= y)),
    "equal": elementwise(lambda x, y: float(x == y)),
    "sign": elementwise(lambda x: math.copysign(1.0, x) if x else 0.0),
    "zeros_like": zeros_like,
    "sum": reduction(math.fsum),
    "max": reduction(max),
    "logsumexp": lambda x, axis=-1, keepdims=False: reduction(logsumexp)(x, axis, keepdims),  # softmax's axis
    "matmul": matmul,
    "transpose": transpose,
    "reshape": reshape,
    "broadcast_to": broadcast_to,
    "slice": slice_,
    "pad": pad,
    "concat": concat,
    "atan": elementwise(math.atan),
    "atan2": elementwise(math.atan2),
    "expm1": elementwise(lambda x: math.exp(x) - 1.0),
    "log1p": elementwise(lambda x: math.log(1.0 + x)),
    "log2": elementwise(lambda x: math.log(x) / math.log(2.0)),
    "softplus": elementwise(softplus),
    "log_sigmoid": elementwise(lambda x: math.log(sigmoid(x))),
    "sigmoid_cross_entropy": sigmoid_cross_entropy,
    "softmax_cross_entropy": softmax_cross_entropy,
    "norm": norm,
    "argmax": arg_reduce(True),
    "argmin": arg_reduce(False),
    "one_hot": one_hot,
    "gather": gather,
    "is_nan": elementwise(lambda x: float(math.isnan(x))),
    "is_finite": elementwise(lambda x: float(math.isfinite(x))),
    "is_inf": elementwise(lambda x: float(math.isinf(x))),
    "stop_gradient": elementwise(lambda x: x),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_has_a_reference(name: str) -> None:
    assert name in REFERENCE, f"write {name!r} again with math in REFERENCE (tests/ops/test_forward_values.py)"


@pytest.mark.parametrize("case", ALL_CASES, ids=str)
def test_forward_values_agree_with_math(case: Case) -> None:
    want_values, want_shape = REFERENCE[case.name](*case.inputs, **case.params)
    out = call(case)(*inputs_of(case))
    got = out.data_sync()
    assert out.shape == want_shape, f"{case}: shape {out.shape}, math says {want_shape}"
    assert len(got) == len(want_values) > 0
    for i, (g, w) in enumerate(zip(got, want_values)):
        assert math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-15), f"{case}: entry {i} is {g!r}, math says {w!r}"


def test_the_references_are_not_the_engine() -> None:
    """The references import nothing from microtape but the op table's names (checked by reading the file)."""
    source = Path(__file__).read_text(encoding="utf-8")
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert [line for line in imports if "microtape" in line] == ["from microtape.engine.primitive import OPS"]


def test_the_reference_helpers_on_known_values() -> None:
    """The reference itself, on values worked out by hand."""
    assert REFERENCE["add"]([[1.0], [2.0]], [10.0, 20.0]) == ([11.0, 21.0, 12.0, 22.0], (2, 2))
    assert REFERENCE["sum"]([[1.0, 2.0], [3.0, 4.0]], axis=0) == ([4.0, 6.0], (2,))
    assert REFERENCE["sum"]([[1.0, 2.0], [3.0, 4.0]], axis=-1, keepdims=True) == ([3.0, 7.0], (2, 1))
    assert REFERENCE["matmul"]([[1.0, 2.0], [3.0, 4.0]], [5.0, 6.0]) == ([17.0, 39.0], (2,))
    assert REFERENCE["matmul"]([1.0, 2.0], [1.0, 2.0]) == ([5.0], ())
    assert REFERENCE["transpose"]([[1.0, 2.0, 3.0]]) == ([1.0, 2.0, 3.0], (3, 1))
    assert REFERENCE["pad"]([1.0], paddings=[(1, 2)]) == ([0.0, 1.0, 0.0, 0.0], (4,))
    assert REFERENCE["slice"]([[1.0, 2.0], [3.0, 4.0]], begin=(1, 0), size=(1, -1)) == ([3.0, 4.0], (1, 2))
    assert REFERENCE["concat"]([[1.0]], [[2.0, 3.0]], axis=1) == ([1.0, 2.0, 3.0], (1, 3))
