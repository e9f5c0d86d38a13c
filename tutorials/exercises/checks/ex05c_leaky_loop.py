"""Checks of ex05c_leaky_loop: find what a training loop leaks with ``leak_check``, and stop it.

The losses are compared with plain SGD in plain Python; what fit leaves alive
is counted where it runs.
"""

from __future__ import annotations

import math
import types

from microtape import tensor, variable
from microtape.exercise import Exercise, Fail, expect_values, fn, leaks, number, observe, rng, tensor_of

EXERCISE = Exercise(
    "ex05c_leaky_loop", chapter=5, title="The computation graph: a training loop that leaks, found with leak_check", kind="debug", minutes=10
)


def reference(m: types.ModuleType, w: list[float], steps: int, lr: float) -> tuple[list[float], list[float]]:
    """Losses and final weights of plain SGD on mean((X @ w - Y)²), by hand, from the file's X and Y."""
    x, y = tensor_of(getattr(m, "X", None), "X"), tensor_of(getattr(m, "Y", None), "Y")
    rows, cols = x.shape
    xd, yd = x.data_sync(), y.data_sync()
    losses = []
    for _ in range(steps):
        errors = [math.fsum(xd[i * cols + k] * w[k] for k in range(cols)) - yd[i] for i in range(rows)]
        losses.append(math.fsum(e * e for e in errors) / rows)
        grad = [math.fsum(2.0 * errors[i] * xd[i * cols + k] for i in range(rows)) / rows for k in range(cols)]
        w = [wk - lr * gk for wk, gk in zip(w, grad)]
    return losses, w


@EXERCISE.check(
    "fit trains and returns the losses as floats",
    hints=(
        "keep the maths of the training step: only memory is wrong",
        "fit returns one loss per step, measured before the update, as Python floats",
        "compare your losses with the starter's on the same steps",
    ),
)
def trains(m: types.ModuleType) -> None:
    start = [round(rng().uniform(-1.0, 1.0), 3) for _ in range(2)]
    for w0, steps, lr in (([0.0, 0.0], 4, 0.1), (start, rng().randint(1, 8), round(rng().uniform(0.01, 0.1), 3))):
        w = variable(tensor([[w0[0]], [w0[1]]]))
        got = fn(m, "fit")(w, steps, lr)
        if type(got) is not list or len(got) != steps:
            raise Fail(f"fit(w, {steps}, {lr}) returned {type(got).__name__}, expected a list of {steps} floats.")
        losses = [number(v, f"fit(...) loss {i}") for i, v in enumerate(got)]
        want, want_w = reference(m, w0, steps, lr)
        expect_values(losses, want, f"the losses of fit(w={w0}, {steps}, {lr})", 1e-9)
        expect_values(w.data_sync(), want_w, f"w after fit(w={w0}, {steps}, {lr})", 1e-9)


@EXERCISE.check(
    "fit leaves no tensors behind",
    hints=(
        "chapter 5: mt.leak_check() names every op and line whose tensors outlive a block",
        "tidy disposes only what is made inside it and not returned; look at what is made outside and what is returned",
        "a Python float needs no tensor, and a float is what the history should hold",
    ),
)
def flat(m: types.ModuleType) -> None:
    fit = fn(m, "fit")
    w = variable(tensor([[0.0], [0.0]]))
    for steps in (1, 6):
        with observe() as seen:
            fit(w, steps, 0.05)
        left = seen.tensors
        if left != 0:
            raise Fail(
                f"fit(w, {steps}, 0.05) left {left} tensor(s) alive; training must leave memory flat.\n"
                f"  another fit(w, 3, 0.05) leaves {leaks(lambda: fit(w, 3, 0.05))}"
            )
