"""The classroom grader: ``python -m microtape grade FILE``.

Read after ``cli.py``. Every exercise in ``tutorials/exercises/`` is a small
module that sets ``EXERCISE = "exNN_..."`` and defines the functions its
chapter asks for. The grader reads that name without running the file
(``ast``), loads the file under a fresh module name, and runs the
exercise's checks from the registry below. Each check calls the student's
functions and compares what comes back with an independent answer: finite
differences (:func:`~microtape.check_grads`), exact tensor counts
(:func:`~microtape.memory`), norms after clipping, values worked out in
plain Python. Every check prints ``PASS``, ``FAIL`` (what was wrong, with
the real values, and a hint) or ``TODO`` (a ``NotImplementedError`` left in
the starter). A student's exception never escapes as a traceback.

Each check runs in a copy of the context and in its own tidy scope, so a
tape left open, a leak or a crash in one check cannot change the next; and
the whole run is scoped too, so grading leaves nothing alive behind it.
Exit codes: 0 when every check passes, 1 when one does not (or the file
cannot run), 2 when the grader cannot tell what to grade.
"""

from __future__ import annotations

import ast
import contextvars
import difflib
import itertools
import math
import sys
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TextIO

from . import _runtime
from ._runtime import VARIABLES
from .debug import GradientMonitor
from .functional import grads as grads_of
from .gradcheck import GradCheckReport, check_grads, numerical_grad
from .memory import ProfileInfo, leak_check, memory, profile, tidy
from .ops import exp, sin
from .tape import GradientTape
from .tensor import Tensor, fill, format_number, ones, scalar, tensor, zeros
from .variable import Variable, variable

__all__ = ["EXERCISES", "EXERCISES_DIR", "SOLUTIONS_DIR", "Check", "Exercise", "grade", "list_exercises"]

EXERCISES_DIR: Final = Path(__file__).resolve().parent.parent / "tutorials" / "exercises"
"""Where the starter files live in a source checkout."""

SOLUTIONS_DIR: Final = EXERCISES_DIR / "solutions"
"""Where the worked solutions live (same file names as the starters)."""

CheckFn = Callable[[types.ModuleType], None]


# -- the registry -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Check:
    """One check of an exercise: a short name, the hint shown on failure, the test itself."""

    name: str
    hint: str
    run: CheckFn


@dataclass(frozen=True, slots=True)
class Exercise:
    """An exercise: its name (the file's ``EXERCISE``), chapter, title and checks.

    Examples:
        >>> from microtape.grader import EXERCISES
        >>> ex = EXERCISES["ex04_softplus_vjp"]
        >>> ex.chapter, ex.file
        (4, 'ex04_softplus_vjp.py')
    """

    name: str
    chapter: int
    title: str
    checks: list[Check] = field(default_factory=list)

    @property
    def file(self) -> str:
        """The starter's (and the solution's) file name."""
        return f"{self.name}.py"


EXERCISES: Final[dict[str, Exercise]] = {}
"""Every exercise by name, in book order."""


def _exercise(name: str, chapter: int, title: str) -> Exercise:
    ex = Exercise(name, chapter, title)
    EXERCISES[name] = ex
    return ex


def _check(exercise: Exercise, name: str, hint: str) -> Callable[[CheckFn], CheckFn]:
    """Decorator: add a check to an exercise, in the order the checks are written."""

    def register(fn: CheckFn) -> CheckFn:
        exercise.checks.append(Check(name, hint, fn))
        return fn

    return register


def list_exercises() -> list[str]:
    """Return the names of every exercise the grader knows, in book order.

    Examples:
        >>> from microtape.grader import list_exercises
        >>> names = list_exercises()
        >>> names[0], len(names) >= 8
        ('ex00_gradient_by_hand', True)
    """
    return list(EXERCISES)


# -- helpers the checks share ------------------------------------------------------


class _Fail(Exception):
    """A check saw a wrong result; the message says what, with the real values."""


def _fn(module: types.ModuleType, name: str) -> Callable[..., object]:
    value = getattr(module, name, None)
    if value is None:
        raise _Fail(f"the file defines no {name}(); the grader calls it by that name.")
    if not callable(value):
        raise _Fail(f"{name} is a {type(value).__name__}, but the grader calls it as a function.")
    fn: Callable[..., object] = value  # a student's callable: the checks validate what it returns
    return fn


def _tensor_fn(module: types.ModuleType, name: str) -> Callable[..., Tensor]:
    """The file's ``name``, wrapped so that a result that is not a tensor fails the check."""
    fn = _fn(module, name)

    def call(*args: Tensor) -> Tensor:
        return _tensor(fn(*args), f"{name}(...)")

    call.__name__ = name
    return call


def _fmt(values: float | Sequence[float]) -> str:
    if isinstance(values, (int, float)):
        return format_number(float(values))
    return "[" + ", ".join(format_number(float(v)) for v in values) + "]"


def _close(a: float, b: float, tol: float = 1e-6) -> bool:
    if not (math.isfinite(a) and math.isfinite(b)):
        return a == b
    return abs(a - b) <= tol * (1.0 + abs(b))


def _tensor(value: object, what: str, shape: tuple[int, ...] | None = None) -> Tensor:
    if not isinstance(value, Tensor):
        raise _Fail(f"{what} returned {type(value).__name__} {value!r:.60}, not a Tensor.")
    if value.is_disposed:
        raise _Fail(f"{what} returned a disposed tensor (made by {value.op!r}): its values are gone.")
    if shape is not None and value.shape != shape:
        raise _Fail(f"{what} returned a tensor of shape {value.shape}, expected shape {shape}.")
    return value


def _number(value: object, what: str) -> float:
    if isinstance(value, Tensor):
        raise _Fail(f"{what} returned a Tensor ({value!r:.60}), not a Python float; read it with .item().")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Fail(f"{what} returned {type(value).__name__} {value!r:.60}, not a number.")
    return float(value)


def _expect_values(got: Sequence[float], want: Sequence[float], what: str, tol: float = 1e-6) -> None:
    for i, (g, w) in enumerate(zip(got, want)):
        if not _close(g, w, tol):
            where = f" (entry {i}: {format_number(g)} instead of {format_number(w)})" if len(want) > 1 else ""
            raise _Fail(f"{what} = {_fmt(got)}, expected {_fmt(want)}{where}.")


