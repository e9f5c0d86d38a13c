"""Functions of logits, written to stay finite: ``softplus``, ``log_sigmoid`` and the cross-entropies on logits.

``log(1 + exp(x))`` overflows for x above 709 and ``log(sigmoid(x))`` is
``log(0) = -inf`` below -745, although both values are ordinary numbers:
each entry here computes the same maths in a form that never overflows, and
its VJP uses the sigmoid (or the softmax), which is finite everywhere. The
losses take the labels first and the logits second, as TF.js's
``tf.losses.sigmoidCrossEntropy`` and ``tf.losses.softmaxCrossEntropy``, and
reduce as TF.js does by default (``reduction="mean"``).
"""

from __future__ import annotations

import math

from ..engine.primitive import primitive
from ..engine.shape import size_of
from ..engine.types import Flat, Shape
from ..errors import InvalidArgumentError, ShapeError, explain
from ..language import N_
from .floats import safe_total
from .index_maps import normalize_axes, reduce_index, reduced_shape
from .kernels import map_flat
from .shape_ops import reduce_sum, unreduce
from .arithmetic import mul, neg, sub
from .transcendental import exp, sigmoid
from .reduce import logsumexp
from ..engine.tensor import Grads, Tensor

__all__ = ["log_sigmoid", "sigmoid_cross_entropy", "softmax_cross_entropy", "softplus"]

_NAN = math.nan
_BOTH = (True, True)
_REDUCTIONS = ("mean", "sum", "none")


# ── softplus ────────────────────────────────────────────────────────────────
# out = log(1 + e^x)           ∂out/∂x = sigmoid(x)
# Computed as x + log1p(e^-x) for x > 0 and log1p(e^x) otherwise: no overflow.


def _softplus(v: float) -> float:
    if v > 0.0:
        return v + math.log1p(math.exp(-v))
    if v != v:
        return v
    return math.log1p(math.exp(v)) if v > -745.0 else 0.0


@primitive("softplus")
def softplus(x: Tensor) -> Flat:
    """``log(1 + e^x)`` of every entry, without overflow (``tf.softplus``): a smooth relu.

    Examples:
        >>> mt.softplus(mt.tensor([0.0, 1000.0, -1000.0]))
        Tensor([0.6931, 1000.0, 0.0], shape=(3,))
        >>> mt.grad(mt.softplus)(mt.tensor([0.0, 1000.0]))     # sigmoid
        Tensor([0.5, 1.0], shape=(2,))
    """
    return map_flat(_softplus, x._data), x.shape


@softplus.defvjp
def _softplus_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, sigmoid(x)),)


# ── log_sigmoid ─────────────────────────────────────────────────────────────
# out = log sigmoid(x) = -softplus(-x)        ∂out/∂x = 1 - sigmoid(x) = sigmoid(-x)


@primitive("log_sigmoid")
def log_sigmoid(x: Tensor) -> Flat:
    """``log(sigmoid(x))`` of every entry, finite where ``log(sigmoid(x))`` gives ``-inf`` (``tf.logSigmoid``).

    Examples:
        >>> mt.log_sigmoid(mt.tensor([0.0, -1000.0, 1000.0]))
        Tensor([-0.6931, -1000.0, 0.0], shape=(3,))
        >>> mt.grad(mt.log_sigmoid)(mt.tensor([-1000.0, 0.0]))   # sigmoid(-x)
        Tensor([1.0, 0.5], shape=(2,))
    """
    return map_flat(lambda v: 0.0 - _softplus(-v), x._data), x.shape  # 0.0 - : never a -0.0


@log_sigmoid.defvjp
def _log_sigmoid_vjp(dout: Tensor, out: Tensor, x: Tensor) -> Grads:
    return (mul(dout, sigmoid(neg(x))),)


# ── the reductions of the losses (TF.js's Reduction) ────────────────────────


def _check_reduction(reduction: object, op: str) -> str:
    if reduction not in _REDUCTIONS:
        raise InvalidArgumentError(
            explain(
                N_("{0}: reduction={1} is not 'mean', 'sum' or 'none'.").format(op, repr(reduction)),
                N_("'mean' (the default, TF.js's SUM_BY_NONZERO_WEIGHTS without weights) averages the losses, 'sum' adds them, 'none' returns each one."),
                N_('pass reduction="mean".'),
            ),
            op=op,
            value=reduction,
        )
    assert isinstance(reduction, str)  # one of _REDUCTIONS
    return reduction


