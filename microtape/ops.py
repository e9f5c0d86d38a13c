"""Every primitive op: a maths header, the forward and the VJP side by side.

Read after ``_registry.py``. The forward of each entry is one kernel call on
flat lists; the VJP ``(dout, out, *inputs, **params) -> Grads`` is written
with public ops, so an outer tape records it and higher-order gradients come
for free. A VJP repeats its forward's keyword defaults. ``unbroadcast`` and
``unreduce`` at the top are the adjoints of broadcasting and reducing: where
the forward copied an entry, the backward sums the copies' gradients.

A binary VJP may take ``needs=(bool, bool)``: the tape says which inputs
need a gradient, and the VJP skips the others (the gradient of a constant
operand such as the 2.0 in ``x * 2.0`` is never computed). Without it, a
VJP returns every input's gradient.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

from ._kernels import map_flat, matmul_flat, reduce_flat, zip3_flat, zip_flat
from ._registry import primitive
from ._shape import (
    _expand,
    check_size,
    normalize_axes,
    reduce_index,
    reduced_shape,
    size_of,
    strides_of,
    transpose_index,
    validate_shape,
)
from ._types import Axis, Grads, Shape
from .errors import InvalidArgumentError, ShapeError, explain
from .tensor import Tensor, _new

__all__ = [
    "abs",
    "add",
    "broadcast_to",
    "clip_by_value",
    "clone",
    "concat",
    "cos",
    "div",
    "equal",
    "exp",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "log",
    "logsumexp",
    "matmul",
    "maximum",
    "minimum",
    "mul",
    "neg",
    "pad",
    "pow",
    "reduce_max",
    "reduce_sum",
    "relu",
    "reshape",
    "sigmoid",
    "sign",
    "sin",
    "slice",
    "sqrt",
    "square",
    "sub",
    "tanh",
    "transpose",
    "unbroadcast",
    "unreduce",
    "where",
    "zeros_like",
]

_INF = math.inf
_NAN = math.nan
_BOTH = (True, True)
_ALL3 = (True, True, True)


def _const(v: float) -> Tensor:
    """A scalar constant for a VJP (what ``x * 2.0`` makes behind the scenes)."""
    return _new([v], (), "tensor")


# ── the adjoints of broadcasting and reducing ───────────────────────────────


def unbroadcast(dout: Tensor, shape: Shape) -> Tensor:
    """Sum ``dout`` over the axes that broadcasting added or stretched, back to ``shape``.

    Examples:
        >>> from microtape.ops import unbroadcast
        >>> unbroadcast(mt.ones((2, 3)), (3,))
        Tensor([2.0, 2.0, 2.0], shape=(3,))
    """
    if dout.shape == shape:
        return dout
    lead = len(dout.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        [lead + i for i, d in enumerate(shape) if d == 1 and dout.shape[lead + i] != 1]
    )
    return reshape(reduce_sum(dout, axis=axes, keepdims=True), shape=shape)


def unreduce(dout: Tensor, shape: Shape, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Copy ``dout`` back over the axes a reduction removed, to ``shape``.

    Examples:
        >>> from microtape.ops import unreduce
        >>> unreduce(mt.tensor([1.0, 2.0]), (2, 3), axis=1)
        Tensor([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], shape=(2, 3))
    """
    axes = normalize_axes(axis, len(shape), "unreduce")
    kept = reduced_shape(shape, axes, keepdims=True)
    if dout.shape != kept:
        dout = reshape(dout, shape=kept)
    return broadcast_to(dout, shape=shape)


# ── safe scalar functions: what IEEE-754 says where Python raises ───────────


def _safe_exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return _INF


def _safe_log(v: float) -> float:
    if v > 0.0:
        return math.log(v)
    return -_INF if v == 0.0 else _NAN  # log 0 = -inf; negative or nan gives nan


def _safe_sqrt(v: float) -> float:
    return math.sqrt(v) if v >= 0.0 else _NAN


def _safe_sin(v: float) -> float:
    return math.sin(v) if not math.isinf(v) else _NAN


def _safe_cos(v: float) -> float:
    return math.cos(v) if not math.isinf(v) else _NAN


def _safe_div(a: float, b: float) -> float:
    if b != 0.0:
        return a / b
    if a == 0.0 or a != a:
        return _NAN
    return math.copysign(_INF, a) * math.copysign(1.0, b)


def _is_odd_int(v: float) -> bool:
    return v == v and not math.isinf(v) and v == int(v) and int(v) % 2 == 1


def _safe_pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return -_INF if a < 0 and _is_odd_int(b) else _INF
    except ValueError:
        if a == 0.0:  # zero to a negative power
            return math.copysign(_INF, a) if _is_odd_int(b) else _INF
        return _NAN  # a negative base to a fractional power


# ── add ─────────────────────────────────────────────────────────────────────
# out = x + y (broadcast)      ∂out/∂x = 1      ∂out/∂y = 1


@primitive("add", n_inputs=2)
def add(x: Tensor, y: Tensor) -> Tensor:
    """Add entry by entry, broadcasting like NumPy (``tf.add``).

    Examples:
        >>> mt.add(mt.tensor([1.0, 2.0]), mt.tensor([10.0, 20.0]))
        Tensor([11.0, 22.0], shape=(2,))
        >>> mt.tensor([[1.0], [2.0]]) + mt.tensor([10.0, 20.0])
        Tensor([[11.0, 21.0], [12.0, 22.0]], shape=(2, 2))
    """
    return zip_flat(operator.add, x, y, "add")


