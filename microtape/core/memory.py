"""The tidy arena: ``tidy``, ``keep``, ``dispose``, ``memory``, ``profile``, ``leak_check``.

Read after ``variable.py``: the last file of the core. As in TensorFlow.js, a tensor lives in the
arena until it is disposed: directly, or by the ``tidy`` scope it was made
in. ``memory()`` counts what is alive, so a loop without ``tidy`` shows the
count growing and the same loop inside ``tidy`` stays flat. Tapes hold what
their backward pass needs until ``gradient()`` is done (or the tape is
released), and ``memory()`` says how much that is.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar, cast, overload

from . import frames, runtime
from .registry import Op
from .runtime import LIVE, STATE, TensorBase
from .types import Shape
from ..errors import InvalidArgumentError, LeakError, TidyError, explain
from .tensor import BYTES_PER_ENTRY, Grads, Tensor
from .html import record_html
from .variable import VARIABLES, Variable

__all__ = [
    "KernelInfo",
    "LeakReport",
    "MemoryInfo",
    "ProfileInfo",
    "dispose",
    "keep",
    "leak_check",
    "memory",
    "profile",
    "tidy",
]

T = TypeVar("T")


@overload
def tidy(fn: Callable[..., T], /, *args: object) -> T: ...


@overload
def tidy(name: str, fn: Callable[..., T], /, *args: object) -> T: ...


def tidy(name_or_fn: str | Callable[..., T], /, *args: object) -> T:
    """Run a function and dispose every tensor it made, except what it returns.

    Like ``tf.tidy`` in TensorFlow.js. Tensors reachable from the result
    (also inside lists, tuples, dicts and dataclasses) survive and move to
    the enclosing scope; so do tensors passed to :func:`keep`. Variables are
    never disposed by ``tidy``. A name (``mt.tidy("step", fn)``) appears in
    error messages about tensors this scope disposed. If ``fn`` raises,
    everything it made is disposed and the error propagates.

    Args:
        name_or_fn: The function, or a name followed by the function.
        *args: Passed to the function.

    Raises:
        TidyError: the function returned a coroutine, generator or
            awaitable: its tensors would be made after the scope closed.

    Examples:
        >>> x = mt.tensor([1.0, 2.0])
        >>> before = mt.memory().num_tensors
        >>> y = mt.tidy(lambda: (x * x).sum())   # x*x is disposed, the sum survives
        >>> mt.memory().num_tensors - before
        1
        >>> mt.tidy("double", lambda t: t * 2.0, x)
        Tensor([2.0, 4.0], shape=(2,))
    """
    if isinstance(name_or_fn, str):
        if not args or not callable(args[0]):
            raise InvalidArgumentError(
                explain(
                    f"tidy({name_or_fn!r}, ...) needs a function after the name.",
                    "The forms are tidy(fn, *args) and tidy(name, fn, *args).",
                    f"write mt.tidy({name_or_fn!r}, lambda: ...).",
                ),
                value=args[0] if args else None,
            )
        name, fn, rest = name_or_fn, cast("Callable[..., T]", args[0]), args[1:]
    elif callable(name_or_fn):
        fn, rest = name_or_fn, args
        name = getattr(fn, "__name__", "tidy")
    else:
        raise InvalidArgumentError(
            explain(
                f"tidy() needs a function, got {type(name_or_fn).__name__}: {name_or_fn!r:.60}.",
                "tidy runs the function and cleans up after it.",
                "pass a function: mt.tidy(lambda: model(x)).",
            ),
            value=name_or_fn,
        )
    assert callable(fn)

    def run() -> object:
        result = fn(*rest)
        if inspect.iscoroutine(result) or inspect.isgenerator(result) or inspect.isasyncgen(result) or inspect.isawaitable(result):
            kind = type(result).__name__
            close = getattr(result, "close", None)
            if close is not None:
                close()  # so Python does not warn "coroutine was never awaited"
            raise TidyError(
                explain(
                    f"tidy({name!r}): the function returned a {kind}, which tidy cannot scope.",
                    "tidy disposes tensors when the function returns; an async function or "
                    "generator makes its tensors later, after the scope is gone "
                    "(a classic source of 'Tensor is disposed' errors in TF.js).",
                    "call tidy inside the async function around each synchronous step: "
                    "loss = mt.tidy(lambda: step()); await mt.next_frame().",
                ),
                kind=kind,
            )
        return result

    return runtime.run_in_scope(name, run)  # type: ignore[return-value]  # run returns fn's result


def keep(t: T) -> T:
    """Protect a tensor from every enclosing ``tidy`` scope (``tf.keep``); returns it.

    A kept tensor is freed only by ``dispose()``.

    Examples:
        >>> saved = []
        >>> def step():
        ...     saved.append(mt.keep(mt.ones((2,))))
        ...     return None
        >>> mt.tidy(step)
        >>> saved[0].is_disposed
        False
    """
    tensors = runtime.tensors_in(t)
    for tensor in tensors:
        if tensor._disposed is not None:  # also one a tape still holds: it cannot be revived
            raise runtime.disposed_error(tensor)
    for tensor in tensors:
        tensor._kept = True
    return t


def dispose(container: object) -> None:
    """Dispose a tensor, or every tensor in a list, tuple or dict (``tf.dispose``).

    Examples:
        >>> a, b = mt.ones((2,)), mt.zeros((3,))
        >>> mt.dispose({"a": a, "rest": [b]})
        >>> a.is_disposed, b.is_disposed
        (True, True)
    """
    for t in runtime.tensors_in(container):
        if isinstance(t, Tensor):  # every TensorBase is one; a Variable also frees its name
            t.dispose()


@dataclass(frozen=True, slots=True)
class MemoryInfo:
    """What :func:`memory` reports.

    ``num_tensors`` counts live tensors and variables; ``num_bytes`` is 8 per
    entry of each of them (a reshape counts again, though it shares data);
    ``num_tensors_held_by_tapes`` counts those kept alive for a backward pass,
    including disposed ones a tape still needs.

    Examples:
        >>> info = mt.memory()
        >>> info.num_tensors >= info.num_variables >= 0
        True
    """

    num_tensors: int
    num_bytes: int
    num_variables: int
    num_tensors_held_by_tapes: int
    num_bytes_held_by_tapes: int
    _repr_html_ = record_html  # Jupyter shows the fields as tables

    def __str__(self) -> str:
        return (
            f"{self.num_tensors} tensors ({self.num_bytes} bytes), {self.num_variables} variables, "
            f"{self.num_tensors_held_by_tapes} held by tapes"
        )


def memory() -> MemoryInfo:
    """Count the tensors alive now (``tf.memory``).

    As in TF.js, every op runs in its own scope: outside a tape it adds
    exactly its result (the tensor made from the 2.0 in ``x * 2.0``, or a
    composite's intermediates, are gone when it returns). What a tape keeps
    for its backward pass is counted in ``num_tensors`` and in
    ``num_tensors_held_by_tapes`` until the tape is done with it.

    Examples:
        >>> before = mt.memory()
        >>> x = mt.zeros((10,))
        >>> after = mt.memory()
        >>> after.num_tensors - before.num_tensors, after.num_bytes - before.num_bytes
        (1, 80)
        >>> y = mt.softmax(x * 2.0)      # two ops, two results: no 2.0, no intermediates
        >>> mt.memory().num_tensors - after.num_tensors
        2
    """
    tensors = list(LIVE.values())
    # valuerefs() copies the weak references in one step: iterating the
    # WeakValueDictionary itself fails if another thread makes a variable meanwhile.
    variables = [v for v in (ref() for ref in VARIABLES.valuerefs()) if v is not None and v._data is not None]
    held = [t for t in tensors if t._holds > 0]
    return MemoryInfo(
        num_tensors=len(tensors) + len(variables),
        num_bytes=BYTES_PER_ENTRY * (sum(t.size for t in tensors) + sum(v.size for v in variables)),
        num_variables=len(variables),
        num_tensors_held_by_tapes=len(held),
        num_bytes_held_by_tapes=BYTES_PER_ENTRY * sum(t.size for t in held),
    )


# -- profile ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KernelInfo:
    """One op run inside :func:`profile`."""

    name: str
    input_shapes: tuple[Shape, ...]
    output_shapes: tuple[Shape, ...]
    bytes_added: int
    tensors_added: int
    total_bytes: int
    total_tensors: int
    time_ms: float


@dataclass(frozen=True, slots=True)
class ProfileInfo:
    """What :func:`profile` reports (TF.js ``tf.profile`` fields, in snake_case).

    Examples:
        >>> info = mt.profile(lambda: mt.tidy(lambda: mt.ones((4,)).sum()))
        >>> info.kernel_names, info.new_tensors, info.kernels[0].output_shapes
        (['sum'], 1, ((),))
    """

    new_tensors: int
    new_bytes: int
    peak_bytes: int
    kernels: list[KernelInfo]
    result: object
    _repr_html_ = record_html  # Jupyter shows the fields as tables

    @property
    def kernel_names(self) -> list[str]:
        """Names of the ops that ran, in order."""
        return [k.name for k in self.kernels]

    def __str__(self) -> str:
        lines = [
            f"new_tensors={self.new_tensors} new_bytes={self.new_bytes} peak_bytes={self.peak_bytes}",
            f"{'kernel':<14} {'inputs':<24} {'output':<10} {'+bytes':>7} {'total':>7} {'ms':>8}",
        ]
        for k in self.kernels:
            ins = ", ".join(str(s) for s in k.input_shapes)
            outs = ", ".join(str(s) for s in k.output_shapes)
            lines.append(
                f"{k.name:<14} {ins:<24} {outs:<10} {k.bytes_added:>7} {k.total_bytes:>7} {k.time_ms:>8.3f}"
            )
        return "\n".join(lines)


class _Profiler:
    def __init__(self) -> None:
        info = memory()
        self.tensors = info.num_tensors
        self.bytes = info.num_bytes
        self.start_tensors, self.start_bytes = self.tensors, self.bytes
        self.peak = self.bytes
        self.kernels: list[KernelInfo] = []
        self.mark_tensors, self.mark_bytes = self.tensors, self.bytes

    def on_vjp(self, op: Op, inputs: tuple[Tensor, ...], out: Tensor, dxs: Grads) -> None:
        pass  # a VJP's own ops were reported one by one

    def on_create(self, tensor: TensorBase) -> None:
        self.tensors += 1
        self.bytes += BYTES_PER_ENTRY * tensor.size
        self.peak = max(self.peak, self.bytes)

    def on_free(self, tensor: TensorBase) -> None:
        self.tensors -= 1
        self.bytes -= BYTES_PER_ENTRY * tensor.size

    def on_op(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor, seconds: float) -> None:
        self.kernels.append(
            KernelInfo(
                name=op.name,
                input_shapes=tuple(x.shape for x in inputs),
                output_shapes=(out.shape,),
                bytes_added=self.bytes - self.mark_bytes,
                tensors_added=self.tensors - self.mark_tensors,
                total_bytes=self.bytes,
                total_tensors=self.tensors,
                time_ms=seconds * 1000.0,
            )
        )
        self.mark_tensors, self.mark_bytes = self.tensors, self.bytes


def profile(fn: Callable[[], object]) -> ProfileInfo:
    """Run ``fn`` and report tensors, bytes and every op it ran (``tf.profile``).

    Examples:
        >>> x = mt.tensor([1.0, 2.0, 3.0])
        >>> info = mt.profile(lambda: mt.tidy(lambda: (x * x).sum()))
        >>> info.new_tensors, info.new_bytes, info.kernel_names
        (1, 8, ['mul', 'sum'])
        >>> info.peak_bytes - mt.memory().num_bytes + info.new_bytes >= 24
        True
    """
    if not callable(fn):
        raise InvalidArgumentError(
            explain(
                f"profile() needs a function, got {type(fn).__name__}.",
                "profile runs the function and watches what it allocates.",
                "write mt.profile(lambda: model(x)).",
            ),
            value=fn,
        )
    prof = _Profiler()
    with runtime.observing(prof):
        result = fn()
    return ProfileInfo(
        new_tensors=prof.tensors - prof.start_tensors,
        new_bytes=prof.bytes - prof.start_bytes,
        peak_bytes=prof.peak,
        kernels=prof.kernels,
        result=result,
    )


# -- leak_check ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LeakGroup:
    """Leaked tensors made by one op at one source line.

    ``held`` marks tensors that were disposed but that a ``GradientTape``
    still holds for its backward pass (a persistent tape not yet released,
    or a tape whose ``gradient()`` was never called): their memory is not
    free either.
    """

    op: str
    where: str
    count: int
    num_bytes: int
    shapes: tuple[Shape, ...]
    held: bool = False


@dataclass
class LeakReport:
    """What :func:`leak_check` found; filled in when the block ends."""

    groups: list[LeakGroup] = field(default_factory=list)
    _repr_html_ = record_html  # Jupyter shows the fields as tables

    @property
    def count(self) -> int:
        """Number of leaked tensors."""
        return sum(g.count for g in self.groups)

    @property
    def num_bytes(self) -> int:
        """Bytes held by leaked tensors."""
        return sum(g.num_bytes for g in self.groups)

    def __bool__(self) -> bool:
        return bool(self.groups)

    def __str__(self) -> str:
        if not self.groups:
            return "leak_check: no leaks"
        lines = [f"leak_check: {self.count} tensor(s), {self.num_bytes} bytes still alive:"]
        for g in self.groups:
            shapes = ", ".join(str(s) for s in g.shapes[:3]) + (", ..." if len(g.shapes) > 3 else "")
            held = "  (disposed, but a tape holds it)" if g.held else ""
            lines.append(f"  {g.count:>4} x {g.op:<12} at {g.where}  shapes {shapes}{held}")
        lines.append("  hint: wrap the work in mt.tidy(...), or dispose() what you no longer need.")
        if any(g.held for g in self.groups):
            lines.append(
                "  hint: a tape holds what its backward pass needs until gradient() (non-persistent) "
                "or tape.release() (persistent)."
            )
        return "\n".join(lines)


class _LeakTracker:
    """Records the user's line that made each tensor: for the leak report, and for
    a ``DisposedTensorError`` raised inside the block (``origin``)."""

    KEEP_FREED = 4096  # lines of the most recently freed tensors, for their disposal errors

    def __init__(self) -> None:
        self.made: dict[int, tuple[TensorBase, str]] = {}
        self.freed: dict[int, str] = {}

    def on_create(self, tensor: TensorBase) -> None:
        self.made[tensor.id] = (tensor, frames.user_frame_line())

    def on_free(self, tensor: TensorBase) -> None:
        found = self.made.pop(tensor.id, None)
        if found is not None:
            self.freed[tensor.id] = found[1]
            if len(self.freed) > self.KEEP_FREED:
                del self.freed[next(iter(self.freed))]

    def origin(self, tensor: TensorBase) -> str | None:
        found = self.made.get(tensor.id)
        return found[1] if found is not None else self.freed.get(tensor.id)

    def on_op(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor, seconds: float) -> None:
        pass

    def on_vjp(self, op: Op, inputs: tuple[Tensor, ...], out: Tensor, dxs: Grads) -> None:
        pass


@contextmanager
def leak_check(on_leak: str = "print") -> Iterator[LeakReport]:
    """Report tensors made inside the block that are still alive at its end.

    Leaks are grouped by the op and the line of your code that made them.
    ``on_leak`` is ``"print"`` (to stdout), ``"warn"``, ``"raise"``
    (:class:`~microtape.LeakError`) or ``"ignore"``; the report is also the
    ``as`` target. Anything you still hold counts, so check a block that
    should leave nothing behind, such as a training step. A tensor that was
    disposed but that a ``GradientTape`` still holds for its backward pass
    (a persistent tape not yet released) counts too, marked as held by a
    tape: its memory is not free either.

    Examples:
        >>> x = mt.tensor([1.0, 2.0])
        >>> with mt.leak_check(on_leak="ignore") as report:
        ...     for _ in range(3):
        ...         y = x * x            # never disposed: 3 tensors leak
        >>> report.count, report.groups[0].op
        (3, 'mul')
        >>> with mt.leak_check() as report:
        ...     mt.tidy(lambda: x * 2.0).dispose()
        >>> report.count
        0
    """
    if on_leak not in ("print", "warn", "raise", "ignore"):
        raise InvalidArgumentError(
            explain(
                f"leak_check(on_leak={on_leak!r}) is not an option.",
                'on_leak is "print", "warn", "raise" or "ignore".',
                'write mt.leak_check(on_leak="raise") in a test.',
            ),
            value=on_leak,
        )
    tracker = _LeakTracker()
    report = LeakReport()
    with runtime.observing(tracker):
        yield report
    groups: dict[tuple[str, str, bool], list[TensorBase]] = {}
    for t, where in tracker.made.values():
        # alive, or disposed but still held by a tape (its data is not freed either)
        if t._data is not None and not t._kept and not isinstance(t, Variable):
            groups.setdefault((t._op, where, t._disposed is not None), []).append(t)
    report.groups.extend(
        LeakGroup(op, where, len(ts), BYTES_PER_ENTRY * sum(t.size for t in ts), tuple(t.shape for t in ts), held)
        for (op, where, held), ts in sorted(groups.items(), key=lambda kv: -len(kv[1]))
    )
    if not report:
        return
    if on_leak == "print":
        print(report, file=sys.stdout)
    elif on_leak == "warn":
        warnings.warn(str(report), ResourceWarning, stacklevel=3)
    elif on_leak == "raise":
        raise LeakError(str(report), count=report.count, groups=report.groups)

