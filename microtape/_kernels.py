"""The only loops over flat lists: map, zip with broadcasting, reduce, matmul.

Read after ``tensor.py``. Every op's forward is one call into this module.
IEEE-754 is the rule: Python raises ``ZeroDivisionError``, ``OverflowError``
and "math domain error" where IEEE gives inf or nan, so each kernel first
runs the fast builtin loop and, only if Python raises, reruns every entry
with ``safe``: the same function written to return what IEEE says instead of
raising.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

from ._shape import broadcast_index, broadcast_shapes, reduce_index, reduced_shape, size_of
from .tensor import Tensor, _new

__all__ = ["map_flat", "matmul_flat", "reduce_flat", "zip_flat", "zip3_flat"]

Unary = Callable[[float], float]
Binary = Callable[[float, float], float]
_ARITH_ERRORS = (OverflowError, ValueError, ZeroDivisionError)


def map_flat(fn: Unary, x: Tensor, op: str, safe: Unary | None = None) -> Tensor:
    """Apply ``fn`` to every entry; if Python raises, apply ``safe`` (same maths, IEEE results) instead."""
    data = x._data
    assert data is not None  # the op wrapper checked it
    try:
        out = [fn(data[0])] if len(data) == 1 else list(map(fn, data))
    except _ARITH_ERRORS:
        if safe is None:
            raise
        out = list(map(safe, data))
    return _new(out, x.shape, op)


def zip_flat(fn: Binary, x: Tensor, y: Tensor, op: str, safe: Binary | None = None) -> Tensor:
    """Apply ``fn`` entry by entry, broadcasting ``x`` and ``y`` like NumPy."""
    a, b = x._data, y._data
    assert a is not None and b is not None  # the op wrapper checked them
    shape = x.shape
    if shape != y.shape:
        shape = broadcast_shapes(shape, y.shape, op)
        if len(b) == 1:
            b = b * size_of(shape)
        elif shape != y.shape:
            b = [b[i] for i in broadcast_index(y.shape, shape)]
        if len(a) == 1:
            a = a * size_of(shape)
        elif shape != x.shape:
            a = [a[i] for i in broadcast_index(x.shape, shape)]
    try:
        out = [fn(a[0], b[0])] if len(a) == 1 else list(map(fn, a, b))  # scalars skip map's set-up
    except _ARITH_ERRORS:
        if safe is None:
            raise
        out = list(map(safe, a, b))
    return _new(out, shape, op)


def zip3_flat(
    fn: Callable[[float, float, float], float], c: Tensor, x: Tensor, y: Tensor, op: str
) -> Tensor:
    """Three-way broadcasting version of :func:`zip_flat` (for ``where``)."""
    shape = broadcast_shapes(broadcast_shapes(c.shape, x.shape, op), y.shape, op)
    cols = []
    for t in (c, x, y):
        data = t._data
        assert data is not None  # the op wrapper checked it
        cols.append(data if t.shape == shape else [data[i] for i in broadcast_index(t.shape, shape)])
    return _new(list(map(fn, *cols)), shape, op)


def reduce_flat(
    x: Tensor, axes: tuple[int, ...], keepdims: bool, op: str, kind: str
) -> Tensor:
    """Reduce over ``axes`` with ``kind`` "sum" or "max" (NaN propagates in max)."""
    data = x._data
    assert data is not None  # the op wrapper checked it
    shape = reduced_shape(x.shape, axes, keepdims)
    n_out = size_of(shape)
    if len(axes) == len(x.shape) or n_out == 1 and len(data) > 0 and len(axes) > 0:
        return _new([_reduce_all(data, kind)] if n_out == 1 else [], shape, op)
    if kind == "sum":
        out = [0.0] * n_out
        for i, j in zip(reduce_index(x.shape, axes), data):
            out[i] += j
    else:
        out = [-math.inf] * n_out
        for i, v in zip(reduce_index(x.shape, axes), data):
            cur = out[i]
            if v > cur or v != v:
                out[i] = v if cur == cur else cur
    return _new(out, shape, op)


def _reduce_all(data: list[float], kind: str) -> float:
    if kind == "sum":
        return sum(data, 0.0)  # 0.0, not 0: an empty sum is a float too
    if not data:
        return -math.inf
    top = max(data)
    if top != top or any(v != v for v in data):
        return math.nan
    return top


def matmul_flat(a: list[float], b: list[float], n: int, k: int, m: int) -> list[float]:
    """(n, k) @ (k, m) on flat row-major lists: each row against each column."""
    rows = [a[i * k : (i + 1) * k] for i in range(n)]
    cols = [b[j::m] for j in range(m)] if m else []
    mul = operator.mul
    return [sum(map(mul, row, col), 0.0) for row in rows for col in cols]  # k = 0 gives 0.0

