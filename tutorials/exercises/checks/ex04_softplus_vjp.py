"""Checks of ex04_softplus_vjp: a hand-written VJP, proven against finite differences.

The forward is compared with log1p(exp(x)) in plain Python (the starter's
given value); the VJP, to the second order, with finite differences of the
student's own forward; the ops softplus records are counted where it runs.
"""

from __future__ import annotations

import math
import types

from microtape import GradCheckReport, check_grads, tensor
from microtape.exercise import Exercise, Fail, expect_values, fn, gradcheck_failure, ignores_dy, observe, rng, tensor_fn, tensor_of

EXERCISE = Exercise(
    "ex04_softplus_vjp", chapter=4, title="Checking gradients: write the VJP of softplus, prove it with check_grads", minutes=10
)
AT = [-3.0, -1.0, 0.0, 0.7, 2.5]


def points() -> list[list[float]]:
    """The fixed points and random ones."""
    return [AT, [round(rng().uniform(-4.0, 4.0), 3) for _ in range(4)]]


@EXERCISE.check(
    "softplus computes log(1 + e^x)",
    hints=(
        "only the gradient is yours to write; the forward value stays as given",
        "softplus(x) must still be log(1 + eˣ) entry by entry",
        "undo changes to the line that computes value",
    ),
)
def forward(m: types.ModuleType) -> None:
    for at in points():
        x = tensor(at)
        got = tensor_of(fn(m, "softplus")(x), "softplus(x)", x.shape)
        expect_values(got.data_sync(), [math.log1p(math.exp(v)) for v in at], f"softplus({at})")


@EXERCISE.check(
    "softplus is one custom_grad op",
    hints=(
        "a custom gradient only counts if the function is a custom_grad op",
        "keep the @mt.custom_grad decorator above softplus",
        "a tape should record exactly one op named custom_grad(softplus)",
    ),
)
def is_custom(m: types.ModuleType) -> None:
    with observe(ops=True) as seen:
        fn(m, "softplus")(tensor(AT))
    names = seen.ops
    if len(names) != 1 or not names[0].startswith("custom_grad("):
        raise Fail(f"the tape recorded {names}, expected one op named 'custom_grad(...)'.")


@EXERCISE.check(
    "the VJP agrees with finite differences",
    hints=(
        "chapter 4: a VJP returns dy times the derivative of the forward value",
        "differentiate log(1 + eˣ) with the chain rule: the outer log gives 1/(1 + eˣ), the inner part gives eˣ",
        "eˣ / (1 + eˣ) is a function chapter 4 uses a lot, and microtape has it as an op",
    ),
)
def first(m: types.ModuleType) -> None:
    softplus = tensor_fn(m, "softplus")
    for at in points():
        report = check_grads(softplus, [tensor(at)])
        if not report.ok:
            hint = "did you multiply by dy? The VJP gives dy times the derivative" if ignores_dy(softplus, [tensor(at)]) else None
            raise Fail(gradcheck_failure(report, f"softplus at {at}", ["x"], m), hint)


@EXERCISE.check(
    "the VJP can be differentiated again",
    hints=(
        "a second derivative differentiates the VJP itself, so the VJP must be made of recorded ops",
        "Python floats (math.exp, .item(), data_sync) are invisible to a tape; use microtape ops on tensors",
        "check your VJP with order=2, as chapter 4 does",
    ),
)
def second(m: types.ModuleType) -> None:
    for at in points():
        report = check_grads(tensor_fn(m, "softplus"), [tensor(at)], order=2)
        if report.ok:
            continue
        if not any(r.order == 2 for r in report.failures):
            raise Fail("the first derivative is already wrong (see the check above): fix that first.")
        raise Fail(gradcheck_failure(report, f"softplus at {at}, order=2", ["x"], m))


@EXERCISE.check(
    "prove() returns a passing order-2 check",
    hints=(
        "prove() returns the report of chapter 4's gradient checker",
        "check softplus at a tensor of at least 3 points, in full mode",
        "ask the checker for order 2 so the second derivative is checked too",
    ),
)
def prove(m: types.ModuleType) -> None:
    report = fn(m, "prove")()
    if type(report) is not GradCheckReport:
        raise Fail(f"prove() returned {type(report).__name__}, not the report of mt.check_grads.")
    if report.order != 2:
        raise Fail(f"prove() checked order={report.order}; the second derivative must be checked too.")
    at = {(r.input, r.index) for r in report.rows if r.order == 1}  # the points the first derivative was checked at
    if report.mode != "full" or len(at) < 3:
        raise Fail(f"prove() checked softplus at {len(at)} point(s) in mode={report.mode!r}; check at least 3 points in full mode.")
    if not report.ok:
        raise Fail(f"prove() returned a failing report: {str(report).splitlines()[0]}")
