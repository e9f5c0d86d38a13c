"""What a traced program depends on besides its inputs: cache keys by value, and guards.

A program is valid for arguments of the same *key*: ``key_of`` keys a value
by its structure and its value, never by where it lives in memory. Types,
tensors' shapes (a tensor inside an argument, at any depth, is an input of the
program), Python numbers by their bits (``-0.0`` is not ``0.0``; a NaN equals
the same NaN), containers, dataclasses and other objects by their fields,
functions by their code and closure, variables and optimizers by identity
(an id that is never reused).

It is also valid only while what the step read from outside is what it was
at the trace. As TorchDynamo does, each such value becomes a *guard*: a
source (a closure cell, a module global, an attribute chain through a
module or an optimizer) and the key of the value found there, checked before
every replay. ``collect`` finds the sources by reading the bytecode of the
traced function and of every function, method and class it reaches (not the
standard library's or microtape's own, nor installed packages'); the tracer
adds what it meets at run time (``function.py``: each variable's
``trainable`` flag, each captured tensor). ``compile_guards`` writes the
checks as one Python function, so a replay pays a few attribute reads.
"""

from __future__ import annotations

import dis
import enum
import functools
import itertools
import numbers
import operator
import os
import random
import struct
import sys
import sysconfig
import types
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..engine.arena import TensorBase
from ..engine.variable import Variable
from ..errors import N_, UnsupportedOperationError, explain
from ..language import tr

__all__ = [
    "Found", "Guard", "KEY_LIMIT", "MISSING", "collect", "compile_guards", "guard_for", "key_of", "key_of_argument", "short",
]

KEY_LIMIT: Final = 10_000
"""The most Python values a key checked at every call may visit: a bigger structure should be a tensor
(a list or dict of numbers, strings and tuples of them is checked faster, by identity, and may be bigger)."""
_TRACE_LIMIT: Final = 1_000_000
"""The most Python values keying may visit at a trace."""

MISSING: Final = type("Missing", (), {"__repr__": lambda self: "<missing>"})()
"""What a guard reads where there is nothing (an empty cell, a name not in the globals)."""

