"""Finding NaN and Inf: ``check_numerics`` for one tensor, ``detect_anomaly`` for every op.

``detect_anomaly`` is an observer of the engine,
like ``profile``: while it is on, every op's output and every VJP's
gradients are shown to it (``_AnomalyWatcher`` below), and it raises at the
first op that makes a NaN or an Inf, naming the op, the pass, the inputs and
entries that caused it and the line of user code; when it is off the engine
does nothing for it. With ``mode="trace"`` it records instead
(``anomaly_report.py``: the first op, then every op the value spread through).

An op *made* a value when its inputs did not hold it: a NaN from finite
values or from infinities (``inf - inf``, ``0 * inf``, ``inf / inf``), an
Inf from finite values; in the backward pass, what a VJP's own ops made.
A NaN made on the way back as 0·inf, where a masking op (``where``,
``maximum``, ``minimum``, ``clip_by_value``, ``relu``, a product with 0)
passed a gradient of 0 to entries it hid in the forward pass, is said to be
that, with the masking op's line, and its hint is the double ``where`` in the
user's own names (``fixes.py`` reads the line).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Literal, TypeAlias
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Final

from ..engine import user_line
from ..engine.primitive import Op
from ..engine.arena import STATE, TensorBase, notify
from ..engine.shape import size_of
from ..errors import AnomalyError, InvalidArgumentError, NumericsError, explain
from ..language import N_, tr
from ..engine.formatting import format_number
from ..engine.tensor import Grads, Tensor
from ..explain.steps import short_where
from ..ops.index_maps import broadcast_index
from ..engine.arena import new
from ..autodiff.gradient_tape import GradientTape
from ..checking import gradcheck
from ..checking.numerical import Fn, as_output, run_paused
from . import fixes
from .anomaly_report import AnomalyTrace, cause, event, values_at

__all__ = ["AnomalyMode", "check_numerics", "detect_anomaly"]


# -- check_numerics -------------------------------------------------------------


def check_numerics(t: Tensor, message: str) -> Tensor:
    """Raise :class:`~microtape.NumericsError` if ``t`` has NaN or Inf; else return it.

    The wording is TensorFlow's (``tf.debugging.check_numerics``):
    ``"<message> : Tensor had NaN values"`` (or ``Inf values``, or
    ``Inf and NaN values`` when it has both).

    Examples:
        >>> mt.check_numerics(mt.tensor([1.0, 2.0]), "loss")
        Tensor([1.0, 2.0], shape=(2,))
        >>> try:
        ...     mt.check_numerics(mt.tensor([1.0, float("inf")]), "grad of w")
        ... except mt.NumericsError as err:
        ...     print(str(err).splitlines()[0])
        grad of w : Tensor had Inf values
    """
    if not isinstance(t, Tensor):
        raise InvalidArgumentError(
            explain(N_('check_numerics() needs a tensor, got {0}.').format(type(t).__name__), N_("It scans a tensor's values."), N_('pass the tensor itself.')),
            value=t,
        )
    error = _numerics_error(t._values(), t.shape, t._op, message)
    if error is not None:
        raise error
    if STATE.get().observers:  # mt.function's tracer: the check is an instruction of its program
        shape, op = t.shape, t._op
        notify("on_effect", f"check_numerics {message!r}", [t], lambda data: _check_again(data, shape, op, message))
    return t


def _numerics_error(data: list[float], shape: tuple[int, ...], op: str, message: str) -> NumericsError | None:
    """The error ``check_numerics`` raises for these values, or None when they are finite."""
    nans = sum(1 for v in data if v != v)
    infs = sum(1 for v in data if v in (math.inf, -math.inf))
    if not (nans or infs):
        return None
    kind = "Inf and NaN" if nans and infs else "NaN" if nans else "Inf"  # TensorFlow's wording
    first = next(i for i, v in enumerate(data) if not math.isfinite(v))
    return NumericsError(
        explain(
            N_("{0} : Tensor had {1} values").format(message, kind),
            N_("{0} NaN and {1} Inf among {2} entries of a tensor of shape {3} (made by {4}); the first is at flat index {5}.").format(nans, infs, len(data), shape, repr(op), first),
            N_("turn on `with mt.detect_anomaly():` to find the op that produced it."),
        ),
        nans=nans,
        infs=infs,
        shape=shape,
    )


def _check_again(data: list[float], shape: tuple[int, ...], op: str, message: str) -> None:
    """``check_numerics`` as a replay runs it, on the program's list."""
    error = _numerics_error(data, shape, op, message)
    if error is not None:
        raise error


