"""Stepping through a backward pass: one ``BackwardStep`` per VJP, with the numbers.

Nothing here re-implements the chain rule: the steps are what the real
backward pass did, seen from the inside, so the last step's gradients are
``gradient()``'s, exactly.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from ..engine import user_line, arena
from ..engine.formatting import format_values
from ..engine.primitive import Op
from ..engine.tensor import Grads, Tensor
from ..engine.backward import Record, backward

__all__ = ["Accumulated", "BackwardStep", "accumulated_text", "backward_steps", "short_where", "tensor_text"]

Accumulated: TypeAlias = "Tensor | None | list[Tensor | None] | dict[Any, Tensor | None]"
"""A tensor, a list or a dict (the structure of ``sources``) of ``Tensor | None``."""


def short_where(where: str) -> str:
    """``file:line`` with the file's folders left out, for one-line reports."""
    return os.path.basename(where)


def tensor_text(t: Tensor | None) -> str:
    """A gradient's values as the steps print them: nested lists, ``None``, or ``<freed>``."""
    if t is None:
        return "None"
    data = t._data
    return "<freed>" if data is None else format_values(data, t.shape)


class BackwardStep:
    """One VJP of a backward pass, as ``GradientTape.backward_steps`` yields it.

    Attributes:
        index: 0 for the first VJP the pass runs (the op nearest the target).
        op: The op's name (``"mul"``, ``"sum"``...).
        where: ``file:line`` of your code that ran the op forward.
        dout: The gradient that reached the op's output (the chain so far).
        grads: What the VJP returned, one entry per input of the op (``None``
            for an input that needs no gradient).
        accumulated: The gradients of ``sources`` after this step, in the
            structure of ``sources`` (a tensor, a list or a dict); a source
            the pass has not reached yet is ``None``.

    Examples:
        >>> x = mt.scalar(3.0)
        >>> with mt.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> (step,) = tape.backward_steps(y, x)
        >>> step.op, step.dout, step.accumulated
        ('mul', Tensor(1.0, shape=()), Tensor(6.0, shape=()))
    """

    __slots__ = ("index", "op", "where", "dout", "grads", "accumulated", "_names")

    def __init__(self, index: int, op: str, where: str, dout: Tensor, grads: Grads, accumulated: Accumulated, names: list[str]) -> None:
        self.index: int = index
        self.op: str = op
        self.where: str = where
        self.dout: Tensor = dout
        self.grads: Grads = grads
        self.accumulated: Accumulated = accumulated
        self._names = names

    def _accumulated_items(self) -> list[tuple[str, Tensor | None]]:
        acc = self.accumulated
        if isinstance(acc, Mapping):
            values: list[Tensor | None] = list(acc.values())
        elif isinstance(acc, list):
            values = acc
        else:
            values = [acc]
        return list(zip(self._names, values))

    def __str__(self) -> str:
        grads = ", ".join(tensor_text(g) for g in self.grads)
        acc = accumulated_text(self, " ")
        return f"step {self.index}: {self.op} at {short_where(self.where)}: dout {tensor_text(self.dout)} -> grads {grads}; so far {acc}"

    def __repr__(self) -> str:
        return f"BackwardStep({self.index}, {self.op!r}, where={self.where!r})"

    def _repr_html_(self) -> str:
        rows = [
            ("step", str(self.index)),
            ("op", self.op),
            ("line", self.where),
            ("incoming gradient", tensor_text(self.dout)),
            *((f"VJP for input {i}", tensor_text(g)) for i, g in enumerate(self.grads)),
            *((f"so far: {name}", tensor_text(g)) for name, g in self._accumulated_items()),
        ]
        body = "".join(f"<tr><th>{html.escape(k)}</th><td><code>{html.escape(v)}</code></td></tr>" for k, v in rows)
        return f"<table class='microtape-backward-step'>{body}</table>"


def accumulated_text(step: BackwardStep, sep: str = ": ", text: Callable[[Tensor | None], str] = tensor_text) -> str:
    """The gradients so far of ``step`` as one line: each source's name, ``sep``, its values (as ``text`` writes them)."""
    return ", ".join(f"{name}{sep}{text(g)}" for name, g in step._accumulated_items())


def structured(sources: object, values: list[Tensor | None]) -> Accumulated:
    """``values`` (one per flat source) in the structure of ``sources``, as ``gradient()`` returns it."""
    if isinstance(sources, Tensor):
        return values[0]
    if isinstance(sources, Mapping):
        return dict(zip(sources.keys(), values))
    return list(values)


def source_names(sources: object) -> list[str]:
    """A short name per flat source for ``str()``: the dict key, ``[i]`` for a list, ``source`` for one."""
    if isinstance(sources, Tensor):
        return ["source"]
    if isinstance(sources, Mapping):
        return [str(k) for k in sources.keys()]
    assert isinstance(sources, Sequence)
    return [f"[{i}]" for i in range(len(sources))]


def backward_steps(
    tape: arena.Recorder,
    records: Sequence[Record],
    wheres: Sequence[tuple[str, int] | None],
    targets: list[Tensor],
    flat: list[Tensor],
    sources: object,
) -> list[BackwardStep]:
    """Run ``tape``'s backward pass (``backward.backward``) and keep a step per VJP.

    The tensors the steps hold survive the pass's scope, like the gradients
    ``gradient()`` returns: an enclosing ``tidy`` disposes them."""
    origin = {rec[3].id: where for rec, where in zip(records, wheres)}
    names = source_names(sources)
    steps: list[BackwardStep] = []
    kept: list[Tensor] = []

    def on_step(op: Op, out: Tensor, dout: Tensor, dxs: Grads, grads: dict[int, Tensor]) -> None:
        so_far = [grads.get(s.id) for s in flat]
        kept.append(dout)
        kept.extend(g for g in dxs if g is not None)
        kept.extend(g for g in so_far if g is not None)
        where = user_line.frame_text(origin.get(out.id))
        steps.append(BackwardStep(len(steps), op.name, where, dout, tuple(dxs), structured(sources, so_far), names))

    backward(tape, records, targets, [None] * len(targets), flat, False, on_step, kept)
    return steps
