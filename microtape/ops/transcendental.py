"""Transcendental primitives: ``exp``, ``expm1``, ``log``, ``log1p``, ``log2``, ``pow``, the
trigonometric functions (``sin``, ``cos``, ``atan``, ``atan2``), ``tanh``, ``sigmoid``.

Their VJPs are written with the arithmetic ops, and ``pow``'s with ``where``
too, which keeps the log of a non-positive base out of the exponent's
gradient. ``expm1`` and ``log1p`` keep the digits that ``exp(x) - 1`` and
``log(1 + x)`` lose near 0. Where Python would raise (``exp`` overflowing, ``log`` of 0), the
scalar functions of ``ops/floats.py`` follow IEEE-754 instead: ``inf``,
``-inf`` or ``nan``.
"""

from __future__ import annotations

import math

from .floats import safe_cos, safe_exp, safe_expm1, safe_log, safe_log1p, safe_log2, safe_pow, safe_sin
from .kernels import map_flat, zip_flat
from ..engine.primitive import primitive
from ..engine.types import Flat
from .shape_ops import unbroadcast
from .arithmetic import add, div, mul, neg, square
from .piecewise import const, where
from ..engine.tensor import Grads, Tensor

__all__ = [
    "atan",
    "atan2",
    "cos",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "pow",
    "sigmoid",
    "sin",
    "tanh",
]

_LN2 = math.log(2.0)

_BOTH = (True, True)


# ── exp ─────────────────────────────────────────────────────────────────────
# out = e^x                    ∂out/∂x = e^x = out     (reuse the forward result)


@primitive("exp")
def exp(x: Tensor) -> Flat:
    """Raise e to the power of every entry (``tf.exp``); overflow gives ``inf``.

    Examples:
        >>> mt.exp(mt.tensor([0.0, 1.0, 1000.0]))
        Tensor([1.0, 2.718, inf], shape=(3,))
    """
    return map_flat(math.exp, x._data, safe_exp), x._shape


@exp.defvjp
def _exp_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, out),)


# ── expm1 ───────────────────────────────────────────────────────────────────
# out = e^x - 1                ∂out/∂x = e^x = out + 1
# Exact near 0, where exp(x) - 1 would cancel: expm1(1e-10) is 1e-10, not 1.000000082740371e-10.


@primitive("expm1")
def expm1(x: Tensor) -> Flat:
    """``e^x - 1`` of every entry, accurate for small ``x`` (``tf.expm1``); overflow gives ``inf``.

    Examples:
        >>> mt.expm1(mt.tensor([1e-10, 0.0, -math.inf, 1000.0]))
        Tensor([1e-10, 0.0, -1.0, inf], shape=(4,))
    """
    return map_flat(math.expm1, x._data, safe_expm1), x.shape


@expm1.defvjp
def _expm1_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, out + 1.0),)


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
    return map_flat(math.log, x._data, safe_log), x._shape


@log.defvjp
def _log_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (div(dout, x),)


# ── log1p ───────────────────────────────────────────────────────────────────
# out = ln(1 + x)              ∂out/∂x = 1/(1 + x)
# IEEE: log1p(-1) = -inf, below -1 nan; exact near 0, where log(1 + x) loses digits.


@primitive("log1p")
def log1p(x: Tensor) -> Flat:
    """``log(1 + x)`` of every entry, accurate for small ``x`` (``tf.log1p``).

    Examples:
        >>> mt.log1p(mt.tensor([1e-10, 0.0, -1.0, -2.0]))
        Tensor([1e-10, 0.0, -inf, nan], shape=(4,))
    """
    return map_flat(math.log1p, x._data, safe_log1p), x.shape


@log1p.defvjp
def _log1p_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (div(dout, x + 1.0),)


# ── log2 ────────────────────────────────────────────────────────────────────
# out = log₂ x                 ∂out/∂x = 1/(x·ln 2)
# IEEE as log: log2 0 = -inf, of a negative number nan. TF.js has no log2 (tf.log(x) / Math.LN2 there).


@primitive("log2")
def log2(x: Tensor) -> Flat:
    """Base-2 logarithm of every entry; exact at powers of two.

    Examples:
        >>> mt.log2(mt.tensor([8.0, 0.5, 0.0, -1.0]))
        Tensor([3.0, -1.0, -inf, nan], shape=(4,))
    """
    return map_flat(math.log2, x._data, safe_log2), x.shape


@log2.defvjp
def _log2_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (div(dout, x * _LN2),)


# ── pow ─────────────────────────────────────────────────────────────────────
# out = x^y          ∂out/∂x = y·x^(y-1)      ∂out/∂y = out·ln x  (taken as 0 where x ≤ 0)
# The exponent's gradient uses a safe log, as TF.js does, so a constant
# exponent never puts a NaN into the backward pass.