# -- detect_anomaly ---------------------------------------------------------------


_MODES = ("raise", "trace")
AnomalyMode: TypeAlias = Literal["raise", "trace"]
"""``detect_anomaly(mode=...)``: stop at the first op that makes a NaN or an Inf, or record where it spreads."""


def detect_anomaly(mode: AnomalyMode = "raise") -> AbstractContextManager[AnomalyTrace]:
    """Raise :class:`~microtape.AnomalyError` at the first op that makes NaN or Inf,
    or, with ``mode="trace"``, record where it came from and where it went.

    Both passes are watched: the forward of every op, and every VJP in a
    backward pass. The error names the op, the pass, the inputs and the
    entry that caused it (for a gradient, the derivative that blew up), the
    input shapes and value ranges, and the line of your code that created
    the op. Off by default. It is an observer of the ops, like ``profile``
    and ``leak_check``, so when off it costs nothing
    (``torch.autograd.detect_anomaly`` is the PyTorch equivalent).

    An op *makes* a NaN also from infinite inputs (``inf - inf``, ``0 * inf``,
    ``inf / inf``: a softmax over a row of ``-inf``), and a VJP that makes one
    is named as its maker. A NaN made on the way back where a ``where`` (or
    ``maximum``, ``minimum``, ``clip_by_value``, ``relu``, a product with 0)
    passed a gradient of 0 to entries it hid in the forward pass, meeting an
    infinite or NaN derivative (0·inf = NaN), is said to be that, with the
    ``where``'s line, and the hint is the double ``where`` written in your
    own names, read from your line. Other hints are rewrites too where one
    fixes the cause (``mt.norm`` for a hand-written length, ``mt.log_softmax``
    for the log of a softmax, ``mt.log_sigmoid``, ``mt.softplus``), else advice.

    ``with mt.detect_anomaly(mode="trace") as trace:`` raises nothing:
    ``trace.first`` is the first op that made a non-finite value (a
    :class:`~microtape.AnomalyEvent`: op, pass, entries, input values, line),
    ``trace.spread`` every op it then went through, in order, up to the
    loss and through the backward pass to the gradient (only values
    computed from the first one; ``trace.unrelated`` has the others);
    ``print(trace)`` shows the chain and the hint.

    Examples:
        >>> x = mt.tensor([0.0, 1.0])
        >>> with mt.detect_anomaly():
        ...     try:
        ...         mt.grad(lambda t: mt.sqrt(t).sum())(x)   # d sqrt at 0 is inf
        ...     except mt.AnomalyError as err:
        ...         print(err.op, err.phase, "|", err.cause)
        sqrt backward | sqrt at 0.0, entry (0,): its derivative 1/(2*sqrt(x)) is inf
        >>> with mt.detect_anomaly(mode="trace") as trace:
        ...     g = mt.grad(lambda t: mt.sqrt(t).sum())(x)
        >>> print(trace.first.cause)
        sqrt at 0.0, entry (0,): its derivative 1/(2*sqrt(x)) is inf
    """
    if mode not in _MODES:
        raise InvalidArgumentError(
            explain(
                N_('detect_anomaly(mode={0}) is not a mode.').format(repr(mode)),
                N_("mode is 'raise' (stop at the first op that makes a NaN or an Inf) or 'trace' (record that op and every op the value spreads through, and raise nothing)."),
                N_('write mt.detect_anomaly() to raise, or mt.detect_anomaly(mode="trace") as trace: to record.'),
            ),
            value=mode,
        )
    return _watching(mode == "trace")


@contextmanager
def _watching(tracing: bool) -> Iterator[AnomalyTrace]:
    st = STATE.get()
    watcher = _AnomalyWatcher(AnomalyTrace() if tracing else None)
    STATE.set(st.replace(anomaly=True, observers=st.observers + (watcher,)))
    try:
        yield watcher.trace if watcher.trace is not None else AnomalyTrace()  # raise mode: stays empty
    finally:
        now = STATE.get()
        STATE.set(now.replace(anomaly=st.anomaly, observers=tuple(o for o in now.observers if o is not watcher)))


