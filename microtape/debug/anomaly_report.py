"""Where a NaN came from and where it went: ``AnomalyEvent``, ``AnomalyTrace``, and the cause sentence.

With ``mode="trace"`` it fills an :class:`AnomalyTrace` instead: the first
op that made a non-finite value, then every op the value went through.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ..engine.formatting import format_number
from ..language import N_, tr
from ..explain.steps import short_where
from ..engine.tensor import Tensor

__all__ = ["DERIVATIVES", "AnomalyEvent", "AnomalyTrace", "bad_entries", "cause", "values_at"]

_PHASES = (N_("forward"), N_("backward"))  # a pass's name, translated where an event is printed

SPREAD_LIMIT = 1000
"""A trace keeps this many spread events; a long training loop counts the rest in ``dropped``."""


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _safe(fn: Callable[..., float]) -> Callable[..., float]:
    """Evaluate a derivative the way float arithmetic would: 1/0 is inf, a domain error NaN."""

    def run(*xs: float) -> float:
        try:
            return fn(*xs)
        except ZeroDivisionError:
            return math.inf
        except OverflowError:
            return math.inf
        except ValueError:
            return math.nan

    return run


DERIVATIVES: dict[tuple[str, int], tuple[str, Callable[..., float]]] = {
    ("sqrt", 0): ("1/(2*sqrt(x))", _safe(lambda x: 1.0 / (2.0 * math.sqrt(x)) if x >= 0.0 else math.nan)),
    ("log", 0): ("1/x", _safe(lambda x: 1.0 / x)),
    ("log1p", 0): ("1/(1 + x)", _safe(lambda x: 1.0 / (1.0 + x))),
    ("log2", 0): ("1/(x*ln(2))", _safe(lambda x: 1.0 / (x * math.log(2.0)))),
    ("expm1", 0): ("exp(x)", _safe(math.exp)),
    ("atan2", 0): ("x/(x**2 + y**2)", _safe(lambda y, x: x / (x * x + y * y))),
    ("atan2", 1): ("-y/(x**2 + y**2)", _safe(lambda y, x: -y / (x * x + y * y))),
    ("exp", 0): ("exp(x)", _safe(math.exp)),
    ("tanh", 0): ("1 - tanh(x)**2", _safe(lambda x: 1.0 - math.tanh(x) ** 2)),
    ("sigmoid", 0): ("sigmoid(x)*(1 - sigmoid(x))", _safe(lambda x: _sigmoid(x) * (1.0 - _sigmoid(x)))),  # as the VJP rounds it
    ("sin", 0): ("cos(x)", _safe(math.cos)),
    ("cos", 0): ("-sin(x)", _safe(lambda x: -math.sin(x))),
    ("square", 0): ("2*x", _safe(lambda x: 2.0 * x)),
    ("div", 0): ("1/b", _safe(lambda a, b: 1.0 / b)),
    ("div", 1): ("-a/b**2", _safe(lambda a, b: -a / (b * b))),
    ("pow", 0): ("b*a**(b-1)", _safe(lambda a, b: b * math.pow(a, b - 1.0))),
    ("pow", 1): ("a**b*log(a)", _safe(lambda a, b: math.pow(a, b) * math.log(a))),
    ("mul", 0): ("b", _safe(lambda a, b: b)),
    ("mul", 1): ("a", _safe(lambda a, b: a)),
}
"""The local derivative of the common ops, by (op, input), as text and as a function
of the inputs' values at one entry: what the error names when a gradient blows up."""


def bad_entries(data: list[float] | None, limit: int = 10) -> list[int]:
    """Flat indices of the first ``limit`` NaN or Inf entries of ``data``."""
    found: list[int] = []
    for i, v in enumerate(data or ()):
        if not math.isfinite(v):
            found.append(i)
            if len(found) == limit:
                break
    return found


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index: list[int] = []
    for dim in reversed(shape):
        flat, i = divmod(flat, dim) if dim else (flat, 0)
        index.append(i)
    return tuple(reversed(index))


def values_at(inputs: tuple[Tensor, ...], flat: int, shape: tuple[int, ...]) -> list[float] | None:
    """Each input's value at entry ``flat`` of a tensor of ``shape`` (an input with one
    entry broadcasts), or None when an input's entries do not line up with it."""
    vals: list[float] = []
    for x in inputs:
        data = x._data
        if data is None:
            return None
        if len(data) == 1:
            vals.append(data[0])
        elif x.shape == shape:
            vals.append(data[flat])
        else:
            return None
    return vals


