"""Finding NaN and Inf: ``check_numerics`` for one tensor, ``detect_anomaly`` for every op.

``detect_anomaly`` is an observer of the engine,
like ``profile``: while it is on, every op's output and every VJP's
gradients are shown to it (``_AnomalyWatcher`` below), and it raises at the
first op that makes a NaN or an Inf, naming the op, the pass, the inputs and
entries that caused it and the line of user code; when it is off the engine
does nothing for it. With ``mode="trace"`` it records instead (``trace.py``:
the first op, then every op the value spread through).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Literal, TypeAlias
from contextlib import AbstractContextManager, contextmanager

from ..engine import user_line
from ..engine.primitive import Op
from ..engine.arena import STATE, TensorBase, notify
from ..errors import AnomalyError, InvalidArgumentError, NumericsError, explain
from ..engine.formatting import format_number
from ..engine.tensor import Grads, Tensor
from .anomaly_report import AnomalyTrace, cause, event

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
            explain(f"check_numerics() needs a tensor, got {type(t).__name__}.", "It scans a tensor's values.", "pass the tensor itself."),
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
            f"{message} : Tensor had {kind} values",
            f"{nans} NaN and {infs} Inf among {len(data)} entries of a tensor of shape {shape} "
            f"(made by {op!r}); the first is at flat index {first}.",
            "turn on `with mt.detect_anomaly():` to find the op that produced it.",
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

    ``with mt.detect_anomaly(mode="trace") as trace:`` raises nothing:
    ``trace.first`` is the first op that made a non-finite value (a
    :class:`~microtape.AnomalyEvent`: op, pass, entries, input values, line),
    ``trace.spread`` every op it then went through, in order, up to the
    loss and through the backward pass to the gradient; ``print(trace)``
    shows the chain.

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
                f"detect_anomaly(mode={mode!r}) is not a mode.",
                "mode is 'raise' (stop at the first op that makes a NaN or an Inf) or "
                "'trace' (record that op and every op the value spreads through, and raise nothing).",
                "write mt.detect_anomaly() to raise, or mt.detect_anomaly(mode=\"trace\") as trace: to record.",
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


class _AnomalyWatcher:
    """detect_anomaly's observer: checks each op's output and each VJP's gradients.

    ``origins`` keeps the line of user code that made each op's output, by
    tensor id, while the tensor lives: a bad gradient in the backward pass
    names the line that ran the op forward. With a ``trace`` it records
    what it sees there instead of raising.
    """

    def __init__(self, trace: AnomalyTrace | None) -> None:
        self.origins: dict[int, str] = {}
        self.trace = trace

    def on_create(self, tensor: TensorBase) -> None:
        pass

    def on_free(self, tensor: TensorBase) -> None:
        self.origins.pop(tensor.id, None)

    def on_op(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor, seconds: float) -> None:
        where = self.origins[out.id] = user_line.user_frame_line()
        if STATE.get().backward:
            return  # inside a VJP: on_vjp names the primitive whose VJP it is
        kind = _bad(out._data)
        if kind is None:
            return
        passed_on = any(_bad(x._data) for x in inputs)
        if self.trace is not None:
            if not passed_on or self.trace.first is not None:  # a NaN that came in as data starts no trace
                self.trace.add(event(op.name, "forward", kind, inputs, out, where, None, self.trace.first is None))
            return
        if passed_on:
            return  # the NaN came in from outside; the op that made it was reported, or it is data
        _raise_anomaly(op.name, "forward", kind, inputs, where, cause(op.name, "forward", inputs, out))

    def on_vjp(self, op: Op, inputs: tuple[Tensor, ...], out: Tensor, dxs: Grads) -> None:
        for i, dx in enumerate(dxs):
            if dx is None:
                continue
            kind = _bad(dx._data)
            if kind is not None:
                where = self.origins.get(out.id, "<recorded before detect_anomaly>")
                if self.trace is not None:
                    self.trace.add(event(op.name, "backward", kind, inputs, dx, where, i, self.trace.first is None))
                    return  # one event per VJP
                _raise_anomaly(op.name, "backward", kind, inputs, where, cause(op.name, "backward", inputs, dx, i), i)


def _range(t: Tensor) -> str:
    data = t._data
    if not data:
        return "[]"
    finite = [v for v in data if math.isfinite(v)]
    if not finite:
        return "no finite values"
    return f"[{format_number(min(finite))}, {format_number(max(finite))}]"


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


def _raise_anomaly(name: str, phase: str, kind: str, inputs: tuple[Tensor, ...], where: str, why: str, index: int | None = None) -> None:
    shapes = ", ".join(str(x.shape) for x in inputs)
    ranges = ", ".join(_range(x) for x in inputs)
    what = f"the gradient for input {index} of" if index is not None else "the output of"
    raise AnomalyError(
        explain(
            f"{phase} pass: {what} {name!r} has {kind} values.",
            f"{why}. Inputs: shapes {shapes}; value ranges {ranges}. The op was created at {where}.",
            _ANOMALY_HINTS.get(name, "look at the inputs of this op at that line; guard the domain "
            "(clip, add a small epsilon) or lower the learning rate."),
        ),
        op=name,
        phase=phase,
        kind=kind,
        where=where,
        cause=why,
    )


_ANOMALY_HINTS = {
    "log": "log(0) is -inf and log(x<0) is NaN: use mt.log(x + 1e-7) or clip x away from 0.",
    "div": "division by zero: add a small epsilon to the denominator.",
    "sqrt": "sqrt has an infinite slope at 0: use mt.sqrt(x + 1e-12).",
    "exp": "exp overflows above ~709: subtract the maximum first (mt.logsumexp, mt.softmax).",
    "pow": "pow with a negative base and a fractional exponent is NaN; 0 to a negative power is Inf.",
}
