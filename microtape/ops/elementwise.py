"""Elementwise primitives: arithmetic, ``exp``, ``log``, ``tanh``, ``relu``, ``where``, ...

Read after ``ops_shape.py`` and ``ops_compare.py``, whose ops the VJPs here
use (``unbroadcast`` sums a gradient back to a broadcast input's shape). The
scalar functions that follow IEEE-754 where Python would raise are in
``_floats.py``.
"""

from __future__ import annotations

import math
import operator

from ..core.floats import safe_cos, safe_div, safe_exp, safe_log, safe_pow, safe_sin, safe_sqrt
from ..core.kernels import map_flat, zip3_flat, zip_flat
from ..core.registry import primitive
from ..core.types import Flat
from ..errors import InvalidArgumentError, explain
from .compare import greater_equal, less_equal, sign, zeros_like
from .shape import unbroadcast
from ..core.tensor import Grads, Tensor
from ..core.runtime import new

__all__ = [
    "abs",
    "add",
    "clip_by_value",
    "clone",
    "cos",
    "div",
    "exp",
    "log",
    "maximum",
    "minimum",
    "mul",
    "neg",
    "pow",
    "relu",
    "sigmoid",
    "sin",
    "sqrt",
    "square",
    "sub",
    "tanh",
    "where",
]

_BOTH = (True, True)
_ALL3 = (True, True, True)


def _const(v: float) -> Tensor:
    """A scalar constant for a VJP (what ``x * 2.0`` makes behind the scenes)."""
    return new(Tensor, [v], (), "tensor")


# ── add ─────────────────────────────────────────────────────────────────────
# out = x + y (broadcast)      ∂out/∂x = 1      ∂out/∂y = 1


@primitive("add", n_inputs=2)
def add(x: Tensor, y: Tensor) -> Flat:
    """Add entry by entry, broadcasting like NumPy (``tf.add``).

    Examples:
        >>> mt.add(mt.tensor([1.0, 2.0]), mt.tensor([10.0, 20.0]))
        Tensor([11.0, 22.0], shape=(2,))
        >>> mt.tensor([[1.0], [2.0]]) + mt.tensor([10.0, 20.0])
        Tensor([[11.0, 21.0], [12.0, 22.0]], shape=(2, 2))
    """
    return zip_flat(operator.add, x._data, x.shape, y._data, y.shape, "add")


@add.defvjp
def _add_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    return (
        unbroadcast(dout, x.shape) if needs[0] else None,
        unbroadcast(dout, y.shape) if needs[1] else None,
    )


# ── sub ─────────────────────────────────────────────────────────────────────
# out = x - y (broadcast)      ∂out/∂x = 1      ∂out/∂y = -1


@primitive("sub", n_inputs=2)
def sub(x: Tensor, y: Tensor) -> Flat:
    """Subtract entry by entry, broadcasting like NumPy (``tf.sub``).

    Examples:
        >>> 1 - mt.tensor([0.25, 2.0])
        Tensor([0.75, -1.0], shape=(2,))
    """
    return zip_flat(operator.sub, x._data, x.shape, y._data, y.shape, "sub")


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
def mul(x: Tensor, y: Tensor) -> Flat:
    """Multiply entry by entry, broadcasting like NumPy (``tf.mul``).

    Examples:
        >>> 2.0 * mt.tensor([1.0, 2.0])
        Tensor([2.0, 4.0], shape=(2,))
    """
    return zip_flat(operator.mul, x._data, x.shape, y._data, y.shape, "mul")


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
def div(x: Tensor, y: Tensor) -> Flat:
    """Divide entry by entry, broadcasting like NumPy (``tf.div``).

    Division by zero follows IEEE-754: ``1/0`` is ``inf`` and ``0/0`` is ``nan``.

    Examples:
        >>> mt.tensor([1.0, -1.0, 0.0]) / 0.0
        Tensor([inf, -inf, nan], shape=(3,))
    """
    return zip_flat(operator.truediv, x._data, x.shape, y._data, y.shape, "div", safe_div)


@div.defvjp
def _div_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    return (
        unbroadcast(div(dout, y), x.shape) if needs[0] else None,
        unbroadcast(neg(div(mul(dout, out), y)), y.shape) if needs[1] else None,
    )


# ── neg ─────────────────────────────────────────────────────────────────────
# out = -x                     ∂out/∂x = -1


