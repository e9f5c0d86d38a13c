"""Checks of ex04e_wrong_factor: read the wrong factor off explain_gradient's table, then fix it.

The op to name and the factor to copy are kept as hashes (``digest``), not
written here. An op's name is accepted as the table prints it
(``custom_grad(some_op)[2]``) or without its index, quotes or ``custom_grad(...)``;
the factor, rounded to the four significant digits the table shows. The right
derivative, to tell a student who typed it, is the slope of the op's forward
(the five-point stencil), not a formula.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable

from microtape import check_grads, tensor
from microtape.exercise import (
    Exercise, Fail, child_fn, derivative, digest, expect_values, fmt, fn, gradcheck_failure, ignores_dy, number, op_name, rng, tensor_fn,
    tensor_of,
)

EXERCISE = Exercise(
    "ex04e_wrong_factor", chapter=4, title="Checking gradients: read the wrong factor off explain_gradient", kind="debug", minutes=10
)
X_VALUES = [0.5, 1.5, -2.0]
"""The starter's X: entry 2 is the one the statement explains."""
WRONG_OP_DIGESTS = ("4f3c4172a4fe308cebc840da665171f534849b1fca101eaf635d68fb453393db",)
"""The hash of the op whose factor is wrong in the starter's table (see ``digest``)."""
WRONG_FACTOR_DIGESTS = ("03b26944890929ff751653acb2f2af795cee38f937f379f52ed654a68ce91216",)
"""The hash of the factor that table shows for it, as ``f"{factor:.4g}"``."""
OPS = ("cube", "softsign")
TABLE = child_fn(
    "lambda energy, x: [s.op + ('[' + ', '.join(map(str, s.entry)) + ']' if s.entry else '')"
    " for p in mt.explain_gradient(energy, [x], index=2).paths for s in p.steps]"
)
"""The op names of the file's explain_gradient table at X, entry 2, as it prints them (run where the file runs)."""


def table_names(m: types.ModuleType) -> list[str]:
    """The names the table of the file's energy prints (empty when it cannot be made)."""
    try:
        names = TABLE(fn(m, "energy"), tensor(X_VALUES))
    except Exception:  # noqa: BLE001 - a broken energy: the other checks say so
        return []
    return [str(n) for n in names] if isinstance(names, list) else []


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
    if digest(op_name(answer)) in WRONG_OP_DIGESTS:
        return
    names = table_names(m)
    if op_name(answer) not in {op_name(n) for n in names}:
        listed = f": the table's names are {', '.join(names)}" if names else ""
        raise Fail(f"WRONG_OP = {answer!r} is not an op of this table{listed}.")
    raise Fail(f"WRONG_OP = {answer!r}: in the starter's table that step's factor is the true derivative of its op; another step's is wrong.")


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
    if digest(f"{got:.4g}") in WRONG_FACTOR_DIGESTS:
        return
    if math.isclose(got, derivative(lambda v: v**3, X_VALUES[2]), rel_tol=1e-3):
        raise Fail(f"WRONG_FACTOR = {fmt(got)} is the right derivative of x³ at X[2]; the table showed what the wrong VJP gives.")
    raise Fail(f"WRONG_FACTOR = {fmt(got)} is not the local derivative the table shows for the wrong step (rounded as the table rounds it).")


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
