"""Workload 8: what ``detect_anomaly`` costs, on and off.

Two rows, both on the scalar chain (``chain.py``: the workload with the most
op calls per second, so the worst case):

* **on vs off** (information): the chain inside ``with mt.detect_anomaly():``
  against the same chain without it, alternately in one run. Anomaly mode
  checks every output of both passes for NaN and Inf, so it is expected to
  cost something; the row says how much.
* **flag tests per op when off** (target: none). The engine should not pay
  for a debugging mode nobody turned on: anomaly mode is meant to be one
  more observer of the recorded ops, so with it off, no line of the op path
  asks whether it is on. This is checked by running the chain under
  ``sys.settrace`` and counting executed lines of ``microtape/`` that test a
  name or attribute called ``*anomaly*`` (as an ``if``/``while``/``assert``
  condition, a ternary's condition, an ``and``/``or`` term or under
  ``not``; found with ``ast``). Two chains, of ``N`` and ``2N`` ops, are traced; the
  difference divided by ``N`` is the count per op, so a test made once per
  ``gradient()`` call does not count.

Only public names are used (``mt.detect_anomaly``, ``mt.__file__``), so the
workload runs on any version of the engine. (It used to compare the engine
with a copy recompiled without its ``if st.anomaly:`` statements; with anomaly
mode as an observer there is nothing left to strip, and the flag-test count
says the same thing without depending on how the engine spells the flag.)

Run: ``python bench/anomaly.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import chain
import microtape as mt
from _timing import Config, Row, compare, fmt_time

TRACE_OPS = 100
"""Ops in the shorter traced chain (the longer has twice as many); a multiple of the chain's pattern."""


def _is_flag(node: ast.expr) -> bool:
    """A plain read of a name or attribute whose name mentions ``anomaly``: ``st.anomaly``, ``anomaly``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _is_flag(node.operand)
    if isinstance(node, ast.BoolOp):
        return any(_is_flag(v) for v in node.values)
    return (isinstance(node, ast.Attribute) and "anomaly" in node.attr.lower()) or (
        isinstance(node, ast.Name) and "anomaly" in node.id.lower()
    )


def flag_test_lines(source: str) -> set[int]:
    """Line numbers of ``source`` where a condition or an ``and``/``or`` term reads an ``*anomaly*`` flag."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        tests: list[ast.expr] = []
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            tests = [node.test]
        elif isinstance(node, ast.comprehension):
            tests = list(node.ifs)
        elif isinstance(node, ast.BoolOp):
            tests = list(node.values)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            tests = [node.operand]
        lines.update(t.lineno for t in tests if _is_flag(t))
    return lines


def package_flag_lines(root: Path) -> dict[str, set[int]]:
    """file name -> its flag-test lines, for every ``.py`` file under ``root`` that has any."""
    found: dict[str, set[int]] = {}
    for path in sorted(root.rglob("*.py")):
        lines = flag_test_lines(path.read_text(encoding="utf-8"))
        if lines:
            found[str(path)] = lines
    return found


def count_flag_tests(fn: Callable[[], object], flag_lines: dict[str, set[int]]) -> dict[tuple[str, int], int]:
    """Run ``fn`` under ``sys.settrace``; (file, line) -> times a flag-test line ran."""
    hits: dict[tuple[str, int], int] = {}

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            lines = flag_lines[frame.f_code.co_filename]
            if frame.f_lineno in lines:
                key = (frame.f_code.co_filename, frame.f_lineno)
                hits[key] = hits.get(key, 0) + 1
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename in flag_lines else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        fn()
    finally:
        sys.settrace(previous)
    return hits


def flag_tests_per_op(n: int = TRACE_OPS) -> tuple[float, dict[tuple[str, int], int]]:
    """Flag tests per chain op with anomaly mode off (difference of chains of ``n`` and ``2n`` ops), and the lines of the longer."""
    flag_lines = package_flag_lines(Path(mt.__file__).resolve().parent)
    short, long = chain.program(n), chain.program(2 * n)
    chain.tape_chain(short)  # warm up: first-call work is not per op
    a = count_flag_tests(lambda: chain.tape_chain(short), flag_lines)
    b = count_flag_tests(lambda: chain.tape_chain(long), flag_lines)
    return (sum(b.values()) - sum(a.values())) / n, b


def run(cfg: Config) -> list[Row]:
    n = 500 if cfg.quick else 20_000
    prog = chain.program(n)
    chain.check_same(prog)

    def off() -> object:
        return chain.tape_chain(prog)

    def on() -> object:
        with mt.detect_anomaly():
            return chain.tape_chain(prog)

    with mt.detect_anomaly():
        chain.check_same(prog)  # anomaly mode watches, it does not change a value
    t = compare(on, off, cfg)
    per_op, lines = flag_tests_per_op()
    where = ", ".join(f"{Path(f).name}:{line} x{k}" for (f, line), k in sorted(lines.items())) or "none"
    print(f"  anomaly: flag-test lines run by a chain of {2 * TRACE_OPS} ops: {where}", file=sys.stderr)
    return [
        Row(
            f"detect_anomaly on vs off (chain of {n:,})",
            f"{fmt_time(t.a)} on",
            f"{fmt_time(t.b)} off",
            t.ratio,
            "(info)",
            None,
        ),
        Row(
            "  anomaly-flag tests per op, detect_anomaly off",
            f"{per_op:.1f} per op",
            "-",
            None,
            "0 (an observer)",
            per_op == 0,
        ),
    ]


if __name__ == "__main__":
    import os
    import runpy

    # run.py does the printing; it is run as a program, so the benchmarks never import it
    sys.argv = [sys.argv[0], "--only", "anomaly", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
