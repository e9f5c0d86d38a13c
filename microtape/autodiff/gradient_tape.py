"""``GradientTape``, the public tape: the engine's recording, with the views and the "why" composed in.

The engine's ``Tape`` (``engine/tape.py``) records ops and computes
``gradient()`` and ``jacobian()``; this class adds what a student looks at:
``operations``, ``summary()``, ``to_dot()``, ``to_svg()`` (from ``views/``),
``explain()`` and ``backward_steps()`` (from ``explain/``), each a few lines
over the records the tape keeps.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from types import FrameType
from typing import TypeVar, overload

from ..engine.backward import gradient_norms
from ..explain.paths import explain_records
from ..explain.report import GradientExplanation
from ..explain.steps import BackwardStep, backward_steps
from .tape_args import UnconnectedGradients, check_flag, check_tensor, jacobian_target, output_gradients_for, sources_of, targets_of, unconnected_mode, watchable
from ..engine.tape import Tape
from ..views.tape_text import Operation, RankDir, dot_graph, operations_of, summary_table
from ..views.tape_svg import layout, summary_html, svg
from ..engine.tensor import Tensor
from ..engine.variable import Variable
from ..errors import GradientWarning, TapeError, explain
from ..language import N_
from .unconnected import Cause, why_unconnected

__all__ = ["GradientTape"]

K = TypeVar("K")


class GradientTape(Tape):
    """Record ops while open, then compute gradients by walking them backwards.

    The explicit tape of TensorFlow for Python (``tf.GradientTape``);
    TensorFlow.js has none and hides one inside ``tf.grad``. Trainable
    variables read inside the block are watched automatically; plain tensors
    must be watched with :meth:`watch`.

    A record keeps a variable's values as they were when the op read them,
    as TensorFlow does, so an ``assign`` between the forward pass and
    ``gradient()`` does not change the gradient. That costs no copy:
    ``assign`` gives the variable a new list and the record keeps the old
    one, through one small object per variable and value shared by every
    op that read it. ``memory()`` counts the variable once (TF.js's count),
    not the old values a persistent tape still holds after an ``assign``.

    Args:
        persistent: Allow several ``gradient()``/``jacobian()`` calls. Call
            :meth:`release` (or drop the tape) when done, so the tensors it
            holds can be freed.
        watch_accessed_variables: Watch trainable variables automatically.

    Examples:
        >>> x = mt.scalar(3.0)
        >>> with mt.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> tape.gradient(y, x)
        Tensor(6.0, shape=())
        >>> w, b = mt.variable([1.0, 2.0]), mt.variable(2.0)
        >>> with mt.GradientTape(persistent=True) as tape:
        ...     loss = (w * b).sum()
        >>> _ = w.assign(mt.tensor([10.0, 20.0]))   # after the forward pass
        >>> tape.gradient(loss, b)                  # w as recorded: 1 + 2
        Tensor(3.0, shape=())
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        check_flag("persistent", persistent)
        check_flag("watch_accessed_variables", watch_accessed_variables)
        super().__init__(persistent, watch_accessed_variables)

    # -- what the engine's tape is asked, checked first (tape_args.py) -----------

    def watch(self, tensor: Tensor | Sequence[Tensor]) -> None:
        """Track ``tensor`` (or each tensor of a list) so gradients can flow to it.

        Only ops that run after ``watch`` are recorded, as in TensorFlow.

        Examples:
            >>> c = mt.scalar(2.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(c)
            ...     y = c ** 3
            >>> tape.gradient(y, c)
            Tensor(12.0, shape=())
        """
        self._watch(watchable(tensor))

    @overload
    def gradient(
        self,
        target: Tensor | Sequence[Tensor],
        sources: Tensor,
        output_gradients: Tensor | Sequence[Tensor] | None = None,
        unconnected_gradients: UnconnectedGradients = "none",
    ) -> Tensor | None: ...

    @overload
    def gradient(
        self,
        target: Tensor | Sequence[Tensor],
        sources: Sequence[Tensor],
        output_gradients: Tensor | Sequence[Tensor] | None = None,
        unconnected_gradients: UnconnectedGradients = "none",
    ) -> list[Tensor | None]: ...

    @overload
    def gradient(
        self,
        target: Tensor | Sequence[Tensor],
        sources: Mapping[K, Tensor],
        output_gradients: Tensor | Sequence[Tensor] | None = None,
        unconnected_gradients: UnconnectedGradients = "none",
    ) -> dict[K, Tensor | None]: ...

    def gradient(
        self,
        target: Tensor | Sequence[Tensor],
        sources: Tensor | Sequence[Tensor] | Mapping[K, Tensor],
        output_gradients: Tensor | Sequence[Tensor] | None = None,
        unconnected_gradients: UnconnectedGradients = "none",
    ) -> Tensor | None | list[Tensor | None] | dict[K, Tensor | None]:
        """Gradient of ``target`` with respect to ``sources``.

        A non-scalar target is summed first (its ``output_gradients`` default
        to ones), as in TensorFlow. ``sources`` may be a tensor, a list (or
        tuple) or a dict, and the result has the same structure (a list for
        any sequence). A source that does not
        affect the target gets ``None``, or zeros with
        ``unconnected_gradients="zero"``.

        Raises:
            TapeError: a non-persistent tape is asked a second time.
            ShapeError: ``output_gradients`` does not match the target's shape.

        Examples:
            >>> x, y = mt.scalar(2.0), mt.scalar(3.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch([x, y])
            ...     z = x * x + y * y
            >>> tape.gradient(z, {"x": x, "y": y})
            {'x': Tensor(4.0, shape=()), 'y': Tensor(6.0, shape=())}
        """
        self._check_usable()
        zero = unconnected_mode(unconnected_gradients)
        targets = targets_of(target)
        douts = output_gradients_for(output_gradients, targets)
        flat = sources_of(sources)
        result = self._gradient(targets, douts, flat, zero)
        if None in result:
            self._no_gradient(targets, flat, result)
        self._finish()
        if isinstance(sources, Tensor):
            return result[0]
        if isinstance(sources, Mapping):
            return dict(zip(sources.keys(), result))
        return list(result)

    def jacobian(self, target: Tensor, source: Tensor, unconnected_gradients: UnconnectedGradients = "none") -> Tensor | None:
        """Full Jacobian: ``result[i..., j...] = ∂target[i...] / ∂source[j...]``.

        One backward pass per entry of ``target``; the result has shape
        ``target.shape + source.shape``.

        Examples:
            >>> x = mt.tensor([1.0, 2.0])
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = x * x
            >>> tape.jacobian(y, x)
            Tensor([[2.0, 0.0], [0.0, 4.0]], shape=(2, 2))
        """
        self._check_usable()
        zero = unconnected_mode(unconnected_gradients)
        target = jacobian_target(target)
        check_tensor(source, "source")
        result = self._jacobian(target, source, zero)
        self._finish()
        return result

    # -- what a student looks at (views/) ----------------------------------------

    @property
    def operations(self) -> list[Operation]:
        """The recorded ops in order, each with its name, input shapes, output shape and ids.

        Examples:
            >>> w = mt.variable(mt.tensor([1.0, 2.0]), name="w_ops")
            >>> with mt.GradientTape() as tape:
            ...     loss = (w * 3.0).sum()
            >>> for op in tape.operations:
            ...     print(op)
            #0 mul((2,), ()) -> (2,)
            #1 sum((2,)) -> ()
        """
        return operations_of(self._records)

    def summary(self) -> str:
        """A table of the recorded ops with value ranges and, after ``gradient()``,
        the norm of the gradient that reached each op's output.

        Read it bottom-up to follow the gradient from the loss back to the
        inputs; a norm that shrinks towards 0 shows where gradients vanish.

        Examples:
            >>> x = mt.tensor([1.0, 2.0])
            >>> with mt.GradientTape(persistent=True) as tape:
            ...     tape.watch(x)
            ...     y = (x * x).sum()
            >>> _ = tape.gradient(y, x)
            >>> print(tape.summary())
            #   op    output shape   value range   |grad out|
            0   mul   (2,)           [1.0, 4.0]    1.414
            1   sum   ()             [5.0, 5.0]    1.0
        """
        return summary_table(self._records, gradient_norms(self._records, self._last))

    def to_dot(self, grad_norms: bool = True, title: str = "tape", rankdir: RankDir = "LR") -> str:
        """Graphviz text of the recorded graph: tensors as boxes, ops as ellipses.

        After ``gradient()``, edges into an op's output carry the gradient
        norm that flowed back through them (``grad_norms=False`` hides them).
        ``rankdir`` is Graphviz's layout direction: ``"LR"`` (left to right,
        the default) or ``"TB"`` (top to bottom, better for long chains).
        Render with ``dot -Tsvg``, or in the book with ``.. graphviz::``.

        Examples:
            >>> x = mt.scalar(2.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = mt.exp(x)
            >>> print(tape.to_dot().splitlines()[0])
            digraph tape {
        """
        return dot_graph(
            self._records, self._watched, self._variables, gradient_norms(self._records, self._last) if grad_norms else {}, title, rankdir
        )

    def to_svg(self, grad_norms: bool = True, title: str = N_("tape")) -> str:
        """Draw the recorded graph as a standalone SVG, laid out by microtape (no Graphviz needed).

        Inputs are at the top (watched tensors yellow, variables blue by name,
        constants dashed), the loss at the bottom; each op's box shows its
        output's shape, value range and, after ``gradient()``, the norm of the
        gradient that reached it (``grad_norms=False`` hides it). Edges cross
        only where the layering forces them to. A notebook shows the tape as
        this picture: Jupyter prefers ``_repr_html_`` to ``_repr_svg_``, so the
        tape's HTML is this drawing with the ``summary()`` table folded under
        it. ``to_dot()`` is still there for Graphviz users.

        Examples:
            >>> x = mt.scalar(2.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = mt.exp(x)
            >>> picture = tape.to_svg()
            >>> picture.startswith('<svg xmlns="http://www.w3.org/2000/svg"'), picture.count('class="mt-node"')
            (True, 2)
        """
        norms = gradient_norms(self._records, self._last) if grad_norms else {}
        return svg(layout(self._records, self._watched, self._variables, norms), title, "" if self._records or not self._used else N_("used: records freed"))

    def _repr_svg_(self) -> str:  # for front ends that show SVG only
        return self.to_svg()

    def _repr_html_(self) -> str:
        # Jupyter prefers HTML over SVG: the drawing first, then the summary() table folded under it.
        norms = gradient_norms(self._records, self._last)
        table = summary_html(self._records, norms) if self._records else ""
        return self.to_svg() + (f"<details><summary>summary()</summary>{table}</details>" if table else "")

    # -- why a gradient has its value (explain/) ----------------------------------

    def explain(self, target: Tensor, source: Tensor, index: int | tuple[int, ...] | None = None, top: int = 10) -> GradientExplanation:
        """Why entry ``index`` of the gradient of the scalar ``target`` for ``source`` has its value:
        the paths from ``target`` back to it, the ``top`` largest first, each step with the line of
        your code that ran its op (see :func:`microtape.explain_gradient`). ``source`` is named by
        its variable's name, else by the name your code gives it. Like ``gradient()``, it uses up a
        non-persistent tape; a tape released after recording ``target`` is refused.

        Examples:
            >>> x = mt.scalar(2.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch(x)
            ...     y = mt.exp(x * 3.0)
            >>> e = tape.explain(y, x)
            >>> [(s.op, round(s.local, 1)) for s in e.paths[0].steps], round(e.total, 1), e.source
            ([('exp', 403.4), ('mul', 3.0)], 1210.3, 'x')
        """
        self._check_usable()
        self._check_not_released(target, "explain")
        label = self._name_of(source, sys._getframe(1))
        result = explain_records(self._records, self._wheres, self._tracked, target, source, index, top, label, self._variable_names())
        self._finish()
        return result

    def backward_steps(self, target: Tensor | Sequence[Tensor], sources: Tensor | Sequence[Tensor] | Mapping[K, Tensor]) -> Iterator[BackwardStep]:
        """The backward pass of ``gradient(target, sources)``, one :class:`~microtape.BackwardStep` per VJP.

        Steps come in the order the pass runs them (from the target back);
        each has the op, your line that ran it (and its text there), the
        gradient that reached its output, the op's local derivative by each
        input, what its VJP returned, and the gradients of ``sources`` so far
        (``None`` where the pass has not reached one yet). The last step's
        ``accumulated`` is what ``gradient()`` returns. Uses up a
        non-persistent tape, as ``gradient()`` does; a tape released after
        recording ``target`` is refused.

        Examples:
            >>> x, y = mt.scalar(2.0), mt.scalar(3.0)
            >>> with mt.GradientTape() as tape:
            ...     tape.watch([x, y])
            ...     z = x * x + y * y
            >>> for step in tape.backward_steps(z, {"x": x, "y": y}):
            ...     print(step.op, step.dout, step.accumulated)
            add Tensor(1.0, shape=()) {'x': None, 'y': None}
            mul Tensor(1.0, shape=()) {'x': None, 'y': Tensor(6.0, shape=())}
            mul Tensor(1.0, shape=()) {'x': Tensor(4.0, shape=()), 'y': Tensor(6.0, shape=())}
        """
        self._check_usable()
        targets = targets_of(target)
        for t in targets:
            self._check_not_released(t, "backward_steps")
        flat = sources_of(sources)
        self._last = (targets, [None] * len(targets))
        steps = backward_steps(self, self._records, self._wheres, targets, flat, sources, self._variable_names())
        self._finish()
        return iter(steps)

    def _check_not_released(self, target: object, api: str) -> None:
        """Refuse a target this tape recorded but no longer holds (``release()`` let go of its records)."""
        if not isinstance(target, Tensor) or target.id not in self._tracked or target.id in self._watched:
            return
        if any(rec[3].id == target.id for rec in self._records):
            return
        raise TapeError(
            explain(
                N_("{0}: this GradientTape was released (tape.release()) after it recorded the target Tensor#{1} (shape {2}), so it holds none of the ops that computed it.").format(api, target.id, target.shape),
                N_("release() lets go of every tensor a persistent tape keeps for its backward pass: what it recorded before can no longer be differentiated, explained or stepped through."),
                N_("ask first, release last: tape.{0}(...) before tape.release(); or record the target again inside a new `with mt.GradientTape(persistent=True) as tape:` block.").format(api),
            ),
            value=target,
        )

    def _variable_names(self) -> dict[int, str]:
        """The names of the variables this tape read or watched, by id (what a record's input is called)."""
        found = {vid: v.name for vid, v in self._variables.items()}
        found.update({t.id: t.name for t in self._watched.values() if isinstance(t, Variable)})
        return found

    @staticmethod
    def _name_of(source: object, caller: FrameType) -> str:
        """What to call the explained tensor: its variable's name, else a name the caller's code gives it."""
        if isinstance(source, Variable):
            return source.name
        for name, value in list(caller.f_locals.items()):
            if value is source and not name.startswith("_"):
                return name
        return "source"

    # -- why a gradient is None (unconnected.py) ----------------------------------

    def _why_none(self, target: Tensor, source: Tensor, name: str = N_("the source")) -> Cause:
        """Why ``target`` does not depend on ``source`` on this tape: the cut, the unwatched use, or nothing."""
        return why_unconnected(self._records, self._wheres, self._cuts, self._tracked, target, source, name, self._after_cut)

    def _no_gradient(self, targets: list[Tensor], sources: list[Tensor], result: list[Tensor | None]) -> None:
        """Warn (``GradientWarning``) for each ``None`` whose cause looks like a mistake: a copy, an
        assign or a read-out cut the path, or the source was used but never watched. A source the
        target simply does not use, or a ``stop_gradient``, gets its ``None`` quietly, as in TensorFlow."""
        for i, (source, got) in enumerate(zip(sources, result)):
            if got is not None:
                continue
            causes = [self._why_none(t, source, "x" if len(sources) == 1 else N_("source {0}").format(i)) for t in targets]
            cause = next((c for c in causes if c.likely_mistake), None)
            if cause is None:
                continue
            warnings.warn(
                GradientWarning(
                    explain(
                        N_("tape.gradient: source {0} (shape {1}) gets None: {2}.").format(i, source.shape, cause.sentence),
                        N_('A source the target does not depend on through recorded ops gets None (zeros with unconnected_gradients="zero"), as in TensorFlow.'),
                        cause.hint,
                    )
                ),
                stacklevel=4,
            )
