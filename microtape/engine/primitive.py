"""The op table: ``Op``, ``OPS`` and the ``@primitive`` decorator.

Calling one converts numbers and lists to tensors, checks that no input is
disposed, runs the forward and hands the result to ``emit()``, the one path
every op takes, ``custom_grad``'s included: it makes the output tensor,
shows the op to every observer (profile, leak_check, the checker,
detect_anomaly) and lets every open tape record ``(op, inputs, params,
out)``. That is all the machinery there is; ``ops/`` is a flat list of
entries using it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import Generic, ParamSpec

from . import arena
from .arena import DISPATCH, LIVE, STATE
from .types import Flat
from ..errors import InvalidArgumentError, explain
from ..errors import N_
from .convert import op_scope_ends
from .tensor import Grads, Tensor, TensorLike, as_tensor

__all__ = ["OPS", "Op", "Primitive", "apply", "composite", "emit", "primitive"]

P = ParamSpec("P")


@dataclass(slots=True, eq=False)
class Op:
    """One entry of the op table.

    ``n_inputs`` counts the leading tensor arguments; ``-1`` means the first
    argument is a sequence of tensors (``concat``). ``params`` names the
    settings that may follow them positionally (``reshape(x, shape)``).
    """

    name: str
    forward: Callable[..., Flat]
    """Tensors (and settings) in, ``(data, shape)`` out; :func:`apply` makes the tensor."""
    vjp: Callable[..., Grads] | None = None
    differentiable: bool = True
    n_inputs: int = 1
    params: tuple[str, ...] = ()
    rerun: Callable[..., tuple[Tensor, dict[str, object]]] | None = None
    """For ops made by ``custom_grad``: run again at new inputs, giving (out, params)
    with a fresh ``grad_fn`` (the gradient checker's culprit finder needs it)."""
    wants_needs: bool = False
    """The VJP takes ``needs=(bool, ...)``: which inputs need a gradient, so it can
    skip the others (a constant operand's gradient is never asked for)."""


_NO_PARAMS: dict[str, object] = {}  # shared by calls without settings; never mutated

OPS: dict[str, Op] = {}
"""Every primitive by its public name; the tests iterate over this table."""


class Primitive(Generic[P]):
    """What ``@primitive`` returns: call it like its forward; ``.defvjp`` adds the VJP."""

    def __init__(self, op: Op, forward: Callable[P, Flat]) -> None:
        self.op = op
        self._forward = forward
        functools.update_wrapper(self, forward)  # doctest and autodoc see the forward's docstring

    def defvjp(self, vjp: Callable[..., Grads]) -> Callable[..., Grads]:
        """Attach the VJP ``vjp(dout, out, *inputs, **params) -> Grads``.

        A VJP with a keyword ``needs`` is told which inputs need a gradient and
        may return ``None`` for the others.
        """
        self.op.vjp = vjp
        self.op.wants_needs = "needs" in inspect.signature(vjp).parameters
        return vjp

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Tensor:
        op = self.op
        if len(args) != op.n_inputs:
            return self._call_slow(args, kwargs)
        for x in args:
            if type(x) is not Tensor or x._disposed is not None:
                if type(x) is Tensor and x._data is not None and _get_state().backward:
                    continue  # a backward pass reads what a tape holds (disposed, not yet freed)
                return self._call_slow(args, kwargs)
        # every arg is a live Tensor here; kwargs is a fresh dict, safe to record
        if _get_state().observers:
            return apply(op, args, kwargs or _NO_PARAMS)  # type: ignore[arg-type]  # timed for profile
        data, shape = op.forward(*args, **kwargs) if kwargs else op.forward(*args)
        return emit(op, args, kwargs or _NO_PARAMS, data, shape)  # type: ignore[arg-type]

    def operator(self, reflected: bool) -> Callable[[Tensor, TensorLike], Tensor]:
        """Python's operator for this two-input op: ``x <op> other``, or ``other <op> x`` when
        ``reflected`` (``2.0 * x``); what ``@primitive(..., dunder=...)`` puts on ``Tensor``.

        With a tensor on both sides it is a call of the op. A Python number
        takes the short road: it becomes the op's scalar tensor, without the
        checks of a general call, and is disposed when the op returns, as in a
        TF.js op() scope (``convert.op_scope_ends``): outside a tape ``x * 2.0``
        adds one tensor to memory(), not two; a tape that recorded the op holds
        the number's tensor until its backward pass is done.
        """
        op = self.op
        call: Callable[..., Tensor] = self  # the op's general call, which converts ``other``

        def operator(x: Tensor, other: TensorLike) -> Tensor:
            if (type(other) is not float and type(other) is not int) or x._disposed is not None:
                return call(other, x) if reflected else call(x, other)
            st = _get_state()
            # new(Tensor, [float(other)], (), "tensor", scoped=False), written out: a step makes many
            c = _new_object(Tensor)
            c._data = [float(other)]
            c._shape = ()
            c._size = 1
            c._id = cid = _next_id()
            c._op = "tensor"
            c._disposed = None
            c._holds = 0
            c._kept = False
            args = (c, x) if reflected else (x, c)
            try:
                if not st.skip_arena:  # a backward pass nothing watches registers nothing
                    LIVE[cid] = c
                    for obs in st.observers:
                        obs.on_create(c)
                if st.observers:
                    return apply(op, args, _NO_PARAMS)  # timed for profile
                data, shape = op.forward(*args)
                return emit(op, args, _NO_PARAMS, data, shape)
            finally:
                op_scope_ends(c)

        return operator

    def _call_slow(self, args: tuple[object, ...], kwargs: dict[str, object]) -> Tensor:
        """Bind numbers, lists and settings, run, then dispose the tensors made
        from numbers here: the op's own scope, as TF.js's ``op()``. A tape that
        recorded the op holds them until its backward pass is done."""
        inputs, params = self._bind(args, kwargs)
        given = args[0] if self.op.n_inputs < 0 and args and isinstance(args[0], (list, tuple)) else args
        made = [x for x in inputs if not any(x is a for a in given)]
        try:
            return apply(self.op, inputs, params)
        finally:
            for x in made:
                op_scope_ends(x)

    def _bind(self, args: tuple[object, ...], kwargs: dict[str, object]) -> tuple[tuple[Tensor, ...], dict[str, object]]:
        """The general path: convert inputs, check them, map extra positionals to params."""
        op = self.op
        kwargs = dict(kwargs)
        n = op.n_inputs
        for a in args:  # a disposed input fails before anything is converted
            if isinstance(a, Tensor) and a._disposed is not None:
                arena.check_usable(a)
        if n < 0:
            inputs = _sequence_of_tensors(args[0] if args else kwargs.pop("tensors"), op.name)
            rest = args[1:]
        else:
            if len(args) < n:
                raise InvalidArgumentError(
                    explain(
                        N_("{0}() takes {1} tensor argument(s), got {2}.").format(op.name, n, len(args)),
                        N_("Call it as mt.{0}({1}{2}).").format(op.name, ', '.join('xyz'[:n]), ', ...' if op.params else ''),
                        N_("pass every input tensor positionally."),
                    ),
                    op=op.name,
                )
            inputs = _convert_all(args[:n], op.name)
            rest = args[n:]
        for x in inputs:
            if x._disposed is not None:
                arena.check_usable(x)
        params = kwargs
        if rest:
            if len(rest) > len(op.params):
                raise InvalidArgumentError(
                    explain(
                        N_("{0}() got {1} extra positional argument(s) {2}.").format(op.name, len(rest), repr(rest)),
                        N_("After the tensors it takes: {0}.").format(', '.join(op.params) or N_('nothing')),
                        N_("pass settings by keyword, for example axis=0."),
                    ),
                    op=op.name,
                )
            for key, value in zip(op.params, rest):
                params[key] = value
        return inputs, params


def apply(op: Op, inputs: tuple[Tensor, ...], params: dict[str, object]) -> Tensor:
    """Run a primitive's forward on live tensors and :func:`emit` the result."""
    st = _get_state()
    if st.observers:  # profile reports each op's time
        start = perf_counter()
        data, shape = op.forward(inputs, **params) if op.n_inputs < 0 else op.forward(*inputs, **params)
        return emit(op, inputs, params, data, shape, perf_counter() - start)
    if params is _NO_PARAMS:
        data, shape = op.forward(*inputs) if op.n_inputs >= 0 else op.forward(inputs)
    else:
        data, shape = op.forward(*inputs, **params) if op.n_inputs >= 0 else op.forward(inputs, **params)
    return emit(op, inputs, params, data, shape)


def emit(
    op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], data: list[float], shape: tuple[int, ...],
    seconds: float = 0.0,
) -> Tensor:
    """The one path of every op: make its output, show it to the observers, let the tapes record it.

    An observer that raises (detect_anomaly refusing a NaN) refuses the op:
    its output is disposed and no tape records it.
    """
    # new(Tensor, data, shape, op.name), written out: every op of every step comes through here
    out = _new_object(Tensor)
    out._data = data
    out._shape = shape
    out._size = len(data)
    out._id = tid = _next_id()
    out._op = op.name
    out._disposed = None
    out._holds = 0
    out._kept = False
    st = _get_state()
    if not st.skip_arena:
        LIVE[tid] = out
        if st.scopes:
            st.scopes[-1].tensors.append(out)
        if st.observers:
            for obs in st.observers:
                obs.on_create(out)
    if st.observers:
        try:
            for obs in st.observers:
                obs.on_op(op, inputs, params, out, seconds)
        except BaseException:
            out.dispose()
            raise
    if st.tapes:
        for tape in st.tapes:
            if op.differentiable:
                tape._record(op, inputs, params, out)
            else:
                tape._cut(op.name, inputs, out)  # stop_gradient: the path ends here, and the tape says where
    return out


