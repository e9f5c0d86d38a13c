"""Reductions whose VJP needs arithmetic (``reduce_max``, ``logsumexp``, ``norm``) and ``matmul``.

"""

from __future__ import annotations

import math

from .kernels import matmul_flat, reduce_flat
from ..engine.primitive import primitive
from ..engine.shape import check_size, size_of
from .index_maps import normalize_axes, reduce_index, reduced_shape
from ..engine.types import Axis, Flat, Shape, is_int
from ..errors import InvalidArgumentError, ShapeError, explain
from ..language import N_
from .floats import safe_norm, safe_total
from .compare import equal, sign
from .arithmetic import div, mul, sub
from .piecewise import abs, const, where
from .transcendental import exp
from .shape_ops import reduce_sum, reshape, transpose, unreduce
from ..engine.tensor import Grads, Tensor

__all__ = [
    "logsumexp",
    "matmul",
    "norm",
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


# ── norm ────────────────────────────────────────────────────────────────────
# ord 2:   out = √(Σ x²)       ∂out/∂x = x / out, and 0 where out = 0 (a subgradient, as abs's 0 at 0)
# ord 1:   out = Σ |x|         ∂out/∂x = sign(x)
# ord ±∞:  out = max (min) |x| ∂out/∂x = sign(x) on the entries that reach it, split evenly at ties
# At x = 0 the 2-norm has a cone-shaped kink: every vector of length ≤ 1 is a
# subgradient, and 0 is the one microtape (like PyTorch, and abs) returns.
# Written out by hand as sqrt(sum(x * x)), the same norm has the gradient
# x · 1/(2·sqrt(0)) = 0·inf = nan at 0: that is the NaN of HIPS autograd's
# norm, which detect_anomaly traces to sqrt.

_ORDS: tuple[object, ...] = (2, 1, math.inf, -math.inf, "euclidean", "fro")


def _norm_ord(ord: object, axis: Axis) -> float:
    if isinstance(ord, bool) or ord not in _ORDS:
        raise InvalidArgumentError(
            explain(
                N_("norm: ord={0} is not a supported order.").format(repr(ord)),
                N_("ord is 2 or 'euclidean' (the default), 'fro', 1, math.inf or -math.inf, as in TF.js's tf.norm."),
                N_("pass ord=2 for the Euclidean length."),
            ),
            op="norm",
            value=ord,
        )
    if isinstance(axis, (list, tuple)) and len(axis) > 1 and ord not in ("euclidean", "fro"):
        raise InvalidArgumentError(
            explain(
                N_("norm: ord={0} over the axes {1} asks for a matrix norm, which microtape does not compute.").format(repr(ord), tuple(axis)),
                N_("Over several axes microtape computes the Frobenius norm only (ord='fro' or 'euclidean'); ord 1, 2 and inf are vector norms (axis=None for all entries, or one int axis)."),
                N_("pass ord='fro' for the square root of the sum of squares over those axes."),
            ),
            op="norm",
            value=ord,
        )
    if ord in ("euclidean", "fro"):
        return 2.0
    assert isinstance(ord, (int, float))  # one of _ORDS
    return float(ord)


def _norm_axes(x: Tensor, axis: Axis) -> tuple[int, ...]:
    if axis is not None and not is_int(axis) and not (isinstance(axis, (list, tuple)) and all(is_int(a) for a in axis)):
        raise InvalidArgumentError(
            explain(
                N_("norm: axis={0} is not an axis.").format(repr(axis)),
                N_("axis is None (every entry: one vector), an int (a batch of vectors) or a tuple of ints."),
                N_("pass axis=None, axis=-1 or axis=(0, 1)."),
            ),
            op="norm",
            axis=axis,
        )
    return normalize_axes(axis, len(x.shape), "norm")


def _vector_norm(values: list[float], p: float) -> float:
    if p == 2.0:
        return safe_norm(values)
    if p == 1.0:
        return safe_total([math.fabs(v) for v in values])
    if any(v != v for v in values):
        return _NAN
    magnitudes = [math.fabs(v) for v in values]
    if not magnitudes:
        return 0.0 if p > 0 else _INF
    return max(magnitudes) if p > 0 else min(magnitudes)


@primitive("norm")
def norm(x: Tensor, ord: float | str = 2, axis: Axis = None, keepdims: bool = False) -> Flat:
    """Vector norm of all entries, or along ``axis`` (``tf.norm``): 2 (Euclidean), 1, ``math.inf``, ``-math.inf``.

    ``ord=2`` (or ``'euclidean'``, ``'fro'``) never overflows or underflows
    on the way (``norm([1e200, 1e200])`` is ``1.414e+200``). At the zero
    vector the Euclidean norm has no derivative; microtape's gradient there
    is 0, a subgradient, as PyTorch's and as :func:`~microtape.abs`'s at 0
    (TF's and JAX's is NaN). Written by hand as ``mt.sqrt((x * x).sum())``,
    the gradient at 0 is ``0 * inf = nan`` instead: use ``norm``.

    Examples:
        >>> mt.norm(mt.tensor([3.0, -4.0]))
        Tensor(5.0, shape=())
        >>> mt.norm(mt.tensor([[3.0, -4.0], [1.0, 1.0]]), ord=1, axis=1)
        Tensor([7.0, 2.0], shape=(2,))
        >>> mt.grad(mt.norm)(mt.zeros((2,)))
        Tensor([0.0, 0.0], shape=(2,))
    """
    axes = _norm_axes(x, axis)
    p = _norm_ord(ord, axis)
    data = x._data
    assert data is not None  # the op wrapper checked it
    shape = reduced_shape(x.shape, axes, keepdims)
    groups: list[list[float]] = [[] for _ in range(size_of(shape))]
    for i, v in zip(reduce_index(x.shape, axes), data):
        groups[i].append(v)
    return [_vector_norm(g, p) for g in groups], shape


@norm.defvjp
def _norm_vjp(dout: Tensor, out: Tensor, x: Tensor, ord: float | str = 2, axis: Axis = None, keepdims: bool = False) -> Grads:
    p = _norm_ord(ord, axis)
    d = unreduce(dout, x.shape, axis, keepdims)
    if p == 1.0:
        return (mul(d, sign(x)),)
    n = unreduce(out, x.shape, axis, keepdims)
    if p == 2.0:
        zero = equal(n, const(0.0))  # the double where: x / n is never formed where n = 0 (a NaN norm stays NaN)
        return (where(zero, const(0.0), mul(d, div(x, where(zero, const(1.0), n)))),)
    reaches = equal(abs(x), n)  # the entries at the max (or min) of |x|; ties split the gradient
    ties = unreduce(reduce_sum(reaches, axis=axis, keepdims=True), x.shape, axis, True)
    return (div(mul(mul(d, sign(x)), reaches), ties),)


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
    for t, side in ((x, N_("left")), (y, N_("right"))):
        if len(t.shape) not in (1, 2):
            raise ShapeError(
                explain(
                    N_("matmul: the {0} operand has shape {1} (rank {2}).").format(side, t.shape, t.rank),
                    N_("matmul takes 1-D and 2-D tensors."),
                    N_("reshape it to 2-D first, for example t.reshape((-1, t.shape[-1]))."),
                ),
                op="matmul",
                shapes=(x.shape, y.shape),
            )
    (n, k), (k2, m) = _as_2d(x, True), _as_2d(y, False)
    if k != k2:
        raise ShapeError(
            explain(
                N_("matmul: inner dimensions differ: {0} @ {1} pairs {2} with {3}.").format(x.shape, y.shape, k, k2),
                N_("In x @ y the last dimension of x must equal the first dimension of y."),
                N_("transpose one operand (y.T) or check which axis holds the features."),
            ),
            op="matmul",
            shapes=(x.shape, y.shape),
        )
    assert x._data is not None and y._data is not None  # the op wrapper checked them
    shape = x.shape[:-1] + y.shape[1:]  # a 1-D operand's axis is contracted away, as in NumPy
    check_size(shape, N_("matmul: the product's shape"))  # (n, 0) @ (0, m) is n·m zeros
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