def _short_where(where: str) -> str:
    """'ex05.py:12' for '/long/path/ex05.py:12'."""
    file, _, line = where.rpartition(":")
    return f"{Path(file).name}:{line}" if file else where


def _leaks(fn: Callable[[], object]) -> str:
    """Run ``fn`` once and describe what it leaves alive: '2 x mul (ex.py:12), ...'."""
    with leak_check(on_leak="ignore") as report:
        fn()
    groups = [f"{g.count} x {g.op} ({_short_where(g.where)})" for g in report.groups]
    if len(groups) > 8:
        groups = groups[:8] + [f"... {len(groups) - 8} more"]
    return ", ".join(groups) or "nothing"


@contextmanager
def _replaced(module: types.ModuleType, name: str, value: object) -> Iterator[None]:
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def _gradcheck_failure(
    report: GradCheckReport, what: str, labels: Sequence[str], m: types.ModuleType, culprit: bool = True
) -> str:
    lines = [f"{what}: check_grads failed ({len(report.failures)} of {len(report.rows)} entries disagree)."]
    failures = [r for r in report.failures if r.order == report.order] or report.failures
    for r in failures[:3]:
        at = labels[r.input] if r.input < len(labels) else f"input {r.input}"
        index = ",".join(map(str, r.index))
        order = "" if r.order == 1 else " (second derivative)"
        lines.append(
            f"  at {at}[{index}]{order}: the analytic gradient is {format_number(r.analytic)}, "
            f"finite differences give {format_number(r.numeric)}"
        )
    c = report.culprit
    if c is not None and culprit:
        mine = c.where.rpartition(":")[0] == getattr(m, "__file__", None)
        called = f" called at {_short_where(c.where)}" if mine else ""
        lines.append(
            f"  culprit: the VJP of {c.op!r}{called}: along a random direction it gives "
            f"{format_number(c.analytic)}, finite differences give {format_number(c.numeric)}"
        )
    return "\n".join(lines)


# -- ex00: a gradient by hand and with mt.grad ------------------------------------------

_EX00 = _exercise("ex00_gradient_by_hand", 0, "Gradient debugging: a derivative by hand and with mt.grad")


@_check(
    _EX00,
    "df_by_hand matches finite differences",
    "f(x) = x³ - 2x; the power rule gives d/dx xⁿ = n·xⁿ⁻¹, term by term.",
)
def _ex00_by_hand(m: types.ModuleType) -> None:
    f, df = _tensor_fn(m, "f"), _fn(m, "df_by_hand")
    for x in (-2.0, -0.5, 0.0, 1.0, 3.0):
        [numeric] = numerical_grad(f, [scalar(x)])
        got = _number(df(x), f"df_by_hand({x})")
        if not _close(got, numeric.item(), 1e-5):
            raise _Fail(f"df_by_hand({x}) = {format_number(got)}, but finite differences of f give {format_number(numeric.item())}.")


@_check(
    _EX00,
    "df_with_mt returns f'(x) as a tensor",
    "return mt.grad(f)(x): mt.grad(f) is a new function that computes the gradient.",
)
def _ex00_with_mt(m: types.ModuleType) -> None:
    f, df = _tensor_fn(m, "f"), _fn(m, "df_with_mt")
    x = tensor([-2.0, 0.0, 1.5])
    got = _tensor(df(x), "df_with_mt(x)", x.shape)
    [numeric] = numerical_grad(f, [x])
    _expect_values(got.data_sync(), numeric.data_sync(), f"df_with_mt({_fmt(x.data_sync())})", 1e-5)


@_check(
    _EX00,
    "df_with_mt differentiates f itself",
    "call mt.grad(f) on the module's f instead of typing the derivative 3x² - 2 again.",
)
def _ex00_uses_autodiff(m: types.ModuleType) -> None:
    _fn(m, "f")
    df = _fn(m, "df_with_mt")
    x = tensor([0.0, 1.0, 2.0])
    with _replaced(m, "f", sin):
        got = _tensor(df(x), "df_with_mt(x)", x.shape).data_sync()
    want = [math.cos(v) for v in x.data_sync()]
    if not all(_close(g, w, 1e-6) for g, w in zip(got, want)):
        raise _Fail(
            f"with f replaced by sin, df_with_mt(x) gave {_fmt(got)} instead of cos(x) = {_fmt(want)}: "
            "it does not differentiate f."
        )


@_check(
    _EX00,
    "gradient_descent steps downhill",
    "repeat x = x - lr * f'(x) exactly `steps` times, starting at x0, and return x.",
)
def _ex00_descent(m: types.ModuleType) -> None:
    gd = _fn(m, "gradient_descent")

    def reference(x: float, lr: float, steps: int) -> float:
        for _ in range(steps):
            x -= lr * (3.0 * x * x - 2.0)
        return x

    for x0, lr, steps in ((2.0, 0.05, 0), (2.0, 0.05, 1), (2.0, 0.05, 3), (-0.3, 0.1, 200)):
        got = _number(gd(x0, lr, steps), f"gradient_descent({x0}, {lr}, {steps})")
        want = reference(x0, lr, steps)
        if not _close(got, want, 1e-6):
            raise _Fail(f"gradient_descent({x0}, {lr}, {steps}) = {format_number(got)}, expected {format_number(want)}.")


# -- ex01: variables and an in-place SGD step ---------------------------------------------

_EX01 = _exercise("ex01_variables_sgd", 1, "Variables: make them, assign an SGD step in place")


@_check(
    _EX01,
    "make_weights makes a trainable variable",
    "return mt.variable(mt.tensor(values)); variables are trainable by default.",
)
def _ex01_weights(m: types.ModuleType) -> None:
    w = _fn(m, "make_weights")([1.0, -2.0, 0.5])
    if not isinstance(w, Variable):
        raise _Fail(f"make_weights([1.0, -2.0, 0.5]) returned {type(w).__name__} {w!r:.60}, not a Variable.")
    if w.shape != (3,):
        raise _Fail(f"make_weights([1.0, -2.0, 0.5]) has shape {w.shape}, expected (3,).")
    _expect_values(w.data_sync(), [1.0, -2.0, 0.5], "make_weights([1.0, -2.0, 0.5])")
    if not w.trainable:
        raise _Fail("make_weights(...) returned a variable with trainable=False; weights must be trainable.")


