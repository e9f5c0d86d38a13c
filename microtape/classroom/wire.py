"""The channel between the grader and the process that runs a student's file, and how values cross it.

``proxy.py`` (the grader's side) and ``grade_child.py`` (the student's side) use it.
The two processes talk over a pair of pipes, one JSON message per frame (four bytes
of length, then the text); a frame over ``MAX_MESSAGE`` bytes, or one that is not a
JSON object, ends the conversation. What crosses is data: numbers, strings, lists,
tuples, dicts, tensors as their values and shape, microtape's own records (a
``check_grads`` report, a profile) field by field, and *references* to everything
else (a function, a student's object), which the other side can only ask about.
Nothing that crosses is a verdict: the grader decides, from the values.

Exact types survive the trip (``int`` stays ``int``, a subclass of ``float`` arrives
as a subclass named as the student named it), because the checks accept results by
exact type. Exceptions cross as their type's name, nearest builtin (or microtape)
class, message and the lines that say where in the student's file they were raised.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib
import json
import math
import os
import queue
import struct
import threading
import traceback
import types
from collections.abc import Callable
from typing import Final

from .. import errors
from ..errors import MicrotapeError
from ..engine.tensor import Tensor
from ..engine.variable import Variable
from ..book.notebooks import place

__all__ = [
    "MAX_MESSAGE",
    "Channel",
    "ChannelClosed",
    "ChannelError",
    "exception_lines",
    "from_wire",
    "record_from_wire",
    "to_wire",
]

MAX_MESSAGE: Final = 64 * 2**20
"""The largest frame either side accepts, in bytes."""

MAX_DEPTH: Final = 60
"""How deeply nested a value may be (deeper, or a list that holds itself, arrives as an opaque value)."""

_HEADER: Final = struct.Struct(">I")
Json = object
Ref = Callable[[object], dict[str, object]]
TensorCode = Callable[[Tensor], object]
Resolve = Callable[[dict[str, object]], object]


class ChannelClosed(Exception):
    """The other side is gone: the pipe ended or broke."""


class ChannelError(Exception):
    """The other side sent something that is not a message (too large, not JSON, not an object)."""


def _read_exactly(fd: int, n: int) -> bytes:
    chunks: list[bytes] = []
    while n > 0:
        try:
            chunk = os.read(fd, min(n, 2**20))
        except OSError as err:
            raise ChannelClosed(str(err)) from None
        if not chunk:
            raise ChannelClosed("end of the pipe")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> dict[str, object]:
    """Block until one whole message arrives on ``fd`` and return it."""
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    if size > MAX_MESSAGE:
        raise ChannelError(f"a message of {size} bytes, more than the {MAX_MESSAGE} allowed")
    try:
        message = json.loads(_read_exactly(fd, size).decode("utf-8"))
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
        raise ChannelError(f"a message that is not JSON ({type(err).__name__})") from None
    if not isinstance(message, dict):
        raise ChannelError(f"a message that is {type(message).__name__}, not an object")
    return message


def write_frame(fd: int, message: dict[str, object]) -> None:
    """Send one message on ``fd``."""
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if len(data) > MAX_MESSAGE:
        raise ChannelError(f"a message of {len(data)} bytes, more than the {MAX_MESSAGE} allowed")
    frame = _HEADER.pack(len(data)) + data
    view = memoryview(frame)
    while view:
        try:
            written = os.write(fd, view)
        except OSError as err:
            raise ChannelClosed(str(err)) from None
        view = view[written:]


class Channel:
    """The grader's end of the pipes to one child: send a message, wait for one (with a deadline).

    A thread reads the child's frames as they come, so waiting can stop at a
    deadline or when grading is stopped, on every system.

    Examples:
        >>> import os
        >>> from microtape.classroom.wire import Channel, write_frame
        >>> to_parent_r, to_parent_w = os.pipe()
        >>> to_child_r, to_child_w = os.pipe()
        >>> channel = Channel(to_parent_r, to_child_w)
        >>> write_frame(to_parent_w, {"id": 1, "ok": [1.0, "two"]})
        >>> channel.receive(timeout=5.0)
        {'id': 1, 'ok': [1.0, 'two']}
        >>> channel.close(); os.close(to_parent_w); os.close(to_child_r)
    """

    def __init__(self, read_fd: int, write_fd: int, owns: bool = True) -> None:
        self.read_fd: int = read_fd
        self.write_fd: int = write_fd
        self.owns: bool = owns
        self._inbox: queue.Queue[dict[str, object] | BaseException] = queue.Queue()
        self._reader = threading.Thread(target=self._read_all, name="microtape-grade-channel", daemon=True)
        self._reader.start()

    def _read_all(self) -> None:
        while True:
            try:
                self._inbox.put(read_frame(self.read_fd))
            except (ChannelClosed, ChannelError) as err:
                self._inbox.put(err)
                return

    def send(self, message: dict[str, object]) -> None:
        """Send ``message`` to the child (``ChannelClosed`` if it is gone)."""
        write_frame(self.write_fd, message)

    def receive(self, timeout: float) -> dict[str, object] | None:
        """The next message, or None when ``timeout`` seconds pass first; ``ChannelClosed``/``ChannelError`` when it ended."""
        try:
            item = self._inbox.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        if isinstance(item, BaseException):
            self._inbox.put(item)  # every later wait sees the end too
            raise item
        return item

    def join(self, timeout: float) -> None:
        """Wait until the reader thread has seen the end of the pipe (the other side is gone)."""
        self._reader.join(timeout)

    def close(self) -> None:
        """Close both pipes, if this channel owns them (the reader thread then ends)."""
        for fd in (self.write_fd, self.read_fd) if self.owns else ():
            try:
                os.close(fd)
            except OSError:
                pass


# -- values --------------------------------------------------------------------------------------

_PLAIN: Final = (int, float, str)
_CONTAINERS: Final[dict[type, str]] = {list: "list", tuple: "tuple", dict: "dict"}


def _finite_or_tagged(x: float) -> object:
    return x if math.isfinite(x) else {"$": "float", "v": repr(x)}


def tensor_to_wire(t: Tensor, handle: str | None) -> dict[str, object]:
    """A tensor as data: its values (empty once disposed), shape, what made it, and for a variable its flag and name."""
    data: dict[str, object] = {
        "$": "tensor", "shape": list(t.shape), "op": t._op, "disposed": t._data is None,
        "data": [] if t._data is None else [_finite_or_tagged(v) for v in t._data],
    }
    if type(t) is not Tensor and type(t) is not Variable:
        data["subclass"] = type(t).__name__
    if isinstance(t, Variable):
        data.update(variable=True, trainable=bool(t.trainable), name=str(t.name))
    if handle is not None:
        data["h"] = handle
    return data


def floats_from_wire(data: object) -> list[float]:
    """The values of a tensor as they came over the wire (NaN and the infinities tagged)."""
    if not isinstance(data, list):
        raise ChannelError("a tensor without a list of values")
    out: list[float] = []
    for v in data:
        if isinstance(v, dict) and v.get("$") == "float" and v.get("v") in ("nan", "inf", "-inf"):
            out.append(float(str(v["v"])))
        elif type(v) is float or (type(v) is int and not isinstance(v, bool)):
            out.append(float(v))
        else:
            raise ChannelError(f"a tensor value that is {type(v).__name__}, not a number")
    return out


def _builtin_base(value: object) -> type | None:
    for base in (bool, int, float, str, list, tuple, dict):
        if isinstance(value, base):
            return base
    return None


def to_wire(value: object, ref: Ref, tensor: TensorCode | None = None, depth: int = 0) -> object:
    """``value`` as JSON data; ``ref(obj)`` encodes what is not data (a function, an object) as a reference.

    ``tensor(t)`` encodes a tensor (by default ``tensor_to_wire``, without a handle).

    Examples:
        >>> from microtape.classroom.wire import to_wire
        >>> to_wire((1, 2.5, "a", None, [True]), ref=lambda obj: {"$": "ref"})
        {'$': 'tuple', 'v': [1, 2.5, 'a', None, [True]]}
        >>> to_wire(float("nan"), ref=lambda obj: {"$": "ref"})
        {'$': 'float', 'v': 'nan'}
    """
    if depth > MAX_DEPTH:
        return {"$": "opaque", "type": type(value).__name__, "why": "nested too deeply"}
    kind = type(value)
    if value is None or kind is bool or kind is str or kind is int:
        return value
    if kind is float:
        assert isinstance(value, float)
        return _finite_or_tagged(value)
    if isinstance(value, Tensor):
        return tensor_to_wire(value, None) if tensor is None else tensor(value)
    if kind in _CONTAINERS:
        return _container(value, _CONTAINERS[kind], ref, tensor, depth)
    base = _builtin_base(value)
    if base is not None and base is not bool:  # a subclass of a builtin: its value, and the name it was given
        plain: object = value
        if isinstance(value, int):
            plain = int(value)
        elif isinstance(value, float):
            plain = float(value)
        elif isinstance(value, str):
            plain = str(value)
        inner = to_wire(plain, ref, tensor, depth + 1) if base in _PLAIN else _container(value, base.__name__, ref, tensor, depth)
        return {"$": "sub", "base": base.__name__, "type": kind.__name__, "v": inner}
    if kind.__module__.startswith("microtape.") and not isinstance(value, (types.FunctionType, BaseException)) and not callable(value):
        return _record(value, ref, tensor, depth)
    return ref(value)


def _container(value: object, name: str, ref: Ref, tensor: TensorCode | None, depth: int) -> object:
    if name == "dict":
        assert isinstance(value, dict)
        pairs = [[to_wire(k, ref, tensor, depth + 1), to_wire(v, ref, tensor, depth + 1)] for k, v in value.items()]
        return {"$": "dict", "v": pairs}
    assert isinstance(value, (list, tuple))
    items = [to_wire(v, ref, tensor, depth + 1) for v in value]
    return items if name == "list" else {"$": name, "v": items}


def _record(value: object, ref: Ref, tensor: TensorCode | None, depth: int) -> object:
    """One of microtape's records (a dataclass, or an object of plain attributes) field by field."""
    cls = type(value)
    if dataclasses.is_dataclass(value):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    elif hasattr(value, "__dict__"):
        fields = dict(vars(value))
    else:
        return ref(value)
    return {
        "$": "record", "cls": f"{cls.__module__}:{cls.__qualname__}",
        "fields": {k: to_wire(v, ref, tensor, depth + 1) for k, v in fields.items()},
    }


