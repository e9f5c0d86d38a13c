"""The index arithmetic of broadcasting, reducing and transposing, on plain ints.

Nothing here touches tensor data. Broadcasting follows NumPy: align shapes
at the right; two dimensions fit when they are equal or one of them is 1.
The index maps say, for every entry of an output, which entry of an input it
reads; they depend only on shapes, so they are computed once per pair of
shapes and cached.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..engine.shape import check_size, size_of
from ..engine.types import Axis, Shape, is_int
from ..errors import InvalidArgumentError, ShapeError, explain
from ..language import N_

__all__ = [
    "broadcast_index",
    "broadcast_shapes",
    "expand_index",
    "normalize_axes",
    "reduce_index",
    "reduced_shape",
    "strides_of",
    "transpose_index",
]


@functools.lru_cache(maxsize=4096)
def broadcast_shapes(a: Shape, b: Shape, op: str = "broadcast") -> Shape:
    """Return the NumPy broadcast of two shapes, or raise ShapeError.

    Examples:
        >>> broadcast_shapes((2, 1), (3,))
        (2, 3)
    """
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + a
    pb = (1,) * (n - len(b)) + b
    out = []
    for i, (da, db) in enumerate(zip(pa, pb)):
        if da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        else:
            from_end = n - i
            raise ShapeError(
                explain(
                    N_("{0}: cannot broadcast shapes {1} and {2}: dimension -{3} is {4} in one and {5} in the other.").format(op, a, b, from_end, da, db),
                    N_("Shapes broadcast when each trailing dimension is equal or 1."),
                    _broadcast_hint(a, b),
                ),
                op=op,
                shapes=(a, b),
            )
    check_size(out, N_("{0}: the broadcast shape").format(op))
    return tuple(out)


def _broadcast_hint(a: Shape, b: Shape) -> str:
    if len(b) == 1 and len(a) == 2 and b[0] == a[0]:
        return N_("to combine each row with one value, reshape the second operand: y.reshape(({0}, 1))").format(b[0])
    if len(a) == 1 and len(b) == 2 and a[0] == b[0]:
        return N_("to combine each row with one value, reshape the first operand: x.reshape(({0}, 1))").format(a[0])
    return N_("check which dimension is meant to line up; reshape or transpose one operand.")


def expand_index(dims: Sequence[int], strides: Sequence[int]) -> list[int]:
    """Flat source index for every multi-index over ``dims``, row-major."""
    idx = [0]
    for n, s in zip(dims, strides):
        if n == 1:
            continue
        idx = [i + j * s for i in idx for j in range(n)] if s else [i for i in idx for _ in range(n)]
    return idx


def strides_of(shape: Shape) -> list[int]:
    """Row-major strides (in entries, not bytes)."""
    strides = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= shape[i]
    return strides


@functools.lru_cache(maxsize=4096)
def broadcast_index(src: Shape, out: Shape) -> list[int]:
    """For each entry of ``out``, the flat index of the ``src`` entry it reads.

    Examples:
        >>> broadcast_index((2, 1), (2, 3))
        [0, 0, 0, 1, 1, 1]
    """
    if size_of(out) == 0:
        return []
    pad = len(out) - len(src)
    st = strides_of(src)
    strides = [0] * pad + [0 if d == 1 else s for d, s in zip(src, st)]
    return expand_index(out, strides)


def normalize_axes(axis: Axis, rank: int, op: str) -> tuple[int, ...]:
    """Turn ``axis`` (None, int, negative, tuple) into sorted non-negative axes.

    Examples:
        >>> normalize_axes(-1, 3, "sum")
        (2,)
        >>> normalize_axes(None, 2, "sum")
        (0, 1)
    """
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, (list, tuple)):
        axes = list(axis)
    else:
        axes = [axis]  # one axis, checked below (a float or a string is reported there)
    out = []
    for a in axes:
        if not is_int(a) or not -rank <= a < max(rank, 1):
            raise InvalidArgumentError(
                explain(
                    N_("{0}: axis {1} is out of range for a tensor of rank {2}.").format(op, repr(a), rank),
                    N_("Axes run from {0} to {1} (negative ones count from the end).").format(-rank, rank - 1)
                    if rank
                    else N_("A scalar has no axes to reduce."),
                    N_("use axis=None to reduce over every axis."),
                ),
                op=op,
                axis=a,
                rank=rank,
            )
        out.append(a % rank if rank else 0)
    if len(set(out)) != len(out):
        raise InvalidArgumentError(
            explain(
                N_("{0}: axis {1} names the same axis twice.").format(op, repr(axis)),
                N_("Each axis may appear once."),
                N_("remove the repeated axis."),
            ),
            op=op,
            axis=axis,
            rank=rank,
        )
    return tuple(sorted(out)) if rank else ()


def reduced_shape(shape: Shape, axes: tuple[int, ...], keepdims: bool) -> Shape:
    """Shape after reducing ``axes``, with 1s left in place when ``keepdims``."""
    # tuple([...]), not tuple(... for ...), here and in every op: CPython
    # allocates a tuple from a generator long and shrinks it, and the shrunk
    # block becomes one more spare tuple of the new length (up to 2,000 per
    # length), so a training loop's memory would creep up step after step.
    if keepdims:
        return tuple([1 if i in axes else d for i, d in enumerate(shape)])
    return tuple([d for i, d in enumerate(shape) if i not in axes])


@functools.lru_cache(maxsize=4096)
def reduce_index(shape: Shape, axes: tuple[int, ...]) -> list[int]:
    """For each entry of ``shape``, the flat index of its slot after reducing ``axes``.

    Examples:
        >>> reduce_index((2, 3), (1,))
        [0, 0, 0, 1, 1, 1]
    """
    kept = reduced_shape(shape, axes, keepdims=True)
    st = strides_of(kept)
    strides = [0 if i in axes else s for i, s in enumerate(st)]
    if size_of(shape) == 0:
        return []
    return expand_index(shape, strides)


@functools.lru_cache(maxsize=1024)
def transpose_index(shape: Shape, perm: tuple[int, ...]) -> list[int]:
    """For each entry of the transposed tensor, the flat index it reads.

    Examples:
        >>> transpose_index((2, 3), (1, 0))
        [0, 3, 1, 4, 2, 5]
    """
    st = strides_of(shape)
    if size_of(shape) == 0:
        return []
    return expand_index([shape[p] for p in perm], [st[p] if shape[p] != 1 else 0 for p in perm])