@add.defvjp
def _add_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    return (
        unbroadcast(dout, x.shape) if needs[0] else None,
        unbroadcast(dout, y.shape) if needs[1] else None,
    )


# ── sub ─────────────────────────────────────────────────────────────────────
# out = x - y (broadcast)      ∂out/∂x = 1      ∂out/∂y = -1


@primitive("sub", n_inputs=2)
def sub(x: Tensor, y: Tensor) -> Tensor:
    """Subtract entry by entry, broadcasting like NumPy (``tf.sub``).

    Examples:
        >>> 1 - mt.tensor([0.25, 2.0])
        Tensor([0.75, -1.0], shape=(2,))
    """
    return zip_flat(operator.sub, x, y, "sub")


@sub.defvjp
def _sub_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    return (
        unbroadcast(dout, x.shape) if needs[0] else None,
        unbroadcast(neg(dout), y.shape) if needs[1] else None,
    )


# ── mul ─────────────────────────────────────────────────────────────────────
# out = x·y (broadcast)        ∂out/∂x = y      ∂out/∂y = x
# Broadcasting copied entries forward, so their gradients are summed back.


@primitive("mul", n_inputs=2)
def mul(x: Tensor, y: Tensor) -> Tensor:
    """Multiply entry by entry, broadcasting like NumPy (``tf.mul``).

    Examples:
        >>> 2.0 * mt.tensor([1.0, 2.0])
        Tensor([2.0, 4.0], shape=(2,))
    """
    return zip_flat(operator.mul, x, y, "mul")


@mul.defvjp
def _mul_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    return (
        unbroadcast(mul(dout, y), x.shape) if needs[0] else None,
        unbroadcast(mul(dout, x), y.shape) if needs[1] else None,
    )


# ── div ─────────────────────────────────────────────────────────────────────
# out = x / y                  ∂out/∂x = 1/y    ∂out/∂y = -x/y² = -out/y
# IEEE: 1/0 = inf, -1/0 = -inf, 0/0 = nan (no ZeroDivisionError).


@primitive("div", n_inputs=2)
def div(x: Tensor, y: Tensor) -> Tensor:
    """Divide entry by entry, broadcasting like NumPy (``tf.div``).

    Division by zero follows IEEE-754: ``1/0`` is ``inf`` and ``0/0`` is ``nan``.

    Examples:
        >>> mt.tensor([1.0, -1.0, 0.0]) / 0.0
        Tensor([inf, -inf, nan], shape=(3,))
    """
    return zip_flat(operator.truediv, x, y, "div", _safe_div)


@div.defvjp
def _div_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    return (
        unbroadcast(div(dout, y), x.shape) if needs[0] else None,
        unbroadcast(neg(div(mul(dout, out), y)), y.shape) if needs[1] else None,
    )


# ── neg ─────────────────────────────────────────────────────────────────────
# out = -x                     ∂out/∂x = -1


@primitive("neg")
def neg(x: Tensor) -> Tensor:
    """Flip the sign of every entry (``tf.neg``).

    Examples:
        >>> -mt.tensor([1.0, -2.0])
        Tensor([-1.0, 2.0], shape=(2,))
    """
    return map_flat(operator.neg, x, "neg")


@neg.defvjp
def _neg_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (neg(dout),)


# ── clone ───────────────────────────────────────────────────────────────────
# out = x (a new tensor with the same values)      ∂out/∂x = 1      (TF.js Identity_grad)


@primitive("clone")
def clone(x: Tensor) -> Tensor:
    """Copy a tensor: the identity op, recorded like any other (``tf.clone``).

    Examples:
        >>> mt.clone(mt.tensor([1.0, 2.0]))
        Tensor([1.0, 2.0], shape=(2,))
        >>> mt.grad(lambda a: (a.clone() * a).sum())(mt.tensor([1.0, 2.0]))
        Tensor([2.0, 4.0], shape=(2,))
    """
    assert x._data is not None  # the op wrapper checked it
    return _new(list(x._data), x.shape, "clone")


@clone.defvjp
def _clone_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (dout,)


# ── square ──────────────────────────────────────────────────────────────────
# out = x²                     ∂out/∂x = 2x


@primitive("square")
def square(x: Tensor) -> Tensor:
    """Square every entry (``tf.square``).

    Examples:
        >>> mt.square(mt.tensor([3.0, -2.0]))
        Tensor([9.0, 4.0], shape=(2,))
    """
    return map_flat(lambda v: v * v, x, "square")


@square.defvjp
def _square_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, x * 2.0),)


# ── sqrt ────────────────────────────────────────────────────────────────────
# out = √x                     ∂out/∂x = 1 / (2√x) = 1 / (2·out)
# IEEE: sqrt of a negative number is nan; the gradient at 0 is inf.


@primitive("sqrt")
def sqrt(x: Tensor) -> Tensor:
    """Square root of every entry (``tf.sqrt``); negative entries give ``nan``.

    Examples:
        >>> mt.sqrt(mt.tensor([4.0, -1.0]))
        Tensor([2.0, nan], shape=(2,))
    """
    return map_flat(math.sqrt, x, "sqrt", _safe_sqrt)


