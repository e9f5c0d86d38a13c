"""Reductions whose VJP needs arithmetic (``reduce_max``, ``logsumexp``) and ``matmul``.

"""

from __future__ import annotations

import math

from .kernels import matmul_flat, reduce_flat
from ..engine.primitive import primitive
from ..engine.shape import check_size, size_of
from .index_maps import normalize_axes, reduce_index, reduced_shape
from ..engine.types import Axis, Flat, Shape
from ..errors import ShapeError, explain
from .compare import equal
from .arithmetic import div, mul, sub
from .transcendental import exp
from .shape_ops import reduce_sum, reshape, transpose, unreduce
from ..engine.tensor import Grads, Tensor

__all__ = [
    "logsumexp",
    "matmul",
    "reduce_max",
]

_INF = math.inf
_NAN = math.nan
_BOTH = (True, True)


# ── max ─────────────────────────────────────────────────────────────────────
# out = max_axis x             ∂out/∂x_i = 1/k where x_i is one of k tied maxima, else 0
# Ties split the gradient evenly (a valid subgradient). TF.js gives every
# tied entry the whole gradient instead.


@primitive("max")
def reduce_max(x: Tensor, axis: Axis = None, keepdims: bool = False) -> Flat:
    """Largest entry along ``axis`` or overall (``tf.max``); NaN wins.

    When several entries tie for the maximum the gradient is split evenly
    among them (TF.js gives each of them the whole gradient).

    Examples:
        >>> mt.max(mt.tensor([[1.0, 5.0], [7.0, 2.0]]), axis=1)
        Tensor([5.0, 7.0], shape=(2,))
        >>> mt.grad(mt.max)(mt.tensor([3.0, 1.0, 3.0]))
        Tensor([0.5, 0.0, 0.5], shape=(3,))
    """
    axes = normalize_axes(axis, len(x._shape), "max")
    return reduce_flat(x._data, x._shape, axes, keepdims, "max")


@reduce_max.defvjp
def _max_vjp(dout: Tensor, out: Tensor, x: Tensor, axis: Axis = None, keepdims: bool = False) -> Grads:
    is_max = equal(x, unreduce(out, x.shape, axis, keepdims))
    ties = unreduce(reduce_sum(is_max, axis=axis, keepdims=True), x.shape, axis, True)
    return (div(mul(unreduce(dout, x.shape, axis, keepdims), is_max), ties),)


# ── logsumexp ───────────────────────────────────────────────────────────────
# out = log Σ_axis e^x         ∂out/∂x = e^(x - out) = softmax(x)
# The forward subtracts the maximum first, so large entries do not overflow.


def _lse(values: list[float]) -> float:
    if not values:
        return -_INF
    top = max(values)
    if top != top or any(v != v for v in values):
        return _NAN
    if math.isinf(top):
        return top
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


@primitive("logsumexp")
def logsumexp(x: Tensor, axis: Axis = -1, keepdims: bool = False) -> Flat:
    """``log(sum(exp(x)))`` along ``axis``, computed without overflow (``tf.logSumExp``).

    The default ``axis=-1`` matches ``softmax``; TF.js defaults to every axis.

    Examples:
        >>> mt.logsumexp(mt.tensor([1000.0, 1000.0]))
        Tensor(1001.0, shape=())
    """
    axes = normalize_axes(axis, len(x._shape), "logsumexp")
    data = x._data
    assert data is not None  # the op wrapper checked it
    shape = reduced_shape(x._shape, axes, keepdims)
    groups: list[list[float]] = [[] for _ in range(size_of(shape))]
    for i, v in zip(reduce_index(x._shape, axes), data):
        groups[i].append(v)
    return [_lse(g) for g in groups], shape


@logsumexp.defvjp
def _logsumexp_vjp(dout: Tensor, out: Tensor, x: Tensor, axis: Axis = -1, keepdims: bool = False) -> Grads:
    softmax = exp(sub(x, unreduce(out, x.shape, axis, keepdims)))
    return (mul(unreduce(dout, x.shape, axis, keepdims), softmax),)


# ── matmul ──────────────────────────────────────────────────────────────────
# out = x @ y        ∂L/∂x = dout @ yᵀ      ∂L/∂y = xᵀ @ dout
# A 1-D operand is a row (on the left) or a column (on the right), as in NumPy.


def _as_2d(x: Tensor, left: bool) -> Shape:
    if len(x.shape) == 2:
        return x.shape
    return (1, x.shape[0]) if left else (x.shape[0], 1)


@primitive("matmul", n_inputs=2)
def matmul(x: Tensor, y: Tensor) -> Flat:
    """Matrix product of 1-D and 2-D tensors, as NumPy's ``@`` (``tf.matMul``).

    Examples:
        >>> a = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> a @ mt.tensor([1.0, 1.0])
        Tensor([3.0, 7.0], shape=(2,))
        >>> mt.tensor([1.0, 1.0]) @ a
        Tensor([4.0, 6.0], shape=(2,))
    """
    for t, side in ((x, "left"), (y, "right")):
        if len(t.shape) not in (1, 2):
            raise ShapeError(
                explain(
                    f"matmul: the {side} operand has shape {t.shape} (rank {t.rank}).",
                    "matmul takes 1-D and 2-D tensors.",
                    "reshape it to 2-D first, for example t.reshape((-1, t.shape[-1])).",
                ),
                op="matmul",
                shapes=(x.shape, y.shape),
            )
    (n, k), (k2, m) = _as_2d(x, True), _as_2d(y, False)
    if k != k2:
        raise ShapeError(
            explain(
                f"matmul: inner dimensions differ: {x.shape} @ {y.shape} pairs {k} with {k2}.",
                "In x @ y the last dimension of x must equal the first dimension of y.",
                "transpose one operand (y.T) or check which axis holds the features.",
            ),
            op="matmul",
            shapes=(x.shape, y.shape),
        )
    assert x._data is not None and y._data is not None  # the op wrapper checked them
    shape = x.shape[:-1] + y.shape[1:]  # a 1-D operand's axis is contracted away, as in NumPy
    check_size(shape, "matmul: the product's shape")  # (n, 0) @ (0, m) is n·m zeros
    return matmul_flat(x._data, y._data, n, k, m), shape


@matmul.defvjp
def _matmul_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    x2 = x if x.rank == 2 else reshape(x, shape=_as_2d(x, True))
    y2 = y if y.rank == 2 else reshape(y, shape=_as_2d(y, False))
    d2 = dout if dout.rank == 2 else reshape(dout, shape=(x2.shape[0], y2.shape[1]))
    dx = _same_shape(matmul(d2, transpose(y2)), x.shape) if needs[0] else None
    dy = _same_shape(matmul(transpose(x2), d2), y.shape) if needs[1] else None
    return dx, dy


def _same_shape(t: Tensor, shape: Shape) -> Tensor:
    return t if t.shape == shape else reshape(t, shape=shape)
