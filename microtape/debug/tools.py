"""Looking at numbers and gradients: print, check_numerics, detect_anomaly,
gradient statistics, a monitor for exploding and vanishing gradients
and text plots. Clipping lives with the composite ops in ``clipping.py``
and is re-exported here.

Read after ``clipping.py``. Nothing here changes how gradients are
computed; it makes them visible. ``detect_anomaly`` is an observer of the
engine, like ``profile``: while it is on, every op's output and every VJP's
gradients are shown to it (``_AnomalyWatcher`` below); when it is off the
engine does nothing for it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, TextIO, cast

from ..core import runtime
from ..core.floats import safe_mean_abs, safe_norm
from ..core.registry import Op
from ..core.runtime import STATE, TensorBase
from ..core.types import is_int
from .clipping import clip_by_global_norm, clip_by_norm
from ..errors import AnomalyError, InvalidArgumentError, NumericsError, explain
from ..core.formatting import format_number
from ..core.tensor import Grads, Tensor

__all__ = [
    "GradStats",
    "GradientMonitor",
    "check_numerics",
    "clip_by_global_norm",
    "clip_by_norm",
    "detect_anomaly",
    "grad_stats",
    "histogram",
    "print_tensor",
    "sparkline",
]


# -- print --------------------------------------------------------------------


_PRINT_LIMIT: Final = 20  # TF.js FORMAT_LIMIT_NUM_VALS: longer dimensions are summarised
_PRINT_EDGE: Final = 3  # TF.js FORMAT_NUM_FIRST_LAST_VALS: entries shown at each end
_PRINT_DIGITS: Final = 7  # TF.js FORMAT_NUM_SIG_DIGITS, used with toFixed


def _js_str(v: float) -> str:
    """JavaScript's ``Number.prototype.toString`` for a float."""
    if v != v:
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "0"
    if 1e-6 <= abs(v) < 1e21:
        text = format(Decimal(repr(v)), "f")  # shortest round-trip digits, never an exponent
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa, _, exponent = repr(v).partition("e")
    return f"{mantissa}e{'+' if int(exponent) > 0 else '-'}{abs(int(exponent))}"


def _js_number(v: float) -> str:
    """How TF.js prints one value: ``parseFloat(v.toFixed(7)).toString()``."""
    if math.isfinite(v) and abs(v) < 1e21:
        v = float(f"{v:.{_PRINT_DIGITS}f}")
    return _js_str(v)


def _short_number(v: float) -> str:
    """Integers without a decimal point, other values with 4 significant digits."""
    if math.isfinite(v) and v == int(v) and abs(v) < 1e16:
        return str(int(v))
    return format_number(v)


def _layout(data: list[float], shape: tuple[int, ...]) -> list[str]:
    """The lines of TF.js ``tensorToString``: nested brackets, one innermost row per
    line, columns padded to a common width, dimensions longer than 20 summarised."""
    if not shape:
        return [_js_number(data[0])]
    cols = shape[-1]
    pad = [0] * cols
    if len(shape) > 1 and cols:
        for start in range(0, len(data), cols):
            for j in range(cols):
                pad[j] = max(pad[j], len(_js_number(data[start + j])))
    return _sub_layout(data, shape, pad, True)


def _sub_layout(data: list[float], shape: tuple[int, ...], pad: list[int], last: bool) -> list[str]:
    size, rank = shape[0], len(shape)
    if rank == 1:
        cells = [_js_number(v).ljust(pad[j]) for j, v in enumerate(data)]
        if size > _PRINT_LIMIT:
            cells = cells[:_PRINT_EDGE] + ["..."] + cells[-_PRINT_EDGE:]
        return ["[" + ", ".join(cells) + "]"]
    step = len(data) // size if size else 0
    if size > _PRINT_LIMIT:  # checked first: (10**17, 0) is summarised without a list of 10**17 picks
        picks: list[int | None] = [*range(_PRINT_EDGE), None, *range(size - _PRINT_EDGE, size)]
    else:
        picks = list(range(size))
    lines: list[str] = []
    for i in picks:
        if i is None:
            lines.append("...")
        else:
            lines.extend(_sub_layout(data[i * step : (i + 1) * step], shape[1:], pad, i == size - 1))
    end = "]" + ("" if last else ",\n" + "\n" * (rank - 2))  # blocks of rank >= 3 get a blank line
    if not lines:
        return ["[" + end]
    if len(lines) == 1:
        return ["[" + lines[0] + end]
    sep = "," if rank == 2 else ""
    lines[0] = "[" + lines[0] + sep
    for k in range(1, len(lines) - 1):
        lines[k] = " " + lines[k] + sep
    lines[-1] = " " + lines[-1] + end
    return lines


