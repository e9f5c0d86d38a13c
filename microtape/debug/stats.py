"""Gradient statistics: ``GradStats``, ``grad_stats`` and the ``GradientMonitor``.

``grad_stats`` summarises each gradient (norm, max and mean of ``|g|``,
share of zeros, NaN and Inf counts); a ``GradientMonitor`` records those
statistics step by step and flags exploding and vanishing gradients. Norms
are computed without overflow where the values are finite (``safe_norm``),
and a norm beyond the largest float is reported as an overflow.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from ..ops.floats import safe_mean_abs, safe_norm
from ..engine.types import is_int
from ..engine.arena import STATE, notify
from ..errors import InvalidArgumentError, explain
from ..language import N_, tr
from ..engine.formatting import format_number
from ..views.html import BAD, FONT, escape, sparkline_svg, table
from ..engine.tensor import Tensor
from .plots import sparkline

__all__ = ["GradStats", "GradientMonitor", "grad_stats"]


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
            f"{self.name:<12} {str(self.shape):<10} {tr(N_('norm {0}')).format(f'{format_number(self.norm):>9}')}  "
            f"max|g| {format_number(self.max_abs):>9}  mean|g| {format_number(self.mean_abs):>9}  "
            f"{tr(N_('zeros {0}')).format(f'{self.zero_fraction:5.1%}')}  nan {self.nan_count}  inf {self.inf_count}"
            + ("  " + tr(N_("(the norm overflows: larger than the largest float, 1.8e+308)")) if self.overflow else "")
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
                N_('the gradient {0} is a {1}, not a tensor.').format(repr(odd[0][0]), type(odd[0][1]).__name__),
                N_('Each gradient is a tensor (or None for a variable that got none).'),
                N_('pass what variable_grads, grads or tape.gradient returned: mt.grad_stats(grads)'),
            ),
            value=odd[0][1],
        )
    raise InvalidArgumentError(
        explain(
            N_('expected gradients (a tensor, list or dict of tensors), got {0}.').format(type(grads).__name__),
            N_('Pass what variable_grads, grads or tape.gradient returned.'),
            N_('for example mt.grad_stats(grads) with grads from mt.variable_grads(f).'),
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
    named = _named(grads)
    if STATE.get().observers:  # mt.function's tracer refuses a read of computed values into Python numbers
        for _, t in named:
            notify("on_read", t, N_("mt.grad_stats() (and GradientMonitor.record(), which calls it)"), _STATS_HINT)
    return {name: _stats(name, t) for name, t in named}


_STATS_HINT = N_(
    "return the gradients from the traced function and take the statistics after the call: "
    "loss, grads = step(x); monitor.record(grads)"
)


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
                    N_('GradientMonitor(explode_norm={0}, vanish_norm={1}, growth={2}, window={3}) is not usable.').format(explode_norm, vanish_norm, growth, window),
                    N_('explode_norm > 0, vanish_norm >= 0, growth > 1 and window >= 1.'),
                    N_("keep the defaults unless you know your model's usual norms."),
                )
            )
        self.explode_norm = explode_norm
        self.vanish_norm = vanish_norm
        self.growth = growth
        self.window = window
        self.history: dict[str, list[float]] = {}
        self.global_norms: list[float] = []
        self.flags: list[str] = []
        self._exploding = self._vanishing = False  # the flags' kinds: their text is in the reader's language

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
            new.append(tr("step {step}: NaN/Inf in the gradient of {names}").format(step=step, names=", ".join(bad)))
        elif total == math.inf:
            new.append(tr("step {step}: exploding: global norm inf > {limit} (overflow: "
                          "finite gradients whose norm exceeds the largest float, 1.8e+308)").format(step=step, limit=self.explode_norm))
        elif total > self.explode_norm:
            new.append(tr("step {step}: exploding: global norm {norm} > {limit}").format(step=step, norm=format_number(total), limit=self.explode_norm))
        elif len(self.global_norms) > self.window:
            old = self.global_norms[-1 - self.window]
            if old > 0 and total / old > self.growth:
                new.append(
                    tr("step {step}: exploding: global norm grew {times}x in {window} steps").format(step=step, times=format_number(total / old), window=self.window)
                )
        self._exploding = self._exploding or bool(new)  # every flag so far is NaN/Inf or exploding
        for name, s in stats.items():
            if math.isfinite(s.norm) and s.norm < self.vanish_norm:
                self._vanishing = True
                new.append(tr("step {step}: vanishing: |grad {name}| = {norm} < {limit}").format(step=step, name=name, norm=format_number(s.norm), limit=self.vanish_norm))
        self.flags.extend(new)
        return new

    @property
    def exploding(self) -> bool:
        """Whether any step was flagged as exploding (or NaN/Inf)."""
        return self._exploding

    @property
    def vanishing(self) -> bool:
        """Whether any step was flagged as vanishing."""
        return self._vanishing

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
        lines = [tr(N_("GradientMonitor: {0} steps, {1} flags")).format(len(self.global_norms), len(self.flags))]
        names = list(self.history) + ["global"]
        labels = [*self.history, tr(N_("global"))]  # the last row is the global norm, not a variable
        pad = max(len(n) for n in labels) + 2
        for name, label in zip(names, labels):
            series = (self.history[name] if name != "global" else self.global_norms)[-width:]
            # in the history inf is always an overflow (non-finite gradients give NaN): draw it at the top
            drawn = [sys.float_info.max if v == math.inf else v for v in series]
            last = "-" if not series else tr(N_("inf (overflow)")) if series[-1] == math.inf else format_number(series[-1])
            lines.append(f"{label:<{pad}} {sparkline(drawn, log=True)}  {tr(N_('last'))} {last}")
        shown = self.flags if len(self.flags) <= max(flags, 1) else [self.flags[0], *self.flags[len(self.flags) - max(flags - 1, 0):]]
        for i, flag in enumerate(shown):
            lines.append("  " + flag)
            if i == 0 and len(shown) < len(self.flags):
                lines.append("  " + tr(N_("... {0} more flags left out (monitor.flags has them all)")).format(len(self.flags) - len(shown)))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """Jupyter's picture: an SVG sparkline of each gradient's norm (log scale), then the flags.

        ``report()`` stays the text version; names and flags are escaped.

        Examples:
            >>> monitor = mt.GradientMonitor()
            >>> _ = monitor.record({"<b>w</b>": mt.tensor([1.0])})
            >>> html = monitor._repr_html_()
            >>> "&lt;b&gt;w&lt;/b&gt;" in html, html.count("<polyline")
            (True, 2)
        """
        rows = []
        for name in [*self.history, "global"]:
            series = self.history[name] if name != "global" else self.global_norms
            drawn = [sys.float_info.max if v == math.inf else v for v in series]
            last = "-" if not series else tr(N_("inf (overflow)")) if series[-1] == math.inf else format_number(series[-1])
            rows.append([escape(name if name != "global" or name in self.history else tr(N_("global"))), sparkline_svg(drawn, log=True), escape(last)])
        head = tr(N_("GradientMonitor: {0} steps, {1} flags")).format(len(self.global_norms), len(self.flags))
        flags = "".join(f'<div style="{BAD}; padding: 1px 4px">{escape(f)}</div>' for f in self.flags[:20])
        more = "<div>… " + escape(tr(N_("{0} more flags (monitor.flags has them all)")).format(len(self.flags) - 20)) + "</div>" if len(self.flags) > 20 else ""
        columns = [tr(N_("gradient")), tr(N_("norm per step (log)")), tr(N_("last"))]
        return f'<div style="{FONT}"><b>{escape(head)}</b>{table(columns, rows)}{flags}{more}</div>'