@primitive("neg")
def neg(x: Tensor) -> Flat:
    """Flip the sign of every entry (``tf.neg``).

    Examples:
        >>> -mt.tensor([1.0, -2.0])
        Tensor([-1.0, 2.0], shape=(2,))
    """
    return map_flat(operator.neg, x._data), x.shape


@neg.defvjp
def _neg_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (neg(dout),)


# ── clone ───────────────────────────────────────────────────────────────────
# out = x (a new tensor with the same values)      ∂out/∂x = 1      (TF.js Identity_grad)


@primitive("clone")
def clone(x: Tensor) -> Flat:
    """Copy a tensor: the identity op, recorded like any other (``tf.clone``).

    Examples:
        >>> mt.clone(mt.tensor([1.0, 2.0]))
        Tensor([1.0, 2.0], shape=(2,))
        >>> mt.grad(lambda a: (a.clone() * a).sum())(mt.tensor([1.0, 2.0]))
        Tensor([2.0, 4.0], shape=(2,))
    """
    assert x._data is not None  # the op wrapper checked it
    return list(x._data), x.shape


@clone.defvjp
def _clone_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (dout,)


# ── square ──────────────────────────────────────────────────────────────────
# out = x²                     ∂out/∂x = 2x


@primitive("square")
def square(x: Tensor) -> Flat:
    """Square every entry (``tf.square``).

    Examples:
        >>> mt.square(mt.tensor([3.0, -2.0]))
        Tensor([9.0, 4.0], shape=(2,))
    """
    return map_flat(lambda v: v * v, x._data), x.shape


@square.defvjp
def _square_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, x * 2.0),)


# ── sqrt ────────────────────────────────────────────────────────────────────
# out = √x                     ∂out/∂x = 1 / (2√x) = 1 / (2·out)
# IEEE: sqrt of a negative number is nan; the gradient at 0 is inf.


@primitive("sqrt")
def sqrt(x: Tensor) -> Flat:
    """Square root of every entry (``tf.sqrt``); negative entries give ``nan``.

    Examples:
        >>> mt.sqrt(mt.tensor([4.0, -1.0]))
        Tensor([2.0, nan], shape=(2,))
    """
    return map_flat(math.sqrt, x._data, safe_sqrt), x.shape


@sqrt.defvjp
def _sqrt_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (div(dout, out * 2.0),)


# ── pow ─────────────────────────────────────────────────────────────────────
# out = x^y          ∂out/∂x = y·x^(y-1)      ∂out/∂y = out·ln x  (taken as 0 where x ≤ 0)
# The exponent's gradient uses a safe log, as TF.js does, so a constant
# exponent never puts a NaN into the backward pass.


@primitive("pow", n_inputs=2)
def pow(x: Tensor, y: Tensor) -> Flat:
    """Raise ``x`` to the power ``y`` entry by entry (``tf.pow``).

    IEEE rules apply: ``(-8) ** 0.5`` is ``nan``, ``0 ** -1`` is ``inf``.

    Examples:
        >>> mt.tensor([2.0, 3.0]) ** 2
        Tensor([4.0, 9.0], shape=(2,))
        >>> mt.pow(mt.tensor([-8.0, 0.0]), mt.tensor([0.5, -1.0]))
        Tensor([nan, inf], shape=(2,))
    """
    return zip_flat(safe_pow, x._data, x.shape, y._data, y.shape, "pow")


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
def exp(x: Tensor) -> Flat:
    """Raise e to the power of every entry (``tf.exp``); overflow gives ``inf``.

    Examples:
        >>> mt.exp(mt.tensor([0.0, 1.0, 1000.0]))
        Tensor([1.0, 2.718, inf], shape=(3,))
    """
    return map_flat(math.exp, x._data, safe_exp), x.shape


@exp.defvjp
def _exp_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, out),)


# ── log ─────────────────────────────────────────────────────────────────────
# out = ln x                   ∂out/∂x = 1/x
# IEEE: log 0 = -inf, log of a negative number = nan.


@primitive("log")
def log(x: Tensor) -> Flat:
    """Natural logarithm of every entry (``tf.log``).

    Examples:
        >>> mt.log(mt.tensor([1.0, 0.0, -1.0]))
        Tensor([0.0, -inf, nan], shape=(3,))
    """
    return map_flat(math.log, x._data, safe_log), x.shape


@log.defvjp
def _log_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (div(dout, x),)


# ── abs ─────────────────────────────────────────────────────────────────────
# out = |x|                    ∂out/∂x = sign(x)
# Kink at 0: the gradient there is 0 (sign(0) = 0), as in TensorFlow.


