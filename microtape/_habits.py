"""What to write instead: messages for habits brought from PyTorch and NumPy.

Read after ``errors.py``. ``Tensor`` sends the attributes it does not have
(``t.backward()``, ``t.grad``, ``t.numpy()``: one property each, made by
:func:`missing`) and the operations it does not support (``len(t)``,
``t > 0``, ``t[0]``, ``for x in t``) here, and raises what these functions
return. Each message names the habit, says what microtape does instead and
ends with a hint. In hints, ``t`` is the tensor in question, as in the
message. ``value_hint`` does the same for values ``tensor()`` cannot read.
"""

from __future__ import annotations

from typing import Final, NoReturn, Protocol

from .errors import UnsupportedAttributeError, UnsupportedOperationError, explain

# The rule shared by every gradient habit, and a hint that runs as it stands.
_GRADIENTS: Final = "Tensors hold no gradients: mt.grad(f) and tape.gradient() return fresh ones."
_GRAD_OF_F: Final = "dx = mt.grad(lambda x: (x * x).sum())(mt.tensor([1.0, 2.0]))"
_NO_DEVICE: Final = "microtape computes with Python floats on the CPU: there are no devices to move to."
_ONE_DTYPE: Final = "Every tensor is float64 already (Python floats); there is no other dtype."
_IMMUTABLE: Final = "Tensors are immutable; only a variable (mt.variable) can be assigned to."

# name -> (what microtape does instead, hint). A hint is a line of code that
# runs given ``t``, or advice in words.
HABITS: Final[dict[str, tuple[str, str]]] = {
    "backward": (_GRADIENTS, _GRAD_OF_F),
    "grad": (_GRADIENTS, "dt = mt.grad(lambda x: (x * x).sum())(t)"),
    "zero_grad": (_GRADIENTS, "delete the call: there is nothing to reset."),
    "requires_grad": (
        "A tape records every op run inside it; a parameter is a variable, which tapes watch by themselves.",
        "w = mt.variable(t)",
    ),
    "requires_grad_": (
        "A tape records every op run inside it; a parameter is a variable, which tapes watch by themselves.",
        "w = mt.variable(t)",
    ),
    "detach": ("A tensor holds no graph, tapes do; a copy made with mt.tensor(t) is a constant to every tape.", "u = mt.tensor(t)"),
    "numpy": ("microtape is plain Python: values come out as lists.", "t.tolist()"),
    "cpu": (_NO_DEVICE, "delete the call."),
    "cuda": (_NO_DEVICE, "delete the call."),
    "to": (_NO_DEVICE + " " + _ONE_DTYPE, "delete the call."),
    "astype": (_ONE_DTYPE, "delete the call."),
    "ndim": ("The number of dimensions is called rank, as in TensorFlow.", "t.rank"),
    "flatten": ("Reshape with -1 for the dimension to infer.", "t.reshape((-1,))"),
    "view": ("Shapes change with reshape, which takes the new shape as a tuple.", "t.reshape((-1,))"),
    "copy": ("A copy that the tape records is a clone.", "t.clone()"),
    "assign": (_IMMUTABLE, "w = mt.variable(t); w.assign(t * 2.0)"),
    "assign_add": (_IMMUTABLE, "w = mt.variable(t); w.assign_add(t)"),
    "assign_sub": (_IMMUTABLE, "w = mt.variable(t); w.assign_sub(t)"),
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
        explain(f"{used}: a microtape {kind} (shape {shape}) has no {name!r}.", rule, hint),
        name=name,
        shape=shape,
    )


def missing(name: str) -> property:
    """A property that raises :func:`attribute_error` when read.

    A property, not ``__getattr__``: a class with ``__getattr__`` makes
    every attribute read slower (CPython no longer specialises the lookup),
    and tensors' attributes are read in every op.
    """

    def read(self: object) -> NoReturn:
        raise attribute_error(self, name, getattr(self, "shape", ()))

    # ":meta private:" keeps it out of the API reference, which lists what exists.
    return property(read, doc="Not part of microtape; reading it raises an error that says what to write instead.\n\n:meta private:")


def comparison_error(op: str, other: object, shape: tuple[int, ...]) -> UnsupportedOperationError:
    """The error for ``t > other`` and the other ordering operators."""
    fn = _COMPARISONS[op]
    number = isinstance(other, (int, float)) and not isinstance(other, bool)
    right = repr(other) if number else "u"
    shown = "" if number else f", u is a {type(other).__name__}"
    return UnsupportedOperationError(
        explain(
            f"t {op} {right}: the ordering operators do not compare tensors (t has shape {shape}{shown}).",
            f"== is identity here (tensors are dict keys), so no operator makes masks: mt.{fn} does.",
            f"t.{fn}({right})",
        ),
        op=op,
        shape=shape,
    )


def len_error(shape: tuple[int, ...]) -> UnsupportedOperationError:
    """The error for ``len(t)``."""
    return UnsupportedOperationError(
        explain(
            f"len(t): a tensor of shape {shape} has no len().",
            "The length of the first axis is t.shape[0]; the number of entries is t.size.",
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
        hint = "cut a block with mt.slice(t, begin, size), or read the values with t.tolist()."
    return UnsupportedOperationError(
        explain(
            f"t[{key!r}]: a tensor (shape {shape}) cannot be indexed with [].",
            "mt.slice(t, begin, size) cuts out a block, gradients flow through; t.tolist() reads values.",
            hint,
        ),
        op="getitem",
        shape=shape,
    )


def iter_error(shape: tuple[int, ...]) -> UnsupportedOperationError:
    """The error for ``for x in t`` (and ``list(t)``, ``x in t``)."""
    return UnsupportedOperationError(
        explain(
            f"for x in t: a tensor (shape {shape}) is not iterable.",
            "Ops such as t.sum() or mt.exp(t) loop over the entries; t.tolist() gives the values.",
            "rows = t.tolist()",
        ),
        op="iter",
        shape=shape,
    )


def value_hint(value: object) -> str:
    """A hint for a value ``tensor()`` cannot read (not a tensor), or "" when none fits."""
    if isinstance(value, str):
        return "convert text to numbers first, for example float('1.5')."
    if value is None:
        return "replace None with a number, or with float('nan') for a missing value."
    if isinstance(value, complex):
        return "tensors hold real numbers: keep z.real, or abs(z) for the magnitude."
    if isinstance(value, range):
        return f"mt.tensor(list({value!r}))"
    if isinstance(value, (dict, set, frozenset)):
        return "pass an ordered list of numbers, for example list(d.values()) or sorted(s)."
    if hasattr(type(value), "__iter__"):
        return "make a list first: mt.tensor(list(values))."
    return ""


class _Shaped(Protocol):
    shape: tuple[int, ...]


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


_MISSING: Final = (
    "backward", "grad", "zero_grad", "requires_grad", "requires_grad_", "detach", "numpy", "cpu", "cuda",
    "to", "astype", "ndim", "flatten", "view", "copy",
    "assign", "assign_add", "assign_sub",  # Variable's real methods override these three
)
_REFUSED: Final = {
    "__lt__": _lt, "__le__": _le, "__gt__": _gt, "__ge__": _ge,
    "__len__": _len, "__getitem__": _getitem, "__iter__": _iter,
}


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
