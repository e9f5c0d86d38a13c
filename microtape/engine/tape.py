"""The tape: records the ops run while it is open, then walks them back for gradients.

While open, a tape appends one record per primitive call whose inputs it
tracks: ``(op, inputs, params, out, needs)``. Records point from outputs to
inputs only and tensors never point at records, so there are no reference
cycles for Python's garbage collector to chase.
"""

from __future__ import annotations

import sys
from types import FrameType
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from . import user_line, arena
from .primitive import Op
from .arena import STATE, TensorBase
from ..errors import TapeError, explain
from ..errors import N_, tr
from .backward import Record, backward, jacobian, reaches
from .tensor import Tensor
from .variable import Variable

__all__ = ["Tape"]

TapeT = TypeVar("TapeT", bound="Tape")

_NEEDS: dict[tuple[bool, ...], tuple[bool, ...]] = {}
"""One shared tuple per pattern of needs flags (a million records share a handful)."""
_ONE: tuple[bool, ...] = (True,)
_PAIRS: tuple[tuple[tuple[bool, ...], ...], ...] = (((False, False), (False, True)), ((True, False), (True, True)))
"""The needs of a one-input and a two-input op, made once (``_PAIRS[first][second]``)."""
_user_frame = user_line.user_frame
_seen_code = user_line.SPOTS.get
_getframe = sys._getframe

_USED_TWICE = N_(
    "A non-persistent GradientTape can only be used to compute one set of gradients "
    "(or jacobians)."
)


