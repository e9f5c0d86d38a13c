"""Kernels a replay specialises at trace time, where every shape is known.

An eager op checks its inputs, binds its arguments and works out its shapes
at every call; in a replay the shapes are fixed, so that work is done once,
here, and what is left is a closure over flat lists, which calls a kernel of
``kernels.py`` directly or does the work a faster way for that shape:

* ``matmul`` with its sizes fixed. A product whose inner size is 1 is an
  outer product, and one whose inner size is 2 is one addition per entry:
  ``math.fsum`` of one or two numbers is that number or their IEEE sum
  (except that fsum's zero is always ``+0.0``, which ``or 0.0`` restores),
  so neither needs a call of ``fsum``; other sizes call ``matmul_flat``;
* ``add``, ``sub``, ``mul``, ``div`` and ``greater`` with the broadcast done
  by a precomputed gather (``operator.itemgetter``) or a repeat;
* ``sum`` calling ``reduce_flat`` with its axes made once;
* ``transpose`` and ``broadcast_to`` as one precomputed gather; ``relu``;
  ``clone`` as a copy of the list.

Every closure gives the eager kernel's floats bit for bit: the same
``operator`` functions (an inline ``*`` can return another NaN when both
operands are NaN), the same order of operations, the same ``math.fsum``, and
where Python raises (``fsum``'s overflow, a division by zero) the eager
kernel itself recomputes the entry. ``tests/replay/test_specialise.py``
compares the bits with the eager ops on IEEE corner cases.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import cast

from ..ops.kernels import matmul_flat, reduce_flat
from ..ops.index_maps import broadcast_index, normalize_axes, transpose_index
from ..engine.shape import size_of
from ..engine.types import Shape

__all__ = ["Kernel", "specialised"]

Kernel = Callable[..., list[float]]
"""A replay's kernel: flat lists in (one per input), a new flat list out."""

_ZERO_IS_POSITIVE = math.copysign(1.0, math.fsum([-0.0])) > 0.0
"""``math.fsum`` returns ``+0.0`` for a zero sum (true on every CPython we test; checked, not assumed)."""

_add, _sub, _mul, _div = operator.add, operator.sub, operator.mul, operator.truediv


def _greater(a: float, b: float) -> float:
    return float(a > b)


_BINARY: dict[str, Callable[[float, float], float]] = {
    "add": _add,
    "sub": _sub,
    "mul": _mul,
    "div": _div,
    "greater": _greater,
}
"""The binary ops a replay specialises, with the function their eager kernel maps."""


def specialised(name: str, params: dict[str, object], in_shapes: Sequence[Shape], shape: Shape, eager: Kernel) -> Kernel | None:
    """The replay's kernel for one op line, or None where the eager forward is run as it is.

    ``eager`` is that forward on flat lists; a closure calls it where Python
    raises, so that the IEEE result of the eager kernel is the result.

    Examples:
        >>> from microtape.replay.specialise import specialised
        >>> k = specialised("matmul", {}, [(2, 1), (1, 3)], (2, 3), eager=lambda a, b: [])
        >>> k([1.0, 2.0], [3.0, -0.0, 5.0])
        [3.0, 0.0, 5.0, 6.0, 0.0, 10.0]
    """
    if name == "matmul" and len(in_shapes) == 2:
        return _matmul(in_shapes[0], in_shapes[1])
    if name in _BINARY and len(in_shapes) == 2:
        return _binary(_BINARY[name], in_shapes[0], in_shapes[1], shape, eager)
    if name == "relu":
        return _relu
    if name == "sum" and len(in_shapes) == 1:
        return _sum_along(in_shapes[0], params)
    if name == "clone":
        return list  # the same entries in the same order, in a new list as the eager kernel's
    if name == "transpose" and len(in_shapes) == 1:
        rank = len(in_shapes[0])
        perm = params.get("perm")
        p = tuple(range(rank - 1, -1, -1)) if perm is None else tuple(cast("Sequence[int]", perm))
        if sorted(p) != list(range(rank)):
            return None  # negative axes: the eager op normalises them
        return _gather(transpose_index(in_shapes[0], p))
    if name == "broadcast_to" and len(in_shapes) == 1:
        return _gather(broadcast_index(in_shapes[0], shape))
    return None


