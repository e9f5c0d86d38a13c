"""Type aliases shared by every module, none of which mentions a tensor.

``Shape`` is a tuple of ints, ``Nested`` what ``tolist()`` returns, ``Axis``
what reductions take, ``ListLike`` a list or tuple as microtape reads one,
``Rows`` a number or nested lists of numbers as ``tensor()`` reads them.
The aliases that mention ``Tensor`` (``TensorLike``, ``Grads``, ``TensorFn``)
are in ``tensor.py``, ``HasVariables`` in ``variable.py``: this module sits
below both and imports neither.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NoReturn, Protocol, TypeAlias, TypeVar, Union

Shape: TypeAlias = tuple[int, ...]
Flat: TypeAlias = tuple[list[float], Shape]
"""A tensor's contents without the tensor: (row-major values, shape). What kernels and op forwards return."""
Nested: TypeAlias = Union[float, list["Nested"]]
"""What ``tolist()`` returns: a float, or nested lists of floats."""

T_co = TypeVar("T_co", covariant=True)


class ListLike(Protocol[T_co]):
    """A list or a tuple of ``T_co``: what microtape reads as a row of values or a list of inputs.

    Covariant, as ``Sequence`` is (a ``list[int]`` is a ``ListLike[float]``), but
    a ``range``, ``str`` or ``bytes`` is not one, as microtape refuses them at run
    time: a range has no ``+``, and a str or bytes only holds (and tests ``in``
    for) its own kind of item.
    """

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[T_co]: ...

    def __contains__(self, value: object, /) -> bool: ...

    def __add__(self, other: NoReturn, /) -> object: ...


Rows: TypeAlias = Union[float, ListLike["Rows"]]
"""What ``mt.tensor`` reads besides a tensor: a number, or lists and tuples of ``Rows`` (what
``tolist()`` returns is one). One recursive alias, so a type checker's message for a wrong
value names it in a word; that the rows are regular (no ragged ``[[1.0], 2.0]``) is checked
at run time, with the shapes in the message."""
Axis: TypeAlias = Union[int, Sequence[int], None]


def is_int(value: object) -> bool:
    """True for an int that is not a bool (validation of user arguments)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """True for an int or float that is not a bool (validation of user arguments)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)
