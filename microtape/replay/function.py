"""``mt.function``: trace a step once, replay it as a flat program on lists, never with a stale value.

At the first call with a given *key* (``guards.py``: the structure of the
arguments, the shapes of their tensors, the values of their Python parts) the
function runs eagerly, inside its own tidy scope, while a tracer
(``replay/tracer.py``'s ``Tracer``, an observer) writes down every primitive
it runs: the forward ops, the ops of the VJPs of every backward pass inside
it, variable reads, ``assign``\\ s, optimizer updates, copies, prints and
checks. Each tensor is a *slot* of the program, found by the tensor itself
(a variable's slot is its value at that point: a read before an assign and
one after are two slots). The program is compiled into one Python function of
straight-line code over lists (``program.py`` does that); a later call with
that key, whose guards all hold (``guards.py``: the closure variables, globals
and attributes the step read, the ``trainable`` flag of every variable it
met, the tensors it captured), runs it: no tensor, tape or scope in between.
A guard that fails traces again (``retraces`` counts it; past
``RETRACE_WARNING`` a ``RetraceWarning`` says why). What a trace cannot see
is refused at trace time with a hint, and a refused or failed trace changes
nothing.
"""

from __future__ import annotations

import collections
import functools
import operator
import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Final, Generic, ParamSpec, TypeVar, cast, overload

from ..engine import arena, user_line
from ..engine.arena import STATE, TensorBase, observing
from ..engine.primitive import OPS, Op
from ..engine.tensor import Tensor
from ..engine.variable import VARIABLES, Variable
from ..errors import N_, UnsupportedOperationError, explain
from ..language import tr
from ..autodiff.results import GradMap
from . import guards as guarding
from .guards import Guard, compile_guards, key_of_argument
from .program import Made, Slot, Trace, compile_program

__all__ = ["RETRACE_WARNING", "Function", "Program", "RetraceWarning", "function"]

P = ParamSpec("P")
T = TypeVar("T")

_RANDOM = frozenset({"random_normal", "random_uniform"})

RETRACE_WARNING: Final = 5
"""After this many traces beyond the first, a function warns (``tf.function`` warns after 5 too)."""
CACHE_LIMIT: Final = 8
"""Programs kept per key (one per set of guard values); the oldest goes first (TorchDynamo keeps 8)."""


class RetraceWarning(RuntimeWarning):
    """Warned when a function of :func:`function` has traced again and again (``tf.function`` warns too).

    Its arguments or a value it reads keep changing, so most calls pay for a
    trace; the message lists the latest reasons (see ``step.retrace_reasons``).

    Examples:
        >>> import warnings
        >>> state = {"k": 0.0}
        >>> step = mt.function(lambda x: x * state["k"])
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always", mt.RetraceWarning)
        ...     for k in range(7):
        ...         state["k"] = float(k)
        ...         _ = step(mt.tensor([1.0]))
        >>> [w.category.__name__ for w in caught]
        ['RetraceWarning']
    """


