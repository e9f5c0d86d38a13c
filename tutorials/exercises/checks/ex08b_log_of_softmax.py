"""Checks of ex08b_log_of_softmax: a cross-entropy on logits with no epsilon.

The reference loss and gradient are plain ``math``: log-sum-exp with the
row's maximum taken out, and softmax from it.
"""

from __future__ import annotations

import math
import types

from microtape import GradientTape, tensor
from microtape.exercise import Exercise, Fail, expect_values, rng, tensor_fn, tensor_of

EXERCISE = Exercise("ex08b_log_of_softmax", chapter=8, title="Casebook: the log of a softmax, without an epsilon", kind="debug", minutes=10)
Rows = list[list[float]]


def lse(row: list[float]) -> float:
    top = max(row)
    return top + math.log(math.fsum(math.exp(v - top) for v in row))


def reference(labels: Rows, z: Rows) -> float:
    return math.fsum(-math.fsum(y * (v - lse(row)) for y, v in zip(ys, row)) for ys, row in zip(labels, z)) / len(z)


def cases() -> list[tuple[Rows, Rows]]:
    """The fixed case and a random one: one-hot labels, logits up to about ±1000."""
    rows, cols = rng().randint(1, 4), rng().randint(2, 5)
    labels = []
    for _ in range(rows):
        hot = rng().randrange(cols)
        labels.append([1.0 if k == hot else 0.0 for k in range(cols)])
    z = [[round(rng().uniform(-1.0, 1.0) * rng().choice((1.0, 50.0, 1000.0)), 2) for _ in range(cols)] for _ in range(rows)]
    return [([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], [[1000.0, 0.0, -1000.0], [0.5, -0.5, 2.0]]), (labels, z)]


@EXERCISE.check(
    "cross_entropy is exact, for logits near and far apart",
    hints=(
        "chapter 8, case 5: log(softmax(z)) takes the log of a probability that can round to 0",
        "an epsilon inside the log caps the loss: the far-apart row should cost about 1000",
        "log(softmax(z)) = z - logsumexp(z): microtape has an op that computes it so",
    ),
)
def value(m: types.ModuleType) -> None:
    ce = tensor_fn(m, "cross_entropy")
    for labels, z in cases():
        got = tensor_of(ce(tensor(labels), tensor(z)), f"cross_entropy(labels, {z})", ()).data_sync()
        if not math.isfinite(got[0]):
            raise Fail(f"cross_entropy(labels, {z}) = {got[0]}: a log of 0 (or an overflow) on the way.")
        expect_values(got, [reference(labels, z)], f"cross_entropy({labels}, {z})", 1e-9)


@EXERCISE.check(
    "its gradient is (softmax(z) - labels) / rows",
    hints=(
        "the gradient must not vanish where the model is most wrong",
        "the epsilon makes the log's slope tiny where the probability rounds to 0, and the gradient goes with it",
        "differentiate z - logsumexp(z), not log of the probabilities: the tape does it for you",
    ),
)
def gradient(m: types.ModuleType) -> None:
    ce = tensor_fn(m, "cross_entropy")
    for labels, z in cases():
        zt = tensor(z)
        with GradientTape() as tape:
            tape.watch(zt)
            loss = ce(tensor(labels), zt)
        g = tape.gradient(loss, zt)
        if g is None:
            raise Fail("the gradient of cross_entropy with respect to the logits is None: the path from the logits is cut.")
        got = tensor_of(g, "d cross_entropy / d z", zt.shape).data_sync()
        want = [(math.exp(v - lse(row)) - y) / len(z) for ys, row in zip(labels, z) for y, v in zip(ys, row)]
        expect_values(got, want, f"the gradient of cross_entropy at the logits {z}", 1e-9)