def from_wire(data: object, resolve: Resolve, depth: int = 0) -> object:
    """The value ``data`` stands for; ``resolve`` makes tensors, references and records (each side its own way).

    Examples:
        >>> from microtape.classroom.wire import from_wire
        >>> from_wire({"$": "tuple", "v": [1, {"$": "float", "v": "-inf"}]}, resolve=lambda d: None)
        (1, -inf)
        >>> value = from_wire({"$": "sub", "base": "int", "type": "Anything", "v": 0}, resolve=lambda d: None)
        >>> type(value).__name__, isinstance(value, int), value
        ('Anything', True, 0)
    """
    if depth > MAX_DEPTH + 2:
        raise ChannelError("a value nested too deeply")
    if data is None or isinstance(data, (bool, int, str)):
        return data
    if isinstance(data, float):
        return data
    if isinstance(data, list):
        return [from_wire(v, resolve, depth + 1) for v in data]
    if not isinstance(data, dict):
        raise ChannelError(f"a value that is {type(data).__name__}")
    tag = data.get("$")
    if tag == "float":
        return floats_from_wire([data])[0]
    if tag == "tuple":
        items = data.get("v")
        return tuple(from_wire(v, resolve, depth + 1) for v in (items if isinstance(items, list) else []))
    if tag == "dict":
        pairs = data.get("v")
        out: dict[object, object] = {}
        for pair in pairs if isinstance(pairs, list) else []:
            if isinstance(pair, list) and len(pair) == 2:
                key = from_wire(pair[0], resolve, depth + 1)
                try:
                    out[key] = from_wire(pair[1], resolve, depth + 1)
                except TypeError:  # an unhashable key: keep the value under its text
                    out[repr(key)] = from_wire(pair[1], resolve, depth + 1)
        return out
    if tag == "sub":
        return _subclass_value(data, resolve, depth)
    return resolve(data)


