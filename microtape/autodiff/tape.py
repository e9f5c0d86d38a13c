"""Reverse-mode differentiation by replaying a list of recorded ops.

Read after ``ops.py``. While open, a tape appends one record per primitive
call whose inputs it tracks: ``(op, inputs, params, out)``. Execution order is
already a topological order, so ``gradient()`` is one loop over the records
in reverse: no recursion, so a chain of 100,000 ops is fine. Records point
from outputs to inputs only and tensors never point at records, so there are
no reference cycles for Python's garbage collector to chase.

While a tape runs a backward pass it stops recording on itself, but any
*other* open tape records the VJPs' ops. That is all higher-order gradients
need: an outer tape differentiates what the inner backward pass computed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeAlias, TypeVar, overload

from ..core import runtime
from ..core.registry import Op
from ..core.runtime import STATE, Scope, TensorBase, new
from ..core.types import Shape
from ..ops.composite import stack
from ..core.creation import fill
from ..errors import InvalidArgumentError, TapeError, explain
from .arguments import check_tensor, output_gradients_for, targets_of, unconnected_mode, wrong_gradient_shape
from .tape_view import dot_graph, summary_table
from ..core.tensor import Tensor
from ..core.variable import Variable

__all__ = ["GradientTape", "Operation"]

Record: TypeAlias = "tuple[Op, tuple[Tensor, ...], dict[str, object], Tensor, tuple[bool, ...]]"
"""(op, inputs, params, out, needs): ``needs[i]`` says whether input i was tracked
when the op ran, so whether the backward pass wants its gradient."""
K = TypeVar("K")

_NEEDS: dict[tuple[bool, ...], tuple[bool, ...]] = {}
"""One shared tuple per pattern of needs flags (a million records share a handful)."""

_USED_TWICE = (
    "A non-persistent GradientTape can only be used to compute one set of gradients "
    "(or jacobians)."
)


@dataclass(frozen=True, slots=True)
class Operation:
    """One recorded op, as ``tape.operations`` shows it.

    Examples:
        >>> x = mt.tensor([1.0, 2.0])
        >>> with mt.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = (x * x).sum()
        >>> [op.name for op in tape.operations]
        ['mul', 'sum']
        >>> print(tape.operations[0])
        #0 mul((2,), (2,)) -> (2,)
    """

    index: int
    name: str
    input_shapes: tuple[Shape, ...]
    output_shape: Shape
    input_ids: tuple[int, ...]
    output_id: int

    def __str__(self) -> str:
        shapes = ", ".join(str(s) for s in self.input_shapes)
        return f"#{self.index} {self.name}({shapes}) -> {self.output_shape}"


class GradientTape:
    """Record ops while open, then compute gradients by walking them backwards.

    The explicit tape of TensorFlow for Python (``tf.GradientTape``);
    TensorFlow.js has none and hides one inside ``tf.grad``. Trainable
    variables read inside the block are watched automatically; plain tensors
    must be watched with :meth:`watch`.

    A record keeps a variable's values as they were when the op read them,
    as TensorFlow does, so an ``assign`` between the forward pass and
    ``gradient()`` does not change the gradient. That costs no copy:
    ``assign`` gives the variable a new list and the record keeps the old
    one, through one small object per variable and value shared by every
    op that read it. ``memory()`` counts the variable once (TF.js's count),
    not the old values a persistent tape still holds after an ``assign``.

    Args:
        persistent: Allow several ``gradient()``/``jacobian()`` calls. Call
            :meth:`release` (or drop the tape) when done, so the tensors it
            holds can be freed.
        watch_accessed_variables: Watch trainable variables automatically.

    Examples:
        >>> x = mt.scalar(3.0)
        >>> with mt.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.gradient(y, x)
        Tensor(6.0, shape=())
        >>> w, b = mt.variable([1.0, 2.0]), mt.variable(2.0)
        >>> with mt.GradientTape(persistent=True) as tape:
        ...     loss = (w * b).sum()
        >>> _ = w.assign(mt.tensor([10.0, 20.0]))   # after the forward pass
        >>> tape.gradient(loss, b)                  # w as recorded: 1 + 2
        Tensor(3.0, shape=())
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        for flag, value in (("persistent", persistent), ("watch_accessed_variables", watch_accessed_variables)):
            if not isinstance(value, bool):
                raise InvalidArgumentError(
                    explain(
                        f"GradientTape({flag}={value!r}): expected True or False.",
                        f"{flag} is a flag.",
                        f"write GradientTape({flag}=True).",
                    ),
                    value=value,
                )
        self._persistent = persistent
        self._watch_vars = watch_accessed_variables
        self._records: list[Record] = []
        self._tracked: set[int] = set()
        self._watched: dict[int, Tensor] = {}
        self._variables: dict[int, Variable] = {}
        """The variables whose values the records hold, by id (a record holds the values, not the variable)."""
        self._used = False
        self._last: tuple[list[Tensor], list[list[float] | None]] | None = None
        """The targets and output gradients (as values) of the last backward pass:
        summary() and to_dot() replay it to measure gradient norms."""

    # -- recording ---------------------------------------------------------

    @property
    def persistent(self) -> bool:
        """Whether ``gradient()`` may be called more than once."""
        return self._persistent

    def __enter__(self) -> GradientTape:
        st = STATE.get()
        if self in st.tapes:
            raise TapeError(
                explain(
                    "This GradientTape is already open.",
                    "A tape can be entered once at a time.",
                    "make a second GradientTape() for a nested tape.",
                )
            )
        STATE.set(st.but(tapes=st.tapes + (self,)))
        return self

    def __exit__(self, *exc: object) -> None:
        st = STATE.get()
        STATE.set(st.but(tapes=tuple([t for t in st.tapes if t is not self])))

    def _record(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor) -> None:
        if self._used:
            return
        tracked = self._tracked
        # needs[i]: input i is tracked (a trainable variable read here is tracked from now on)
        needs: tuple[bool, ...]
        if len(inputs) == 2:  # most ops; spelled out, as a loop costs more than the check
            a, b = inputs
            needs = (
                a.id in tracked or a._trainable and self._watch_read(a),
                b.id in tracked or b._trainable and self._watch_read(b),
            )
            kept = a._kept or b._kept
        else:
            needs = tuple([x.id in tracked or x._trainable and self._watch_read(x) for x in inputs])
            kept = True in [x._kept for x in inputs]
        if True not in needs:
            return
        if kept:  # a variable (always kept) among the inputs: record what it holds now (TensorFlow's rule)
            inputs = tuple([self._read(v) if isinstance(v, Variable) else v for v in inputs])
        tracked.add(out.id)
        self._records.append((op, inputs, params, out, _NEEDS.setdefault(needs, needs)))
        for x in inputs:
            x._holds += 1
        out._holds += 1

    def _read(self, variable: Variable) -> Tensor:
        """The variable's values as the record keeps them; the tape remembers whose they are (for ``to_dot``)."""
        self._variables[variable.id] = variable
        return variable._recorded()

    def _watch_read(self, variable: Tensor) -> bool:
        """A trainable variable an op reads: watch it if this tape watches what it accesses."""
        if not self._watch_vars:
            return False
        self._tracked.add(variable.id)
        self._watched[variable.id] = variable
        return True

    def watch(self, tensor: Tensor | Sequence[Tensor]) -> None:
        """Track ``tensor`` (or each tensor of a list) so gradients can flow to it.

        Only ops that run after ``watch`` are recorded, as in TensorFlow.

        Examples:
            >>> c = mt.scalar(2.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(c)
            ...     y = c ** 3
            >>> tape.gradient(y, c)
            Tensor(12.0, shape=())
        """
        items: list[object] = [tensor] if isinstance(tensor, Tensor) or not isinstance(tensor, (list, tuple)) else list(tensor)
        for t in items:
            if not isinstance(t, Tensor):
                raise InvalidArgumentError(
                    explain(
                        f"watch() needs tensors, got {type(t).__name__}: {t!r}.",
                        "A tape tracks tensors made with mt.tensor, mt.variable and ops.",
                        "convert first: x = mt.tensor(values); tape.watch(x).",
                    ),
                    value=t,
                )
            if t._data is None:
                raise runtime.disposed_error(t)
        for t in items:
            assert isinstance(t, Tensor)  # checked above
            self._tracked.add(t.id)
            self._watched[t.id] = t

    def watched_variables(self) -> list[Variable]:
        """The variables this tape watches, explicitly or by access, in order.

        Examples:
            >>> w = mt.variable(mt.scalar(1.0), name="w_watched")
            >>> with mt.GradientTape() as tape:
            ...     y = w * 2.0
            >>> [v.name for v in tape.watched_variables()]
            ['w_watched']
        """
        return [t for t in self._watched.values() if isinstance(t, Variable)]

    @contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Pause recording on this tape inside a ``with`` block.

        Examples:
            >>> x = mt.scalar(2.0)
            >>> with mt.GradientTape(persistent=True) as tape:
            ...     tape.watch(x)
            ...     with tape.stop_recording():
            ...         ignored = x * 100.0
            ...     y = x * 3.0
            >>> tape.gradient(ignored, x) is None, tape.gradient(y, x)
            (True, Tensor(3.0, shape=()))
        """
        st = STATE.get()
        if self not in st.tapes:
            raise TapeError(
                explain(
                    "stop_recording() was called on a tape that is not recording.",
                    "It pauses a tape inside that tape's `with` block.",
                    "use it as: with tape: ... with tape.stop_recording(): ...",
                )
            )
        STATE.set(st.but(tapes=tuple([t for t in st.tapes if t is not self])))
        try:
            yield
        finally:
            now = STATE.get()
            STATE.set(now.but(tapes=now.tapes + (self,)))

    def reset(self) -> None:
        """Forget everything recorded and watched, keeping the tape open.

        Examples:
            >>> x = mt.scalar(1.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(x)
            ...     _ = x * 2.0
            ...     tape.reset()
            >>> tape.operations
            []
        """
        self.release()
        self._watched.clear()
        self._tracked.clear()
        self._used = False

    def release(self) -> None:
        """Let go of every tensor this tape holds for its backward pass.

        A persistent tape holds its records until released (or garbage
        collected); ``mt.memory().num_tensors_held_by_tapes`` shows them.

        Examples:
            >>> x = mt.scalar(1.0)
            >>> with mt.GradientTape(persistent=True) as tape:
            ...     tape.watch(x)
            ...     y = x * 2.0
            >>> tape.release()
            >>> tape.operations
            []
        """
        records, self._records = self._records, []
        self._last = None
        self._variables.clear()
        unused: list[TensorBase] = []
        for _, inputs, _, out, _ in records:  # this tape no longer needs the record's tensors
            for t in inputs:
                t._holds -= 1
                if t._holds == 0 and t._disposed is not None:
                    unused.append(t)
            out._holds -= 1
            if out._holds == 0 and out._disposed is not None:
                unused.append(out)
        runtime.free_all(unused)

    def __del__(self) -> None:
        try:
            if self._records:
                self.release()
        except Exception:  # noqa: BLE001 - never raise from a finaliser (interpreter shutdown)
            pass

    # -- gradients -----------------------------------------------------------

    @overload
    def gradient(
        self,
        target: Tensor | Sequence[Tensor],
        sources: Tensor,
        output_gradients: Tensor | Sequence[Tensor] | None = None,
        unconnected_gradients: str = "none",
    ) -> Tensor | None: ...

    @overload
    def gradient(
        self,
        target: Tensor | Sequence[Tensor],
        sources: Sequence[Tensor],
        output_gradients: Tensor | Sequence[Tensor] | None = None,
        unconnected_gradients: str = "none",
    ) -> list[Tensor | None]: ...

    @overload
    def gradient(
        self,
        target: Tensor | Sequence[Tensor],
        sources: Mapping[K, Tensor],
        output_gradients: Tensor | Sequence[Tensor] | None = None,
        unconnected_gradients: str = "none",
    ) -> dict[K, Tensor | None]: ...

    def gradient(
        self,
        target: Tensor | Sequence[Tensor],
        sources: Tensor | Sequence[Tensor] | Mapping[K, Tensor],
        output_gradients: Tensor | Sequence[Tensor] | None = None,
        unconnected_gradients: str = "none",
    ) -> Tensor | None | list[Tensor | None] | dict[K, Tensor | None]:
        """Gradient of ``target`` with respect to ``sources``.

        A non-scalar target is summed first (its ``output_gradients`` default
        to ones), as in TensorFlow. ``sources`` may be a tensor, a list (or
        tuple) or a dict, and the result has the same structure (a list for
        any sequence). A source that does not
        affect the target gets ``None``, or zeros with
        ``unconnected_gradients="zero"``.

        Raises:
            TapeError: a non-persistent tape is asked a second time.
            ShapeError: ``output_gradients`` does not match the target's shape.

        Examples:
            >>> x, y = mt.scalar(2.0), mt.scalar(3.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch([x, y])
            ...     z = x * x + y * y
            >>> tape.gradient(z, {"x": x, "y": y})
            {'x': Tensor(4.0, shape=()), 'y': Tensor(6.0, shape=())}
        """
        self._check_usable()
        zero = unconnected_mode(unconnected_gradients)
        targets = targets_of(target)
        douts = output_gradients_for(output_gradients, targets)
        if isinstance(sources, Tensor):
            flat = [sources]
        elif isinstance(sources, Mapping):
            keys = list(sources.keys())
            flat = list(sources.values())
        elif isinstance(sources, (list, tuple)):
            flat = list(sources)
        else:
            raise InvalidArgumentError(
                explain(
                    f"gradient(): sources must be a tensor, a list or a dict of tensors, got {type(sources).__name__}.",
                    "The result has the same structure as sources.",
                    "pass tape.gradient(loss, [w, b]).",
                ),
                value=sources,
            )
        for s in flat:
            check_tensor(s, "sources")
        result = self._backward(targets, douts, flat, zero)
        self._finish()
        if isinstance(sources, Tensor):
            return result[0]
        if isinstance(sources, Mapping):
            return dict(zip(keys, result))
        return list(result)

    def jacobian(self, target: Tensor, source: Tensor, unconnected_gradients: str = "none") -> Tensor | None:
        """Full Jacobian: ``result[i..., j...] = ∂target[i...] / ∂source[j...]``.

        One backward pass per entry of ``target``; the result has shape
        ``target.shape + source.shape``.

        Examples:
            >>> x = mt.tensor([1.0, 2.0])
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = x * x
            >>> tape.jacobian(y, x)
            Tensor([[2.0, 0.0], [0.0, 4.0]], shape=(2, 2))
        """
        self._check_usable()
        zero = unconnected_mode(unconnected_gradients)
        given: object = target  # checked at run time: callers may pass a list
        if isinstance(given, (list, tuple)):
            raise InvalidArgumentError(
                explain(
                    f"jacobian() takes one target tensor, got a {type(given).__name__} of {len(given)}.",
                    "The Jacobian of one target has shape target.shape + source.shape; "
                    "gradient() is the one that sums several targets.",
                    "make the tape persistent and take one per target: [tape.jacobian(y, x) for y in (y1, y2)].",
                ),
                value=given,
            )
        (target,) = targets_of(target)
        check_tensor(source, "source")

        def rows() -> Tensor | None:
            out: list[Tensor] = []
            for i in range(target.size):
                onehot = [0.0] * target.size
                onehot[i] = 1.0
                (g,) = self._backward([target], [new(Tensor, onehot, target.shape, "one_hot")], [source], True)
                assert g is not None  # zero=True fills unconnected gradients
                out.append(g)
            if not zero and not self._reaches(target, [source])[0]:
                return None
            if not out:
                return fill(target.shape + source.shape, 0.0)
            return stack(out).reshape(target.shape + source.shape)

        result = runtime.run_in_scope("jacobian()", rows)
        self._finish()
        assert result is None or isinstance(result, Tensor)
        return result

    def _check_usable(self) -> None:
        if self._used:
            raise TapeError(
                explain(
                    _USED_TWICE,
                    "Its records were freed after the first gradient() call.",
                    "create it with GradientTape(persistent=True) to call gradient() or jacobian() again.",
                )
            )

    def _finish(self) -> None:
        if not self._persistent:
            self._used = True
            self.release()

    def _reaches(self, target: Tensor, sources: Sequence[Tensor]) -> list[bool]:
        """For each source, whether ``target`` depends on it through recorded ops."""
        needed = {target.id}
        for _, inputs, _, out, _ in reversed(self._records):
            if out.id in needed:
                needed.update(x.id for x in inputs)
        return [s.id in needed for s in sources]

    def _backward(
        self, targets: list[Tensor], douts: list[Tensor | None], sources: list[Tensor], zero: bool
    ) -> list[Tensor | None]:
        """The backward pass: one reversed loop over the records, in its own scope."""
        self._last = (targets, [None if d is None else d.data_sync() for d in douts])
        first_id = runtime.next_id()  # ids only grow: a result older than this is not fresh
        st = STATE.get()
        scope = Scope("gradient()")
        others = tuple([t for t in st.tapes if t is not self])
        token = STATE.set(
            st.but(
                tapes=others,
                scopes=st.scopes + (scope,),
                backward=st.backward + 1,
                light=not (others or st.observers),
            )
        )
        try:
            result = self._walk(targets, douts, sources, zero, st.observers, None)
        except BaseException:
            STATE.reset(token)
            runtime.close_scope(scope, (), st.scopes)
            raise
        STATE.reset(token)
        survivors = [g for g in result if g is not None]
        runtime.close_scope(scope, survivors, st.scopes)
        for g in survivors:
            runtime.adopt(g)
        # A gradient that passed straight through (say, the caller's dy through an
        # add) is the caller's tensor: hand back a copy, so gradients are always fresh.
        return [g.clone() if g is not None and g.id < first_id else g for g in result]

    def _grad_norms(self) -> dict[int, float]:
        """Norm of the gradient that reached each recorded output in the last backward
        pass, by the output's id. Only a report needs them, so they are measured
        here, by replaying that pass quietly (no tape records it, no observer sees
        it, its tensors stay outside the arena), not on every pass."""
        if self._last is None or not self._records:
            return {}
        targets, values = self._last
        if any(t._data is None for t in targets):
            return {}
        norms: dict[int, float] = {}
        token = STATE.set(STATE.get().but(tapes=(), observers=(), backward=STATE.get().backward + 1, light=True))
        try:
            douts: list[Tensor | None] = [None if v is None else new(Tensor, v, t.shape, "tensor") for t, v in zip(targets, values)]
            self._walk(targets, douts, [], False, (), norms)
        finally:
            STATE.reset(token)
        return norms

    def _walk(
        self,
        targets: list[Tensor],
        douts: list[Tensor | None],
        sources: list[Tensor],
        zero: bool,
        observers: tuple[runtime.Observer, ...],
        norms: dict[int, float] | None,
    ) -> list[Tensor | None]:
        grads: dict[int, Tensor] = {}
        for t, d in zip(targets, douts):
            d = fill(t.shape, 1.0) if d is None else d
            prev = grads.get(t.id)
            grads[t.id] = d if prev is None else prev + d
        keep = {s.id for s in sources}
        pop = grads.pop
        for op, inputs, params, out, needs in reversed(self._records):
            dout = pop(out.id, None)  # each output's gradient is complete once its record is reached
            if dout is None:
                continue
            if out.id in keep:
                grads[out.id] = dout  # a source that is also an op's output: its gradient is a result
            if norms is not None:
                data = dout._data
                norms[out.id] = math.hypot(*data) if data is not None else math.nan
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
        result: list[Tensor | None] = [grads.get(s.id) for s in sources]
        if zero:
            result = [fill(s.shape, 0.0) if g is None else g for s, g in zip(sources, result)]
        return result

    # -- looking at the tape ---------------------------------------------------

    @property
    def operations(self) -> list[Operation]:
        """The recorded ops in order, each with its name, input shapes, output shape and ids.

        Examples:
            >>> w = mt.variable(mt.tensor([1.0, 2.0]), name="w_ops")
            >>> with mt.GradientTape() as tape:
            ...     loss = (w * 3.0).sum()
            >>> for op in tape.operations:
            ...     print(op)
            #0 mul((2,), ()) -> (2,)
            #1 sum((2,)) -> ()
        """
        return [
            Operation(i, op.name, tuple(x.shape for x in inputs), out.shape, tuple(x.id for x in inputs), out.id)
            for i, (op, inputs, _, out, _) in enumerate(self._records)
        ]

    def summary(self) -> str:
        """A table of the recorded ops with value ranges and, after ``gradient()``,
        the norm of the gradient that reached each op's output.

        Read it bottom-up to follow the gradient from the loss back to the
        inputs; a norm that shrinks towards 0 shows where gradients vanish.

        Examples:
            >>> x = mt.tensor([1.0, 2.0])
            >>> with mt.GradientTape(persistent=True) as tape:
            ...     tape.watch(x)
            ...     y = (x * x).sum()
            >>> _ = tape.gradient(y, x)
            >>> print(tape.summary())
            #   op    output shape   value range   |grad out|
            0   mul   (2,)           [1.0, 4.0]    1.414
            1   sum   ()             [5.0, 5.0]    1.0
        """
        return summary_table(self._records, self._grad_norms())

    def to_dot(self, grad_norms: bool = True, title: str = "tape", rankdir: str = "LR") -> str:
        """Graphviz text of the recorded graph: tensors as boxes, ops as ellipses.

        After ``gradient()``, edges into an op's output carry the gradient
        norm that flowed back through them (``grad_norms=False`` hides them).
        ``rankdir`` is Graphviz's layout direction: ``"LR"`` (left to right,
        the default) or ``"TB"`` (top to bottom, better for long chains).
        Render with ``dot -Tsvg``, or in the book with ``.. graphviz::``.

        Examples:
            >>> x = mt.scalar(2.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = mt.exp(x)
            >>> print(tape.to_dot().splitlines()[0])
            digraph tape {
        """
        return dot_graph(
            self._records, self._watched, self._variables, self._grad_norms() if grad_norms else {}, title, rankdir
        )

    def __repr__(self) -> str:
        state = "used" if self._used else f"{len(self._records)} ops recorded"
        return f"GradientTape(persistent={self._persistent}, {state}, watching {len(self._watched)} tensors)"