_pack = struct.Struct("<d").pack
_SIMPLE: Final = frozenset({int, str, bool, bytes, type(None)})
_HERE: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the microtape package
_NOT_WALKED: Final[tuple[str, ...]] = tuple(
    {os.path.abspath(path) + os.sep for path in (sysconfig.get_paths().get(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")) if path}
    | {_HERE + os.sep}
)
"""Code under these folders is not read for guards: the standard library, installed packages, microtape."""


# -- identity that is never reused ---------------------------------------------

_TOKENS: dict[int, tuple[Callable[[], object], int]] = {}
_next_token = itertools.count(1).__next__


def _token(obj: object) -> int:
    """A number for ``obj`` that no other object ever gets (``id()`` is reused after an object dies)."""
    i = id(obj)
    entry = _TOKENS.get(i)
    if entry is not None and entry[0]() is obj:
        return entry[1]
    ref: Callable[[], object]
    try:
        ref = weakref.ref(obj, functools.partial(_forget, i))
    except TypeError:  # not weakly referable: held for good, so that its id stays its own
        ref = functools.partial(operator.itemgetter(0), (obj,))
    n = _next_token()
    _TOKENS[i] = (ref, n)
    return n


def _forget(i: int, ref: weakref.ref[Any]) -> None:
    entry = _TOKENS.get(i)
    if entry is not None and entry[0] is ref:
        del _TOKENS[i]


# -- keys ---------------------------------------------------------------------


@dataclass
class Found:
    """What keying met on the way: functions and classes to read for guards, captured tensors."""

    functions: list[Any] = field(default_factory=list)
    arg_functions: list[Any] = field(default_factory=list)
    classes: list[type] = field(default_factory=list)
    tensors: list[TensorBase] = field(default_factory=list)


class _TooBig(Exception):
    pass


class _TensorInSet(Exception):
    pass


def _is_user_code(code: types.CodeType) -> bool:
    name = code.co_filename
    if name.startswith("<frozen"):
        return False
    if name.startswith("<"):
        return True  # a doctest, exec'd or typed-in code: the user's
    return not os.path.abspath(name).startswith(_NOT_WALKED)


def _is_library(t: type) -> bool:
    module = getattr(t, "__module__", "") or ""
    return module == "microtape" or module.startswith("microtape.")


def _is_user_class(c: type) -> bool:
    module = getattr(c, "__module__", "") or ""
    if module in ("builtins", "abc", "typing") or _is_library(c):
        return False
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    if path is None:
        return module == "__main__" or mod is None
    return not os.path.abspath(path).startswith(_NOT_WALKED)


class _Keyer:
    """One key computation: ``inputs`` collects the tensors of arguments (None: a guard's value,
    whose tensors are constants, keyed by identity); ``found`` what the walk should read."""

    __slots__ = ("inputs", "found", "left", "active", "mutable")

    def __init__(self, inputs: list[TensorBase] | None, found: Found | None, limit: int = KEY_LIMIT) -> None:
        self.inputs = inputs
        self.found = found
        self.left = limit
        self.active: set[int] = set()
        self.mutable = False
        """Whether the key went through something that can change while it lives (a list, a field)."""

    def key(self, v: object) -> object:
        t = type(v)
        if t is float:
            return (float, _pack(v))
        if t in _SIMPLE:
            return (t, v)
        self.left -= 1
        if self.left < 0:
            raise _TooBig
        if isinstance(v, TensorBase):
            return self._tensor(v)
        if t is tuple or t is list or t is dict or t is set or t is frozenset:
            return self._container(v)
        i = id(v)
        if i in self.active:
            return ("cycle",)
        self.active.add(i)
        try:
            return self._other(v, t)
        finally:
            self.active.discard(i)

    def _tensor(self, v: TensorBase) -> object:
        self.mutable = True  # a tensor can be disposed, a variable made untrainable
        if isinstance(v, Variable) or v._op == "variable":
            return ("V", v.id, v._trainable, v._data is not None)
        if self.inputs is not None:
            if v._data is None or v._disposed is not None:
                return ("D", v.shape)  # disposed: not an input (a step that reads it raises, as eagerly)
            self.inputs.append(v)
            return ("T", v.shape)
        if self.found is not None:
            self.found.tensors.append(v)
        return ("C", v, v._disposed is None)  # a constant of the program: this tensor, alive

    def _container(self, v: Any) -> object:
        i = id(v)
        if i in self.active:
            return ("cycle",)
        self.active.add(i)
        try:
            t = type(v)
            if t is not tuple and t is not frozenset:
                self.mutable = True
            if t is dict:
                return (dict, tuple((self.key(k), self.key(x)) for k, x in v.items()))
            if t is set or t is frozenset:
                if self.inputs is not None and any(isinstance(x, TensorBase) for x in v):
                    raise _TensorInSet
                return (t, frozenset(self.key(x) for x in v))
            return (t, tuple([self.key(x) for x in v]))
        finally:
            self.active.discard(i)

    def _class(self, c: type) -> object:
        if not _is_user_class(c):
            return c
        self.mutable = True  # its class attributes can be set
        if self.found is not None:
            self.found.classes.append(c)
        data: list[tuple[str, object]] = []
        for base in c.__mro__:
            if base is object or not _is_user_class(base):
                continue
            for name, value in list(vars(base).items()):
                if name.startswith("__"):
                    continue
                if callable(value) or hasattr(type(value), "__get__"):  # a method, a property, a slot: which one
                    data.append((name, ("id", _token(value))))
                else:
                    data.append((name, self.key(value)))
        return (_token(c), tuple(data))

    def _other(self, v: Any, t: type) -> object:
        if isinstance(v, float):
            return (self._class(t), _pack(v))
        if isinstance(v, enum.Enum):
            return (self._class(t), v.name)
        if isinstance(v, int):
            return (self._class(t), int(v))
        if isinstance(v, complex):
            return (self._class(t), _pack(v.real), _pack(v.imag))
        if isinstance(v, tuple):  # a named tuple (VariableGrads) or another tuple subclass
            return (self._class(t), tuple([self.key(x) for x in v]), self._state(v))
        if isinstance(v, (list, dict, set, frozenset)):  # subclasses: the items, and the fields
            items = self.key(dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else frozenset(v))
            extra = (self.key(getattr(v, "default_factory")),) if hasattr(v, "default_factory") else ()
            return (self._class(t), items, extra, self._state(v))
        if isinstance(v, types.ModuleType):
            return ("M", v)
        if isinstance(v, types.FunctionType):
            return self._function(v)
        if isinstance(v, types.MethodType):
            return ("B", self.key(v.__self__), self.key(v.__func__))
        if isinstance(v, types.BuiltinFunctionType):
            owner = getattr(v, "__self__", None)
            if owner is None or isinstance(owner, types.ModuleType):
                return ("I", _token(v))
            return ("BM", self.key(owner), v.__name__)
        if isinstance(v, functools.partial):
            return ("P", self.key(v.func), self.key(v.args), self.key(v.keywords))
        if isinstance(v, type):
            return ("K", self._class(v))
        state = _generator_state(v)
        if state is not None:  # a random number generator: its state, so that a draw is seen
            self.mutable = True
            return ("R", _token(v), self.key(state))
        tobytes = getattr(v, "tobytes", None)
        if callable(tobytes) and hasattr(v, "shape") and hasattr(v, "dtype"):  # NumPy's arrays and scalars, as bytes
            self.mutable = True
            return ("A", self._class(t), tuple(v.shape), str(v.dtype), tobytes())
        if isinstance(v, numbers.Number) or hasattr(t, "__index__") or hasattr(t, "__float__"):
            number = _number(v)
            if number is not None:
                return (self._class(t), number)
        if _is_user_class(t) or t is types.SimpleNamespace or (_is_library(t) and isinstance(v, Mapping)):
            self.mutable = True
            return ("O", self._class(t), self._state(v))  # by its fields (a GradMap: its gradients)
        return ("X", _token(v))  # an optimizer, a monitor, a file, a lock, a generator: by identity only

    def _state(self, v: object) -> object:
        """The fields of an object: its ``__dict__`` and its slots."""
        parts: list[object] = []
        d = getattr(v, "__dict__", None)
        if isinstance(d, dict):
            parts.append(self.key(dict(d)))
        slots = [s for c in type(v).__mro__ for s in _slots_of(c)]
        if slots:
            parts.append(tuple((s, self.key(getattr(v, s, MISSING))) for s in slots))
        return tuple(parts)

    def _function(self, f: types.FunctionType) -> object:
        if not _is_user_code(f.__code__):
            return ("F", _token(f))
        if self.inputs is None:  # a guard's value: by identity, its cells are guards of their own
            if self.found is not None:
                self.found.functions.append(f)
            return ("F", _token(f))
        self.mutable = True
        if self.found is not None:  # an argument: by its code and what it closes over
            self.found.arg_functions.append(f)
        cells = tuple(self.key(_cell(c)) for c in f.__closure__ or ())
        return ("F", f.__code__, self.key(f.__defaults__), self.key(f.__kwdefaults__), cells)


def _slots_of(c: type) -> tuple[str, ...]:
    s = vars(c).get("__slots__", ())
    names = (s,) if isinstance(s, str) else tuple(s)
    return tuple(n for n in names if n not in ("__dict__", "__weakref__"))


def _number(v: Any) -> object:
    try:
        return ("index", operator.index(v))
    except (TypeError, ValueError, OverflowError, ArithmeticError, AttributeError):
        pass
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError, ArithmeticError, AttributeError):
        return None
    try:
        same = v if hash(v) is not None and v == v else None
    except (TypeError, ValueError, ArithmeticError):
        same = None
    return ("float", _pack(f), same)


def _cell(c: Any) -> object:
    try:
        return c.cell_contents
    except ValueError:  # an empty cell (a name assigned later)
        return MISSING


def key_of(v: object, inputs: list[TensorBase] | None = None, found: Found | None = None) -> object:
    """The key of ``v``: equal for values a program treats alike (``inputs`` collects an argument's tensors).

    Examples:
        >>> from microtape.replay.guards import key_of
        >>> key_of(0.0) == key_of(-0.0), key_of(float("nan")) == key_of(float("nan"))
        (False, True)
        >>> inputs = []
        >>> key_of({"x": mt.tensor([1.0, 2.0]), "k": 3}, inputs), len(inputs)
        ((<class 'dict'>, (((<class 'str'>, 'x'), ('T', (2,))), ((<class 'str'>, 'k'), (<class 'int'>, 3)))), 1)
    """
    return _Keyer(inputs, found).key(v)


def key_of_argument(v: object, inputs: list[TensorBase], what: str, name: str) -> object:
    """``key_of`` for an argument, with the refusals a caller can act on."""
    try:
        return _Keyer(inputs, None).key(v)
    except _TooBig:
        raise _too_big(name, what, N_('pass the data as a tensor: step(mt.tensor(data))')) from None
    except _TensorInSet:
        raise UnsupportedOperationError(
            explain(
                N_('mt.function({0}): {1} is a set holding tensors.').format(name, what),
                N_("A set has no order, so its tensors cannot be the program's inputs in a fixed order."),
                N_('pass a list or a tuple of the tensors instead: step([a, b])'),
            ),
            op="function",
        ) from None


def _too_big(name: str, what: str, hint: str) -> UnsupportedOperationError:
    return UnsupportedOperationError(
        explain(
            N_('mt.function({0}): {1} holds more than {2} Python values.').format(name, what, f'{KEY_LIMIT:,}'),
            N_('mt.function checks the Python values a program depends on at every call; a structure this big would cost more to check than the program saves.'),
            hint,
        ),
        op="function",
    )


def short(v: object) -> str:
    """A value as a guard's message shows it: short, with a float's sign and a tensor's id."""
    if isinstance(v, TensorBase):
        return f"Tensor#{v.id}" + (" (disposed)" if v._disposed is not None else "")
    if isinstance(v, float):
        return repr(v)
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


# -- guards -------------------------------------------------------------------


@dataclass(eq=False)
class Guard:
    """One value a program depends on: where to read it, and what it was at the trace.

    ``expr`` reads the value from ``source`` (a cell, a globals dict, the
    traced function, a variable's weak reference) in the check function;
    ``kind`` says how it is compared: ``stable`` (the same object, else an
    equal key), ``key`` (an equal key), ``tensor`` (the same tensor, alive),
    ``variable`` (the same variable, alive, the same ``trainable``).
    """

    what: str
    expr: str
    source: object
    value: object
    key: object = None
    kind: str = "key"
    flag: bool = True
    name: str = ""
    shown: str = ""
    """The value at the trace, as a message shows it (written then: a list may change later)."""

    def reason(self) -> str:
        """Why this guard fails now, in a sentence."""
        try:
            now = _read(self)
        except Exception as err:  # noqa: BLE001 - what reading it raised is the reason
            return N_('{0} can no longer be read ({1})').format(self.what, type(err).__name__)
        was = self.value() if self.kind == "variable" and isinstance(self.value, weakref.ref) else self.value
        if self.kind == "variable" and isinstance(now, Variable) and now is was:
            if now._data is None:
                return N_('{0} was disposed').format(self.what)
            return N_('the trainable flag of {0} changed from {1} to {2}').format(self.what, self.flag, now._trainable)
        if self.kind == "tensor" and now is was and isinstance(now, TensorBase):
            return N_('{0} was disposed').format(self.what)
        return N_('{0} changed: {1} at the trace, {2} now').format(self.what, self.shown or short(was), short(now))


def _read(g: Guard) -> object:
    env = {"S": g.source, "N": g.name, "M": MISSING}
    return eval(g.expr.format(s="S", n="N"), env)  # noqa: S307  # our own expression


def compile_guards(guards: list[Guard]) -> Callable[[], int]:
    """One function that checks every guard: -1 when all hold, else the index of the first that fails.

    Examples:
        >>> from microtape.replay.guards import collect, compile_guards
        >>> k = 2.0
        >>> def f(x):
        ...     return x * k
        >>> guards = collect(f)
        >>> [g.what for g in guards]
        ["the global 'k' of f"]
        >>> compile_guards(guards)()
        -1
    """
    env: dict[str, object] = {"M": MISSING, "K": _guard_key, "SAME": _same}
    lines = ["def check():", "    g = 0", "    try:"]
    for i, g in enumerate(guards):
        env[f"S{i}"] = g.source
        env[f"O{i}"] = g.value
        env[f"K{i}"] = g.key
        env[f"T{i}"] = g.flag
        env[f"N{i}"] = g.name
        lines.append(f"        g = {i}")
        lines.append(f"        v = {g.expr.format(s=f'S{i}', n=f'N{i}')}")
        if g.kind == "stable":
            lines.append(f"        if v is not O{i} and K(v) != K{i}: return {i}")
        elif g.kind == "tensor":
            lines.append(f"        if v is not O{i} or v._disposed is not None: return {i}")
        elif g.kind == "variable":
            lines.append(f"        if v is not O{i}() or v._trainable is not T{i} or v._data is None: return {i}")
        elif g.kind == "snapshot":
            lines.append(f"        if not SAME(v, O{i}) and K(v) != K{i}: return {i}")
        elif g.kind == "alive":
            lines.append(f"        if v is None: return {i}")
        else:
            lines.append(f"        if K(v) != K{i}: return {i}")
    if not guards:
        return _nothing_to_check
    lines += ["    except Exception:", "        return g", "    return -1"]
    exec(compile("\n".join(lines), "<mt.function guards>", "exec"), env)  # noqa: S102  # our own code
    return env["check"]  # type: ignore[return-value]  # the function just defined


def _nothing_to_check() -> int:
    return -1


def _guard_key(v: object) -> object:
    try:
        return _Keyer(None, None, _TRACE_LIMIT).key(v)
    except _TooBig:
        return MISSING  # never equal to a key: the guard fails and the call traces (and refuses) again


def guard_for(what: str, expr: str, source: object, value: object, found: Found, name: str = "") -> Guard:
    """A guard on ``value``, read by ``expr`` from ``source``, of the kind its value needs."""
    shown = short(value)
    if isinstance(value, Variable):
        return Guard(what, expr, source, weakref.ref(value), kind="variable", flag=value._trainable, name=name, shown=shown)
    if isinstance(value, TensorBase) and value._op != "variable":
        found.tensors.append(value)
        return Guard(what, expr, source, value, kind="tensor", name=name, shown=shown)
    keyer = _Keyer(None, found, _TRACE_LIMIT)
    key = keyer.key(value)
    if not keyer.mutable:
        return Guard(what, expr, source, value, key, "stable", name=name, shown=shown)
    snapshot = _snapshot(value)
    if snapshot is not None:
        return Guard(what, expr, source, snapshot, key, "snapshot", name=name, shown=shown)
    if _TRACE_LIMIT - keyer.left > KEY_LIMIT:
        raise _TooBig
    return Guard(what, expr, source, value, key, "key", name=name, shown=shown)


def _snapshot(value: Any) -> tuple[type, tuple[object, ...], tuple[TensorBase, ...]] | None:
    """For a list, tuple or dict of values that cannot change (numbers, strings, tuples of them, functions,
    tensors): its items, so that a check compares them by identity, fast; None for anything else."""
    t = type(value)
    items: tuple[object, ...]
    if t is list or t is tuple:
        items = tuple(value)
    elif t is dict:
        items = (*value, *value.values())
    else:
        return None
    tensors = []
    for x in items:
        if isinstance(x, TensorBase):
            if isinstance(x, Variable) or x._op == "variable":
                return None
            tensors.append(x)
            continue
        keyer = _Keyer(None, None, _TRACE_LIMIT)
        keyer.key(x)
        if keyer.mutable:
            return None
    return (t, items, tuple(tensors))


def _same(v: Any, snapshot: tuple[type, tuple[object, ...], tuple[TensorBase, ...]]) -> bool:
    """Whether ``v`` still holds the very items of ``snapshot``, and its tensors are alive."""
    t, items, tensors = snapshot
    if type(v) is not t:
        return False
    held: Any = v  # a dict, list or tuple (mypy narrows v by the check above)
    now = (*held, *held.values()) if t is dict else held
    return len(now) == len(items) and all(map(operator.is_, now, items)) and all(x._disposed is None for x in tensors)


# -- finding the sources: the bytecode of what the step reaches ----------------

_ROOTS: Final = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"})
_CELL_ROOTS: Final = frozenset({"LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"})
_ATTRS: Final = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_STORES: Final = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF"})
_LIBRARY_CODE: Final = _is_user_code.__code__
_WALK_LIMIT: Final = 2_000
"""The most code objects ``collect`` reads for one trace."""


@dataclass(frozen=True)
class _Reads:
    """What one code object reads: globals, free variables, attribute chains from them, nested code."""

    globals: tuple[str, ...]
    cells: tuple[str, ...]
    chains: tuple[tuple[str, str, tuple[str, ...]], ...]  # ("g" or "c", root name, attributes)
    imports: tuple[tuple[str, str], ...]  # (module, name) of `from module import name`
    nested: tuple[types.CodeType, ...]


@functools.lru_cache(maxsize=4096)
def _reads(code: types.CodeType) -> _Reads:
    names: dict[str, None] = {}
    cells: dict[str, None] = {}
    chains: dict[tuple[str, str, tuple[str, ...]], None] = {}
    imports: dict[tuple[str, str], None] = {}
    root: tuple[str, str] | None = None
    attrs: list[str] = []
    module = ""

    def close() -> None:
        if root is not None and attrs:
            chains[(root[0], root[1], tuple(attrs))] = None

    for ins in dis.get_instructions(code):
        op = ins.opname
        if op in _ATTRS and root is not None:
            attrs.append(str(ins.argval))
            continue
        close()
        root, attrs = None, []
        if op in _ROOTS:
            names[str(ins.argval)] = None
            root = ("g", str(ins.argval))
        elif op in _STORES:  # written by the step: guarded too, so that a trace sees it changed
            (names if "GLOBAL" in op else cells if ins.argval in code.co_freevars else {})[str(ins.argval)] = None
        elif op in _CELL_ROOTS and ins.argval in code.co_freevars:
            cells[str(ins.argval)] = None
            root = ("c", str(ins.argval))
        elif op == "IMPORT_NAME":
            module = str(ins.argval)
        elif op == "IMPORT_FROM" and module:
            imports[(module, str(ins.argval))] = None
    close()
    nested = tuple(c for c in code.co_consts if isinstance(c, types.CodeType))
    return _Reads(tuple(names), tuple(cells), tuple(chains), tuple(imports), nested)


class _Walk:
    """Reads code for sources and makes a guard for each, until nothing new is found."""

    def __init__(self) -> None:
        self.guards: list[Guard] = []
        self.found = Found()
        self.seen: set[object] = set()
        self.codes = 0
        self.complete = True

    def add(self, mark: object, what: str, expr: str, source: object, value: object, name: str = "") -> None:
        if mark in self.seen:
            return
        self.seen.add(mark)
        self.guards.append(guard_for(what, expr, source, value, self.found, name))

    def function(self, f: types.FunctionType, owner: str, cells: bool = True) -> None:
        if ("f", id(f), cells) in self.seen or not _is_user_code(f.__code__):
            return
        self.seen.add(("f", id(f), cells))
        env = dict(zip(f.__code__.co_freevars, f.__closure__ or ()))
        self.code(f.__code__, f.__globals__, env if cells else {}, owner or f.__qualname__)

    def code(self, code: types.CodeType, globs: dict[str, Any], env: dict[str, Any], owner: str) -> None:
        if self.codes >= _WALK_LIMIT:
            self.complete = False
            return
        self.codes += 1
        reads = _reads(code)
        for name in reads.cells:
            if name in env:
                cell = env[name]
                self.add(("cell", id(cell)), N_('the closure variable {0} of {1}').format(repr(name), owner), "{s}.cell_contents",
                         cell, _cell(cell))
        for name in reads.globals:
            self.add(("global", id(globs), name), N_('the global {0} of {1}').format(repr(name), owner), "{s}.get({n}, M)", globs,
                     globs.get(name, MISSING), name)
        for module, name in reads.imports:
            mod = sys.modules.get(module)
            if mod is not None and not _is_library(type(mod)) and not module.startswith("microtape"):
                self.add(("import", module, name), N_("the module attribute '{0}.{1}' ({2})").format(module, name, repr(name)),
                         "getattr({s}, {n}, M)", mod, getattr(mod, name, MISSING), name)
        for kind, name, attrs in reads.chains:
            self.chain(kind, name, attrs, globs, env, owner)
        for inner in reads.nested:
            self.code(inner, globs, {n: env[n] for n in inner.co_freevars if n in env}, owner)

    def chain(self, kind: str, name: str, attrs: tuple[str, ...], globs: dict[str, Any], env: dict[str, Any],
              owner: str) -> None:
        """``mod.attr`` or ``opt.learning_rate``: through modules and library objects, guard the first other value."""
        if kind == "c":
            if name not in env:
                return
            source: object = env[name]
            value = _cell(source)
            expr = "{s}.cell_contents"
        else:
            source, value, expr = globs, globs.get(name, MISSING), "{s}.get({n}, M)"
        if isinstance(value, types.ModuleType) and value.__name__.partition(".")[0] == "microtape":
            return  # the library's own API: not guarded
        path = name
        for attr in attrs:
            through = isinstance(value, types.ModuleType) or (
                _is_library(type(value)) and not isinstance(value, (TensorBase, Mapping))
            )
            if not through:
                break
            library = not isinstance(value, types.ModuleType)
            value = getattr(value, attr, MISSING)
            expr += f".{attr}"
            path += f".{attr}"
            if callable(value) and not _draws(value) and (library or _is_library(type(value)) or not _is_user_code(
                    getattr(value, "__code__", _LIBRARY_CODE))):
                return  # a method of an optimizer, a function of microtape or of the standard library
            mark = ("chain", id(source), name, path)
            self.add(mark, N_("the attribute '{0}' read by {1}").format(path, owner), expr, source, value, name)
            if isinstance(value, types.ModuleType):
                continue
            break

    def drain(self) -> None:
        """Read every function and class that keying met, and what they lead to."""
        done: set[int] = set()
        while True:
            f = self.found
            todo: list[tuple[str, Any]] = [("g", x) for x in f.functions if id(x) not in done]
            todo += [("a", x) for x in f.arg_functions if id(x) not in done]
            todo += [("k", c) for c in f.classes if id(c) not in done]
            if not todo:
                return
            for kind, x in todo:
                done.add(id(x))
                if kind == "k":
                    for member in _methods(x):
                        self.function(member, member.__qualname__)
                else:
                    self.function(x, x.__qualname__, cells=(kind == "g"))


def _draws(f: object) -> bool:
    """Whether ``f`` is a method of a random number generator (``random.random``): its state is guarded."""
    owner = getattr(f, "__self__", None)
    return owner is not None and _generator_state(owner) is not None


def _generator_state(v: object) -> object:
    """The state of a random number generator (Python's, or NumPy's by duck typing), else None."""
    if isinstance(v, random.Random):
        return v.getstate()
    module = type(v).__module__ or ""
    if module.startswith("numpy.random"):
        get_state = getattr(v, "get_state", None)
        if callable(get_state):
            return get_state()
        bits = getattr(v, "bit_generator", None)
        if bits is not None:
            return getattr(bits, "state", None)
    return None


def _methods(c: type) -> Iterator[types.FunctionType]:
    for base in c.__mro__:
        if base is object or not _is_user_class(base):
            continue
        for value in list(vars(base).values()):
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                for part in (value.fget, value.fset):
                    if isinstance(part, types.FunctionType):
                        yield part
            elif isinstance(value, types.FunctionType):
                yield value


def collect(fn: object, also: Sequence[types.FunctionType] = ()) -> list[Guard]:
    """The guards of a trace of ``fn``: every source its code (and the code it reaches) reads.

    ``also`` are functions passed as arguments: keyed by their code and
    closure, so only the globals they read are guarded here.

    Raises :class:`~microtape.UnsupportedOperationError` when a value is too
    big to check at every call.

    Examples:
        >>> from microtape.replay.guards import collect
        >>> scale, w = 2.0, mt.variable(mt.scalar(1.0), name="w_collect")
        >>> def step(x):
        ...     return x * scale * w
        >>> [(g.what, g.kind) for g in collect(step)]
        [("the global 'scale' of step", 'stable'), ("the global 'w' of step", 'variable')]
    """
    walk = _Walk()
    name = getattr(fn, "__qualname__", type(fn).__name__)
    try:
        if isinstance(fn, types.FunctionType):
            if fn.__defaults__ is not None or fn.__kwdefaults__ is not None:
                walk.add("defaults", N_('the default arguments of {0}').format(name), "({s}.__defaults__, {s}.__kwdefaults__)", fn,
                         (fn.__defaults__, fn.__kwdefaults__))
            walk.function(fn, name)
        elif isinstance(fn, types.MethodType):
            walk.add("self", N_('the object of the method {0}').format(name), "{s}.__self__", fn, fn.__self__)
            if isinstance(fn.__func__, types.FunctionType):
                walk.function(fn.__func__, name)
        else:  # a partial, a callable object: its whole state
            walk.add("callable", N_('the callable {0}').format(name), "{s}", fn, fn)
        walk.found.arg_functions.extend(also)
        walk.drain()
    except _TooBig:
        raise _too_big(name, N_('a value the function reads from outside (a closure variable, a global)'),
                       N_('make the data a tensor outside the function: data = mt.tensor(data)')) from None
    if not walk.complete:
        import warnings

        warnings.warn(
            tr(N_("mt.function({0}): the traced code reaches more than {1} functions; "
                  "only the first ones are read for guards.")).format(name, _WALK_LIMIT),
            RuntimeWarning,
            stacklevel=4,
        )
    return walk.guards
