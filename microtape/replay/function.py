"""``mt.function``: trace a step once, replay it as a flat program on lists.

At the first call with a given signature (the shapes of the
tensor arguments, the values of the Python ones) the function runs eagerly,
inside its own tidy scope, while a tracer (``replay/tracer.py``'s ``Tracer``, an observer)
writes down every primitive it runs: the forward ops, the ops of the VJPs of
every backward pass inside it, variable reads, ``assign``\\ s and optimizer
updates. Each tensor's list is a *slot* of the program (found by the
list's identity, so a variable read is the list the variable held then). The
program is compiled into one Python function of straight-line code over lists
(``program.py`` does that); a later call runs it: no tensor, tape or scope in
between. What the trace cannot see is refused at trace time with a hint:
a value read out of a computed tensor (Python control flow on values), random
tensors, ``custom_grad`` ops.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar, cast, overload

from ..engine import user_line, arena
from ..engine.primitive import OPS, Op
from ..engine.arena import STATE, TensorBase, observing
from ..engine.tensor import Tensor
from ..engine.variable import Variable
from ..errors import UnsupportedOperationError, explain
from .program import Slot, Trace, compile_program

__all__ = ["Function", "Program", "function"]

P = ParamSpec("P")
T = TypeVar("T")

_RANDOM = frozenset({"random_normal", "random_uniform"})


class _Tracer:
    """The observer that records one call of ``fn`` as a ``Trace``."""

    traces = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.program = Trace(name)
        self.slot_of: dict[int, int] = {}  # id(list) -> slot
        self.held: list[object] = []  # every list seen, so that no id is reused while tracing
        self.quiet = 0
        self.saved: dict[int, tuple[Variable, list[float] | None]] = {}
        self.iterations: list[tuple[Any, int]] = []
        self.error: BaseException | None = None

    # -- slots ---------------------------------------------------------------

    def bind(self, data: list[float], slot: int) -> None:
        self.held.append(data)
        self.slot_of[id(data)] = slot

    def slot(self, t: TensorBase) -> int:
        """The slot holding ``t``'s list: a variable read or a constant when first seen."""
        data = t._data
        assert data is not None  # an op's inputs are live
        s = self.slot_of.get(id(data))
        if s is not None:
            return s
        var = self.variable_of(t)
        if var is not None:
            s = self.program.add(Slot("read", t.shape, var=var))
        else:
            s = self.program.add(Slot("const", t.shape, value=data))
        self.bind(data, s)
        return s

    def variable_of(self, t: TensorBase) -> Variable | None:
        if isinstance(t, Variable):
            return t
        if t._op == "variable":  # a tape's record of a variable read: same id as the variable
            for v in arena.VARIABLES.values():
                if v.id == t.id and isinstance(v, Variable):
                    return v
        return None

    def fail(self, err: BaseException) -> BaseException:
        if self.error is None:
            self.error = err
        return err

    # -- the observer's methods ------------------------------------------------

    def on_create(self, tensor: TensorBase) -> None:
        if tensor._op in _RANDOM:
            raise self.fail(_refusal(
                self.name,
                f"it made a random tensor (mt.{tensor._op}, shape {tensor.shape}) while tracing.",
                "A replay would repeat the traced values, so a random draw inside the function would be frozen.",
                "draw it outside and pass it in: step(x, mt.random_normal(shape)); it is then an input of the program.",
            ))

    def on_free(self, tensor: TensorBase) -> None:
        pass

    def on_op(self, op: Op, inputs: tuple[Any, ...], params: dict[str, object], out: Any, seconds: float) -> None:
        if self.quiet:
            return
        if OPS.get(op.name) is not op:
            raise self.fail(_refusal(
                self.name,
                f"it ran the op {op.name!r}, made by custom_grad, while tracing.",
                "A custom op runs Python code of yours that the trace cannot see as primitives.",
                "call this function without mt.function, or write the op with primitives.",
            ))
        ins = [self.slot(x) for x in inputs]
        s = self.program.add(
            Slot("op", out.shape, op=op, params=dict(params), inputs=ins, where=user_line.user_frame_line(),
                 in_shapes=[x.shape for x in inputs])
        )
        self.bind(out._data, s)

    def on_vjp(self, op: Any, inputs: tuple[Any, ...], out: Any, dxs: tuple[Any, ...]) -> None:
        pass

    def on_read(self, tensor: TensorBase) -> None:
        if self.quiet or tensor._data is None:
            return
        s = self.slot_of.get(id(tensor._data))
        if s is not None and self.program.slots[s].kind == "const":
            return  # a constant's value is the same at every call
        if s is None and not isinstance(tensor, Variable) and tensor._op != "variable":
            return  # made before the call and never touched by it: a constant
        raise self.fail(_refusal(
            self.name,
            f"it read the values of Tensor#{tensor.id} (shape {tensor.shape}, made by {tensor._op!r}) "
            "with item(), data_sync(), tolist(), float() or bool() while tracing.",
            "A trace records ops, not Python: a value read out of a tensor can steer Python code "
            "(if loss.item() > 1: ...) that a replay would not run again, so mt.function refuses it, "
            "as tf.function does.",
            "compute with ops instead (mt.where for a branch), or return the tensor and read it after "
            "the call; or call the function without mt.function.",
        ))

    def on_assign(self, variable: TensorBase, kind: str, value: object, data: list[float]) -> None:
        if self.quiet:
            return
        assert isinstance(variable, Variable)
        self.saved.setdefault(variable.id, (variable, variable._data))
        if isinstance(value, TensorBase) and value._data is not None:
            src = self.slot(value)
        else:
            src = self.program.add(Slot("const", variable.shape, value=data))
            self.bind(data, src)
        self.program.add(Slot(kind, variable.shape, var=variable, inputs=[src], where=user_line.user_frame_line()))

    def on_update(
        self, owner: object, apply: Callable[[Any, list[Any], list[list[float]]], None],
        variables: Sequence[TensorBase], grads: Sequence[TensorBase], label: str,
    ) -> None:
        if not self.quiet:
            for v in variables:
                assert isinstance(v, Variable)
                self.saved.setdefault(v.id, (v, v._data))
            self.iterations.append((owner, getattr(owner, "iterations", 0)))
            self.program.add(Slot(
                "update", (), owner=owner, apply=apply, variables=[v for v in variables if isinstance(v, Variable)],
                inputs=[self.slot(g) for g in grads], label=label, where=user_line.user_frame_line(),
            ))

    def pause(self) -> None:
        self.quiet += 1

    def resume(self) -> None:
        self.quiet -= 1

    def undo(self) -> None:
        """A failed trace changes nothing: put back every variable it wrote."""
        for v, data in self.saved.values():
            v._data = data


