"""What to write instead: messages for habits brought from PyTorch and NumPy.

``Tensor`` sends the attributes it does not have
(``t.backward()``, ``t.grad``, ``t.numpy()``: one property each, made by
``missing()``) and the operations it does not support (``len(t)``,
``t > 0``, ``t[0]``, ``for x in t``) here, and raises what these functions
return; so does an assignment to any of its properties (``t.shape = (2, 2)``,
``t.requires_grad = True``: ``read_only()`` gives each a setter that
raises). Each message names the habit, says what microtape does instead and
ends with a hint. In hints, ``t`` is the tensor in question, as in the
message. ``value_hint`` does the same for values ``tensor()`` cannot read.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Final, NoReturn, Protocol

from ..errors import UnsupportedAttributeError, UnsupportedOperationError, explain
from ..language import N_, tr

# The rule shared by every gradient habit, and a hint that runs as it stands.
_GRADIENTS: Final = N_("Tensors hold no gradients: mt.grad(f) and tape.gradient() return fresh ones.")
_GRAD_OF_F: Final = "dx = mt.grad(lambda x: (x * x).sum())(mt.tensor([1.0, 2.0]))"
_NO_DEVICE: Final = N_("microtape computes with Python floats on the CPU: there are no devices to move to.")
_ONE_DTYPE: Final = N_("Every tensor is float64 already (Python floats); there is no other dtype.")
_IMMUTABLE: Final = N_("Tensors are immutable; only a variable (mt.variable) can be assigned to.")
_SNAKE: Final = N_("microtape spells TF.js's names in snake_case (tf.variableGrads is mt.variable_grads).")
_RENAMED: Final = {"logSumExp": "logsumexp", "print": "print"}
"""TF.js names whose snake_case twin is not spelled by the plain rule."""

# name -> (what microtape does instead, hint). A hint is a line of code that
# runs given ``t``, or advice in words.
HABITS: Final[dict[str, tuple[str, str]]] = {
    "backward": (_GRADIENTS, _GRAD_OF_F),
    "grad": (_GRADIENTS, "dt = mt.grad(lambda x: (x * x).sum())(t)"),
    "zero_grad": (_GRADIENTS, N_("delete the call: there is nothing to reset.")),
    "requires_grad": (
        N_("A tape records every op run inside it; a parameter is a variable, which tapes watch by themselves."),
        "w = mt.variable(t)",
    ),
    "requires_grad_": (
        N_("A tape records every op run inside it; a parameter is a variable, which tapes watch by themselves."),
        "w = mt.variable(t)",
    ),
    "detach": (N_("A tensor holds no graph, tapes do; a copy made with mt.tensor(t) is a constant to every tape."), "u = mt.tensor(t)"),
    "numpy": (N_("microtape is plain Python: values come out as lists."), "t.tolist()"),
    "cpu": (_NO_DEVICE, N_("delete the call.")),
    "cuda": (_NO_DEVICE, N_("delete the call.")),
    "to": (N_("microtape computes with Python floats on the CPU: there are no devices to move to. Every tensor is float64 already (Python floats); there is no other dtype."), N_("delete the call.")),
    "astype": (_ONE_DTYPE, N_("delete the call.")),
    "ndim": (N_("The number of dimensions is called rank, as in TensorFlow."), "t.rank"),
    "flatten": (N_("Reshape with -1 for the dimension to infer."), "t.reshape((-1,))"),
    "view": (N_("Shapes change with reshape, which takes the new shape as a tuple."), "t.reshape((-1,))"),
    "copy": (N_("A copy that the tape records is a clone."), "t.clone()"),
    "assign": (_IMMUTABLE, "w = mt.variable(t); w.assign(t * 2.0)"),
    "assign_add": (_IMMUTABLE, "w = mt.variable(t); w.assign_add(t)"),
    "assign_sub": (_IMMUTABLE, "w = mt.variable(t); w.assign_sub(t)"),
    # TF.js's camelCase methods and tf.print
    "dataSync": (_SNAKE, "t.data_sync()"),
    "arraySync": (N_("The nested values come from tolist(), as from a Python list."), "t.tolist()"),
    "print": (N_("Printing is a function, as tf.print is in TF.js: mt.print(t)."), "mt.print(t)"),
}

# Optimizer habits from PyTorch: name -> (what microtape does instead, hint given ``opt`` and ``loss``).
OPTIMIZER_HABITS: Final[dict[str, tuple[str, str]]] = {
    "zero_grad": (
        N_("Gradients never accumulate here: each step computes fresh ones, so there is nothing to reset."),
        N_("delete the call; opt.minimize(loss) computes and applies the gradients in one step."),
    ),
    "step": (
        N_("An optimizer takes the loss function: minimize() computes the gradients and applies them, as in TF.js."),
        "opt.minimize(lambda: (w * w).sum())",
    ),
}

_METHODS: Final = frozenset(HABITS) - {"grad", "requires_grad", "ndim"}  # the rest are called
_COMPARISONS: Final = {">": "greater", ">=": "greater_equal", "<": "less", "<=": "less_equal"}


def attribute_error(obj: object, name: str, shape: tuple[int, ...]) -> UnsupportedAttributeError:
    """The error for ``obj.name``, a habit in :data:`HABITS`."""
    kind = type(obj).__name__
    rule, hint = HABITS[name]
    used = f"t.{name}" if name not in _METHODS else f"t.{name}(...)" if name.startswith("assign") else f"t.{name}()"
    if name == "grad" and kind == "Variable":
        hint = "value, grads = mt.variable_grads(lambda: (t * t).sum()); dt = grads[t]"
    return UnsupportedAttributeError(
        explain(tr("{0}: a microtape {1} (shape {2}) has no {3}.").format(used, kind, shape, repr(name)), rule, hint),  # names stay code
        name=name,
        shape=shape,
    )


def missing(name: str) -> property:
    """A property that raises :func:`attribute_error` when read, and :func:`assignment_error` when set.

    A property, not ``__getattr__``: a class with ``__getattr__`` makes
    every attribute read slower (CPython no longer specialises the lookup),
    and tensors' attributes are read in every op.
    """

    def read(self: object) -> NoReturn:
        raise attribute_error(self, name, getattr(self, "shape", ()))

    # ":meta private:" keeps it out of the API reference, which lists what exists.
    return property(
        read, _refuse(name), doc="Not part of microtape; reading it raises an error that says what to write instead.\n\n:meta private:"
    )


# -- assignments: a tensor never changes ----------------------------------------

_ASSIGNED: Final[dict[str, tuple[str, str]]] = {
    "requires_grad": (
        N_("There is no flag to set: watch the tensor on a tape, which then records the ops that use it "
           "(tapes watch variables by themselves)."),
        "with mt.GradientTape() as tape: tape.watch(t); y = (t * t).sum()",
    ),
    "grad": (
        N_("Gradients are returned, not stored: mt.grad(f) and tape.gradient() return fresh ones, "
           "so a tensor has no gradient to set or to reset."),
        "dt = mt.grad(lambda x: (x * x).sum())(t)",
    ),
    "dtype": (_ONE_DTYPE, N_("delete the line: every tensor is float64 already.")),
    "name": (
        N_("A variable's name is given when it is made, mt.variable(t, name=...), and stays: "
           "names are unique among the live variables."),
        "t2 = mt.variable(t)",
    ),
}
"""name -> (the rule, a hint) for assignments that are habits of their own; the others say
tensors are immutable (shape: with a reshape that fits)."""
_NOT_GRADIENT: Final = N_("delete the line: a tensor that no tape watches gets no gradient.")
_NOTHING_TO_RESET: Final = N_("delete the line: gradients never accumulate, so there is nothing to reset.")


def assignment_error(obj: object, name: str, value: object) -> UnsupportedAttributeError:
    """The error for ``t.name = value``: a tensor never changes, and a variable changes only its values (assign).

    Examples:
        >>> from microtape.views.habits import assignment_error
        >>> print(assignment_error(mt.tensor([1.0, 2.0, 3.0, 4.0]), "shape", (2, 2)))
        t.shape = (2, 2): a Tensor's shape cannot be assigned (t has shape (4,)).
          Tensors are immutable (only a variable changes, with assign): reshape makes a new tensor with the same 4 entries in the new shape.
          hint: t = t.reshape((2, 2))
    """
    kind = type(obj).__name__
    shape = getattr(obj, "shape", ())
    size = getattr(obj, "size", 1)
    immutable = (
        N_("Tensors are immutable: ops make new tensors; only a variable (mt.variable) changes, with assign.")
        if kind != "Variable"
        else N_("A variable changes only through assign, assign_add and assign_sub; its other attributes are fixed.")
    )
    rule, hint = _ASSIGNED.get(name, (immutable, "t.assign(t * 2.0)" if kind == "Variable" else "w = mt.variable(t); w.assign(t * 2.0)"))
    if name == "shape":
        keeps = N_("A variable keeps its shape") if kind == "Variable" else N_("Tensors are immutable (only a variable changes, with assign)")
        dims = _dims(value)
        if dims is not None and math.prod(dims) == size:
            rule = N_("{0}: reshape makes a new tensor with the same {1} entries in the new shape.").format(keeps, size)
            hint = f"t = t.reshape({dims!r})"
        else:
            rule = N_("{0}: reshape makes a new tensor with the same {1} entries, in a shape that holds {2}.").format(keeps, size, size)
            hint = f"t = t.reshape(({size},))"
    elif name == "requires_grad" and value is False:
        hint = _NOT_GRADIENT
    elif name == "grad" and value is None:
        hint = _NOTHING_TO_RESET
    return UnsupportedAttributeError(
        # translated before the values go in: a property's name ("op") is code, though the catalog knows the word
        explain(tr("t.{0} = {1}: a {2}'s {3} cannot be assigned (t has shape {4}).").format(name, _short(value), kind, name, shape), rule, hint),
        name=name,
        shape=shape,
    )


def _dims(value: object) -> tuple[int, ...] | None:
    """``value`` as a shape reshape takes (a tuple or list of ints, none negative), or None."""
    if not isinstance(value, (tuple, list)):
        return None
    dims = tuple(value)
    if all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
        return tuple(int(d) for d in dims)
    return None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _refuse(name: str) -> Callable[[object, object], NoReturn]:
    def assign(self: object, value: object) -> NoReturn:
        raise assignment_error(self, name, value)

    return assign


def read_only(cls: type) -> None:
    """Give each public property of ``cls`` (its own or inherited) that has no setter one that
    raises :func:`assignment_error`: ``t.shape = (2, 2)`` says to reshape instead of Python's
    bare "property has no setter". Reading is untouched (the same getter); the engine itself
    sets a tensor's storage slots (``_shape``), never a property."""
    for name in dir(cls):
        prop = inspect.getattr_static(cls, name)
        if isinstance(prop, property) and prop.fset is None and not name.startswith("_"):
            setattr(cls, name, property(prop.fget, _refuse(name), prop.fdel, prop.__doc__))


