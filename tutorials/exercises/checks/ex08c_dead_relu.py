"""Checks of ex08c_dead_relu: read the share of zeros in grad_stats, then take the ReLU off a regression output.

The share is kept as a hash (``digest``); the outputs and the losses are
compared with plain-Python matrix products and gradient descent by hand.
"""

from __future__ import annotations

import math
import types

from microtape import tensor
from microtape.exercise import Exercise, Fail, digest, expect_values, fn, number, rng, tensor_fn, tensor_of

EXERCISE = Exercise("ex08c_dead_relu", chapter=8, title="Casebook: a ReLU on the output layer", kind="debug", minutes=10)

ZERO_SHARE_DIGESTS = ("ad57366865126e55649ecb23ae1d48887544976efea46a48eb5d85a6eeb4d306",)
"""The hash of the share grad_stats reports, written as ``f"{share:g}"`` (see ``digest``)."""


@EXERCISE.check(
    "ZERO_SHARE is the share of zeros grad_stats reports",
    hints=(
        "chapter 8, case 9: print(mt.grad_stats(grads)['w']) after one mt.variable_grads of loss_fn",
        "the column 'zeros' gives the share of entries of the gradient that are exactly 0, in per cent",
        "write that share as a number (no % sign, no quotes)",
    ),
)
def share(m: types.ModuleType) -> None:
    answer = getattr(m, "ZERO_SHARE", None)
    if isinstance(answer, str) and answer.strip().upper().startswith("TODO"):
        raise NotImplementedError(f"ZERO_SHARE = {answer!r}")
    value = number(answer, "ZERO_SHARE")
    if digest(f"{value:g}") not in ZERO_SHARE_DIGESTS:
        raise Fail(f"ZERO_SHARE = {value!r}, but grad_stats reports another share of zeros for w at the start.")


def products(x: list[list[float]], w: list[float]) -> list[float]:
    return [math.fsum(a * b for a, b in zip(row, w)) for row in x]


@EXERCISE.check(
    "predict is linear: its outputs may be negative",
    hints=(
        "a regression output can be any real number; an activation on it limits what the model can say",
        "relu(t) is 0 for every t < 0, and so is its derivative: no gradient flows back through a negative output",
        "return the product of x and w as it is",
    ),
)
def linear(m: types.ModuleType) -> None:
    predict = tensor_fn(m, "predict")
    rows = rng().randint(2, 5)
    x = [[round(rng().uniform(-2.0, 2.0), 2) for _ in range(2)] for _ in range(rows)]
    w = [round(rng().uniform(-1.0, 1.0), 2) for _ in range(2)]
    for xs, ws in (([[1.0, 2.0], [0.5, 1.5]], [-0.5, -0.8]), (x, w)):
        got = tensor_of(predict(tensor(xs), tensor([[v] for v in ws])), f"predict({xs}, {ws})", (len(xs), 1)).data_sync()
        expect_values(got, products(xs, ws), f"predict({xs}, w = {ws})", 1e-12)


def reference(m: types.ModuleType, steps: int, lr: float) -> list[float]:
    """Gradient descent on mean((X w - Y)²) by hand, from the file's X, Y and START."""
    xt, yt, st = tensor_of(getattr(m, "X", None), "X"), tensor_of(getattr(m, "Y", None), "Y"), tensor_of(getattr(m, "START", None), "START")
    cols = xt.shape[1]
    xd = xt.data_sync()
    x = [xd[i:i + cols] for i in range(0, len(xd), cols)]
    y, w = yt.data_sync(), st.data_sync()
    losses = []
    for _ in range(steps):
        errors = [p - t for p, t in zip(products(x, w), y)]
        losses.append(math.fsum(e * e for e in errors) / len(x))
        grad = [math.fsum(2.0 * e * row[k] for e, row in zip(errors, x)) / len(x) for k in range(cols)]
        w = [a - lr * g for a, g in zip(w, grad)]
    return losses


@EXERCISE.check(
    "fit learns: its losses are those of gradient descent, and they fall",
    hints=(
        "once predict is repaired, the given loop works",
        "keep loss_fn and fit as they are",
        "fit(30, 0.1) should return 30 losses, the last one well below the first",
    ),
)
def learns(m: types.ModuleType) -> None:
    fit = fn(m, "fit")
    for steps, lr in ((30, 0.1), (rng().randint(2, 10), round(rng().uniform(0.01, 0.1), 3))):
        got = fit(steps, lr)
        if type(got) is not list or len(got) != steps:
            raise Fail(f"fit({steps}, {lr}) returned {type(got).__name__}, expected a list of {steps} losses.")
        losses = [number(v, f"fit(...) loss {i}") for i, v in enumerate(got)]
        expect_values(losses, reference(m, steps, lr), f"the losses of fit({steps}, {lr})", 1e-9)