def _reduce(losses: list[float], shape: Shape, reduction: str) -> Flat:
    """The losses as ``reduction`` asks; the mean of no loss is 0, as TF's (it divides with divNoNan)."""
    if reduction == "none":
        return losses, shape
    total = safe_total(losses)
    return [total / len(losses) if reduction == "mean" and losses else total], ()


def _unreduce_loss(dout: Tensor, shape: Shape, reduction: str) -> Tensor:
    """The gradient of each unreduced loss (of ``shape``), from the gradient of the reduced one."""
    if reduction == "none":
        return dout
    d = unreduce(dout, shape)
    n = size_of(shape)
    return d / float(n) if reduction == "mean" and n else d


def _check_same_shape(labels: Tensor, logits: Tensor, op: str) -> None:
    if labels.shape != logits.shape:
        raise ShapeError(
            explain(
                N_("{0}: labels have shape {1}, logits have shape {2}.").format(op, labels.shape, logits.shape),
                N_("Each logit has its label, so the shapes must be equal (TF.js asserts the same)."),
                N_("reshape the labels to the logits' shape, or one-hot them: mt.one_hot(indices, depth)."),
            ),
            op=op,
            shapes=(labels.shape, logits.shape),
        )


# ── sigmoid_cross_entropy ───────────────────────────────────────────────────
# loss = -z·log σ(x) - (1 - z)·log(1 - σ(x)) = max(x, 0) - x·z + log(1 + e^-|x|)
# ∂loss/∂x = σ(x) - z        ∂loss/∂z = -x          (then the reduction: mean by default)
# σ(x) - z is computed as (1 - z)·σ(x) - z·σ(-x), so a saturated logit keeps its tiny slope
# (σ(40) - 1 would round to 0; -σ(-40) is -4.2e-18).
# A term whose label factor is 0 is 0, even at an infinite logit (0·inf is not formed).


def _sigmoid_ce(z: float, x: float) -> float:
    if x != x or z != z:
        return _NAN
    if x >= 0.0:
        return (x * (1.0 - z) if z != 1.0 else 0.0) + math.log1p(math.exp(-x))
    return (-x * z if z != 0.0 else 0.0) + math.log1p(math.exp(x))


@primitive("sigmoid_cross_entropy", n_inputs=2)
def sigmoid_cross_entropy(labels: Tensor, logits: Tensor, reduction: str = "mean") -> Flat:
    """Binary cross-entropy of ``labels`` (0 to 1) and the sigmoid of ``logits`` (``tf.losses.sigmoidCrossEntropy``).

    Computed from the logits as ``max(x, 0) - x * z + log(1 + exp(-|x|))``,
    which stays finite where ``-log(sigmoid(x))`` or ``-log(1 - sigmoid(x))``
    would be ``inf`` (and their gradient NaN). ``reduction="mean"`` (the
    default) averages over every entry, as TF.js's default reduction
    (``SUM_BY_NONZERO_WEIGHTS`` with no weights) does; ``"sum"`` adds,
    ``"none"`` returns one loss per entry.

    Examples:
        >>> labels, logits = mt.tensor([1.0, 0.0]), mt.tensor([40.0, 40.0])
        >>> mt.sigmoid_cross_entropy(labels, logits, reduction="none")
        Tensor([4.248e-18, 40.0], shape=(2,))
        >>> mt.grads(lambda x: mt.sigmoid_cross_entropy(labels, x))([logits])   # (sigmoid(x) - z) / 2
        [Tensor([-2.124e-18, 0.5], shape=(2,))]
    """
    how = _check_reduction(reduction, "sigmoid_cross_entropy")
    _check_same_shape(labels, logits, "sigmoid_cross_entropy")
    assert labels._data is not None and logits._data is not None  # the op wrapper checked them
    return _reduce(list(map(_sigmoid_ce, labels._data, logits._data)), logits.shape, how)


@sigmoid_cross_entropy.defvjp
def _sigmoid_cross_entropy_vjp(
    dout: Tensor, out: Tensor, labels: Tensor, logits: Tensor, reduction: str = "mean", needs: tuple[bool, ...] = _BOTH
) -> Grads:
    d = _unreduce_loss(dout, logits.shape, reduction)
    return (
        mul(d, neg(logits)) if needs[0] else None,
        mul(d, sub(mul(1.0 - labels, sigmoid(logits)), mul(labels, sigmoid(neg(logits))))) if needs[1] else None,
    )


