"""The only global mutable state: the arena of live tensors and the stacks.

What lives here and nowhere else:

* ``TensorBase``, a tensor's storage and lifetime fields, and ``new``, the one
  function that makes a tensor (``Tensor`` in ``tensor.py`` adds the methods);

* ``LIVE``, every tensor not yet disposed, by id (the TF.js "engine"). A
  tensor stays here until it is disposed, directly or by a tidy scope, so a
  loop without ``tidy`` shows ``num_tensors`` growing;
* ``VARIABLES``, every variable by name, held weakly: a variable lives as long
  as your program holds it, or until ``dispose()``;
* ``STATE``, a ``contextvars.ContextVar`` holding the open tapes, the open tidy
  scopes and the observers of this thread or asyncio task. Each change makes
  a new ``State``, so two tasks never see each other's tapes or scopes.

A tensor has three states. *Alive*: ``_disposed is None``. *Pending*:
disposed, but a tape still needs it for its backward pass, so its data stays
(``_holds > 0``). *Freed*: ``_data is None``; reading it raises
``DisposedTensorError``.
"""

from __future__ import annotations

import contextvars
import itertools
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import fields, is_dataclass
from typing import Any, Final, Protocol, TypeVar

from .types import Shape
from ..errors import DisposedTensorError, explain
from ..errors import N_, tr

_ids = itertools.count(1)


class TensorBase:
    """What the arena knows of a tensor: its storage and its lifetime.

    ``_data`` is the flat row-major list (``None`` once freed), ``_shape`` and
    ``_size`` describe it, ``_id`` only grows, ``_op`` names what made it; the
    read-only properties ``shape``, ``size`` and ``id`` show them.
    ``_disposed`` says who disposed it, ``_holds`` counts the tapes that need
    it for a backward pass, ``_kept`` marks ``keep()``-ed tensors and
    variables. ``_trainable`` is False here; ``Variable`` gives itself a slot
    for it. Make one with :func:`new`; ``Tensor`` (``tensor.py``) adds every
    method.
    """

    __slots__ = ("_data", "_shape", "_size", "_id", "_op", "_disposed", "_holds", "_kept")

    _data: list[float] | None
    _shape: Shape
    _size: int
    _id: int
    _op: str
    _disposed: str | None
    _holds: int
    _kept: bool
    _trainable: bool = False  # a class attribute: only a Variable stores its own

    # Read-only views of the storage: the engine sets the slots when it makes a tensor
    # and reads them directly on its hot paths (a property costs a call per read).

    @property
    def shape(self) -> Shape:
        """The length of each axis, a tuple: ``()`` for a scalar (``tensor.shape`` in TF.js)."""
        return self._shape

    @property
    def size(self) -> int:
        """Number of entries: the product of ``shape``."""
        return self._size

    @property
    def id(self) -> int:
        """A number that no other tensor made by this process has: ids only grow."""
        return self._id


T = TypeVar("T", bound=TensorBase)

LIVE: Final[dict[int, TensorBase]] = {}
VARIABLES: Final[weakref.WeakValueDictionary[str, TensorBase]] = weakref.WeakValueDictionary()
"""Every variable by name (``variable.py`` reads it with its own type)."""
DISPATCH: Final[dict[str, Callable[..., Any]]] = {}
"""Every public op and composite by name; ``Tensor`` methods call through it."""

def next_id() -> int:
    """Return a fresh tensor id (``itertools.count`` is atomic in CPython)."""
    return next(_ids)


take_id: Final[Callable[[], int]] = _ids.__next__
"""``next_id`` without the Python call around it, for the one hot path (``primitive.emit``)."""


class Scope:
    """One open ``tidy`` scope (or an op's own scope): a name and the tensors made inside it.

    ``by`` is what a tensor disposed at the end says disposed it.
    """

    __slots__ = ("name", "tensors", "by")

    def __init__(self, name: str, by: str | None = None) -> None:
        self.name: str = name
        self.tensors: list[TensorBase] = []
        self.by: str = by or N_("the tidy scope {0} when it ended").format(repr(name))


