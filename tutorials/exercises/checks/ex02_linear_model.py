"""Checks of ex02_linear_model: ``variable_grads`` on the linear model, inside ``tidy``.

The references are the loss as the task defines it (the mean squared error),
in plain Python, and its slopes by the five-point stencil (exact for a
quadratic); the tensors a call leaves alive are counted where it runs.
"""

from __future__ import annotations

import math
import types

from microtape import scalar, variable
from microtape.exercise import Exercise, Fail, close, derivative, expect_values, fn, leaks, number, observe, off_by, rng, tensor_of

EXERCISE = Exercise("ex02_linear_model", chapter=2, title="Automatic gradients: variable_grads on the linear model, inside tidy", minutes=15)
XS = [1.0, 2.0, 3.0, 4.0]
YS = [1.0, 3.0, 5.0, 7.0]
FIXED = ((0.5, 0.0), (2.0, -1.0), (-1.0, 3.0))


def loss_plain(w: float, b: float) -> float:
    """The mean squared error of w·x + b on the data, in plain Python (the task's definition)."""
    return math.fsum((w * x + b - y) ** 2 for x, y in zip(XS, YS)) / len(XS)


def slopes(w: float, b: float) -> tuple[float, float]:
    """(dL/dw, dL/db) from the loss itself (the stencil is exact for a quadratic)."""
    return derivative(lambda v: loss_plain(v, b), w), derivative(lambda v: loss_plain(w, v), b)


def random_wb() -> tuple[float, float]:
    return round(rng().uniform(-3.0, 3.0), 3), round(rng().uniform(-3.0, 3.0), 3)


def loss_fails(m: types.ModuleType) -> bool:
    """Whether the file's loss_fn is wrong at one of the fixed points its own check always uses."""
    for w, b in FIXED:
        got = tensor_of(fn(m, "loss_fn")(scalar(w), scalar(b)), f"loss_fn({w}, {b})", ())
        if not close(got.item(), loss_plain(w, b)):
            return True
    return False


@EXERCISE.check(
    "loss_fn is the mean squared error",
    hints=(
        "the loss of chapter 2's linear model: the mean squared error of the prediction",
        "prediction minus target, squared entry by entry, then averaged (the mean, not the sum)",
        "the prediction is w times X plus b; the targets are Y",
    ),
)
def loss(m: types.ModuleType) -> None:
    loss_fn = fn(m, "loss_fn")
    for w, b in (*FIXED, random_wb()):
        got = tensor_of(loss_fn(scalar(w), scalar(b)), f"loss_fn({w}, {b})", ())
        want = loss_plain(w, b)
        hint = "that is the sum of the squared errors: take the mean" if close(got.item(), 4.0 * want) else None
        expect_values(got.data_sync(), [want], f"loss_fn(w={w}, b={b})", hint=hint)


@EXERCISE.check(
    "gradients gives dL/dw and dL/db",
    hints=(
        "chapter 2: variable_grads differentiates a loss with respect to every trainable variable it uses",
        "mt.variable_grads takes a function of no arguments and returns (value, grads); grads is indexed by variable",
        "return the two gradients as a pair, dw first",
    ),
)
def grads(m: types.ModuleType) -> None:
    gradients = fn(m, "gradients")
    for w0, b0 in ((0.5, 0.0), (1.0, 2.0), random_wb()):
        w, b = variable(w0), variable(b0)
        with observe(calls=True) as seen:
            result = gradients(w, b)
        if not (type(result) is tuple and len(result) == 2):
            raise Fail(f"gradients(w, b) returned {type(result).__name__}, expected a pair (dw, db).")
        dw = tensor_of(result[0], "gradients(w, b)[0]", ())
        db = tensor_of(result[1], "gradients(w, b)[1]", ())
        want_dw, want_db = slopes(w0, b0)
        if close(dw.item(), want_dw) and close(db.item(), want_db):
            continue
        if seen.calls.get("loss_fn") and loss_fails(m):
            raise Fail("gradients uses your loss_fn(), which fails its check above: fix loss_fn() first.")
        hint = "dw and db are swapped: return dw first" if close(dw.item(), want_db) and close(db.item(), want_dw) else None
        expect_values([dw.item(), db.item()], [want_dw, want_db], f"(dL/dw, dL/db) at w={w0}, b={b0}", hint=hint)


@EXERCISE.check(
    "gradients leaves only dw and db alive",
    hints=(
        "chapter 2: tidy disposes every tensor a function made, except what it returns",
        "the loss value and every intermediate must go; only the two gradients may stay",
        "put the work in a small function that returns the two gradients and hand it to mt.tidy",
    ),
)
def grads_tidy(m: types.ModuleType) -> None:
    gradients = fn(m, "gradients")
    w, b = variable(scalar(0.5)), variable(scalar(0.0))
    with observe() as seen:
        gradients(w, b)
    if seen.tensors != 2:
        raise Fail(f"one call of gradients(w, b) left {seen.tensors} new tensor(s) alive, expected exactly 2 (dw and db).")


def sgd_reference(steps: int, lr: float) -> tuple[float, float]:
    """w and b after ``steps`` plain SGD steps from 0, by hand."""
    w = b = 0.0
    for _ in range(steps):
        dw, db = slopes(w, b)
        w, b = w - lr * dw, b - lr * db
    return w, b


@EXERCISE.check(
    "train fits y = 2x - 1",
    hints=(
        "plain SGD: start from w = b = 0 and repeat the update `steps` times",
        "each step: get the gradients, then move each variable in place against its gradient times lr",
        "return the final values as Python floats (.item()), w first",
    ),
)
def train(m: types.ModuleType) -> None:
    train_fn = fn(m, "train")
    for steps, lr in ((500, 0.05), (rng().randint(2, 6), round(rng().uniform(0.01, 0.05), 3))):
        with observe(calls=True) as seen:
            result = train_fn(steps, lr)
        if not (type(result) is tuple and len(result) == 2):
            raise Fail(f"train({steps}, {lr}) returned {type(result).__name__}, expected a pair of floats (w, b).")
        w, b = number(result[0], "train(...)[0]"), number(result[1], "train(...)[1]")
        want_w, want_b = sgd_reference(steps, lr)
        if close(w, want_w, 1e-4) and close(b, want_b, 1e-4):
            continue
        if seen.calls.get("loss_fn") and loss_fails(m):
            raise Fail("train uses your loss_fn(), which fails its check above: fix loss_fn() first.")
        if not close(w, want_w, 1e-4):
            raise Fail(f"the w that train({steps}, {lr}) returns is not that of {steps} SGD steps from w = b = 0: {off_by(w, want_w)}.")
        raise Fail(f"the b that train({steps}, {lr}) returns is not that of {steps} SGD steps from w = b = 0: {off_by(b, want_b)}.")


@EXERCISE.check(
    "train leaves no tensors behind",
    hints=(
        "memory must stay flat while training: every step inside tidy",
        "make the variables from plain numbers; a variable made from a tensor copies it and leaves the tensor alive",
        "the grader names the op and line of every tensor left alive: look at those lines",
    ),
)
def train_flat(m: types.ModuleType) -> None:
    train_fn = fn(m, "train")
    with observe() as seen:
        train_fn(20, 0.05)
    if seen.tensors != 0:
        raise Fail(
            f"train(20, 0.05) left {seen.tensors} tensor(s) alive; memory must stay flat.\n"
            f"  another train(20, 0.05) leaves {leaks(lambda: train_fn(20, 0.05))}"
        )
