"""Gradient clipping: ``clip_by_norm`` and ``clip_by_global_norm`` (TensorFlow's).

Each runs in its own scope, as a
TF.js op does, so only its results stay in memory.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import overload

from ..engine import arena
from ..ops.index_maps import normalize_axes
from ..engine.types import is_number
from ..errors import N_, InvalidArgumentError, explain
from ..ops import reduce_sum, sqrt, where
from ..ops.creation import ones_like, scalar, tensor
from ..engine.arena import new
from ..engine.tensor import Tensor

__all__ = ["clip_by_global_norm", "clip_by_norm"]


def _positive(value: float, name: str) -> float:
    if not is_number(value) or not 0 < value < math.inf:
        raise InvalidArgumentError(
            explain(
                N_('{0}={1} must be a positive, finite number.').format(name, repr(value)),
                N_('Clipping rescales gradients whose norm exceeds this bound (an infinite bound would turn every gradient into NaN).'),
                N_('for example {0}=1.0; to stop clipping, do not call the clip function.').format(name),
            ),
            value=value,
        )
    return float(value)


def _safe_norm(sum_of_squares: Tensor) -> Tensor:
    """``sqrt(sum_of_squares)`` with a finite gradient at 0 (TensorFlow's two-``where`` trick).

    ``sqrt``'s derivative at 0 is infinite, and ``inf * 0`` is NaN. Where the
    sum is 0 the norm is taken as the sum itself (its value is 0 either way),
    and the ``sqrt`` only ever sees 1 there, so no NaN enters the backward pass.
    """
    positive = sum_of_squares.greater(0.0)
    safe = where(positive, sum_of_squares, ones_like(sum_of_squares))
    return where(positive, sqrt(safe), sum_of_squares)


def clip_by_norm(t: Tensor, clip_norm: float, axes: int | Sequence[int] | None = None) -> Tensor:
    """Rescale ``t`` so its L2 norm is at most ``clip_norm`` (``tf.clip_by_norm``).

    ``t * clip_norm / max(norm, clip_norm)``, the norm taken over ``axes``
    (all by default). TF.js has no ``clipByNorm``, although the Russian
    text mentions it; this is TensorFlow for Python's op, and it is
    differentiable.

    Examples:
        >>> mt.clip_by_norm(mt.tensor([3.0, 4.0]), 1.0)
        Tensor([0.6, 0.8], shape=(2,))
        >>> mt.clip_by_norm(mt.tensor([0.3, 0.4]), 1.0)     # already short: unchanged
        Tensor([0.3, 0.4], shape=(2,))
        >>> mt.grad(lambda t: mt.clip_by_norm(t, 1.0))(mt.zeros((2,)))   # identity near 0
        Tensor([1.0, 1.0], shape=(2,))
    """
    if not isinstance(t, Tensor):
        raise InvalidArgumentError(explain(N_('clip_by_norm() needs a tensor, got {0}.').format(type(t).__name__), N_('It rescales a tensor.'), N_('pass a gradient tensor.')), value=t)
    bound = _positive(clip_norm, "clip_norm")
    axes = normalize_axes(axes, t.rank, "clip_by_norm")  # errors name clip_by_norm, not its inner sum

    def run() -> Tensor:  # in its own scope, so only the result stays in memory (as a TF.js op)
        norm = _safe_norm(reduce_sum(t * t, axis=axes, keepdims=True))
        return t * bound / norm.maximum(bound)

    result = arena.run_in_scope("clip_by_norm()", run)
    assert isinstance(result, Tensor)
    return result


@overload
def clip_by_global_norm(ts: Sequence[Tensor], clip_norm: float) -> tuple[list[Tensor], Tensor]: ...


@overload
def clip_by_global_norm(ts: Sequence[Tensor | None], clip_norm: float) -> tuple[list[Tensor | None], Tensor]: ...


def clip_by_global_norm(ts: Sequence[Tensor | None], clip_norm: float) -> tuple[list[Tensor], Tensor] | tuple[list[Tensor | None], Tensor]:
    """Rescale a list of tensors together so their joint L2 norm is at most ``clip_norm``.

    Returns ``(clipped, global_norm)`` as ``tf.clip_by_global_norm`` does:
    ``t * clip_norm / max(global_norm, clip_norm)``. ``None`` entries pass
    through. If the global norm is infinite the clipped tensors are NaN, as
    in TensorFlow, which makes the problem impossible to miss.

    Examples:
        >>> clipped, norm = mt.clip_by_global_norm([mt.tensor([3.0]), mt.tensor([4.0])], 1.0)
        >>> clipped, norm
        ([Tensor([0.6], shape=(1,)), Tensor([0.8], shape=(1,))], Tensor(5.0, shape=()))
    """
    if isinstance(ts, Tensor) or not isinstance(ts, (list, tuple)):
        raise InvalidArgumentError(
            explain(
                N_('clip_by_global_norm() needs a list of tensors, got {0}.').format(type(ts).__name__),
                N_('It clips several gradients by their joint norm.'),
                N_('pass a list: mt.clip_by_global_norm([dw, db], 1.0); for one tensor use mt.clip_by_norm.'),
            ),
            value=ts,
        )
    for i, t in enumerate(ts):
        if t is not None and not isinstance(t, Tensor):
            raise InvalidArgumentError(
                explain(
                    N_('clip_by_global_norm(): entry {0} is a {1}, not a tensor or None: {2}.').format(i, type(t).__name__, f'{t!r:.60}'),
                    N_('It clips a list of gradients; None entries (no gradient) pass through.'),
                    N_('pass the gradients themselves, e.g. list(grads.values()).'),
                ),
                value=t,
            )
    bound = _positive(clip_norm, "clip_norm")
    present = [t for t in ts if t is not None]
    if not present:
        return list(ts), new(Tensor, [0.0], (), "clip_by_global_norm")

    def run() -> tuple[list[Tensor | None], Tensor]:  # only the results stay in memory
        squares = [reduce_sum(t * t) for t in present]
        total = squares[0]
        for s in squares[1:]:
            total = total + s
        norm = _safe_norm(total)
        # an infinite norm gives NaN, as in TensorFlow; the test is an op (on a copy, so no
        # gradient flows through it), not a read with item(), so mt.function can trace it
        overflow = tensor(norm).greater(sys.float_info.max)
        scale = where(overflow, scalar(math.nan), bound / norm.maximum(bound))
        return [None if t is None else t * scale for t in ts], norm

    result = arena.run_in_scope("clip_by_global_norm()", run)
    assert isinstance(result, tuple)
    return result
