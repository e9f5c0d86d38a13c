"""Type aliases shared by every module.

``Shape`` is a tuple of ints, ``Grads`` is what a VJP returns (one entry per
tensor input, ``None`` where there is no gradient) and ``TensorLike`` is what
``mt.tensor`` accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias, Union

if TYPE_CHECKING:
    from .tensor import Tensor
    from .variable import Variable

Shape: TypeAlias = tuple[int, ...]
Grads: TypeAlias = "tuple[Tensor | None, ...]"
Nested: TypeAlias = Union[float, list["Nested"]]
"""What ``tolist()`` returns: a float, or nested lists of floats."""
# What mt.tensor accepts: a number, what tolist() returns, or a regular nesting of
# sequences of numbers up to rank 6 (as TF.js's tensor6d). The sequences are spelled out
# level by level, not recursively, so that a str (a sequence of str, all the way down)
# is not a TensorLike.
Rows1: TypeAlias = Sequence[float]
Rows2: TypeAlias = Sequence[Rows1]
Rows3: TypeAlias = Sequence[Rows2]
Rows4: TypeAlias = Sequence[Rows3]
Rows5: TypeAlias = Sequence[Rows4]
Rows6: TypeAlias = Sequence[Rows5]
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
