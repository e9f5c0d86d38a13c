"""The grader's side of a student's file: a module that stands for it, whose every function runs in the student's process.

``judge.py`` gives a check a ``Submission`` where it used to give the student's
module. Reading an attribute asks the student's process (``grade_child.py``) for it:
data arrives as data (numbers, lists, tensors by value), anything else as a
reference (a ``RemoteFunction``, a ``RemoteObject``) that can only be
asked about or called. A call sends the arguments the check chose and brings back
what the student's code returned, so a check reads the same values it read when it
ran in the student's process; what it concludes stays here.

Variables are shared: a variable the check passes in, or one the student's code
hands out, has a copy on each side, and each request carries the values that
changed, so ``sgd_step(w, g, lr)`` changes the check's ``w``.

The student's functions stay differentiable: a tensor a call returns is, here, the
output of an op whose forward and VJP are computed over there (``eval`` requests:
the call again, under a tape, with the output gradient this side's backward pass
chose), so ``check_grads``, ``numerical_grad`` and tapes work on them unchanged, to
any order, and compare the student's own gradients with finite differences of the
student's own forward, here. What ``check_grads`` names as the culprit is asked of
the student's process (``Session.culprit``), where the student's ops are.

What the check measures (tensors left alive, leaks, the ops a tape recorded, calls
of the file's functions) is measured over there, around the calls it makes inside
``observe()`` (``check_tools.py``); a function the check passes to the student's code
is sent as code (``child_fn``) and made over there.
"""

from __future__ import annotations

import contextvars
import json
import warnings
import math
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import microtape

from ..engine import arena
from ..engine.tensor import Tensor
from ..engine.variable import Variable, variable
from ..ops.creation import tensor
from ..autodiff.custom import named_custom_grad
from .measure import Measured, measured_call
from .grade_child import Server
from .wire import (
    ChannelError, exception_from_wire, floats_from_wire, from_wire, record_from_wire, subclass_named, tensor_to_wire, to_wire,
)

__all__ = [
    "CURRENT",
    "OBSERVERS",
    "ChildCode",
    "ChildGone",
    "ChildTimeout",
    "GradingStopped",
    "LoadFailed",
    "LoopbackTransport",
    "RemoteFunction",
    "RemoteObject",
    "Session",
    "Submission",
    "grading",
    "notes_of",
    "session_of",
]


class ChildTimeout(BaseException):
    """The check ran over its time (a ``BaseException``: a check's ``except Exception`` cannot swallow it)."""


class ChildGone(BaseException):
    """The process that runs the student's code ended, or broke the channel, during the check."""


class GradingStopped(BaseException):
    """Ctrl-C or SIGTERM: grading stops at once."""


class Transport(Protocol):
    """How a ``Session`` reaches the student's code: a child process (``judge.py``) or this process (tests)."""

    def request(self, message: dict[str, object], deadline: float | None) -> dict[str, object]: ...


class LoopbackTransport:
    """The student's side served in this process, every message through JSON as over the pipes (for tests).

    Examples:
        >>> from microtape.classroom.proxy import LoopbackTransport, Session
        >>> session = Session(LoopbackTransport(), "ex.py")
        >>> m = session.load("def twice(x):\\n    return 2.0 * x\\n")
        >>> m.twice(1.5)
        3.0
    """

    def __init__(self) -> None:
        self.server: Server = Server()

    def request(self, message: dict[str, object], deadline: float | None) -> dict[str, object]:
        with warnings.catch_warnings():  # as in a grading child: a warning the student's code causes is shown, not raised
            warnings.simplefilter("default")
            reply = self.server.answer(json.loads(json.dumps(message)))
        out = json.loads(json.dumps(reply))
        assert isinstance(out, dict)
        return out


CURRENT: contextvars.ContextVar[Session | None] = contextvars.ContextVar("microtape_grading_session", default=None)
"""The session of the check running now (``child_fn`` code called by a check runs there)."""

OBSERVERS: contextvars.ContextVar[tuple[tuple[Measured, frozenset[str]], ...]] = contextvars.ContextVar("microtape_observers", default=())
"""The open ``observe()`` blocks: what each adds up, and the extra measurements it asked for."""


