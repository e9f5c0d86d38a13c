"""The only global mutable state: the arena of live tensors and the stacks.

Read after ``errors.py``. Three things live here and nowhere else:

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
import os
import sys
import weakref
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass
from types import FrameType
from typing import TYPE_CHECKING, Final, Protocol

from .errors import DisposedTensorError, explain

if TYPE_CHECKING:
    from ._registry import Op
    from .tensor import Tensor
    from .variable import Variable

_ids = itertools.count(1)
LIVE: Final[dict[int, Tensor]] = {}
VARIABLES: Final[weakref.WeakValueDictionary[str, Variable]] = weakref.WeakValueDictionary()
DISPATCH: Final[dict[str, Callable[..., Tensor]]] = {}
"""Every public op and composite by name; ``Tensor`` methods call through it."""

PACKAGE_DIR: Final = os.path.dirname(os.path.abspath(__file__))


def next_id() -> int:
    """Return a fresh tensor id (``itertools.count`` is atomic in CPython)."""
    return next(_ids)


class Scope:
    """One open ``tidy`` scope (or an op's own scope): a name and the tensors made inside it.

    ``by`` is what a tensor disposed at the end says disposed it.
    """

    __slots__ = ("name", "tensors", "by")

    def __init__(self, name: str, by: str | None = None) -> None:
        self.name = name
        self.tensors: list[Tensor] = []
        self.by = by or f"the tidy scope {name!r} when it ended"


class Recorder(Protocol):
    """What the op wrapper calls on each open tape."""

    def _record(
        self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor
    ) -> None: ...


class Observer(Protocol):
    """Watches tensors come and go and ops run (profile, leak_check, checker)."""

    def on_create(self, tensor: Tensor) -> None: ...

    def on_free(self, tensor: Tensor) -> None: ...

    def on_op(
        self,
        op: Op,
        inputs: tuple[Tensor, ...],
        params: dict[str, object],
        out: Tensor,
        seconds: float,
    ) -> None: ...


class State:
    """An immutable snapshot of what is open in this context."""

    __slots__ = ("tapes", "scopes", "observers", "anomaly", "backward", "light")

    def __init__(
        self,
        tapes: tuple[Recorder, ...] = (),
        scopes: tuple[Scope, ...] = (),
        observers: tuple[Observer, ...] = (),
        anomaly: bool = False,
        backward: int = 0,
        light: bool = False,
    ) -> None:
        self.tapes = tapes
        self.scopes = scopes
        self.observers = observers
        self.anomaly = anomaly
        self.backward = backward
        self.light = light
        """True where temporaries skip the arena: a backward pass that nothing
        else watches (no other tape, observer or anomaly mode), and the gradient
        checker's evaluations. They are freed by reference counting as soon as
        nothing uses them; what such a block returns is registered by its caller."""

    def but(
        self,
        *,
        tapes: tuple[Recorder, ...] | None = None,
        scopes: tuple[Scope, ...] | None = None,
        observers: tuple[Observer, ...] | None = None,
        anomaly: bool | None = None,
        backward: int | None = None,
        light: bool | None = None,
    ) -> State:
        """Return a copy with the given fields replaced."""
        return State(
            self.tapes if tapes is None else tapes,
            self.scopes if scopes is None else scopes,
            self.observers if observers is None else observers,
            self.anomaly if anomaly is None else anomaly,
            self.backward if backward is None else backward,
            self.light if light is None else light,
        )


STATE: Final[contextvars.ContextVar[State]] = contextvars.ContextVar(
    "microtape_state", default=State()
)


def register(t: Tensor) -> None:
    """Put a new tensor in the arena and in the innermost tidy scope."""
    st = STATE.get()
    if st.light:
        return
    LIVE[t.id] = t
    if st.scopes:
        st.scopes[-1].tensors.append(t)
    if st.observers:
        for obs in st.observers:
            obs.on_create(t)


def adopt(t: Tensor) -> None:
    """Register a tensor a light backward pass made, now that it is a result."""
    if t.id not in LIVE and t._data is not None and t._disposed is None and not t._kept:
        register(t)


def dispose(t: Tensor, by: str) -> None:
    """Dispose ``t``: free it now, or when the last tape holding it lets go."""
    if t._disposed is not None:
        return
    t._disposed = by
    if t._holds == 0:
        free(t)


def free(t: Tensor) -> None:
    """Drop a disposed tensor's data and take it out of the arena."""
    if t._data is None:
        return
    t._data = None
    LIVE.pop(t.id, None)
    st = STATE.get()
    if st.observers:
        for obs in st.observers:
            obs.on_free(t)


def check_usable(t: Tensor) -> None:
    """Raise ``DisposedTensorError`` unless ``t`` may still be read.

    A pending tensor (disposed by a scope, kept by a tape) may be read only
    by a backward pass.
    """
    if t._data is not None and STATE.get().backward:
        return
    raise disposed_error(t)


def disposed_error(t: Tensor) -> DisposedTensorError:
    """Build the error for reading a disposed tensor."""
    by = t._disposed or "dispose()"
    return DisposedTensorError(
        explain(
            f"Tensor is disposed: Tensor#{t.id} (shape {t.shape}, made by {t._op!r}) "
            f"was disposed by {by}.",
            "A disposed tensor's values are gone; ops and data_sync() cannot read it.",
            "return it from the function given to tidy, or mt.keep() it inside; "
            "and do not use a tensor after calling dispose() on it.",
        ),
        tensor_id=t.id,
        op=t._op,
        shape=t.shape,
        disposed_by=by,
    )


def user_frame_line() -> str:
    """Return ``file:line`` of the innermost caller outside this package."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(PACKAGE_DIR + os.sep):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


# -- scopes -----------------------------------------------------------------


def tensors_in(obj: object) -> list[Tensor]:
    """Every tensor reachable from ``obj`` through lists, tuples, sets, dicts,
    mappings and dataclasses (what ``tidy`` keeps of a result)."""
    from .tensor import Tensor

    if obj is None or type(obj) in _LEAVES:
        return []
    if isinstance(obj, Tensor):
        return [obj]
    found: list[Tensor] = []
    seen: set[int] = set()
    stack: list[object] = [obj]
    while stack:
        item = stack.pop()
        if item is None or type(item) in _LEAVES or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Tensor):
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
    STATE.set(st.but(scopes=outer + (scope,)))
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
    STATE.set(STATE.get().but(scopes=outer))


def close_scope(scope: Scope, survivors: list[Tensor] | tuple[Tensor, ...], outer: tuple[Scope, ...]) -> None:
    """Dispose the scope's tensors except ``survivors`` (moved to the outer scope)."""
    keep = {t.id for t in survivors}
    parent = outer[-1].tensors if outer else None
    by = scope.by
    unused: list[Tensor] = []
    for t in scope.tensors:
        if t.id in keep:
            if parent is not None:
                parent.append(t)
        elif not t._kept and t._disposed is None:
            t._disposed = by  # dispose(t, by), written out: scopes close thousands of tensors
            if t._holds == 0:
                unused.append(t)
    scope.tensors.clear()
    free_all(unused)


def free_all(tensors: list[Tensor]) -> None:
    """``free`` for many tensors at once (scopes and tapes let go of thousands)."""
    observers = STATE.get().observers
    pop = LIVE.pop
    for t in tensors:
        if t._data is not None:
            t._data = None
            pop(t.id, None)
            for obs in observers:
                obs.on_free(t)