def _refusal(name: str, what: str, rule: str, hint: str) -> UnsupportedOperationError:
    return UnsupportedOperationError(explain(f"mt.function({name}): {what}", rule, hint), op="function")


class Program:
    """A traced program, as ``step.program`` shows it: ``print`` it to list one primitive a line, like a jaxpr.

    ``%3 = mul %1 %2  # (4,) line 12`` says the value numbered 3 is the
    product of values 1 and 2, has shape (4,) and was made by line 12 of your
    code (a backward pass's ops name the line that asked for the gradient).
    ``read w`` is the variable's value at that point, ``assign w %7`` and
    ``update ...`` the writes, ``return`` the results.

    Examples:
        >>> @mt.function
        ... def f(x):
        ...     return x.exp().sum()
        >>> _ = f(mt.tensor([0.0, 1.0]))
        >>> len(f.program), f.program.name
        (4, 'f')
    """

    def __init__(self, name: str, lines: list[str]) -> None:
        self.name: str = name
        """The traced function's name."""
        self.lines: list[str] = lines
        """The listing: its header, one line per primitive, the return line."""

    def __len__(self) -> int:
        return len(self.lines)

    def __str__(self) -> str:
        return "\n".join(self.lines)

    def __repr__(self) -> str:
        return self.__str__()