@dataclass(frozen=True)
class ChildCode:
    """A function a check hands to the student's code, made in the student's process from ``source``.

    ``source`` is an expression (``"lambda: mt.zeros((n,))"``) evaluated with ``mt``,
    ``math`` and ``env`` in scope. Called by the check during grading, it runs over
    there too (so what it makes is the student's process's); outside the grader, here.

    Examples:
        >>> from microtape.classroom.proxy import ChildCode
        >>> make = ChildCode("lambda: [mt.zeros((size,)) for _ in range(n)]", {"n": 2, "size": 3})
        >>> [t.shape for t in make()]
        [(3,), (3,)]
    """

    source: str
    env: dict[str, object]

    def local(self) -> Callable[..., object]:
        made: object = eval(self.source, {"mt": microtape, "math": math, **self.env})  # noqa: S307 - the check's own code
        assert callable(made)
        return made

    def __call__(self, *args: object, **kwargs: object) -> object:
        session = CURRENT.get()
        if session is not None:
            return session.call_code(self, args, kwargs)
        observers = OBSERVERS.get()
        if not observers:
            return self.local()(*args, **kwargs)
        kinds = frozenset().union(*(k for _, k in observers))
        result, found = measured_call(self.local(), args, kwargs, kinds)
        for seen, _ in observers:
            seen.add(found)
        return result


class RemoteObject:
    """An object of the student's process (an instance of the student's class, a monitor, ...): its attributes are asked for."""

    __slots__ = ("_session", "_handle", "_label")

    def __init__(self, session: Session, handle: str, label: str) -> None:
        self._session, self._handle, self._label = session, handle, label

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._session.get(self._handle, name)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._label or ''} in the student's process>".replace("  ", " ")


class RemoteFunction(RemoteObject):
    """A function (or class) of the student's file: calling it runs it in the student's process on the arguments given."""

    __slots__ = ()

    @property
    def __name__(self) -> str:
        return self._label

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self._session.call(self._handle, args, kwargs, self._label)


_REMOTE_CLASSES: dict[tuple[str, bool], type[RemoteObject]] = {}
_LOCK = threading.Lock()


def remote_class(type_name: str, is_callable: bool) -> type[RemoteObject]:
    """The class a remote value of type ``type_name`` gets here (named like it, so messages print the student's type)."""
    key = (type_name, is_callable)
    with _LOCK:
        if key not in _REMOTE_CLASSES:
            base: type[RemoteObject] = RemoteFunction if is_callable else RemoteObject
            name = type_name if type_name.isidentifier() else "RemoteObject"
            _REMOTE_CLASSES[key] = type(name, (base,), {"__slots__": (), "__module__": "student"})
        return _REMOTE_CLASSES[key]


class Opaque:
    """A value that could not cross (nested too deeply, a list holding itself): only its type's name is known."""

    def __init__(self, type_name: str) -> None:
        self.type_name: str = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} that cannot be shown>"


_OPS: dict[int, str] = {}


def _op_name(obj: object) -> str | None:
    if not _OPS:
        for name in microtape.__all__:
            value = getattr(microtape, name, None)
            if callable(value):
                _OPS[id(value)] = name
    found = _OPS.get(id(obj))
    return found if found is not None and getattr(microtape, found, None) is obj else None


class CannotSend(TypeError):
    """A value a check tried to pass to the student's code that cannot go there (a function of the check's own)."""


