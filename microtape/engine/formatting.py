"""How a tensor prints: numbers to four significant digits, long dimensions summarised.

"""

from __future__ import annotations

import copy
import math
from typing import Final

from .shape import check_size, size_of
from .types import Nested, Shape
from ..errors import N_

__all__ = ["format_number"]

_REPR_EDGE: Final = 3  # entries shown at each end of a long dimension
_REPR_LIMIT: Final = 1000  # tensors larger than this are summarised


def nest_values(data: list[float], shape: Shape) -> Nested:
    """Nested lists of ``data`` in ``shape``, every dimension kept (as NumPy's ``tolist``)."""
    if not shape:
        return data[0]
    if len(shape) == 1:
        return list(data)
    if not data:
        return _empty_nest(shape)
    rows: list[Nested] = list(data)
    for dim in reversed(shape[1:]):
        rows = [rows[i : i + dim] for i in range(0, len(rows), dim)]
    return rows


def _empty_nest(shape: Shape) -> list[Nested]:
    """Nested empty lists for a shape with a 0: (2, 3, 0) gives [[[], [], []], [[], [], []]]."""
    lists = 1
    for dim in shape[:-1]:
        if dim == 0:
            break
        lists *= dim
    check_size(shape[:-1], what=N_("tolist(): the nested empty lists for the leading dimensions"), count=lists)
    if shape[0] == 0 or len(shape) == 1:
        return []
    inner = _empty_nest(shape[1:])
    return [copy.deepcopy(inner) for _ in range(shape[0])]


def format_number(v: float) -> str:
    """Four significant digits, always looking like a float: 1.0, 2.718, 1e-05, 1.2e+11.

    Examples:
        >>> from microtape.engine.tensor import format_number
        >>> [format_number(v) for v in (1.0, math.e, 1e-5, 123456.0, -0.0)]
        ['1.0', '2.718', '1e-05', '1.235e+05', '-0.0']
    """
    if v != v or v in (math.inf, -math.inf):
        return repr(v)
    text = f"{v:.4g}"
    return text if "e" in text else repr(float(text))


def format_values(data: list[float], shape: Shape) -> str:
    """Nested-list text of the values, long dimensions summarised with '...'."""
    if not shape:
        return format_number(data[0])
    slots = 1  # entries, or for an empty tensor the nested lists shown: (10**17, 0) is summarised too
    for dim in shape:
        slots *= max(dim, 1)
    summarise = slots > _REPR_LIMIT

    def block(offset: int, dim: int) -> str:
        n = shape[dim]
        stride = size_of(shape[dim + 1 :])
        if summarise and n > 2 * _REPR_EDGE:
            picks: list[int | None] = [*range(_REPR_EDGE), None, *range(n - _REPR_EDGE, n)]
        else:
            picks = list(range(n))
        parts = []
        for i in picks:
            if i is None:
                parts.append("...")
            elif dim == len(shape) - 1:
                parts.append(format_number(data[offset + i]))
            else:
                parts.append(block(offset + i * stride, dim + 1))
        return "[" + ", ".join(parts) + "]"

    return block(0, 0)


def short_repr(values: object) -> str:
    """``repr(values)``, cut to 60 characters for error messages."""
    text = repr(values)
    return text if len(text) <= 60 else text[:57] + "..."
