"""The helpers a check file calls: the student's functions, exact types, comparisons, wording, seeding, measuring.

A check reaches the student's code through ``fn`` and ``tensor_fn``, accepts
what comes back only by exact type (``tensor_of``, ``number``, ``integer``),
compares it with ``close`` and ``expect_values``, and says how far off it is
with ``off_by`` (never the expected value). ``observe`` measures what the
student's calls do (tensors left alive, leaks, the ops a tape recorded, calls
of the file's own functions) where they run; ``child_fn`` makes a function the
check hands to the student's code; ``digest`` keeps an accepted answer as a
hash, so that no answer is written in a check file. ``depends_on``,
``replaced``, ``ignores_dy``, ``leaks`` and ``gradcheck_failure`` tell a
student where a failure comes from; ``rng`` is the check's random source,
seeded by the grader through ``seed_checks``. Check files import them all
from :mod:`microtape.exercise`.

During grading the module a check receives stands for the student's file (a
``microtape.classroom.proxy.Submission``): its functions run in the student's
process, and the check, its references and its verdict run in the grader's.
The same check runs unchanged against a module loaded in this process (the
test suite does), where these helpers measure in this process instead.
"""

from __future__ import annotations

import hashlib
import math
import random
import types
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from ..checking.gradcheck import GradCheckReport
from ..checking.numerical import Culprit
from ..autodiff.gradient_tape import GradientTape
from ..debug.leaks import leak_check
from ..engine.formatting import format_number
from ..engine.tensor import Tensor
from ..ops.creation import fill
from ..engine.variable import Variable
from .definition import Fail
from .measure import KINDS, Measured, measured_call
from .proxy import OBSERVERS, ChildCode, RemoteObject, Submission, session_of
from ..book.notebooks import place

__all__ = [
    "child_fn",
    "close",
    "depends_on",
    "derivative",
    "digest",
    "expect_values",
    "fmt",
    "fn",
    "gradcheck_failure",
    "ignores_dy",
    "integer",
    "leaks",
    "number",
    "observe",
    "off_by",
    "op_name",
    "replaced",
    "rng",
    "seed_checks",
    "short_where",
    "tensor_fn",
    "tensor_of",
]

_SEED: list[random.Random] = [random.Random("0/")]


def seed_checks(seed: int, check: str = "") -> None:
    """Make ``rng()`` draw from ``random.Random(f"{seed}/{check}")`` (the grader calls it before each check).

    Each check gets a fresh generator, so its inputs depend on the seed and
    its own name only, not on the checks before it.

    Examples:
        >>> from microtape.exercise import rng, seed_checks
        >>> seed_checks(7, "a check")
        >>> first = rng().random()
        >>> seed_checks(7, "a check")
        >>> rng().random() == first
        True
    """
    _SEED[0] = random.Random(f"{seed}/{check}")


def rng() -> random.Random:
    """The random source of a check's inputs; unseeded (a check run outside the grader), seed 0.

    Examples:
        >>> from microtape.exercise import rng, seed_checks
        >>> seed_checks(0)
        >>> -1.0 <= rng().uniform(-1.0, 1.0) <= 1.0
        True
    """
    return _SEED[0]


def fn(module: object, name: str) -> Callable[..., object]:
    """The student's function ``name``, or ``Fail`` when it is missing.

    Inside ``observe()`` each call of it is measured (see :func:`observe`).

    Examples:
        >>> import types
        >>> from microtape.exercise import Fail, fn
        >>> m = types.ModuleType("student")
        >>> try:
        ...     fn(m, "train")
        ... except Fail as fail:
        ...     print(fail)
        the file defines no train(); the grader calls it by that name.
    """
    value = getattr(module, name, None)
    if value is None:
        raise Fail(f"the file defines no {name}(); the grader calls it by that name.")
    if not callable(value):
        raise Fail(f"{name} is a {type(value).__name__}, but the grader calls it as a function.")
    found: Callable[..., object] = value  # a student's callable: the checks validate what it returns
    if isinstance(module, (Submission, RemoteObject)):
        return found  # it runs in the student's process, which measures it there
    home = module if isinstance(module, types.ModuleType) else None

    def call(*args: object, **kwargs: object) -> object:
        observers = OBSERVERS.get()
        if not observers:
            return found(*args, **kwargs)
        kinds = frozenset().union(*(k for _, k in observers))
        result, measured = measured_call(found, args, kwargs, kinds, home)
        for seen, _ in observers:
            seen.add(measured)
        return result

    call.__name__ = name
    return call