def print_tensor(t: Tensor, verbose: bool = False, file: TextIO | None = None) -> None:
    """Print a tensor in the layout of TF.js ``tf.print`` (``mt.print``).

    As in TF.js, values are rounded to 7 decimals (``1/3`` shows as
    ``0.3333333``), the columns of a matrix share a width, and a dimension
    longer than 20 is summarised with its first and last 3 entries and
    ``...``, so printing a big gradient stays readable. ``verbose=True``
    adds the dtype, rank and shape.

    Examples:
        >>> mt.print(mt.tensor([1.0, 2.5, 3.0]))
        Tensor
            [1, 2.5, 3]
        >>> mt.print(mt.tensor([[1.0, -0.5], [10.0, 2.0]]))
        Tensor
            [[1 , -0.5],
             [10, 2   ]]
        >>> mt.print(mt.tensor([[1.0, 2.0], [3.0, 4.0]]), verbose=True)
        Tensor
          dtype: float64
          rank: 2
          shape: [2,2]
          values:
            [[1, 2],
             [3, 4]]
    """
    if not isinstance(t, Tensor):
        raise InvalidArgumentError(
            explain(
                f"print() needs a tensor, got {type(t).__name__}: {t!r:.60}.",
                "mt.print shows a tensor the way tf.print does.",
                "use Python's print() for other values.",
            ),
            value=t,
        )
    out = file if file is not None else sys.stdout
    lines = _layout(t._values(), t.shape)
    if verbose:
        shape = "[" + ",".join(str(d) for d in t.shape) + "]"
        print(f"Tensor\n  dtype: {t.dtype}\n  rank: {t.rank}\n  shape: {shape}\n  values:", file=out)
        pad = "    "
    else:
        print("Tensor", file=out)
        pad = "    "
    for line in lines:
        print(pad + line, file=out)


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
    data = t._values()
    nans = sum(1 for v in data if v != v)
    infs = sum(1 for v in data if v in (math.inf, -math.inf))
    if nans or infs:
        kind = "Inf and NaN" if nans and infs else "NaN" if nans else "Inf"  # TensorFlow's wording
        first = next(i for i, v in enumerate(data) if not math.isfinite(v))
        raise NumericsError(
            explain(
                f"{message} : Tensor had {kind} values",
                f"{nans} NaN and {infs} Inf among {len(data)} entries of a tensor of shape {t.shape} "
                f"(made by {t._op!r}); the first is at flat index {first}.",
                "turn on `with mt.detect_anomaly():` to find the op that produced it.",
            ),
            nans=nans,
            infs=infs,
            shape=t.shape,
        )
    return t


# -- detect_anomaly ---------------------------------------------------------------


@contextmanager
def detect_anomaly() -> Iterator[None]:
    """Raise :class:`~microtape.AnomalyError` at the first op that makes NaN or Inf.

    Both passes are watched: the forward of every op, and every VJP in a
    backward pass. The error names the op, the pass, the input shapes and
    value ranges, and the line of your code that created the op. Off by
    default. It is an observer of the ops, like ``profile`` and
    ``leak_check``, so when off it costs nothing
    (``torch.autograd.detect_anomaly`` is the PyTorch equivalent).

    Examples:
        >>> x = mt.tensor([0.0, 1.0])
        >>> with mt.detect_anomaly():
        ...     try:
        ...         mt.grad(lambda t: mt.sqrt(t).sum())(x)   # d sqrt at 0 is inf
        ...     except mt.AnomalyError as err:
        ...         print(err.op, err.phase)
        sqrt backward
    """
    st = STATE.get()
    watcher = _AnomalyWatcher()
    STATE.set(st.but(anomaly=True, observers=st.observers + (watcher,)))
    try:
        yield
    finally:
        now = STATE.get()
        STATE.set(now.but(anomaly=st.anomaly, observers=tuple(o for o in now.observers if o is not watcher)))


