"""Taking entries by index: ``gather``, whose VJP adds each gradient back where its entry came from.

The backward pass of a gather is a scatter-add (TF.js's ``unsortedSegmentSum``):
an entry gathered twice gets both gradients, one never gathered gets 0. It
is written as a product with the one-hot matrix of the indices, so the VJP
is made of public ops (``one_hot``, ``matmul``, ``transpose``) and an outer
tape differentiates it again.
"""

from __future__ import annotations

from ..engine.primitive import primitive
from ..engine.shape import check_size, size_of
from ..engine.types import Flat, Shape
from ..errors import InvalidArgumentError, explain
from ..language import N_
from .compare import index_of, one_hot, zeros_like
from .index_maps import normalize_axes
from .shape_ops import reshape, transpose
from .reduce import matmul
from ..engine.tensor import Grads, Tensor

__all__ = ["gather"]

_BOTH = (True, True)


# ── gather ──────────────────────────────────────────────────────────────────
# out[a, i, b] = x[a, indices[i], b]     (a: the axes before axis, b: the axes after it)
# ∂L/∂x[a, k, b] = Σ_{i: indices[i] = k} dout[a, i, b]      ∂L/∂indices = 0 (an index is not a number to move)


def _split(shape: Shape, axis: int) -> tuple[int, int, int]:
    """(entries before ``axis``, the axis's length, entries after it)."""
    return size_of(shape[:axis]), shape[axis], size_of(shape[axis + 1 :])


@primitive("gather", n_inputs=2)
def gather(x: Tensor, indices: Tensor, axis: int = 0) -> Flat:
    """Take the slices of ``x`` at ``indices`` along ``axis`` (``tf.gather``).

    The result has shape ``x.shape[:axis] + indices.shape + x.shape[axis + 1:]``.
    An index may repeat (its slice's gradient adds up) and must be a whole
    number in ``[0, x.shape[axis])``: an index outside is an error, as in
    TensorFlow on the CPU (TF.js returns zeros there). The gradient with
    respect to ``indices`` is zero.

    Examples:
        >>> table = mt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> mt.gather(table, mt.tensor([2.0, 0.0, 2.0]))
        Tensor([[5.0, 6.0], [1.0, 2.0], [5.0, 6.0]], shape=(3, 2))
        >>> mt.grad(lambda t: mt.gather(t, mt.tensor([2.0, 0.0, 2.0])))(table)
        Tensor([[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]], shape=(3, 2))
    """
    if x.rank == 0:
        raise InvalidArgumentError(
            explain(
                N_("gather: x is a scalar, with no axis to take entries from."),
                N_("gather takes slices of a tensor of rank 1 or more along an axis."),
                N_("x.reshape((1,))"),
            ),
            op="gather",
            axis=axis,
        )
    (ax,) = normalize_axes(axis, x.rank, "gather")
    before, n, after = _split(x.shape, ax)
    assert x._data is not None and indices._data is not None  # the op wrapper checked them
    picks = [index_of(v, "gather") for v in indices._data]
    for v, k in zip(indices._data, picks):
        if not 0 <= k < n:
            raise InvalidArgumentError(
                explain(
                    N_("gather: index {0} is not in [0, {1}): axis {2} of x (shape {3}) has {4} entries.").format(repr(v), n, ax, x.shape, n),
                    N_("Every index must point at an entry of the axis; TensorFlow raises here too (TF.js returns zeros)."),
                    N_("indices start at 0, so {0} is one past the end; check how the indices were computed.").format(n),
                ),
                op="gather",
                value=v,
            )
    shape = x.shape[:ax] + indices.shape + x.shape[ax + 1 :]
    check_size(shape, N_("gather: the result's shape"))
    data = x._data
    out: list[float] = []
    for a in range(before):
        for k in picks:
            start = (a * n + k) * after
            out.extend(data[start : start + after])
    return out, shape


@gather.defvjp
def _gather_vjp(dout: Tensor, out: Tensor, x: Tensor, indices: Tensor, axis: int = 0, needs: tuple[bool, ...] = _BOTH) -> Grads:
    dx = None
    if needs[0]:
        (ax,) = normalize_axes(axis, x.rank, "gather")
        before, n, after = _split(x.shape, ax)
        m = indices.size
        picked = one_hot(reshape(indices, shape=(m,)), n)  # (m, n): row i has a 1 at indices[i]
        # dout as (before, m, after) -> (m, before·after); ohᵀ @ it adds the rows that share an index
        rows = reshape(transpose(reshape(dout, shape=(before, m, after)), perm=(1, 0, 2)), shape=(m, before * after))
        summed = matmul(transpose(picked), rows)  # (n, before·after)
        dx = reshape(transpose(reshape(summed, shape=(n, before, after)), perm=(1, 0, 2)), shape=x.shape)
    return dx, zeros_like(indices) if needs[1] else None