@_check(
    _EX01,
    "make_weights can be called twice",
    "do not pass a fixed name=...: two variables alive at once cannot share a name.",
)
def _ex01_twice(m: types.ModuleType) -> None:
    make = _fn(m, "make_weights")
    a, b = make([1.0]), make([2.0])
    if not (isinstance(a, Variable) and isinstance(b, Variable)):
        raise _Fail(f"make_weights returned {type(a).__name__} and {type(b).__name__}, not variables.")
    if a is b:
        raise _Fail("two calls of make_weights returned the same variable object; each call should make a new one.")


@_check(
    _EX01,
    "make_step_counter is a frozen scalar at 0",
    "mt.variable(mt.scalar(0.0), trainable=False): a counter is state, not a parameter.",
)
def _ex01_counter(m: types.ModuleType) -> None:
    c = _fn(m, "make_step_counter")()
    if not isinstance(c, Variable):
        raise _Fail(f"make_step_counter() returned {type(c).__name__} {c!r:.60}, not a Variable.")
    if c.shape != ():
        raise _Fail(f"make_step_counter() has shape {c.shape}, expected a scalar, shape ().")
    if c.item() != 0.0:
        raise _Fail(f"make_step_counter() starts at {format_number(c.item())}, expected 0.0.")
    if c.trainable:
        raise _Fail("make_step_counter() is trainable, so variable_grads and optimizers would change it.")


@_check(
    _EX01,
    "sgd_step updates the variable in place",
    "w.assign(w - grad * lr) (or w.assign_sub(grad * lr)); rebinding `w = ...` only changes a local name.",
)
def _ex01_sgd(m: types.ModuleType) -> None:
    w = variable(tensor([1.0, 2.0, 3.0]))
    g = tensor([0.5, -1.0, 2.0])
    variables_before = memory().num_variables
    _fn(m, "sgd_step")(w, g, 0.1)
    got = w.data_sync()
    if got == [1.0, 2.0, 3.0]:
        raise _Fail("after sgd_step(w, grad, 0.1), w still holds [1.0, 2.0, 3.0]: the variable was not updated.")
    _expect_values(got, [0.95, 2.1, 2.8], "w after sgd_step(w=[1, 2, 3], grad=[0.5, -1, 2], lr=0.1)")
    _expect_values(g.data_sync(), [0.5, -1.0, 2.0], "grad after sgd_step")
    made = memory().num_variables - variables_before
    if made > 0:
        raise _Fail(f"sgd_step made {made} new variable(s); an SGD step assigns to the existing one.")
    if not w.trainable:
        raise _Fail("sgd_step left w with trainable=False.")


@_check(_EX01, "count_step adds 1 in place", "counter.assign_add(1.0).")
def _ex01_count(m: types.ModuleType) -> None:
    c = variable(scalar(0.0), trainable=False)
    step = _fn(m, "count_step")
    for _ in range(3):
        step(c)
    if c.item() != 3.0:
        raise _Fail(f"after 3 calls of count_step(counter) the counter is {format_number(c.item())}, expected 3.0.")


# -- ex02: variable_grads on the linear model, inside tidy ------------------------------------

_EX02 = _exercise("ex02_linear_model", 2, "Automatic gradients: variable_grads on the linear model, inside tidy")
_XS: Final = [1.0, 2.0, 3.0, 4.0]
_YS: Final = [1.0, 3.0, 5.0, 7.0]


def _linear(w: float, b: float) -> tuple[float, float, float]:
    """Loss, dL/dw and dL/db of the mean squared error, by hand."""
    errors = [w * x + b - y for x, y in zip(_XS, _YS)]
    n = len(errors)
    loss = math.fsum(e * e for e in errors) / n
    dw = math.fsum(2.0 * e * x for e, x in zip(errors, _XS)) / n
    db = math.fsum(2.0 * e for e in errors) / n
    return loss, dw, db


@_check(
    _EX02,
    "loss_fn is the mean squared error",
    "mean((w * X + b - Y) ** 2): the mean, not the sum, of the squared errors.",
)
def _ex02_loss(m: types.ModuleType) -> None:
    loss_fn = _fn(m, "loss_fn")
    for w, b in ((0.5, 0.0), (2.0, -1.0), (-1.0, 3.0)):
        got = _tensor(loss_fn(scalar(w), scalar(b)), f"loss_fn({w}, {b})", ())
        _expect_values(got.data_sync(), [_linear(w, b)[0]], f"loss_fn(w={w}, b={b})")


@_check(
    _EX02,
    "gradients gives dL/dw and dL/db",
    "value, grads = mt.variable_grads(lambda: loss_fn(w, b)); return grads[w], grads[b].",
)
def _ex02_grads(m: types.ModuleType) -> None:
    gradients = _fn(m, "gradients")
    for w0, b0 in ((0.5, 0.0), (1.0, 2.0)):
        w, b = variable(scalar(w0)), variable(scalar(b0))
        result = gradients(w, b)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise _Fail(f"gradients(w, b) returned {type(result).__name__} {result!r:.60}, expected a pair (dw, db).")
        dw = _tensor(result[0], "gradients(w, b)[0]", ())
        db = _tensor(result[1], "gradients(w, b)[1]", ())
        _, want_dw, want_db = _linear(w0, b0)
        _expect_values([dw.item(), db.item()], [want_dw, want_db], f"(dL/dw, dL/db) at w={w0}, b={b0}")


@_check(
    _EX02,
    "gradients leaves only dw and db alive",
    "wrap the body in mt.tidy and return (grads[w], grads[b]): the loss value and every intermediate are disposed.",
)
def _ex02_grads_tidy(m: types.ModuleType) -> None:
    gradients = _fn(m, "gradients")
    w, b = variable(scalar(0.5)), variable(scalar(0.0))
    before = memory().num_tensors
    gradients(w, b)
    left = memory().num_tensors - before
    if left != 2:
        raise _Fail(f"one call of gradients(w, b) left {left} new tensor(s) alive, expected exactly 2 (dw and db).")