class _AnomalyWatcher:
    """detect_anomaly's observer: checks each op's output and each VJP's gradients.

    ``origins`` keeps the line of user code that made each op's output, by
    tensor id, while the tensor lives: a bad gradient in the backward pass
    names the line that ran the op forward.
    """

    def __init__(self) -> None:
        self.origins: dict[int, str] = {}

    def on_create(self, tensor: TensorBase) -> None:
        pass

    def on_free(self, tensor: TensorBase) -> None:
        self.origins.pop(tensor.id, None)

    def on_op(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor, seconds: float) -> None:
        where = self.origins[out.id] = runtime.user_frame_line()
        if STATE.get().backward:
            return  # inside a VJP: on_vjp names the primitive whose VJP it is
        kind = _bad(out._data)
        if kind is None or any(_bad(x._data) for x in inputs):
            return  # the NaN came in from outside; the op that made it was reported, or it is data
        _raise_anomaly(op.name, "forward", kind, inputs, where)

    def on_vjp(self, op: Op, inputs: tuple[Tensor, ...], out: Tensor, dxs: Grads) -> None:
        for i, dx in enumerate(dxs):
            if dx is None:
                continue
            kind = _bad(dx._data)
            if kind is not None:
                where = self.origins.get(out.id, "<recorded before detect_anomaly>")
                _raise_anomaly(op.name, "backward", kind, inputs, where, i)


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


def _raise_anomaly(name: str, phase: str, kind: str, inputs: tuple[Tensor, ...], where: str, index: int | None = None) -> None:
    shapes = ", ".join(str(x.shape) for x in inputs)
    ranges = ", ".join(_range(x) for x in inputs)
    what = f"the gradient for input {index} of" if index is not None else "the output of"
    raise AnomalyError(
        explain(
            f"{phase} pass: {what} {name!r} has {kind} values.",
            f"Inputs: shapes {shapes}; value ranges {ranges}. The op was created at {where}.",
            _ANOMALY_HINTS.get(name, "look at the inputs of this op at that line; guard the domain "
            "(clip, add a small epsilon) or lower the learning rate."),
        ),
        op=name,
        phase=phase,
        kind=kind,
        where=where,
    )


_ANOMALY_HINTS = {
    "log": "log(0) is -inf and log(x<0) is NaN: use mt.log(x + 1e-7) or clip x away from 0.",
    "div": "division by zero: add a small epsilon to the denominator.",
    "sqrt": "sqrt has an infinite slope at 0: use mt.sqrt(x + 1e-12).",
    "exp": "exp overflows above ~709: subtract the maximum first (mt.logsumexp, mt.softmax).",
    "pow": "pow with a negative base and a fractional exponent is NaN; 0 to a negative power is Inf.",
}


# -- gradient statistics and the monitor -------------------------------------------


@dataclass(frozen=True, slots=True)
class GradStats:
    """Statistics of one gradient tensor (what :func:`grad_stats` returns per entry).

    ``norm`` is ``inf`` with ``overflow`` true when the gradient's values are
    finite but its norm exceeds the largest float (about 1.8e308), and ``nan``
    when a value is NaN or Inf (counted in ``nan_count`` and ``inf_count``).

    Examples:
        >>> s = mt.grad_stats([mt.tensor([0.0, 2.0])])["0"]
        >>> s.norm, s.zero_fraction
        (2.0, 0.5)
        >>> huge = mt.grad_stats({"w": mt.tensor([1.5e308, -1.5e308])})["w"]
        >>> huge.norm, huge.overflow, huge.max_abs
        (inf, True, 1.5e+308)
    """

    name: str
    shape: tuple[int, ...]
    norm: float
    max_abs: float
    mean_abs: float
    zero_fraction: float
    nan_count: int
    inf_count: int
    overflow: bool = False

    def __str__(self) -> str:
        return (
            f"{self.name:<12} {str(self.shape):<10} norm {format_number(self.norm):>9}  "
            f"max|g| {format_number(self.max_abs):>9}  mean|g| {format_number(self.mean_abs):>9}  "
            f"zeros {self.zero_fraction:5.1%}  nan {self.nan_count}  inf {self.inf_count}"
            + ("  (the norm overflows: larger than the largest float, 1.8e+308)" if self.overflow else "")
        )


