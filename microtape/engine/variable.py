"""``Variable``: a named, assignable tensor that tapes watch automatically.

A variable is the only tensor whose values change:
``assign`` swaps in a new list (checked first, so a failed assign changes
nothing) and never writes into the old one: a tape that recorded an op
reading the variable keeps the old list, so it differentiates at the values
it recorded (``Variable._recorded``). Variables are never disposed by
``tidy``. Names are unique among the variables alive now; the registry holds
them weakly, so a variable your program no longer references is gone, name
and all, unless a tape's record still names it.
"""

from __future__ import annotations

import gc
import itertools
import weakref
from typing import Final, Protocol, cast

from . import arena
from .arena import new
from .types import Shape
from ..errors import InvalidArgumentError, ShapeError, UnsupportedOperationError, VariableError, explain
from ..errors import N_
from .convert import flatten_values
from .tensor import Tensor, TensorLike, as_tensor

__all__ = ["Variable", "variable"]

_auto_names = itertools.count(1)


class Variable(Tensor):
    """A mutable, named tensor for model parameters (``tf.Variable``).

    Make one with :func:`variable`. Trainable variables read inside a
    :class:`~microtape.GradientTape` are watched automatically, and
    :func:`~microtape.variable_grads` differentiates with respect to them.

    Examples:
        >>> w = mt.variable(mt.tensor([1.0, 2.0]), name="w_doc")
        >>> w
        Variable([1.0, 2.0], shape=(2,), name='w_doc', trainable=True)
        >>> _ = w.assign_sub(mt.tensor([0.5, 0.5]))
        >>> w.data_sync()
        [0.5, 1.5]
    """

    __slots__ = ("_name", "_trainable", "_read", "__weakref__")
    _name: str
    _read: Tensor | None

    def __new__(cls, initial: object, trainable: bool = True, name: str | None = None) -> Variable:
        raise _constructor_error(initial, trainable, name)

    def __copy__(self) -> Variable:
        raise _copy_error(self)

    def __deepcopy__(self, memo: dict[int, object]) -> Variable:
        raise _copy_error(self)

    def __reduce__(self) -> tuple[type[Tensor], tuple[list[float], Shape]]:
        raise _copy_error(self)

    @property
    def name(self) -> str:
        """The variable's name, unique among the live variables; fixed when it is made."""
        return self._name

    @property
    def trainable(self) -> bool:
        """Whether optimizers and ``variable_grads`` update this variable."""
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self._trainable = _check_trainable(value)

    def _recorded(self) -> Tensor:
        """What a tape records when an op reads this variable: its values at this moment.

        A plain tensor with the variable's id (so gradients still reach the
        variable) that shares the variable's current list. ``assign`` and its
        kin swap in a new list and never write into the old one, so the record
        keeps the old values without copying them. Every op that reads the
        variable while it holds the same values shares one such tensor: a
        recorded read costs one small object per assigned value, never a copy,
        and ``memory()`` does not count it (the variable is counted once).
        """
        read = self._read
        data = self._data
        if read is None or read._data is not data:
            if data is None:
                raise arena.disposed_error(self)
            read = arena.read_of(self, Tensor)
            self._read = read
        return read

    def _repr_extra(self) -> str:
        return f", name={self.name!r}, trainable={self._trainable}"

    def _checked(self, value: object, method: str) -> list[float]:
        """New values for an assign, validated before anything changes."""
        if self._data is None:
            raise arena.disposed_error(self)
        if isinstance(value, Tensor):
            data = list(value._values())
            shape = value.shape
        else:
            data, shape = flatten_values(value, None)
        if shape != self.shape:
            raise ShapeError(
                explain(
                    N_("{0}: variable {1} has shape {2}, the new value has shape {3}.").format(method, repr(self.name), self.shape, shape),
                    N_("A variable keeps its shape; assign needs a value of exactly that shape."),
                    N_("reshape the value: value.reshape({0}), or make a new variable.").format(self.shape),
                ),
                op=method,
                shapes=(self.shape, shape),
                name=self.name,
            )
        return data

    def assign(self, value: TensorLike) -> Variable:
        """Replace the values (``variable.assign`` in TF.js); returns the variable.

        Examples:
            >>> v = mt.variable(mt.scalar(1.0))
            >>> v.assign(mt.scalar(5.0)).item()
            5.0
        """
        data = self._checked(value, "assign")
        self._notify("assign", value, data)
        self._data = data
        return self

    def _notify(self, kind: str, value: object, data: list[float]) -> None:
        """An assign is about to happen: tell the observers that watch writes, and the open tapes
        when the value is a tensor (its history ends here: a variable's reads start afresh)."""
        st = arena.STATE.get()
        if st.observers:
            arena.notify_assign(self, kind, value, data)
        if st.tapes and isinstance(value, Tensor):
            arena.notify_cut(f"{self.name}.{kind}()", (value,), self)

    def assign_add(self, delta: TensorLike) -> Variable:
        """Add ``delta`` to the values in place; returns the variable.

        Examples:
            >>> v = mt.variable(mt.tensor([1.0, 2.0]))
            >>> v.assign_add(mt.tensor([1.0, 1.0])).data_sync()
            [2.0, 3.0]
        """
        new = self._checked(delta, "assign_add")
        self._notify("assign_add", delta, new)
        old = self._data
        assert old is not None  # _checked raised otherwise
        self._data = [a + b for a, b in zip(old, new)]
        return self

    def assign_sub(self, delta: TensorLike) -> Variable:
        """Subtract ``delta`` from the values in place; returns the variable.

        Examples:
            >>> v = mt.variable(mt.tensor([1.0, 2.0]))
            >>> v.assign_sub(mt.tensor([1.0, 1.0])).data_sync()
            [0.0, 1.0]
        """
        new = self._checked(delta, "assign_sub")
        self._notify("assign_sub", delta, new)
        old = self._data
        assert old is not None  # _checked raised otherwise
        self._data = [a - b for a, b in zip(old, new)]
        return self

    def dispose(self) -> None:
        """Free the variable and its name (TF.js ``variable.dispose()``).

        Examples:
            >>> v = mt.variable(mt.scalar(1.0), name="temporary")
            >>> v.dispose()
            >>> w = mt.variable(mt.scalar(2.0), name="temporary")  # the name is free again
        """
        if self._disposed is not None:
            return
        if VARIABLES.get(self.name) is self:
            del VARIABLES[self.name]
        arena.dispose(self, "dispose()")




