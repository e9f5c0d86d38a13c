"""Piecewise primitives: ``abs``, ``relu``, ``maximum``, ``minimum``, ``clip_by_value``, ``where``.

``where`` uses its own condition): the gradient flows where a piece is
selected and is 0 elsewhere. At a kink (``x = 0`` for ``abs`` and ``relu``,
a tie for ``maximum``, a bound of ``clip_by_value``) the choice is
TensorFlow's, stated in each entry's header.
"""

from __future__ import annotations

import math

from .kernels import map_flat, zip3_flat, zip_flat
from ..engine.primitive import primitive
from ..engine.types import Flat
from ..errors import InvalidArgumentError, explain
from ..language import N_
from .compare import greater_equal, less_equal, sign, zeros_like
from .shape_ops import unbroadcast
from .arithmetic import mul, sub
from ..engine.tensor import Grads, Tensor
from ..engine.arena import new

__all__ = [
    "abs",
    "clip_by_value",
    "maximum",
    "minimum",
    "relu",
    "where",
]

_BOTH = (True, True)
_ALL3 = (True, True, True)


def const(v: float) -> Tensor:
    """A scalar constant for a VJP (what ``x * 2.0`` makes behind the scenes); ``pow``'s VJP uses it too."""
    return new(Tensor, [v], (), "tensor")


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
    return map_flat(math.fabs, x._data), x._shape


@abs.defvjp
def _abs_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, sign(x)),)


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
    return map_flat(lambda v: 0.0 if v <= 0.0 else v, x._data), x._shape


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
    return zip_flat(lambda a, b: a if a >= b or a != a else b, x._data, x._shape, y._data, y._shape, "maximum")


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
    return zip_flat(lambda a, b: a if a <= b or a != a else b, x._data, x._shape, y._data, y._shape, "minimum")


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
                    N_("clip_by_value: {0} must be a number, got {1}: {2}.").format(bound, type(value).__name__, format(repr(value), '.40')),
                    N_("Both bounds are numbers, as in TF.js's tf.clipByValue; there is no open end."),
                    N_("for no bound on that side pass {0} (import math), or use mt.minimum / mt.maximum.").format(other),
                ),
                op="clip_by_value",
                bounds=(clip_value_min, clip_value_max),
            )
    lo, hi = float(clip_value_min), float(clip_value_max)
    if not lo <= hi:
        raise InvalidArgumentError(
            explain(
                N_("clip_by_value: clip_value_min ({0}) must be <= clip_value_max ({1}).").format(clip_value_min, clip_value_max),
                N_("The interval [min, max] would be empty."),
                N_("swap the two bounds."),
            ),
            op="clip_by_value",
            bounds=(clip_value_min, clip_value_max),
        )
    return map_flat(lambda v: v if lo <= v <= hi or v != v else (lo if v < lo else hi), x._data), x._shape


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
    columns = [(condition._data, condition._shape), (x._data, x._shape), (y._data, y._shape)]
    return zip3_flat(lambda c, a, b: a if c else b, columns, "where")


@where.defvjp
def _where_vjp(dout: Tensor, out: Tensor, condition: Tensor, x: Tensor, y: Tensor, needs: tuple[bool, ...] = _ALL3) -> Grads:
    dx = where(condition, dout, const(0.0))
    return (
        zeros_like(condition) if needs[0] else None,
        unbroadcast(dx, x.shape) if needs[1] else None,
        unbroadcast(sub(dout, dx), y.shape) if needs[2] else None,
    )
