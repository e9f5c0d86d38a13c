"""Checks of ex02b_item_cuts_the_graph: a Python float in the middle of a model cuts the gradient.

The references are the model as the starter defines it, in plain Python, and
its slopes by the five-point stencil; whether the gradient reaches w is asked
of a tape, and the student's gradient is compared with finite differences of
the student's own loss.
"""

from __future__ import annotations

import math
import types

from microtape import GradientTape, check_grads, scalar
from microtape.exercise import Exercise, Fail, close, derivative, expect_values, fn, gradcheck_failure, number, observe, off_by, rng, tensor_fn, tensor_of

EXERCISE = Exercise(
    "ex02b_item_cuts_the_graph", chapter=2, title="Automatic gradients: find the gradient that never reaches w", kind="debug", minutes=15
)
A = 2.0
XS = [-1.0, 0.0, 1.0, 2.0, 3.0]
YS = [A * math.tanh(0.6) * x + 0.5 for x in XS]


def loss_plain(w: float, b: float) -> float:
    """The loss of the model A·tanh(w)·x + b on the data, in plain Python (the starter's model)."""
    slope = A * math.tanh(w)
    return math.fsum((slope * x + b - y) ** 2 for x, y in zip(XS, YS)) / len(XS)


def random_wb() -> tuple[float, float]:
    return round(rng().uniform(-1.5, 1.5), 3), round(rng().uniform(-1.5, 1.5), 3)


def gradient_cut(m: types.ModuleType) -> bool:
    """Whether no recorded op connects w to the file's loss (the check "the gradient reaches w" then fails)."""
    w, b = scalar(0.3), scalar(-0.2)
    with GradientTape() as tape:
        tape.watch(w)
        loss = tensor_fn(m, "loss_fn")(w, b)
    return tape.gradient(loss, w) is None


@EXERCISE.check(
    "the loss has the same values",
    hints=(
        "repair the gradient without changing the model: same loss at every w and b",
        "the model is A·tanh(w)·x + b and the loss the mean squared error on X, Y",
        "compare loss_fn(w, b) before and after your change at a few points",
    ),
)
def values(m: types.ModuleType) -> None:
    loss_fn = fn(m, "loss_fn")
    for w, b in ((0.0, 0.0), (0.3, -0.2), (-1.0, 1.5), random_wb()):
        got = tensor_of(loss_fn(scalar(w), scalar(b)), f"loss_fn({w}, {b})", ())
        expect_values(got.data_sync(), [loss_plain(w, b)], f"loss_fn(w={w}, b={b})")


@EXERCISE.check(
    "the gradient reaches w",
    hints=(
        "chapter 2: autodiff sees microtape ops only; a Python number on the way is a constant to it",
        "look for the place where w is read out as a float (.item(), float(), data_sync) and fed to math",
        "every function of w on the way to the loss must be a microtape op on the tensor w",
    ),
)
def reaches_w(m: types.ModuleType) -> None:
    loss_fn = tensor_fn(m, "loss_fn")
    for w0, b0 in ((0.3, -0.2), random_wb()):
        w, b = scalar(w0), scalar(b0)
        with GradientTape() as tape:
            tape.watch(w)
            loss = loss_fn(w, b)
        if tape.gradient(loss, w) is None:
            raise Fail("tape.gradient(loss_fn(w, b), w) is None: no recorded op connects w to the loss.")
        report = check_grads(loss_fn, [w, b])
        if not report.ok:
            raise Fail(gradcheck_failure(report, f"loss_fn(w={w0}, b={b0})", ["w", "b"], m))


@EXERCISE.check(
    "train fits w and b",
    hints=(
        "once the gradient reaches w, the given training loop fits both variables",
        "keep train as it is: plain SGD from w = b = 0",
        "train(200, 0.1) should end near w = 0.6, b = 0.5, where the data came from",
    ),
)
def train(m: types.ModuleType) -> None:
    train_fn = fn(m, "train")
    for steps, lr in ((200, 0.1), (rng().randint(2, 6), round(rng().uniform(0.02, 0.1), 3))):
        with observe(calls=True) as seen:
            result = train_fn(steps, lr)
        if not (type(result) is tuple and len(result) == 2):
            raise Fail(f"train({steps}, {lr}) returned {type(result).__name__}, expected a pair of floats (w, b).")
        w, b = number(result[0], "train(...)[0]"), number(result[1], "train(...)[1]")
        want_w = want_b = 0.0
        for _ in range(steps):
            dw = derivative(lambda v: loss_plain(v, want_b), want_w)
            db = derivative(lambda v: loss_plain(want_w, v), want_b)
            want_w, want_b = want_w - lr * dw, want_b - lr * db
        for label, got, want in (("w", w, want_w), ("b", b, want_b)):
            if close(got, want, 1e-5):
                continue
            if seen.calls.get("loss_fn") and gradient_cut(m):
                raise Fail("train uses your loss_fn(), whose gradient does not reach w (the check above): fix that first.")
            raise Fail(f"the {label} that train({steps}, {lr}) returns is not that of {steps} SGD steps from 0: {off_by(got, want)}.")
