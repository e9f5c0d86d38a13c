"""Checks of ex03b_unwatched_tensor: watch a plain tensor, ask a tape once (or make it persistent).

Every gradient is compared with finite differences of the file's own model,
with respect to x or to the file's variables W and V (changed for a moment,
then put back).
"""

from __future__ import annotations

import types

from microtape import Tensor, numerical_grad, tensor
from microtape.exercise import Exercise, Fail, expect_values, fmt, fn, rng, tensor_fn, tensor_of

EXERCISE = Exercise(
    "ex03b_unwatched_tensor", chapter=3, title="The tape: a tape that returns None, and a tape asked twice", kind="debug", minutes=10
)
XS = [[0.5, -1.0], [2.0, 0.25], [-0.75, 1.0]]


def batches() -> list[Tensor]:
    """The fixed batch and a random one."""
    rows = [[round(rng().uniform(-2.0, 2.0), 3) for _ in range(2)] for _ in range(rng().randint(2, 5))]
    return [tensor(XS), tensor(rows)]


def numeric(m: types.ModuleType, which: str, x: Tensor) -> list[float]:
    """Finite differences of model(x) with respect to x, W or V (by changing the module's variable)."""
    model = tensor_fn(m, "model")
    if which == "x":
        [g] = numerical_grad(model, [x])
        return g.data_sync()
    var = getattr(m, which)
    original = var.data_sync()
    def f(values: Tensor) -> Tensor:
        var.assign(values)
        return model(x)
    try:
        [g] = numerical_grad(f, [tensor(original).reshape(var.shape)])
    finally:
        var.assign(tensor(original).reshape(var.shape))
    return g.data_sync()


def same_gradient(got: object, m: types.ModuleType, which: str, x: Tensor, what: str) -> None:
    if got is None:
        raise Fail(f"{what} is None: the tape has no record of how the output depends on {which}.")
    shape = x.shape if which == "x" else getattr(m, which).shape
    grad = tensor_of(got, what, shape)
    at = f"at x = {fmt(x.data_sync())}"
    expect_values(grad.data_sync(), numeric(m, which, x), f"{what} {at} (compared with finite differences)", 1e-5)


@EXERCISE.check(
    "input_gradient returns d model / dx",
    hints=(
        "chapter 3: a tape records what happens to variables by itself, and to a plain tensor only when told",
        "x is a plain tensor, not a variable: tell the tape to record it before model(x) runs",
        "the tape has a method for that; call it inside the with-block, before computing y",
    ),
)
def input_grad(m: types.ModuleType) -> None:
    for x in batches():
        same_gradient(fn(m, "input_gradient")(x), m, "x", x, "input_gradient(x)")


@EXERCISE.check(
    "all_gradients returns the gradients for x, W and V",
    hints=(
        "chapter 3: a tape that is not persistent answers one question, then forgets",
        "either ask for all three gradients in a single call, or make the tape persistent",
        "tape.gradient accepts a list of sources and returns a list of gradients",
    ),
)
def all_grads(m: types.ModuleType) -> None:
    for x in batches():
        result = fn(m, "all_gradients")(x)
        if not (isinstance(result, (tuple, list)) and type(result) in (tuple, list) and len(result) == 3):
            raise Fail(f"all_gradients(x) returned {type(result).__name__}, expected (dx, dW, dV).")
        for got, which in zip(result, ("x", "W", "V")):
            same_gradient(got, m, which, x, f"all_gradients(x): d/d{which}")
    for name, expect in (("W", [[0.5, -1.0, 0.25], [1.5, 0.5, -0.5]]), ("V", [[1.0], [-2.0], [0.5]])):
        values = getattr(m, name).data_sync()
        expect_values(values, [v for row in expect for v in row], f"{name} after all_gradients(x) (it must not change: {fmt(values)})")
