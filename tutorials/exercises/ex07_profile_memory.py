"""Exercise 7: measure memory and profile a function.

Chapter 7, "Analysis tools" (Встроенные функции для анализа).

``mt.memory()`` counts what is alive now; ``mt.profile(fn)`` runs ``fn``
and reports the kernels (ops) it ran, how many tensors and bytes it left
behind (``new_tensors``, ``new_bytes``) and the highest memory use while it
ran (``peak_bytes``, a total over *every* live tensor, not only fn's).

1. ``leftover_tensors(fn)``: how many more tensors are alive after one call
   of ``fn`` than before it (use ``mt.memory().num_tensors``).
2. ``profile_layer(x, w)``: profile one call of ``layer(x, w)`` run inside
   ``mt.tidy``, and return the profile. It should show the kernels
   ``['matmul', 'relu', 'sum']`` and ``new_tensors == 1`` (only the result).
3. ``extra_peak_bytes(fn)``: the most memory ``fn`` used at once, *beyond*
   what was already alive before it ran.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex07_profile_memory.py
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex07_profile_memory"  # the grader reads this: do not change it


def layer(x: mt.Tensor, w: mt.Tensor) -> mt.Tensor:
    """A dense layer with relu, summed: sum(relu(x @ w)). Given: do not change it."""
    return mt.relu(x @ w).sum()


def leftover_tensors(fn: Callable[[], object]) -> int:
    """How many more tensors are alive after one call of ``fn`` than before."""
    raise NotImplementedError("TODO 1: return how many more tensors are alive after one call of fn than before it")


def profile_layer(x: mt.Tensor, w: mt.Tensor) -> mt.ProfileInfo:
    """Profile one call of ``layer`` inside ``tidy``."""
    raise NotImplementedError("TODO 2: return the profile of one call of layer(x, w) run inside tidy")


def extra_peak_bytes(fn: Callable[[], object]) -> int:
    """The most memory ``fn`` used at once, beyond what was alive before it ran."""
    raise NotImplementedError("TODO 3: return fn's peak memory in bytes beyond what was alive before it ran")