@_check(
    _EX02,
    "train fits y = 2x - 1",
    "each step: dw, db = gradients(w, b); w.assign_sub(dw * lr); b.assign_sub(db * lr); start from w = b = 0.",
)
def _ex02_train(m: types.ModuleType) -> None:
    result = _fn(m, "train")(500, 0.05)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise _Fail(f"train(500, 0.05) returned {type(result).__name__} {result!r:.60}, expected a pair of floats (w, b).")
    w, b = _number(result[0], "train(...)[0]"), _number(result[1], "train(...)[1]")
    want_w, want_b = 0.0, 0.0
    for _ in range(500):
        _, dw, db = _linear(want_w, want_b)
        want_w, want_b = want_w - 0.05 * dw, want_b - 0.05 * db
    if not (_close(w, want_w, 1e-4) and _close(b, want_b, 1e-4)):
        raise _Fail(
            f"train(500, 0.05) = (w={format_number(w)}, b={format_number(b)}); 500 SGD steps from w = b = 0 "
            f"give (w={format_number(want_w)}, b={format_number(want_b)}), close to the true (2, -1)."
        )


@_check(
    _EX02,
    "train leaves no tensors behind",
    "run each step inside mt.tidy(...), and make the variables from numbers, mt.variable(0.0): "
    "mt.variable(mt.scalar(0.0)) copies the scalar and leaves it alive.",
)
def _ex02_train_flat(m: types.ModuleType) -> None:
    train = _fn(m, "train")
    before = memory().num_tensors
    train(20, 0.05)
    left = memory().num_tensors - before
    if left != 0:
        raise _Fail(
            f"train(20, 0.05) left {left} tensor(s) alive; memory must stay flat.\n"
            f"  another train(20, 0.05) leaves {_leaks(lambda: train(20, 0.05))}"
        )


# -- ex03: a second derivative with nested tapes -----------------------------------------

_EX03 = _exercise("ex03_second_derivative", 3, "GradientTape: a second derivative with nested tapes, SGD on x² + y²")


@_check(
    _EX03,
    "second_derivative matches f''",
    "compute dy/dx with the inner tape *inside* the outer tape's with-block, then outer.gradient(dy_dx, x).",
)
def _ex03_second(m: types.ModuleType) -> None:
    second = _fn(m, "second_derivative")
    x = tensor([-1.5, 0.5, 2.0])
    cases: list[tuple[str, Callable[[Tensor], Tensor], Callable[[float], float]]] = [
        ("x**3", lambda t: t**3, lambda v: 6.0 * v),
        ("sin", sin, lambda v: -math.sin(v)),
        ("exp", exp, math.exp),
    ]
    for label, f, f2 in cases:
        got = _tensor(second(f, x), f"second_derivative({label}, x)", x.shape)
        _expect_values(got.data_sync(), [f2(v) for v in x.data_sync()], f"second_derivative({label}) at x = {_fmt(x.data_sync())}", 1e-6)


@_check(
    _EX03,
    "minimize_paraboloid does SGD on x² + y²",
    "make x and y variables; in each step record f = x*x + y*y on a tape, then x.assign_sub(dx * lr) and the same for y.",
)
def _ex03_paraboloid(m: types.ModuleType) -> None:
    fn = _fn(m, "minimize_paraboloid")
    for x0, y0, lr, steps in ((2.0, 3.0, 0.1, 0), (2.0, 3.0, 0.1, 1), (2.0, 3.0, 0.1, 2), (-1.0, 4.0, 0.25, 50)):
        result = fn(x0, y0, lr, steps)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise _Fail(f"minimize_paraboloid returned {type(result).__name__} {result!r:.60}, expected a pair of floats (x, y).")
        got = [_number(result[0], "minimize_paraboloid(...)[0]"), _number(result[1], "minimize_paraboloid(...)[1]")]
        factor = (1.0 - 2.0 * lr) ** steps  # each step multiplies x and y by 1 - 2·lr
        _expect_values(got, [x0 * factor, y0 * factor], f"minimize_paraboloid({x0}, {y0}, lr={lr}, steps={steps})", 1e-9)


# -- ex04: the VJP of softplus --------------------------------------------------------------

_EX04 = _exercise("ex04_softplus_vjp", 4, "Checking gradients: write the VJP of softplus, prove it with check_grads")
_SOFTPLUS_AT: Final = [-3.0, -1.0, 0.0, 0.7, 2.5]


@_check(_EX04, "softplus computes log(1 + e^x)", "keep the forward value = mt.log(1.0 + mt.exp(x)).")
def _ex04_forward(m: types.ModuleType) -> None:
    x = tensor(_SOFTPLUS_AT)
    got = _tensor(_fn(m, "softplus")(x), "softplus(x)", x.shape)
    _expect_values(got.data_sync(), [math.log1p(math.exp(v)) for v in _SOFTPLUS_AT], "softplus(x)")


@_check(
    _EX04,
    "softplus is one custom_grad op",
    "keep the @mt.custom_grad decorator: a tape should record a single op named custom_grad(softplus).",
)
def _ex04_is_custom(m: types.ModuleType) -> None:
    x = tensor(_SOFTPLUS_AT)
    with GradientTape() as tape:
        tape.watch(x)
        _fn(m, "softplus")(x)
    names = [op.name for op in tape.operations]
    if len(names) != 1 or not names[0].startswith("custom_grad("):
        raise _Fail(f"the tape recorded {names}, expected one op named 'custom_grad(...)'.")


@_check(
    _EX04,
    "the VJP agrees with finite differences",
    "d/dx log(1 + eˣ) = eˣ / (1 + eˣ) = sigmoid(x); the VJP returns [dy * sigmoid(x)].",
)
def _ex04_first(m: types.ModuleType) -> None:
    report = check_grads(_tensor_fn(m, "softplus"), [tensor(_SOFTPLUS_AT)])
    if not report.ok:
        raise _Fail(_gradcheck_failure(report, "softplus", ["x"], m))


@_check(
    _EX04,
    "the VJP can be differentiated again",
    "write grad_fn with microtape ops (dy * mt.sigmoid(x)), not Python floats, so order=2 works.",
)
def _ex04_second(m: types.ModuleType) -> None:
    report = check_grads(_tensor_fn(m, "softplus"), [tensor(_SOFTPLUS_AT)], order=2)
    if report.ok:
        return
    if not any(r.order == 2 for r in report.failures):
        raise _Fail("the first derivative is already wrong (see the check above): fix that first.")
    raise _Fail(_gradcheck_failure(report, "softplus, order=2", ["x"], m))


