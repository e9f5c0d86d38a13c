"""Checks of ex09b_stable_loss: a binary cross-entropy rewritten to be stable on logits.

The reference loss and gradient are plain ``math``: each entry's loss is
computed as the mean of y·(−log σ(z)) + (1 − y)·(−log(1 − σ(z))) with both
logs taken on the side where they do not round (``math.log1p`` of a number
at most 1), and the gradient as (σ(z) − y) / n with σ evaluated without overflow.
"""

from __future__ import annotations

import math
import types

from microtape import GradientTape, tensor
from microtape.exercise import Exercise, Fail, expect_values, rng, tensor_fn, tensor_of

EXERCISE = Exercise("ex09b_stable_loss", chapter=9, title="Numerics: a binary cross-entropy stable on logits", kind="debug", minutes=10)
LABELS = [0.0, 1.0, 0.0, 1.0, 0.5]
LOGITS = [2.0, -3.0, 40.0, -800.0, 1000.0]


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def minus_log_sigmoid(z: float) -> float:
    """−log σ(z) = log(1 + e^(−z)), without overflow."""
    return math.log1p(math.exp(-z)) if z >= 0 else -z + math.log1p(math.exp(z))


def reference(labels: list[float], logits: list[float]) -> float:
    return math.fsum(y * minus_log_sigmoid(z) + (1.0 - y) * minus_log_sigmoid(-z) for y, z in zip(labels, logits)) / len(logits)


def cases() -> list[tuple[list[float], list[float]]]:
    """The fixed case and a random one, with some large logits (never exactly 0: bce has no kink, but a relu form does)."""
    n = rng().randint(2, 6)
    labels = [round(rng().uniform(0.0, 1.0), 2) for _ in range(n)]
    logits = [round(rng().choice((-1.0, 1.0)) * rng().uniform(0.1, 1.0) * rng().choice((1.0, 30.0, 900.0)), 2) for _ in range(n)]
    return [(LABELS, LOGITS), (labels, logits)]


@EXERCISE.check(
    "bce is exact for small and large logits",
    hints=(
        "chapter 9: 1 - sigmoid(z) rounds to 0.0 above z ≈ 37, and log(0.0) is -inf",
        "-log σ(z) = log(1 + e^(-z)) and -log(1 - σ(z)) = log(1 + e^z): both are softplus",
        "rewrite the loss per entry as softplus(z) - z·y, with a softplus that never overflows",
    ),
)
def value(m: types.ModuleType) -> None:
    bce = tensor_fn(m, "bce")
    for labels, logits in cases():
        got = tensor_of(bce(tensor(labels), tensor(logits)), f"bce(labels, {logits})", ()).data_sync()
        if not math.isfinite(got[0]):
            raise Fail(f"bce(labels, {logits}) = {got[0]}: an overflow (or a log of 0) on the way.")
        expect_values(got, [reference(labels, logits)], f"bce({labels}, {logits})", 1e-9)


@EXERCISE.check(
    "its gradient is (sigmoid(z) - labels) / n, finite everywhere",
    hints=(
        "the backward pass must stay finite too: a stable forward made of microtape ops gives a stable gradient",
        "Python floats (math.log, .item()) are invisible to the tape; use microtape ops on the tensor logits",
        "the derivative of softplus(z) - z·y is σ(z) - y, averaged over the n entries",
    ),
)
def gradient(m: types.ModuleType) -> None:
    bce = tensor_fn(m, "bce")
    for labels, logits in cases():
        z = tensor(logits)
        with GradientTape() as tape:
            tape.watch(z)
            total = bce(tensor(labels), z)
        dz = tape.gradient(total, z)
        if dz is None:
            raise Fail("the gradient of bce with respect to the logits is None: the path from the logits is cut.")
        got = tensor_of(dz, "d bce / d logits", z.shape).data_sync()
        bad = [v for v in got if not math.isfinite(v)]
        if bad:
            raise Fail(f"the gradient of bce at the logits {logits} has {len(bad)} non-finite entries (the first is {bad[0]}).")
        want = [(sigmoid(v) - y) / len(logits) for y, v in zip(labels, logits)]
        expect_values(got, want, f"the gradient of bce at the logits {logits}", 1e-9)