@contextmanager
def observe(*, leaks: bool = False, ops: bool = False, calls: bool = False, peak: bool = False) -> Iterator[Measured]:
    """Measure the calls of the student's code made inside the block, where they run; yield the sums (a ``Measured``).

    Always measured: ``tensors``, ``bytes`` and ``variables`` (how many more are
    alive after each call than before it, what it returned included). On request:
    ``leaks`` (what the calls left alive, by op and line), ``ops`` (the names of
    the ops a tape watching each call's tensor arguments recorded), ``calls``
    (how many times each of the file's own functions ran), ``peak`` (the most
    bytes alive at once during a call, beyond what was alive before it). Only
    calls made through ``fn``/``tensor_fn`` (and ``child_fn`` functions) count:
    the check's own tensors never do.

    Examples:
        >>> import types, microtape as mt
        >>> from microtape.exercise import fn, observe
        >>> m = types.ModuleType("student")
        >>> keep = []
        >>> m.leaky = lambda x: keep.append(x * 2.0) or x.sum()
        >>> with observe(ops=True) as seen:
        ...     total = fn(m, "leaky")(mt.tensor([1.0, 2.0]))
        >>> seen.tensors, seen.ops
        (2, ['mul', 'sum'])
    """
    wanted = frozenset(name for name, on in (("leaks", leaks), ("ops", ops), ("calls", calls), ("peak", peak)) if on)
    assert wanted <= frozenset(KINDS)
    seen = Measured()
    token = OBSERVERS.set((*OBSERVERS.get(), (seen, wanted)))
    try:
        yield seen
    finally:
        OBSERVERS.reset(token)


def child_fn(source: str, **values: object) -> Callable[..., object]:
    """A function the check hands to the student's code, made where that code runs, from the expression ``source``.

    ``source`` sees ``mt`` (microtape), ``math`` and ``values``. A check cannot pass
    one of its own functions to the student's code, which runs in another process.

    Examples:
        >>> from microtape.exercise import child_fn
        >>> cube = child_fn("lambda t: t ** 3 * k", k=2.0)
        >>> import microtape as mt
        >>> cube(mt.tensor([1.0, 2.0]))
        Tensor([2.0, 16.0], shape=(2,))
    """
    return ChildCode(source, dict(values))


def derivative(f: Callable[[float], float], x: float, h: float = 1e-3) -> float:
    """The slope of a plain-Python ``f`` at ``x`` by the five-point stencil (exact for polynomials up to degree 4).

    A check's reference derivative, from the function itself rather than from a formula.

    Examples:
        >>> from microtape.exercise import derivative
        >>> round(derivative(lambda v: v ** 3 - 2.0 * v, 2.0), 9)
        10.0
    """
    return (f(x - 2.0 * h) - 8.0 * f(x - h) + 8.0 * f(x + h) - f(x + 2.0 * h)) / (12.0 * h)


def op_name(answer: str) -> str:
    """The op an answer names, written as the tables print it or not: quotes, ``custom_grad(...)`` and an index ``[2]`` left out.

    Examples:
        >>> from microtape.exercise import op_name
        >>> op_name("custom_grad(twice)[2]"), op_name(" 'custom_grad(twice)' "), op_name("twice"), op_name("mul[0]")
        ('twice', 'twice', 'twice', 'mul')
    """
    name = answer.strip().strip("'\"`").strip()
    while True:
        bare = name
        if bare.endswith("]") and "[" in bare:
            bare = bare[: bare.rindex("[")].rstrip()
        if bare.startswith("custom_grad(") and bare.endswith(")"):
            bare = bare[len("custom_grad(") : -1].strip()
        if bare == name:
            return name
        name = bare.strip("'\"`").strip()


def digest(text: str) -> str:
    """The hash a check keeps of an accepted answer (SHA-256 of its words, case and spacing ignored), so a check file holds none.

    Examples:
        >>> from microtape.exercise import digest
        >>> digest("  Some  Answer ") == digest("some answer")
        True
        >>> len(digest("x"))
        64
    """
    words = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.sha256(words.encode("utf-8")).hexdigest()


def tensor_fn(module: object, name: str) -> Callable[..., Tensor]:
    """The student's ``name``, wrapped so that a result that is not a tensor fails the check.

    Examples:
        >>> import types, microtape as mt
        >>> from microtape.exercise import tensor_fn
        >>> m = types.ModuleType("student")
        >>> m.double = lambda x: x * 2.0
        >>> tensor_fn(m, "double")(mt.tensor([1.0]))
        Tensor([2.0], shape=(1,))
    """
    found = fn(module, name)

    def call(*args: Tensor) -> Tensor:
        return tensor_of(found(*args), f"{name}(...)")

    call.__name__ = name
    return call


