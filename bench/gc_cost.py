"""Workload 7: the cyclic garbage collector on vs off for the MLP step.

microtape promises no reference cycles in its graph (DESIGN.md), so the
collector should find nothing and cost little. We time the same MLP step
(``mlp.py``) with the collector enabled and with ``gc.disable()``,
alternately, and report on / off. A second row counts what ``gc.collect()``
finds after 20 steps run with the collector off: objects that only the
cyclic collector could free (0 means no cycles).

Run: ``python bench/gc_cost.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

import mlp
from _timing import Config, Row, compare, fmt_time


def _with_gc(fn: Callable[[], object], enabled: bool) -> Callable[[], object]:
    def timed() -> object:
        was = gc.isenabled()
        if enabled:
            gc.enable()
        else:
            gc.disable()
        try:
            return fn()
        finally:
            if was:
                gc.enable()

    return timed


def cyclic_garbage(fn: Callable[[], object], steps: int) -> int:
    """Objects freed by gc.collect() after ``steps`` calls with the collector off."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(steps):
            fn()
        return gc.collect()
    finally:
        if was:
            gc.enable()


def run(cfg: Config) -> list[Row]:
    tape_step, list_step, cleanup = mlp.setup(cfg.quick)
    try:
        # batch several steps per timed block so collections (every ~700 allocations) happen inside it
        t = compare(_with_gc(tape_step, True), _with_gc(tape_step, False), cfg)
        found_tape = cyclic_garbage(tape_step, 20)
        found_list = cyclic_garbage(list_step, 20)
    finally:
        cleanup()
    return [
        Row(
            "MLP step, gc on vs gc.disable()",
            f"{fmt_time(t.a)} on",
            f"{fmt_time(t.b)} off",
            t.ratio,
            "<= 1.1x",
            t.ratio <= 1.1,
            1.1,
        ),
        Row(
            "MLP step, objects in cycles (gc.collect after 20 steps)",
            f"{found_tape} objects",
            f"{found_list} (plain lists)",
            None,
            "0 (no cycles)",
            found_tape == 0,
        ),
    ]


if __name__ == "__main__":
    import os
    import runpy
    import sys

    # run.py does the printing; it is run as a program, so the benchmarks never import it
    sys.argv = [sys.argv[0], "--only", "gc", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
