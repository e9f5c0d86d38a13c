"""Comparisons, ``sign`` and ``zeros_like``: piecewise-constant primitives with a zero derivative.

"""

from __future__ import annotations

from .kernels import map_flat, zip_flat
from ..engine.primitive import primitive
from ..engine.types import Flat
from ..engine.tensor import Grads, Tensor

__all__ = [
    "equal",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "sign",
    "zeros_like",
]


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