def fmt(values: float | Sequence[float]) -> str:
    """Format a number or a list of numbers as the book prints them.

    Examples:
        >>> from microtape.exercise import fmt
        >>> fmt(0.5), fmt([1, 2.5])
        ('0.5', '[1.0, 2.5]')
    """
    if isinstance(values, (int, float)):
        return format_number(float(values))
    return "[" + ", ".join(format_number(float(v)) for v in values) + "]"


def close(a: float, b: float, tol: float = 1e-6) -> bool:
    """Whether ``a`` is within ``tol`` of ``b`` (relative to 1 + |b|); infinities must match.

    Examples:
        >>> from microtape.exercise import close
        >>> close(1.0 + 1e-9, 1.0), close(1.1, 1.0), close(float("nan"), 1.0)
        (True, False, False)
    """
    if not (math.isfinite(a) and math.isfinite(b)):
        return a == b
    return abs(a - b) <= tol * (1.0 + abs(b))


def off_by(got: float, want: float) -> str:
    """How ``got`` misses ``want``, in words that do not give ``want`` away.

    Examples:
        >>> from microtape.exercise import off_by
        >>> off_by(9.0, 10.0), off_by(-10.0, 10.0), off_by(float("nan"), 1.0), off_by(0.5, 0.0)
        ('off by about 10 %', 'its sign is wrong', 'it is nan', 'it should be 0')
        >>> off_by(30.0, 10.0), off_by(1e308, 1e-308), off_by(2.0, 10.0)
        ('about 3 times too large', 'far too large', 'about 5 times too small')
    """
    if not math.isfinite(got):
        return f"it is {got}"
    if not math.isfinite(want):
        return "it should not be finite"
    if want == 0.0:
        return "it should be 0"
    if got == 0.0:
        return "it is 0 and should not be"
    if (got < 0.0) != (want < 0.0):
        return "its sign is wrong"
    ratio = abs(got) / abs(want)
    if ratio >= 2.0 or ratio <= 0.5:
        larger = ratio >= 2.0
        times = ratio if larger else abs(want) / abs(got)
        word = "large" if larger else "small"
        return f"about {float(f'{times:.1g}'):g} times too {word}" if math.isfinite(times) else f"far too {word}"
    error = abs(got - want) / abs(want)
    return f"off by about {float(f'{100.0 * error:.1g}'):g} %" if error >= 1e-6 else "off in the last digits"


def tensor_of(value: object, what: str, shape: tuple[int, ...] | None = None) -> Tensor:
    """``value`` if it is a live ``Tensor`` (or ``Variable``), not a subclass (of ``shape``, if given); else ``Fail``.

    Examples:
        >>> from microtape.exercise import Fail, tensor_of
        >>> try:
        ...     tensor_of(3.0, "f(x)")
        ... except Fail as fail:
        ...     print(fail)
        f(x) returned float 3.0, not a Tensor.
    """
    if type(value) is not Tensor and type(value) is not Variable:
        kind = "a subclass of Tensor" if isinstance(value, Tensor) else f"{type(value).__name__} {value!r:.60}"
        raise Fail(f"{what} returned {kind}, not a Tensor.")
    assert isinstance(value, Tensor)
    if value.is_disposed:
        raise Fail(f"{what} returned a disposed tensor (made by {value.op!r}): its values are gone.")
    if shape is not None and value.shape != shape:
        raise Fail(f"{what} returned a tensor of shape {value.shape}, expected shape {shape}.")
    return value


def number(value: object, what: str) -> float:
    """``value`` as a float if it is a real ``float`` or ``int`` (no subclass, no bool); otherwise ``Fail``.

    Examples:
        >>> from microtape.exercise import Fail, number
        >>> number(3, "n")
        3.0
        >>> class Anything(float):
        ...     def __eq__(self, other): return True
        >>> try:
        ...     number(Anything(1.0), "f(x)")
        ... except Fail as fail:
        ...     print(fail)
        f(x) returned Anything, a subclass of float, not a plain Python number.
    """
    if isinstance(value, Tensor):
        raise Fail(f"{what} returned a Tensor ({value!r:.60}), not a Python float; read it with .item().")
    if type(value) is float or type(value) is int:
        return float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise Fail(f"{what} returned {type(value).__name__}, a subclass of {type(value).__mro__[1].__name__}, not a plain Python number.")
    raise Fail(f"{what} returned {type(value).__name__} {value!r:.60}, not a number.")


