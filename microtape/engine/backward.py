"""The backward pass: a tape's records replayed in reverse, and what reaches what through them.

``tape.py`` keeps the records and calls these from ``gradient()`` and
``jacobian()``. A record is ``(op, inputs, params, out,
needs)``. Execution order is already a topological order, so the backward
pass is one loop over the records in reverse: no recursion, so a chain of
100,000 ops is fine.

While a tape runs a backward pass it stops recording on itself, but any
*other* open tape records the VJPs' ops. That is all higher-order gradients
need: an outer tape differentiates what the inner backward pass computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeAlias

from . import arena
from .primitive import Op
from .arena import STATE, Scope, new
from .shape import size_of
from ..errors import ShapeError, explain
from ..errors import N_
from .tensor import DISPATCH, Grads, Tensor

__all__ = ["OnStep", "Record", "backward", "gradient_norms", "jacobian", "reaches", "walk"]

OnStep: TypeAlias = "Callable[[Op, Tensor, Tensor, Grads, dict[int, Tensor]], None]"
"""What ``walk`` calls after each VJP: (op, its output, the gradient that reached
the output, what the VJP returned, the gradients accumulated so far by tensor id)."""

Record: TypeAlias = "tuple[Op, tuple[Tensor, ...], dict[str, object], Tensor, tuple[bool, ...]]"
"""(op, inputs, params, out, needs): ``needs[i]`` says whether input i was tracked
when the op ran, so whether the backward pass wants its gradient."""


def reaches(records: Sequence[Record], target: Tensor, sources: Sequence[Tensor]) -> list[bool]:
    """For each source, whether ``target`` depends on it through the recorded ops."""
    needed = {target._id}
    for _, inputs, _, out, _ in reversed(records):
        if out._id in needed:
            needed.update(x._id for x in inputs)
    return [s._id in needed for s in sources]


def backward(
    tape: arena.Recorder,
    records: Sequence[Record],
    targets: list[Tensor],
    douts: list[Tensor | None],
    sources: list[Tensor],
    zero: bool,
    on_step: OnStep | None = None,
    kept: list[Tensor] | None = None,
) -> list[Tensor | None]:
    """The backward pass of ``tape``: one reversed loop over its records, in its own scope.

    When no other tape and no observer watches the pass, the tensors its VJPs
    make skip the arena (they are freed as soon as nothing uses them), so a
    first-order pass is cheap; it still calls the very VJPs an outer tape
    records. ``on_step`` (``steps.py``) sees each VJP as it runs; the tensors
    it puts in ``kept`` survive the pass's scope, as the results do."""
    st = STATE.get()
    scope = Scope("gradient()")
    others = tuple([t for t in st.tapes if t is not tape])
    first_id = arena.next_id()  # ids only grow: a result older than this is not fresh
    token = STATE.set(
        st.replace(
            tapes=others,
            scopes=st.scopes + (scope,),
            backward=st.backward + 1,
            skip_arena=not (others or st.observers),
        )
    )
    try:
        result = walk(records, targets, douts, sources, zero, st.observers, on_step)
    except BaseException:
        STATE.reset(token)
        arena.close_scope(scope, (), st.scopes)
        raise
    STATE.reset(token)
    survivors = [g for g in result if g is not None] + (kept or [])
    arena.close_scope(scope, survivors, st.scopes)
    for g in survivors:
        arena.adopt(g)
    # A gradient that passed straight through (say, the caller's dy through an
    # add) is the caller's tensor: hand back a copy, so gradients are always fresh.
    return [g.clone() if g is not None and g._id < first_id else g for g in result]


def jacobian(
    backward_pass: Callable[[list[Tensor], list[Tensor | None], list[Tensor], bool], list[Tensor | None]],
    records: Sequence[Record],
    target: Tensor,
    source: Tensor,
    zero: bool,
) -> Tensor | None:
    """The Jacobian of ``GradientTape.jacobian``: one ``backward_pass`` per entry of ``target``
    (its output gradient picks that entry), the rows stacked to ``target.shape + source.shape``."""
    out: list[Tensor] = []
    for i in range(target.size):
        onehot = [0.0] * target.size
        onehot[i] = 1.0
        (g,) = backward_pass([target], [new(Tensor, onehot, target.shape, "one_hot")], [source], True)
        assert g is not None  # zero=True fills unconnected gradients
        out.append(g)
    if not zero and not reaches(records, target, [source])[0]:
        return None
    if not out:
        return _fill(target.shape + source.shape, 0.0)
    return DISPATCH["stack"](out).reshape(target.shape + source.shape)  # stack is an op: an outer tape records it


