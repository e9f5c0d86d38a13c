"""Shared helpers: interleaved timing, medians, memory peaks, the results table.

Every workload compares microtape with a plain-Python baseline computed in
the same process run, because these machines are noisy: absolute times drift
from run to run, ratios measured side by side much less. ``compare`` runs the
two alternately (A B, then B A, ...) so that slow phases of the machine hit
both, and reports the median per-call time of each and the median of the
per-repetition ratios.
"""

from __future__ import annotations

import datetime
import gc
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass

CLOCK = time.process_time
"""CPU seconds of this process: on a shared machine, time stolen by other
processes does not count (wall time, ``time.perf_counter``, would)."""

__all__ = [
    "Config",
    "Row",
    "Timing",
    "compare",
    "fmt_bytes",
    "fmt_ratio",
    "fmt_time",
    "machine",
    "peak_bytes",
    "print_table",
    "ratio_row",
    "time_once",
]


@dataclass(frozen=True)
class Config:
    """How hard to measure: ``quick`` shrinks every size and runs once."""

    quick: bool = False
    repeat: int = 5
    min_time: float = 0.2
    """Seconds each timed block of the faster side should last (calls are batched)."""

    @property
    def reps(self) -> int:
        return 1 if self.quick else max(1, self.repeat)


@dataclass(frozen=True)
class Row:
    """One line of the results table."""

    workload: str
    microtape: str
    baseline: str
    ratio: float | None
    target: str
    met: bool | None
    limit: float | None = None
    """The ratio the target allows, if the target is a ratio (for the notes)."""


@dataclass(frozen=True)
class Timing:
    """Median seconds per call of each side and the median of the paired ratios."""

    a: float
    b: float
    ratio: float
    a_runs: tuple[float, ...]
    b_runs: tuple[float, ...]


def time_once(fn: Callable[[], object], number: int = 1) -> float:
    """Seconds per call of ``fn`` over ``number`` calls (after a fresh gc.collect)."""
    gc.collect()
    start = CLOCK()
    for _ in range(number):
        fn()
    return (CLOCK() - start) / number


def _calls_for(fn: Callable[[], object], min_time: float) -> int:
    """How many calls make a block of at least ``min_time`` seconds."""
    one = time_once(fn)
    return max(1, int(min_time / one) + 1) if one < min_time else 1


def compare(
    a: Callable[[], object],
    b: Callable[[], object],
    cfg: Config,
    *,
    reps: int | None = None,
    number: int | None = None,
) -> Timing:
    """Time ``a`` and ``b`` alternately; ``ratio`` is the median of a/b per repetition.

    Both are called once first (warm-up, and to size the batches: each timed
    block of the faster one lasts at least ``cfg.min_time``). Odd repetitions
    run b first, so a trend in the machine's speed does not favour either.
    """
    n_reps = cfg.reps if reps is None else reps
    if number is None:
        a()
        number = 1 if cfg.quick else _calls_for(b, cfg.min_time)
    a_runs: list[float] = []
    b_runs: list[float] = []
    for r in range(n_reps):
        if r % 2 == 0:
            a_runs.append(time_once(a, number))
            b_runs.append(time_once(b, number))
        else:
            b_runs.append(time_once(b, number))
            a_runs.append(time_once(a, number))
    ratios = [x / y for x, y in zip(a_runs, b_runs)]
    return Timing(
        statistics.median(a_runs),
        statistics.median(b_runs),
        statistics.median(ratios),
        tuple(a_runs),
        tuple(b_runs),
    )


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes allocated by Python while ``fn`` runs, above what was live before (tracemalloc).

    tracemalloc counts every block obtained through Python's allocators, so
    for pure-Python code it is exact and repeatable; it excludes the
    interpreter's fixed cost and allocator fragmentation, which RSS would mix in.
    """
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before


# -- formatting ------------------------------------------------------------


def fmt_time(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def fmt_bytes(n: float) -> str:
    if abs(n) >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    if abs(n) >= 1 << 10:
        return f"{n / (1 << 10):.1f} KiB"
    return f"{n:.0f} B"


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}x"


def ratio_row(workload: str, t: Timing, limit: float, per: str = "") -> Row:
    """A row for a timed comparison whose target is ``ratio <= limit``."""
    suffix = f" {per}" if per else ""
    return Row(
        workload,
        fmt_time(t.a) + suffix,
        fmt_time(t.b) + suffix,
        t.ratio,
        f"<= {limit:g}x",
        t.ratio <= limit,
        limit,
    )


def machine() -> list[str]:
    """Date, Python and machine, for the table's header."""
    cpus = os.cpu_count()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        usable = cpus or 0
    return [
        f"date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"python: {platform.python_implementation()} {platform.python_version()} ({sys.executable})",
        f"machine: {platform.platform()}, {platform.machine()}, "
        f"{cpus} CPUs ({usable} usable), processor {platform.processor() or 'unknown'}",
    ]


HEADER = ("workload", "microtape", "baseline", "ratio", "target", "met?")


def print_table(rows: Sequence[Row], quick: bool = False) -> None:
    """Print the rows as a Markdown table (pasteable into the README)."""
    cells = [HEADER] + [
        (
            r.workload,
            r.microtape,
            r.baseline,
            fmt_ratio(r.ratio),
            r.target,
            "-" if r.met is None or quick else ("yes" if r.met else "NO"),
        )
        for r in rows
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]

    def line(cols: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |"

    print(line(cells[0]))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for c in cells[1:]:
        print(line(c))
