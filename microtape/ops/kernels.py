"""The only loops over flat lists: map, zip with broadcasting, reduce, matmul.

Every op's forward is one call into this module.
A whole-tensor sum and every dot product is ``math.fsum``, the exactly
rounded sum, never the builtin ``sum``: from Python 3.12 ``sum`` compensates
its rounding, so the same program would print other numbers on 3.10 and 3.11
than on 3.12 and 3.13. ``fsum`` gives the same bits on every version, and
costs less than adding left to right in Python (bench/README.md has the
measurements). Where it raises (an intermediate overflow, or ``inf + -inf``)
the sum is redone left to right, which gives IEEE's ``inf`` or ``nan``, the
same on every version too, as are the sums along an axis (a plain loop).
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
from functools import reduce
from typing import Union

from ..engine.shape import size_of
from ..engine.types import Flat, Shape
from .index_maps import broadcast_index, broadcast_shapes, reduce_index, reduced_shape

__all__ = ["map_flat", "matmul_flat", "reduce_flat", "zip_flat", "zip3_flat"]

Data = Union[list[float], None]
"""A tensor's ``_data``: an op's inputs are live, so never None here (each kernel asserts it)."""
Unary = Callable[[float], float]
Binary = Callable[[float, float], float]
_ARITH_ERRORS = (OverflowError, ValueError, ZeroDivisionError)
_add: Binary = operator.add


def map_flat(fn: Unary, data: Data, safe: Unary | None = None) -> list[float]:
    """Apply ``fn`` to every entry; if Python raises, apply ``safe`` (same maths, IEEE results) instead."""
    assert data is not None  # an op's inputs are live
    try:
        return [fn(data[0])] if len(data) == 1 else list(map(fn, data))  # one entry: skip map's set-up
    except _ARITH_ERRORS:
        if safe is None:
            raise
        return list(map(safe, data))


def zip_flat(
    fn: Binary, a: Data, a_shape: Shape, b: Data, b_shape: Shape, op: str, safe: Binary | None = None
) -> Flat:
    """Apply ``fn`` entry by entry, broadcasting ``a`` and ``b`` like NumPy: (values, shape).

    ``op`` names the op in a broadcasting error.
    """
    assert a is not None and b is not None  # an op's inputs are live
    shape = a_shape
    if shape != b_shape:
        shape = broadcast_shapes(shape, b_shape, op)
        if len(b) == 1:
            b = b * size_of(shape)
        elif shape != b_shape:
            b = [b[i] for i in broadcast_index(b_shape, shape)]
        if len(a) == 1:
            a = a * size_of(shape)
        elif shape != a_shape:
            a = [a[i] for i in broadcast_index(a_shape, shape)]
    try:
        return ([fn(a[0], b[0])] if len(a) == 1 else list(map(fn, a, b))), shape  # one entry: skip map's set-up
    except _ARITH_ERRORS:
        if safe is None:
            raise
        return list(map(safe, a, b)), shape


def zip3_flat(fn: Callable[[float, float, float], float], columns: list[tuple[Data, Shape]], op: str) -> Flat:
    """Three-way broadcasting version of :func:`zip_flat` (for ``where``): ``columns`` are (values, shape)."""
    (_, s0), (_, s1), (_, s2) = columns
    shape = broadcast_shapes(broadcast_shapes(s0, s1, op), s2, op)
    cols: list[list[float]] = []
    for data, s in columns:
        assert data is not None  # an op's inputs are live
        cols.append(data if s == shape else [data[i] for i in broadcast_index(s, shape)])
    return list(map(fn, *cols)), shape


def reduce_flat(data: Data, in_shape: Shape, axes: tuple[int, ...], keepdims: bool, kind: str) -> Flat:
    """Reduce over ``axes`` with ``kind`` "sum" or "max" (NaN propagates in max): (values, shape)."""
    assert data is not None  # an op's inputs are live
    shape = reduced_shape(in_shape, axes, keepdims)
    n_out = size_of(shape)
    if len(axes) == len(in_shape) or n_out == 1 and len(data) > 0 and len(axes) > 0:
        return ([_reduce_all(data, kind)] if n_out == 1 else []), shape
    if kind == "sum":
        out = [0.0] * n_out
        for i, j in zip(reduce_index(in_shape, axes), data):
            out[i] += j
    else:
        out = [-math.inf] * n_out
        for i, v in zip(reduce_index(in_shape, axes), data):
            cur = out[i]
            if v > cur or v != v:
                out[i] = v if cur == cur else cur
    return out, shape


def _reduce_all(data: list[float], kind: str) -> float:
    if kind == "sum":
        return _sum(data)
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
    fsum = math.fsum
    try:
        return [fsum(map(mul, row, col)) for row in rows for col in cols]  # k = 0 gives 0.0
    except _ARITH_ERRORS:  # a dot product overflows, or holds inf - inf: redo each the IEEE way
        return [_sum(list(map(mul, row, col))) for row in rows for col in cols]


def _sum(values: list[float]) -> float:
    """The exactly rounded sum (``math.fsum``); IEEE's inf or nan where fsum raises."""
    try:
        return math.fsum(values)
    except _ARITH_ERRORS:  # "intermediate overflow" or "-inf + inf": left to right gives inf or nan
        return reduce(_add, values, 0.0)