def gradient_norms(
    records: Sequence[Record], last: tuple[list[Tensor], list[list[float] | None]] | None
) -> dict[int, float]:
    """Norm of the gradient that reached each recorded output in the last backward
    pass (``last``: its targets and output gradients, as values), by the output's
    id. Only a report needs them, so they are measured here, by running that pass
    again quietly (no tape records it, no observer sees it, its tensors stay
    outside the arena), not on every pass."""
    if last is None or not records:
        return {}
    targets, values = last
    if any(t._data is None for t in targets):
        return {}
    norms: dict[int, float] = {}

    def measure(op: Op, out: Tensor, dout: Tensor, dxs: Grads, grads: dict[int, Tensor]) -> None:
        norms[out.id] = math.hypot(*(dout._data or ()))

    token = STATE.set(STATE.get().replace(tapes=(), observers=(), backward=STATE.get().backward + 1, skip_arena=True))
    try:
        douts: list[Tensor | None] = [None if v is None else new(Tensor, v, t.shape, "tensor") for t, v in zip(targets, values)]
        walk(records, targets, douts, [], False, (), measure)
    finally:
        STATE.reset(token)
    return norms


def walk(
    records: Sequence[Record],
    targets: list[Tensor],
    douts: list[Tensor | None],
    sources: list[Tensor],
    zero: bool,
    observers: tuple[arena.Observer, ...],
    on_step: OnStep | None = None,
) -> list[Tensor | None]:
    """The loop itself: each record's VJP turns its output's gradient into its inputs' gradients.

    ``douts`` are the targets' output gradients (``None``: ones); ``zero`` gives
    unconnected sources zeros instead of ``None``; ``on_step``, when given, is
    called after each VJP with the gradients so far, by tensor id."""
    grads: dict[int, Tensor] = {}
    for t, d in zip(targets, douts):
        d = _fill(t._shape, 1.0) if d is None else d
        prev = grads.get(t._id)
        grads[t._id] = d if prev is None else prev + d
    keep = {s._id for s in sources}
    pop = grads.pop
    for op, inputs, params, out, needs in reversed(records):
        dout = pop(out._id, None)  # each output's gradient is complete once its record is reached
        if dout is None:
            continue
        if out._id in keep:
            grads[out._id] = dout  # a source that is also an op's output: its gradient is a result
        vjp = op.vjp
        assert vjp is not None  # only differentiable ops are recorded
        if params:
            dxs = vjp(dout, out, *inputs, needs=needs, **params) if op.wants_needs else vjp(dout, out, *inputs, **params)
        else:
            dxs = vjp(dout, out, *inputs, needs=needs) if op.wants_needs else vjp(dout, out, *inputs)
        if observers:
            for obs in observers:
                obs.on_vjp(op, inputs, out, dxs)
        for x, dx, wanted in zip(inputs, dxs, needs):
            if dx is None or not wanted:
                continue
            if dx._shape != x._shape:
                raise wrong_gradient_shape(op.name, inputs.index(x), dx.shape, x.shape)
            if dx._data is None:
                arena.check_usable(dx)  # a VJP gave back a freed tensor: DisposedTensorError
            prev = grads.get(x._id)
            grads[x._id] = dx if prev is None else prev + dx
        if on_step is not None:
            on_step(op, out, dout, dxs, grads)
    result: list[Tensor | None] = [grads.get(s._id) for s in sources]
    if zero:
        result = [_fill(s._shape, 0.0) if g is None else g for s, g in zip(sources, result)]
    return result


def _fill(shape: tuple[int, ...], value: float) -> Tensor:
    """A tensor of ``shape`` holding ``value`` everywhere (``mt.fill``, which lives in ``ops/``)."""
    return new(Tensor, [value] * size_of(shape), shape, "fill")


def wrong_gradient_shape(op: str, index: int, got: tuple[int, ...], want: tuple[int, ...]) -> ShapeError:
    """The error for a VJP that returned a gradient of the wrong shape (raised during the pass)."""
    return ShapeError(
        explain(
            N_("the VJP of {0} returned a gradient of shape {1} for input {2}, whose shape is {3}.").format(repr(op), got, index, want),
            N_("A gradient has the shape of its input; a broadcast input needs its gradient summed back."),
            N_("sum over the broadcast axes (microtape.ops.unbroadcast) in that VJP; mt.check_grads names the op whose VJP is wrong."),
        ),
        op=op,
        shapes=(got, want),
        input=index,
    )
