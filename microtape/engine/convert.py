"""From Python values to tensor storage: nested lists and numbers to ``(data, shape)``, and their errors.

``creation.py``'s ``tensor()`` and a variable's ``assign`` do too. Nested
lists and tuples of numbers (and anything with ``tolist()``, and tensors)
become one flat row-major ``list[float]`` and a shape; ragged rows and
values that are not numbers raise errors that say what to pass instead. This
module also owns the end of an op's scope: a Python number that an operator
turned into a scalar tensor is disposed by ``op_scope_ends()`` when the op
returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from . import arena
from .formatting import short_repr
from .arena import TensorBase
from .shape import size_of, validate_shape
from .types import Shape
from ..errors import InvalidArgumentError, MicrotapeError, ShapeError, explain
from ..errors import N_

__all__ = ["bad_value_error", "conversion_hint", "flatten_values", "op_scope_ends", "value_hint"]


def value_hint(value: object) -> str:
    """A hint for a value ``tensor()`` cannot read (not a tensor), or "" when none fits."""
    if isinstance(value, str):
        return N_("convert text to numbers first, for example float('1.5').")
    if value is None:
        return N_("replace None with a number, or with float('nan') for a missing value.")
    if isinstance(value, complex):
        return N_("tensors hold real numbers: keep z.real, or abs(z) for the magnitude.")
    if isinstance(value, range):
        return f"mt.tensor(list({value!r}))"
    if isinstance(value, (dict, set, frozenset)):
        return N_("pass an ordered list of numbers, for example list(d.values()) or sorted(s).")
    if hasattr(type(value), "__iter__"):
        return N_("make a list first: mt.tensor(list(values)).")
    return ""


def bad_value_error(value: object, where: str) -> MicrotapeError:
    return InvalidArgumentError(
        explain(
            N_("tensor(): cannot make a number from {0} ({1}){2}.").format(short_repr(value), type(value).__name__, where),
            N_("Tensors hold numbers: int, float or bool, nested in lists or tuples."),
            N_("to join tensors use mt.stack([a, b]) or mt.concat([a, b]).")
            if isinstance(value, TensorBase)
            else value_hint(value),
        ),
        value=value,
    )


def conversion_hint(value: object) -> str:
    """``mt.tensor(value)`` when that call works and is short, else ""; for hints.

    Examples:
        >>> from microtape.engine.convert import conversion_hint
        >>> conversion_hint([1.0, 2.0]), conversion_hint("oops")
        ('mt.tensor([1.0, 2.0])', '')
    """
    text = repr(value)
    if len(text) > 40 or isinstance(value, str):
        return ""
    try:
        flatten_values(value, None)
    except MicrotapeError:
        return ""
    return f"mt.tensor({text})"


def flatten_values(values: object, shape: Sequence[int] | None) -> tuple[list[float], Shape]:
    """Turn nested lists, numbers, tensors or ``tolist()`` objects into (data, shape)."""
    if isinstance(values, TensorBase):  # a Tensor (``tensor.py``) or a Variable
        if values._data is None or values._disposed is not None:
            arena.check_usable(values)
        assert values._data is not None  # check_usable raised otherwise
        data, inferred = list(values._data), values._shape
    else:
        tolist = getattr(values, "tolist", None)
        if tolist is not None and not isinstance(values, (list, tuple, str, bytes)):
            values = tolist()
        data, inferred = _flatten_nested(values)
    if shape is None:
        return data, inferred
    target = validate_shape(shape)
    if size_of(target) != len(data):
        raise ShapeError(
            explain(
                N_("tensor(): shape {0} needs {1} values, but {2} were given (inferred shape {3}).").format(target, size_of(target), len(data), inferred),
                N_("The number of values must equal the product of the shape."),
                N_("drop the shape to infer it, or pass exactly that many values."),
            ),
            shape=target,
            size=len(data),
        )
    return data, target


def _flatten_nested(values: object) -> tuple[list[float], Shape]:
    if isinstance(values, (bool, int, float)):
        return [float(values)], ()
    if not isinstance(values, (list, tuple)):
        raise bad_value_error(values, "")
    shape: list[int] = []
    level: list[object] = [values]
    while level and all(isinstance(v, (list, tuple)) for v in level):
        rows = cast("list[Sequence[object]]", level)
        n = len(rows[0])
        for row in rows:
            if len(row) != n:
                raise ShapeError(
                    explain(
                        N_("tensor(): ragged nested list: at depth {0} one row has {1} entries and another has {2}: {3}.").format(len(shape), n, len(row), short_repr(values)),
                        N_("Every row at the same depth must have the same length."),
                        N_("pad the short rows, or build the tensors separately and use mt.stack."),
                    ),
                    depth=len(shape),
                    lengths=(n, len(row)),
                )
        shape.append(n)
        level = [x for row in rows for x in row]
    if any(isinstance(v, (list, tuple)) for v in level):
        raise ShapeError(
            explain(
                N_("tensor(): ragged nested list: at depth {0} lists and numbers are mixed: {1}.").format(len(shape), short_repr(values)),
                N_("Every entry at the same depth must be a list of the same length, or all numbers."),
                N_("wrap the lone numbers in lists, or flatten the data."),
            ),
            depth=len(shape),
        )
    data: list[float] = []
    for v in level:
        if not isinstance(v, (bool, int, float)):
            raise bad_value_error(v, N_(" inside {0}").format(short_repr(values)))
        data.append(float(v))
    return data, tuple(shape)


# -- the end of an op's scope -------------------------------------------------

_OP_SCOPE: Final = N_("the op that converted it from a Python number, when the op returned")


def op_scope_ends(t: TensorBase) -> None:
    """Dispose what an op made besides its result: freed now, or pending while a tape holds it.

    A Python number becomes a scalar tensor for the op and is disposed when
    the op returns, as in a TF.js op() scope: outside a tape ``x * 2.0`` adds
    one tensor to memory(), not two. A tape that recorded the op holds the
    number's tensor for its backward pass and frees it when done.
    """
    if t._disposed is None:
        t._disposed = _OP_SCOPE
        if t._holds == 0:
            arena.free(t)
