"""Checks of ex04e_wrong_factor: read the wrong factor off explain_gradient's table, then fix it."""

from __future__ import annotations

import math
import types
from collections.abc import Callable

from microtape import check_grads, tensor
from microtape.exercise import Exercise, Fail, expect_values, fmt, fn, gradcheck_failure, ignores_dy, number, rng, tensor_fn, tensor_of

EXERCISE = Exercise(
    "ex04e_wrong_factor", chapter=4, title="Checking gradients: read the wrong factor off explain_gradient", kind="debug", minutes=10
)
X_VALUES = [0.5, 1.5, -2.0]
"""The starter's X: entry 2 is the one the statement explains."""
SEEN = 3.0 * X_VALUES[2]
"""What the starter's cube VJP puts on the path at X[2]."""
OPS = ("cube", "softsign")


def points() -> list[list[float]]:
    """X, other fixed points, and random ones."""
    return [X_VALUES, [-1.2, -0.3, 0.0, 0.8], [round(rng().uniform(-2.0, 2.0), 3) for _ in range(4)]]


@EXERCISE.check(
    "WRONG_OP names the op whose factor is wrong",
    hints=(
        "chapter 4, 'Why is the gradient wrong?': explain_gradient lists each step's op and local derivative",
        "print mt.explain_gradient(energy, [X], index=2) and compare each factor with the derivative of its op",
        "the table has four steps; the last one is the op that reads x first",
    ),
)
def wrong_op(m: types.ModuleType) -> None:
    answer = getattr(m, "WRONG_OP", None)
    if not isinstance(answer, str):
        raise Fail(f"WRONG_OP is {answer!r}, expected a str such as 'custom_grad(some_op)'.")
    if answer.strip().upper().startswith("TODO"):
        raise NotImplementedError(answer)
    if answer.strip() not in ("custom_grad(cube)", "cube"):
        raise Fail(f"WRONG_OP = {answer!r}, but the factor of that step is the true derivative of its op; another step is wrong.")


@EXERCISE.check(
    "WRONG_FACTOR is the factor the table shows for that op",
    hints=(
        "copy the number from the 'local derivative' column of the wrong step",
        "it is the factor the buggy VJP gives, before your fix, at X[2]",
        "the table shows it with four significant digits; the exact value is what the buggy VJP computes at x = X[2]",
    ),
)
def wrong_factor(m: types.ModuleType) -> None:
    got = number(getattr(m, "WRONG_FACTOR", None), "WRONG_FACTOR")
    if got == 0.0:
        raise NotImplementedError("WRONG_FACTOR is still 0.0")
    if math.isclose(got, 3.0 * X_VALUES[2] ** 2, rel_tol=1e-3):
        raise Fail(f"WRONG_FACTOR = {fmt(got)} is the right derivative of that op at X[2]; the table showed what the wrong VJP gives.")
    if not math.isclose(got, SEEN, rel_tol=1e-3):
        raise Fail(f"WRONG_FACTOR = {fmt(got)} is not the local derivative the table shows for the wrong step.")


@EXERCISE.check(
    "energy's gradient agrees with finite differences",
    hints=(
        "fix the VJP of the op whose factor is wrong (chapter 4)",
        "differentiate that op's forward value again and compare with its VJP",
        "the power rule: the derivative of x to the n is n times x to the n - 1",
    ),
)
def gradient(m: types.ModuleType) -> None:
    for p in points():
        report = check_grads(tensor_fn(m, "energy"), [tensor(p)])
        if not report.ok:
            raise Fail(gradcheck_failure(report, f"energy at {p}", ["x"], m))
    for name in OPS:
        for p in points():
            report = check_grads(tensor_fn(m, name), [tensor(p)])
            if not report.ok:
                hint = "did you multiply by dy?" if ignores_dy(tensor_fn(m, name), [tensor(p)]) else None
                raise Fail(gradcheck_failure(report, f"{name} at {p}", ["x"], m), hint)


@EXERCISE.check(
    "the forward values are unchanged",
    hints=(
        "fix the gradient, not the value",
        "energy must still compute the sum of 2·softsign(x³)",
        "undo changes to the forward value of each custom op",
    ),
)
def forward(m: types.ModuleType) -> None:
    refs: dict[str, Callable[[float], float]] = {"cube": lambda v: v**3, "softsign": lambda v: v / (1.0 + abs(v))}
    for p in points():
        x = tensor(p)
        for name, ref in refs.items():
            got = tensor_of(fn(m, name)(x), f"{name}(x)", x.shape)
            expect_values(got.data_sync(), [ref(v) for v in p], f"{name}({fmt(p)})")
        total = tensor_of(fn(m, "energy")(x), "energy(x)", ())
        expect_values(total.data_sync(), [math.fsum(2.0 * refs["softsign"](v**3) for v in p)], f"energy({fmt(p)})")