@primitive("abs")
def abs(x: Tensor) -> Flat:
    """Absolute value of every entry (``tf.abs``).

    At the kink ``x = 0`` the gradient is 0, as in TensorFlow.

    Examples:
        >>> mt.abs(mt.tensor([-2.0, 0.0, 3.0]))
        Tensor([2.0, 0.0, 3.0], shape=(3,))
        >>> mt.grad(mt.abs)(mt.tensor([-2.0, 0.0, 3.0]))
        Tensor([-1.0, 0.0, 1.0], shape=(3,))
    """
    return map_flat(math.fabs, x._data), x.shape


@abs.defvjp
def _abs_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, sign(x)),)


# ── sin, cos ────────────────────────────────────────────────────────────────
# sin: ∂out/∂x = cos x         cos: ∂out/∂x = -sin x       (sin(±inf) = nan)


@primitive("sin")
def sin(x: Tensor) -> Flat:
    """Sine of every entry, in radians (``tf.sin``).

    Examples:
        >>> mt.sin(mt.tensor([0.0, math.pi / 2]))
        Tensor([0.0, 1.0], shape=(2,))
    """
    return map_flat(math.sin, x._data, safe_sin), x.shape


@sin.defvjp
def _sin_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, cos(x)),)


@primitive("cos")
def cos(x: Tensor) -> Flat:
    """Cosine of every entry, in radians (``tf.cos``).

    Examples:
        >>> mt.cos(mt.tensor([0.0, math.pi]))
        Tensor([1.0, -1.0], shape=(2,))
    """
    return map_flat(math.cos, x._data, safe_cos), x.shape


@cos.defvjp
def _cos_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (neg(mul(dout, sin(x))),)


# ── tanh ────────────────────────────────────────────────────────────────────
# out = tanh x                 ∂out/∂x = 1 - tanh² x = 1 - out²
# The VJP reads ``out``; an outer tape recorded ``out``, so the second
# derivative stays connected.


@primitive("tanh")
def tanh(x: Tensor) -> Flat:
    """Hyperbolic tangent of every entry (``tf.tanh``).

    Examples:
        >>> mt.tanh(mt.tensor([0.0, 100.0]))
        Tensor([0.0, 1.0], shape=(2,))
    """
    return map_flat(math.tanh, x._data), x.shape


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
def sigmoid(x: Tensor) -> Flat:
    """Logistic sigmoid of every entry, stable for large ``|x|`` (``tf.sigmoid``).

    Examples:
        >>> mt.sigmoid(mt.tensor([0.0, -1000.0, 1000.0]))
        Tensor([0.5, 0.0, 1.0], shape=(3,))
    """
    return map_flat(_sigmoid, x._data), x.shape


@sigmoid.defvjp
def _sigmoid_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, mul(out, 1.0 - out)),)


# ── relu ────────────────────────────────────────────────────────────────────
# out = max(x, 0)              ∂out/∂x = 1 where x > 0, else 0
# Kink at 0: the gradient there is 0, as in TensorFlow and PyTorch.


@primitive("relu")
def relu(x: Tensor) -> Flat:
    """Rectified linear unit: ``max(x, 0)`` entry by entry (``tf.relu``).

    At the kink ``x = 0`` the gradient is 0; ``relu(nan)`` is ``nan``.

    Examples:
        >>> mt.relu(mt.tensor([-1.0, 0.0, 2.0]))
        Tensor([0.0, 0.0, 2.0], shape=(3,))
        >>> mt.grad(mt.relu)(mt.tensor([-1.0, 0.0, 2.0]))
        Tensor([0.0, 0.0, 1.0], shape=(3,))
    """
    return map_flat(lambda v: 0.0 if v <= 0.0 else v, x._data), x.shape


@relu.defvjp
def _relu_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, x.greater(0.0)),)


# ── maximum, minimum ────────────────────────────────────────────────────────
# maximum: ∂out/∂x = 1 where x ≥ y, ∂out/∂y = 1 where x < y
# Tie (x = y): the whole gradient goes to x, as in TensorFlow; so
# d/da maximum(a, a) = 1. minimum is the mirror image (x ≤ y goes to x).


@primitive("maximum", n_inputs=2)
def maximum(x: Tensor, y: Tensor) -> Flat:
    """Larger of ``x`` and ``y`` entry by entry, broadcasting (``tf.maximum``).

    At a tie the gradient goes to ``x``, as in TensorFlow. NaN wins.

    Examples:
        >>> mt.maximum(mt.tensor([1.0, 5.0]), 3.0)
        Tensor([3.0, 5.0], shape=(2,))
    """
    return zip_flat(lambda a, b: a if a >= b or a != a else b, x._data, x.shape, y._data, y.shape, "maximum")


