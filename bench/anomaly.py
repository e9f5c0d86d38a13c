"""Workload 8: what ``detect_anomaly`` costs when it is off.

There is no microtape build without anomaly support, so we make one in
memory: every function of ``_registry``, ``tape`` and ``functional`` whose
source tests the flag (the op wrapper, the backward loop, ...) is parsed,
each ``if st.anomaly:`` statement is replaced by ``pass`` and each ``or
st.anomaly`` term dropped, and the result is compiled in the module's own
namespace and swapped in for the duration of the measurement. The chain of scalar ops (``chain.py``, the workload with the
most op calls per second, so the worst case) then runs alternately with the
real engine (anomaly off) and the stripped one; the ratio is real / stripped.

As a cross-check, ``timeit`` measures one flag test (``if st.anomaly:`` on a
``State``) and we divide by the measured cost per chain op, counting the
flag tests one op makes (its forward, the primitives its VJP runs, the
backward loop), counted with ``mt.profile``.

Run: ``python bench/anomaly.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import __future__

import ast
import sys
import inspect
import textwrap
import timeit
from collections.abc import Callable
from types import FunctionType, ModuleType

import chain
import microtape as mt
from _timing import Config, Row, compare, fmt_time
from microtape import _registry, _runtime, functional, tape


def _is_flag(node: ast.expr) -> bool:
    """``st.anomaly`` or ``anomaly``: a plain truth test of the flag."""
    return (isinstance(node, ast.Attribute) and node.attr == "anomaly") or (isinstance(node, ast.Name) and node.id == "anomaly")


def _mentions_anomaly(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and n.attr == "anomaly") or (isinstance(n, ast.Name) and n.id == "anomaly")
        for n in ast.walk(node)
    )


class _StripAnomaly(ast.NodeTransformer):
    """Remove ``if st.anomaly:`` statements and ``or <...anomaly...>`` terms (both no-ops when the flag is off)."""

    def __init__(self) -> None:
        self.removed = 0

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if _is_flag(node.test) and not node.orelse:
            self.removed += 1
            return ast.copy_location(ast.Pass(), node)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Or):
            return node
        kept = [v for v in node.values if not _mentions_anomaly(v)]
        if len(kept) == len(node.values) or not kept:
            return node
        self.removed += len(node.values) - len(kept)
        return kept[0] if len(kept) == 1 else ast.copy_location(ast.BoolOp(op=ast.Or(), values=kept), node)


def without_anomaly(fn: FunctionType) -> tuple[FunctionType, int]:
    """Recompile ``fn`` without its anomaly tests; (new function, how many removed)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    func.decorator_list = []
    stripper = _StripAnomaly()
    stripper.visit(func)
    ast.fix_missing_locations(tree)
    code = compile(
        tree,
        inspect.getsourcefile(fn) or "<stripped>",
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    namespace: dict[str, object] = {}
    exec(code, fn.__globals__, namespace)  # noqa: S102 - our own engine's source, recompiled
    new = namespace[fn.__name__]
    assert isinstance(new, FunctionType)
    new.__qualname__ = fn.__qualname__
    new.__defaults__ = fn.__defaults__
    new.__kwdefaults__ = fn.__kwdefaults__
    return new, stripper.removed


def _functions(module: ModuleType) -> list[tuple[object, str, FunctionType]]:
    """(owner, name, function) for the module's functions and its classes' methods."""
    found: list[tuple[object, str, FunctionType]] = []
    for name, value in vars(module).items():
        if isinstance(value, FunctionType) and value.__module__ == module.__name__:
            found.append((module, name, value))
        elif isinstance(value, type) and value.__module__ == module.__name__:
            found.extend((value, attr, meth) for attr, meth in vars(value).items() if isinstance(meth, FunctionType))
    return found


class StrippedEngine:
    """``with StrippedEngine():`` runs microtape as if it had no anomaly support.

    Every function of the hot modules whose source tests ``anomaly`` is
    recompiled once without those tests; entering and leaving only swap
    module and class attributes (callers look them up at call time).
    """

    MODULES = (_registry, tape, functional)

    def __init__(self) -> None:
        self.swaps: list[tuple[object, str, FunctionType, FunctionType]] = []
        self.removed = 0
        for module in self.MODULES:
            for owner, name, fn in _functions(module):
                if fn.__code__.co_freevars or hasattr(fn, "__wrapped__"):
                    continue  # closures and decorated functions: cannot recompile faithfully
                try:
                    if "anomaly" not in inspect.getsource(fn):
                        continue
                except (OSError, TypeError):
                    continue
                new, removed = without_anomaly(fn)
                if removed:
                    self.swaps.append((owner, name, fn, new))
                    self.removed += removed

    @property
    def names(self) -> list[str]:
        return [fn.__qualname__ for _, _, fn, _ in self.swaps]

    def __enter__(self) -> StrippedEngine:
        for owner, name, _, new in self.swaps:
            setattr(owner, name, new)  # swapped for the measurement only
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, old, _ in self.swaps:
            setattr(owner, name, old)


def flag_test_seconds() -> float:
    """Seconds for one ``if st.anomaly:`` (minus an empty loop), by timeit."""
    st = _runtime.State()
    number = 2_000_000
    with_flag = min(timeit.repeat("if st.anomaly:\n    pass", globals={"st": st}, number=number, repeat=5))
    empty = min(timeit.repeat("pass", number=number, repeat=5))
    return max(0.0, (with_flag - empty) / number)


def run(cfg: Config) -> list[Row]:
    n = 500 if cfg.quick else 20_000
    prog = chain.program(n)
    chain.check_same(prog)

    def real() -> object:
        return chain.tape_chain(prog)

    engine = StrippedEngine()
    removed = engine.removed
    assert removed >= 2, "found no anomaly test to strip: update bench/anomaly.py"
    print(f"  anomaly: stripped {removed} tests from {', '.join(engine.names)}", file=sys.stderr)

    def stripped() -> object:
        with engine:
            return chain.tape_chain(prog)

    with engine:
        chain.check_same(prog)  # the stripped engine computes the same thing
    # the effect is a few per cent, so: more, shorter repetitions, and an A/A control for the noise
    fine = Config(quick=cfg.quick, repeat=max(cfg.reps, 15), min_time=cfg.min_time / 2)
    t = compare(real, stripped, fine)
    control = compare(real, real, fine)
    # flag tests per chain op: one per primitive run (the chain's ops and the ops its VJPs call,
    # which mt.profile lists as kernels) plus one per record in the backward loop
    flag = flag_test_seconds()
    kernels = len(mt.profile(lambda: chain.tape_chain(prog)).kernels)
    tests_per_op = (kernels + n) / n
    predicted = 1.0 + tests_per_op * flag / (t.b / n)
    return [
        Row(
            f"detect_anomaly off vs stripped engine (chain of {n:,})",
            fmt_time(t.a),
            fmt_time(t.b) + f" ({removed} tests removed)",
            t.ratio,
            "<= 1.05x",
            t.ratio <= 1.05,
            1.05,
        ),
        Row(
            "  control: same engine against itself (noise)",
            fmt_time(control.a),
            fmt_time(control.b),
            control.ratio,
            "~1.00x",
            None,
        ),
        Row(
            "  cross-check: flag test by timeit / cost per op",
            f"{flag * 1e9:.1f} ns x {tests_per_op:.1f} per op",
            f"{t.b / n * 1e6:.2f} µs/op",
            predicted,
            "<= 1.05x",
            predicted <= 1.05,
            1.05,
        ),
    ]


if __name__ == "__main__":
    import os
    import runpy
    import sys

    # run.py does the printing; it is run as a program, so the benchmarks never import it
    sys.argv = [sys.argv[0], "--only", "anomaly", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