_SUBCLASSES: dict[tuple[str, str], type] = {}
_SUBCLASS_LOCK = threading.Lock()


def subclass_named(base: type, name: str) -> type:
    """A subclass of ``base`` named ``name`` (made once): how a student's subclass of a builtin arrives."""
    key = (base.__qualname__, name)
    with _SUBCLASS_LOCK:
        if key not in _SUBCLASSES:
            _SUBCLASSES[key] = type(name if name.isidentifier() else "Subclass", (base,), {"__module__": "student"})
        return _SUBCLASSES[key]


def _subclass_value(data: dict[str, object], resolve: Resolve, depth: int) -> object:
    bases = {"int": int, "float": float, "str": str, "list": list, "tuple": tuple, "dict": dict}
    base = bases.get(str(data.get("base")))
    if base is None:
        raise ChannelError(f"a subclass of {data.get('base')!r}")
    inner = from_wire(data.get("v"), resolve, depth + 1)
    cls = subclass_named(base, str(data.get("type")))
    try:
        return cls(inner)
    except (TypeError, ValueError):
        raise ChannelError(f"a {base.__name__} subclass holding {type(inner).__name__}") from None


def record_from_wire(data: dict[str, object], resolve: Resolve, depth: int = 0) -> object:
    """One of microtape's records rebuilt from its fields (only classes of ``microtape``'s own modules).

    Examples:
        >>> from microtape.classroom.wire import record_from_wire, to_wire
        >>> from microtape.checking.numerical import GradCheckRow
        >>> row = GradCheckRow(0, (1,), (), 2.0, 2.5, 0.5, 0.2, "FAIL")
        >>> record_from_wire(to_wire(row, ref=lambda obj: {}), resolve=lambda d: None) == row
        True
    """
    module_name, _, qualname = str(data.get("cls", "")).partition(":")
    if not module_name.startswith("microtape.") or not qualname:
        raise ChannelError(f"a record of the class {data.get('cls')!r}, not one of microtape's")
    try:
        found: object = importlib.import_module(module_name)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        raise ChannelError(f"a record of the class {data.get('cls')!r}, which microtape does not have") from None
    if not isinstance(found, type):
        raise ChannelError(f"a record of {data.get('cls')!r}, which is not a class")
    raw = data.get("fields")
    fields = {k: from_wire(v, resolve, depth + 1) for k, v in (raw.items() if isinstance(raw, dict) else ())}
    obj: object = object.__new__(found)
    if dataclasses.is_dataclass(found):
        names = {f.name for f in dataclasses.fields(found)}
        for name, value in fields.items():
            if name in names:
                object.__setattr__(obj, name, value)  # frozen records too: rebuilt as they were
    elif hasattr(obj, "__dict__"):
        obj.__dict__.update(fields)
    return obj