def optimizer_error(obj: object, name: str) -> UnsupportedAttributeError:
    """The error for ``opt.zero_grad()`` and ``opt.step()``, habits in :data:`OPTIMIZER_HABITS`."""
    rule, hint = OPTIMIZER_HABITS[name]
    kind = type(obj).__name__
    return UnsupportedAttributeError(
        # translated before the values go in: opt.step() is code, though the catalog knows the word "step"
        explain(tr("opt.{0}(): a microtape optimizer ({1}) has no {2}.").format(name, kind, repr(name)), rule, hint), name=name, shape=()
    )


def snake_case(name: str) -> str:
    """TF.js's camelCase ``name`` in microtape's spelling: ``variableGrads`` -> ``variable_grads``."""
    if name in _RENAMED:
        return _RENAMED[name]
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def module_attribute_error(name: str, public: Sequence[str]) -> AttributeError:
    """The error for ``mt.<name>`` that does not exist: with the snake_case hint for a TF.js camelCase name."""
    snake = snake_case(name)
    if snake != name and snake in public:
        return UnsupportedAttributeError(
            explain(N_("mt.{0}: microtape has no {1}.").format(name, repr(name)), _SNAKE, f"mt.{snake}"), name=name, shape=()
        )
    return AttributeError(f"module 'microtape' has no attribute {name!r}", name=name, obj=None)


