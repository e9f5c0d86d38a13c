"""Checks of ex02_linear_model: ``variable_grads`` on the linear model, inside ``tidy``."""

from __future__ import annotations

import math
import types

from microtape import Tensor, Variable, memory, scalar, tensor, tidy, variable, variable_grads
from microtape.exercise import Exercise, Fail, close, depends_on, expect_values, fn, leaks, number, off_by, rng, tensor_of

EXERCISE = Exercise("ex02_linear_model", chapter=2, title="Automatic gradients: variable_grads on the linear model, inside tidy", minutes=15)
XS = [1.0, 2.0, 3.0, 4.0]
YS = [1.0, 3.0, 5.0, 7.0]


def linear(w: float, b: float) -> tuple[float, float, float]:
    """Loss, dL/dw and dL/db of the mean squared error, by hand."""
    errors = [w * x + b - y for x, y in zip(XS, YS)]
    n = len(errors)
    loss = math.fsum(e * e for e in errors) / n
    dw = math.fsum(2.0 * e * x for e, x in zip(errors, XS)) / n
    db = math.fsum(2.0 * e for e in errors) / n
    return loss, dw, db


def random_wb() -> tuple[float, float]:
    return round(rng().uniform(-3.0, 3.0), 3), round(rng().uniform(-3.0, 3.0), 3)


def right_loss(w: Tensor, b: Tensor) -> Tensor:
    """A correct loss_fn, to see whether a failure comes from the student's."""
    return tidy(lambda: ((tensor(XS) * w + b - tensor(YS)) ** 2).mean())


def right_gradients(w: Variable, b: Variable) -> tuple[Tensor, Tensor]:
    """A correct gradients, to see whether a failure comes from the student's."""

    def step() -> tuple[Tensor, Tensor]:
        _, grads = variable_grads(lambda: right_loss(w, b))
        return grads[w], grads[b]

    return tidy(step)


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
    for w, b in ((0.5, 0.0), (2.0, -1.0), (-1.0, 3.0), random_wb()):
        got = tensor_of(loss_fn(scalar(w), scalar(b)), f"loss_fn({w}, {b})", ())
        want = linear(w, b)[0]
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
    cases = [(0.5, 0.0), (1.0, 2.0), random_wb()]

    def run() -> None:
        for w0, b0 in cases:
            w, b = variable(w0), variable(b0)
            result = gradients(w, b)
            if not (type(result) is tuple and len(result) == 2):
                raise Fail(f"gradients(w, b) returned {type(result).__name__}, expected a pair (dw, db).")
            dw = tensor_of(result[0], "gradients(w, b)[0]", ())
            db = tensor_of(result[1], "gradients(w, b)[1]", ())
            _, want_dw, want_db = linear(w0, b0)
            hint = "dw and db are swapped: return dw first" if close(dw.item(), want_db) and close(db.item(), want_dw) else None
            expect_values([dw.item(), db.item()], [want_dw, want_db], f"(dL/dw, dL/db) at w={w0}, b={b0}", hint=hint)

    try:
        run()
    except Fail:
        depends_on(m, "loss_fn", right_loss, run, "gradients")
        raise


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
    before = memory().num_tensors
    gradients(w, b)
    left = memory().num_tensors - before
    if left != 2:
        raise Fail(f"one call of gradients(w, b) left {left} new tensor(s) alive, expected exactly 2 (dw and db).")


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
    cases = [(500, 0.05), (rng().randint(2, 40), round(rng().uniform(0.01, 0.05), 3))]

    def run() -> None:
        for steps, lr in cases:
            result = train_fn(steps, lr)
            if not (type(result) is tuple and len(result) == 2):
                raise Fail(f"train({steps}, {lr}) returned {type(result).__name__}, expected a pair of floats (w, b).")
            w, b = number(result[0], "train(...)[0]"), number(result[1], "train(...)[1]")
            want_w, want_b = 0.0, 0.0
            for _ in range(steps):
                _, dw, db = linear(want_w, want_b)
                want_w, want_b = want_w - lr * dw, want_b - lr * db
            if not close(w, want_w, 1e-4):
                raise Fail(f"the w that train({steps}, {lr}) returns is not that of {steps} SGD steps from w = b = 0: {off_by(w, want_w)}.")
            if not close(b, want_b, 1e-4):
                raise Fail(f"the b that train({steps}, {lr}) returns is not that of {steps} SGD steps from w = b = 0: {off_by(b, want_b)}.")

    try:
        run()
    except Fail:
        depends_on(m, "gradients", right_gradients, run, "train")
        raise


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
    before = memory().num_tensors
    train_fn(20, 0.05)
    left = memory().num_tensors - before
    if left != 0:
        raise Fail(
            f"train(20, 0.05) left {left} tensor(s) alive; memory must stay flat.\n"
            f"  another train(20, 0.05) leaves {leaks(lambda: train_fn(20, 0.05))}"
        )
