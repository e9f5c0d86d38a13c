"""Making tensors: ``tensor``, ``scalar``, ``tensor1d``, ``tensor2d``, ``fill``, ``zeros``, ``ones``, ``ones_like``, random ones.

Each one converts or makes the values and wraps them in a new tensor in the
arena.
"""

from __future__ import annotations

import random as _random
from collections.abc import Sequence

from ..engine.shape import size_of, validate_shape
from ..engine.types import Shape, is_number  # Nested: TensorLike in the signatures resolves here
from ..errors import InvalidArgumentError, ShapeError, explain
from ..language import N_
from ..engine import arena
from ..engine.arena import STATE, new, notify_cut
from ..engine.convert import bad_value_error, flatten_values
from ..engine.tensor import Tensor, TensorLike

__all__ = [
    "fill",
    "ones",
    "ones_like",
    "random_normal",
    "random_uniform",
    "scalar",
    "tensor",
    "tensor1d",
    "tensor2d",
    "zeros",
]


def tensor(values: TensorLike, shape: Sequence[int] | None = None) -> Tensor:
    """Make a tensor from numbers, nested lists, a tensor, or anything with ``tolist()``.

    Like ``tf.tensor(values, shape)``. Values are converted to float64. With
    ``shape``, the values (flat or nested) are laid out in that shape.

    Raises:
        ShapeError: ragged nested lists, or a shape that does not fit the values.
        InvalidArgumentError: something that is not a number (a string,
            None). A ``range`` or a generator is not read either: pass
            ``list(range(3))``, so the values are plain to see.

    Examples:
        >>> mt.tensor([[1, 2, 3], [4, 5, 6]])
        Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], shape=(2, 3))
        >>> mt.tensor([1, 2, 3, 4], shape=(2, 2))
        Tensor([[1.0, 2.0], [3.0, 4.0]], shape=(2, 2))
        >>> mt.tensor(3.5)
        Tensor(3.5, shape=())
    """
    data, inferred = flatten_values(values, shape)
    return _copied(values, new(Tensor, data, inferred, "tensor"))


def _copied(values: object, out: Tensor) -> Tensor:
    """``out``, a copy of ``values`` when that is a tensor: a read of its values that
    ``mt.function``'s tracer records as a copy (its ``on_copy``), so a replay copies again,
    and that a tape sees as a cut (a copy has no history: a new constant)."""
    if isinstance(values, Tensor):
        st = STATE.get()
        if st.observers:
            arena.notify("on_copy", values, out)
        if st.tapes:
            notify_cut("mt.tensor()", (values,), out)
    return out


def scalar(value: float) -> Tensor:
    """Make a rank-0 tensor (``tf.scalar``).

    Examples:
        >>> mt.scalar(2)
        Tensor(2.0, shape=())
    """
    if not is_number(value):
        raise bad_value_error(value, " for scalar()")
    return new(Tensor, [float(value)], (), "tensor")


def tensor1d(values: Sequence[float]) -> Tensor:
    """Make a rank-1 tensor (``tf.tensor1d``); anything else is an error.

    Examples:
        >>> mt.tensor1d([1, 2, 3])
        Tensor([1.0, 2.0, 3.0], shape=(3,))
    """
    return _with_rank(values, 1, "tensor1d")


def tensor2d(values: Sequence[Sequence[float]], shape: Sequence[int] | None = None) -> Tensor:
    """Make a rank-2 tensor (``tf.tensor2d``); anything else is an error.

    Examples:
        >>> mt.tensor2d([[1, 2], [3, 4]])
        Tensor([[1.0, 2.0], [3.0, 4.0]], shape=(2, 2))
        >>> mt.tensor2d([1, 2, 3, 4], (2, 2)).shape
        (2, 2)
    """
    return _with_rank(values, 2, "tensor2d", shape)


def _with_rank(values: object, rank: int, fn: str, shape: Sequence[int] | None = None) -> Tensor:
    data, inferred = flatten_values(values, shape)
    if len(inferred) != rank:
        raise ShapeError(
            explain(
                N_("{0}() needs rank {1} values, got shape {2} (rank {3}).").format(fn, rank, inferred, len(inferred)),
                N_("{0} is for {1}-D data only.").format(fn, rank),
                N_("use mt.tensor() for any rank."),
            ),
            shape=inferred,
        )
    return _copied(values, new(Tensor, data, inferred, "tensor"))


def fill(shape: Sequence[int], value: float) -> Tensor:
    """Make a tensor of ``shape`` with every entry equal to ``value`` (``tf.fill``).

    Examples:
        >>> mt.fill((2,), 7)
        Tensor([7.0, 7.0], shape=(2,))
    """
    target = validate_shape(shape)
    if not is_number(value):
        raise bad_value_error(value, N_(" for fill()"))
    return new(Tensor, [float(value)] * size_of(target), target, "fill")


def zeros(shape: Sequence[int]) -> Tensor:
    """Make a tensor of zeros (``tf.zeros``).

    Examples:
        >>> mt.zeros((2, 2))
        Tensor([[0.0, 0.0], [0.0, 0.0]], shape=(2, 2))
    """
    return fill(shape, 0.0)


def ones(shape: Sequence[int]) -> Tensor:
    """Make a tensor of ones (``tf.ones``).

    Examples:
        >>> mt.ones((3,))
        Tensor([1.0, 1.0, 1.0], shape=(3,))
    """
    return fill(shape, 1.0)


def ones_like(t: Tensor) -> Tensor:
    """Ones with the shape of ``t`` (``tf.onesLike``).

    Examples:
        >>> mt.ones_like(mt.zeros((1, 2)))
        Tensor([[1.0, 1.0]], shape=(1, 2))
    """
    return fill(_shape_of(t, "ones_like"), 1.0)


def _shape_of(t: object, fn: str) -> Shape:
    if not isinstance(t, Tensor):
        raise InvalidArgumentError(
            explain(
                N_("{0}() needs a Tensor, got {1}.").format(fn, type(t).__name__),
                N_("It copies the shape of an existing tensor."),
                N_("use mt.zeros(shape) for a shape, or mt.{0}(mt.tensor(values)).").format(fn),
            ),
            value=t,
        )
    return t.shape


def _rng(seed: int | None) -> _random.Random:
    return _random.Random(seed) if seed is not None else _random.Random(_random.getrandbits(64))


def random_normal(
    shape: Sequence[int], mean: float = 0.0, stddev: float = 1.0, seed: int | None = None
) -> Tensor:
    """Sample a normal distribution (``tf.randomNormal``); ``seed`` makes it repeatable.

    Examples:
        >>> a = mt.random_normal((3,), seed=0)
        >>> a.data_sync() == mt.random_normal((3,), seed=0).data_sync()
        True
        >>> a.shape
        (3,)
    """
    target = validate_shape(shape)
    rng = _rng(seed)
    return new(Tensor, [rng.gauss(mean, stddev) for _ in range(size_of(target))], target, "random_normal")


def random_uniform(
    shape: Sequence[int], minval: float = 0.0, maxval: float = 1.0, seed: int | None = None
) -> Tensor:
    """Sample uniformly from ``[minval, maxval)`` (``tf.randomUniform``).

    Examples:
        >>> u = mt.random_uniform((100,), -1.0, 1.0, seed=1)
        >>> -1.0 <= min(u.data_sync()) and max(u.data_sync()) < 1.0
        True
    """
    target = validate_shape(shape)
    rng = _rng(seed)
    span = maxval - minval
    return new(Tensor, [minval + span * rng.random() for _ in range(size_of(target))], target, "random_uniform")