def cause(op: str, phase: str, inputs: tuple[Tensor, ...], bad: Tensor, index: int | None = None, made: bool = False) -> str:
    """One sentence: the op, the inputs' values and the entry where ``bad`` (the output,
    or the gradient for input ``index``) is not finite, and why. ``made`` says the op made
    the value from finite ones (so a NaN beside an infinite derivative is 0·inf).

    Examples:
        >>> from microtape.debug.anomaly_report import cause
        >>> x = mt.tensor([4.0, 0.0])
        >>> cause("sqrt", "backward", (x,), mt.tensor([0.25, math.inf]), 0)
        'sqrt at 0.0, entry (1,): its derivative 1/(2*sqrt(x)) is inf'
        >>> cause("log", "forward", (x,), mt.tensor([1.386, -math.inf]))
        'log at 0.0, entry (1,): log(0.0) is -inf'
    """
    data = bad._data or []
    flats = bad_entries(data, limit=len(data) or 1)
    if not flats:
        return N_("{0}: no NaN or Inf").format(op)
    flat = flats[0]
    entry = _unravel(flat, bad.shape)
    more = N_(" ({0} non-finite entries in all)").format(len(flats)) if len(flats) > 1 else ""
    vals = values_at(inputs, flat, bad.shape)
    got = format_number(data[flat])
    if vals is None:
        shapes = ", ".join(str(x.shape) for x in inputs)
        if index is None:
            return N_("{0}, entry {1}: the output is {2}, from inputs of shapes {3}{4}").format(op, entry, got, shapes, more)
        return N_("{0}, entry {1}: the gradient for input {2} is {3}, from inputs of shapes {4}{5}").format(op, entry, index, got, shapes, more)
    texts = [format_number(v) for v in vals]
    at = texts[0] if len(texts) == 1 else "(" + ", ".join(texts) + ")"
    if index is None:
        return N_("{0} at {1}, entry {2}: {3}({4}) is {5}{6}").format(op, at, entry, op, ", ".join(texts), got, more)
    known = DERIVATIVES.get((op, index))
    if known is None:
        return N_("{0} at {1}, entry {2}: the gradient its VJP returned for input {3} is {4}{5}").format(op, at, entry, index, got, more)
    formula, fn = known
    slope = fn(*vals)
    if slope == data[flat] or (slope != slope and got == "nan"):
        return N_("{0} at {1}, entry {2}: its derivative {3} is {4}{5}").format(op, at, entry, formula, format_number(slope), more)
    if got == "nan" and made and slope in (math.inf, -math.inf):  # made here: the gradient that reached it was finite, so 0
        return N_("{0} at {1}, entry {2}: its derivative {3} is {4} and the gradient that reached it is 0: 0·inf = nan{5}").format(
            op, at, entry, formula, format_number(slope), more)
    if got == "nan" and made and slope == 0.0:
        return N_("{0} at {1}, entry {2}: its derivative {3} is 0.0 and the gradient that reached it is infinite: inf·0 = nan{4}").format(
            op, at, entry, formula, more)
    if got == "nan" and math.isfinite(slope):
        return N_("{0} at {1}, entry {2}: its derivative {3} is {4}, and the gradient that reached it is nan{5}").format(
            op, at, entry, formula, format_number(slope), more)
    return N_("{0} at {1}, entry {2}: its derivative {3} is {4}, so the gradient is {5}{6}").format(op, at, entry, formula, format_number(slope), got, more)


@dataclass(frozen=True)
class AnomalyEvent:
    """One op that made, or passed on, a NaN or an Inf: an entry of an :class:`AnomalyTrace`.

    Attributes:
        op: The op's name.
        phase: ``"forward"`` (its output) or ``"backward"`` (a gradient its VJP returned).
        kind: ``"NaN"`` or ``"Inf"``.
        entries: The first (up to 10) non-finite entries, as indices of the output or gradient.
        inputs: The values of the op's inputs (kept for the first event only; empty for the others).
        where: ``file:line`` of your code that ran the op forward.
        cause: One sentence: the op at which values, which entry, and why.
        made_here: True when this op made the value: from finite inputs, or a NaN
            from infinite ones (``inf - inf``, ``0 * inf``); False when it passed on
            a value it was given.
        masked_by: For a NaN made at this op on the way back where a masking op
            passed it a gradient of 0 (0·inf, or 0 times the NaN derivative of an
            op whose non-finite output it hid): that op, which entries it hid in
            the forward pass, and its line; "" for an op that only passed a NaN on.
        hint: The fix, in your own names where a line of code does it.
        hint_is_code: Whether the hint is such a line of code.

    Examples:
        >>> with mt.detect_anomaly(mode="trace") as trace:
        ...     y = mt.log(mt.tensor([1.0, 0.0]))
        >>> trace.first.op, trace.first.phase, trace.first.entries, trace.first.inputs
        ('log', 'forward', ((1,),), ((1.0, 0.0),))
    """

    op: str
    phase: str
    kind: str
    entries: tuple[tuple[int, ...], ...]
    inputs: tuple[tuple[float, ...], ...]
    where: str
    cause: str
    made_here: bool
    masked_by: str = ""
    hint: str = ""
    hint_is_code: bool = False

    def __str__(self) -> str:
        phase = tr(self.phase) if self.made_here else tr(N_("{0}, passed on").format(self.phase))
        text = tr(N_("{0} ({1}) at {2}: {3}")).format(self.op, phase, short_where(self.where), tr(self.cause))
        return text + ("; " + tr(self.masked_by) if self.masked_by else "")