class Recorder(Protocol):
    """What ``primitive.emit`` calls on each open tape (``op`` is a ``primitive.Op``,
    the tensors are ``Tensor``s: both defined above this module, hence ``Any``).
    The methods are underscored so that they stay off ``GradientTape``'s public face.
    ``_cut`` hears of a value that leaves the tape's graph: ``how`` (an op no tape
    records, a copy, an assign, a read-out) made ``out`` (``None`` for a read-out)
    from ``inputs`` without a record, so "no gradient" can say where the path ended."""

    def _record(self, op: Any, inputs: tuple[Any, ...], params: dict[str, object], out: Any) -> None: ...

    def _cut(self, how: str, inputs: tuple[Any, ...], out: Any) -> None: ...


def notify_cut(how: str, inputs: tuple[TensorBase, ...], out: TensorBase | None) -> None:
    """Tell every open tape that ``out`` was made from ``inputs`` outside its graph (``Recorder._cut``)."""
    for tape in _get_state().tapes:
        tape._cut(how, inputs, out)


class Observer(Protocol):
    """Watches tensors come and go and ops run: profile, leak_check, the checker's
    culprit finder and detect_anomaly. ``on_op`` sees each op after its forward
    (before any tape records it; raising refuses the op), ``on_vjp`` each VJP a
    backward pass runs. Types as in :class:`Recorder`."""

    def on_create(self, tensor: TensorBase) -> None: ...

    def on_free(self, tensor: TensorBase) -> None: ...

    def on_op(self, op: Any, inputs: tuple[Any, ...], params: dict[str, object], out: Any, seconds: float) -> None: ...

    def on_vjp(self, op: Any, inputs: tuple[Any, ...], out: Any, dxs: tuple[Any, ...]) -> None: ...


def notify_read(t: TensorBase, how: str = "") -> None:
    """A value is read out of ``t`` (``data_sync``, ``item``, ``tolist``): tell the observers that
    watch reads (``mt.function``'s tracer has an ``on_read``; the others do not) and, when the
    user's code read it (``how`` names the method), the open tapes: numbers leave the graph there."""
    st = _get_state()
    for obs in st.observers:
        hook = getattr(obs, "on_read", None)
        if hook is not None:
            hook(t)
    if how:
        for tape in st.tapes:
            tape._cut(how, (t,), None)


def notify_assign(v: TensorBase, kind: str, value: object, data: list[float]) -> None:
    """A variable is written (``assign``, ``assign_add``, ``assign_sub``): tell the observers
    that watch writes (those with an ``on_assign``)."""
    for obs in _get_state().observers:
        hook = getattr(obs, "on_assign", None)
        if hook is not None:
            hook(v, kind, value, data)


def notify(hook: str, *args: object) -> None:
    """Call ``hook(*args)`` on each observer that has a method of that name: what the library
    tells ``mt.function``'s tracer besides the ops (a copy, a value read, a print or a check)."""
    for obs in _get_state().observers:
        method = getattr(obs, hook, None)
        if method is not None:
            method(*args)


class State:
    """An immutable snapshot of what is open in this context."""

    __slots__ = ("tapes", "scopes", "observers", "anomaly", "backward", "skip_arena")

    def __init__(
        self,
        tapes: tuple[Recorder, ...] = (),
        scopes: tuple[Scope, ...] = (),
        observers: tuple[Observer, ...] = (),
        anomaly: bool = False,
        backward: int = 0,
        skip_arena: bool = False,
    ) -> None:
        self.tapes: tuple[Recorder, ...] = tapes
        self.scopes: tuple[Scope, ...] = scopes
        self.observers: tuple[Observer, ...] = observers
        self.anomaly: bool = anomaly
        """Whether detect_anomaly is on; its checks are an observer, the engine never tests this."""
        self.backward: int = backward
        self.skip_arena: bool = skip_arena
        """True where temporaries skip the arena: a backward pass that nothing
        else watches (no other tape or observer), and the gradient
        checker's evaluations. They are freed by reference counting as soon as
        nothing uses them; what such a block returns is registered by its caller."""

    def replace(
        self,
        *,
        tapes: tuple[Recorder, ...] | None = None,
        scopes: tuple[Scope, ...] | None = None,
        observers: tuple[Observer, ...] | None = None,
        anomaly: bool | None = None,
        backward: int | None = None,
        skip_arena: bool | None = None,
    ) -> State:
        """Return a copy with the given fields replaced."""
        return State(
            self.tapes if tapes is None else tapes,
            self.scopes if scopes is None else scopes,
            self.observers if observers is None else observers,
            self.anomaly if anomaly is None else anomaly,
            self.backward if backward is None else backward,
            self.skip_arena if skip_arena is None else skip_arena,
        )