@sqrt.defvjp
def _sqrt_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (div(dout, out * 2.0),)


# ── pow ─────────────────────────────────────────────────────────────────────
# out = x^y          ∂out/∂x = y·x^(y-1)      ∂out/∂y = out·ln x  (taken as 0 where x ≤ 0)
# The exponent's gradient uses a safe log, as TF.js does, so a constant
# exponent never puts a NaN into the backward pass.


@primitive("pow", n_inputs=2)
def pow(x: Tensor, y: Tensor) -> Tensor:
    """Raise ``x`` to the power ``y`` entry by entry (``tf.pow``).

    IEEE rules apply: ``(-8) ** 0.5`` is ``nan``, ``0 ** -1`` is ``inf``.

    Examples:
        >>> mt.tensor([2.0, 3.0]) ** 2
        Tensor([4.0, 9.0], shape=(2,))
        >>> mt.pow(mt.tensor([-8.0, 0.0]), mt.tensor([0.5, -1.0]))
        Tensor([nan, inf], shape=(2,))
    """
    return zip_flat(_safe_pow, x, y, "pow")


@pow.defvjp
def _pow_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    dx = dy = None
    if needs[0]:
        dx = unbroadcast(mul(dout, mul(y, pow(x, y - 1.0))), x.shape)
    if needs[1]:
        positive = x.greater(0.0)
        safe_log = where(positive, log(where(positive, x, _const(1.0))), _const(0.0))
        dy = unbroadcast(mul(dout, mul(out, safe_log)), y.shape)
    return dx, dy


# ── exp ─────────────────────────────────────────────────────────────────────
# out = e^x                    ∂out/∂x = e^x = out     (reuse the forward result)


@primitive("exp")
def exp(x: Tensor) -> Tensor:
    """Raise e to the power of every entry (``tf.exp``); overflow gives ``inf``.

    Examples:
        >>> mt.exp(mt.tensor([0.0, 1.0, 1000.0]))
        Tensor([1.0, 2.718, inf], shape=(3,))
    """
    return map_flat(math.exp, x, "exp", _safe_exp)


@exp.defvjp
def _exp_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, out),)


# ── log ─────────────────────────────────────────────────────────────────────
# out = ln x                   ∂out/∂x = 1/x
# IEEE: log 0 = -inf, log of a negative number = nan.


@primitive("log")
def log(x: Tensor) -> Tensor:
    """Natural logarithm of every entry (``tf.log``).

    Examples:
        >>> mt.log(mt.tensor([1.0, 0.0, -1.0]))
        Tensor([0.0, -inf, nan], shape=(3,))
    """
    return map_flat(math.log, x, "log", _safe_log)


@log.defvjp
def _log_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (div(dout, x),)


# ── abs ─────────────────────────────────────────────────────────────────────
# out = |x|                    ∂out/∂x = sign(x)
# Kink at 0: the gradient there is 0 (sign(0) = 0), as in TensorFlow.


@primitive("abs")
def abs(x: Tensor) -> Tensor:
    """Absolute value of every entry (``tf.abs``).

    At the kink ``x = 0`` the gradient is 0, as in TensorFlow.

    Examples:
        >>> mt.abs(mt.tensor([-2.0, 0.0, 3.0]))
        Tensor([2.0, 0.0, 3.0], shape=(3,))
        >>> mt.grad(mt.abs)(mt.tensor([-2.0, 0.0, 3.0]))
        Tensor([-1.0, 0.0, 1.0], shape=(3,))
    """
    return map_flat(math.fabs, x, "abs")


@abs.defvjp
def _abs_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, sign(x)),)


# ── sin, cos ────────────────────────────────────────────────────────────────
# sin: ∂out/∂x = cos x         cos: ∂out/∂x = -sin x       (sin(±inf) = nan)


@primitive("sin")
def sin(x: Tensor) -> Tensor:
    """Sine of every entry, in radians (``tf.sin``).

    Examples:
        >>> mt.sin(mt.tensor([0.0, math.pi / 2]))
        Tensor([0.0, 1.0], shape=(2,))
    """
    return map_flat(math.sin, x, "sin", _safe_sin)


@sin.defvjp
def _sin_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, cos(x)),)


@primitive("cos")
def cos(x: Tensor) -> Tensor:
    """Cosine of every entry, in radians (``tf.cos``).

    Examples:
        >>> mt.cos(mt.tensor([0.0, math.pi]))
        Tensor([1.0, -1.0], shape=(2,))
    """
    return map_flat(math.cos, x, "cos", _safe_cos)


@cos.defvjp
def _cos_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (neg(mul(dout, sin(x))),)


# ── tanh ────────────────────────────────────────────────────────────────────
# out = tanh x                 ∂out/∂x = 1 - tanh² x = 1 - out²
# The VJP reads ``out``; an outer tape recorded ``out``, so the second
# derivative stays connected.


@primitive("tanh")
def tanh(x: Tensor) -> Tensor:
    """Hyperbolic tangent of every entry (``tf.tanh``).

    Examples:
        >>> mt.tanh(mt.tensor([0.0, 100.0]))
        Tensor([0.0, 1.0], shape=(2,))
    """
    return map_flat(math.tanh, x, "tanh")