@_check(
    _EX04,
    "prove() returns a passing order-2 check",
    "return mt.check_grads(softplus, [x], order=2) for a tensor x of at least 3 points.",
)
def _ex04_prove(m: types.ModuleType) -> None:
    report = _fn(m, "prove")()
    if not isinstance(report, GradCheckReport):
        raise _Fail(f"prove() returned {type(report).__name__} {report!r:.60}, not the report of mt.check_grads.")
    if report.order != 2:
        raise _Fail(f"prove() checked order={report.order}; pass order=2 to check the second derivative too.")
    first = [r for r in report.rows if r.order == 1]
    if report.mode != "full" or len(first) < 3:
        raise _Fail(f"prove() compared {len(first)} entries in mode={report.mode!r}; check at least 3 points in full mode.")
    if not report.ok:
        raise _Fail(f"prove() returned a failing report: {str(report).splitlines()[0]}")


# -- ex04b: find the wrong VJP -----------------------------------------------------------------

_EX04B = _exercise("ex04b_find_the_bug", 4, "Checking gradients: find the wrong VJP with the culprit finder")
_BUG_AT: Final = [-1.5, -0.2, 0.0, 0.7, 2.0]


def _swish(v: float) -> float:
    return v / (1.0 + math.exp(-v))


def _model_reference(w: list[list[float]], x: list[list[float]]) -> float:
    outs = []
    for row in x:
        for j in range(len(w[0])):
            h = 2.0 * math.tanh(_swish(math.fsum(row[k] * w[k][j] for k in range(len(row)))))
            outs.append(math.sqrt(h * h + 1.0) - 1.0)
    return math.fsum(outs) / len(outs)


def _culprit_found(m: types.ModuleType) -> bool:
    """Whether the file's CULPRIT is right; until it is, the checks below do not name the op."""
    answer = getattr(m, "CULPRIT", None)
    return isinstance(answer, str) and answer.strip() in ("custom_grad(scaled_tanh)", "scaled_tanh")


@_check(
    _EX04B,
    "CULPRIT names the op with the wrong VJP",
    "run print(mt.check_grads(model, [W, X]).culprit) on the starter and copy the op name it prints.",
)
def _ex04b_culprit(m: types.ModuleType) -> None:
    answer = getattr(m, "CULPRIT", None)
    if not isinstance(answer, str):
        raise _Fail(f"CULPRIT is {answer!r}, expected a str such as 'custom_grad(some_op)'.")
    if answer.strip().upper().startswith("TODO"):
        raise NotImplementedError(answer)
    if not _culprit_found(m):
        raise _Fail(f"CULPRIT = {answer!r}, but that op's VJP agrees with finite differences; the culprit is another op.")


@_check(
    _EX04B,
    "the model's gradient agrees with finite differences",
    "print(mt.check_grads(model, [W, X])) names the culprit; fix that op's VJP: differentiate its forward value again, factor by factor.",
)
def _ex04b_model(m: types.ModuleType) -> None:
    w = tensor([[0.7, -0.4], [0.1, 0.9]])
    x = tensor([[0.5, -1.5], [1.2, 0.4], [-0.3, 0.8]])
    report = check_grads(_tensor_fn(m, "model"), [w, x])
    if not report.ok:
        raise _Fail(_gradcheck_failure(report, "model(w, x)", ["w", "x"], m, culprit=_culprit_found(m)))


@_check(
    _EX04B,
    "every custom op passes check_grads alone",
    "each VJP must be the derivative of its own forward value; check them one by one with mt.check_grads(op, [x]).",
)
def _ex04b_each(m: types.ModuleType) -> None:
    wrong = [name for name in ("swish", "scaled_tanh", "smooth_abs") if not check_grads(_tensor_fn(m, name), [tensor(_BUG_AT)]).ok]
    if wrong and not _culprit_found(m):
        verb = "disagrees" if len(wrong) == 1 else "disagree"
        raise _Fail(f"{len(wrong)} of the 3 custom ops {verb} with finite differences when checked alone; the culprit finder tells you which.")
    for name in wrong:
        report = check_grads(_tensor_fn(m, name), [tensor(_BUG_AT)])
        raise _Fail(_gradcheck_failure(report, name, ["x"], m))


@_check(
    _EX04B,
    "the forward values are unchanged",
    "fix the gradient, not the value: the model must still compute mean(smooth_abs(2·tanh(swish(x @ w)))).",
)
def _ex04b_forward(m: types.ModuleType) -> None:
    x = tensor(_BUG_AT)
    refs: dict[str, Callable[[float], float]] = {
        "swish": _swish,
        "scaled_tanh": lambda v: 2.0 * math.tanh(v),
        "smooth_abs": lambda v: math.sqrt(v * v + 1.0) - 1.0,
    }
    for name, ref in refs.items():
        got = _tensor(_fn(m, name)(x), f"{name}(x)", x.shape)
        _expect_values(got.data_sync(), [ref(v) for v in _BUG_AT], f"{name}({_fmt(_BUG_AT)})")
    w_rows, x_rows = [[0.7, -0.4], [0.1, 0.9]], [[0.5, -1.5], [1.2, 0.4], [-0.3, 0.8]]
    got_model = _tensor(_fn(m, "model")(tensor(w_rows), tensor(x_rows)), "model(w, x)", ())
    _expect_values(got_model.data_sync(), [_model_reference(w_rows, x_rows)], "model(w, x)")


# -- ex05: stop a leak ------------------------------------------------------------------------

_EX05 = _exercise("ex05_stop_the_leak", 5, "The computation graph: stop a leak with tidy")


def _ex05_reference(m: types.ModuleType, w: list[float]) -> tuple[float, list[float]]:
    """Loss and gradient of mean((X @ w - Y)²) by hand, from the file's X and Y."""
    x, y = _tensor(getattr(m, "X", None), "X"), _tensor(getattr(m, "Y", None), "Y")
    rows, cols = x.shape
    xd, yd = x.data_sync(), y.data_sync()
    errors = [math.fsum(xd[i * cols + k] * w[k] for k in range(cols)) - yd[i] for i in range(rows)]
    loss = math.fsum(e * e for e in errors) / rows
    grad = [math.fsum(2.0 * errors[i] * xd[i * cols + k] for i in range(rows)) / rows for k in range(cols)]
    return loss, grad