STATE: Final[contextvars.ContextVar[State]] = contextvars.ContextVar(
    "microtape_state", default=State()
)
_get_state = STATE.get


_new_object = object.__new__


def new(cls: type[T], data: list[float], shape: Shape, op: str, scoped: bool = True, arena: bool = True) -> T:
    """Make a tensor of class ``cls`` that owns ``data`` (no copy, no checks): the one constructor.

    It goes into the arena and, if ``scoped``, into the innermost tidy scope
    (a tensor an op makes from a Python number is not: the op disposes it
    when it returns). ``arena=False`` makes one the arena never sees (a
    variable, which ``memory()`` counts by itself, or values on their way
    into ``assign``). Where ``skip_arena`` is set, nothing is registered.
    """
    t = _new_object(cls)
    t._data = data
    t._shape = shape
    t._size = len(data)
    t._id = tid = next(_ids)
    t._op = op
    t._disposed = None
    t._holds = 0
    t._kept = False
    if arena:
        st = _get_state()
        if not st.skip_arena:
            LIVE[tid] = t
            if scoped and st.scopes:
                st.scopes[-1].tensors.append(t)
            if st.observers:
                for obs in st.observers:
                    obs.on_create(t)
    return t


def read_of(variable: TensorBase, cls: type[T]) -> T:
    """A tensor of class ``cls`` with ``variable``'s id, shape and current list (no copy):
    what a tape records for a variable read. Outside the arena, kept, never disposed."""
    t = _new_object(cls)
    t._data = variable._data
    t._shape = variable._shape
    t._size = variable._size
    t._id = variable._id
    t._op = "variable"
    t._disposed = None
    t._holds = 0
    t._kept = True
    return t


@contextmanager
def observing(observer: Observer) -> Iterator[None]:
    """Add ``observer`` to this context's observers inside a ``with`` block."""
    st = STATE.get()
    STATE.set(st.replace(observers=st.observers + (observer,)))
    try:
        yield
    finally:
        now = STATE.get()
        STATE.set(now.replace(observers=tuple(o for o in now.observers if o is not observer)))


def adopt(t: TensorBase) -> None:
    """Put a tensor a backward pass made outside the arena (``skip_arena``) in the arena and
    the innermost tidy scope, now that it is a result: what ``new`` skipped."""
    if t._id not in LIVE and t._data is not None and t._disposed is None and not t._kept:
        st = STATE.get()
        LIVE[t._id] = t
        if st.scopes:
            st.scopes[-1].tensors.append(t)
        for obs in st.observers:
            obs.on_create(t)


def dispose(t: TensorBase, by: str) -> None:
    """Dispose ``t``: free it now, or when the last tape holding it lets go."""
    if t._disposed is not None:
        return
    t._disposed = by
    if t._holds == 0:
        free(t)


def free(t: TensorBase) -> None:
    """Drop a disposed tensor's data and take it out of the arena."""
    if t._data is None:
        return
    t._data = None
    LIVE.pop(t._id, None)
    st = STATE.get()
    if st.observers:
        for obs in st.observers:
            obs.on_free(t)


def check_usable(t: TensorBase) -> None:
    """Raise ``DisposedTensorError`` unless ``t`` may still be read.

    A pending tensor (disposed by a scope, kept by a tape) may be read only
    by a backward pass.
    """
    if t._data is not None and STATE.get().backward:
        return
    raise disposed_error(t)