@tanh.defvjp
def _tanh_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, 1.0 - square(out)),)


# ── sigmoid ─────────────────────────────────────────────────────────────────
# out = 1 / (1 + e^-x)         ∂out/∂x = out·(1 - out)


def _sigmoid(v: float) -> float:
    if v >= 0.0:
        return 1.0 / (1.0 + math.exp(-v))
    if v != v:
        return v
    e = math.exp(v) if v > -745.0 else 0.0
    return e / (1.0 + e)


@primitive("sigmoid")
def sigmoid(x: Tensor) -> Tensor:
    """Logistic sigmoid of every entry, stable for large ``|x|`` (``tf.sigmoid``).

    Examples:
        >>> mt.sigmoid(mt.tensor([0.0, -1000.0, 1000.0]))
        Tensor([0.5, 0.0, 1.0], shape=(3,))
    """
    return map_flat(_sigmoid, x, "sigmoid")


@sigmoid.defvjp
def _sigmoid_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, mul(out, 1.0 - out)),)


# ── relu ────────────────────────────────────────────────────────────────────
# out = max(x, 0)              ∂out/∂x = 1 where x > 0, else 0
# Kink at 0: the gradient there is 0, as in TensorFlow and PyTorch.


@primitive("relu")
def relu(x: Tensor) -> Tensor:
    """Rectified linear unit: ``max(x, 0)`` entry by entry (``tf.relu``).

    At the kink ``x = 0`` the gradient is 0; ``relu(nan)`` is ``nan``.

    Examples:
        >>> mt.relu(mt.tensor([-1.0, 0.0, 2.0]))
        Tensor([0.0, 0.0, 2.0], shape=(3,))
        >>> mt.grad(mt.relu)(mt.tensor([-1.0, 0.0, 2.0]))
        Tensor([0.0, 0.0, 1.0], shape=(3,))
    """
    return map_flat(lambda v: 0.0 if v <= 0.0 else v, x, "relu")


@relu.defvjp
def _relu_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, x.greater(0.0)),)


# ── maximum, minimum ────────────────────────────────────────────────────────
# maximum: ∂out/∂x = 1 where x ≥ y, ∂out/∂y = 1 where x < y
# Tie (x = y): the whole gradient goes to x, as in TensorFlow; so
# d/da maximum(a, a) = 1. minimum is the mirror image (x ≤ y goes to x).


@primitive("maximum", n_inputs=2)
def maximum(x: Tensor, y: Tensor) -> Tensor:
    """Larger of ``x`` and ``y`` entry by entry, broadcasting (``tf.maximum``).

    At a tie the gradient goes to ``x``, as in TensorFlow. NaN wins.

    Examples:
        >>> mt.maximum(mt.tensor([1.0, 5.0]), 3.0)
        Tensor([3.0, 5.0], shape=(2,))
    """
    return zip_flat(lambda a, b: a if a >= b or a != a else b, x, y, "maximum")


@maximum.defvjp
def _maximum_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    dx = mul(dout, greater_equal(x, y))
    return (
        unbroadcast(dx, x.shape) if needs[0] else None,
        unbroadcast(sub(dout, dx), y.shape) if needs[1] else None,
    )


@primitive("minimum", n_inputs=2)
def minimum(x: Tensor, y: Tensor) -> Tensor:
    """Smaller of ``x`` and ``y`` entry by entry, broadcasting (``tf.minimum``).

    At a tie the gradient goes to ``x``, as in TensorFlow. NaN wins.

    Examples:
        >>> mt.minimum(mt.tensor([1.0, 5.0]), 3.0)
        Tensor([1.0, 3.0], shape=(2,))
    """
    return zip_flat(lambda a, b: a if a <= b or a != a else b, x, y, "minimum")


@minimum.defvjp
def _minimum_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    dx = mul(dout, less_equal(x, y))
    return (
        unbroadcast(dx, x.shape) if needs[0] else None,
        unbroadcast(sub(dout, dx), y.shape) if needs[1] else None,
    )


# ── sum ─────────────────────────────────────────────────────────────────────
# out = Σ_axis x               ∂out/∂x_i = 1     (every entry gets its slice's dout)