def integer(value: object, what: str) -> int:
    """``value`` if it is a real ``int`` (no subclass, no bool); otherwise ``Fail``.

    Examples:
        >>> from microtape.exercise import Fail, integer
        >>> class Anything(int):
        ...     def __eq__(self, other): return True
        >>> try:
        ...     integer(Anything(0), "count()")
        ... except Fail as fail:
        ...     print(fail)
        count() returned Anything, not an int.
    """
    if type(value) is not int:
        raise Fail(f"{what} returned {type(value).__name__}, not an int.")
    return value


def expect_values(
    got: Sequence[float], want: Sequence[float], what: str, tol: float = 1e-6, hint: str | None = None
) -> None:
    """``Fail`` naming the first entry of ``got`` that is not close to ``want``, and how far off it is (not ``want``).

    Examples:
        >>> from microtape.exercise import Fail, expect_values
        >>> expect_values([1.0, 2.0], [1.0, 2.0], "w")
        >>> try:
        ...     expect_values([1.0, 2.5], [1.0, 2.0], "w")
        ... except Fail as fail:
        ...     print(fail)
        w is wrong at entry 1: off by about 20 %.
    """
    if len(got) != len(want):
        raise Fail(f"{what} has {len(got)} entries, expected {len(want)}.")
    for i, (g, w) in enumerate(zip(got, want)):
        if type(g) is not float and type(g) is not int:
            raise Fail(f"{what} holds {type(g).__name__} at entry {i}, not a Python number.")
        if not close(g, w, tol):
            where = f" at entry {i}" if len(want) > 1 else ""
            bad = sum(not close(a, b, tol) for a, b in zip(got, want))
            more = f" ({bad} of {len(want)} entries are wrong)" if bad > 1 else ""
            raise Fail(f"{what} is wrong{where}: {off_by(g, w)}{more}.", hint)


def depends_on(module: types.ModuleType, name: str, stand_in: object, retry: Callable[[], object], what: str) -> None:
    """``Fail`` saying "``what`` uses your ``name``, which fails" if ``retry`` passes with ``name`` replaced by a correct ``stand_in``.

    Call it when a check fails, before reporting: it tells a failure caused by
    an earlier function from one of the function under test.

    Examples:
        >>> import types
        >>> from microtape.exercise import Fail, depends_on
        >>> m = types.ModuleType("student")
        >>> m.square = lambda x: x + x
        >>> m.area = lambda x: m.square(x)
        >>> def retry():
        ...     if m.area(3.0) != 9.0:
        ...         raise Fail("area is wrong")
        >>> try:
        ...     depends_on(m, "square", lambda x: x * x, retry, "area")
        ... except Fail as fail:
        ...     print(fail)
        area uses your square(), which fails its check above: fix square() first.
    """
    if getattr(module, name, None) is None:
        return
    try:
        with replaced(module, name, stand_in):
            retry()
    except Exception:  # noqa: BLE001 - still wrong with a correct stand-in (or it cannot be sent there): the fault may be elsewhere
        return
    raise Fail(f"{what} uses your {name}(), which fails its check above: fix {name}() first.")


def ignores_dy(f: Callable[..., Tensor], inputs: Sequence[Tensor]) -> bool:
    """Whether ``f``'s gradients stay the same when the output gradient ``dy`` is tripled: a VJP that forgot ``dy``.

    Examples:
        >>> import microtape as mt
        >>> from microtape.exercise import ignores_dy
        >>> @mt.custom_grad
        ... def double(x):
        ...     return 2.0 * x, lambda dy: [mt.fill(x.shape, 2.0)]
        >>> ignores_dy(double, [mt.tensor([1.0, 2.0])]), ignores_dy(lambda x: 2.0 * x, [mt.tensor([1.0])])
        (True, False)
    """
    with GradientTape(persistent=True) as tape:
        tape.watch(list(inputs))
        y = f(*inputs)
    try:
        once = tape.gradient(y, list(inputs), output_gradients=fill(y.shape, 1.0))
        thrice = tape.gradient(y, list(inputs), output_gradients=fill(y.shape, 3.0))
    except Exception:  # noqa: BLE001 - a VJP that fails in other ways is reported by the check itself
        return False
    finally:
        tape.release()
    pairs = [(a.data_sync(), b.data_sync()) for a, b in zip(once, thrice) if a is not None and b is not None]
    moved = [v for a, _ in pairs for v in a if v != 0.0]
    return bool(moved) and all(close(u, v, 1e-9) for a, b in pairs for u, v in zip(a, b))


