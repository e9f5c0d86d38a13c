"""Type aliases shared by every module.

``Shape`` is a tuple of ints, ``Grads`` is what a VJP returns (one entry per
tensor input, ``None`` where there is no gradient) and ``TensorLike`` is what
``mt.tensor`` accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, NoReturn, Protocol, TypeAlias, TypeVar, Union

if TYPE_CHECKING:
    from .tensor import Tensor
    from .variable import Variable

Shape: TypeAlias = tuple[int, ...]
Grads: TypeAlias = "tuple[Tensor | None, ...]"
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


# What mt.tensor accepts: a number, what tolist() returns, or a regular nesting of lists
# and tuples of numbers up to rank 6 (as TF.js's tensor6d).
Rows1: TypeAlias = ListLike[float]
Rows2: TypeAlias = ListLike[Rows1]
Rows3: TypeAlias = ListLike[Rows2]
Rows4: TypeAlias = ListLike[Rows3]
Rows5: TypeAlias = ListLike[Rows4]
Rows6: TypeAlias = ListLike[Rows5]
TensorLike: TypeAlias = Union["Tensor", float, Rows1, Rows2, Rows3, Rows4, Rows5, Rows6, Nested]
# A function of 1 to 6 tensors (what grads and check_grads differentiate). A union of
# fixed counts rather than Callable[..., Tensor], so that a type checker infers a
# lambda's parameters as tensors (with ``...`` they would be unknown).
TensorFn: TypeAlias = Union[
    "Callable[[Tensor], Tensor]",
    "Callable[[Tensor, Tensor], Tensor]",
    "Callable[[Tensor, Tensor, Tensor], Tensor]",
    "Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]",
    "Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]",
    "Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]",
]
Axis: TypeAlias = Union[int, Sequence[int], None]


class HasVariables(Protocol):
    """Anything an optimizer can train: a model, a layer, a list holder."""

    def variables(self) -> list[Variable]:
        """The variables to train."""
        ...



def is_int(value: object) -> bool:
    """True for an int that is not a bool (validation of user arguments)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """True for an int or float that is not a bool (validation of user arguments)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)
