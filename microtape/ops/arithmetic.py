"""Arithmetic primitives: ``add``, ``sub``, ``mul``, ``div``, ``neg``, ``clone``, ``stop_gradient``, ``square``, ``sqrt``.

The binary ops broadcast like NumPy, so their VJPs sum a gradient back
to each input's shape with ``unbroadcast``. The scalar functions that follow
IEEE-754 where Python would raise (``safe_div``, ``safe_sqrt``) are in
``ops/floats.py``.
"""

from __future__ import annotations

import math
import operator

from .floats import safe_div, safe_sqrt
from .kernels import map_flat, zip_flat
from ..engine.primitive import primitive
from ..engine.types import Flat
from .shape_ops import unbroadcast
from ..engine.tensor import Grads, Tensor

__all__ = [
    "add",
    "clone",
    "div",
    "mul",
    "neg",
    "sqrt",
    "square",
    "stop_gradient",
    "sub",
]

_BOTH = (True, True)


# ── add ─────────────────────────────────────────────────────────────────────
# out = x + y (broadcast)      ∂out/∂x = 1      ∂out/∂y = 1


@primitive("add", n_inputs=2, dunder="add")
def add(x: Tensor, y: Tensor) -> Flat:
    """Add entry by entry, broadcasting like NumPy (``tf.add``).

    Examples:
        >>> mt.add(mt.tensor([1.0, 2.0]), mt.tensor([10.0, 20.0]))
        Tensor([11.0, 22.0], shape=(2,))
        >>> mt.tensor([[1.0], [2.0]]) + mt.tensor([10.0, 20.0])
        Tensor([[11.0, 21.0], [12.0, 22.0]], shape=(2, 2))
    """
    return zip_flat(operator.add, x._data, x._shape, y._data, y._shape, "add")


@add.defvjp
def _add_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    return (
        unbroadcast(dout, x.shape) if needs[0] else None,
        unbroadcast(dout, y.shape) if needs[1] else None,
    )


# ── sub ─────────────────────────────────────────────────────────────────────
# out = x - y (broadcast)      ∂out/∂x = 1      ∂out/∂y = -1


@primitive("sub", n_inputs=2, dunder="sub")
def sub(x: Tensor, y: Tensor) -> Flat:
    """Subtract entry by entry, broadcasting like NumPy (``tf.sub``).

    Examples:
        >>> 1 - mt.tensor([0.25, 2.0])
        Tensor([0.75, -1.0], shape=(2,))
    """
    return zip_flat(operator.sub, x._data, x._shape, y._data, y._shape, "sub")


@sub.defvjp
def _sub_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    return (
        unbroadcast(dout, x.shape) if needs[0] else None,
        unbroadcast(neg(dout), y.shape) if needs[1] else None,
    )


# ── mul ─────────────────────────────────────────────────────────────────────
# out = x·y (broadcast)        ∂out/∂x = y      ∂out/∂y = x
# Broadcasting copied entries forward, so their gradients are summed back.


@primitive("mul", n_inputs=2, dunder="mul")
def mul(x: Tensor, y: Tensor) -> Flat:
    """Multiply entry by entry, broadcasting like NumPy (``tf.mul``).

    Examples:
        >>> 2.0 * mt.tensor([1.0, 2.0])
        Tensor([2.0, 4.0], shape=(2,))
    """
    return zip_flat(operator.mul, x._data, x._shape, y._data, y._shape, "mul")


@mul.defvjp
def _mul_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    return (
        unbroadcast(mul(dout, y), x.shape) if needs[0] else None,
        unbroadcast(mul(dout, x), y.shape) if needs[1] else None,
    )


# ── div ─────────────────────────────────────────────────────────────────────
# out = x / y                  ∂out/∂x = 1/y    ∂out/∂y = -x/y² = -out/y
# IEEE: 1/0 = inf, -1/0 = -inf, 0/0 = nan (no ZeroDivisionError).


@primitive("div", n_inputs=2, dunder="truediv")
def div(x: Tensor, y: Tensor) -> Flat:
    """Divide entry by entry, broadcasting like NumPy (``tf.div``).

    Division by zero follows IEEE-754: ``1/0`` is ``inf`` and ``0/0`` is ``nan``.

    Examples:
        >>> mt.tensor([1.0, -1.0, 0.0]) / 0.0
        Tensor([inf, -inf, nan], shape=(3,))
    """
    return zip_flat(operator.truediv, x._data, x._shape, y._data, y._shape, "div", safe_div)


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
    return map_flat(operator.neg, x._data), x._shape


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
    return list(x._data), x._shape


@clone.defvjp
def _clone_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (dout,)


# ── stop_gradient ───────────────────────────────────────────────────────────
# out = x, and no tape records it: no gradient flows back through it (TensorFlow's tf.stop_gradient)
# It has no VJP: the op table marks it not differentiable, so a tape sees a
# constant. A tape notes where the path was cut, so "no gradient" can say so.


@primitive("stop_gradient", differentiable=False)
def stop_gradient(x: Tensor) -> Flat:
    """Pass ``x`` through as a constant: no gradient flows back through it (``tf.stop_gradient``).

    ``tape.gradient`` gives ``None`` for a source whose only path goes
    through it, as in TensorFlow (``unconnected_gradients="zero"`` gives
    zeros), and ``mt.grad`` says which ``stop_gradient`` cut the path. The
    same as recording nothing (``tape.stop_recording()``), for one value.
    TF.js has no ``stopGradient``.

    Examples:
        >>> x = mt.scalar(3.0)
        >>> mt.grad(lambda t: t * mt.stop_gradient(t))(x)   # d/dt of t·c, with c = t held constant
        Tensor(3.0, shape=())
    """
    assert x._data is not None  # the op wrapper checked it
    return x._data, x.shape  # tensors are immutable, so the list is shared


# ── square ──────────────────────────────────────────────────────────────────
# out = x²                     ∂out/∂x = 2x


@primitive("square")
def square(x: Tensor) -> Flat:
    """Square every entry (``tf.square``).

    Examples:
        >>> mt.square(mt.tensor([3.0, -2.0]))
        Tensor([9.0, 4.0], shape=(2,))
    """
    return map_flat(lambda v: v * v, x._data), x._shape


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
    return map_flat(math.sqrt, x._data, safe_sqrt), x._shape


@sqrt.defvjp
def _sqrt_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (div(dout, out * 2.0),)

