"""Why a source gets no gradient: where its path to the target ended, how, and at which line.

A tape records each op it tracks and notes each place a tracked value left
its graph (``Tape._cut``): an op no tape records (``stop_gradient``), a copy
(``mt.tensor(t)``, ``mt.variable(t)``), an assign into a variable (a
variable's later reads start afresh, as in TensorFlow), or numbers read out
(``.item()``, ``.data_sync()``, ``.tolist()``). ``why_unconnected`` walks the
records from the target back and from the source forward, and names the cut
between them; failing that, a source that was used but never watched, or
one the target does not use at all. ``grad`` and ``variable_grads`` put the
answer in their errors, ``tape.gradient`` in a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..engine import user_line
from ..engine.backward import Record
from ..engine.tensor import Tensor
from ..engine.variable import Variable
from ..language import N_

__all__ = ["Cause", "why_unconnected"]

_WATCH_IT = N_("call tape.watch(x) on it before the ops that use it, inside the tape's block.")


@dataclass(frozen=True)
class Cause:
    """Why a source has no gradient: ``kind`` is ``"cut"`` (a stop_gradient, a copy or an assign
    ended the path), ``"read"`` (numbers were read out of a value on the path: maybe the cut),
    ``"unwatched"`` (the tape never tracked it; ``where`` is set when an op read it),
    ``"variable"`` (a variable not watched: not trainable, or by the tape's setting) or
    ``"unused"``; ``sentence`` says it with the line, ``hint`` what to do (a sentence, its period included; both
    English, catalog messages that ``explain`` prints in the reader's language), ``deliberate`` is
    True for ``stop_gradient`` and for a variable left out on purpose."""

    kind: str
    sentence: str
    hint: str
    where: str = ""
    deliberate: bool = False

    @property
    def likely_mistake(self) -> bool:
        """A cause a user rarely means, seen on the tape: a copy or an assign on the path, or a plain
        tensor an op read without it being watched. Worth a warning when ``tape.gradient`` returns
        ``None``; a ``stop_gradient``, a variable that is not trainable (or not watched on purpose),
        a read-out (which may not be on the path) and an unused source are not."""
        return self.kind in ("cut", "unwatched") and not self.deliberate


def _descendants(records: Sequence[Record], source: int) -> set[int]:
    found = {source}
    for _, inputs, _, out, _ in records:
        if any(x.id in found for x in inputs):
            found.add(out.id)
    return found


def _ancestors(records: Sequence[Record], target: int) -> set[int]:
    needed = {target}
    for _, inputs, _, out, _ in reversed(records):
        if out.id in needed:
            needed.update(x.id for x in inputs)
    return needed


def why_unconnected(
    records: Sequence[Record], wheres: Sequence[tuple[str, int] | None],
    cuts: Sequence[tuple[str, tuple[int, ...], int | None, tuple[str, int] | None]],
    tracked: set[int], target: Tensor, source: Tensor, name: str = N_("the source"), after_cut: dict[int, int] | None = None,
) -> Cause:
    """Why ``target`` does not depend on ``source`` through ``records`` (a tape's), in words.

    Examples:
        >>> from microtape.autodiff.unconnected import why_unconnected
        >>> x = mt.scalar(2.0)
        >>> with mt.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = mt.stop_gradient(x * 2.0) * 3.0
        >>> cause = why_unconnected(tape._records, tape._wheres, tape._cuts, tape._tracked, y, x, "x", tape._after_cut)
        >>> cause.kind, cause.deliberate, cause.sentence.split(" at ")[0]
        ('cut', True, 'the path from x to the target ends in stop_gradient')
    """
    from_source = _descendants(records, source.id)
    to_target = _ancestors(records, target.id)
    for k, cut in (after_cut or {}).items():  # the target computed, by ops no tape records, from what a cut made
        made = cuts[cut][2]
        if k in to_target and made is not None:
            to_target.add(made)
    reads: list[tuple[str, str]] = []
    for how, inputs, out, where in cuts:
        if not any(i in from_source for i in inputs):
            continue
        line = user_line.frame_text(where)
        if out is None:
            reads.append((how, line))
            continue
        if out not in to_target:
            continue
        if how == "stop_gradient":
            return Cause(
                "cut", N_("the path from {0} to the target ends in stop_gradient at {1}: a tape records "
                          "nothing through it, so what it returns is a constant").format(name, line),
                N_("remove that stop_gradient if the gradient should flow through it."), line, deliberate=True,
            )
        if how in ("mt.tensor()", "mt.variable()"):
            return Cause(
                "cut", N_("{0}(...) at {1} copied a value computed from {2} into a new tensor with no history, "
                          "and the target was computed from the copy").format(how[:-2], line, name),
                N_("use the tensor itself, or t.clone(), which the tape records, instead of a copy."), line,
            )
        return Cause(  # an assign: w.assign(...), w.assign_add(...), w.assign_sub(...)
            "cut", N_("{0} went into {1} at {2}: an assign writes values into a variable, and the target read "
                      "the variable afterwards, which starts a new path (a tape does not follow an assign back, as in TensorFlow)"
                      ).format(name, how, line),
            N_("compute the new value as a tensor (w_new = w + delta) and use it, instead of writing it into a variable "
               "inside the tape."), line,
        )
    if reads:
        how, line = reads[0]
        return Cause(
            "read", N_("{0} at {1} read the values of a tensor computed from {2} out of the tape: numbers taken "
                       "out of a tensor are constants to it, so if the target was computed from them, the path ends there"
                       ).format(how, line, name),
            N_("compute the target from the tensor itself, with microtape ops, instead of from its numbers."), line,
        )
    if source.id not in tracked:
        users = [(op.name, where) for (op, inputs, _, _, _), where in zip(records, wheres) if any(x.id == source.id for x in inputs)]
        if isinstance(source, Variable):  # not trainable, or the tape does not watch what it accesses
            return Cause(
                "variable", N_("{0} is a variable the tape did not watch (it is not trainable, or the tape was made with "
                               "watch_accessed_variables=False)").format(name),
                N_("watch it with tape.watch(w), or make it trainable, if it needs a gradient."),
                deliberate=True,
            )
        if users:
            op, where = users[0]
            line = user_line.frame_text(where)
            return Cause(
                "unwatched", N_("{0} was read by {1} at {2} but never watched, so the tape did not follow it "
                                "(a tape tracks watched tensors and the trainable variables it reads)").format(name, op, line),
                _WATCH_IT, line,
            )
        return Cause(
            "unwatched", N_("the tape never watched {0} and recorded no op that reads it").format(name),
            _WATCH_IT, deliberate=True,  # no evidence of a use
        )
    return Cause(
        "unused", N_("the target was not computed from {0}: no op the tape recorded leads from one to the other").format(name),
        N_("compute the target from it with microtape ops inside the tape's block."),
    )
