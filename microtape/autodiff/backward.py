"""The backward pass: a tape's records replayed in reverse, and what reaches what through them.

Read after ``arguments.py`` and before ``tape.py``, whose ``GradientTape``
keeps the records and calls these from ``gradient()``, ``jacobian()``,
``summary()`` and ``to_dot()``. A record is ``(op, inputs, params, out,
needs)``. Execution order is already a topological order, so the backward
pass is one loop over the records in reverse: no recursion, so a chain of
100,000 ops is fine.

While a tape runs a backward pass it stops recording on itself, but any
*other* open tape records the VJPs' ops. That is all higher-order gradients
need: an outer tape differentiates what the inner backward pass computed.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import TypeAlias

from ..core import runtime
from ..core.creation import fill
from ..core.registry import Op
from ..core.runtime import STATE, Scope, new
from ..core.tensor import Grads, Tensor
from ..core.types import ValueGrads
from ..ops.composite import stack
from .arguments import wrong_gradient_shape

__all__ = ["OnStep", "Record", "backward", "gradient_norms", "jacobian", "reaches", "walk", "walk_values"]

OnStep: TypeAlias = "Callable[[Op, Tensor, Tensor, Grads, dict[int, Tensor]], None]"
"""What ``walk`` calls after each VJP: (op, its output, the gradient that reached
the output, what the VJP returned, the gradients accumulated so far by tensor id)."""

Record: TypeAlias = "tuple[Op, tuple[Tensor, ...], dict[str, object], Tensor, tuple[bool, ...]]"
"""(op, inputs, params, out, needs): ``needs[i]`` says whether input i was tracked
when the op ran, so whether the backward pass wants its gradient."""


def reaches(records: Sequence[Record], target: Tensor, sources: Sequence[Tensor]) -> list[bool]:
    """For each source, whether ``target`` depends on it through the recorded ops."""
    needed = {target.id}
    for _, inputs, _, out, _ in reversed(records):
        if out.id in needed:
            needed.update(x.id for x in inputs)
    return [s.id in needed for s in sources]


def backward(
    tape: runtime.Recorder,
    records: Sequence[Record],
    targets: list[Tensor],
    douts: list[Tensor | None],
    sources: list[Tensor],
    zero: bool,
    on_step: OnStep | None = None,
    kept: list[Tensor] | None = None,
) -> list[Tensor | None]:
    """The backward pass of ``tape``: one reversed loop over its records, in its own scope.

    ``on_step`` (``steps.py``) sees each VJP as it runs; the tensors it puts in
    ``kept`` survive the pass's scope, as the results do."""
    st = STATE.get()
    scope = Scope("gradient()")
    others = tuple([t for t in st.tapes if t is not tape])
    light = not (others or st.observers)
    values = light and on_step is None  # nothing else watches: the pass runs on flat lists
    first_id = 0 if values else runtime.next_id()  # ids only grow: a result older than this is not fresh
    token = STATE.set(
        st.but(
            tapes=others,
            scopes=st.scopes + (scope,),
            backward=st.backward + 1,
            light=light,
        )
    )
    try:
        if values:
            found = walk_values(records, targets, douts, sources, zero)
        else:
            result = walk(records, targets, douts, sources, zero, st.observers, on_step)
    except BaseException:
        STATE.reset(token)
        runtime.close_scope(scope, (), st.scopes)
        raise
    STATE.reset(token)
    if values:
        runtime.close_scope(scope, (), st.scopes)
        return [None if v is None else new(Tensor, v, s.shape, "gradient") for s, v in zip(sources, found)]
    survivors = [g for g in result if g is not None] + (kept or [])
    runtime.close_scope(scope, survivors, st.scopes)
    for g in survivors:
        runtime.adopt(g)
    # A gradient that passed straight through (say, the caller's dy through an
    # add) is the caller's tensor: hand back a copy, so gradients are always fresh.
    return [g.clone() if g is not None and g.id < first_id else g for g in result]


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
        return fill(target.shape + source.shape, 0.0)
    return stack(out).reshape(target.shape + source.shape)


def gradient_norms(
    records: Sequence[Record], last: tuple[list[Tensor], list[list[float] | None]] | None
) -> dict[int, float]:
    """Norm of the gradient that reached each recorded output in the last backward
    pass (``last``: its targets and output gradients, as values), by the output's
    id. Only a report needs them, so they are measured here, by replaying that pass
    quietly (no tape records it, no observer sees it, its tensors stay outside the
    arena), not on every pass."""
    if last is None or not records:
        return {}
    targets, values = last
    if any(t._data is None for t in targets):
        return {}
    norms: dict[int, float] = {}
    token = STATE.set(STATE.get().but(tapes=(), observers=(), backward=STATE.get().backward + 1, light=True))
    try:
        douts: list[Tensor | None] = [None if v is None else new(Tensor, v, t.shape, "tensor") for t, v in zip(targets, values)]
        walk_values(records, targets, douts, [], False, norms)
    finally:
        STATE.reset(token)
    return norms


