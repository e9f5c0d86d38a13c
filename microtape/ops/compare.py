"""Comparisons, ``sign``, ``zeros_like``, the NaN tests, ``argmax``, ``argmin`` and ``one_hot``:
piecewise-constant primitives with a zero derivative.

Their values are 0/1 masks or indices (as floats: microtape has one dtype),
which do not change when an input moves a little, so every VJP here returns
zeros, as TF.js's ``Step``, ``IsNan``, ``ArgMax`` and ``OneHot`` gradients do.
"""

from __future__ import annotations

import math

from .kernels import map_flat, zip_flat
from .index_maps import normalize_axes, reduce_index, reduced_shape
from ..engine.primitive import primitive
from ..engine.shape import check_size, size_of
from ..engine.types import Flat, is_int, is_number
from ..errors import InvalidArgumentError, explain
from ..language import N_
from ..engine.tensor import Grads, Tensor

__all__ = [
    "argmax",
    "argmin",
    "equal",
    "greater",
    "greater_equal",
    "index_of",
    "is_finite",
    "is_inf",
    "is_nan",
    "less",
    "less_equal",
    "one_hot",
    "sign",
    "zeros_like",
]


# ── comparisons and sign: piecewise constant, so a zero derivative ──────────
# out = 1.0 where x > y, else 0.0 (and the like)      ∂out/∂x = ∂out/∂y = 0
# Zero, not "no gradient": relu, abs, maximum, minimum, clip_by_value and max
# build their VJPs from these masks, and an outer tape must see that the mask
# depends on x (with derivative 0) so a second derivative is zeros, not a cut.
# The same as TF.js's Step_grad, Sign_grad and GreaterEqual_grad.


def _zero_vjp(dout: Tensor, out: Tensor, *inputs: Tensor, **params: object) -> Grads:
    return tuple([zeros_like(x) for x in inputs])


# ── zeros_like ──────────────────────────────────────────────────────────────
# out = 0 in the shape of x      ∂out/∂x = 0
# An op on x, as TF.js's ZerosLike: the zero gradients above stay connected
# to x, so differentiating them again gives zeros too (not "no gradient").


@primitive("zeros_like")
def zeros_like(x: Tensor) -> Flat:
    """Zeros with the shape of ``x`` (``tf.zerosLike``); its gradient is zero.

    Examples:
        >>> mt.zeros_like(mt.ones((2,)))
        Tensor([0.0, 0.0], shape=(2,))
    """
    return [0.0] * x._size, x._shape


zeros_like.defvjp(_zero_vjp)


@primitive("greater", n_inputs=2)
def greater(x: Tensor, y: Tensor) -> Flat:
    """1.0 where ``x > y``, else 0.0, broadcasting (``tf.greater``); its gradient is zero.

    Examples:
        >>> mt.greater(mt.tensor([1.0, 2.0, 3.0]), 2.0)
        Tensor([0.0, 0.0, 1.0], shape=(3,))
    """
    return zip_flat(lambda a, b: float(a > b), x._data, x._shape, y._data, y._shape, "greater")


greater.defvjp(_zero_vjp)


@primitive("greater_equal", n_inputs=2)
def greater_equal(x: Tensor, y: Tensor) -> Flat:
    """1.0 where ``x >= y``, else 0.0, broadcasting (``tf.greaterEqual``); its gradient is zero.

    Examples:
        >>> mt.greater_equal(mt.tensor([1.0, 2.0, 3.0]), 2.0)
        Tensor([0.0, 1.0, 1.0], shape=(3,))
    """
    return zip_flat(lambda a, b: float(a >= b), x._data, x._shape, y._data, y._shape, "greater_equal")


greater_equal.defvjp(_zero_vjp)


@primitive("less", n_inputs=2)
def less(x: Tensor, y: Tensor) -> Flat:
    """1.0 where ``x < y``, else 0.0, broadcasting (``tf.less``); its gradient is zero.

    Examples:
        >>> mt.less(mt.tensor([1.0, 2.0, 3.0]), 2.0)
        Tensor([1.0, 0.0, 0.0], shape=(3,))
    """
    return zip_flat(lambda a, b: float(a < b), x._data, x._shape, y._data, y._shape, "less")


less.defvjp(_zero_vjp)


@primitive("less_equal", n_inputs=2)
def less_equal(x: Tensor, y: Tensor) -> Flat:
    """1.0 where ``x <= y``, else 0.0, broadcasting (``tf.lessEqual``); its gradient is zero.

    Examples:
        >>> mt.less_equal(mt.tensor([1.0, 2.0, 3.0]), 2.0)
        Tensor([1.0, 1.0, 0.0], shape=(3,))
    """
    return zip_flat(lambda a, b: float(a <= b), x._data, x._shape, y._data, y._shape, "less_equal")


less_equal.defvjp(_zero_vjp)