_get_state = STATE.get
_new_object = object.__new__
_next_id = arena.take_id


def _convert_all(values: Sequence[object], op: str) -> tuple[Tensor, ...]:
    """Convert each value to a tensor; if one fails, dispose those made before it."""
    out: list[Tensor] = []
    try:
        for v in values:
            out.append(v if type(v) is Tensor or isinstance(v, Tensor) else _convert(v, op))
    except BaseException:
        for t, v in zip(out, values):
            if t is not v:
                t.dispose()
        raise
    return tuple(out)

def _convert(value: object, op: str) -> Tensor:
    try:
        return as_tensor(value)  # type: ignore[arg-type]  # as_tensor reports bad values itself
    except InvalidArgumentError as err:
        raise type(err)(f"{op}: {err.message}", **err.facts) from None


def _sequence_of_tensors(value: object, op: str) -> tuple[Tensor, ...]:
    if isinstance(value, Tensor) or not isinstance(value, (list, tuple)) or not value:
        raise InvalidArgumentError(
            explain(
                N_("{0}() needs a non-empty list of tensors, got {1}.").format(op, type(value).__name__),
                N_("mt.{0} joins several tensors given as one list.").format(op),
                N_("write mt.{0}([a, b], axis=0).").format(op),
            ),
            op=op,
        )
    return _convert_all(value, op)


