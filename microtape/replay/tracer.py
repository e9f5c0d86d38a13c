"""The tracer's protocol: what ``mt.function`` is told while it records a step.

A tracer is an observer (``engine/arena.py``) that also hears what is not an
op: values read out of tensors (``on_read``), variables written
(``on_assign``) and optimizer updates (``on_update``, the protocol of
``train/optimizer.py``'s ``UpdateWatcher``). ``function.py`` implements it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..engine.arena import Observer, TensorBase

__all__ = ["Tracer"]


class Tracer(Observer, Protocol):
    """An observer that records a program (``mt.function`` while it traces)."""

    traces: bool

    def on_read(self, tensor: TensorBase) -> None: ...

    def on_assign(self, variable: TensorBase, kind: str, value: object, data: list[float]) -> None: ...

    def on_update(
        self, owner: object, apply: Callable[[Any, list[Any], list[list[float]]], None],
        variables: Sequence[TensorBase], grads: Sequence[TensorBase], label: str,
    ) -> None: ...

    def pause(self) -> None:
        """Stop recording (an optimizer's own reads and writes), until :meth:`resume`."""

    def resume(self) -> None:
        """Record again after :meth:`pause`."""
