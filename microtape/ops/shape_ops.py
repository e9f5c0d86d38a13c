"""Shape ops and sums: the primitives whose forward moves, copies or adds up entries.

The first of the four op files (``ops/`` says
how an entry reads). ``unbroadcast`` and ``unreduce`` at the top are the
adjoints of broadcasting and reducing: where the forward copied an entry, the
backward sums the copies' gradients. The VJPs here use only the ops of this
file, so every other op file can build on it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .kernels import reduce_flat
from ..engine.primitive import primitive
from .index_maps import broadcast_index, broadcast_shapes, expand_index, normalize_axes, reduced_shape, strides_of, transpose_index
from ..engine.shape import check_size, size_of, validate_shape
from ..engine.types import Axis, Flat, Shape
from ..errors import InvalidArgumentError, ShapeError, explain
from ..language import N_
from ..engine.tensor import Grads, Tensor

__all__ = [
    "broadcast_to",
    "concat",
    "pad",
    "reduce_sum",
    "reshape",
    "slice",
    "transpose",
    "unbroadcast",
    "unreduce",
]


# ── the adjoints of broadcasting and reducing ───────────────────────────────


def unbroadcast(dout: Tensor, shape: Shape) -> Tensor:
    """Sum ``dout`` over the axes that broadcasting added or stretched, back to ``shape``.

    Examples:
        >>> from microtape.ops import unbroadcast
        >>> unbroadcast(mt.ones((2, 3)), (3,))
        Tensor([2.0, 2.0, 2.0], shape=(3,))
    """
    have = dout._shape  # read once: every broadcasting op's VJP comes through here
    if have == shape:
        return dout
    lead = len(have) - len(shape)
    axes = tuple(range(lead)) + tuple(
        [lead + i for i, d in enumerate(shape) if d == 1 and have[lead + i] != 1]
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


# ── sum ─────────────────────────────────────────────────────────────────────
# out = Σ_axis x               ∂out/∂x_i = 1     (every entry gets its slice's dout)


@primitive("sum")
def reduce_sum(x: Tensor, axis: Axis = None, keepdims: bool = False) -> Flat:
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
    axes = normalize_axes(axis, len(x._shape), "sum")
    return reduce_flat(x._data, x._shape, axes, keepdims, "sum")


@reduce_sum.defvjp
def _sum_vjp(dout: Tensor, out: Tensor, x: Tensor, axis: Axis = None, keepdims: bool = False) -> Grads:
    return (unreduce(dout, x.shape, axis, keepdims),)


# ── transpose ───────────────────────────────────────────────────────────────
# out = x with axes permuted by perm      dx = dout permuted back


def _check_perm(perm: Sequence[int] | None, rank: int) -> tuple[int, ...]:
    if perm is None:
        return tuple(range(rank - 1, -1, -1))
    p = tuple(perm)
    if sorted(p) != list(range(rank)):
        raise InvalidArgumentError(
            explain(
                N_("transpose: perm {0} is not a permutation of the {1} axes {2}.").format(p, rank, tuple(range(rank))),
                N_("perm must name every axis exactly once."),
                N_("for a rank-{0} tensor try perm={1}.").format(rank, tuple(range(rank - 1, -1, -1))),
            ),
            op="transpose",
            perm=p,
        )
    return p


@primitive("transpose")
def transpose(x: Tensor, perm: Sequence[int] | None = None) -> Flat:
    """Permute the axes; by default reverse them (``tf.transpose``).

    Examples:
        >>> mt.transpose(mt.tensor([[1.0, 2.0, 3.0]]))
        Tensor([[1.0], [2.0], [3.0]], shape=(3, 1))
    """
    p = _check_perm(perm, x.rank)
    assert x._data is not None  # the op wrapper checked it
    data = x._data
    shape = tuple([x.shape[i] for i in p])
    return [data[i] for i in transpose_index(x.shape, p)], shape


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
                N_("reshape: {0} is not a valid shape.").format(repr(shape)),
                N_("A shape is a tuple of non-negative ints, with at most one -1 (inferred)."),
                N_("for example x.reshape((2, -1))."),
            ),
            op="reshape",
            shapes=(x.shape, shape),
        )
    if -1 in dims:
        known = size_of(tuple([d for d in dims if d != -1]))
        if known == 0 or x.size % known:
            raise ShapeError(
                explain(
                    N_("reshape: cannot infer -1 in {0} for {1} entries (shape {2}).").format(tuple(dims), x.size, x.shape),
                    N_("The known dimensions must divide the number of entries."),
                    N_("check the other dimensions of the new shape."),
                ),
                op="reshape",
                shapes=(x.shape, tuple(dims)),
            )
        dims[dims.index(-1)] = x.size // known
    target = tuple(dims)
    if size_of(target) != x.size:
        raise ShapeError(
            explain(
                N_("reshape: cannot reshape {0} entries (shape {1}) into shape {2} ({3} entries).").format(x.size, x.shape, target, size_of(target)),
                N_("reshape keeps every entry, so the sizes must match."),
                N_("use -1 for one dimension to let microtape compute it."),
            ),
            op="reshape",
            shapes=(x.shape, target),
        )
    return target


@primitive("reshape")
def reshape(x: Tensor, shape: Sequence[int]) -> Flat:
    """Give the same entries a new shape; one dimension may be -1 (``tf.reshape``).

    Examples:
        >>> mt.reshape(mt.tensor([1.0, 2.0, 3.0, 4.0]), (2, -1))
        Tensor([[1.0, 2.0], [3.0, 4.0]], shape=(2, 2))
    """
    target = _infer_shape(x, shape)
    assert x._data is not None  # the op wrapper checked it
    return x._data, target  # tensors are immutable, so the list is shared


@reshape.defvjp
def _reshape_vjp(dout: Tensor, out: Tensor, x: Tensor, shape: Sequence[int] = ()) -> Grads:
    return (reshape(dout, shape=x.shape),)


# ── broadcast_to ────────────────────────────────────────────────────────────
# out = x copied along new or size-1 axes     dx = copies' gradients summed


@primitive("broadcast_to")
def broadcast_to(x: Tensor, shape: Sequence[int]) -> Flat:
    """Copy ``x`` out to ``shape`` by NumPy's broadcasting rules (``tf.broadcastTo``).

    Examples:
        >>> mt.broadcast_to(mt.tensor([1.0, 2.0]), (2, 2))
        Tensor([[1.0, 2.0], [1.0, 2.0]], shape=(2, 2))
    """
    target = validate_shape(shape)
    if broadcast_shapes(x.shape, target, "broadcast_to") != target:
        raise ShapeError(
            explain(
                N_("broadcast_to: shape {0} cannot be broadcast to {1}.").format(x.shape, target),
                N_("broadcast_to may add leading axes and stretch size-1 axes only."),
                N_("reshape first so the axes line up."),
            ),
            op="broadcast_to",
            shapes=(x.shape, target),
        )
    assert x._data is not None  # the op wrapper checked it
    data = x._data
    return [data[i] for i in broadcast_index(x.shape, target)], target


@broadcast_to.defvjp
def _broadcast_to_vjp(dout: Tensor, out: Tensor, x: Tensor, shape: Sequence[int] = ()) -> Grads:
    return (unbroadcast(dout, x.shape),)


# ── slice, pad (each is the other's adjoint) ────────────────────────────────
# slice: out = x[begin : begin + size]     dx = dout padded with zeros back to x.shape
# pad:   out = x surrounded by constants   dx = the middle slice of dout


def _per_axis(value: object, rank: int, fill: int) -> tuple[int, ...] | None:
    """``begin`` or ``size`` as TF.js reads it: a number is the first axis, missing axes get ``fill``."""
    items = (value,) if isinstance(value, int) else tuple(value) if isinstance(value, (list, tuple)) else None
    if items is None or not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        return None
    return items + (fill,) * (rank - len(items))


def _slice_spec(x: Tensor, begin: int | Sequence[int], size: int | Sequence[int] | None) -> tuple[Shape, Shape]:
    b = _per_axis(begin, x.rank, 0)
    s = _per_axis(-1 if size is None else size, x.rank, -1)
    ok = b is not None and s is not None and len(b) == len(s) == x.rank and all(
        0 <= bi <= d and (si == -1 or 0 <= si <= d - bi) for bi, si, d in zip(b, s, x.shape)
    )
    if not ok or b is None or s is None:
        raise InvalidArgumentError(
            explain(
                N_("slice: begin {0} and size {1} do not fit shape {2}.").format(repr(begin), repr(size), x.shape),
                N_("Give one begin and one size (or -1 for 'to the end') per axis, inside the tensor."),
                N_("for example mt.slice(x, {0}, {1}).").format(tuple(0 for _ in x.shape), x.shape),
            ),
            op="slice",
            shape=x.shape,
        )
    return b, tuple([d - bi if si == -1 else si for bi, si, d in zip(b, s, x.shape)])


@primitive("slice")
def slice(x: Tensor, begin: int | Sequence[int], size: int | Sequence[int] | None = None) -> Flat:
    """Take the block that starts at ``begin`` and has ``size`` (``tf.slice``); -1 means to the end.

    As in TF.js, a number stands for the first axis, and axes left out start
    at 0 (``begin``) and run to the end (``size``).

    Examples:
        >>> mt.slice(mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), (0, 1), (2, 2))
        Tensor([[2.0, 3.0], [5.0, 6.0]], shape=(2, 2))
        >>> mt.slice(mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), 1, 1)   # row 1: begin (1, 0), size (1, -1)
        Tensor([[4.0, 5.0, 6.0]], shape=(1, 3))
    """
    b, s = _slice_spec(x, begin, size)
    assert x._data is not None  # the op wrapper checked it
    data = x._data
    st = strides_of(x.shape)
    offset = sum(bi * si for bi, si in zip(b, st))
    index = expand_index(s, st) if size_of(s) else []
    return [data[offset + i] for i in index], s


@slice.defvjp
def _slice_vjp(dout: Tensor, out: Tensor, x: Tensor, begin: int | Sequence[int] = (), size: int | Sequence[int] | None = None) -> Grads:
    b, s = _slice_spec(x, begin, size)
    return (pad(dout, paddings=[(bi, d - bi - si) for bi, si, d in zip(b, s, x.shape)]),)


@primitive("pad")
def pad(x: Tensor, paddings: Sequence[tuple[int, int]], constant_value: float = 0.0) -> Flat:
    """Surround ``x`` with ``constant_value``: ``paddings[i] = (before, after)`` (``tf.pad``).

    Examples:
        >>> mt.pad(mt.tensor([1.0, 2.0]), [(1, 2)])
        Tensor([0.0, 1.0, 2.0, 0.0, 0.0], shape=(5,))
    """
    pads = [tuple(p) for p in paddings]
    if len(pads) != x.rank or any(len(p) != 2 or min(p) < 0 for p in pads):
        raise InvalidArgumentError(
            explain(
                N_("pad: paddings {0} do not fit a tensor of shape {1}.").format(pads, x.shape),
                N_("Give one (before, after) pair of non-negative ints per axis."),
                N_("for example {0}.").format([(1, 1)] * x.rank),
            ),
            op="pad",
            shape=x.shape,
        )
    shape = tuple([d + p[0] + p[1] for d, p in zip(x.shape, pads)])
    check_size(shape, N_("pad: the padded shape"))
    out = [float(constant_value)] * size_of(shape)
    st = strides_of(shape)
    offset = sum(p[0] * s for p, s in zip(pads, st))
    assert x._data is not None  # the op wrapper checked it
    if x.size:
        for i, v in zip(expand_index(x.shape, st), x._data):
            out[offset + i] = v
    return out, shape


@pad.defvjp
def _pad_vjp(dout: Tensor, out: Tensor, x: Tensor, paddings: Sequence[tuple[int, int]] = (), constant_value: float = 0.0) -> Grads:
    return (slice(dout, begin=[p[0] for p in paddings], size=x.shape),)


# ── concat ──────────────────────────────────────────────────────────────────
# out = x₁, x₂, … joined along axis       dxᵢ = the slice of dout where xᵢ went


@primitive("concat", n_inputs=-1)
def concat(xs: Sequence[Tensor], axis: int = 0) -> Flat:
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
                N_("concat: cannot concatenate scalars (rank 0)."),
                N_("concat joins along an existing axis."),
                N_("use mt.stack to make a new axis."),
            ),
            op="concat",
            shapes=tuple(t.shape for t in xs),
        )
    for t in xs[1:]:
        if t.rank != first.rank or any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape)) if i != ax):
            raise ShapeError(
                explain(
                    N_("concat: shapes {0} differ outside axis {1}.").format([t.shape for t in xs], ax),
                    N_("Every tensor must have the same shape except along the concat axis."),
                    N_("reshape or transpose the odd one out."),
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
    return out, shape


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
