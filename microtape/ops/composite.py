"""Ops built from primitives: no VJPs here, the tape records their pieces.

If an op can be written with existing primitives it
lives here as a plain function, and its gradient (first, second, ...) comes
from the primitives it calls.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.primitive import composite
from .index_maps import normalize_axes
from ..engine.shape import size_of
from ..engine.types import Axis
from ..errors import InvalidArgumentError, ShapeError, explain
from ..language import N_
from . import concat, logsumexp, neg, reduce_max, reduce_sum, reshape, sub
from ..engine.tensor import Tensor, TensorLike, as_tensor

__all__ = ["log_softmax", "mean", "reduce_min", "softmax", "stack"]


@composite
def mean(x: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Average along ``axis`` or over everything (``tf.mean``): ``sum / count``.

    Examples:
        >>> mt.mean(mt.tensor([[1.0, 2.0], [3.0, 5.0]]), axis=0)
        Tensor([2.0, 3.5], shape=(2,))
    """
    x = as_tensor(x)
    axes = normalize_axes(axis, x.rank, "mean")
    count = size_of(tuple([x.shape[a] for a in axes]))
    return reduce_sum(x, axis=axis, keepdims=keepdims) / float(count)


@composite
def reduce_min(x: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """Smallest entry along ``axis`` or overall (``tf.min``): ``-max(-x)``.

    Ties split the gradient evenly, as in :func:`~microtape.max`.

    Examples:
        >>> mt.min(mt.tensor([3.0, -1.0, 2.0]))
        Tensor(-1.0, shape=())
    """
    return neg(reduce_max(neg(x), axis=axis, keepdims=keepdims))


@composite
def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """Exponentiate and normalise along ``axis`` so entries sum to 1 (``tf.softmax``).

    Computed as ``exp(x - logsumexp(x))``, which never overflows.

    Examples:
        >>> mt.softmax(mt.tensor([0.0, 0.0, 1000.0]))
        Tensor([0.0, 0.0, 1.0], shape=(3,))
    """
    x = as_tensor(x)
    return (x - logsumexp(x, axis=axis, keepdims=True)).exp()


@composite
def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """``log(softmax(x))`` computed stably as ``x - logsumexp(x)`` (``tf.logSoftmax``).

    Examples:
        >>> mt.log_softmax(mt.tensor([0.0, 0.0]))
        Tensor([-0.6931, -0.6931], shape=(2,))
    """
    x = as_tensor(x)
    return sub(x, logsumexp(x, axis=axis, keepdims=True))


@composite
def stack(xs: Sequence[TensorLike], axis: int = 0) -> Tensor:
    """Join same-shaped tensors along a new ``axis`` (``tf.stack``).

    Examples:
        >>> mt.stack([mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0])], axis=1)
        Tensor([[1.0, 3.0], [2.0, 4.0]], shape=(2, 2))
    """
    if isinstance(xs, Tensor) or not isinstance(xs, (list, tuple)) or not xs:
        raise InvalidArgumentError(
            explain(
                N_("stack() needs a non-empty list of tensors, got {0}.").format(type(xs).__name__),
                N_("stack joins several tensors given as one list."),
                N_("write mt.stack([a, b], axis=0)."),
            ),
            op="stack",
        )
    ts = [as_tensor(t) for t in xs]
    shape = ts[0].shape
    if any(t.shape != shape for t in ts):
        for t, given in zip(ts, xs):
            if t is not given:
                t.dispose()  # a failed call leaves the arena as it was
        raise ShapeError(
            explain(
                N_("stack: shapes {0} differ.").format([t.shape for t in ts]),
                N_("stack needs tensors of one shape."),
                N_("use mt.concat to join along an existing axis of different length."),
            ),
            op="stack",
            shapes=tuple(t.shape for t in ts),
        )
    (ax,) = normalize_axes(axis, len(shape) + 1, "stack")
    new_shape = shape[:ax] + (1,) + shape[ax:]
    return concat([reshape(t, shape=new_shape) for t in ts], axis=ax)
