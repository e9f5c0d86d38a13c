"""Checks of ex05c_leaky_loop: find what a training loop leaks with ``leak_check``, and stop it."""

from __future__ import annotations

import math
import types

from microtape import memory, tensor, variable
from microtape.exercise import Exercise, Fail, expect_values, fn, leaks, number, tensor_of

EXERCISE = Exercise("ex05c_leaky_loop", chapter=5, title="The computation graph: a training loop that leaks, found with leak_check", kind="debug")


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
    w = variable(tensor([[0.0], [0.0]]))
    got = fn(m, "fit")(w, 4, 0.1)
    if not isinstance(got, list) or len(got) != 4:
        raise Fail(f"fit(w, 4, 0.1) returned {type(got).__name__} {got!r:.60}, expected a list of 4 floats.")
    losses = [number(v, f"fit(...) loss {i}") for i, v in enumerate(got)]
    want, want_w = reference(m, [0.0, 0.0], 4, 0.1)
    expect_values(losses, want, "the losses of fit(w, 4, 0.1)", 1e-9)
    expect_values(w.data_sync(), want_w, "w after fit(w, 4, 0.1)", 1e-9)


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
        before = memory().num_tensors
        fit(w, steps, 0.05)
        left = memory().num_tensors - before
        if left != 0:
            raise Fail(
                f"fit(w, {steps}, 0.05) left {left} tensor(s) alive; training must leave memory flat.\n"
                f"  another fit(w, 3, 0.05) leaves {leaks(lambda: fit(w, 3, 0.05))}"
            )
