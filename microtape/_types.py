"""Type aliases shared by every module.

``Shape`` is a tuple of ints, ``Grads`` is what a VJP returns (one entry per
tensor input, ``None`` where there is no gradient) and ``TensorLike`` is what
``mt.tensor`` accepts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias, Union

if TYPE_CHECKING:
    from .tensor import Tensor
    from .variable import Variable

Shape: TypeAlias = tuple[int, ...]
Grads: TypeAlias = "tuple[Tensor | None, ...]"
Nested: TypeAlias = Union[float, int, bool, Sequence["Nested"]]
TensorLike: TypeAlias = Union["Tensor", float, int, bool, Sequence["Nested"]]
Axis: TypeAlias = Union[int, Sequence[int], None]


class HasVariables(Protocol):
    """Anything an optimizer can train: a model, a layer, a list holder."""

    def variables(self) -> list[Variable]: ...


def is_int(value: object) -> bool:
    """True for an int that is not a bool (validation of user arguments)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """True for an int or float that is not a bool (validation of user arguments)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)
