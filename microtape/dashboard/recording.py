"""What a dashboard has been fed: bounded series, the latest gradients, marks and flags.

``Dashboard.log`` checks and reads what a training loop hands it, then gives
the plain numbers to ``Recording.add()``, which keeps one point per series
(the loss, each gradient norm and their global norm, each update-to-weight
ratio, the live tensor count), the latest gradients for the histograms, and
the exploding and vanishing flags: a ``GradientMonitor``'s, or without one
the same rules applied here. ``Recording.snapshot()`` copies it all at one
moment, for ``render.py`` to draw. A ``Recording`` takes no lock: the
dashboard holds its own around every call, since the page is drawn in the
server's thread while the training loop feeds it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from . import charts
from .backward_panel import Row
from .series import Series
from ..ops.floats import safe_norm
from ..debug.stats import GradientMonitor

__all__ = ["Points", "Recording", "Snapshot"]

Points = list[tuple[int, float]]
"""One series as (step, value) pairs, oldest first."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A copy of a :class:`Recording` at one moment: what ``render.py`` draws and ``/data.json`` serves."""

    loss: Points
    norms: dict[str, Points]
    global_norm: Points
    ratios: dict[str, Points]
    tensors: Points
    tensors_before: int | None
    latest: dict[str, list[float]]
    latest_step: int | None
    marks: list[tuple[int, str]]
    flags: list[str]
    flag_count: int
    first_flag: str | None
    colors: dict[str, str]
    steps_logged: int
    last_step: int | None
    last_loss: float | None
    backward: list[Row]
    backward_total: int
    backward_step: int | None