@_check(
    _EX05,
    "train_step makes a correct SGD step",
    "keep the maths: loss, grads = mt.variable_grads(...); w.assign(w - lr * grads[w]); return loss.item().",
)
def _ex05_step(m: types.ModuleType) -> None:
    w = variable(tensor([[0.5], [-0.25]]))
    loss = _number(_fn(m, "train_step")(w, 0.1), "train_step(w, 0.1)")
    want_loss, grad = _ex05_reference(m, [0.5, -0.25])
    _expect_values([loss], [want_loss], "the loss train_step returned")
    _expect_values(w.data_sync(), [0.5 - 0.1 * grad[0], -0.25 - 0.1 * grad[1]], "w after one train_step(w, lr=0.1)")


@_check(_EX05, "evaluate returns the loss", "return the loss as a Python float: mse(predict(w, X), Y).item().")
def _ex05_evaluate(m: types.ModuleType) -> None:
    got = _number(_fn(m, "evaluate")(tensor([[1.0], [0.5]])), "evaluate(w)")
    _expect_values([got], [_ex05_reference(m, [1.0, 0.5])[0]], "evaluate(w=[[1], [0.5]])")


def _flat(m: types.ModuleType, name: str, call: Callable[[], object]) -> None:
    counts = []
    before = memory().num_tensors
    for _ in range(5):
        call()
        counts.append(memory().num_tensors)
    if any(c != before for c in counts):
        per_step = (counts[-1] - before) / len(counts)
        raise _Fail(
            f"memory().num_tensors was {before} before and {counts} after each of 5 calls of {name}: "
            f"{per_step:.3g} tensor(s) leak per call.\n  one more call leaves {_leaks(call)}"
        )


@_check(
    _EX05,
    "train_step leaves no tensors behind",
    "run the body of train_step inside mt.tidy(...) and return a float (loss.item()), so nothing made in a step survives it.",
)
def _ex05_step_flat(m: types.ModuleType) -> None:
    w = variable(tensor([[0.5], [-0.25]]))
    step = _fn(m, "train_step")
    _flat(m, "train_step", lambda: step(w, 0.01))


@_check(
    _EX05,
    "evaluate leaves no tensors behind",
    "the tensors made inside predict and mse leak too: wrap the work in mt.tidy and return a float.",
)
def _ex05_evaluate_flat(m: types.ModuleType) -> None:
    w = tensor([[1.0], [0.5]])
    evaluate = _fn(m, "evaluate")
    _flat(m, "evaluate", lambda: evaluate(w))


# -- ex06: tame an exploding recurrent net ---------------------------------------------------

_EX06 = _exercise("ex06_exploding_rnn", 6, "In practice: tame an exploding recurrent net with clipping")


def _norm(ts: Sequence[Tensor]) -> float:
    return math.sqrt(math.fsum(v * v for t in ts for v in t.data_sync()))


def _clipped(m: types.ModuleType, grads: list[Tensor], max_norm: float) -> list[Tensor]:
    result = _fn(m, "clipped_grads")(grads, max_norm)
    if not isinstance(result, (list, tuple)) or len(result) != len(grads):
        raise _Fail(f"clipped_grads(grads, {max_norm}) returned {type(result).__name__} {result!r:.80}, expected a list of {len(grads)} tensors.")
    return [_tensor(r, f"clipped_grads(...)[{i}]", g.shape) for i, (r, g) in enumerate(zip(result, grads))]


@_check(
    _EX06,
    "clipped_grads rescales to the global norm",
    "clipped, norm = mt.clip_by_global_norm(grads, max_norm): every gradient is scaled by the same factor max_norm / global_norm.",
)
def _ex06_clip(m: types.ModuleType) -> None:
    grads = [tensor([3.0, 4.0]), tensor([12.0])]  # global norm 13
    got = _clipped(m, grads, 1.0)
    norm = _norm(got)
    if norm > 1.0 + 1e-9:
        raise _Fail(f"after clipped_grads([[3, 4], [12]], 1.0) the global norm is {format_number(norm)}, expected at most 1.0.")
    _expect_values([v for t in got for v in t.data_sync()], [3 / 13, 4 / 13, 12 / 13], "clipped_grads([[3, 4], [12]], 1.0), flattened", 1e-9)


@_check(
    _EX06,
    "clipped_grads leaves small gradients alone",
    "clip only when the global norm exceeds max_norm: t * max_norm / max(global_norm, max_norm).",
)
def _ex06_small(m: types.ModuleType) -> None:
    grads = [tensor([0.1, -0.2]), tensor([0.3])]
    got = _clipped(m, grads, 1.0)
    _expect_values([v for t in got for v in t.data_sync()], [0.1, -0.2, 0.3], "clipped_grads([[0.1, -0.2], [0.3]], 1.0), flattened", 1e-12)


def _train_rnn(m: types.ModuleType, steps: int) -> tuple[list[float], GradientMonitor]:
    result = _fn(m, "train_rnn")(steps, 0.02, 1.0)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise _Fail(f"train_rnn(...) returned {type(result).__name__} {result!r:.60}, expected (losses, monitor).")
    losses, monitor = result
    if not isinstance(losses, list) or len(losses) != steps:
        raise _Fail(f"train_rnn({steps}, ...) returned {type(losses).__name__} of {len(losses) if isinstance(losses, list) else '?'} losses, expected a list of {steps} floats.")
    if not isinstance(monitor, GradientMonitor):
        raise _Fail(f"train_rnn(...) returned {type(monitor).__name__} as the monitor, expected an mt.GradientMonitor.")
    return [_number(v, f"train_rnn(...) loss {i}") for i, v in enumerate(losses)], monitor


@_check(
    _EX06,
    "train_rnn converges with clipping",
    "clip the gradients before the update: dw, du = clipped_grads([grads[w], grads[u]], max_norm).",
)
def _ex06_train(m: types.ModuleType) -> None:
    losses, _ = _train_rnn(m, 100)
    bad = [i for i, v in enumerate(losses) if not math.isfinite(v)]
    if bad:
        raise _Fail(f"the loss became {losses[bad[0]]} at step {bad[0]} (losses: {_fmt(losses[: bad[0] + 2])}...): the gradients exploded.")
    best = min(losses[-10:])
    if not best < losses[0] * 1e-3:
        raise _Fail(f"train_rnn(100, 0.02, 1.0): first loss {format_number(losses[0])}, best of the last 10 {format_number(best)}; expected a drop of more than 1000x.")


