"""The program ``mt.function`` traces: slots, the listing, and the compiled replay.

A trace is a list of *slots* in the order the trace met them: inputs,
constants, variable reads, op results, and the effects (``assign``,
``assign_add``, ``assign_sub``, an optimizer's update, and the library's own
effects: ``mt.print`` and ``check_numerics``, which run again at every
replay, in their place). Compiling it drops
what neither the results nor an effect need, reads a line that repeats an
earlier one (the same op, inputs and parameters) from the first, computes a
line whose inputs are all constants once, now, and writes the rest as one
Python function of straight-line code over flat lists (``r3 = _mul(r1, r2)``
for a product of two one-entry values, which the replay keeps as floats). Other
ops call the kernel ``specialise.py`` writes for their shapes, or else their
forward, on carriers made at trace time: tensors outside the arena whose list
is swapped in. Replaying it is one call of that function; its results become
tensors: one for each tensor the step made and returned or kept, so a tensor
returned twice is one tensor, an argument returned is the argument. The
listing shows every line the trace met, as the step ran it,
and marks a line the replay reads from an earlier one (``repeats %5``) or
computed while compiling (``folded``).
"""

from __future__ import annotations

import math
import operator
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..engine.formatting import format_number
from ..engine.primitive import Op
from ..engine.arena import TensorBase, new
from ..engine.shape import size_of
from ..engine.tensor import Tensor
from ..engine.types import Shape
from ..errors import N_, DisposedTensorError, explain
from .specialise import specialised

__all__ = ["Made", "Slot", "Trace", "compile_program"]

_EFFECTS = ("assign", "assign_add", "assign_sub", "update", "effect")
"""Slot kinds that are effects: always kept, run in their place."""

_INLINE2 = {"add", "sub", "mul"}
"""Binary ops whose float maths never raises: written inline when both shapes are equal."""
_INLINE1 = {"neg": "-{}", "tanh": "_tanh({})", "square": "{0} * {0}"}
"""Unary ops whose float maths never raises: written inline (on a one-entry slot, as a float)."""


@dataclass(frozen=True)
class Made:
    """A tensor a replay makes: the step made it and returned or kept it (``slot`` holds its values)."""

    slot: int
    shape: Shape
    op: str
    kept: bool


@dataclass(eq=False)
class Slot:
    """One line of a program: a value (input, const, read, op) or an effect (assign, update, effect)."""

    kind: str
    shape: Shape
    var: Any = None
    value: list[float] | None = None
    op: Op | None = None
    params: dict[str, object] = field(default_factory=dict)
    inputs: list[int] = field(default_factory=list)
    where: str = ""
    in_shapes: list[Shape] = field(default_factory=list)
    owner: Any = None
    apply: Callable[[Any, list[Any], list[list[float]]], None] | None = None
    variables: list[Any] = field(default_factory=list)
    label: str = ""