def short_where(where: str) -> str:
    """'ex05.py:12' for '/long/path/ex05.py:12' ('ex05.ipynb, cell 3, line 2' in a notebook being graded).

    Examples:
        >>> from microtape.exercise import short_where
        >>> short_where("/home/me/ex05.py:12")
        'ex05.py:12'
    """
    file, _, line = where.rpartition(":")
    return place(file, line, "en") if file else where  # a check's English, which the grader translates


def leaks(call: Callable[[], object]) -> str:
    """Run ``call`` once and describe what it leaves alive: '2 x mul (ex.py:12), ...'.

    The student's calls made by ``call`` are measured where they run (see
    :func:`observe`); a ``call`` that makes none is watched in this process.

    Examples:
        >>> import microtape as mt
        >>> from microtape.exercise import leaks
        >>> leaks(lambda: None)
        'nothing'
    """
    with leak_check(on_leak="ignore") as report:
        with observe(leaks=True) as seen:
            call()
    groups = seen.leaks if seen.count else [f"{g.count} x {g.op} ({short_where(g.where)})" for g in report.groups]
    if len(groups) > 8:
        groups = groups[:8] + [f"... {len(groups) - 8} more"]
    return ", ".join(groups) or "nothing"


@contextmanager
def replaced(module: types.ModuleType, name: str, value: object) -> Iterator[None]:
    """Temporarily set ``module.name`` to ``value`` (to see what a student's function depends on).

    Examples:
        >>> import types
        >>> from microtape.exercise import replaced
        >>> m = types.ModuleType("student")
        >>> m.k = 1
        >>> with replaced(m, "k", 2):
        ...     print(m.k)
        2
        >>> m.k
        1
    """
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def gradcheck_failure(
    report: GradCheckReport, what: str, labels: Sequence[str], module: types.ModuleType, culprit: bool = True
) -> str:
    """Describe a failed :func:`~microtape.check_grads` report in a few lines (worst entries by output entry, culprit).

    Each line names the output entry and the input entry (``d out[1] / d x[1]``);
    a scalar output is ``out``.

    Examples:
        >>> import types, microtape as mt
        >>> from microtape.exercise import gradcheck_failure
        >>> @mt.custom_grad
        ... def twice(x):
        ...     return 2.0 * x, lambda dy: [dy]
        >>> report = mt.check_grads(twice, [mt.tensor([1.0, 3.0])])
        >>> print(gradcheck_failure(report, "twice", ["x"], types.ModuleType("m"), culprit=False))
        twice: check_grads failed (2 of 4 entries disagree).
          d out[1] / d x[1]: the analytic gradient is 1.0, finite differences give 2.0
          d out[0] / d x[0]: the analytic gradient is 1.0, finite differences give 2.0
    """
    lines = [f"{what}: check_grads failed ({len(report.failures)} of {len(report.rows)} entries disagree)."]
    failures = [r for r in report.failures if r.order == report.order] or report.failures
    shown: list[object] = []
    for r in failures:  # worst first
        if len(shown) == 3:
            break
        key = (r.input, r.index, r.output)
        if key in shown:
            continue
        shown.append(key)
        at = labels[r.input] if r.input < len(labels) else f"input {r.input}"
        index = ",".join(map(str, r.index))
        out = f"out[{','.join(map(str, r.output))}]" if r.output else "out"
        order = "" if r.order == 1 else " (second derivative)"
        lines.append(
            f"  d {out} / d {at}[{index}]{order}: the analytic gradient is {format_number(r.analytic)}, "
            f"finite differences give {format_number(r.numeric)}"
        )
    c = report.culprit
    if c is not None and culprit and isinstance(module, Submission) and c.op.startswith("student:"):
        found = session_of(module).culprit(c.op, report.order)  # the student's own ops are in the student's process: ask there
        c = found if isinstance(found, Culprit) else None
    if c is not None and culprit:
        mine = c.where.rpartition(":")[0] == getattr(module, "__file__", None)
        called = f" called at {short_where(c.where)}" if mine else ""
        along = c.detail if c.detail.startswith("for input ") else "along a random direction"  # re-checked at its own scale
        lines.append(
            f"  culprit: the VJP of {c.op!r}{called}: {along} it gives "
            f"{format_number(c.analytic)}, finite differences give {format_number(c.numeric)}"
        )
    return "\n".join(lines)