@maximum.defvjp
def _maximum_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    dx = mul(dout, greater_equal(x, y))
    return (
        unbroadcast(dx, x.shape) if needs[0] else None,
        unbroadcast(sub(dout, dx), y.shape) if needs[1] else None,
    )


@primitive("minimum", n_inputs=2)
def minimum(x: Tensor, y: Tensor) -> Flat:
    """Smaller of ``x`` and ``y`` entry by entry, broadcasting (``tf.minimum``).

    At a tie the gradient goes to ``x``, as in TensorFlow. NaN wins.

    Examples:
        >>> mt.minimum(mt.tensor([1.0, 5.0]), 3.0)
        Tensor([1.0, 3.0], shape=(2,))
    """
    return zip_flat(lambda a, b: a if a <= b or a != a else b, x._data, x.shape, y._data, y.shape, "minimum")


@minimum.defvjp
def _minimum_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    dx = mul(dout, less_equal(x, y))
    return (
        unbroadcast(dx, x.shape) if needs[0] else None,
        unbroadcast(sub(dout, dx), y.shape) if needs[1] else None,
    )


# ── clip_by_value ───────────────────────────────────────────────────────────
# out = min(max(x, lo), hi)    ∂out/∂x = 1 where lo ≤ x ≤ hi (inclusive, as TF.js), else 0


@primitive("clip_by_value")
def clip_by_value(x: Tensor, clip_value_min: float, clip_value_max: float) -> Flat:
    """Clamp every entry to ``[clip_value_min, clip_value_max]`` (``tf.clipByValue``).

    The bounds are inclusive: at exactly ``clip_value_min`` or ``clip_value_max``
    the gradient still flows, as in TF.js. ``min > max`` is an error.

    Examples:
        >>> mt.clip_by_value(mt.tensor([-5.0, 0.5, 5.0]), -1, 1)
        Tensor([-1.0, 0.5, 1.0], shape=(3,))
    """
    for bound, value in (("clip_value_min", clip_value_min), ("clip_value_max", clip_value_max)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            other = "-math.inf" if bound == "clip_value_min" else "math.inf"
            raise InvalidArgumentError(
                explain(
                    f"clip_by_value: {bound} must be a number, got {type(value).__name__}: {value!r:.40}.",
                    "Both bounds are numbers, as in TF.js's tf.clipByValue; there is no open end.",
                    f"for no bound on that side pass {other} (import math), or use mt.minimum / mt.maximum.",
                ),
                op="clip_by_value",
                bounds=(clip_value_min, clip_value_max),
            )
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
    return map_flat(lambda v: v if lo <= v <= hi or v != v else (lo if v < lo else hi), x._data), x.shape


@clip_by_value.defvjp
def _clip_by_value_vjp(dout: Tensor, out: Tensor, x: Tensor, clip_value_min: float = 0.0, clip_value_max: float = 0.0) -> Grads:
    inside = mul(x.greater_equal(clip_value_min), x.less_equal(clip_value_max))
    return (mul(dout, inside),)


# ── where ───────────────────────────────────────────────────────────────────
# out = x where condition ≠ 0, else y (broadcast)
# ∂out/∂x = 1 where condition, ∂out/∂y = 1 elsewhere; ∂out/∂condition = 0 (a selector).


@primitive("where", n_inputs=3)
def where(condition: Tensor, x: Tensor, y: Tensor) -> Flat:
    """Pick ``x`` where ``condition`` is non-zero, else ``y``, broadcasting (``tf.where``).

    Examples:
        >>> mt.where(mt.tensor([1.0, 0.0]), mt.tensor([1.0, 2.0]), 0.0)
        Tensor([1.0, 0.0], shape=(2,))
    """
    columns = [(condition._data, condition.shape), (x._data, x.shape), (y._data, y.shape)]
    return zip3_flat(lambda c, a, b: a if c else b, columns, "where")


@where.defvjp
def _where_vjp(dout: Tensor, out: Tensor, condition: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _ALL3) -> Grads:
    dx = where(condition, dout, _const(0.0))
    return (
        zeros_like(condition) if needs[0] else None,
        unbroadcast(dx, x.shape) if needs[1] else None,
        unbroadcast(sub(dout, dx), y.shape) if needs[2] else None,
    )
