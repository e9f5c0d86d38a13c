"""The floor under microtape's eager path: a bare engine with TF.js's semantics, for the chain.

Not part of microtape; ``chain.py`` races it against the tuple tape in the same
run, so the chain's ratio can be read against what its semantics cost by
themselves. What it keeps, as microtape does:

* every value is a tensor in an arena (a dict by id), Python constants too;
* each op's result goes into the innermost tidy scope; a constant is disposed
  when its op returns, but stays (pending) while a tape holds it;
* a tape records every op whose input it tracks, ``(kind, inputs, out)``, and
  holds its tensors until the backward pass is done;
* the backward pass is generic: one reversed loop over the records, a VJP per
  kind on flat lists, gradients accumulated by tensor id;
* the scope's end disposes everything the chain made.

What it leaves out is what microtape adds on top of those semantics: the op
table and its checks (disposed inputs, argument binding, broadcasting), the
observers (profile, leak_check, detect_anomaly, ``mt.function``), the line of
user code each record keeps, variables, ``needs`` flags, several open tapes,
error messages. Only ``mul`` and ``add`` by a number and ``tanh`` exist.

``numbers_as_tensors=False`` drops one piece of the semantics, the tensor
made for each Python number (TF.js's rule, which microtape follows: the
number is a tensor in the arena, held while a tape needs it); the record
keeps the float instead. ``chain.py`` measures both, to show what the
number's tensor costs by itself.

``values_as_lists=False`` (with ``numbers_as_tensors=False``) changes the
data model as well: a 0-d tensor holds its float, not a one-entry list, which
is what microtape's flat ``list[float]`` + shape rules out. ``chain.py``
measures its peak memory only, to show what a million-op chain would need to
hold 2.5 times the tuple tape.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

__all__ = ["prototype_chain"]

_ids = itertools.count(1)
ARENA: dict[int, BareTensor] = {}


class BareTensor:
    """A tensor: a flat list, a shape, an id, and its lifetime (disposed? held by tapes?).

    With ``values_as_lists=False`` its data is the float itself."""

    __slots__ = ("data", "shape", "id", "disposed", "holds")

    def __init__(self, data: Any, scope: list[BareTensor] | None) -> None:
        self.data = data
        self.shape: tuple[int, ...] = ()
        self.id = tid = next(_ids)
        self.disposed = False
        self.holds = 0
        ARENA[tid] = self
        if scope is not None:
            scope.append(self)


def _free(t: BareTensor) -> None:
    t.data = []
    ARENA.pop(t.id, None)


class BareTape:
    """Records ``(kind, inputs, out)`` for every op on a tracked tensor."""

    def __init__(self, numbers_as_tensors: bool = True, values_as_lists: bool = True) -> None:
        self.records: list[tuple[str, tuple[BareTensor, ...], BareTensor, float]] = []
        self.tracked: set[int] = set()
        self.numbers_as_tensors = numbers_as_tensors
        self.lists = values_as_lists

    def op(self, kind: str, x: BareTensor, c: float | None, scope: list[BareTensor]) -> BareTensor:
        k = None
        v = x.data[0] if self.lists else x.data
        if c is None:
            inputs: tuple[BareTensor, ...] = (x,)
            r = math.tanh(v)
        else:
            if self.numbers_as_tensors:
                k = BareTensor([c], None)  # the number's tensor, in the arena, not in the scope
                inputs = (x, k)
            else:
                inputs = (x,)
            r = v * c if kind == "mul" else v + c
        out = BareTensor([r] if self.lists else r, scope)
        if x.id in self.tracked:
            self.tracked.add(out.id)
            self.records.append((kind, inputs, out, 0.0 if c is None else c))
            for t in inputs:
                t.holds += 1
            out.holds += 1
        if k is not None:  # the op's own scope ends: the number's tensor is disposed, pending while held
            k.disposed = True
            if k.holds == 0:
                _free(k)
        return out

    def gradient(self, target: BareTensor, source: BareTensor) -> BareTensor:
        grads: dict[int, list[float]] = {target.id: [1.0]}
        for kind, inputs, out, c in reversed(self.records):
            dout = grads.pop(out.id, None)
            if dout is None:
                continue
            x = inputs[0]
            if kind == "mul":
                dx = [dout[0] * c]
            elif kind == "add":
                dx = dout
            else:
                o = out.data[0] if self.lists else out.data
                dx = [dout[0] * (1.0 - o * o)]
            prev = grads.get(x.id)
            grads[x.id] = dx if prev is None else [prev[0] + dx[0]]
        for _, inputs, out, _ in self.records:  # release what the tape held
            for t in (*inputs, out):
                t.holds -= 1
                if t.holds == 0 and t.disposed:
                    _free(t)
        self.records = []
        return BareTensor(grads[source.id], None)


def prototype_chain(
    prog: list[tuple[str, float]], x0: float, numbers_as_tensors: bool = True, values_as_lists: bool = True
) -> tuple[float, float]:
    """The chain on the bare engine, inside a tidy scope: (value, d value / d x)."""
    scope: list[BareTensor] = []
    x = BareTensor([x0] if values_as_lists else x0, scope)
    tape = BareTape(numbers_as_tensors, values_as_lists)
    tape.tracked.add(x.id)
    y = x
    for name, c in prog:
        y = tape.op(name, y, None if name == "tanh" else c, scope)
    g = tape.gradient(y, x)
    value, grad = (y.data[0] if values_as_lists else y.data), g.data[0]
    for t in scope:  # the scope ends: dispose what it made
        if not t.disposed:
            t.disposed = True
            if t.holds == 0:
                _free(t)
    _free(g)
    return value, grad