class Session:
    """The conversation with one student's process: requests, shared variables, references, the student's functions as ops."""

    def __init__(self, transport: Transport, file: str) -> None:
        self.transport: Transport = transport
        self.file: str = file
        self.deadline: float | None = None
        self._id = 0
        self._parent_ids = 0
        self.variables: dict[str, Variable] = {}
        self.known: dict[str, list[float] | None] = {}
        self.mine: dict[int, str] = {}  # id(a variable of the check's) -> its handle
        self.origin: dict[int, tuple[str, Tensor]] = {}  # id(a tensor that came from there) -> its handle there
        self.accessed: list[str] = []  # the module's names the checks asked for
        self.last: dict[str, tuple[object, list[Tensor]]] = {}  # op name -> (recipe, inputs) of its last evaluation
        self._ops = 0

    # -- requests -----------------------------------------------------------------------------------

    def ask(self, message: dict[str, object]) -> dict[str, object]:
        """Send one request (with the shared variables that changed here) and return the reply; raise what the student's code raised."""
        self._id += 1
        message["id"] = self._id
        sync = self._changed()
        if sync:
            message["sync"] = sync
        reply = self.transport.request(message, self.deadline)
        if reply.get("id") != self._id:
            raise ChildGone(f"the student's process answered request {reply.get('id')!r}, not {self._id}")
        try:
            self._take(reply.get("sync"))
            if "raised" in reply:
                raise exception_from_wire(reply["raised"])
        except ChannelError as err:
            raise ChildGone(f"the student's process sent something that is not a value: {err}") from None
        return reply

    def value(self, data: object) -> object:
        try:
            return from_wire(data, self.resolve)
        except ChannelError as err:
            raise ChildGone(f"the student's process sent something that is not a value: {err}") from None

    def load(self, source: str, notebook: bool = False) -> Submission:
        """Run the student's file over there; the module that stands for it (``LoadFailed`` if it does not load)."""
        reply = self.ask({"op": "load", "file": self.file, "source": source, "notebook": notebook})
        failed = reply.get("load_failed")
        if isinstance(failed, dict):
            raise LoadFailed([str(d) for d in failed.get("details", [])], [str(h) for h in failed.get("hints", [])])
        ok = reply.get("ok")
        notes = ok.get("notes") if isinstance(ok, dict) else None
        return Submission(self, [str(n) for n in notes] if isinstance(notes, list) else [])

    def begin(self, name: str) -> None:
        """A check starts: what the student's process makes from now on is disposed at ``end``."""
        self.ask({"op": "begin", "name": name})

    def end(self) -> None:
        """The check is over: both sides forget its references and shared variables."""
        self.ask({"op": "end"})
        for h, v in self.variables.items():
            if h.startswith("c") and not v.is_disposed:
                v.dispose()
        self.variables.clear()
        self.known.clear()
        self.mine.clear()
        self.origin.clear()
        self.last.clear()

    def bye(self) -> list[str]:
        """The threads the file left running; the student's process then ends."""
        ok = self.ask({"op": "bye"}).get("ok")
        threads = ok.get("threads") if isinstance(ok, dict) else None
        return [str(t) for t in threads] if isinstance(threads, list) else []

    def get(self, target: str | None, name: str) -> object:
        """An attribute of the module (``target`` None) or of an object over there."""
        if target is None:
            self.accessed.append(name)
        reply = self.ask({"op": "get", "target": target, "name": name})
        if reply.get("missing"):
            raise AttributeError(f"the student's {'file' if target is None else 'object'} has no attribute {name!r}")
        return self.value(reply.get("ok"))

    def set(self, target: str | None, name: str, value: object) -> None:
        """Set an attribute over there (``replaced`` does, to swap in a stand-in)."""
        if target is None:
            self.accessed.append(name)
        self.ask({"op": "set", "target": target, "name": name, "value": self.encode(value)})

    def call(self, target: str, args: Sequence[object], kwargs: dict[str, object], label: str = "") -> object:
        """Call a function over there on ``args``; its result, its tensors differentiable here."""
        return self._call({"op": "call", "target": target}, args, kwargs, label, {"call": target})

    def call_code(self, code: ChildCode, args: Sequence[object], kwargs: dict[str, object]) -> object:
        """Call a check's function made over there from its source."""
        return self._call({"op": "call", "code": self.encode(code)}, args, kwargs, "the check's function", None)

    def _call(self, message: dict[str, object], args: Sequence[object], kwargs: dict[str, object], label: str, recipe: dict[str, object] | None) -> object:
        message.update(args=self.encode(list(args)), kwargs=self.encode(dict(kwargs)))
        observers = OBSERVERS.get()
        if observers:
            message["measure"] = sorted(frozenset().union(*(k for _, k in observers)))
        reply = self.ask(message)
        result = self.value(reply.get("ok"))
        for seen, _ in observers:
            seen.add(reply.get("measured"))
        leaves = _tensors_in(args)
        if recipe is None or not leaves or kwargs:
            return result
        recipe = {**recipe, "args": self._template(list(args), leaves)}
        return self._differentiable(result, recipe, leaves, label, [])

    # -- values crossing ----------------------------------------------------------------------------

    def encode(self, value: object) -> object:
        return to_wire(value, self._ref, self._tensor)

    def _tensor(self, t: Tensor) -> object:
        if isinstance(t, Variable):
            return tensor_to_wire(t, self._variable_handle(t))
        origin = self.origin.get(id(t))
        return tensor_to_wire(t, origin[0] if origin is not None and origin[1] is t else None)

    def _variable_handle(self, v: Variable) -> str:
        for h, known in self.variables.items():
            if known is v:
                return h
        self._parent_ids += 1
        h = f"p{self._parent_ids}"
        self.variables[h] = v
        self.known[h] = v.data_sync() if not v.is_disposed else None
        return h

    def _ref(self, obj: object) -> dict[str, object]:
        if isinstance(obj, RemoteObject) and obj._session is self:
            return {"$": "ref", "h": obj._handle}
        if isinstance(obj, ChildCode):
            return {"$": "code", "src": obj.source, "env": self.encode(obj.env)}
        name = _op_name(obj)
        if name is not None:
            return {"$": "op", "name": name}
        raise CannotSend(
            f"the check passes {type(obj).__name__} {obj!r:.60} to the student's code, which runs in another process; "
            "a function the student's code should call is written with child_fn(\"lambda ...\")"
        )

    def _template(self, args: list[object], leaves: list[Tensor]) -> object:
        """``args`` as sent, with each input tensor a numbered slot (the recipe the gradients re-run)."""

        def slot(t: Tensor) -> object:
            for i, leaf in enumerate(leaves):
                if leaf is t:
                    return {"$": "leaf", "i": i}
            return self._tensor(t)

        return to_wire(args, self._ref, slot)

    def resolve(self, data: dict[str, object]) -> object:
        tag = data.get("$")
        if tag == "tensor":
            return self._tensor_from(data)
        if tag == "ref":
            h, kind = data.get("h"), data.get("type")
            if not isinstance(h, str):
                raise ChannelError("a reference without a handle")
            name = data.get("name")
            return remote_class(str(kind), bool(data.get("callable")))(self, h, name if isinstance(name, str) else str(kind))
        if tag == "record":
            return record_from_wire(data, self.resolve)
        if tag == "opaque":
            return Opaque(str(data.get("type")))
        raise ChannelError(f"a value tagged {tag!r}")

    def _tensor_from(self, data: dict[str, object]) -> Tensor:
        raw_shape = data.get("shape")
        shape = tuple(int(d) for d in raw_shape if type(d) is int) if isinstance(raw_shape, list) else ()
        values = floats_from_wire(data.get("data"))
        h = data.get("h")
        if data.get("variable"):
            if isinstance(h, str) and h in self.variables:
                return self.variables[h]
            if len(values) != math.prod(shape):
                raise ChannelError("a variable whose values do not fill its shape")
            made = variable(tensor(values, shape), trainable=bool(data.get("trainable", True)))
            if isinstance(h, str):
                self.variables[h] = made
                self.known[h] = list(values)
            return made
        if data.get("disposed"):
            t: Tensor = tensor([0.0] * math.prod(shape), shape)
            t.dispose()
            t._op = str(data.get("op", "?"))
            return t
        if len(values) != math.prod(shape):
            raise ChannelError("a tensor whose values do not fill its shape")
        sub = data.get("subclass")
        if isinstance(sub, str):
            t = arena.new(subclass_named(Tensor, sub), values, shape, str(data.get("op", "tensor")))
        else:
            t = tensor(values, shape)
        if isinstance(h, str):
            self.origin[id(t)] = (h, t)
        return t

    def _changed(self) -> dict[str, object]:
        changed: dict[str, object] = {}
        for h, v in self.variables.items():
            now = None if v.is_disposed else v.data_sync()
            if now != self.known.get(h, "unseen"):
                changed[h] = None if now is None else tensor_to_wire(v, h)["data"]  # None: the check disposed it
                self.known[h] = now
        return changed

    def _take(self, sync: object) -> None:
        if not isinstance(sync, dict):
            return
        for h, data in sync.items():
            v = self.variables.get(str(h))
            if v is None or v.is_disposed:
                continue
            if data is None:
                self.known[str(h)] = None
                continue
            values = floats_from_wire(data.get("data") if isinstance(data, dict) else None)
            if len(values) == v.size:
                given = tensor(values, v.shape)
                v.assign(given)
                given.dispose()
                self.known[str(h)] = values

    # -- the student's functions as ops ---------------------------------------------------------------

    def _differentiable(self, value: object, recipe: dict[str, object], leaves: list[Tensor], label: str, path: list[object]) -> object:
        if type(value) is Tensor and not value.is_disposed:
            return self.remote_tensor({**recipe, "pick": list(path)}, leaves, value, label)
        if type(value) in (tuple, list):
            assert isinstance(value, (tuple, list))
            items = [self._differentiable(v, recipe, leaves, label, [*path, i]) for i, v in enumerate(value)]
            return tuple(items) if type(value) is tuple else items
        return value

    def remote_tensor(self, recipe: dict[str, object], inputs: list[Tensor], value: Tensor, label: str) -> Tensor:
        """``value``, computed over there by ``recipe`` from ``inputs``, as the output of an op here whose VJP is computed over there too."""
        session = self
        first = [value]
        self._ops += 1
        name = f"student:{label or 'f'}"

        def f(*xs: Tensor) -> tuple[Tensor, Callable[[Tensor], list[Tensor | None]]]:
            session.last[name] = (recipe, list(xs))
            if first:
                v = first.pop()
            else:
                v = session._one(session.evaluate(recipe, list(xs)))
            vjp = {"vjp": recipe, "n": len(xs), "dy": len(xs)}

            def grad_fn(dy: Tensor) -> list[Tensor | None]:
                both = [*xs, dy]
                grads = session.evaluate(vjp, both)
                return [
                    None if g is None else session.remote_tensor({"item": vjp, "i": j}, both, g, f"d {label}")
                    for j, g in enumerate(grads)
                ]

            return v, grad_fn

        made = named_custom_grad(f, name)(*inputs)
        assert isinstance(made, Tensor)
        return made

    @staticmethod
    def _one(out: list[Tensor | None]) -> Tensor:
        if not out or out[0] is None:
            raise ChildGone("the student's function gave no tensor when it ran again")
        return out[0]

    def evaluate(self, recipe: object, leaves: Sequence[Tensor]) -> list[Tensor | None]:
        """What ``recipe`` computes over there from ``leaves`` (their values are sent): tensors, or None where there is no gradient."""
        reply = self.ask({"op": "eval", "recipe": recipe, "leaves": [tensor_to_wire(t, None) for t in leaves]})
        out = self.value(reply.get("ok"))
        if not isinstance(out, list) or not all(t is None or isinstance(t, Tensor) for t in out):
            raise ChildGone("the student's process answered a gradient with something else")
        return list(out)

    def culprit(self, op: str, order: int = 1) -> object:
        """What ``check_grads`` (of ``order``) names as the culprit over there, for the op ``op`` of this side at the inputs it last saw (or None)."""
        found = self.last.get(op)
        if found is None:
            return None
        recipe, xs = found
        reply = self.ask({"op": "culprit", "recipe": recipe, "leaves": [tensor_to_wire(t, None) for t in xs], "order": order})
        return self.value(reply.get("ok"))


