"""Checks of ex04d_nan_hunt: find the op that overflows with ``detect_anomaly``, make it stable."""

from __future__ import annotations

import math
import types

from microtape import GradientTape, tensor
from microtape.exercise import Exercise, Fail, expect_values, fmt, fn, number, tensor_fn, tensor_of

EXERCISE = Exercise("ex04d_nan_hunt", chapter=4, title="Checking gradients: a NaN hunt with detect_anomaly", kind="debug")
ROWS = [[1.0, 2.0, 3.0], [1000.0, 999.0, 0.0], [-1000.0, -1001.0, -999.0], [750.0, -750.0, 20.0]]


def lse(row: list[float]) -> float:
    top = max(row)
    return top + math.log(math.fsum(math.exp(v - top) for v in row))


@EXERCISE.check(
    "log_sum_exp is exact for small and large inputs",
    hints=(
        "chapter 4: run a training step inside mt.detect_anomaly() and read which op first made Inf or NaN",
        "exp overflows above about 709; log(Σ eᶻ) can be computed without ever taking exp of a large number",
        "log(Σ eᶻ) = m + log(Σ eᶻ⁻ᵐ) for any m; pick m so that every exponent is at most 0",
    ),
)
def values(m: types.ModuleType) -> None:
    got = tensor_of(fn(m, "log_sum_exp")(tensor(ROWS)), "log_sum_exp(z)", (len(ROWS), 1))
    values_ = got.data_sync()
    for row, value in zip(ROWS, values_):
        if not math.isfinite(value):
            raise Fail(f"log_sum_exp({fmt(row)}) = {value}: an overflow (or underflow) on the way.")
    expect_values(values_, [lse(row) for row in ROWS], f"log_sum_exp of the rows {ROWS}", 1e-9)


@EXERCISE.check(
    "its gradient is the softmax, finite everywhere",
    hints=(
        "the backward pass must not meet Inf either: detect_anomaly watches it too",
        "the derivative of log(Σ eᶻ) is the softmax of z; a stable forward gives a stable gradient",
        "write log_sum_exp with microtape ops on the tensor z, so the tape can differentiate it",
    ),
)
def gradient(m: types.ModuleType) -> None:
    z = tensor(ROWS)
    log_sum_exp = tensor_fn(m, "log_sum_exp")
    with GradientTape() as tape:
        tape.watch(z)
        total = log_sum_exp(z).sum()
    dz = tape.gradient(total, z)
    if dz is None:
        raise Fail("the gradient of sum(log_sum_exp(z)) with respect to z is None: the path from z is cut.")
    got = tensor_of(dz, "d sum(log_sum_exp(z)) / dz", z.shape).data_sync()
    want = [math.exp(v - lse(row)) for row in ROWS for v in row]
    bad = [v for v in got if not math.isfinite(v)]
    if bad:
        raise Fail(f"the gradient of log_sum_exp has {len(bad)} non-finite entries ({bad[0]}): {fmt(got)}.")
    expect_values(got, want, "the gradient of sum(log_sum_exp(z)) (the softmax of each row)", 1e-9)


@EXERCISE.check(
    "train runs to the end with a finite loss",
    hints=(
        "once log_sum_exp is stable, the given training loop works",
        "keep loss_fn and train as they are",
        "train(100, 0.5) should return 100 finite losses, the last one below the first",
    ),
)
def train(m: types.ModuleType) -> None:
    losses = fn(m, "train")(100, 0.5)
    if not isinstance(losses, list) or len(losses) != 100:
        raise Fail(f"train(100, 0.5) returned {type(losses).__name__} {losses!r:.60}, expected a list of 100 losses.")
    floats = [number(v, f"train(...) loss {i}") for i, v in enumerate(losses)]
    bad = [i for i, v in enumerate(floats) if not math.isfinite(v)]
    if bad:
        raise Fail(f"the loss became {floats[bad[0]]} at step {bad[0]} (losses: {fmt(floats[: bad[0] + 1])}).")
    if not floats[-1] < floats[0]:
        raise Fail(f"the loss went from {fmt(floats[0])} to {fmt(floats[-1])}: it should fall.")
