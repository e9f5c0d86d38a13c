"""Stepping through a backward pass: one ``BackwardStep`` per VJP, with the numbers.

Nothing here re-implements the chain rule: the steps are what the real
backward pass did, seen from the inside, so the last step's gradients are
``gradient()``'s, exactly. Each step also shows the op's local derivative by
each input, asked of the same VJP after the pass (``links.py``), and names its
inputs (``source_text.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from ..engine import user_line, arena
from ..engine.arena import STATE
from ..engine.formatting import format_values
from ..engine.primitive import Op
from ..engine.tensor import Grads, Tensor
from ..engine.backward import Record, backward
from ..language import tr
from ..views.html import escape
from ..views.places import place_of
from .links import links_of
from .source_text import SourceTexts

__all__ = ["Accumulated", "BackwardStep", "accumulated_text", "backward_steps", "short_where", "tensor_text"]

Accumulated: TypeAlias = "Tensor | None | list[Tensor | None] | dict[Any, Tensor | None]"
"""A tensor, a list or a dict (the structure of ``sources``) of ``Tensor | None``."""


def short_where(where: str) -> str:
    """``file:line`` with the file's folders left out, for one-line reports ('cell 5, line 3' in Jupyter).

    Examples:
        >>> from microtape.explain.steps import short_where
        >>> short_where("/home/me/train.py:12")
        'train.py:12'
    """
    return place_of(where)


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
        expression: The op's text on that line (``"x * w"``; ``""`` where the source or, before
            CPython 3.11, the columns are missing and the line has several expressions of its kind).
        operands: A name per input: a source's name, a variable's name, else its text in the op's
            expression (``""`` where none is known).
        dout: The gradient that reached the op's output (the chain so far).
        local: The op's local derivative by each input (``None`` for an input that needs no
            gradient), asked of its VJP: entry by entry for an op that works entry by entry
            (``d out[j] / d input[j]``, in the output's shape, broadcasting included) and for a
            copy (``reshape``, ``slice``...); for a reduction ``d out / d input[k]`` in the
            input's shape; for ``x @ y`` the other operand (``d out[r, c] / d x[r, k]`` is
            ``y[k, c]``); for other ops the Jacobian, ``out.shape + input.shape``, when it has
            at most 4,096 entries.
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
        >>> step.op, step.dout, step.local, step.accumulated
        ('mul', Tensor(1.0, shape=()), (Tensor(3.0, shape=()), Tensor(3.0, shape=())), Tensor(6.0, shape=()))
    """

    __slots__ = ("index", "op", "where", "dout", "grads", "accumulated", "local", "operands", "expression", "_names")

    def __init__(
        self,
        index: int,
        op: str,
        where: str,
        dout: Tensor,
        grads: Grads,
        accumulated: Accumulated,
        names: list[str],
        local: tuple[Tensor | None, ...] = (),
        operands: tuple[str, ...] = (),
        expression: str = "",
    ) -> None:
        self.index: int = index
        self.op: str = op
        self.where: str = where
        self.dout: Tensor = dout
        self.grads: Grads = grads
        self.accumulated: Accumulated = accumulated
        self.local: tuple[Tensor | None, ...] = local
        self.operands: tuple[str, ...] = operands
        self.expression: str = expression
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

    def _operand(self, i: int) -> str:
        return self.operands[i] if i < len(self.operands) and self.operands[i] else tr("input {i}").format(i=i)

    def __str__(self) -> str:
        grads = ", ".join(tensor_text(g) for g in self.grads)
        local = ", ".join(tensor_text(g) for g in self.local) if self.local else "?"
        acc = accumulated_text(self, " ")
        what = f" ({self.expression})" if self.expression else ""
        return tr("step {index}: {op} at {where}{what}: dout {dout} -> local {local} -> grads {grads}; so far {acc}").format(
            index=self.index, op=self.op, where=short_where(self.where), what=what, dout=tensor_text(self.dout), local=local, grads=grads, acc=acc)

    def __repr__(self) -> str:
        return f"BackwardStep({self.index}, {self.op!r}, where={self.where!r})"

    def _repr_html_(self) -> str:
        rows = [
            (tr("step"), str(self.index)),
            (tr("op"), self.op + (f" ({self.expression})" if self.expression else "")),
            (tr("line"), short_where(self.where)),
            (tr("incoming gradient"), tensor_text(self.dout)),
            *((tr("local derivative by {operand}").format(operand=self._operand(i)), tensor_text(g)) for i, g in enumerate(self.local)),
            *((tr("VJP for {operand}").format(operand=self._operand(i)), tensor_text(g)) for i, g in enumerate(self.grads)),
            *((tr("so far: {name}").format(name=name), tensor_text(g)) for name, g in self._accumulated_items()),
        ]
        body = "".join(f"<tr><th>{escape(k)}</th><td><code>{escape(v)}</code></td></tr>" for k, v in rows)
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
    variables: Mapping[int, str] | None = None,
) -> list[BackwardStep]:
    """Run ``tape``'s backward pass (``backward.backward``) and keep a step per VJP.

    The tensors the steps hold survive the pass's scope, like the gradients
    ``gradient()`` returns: an enclosing ``tidy`` disposes them. The local
    derivatives are asked of the VJPs afterwards, quietly (no tape records it,
    the arena never sees those tensors)."""
    origin = {rec[3].id: (rec, where) for rec, where in zip(records, wheres)}
    names = source_names(sources)
    steps: list[BackwardStep] = []
    kept: list[Tensor] = []
    done: list[Record] = []

    def on_step(op: Op, out: Tensor, dout: Tensor, dxs: Grads, grads: dict[int, Tensor]) -> None:
        so_far = [grads.get(s.id) for s in flat]
        kept.append(dout)
        kept.extend(g for g in dxs if g is not None)
        kept.extend(g for g in so_far if g is not None)
        record, found = origin[out.id]
        done.append(record)
        steps.append(BackwardStep(len(steps), op.name, user_line.frame_text(found), dout, tuple(dxs), structured(sources, so_far), names))

    backward(tape, records, targets, [None] * len(targets), flat, False, on_step, kept)
    labels = {s.id: name.strip("[]") if name.startswith("[") else name for s, name in zip(flat, names)}
    labels = {**(variables or {}), **{k: v for k, v in labels.items() if not v.isdigit()}}
    texts = SourceTexts()
    token = STATE.set(STATE.get().replace(tapes=(), observers=(), backward=STATE.get().backward + 1, skip_arena=True))
    try:
        for step, record in zip(steps, done):
            op, inputs, _, _, needs = record
            site = texts.site(origin[record[3].id][1], op.name, op.n_inputs)
            links = links_of(record)
            step.local = tuple(links.local_tensor(i) if wanted else None for i, wanted in enumerate(needs))
            step.expression = site.expression
            step.operands = tuple(
                labels.get(x.id) or (site.operands[i] if site.operands is not None else "") for i, x in enumerate(inputs)
            )
    finally:
        STATE.reset(token)
    return steps
