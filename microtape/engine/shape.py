"""What a shape is: a tuple of non-negative ints, its size, and the largest tensor memory allows.

The arithmetic of broadcasting, axes and index maps, which only ops need,
is in ``ops/index_maps.py``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

from .types import Shape
from ..errors import ShapeError, explain
from ..errors import N_

__all__ = ["MAX_ENTRIES", "check_size", "size_of", "validate_shape"]


def size_of(shape: Shape) -> int:
    """Return the number of entries of a tensor of this shape."""
    return math.prod(shape)


def _memory_entries() -> int:
    """How many 8-byte entries the machine's physical memory could hold at most."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):  # no sysconf (Windows): assume 1 TiB
        total = 2**40
    return max(total, 2**30) // 8


MAX_ENTRIES = _memory_entries()
"""No tensor can have more entries than this: each takes at least 8 bytes (its list slot)."""


def check_size(shape: Sequence[int], what: str = N_("shape"), count: int | None = None) -> None:
    """Refuse, before anything is allocated, a shape too large for this machine's memory.

    ``count`` is what would be allocated (the number of entries by default).

    Examples:
        >>> check_size((10**17, 0))          # empty: nothing to allocate
        >>> check_size((10**6, 10**7))
        Traceback (most recent call last):
        ...
        microtape.errors.ShapeError: shape (1000000, 10000000) needs 10000000000000 entries (80000000000000 bytes), ...
    """
    n = math.prod(shape) if count is None else count
    if n > MAX_ENTRIES:
        raise ShapeError(
            explain(
                N_("{0} {1} needs {2} entries ({3} bytes), more than this machine's memory can hold ({4} entries of 8 bytes).").format(what, tuple(shape), n, 8 * n, MAX_ENTRIES),
                N_("A tensor keeps every entry in memory as a float64."),
                N_("check the shape for a typo or a wrong axis; work in smaller batches."),
            ),
            shape=tuple(shape),
            size=n,
        )


def validate_shape(shape: object, what: str = N_("shape")) -> Shape:
    """Return ``shape`` as a tuple of non-negative ints, or raise ShapeError.

    Examples:
        >>> validate_shape([2, 3])
        (2, 3)
    """
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise ShapeError(
            explain(
                N_("{0} must be a tuple of ints, got {1} ({2}).").format(what, repr(shape), type(shape).__name__),
                N_("A shape lists the size of each dimension."),
                N_("write it as a tuple, for example (2, 3), or () for a scalar."),
            ),
            shape=shape,
        )
    for dim in shape:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 0:
            raise ShapeError(
                explain(
                    N_("{0} {1} has the dimension {2}.").format(what, repr(tuple(shape)), repr(dim)),
                    N_("Every dimension must be a non-negative int."),
                    N_("use whole numbers such as (2, 3); -1 is only allowed in reshape."),
                ),
                shape=tuple(shape),
            )
    check_size(shape, what)
    return tuple(shape)