@_check(
    _EX06,
    "the monitor saw the explosion",
    "record the raw (unclipped) gradients every step: monitor.record({'w': grads[w], 'u': grads[u]}), with the default thresholds.",
)
def _ex06_monitor(m: types.ModuleType) -> None:
    w0, u0 = _number(getattr(m, "W0", None), "W0"), _number(getattr(m, "U0", None), "U0")
    raw = grads_of(_tensor_fn(m, "loss_fn"))([scalar(w0), scalar(u0)])
    want = _norm(raw)
    _, monitor = _train_rnn(m, 10)
    if len(monitor.global_norms) != 10:
        raise _Fail(f"train_rnn(10, ...) recorded {len(monitor.global_norms)} steps in the monitor, expected one per step (10).")
    first = monitor.global_norms[0]
    if not _close(first, want, 1e-6):
        raise _Fail(
            f"the monitor's first global norm is {format_number(first)}, but the raw gradient norm at w={w0}, u={u0} "
            f"is {format_number(want)} (were the gradients clipped before recording?)."
        )
    if not monitor.exploding:
        raise _Fail(f"monitor.exploding is False although the raw norm was {format_number(want)}.")


# -- ex07: profile a function ---------------------------------------------------------------

_EX07 = _exercise("ex07_profile_memory", 7, "Analysis tools: measure memory and profile a function")


def _measure(fn: Callable[[], object]) -> int:
    before = memory().num_tensors
    fn()
    return memory().num_tensors - before


@_check(
    _EX07,
    "leftover_tensors counts what a call leaves alive",
    "before = mt.memory().num_tensors; fn(); return mt.memory().num_tensors - before.",
)
def _ex07_leftover(m: types.ModuleType) -> None:
    leftover = _fn(m, "leftover_tensors")
    fns: list[tuple[str, Callable[[], object]]] = [
        ("a function making 3 tensors", lambda: [ones((2,)), zeros((3,)), fill((1,), 2.0)]),
        ("a tidy returning one sum", lambda: tidy(lambda: (ones((3,)) * 2.0).sum())),
        ("a function doing nothing", lambda: None),
    ]
    for label, fn in fns:
        want = _measure(fn)
        got = leftover(fn)
        if isinstance(got, bool) or not isinstance(got, int):
            raise _Fail(f"leftover_tensors(fn) returned {type(got).__name__} {got!r:.60}, expected an int.")
        if got != want:
            raise _Fail(f"leftover_tensors({label}) = {got}, but one call leaves {want} tensor(s) alive.")


@_check(
    _EX07,
    "profile_layer profiles layer inside tidy",
    "return mt.profile(lambda: mt.tidy(lambda: layer(x, w))): the profile sees the kernels, and tidy leaves only the result.",
)
def _ex07_profile(m: types.ModuleType) -> None:
    x_rows = [[1.0, -2.0], [0.5, 3.0], [-1.0, 1.0]]
    w_rows = [[0.5, -1.0, 2.0, 0.0], [1.0, 0.25, -0.5, 1.5]]
    x, w = tensor(x_rows), tensor(w_rows)
    info = _fn(m, "profile_layer")(x, w)
    if not isinstance(info, ProfileInfo):
        raise _Fail(f"profile_layer(x, w) returned {type(info).__name__} {info!r:.60}, not what mt.profile returns.")
    if info.kernel_names != ["matmul", "relu", "sum"]:
        raise _Fail(f"the profile saw the kernels {info.kernel_names}, expected ['matmul', 'relu', 'sum'] (one call of layer).")
    if info.new_tensors != 1:
        raise _Fail(f"the profile reports new_tensors={info.new_tensors}, expected 1: only layer's result should survive.")
    value = _tensor(info.result, "the profiled function", ())
    want = math.fsum(max(0.0, a * w_rows[0][j] + b * w_rows[1][j]) for a, b in x_rows for j in range(4))
    _expect_values(value.data_sync(), [want], "info.result")


@_check(
    _EX07,
    "extra_peak_bytes measures the peak above what was alive",
    "profile(fn).peak_bytes counts every live tensor; subtract mt.memory().num_bytes measured just before.",
)
def _ex07_peak(m: types.ModuleType) -> None:
    peak = _fn(m, "extra_peak_bytes")
    fns: list[tuple[str, Callable[[], object]]] = [
        ("a tidy with two 1000-entry temporaries", lambda: tidy(lambda: (ones((1000,)) * 2.0).sum())),
        ("a function leaking one 100-entry tensor", lambda: zeros((100,))),
        ("a function doing nothing", lambda: None),
    ]
    for label, fn in fns:
        before = memory().num_bytes
        peak_total = profile(fn).peak_bytes
        want = peak_total - before
        got = peak(fn)
        if isinstance(got, bool) or not isinstance(got, int):
            raise _Fail(f"extra_peak_bytes(fn) returned {type(got).__name__} {got!r:.60}, expected an int.")
        if got != want:
            raise _Fail(
                f"extra_peak_bytes({label}) = {got}, expected {want}: while fn ran, memory peaked at "
                f"{peak_total} bytes, and {before} of them were alive before it started."
            )


# -- loading and running ---------------------------------------------------------------------

_counter = itertools.count(1)


def _exercise_name(tree: ast.Module) -> str | None:
    """The literal ``EXERCISE = "..."`` of a parsed file, or None."""
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        named = any(isinstance(t, ast.Name) and t.id == "EXERCISE" for t in targets)
        if named and isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return None