class _Tracer:
    """The observer that records one call of ``fn`` as a ``Trace``."""

    traces = True

    def __init__(self, name: str, start: int) -> None:
        self.name = name
        self.start = start  # tensors with a larger id were made during this call
        self.program = Trace(name)
        self.slot_of: dict[object, int] = {}  # id(tensor), or ("v", variable id, id(list)) for a variable's value
        self.held: list[object] = []  # every tensor and list keyed, so that no id is reused while tracing
        self.quiet = 0
        self.saved: dict[int, tuple[Variable, list[float] | None]] = {}
        self.optimizers: dict[int, tuple[Any, int, dict[str, tuple[Any, dict[str, list[float] | None]]]]] = {}
        self.error: BaseException | None = None
        self.made: list[TensorBase] = []
        self.inputs: dict[int, int] = {}  # id(tensor) -> its first position among the inputs
        self.input_state: list[tuple[TensorBase, list[float] | None, bool]] = []
        self.met: dict[int, tuple[weakref.ref[Variable], bool, str]] = {}  # variables: their trainable flag when met
        self.captured: dict[int, TensorBase] = {}
        self.settings: dict[tuple[int, str], Guard] = {}  # optimizer settings the traced code read
        self._by_id: dict[int, Variable] = {}

    # -- slots ---------------------------------------------------------------

    def key(self, t: TensorBase) -> object:
        if isinstance(t, Variable) or t._op == "variable":
            self.held.append(t._data)
            return ("v", t.id, id(t._data))
        self.held.append(t)
        return id(t)

    def bind(self, t: TensorBase, slot: int) -> None:
        self.slot_of[self.key(t)] = slot

    def slot(self, t: TensorBase) -> int:
        """The slot holding ``t``: a variable read, or a constant, when first seen."""
        k = self.key(t)
        s = self.slot_of.get(k)
        if s is not None:
            return s
        var = self.variable_of(t)
        if var is not None:
            s = self.program.add(Slot("read", t.shape, var=var))
            self.meet(var)
        else:
            if t.id < self.start:  # made before the call and not passed in: captured
                self.captured[id(t)] = t
            assert t._data is not None  # an op's inputs are live
            s = self.program.add(Slot("const", t.shape, value=t._data))
        self.slot_of[k] = s
        return s

    def variable_of(self, t: TensorBase) -> Variable | None:
        if isinstance(t, Variable):
            return t
        if t._op == "variable":  # a tape's record of a variable read: same id as the variable
            var = self._by_id.get(t.id)
            if var is None:
                self._by_id = {v.id: v for v in VARIABLES.values()}
                var = self._by_id.get(t.id)
            return var
        return None

    def meet(self, var: Variable) -> None:
        if var.id not in self.met:
            self.met[var.id] = (weakref.ref(var), var._trainable, var.name)

    def fail(self, err: BaseException) -> BaseException:
        if self.error is None:
            self.error = err
        return err

    # -- the observer's methods ------------------------------------------------

    def on_create(self, tensor: TensorBase) -> None:
        self.made.append(tensor)
        if tensor._op in _RANDOM and not self.quiet:
            raise self.fail(_refusal(
                self.name,
                N_('it made a random tensor (mt.{0}, shape {1}) while tracing.').format(tensor._op, tensor.shape),
                N_('A replay would repeat the traced values, so a random draw inside the function would be frozen.'),
                N_('draw it outside and pass it in: step(x, mt.random_normal(shape)); it is then an input of the program.'),
            ))

    def on_free(self, tensor: TensorBase) -> None:
        pass

    def on_op(self, op: Op, inputs: tuple[Any, ...], params: dict[str, object], out: Any, seconds: float) -> None:
        if self.quiet:
            return
        if OPS.get(op.name) is not op:
            raise self.fail(_refusal(
                self.name,
                N_('it ran the op {0}, made by custom_grad, while tracing.').format(repr(op.name)),
                N_('A custom op runs Python code of yours that the trace cannot see as primitives.'),
                N_('call this function without mt.function, or write the op with primitives.'),
            ))
        ins = [self.slot(x) for x in inputs]
        s = self.program.add(
            Slot("op", out.shape, op=op, params=dict(params), inputs=ins, where=user_line.user_frame_line(),
                 in_shapes=[x.shape for x in inputs])
        )
        self.bind(out, s)

    def on_vjp(self, op: Any, inputs: tuple[Any, ...], out: Any, dxs: tuple[Any, ...]) -> None:
        pass

    def on_copy(self, source: TensorBase, out: TensorBase) -> None:
        """``mt.tensor(t)``: the copy is an op of the program (the identity, ``clone``), not a constant."""
        if self.quiet or source._data is None:
            return
        s = self.program.add(Slot("op", out.shape, op=OPS["clone"], inputs=[self.slot(source)],
                                  where=user_line.user_frame_line(), in_shapes=[source.shape]))
        self.bind(out, s)

    def on_effect(self, label: str, tensors: Sequence[TensorBase], run: Callable[..., None]) -> None:
        """``mt.print``, ``check_numerics``: run again at every replay, in their place, on the program's lists."""
        if self.quiet:
            return
        ins = [self.slot(t) for t in tensors]
        self.program.add(Slot("effect", (), inputs=ins, label=label, apply=run, where=user_line.user_frame_line()))

    def on_read(self, tensor: TensorBase, who: str | None = None, hint: str | None = None) -> None:
        if self.quiet or tensor._data is None:
            return
        s = self.slot_of.get(("v", tensor.id, id(tensor._data)) if isinstance(tensor, Variable) or tensor._op == "variable"
                             else id(tensor))
        if s is not None and self.program.slots[s].kind == "const":
            return  # a constant's value is the same at every call
        if s is None and self.variable_of(tensor) is None:
            if tensor.id < self.start:
                self.captured[id(tensor)] = tensor  # made before the call, not passed in: a constant
            return  # (or made inside from Python numbers: a constant too)
        how = who or N_("item(), data_sync(), tolist(), float() or bool()")
        raise self.fail(_refusal(
            self.name,
            N_('it read the values of Tensor#{0} (shape {1}, made by {2}) with {3} while tracing.').format(tensor.id, tensor.shape, repr(tensor._op), how),
            N_('A trace records ops, not Python: a value read out of a tensor can steer Python code (if loss.item() > 1: ...) that a replay would not run again, so mt.function refuses it, as tf.function does.'),
            hint or N_("compute with ops instead (mt.where for a branch), or return the tensor and read it after "
                       "the call; or call the function without mt.function."),
        ))

    def on_assign(self, variable: TensorBase, kind: str, value: object, data: list[float]) -> None:
        if self.quiet:
            return
        assert isinstance(variable, Variable)
        self.saved.setdefault(variable.id, (variable, variable._data))
        self.meet(variable)
        if isinstance(value, TensorBase) and value._data is not None:
            src = self.slot(value)
        else:
            src = self.program.add(Slot("const", variable.shape, value=data))
        self.program.add(Slot(kind, variable.shape, var=variable, inputs=[src], where=user_line.user_frame_line()))

    def on_update(
        self, owner: object, apply: Callable[[Any, list[Any], list[list[float]]], None],
        variables: Sequence[TensorBase], grads: Sequence[TensorBase], label: str,
    ) -> None:
        if self.quiet:
            return
        for v in variables:
            assert isinstance(v, Variable)
            self.saved.setdefault(v.id, (v, v._data))
            self.meet(v)
        if id(owner) not in self.optimizers:  # its state before this call, to put back if the trace fails
            slot_sets = getattr(owner, "_slots", {})
            state = {n: (ss, {k: sv._data for k, sv in ss.variables.items()}) for n, ss in slot_sets.items()}
            self.optimizers[id(owner)] = (owner, getattr(owner, "_iterations", 0), state)
        self.program.add(Slot(
            "update", (), owner=owner, apply=apply, variables=[v for v in variables if isinstance(v, Variable)],
            inputs=[self.slot(g) for g in grads], label=label, where=user_line.user_frame_line(),
        ))

    def on_setting(self, owner: object, name: str) -> None:
        """The traced code read an optimizer's setting: a guard on it (an update reads its own at each replay)."""
        if self.quiet or (id(owner), name) in self.settings:
            return
        expr = "{s}.get_config()" if name == "get_config" else "{s}." + name
        self.pause()  # (reading it for the guard is not the traced code's read)
        try:
            reader: Any = owner  # an optimizer
            value = reader.get_config() if name == "get_config" else getattr(reader, name)
        finally:
            self.resume()
        if name == "iterations" and id(owner) in self.optimizers:
            value = self.optimizers[id(owner)][1]  # the count when the call began: an update of this call added to it
        self.settings[(id(owner), name)] = guarding.guard_for(
            N_("the setting {0} of the optimizer {1}").format(repr(name), type(owner).__name__), expr, owner, value, guarding.Found())

    def pause(self) -> None:
        self.quiet += 1

    def resume(self) -> None:
        self.quiet -= 1

    # -- after the call -------------------------------------------------------

    def slot_variables(self) -> set[int]:
        """Ids of the optimizers' slot variables (an optimizer makes them at its first update, at a replay too)."""
        return {id(sv) for owner, _, _ in self.optimizers.values() for ss in getattr(owner, "_slots", {}).values()
                for sv in ss.variables.values()}

    def created(self) -> list[Variable]:
        """The variables this call made (an optimizer's slots aside)."""
        slots = self.slot_variables()
        return [v for v in list(VARIABLES.values()) if v.id >= self.start and id(v) not in slots]

    def undo(self, result: object) -> None:
        """A failed trace changes nothing: variables, optimizers' slots and iterations, inputs, new tensors."""
        for v, data in self.saved.values():
            v._data = data
        for owner, iterations, state in self.optimizers.values():
            owner._iterations = iterations
            slot_sets = owner._slots
            for name in [n for n in slot_sets if n not in state]:
                for sv in slot_sets.pop(name).variables.values():
                    sv.dispose()
            for name, (ss, datas) in state.items():
                slot_sets[name] = ss
                for k, sv in ss.variables.items():
                    sv._data = datas[k]
        slots = self.slot_variables()
        for v in self.created():
            if id(v) not in slots:
                v.dispose()
        for t, data, kept in self.input_state:
            t._kept = kept
            if t._disposed is not None and data is not None:  # disposed inside: alive again
                t._disposed, t._data = None, data
                arena.LIVE[t.id] = t
        for made in [*self.made, *arena.tensors_in(result)]:
            if made.id >= self.start and not isinstance(made, Variable) and made._disposed is None:
                arena.dispose(made, "mt.function when its trace failed")


