"""``leak_check``: the tensors a block made and left alive, by op and by the line that made them."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Literal, TypeAlias
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..engine import arena, user_line
from ..engine.arena import TensorBase
from ..engine.primitive import Op
from ..engine.tensor import BYTES_PER_ENTRY, Grads, Tensor
from ..engine.types import Shape
from ..engine.variable import VARIABLES, Variable
from ..views.html import record_html
from ..errors import N_, InvalidArgumentError, LeakError, explain
from ..language import tr

__all__ = ["STATE_OF", "LeakGroup", "LeakReport", "OnLeak", "StateGroup", "leak_check"]

STATE_OF: list[Callable[[Variable], tuple[str, str, str] | None]] = []
"""Who knows what a variable made inside the block is: ``(owner, slot name, user line)`` for an
optimizer's slot, else None. ``train/slots.py`` puts its answer here when it is imported (the
optimizers sit above this folder)."""


@dataclass(frozen=True, slots=True)
class LeakGroup:
    """Leaked tensors made by one op at one source line.

    ``held`` marks tensors that were disposed but that a ``GradientTape``
    still holds for its backward pass (a persistent tape not yet released,
    or a tape whose ``gradient()`` was never called): their memory is not
    free either.
    """

    op: str
    where: str
    count: int
    num_bytes: int
    shapes: tuple[Shape, ...]
    held: bool = False


@dataclass(frozen=True, slots=True)
class StateGroup:
    """Optimizer state made inside the block and still alive: the slot variables one optimizer
    made at one line (``"w/m"``, ``"w/v"`` for Adam). Not a leak while the optimizer is used;
    ``opt.dispose()`` frees them."""

    owner: str
    where: str
    count: int
    num_bytes: int
    names: tuple[str, ...]


@dataclass
class LeakReport:
    """What :func:`leak_check` found; filled in when the block ends: ``groups`` (leaked
    tensors) and ``state`` (optimizer state made inside the block, which is not a leak)."""

    groups: list[LeakGroup] = field(default_factory=list)
    state: list[StateGroup] = field(default_factory=list)
    _repr_html_ = record_html  # Jupyter shows the fields as tables

    @property
    def count(self) -> int:
        """Number of leaked tensors."""
        return sum(g.count for g in self.groups)

    @property
    def num_bytes(self) -> int:
        """Bytes held by leaked tensors."""
        return sum(g.num_bytes for g in self.groups)

    def __bool__(self) -> bool:
        return bool(self.groups)

    def __str__(self) -> str:
        state = self._state_lines()
        if not self.groups:
            return "\n".join([tr(N_("leak_check: no leaks")) + (";" if state else ""), *state])
        lines = [tr(N_("leak_check: {0} tensor(s), {1} bytes still alive:")).format(self.count, self.num_bytes)]
        for g in self.groups:
            shapes = ", ".join(str(s) for s in g.shapes[:3]) + (", ..." if len(g.shapes) > 3 else "")
            held = "  " + tr(N_("(disposed, but a tape holds it)")) if g.held else ""
            lines.append("  " + tr(N_("{0} x {1} at {2}  shapes {3}{4}")).format(f"{g.count:>4}", f"{g.op:<12}", g.where, shapes, held))
        lines.append("  " + tr("hint") + ": " + tr(N_("wrap the work in mt.tidy(...), or dispose() what you no longer need.")))
        if any(g.held for g in self.groups):
            lines.append("  " + tr("hint") + ": " + tr(N_(
                "a tape holds what its backward pass needs until gradient() (non-persistent) "
                "or tape.release() (persistent)."
            )))
        return "\n".join(lines + state)

    def _state_lines(self) -> list[str]:
        if not self.state:
            return []
        total = sum(g.count for g in self.state)
        lines = [tr(N_("optimizer state made inside the block is still alive: {0} slot variable(s), not counted as leaks:")).format(total)]
        for g in self.state:
            names = ", ".join(g.names[:4]) + (", ..." if len(g.names) > 4 else "")
            lines.append("  " + tr(N_("{0} x slot of {1} made at {2}  ({3}), {4} bytes")).format(f"{g.count:>4}", g.owner, g.where, names, g.num_bytes))
        lines.append("  " + tr(N_(
            "they are counted in memory().num_tensors and num_variables (as TF.js counts them); the optimizer keeps "
            "them for its next steps, and opt.dispose() frees them"
        )))
        return lines


class _LeakTracker:
    """Records the user's line that made each tensor: for the leak report, and for
    a ``DisposedTensorError`` raised inside the block (``origin``)."""

    KEEP_FREED = 4096  # lines of the most recently freed tensors, for their disposal errors

    def __init__(self) -> None:
        self.made: dict[int, tuple[TensorBase, str]] = {}
        self.freed: dict[int, str] = {}

    def on_create(self, tensor: TensorBase) -> None:
        self.made[tensor.id] = (tensor, user_line.user_frame_line())

    def on_free(self, tensor: TensorBase) -> None:
        found = self.made.pop(tensor.id, None)
        if found is not None:
            self.freed[tensor.id] = found[1]
            if len(self.freed) > self.KEEP_FREED:
                del self.freed[next(iter(self.freed))]

    def origin(self, tensor: TensorBase) -> str | None:
        found = self.made.get(tensor.id)
        return found[1] if found is not None else self.freed.get(tensor.id)

    def on_op(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor, seconds: float) -> None:
        pass

    def on_vjp(self, op: Op, inputs: tuple[Tensor, ...], out: Tensor, dxs: Grads) -> None:
        pass


OnLeak: TypeAlias = Literal["print", "warn", "raise", "ignore"]
"""``leak_check(on_leak=...)``: what a leak does at the end of the block."""


@contextmanager
def leak_check(on_leak: OnLeak = "print") -> Iterator[LeakReport]:
    """Report tensors made inside the block that are still alive at its end.

    Leaks are grouped by the op and the line of your code that made them.
    ``on_leak`` is ``"print"`` (to stdout), ``"warn"``, ``"raise"``
    (:class:`~microtape.LeakError`) or ``"ignore"``; the report is also the
    ``as`` target. Anything you still hold counts, so check a block that
    should leave nothing behind, such as a training step. A tensor that was
    disposed but that a ``GradientTape`` still holds for its backward pass
    (a persistent tape not yet released) counts too, marked as held by a
    tape: its memory is not free either.

    Examples:
        >>> x = mt.tensor([1.0, 2.0])
        >>> with mt.leak_check(on_leak="ignore") as report:
        ...     for _ in range(3):
        ...         y = x * x            # never disposed: 3 tensors leak
        >>> report.count, report.groups[0].op
        (3, 'mul')
        >>> with mt.leak_check() as report:
        ...     mt.tidy(lambda: x * 2.0).dispose()
        >>> report.count
        0
    """
    if on_leak not in ("print", "warn", "raise", "ignore"):
        raise InvalidArgumentError(
            explain(
                N_('leak_check(on_leak={0}) is not an option.').format(repr(on_leak)),
                N_('on_leak is "print", "warn", "raise" or "ignore".'),
                N_('write mt.leak_check(on_leak="raise") in a test.'),
            ),
            value=on_leak,
        )
    tracker = _LeakTracker()
    report = LeakReport()
    before = {v.id for v in list(VARIABLES.values())}
    with arena.observing(tracker):
        yield report
    report.state.extend(_new_state(before))
    groups: dict[tuple[str, str, bool], list[TensorBase]] = {}
    for t, where in tracker.made.values():
        # alive, or disposed but still held by a tape (its data is not freed either)
        if t._data is not None and not t._kept and not isinstance(t, Variable):
            groups.setdefault((t._op, where, t._disposed is not None), []).append(t)
    report.groups.extend(
        LeakGroup(op, where, len(ts), BYTES_PER_ENTRY * sum(t.size for t in ts), tuple(t.shape for t in ts), held)
        for (op, where, held), ts in sorted(groups.items(), key=lambda kv: -len(kv[1]))
    )
    if not report:
        if report.state and on_leak == "print":
            print(report, file=sys.stdout)
        return
    if on_leak == "print":
        print(report, file=sys.stdout)
    elif on_leak == "warn":
        warnings.warn(str(report), ResourceWarning, stacklevel=3)
    elif on_leak == "raise":
        raise LeakError(str(report), count=report.count, groups=report.groups)


def _new_state(before: set[int]) -> list[StateGroup]:
    """The optimizer slots made since ``before`` (ids of the variables alive then), grouped by owner and line."""
    found: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for v in list(VARIABLES.values()):
        if v.id in before or v.is_disposed:
            continue
        for owner_of in STATE_OF:
            info = owner_of(v)
            if info is not None:
                owner, name, where = info
                found.setdefault((owner, where), []).append((name, BYTES_PER_ENTRY * v.size))
                break
    return [
        StateGroup(owner, where, len(items), sum(n for _, n in items), tuple(name for name, _ in items))
        for (owner, where), items in found.items()
    ]
