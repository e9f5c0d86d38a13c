"""Checks of ex05_stop_the_leak: a correct training step that leaks, repaired with ``tidy``.

The tensors a call leaves alive are counted where it runs (``observe``), and
the leaks named by op and line; the step's maths is the starter's, in plain Python.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable

from microtape import tensor, variable
from microtape.exercise import Exercise, Fail, expect_values, fn, leaks, number, observe, rng, tensor_of

EXERCISE = Exercise("ex05_stop_the_leak", chapter=5, title="The computation graph: stop a leak with tidy", kind="debug", minutes=10)


def random_w() -> list[float]:
    return [round(rng().uniform(-2.0, 2.0), 3) for _ in range(2)]


def reference(m: types.ModuleType, w: list[float]) -> tuple[float, list[float]]:
    """Loss and gradient of mean((X @ w - Y)²) by hand, from the file's X and Y."""
    x, y = tensor_of(getattr(m, "X", None), "X"), tensor_of(getattr(m, "Y", None), "Y")
    rows, cols = x.shape
    xd, yd = x.data_sync(), y.data_sync()
    errors = [math.fsum(xd[i * cols + k] * w[k] for k in range(cols)) - yd[i] for i in range(rows)]
    loss = math.fsum(e * e for e in errors) / rows
    grad = [math.fsum(2.0 * errors[i] * xd[i * cols + k] for i in range(rows)) / rows for k in range(cols)]
    return loss, grad


def flat(name: str, call: Callable[[], object]) -> None:
    """Fail with the leaking ops and lines unless 5 calls leave no tensor alive."""
    counts = []
    with observe() as seen:
        for _ in range(5):
            call()
            counts.append(seen.tensors)
    if any(counts):
        raise Fail(
            f"after each of 5 calls of {name}, {counts} more tensors were alive than before the first: "
            f"{counts[-1] / len(counts):.3g} tensor(s) leak per call.\n  one more call leaves {leaks(call)}"
        )


@EXERCISE.check(
    "train_step makes a correct SGD step",
    hints=(
        "keep the maths of the step as it was: only memory is wrong",
        "the step returns the loss before the update, as a float, and moves w against its gradient",
        "compare with the starter: the loss, the gradient and the update must be the same",
    ),
)
def step(m: types.ModuleType) -> None:
    for start, lr in (([0.5, -0.25], 0.1), (random_w(), round(rng().uniform(0.01, 0.2), 3))):
        w = variable(tensor([[start[0]], [start[1]]]))
        loss = number(fn(m, "train_step")(w, lr), f"train_step(w, {lr})")
        want_loss, grad = reference(m, start)
        expect_values([loss], [want_loss], f"the loss train_step(w={start}, lr={lr}) returned")
        expect_values(w.data_sync(), [start[0] - lr * grad[0], start[1] - lr * grad[1]], f"w after one train_step(w={start}, lr={lr})")


@EXERCISE.check(
    "evaluate returns the loss",
    hints=(
        "evaluate gives the loss at w as a Python float",
        "keep calling predict and mse as the starter does",
        "read the value out of the scalar tensor as a float",
    ),
)
def evaluate(m: types.ModuleType) -> None:
    for w in ([1.0, 0.5], random_w()):
        got = number(fn(m, "evaluate")(tensor([[w[0]], [w[1]]])), "evaluate(w)")
        expect_values([got], [reference(m, w)[0]], f"evaluate(w={w})")


@EXERCISE.check(
    "train_step leaves no tensors behind",
    hints=(
        "chapter 5: tidy disposes everything a function made except what it returns",
        "run the whole body of the step inside tidy, and let it return a Python float, not a tensor",
        "mt.leak_check names the ops and lines that leak; every one of them must be inside the tidy",
    ),
)
def step_flat(m: types.ModuleType) -> None:
    w = variable(tensor([[0.5], [-0.25]]))
    train_step = fn(m, "train_step")
    flat("train_step", lambda: train_step(w, 0.01))


@EXERCISE.check(
    "evaluate leaves no tensors behind",
    hints=(
        "the helpers predict and mse make tensors too, and nobody disposes them",
        "tidy also cleans up what the functions it calls make",
        "the float you return is not a tensor, so nothing needs to survive the tidy",
    ),
)
def evaluate_flat(m: types.ModuleType) -> None:
    w = tensor([[1.0], [0.5]])
    evaluate_fn = fn(m, "evaluate")
    flat("evaluate", lambda: evaluate_fn(w))