def inplace_error(op: str, name: str, shape: tuple[int, ...]) -> UnsupportedOperationError:
    """The error for ``w -= g`` (and ``+=``, ``*=``, ...) on a variable."""
    method = {"+=": "assign_add", "-=": "assign_sub"}.get(op)
    new = f"w.{method}(delta)" if method else f"w.assign(w {op[:-1]} delta)"
    return UnsupportedOperationError(
        explain(
            N_("w {0} delta: variable {1} (shape {2}) cannot change with an in-place operator; Python would make a plain tensor and rebind the name w to it, leaving the variable as it was.").format(op, repr(name), shape),
            N_("A variable changes through assign, assign_add and assign_sub (variable.assign in TF.js)."),
            N_("{0}, for example w.assign_sub(g * 0.1) for w -= g * 0.1.").format(new),
        ),
        op=op,
        shape=shape,
    )


def comparison_error(op: str, other: object, shape: tuple[int, ...]) -> UnsupportedOperationError:
    """The error for ``t > other`` and the other ordering operators."""
    fn = _COMPARISONS[op]
    number = isinstance(other, (int, float)) and not isinstance(other, bool)
    right = repr(other) if number else "u"
    shown = "" if number else tr(", u is a {0}").format(type(other).__name__)
    return UnsupportedOperationError(
        explain(
            # translated before the values go in: {2}{3} side by side cannot be told apart in the filled-in English
            tr("t {0} {1}: the ordering operators do not compare tensors (t has shape {2}{3}).").format(op, right, shape, shown),
            N_("== is identity here (tensors are dict keys), so no operator makes masks: mt.{0} does.").format(fn),
            f"t.{fn}({right})",
        ),
        op=op,
        shape=shape,
    )