def event(
    op: str, phase: str, kind: str, inputs: tuple[Tensor, ...], bad: Tensor, where: str, index: int | None, first: bool,
    made: bool, masked_by: str = "", hint: str = "", cause_text: str | None = None, code: bool = False,
    only: list[int] | None = None,
) -> AnomalyEvent:
    """The :class:`AnomalyEvent` for ``bad`` (an op's output, or the gradient for input ``index``);
    ``made`` says the op made the value (from finite values, or a NaN from infinite ones), ``only``
    lists the flat entries it made (the others it passed on), when it made some."""
    flats = only[:10] if only else bad_entries(bad._data)
    entries = tuple(_unravel(i, bad.shape) for i in flats)
    values = tuple(tuple(x._data or ()) for x in inputs) if first else ()
    why = cause_text if cause_text is not None else cause(op, phase, inputs, bad, index)
    return AnomalyEvent(op, phase, kind, entries, values, where, why, made, masked_by, str(hint), code)


@dataclass
class AnomalyTrace:
    """What ``detect_anomaly(mode="trace")`` recorded: where a NaN or Inf came from, and where it went.

    Attributes:
        first: The first op that made a non-finite value, or None if none did.
        spread: Every op the value then went through, in order (forward up to
            the loss, then the backward pass up to the gradient): only values
            computed from the first one.
        dropped: Spread events not kept (after the first 1000).
        unrelated: Ops that later made a non-finite value of their own, not
            from the first (up to 1000).

    Examples:
        >>> x = mt.tensor([1.0, 0.0])
        >>> with mt.detect_anomaly(mode="trace") as trace:
        ...     loss = (mt.log(x) * 2.0).sum()
        >>> trace.first.op, [e.op for e in trace.spread]
        ('log', ['mul', 'sum'])
        >>> with mt.detect_anomaly(mode="trace") as clean:
        ...     _ = mt.exp(x)
        >>> print(clean)
        detect_anomaly: no op made a NaN or an Inf.
    """

    first: AnomalyEvent | None = None
    spread: list[AnomalyEvent] = field(default_factory=list)
    dropped: int = 0
    unrelated: list[AnomalyEvent] = field(default_factory=list)

    def add(self, found: AnomalyEvent, related: bool = True) -> None:
        """Record ``found``: the first event, one more op it spread through, or (``related=False``)
        a value another op made on its own later.

        Examples:
            >>> trace = mt.AnomalyTrace()
            >>> trace.add(mt.AnomalyEvent("log", "forward", "Inf", ((0,),), ((0.0,),), "me.py:3", "log(0.0) is -inf", True))
            >>> trace.first.op, trace.spread
            ('log', [])
        """
        if self.first is None:
            self.first = found
        elif not related:
            if len(self.unrelated) < SPREAD_LIMIT:
                self.unrelated.append(found)
        elif len(self.spread) < SPREAD_LIMIT:
            self.spread.append(found)
        else:
            self.dropped += 1

    @property
    def hint(self) -> str:
        """What to do: the first hint that is code, preferring one that found a masking op (a
        ``where`` that hid the value: its fix is the double ``where``), else the first event's
        advice; "" when nothing was made.

        Examples:
            >>> with mt.detect_anomaly(mode="trace") as trace:
            ...     _ = mt.sqrt(mt.tensor([-1.0]))
            >>> trace.hint
            'the square root of a negative number is nan: find out why its input is negative here'
        """
        if self.first is None:
            return ""
        events = [self.first, *self.spread]
        code = next((e for e in events if e.masked_by and e.hint_is_code), None) or next((e for e in events if e.hint_is_code), None)
        return (code or self.first).hint

    @property
    def _hint_text(self) -> str:
        """The hint as printed: advice in the reader's language, a line of code as it is.

        Examples:
            >>> with mt.detect_anomaly(mode="trace") as trace:
            ...     _ = mt.sqrt(mt.tensor([-1.0]))
            >>> trace._hint_text == trace.hint
            True
        """
        events = [] if self.first is None else [self.first, *self.spread]
        code = any(e.hint_is_code and e.hint == self.hint for e in events)
        return self.hint if code else tr(self.hint)

    def __str__(self) -> str:
        if self.first is None:
            return tr(N_("detect_anomaly: no op made a NaN or an Inf."))
        lines = [tr(N_("{0} first made by {1}")).format(self.first.kind, self.first)]
        if self.spread:
            lines.append(tr(N_("then it spread through:")))
            lines.extend(f"  {i}. {e}" for i, e in enumerate(self.spread, 1))
            if self.dropped:
                lines.append("  " + tr(N_("... and {0} more")).format(self.dropped))
        else:
            lines.append(tr(N_("it went no further.")))
        if self.hint:
            lines.append(tr("hint") + ": " + self._hint_text)
        if self.unrelated:
            lines.append(
                tr(N_("{0} other op(s) made a NaN or an Inf of their own later, not from this one; the first: {1}")).format(
                    len(self.unrelated), self.unrelated[0])
            )
        return "\n".join(lines)