def _refusal(name: str, what: str, rule: str, hint: str) -> UnsupportedOperationError:
    what = tr(N_("mt.function({0}): {1}")).format(name, tr(what))  # the part translated first: its own template wins
    return UnsupportedOperationError(explain(what, rule, hint), op="function")


class Program:
    """A traced program, as ``step.program`` shows it: ``print`` it to list one primitive a line, like a jaxpr.

    ``%3 = mul %1 %2  # (4,) line 12`` says the value numbered 3 is the
    product of values 1 and 2, has shape (4,) and was made by line 12 of your
    code (a backward pass's ops name the line that asked for the gradient).
    ``read w`` is the variable's value at that point, ``assign w %7`` and
    ``update ...`` the writes, ``print`` and ``check_numerics`` the effects a
    replay runs again, ``return`` the results.

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
    """What :func:`function` returns: call it like ``fn``; the first call of each key traces.

    A call always behaves like ``mt.tidy(fn)``: only the results (and what
    the step ``keep``-s) and the variables survive it. Replayed, nothing in
    between is a tensor, so ``mt.memory()`` after a replay shows exactly what
    the eager step inside ``tidy`` would leave.

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
        self._programs: dict[tuple[object, ...], list[Trace]] = {}
        self._last: Trace | None = None
        self._traces = 0
        self._reasons: collections.deque[str] = collections.deque(maxlen=RETRACE_WARNING)
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)

    @property
    def traces(self) -> int:
        """How many times the function was traced: once per key, and again each time a guard failed.

        Examples:
            >>> k = 2.0
            >>> @mt.function
            ... def scaled(x):
            ...     return x * k
            >>> _ = scaled(mt.tensor([1.0])); _ = scaled(mt.tensor([2.0]))
            >>> scaled.traces
            1
        """
        return self._traces

    @property
    def retraces(self) -> int:
        """How many traces came after the first (a new key, or a guard that failed); see :attr:`retrace_reasons`.

        Examples:
            >>> state = {"k": 2.0}
            >>> @mt.function
            ... def scaled(x):
            ...     return x * state["k"]
            >>> _ = scaled(mt.tensor([1.0]))
            >>> state["k"] = 3.0                 # a value the program depends on changed
            >>> scaled(mt.tensor([1.0])).item(), scaled.retraces
            (3.0, 1)
        """
        return max(self._traces - 1, 0)

    @property
    def retrace_reasons(self) -> list[str]:
        """Why the latest traces after the first happened, oldest first (at most ``RETRACE_WARNING``).

        Examples:
            >>> k = 2.0
            >>> @mt.function
            ... def scaled(x):
            ...     return x * k
            >>> _ = scaled(mt.tensor([1.0]))
            >>> k = -0.0
            >>> _ = scaled(mt.tensor([1.0]))
            >>> scaled.retrace_reasons
            ["the global 'k' of scaled changed: 2.0 at the trace, -0.0 now"]
        """
        return [tr(r) for r in self._reasons]  # recorded in English, read in the reader's language

    @property
    def guards(self) -> list[str]:
        """What the latest call's program depends on besides its inputs, one guard a line.

        Examples:
            >>> w = mt.variable(mt.tensor([1.0, 2.0]), name="w_guards_doc")
            >>> k = 0.5
            >>> @mt.function
            ... def step(x):
            ...     return (w * x * k).sum()
            >>> _ = step(mt.tensor([1.0, 1.0]))
            >>> print("\\n".join(step.guards))
            the global 'w' of step is variable 'w_guards_doc' (alive, trainable=True)
            the global 'k' of step == 0.5
        """
        if self._last is None:
            raise self._before_first_call("guards")
        return [tr(_describe(g)) for g in self._last.guards]

    @property
    def program(self) -> Program:
        """The program of the latest call's key; ``print(step.program)`` lists it.

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
            raise self._before_first_call("program")
        return Program(self._last.name, self._last.lines)

    def _before_first_call(self, what: str) -> UnsupportedOperationError:
        return UnsupportedOperationError(
            explain(
                N_('{0}.{1} was read before the first call.').format(getattr(self.fn, '__name__', 'fn'), what),
                N_('mt.function traces the function at its first call; there is no program before it.'),
                N_('call the function once, then print step.{0}.').format(what),
            ),
            op="function",
        )

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> Function[P, T]: ...

    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> Callable[..., T]: ...

    def __get__(self, obj: object, objtype: type | None = None) -> Function[P, T] | Callable[..., T]:
        """As a method decorator: ``self`` becomes the first argument (keyed by its fields, like any argument)."""
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)  # type: ignore[arg-type]  # obj is fn's first parameter

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> T:
        st = STATE.get()
        if st.observers or st.tapes or st.backward:
            # profile, leak_check, detect_anomaly or an open tape must see the ops themselves
            return self._eager(args, kwargs)
        key, inputs = _signature(args, kwargs, self._name())
        programs = self._programs.get(key)
        if programs:
            reason = ""
            for program in programs:
                failed = program.check()
                if failed < 0 and (not inputs or program.aliases(inputs)):
                    self._last = program
                    return cast(T, program.run(inputs, args, kwargs))  # the structure fn returned
                if not reason:
                    reason = program.guards[failed].reason() if failed >= 0 else (
                        N_("an argument is (or is no longer) a tensor the function also reads from outside"))
        else:
            reason = _new_key(key, self._programs, len(args), sorted(kwargs)) if self._traces else ""
        return self._trace(key, inputs, args, kwargs, reason)

    def _name(self) -> str:
        return getattr(self.fn, "__name__", "fn")

    def _eager(self, args: tuple[object, ...], kwargs: dict[str, object]) -> T:
        return arena.run_in_scope("mt.function", lambda: self.fn(*args, **kwargs))  # type: ignore[arg-type, return-value]

    def _trace(self, key: tuple[object, ...], inputs: list[TensorBase], args: tuple[object, ...],
               kwargs: dict[str, object], reason: str) -> T:
        name = self._name()
        found = guarding.Found()
        for a in [*args, *kwargs.values()]:  # the functions passed in: their globals are guarded too
            guarding.key_of(a, [], found)
        guards = guarding.collect(self.fn, found.arg_functions)  # before the call: the values the step starts from
        tracer = _Tracer(name, arena.next_id())
        for t in inputs:
            if id(t) not in tracer.inputs:
                tracer.inputs[id(t)] = len(tracer.inputs)
                tracer.input_state.append((t, t._data, t._kept))
                tracer.bind(t, tracer.program.add(Slot("input", t.shape)))
            tracer.program.inputs.append(tracer.slot_of[id(t)])
        result: object = None
        try:
            with observing(tracer):
                result = arena.run_in_scope("mt.function", lambda: self.fn(*args, **kwargs))  # type: ignore[arg-type]
            if tracer.error is not None:
                raise tracer.error
            program = tracer.program
            made: dict[int, int] = {}
            program.output = _outputs(tracer, result, inputs, made, args, kwargs)
            _effects(tracer, program, inputs, made)
            created = tracer.created()
            if created and self._traces:
                raise _refusal(
                    name,
                    N_('it created the variable {0} (shape {1}) at a call after the first, and a replay cannot make a new variable.').format(repr(created[0].name), created[0].shape),
                    N_("tf.function's rule: a function may create variables at its first call only; later calls must use the same ones."),
                    N_('create it once, outside the function, and only assign to it inside: acc = mt.variable(mt.zeros(x.shape)) before the function, acc.assign_add(x) in it.'),
                )
        except BaseException:
            tracer.undo(result)
            raise
        program.guards = guards + _runtime_guards(tracer, guards)
        program.check = compile_guards(program.guards)
        captured = {id(t) for t in tracer.captured.values()} | {id(t) for g in guards for t in _tensors_of(g)}
        program.captured = frozenset(captured)
        program.alias = tuple(i for i, t in enumerate(inputs) if id(t) in captured)
        compile_program(program)
        changed = _changed_by_the_step(program, key, inputs, args, kwargs, name)
        with self._lock:
            self._traces += 1
            if self._traces > 1:
                self._reasons.append(reason or N_("a variable was created at the first call, so it traced again"))
            if changed:
                self._reasons.append(changed)
            if not created and not changed:  # else never replayed: the next call traces (runs) again
                kept = self._programs.setdefault(key, [])
                kept.insert(0, program)
                del kept[CACHE_LIMIT:]
            self._last = program
        if self._traces - 1 == RETRACE_WARNING:
            counts = collections.Counter(self._reasons)
            latest = "; ".join(tr(N_("{0} ({1} times)")).format(tr(r), n) if n > 1 else tr(r) for r, n in counts.items())
            warnings.warn(
                tr(N_("mt.function({0}) traced {1} times: its arguments or the values it reads keep "
                      "changing. The latest reasons: {2}. Tracing is expensive (tf.function warns too); pass a "
                      "changing number as a tensor (step(x, mt.scalar(k))), and keep what the step reads unchanged "
                      "between calls.")).format(name, self._traces, latest),
                RetraceWarning,
                stacklevel=3,
            )
        return cast(T, result)  # what fn returned


def _changed_by_the_step(program: Trace, key: tuple[object, ...], inputs: list[TensorBase],
                         args: tuple[object, ...], kwargs: dict[str, object], name: str) -> str:
    """Why the program cannot be replayed although the trace worked: the step changed a value it depends on
    (a Python side effect, which a replay would not repeat), or "" when it did not."""
    failed = program.check()
    if failed >= 0:
        what = program.guards[failed].reason()
    else:
        now, now_inputs = _signature(args, kwargs, name, lenient=True)  # (an input the step disposed is an effect)
        if now == key and len(now_inputs) == len(inputs) and all(map(operator.is_, now_inputs, inputs)):
            return ""
        what = N_('an argument changed')
    return (N_('the step changed what it depends on while tracing ({0}): a replay would not repeat that Python side effect, so every call runs the step').format(what))


def _new_key(key: tuple[object, ...], programs: dict[tuple[object, ...], list[Trace]], n_args: int,
             names: list[str]) -> str:
    """Why a key is new: the first argument that differs from the latest key traced with as many parts."""
    for old in reversed(list(programs)):
        if len(old) != len(key):
            continue
        i = next(i for i, (a, b) in enumerate(zip(old, key)) if a != b)
        what = (N_('argument {0}').format(i) if i < n_args else N_("the argument {0}=").format(names[i - n_args]) if i < n_args + len(names)
                else N_("which arguments are one tensor"))
        return N_('a new key: {0} differs from the traced calls (another shape, structure or Python value)').format(what)
    return N_('a new key: other arguments than the traced calls')


def _tensors_of(g: Guard) -> list[TensorBase]:
    if g.kind == "tensor" and isinstance(g.value, TensorBase):
        return [g.value]
    found: list[TensorBase] = []
    _collect_tensors(g.key, found)
    return found


def _collect_tensors(key: object, found: list[TensorBase]) -> None:
    if isinstance(key, TensorBase):
        found.append(key)
    elif isinstance(key, (tuple, frozenset)):
        for part in key:
            _collect_tensors(part, found)


def _runtime_guards(tracer: _Tracer, guards: list[Guard]) -> list[Guard]:
    """What the trace met besides the sources in the code: variables (and their ``trainable`` flags), captured
    tensors, optimizers."""
    out: list[Guard] = []
    static = [g for g in guards if g.kind in ("variable", "tensor")]
    variables = {(id(g.value()), g.flag) for g in static if g.kind == "variable" and isinstance(g.value, weakref.ref)}
    tensors = {id(g.value) for g in static if g.kind == "tensor"}
    for ref, flag, name in tracer.met.values():
        if (id(ref()), flag) not in variables:  # (a guard on the closure variable holding it checks it already)
            out.append(Guard(N_('variable {0}').format(repr(name)), "{s}()", ref, ref, kind="variable", flag=flag))
    for t in tracer.captured.values():
        if id(t) not in tensors:
            out.append(Guard(N_('the captured Tensor#{0} (shape {1})').format(t.id, t.shape), "{s}", t, t, kind="tensor"))
    for owner, _, _ in tracer.optimizers.values():
        out.append(Guard(N_('the optimizer {0}').format(type(owner).__name__), "{s}()", weakref.ref(owner), None, kind="alive"))
    return out + list(tracer.settings.values())


def _describe(g: Guard) -> str:
    if g.kind == "variable":
        v = g.value() if isinstance(g.value, weakref.ref) else None
        if g.what.startswith("variable "):
            return N_('the trainable flag of {0} is {1}').format(g.what, g.flag)
        if isinstance(v, Variable):  # the word in the template: 'variable {0}' alone is said in the genitive
            return N_('{0} is variable {1} (alive, trainable={2})').format(g.what, repr(v.name), g.flag)
        return N_('{0} is a variable (alive, trainable={1})').format(g.what, g.flag)
    if g.kind == "tensor":
        if g.what.startswith("the captured"):
            return N_('{0} is alive').format(g.what)
        return N_('{0} is {1}, alive').format(g.what, guarding.short(g.value))
    if g.kind == "alive":
        return N_('{0} is alive').format(g.what)
    return N_('{0} == {1}').format(g.what, g.shown or guarding.short(g.value))


def _outputs(tracer: _Tracer, result: object, inputs: list[TensorBase], made: dict[int, int],
             args: tuple[object, ...], kwargs: dict[str, object]) -> object:
    """The structure of ``fn``'s result: each tensor by what it is to the program (made, input, captured)."""
    if isinstance(result, Variable):
        return ("var", result)
    if isinstance(result, TensorBase):
        if result._data is None or result._disposed is not None:
            raise tracer.fail(_refusal(
                tracer.name,
                N_('it returned Tensor#{0} (shape {1}, made by {2}), which was disposed ({3}).').format(result.id, result.shape, repr(result._op), result._disposed),
                N_('A call returns live tensors; a replay cannot give back a tensor the step disposed.'),
                N_('return the tensor without disposing it, or do not return it.'),
            ))
        if id(result) in tracer.inputs:
            return ("arg", next(i for i, t in enumerate(inputs) if t is result))
        if result.id < tracer.start and result._op != "variable":
            tracer.captured[id(result)] = result
            return ("obj", result)
        k = made.get(id(result))
        if k is None:
            k = made[id(result)] = len(tracer.program.made)
            tracer.program.made.append(Made(tracer.slot(result), result.shape, result._op, result._kept))
        return ("new", k)
    t = type(result)
    if result is None or t in (bool, int, float, complex, str, bytes) or (t is tuple and not arena.tensors_in(result)
                                                                          and _immutable(result)):
        return ("py", result)
    if t is tuple or t is list:
        items: Any = result  # a tuple or a list
        return (t.__name__, t, [_outputs(tracer, r, inputs, made, args, kwargs) for r in items])
    if isinstance(result, tuple) and hasattr(t, "_make") and hasattr(t, "_fields"):  # a named tuple
        return ("namedtuple", t, [_outputs(tracer, r, inputs, made, args, kwargs) for r in result])
    if t is dict:
        items = [x for kv in result.items() for x in kv]  # type: ignore[attr-defined]  # a dict
        return ("dict", t, [_outputs(tracer, r, inputs, made, args, kwargs) for r in items])
    if t is GradMap:
        assert isinstance(result, GradMap)
        return ("gradmap", GradMap, [(v, _outputs(tracer, g, inputs, made, args, kwargs)) for v, g in result.pairs()])
    for position, a in enumerate(args):
        if a is result:
            return ("argobj", ("a", position))
    for name, a in kwargs.items():
        if a is result:
            return ("argobj", ("k", name))
    raise tracer.fail(_refusal(
        tracer.name,
        N_('it returned a {0} ({1}), which a replay cannot rebuild.').format(t.__name__, guarding.short(result)),
        N_('A replay rebuilds tensors, variables, Python numbers and strings, and the tuples (named ones too), lists and dicts that hold them, and gives back the arguments themselves; not a subclass of list or dict, nor another object made by the step.'),
        N_('return a plain container: list(result) for a list subclass, dict(result) for a defaultdict.'),
    ))