@primitive("equal", n_inputs=2)
def equal(x: Tensor, y: Tensor) -> Flat:
    """1.0 where ``x == y``, else 0.0, broadcasting (``tf.equal``); its gradient is zero.

    Examples:
        >>> mt.equal(mt.tensor([1.0, 2.0]), mt.tensor([1.0, 3.0]))
        Tensor([1.0, 0.0], shape=(2,))
    """
    return zip_flat(lambda a, b: float(a == b), x._data, x._shape, y._data, y._shape, "equal")


equal.defvjp(_zero_vjp)


@primitive("sign")
def sign(x: Tensor) -> Flat:
    """-1.0, 0.0 or 1.0 by the sign of each entry; nan stays nan (``tf.sign``); its gradient is zero.

    Examples:
        >>> mt.sign(mt.tensor([-3.0, 0.0, 2.0]))
        Tensor([-1.0, 0.0, 1.0], shape=(3,))
    """
    return map_flat(lambda v: float((v > 0.0) - (v < 0.0)) if v == v else v, x._data), x._shape


sign.defvjp(_zero_vjp)


# ── is_nan, is_finite, is_inf ───────────────────────────────────────────────
# out = 1.0 where x is nan (finite, ±inf), else 0.0     ∂out/∂x = 0
# What the double-where fix of a masked NaN tests: where(is_finite(x), x, 0.0).


@primitive("is_nan")
def is_nan(x: Tensor) -> Flat:
    """1.0 where an entry is NaN, else 0.0 (``tf.isNaN``); its gradient is zero.

    Examples:
        >>> mt.is_nan(mt.tensor([1.0, math.nan, math.inf]))
        Tensor([0.0, 1.0, 0.0], shape=(3,))
    """
    return map_flat(lambda v: float(v != v), x._data), x.shape


is_nan.defvjp(_zero_vjp)


@primitive("is_finite")
def is_finite(x: Tensor) -> Flat:
    """1.0 where an entry is neither NaN nor ±inf, else 0.0 (``tf.isFinite``); its gradient is zero.

    Examples:
        >>> mt.is_finite(mt.tensor([1.0, math.nan, -math.inf]))
        Tensor([1.0, 0.0, 0.0], shape=(3,))
    """
    return map_flat(lambda v: float(math.isfinite(v)), x._data), x.shape


is_finite.defvjp(_zero_vjp)


@primitive("is_inf")
def is_inf(x: Tensor) -> Flat:
    """1.0 where an entry is +inf or -inf, else 0.0 (``tf.isInf``); its gradient is zero.

    Examples:
        >>> mt.is_inf(mt.tensor([1.0, math.nan, -math.inf]))
        Tensor([0.0, 0.0, 1.0], shape=(3,))
    """
    return map_flat(lambda v: float(math.isinf(v)), x._data), x.shape


is_inf.defvjp(_zero_vjp)


# ── argmax, argmin ──────────────────────────────────────────────────────────
# out = the index of the largest (smallest) entry along axis, as a float    ∂out/∂x = 0
# An index does not move when x moves a little (it jumps where two entries
# tie), so the gradient is zero, as TF.js's ArgMax gradient: a loss built on
# argmax does not learn. Ties go to the first index; NaN counts as the
# largest and the smallest (NumPy's rule), so argmax points at it.