class Function(Generic[P, T]):
    """What :func:`function` returns: call it like ``fn``; the first call of each signature traces.

    A call always behaves like ``mt.tidy(fn)``: only the results and the
    variables survive it. Replayed, nothing in between is a tensor, so
    ``mt.memory()`` after a replay shows exactly what the eager step inside
    ``tidy`` would leave: the results and the variables.

    Examples:
        >>> w = mt.variable(mt.tensor([1.0, 2.0]), name="w_fn_doc")
        >>> @mt.function
        ... def step(x):
        ...     return (w * x).sum()
        >>> step(mt.tensor([3.0, 4.0])).item()      # traces, then runs eagerly
        11.0
        >>> step(mt.tensor([1.0, 1.0])).item()      # replays the program
        3.0
        >>> step.traces
        1
    """

    def __init__(self, fn: Callable[P, T]) -> None:
        self.fn: Callable[P, T] = fn
        """The Python function traced."""
        self._programs: dict[tuple[object, ...], Trace] = {}
        self._last: Trace | None = None
        functools.update_wrapper(self, fn)

    @property
    def traces(self) -> int:
        """How many programs are kept: one per signature called so far."""
        return len(self._programs)

    @property
    def program(self) -> Program:
        """The program of the latest call's signature; ``print(step.program)`` lists it.

        Examples:
            >>> @mt.function
            ... def double(x):
            ...     return x * 2.0 + 1.0
            >>> _ = double(mt.tensor([1.0, 2.0]))
            >>> print(double.program)  # doctest: +ELLIPSIS
            program double(%0: (2,)):
              %1 = const 2.0  # ()
              %2 = mul %0 %1  # (2,) line ...
              %3 = const 1.0  # ()
              %4 = add %2 %3  # (2,) line ...
              return %4
        """
        if self._last is None:
            raise UnsupportedOperationError(
                explain(
                    f"{getattr(self.fn, '__name__', 'fn')}.program was read before the first call.",
                    "mt.function traces the function at its first call; there is no program before it.",
                    "call the function once, then print step.program.",
                ),
                op="function",
            )
        return Program(self._last.name, self._last.lines)

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> Function[P, T]: ...

    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> Callable[..., T]: ...

    def __get__(self, obj: object, objtype: type | None = None) -> Function[P, T] | Callable[..., T]:
        """As a method decorator: ``self`` becomes the first argument (each instance its own signature)."""
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)  # type: ignore[arg-type]  # obj is fn's first parameter

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> T:
        st = STATE.get()
        if st.observers or st.tapes or st.backward:
            # profile, leak_check, detect_anomaly or an open tape must see the ops themselves
            return self._eager(args, kwargs)
        key, inputs = _signature(args, kwargs)
        program = self._programs.get(key)
        if program is not None and program.alive():
            self._last = program
            return cast(T, program.run(inputs))  # the structure fn returned
        return self._trace(key, inputs, args, kwargs)

    def _eager(self, args: tuple[object, ...], kwargs: dict[str, object]) -> T:
        return arena.run_in_scope("mt.function", lambda: self.fn(*args, **kwargs))  # type: ignore[arg-type, return-value]

    def _trace(self, key: tuple[object, ...], inputs: list[Tensor], args: tuple[object, ...], kwargs: dict[str, object]) -> T:
        name = getattr(self.fn, "__name__", "fn")
        tracer = _Tracer(name)
        for t in inputs:
            data = t._data
            assert data is not None  # _signature checked it
            if id(data) not in tracer.slot_of:
                tracer.bind(data, tracer.program.add(Slot("input", t.shape)))
            tracer.program.inputs.append(tracer.slot_of[id(data)])
        try:
            with observing(tracer):
                result = arena.run_in_scope("mt.function", lambda: self.fn(*args, **kwargs))  # type: ignore[arg-type]
            if tracer.error is not None:
                raise tracer.error
            tracer.program.output = _outputs(tracer, result)
        except BaseException:
            tracer.undo()
            for opt, n in tracer.iterations:
                setattr(opt, "_iterations", n)
            if "result" in locals():
                for made in arena.tensors_in(result):
                    if not made._kept:
                        arena.dispose(made, "mt.function when its trace failed")
            raise
        compile_program(tracer.program)
        self._programs[key] = tracer.program
        self._last = tracer.program
        return cast(T, result)  # what fn returned