def _immutable(v: object) -> bool:
    t = type(v)
    if v is None or t in (bool, int, float, complex, str, bytes):
        return True
    return t is tuple and all(_immutable(x) for x in v)  # type: ignore[attr-defined]  # a tuple


def _effects(tracer: _Tracer, program: Trace, inputs: list[TensorBase], made: dict[int, int]) -> None:
    """What the step did besides its result that a replay repeats: tensors it kept, inputs it kept or disposed."""
    for t in tracer.made:
        if t._kept and t._data is not None and t._disposed is None and id(t) not in made and not isinstance(t, Variable):
            if id(t) not in tracer.inputs and t.id >= tracer.start:
                made[id(t)] = len(program.made)
                program.made.append(Made(tracer.slot(t), t.shape, t._op, True))
    for t, _, kept in tracer.input_state:
        position = next(i for i, x in enumerate(inputs) if x is t)
        if t._disposed is not None:
            program.dispose_inputs.append(position)
        elif t._kept and not kept:
            program.keep_inputs.append(position)


def _signature(args: tuple[object, ...], kwargs: dict[str, object], name: str,
               lenient: bool = False) -> tuple[tuple[object, ...], list[TensorBase]]:
    """The cache key (``guards.key_of``: structure and values, never identity) and the input tensors."""
    inputs: list[TensorBase] = []
    key: list[object] = []
    for i, a in enumerate(args):
        t = type(a)
        if t is Tensor:
            if (a._data is None or a._disposed is not None) and not lenient:  # type: ignore[attr-defined]  # a Tensor
                arena.check_usable(a)  # type: ignore[arg-type]  # a Tensor
            inputs.append(a)  # type: ignore[arg-type]  # a Tensor
            key.append(("T", a.shape))  # type: ignore[attr-defined]  # a Tensor
        else:
            key.append(key_of_argument(a, inputs, f"argument {i}", name))
    if kwargs:
        for k in sorted(kwargs):
            key.append((k, key_of_argument(kwargs[k], inputs, f"the argument {k}=", name)))
    if len(inputs) > 1:  # which inputs are one tensor (step(x, x)): the program reads it once
        first: dict[int, int] = {}
        key.append(tuple([first.setdefault(id(t), i) for i, t in enumerate(inputs)]))
    return tuple(key), inputs