# -- exceptions ---------------------------------------------------------------------------------


def _where(err: BaseException, file: str) -> str:
    """' (file.py:12 in f)' (or ' (file.ipynb, cell 3, line 2 in f)') for the innermost frame of the student's file, or ''."""
    if isinstance(err, SyntaxError) and err.filename == file and err.lineno is not None:
        return f" ({place(file, err.lineno)})"
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == file]
    if not frames:
        return ""
    f = frames[-1]
    return f" ({place(file, '?' if f.lineno is None else f.lineno)} in {f.name})"


def message_lines(err: BaseException, limit: int = 12) -> list[str]:
    """The text of ``err``, at most ``limit`` lines."""
    try:
        text = str(err) if not isinstance(err, SyntaxError) else (err.msg or "invalid syntax")
    except Exception:  # noqa: BLE001 - a student's __str__ may raise
        text = f"<{type(err).__name__} whose message cannot be shown>"
    lines = text.splitlines() or [""]
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more lines)"]
    return [line[:2000] for line in lines]


def exception_lines(err: BaseException, file: str) -> list[str]:
    """What a student's exception says: 'your code raised X (file.py:3 in f):' and its message.

    Examples:
        >>> from microtape.classroom.wire import exception_lines
        >>> exception_lines(ValueError("no"), "ex.py")
        ['the check raised ValueError:', '  no']
    """
    where = _where(err, file)
    origin = "your code" if where else "the check"
    lines = [f"{origin} raised {type(err).__name__}{where}:", *("  " + line for line in message_lines(err))]
    if isinstance(err, MemoryError):
        lines.append("  (the grader limits each file's memory; an allocation this large is a bug)")
    if isinstance(err, SystemExit):
        lines.append("  (sys.exit() or exit() stops a program; an exercise function returns instead)")
    return lines