def _where(err: BaseException, path: Path) -> str:
    """' (file.py:12 in f)' for the innermost frame of the student's file, or ''."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == str(path)]
    if isinstance(err, SyntaxError) and err.filename == str(path) and err.lineno is not None:
        return f" ({path.name}:{err.lineno})"
    if not frames:
        return ""
    f = frames[-1]
    return f" ({path.name}:{f.lineno} in {f.name})"


def _message(err: BaseException, limit: int = 12) -> list[str]:
    text = str(err) if not isinstance(err, SyntaxError) else (err.msg or "invalid syntax")
    lines = text.splitlines() or [""]
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more lines)"]
    return lines


def _run_check(check: Check, module: types.ModuleType, path: Path) -> tuple[str, list[str]]:
    """Run one check in its own context and tidy scope; return (status, detail lines)."""

    def run() -> None:
        _runtime.run_in_scope(f"grade: {check.name}", lambda: check.run(module))

    try:
        contextvars.copy_context().run(run)
    except _Fail as fail:
        return "FAIL", [*str(fail).splitlines(), f"hint: {check.hint}"]
    except NotImplementedError as err:
        todo = " ".join(str(err).split()) or "a function still raises NotImplementedError"
        return "TODO", [f"not done yet: {todo}{_where(err, path)}"]
    except (Exception, SystemExit) as err:  # a student's bug must never crash the grader
        origin = "your code" if _where(err, path) else "the check"
        head = f"{origin} raised {type(err).__name__}{_where(err, path)}:"
        return "FAIL", [head, *("  " + line for line in _message(err)), f"hint: {check.hint}"]
    return "PASS", []


def _usage(out: TextIO, what: str, hint: str) -> int:
    print(f"grade: {what}", file=out)
    print(f"  hint: {hint}", file=out)
    return 2


def _starter_hint(name: str) -> str:
    stem = Path(name).stem
    if stem in EXERCISES:
        return f"the starter is tutorials/exercises/{stem}.py: python -m microtape grade tutorials/exercises/{stem}.py"
    return "pass the path of your exercise file, e.g. python -m microtape grade tutorials/exercises/ex04_softplus_vjp.py"


def grade(path: str | Path, out: TextIO | None = None) -> int:
    """Grade one exercise file; print a line per check; return the exit code.

    The file names its exercise with ``EXERCISE = "exNN_..."`` (every starter
    does). Each check prints ``PASS``, ``FAIL`` (what went wrong, with the
    values, and a hint) or ``TODO`` (a ``NotImplementedError`` still in the
    file); a summary line follows. Errors in the student's code are reported,
    never raised. The file is loaded under a fresh module name that is removed
    from ``sys.modules`` afterwards, and tensors and variables made while
    grading are disposed.

    Args:
        path: The exercise file.
        out: Where to print the report (standard output by default).

    Returns:
        0 if every check passes, 1 if one fails or the file cannot run, 2 if
        the file is missing or does not name a known exercise.

    Examples:
        >>> import io
        >>> from microtape.grader import SOLUTIONS_DIR, grade
        >>> report = io.StringIO()
        >>> grade(SOLUTIONS_DIR / "ex04_softplus_vjp.py", out=report)
        0
        >>> print(report.getvalue().splitlines()[-1])
        ex04_softplus_vjp: all 5 checks passed.
        >>> grade("no/such/exercise.py", out=report)
        2
    """
    stream = out if out is not None else sys.stdout
    given = Path(path)
    if not given.is_file():
        what = "is a directory, not a file" if given.is_dir() else "no such file"
        return _usage(stream, f"{str(given)!r}: {what}.", _starter_hint(str(given)))
    file = given.resolve()
    try:
        source = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return _usage(stream, f"cannot read {str(given)!r}: {err}.", "save the exercise as a UTF-8 text file.")
    try:
        tree = ast.parse(source, filename=str(file))
    except SyntaxError as err:  # the file cannot even be parsed: a student error, not a usage error
        print(f"grading {given}:", file=stream)
        print(f"  FAIL  {given} does not parse: SyntaxError{_where(err, file)}: {err.msg}", file=stream)
        if err.text:
            print(f"          {err.text.rstrip()}", file=stream)
        print("        hint: fix the line shown (or the one before it), then grade again.", file=stream)
        return 1
    name = _exercise_name(tree)
    known = ", ".join(EXERCISES)
    if name is None:
        return _usage(
            stream,
            f"{str(given)!r} does not say which exercise it is: it has no line EXERCISE = \"...\".",
            f'every starter file sets it, e.g. EXERCISE = "ex04_softplus_vjp"; known exercises: {known}.',
        )
    exercise = EXERCISES.get(name)
    if exercise is None:
        close = difflib.get_close_matches(name, list(EXERCISES), n=1)
        did_you_mean = f"did you mean {close[0]!r}? " if close else ""
        return _usage(stream, f"unknown exercise EXERCISE = {name!r} in {str(given)!r}.", f"{did_you_mean}known exercises: {known}.")
    result = contextvars.copy_context().run(_grade_exercise, exercise, given, file, source, stream)
    assert isinstance(result, int)
    return result


def _grade_exercise(exercise: Exercise, given: Path, file: Path, source: str, out: TextIO) -> int:
    """Load the file and run the checks, all inside one tidy scope (run in a copied context)."""
    print(f"grading {given}: {exercise.name} (chapter {exercise.chapter}: {exercise.title})", file=out)
    module_name = f"_microtape_exercise_{file.stem}_{next(_counter)}"
    module = types.ModuleType(module_name)
    module.__file__ = str(file)
    variables_before = set(VARIABLES.keys())
    sys.modules[module_name] = module  # dataclasses and typing look modules up while the file runs

    def load_and_check() -> list[str]:
        try:
            exec(compile(source, str(file), "exec"), module.__dict__)  # noqa: S102 - running the student's file is the point
        except BaseException as err:
            if isinstance(err, KeyboardInterrupt):
                raise
            print(f"  FAIL  loading the file: {type(err).__name__}{_where(err, file)}:", file=out)
            for line in _message(err):
                print(f"          {line}", file=out)
            print("        hint: the file must run top to bottom without errors; "
                  "keep module-level code to definitions and constants.", file=out)
            return ["load"]
        statuses = []
        for check in exercise.checks:
            status, lines = _run_check(check, module, file)
            statuses.append(status)
            print(f"  {status:<4}  {check.name}", file=out)
            for line in lines:
                print(f"        {line}", file=out)
        return statuses

    try:
        statuses = _runtime.run_in_scope(f"grade {file.name}", load_and_check)
    finally:
        sys.modules.pop(module_name, None)
        module.__dict__.clear()  # break the module <-> function cycles so its tensors and variables go now
        for var_name, var in list(VARIABLES.items()):
            if var_name not in variables_before:
                var.dispose()
    assert isinstance(statuses, list)
    if statuses == ["load"]:
        print(f"{exercise.name}: could not load the file; 0 of {len(exercise.checks)} checks ran.", file=out)
        return 1
    passed, failed, todo = (statuses.count(s) for s in ("PASS", "FAIL", "TODO"))
    if passed == len(statuses):
        print(f"{exercise.name}: all {passed} checks passed.", file=out)
        return 0
    parts = [f"{passed} of {len(statuses)} checks passed"]
    if failed:
        parts.append(f"{failed} failed")
    if todo:
        parts.append(f"{todo} not done yet")
    print(f"{exercise.name}: " + ", ".join(parts) + ". Fix the lines marked FAIL and TODO, then grade again.", file=out)
    return 1
