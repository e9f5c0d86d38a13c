"""Checks of ex04c_broadcast_vjp: a VJP must have its input's shape (sum over broadcast axes) and the right sign.

The forward is compared with x - b in plain Python; the VJP with finite
differences of the student's own forward; the ops are counted where center runs.
"""

from __future__ import annotations

import types

from microtape import MicrotapeError, check_grads, grads, tensor
from microtape.exercise import Exercise, Fail, expect_values, fn, gradcheck_failure, ignores_dy, observe, rng, tensor_fn, tensor_of

EXERCISE = Exercise(
    "ex04c_broadcast_vjp", chapter=4, title="Checking gradients: a VJP with the wrong shape, then the wrong sign", kind="debug", minutes=10
)
XS = [[0.3, -1.2, 2.0], [1.1, 0.4, -0.7], [-0.5, 0.9, 1.3], [0.8, -0.1, 0.6]]
BS = [0.2, -0.6, 1.5]


def cases() -> list[tuple[list[list[float]], list[float]]]:
    """The fixed x and b, and random ones of a random size."""
    rows, cols = rng().randint(2, 5), rng().randint(2, 4)
    x = [[round(rng().uniform(-2.0, 2.0), 3) for _ in range(cols)] for _ in range(rows)]
    return [(XS, BS), (x, [round(rng().uniform(-2.0, 2.0), 3) for _ in range(cols)])]


def shape_error(m: types.ModuleType, x: list[list[float]], b: list[float]) -> str | None:
    """The error computing center's gradient raises, if any (a VJP of the wrong shape)."""
    center = tensor_fn(m, "center")
    try:
        grads(lambda x, b: center(x, b).sum())([tensor(x), tensor(b)])
    except MicrotapeError as err:
        return f"{type(err).__name__}: {str(err).splitlines()[0]}"
    return None


@EXERCISE.check(
    "center still computes x - b",
    hints=(
        "fix the gradient, not the value",
        "center(x, b) must return x - b with b broadcast over the rows",
        "undo changes to the forward value",
    ),
)
def forward(m: types.ModuleType) -> None:
    for xs, bs in cases():
        got = tensor_of(fn(m, "center")(tensor(xs), tensor(bs)), "center(x, b)", (len(xs), len(bs)))
        expect_values(got.data_sync(), [v - b for row in xs for v, b in zip(row, bs)], f"center(x, b) with x of shape {(len(xs), len(bs))}")


@EXERCISE.check(
    "center is one custom_grad op",
    hints=(
        "the exercise is the hand-written VJP: keep @mt.custom_grad",
        "a tape should record a single op named custom_grad(center)",
        "keep center's signature: it takes x and b and returns (value, grad_fn)",
    ),
)
def is_custom(m: types.ModuleType) -> None:
    with observe(ops=True) as seen:
        fn(m, "center")(tensor(XS), tensor(BS))
    names = seen.ops
    if len(names) != 1 or not names[0].startswith("custom_grad("):
        raise Fail(f"the tape recorded {names}, expected one op named 'custom_grad(...)'.")


@EXERCISE.check(
    "the VJP agrees with finite differences",
    hints=(
        "chapter 4: a VJP returns one gradient per input, with that input's shape, and dy times the local derivative, sign included",
        "b was broadcast over the rows, so its gradient adds up the rows of its contribution; then compare the sign with d(x - b)/db",
        "reduce over axis 0 for b; the derivative of x - b with respect to b is -1",
    ),
)
def vjp(m: types.ModuleType) -> None:
    center = tensor_fn(m, "center")
    for xs, bs in cases():
        error = shape_error(m, xs, bs)
        if error is not None:
            raise Fail(
                f"the gradient of center(x, b) cannot be computed: {error}",
                "b's gradient must have b's shape: add up the rows its contribution came from",
            )
        report = check_grads(center, [tensor(xs), tensor(bs)])
        if not report.ok:
            b_wrong = all(r.input == 1 for r in report.failures)
            signs = [r.analytic * r.numeric < 0 for r in report.failures if r.analytic and r.numeric]
            if ignores_dy(center, [tensor(xs), tensor(bs)]):
                hint = "did you multiply by dy? Each gradient is built from dy"
            elif b_wrong and signs and all(signs):
                hint = "b's gradient has the wrong sign: what is the derivative of x - b with respect to b?"
            else:
                hint = None
            raise Fail(gradcheck_failure(report, f"center(x, b) with x of shape {(len(xs), len(bs))}", ["x", "b"], m), hint)


@EXERCISE.check(
    "the model's gradient agrees with finite differences",
    hints=(
        "once center's VJP is right, the model that uses it is right too",
        "check model(X, B) with the gradient checker after fixing center",
        "the gradient for b is zero when b is the column means of x",
    ),
)
def model(m: types.ModuleType) -> None:
    try:
        vjp(m)
    except Fail:
        raise Fail("model uses your center(), whose VJP fails its check above: fix center() first.") from None
    for xs, bs in cases():
        report = check_grads(tensor_fn(m, "model"), [tensor(xs), tensor(bs)])
        if not report.ok:
            raise Fail(gradcheck_failure(report, "model(x, b)", ["x", "b"], m))