def origin_of(t: TensorBase) -> str | None:
    """The user's ``file:line`` that made ``t``, if an observer recorded it (``leak_check`` does);
    nothing is recorded, at no cost, when no such observer is active."""
    for obs in STATE.get().observers:
        origin = getattr(obs, "origin", None)
        where = origin(t) if origin is not None else None
        if isinstance(where, str):
            return where
    return None


def disposed_error(t: TensorBase) -> DisposedTensorError:
    """Build the error for reading a disposed tensor (naming the line that made it, when known)."""
    by = t._disposed or "dispose()"
    where = origin_of(t)
    made = tr(" at {0}").format(where) if where else ""
    return DisposedTensorError(
        explain(
            # translated before the values go in: {2}{3} side by side cannot be told apart in the filled-in English
            tr("Tensor is disposed: Tensor#{0} (shape {1}, made by {2}{3}) was disposed by {4}.").format(t._id, t._shape, repr(t._op), made, tr(by)),
            N_("A disposed tensor's values are gone; ops and data_sync() cannot read it."),
            N_("return it from the function given to tidy, or mt.keep() it inside; and do not use a tensor after calling dispose() on it."),
        ),
        tensor_id=t._id,
        op=t._op,
        shape=t._shape,
        disposed_by=by,
        made_at=where,
    )


# -- scopes -----------------------------------------------------------------


def tensors_in(obj: object) -> list[TensorBase]:
    """Every tensor reachable from ``obj`` through lists, tuples, sets, dicts,
    mappings and dataclasses (what ``tidy`` keeps of a result)."""
    if obj is None or type(obj) in _LEAVES:
        return []
    if isinstance(obj, TensorBase):
        return [obj]
    found: list[TensorBase] = []
    seen: set[int] = set()
    stack: list[object] = [obj]
    while stack:
        item = stack.pop()
        if item is None or type(item) in _LEAVES or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, TensorBase):
            found.append(item)
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in fields(item))
    return found


_LEAVES: Final = frozenset({float, int, bool, str, bytes, complex})


def run_in_scope(name: str, fn: Callable[[], object], returns_tensors: bool = True, by: str | None = None) -> object:
    """Run ``fn`` in a new tidy scope and dispose what it made but did not return.

    What it returns moves to the enclosing scope, so an outer ``tidy`` can
    still dispose it (``returns_tensors=False``: the result is plain Python
    data, not searched). Kept tensors (``keep``) and variables stay. On an
    exception everything the scope made is disposed and the stack restored.
    """
    scope = Scope(name, by)
    st = STATE.get()
    outer = st.scopes
    STATE.set(st.replace(scopes=outer + (scope,)))
    try:
        result = fn()
    except BaseException:
        _restore_scopes(outer)
        close_scope(scope, (), outer)
        raise
    _restore_scopes(outer)
    close_scope(scope, tensors_in(result) if returns_tensors else (), outer)
    return result


def _restore_scopes(outer: tuple[Scope, ...]) -> None:
    STATE.set(STATE.get().replace(scopes=outer))


def close_scope(scope: Scope, survivors: Sequence[TensorBase], outer: tuple[Scope, ...]) -> None:
    """Dispose the scope's tensors except ``survivors`` (moved to the outer scope)."""
    keep = {t._id for t in survivors}
    parent = outer[-1].tensors if outer else None
    by = scope.by
    unused: list[TensorBase] = []
    for t in scope.tensors:
        if t._id in keep:
            if parent is not None:
                parent.append(t)
        elif not t._kept and t._disposed is None:
            t._disposed = by  # dispose(t, by), written out: scopes close thousands of tensors
            if t._holds == 0:
                unused.append(t)
    scope.tensors.clear()
    free_all(unused)


def free_all(tensors: list[TensorBase]) -> None:
    """``free`` for many tensors at once (scopes and tapes let go of thousands)."""
    observers = STATE.get().observers
    pop = LIVE.pop
    for t in tensors:
        if t._data is not None:
            t._data = None
            pop(t._id, None)
            if observers:
                for obs in observers:
                    obs.on_free(t)