def len_error(shape: tuple[int, ...]) -> UnsupportedOperationError:
    """The error for ``len(t)``."""
    return UnsupportedOperationError(
        explain(
            N_("len(t): a tensor of shape {0} has no len().").format(shape),
            N_("The length of the first axis is t.shape[0]; the number of entries is t.size."),
            "t.shape[0]" if shape else "t.size",
        ),
        op="len",
        shape=shape,
    )


def index_error(key: object, shape: tuple[int, ...]) -> UnsupportedOperationError:
    """The error for ``t[key]``."""
    if isinstance(key, int) and not isinstance(key, bool) and shape and 0 <= key < shape[0]:
        rest = len(shape) - 1
        hint = f"mt.slice(t, {(key,) + (0,) * rest}, {(1,) + (-1,) * rest})"
    else:
        hint = N_("cut a block with mt.slice(t, begin, size), or read the values with t.tolist().")
    return UnsupportedOperationError(
        explain(
            N_("t[{0}]: a tensor (shape {1}) cannot be indexed with [].").format(repr(key), shape),
            N_("mt.slice(t, begin, size) cuts out a block, gradients flow through; t.tolist() reads values."),
            hint,
        ),
        op="getitem",
        shape=shape,
    )


def contains_error(value: object, shape: tuple[int, ...]) -> UnsupportedOperationError:
    """The error for ``value in t``."""
    shown = repr(value) if isinstance(value, (int, float)) else "x"
    return UnsupportedOperationError(
        explain(
            N_("{0} in t: a tensor (shape {1}) is not a container; `in` would iterate over it.").format(shown, shape),
            N_("Ops such as mt.equal(t, x) compare entries; t.data_sync() gives the values as a flat list."),
            f"{shown} in t.data_sync()",
        ),
        op="contains",
        shape=shape,
    )