def function(fn: Callable[P, T]) -> Function[P, T]:
    """Trace ``fn`` at its first call and replay it as a flat program (``tf.function``).

    ``fn`` takes tensors (and Python values) and may run a forward pass,
    ``variable_grads`` or a ``GradientTape`` and an optimizer's
    ``apply_gradients`` or ``assign``. The first call with a new key (the
    structure of the arguments, the shapes of their tensors, the values of
    their Python parts) runs it eagerly while recording every primitive it
    runs, forward ops, the VJPs' ops and the updates, as one program; later
    calls with that key run the program on flat lists: the same values, the
    same variables and optimizer slots, bit for bit, several times faster.

    **Never a stale value.** A program also depends on what the step read
    from outside: the closure variables and globals of its code (and of every
    function, method and class of yours it reaches), attributes read through
    modules and optimizers, the ``trainable`` flag of every variable, the
    tensors it captured. Each is a *guard*, checked before every replay: when
    one changed, the call traces again (``step.retraces``, and a
    :class:`~microtape.RetraceWarning` after five retraces); ``step.guards``
    lists them. ``mt.print`` and ``check_numerics`` run at every call, in their
    place; ``keep``, ``dispose`` of an argument, a tensor returned twice or an
    argument returned behave as in the eager step.

    **Memory**: a call behaves like ``mt.tidy(fn)``. Replayed, nothing in
    between is a tensor, so ``mt.memory()`` shows only the results, the kept
    tensors and the variables, the counts of the eager step inside ``tidy``.

    **What a trace cannot see** is refused at trace time with
    :class:`~microtape.UnsupportedOperationError`, and the refused or failed
    call changes nothing (variables, optimizer slots and iterations as they
    were): reading a computed value (``loss.item()``, ``data_sync()``, ``if
    t:``, ``mt.grad_stats``), a random tensor made inside, a ``custom_grad``
    op, a result it cannot rebuild, a variable created at a call after the
    first. Python code runs only at a trace (``print`` prints at a trace;
    ``mt.print`` at every call). While an observer is active (``profile``,
    ``leak_check``, ``detect_anomaly``) or a tape is open, the call runs
    eagerly (inside its tidy scope), so that they see every op.

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
