"""Checks of ex08f_optimizer_state: a training run that leaves the optimizer's state behind, found with leak_check.

The losses are compared with momentum worked by hand in plain Python (as
TF.js: accumulation = 0.9 · accumulation + gradient, w -= lr · accumulation);
what train leaves alive is counted where it runs.
"""

from __future__ import annotations

import gc
import math
import types

from microtape.exercise import Exercise, Fail, expect_values, fn, number, observe, rng, tensor_of

EXERCISE = Exercise("ex08f_optimizer_state", chapter=8, title="Casebook: optimizer state that outlives the model", kind="debug", minutes=10)


def reference(m: types.ModuleType, steps: int) -> list[float]:
    """Losses of momentum on mean((X @ w - Y)²) from w = 0, by hand, from the file's X, Y and LR."""
    xt, yt = tensor_of(getattr(m, "X", None), "X"), tensor_of(getattr(m, "Y", None), "Y")
    lr = number(getattr(m, "LR", None), "LR")
    rows, cols = xt.shape
    xd, y = xt.data_sync(), yt.data_sync()
    x = [xd[i * cols:(i + 1) * cols] for i in range(rows)]
    w, acc, losses = [0.0] * cols, [0.0] * cols, []
    for _ in range(steps):
        errors = [math.fsum(a * b for a, b in zip(row, w)) - t for row, t in zip(x, y)]
        losses.append(math.fsum(e * e for e in errors) / rows)
        grad = [math.fsum(2.0 * e * row[k] for e, row in zip(errors, x)) / rows for k in range(cols)]
        acc = [0.9 * a + g for a, g in zip(acc, grad)]
        w = [wk - lr * a for wk, a in zip(w, acc)]
    return losses


@EXERCISE.check(
    "train returns the losses of momentum, as floats",
    hints=(
        "keep the maths of the training run: only memory is wrong",
        "train returns one loss per step, measured before the update, as Python floats",
        "compare your losses with the starter's for the same number of steps",
    ),
)
def trains(m: types.ModuleType) -> None:
    train = fn(m, "train")
    for steps in (5, rng().randint(1, 12)):
        got = train(steps)
        if type(got) is not list or len(got) != steps:
            raise Fail(f"train({steps}) returned {type(got).__name__}, expected a list of {steps} floats.")
        losses = [number(v, f"train(...) loss {i}") for i, v in enumerate(got)]
        expect_values(losses, reference(m, steps), f"the losses of train({steps})", 1e-9)


@EXERCISE.check(
    "train leaves no tensors behind, however many times it runs",
    hints=(
        "chapter 8, case 15: run train(3) inside `with mt.leak_check() as report:` and print(report)",
        "the report names what is still alive and who keeps it; tidy and disposing w do not free it",
        "the optimizer keeps state for every variable it has stepped: free that state when the run is over",
    ),
)
def flat(m: types.ModuleType) -> None:
    train = fn(m, "train")
    for runs in (1, 3):
        gc.collect()  # an optimizer of an earlier load of the file, freed during the count, would make it negative
        with observe() as seen:
            for _ in range(runs):
                train(4)
        if seen.tensors != 0:
            raise Fail(f"{runs} call(s) of train(4) left {seen.tensors} tensor(s) alive; training must leave memory flat.")