def _arg_reduce(x: Tensor, axis: int, largest: bool, op: str) -> Flat:
    if not is_int(axis):
        raise InvalidArgumentError(
            explain(
                N_("{0}: axis must be one int, got {1}.").format(op, repr(axis)),
                N_("{0} picks one index along one axis, as TF.js's tf.{1}(x, axis).").format(op, 'argMax' if largest else 'argMin'),
                N_("pass axis=0 (the default, as in TF.js) or axis=-1."),
            ),
            op=op,
            axis=axis,
        )
    if x.rank == 0:
        raise InvalidArgumentError(
            explain(
                N_("{0}: x is a scalar (shape ()), with no axis to search.").format(op),
                N_("{0} returns the index of an entry along an axis of a tensor of rank 1 or more.").format(op),
                N_("x.reshape((1,))"),
            ),
            op=op,
            axis=axis,
        )
    axes = normalize_axes(axis, x.rank, op)
    data = x._data
    assert data is not None  # the op wrapper checked it
    (ax,) = axes
    if x.shape[ax] == 0:
        raise InvalidArgumentError(
            explain(
                N_("{0}: axis {1} of a tensor of shape {2} has no entries, so there is no index to return.").format(op, ax, x.shape),
                N_("{0} returns the index of an entry along the axis.").format(op),
                N_("check the tensor's shape before asking for an index along that axis."),
            ),
            op=op,
            axis=axis,
        )
    shape = reduced_shape(x.shape, axes, keepdims=False)
    best: list[float] = [0.0] * size_of(shape)
    index: list[float] = [0.0] * len(best)
    seen = [False] * len(best)
    stride = size_of(x.shape[ax + 1 :])
    for flat, (slot, v) in enumerate(zip(reduce_index(x.shape, axes), data)):
        position = float((flat // stride) % x.shape[ax])
        if not seen[slot]:
            seen[slot], best[slot], index[slot] = True, v, position
            continue
        cur = best[slot]
        if cur != cur:
            continue  # a NaN already won
        if v != v or (v > cur if largest else v < cur):
            best[slot], index[slot] = v, position
    return index, shape


@primitive("argmax")
def argmax(x: Tensor, axis: int = 0) -> Flat:
    """Index of the largest entry along ``axis``, as a float (``tf.argMax``; ``axis=0`` by default, as in TF.js).

    Ties go to the first index; a NaN counts as the largest. Its gradient
    is zero: an index does not change when ``x`` moves a little.

    Examples:
        >>> mt.argmax(mt.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]]), axis=1)
        Tensor([1.0, 0.0], shape=(2,))
        >>> mt.grad(lambda t: mt.argmax(t))(mt.tensor([1.0, 3.0]))
        Tensor([0.0, 0.0], shape=(2,))
    """
    return _arg_reduce(x, axis, True, "argmax")


argmax.defvjp(_zero_vjp)


@primitive("argmin")
def argmin(x: Tensor, axis: int = 0) -> Flat:
    """Index of the smallest entry along ``axis``, as a float (``tf.argMin``; ``axis=0`` by default).

    Ties go to the first index; a NaN counts as the smallest. Its gradient is zero.

    Examples:
        >>> mt.argmin(mt.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]]), axis=1)
        Tensor([0.0, 1.0], shape=(2,))
    """
    return _arg_reduce(x, axis, False, "argmin")


argmin.defvjp(_zero_vjp)


# ── one_hot ─────────────────────────────────────────────────────────────────
# out[..., k] = on_value where indices[...] == k, else off_value      ∂out/∂indices = 0
# An index outside [0, depth) gives a row of off_value, as in TensorFlow.


def index_of(v: float, op: str, what: str = "indices") -> int:
    """``v`` as an int index: a float at most 0.01 from a whole number (a small step of the
    gradient checker is still that index); anything else is not an index, and an error."""
    k = round(v) if math.isfinite(v) else None
    if k is None or abs(v - k) > 0.01:
        raise InvalidArgumentError(
            explain(
                N_("{0}: {1} holds {2}, which is not a whole number.").format(op, what, repr(v)),
                N_("{0} say which entry to take; they are whole numbers stored as floats.").format(N_("Indices") if what == "indices" else what.capitalize()),
                N_("mt.tensor([round(i) for i in indices.data_sync()], shape=indices.shape)"),
            ),
            op=op,
            value=v,
        )
    return k


@primitive("one_hot")
def one_hot(indices: Tensor, depth: int, on_value: float = 1.0, off_value: float = 0.0) -> Flat:
    """Rows of ``off_value`` with ``on_value`` at each index (``tf.oneHot``): shape ``indices.shape + (depth,)``.

    An index outside ``[0, depth)`` (``±inf`` too) gives a row of
    ``off_value``, as in TensorFlow; a NaN index gives a row of NaN. Its
    gradient with respect to ``indices`` is zero.

    Examples:
        >>> mt.one_hot(mt.tensor([0.0, 2.0, 5.0]), 3)
        Tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]], shape=(3, 3))
    """
    if not is_int(depth) or depth < 0:
        raise InvalidArgumentError(
            explain(
                N_("one_hot: depth must be an int >= 0, got {0}.").format(repr(depth)),
                N_("depth is the number of classes: the length of each one-hot row."),
                N_("pass the number of classes, for example mt.one_hot(indices, 3)."),
            ),
            op="one_hot",
            value=depth,
        )
    for name, value in (("on_value", on_value), ("off_value", off_value)):
        if not is_number(value):
            raise InvalidArgumentError(
                explain(
                    N_("one_hot: {0} must be a number, got {1}: {2}.").format(name, type(value).__name__, format(repr(value), '.40')),
                    N_("on_value fills the chosen entry of each row, off_value the others."),
                    N_("pass numbers, for example on_value=1.0, off_value=0.0."),
                ),
                op="one_hot",
                value=value,
            )
    data = indices._data
    assert data is not None  # the op wrapper checked it
    shape = indices.shape + (depth,)
    check_size(shape, N_("one_hot: the one-hot shape"))
    on, off = float(on_value), float(off_value)
    out = [off] * size_of(shape)
    for row, v in enumerate(data):
        if v != v:
            out[row * depth : (row + 1) * depth] = [v] * depth  # a NaN index makes a row of NaN: it does not vanish
            continue
        if math.isinf(v):
            continue  # out of range, as any index outside [0, depth)
        k = index_of(v, "one_hot")
        if 0 <= k < depth:
            out[row * depth + k] = on
    return out, shape


one_hot.defvjp(_zero_vjp)