def _outputs(tracer: _Tracer, result: object) -> object:
    """The structure of ``fn``'s result with each tensor replaced by its slot."""
    if isinstance(result, Variable):
        return ("var", weakref.ref(result))
    if isinstance(result, Tensor):
        return ("slot", tracer.slot(result), result._op)
    if isinstance(result, (list, tuple)):
        items = [_outputs(tracer, r) for r in result]
        return ("seq", type(result), items)
    if isinstance(result, dict):
        return ("dict", type(result), [(k, _outputs(tracer, v)) for k, v in result.items()])
    if arena.tensors_in(result):
        raise tracer.fail(_refusal(
            tracer.name,
            f"it returned a {type(result).__name__} holding tensors.",
            "A replay rebuilds tensors in tuples, lists and dicts only.",
            "return a tensor, or a tuple, list or dict of them.",
        ))
    return ("py", result)


def _signature(args: tuple[object, ...], kwargs: dict[str, object]) -> tuple[tuple[object, ...], list[Tensor]]:
    """The cache key (shapes of tensors, values of Python scalars, identity of other objects) and the input tensors."""
    inputs: list[Tensor] = []
    key = [_key_of(a, inputs) for a in args]
    key += [(k, _key_of(kwargs[k], inputs)) for k in sorted(kwargs)]
    # which inputs share one list (step(x, x)): the program reads each shared list once
    first: dict[int, int] = {}
    key.append(tuple(first.setdefault(id(t._data), i) for i, t in enumerate(inputs)))
    return tuple(key), inputs


def _key_of(a: object, inputs: list[Tensor]) -> object:
    """One argument's part of the key (a module function: a nested one would make a reference cycle per call)."""
    if isinstance(a, Variable):
        return ("variable", a.id)
    if isinstance(a, Tensor):
        if a._data is None or a._disposed is not None:
            arena.check_usable(a)
        inputs.append(a)
        return ("tensor", a.shape)
    if a is None or isinstance(a, (bool, int, float, str)):
        return (type(a).__name__, a)
    if isinstance(a, (list, tuple)):
        return (type(a).__name__, tuple(_key_of(x, inputs) for x in a))
    if isinstance(a, dict):
        return ("dict", tuple((k, _key_of(v, inputs)) for k, v in a.items()))
    return ("object", id(a))


def function(fn: Callable[P, T]) -> Function[P, T]:
    """Trace ``fn`` at its first call and replay it as a flat program (``tf.function``).

    ``fn`` takes tensors (and Python values) and may run a forward pass,
    ``variable_grads`` or a ``GradientTape`` and an optimizer's
    ``apply_gradients`` or ``assign``. The first call with a new signature
    (the shapes of the tensor arguments, the values of the Python ones) runs
    it eagerly while recording every primitive it runs, forward ops, the
    VJPs' ops and the updates, as one program; later calls with that
    signature run the program on flat lists: the same values, the same
    variables and optimizer slots, bit for bit, several times faster.

    **Memory**: a call behaves like ``mt.tidy(fn)``. Replayed, nothing in
    between is a tensor, so ``mt.memory()`` shows only the results and the
    variables, the counts of the eager step inside ``tidy``.

    **What a trace cannot see** is refused at trace time with
    :class:`~microtape.UnsupportedOperationError` (nothing changes then):
    reading a computed value (``loss.item()``, ``data_sync()``, ``if t:``),
    a random tensor made inside, a ``custom_grad`` op. Python code runs only
    at the trace (``print`` prints once). A new shape or Python value
    traces again; each signature keeps its program. While an observer is
    active (``profile``, ``leak_check``, ``detect_anomaly``) or a tape is
    open, the call runs eagerly (inside its tidy scope), so that they see
    every op.

    Examples:
        >>> w = mt.variable(mt.tensor([0.0, 0.0]), name="w_function")
        >>> opt = mt.train.sgd(0.05)
        >>> @mt.function
        ... def train_step(x, y):
        ...     loss, grads = mt.variable_grads(lambda: ((x @ w - y) ** 2).mean())
        ...     opt.apply_gradients(grads)
        ...     return loss
        >>> x, y = mt.tensor([[1.0, 2.0], [3.0, 4.0]]), mt.tensor([5.0, 11.0])
        >>> for _ in range(1000):
        ...     loss = train_step(x, y)
        >>> [round(v, 3) for v in w.data_sync()], train_step.traces
        ([1.0, 2.0], 1)
    """
    return Function(fn)
