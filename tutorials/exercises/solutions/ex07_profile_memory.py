"""Solution: exercise 7, measure memory and profile a function (chapter 7).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex07_profile_memory.py``
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex07_profile_memory"  # the grader reads this: do not change it


def layer(x: mt.Tensor, w: mt.Tensor) -> mt.Tensor:
    """A dense layer with relu, summed: sum(relu(x @ w))."""
    return mt.relu(x @ w).sum()


def leftover_tensors(fn: Callable[[], object]) -> int:
    """How many more tensors are alive after one call of ``fn`` than before."""
    before = mt.memory().num_tensors
    fn()
    return mt.memory().num_tensors - before


def profile_layer(x: mt.Tensor, w: mt.Tensor) -> mt.ProfileInfo:
    """Profile one call of ``layer`` inside ``tidy``: only the result survives."""
    return mt.profile(lambda: mt.tidy(lambda: layer(x, w)))


def extra_peak_bytes(fn: Callable[[], object]) -> int:
    """The most memory ``fn`` used at once, beyond what was alive before it ran."""
    before = mt.memory().num_bytes
    return mt.profile(fn).peak_bytes - before