def _named(grads: object) -> list[tuple[str, Tensor]]:
    if isinstance(grads, Tensor):
        return [(getattr(grads, "name", "grad"), grads)]
    items: list[tuple[str, object]] | None = None
    if isinstance(grads, Mapping):
        items = [(str(k), v) for k, v in grads.items() if v is not None]
    elif isinstance(grads, (list, tuple)):
        items = [(str(i), g) for i, g in enumerate(grads) if g is not None]
    odd = [(name, g) for name, g in items or [] if not isinstance(g, Tensor)]
    if items is not None and not odd:
        return cast(list[tuple[str, Tensor]], items)
    if odd:
        raise InvalidArgumentError(
            explain(
                f"the gradient {odd[0][0]!r} is a {type(odd[0][1]).__name__}, not a tensor.",
                "Each gradient is a tensor (or None for a variable that got none).",
                "pass what variable_grads, grads or tape.gradient returned: mt.grad_stats(grads)",
            ),
            value=odd[0][1],
        )
    raise InvalidArgumentError(
        explain(
            f"expected gradients (a tensor, list or dict of tensors), got {type(grads).__name__}.",
            "Pass what variable_grads, grads or tape.gradient returned.",
            "for example mt.grad_stats(grads) with grads from mt.variable_grads(f).",
        ),
        value=grads,
    )


def _stats(name: str, t: Tensor) -> GradStats:
    data = t._values()
    finite = [v for v in data if math.isfinite(v)]
    n = len(data) or 1
    all_finite = len(finite) == len(data)
    norm = safe_norm(data) if all_finite else math.nan
    return GradStats(
        name=name,
        shape=t.shape,
        norm=norm,
        max_abs=max((abs(v) for v in data), default=0.0) if all_finite else math.nan,
        mean_abs=safe_mean_abs(finite, n),
        zero_fraction=sum(1 for v in data if v == 0.0) / n,
        nan_count=sum(1 for v in data if v != v),
        inf_count=sum(1 for v in data if v in (math.inf, -math.inf)),
        overflow=norm == math.inf,
    )


def grad_stats(grads: Tensor | Sequence[Tensor | None] | Mapping[str, Tensor | None]) -> dict[str, GradStats]:
    """Per-gradient norm, max |g|, mean |g|, share of zeros and NaN/Inf counts.

    Accepts a tensor, a list or a dict of gradients (the ``.grads`` of
    :func:`~microtape.variable_grads` works as is).

    Examples:
        >>> stats = mt.grad_stats({"w": mt.tensor([3.0, 0.0, -4.0])})
        >>> s = stats["w"]
        >>> s.norm, s.max_abs, round(s.zero_fraction, 3), s.nan_count
        (5.0, 4.0, 0.333, 0)
    """
    return {name: _stats(name, t) for name, t in _named(grads)}