class Tape:
    """Record ops while open, then compute gradients by walking them backwards.

    The engine's tape: recording, ``gradient()`` and ``jacobian()``. The
    public :class:`~microtape.GradientTape` (``autodiff/gradient_tape.py``) is this
    class with the views and explanations composed in.

    A record keeps a variable's values as they were when the op read them,
    as TensorFlow does, so an ``assign`` between the forward pass and
    ``gradient()`` does not change the gradient. That costs no copy:
    ``assign`` gives the variable a new list and the record keeps the old
    one, through one small object per variable and value shared by every
    op that read it.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._persistent = persistent
        self._watch_vars = watch_accessed_variables
        self._records: list[Record] = []
        self._wheres: list[tuple[str, int] | None] = []
        """The line of user code that ran each record's op (``user_line.user_frame``), for ``backward_steps()``."""
        self._tracked: set[int] = set()
        self._watched: dict[int, Tensor] = {}
        self._variables: dict[int, Variable] = {}
        """The variables whose values the records hold, by id (a record holds the values, not the variable)."""
        self._used = False
        self._cuts: list[tuple[str, tuple[int, ...], int | None, tuple[str, int] | None]] = []
        self._after_cut: dict[int, int] = {}
        """Values computed, by ops no tape records, from what a cut made: tensor id -> that cut's index."""
        """Where values left this tape's graph: (how, the tracked inputs' ids, the new tensor's id or
        None for a read-out, the user's line): a stop_gradient, a copy, an assign, a read-out."""
        self._last: tuple[list[Tensor], list[list[float] | None]] | None = None
        """The targets and output gradients (as values) of the last backward pass:
        summary() and to_dot() replay it to measure gradient norms."""

    # -- recording ---------------------------------------------------------

    @property
    def persistent(self) -> bool:
        """Whether ``gradient()`` may be called more than once."""
        return self._persistent

    def __enter__(self: TapeT) -> TapeT:
        st = STATE.get()
        if self in st.tapes:
            raise TapeError(
                explain(
                    N_("This GradientTape is already open."),
                    N_("A tape can be entered once at a time."),
                    N_("make a second GradientTape() for a nested tape."),
                )
            )
        STATE.set(st.replace(tapes=st.tapes + (self,)))
        return self

    def __exit__(self, *exc: object) -> None:
        st = STATE.get()
        STATE.set(st.replace(tapes=tuple([t for t in st.tapes if t is not self])))

    def _record(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor) -> None:
        if self._used:
            return
        tracked = self._tracked
        # needs[i]: input i is tracked (a trainable variable read here is tracked from now on).
        # One and two inputs (nearly every op) are spelled out: a loop costs more than the checks.
        n = len(inputs)
        if n == 2:
            a, b = inputs
            first = a._id in tracked or a._trainable and self._watch_read(a)
            second = b._id in tracked or b._trainable and self._watch_read(b)
            if not (first or second):
                if self._after_cut:
                    self._follow_cut(inputs, out)
                return
            needs = _PAIRS[first][second]
            kept = a._kept or b._kept
        elif n == 1:
            a = inputs[0]
            if not (a._id in tracked or a._trainable and self._watch_read(a)):
                if self._after_cut:
                    self._follow_cut(inputs, out)
                return
            needs = _ONE
            kept = a._kept
        else:
            flags = tuple([x._id in tracked or x._trainable and self._watch_read(x) for x in inputs])
            if True not in flags:
                if self._after_cut:
                    self._follow_cut(inputs, out)
                return
            needs = _NEEDS.setdefault(flags, flags)
            kept = True in [x._kept for x in inputs]
        if kept:  # a variable (always kept) among the inputs: record what it holds now (TensorFlow's rule)
            inputs = tuple([self._read(v) if isinstance(v, Variable) else v for v in inputs])
        tracked.add(out._id)
        self._records.append((op, inputs, params, out, needs))
        # The line of user code that ran the op: user_line.user_frame(3) (1 is _record, 2 primitive.py's
        # emit, 3 the op's call), written out for the two cases of nearly every record, whose
        # call sites it has already seen: the op called from the user's code, or through one
        # of Tensor's operators (one package frame between).
        frame: FrameType | None = _getframe(3)
        seen = _seen_code(id(frame.f_code))  # type: ignore[union-attr]  # three frames up is the op's caller
        if seen is not None and seen[1] is None:
            frame = frame.f_back  # type: ignore[union-attr]  # as above
            seen = None if frame is None else _seen_code(id(frame.f_code))
        where = seen[1].get(frame.f_lasti) if seen is not None and seen[1] is not None and frame is not None else None
        self._wheres.append(where or _user_frame(3))
        for x in inputs:
            x._holds += 1
        out._holds += 1

    def _cut(self, how: str, inputs: tuple[TensorBase, ...], out: TensorBase | None) -> None:
        """Note that ``how`` made ``out`` from tracked ``inputs`` without a record (``Recorder._cut``)."""
        tracked = tuple([x.id for x in inputs if x.id in self._tracked])
        if tracked and not self._used:
            self._cuts.append((how, tracked, None if out is None else out.id, _user_frame(3)))
            if out is not None:
                self._after_cut[out.id] = len(self._cuts) - 1

    def _follow_cut(self, inputs: tuple[Tensor, ...], out: Tensor) -> None:
        """An op no tape records read a value made after a cut: its output comes after that cut too."""
        for x in inputs:
            cut = self._after_cut.get(x.id)
            if cut is not None:
                self._after_cut[out.id] = cut
                return

    def _read(self, variable: Variable) -> Tensor:
        """The variable's values as the record keeps them; the tape remembers whose they are (for ``to_dot``)."""
        self._variables[variable._id] = variable
        return variable._recorded()

    def _watch_read(self, variable: Tensor) -> bool:
        """A trainable variable an op reads: watch it if this tape watches what it accesses."""
        if not self._watch_vars:
            return False
        self._tracked.add(variable._id)
        self._watched[variable._id] = variable
        return True

    def _watch(self, tensors: list[Tensor]) -> None:
        """Track ``tensors`` (checked live tensors) from now on (``GradientTape.watch``)."""
        for t in tensors:
            self._tracked.add(t._id)
            self._watched[t._id] = t

    def watched_variables(self) -> list[Variable]:
        """The variables this tape watches, explicitly or by access, in order.

        Examples:
            >>> w = mt.variable(mt.scalar(1.0), name="w_watched")
            >>> with mt.GradientTape() as tape:
            ...     y = w * 2.0
            >>> [v.name for v in tape.watched_variables()]
            ['w_watched']
        """
        return [t for t in self._watched.values() if isinstance(t, Variable)]

    @contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Pause recording on this tape inside a ``with`` block.

        Examples:
            >>> x = mt.scalar(2.0)
            >>> with mt.GradientTape(persistent=True) as tape:
            ...     tape.watch(x)
            ...     with tape.stop_recording():
            ...         ignored = x * 100.0
            ...     y = x * 3.0
            >>> tape.gradient(ignored, x) is None, tape.gradient(y, x)
            (True, Tensor(3.0, shape=()))
        """
        st = STATE.get()
        if self not in st.tapes:
            raise TapeError(
                explain(
                    N_("stop_recording() was called on a tape that is not recording."),
                    N_("It pauses a tape inside that tape's `with` block."),
                    N_("use it as: with tape: ... with tape.stop_recording(): ..."),
                )
            )
        STATE.set(st.replace(tapes=tuple([t for t in st.tapes if t is not self])))
        try:
            yield
        finally:
            now = STATE.get()
            STATE.set(now.replace(tapes=now.tapes + (self,)))

    def reset(self) -> None:
        """Forget everything recorded and watched, keeping the tape open.

        Examples:
            >>> x = mt.scalar(1.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(x)
            ...     _ = x * 2.0
            ...     tape.reset()
            >>> tape.operations
            []
        """
        self.release()
        self._watched.clear()
        self._tracked.clear()
        self._used = False

    def release(self) -> None:
        """Let go of every tensor this tape holds for its backward pass.

        A persistent tape holds its records until released (or garbage
        collected); ``mt.memory().num_tensors_held_by_tapes`` shows them.

        Examples:
            >>> x = mt.scalar(1.0)
            >>> with mt.GradientTape(persistent=True) as tape:
            ...     tape.watch(x)
            ...     y = x * 2.0
            >>> tape.release()
            >>> tape.operations
            []
        """
        records, self._records, self._wheres = self._records, [], []
        self._cuts = []
        self._after_cut = {}
        self._last = None
        self._variables.clear()
        unused: list[TensorBase] = []
        for _, inputs, _, out, _ in records:  # this tape no longer needs the record's tensors
            for t in inputs:
                t._holds -= 1
                if t._holds == 0 and t._disposed is not None:
                    unused.append(t)
            out._holds -= 1
            if out._holds == 0 and out._disposed is not None:
                unused.append(out)
        arena.free_all(unused)

    def __del__(self) -> None:
        try:
            if self._records:
                self.release()
        except Exception:  # noqa: BLE001 - never raise from a finaliser (interpreter shutdown)
            pass

    # -- gradients -----------------------------------------------------------

    def _gradient(self, targets: list[Tensor], douts: list[Tensor | None], sources: list[Tensor], zero: bool) -> list[Tensor | None]:
        """The gradients of ``targets`` (weighted by ``douts``, ones where None) for each of
        ``sources``: one backward pass. The caller then calls ``_finish()``."""
        self._check_usable()
        return self._backward(targets, douts, sources, zero)

    def _jacobian(self, target: Tensor, source: Tensor, zero: bool) -> Tensor | None:
        """``d target[i...] / d source[j...]``, shape ``target.shape + source.shape``: one backward
        pass per entry. The caller then calls ``_finish()``."""
        self._check_usable()
        result = arena.run_in_scope("jacobian()", lambda: jacobian(self._backward, self._records, target, source, zero))
        assert result is None or isinstance(result, Tensor)
        return result

    def _check_usable(self) -> None:
        if self._used:
            raise TapeError(
                explain(
                    _USED_TWICE,
                    N_("Its records were freed after the first gradient() call."),
                    N_("create it with GradientTape(persistent=True) to call gradient() or jacobian() again."),
                )
            )

    def _finish(self) -> None:
        if not self._persistent:
            self._used = True
            self.release()

    def _reaches(self, target: Tensor, sources: Sequence[Tensor]) -> list[bool]:
        """For each source, whether ``target`` depends on it through recorded ops."""
        return reaches(self._records, target, sources)

    def _backward(
        self, targets: list[Tensor], douts: list[Tensor | None], sources: list[Tensor], zero: bool
    ) -> list[Tensor | None]:
        """The backward pass (``backward.py``), remembered so that summary() and to_dot() can replay it."""
        self._last = (targets, [None if d is None else d.data_sync() for d in douts])
        return backward(self, self._records, targets, douts, sources, zero)

    def __repr__(self) -> str:
        # translated before the values go in (a repr is printed as it is, not through explain)
        if self._used:
            return tr("{0}(persistent={1}, used, watching {2} tensors)").format(type(self).__name__, self._persistent, len(self._watched))
        return tr("{0}(persistent={1}, {2} ops recorded, watching {3} tensors)").format(
            type(self).__name__, self._persistent, len(self._records), len(self._watched)
        )