def iter_error(shape: tuple[int, ...]) -> UnsupportedOperationError:
    """The error for ``for x in t`` (and ``list(t)``, ``x in t``)."""
    return UnsupportedOperationError(
        explain(
            N_("for x in t: a tensor (shape {0}) is not iterable.").format(shape),
            N_("Ops such as t.sum() or mt.exp(t) loop over the entries; t.tolist() gives the values."),
            "rows = t.tolist()",
        ),
        op="iter",
        shape=shape,
    )


class _Shaped(Protocol):
    @property
    def shape(self) -> tuple[int, ...]: ...


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def shape(self) -> tuple[int, ...]: ...


def _lt(self: _Shaped, other: object) -> NoReturn:
    raise comparison_error("<", other, self.shape)


def _le(self: _Shaped, other: object) -> NoReturn:
    raise comparison_error("<=", other, self.shape)


def _gt(self: _Shaped, other: object) -> NoReturn:
    raise comparison_error(">", other, self.shape)


def _ge(self: _Shaped, other: object) -> NoReturn:
    raise comparison_error(">=", other, self.shape)


def _len(self: _Shaped) -> NoReturn:
    raise len_error(self.shape)


def _getitem(self: _Shaped, key: object) -> NoReturn:
    raise index_error(key, self.shape)


def _iter(self: _Shaped) -> NoReturn:
    raise iter_error(self.shape)


def _contains(self: _Shaped, value: object) -> NoReturn:
    raise contains_error(value, self.shape)


_MISSING: Final = (
    "backward", "grad", "zero_grad", "requires_grad", "requires_grad_", "detach", "numpy", "cpu", "cuda",
    "to", "astype", "ndim", "flatten", "view", "copy",
    "assign", "assign_add", "assign_sub",  # Variable's real methods override these three
    "dataSync", "arraySync", "print",
)
_REFUSED: Final = {
    "__lt__": _lt, "__le__": _le, "__gt__": _gt, "__ge__": _ge,
    "__len__": _len, "__getitem__": _getitem, "__iter__": _iter, "__contains__": _contains,
}
_INPLACE: Final = {"__iadd__": "+=", "__isub__": "-=", "__imul__": "*=", "__itruediv__": "/=", "__ipow__": "**=", "__imatmul__": "@="}


def install(cls: type) -> None:
    """Give ``cls`` (``Tensor``) a :func:`missing` property per habit and the operations it refuses.

    Set after the class is made, they are seen by Python only: hidden from
    type checkers, ``t.backward()``, ``len(t)`` and ``t > 0`` stay type errors
    in checked code. The attributes are properties rather than a
    ``__getattr__``, which would slow down every attribute read. ``==`` and
    ``hash`` stay identity: tensors remain usable as dict keys.
    """
    for name in _MISSING:
        setattr(cls, name, missing(name))
    for name, fn in _REFUSED.items():
        setattr(cls, name, fn)
    read_only(cls)  # t.shape = ..., t.size = ...: each property refuses with a hint


def install_variable(cls: type) -> None:
    """Make ``cls`` (``Variable``) refuse the in-place operators (``w -= g``), hidden from type checkers.

    Without them Python falls back to ``w = w - g``: the name is rebound to a
    plain tensor and the variable keeps its values. For checked code mypy
    reports that assignment already (a Tensor is not a Variable).
    """
    for dunder, op in _INPLACE.items():

        def refuse(self: _Named, other: object, op: str = op) -> NoReturn:
            raise inplace_error(op, self.name, self.shape)

        setattr(cls, dunder, refuse)
    read_only(cls)  # w.name = ...: a variable's own properties refuse too (trainable has its setter)


def install_optimizer(cls: type) -> None:
    """Give ``cls`` (``Optimizer``) the PyTorch habits ``zero_grad`` and ``step``, as refusing properties."""
    for name in OPTIMIZER_HABITS:

        def read(self: object, name: str = name) -> NoReturn:
            raise optimizer_error(self, name)

        setattr(cls, name, property(read, doc="Not part of microtape; reading it raises an error that says what to write instead.\n\n:meta private:"))