@primitive("pow", n_inputs=2, dunder="pow")
def pow(x: Tensor, y: Tensor) -> Flat:
    """Raise ``x`` to the power ``y`` entry by entry (``tf.pow``).

    IEEE rules apply: ``(-8) ** 0.5`` is ``nan``, ``0 ** -1`` is ``inf``.

    Examples:
        >>> mt.tensor([2.0, 3.0]) ** 2
        Tensor([4.0, 9.0], shape=(2,))
        >>> mt.pow(mt.tensor([-8.0, 0.0]), mt.tensor([0.5, -1.0]))
        Tensor([nan, inf], shape=(2,))
    """
    return zip_flat(safe_pow, x._data, x._shape, y._data, y._shape, "pow")


@pow.defvjp
def _pow_vjp(dout: Tensor, out: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    dx = dy = None
    if needs[0]:
        dx = unbroadcast(mul(dout, mul(y, pow(x, y - 1.0))), x.shape)
    if needs[1]:
        positive = x.greater(0.0)
        safe_log = where(positive, log(where(positive, x, const(1.0))), const(0.0))
        dy = unbroadcast(mul(dout, mul(out, safe_log)), y.shape)
    return dx, dy


# ── sin, cos ────────────────────────────────────────────────────────────────
# sin: ∂out/∂x = cos x         cos: ∂out/∂x = -sin x       (sin(±inf) = nan)


@primitive("sin")
def sin(x: Tensor) -> Flat:
    """Sine of every entry, in radians (``tf.sin``).

    Examples:
        >>> mt.sin(mt.tensor([0.0, math.pi / 2]))
        Tensor([0.0, 1.0], shape=(2,))
    """
    return map_flat(math.sin, x._data, safe_sin), x._shape


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
    return map_flat(math.cos, x._data, safe_cos), x._shape


@cos.defvjp
def _cos_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (neg(mul(dout, sin(x))),)


# ── atan ────────────────────────────────────────────────────────────────────
# out = arctan x               ∂out/∂x = 1/(1 + x²)        (atan(±inf) = ±π/2, where the slope is 0)


@primitive("atan")
def atan(x: Tensor) -> Flat:
    """Arctangent of every entry, in radians, in (-π/2, π/2) (``tf.atan``).

    Examples:
        >>> mt.atan(mt.tensor([0.0, 1.0, math.inf]))
        Tensor([0.0, 0.7854, 1.571], shape=(3,))
    """
    return map_flat(math.atan, x._data), x.shape


@atan.defvjp
def _atan_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (div(dout, square(x) + 1.0),)


# ── atan2 ───────────────────────────────────────────────────────────────────
# out = the angle of the point (x, y), in (-π, π]      ∂out/∂y = x/(x² + y²)   ∂out/∂x = -y/(x² + y²)
# The angle jumps by 2π across the negative x axis and is undefined at the
# origin: there its gradient is 0/0 = nan, as in TensorFlow and PyTorch.


@primitive("atan2", n_inputs=2)
def atan2(y: Tensor, x: Tensor) -> Flat:
    """The angle of the point ``(x, y)``, entry by entry, broadcasting (``tf.atan2``): ``y`` first, as in C.

    It follows IEEE: ``atan2(0, -1)`` is π, ``atan2(-0.0, -1)`` is -π,
    ``atan2(0, 0)`` is 0. The angle jumps across the negative x axis, and
    its gradient at the origin is ``nan`` (0/0): the angle of ``(0, 0)`` is
    not defined, so neither is its slope.

    Examples:
        >>> mt.atan2(mt.tensor([1.0, 0.0, 0.0]), mt.tensor([1.0, -1.0, 0.0]))
        Tensor([0.7854, 3.142, 0.0], shape=(3,))
        >>> mt.grads(mt.atan2)([mt.scalar(1.0), mt.scalar(1.0)])
        [Tensor(0.5, shape=()), Tensor(-0.5, shape=())]
    """
    return zip_flat(math.atan2, y._data, y.shape, x._data, x.shape, "atan2")


@atan2.defvjp
def _atan2_vjp(dout: Tensor, out: Tensor, y: Tensor, x: Tensor, needs: tuple[bool, ...] = _BOTH) -> Grads:
    r2 = add(square(x), square(y))
    return (
        unbroadcast(mul(dout, div(x, r2)), y.shape) if needs[0] else None,
        unbroadcast(neg(mul(dout, div(y, r2))), x.shape) if needs[1] else None,
    )


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
    return map_flat(math.tanh, x._data), x._shape


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
    return map_flat(_sigmoid, x._data), x._shape


@sigmoid.defvjp
def _sigmoid_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, mul(out, 1.0 - out)),)