def exception_to_wire(err: BaseException, file: str) -> dict[str, object]:
    """A student's exception as data: its type, its nearest builtin or microtape class, its text and where it was raised."""
    kind = type(err)
    base = next((c for c in kind.__mro__ if c.__module__ == "builtins" or c.__module__ == "microtape.errors"), BaseException)
    todo = isinstance(err, NotImplementedError)
    return {
        "type": kind.__name__, "base": f"{base.__module__}:{base.__name__}", "message": "\n".join(message_lines(err, 60)),
        "where": _where(err, file), "lines": exception_lines(err, file), "todo": todo,
    }


class StudentExit(BaseException):
    """``sys.exit``, ``KeyboardInterrupt`` and the like, raised by a student's code: reported, never obeyed."""


def exception_from_wire(data: object) -> BaseException:
    """The exception a student's code raised, rebuilt as an instance of its nearest builtin (or microtape) class.

    It carries ``student_lines`` (what to report) and ``student_where``.

    Examples:
        >>> from microtape.classroom.wire import exception_from_wire
        >>> err = exception_from_wire({"type": "MyError", "base": "builtins:ValueError", "message": "no",
        ...                            "where": " (ex.py:3 in f)", "lines": ["your code raised MyError (ex.py:3 in f):", "  no"]})
        >>> type(err).__name__, isinstance(err, ValueError), str(err), err.student_where
        ('MyError', True, 'no', ' (ex.py:3 in f)')
    """
    if not isinstance(data, dict):
        raise ChannelError("an exception that is not an object")
    module, _, name = str(data.get("base", "builtins:Exception")).partition(":")
    found = getattr(errors, name, None) if module == "microtape.errors" and name in errors.__all__ else (
        getattr(builtins, name, None) if module == "builtins" else None)
    cls: type[BaseException] = found if isinstance(found, type) and issubclass(found, BaseException) else Exception
    if not issubclass(cls, Exception):
        cls = StudentExit
    own = str(data.get("type", cls.__name__))
    if own != cls.__name__:
        made = subclass_named(cls, own)
        assert issubclass(made, BaseException)
        cls = made
    message = str(data.get("message", ""))
    err = cls.__new__(cls)
    assert isinstance(err, BaseException)
    BaseException.__init__(err, message)
    if isinstance(err, MicrotapeError):
        err.message, err.facts = message, {}  # what a MicrotapeError's constructor keeps
    lines = data.get("lines")
    err.student_lines = [str(line) for line in lines] if isinstance(lines, list) else [message]  # type: ignore[attr-defined]
    err.student_where = str(data.get("where", ""))  # type: ignore[attr-defined]
    err.student_todo = bool(data.get("todo"))  # type: ignore[attr-defined]
    return err