def primitive(
    name: str, *, differentiable: bool = True, n_inputs: int = 1, dunder: str | None = None
) -> Callable[[Callable[P, Flat]], Primitive[P]]:
    """Register ``forward`` as primitive ``name``; the settings after the tensors become params.

    ``dunder`` names the Python operator of a two-input op (``"mul"``: ``x * y`` and
    ``2.0 * x`` call it through ``Tensor.__mul__`` and ``Tensor.__rmul__``).
    """

    def wrap(forward: Callable[P, Flat]) -> Primitive[P]:
        names = list(inspect.signature(forward).parameters)
        params = tuple(names[1 if n_inputs < 0 else n_inputs :])
        op = Op(name, forward, None, differentiable, n_inputs, params)
        if name in OPS:
            raise RuntimeError(f"primitive {name!r} registered twice")  # our own invariant
        OPS[name] = op
        prim = Primitive(op, forward)
        DISPATCH[name] = prim
        if dunder is not None:
            setattr(Tensor, f"__{dunder}__", prim.operator(reflected=False))
            setattr(Tensor, f"__r{dunder}__", prim.operator(reflected=True))
        return prim

    return wrap


def composite(fn: Callable[P, Tensor]) -> Callable[P, Tensor]:
    """Make a composite op (built from primitives) callable as a Tensor method.

    Like every TF.js op, a composite runs in its own scope: its intermediates
    (and tensors made from numbers) are disposed when it returns, so outside a
    tape it adds exactly its result to memory(). A tape that recorded them
    holds them, counted as held by tapes, until its backward pass is done.
    """
    name = fn.__name__.removeprefix("reduce_")

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> Tensor:
        out = arena.run_in_scope(name, lambda: fn(*args, **kwargs), by=N_("the op {0} when it returned").format(name))
        assert isinstance(out, Tensor)
        return out

    DISPATCH[name] = run
    return run