def walk(
    records: Sequence[Record],
    targets: list[Tensor],
    douts: list[Tensor | None],
    sources: list[Tensor],
    zero: bool,
    observers: tuple[runtime.Observer, ...],
    on_step: OnStep | None = None,
) -> list[Tensor | None]:
    """The loop itself: each record's VJP turns its output's gradient into its inputs' gradients.

    ``douts`` are the targets' output gradients (``None``: ones); ``zero`` gives
    unconnected sources zeros instead of ``None``; ``on_step``, when given, is
    called after each VJP with the gradients so far, by tensor id. Runs when an
    outer tape or an observer watches the pass (its VJPs are then ops they see),
    or ``on_step`` asks for tensors; otherwise :func:`backward` uses :func:`walk_values`."""
    grads: dict[int, Tensor] = {}
    for t, d in zip(targets, douts):
        d = fill(t.shape, 1.0) if d is None else d
        prev = grads.get(t.id)
        grads[t.id] = d if prev is None else prev + d
    keep = {s.id for s in sources}
    pop = grads.pop
    for op, inputs, params, out, needs in reversed(records):
        dout = pop(out.id, None)  # each output's gradient is complete once its record is reached
        if dout is None:
            continue
        if out.id in keep:
            grads[out.id] = dout  # a source that is also an op's output: its gradient is a result
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
            if dx.shape != x.shape:
                raise wrong_gradient_shape(op.name, inputs.index(x), dx.shape, x.shape)
            prev = grads.get(x.id)
            grads[x.id] = dx if prev is None else prev + dx
        if on_step is not None:
            on_step(op, out, dout, dxs, grads)
    result: list[Tensor | None] = [grads.get(s.id) for s in sources]
    if zero:
        result = [fill(s.shape, 0.0) if g is None else g for s, g in zip(sources, result)]
    return result


def walk_values(
    records: Sequence[Record],
    targets: list[Tensor],
    douts: list[Tensor | None],
    sources: list[Tensor],
    zero: bool,
    norms: dict[int, float] | None = None,
) -> list[list[float] | None]:
    """:func:`walk` on flat lists, for a first-order pass that nothing else watches.

    Each record's VJP on values (``Op.vjp_values``) turns its output's
    gradient, a list, into its inputs' gradients, lists again, so the loop
    makes no tensor; an op without one (or one that declines) runs its tensor
    VJP on a tensor outside the arena. The gradients are the very floats
    :func:`walk` gives (each VJP on values does the tensor VJP's arithmetic,
    and gradients add up in the same order). Lists are never written into,
    so a gradient may share one with a tensor. ``norms``, when given, receives
    the norm of the gradient that reached each output (``gradient_norms``).
    Returns the sources' values.
    """
    grads: dict[int, list[float]] = {}
    for t, d in zip(targets, douts):
        data = [1.0] * t.size if d is None else d._data
        assert data is not None  # output gradients are checked live
        prev = grads.get(t.id)
        grads[t.id] = data if prev is None else list(map(operator.add, prev, data))
    keep = {s.id for s in sources}
    pop = grads.pop
    get = grads.get
    add = operator.add
    for op, inputs, params, out, needs in reversed(records):
        dout = pop(out.id, None)  # each output's gradient is complete once its record is reached
        if dout is None:
            continue
        if out.id in keep:
            grads[out.id] = dout  # a source that is also an op's output: its gradient is a result
        if norms is not None:
            norms[out.id] = math.hypot(*dout)
        fast = op.vjp_values
        dxs = fast(dout, out, inputs, needs, params) if fast is not None and op.values_of is op.vjp else None
        if dxs is None:
            dxs = _tensor_vjp(op, dout, out, inputs, params, needs)
        for x, dx, wanted in zip(inputs, dxs, needs):
            if dx is None or not wanted:
                continue
            prev = get(x.id)
            grads[x.id] = dx if prev is None else list(map(add, prev, dx))
    result = [grads.get(s.id) for s in sources]
    if zero:
        result = [[0.0] * s.size if g is None else g for s, g in zip(sources, result)]
    return result


def _tensor_vjp(
    op: Op, dout: list[float], out: Tensor, inputs: tuple[Tensor, ...], params: dict[str, object], needs: tuple[bool, ...]
) -> ValueGrads:
    """An op's tensor VJP inside :func:`walk_values`: ``dout`` as a tensor outside the arena, the results as lists."""
    vjp = op.vjp
    assert vjp is not None  # only differentiable ops are recorded
    d = new(Tensor, dout, out.shape, "tensor", arena=False)
    if op.wants_needs:
        dxs = vjp(d, out, *inputs, needs=needs, **params)
    else:
        dxs = vjp(d, out, *inputs, **params)
    found: list[list[float] | None] = []
    for i, (x, dx, wanted) in enumerate(zip(inputs, dxs, needs)):
        if dx is None or not wanted:
            found.append(None)
            continue
        if dx.shape != x.shape:
            raise wrong_gradient_shape(op.name, i, dx.shape, x.shape)
        if dx._data is None:
            runtime.check_usable(dx)  # a VJP gave back a freed tensor: DisposedTensorError
        found.append(dx._data)
    return tuple(found)
