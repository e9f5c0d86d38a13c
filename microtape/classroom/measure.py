"""What the student's process measures around one call of the student's code: memory, leaks, ops, calls.

``grade_child.py`` measures there; ``check_tools.py`` measures the same way when a
check runs against a module in this process (the test suite does). A check asks for
it with ``observe()`` (see ``microtape.classroom.check_tools``): the grader never
counts its own tensors as the student's.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..autodiff.gradient_tape import GradientTape
from ..debug.leaks import leak_check
from ..debug.profiling import profile
from ..engine import arena
from ..engine.arena import TensorBase
from ..engine.memory import memory
from ..engine.tensor import Tensor
from ..engine.variable import Variable
from ..book.notebooks import place

__all__ = ["KINDS", "Measured", "measured_call"]

KINDS = ("leaks", "ops", "calls", "peak")
"""What a call can be measured for besides the tensors, bytes and variables it leaves (always measured)."""


@dataclass
class Measured:
    """What calls of the student's code did, added up over the calls.

    ``tensors``, ``bytes`` and ``variables``: how many more are alive after
    the calls than before (what they returned included); ``peak``: the most
    bytes alive at once during a call beyond what was alive before it (the
    largest over the calls); ``leaks``: what the calls left alive, by op and
    line (``"2 x mul (ex.py:12)"``; those kept with ``mt.keep`` too, said so); ``ops``: the names of the ops a tape
    watching the calls' tensor arguments recorded; ``calls``: how many times
    each of the file's own functions ran (called by the code, not by the check).

    Examples:
        >>> from microtape.classroom.measure import Measured
        >>> seen = Measured()
        >>> seen.add({"tensors": 2, "ops": ["mul"], "calls": {"f": 1}})
        >>> seen.add({"tensors": 1, "calls": {"f": 2}})
        >>> seen.tensors, seen.ops, seen.calls
        (3, ['mul'], {'f': 3})
    """

    tensors: int = 0
    bytes: int = 0
    variables: int = 0
    peak: int = 0
    leaks: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)
    count: int = 0

    def add(self, data: object) -> None:
        """Add one call's measurements (as ``measured_call`` returns them, or as they came over the wire)."""
        if not isinstance(data, dict):
            return
        self.count += 1
        for name in ("tensors", "bytes", "variables"):
            value = data.get(name)
            if type(value) is int:
                setattr(self, name, getattr(self, name) + value)
        peak = data.get("peak")
        if type(peak) is int:
            self.peak = max(self.peak, peak)
        for name in ("leaks", "ops"):
            value = data.get(name)
            if isinstance(value, list):
                getattr(self, name).extend(str(v) for v in value)
        calls = data.get("calls")
        if isinstance(calls, dict):
            for key, n in calls.items():
                if type(n) is int:
                    self.calls[str(key)] = self.calls.get(str(key), 0) + n


def _leak_text(op: str, where: str, count: int) -> str:
    file, _, line = where.rpartition(":")
    return f"{count} x {op} ({place(file, line) if file else where})"


class _Made:
    """Every tensor made while it watches (``leak_check`` reports those not kept; this finds the kept ones too)."""

    def __init__(self) -> None:
        self.tensors: list[TensorBase] = []

    def on_create(self, tensor: TensorBase) -> None:
        self.tensors.append(tensor)

    def on_free(self, tensor: TensorBase) -> None:
        pass

    def on_op(self, op: object, inputs: tuple[object, ...], params: dict[str, object], out: object, seconds: float) -> None:
        pass

    def on_vjp(self, op: object, inputs: tuple[object, ...], out: object, dxs: tuple[object, ...]) -> None:
        pass


@contextmanager
def _counting(module: types.ModuleType | None, calls: dict[str, int]) -> Iterator[None]:
    """Count the calls of the module's own functions while the block runs (the module's names point at counters)."""
    if module is None:
        yield
        return
    mine = {
        name: f for name, f in vars(module).items()
        if isinstance(f, types.FunctionType) and getattr(f, "__module__", None) == module.__name__
    }

    def counter(name: str, f: Callable[..., object]) -> Callable[..., object]:
        @functools.wraps(f)
        def counted(*args: object, **kwargs: object) -> object:
            calls[name] = calls.get(name, 0) + 1
            return f(*args, **kwargs)

        return counted

    for name, f in mine.items():
        setattr(module, name, counter(name, f))
    try:
        yield
    finally:
        for name, f in mine.items():
            if isinstance(getattr(module, name, None), types.FunctionType):
                setattr(module, name, f)


def measured_call(
    f: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object], what: Collection[str], module: types.ModuleType | None = None
) -> tuple[object, dict[str, object]]:
    """Call ``f(*args, **kwargs)`` and measure it: ``(result, measurements)`` (see ``Measured``).

    ``what`` names the extra measurements (``"leaks"``, ``"ops"``, ``"calls"``, ``"peak"``);
    ``module`` is the student's module, whose functions ``"calls"`` counts.

    Examples:
        >>> import microtape as mt
        >>> from microtape.classroom.measure import measured_call
        >>> keep = []
        >>> result, seen = measured_call(lambda x: keep.append(x * 2.0), (mt.tensor([1.0]),), {}, ["ops", "leaks"])
        >>> seen["tensors"], seen["ops"], seen["leaks"][0].startswith("1 x mul")
        (1, ['mul'], True)
    """
    calls: dict[str, int] = {}
    found: dict[str, object] = {}
    before = memory()

    def run() -> object:
        with _counting(module if "calls" in what else None, calls):
            if "ops" not in what:
                return f(*args, **kwargs)
            tape = GradientTape(persistent=True)
            try:
                with tape:
                    tape.watch([a for a in args if isinstance(a, Tensor)])
                    result = f(*args, **kwargs)
                return result
            finally:
                found["ops"] = [op.name for op in tape.operations]
                tape.release()

    def with_peak() -> object:
        if "peak" not in what:
            return run()
        info = profile(run)
        found["peak"] = int(info.peak_bytes - before.num_bytes)
        return info.result

    if "leaks" in what:
        made = _Made()
        with leak_check(on_leak="ignore") as report:
            with arena.observing(made):
                result = with_peak()
            kept: dict[tuple[str, str], int] = {}  # what leak_check leaves out: tensors kept with mt.keep, and still alive
            for t in made.tensors:
                if t._data is not None and t._kept and not isinstance(t, Variable):
                    key = (t._op, arena.origin_of(t) or "?")
                    kept[key] = kept.get(key, 0) + 1
        groups = [_leak_text(g.op, g.where, g.count) for g in report.groups]
        found["leaks"] = groups + [_leak_text(op, where, n)[:-1] + ", kept with mt.keep)" for (op, where), n in kept.items()]
    else:
        result = with_peak()
    after = memory()
    found.update(tensors=after.num_tensors - before.num_tensors, bytes=after.num_bytes - before.num_bytes,
                 variables=after.num_variables - before.num_variables)
    if "calls" in what:
        found["calls"] = calls
    return result, found
