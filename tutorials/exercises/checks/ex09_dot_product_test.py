"""Checks of ex09_dot_product_test: a dot-product test, and the VJP it exposes, fixed.

The two sides of the test are compared with the plain ``math`` value of
uᵀ W diag(1 − tanh²(x)) v for a function the check hands over; a VJP that
ignores ``dy`` (made in the student's process) must make them differ. The
fixed VJP is checked by ``check_grads`` on the whole Jacobian of
``soft_abs``, with the forward compared with √(x² + 1).
"""

from __future__ import annotations

import math
import types

from microtape import check_grads, tensor
from microtape.exercise import Exercise, Fail, child_fn, close, expect_values, fn, gradcheck_failure, ignores_dy, number, rng, tensor_fn, tensor_of

EXERCISE = Exercise(
    "ex09_dot_product_test", chapter=9, title="Numerics: the dot-product test catches a VJP that check_grads passes", kind="debug", minutes=15
)
X_VALUES = [0.5, -1.5, 2.0, 0.1]
"""The starter's X."""


def draw(n: int, low: float = -1.5, high: float = 1.5) -> list[float]:
    return [round(rng().uniform(low, high), 3) for _ in range(n)]


def sides(m: types.ModuleType, f: object, x: list[float], u: list[float], v: list[float], what: str) -> tuple[float, float]:
    got = fn(m, "dot_test")(f, tensor(x), tensor(u), tensor(v))
    if type(got) is not tuple or len(got) != 2:
        raise Fail(f"dot_test(...) returned {type(got).__name__}, expected a tuple of two floats.")
    return number(got[0], f"{what}: the first side"), number(got[1], f"{what}: the second side")


@EXERCISE.check(
    "dot_test returns <u, J v> and <J^T u, v>",
    hints=(
        "chapter 9: forward mode gives J v, reverse mode gives Jᵀu; the test takes an inner product of each",
        "mt.jvp(f, [x], [v]) returns (f(x), J v); the gradient of the sum of f(t) · u with respect to t is Jᵀu",
        "return two Python floats: (u · J v).sum().item() and (Jᵀu · v).sum().item()",
    ),
)
def both_sides(m: types.ModuleType) -> None:
    for rows, cols in ((2, 3), (rng().randint(1, 4), rng().randint(1, 4))):
        w = [draw(cols) for _ in range(rows)]
        x, u, v = draw(cols), draw(rows), draw(cols)
        f = child_fn("lambda t: w @ mt.tanh(t)", w=tensor(w))
        slope = [1.0 - math.tanh(a) ** 2 for a in x]
        want = math.fsum(u[i] * w[i][j] * slope[j] * v[j] for i in range(rows) for j in range(cols))
        left, right = sides(m, f, x, u, v, f"dot_test of W @ tanh(x) at x = {x}")
        expect_values([left, right], [want, want], f"dot_test of W @ tanh(x) at x = {x}, u = {u}, v = {v}", 1e-6)


@EXERCISE.check(
    "dot_test tells a VJP that ignores dy from a right one",
    hints=(
        "the two sides must come from two different computations: one forward (J v), one backward (Jᵀu)",
        "a VJP that ignores dy gives the same Jᵀu for every u, so ⟨Jᵀu, v⟩ cannot follow u",
        "do not compute one side from the other: the test is that they are computed two ways",
    ),
)
def tells_apart(m: types.ModuleType) -> None:
    broken = child_fn("mt.custom_grad(lambda t: (t * t, lambda dy: [2.0 * t]))")
    x = [round(rng().uniform(0.5, 1.5), 3) for _ in range(3)]
    u, v = [2.0, -1.0, 0.5], [round(rng().uniform(0.5, 1.5), 3) for _ in range(3)]
    left, right = sides(m, broken, x, u, v, f"dot_test of x² with a VJP that ignores dy, at x = {x}")
    if close(left, right, 1e-6):
        raise Fail(f"dot_test of x² with a VJP that ignores dy gave {left:.6g} and {right:.6g}, at x = {x}, u = {u}, v = {v}: the two sides must differ there.")


@EXERCISE.check(
    "soft_abs's VJP is right for every dy",
    hints=(
        "run your dot_test on soft_abs at X with random u and v: the two sides disagree",
        "a VJP returns dy times the local derivative; the sum in loss only ever sends dy = 1",
        "keep the forward √(x² + 1) and multiply the slope x / √(x² + 1) by dy",
    ),
)
def fixed(m: types.ModuleType) -> None:
    soft_abs = tensor_fn(m, "soft_abs")
    for at in (X_VALUES, draw(4, -3.0, 3.0)):
        x = tensor(at)
        got = tensor_of(soft_abs(x), "soft_abs(x)", x.shape)
        expect_values(got.data_sync(), [math.sqrt(a * a + 1.0) for a in at], f"soft_abs({at})")
        report = check_grads(soft_abs, [x])
        if not report.ok:
            hint = "did you multiply by dy? The VJP gives dy times the derivative" if ignores_dy(soft_abs, [x]) else None
            raise Fail(gradcheck_failure(report, f"soft_abs at {at}", ["x"], m), hint)