class Recording:
    """The numbers of one training run, at most ``max_points`` points per series.

    ``flags`` keeps the 8 latest flags, ``first_flag`` the first of the run
    (it usually explains the rest) and ``flag_count`` how many were raised.
    """

    def __init__(self, max_points: int, monitor: GradientMonitor | None) -> None:
        self.max_points = max_points
        self.monitor = monitor
        self.loss: Series = Series(max_points)
        self.norms: dict[str, Series] = {}
        self.global_norm: Series = Series(max_points)
        self.ratios: dict[str, Series] = {}
        self.tensors: Series = Series(max_points)
        self.tensors_before: int | None = None
        """The live tensors of the process when the run began, subtracted from ``memory().num_tensors``
        so the chart counts the run's own tensors; None once a step gave its own count."""
        self.latest: dict[str, list[float]] = {}
        self.latest_step: int | None = None
        self.weights: dict[str, list[float]] = {}
        self.colors: dict[str, str] = {}
        self.marks: deque[tuple[int, str]] = deque(maxlen=32)
        self.flags: deque[str] = deque(maxlen=8)
        self.flag_count: int = 0
        self.first_flag: str | None = None
        self.last_step: int | None = None
        self.last_loss: float | None = None
        self.steps_logged: int = 0
        self.backward: list[Row] = []
        """The latest backward pass ``Dashboard.log_backward`` was given, as text rows (``backward_panel.py``)."""
        self.backward_total: int = 0
        self.backward_step: int | None = None
        self._monitor_seen: dict[str, int] = {}
        self._monitor_flags = 0

    def add(
        self,
        step: int,
        loss: float | None,
        grads: dict[str, list[float]],
        weights: dict[str, list[float]],
        tensors: int,
        thresholds: tuple[float, float],
    ) -> None:
        """Record one step whose arguments ``Dashboard.log`` has checked and read.

        ``grads`` and ``weights`` are each variable's values by name;
        ``thresholds`` is ``(explode_norm, vanish_norm)``, the rules used when
        there is no monitor. Without ``grads``, the norms the monitor recorded
        since the last call are charted.
        """
        monitor_norms: dict[str, float] = {}
        monitor_global: float | None = None
        if self.monitor is not None and not grads:
            for name, history in self.monitor.history.items():
                if len(history) > self._monitor_seen.get(name, 0):
                    monitor_norms[name] = history[-1]
            if monitor_norms and self.monitor.global_norms:
                monitor_global = self.monitor.global_norms[-1]

        norms = {name: safe_norm(data) for name, data in grads.items()} or monitor_norms
        total = safe_norm(list(norms.values())) if grads else monitor_global
        ratios: dict[str, float] = {}
        for name, data in weights.items():
            old = self.weights.get(name)
            if old is not None and len(old) == len(data):
                size = safe_norm(old)
                change = safe_norm([a / 2 - b / 2 for a, b in zip(data, old)]) * 2  # halves: no overflow of a - b
                ratios[name] = change / size if size > 0 else (math.inf if change > 0 else 0.0)

        self.steps_logged += 1
        self.last_step = step
        if loss is not None:
            self.last_loss = loss
            self.loss.add(step, loss)
        for name, value in norms.items():
            self._series(self.norms, name).add(step, value)
        if total is not None and len(norms) > 1:
            self.global_norm.add(step, total)
        for name, value in ratios.items():
            self._series(self.ratios, name).add(step, value)
        self.weights.update(weights)
        if grads:
            self.latest, self.latest_step = grads, step
        self.tensors.add(step, float(tensors))
        if self.monitor is not None:
            for name in monitor_norms:
                self._monitor_seen[name] = len(self.monitor.history[name])
            new = self.monitor.flags[self._monitor_flags :]
            self._monitor_flags = len(self.monitor.flags)
            self._add_flags(new)
        elif norms:
            self._add_flags(self._check(step, norms, total, thresholds))

    def _series(self, table: dict[str, Series], name: str) -> Series:
        if name not in table:
            table[name] = Series(self.max_points)
        self._color(name)
        return table[name]

    def _color(self, name: str) -> str:
        if name not in self.colors:
            self.colors[name] = charts.PALETTE[len(self.colors) % len(charts.PALETTE)]
        return self.colors[name]

    def _check(self, step: int, norms: dict[str, float], total: float | None, thresholds: tuple[float, float]) -> list[str]:
        """The monitor's rules, for a dashboard without a monitor."""
        explode_norm, vanish_norm = thresholds
        flags = []
        bad = [n for n, v in norms.items() if v != v]  # a norm is NaN when a value is NaN or Inf
        if bad:
            flags.append(f"step {step}: NaN/Inf in the gradient of {', '.join(bad)}")
        elif total == math.inf:
            flags.append(f"step {step}: exploding: global norm inf > {charts.short(explode_norm)} "
                         "(overflow: finite gradients whose norm exceeds the largest float, 1.8e+308)")
        elif total is not None and total > explode_norm:
            flags.append(f"step {step}: exploding: global norm {charts.short(total)} > {charts.short(explode_norm)}")
        flags += [
            f"step {step}: vanishing: |grad {n}| = {charts.short(v)} < {charts.short(vanish_norm)}"
            for n, v in norms.items()
            if math.isfinite(v) and v < vanish_norm
        ]
        return flags

    def _add_flags(self, flags: Sequence[str]) -> None:
        if flags and self.first_flag is None:
            self.first_flag = flags[0]
        self.flag_count += len(flags)
        self.flags.extend(flags)

    def num_points(self) -> int:
        """How many points all series hold together."""
        series = [self.loss, self.global_norm, self.tensors, *self.norms.values(), *self.ratios.values()]
        return sum(len(s) for s in series)

    def snapshot(self) -> Snapshot:
        """A copy of everything recorded, safe to draw after the lock is released."""
        return Snapshot(
            loss=self.loss.points(),
            norms={k: s.points() for k, s in self.norms.items()},
            global_norm=self.global_norm.points(),
            ratios={k: s.points() for k, s in self.ratios.items()},
            tensors=self.tensors.points(),
            tensors_before=self.tensors_before,
            latest=dict(self.latest),
            latest_step=self.latest_step,
            marks=list(self.marks),
            flags=list(self.flags),
            flag_count=self.flag_count,
            first_flag=self.first_flag,
            colors=dict(self.colors),
            steps_logged=self.steps_logged,
            last_step=self.last_step,
            last_loss=self.last_loss,
            backward=list(self.backward),
            backward_total=self.backward_total,
            backward_step=self.backward_step,
        )