class GradientMonitor:
    """Record gradient statistics step by step and flag exploding or vanishing ones.

    A step is *exploding* when the global norm exceeds ``explode_norm`` or
    grew more than ``growth`` times over the last ``window`` steps; a
    variable's gradient is *vanishing* when its norm is below
    ``vanish_norm``. NaN or Inf anywhere is always flagged. ``report()``
    draws a sparkline of each gradient's norm over the steps.

    Examples:
        >>> monitor = mt.GradientMonitor(explode_norm=100.0)
        >>> for step in range(6):
        ...     _ = monitor.record({"w": mt.tensor([10.0 ** step])})
        >>> monitor.flags[-1]
        'step 5: exploding: global norm 1e+05 > 100.0'
        >>> print(monitor.report().splitlines()[1])
        w        ▁▂▄▅▇█  last 1e+05
    """

    def __init__(
        self,
        explode_norm: float = 1e3,
        vanish_norm: float = 1e-7,
        growth: float = 100.0,
        window: int = 5,
    ) -> None:
        if not (explode_norm > 0 and vanish_norm >= 0 and growth > 1 and is_int(window) and window >= 1):
            raise InvalidArgumentError(
                explain(
                    f"GradientMonitor(explode_norm={explode_norm}, vanish_norm={vanish_norm}, growth={growth}, window={window}) is not usable.",
                    "explode_norm > 0, vanish_norm >= 0, growth > 1 and window >= 1.",
                    "keep the defaults unless you know your model's usual norms.",
                )
            )
        self.explode_norm = explode_norm
        self.vanish_norm = vanish_norm
        self.growth = growth
        self.window = window
        self.history: dict[str, list[float]] = {}
        self.global_norms: list[float] = []
        self.flags: list[str] = []

    def record(self, grads: Tensor | Sequence[Tensor | None] | Mapping[str, Tensor | None]) -> list[str]:
        """Add one step's gradients; return the flags raised at this step."""
        stats = grad_stats(grads)
        step = len(self.global_norms)
        total = safe_norm([s.norm for s in stats.values()])
        self.global_norms.append(total)
        for name, s in stats.items():
            self.history.setdefault(name, []).append(s.norm)
        new: list[str] = []
        bad = [n for n, s in stats.items() if s.nan_count or s.inf_count]
        if bad:
            new.append(f"step {step}: NaN/Inf in the gradient of {', '.join(bad)}")
        elif total == math.inf:
            new.append(f"step {step}: exploding: global norm inf > {self.explode_norm} (overflow: "
                       "finite gradients whose norm exceeds the largest float, 1.8e+308)")
        elif total > self.explode_norm:
            new.append(f"step {step}: exploding: global norm {format_number(total)} > {self.explode_norm}")
        elif len(self.global_norms) > self.window:
            old = self.global_norms[-1 - self.window]
            if old > 0 and total / old > self.growth:
                new.append(
                    f"step {step}: exploding: global norm grew {format_number(total / old)}x in {self.window} steps"
                )
        for name, s in stats.items():
            if math.isfinite(s.norm) and s.norm < self.vanish_norm:
                new.append(f"step {step}: vanishing: |grad {name}| = {format_number(s.norm)} < {self.vanish_norm}")
        self.flags.extend(new)
        return new

    @property
    def exploding(self) -> bool:
        """Whether any step was flagged as exploding (or NaN/Inf)."""
        return any("exploding" in f or "NaN" in f for f in self.flags)

    @property
    def vanishing(self) -> bool:
        """Whether any step was flagged as vanishing."""
        return any("vanishing" in f for f in self.flags)

    def report(self, width: int = 40, flags: int = 5) -> str:
        """A compact text report: one sparkline of gradient norms per variable, then the flags.

        The first flag of the run comes first (it usually explains the rest),
        then the ``flags - 1`` most recent, saying how many are left out. A
        norm that overflowed (finite gradients, norm beyond 1.8e308) is drawn
        as the highest bar and printed as ``inf (overflow)``.

        Examples:
            >>> monitor = mt.GradientMonitor(explode_norm=10.0)
            >>> for step in range(7):
            ...     _ = monitor.record({"w": mt.tensor([1e50 ** step])})
            >>> _ = monitor.record({"w": mt.tensor([1.5e308, -1.5e308])})
            >>> print(monitor.report(flags=3))
            GradientMonitor: 8 steps, 7 flags
            w        ▁▂▃▄▆▇██  last inf (overflow)
            global   ▁▂▃▄▆▇██  last inf (overflow)
              step 1: exploding: global norm 1e+50 > 10.0
              ... 4 more flags left out (monitor.flags has them all)
              step 6: exploding: global norm 1e+300 > 10.0
              step 7: exploding: global norm inf > 10.0 (overflow: finite gradients whose norm exceeds the largest float, 1.8e+308)
        """
        lines = [f"GradientMonitor: {len(self.global_norms)} steps, {len(self.flags)} flags"]
        names = list(self.history) + ["global"]
        pad = max(len(n) for n in names) + 2
        for name in names:
            series = (self.history[name] if name != "global" else self.global_norms)[-width:]
            # in the history inf is always an overflow (non-finite gradients give NaN): draw it at the top
            drawn = [sys.float_info.max if v == math.inf else v for v in series]
            last = "-" if not series else "inf (overflow)" if series[-1] == math.inf else format_number(series[-1])
            lines.append(f"{name:<{pad}} {sparkline(drawn, log=True)}  last {last}")
        shown = self.flags if len(self.flags) <= max(flags, 1) else [self.flags[0], *self.flags[len(self.flags) - max(flags - 1, 0):]]
        for i, flag in enumerate(shown):
            lines.append("  " + flag)
            if i == 0 and len(shown) < len(self.flags):
                lines.append(f"  ... {len(self.flags) - len(shown)} more flags left out (monitor.flags has them all)")
        return "\n".join(lines)