class LoadFailed(Exception):
    """The student's file did not load (a syntax error, an exception at import): what it said, and a hint."""

    def __init__(self, details: list[str], hints: list[str]) -> None:
        super().__init__("\n".join(details))
        self.details: list[str] = details
        self.hints: list[str] = hints


class Submission(types.ModuleType):
    """The student's module as a check sees it: every attribute is asked of the student's process.

    Examples:
        >>> from microtape.classroom.proxy import LoopbackTransport, Session
        >>> m = Session(LoopbackTransport(), "ex.py").load("import microtape as mt\\nW = mt.variable([1.0, 2.0])\\n"
        ...                                                "def grow(w):\\n    w.assign_add(mt.tensor([1.0, 1.0]))\\n")
        >>> w = m.W
        >>> m.grow(w)
        >>> w.data_sync()
        [2.0, 3.0]
    """

    def __init__(self, session: Session, notes: list[str]) -> None:
        super().__init__("student")
        self.__dict__["__file__"] = session.file
        self.__dict__["__microtape_session__"] = session
        self.__dict__["__microtape_notes__"] = notes

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return session_of(self).get(None, name)

    def __setattr__(self, name: str, value: object) -> None:
        if name.startswith("__"):
            self.__dict__[name] = value
            return
        session_of(self).set(None, name, value)


def session_of(module: Submission) -> Session:
    """The session a ``Submission`` talks through."""
    session = module.__dict__["__microtape_session__"]
    assert isinstance(session, Session)
    return session


def notes_of(module: Submission) -> list[str]:
    """What loading a notebook did not run as written (magics, help lines), for the report."""
    notes = module.__dict__["__microtape_notes__"]
    return [str(n) for n in notes] if isinstance(notes, list) else []


def _tensors_in(value: object, found: list[Tensor] | None = None, depth: int = 0) -> list[Tensor]:
    found = [] if found is None else found
    if isinstance(value, Tensor):
        if not any(t is value for t in found) and not value.is_disposed:
            found.append(value)
    elif isinstance(value, (list, tuple)) and depth < 8:
        for v in value:
            _tensors_in(v, found, depth + 1)
    return found


@contextmanager
def grading(session: Session) -> Iterator[None]:
    """While a check runs: ``child_fn`` code the check calls runs in this session's process."""
    token = CURRENT.set(session)
    try:
        yield
    finally:
        CURRENT.reset(token)