def _sum_along(src: Shape, params: dict[str, object]) -> Kernel:
    """A sum: the eager kernel, called with the axes the op normalised once."""
    axes = normalize_axes(params.get("axis"), len(src), "sum")  # type: ignore[arg-type]
    return lambda a: reduce_flat(a, src, axes, False, "sum")[0]  # keepdims changes the shape, not the values


def _relu(a: list[float]) -> list[float]:
    return [0.0 if v <= 0.0 else v for v in a]  # relu's own lambda: nan stays nan


def _gather(index: list[int]) -> Kernel:
    """Entry ``index[i]`` of the input at position ``i``: transposes and broadcasts."""
    if len(index) == 1:
        only = index[0]
        return lambda a: [a[only]]
    if not index:
        return lambda a: []
    pick = operator.itemgetter(*index)
    return lambda a: list(pick(a))


def _operand(src: Shape, out: Shape) -> Callable[[list[float]], Sequence[float] | repeat[float]]:
    """How one operand of a broadcasting binary op is read at the output's size."""
    n = size_of(out)
    if src == out:
        return lambda a: a
    if size_of(src) == 1:
        return lambda a: repeat(a[0], n)
    pick = operator.itemgetter(*broadcast_index(src, out))
    return pick  # a tuple of floats: n > 1 here, so never a lone float


def _binary(fn: Callable[[float, float], float], a_shape: Shape, b_shape: Shape, shape: Shape, eager: Kernel) -> Kernel | None:
    if size_of(shape) <= 1:
        return None  # one entry: program.py writes the scalar case inline, or the eager kernel runs
    if fn is _greater and size_of(b_shape) == 1 and a_shape == shape:  # a mask, as relu's VJP makes

        def mask(a: list[float], b: list[float]) -> list[float]:
            bound = b[0]
            return [1.0 if v > bound else 0.0 for v in a]  # float(v > bound)

        return mask
    left, right = _operand(a_shape, shape), _operand(b_shape, shape)

    def binary(a: list[float], b: list[float]) -> list[float]:
        try:
            return list(map(fn, left(a), right(b)))
        except (OverflowError, ValueError, ZeroDivisionError):  # only div raises: the eager kernel's IEEE path
            return eager(a, b)

    return binary


def _matmul(a_shape: Shape, b_shape: Shape) -> Kernel | None:
    n, k = a_shape if len(a_shape) == 2 else (1, a_shape[0])
    k2, m = b_shape if len(b_shape) == 2 else (b_shape[0], 1)
    if k != k2 or 0 in (n, k, m):
        return None
    if k == 1 and _ZERO_IS_POSITIVE:

        def outer(a: list[float], b: list[float]) -> list[float]:
            # fsum([p]) is p, but +0.0 for -0.0
            return [p or 0.0 for x in a for p in map(_mul, repeat(x, m), b)]

        return outer
    if k == 2 and _ZERO_IS_POSITIVE:

        def pairs(a: list[float], b: list[float]) -> list[float]:
            # fsum([p, q]) is the correctly rounded p + q, which IEEE's addition is too; +0.0 for a zero; where
            # fsum raises (overflow, inf - inf) matmul_flat adds left to right from 0.0: p + q again
            b0, b1 = b[:m], b[m:]
            return [
                s or 0.0
                for i in range(0, 2 * n, 2)
                for s in map(_add, map(_mul, repeat(a[i], m), b0), map(_mul, repeat(a[i + 1], m), b1))
            ]

        return pairs
    return lambda a, b: matmul_flat(a, b, n, k, m)