# ── softmax_cross_entropy ───────────────────────────────────────────────────
# loss = Σ_axis z·(lse - x), lse = log Σ_axis e^x     (= -Σ z·log_softmax(x); a 0 label adds 0)
# ∂loss/∂x = softmax(x)·Σz - z       ∂loss/∂z = lse - x = -log_softmax(x)
# TF.js's own gradient for the labels is z - softmax(x), which is not this derivative.


def _softmax_ce_rows(labels: list[float], logits: list[float]) -> float:
    if any(v != v for v in logits) or any(z != z for z in labels):
        return _NAN
    top = max(logits) if logits else -math.inf
    if math.isinf(top):
        lse = top
    else:
        lse = top + math.log(math.fsum(math.exp(v - top) for v in logits))
    return safe_total([z * (lse - x) for z, x in zip(labels, logits) if z != 0.0])


@primitive("softmax_cross_entropy", n_inputs=2)
def softmax_cross_entropy(labels: Tensor, logits: Tensor, axis: int = -1, reduction: str = "mean") -> Flat:
    """Cross-entropy of ``labels`` (rows that sum to 1) and the softmax of ``logits`` along ``axis``
    (``tf.losses.softmaxCrossEntropy``).

    Computed as ``sum(labels * (logsumexp(logits) - logits))``, which stays
    finite where ``log(softmax(x))`` underflows to ``-inf``; a class whose
    label is 0 adds 0, even at a logit of ``-inf`` (a masked class).
    ``reduction="mean"`` (the default) averages the per-example losses, as
    TF.js's default reduction does; ``"sum"`` adds them, ``"none"`` returns
    one per example.

    Examples:
        >>> labels = mt.tensor([[0.0, 1.0, 0.0]])
        >>> logits = mt.tensor([[2.0, 1.0, -math.inf]])
        >>> mt.softmax_cross_entropy(labels, logits)
        Tensor(1.313, shape=())
        >>> mt.grads(lambda x: mt.softmax_cross_entropy(labels, x))([logits])   # softmax - labels
        [Tensor([[0.7311, -0.7311, 0.0]], shape=(1, 3))]
    """
    how = _check_reduction(reduction, "softmax_cross_entropy")
    _check_same_shape(labels, logits, "softmax_cross_entropy")
    if logits.rank == 0:
        raise InvalidArgumentError(
            explain(
                N_("softmax_cross_entropy: the logits are a scalar, with no axis of classes."),
                N_("The softmax runs along an axis of classes (the last by default)."),
                N_("give one logit per class, for example shape (batch, classes)."),
            ),
            op="softmax_cross_entropy",
            axis=axis,
        )
    axes = normalize_axes(axis, logits.rank, "softmax_cross_entropy")
    shape = reduced_shape(logits.shape, axes, keepdims=False)
    rows_z: list[list[float]] = [[] for _ in range(size_of(shape))]
    rows_x: list[list[float]] = [[] for _ in range(size_of(shape))]
    assert labels._data is not None and logits._data is not None  # the op wrapper checked them
    for i, z, x in zip(reduce_index(logits.shape, axes), labels._data, logits._data):
        rows_z[i].append(z)
        rows_x[i].append(x)
    return _reduce([_softmax_ce_rows(z, x) for z, x in zip(rows_z, rows_x)], shape, how)


@softmax_cross_entropy.defvjp
def _softmax_cross_entropy_vjp(
    dout: Tensor, out: Tensor, labels: Tensor, logits: Tensor, axis: int = -1, reduction: str = "mean",
    needs: tuple[bool, ...] = _BOTH,
) -> Grads:
    rows = reduced_shape(logits.shape, normalize_axes(axis, logits.rank, "softmax_cross_entropy"), keepdims=False)
    d = unreduce(_unreduce_loss(dout, rows, reduction), logits.shape, axis)
    lse = unreduce(logsumexp(logits, axis=axis, keepdims=True), logits.shape, axis, True)
    dz = mul(d, sub(lse, logits)) if needs[0] else None
    dx = None
    if needs[1]:
        total = unreduce(reduce_sum(labels, axis=axis, keepdims=True), logits.shape, axis, True)
        dx = mul(d, sub(mul(exp(sub(logits, lse)), total), labels))
    return dz, dx