@dataclass(frozen=True)
class _Mask:
    """An op that passes a gradient of 0 to some entries of one input: ``where`` to its unselected
    branch, ``maximum``/``minimum`` to the other operand, ``clip_by_value`` outside its range,
    ``relu`` below 0, ``mul`` to a factor whose partner is 0."""

    op: str
    where: str
    side: int
    entries: frozenset[int]
    how: str


_MASKING: Final = frozenset({"where", "maximum", "minimum", "clip_by_value", "relu", "mul"})
_SINGULAR: Final = {
    "sqrt": (0, "1.0"), "log": (0, "1.0"), "log2": (0, "1.0"), "log1p": (0, "0.0"), "div": (1, "1.0"),
    "exp": (0, "0.0"), "expm1": (0, "0.0"), "sin": (0, "0.0"), "cos": (0, "0.0"),
}
"""The ops whose derivative is infinite or NaN where their input is out of range, and, for the
double where, which input to make safe and the safe value (pow depends on the case)."""
_ENTRIES_SHOWN: Final = 5
_HISTORY: Final = 200_000
"""How many freed tensors' lines and makers the watcher remembers (a long training loop stays bounded)."""


class _Code(str):
    """A hint that is a line of code (a rewrite of the user's own expression), not advice in words."""


class _AnomalyWatcher:
    """detect_anomaly's observer: checks each op's output and each VJP's gradients.

    ``origins`` keeps the line of user code that made each op's output, by
    tensor id, while the tensor lives: a bad gradient in the backward pass
    names the line that ran the op forward. ``made_by`` and ``consumers``
    keep the forward graph (who made each tensor from what; which same-shape
    ops read it), ``masks`` the entries a masking op passes a gradient of 0:
    together they tell a masked-branch NaN (0·inf on the way back) by its
    ``where`` and line, and find the fix in the user's code. With a
    ``trace`` it records instead of raising; ``tainted`` holds the tensors
    computed from the first non-finite value, so ``spread`` lists only them.
    """

    def __init__(self, trace: AnomalyTrace | None) -> None:
        self.origins: dict[int, str] = {}
        self.trace = trace
        self.made_by: dict[int, tuple[str, tuple[int, ...]]] = {}
        self.consumers: dict[int, list[int]] = {}
        self.masks: dict[int, list[_Mask]] = {}
        self.tainted: set[int] = set()
        self.made: dict[int, str] = {}
        """In a backward pass: tensors an op made non-finite from finite values (or NaN from infinite
        ones), by id: the op's name, or "accumulation" for two gradients of one tensor added up."""
        self.window: set[int] = set()
        """Tensors made in the backward pass since the last VJP: what the next VJP made itself."""
        self.last_dxs: set[int] = set()

    def on_create(self, tensor: TensorBase) -> None:
        pass

    def on_free(self, tensor: TensorBase) -> None:
        # origins and made_by outlive the tensor (a composite frees its intermediates, whose
        # history a hint still reads: the log of a softmax made on another line); ids never repeat
        tid = tensor.id
        self.consumers.pop(tid, None)
        self.masks.pop(tid, None)
        self.tainted.discard(tid)
        self.made.pop(tid, None)
        if len(self.origins) > _HISTORY:
            for table in (self.origins, self.made_by):
                for old in list(table)[: _HISTORY // 2]:  # the oldest half: a long run stays bounded
                    del table[old]

    # -- the forward pass ---------------------------------------------------------------

    def on_op(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor, seconds: float) -> None:
        where = self.origins[out.id] = user_line.user_frame_line()
        if STATE.get().backward:
            self._inner(op, inputs, out)  # inside a VJP: on_vjp names the primitive whose VJP it is
            return
        self.made_by[out.id] = (op.name, tuple([x.id for x in inputs]))
        for x in inputs:
            if x.shape == out.shape:
                self.consumers.setdefault(x.id, []).append(out.id)
        if op.name in _MASKING:
            self._note_masks(op.name, inputs, params, out, where)
        kind = _bad(out._data)
        if kind is None:
            return
        made = _made_entries(inputs, out)
        if made:  # what this op made, not what it passed on beside it (a NaN in the data, say)
            kind = "NaN" if any((out._data or [])[k] != (out._data or [])[k] for k in made) else "Inf"
        tainted = any(x.id in self.tainted for x in inputs)
        if self.trace is not None:
            first = self.trace.first is None
            if first and not made:
                return  # a NaN that came in as data starts no trace
            if first or tainted:
                self.tainted.add(out.id)
            if made or tainted:
                why, hint = self._forward_story(op.name, inputs, out, where, made)
                found = event(
                    op.name, "forward", kind, inputs, out, where, None, first, bool(made), hint=hint, cause_text=why,
                    code=isinstance(hint, _Code), only=made or None,
                )
                self.trace.add(found, related=first or tainted)
            return
        if made:
            why, hint = self._forward_story(op.name, inputs, out, where, made)
            _raise_anomaly(op.name, "forward", kind, inputs, where, why, hint=hint)

    def _note_masks(self, name: str, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor, where: str) -> None:
        """Remember which entries of each input this op passes a gradient of 0 (as its VJP will)."""
        columns = [_broadcast(x, out.shape) for x in inputs]
        gates: list[tuple[int, list[bool], str]] = []
        if name == "where":
            c = columns[0]
            gates = [(1, [v == 0.0 for v in c], N_("its condition chose the other branch there")),
                     (2, [v != 0.0 for v in c], N_("its condition chose the other branch there"))]
        elif name in ("maximum", "minimum"):
            first, second = columns
            keep = [a >= b for a, b in zip(first, second)] if name == "maximum" else [a <= b for a, b in zip(first, second)]
            other = N_("the other operand was larger there") if name == "maximum" else N_("the other operand was smaller there")
            gates = [(0, [not k for k in keep], other), (1, keep, other)]
        elif name == "clip_by_value":
            lo, hi = params.get("clip_value_min", 0.0), params.get("clip_value_max", 0.0)
            if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
                gates = [(0, [not (lo <= v <= hi) for v in columns[0]], N_("they are outside [{0}, {1}]").format(f"{lo:g}", f"{hi:g}"))]
        elif name == "relu":
            gates = [(0, [not v > 0.0 for v in columns[0]], N_("they are not positive"))]
        elif name == "mul":
            first, second = columns
            gates = [(0, [b == 0.0 for b in second], N_("it multiplied them by 0")), (1, [a == 0.0 for a in first], N_("it multiplied them by 0"))]
        for side, gate, how in gates:
            hid = inputs[side]
            if hid.id not in self.made_by or not any(gate):
                continue  # data, or nothing hidden: no op behind it can meet a 0 gradient here
            hidden = _input_entries(gate, hid.shape, out.shape)
            if hidden:
                self.masks.setdefault(hid.id, []).append(_Mask(name, where, side, hidden, how))

    def _forward_story(self, name: str, inputs: tuple[Tensor, ...], out: Tensor, where: str, made: list[int]) -> tuple[str, str]:
        """The cause sentence and the hint of a non-finite forward value of op ``name``."""
        why = cause(name, "forward", inputs, out)
        if made and any(_bad(x._data) for x in inputs):
            why = N_("{0} (a NaN made from infinite inputs: inf - inf, 0·inf and inf/inf have no value)").format(why)
        data = out._data or []
        first = next((data[k] for k in made if k < len(data)), next((v for v in data if v != v or v in (math.inf, -math.inf)), math.nan))
        hint, story = _forward_hint(name, inputs, where, self.made_by, self.origins, infinite=first == first)
        return (story.format(why) if story else why), hint

    # -- the backward pass --------------------------------------------------------------

    def _inner(self, op: Op, inputs: tuple[Tensor, ...], out: Tensor) -> None:
        """An op a VJP (or the loop adding up gradients) runs: who made a non-finite value, from what."""
        self.window.add(out.id)
        kind = _bad(out._data)
        if kind is None:
            return
        if any(x.id in self.tainted for x in inputs):
            self.tainted.add(out.id)
        if _made_entries(inputs, out):
            accumulation = op.name == "add" and len(inputs) == 2 and inputs[1].id in self.last_dxs
            self.made[out.id] = "accumulation" if accumulation else op.name

    def on_vjp(self, op: Op, inputs: tuple[Tensor, ...], out: Tensor, dxs: Grads) -> None:
        window, self.window = self.window, set()
        self.last_dxs = {dx.id for dx in dxs if dx is not None}
        for i, dx in enumerate(dxs):
            if dx is None:
                continue
            kind = _bad(dx._data)
            if kind is None:
                continue
            where = self.origins.get(out.id, "<recorded before detect_anomaly>")
            maker = self.made.get(dx.id)
            made = maker is not None and maker != "accumulation" and dx.id in window
            tainted = dx.id in self.tainted or out.id in self.tainted  # the VJP of an op whose output held it
            masked_by, hint = self._masked(op.name, inputs, out, dx, i, made)
            why = cause(op.name, "backward", inputs, dx, i, made)
            if maker == "accumulation" and not made:
                why = N_("{0} (it reached this op as a NaN made by adding two gradients of one tensor: inf + -inf)").format(why)
            if not hint:
                hint = _backward_hint(op.name, inputs, i, where, self.made_by, self.origins)
            if self.trace is not None:
                first = self.trace.first is None
                if first and not (made or maker == "accumulation"):
                    return  # a NaN that came in as data (a dy of NaN) starts no trace
                if first or tainted:
                    self.tainted.add(dx.id)
                if made or tainted or first:
                    found = event(
                        op.name, "backward", kind, inputs, dx, where, i, first, made or maker == "accumulation", masked_by, hint, why,
                        code=isinstance(hint, _Code),
                    )
                    self.trace.add(found, related=first or tainted)
                return  # one event per VJP
            if made or maker == "accumulation":
                _raise_anomaly(op.name, "backward", kind, inputs, where, why, i, hint, masked_by)
            return

    def _masked(self, name: str, inputs: tuple[Tensor, ...], out: Tensor, dx: Tensor, index: int, made: bool) -> tuple[str, str]:
        """If ``dx``'s NaN is a 0 gradient from a masking op meeting an infinite or NaN derivative:
        the sentence that says so, and the double where (or words) that fixes it. Only where that
        meeting happens here: the VJP made the NaN from finite values (0·inf), or the op's own output
        is not finite at those entries (its derivative is NaN); a NaN that merely passes through an
        op below the mask is not that op's doing."""
        data = dx._data or []
        nans = [k for k, v in enumerate(data) if v != v]
        if not nans or dx.shape != out.shape:
            return "", ""
        found = self._mask_over(out.id, set(nans))
        if found is None:
            return "", ""
        mask, shown, direct = found
        entries = [_unravel(k, out.shape) for k in sorted(shown)[:_ENTRIES_SHOWN]]
        more = N_(" and {0} more").format(len(shown) - _ENTRIES_SHOWN) if len(shown) > _ENTRIES_SHOWN else ""
        what = N_("{0}'s output").format(name) if direct else N_("a value computed from {0}'s output").format(name)
        forward_bad = any(not math.isfinite((out._data or [0.0] * (k + 1))[k]) for k in shown)
        if not (forward_bad or made):
            return "", ""
        product = N_("0 times {0}'s infinite derivative: 0·inf = nan").format(name) if made else N_("0 times {0}'s nan derivative is nan").format(name)
        hid = (
            N_("{0} at {1} hid entry {2}{3} of {4} in the forward pass ({5}); on the way back it passed them a gradient of 0, and {6}")
            if len(shown) == 1 else
            N_("{0} at {1} hid entries {2}{3} of {4} in the forward pass ({5}); on the way back it passed them a gradient of 0, and {6}")
        )
        sentence = hid.format(mask.op, short_where(mask.where), ", ".join(map(str, entries)), more, what, mask.how, product)
        return sentence, self._mask_fix(mask, name, inputs, out, index, sorted(shown)[0])

    def _mask_over(self, start: int, bad: set[int]) -> tuple[_Mask, set[int], bool] | None:
        """The first mask over some of ``bad`` on ``start`` or on a same-shape value computed from it."""
        frontier, seen = [start], {start}
        for _ in range(8):
            nxt: list[int] = []
            for tid in frontier:
                for mask in self.masks.get(tid, ()):
                    shown = bad & mask.entries
                    if shown:
                        return mask, shown, tid == start
                for later in self.consumers.get(tid, ()):
                    if later not in seen:
                        seen.add(later)
                        nxt.append(later)
            frontier = nxt
        return None

    def _mask_fix(self, mask: _Mask, name: str, inputs: tuple[Tensor, ...], out: Tensor, index: int, entry: int) -> str:
        """The hint of a masked-branch NaN: the double where in the user's own names, else words."""
        guard = _SINGULAR.get(name)
        if name == "pow":
            vals = values_at(inputs, entry, out.shape)
            base_bad = vals is not None and (vals[0] <= 0.0)
            guard = (0, "1.0") if base_bad else (1, "0.0")
        if mask.op == "where" and guard is not None:
            rewrite = fixes.double_where(mask.where, mask.side, name, guard[0], guard[1], self.origins.get(out.id))
            if rewrite is not None:
                return _Code(rewrite.replacement)
        if name == "sqrt":  # a length by hand: norm's gradient at 0 is 0, so no NaN forms
            rewrite = fixes.norm_of_squares(self.origins.get(out.id, ""))
            if rewrite is not None:
                return _Code(rewrite.replacement)
        return N_(
            "give {0} a safe input at the entries the {1} hides, with a where inside it as well as "
            "outside (the double where), so that no infinite derivative meets the 0 on the way back"
        ).format(name, mask.op)


def _forward_hint(
    name: str, inputs: tuple[Tensor, ...], where: str, made_by: dict[int, tuple[str, tuple[int, ...]]], origins: dict[int, str],
    infinite: bool = False,
) -> tuple[str, str]:
    """The hint of an op that made a non-finite value in the forward pass, and what more to say:
    a rewrite when the pattern is known (log of a softmax or a sigmoid, log(1 + exp(x)), a where
    around it on the same line), else words. ``infinite``: the value is ±inf, not NaN (the op's
    derivative there is infinite too, so the where's 0 makes 0·inf)."""
    source = inputs[0].id if inputs else -1
    if name == "log":
        maker = made_by.get(source)
        if maker is not None:
            made, args = maker
            if made == "exp" and args and made_by.get(args[0], ("", ()))[0] == "sub":
                rewrite = fixes.log_of_softmax(where, origins.get(source, ""))
                if rewrite is not None:
                    return _Code(rewrite.replacement), N_("{0}; it is the log of a softmax, which rounds to 0 for a logit far below the others")
            if made == "sigmoid":
                rewrite = fixes.log_of_sigmoid(where, origins.get(source, ""), complement=False)
                if rewrite is not None:
                    return _Code(rewrite.replacement), N_("{0}; it is the log of a sigmoid, which rounds to 0 for a large negative logit")
            if made == "sub" and len(args) == 2 and made_by.get(args[1], ("", ()))[0] == "sigmoid":
                rewrite = fixes.log_of_sigmoid(where, origins.get(args[1], ""), complement=True)
                if rewrite is not None:
                    return _Code(rewrite.replacement), N_("{0}; it is the log of 1 - sigmoid(x), and sigmoid rounds to 1 for a large logit")
    if name == "exp":
        rewrite = fixes.softplus_of_exp(where)
        if rewrite is not None:
            return _Code(rewrite.replacement), N_("{0}; it is log(1 + exp(x)), which is about x for a large x")
    if name == "sub" and len(inputs) == 2 and made_by.get(inputs[1].id, ("", ()))[0] == "logsumexp":
        return _WORDS["softmax"], N_("{0}; it is a softmax (or log_softmax) over entries that are all -inf")
    guard = _SINGULAR.get(name)
    if name == "pow":
        guard = (0, "1.0") if inputs and any(v <= 0.0 for v in inputs[0]._data or ()) else (1, "0.0")
    if guard is not None:
        for side in (1, 2):  # computed inside a where on its own line: the double where
            rewrite = fixes.double_where(where, side, name, guard[0], guard[1])
            if rewrite is not None:
                return _Code(rewrite.replacement), (
                    N_("{0}; it is computed inside the where on that line, which hides the value from the forward pass "
                       "but not from the gradient: on the way back the where passes it 0, and 0·inf = nan") if infinite else
                    N_("{0}; it is computed inside the where on that line, which hides the value from the forward pass "
                       "but not from the gradient: on the way back the where passes it 0, and 0·nan = nan")
                )
    return _WORDS.get(name, _GENERIC), ""


def _backward_hint(name: str, inputs: tuple[Tensor, ...], index: int, where: str, made_by: dict[int, tuple[str, tuple[int, ...]]], origins: dict[int, str]) -> str:
    """The hint of a VJP that made a non-finite gradient (no masking op behind it)."""
    if name == "sqrt" and inputs:
        maker = made_by.get(inputs[0].id)
        if maker is not None and maker[0] == "sum":
            rewrite = fixes.norm_of_squares(where)
            if rewrite is not None:
                return _Code(rewrite.replacement)
        return _WORDS["sqrt backward"]
    return _WORDS.get(name, _GENERIC)


_GENERIC: Final = N_(
    "look at the inputs of this op at that line: keep them inside its domain, or find the op before it "
    "that drove them there (a too large learning rate often does)"
)
_WORDS: Final = {
    "log": N_("log(0) is -inf and the log of a negative number is nan: keep its input positive where it is used, "
    "or work with logits (mt.log_softmax, mt.log_sigmoid, mt.softmax_cross_entropy, mt.sigmoid_cross_entropy)"),
    "log1p": N_("log1p(-1) is -inf and log1p below -1 is nan: keep its input above -1"),
    "log2": N_("log2(0) is -inf and log2 of a negative number is nan: keep its input positive where it is used"),
    "div": N_("the denominator is 0 at these entries: keep it away from 0 where it can reach 0 (a norm or a count), "
    "or choose those entries' value with mt.where and divide only by safe values there"),
    "sqrt": N_("the square root of a negative number is nan: find out why its input is negative here"),
    "sqrt backward": N_("sqrt's slope at 0 is infinite: for a length, use mt.norm, whose gradient at 0 is 0; "
    "for another value that can reach 0, keep it away from 0 under the root"),
    "exp": N_("exp overflows above about 709: work in the log domain (mt.logsumexp, mt.log_softmax, mt.softplus, "
    "the cross-entropies on logits)"),
    "pow": N_("pow of a negative base to a fractional power is nan, of 0 to a negative power inf, and a large "
    "power overflows to inf: keep its inputs where the power is a number"),
    "sub": N_("inf - inf has no value: an infinite input reached this op from both sides (a softmax over a row "
    "that is all -inf, say); find where the infinities come from"),
    "add": N_("inf + -inf has no value: find where the two infinities come from"),
    "mul": N_("0·inf has no value: an infinite value met a 0 (a label of 0 times log(0), say); keep the infinite "
    "value from forming, or pick these entries with mt.where before the product"),
    "softmax": N_("a row with no possible class has no distribution: mask with a large negative number (-1e9) "
    "instead of -inf, or choose the output of a fully masked row yourself with mt.where"),
}


def _bad(data: list[float] | None) -> str | None:
    if data is None:
        return None
    for v in data:
        if v != v:
            return "NaN"
    for v in data:
        if v in (math.inf, -math.inf):
            return "Inf"
    return None


def _made_entries(inputs: tuple[Tensor, ...], out: Tensor) -> list[int]:
    """The entries of ``out`` this op made non-finite: a NaN where no input is NaN (made from
    finite values or from infinities), an Inf where every input is finite. Entry by entry when
    the inputs line up with the output (or are scalars), else for the tensor as a whole."""
    data = out._data or []
    bad = [k for k, v in enumerate(data) if not math.isfinite(v)]
    if not bad:
        return []
    columns = [x._data for x in inputs]
    if all(c is not None and (len(c) == 1 or x.shape == out.shape) for c, x in zip(columns, inputs)):
        made = []
        for k in bad:
            vals = [c[0] if len(c) == 1 else c[k] for c in columns if c is not None]
            if data[k] != data[k]:
                if all(u == u for u in vals):
                    made.append(k)
            elif all(math.isfinite(u) for u in vals):
                made.append(k)
        return made
    any_nan = any(u != u for c in columns if c is not None for u in c)
    any_bad = any_nan or any(not math.isfinite(u) for c in columns if c is not None for u in c)
    return [k for k in bad if (data[k] != data[k] and not any_nan) or (data[k] == data[k] and not any_bad)]


def _broadcast(x: Tensor, shape: tuple[int, ...]) -> list[float]:
    data = x._data or []
    if x.shape == shape:
        return data
    if len(data) == 1:
        return data * size_of(shape)
    return [data[i] for i in broadcast_index(x.shape, shape)]


def _input_entries(gate: list[bool], in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> frozenset[int]:
    """The entries of an input (of ``in_shape``) whose every copy in the output is gated (gradient 0)."""
    if in_shape == out_shape:
        return frozenset(k for k, g in enumerate(gate) if g)
    n = size_of(in_shape)
    open_ = [False] * n
    index = [0] * len(gate) if n == 1 else broadcast_index(in_shape, out_shape)
    for k, g in zip(index, gate):
        if not g:
            open_[k] = True
    return frozenset(k for k in range(n) if not open_[k])


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index: list[int] = []
    for dim in reversed(shape):
        flat, i = divmod(flat, dim) if dim else (flat, 0)
        index.append(i)
    return tuple(reversed(index))


def _range(t: Tensor) -> str:
    data = t._data
    if not data:
        return "[]"
    finite = [v for v in data if math.isfinite(v)]
    if not finite:
        return "no finite values"
    return f"[{format_number(min(finite))}, {format_number(max(finite))}]"


def _raise_anomaly(
    name: str, phase: str, kind: str, inputs: tuple[Tensor, ...], where: str, why: str, index: int | None = None,
    hint: str = "", masked_by: str = "",
) -> None:
    shapes = ", ".join(str(x.shape) for x in inputs)
    ranges = ", ".join(_range(x) for x in inputs)
    # each part translated now, its sentences one by one: a template of the whole could split them elsewhere
    what = (
        tr(N_("{0} pass: the gradient for input {1} of {2} has {3} values.")).format(tr(phase), index, repr(name), kind) if index is not None
        else tr(N_("{0} pass: the output of {1} has {2} values.")).format(tr(phase), repr(name), kind)
    )
    rule = (
        tr(N_("{0}; {1}. Inputs: shapes {2}; value ranges {3}. The op was created at {4}.")).format(tr(why), tr(masked_by), shapes, ranges, where)
        if masked_by
        else tr(N_("{0}. Inputs: shapes {1}; value ranges {2}. The op was created at {3}.")).format(tr(why), shapes, ranges, where)
    )
    raise AnomalyError(
        explain(
            what,
            rule,
            hint or _GENERIC,
        ),
        op=name,
        phase=phase,
        kind=kind,
        where=where,
        cause=why,
        masked_by=masked_by,
        hint=hint or _GENERIC,
    )


# -- for check_grads: where a non-finite analytic gradient came from ------------------------


def trace_origin(f: Fn, xs: list[Tensor], output: int) -> str | None:
    """Run ``f`` at ``xs`` and the backward pass of its output entry ``output`` under
    ``detect_anomaly(mode="trace")``: the sentence ``check_grads`` reports for a non-finite
    analytic gradient (the op, its line, its cause and its hint), or None if no op made one.

    Examples:
        >>> from microtape.debug.anomaly import trace_origin
        >>> print(trace_origin(lambda t: mt.sqrt((t * t).sum()), [mt.zeros((2,))], 0))
        detect_anomaly(mode="trace") traces it to sqrt (backward) at <doctest microtape.debug.anomaly.trace_origin[1]>:1: sqrt at 0.0, entry (): its derivative 1/(2*sqrt(x)) is inf; hint: mt.norm(t)
    """

    def run() -> str | None:
        copies = [new(Tensor, list(x._values()), x.shape, "tensor") for x in xs]
        with _watching(True) as trace:
            with GradientTape(watch_accessed_variables=False) as tape:
                tape.watch(copies)
                y = as_output(f(*copies))
            onehot = [0.0] * y.size
            onehot[output] = 1.0
            tape.gradient(y, copies, output_gradients=new(Tensor, onehot, y.shape, "one_hot"), unconnected_gradients="zero")
        first = trace.first
        if first is None:
            return None
        found = tr(N_('detect_anomaly(mode="trace") traces it to {0}')).format(first)
        return found + ("; " + tr("hint") + ": " + trace._hint_text if trace.hint else "")

    found = run_paused(run)
    return found if isinstance(found, str) else None


gradcheck.ORIGINS.append(trace_origin)
