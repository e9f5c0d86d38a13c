"""The tracer's protocol: what ``mt.function`` is told while it records a step.

A tracer is an observer (``engine/arena.py``) that also hears what is not an
op: values read out of tensors (``on_read``: by ``item()`` and its kin, or by
the library, as ``mt.grad_stats`` does), copies (``on_copy``: ``mt.tensor(t)``),
effects that must run at every call (``on_effect``: ``mt.print``,
``check_numerics``), variables written (``on_assign``) and optimizer updates
(``on_update``, the protocol of ``train/optimizer.py``'s ``UpdateWatcher``).
The library tells it through ``arena.notify``. ``function.py`` implements it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..engine.arena import Observer, TensorBase

__all__ = ["Tracer"]


class Tracer(Observer, Protocol):
    """An observer that records a program (``mt.function`` while it traces)."""

    traces: bool

    def on_read(self, tensor: TensorBase, who: str | None = None, hint: str | None = None) -> None:
        """Values of ``tensor`` are read into Python (``who`` read them; ``hint``: what to write instead)."""

    def on_copy(self, source: TensorBase, out: TensorBase) -> None:
        """``out`` is a new tensor holding a copy of ``source``'s values."""

    def on_effect(self, label: str, tensors: Sequence[TensorBase], run: Callable[..., None]) -> None:
        """``run(*lists)`` must run again at every call, in its place, on the values of ``tensors``."""

    def on_assign(self, variable: TensorBase, kind: str, value: object, data: list[float]) -> None: ...

    def on_update(
        self, owner: object, apply: Callable[[Any, list[Any], list[list[float]]], None],
        variables: Sequence[TensorBase], grads: Sequence[TensorBase], label: str,
    ) -> None: ...

    def pause(self) -> None:
        """Stop recording (an optimizer's own reads and writes), until :meth:`resume`."""

    def resume(self) -> None:
        """Record again after :meth:`pause`."""