VARIABLES: Final = cast("weakref.WeakValueDictionary[str, Variable]", arena.VARIABLES)
"""Every live variable by name: ``arena.VARIABLES``, typed as holding variables (only ``variable()`` adds to it)."""


class HasVariables(Protocol):
    """Anything an optimizer can train: a model, a layer, a list holder."""

    def variables(self) -> list[Variable]:
        """The variables to train."""
        ...


def _copy_error(v: Variable) -> UnsupportedOperationError:
    return UnsupportedOperationError(
        explain(
            N_("copy.copy(), copy.deepcopy() or pickle of variable {0}.").format(repr(v.name)),
            N_("A variable is named and assignable; a copy would share its name, so microtape makes none."),
            N_("make a new variable with the same values: mt.variable({0}, name={1})").format(v.name, repr(v.name + '_copy')),
        ),
        op="copy",
        name=v.name,
    )


def _constructor_error(initial: object, trainable: object, name: object) -> UnsupportedOperationError:
    """``Variable(...)`` called directly: the hint repeats the call as ``mt.variable``."""
    simple = isinstance(initial, (int, float, list, tuple)) and len(repr(initial)) <= 40
    args = ["t" if isinstance(initial, Tensor) else repr(initial) if simple else "mt.tensor([1.0, 2.0])"]
    shown = args[0] if simple or isinstance(initial, Tensor) else "..."
    if trainable is not True:
        args.append(f"trainable={trainable!r}")
    if name is not None:
        args.append(f"name={name!r}")
    return UnsupportedOperationError(
        explain(
            N_("Variable({0}) was called directly.").format(', '.join([shown, *args[1:]])),
            N_("mt.variable (tf.variable in TF.js) makes variables: it copies the values, registers the name."),
            N_("w = mt.variable({0})").format(', '.join(args)),
        ),
        op="Variable",
    )


def _still_taken(name: str) -> bool:
    """Whether a live variable holds ``name``. An unreachable variable caught in a
    reference cycle (a traceback kept by ``pytest.raises``, say) still sits in the
    weak registry until the cyclic collector runs, so run it before refusing."""
    gc.collect()
    return name in VARIABLES


def _is_name(value: object) -> bool:
    return isinstance(value, str) and value != ""


def _check_trainable(value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(
            explain(
                N_("trainable must be True or False, got {0}.").format(repr(value)),
                N_("It says whether optimizers update the variable."),
                N_("pass trainable=False for a constant-like variable."),
            ),
            value=value,
        )
    return value


def variable(initial: TensorLike, trainable: bool = True, name: str | None = None) -> Variable:
    """Make a variable from a tensor or values (``tf.variable``).

    Args:
        initial: The starting values: a tensor, a number or nested lists.
            Its values are copied, so later changes to the variable never
            touch ``initial``.
        trainable: Whether gradients and optimizers treat it as a parameter.
        name: A unique name; one is generated when omitted.

    Raises:
        VariableError: a variable with that name is still alive.

    Examples:
        >>> b = mt.variable(mt.scalar(0.0))
        >>> b.trainable, b.shape
        (True, ())
        >>> frozen = mt.variable([1.0, 2.0], trainable=False)
        >>> frozen.trainable
        False
    """
    flag = _check_trainable(trainable)
    if name is None:
        name = f"Variable_{next(_auto_names)}"
        while name in VARIABLES:
            name = f"Variable_{next(_auto_names)}"
    elif not _is_name(name):
        raise InvalidArgumentError(
            explain(
                N_("variable name must be a non-empty str, got {0}.").format(repr(name)),
                N_("Names key the gradients of variable_grads and checkpoints."),
                N_("pass name='w', or leave it out to get a generated name."),
            ),
            value=name,
        )
    elif name in VARIABLES and _still_taken(name):
        raise VariableError(
            explain(
                N_("a variable named {0} already exists (shape {1}).").format(repr(name), VARIABLES[name].shape),
                N_("Variable names must be unique among the variables alive now."),
                N_("pick another name, or free the old one with old.dispose() first."),
            ),
            name=name,
        )
    copied = initial if isinstance(initial, Tensor) else None
    if copied is not None:
        data, shape = list(copied._values()), copied.shape
    else:
        source = as_tensor(initial)
        data, shape = list(source._values()), source.shape
        source.dispose()
    v = new(Variable, data, shape, "variable", arena=False)  # memory() counts variables by VARIABLES
    v._name = name
    v._kept = True
    v._trainable = flag
    v._read = None
    VARIABLES[name] = v
    if copied is not None and arena.STATE.get().tapes:
        arena.notify_cut("mt.variable()", (copied,), v)  # a copy: the variable does not remember where its values came from
    return v