@primitive("sum")
def reduce_sum(x: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Sum entries along ``axis`` (int, negative, tuple) or all of them (``tf.sum``).

    Examples:
        >>> x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        >>> mt.sum(x)
        Tensor(21.0, shape=())
        >>> x.sum(axis=0)
        Tensor([5.0, 7.0, 9.0], shape=(3,))
        >>> x.sum(axis=-1, keepdims=True)
        Tensor([[6.0], [15.0]], shape=(2, 1))
    """
    axes = normalize_axes(axis, len(x.shape), "sum")
    return reduce_flat(x, axes, keepdims, "sum", "sum")


@reduce_sum.defvjp
def _sum_vjp(dout: Tensor, out: Tensor, x: Tensor, axis: Axis = None, keepdims: bool = False) -> Grads:
    return (unreduce(dout, x.shape, axis, keepdims),)


# ── max ─────────────────────────────────────────────────────────────────────
# out = max_axis x             ∂out/∂x_i = 1/k where x_i is one of k tied maxima, else 0
# Ties split the gradient evenly (a valid subgradient). TF.js gives every
# tied entry the whole gradient instead.


@primitive("max")
def reduce_max(x: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Largest entry along ``axis`` or overall (``tf.max``); NaN wins.

    When several entries tie for the maximum the gradient is split evenly
    among them (TF.js gives each of them the whole gradient).

    Examples:
        >>> mt.max(mt.tensor([[1.0, 5.0], [7.0, 2.0]]), axis=1)
        Tensor([5.0, 7.0], shape=(2,))
        >>> mt.grad(mt.max)(mt.tensor([3.0, 1.0, 3.0]))
        Tensor([0.5, 0.0, 0.5], shape=(3,))
    """
    axes = normalize_axes(axis, len(x.shape), "max")
    return reduce_flat(x, axes, keepdims, "max", "max")


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
def logsumexp(x: Tensor, axis: Axis = -1, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` along ``axis``, computed without overflow (``tf.logSumExp``).

    The default ``axis=-1`` matches ``softmax``; TF.js defaults to every axis.

    Examples:
        >>> mt.logsumexp(mt.tensor([1000.0, 1000.0]))
        Tensor(1001.0, shape=())
    """
    axes = normalize_axes(axis, len(x.shape), "logsumexp")
    data = x._data
    assert data is not None  # the op wrapper checked it
    shape = reduced_shape(x.shape, axes, keepdims)
    groups: list[list[float]] = [[] for _ in range(size_of(shape))]
    for i, v in zip(reduce_index(x.shape, axes), data):
        groups[i].append(v)
    return _new([_lse(g) for g in groups], shape, "logsumexp")


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
def matmul(x: Tensor, y: Tensor) -> Tensor:
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
    return _new(matmul_flat(x._data, y._data, n, k, m), shape, "matmul")


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


# ── transpose ───────────────────────────────────────────────────────────────
# out = x with axes permuted by perm      dx = dout permuted back


def _check_perm(perm: Sequence[int] | None, rank: int) -> tuple[int, ...]:
    if perm is None:
        return tuple(range(rank - 1, -1, -1))
    p = tuple(perm)
    if sorted(p) != list(range(rank)):
        raise InvalidArgumentError(
            explain(
                f"transpose: perm {p} is not a permutation of the {rank} axes {tuple(range(rank))}.",
                "perm must name every axis exactly once.",
                f"for a rank-{rank} tensor try perm={tuple(range(rank - 1, -1, -1))}.",
            ),
            op="transpose",
            perm=p,
        )
    return p


@primitive("transpose")
def transpose(x: Tensor, perm: Sequence[int] | None = None) -> Tensor:
    """Permute the axes; by default reverse them (``tf.transpose``).

    Examples:
        >>> mt.transpose(mt.tensor([[1.0, 2.0, 3.0]]))
        Tensor([[1.0], [2.0], [3.0]], shape=(3, 1))
    """
    p = _check_perm(perm, x.rank)
    assert x._data is not None  # the op wrapper checked it
    data = x._data
    shape = tuple([x.shape[i] for i in p])
    return _new([data[i] for i in transpose_index(x.shape, p)], shape, "transpose")


@transpose.defvjp
def _transpose_vjp(dout: Tensor, out: Tensor, x: Tensor, perm: Sequence[int] | None = None) -> Grads:
    p = _check_perm(perm, x.rank)
    inverse = [0] * len(p)
    for i, axis in enumerate(p):
        inverse[axis] = i
    return (transpose(dout, perm=inverse),)


# ── reshape ─────────────────────────────────────────────────────────────────
# out = the same entries in a new shape   dx = dout reshaped back


def _infer_shape(x: Tensor, shape: Sequence[int]) -> Shape:
    if isinstance(shape, int):
        shape = (shape,)
    dims = list(shape) if isinstance(shape, (tuple, list)) else None
    if dims is None or any(isinstance(d, bool) or not isinstance(d, int) or d < -1 for d in dims) or dims.count(-1) > 1:
        raise ShapeError(
            explain(
                f"reshape: {shape!r} is not a valid shape.",
                "A shape is a tuple of non-negative ints, with at most one -1 (inferred).",
                "for example x.reshape((2, -1)).",
            ),
            op="reshape",
            shapes=(x.shape, shape),
        )
    if -1 in dims:
        known = size_of(tuple([d for d in dims if d != -1]))
        if known == 0 or x.size % known:
            raise ShapeError(
                explain(
                    f"reshape: cannot infer -1 in {tuple(dims)} for {x.size} entries (shape {x.shape}).",
                    "The known dimensions must divide the number of entries.",
                    "check the other dimensions of the new shape.",
                ),
                op="reshape",
                shapes=(x.shape, tuple(dims)),
            )
        dims[dims.index(-1)] = x.size // known
    target = tuple(dims)
    if size_of(target) != x.size:
        raise ShapeError(
            explain(
                f"reshape: cannot reshape {x.size} entries (shape {x.shape}) into shape {target} "
                f"({size_of(target)} entries).",
                "reshape keeps every entry, so the sizes must match.",
                "use -1 for one dimension to let microtape compute it.",
            ),
            op="reshape",
            shapes=(x.shape, target),
        )
    return target


@primitive("reshape")
def reshape(x: Tensor, shape: Sequence[int]) -> Tensor:
    """Give the same entries a new shape; one dimension may be -1 (``tf.reshape``).

    Examples:
        >>> mt.reshape(mt.tensor([1.0, 2.0, 3.0, 4.0]), (2, -1))
        Tensor([[1.0, 2.0], [3.0, 4.0]], shape=(2, 2))
    """
    target = _infer_shape(x, shape)
    assert x._data is not None  # the op wrapper checked it
    return _new(x._data, target, "reshape")  # tensors are immutable, so the list is shared


@reshape.defvjp
def _reshape_vjp(dout: Tensor, out: Tensor, x: Tensor, shape: Sequence[int] = ()) -> Grads:
    return (reshape(dout, shape=x.shape),)


# ── broadcast_to ────────────────────────────────────────────────────────────
# out = x copied along new or size-1 axes     dx = copies' gradients summed


@primitive("broadcast_to")
def broadcast_to(x: Tensor, shape: Sequence[int]) -> Tensor:
    """Copy ``x`` out to ``shape`` by NumPy's broadcasting rules (``tf.broadcastTo``).

    Examples:
        >>> mt.broadcast_to(mt.tensor([1.0, 2.0]), (2, 2))
        Tensor([[1.0, 2.0], [1.0, 2.0]], shape=(2, 2))
    """
    from ._shape import broadcast_index, broadcast_shapes

    target = validate_shape(shape)
    if broadcast_shapes(x.shape, target, "broadcast_to") != target:
        raise ShapeError(
            explain(
                f"broadcast_to: shape {x.shape} cannot be broadcast to {target}.",
                "broadcast_to may add leading axes and stretch size-1 axes only.",
                "reshape first so the axes line up.",
            ),
            op="broadcast_to",
            shapes=(x.shape, target),
        )
    assert x._data is not None  # the op wrapper checked it
    data = x._data
    return _new([data[i] for i in broadcast_index(x.shape, target)], target, "broadcast_to")


@broadcast_to.defvjp
def _broadcast_to_vjp(dout: Tensor, out: Tensor, x: Tensor, shape: Sequence[int] = ()) -> Grads:
    return (unbroadcast(dout, x.shape),)


# ── clip_by_value ───────────────────────────────────────────────────────────
# out = min(max(x, lo), hi)    ∂out/∂x = 1 where lo ≤ x ≤ hi (inclusive, as TF.js), else 0


@primitive("clip_by_value")
def clip_by_value(x: Tensor, clip_value_min: float, clip_value_max: float) -> Tensor:
    """Clamp every entry to ``[clip_value_min, clip_value_max]`` (``tf.clipByValue``).

    The bounds are inclusive: at exactly ``clip_value_min`` or ``clip_value_max``
    the gradient still flows, as in TF.js. ``min > max`` is an error.

    Examples:
        >>> mt.clip_by_value(mt.tensor([-5.0, 0.5, 5.0]), -1, 1)
        Tensor([-1.0, 0.5, 1.0], shape=(3,))
    """
    lo, hi = float(clip_value_min), float(clip_value_max)
    if not lo <= hi:
        raise InvalidArgumentError(
            explain(
                f"clip_by_value: clip_value_min ({clip_value_min}) must be <= clip_value_max ({clip_value_max}).",
                "The interval [min, max] would be empty.",
                "swap the two bounds.",
            ),
            op="clip_by_value",
            bounds=(clip_value_min, clip_value_max),
        )
    return map_flat(lambda v: v if lo <= v <= hi or v != v else (lo if v < lo else hi), x, "clip_by_value")


@clip_by_value.defvjp
def _clip_by_value_vjp(dout: Tensor, out: Tensor, x: Tensor, clip_value_min: float = 0.0, clip_value_max: float = 0.0) -> Grads:
    inside = mul(x.greater_equal(clip_value_min), x.less_equal(clip_value_max))
    return (mul(dout, inside),)


# ── slice, pad (each is the other's adjoint) ────────────────────────────────
# slice: out = x[begin : begin + size]     dx = dout padded with zeros back to x.shape
# pad:   out = x surrounded by constants   dx = the middle slice of dout


def _slice_spec(x: Tensor, begin: Sequence[int], size: Sequence[int] | None) -> tuple[Shape, Shape]:
    b = tuple(begin)
    s = tuple(size) if size is not None else (-1,) * len(b)
    ok = len(b) == len(s) == x.rank and all(
        0 <= bi <= d and (si == -1 or 0 <= si <= d - bi) for bi, si, d in zip(b, s, x.shape)
    )
    if not ok:
        raise InvalidArgumentError(
            explain(
                f"slice: begin {b} and size {s} do not fit shape {x.shape}.",
                "Give one begin and one size (or -1 for 'to the end') per axis, inside the tensor.",
                f"for example mt.slice(x, {tuple(0 for _ in x.shape)}, {x.shape}).",
            ),
            op="slice",
            shape=x.shape,
        )
    return b, tuple([d - bi if si == -1 else si for bi, si, d in zip(b, s, x.shape)])


@primitive("slice")
def slice(x: Tensor, begin: Sequence[int], size: Sequence[int] | None = None) -> Tensor:
    """Take the block that starts at ``begin`` and has ``size`` (``tf.slice``); -1 means to the end.

    Examples:
        >>> mt.slice(mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), (0, 1), (2, 2))
        Tensor([[2.0, 3.0], [5.0, 6.0]], shape=(2, 2))
    """
    b, s = _slice_spec(x, begin, size)
    assert x._data is not None  # the op wrapper checked it
    data = x._data
    st = strides_of(x.shape)
    offset = sum(bi * si for bi, si in zip(b, st))
    index = _expand(s, st) if size_of(s) else []
    return _new([data[offset + i] for i in index], s, "slice")


@slice.defvjp
def _slice_vjp(dout: Tensor, out: Tensor, x: Tensor, begin: Sequence[int] = (), size: Sequence[int] | None = None) -> Grads:
    b, s = _slice_spec(x, begin, size)
    return (pad(dout, paddings=[(bi, d - bi - si) for bi, si, d in zip(b, s, x.shape)]),)


@primitive("pad")
def pad(x: Tensor, paddings: Sequence[tuple[int, int]], constant_value: float = 0.0) -> Tensor:
    """Surround ``x`` with ``constant_value``: ``paddings[i] = (before, after)`` (``tf.pad``).

    Examples:
        >>> mt.pad(mt.tensor([1.0, 2.0]), [(1, 2)])
        Tensor([0.0, 1.0, 2.0, 0.0, 0.0], shape=(5,))
    """
    pads = [tuple(p) for p in paddings]
    if len(pads) != x.rank or any(len(p) != 2 or min(p) < 0 for p in pads):
        raise InvalidArgumentError(
            explain(
                f"pad: paddings {pads} do not fit a tensor of shape {x.shape}.",
                "Give one (before, after) pair of non-negative ints per axis.",
                f"for example {[(1, 1)] * x.rank}.",
            ),
            op="pad",
            shape=x.shape,
        )
    shape = tuple([d + p[0] + p[1] for d, p in zip(x.shape, pads)])
    check_size(shape, "pad: the padded shape")
    out = [float(constant_value)] * size_of(shape)
    st = strides_of(shape)
    offset = sum(p[0] * s for p, s in zip(pads, st))
    assert x._data is not None  # the op wrapper checked it
    if x.size:
        for i, v in zip(_expand(x.shape, st), x._data):
            out[offset + i] = v
    return _new(out, shape, "pad")


@pad.defvjp
def _pad_vjp(dout: Tensor, out: Tensor, x: Tensor, paddings: Sequence[tuple[int, int]] = (), constant_value: float = 0.0) -> Grads:
    return (slice(dout, begin=[p[0] for p in paddings], size=x.shape),)


# ── concat ──────────────────────────────────────────────────────────────────
# out = x₁, x₂, … joined along axis       dxᵢ = the slice of dout where xᵢ went


@primitive("concat", n_inputs=-1)
def concat(xs: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join tensors along an existing ``axis`` (``tf.concat``).

    Examples:
        >>> mt.concat([mt.tensor([[1.0]]), mt.tensor([[2.0]])], axis=1)
        Tensor([[1.0, 2.0]], shape=(1, 2))
    """
    first = xs[0]
    (ax,) = normalize_axes(axis, first.rank, "concat") if first.rank else (None,)
    if ax is None:
        raise ShapeError(
            explain(
                "concat: cannot concatenate scalars (rank 0).",
                "concat joins along an existing axis.",
                "use mt.stack to make a new axis.",
            ),
            op="concat",
            shapes=tuple(t.shape for t in xs),
        )
    for t in xs[1:]:
        if t.rank != first.rank or any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape)) if i != ax):
            raise ShapeError(
                explain(
                    f"concat: shapes {[t.shape for t in xs]} differ outside axis {ax}.",
                    "Every tensor must have the same shape except along the concat axis.",
                    "reshape or transpose the odd one out.",
                ),
                op="concat",
                shapes=tuple(t.shape for t in xs),
            )
    outer = size_of(first.shape[:ax])
    chunks = [t.shape[ax] * size_of(t.shape[ax + 1 :]) for t in xs]
    out: list[float] = []
    datas = [t._data for t in xs]
    for o in range(outer):
        for data, c in zip(datas, chunks):
            assert data is not None  # the op wrapper checked it
            out.extend(data[o * c : (o + 1) * c])
    shape = first.shape[:ax] + (sum(t.shape[ax] for t in xs),) + first.shape[ax + 1 :]
    return _new(out, shape, "concat")


@concat.defvjp
def _concat_vjp(dout: Tensor, out: Tensor, *xs: Tensor, axis: int = 0) -> Grads:
    (ax,) = normalize_axes(axis, xs[0].rank, "concat")
    grads = []
    start = 0
    for t in xs:
        begin = [0] * t.rank
        begin[ax] = start
        grads.append(slice(dout, begin=begin, size=t.shape))
        start += t.shape[ax]
    return tuple(grads)


# ── where ───────────────────────────────────────────────────────────────────
# out = x where condition ≠ 0, else y (broadcast)
# ∂out/∂x = 1 where condition, ∂out/∂y = 1 elsewhere; ∂out/∂condition = 0 (a selector).


@primitive("where", n_inputs=3)
def where(condition: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """Pick ``x`` where ``condition`` is non-zero, else ``y``, broadcasting (``tf.where``).

    Examples:
        >>> mt.where(mt.tensor([1.0, 0.0]), mt.tensor([1.0, 2.0]), 0.0)
        Tensor([1.0, 0.0], shape=(2,))
    """
    return zip3_flat(lambda c, a, b: a if c else b, condition, x, y, "where")


@where.defvjp
def _where_vjp(dout: Tensor, out: Tensor, condition: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _ALL3) -> Grads:
    dx = where(condition, dout, _const(0.0))
    return (
        zeros_like(condition) if needs[0] else None,
        unbroadcast(dx, x.shape) if needs[1] else None,
        unbroadcast(sub(dout, dx), y.shape) if needs[2] else None,
    )


# ── comparisons and sign: piecewise constant, so a zero derivative ──────────
# out = 1.0 where x > y, else 0.0 (and the like)      ∂out/∂x = ∂out/∂y = 0
# Zero, not "no gradient": relu, abs, maximum, minimum, clip_by_value and max
# build their VJPs from these masks, and an outer tape must see that the mask
# depends on x (with derivative 0) so a second derivative is zeros, not a cut.
# The same as TF.js's Step_grad, Sign_grad and GreaterEqual_grad.


def _zero_vjp(dout: Tensor, out: Tensor, *inputs: Tensor) -> Grads:
    return tuple([zeros_like(x) for x in inputs])


# ── zeros_like ──────────────────────────────────────────────────────────────
# out = 0 in the shape of x      ∂out/∂x = 0
# An op on x, as TF.js's ZerosLike: the zero gradients above stay connected
# to x, so differentiating them again gives zeros too (not "no gradient").


@primitive("zeros_like")
def zeros_like(x: Tensor) -> Tensor:
    """Zeros with the shape of ``x`` (``tf.zerosLike``); its gradient is zero.

    Examples:
        >>> mt.zeros_like(mt.ones((2,)))
        Tensor([0.0, 0.0], shape=(2,))
    """
    return _new([0.0] * x.size, x.shape, "zeros_like")


zeros_like.defvjp(_zero_vjp)



@primitive("greater", n_inputs=2)
def greater(x: Tensor, y: Tensor) -> Tensor:
    """1.0 where ``x > y``, else 0.0, broadcasting (``tf.greater``); its gradient is zero.

    Examples:
        >>> mt.greater(mt.tensor([1.0, 2.0, 3.0]), 2.0)
        Tensor([0.0, 0.0, 1.0], shape=(3,))
    """
    return zip_flat(lambda a, b: float(a > b), x, y, "greater")


greater.defvjp(_zero_vjp)


@primitive("greater_equal", n_inputs=2)
def greater_equal(x: Tensor, y: Tensor) -> Tensor:
    """1.0 where ``x >= y``, else 0.0, broadcasting (``tf.greaterEqual``); its gradient is zero.

    Examples:
        >>> mt.greater_equal(mt.tensor([1.0, 2.0, 3.0]), 2.0)
        Tensor([0.0, 1.0, 1.0], shape=(3,))
    """
    return zip_flat(lambda a, b: float(a >= b), x, y, "greater_equal")


greater_equal.defvjp(_zero_vjp)


@primitive("less", n_inputs=2)
def less(x: Tensor, y: Tensor) -> Tensor:
    """1.0 where ``x < y``, else 0.0, broadcasting (``tf.less``); its gradient is zero.

    Examples:
        >>> mt.less(mt.tensor([1.0, 2.0, 3.0]), 2.0)
        Tensor([1.0, 0.0, 0.0], shape=(3,))
    """
    return zip_flat(lambda a, b: float(a < b), x, y, "less")


less.defvjp(_zero_vjp)


@primitive("less_equal", n_inputs=2)
def less_equal(x: Tensor, y: Tensor) -> Tensor:
    """1.0 where ``x <= y``, else 0.0, broadcasting (``tf.lessEqual``); its gradient is zero.

    Examples:
        >>> mt.less_equal(mt.tensor([1.0, 2.0, 3.0]), 2.0)
        Tensor([1.0, 1.0, 0.0], shape=(3,))
    """
    return zip_flat(lambda a, b: float(a <= b), x, y, "less_equal")


less_equal.defvjp(_zero_vjp)


@primitive("equal", n_inputs=2)
def equal(x: Tensor, y: Tensor) -> Tensor:
    """1.0 where ``x == y``, else 0.0, broadcasting (``tf.equal``); its gradient is zero.

    Examples:
        >>> mt.equal(mt.tensor([1.0, 2.0]), mt.tensor([1.0, 3.0]))
        Tensor([1.0, 0.0], shape=(2,))
    """
    return zip_flat(lambda a, b: float(a == b), x, y, "equal")


equal.defvjp(_zero_vjp)


@primitive("sign")
def sign(x: Tensor) -> Tensor:
    """-1.0, 0.0 or 1.0 by the sign of each entry; nan stays nan (``tf.sign``); its gradient is zero.

    Examples:
        >>> mt.sign(mt.tensor([-3.0, 0.0, 2.0]))
        Tensor([-1.0, 0.0, 1.0], shape=(3,))
    """
    return map_flat(lambda v: float((v > 0.0) - (v < 0.0)) if v == v else v, x, "sign")


sign.defvjp(_zero_vjp)
