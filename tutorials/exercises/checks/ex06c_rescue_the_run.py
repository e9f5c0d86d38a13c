"""Checks of ex06c_rescue_the_run: an exploding recurrent net, rescued (by clipping, or any other correct repair).

The model is compared with the starter's in plain Python; a rescued run is
judged by what it must do (start where it started, stay finite, fall), not by
one way of doing it.
"""

from __future__ import annotations

import math
import types

from microtape import scalar
from microtape.exercise import Exercise, Fail, close, expect_values, fmt, fn, number, off_by, rng, tensor_fn, tensor_of
from microtape.engine.tensor import format_number

EXERCISE = Exercise("ex06c_rescue_the_run", chapter=6, title="In practice: rescue an exploding recurrent net", kind="debug", minutes=10)
XS = [math.cos(0.3 * t) + 0.5 for t in range(30)]


def unroll(w: float, u: float) -> float:
    h = 0.0
    for x in XS:
        h = w * h + u * x
    return h


def loss(w: float, u: float) -> float:
    return (unroll(w, u) - unroll(0.8, 0.4)) ** 2


@EXERCISE.check(
    "the model is unchanged",
    hints=(
        "repair the training, not the model",
        "loss_fn must still run h ← w·h + u·x over XS and square the error of the last h",
        "undo changes to loss_fn, XS and TARGET",
    ),
)
def model(m: types.ModuleType) -> None:
    loss_fn = tensor_fn(m, "loss_fn")
    drawn = (round(rng().uniform(0.3, 1.1), 3), round(rng().uniform(-1.0, 1.0), 3))
    for w, u in ((1.2, 0.3), (0.5, -0.2), (0.9, 1.0), drawn):
        got = tensor_of(loss_fn(scalar(w), scalar(u)), f"loss_fn({w}, {u})", ())
        expect_values(got.data_sync(), [loss(w, u)], f"loss_fn(w={w}, u={u})", 1e-9)


@EXERCISE.check(
    "train(150, 0.05) converges from the same start",
    hints=(
        "chapter 6: a gradient norm that explodes throws one step far away; the monitor shows it",
        "bound the length of every step without changing its direction, between computing the gradients and applying them",
        "clip the gradients (chapter 6 shows three ways) before opt.apply_gradients",
    ),
)
def converges(m: types.ModuleType) -> None:
    train_fn = fn(m, "train")
    steps, lr = rng().randint(3, 8), round(rng().uniform(0.02, 0.08), 3)
    short = train_fn(steps, lr)  # a short run at a random rate: finite, from the same start, falling
    if type(short) is not list or len(short) != steps:
        raise Fail(f"train({steps}, {lr}) returned {type(short).__name__}, expected a list of {steps} losses.")
    floats = [number(v, f"train(...) loss {i}") for i, v in enumerate(short)]
    if not close(floats[0], loss(1.2, 0.3), 1e-9):
        raise Fail(f"the first loss of train({steps}, {lr}) is not the loss at the starting point (1.2, 0.3): {off_by(floats[0], loss(1.2, 0.3))}; keep the start.")
    bad = [i for i, v in enumerate(floats) if not math.isfinite(v)]
    if bad:
        raise Fail(f"train({steps}, {lr}): the loss became {floats[bad[0]]} at step {bad[0]}: the run still explodes.")
    if not floats[-1] < floats[0]:
        raise Fail(f"train({steps}, {lr}): the loss went from {format_number(floats[0])} to {format_number(floats[-1])}; a rescued run falls.")
    got = train_fn(150, 0.05)
    if type(got) is not list or len(got) != 150:
        raise Fail(f"train(150, 0.05) returned {type(got).__name__}, expected a list of 150 losses.")
    losses = [number(v, f"train(...) loss {i}") for i, v in enumerate(got)]
    start = loss(1.2, 0.3)
    if not close(losses[0], start, 1e-9):
        raise Fail(f"the first loss is not the loss at the starting point (1.2, 0.3): {off_by(losses[0], start)}; keep the start.")
    bad = [i for i, v in enumerate(losses) if not math.isfinite(v)]
    if bad:
        raise Fail(f"the loss became {losses[bad[0]]} at step {bad[0]} (losses: {fmt(losses[: bad[0] + 1])}): the run still explodes.")
    best = min(losses[-10:])
    if not best < losses[0] * 1e-3:
        raise Fail(f"train(150, 0.05): first loss {format_number(losses[0])}, best of the last 10 {format_number(best)}; expected a drop of more than 1000x.")