class Trace:
    """What a trace records and compiles: its slots, inputs and output structure, then the replay.

    ``function.py``'s ``Program`` is the listing it shows the reader.
    """

    def __init__(self, name: str) -> None:
        self.name: str = name
        self.slots: list[Slot] = []  # every line in the order the trace met them (also unused ones)
        self.inputs: list[int] = []
        self.output: object = None
        """The structure ``fn`` returned: ``("new", k)`` for ``made[k]``, ``("arg", i)``, ``("var", v)``..."""
        self.made: list[Made] = []
        self.keep_inputs: list[int] = []
        """Positions of the inputs the step ``keep``-ed: a replay keeps them too."""
        self.dispose_inputs: list[int] = []
        """Positions of the inputs the step disposed: a replay disposes them too."""
        self.check: Callable[[], int] = _no_guards
        """The guards' check (``guards.py``): -1 when every value the program depends on is unchanged."""
        self.guards: list[Any] = []
        self.captured: frozenset[int] = frozenset()
        """Ids of the tensors the step reads from outside (constants of the program)."""
        self.alias: tuple[int, ...] = ()
        """Which input positions held a captured tensor at the trace: a program is valid only for the same."""
        self._code: Callable[..., tuple[list[float], ...]] | None = None
        self._text: list[str] = []
        self._vars: list[weakref.ref[Any]] = []
        self._owners: list[weakref.ref[Any]] = []
        self._lock = threading.Lock()
        self._effects = False  # whether a replay keeps or disposes tensors besides making its results

    def add(self, slot: Slot) -> int:
        """Append a line; return its slot number."""
        self.slots.append(slot)
        return len(self.slots) - 1

    @property
    def lines(self) -> list[str]:
        """The listing, one line a primitive, after its header."""
        return list(self._text)

    def aliases(self, inputs: list[TensorBase]) -> bool:
        """Whether the inputs that are also tensors the step captured are those of the trace."""
        captured = self.captured
        return not captured or tuple(i for i, t in enumerate(inputs) if id(t) in captured) == self.alias

    def run(self, inputs: list[TensorBase], args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        """Replay on the inputs' lists; return the results as ``fn`` returned them."""
        code = self._code
        assert code is not None  # compile_program ran
        variables = [r() for r in self._vars]
        for v in variables:
            if v is None or v._data is None:
                raise DisposedTensorError(
                    explain(
                        N_('mt.function({0}): a variable its program uses was disposed.').format(self.name),
                        N_('A traced program reads and writes the variables it met while tracing.'),
                        N_('keep the variables alive while you call the function, or wrap a new function.'),
                    ),
                    op="function",
                )
        with self._lock:  # the kernels' carriers are shared: one replay of this trace at a time
            outs = code([t._data for t in inputs], variables, [r() for r in self._owners])
        made = [new(Tensor, data, m.shape, m.op) for data, m in zip(outs, self.made)]
        if self._effects:
            for t, m in zip(made, self.made):
                if m.kept:
                    t._kept = True
            for i in self.keep_inputs:
                inputs[i]._kept = True
        output: Any = self.output
        result = made[output[1]] if output[0] == "new" else _build(output, made, inputs, variables, args, kwargs)
        if self._effects:
            for i in self.dispose_inputs:
                inputs[i].dispose()  # type: ignore[attr-defined]  # every input is a Tensor
        return result


def _no_guards() -> int:
    return -1


def _build(spec: Any, made: list[Tensor], inputs: list[TensorBase], variables: list[Any],
           args: tuple[object, ...], kwargs: dict[str, object]) -> object:
    """The result as ``fn`` returned it, from what this replay made (``spec``: see ``Trace.output``)."""
    kind = spec[0]
    if kind == "new":
        return made[spec[1]]
    if kind == "arg":
        return inputs[spec[1]]
    if kind == "var":
        return variables[spec[1]]
    if kind == "py":
        return spec[1]  # an immutable Python value, the same at every call
    if kind == "obj":
        return spec[1]  # a tensor made before the call (a guard checks it is alive)
    if kind == "argobj":
        where, i = spec[1]
        return args[i] if where == "a" else kwargs[i]
    if kind == "gradmap":
        return spec[1]([(variables[j], _build(s, made, inputs, variables, args, kwargs)) for j, s in spec[2]])
    items = [_build(s, made, inputs, variables, args, kwargs) for s in spec[2]]
    if kind == "list":
        return items
    if kind == "tuple":
        return tuple(items)
    if kind == "namedtuple":
        return spec[1]._make(items)
    assert kind == "dict"
    return dict(zip(items[::2], items[1::2]))


def _variables_in(spec: Any, found: list[Any]) -> None:
    """The variables of an output structure (they join the program's variables)."""
    kind = spec[0]
    if kind == "var":
        found.append(spec[1])
    elif kind == "gradmap":
        found.extend(v for v, _ in spec[2])
        for _, s in spec[2]:
            _variables_in(s, found)
    elif kind in ("list", "tuple", "namedtuple", "dict"):
        for s in spec[2]:
            _variables_in(s, found)


def _respec(spec: Any, var: Callable[[Any], int]) -> object:
    """The output structure with each variable replaced by its index among the program's variables."""
    kind = spec[0]
    if kind == "var":
        return ("var", var(spec[1]))
    if kind == "gradmap":
        return ("gradmap", spec[1], [(var(v), _respec(s, var)) for v, s in spec[2]])
    if kind in ("list", "tuple", "namedtuple", "dict"):
        return (kind, spec[1], [_respec(s, var) for s in spec[2]])
    return spec


def _kernel(slot: Slot) -> Callable[..., list[float]]:
    """The op's forward on flat lists: carriers (tensors outside the arena, made now) get each list in turn."""
    op = slot.op
    assert op is not None
    carriers = []
    for s in slot.in_shapes:
        c = new(Tensor, [], s, "replay", arena=False)
        c._size = size_of(s)
        carriers.append(c)
    fwd = op.forward
    params = slot.params
    if op.n_inputs < 0:

        def many(*lists: list[float]) -> list[float]:
            for c, d in zip(carriers, lists):
                c._data = d
            return fwd(carriers, **params)[0]

        return many
    if len(carriers) == 1:
        c0 = carriers[0]

        def one(a: list[float]) -> list[float]:
            c0._data = a
            return fwd(c0, **params)[0]

        return one
    if len(carriers) == 2:
        c0, c1 = carriers

        def two(a: list[float], b: list[float]) -> list[float]:
            c0._data = a
            c1._data = b
            return fwd(c0, c1, **params)[0]

        return two

    def general(*lists: list[float]) -> list[float]:
        for c, d in zip(carriers, lists):
            c._data = d
        return fwd(*carriers, **params)[0]

    return general


def _repeated(slots: list[Slot]) -> dict[int, int]:
    """Op lines that repeat an earlier one (the same op, inputs and parameters): each maps to the first.

    Ops are pure, so the replay computes such a line once; a step that transposes
    one weight at every time step of a recurrent net transposes it once."""
    first: dict[tuple[str, tuple[int, ...], str], int] = {}
    alias: dict[int, int] = {}
    for i, sl in enumerate(slots):
        if sl.kind != "op" or sl.op is None:
            continue
        key = (sl.op.name, tuple(alias.get(j, j) for j in sl.inputs), repr(sorted(sl.params.items())))
        if key in first:
            alias[i] = first[key]
        else:
            first[key] = i
    return alias


def _live(program: Trace, results: list[int], alias: dict[int, int]) -> list[bool]:
    slots = program.slots
    live = [False] * len(slots)
    for s in results:
        live[s] = True
    for i in range(len(slots) - 1, -1, -1):
        sl = slots[i]
        if sl.kind in _EFFECTS:
            live[i] = True
        if live[i]:
            if i in alias:
                live[alias[i]] = True
            for j in sl.inputs:
                live[j] = True
    for s in program.inputs:
        live[s] = True
    return live


def _const_text(value: list[float] | None, shape: Shape) -> str:
    data = value or []
    if not shape and len(data) == 1:
        return format_number(data[0])
    if len(data) <= 4:
        return "[" + ", ".join(format_number(v) for v in data) + "]"
    return f"<{len(data)} values>"


def _line_of(where: str) -> str:
    _, _, line = where.rpartition(":")
    return f" line {line}" if line.isdigit() else ""


def compile_program(program: Trace) -> None:
    """Drop unused lines, number the rest, write the listing and the replay function."""
    slots = program.slots
    results = [m.slot for m in program.made]
    alias = _repeated(slots)
    live = _live(program, results, alias)
    pinned = set(results)  # lines whose list leaves the replay (and the lines they repeat): never folded
    for sl in slots:
        if sl.kind in _EFFECTS:
            pinned.update(sl.inputs)
    pinned.update([alias[s] for s in pinned if s in alias])
    known: dict[int, list[float]] = {}  # const lines and op lines folded at trace time: their values
    name: dict[int, str] = {}
    text: list[str] = []
    code: list[str] = ["def replay(A, V, O):"]
    env: dict[str, object] = {"_tanh": math.tanh, "_add": operator.add, "_sub": operator.sub, "_mul": operator.mul}
    var_index: dict[int, int] = {}
    floats: set[int] = set()
    owner_index: dict[int, int] = {}

    def var(v: Any) -> int:
        if id(v) not in var_index:
            var_index[id(v)] = len(program._vars)
            program._vars.append(weakref.ref(v))
        return var_index[id(v)]

    header: list[str] = []
    for pos, s in enumerate(program.inputs):
        if s not in name:
            name[s] = f"%{len(name)}"
            header.append(f"{name[s]}: {slots[s].shape}")
            code.append(f"    r{s} = A[{pos}]")
    for i, sl in enumerate(slots):
        if not live[i] or sl.kind == "input":
            continue
        ins = [alias.get(j, j) for j in sl.inputs]  # a repeated op line is read from its first
        args = [f"[r{j}]" if j in floats else f"r{j}" for j in ins]  # each input as a list
        shown = " ".join(name[j] for j in sl.inputs)
        if sl.kind in _EFFECTS:
            if sl.kind == "effect":
                assert sl.apply is not None
                env[f"E{i}"] = sl.apply
                code.append(f"    E{i}({', '.join(args)})")
                text.append(f"  {sl.label} {shown}{'  #' + _line_of(sl.where) if sl.where else ''}")
            elif sl.kind == "update":
                assert sl.apply is not None
                env[f"U{i}"] = sl.apply
                if id(sl.owner) not in owner_index:
                    owner_index[id(sl.owner)] = len(program._owners)
                    program._owners.append(weakref.ref(sl.owner))
                vs = ", ".join(f"V[{var(v)}]" for v in sl.variables)
                code.append(f"    U{i}(O[{owner_index[id(sl.owner)]}], [{vs}], [{', '.join(args)}])")
                pairs = " ".join(f"{v.name}={name[j]}" for v, j in zip(sl.variables, sl.inputs))
                text.append(f"  update {sl.label} {pairs}{'  #' + _line_of(sl.where) if sl.where else ''}")
            else:
                k = var(sl.var)
                if sl.kind == "assign":
                    code.append(f"    V[{k}]._data = list({args[0]})")
                else:
                    sign = "+" if sl.kind == "assign_add" else "-"
                    code.append(f"    V[{k}]._data = [a {sign} b for a, b in zip(V[{k}]._data, list({args[0]}))]")
                text.append(f"  {sl.kind} {sl.var.name} {shown}  #{_line_of(sl.where)}")
            continue
        name[i] = f"%{len(name)}"
        if sl.kind == "const":
            value = sl.value or []
            known[i] = value
            _constant(i, value, code, env, floats)
            text.append(f"  {name[i]} = const {_const_text(sl.value, sl.shape)}  # {sl.shape}")
        elif sl.kind == "read":
            code.append(f"    r{i} = V[{var(sl.var)}]._data")
            text.append(f"  {name[i]} = read {sl.var.name}  # {sl.shape}")
        else:
            op = sl.op
            assert op is not None
            if i in alias:  # the replay reads its first line instead
                note = f", repeats {name[alias[i]]}"
            elif i not in pinned and ins and all(j in known for j in ins):  # constants in: a constant out
                known[i] = _kernel(sl)(*[known[j] for j in ins])
                _constant(i, known[i], code, env, floats)
                note = ", folded"
            else:
                code.append(f"    r{i} = {_expression(i, sl, ins, args, env, floats)}")
                note = ""
            params = "".join(f" {k}={v!r}" for k, v in sl.params.items())
            text.append(f"  {name[i]} = {op.name} {shown}{params}  # {sl.shape}{_line_of(sl.where)}{note}")
    back = [alias.get(s, s) for s in results]
    code.append(f"    return ({''.join(f'[r{s}], ' if s in floats else f'r{s}, ' for s in back)})")
    shown_results = ", ".join(name[s] for s in dict.fromkeys(results))
    text.append(f"  return {shown_results}" if shown_results else "  return")
    program._text = [f"program {program.name}({', '.join(header)}):"] + text
    program.output = _respec(program.output, var)
    program._effects = bool(program.keep_inputs or program.dispose_inputs or any(m.kept for m in program.made))
    exec(compile("\n".join(code), f"<mt.function {program.name}>", "exec"), env)  # noqa: S102  # our own code
    program._code = env["replay"]  # type: ignore[assignment]
    # the trace's objects are no longer needed: keep what the listing and replay use
    for sl in slots:
        sl.var = None
        sl.owner = None
        sl.variables = []


def _constant(i: int, value: list[float], code: list[str], env: dict[str, object], floats: set[int]) -> None:
    if len(value) == 1:  # a one-entry slot is a float in the replay, not a list
        floats.add(i)
    env[f"K{i}"] = value[0] if len(value) == 1 else value
    code.append(f"    r{i} = K{i}")


def _expression(i: int, sl: Slot, ins: list[int], args: list[str], env: dict[str, object], floats: set[int]) -> str:
    """The right-hand side of one op's line: inline for the simple cases, else a kernel call.

    An inline op on one-entry slots works on floats (and its slot joins ``floats``):
    no list is made, which is what makes a scalar chain cheap. Other ops run the
    kernel ``specialise.py`` writes for their shapes, or their eager forward."""
    op = sl.op
    assert op is not None
    shapes = sl.in_shapes
    one = [f"r{j}" if j in floats else f"r{j}[0]" for j in ins]  # each input as a float
    if op.name == "reshape":  # the same list, as the eager op shares it (tensors are immutable)
        if ins[0] in floats:
            floats.add(i)
        return f"r{ins[0]}"
    if op.name in _INLINE2 and len(shapes) == 2 and shapes[0] == shapes[1] and not sl.params:
        if size_of(shapes[0]) == 1:
            floats.add(i)
            return f"_{op.name}({one[0]}, {one[1]})"  # the kernel's function: an inline `*` of two NaNs can give the other one
        return f"list(map(_{op.name}, {args[0]}, {args[1]}))"
    if op.name in _INLINE1 and len(shapes) == 1 and not sl.params:
        if size_of(shapes[0]) == 1:
            floats.add(i)
            return _INLINE1[op.name].format(one[0])
        return f"[{_INLINE1[op.name].format('v')} for v in {args[0]}]"
    eager = _kernel(sl)
    env[f"F{i}"] = specialised(op.name, sl.params, shapes, sl.shape, eager) or eager
    return f"F{i}({', '.join(args)})"