# -- text plots -------------------------------------------------------------------------

_BARS = "▁▂▃▄▅▆▇█"


def _series(values: Tensor | Sequence[float]) -> list[float]:
    if isinstance(values, Tensor):
        return values.data_sync()
    return [float(v) for v in values]


def sparkline(values: Tensor | Sequence[float], log: bool = False) -> str:
    """One-line bar chart of a series or a tensor's values: ``▁▂▄█``.

    ``log=True`` scales by log10, so norms spanning many orders of magnitude
    (exploding or vanishing gradients) stay readable. NaN and Inf show as ``!``.

    Examples:
        >>> mt.sparkline([1, 2, 3, 4, 8])
        '▁▂▃▄█'
        >>> mt.sparkline([1e-6, 1e-3, 1.0], log=True)
        '▁▅█'
        >>> mt.sparkline([0.0, 0.0, float("nan")], log=True)
        '▁▁!'
        >>> mt.sparkline([-1.7e308, 0.0, 1.7e308, float("inf")])    # the whole float range
        '▁▅█!'
    """
    data = _series(values)
    scaled = [(math.log10(v) if v > 0 else -math.inf) if log else v for v in data]
    finite = [v for v in scaled if math.isfinite(v)]
    if not finite:  # nothing to scale by: zeros (on a log scale) sit at the bottom
        return "".join("!" if not math.isfinite(raw) else _BARS[0] for raw in data)
    lo, hi = min(finite), max(finite)
    half_span = hi / 2 - lo / 2  # halves: the span of -1e308 and 1e308 does not overflow
    out = []
    for v, raw in zip(scaled, data):
        if not math.isfinite(raw):
            out.append("!")
        elif not math.isfinite(v):
            out.append(_BARS[0])
        else:
            place = (v / 2 - lo / 2) / half_span if half_span else 0.0
            out.append(_BARS[min(len(_BARS) - 1, int(place * (len(_BARS) - 1) + 0.5))])
    return "".join(out)


def histogram(values: Tensor | Sequence[float], bins: int = 10, width: int = 30) -> str:
    """Text histogram of a tensor's values, one line per bin.

    NaN and Inf cannot be binned: a last line counts them.

    Examples:
        >>> print(mt.histogram([0.0, 0.1, 0.2, 0.9, 1.0], bins=2, width=6))
        [0, 0.5)  ###### 3
        [0.5, 1]  #### 2
        >>> print(mt.histogram([-1.7e308, 1.7e308, 1.7e308, float("nan")], bins=2, width=6))
        [-1.7e+308, 0)  ### 1
        [0, 1.7e+308]   ###### 2
        (1 NaN/Inf value left out)
    """
    everything = _series(values)
    data = [v for v in everything if math.isfinite(v)]
    left_out = len(everything) - len(data)
    note = f"\n({left_out} NaN/Inf value{'s' if left_out != 1 else ''} left out)" if left_out else ""
    if not is_int(bins) or bins < 1:
        raise InvalidArgumentError(explain(f"bins={bins!r} must be a positive int.", "A histogram needs at least one bin.", "use bins=10."), value=bins)
    if not data:
        return "(no finite values)" + note
    lo, hi = min(data), max(data)
    half_span = (hi / 2 - lo / 2) or 0.5  # halves: the span of -1e308 and 1e308 does not overflow
    counts = [0] * bins
    for v in data:
        counts[min(bins - 1, int((v / 2 - lo / 2) / half_span * bins))] += 1
    top = max(counts)
    edges = [lo + 2 * half_span * i / bins if half_span < 8e307 else lo * (1 - i / bins) + hi * (i / bins) for i in range(bins + 1)]
    labels = [f"[{_short_number(edges[i])}, {_short_number(edges[i + 1])}{']' if i == bins - 1 else ')'}" for i in range(bins)]
    pad = max(len(label) for label in labels)
    return "\n".join(
        f"{label:<{pad}}  {'#' * max(1 if c else 0, round(c / top * width))} {c}" for label, c in zip(labels, counts)
    ) + note
