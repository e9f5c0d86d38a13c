"""Checks of ex08e_masked_softmax: a softmax over kept entries that stays finite when a row keeps nothing.

Values and gradients are computed in plain Python: the softmax over each
row's kept entries, and its vector-Jacobian product p ⊙ (u − ⟨p, u⟩).
"""

from __future__ import annotations

import math
import types

from microtape import GradientTape, tensor
from microtape.exercise import Exercise, Fail, expect_values, rng, tensor_fn, tensor_of

EXERCISE = Exercise("ex08e_masked_softmax", chapter=8, title="Casebook: a softmax over a row masked completely", kind="debug", minutes=10)
Rows = list[list[float]]


def softmax_rows(scores: Rows, keep: Rows) -> Rows:
    out = []
    for row, ks in zip(scores, keep):
        kept = [v for v, k in zip(row, ks) if k > 0.5]
        if not kept:
            out.append([0.0] * len(row))
            continue
        top = max(kept)
        total = math.fsum(math.exp(v - top) for v in kept)
        out.append([math.exp(v - top) / total if k > 0.5 else 0.0 for v, k in zip(row, ks)])
    return out


def cases() -> list[tuple[Rows, Rows]]:
    """The fixed case and a random one; each has a row that keeps nothing."""
    rows, cols = rng().randint(2, 4), rng().randint(2, 5)
    scores = [[round(rng().uniform(-5.0, 5.0), 2) for _ in range(cols)] for _ in range(rows)]
    keep = [[float(rng().random() < 0.6) for _ in range(cols)] for _ in range(rows)]
    keep[rng().randrange(rows)] = [0.0] * cols
    return [([[0.3, 1.2, -0.4], [2.0, -1.0, 0.5]], [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]), (scores, keep)]


@EXERCISE.check(
    "masked_softmax keeps its values: a softmax over the kept entries, 0 elsewhere",
    hints=(
        "the values were right to begin with: only the gradient is wrong",
        "a masked entry is 0, and a row that keeps nothing is all 0",
        "the kept entries of a row add up to 1",
    ),
)
def values(m: types.ModuleType) -> None:
    ms = tensor_fn(m, "masked_softmax")
    for scores, keep in cases():
        got = tensor_of(ms(tensor(scores), tensor(keep)), f"masked_softmax({scores}, {keep})", (len(scores), len(scores[0]))).data_sync()
        want = [v for row in softmax_rows(scores, keep) for v in row]
        expect_values(got, want, f"masked_softmax({scores}, keep = {keep})", 1e-12)


@EXERCISE.check(
    "its gradient is finite and right, also in a row that keeps nothing",
    hints=(
        "chapter 8, case 6: run the gradient under mt.detect_anomaly(); softmax subtracts each row's maximum",
        "in a row that is all -inf, the maximum is -inf, and -inf - (-inf) is NaN",
        "mask with a large negative number instead of -inf, and keep the where that puts 0 at the masked entries",
    ),
)
def gradient(m: types.ModuleType) -> None:
    ms = tensor_fn(m, "masked_softmax")
    for scores, keep in cases():
        u = [[round(rng().uniform(-1.0, 1.0), 2) for _ in row] for row in scores]
        s = tensor(scores)
        with GradientTape() as tape:
            tape.watch(s)
            total = (ms(s, tensor(keep)) * tensor(u)).sum()
        g = tape.gradient(total, s)
        if g is None:
            raise Fail("the gradient of masked_softmax with respect to the scores is None: the path from the scores is cut.")
        got = tensor_of(g, "d sum(masked_softmax * u) / d scores", s.shape).data_sync()
        bad = [v for v in got if not math.isfinite(v)]
        if bad:
            raise Fail(f"the gradient of masked_softmax at the scores {scores}, keep = {keep}, has {len(bad)} non-finite entries (the first is {bad[0]}).")
        want = []
        for p, us in zip(softmax_rows(scores, keep), u):
            dot = math.fsum(a * b for a, b in zip(p, us))
            want += [a * (b - dot) for a, b in zip(p, us)]
        expect_values(got, want, f"the gradient of masked_softmax at the scores {scores}, keep = {keep}", 1e-9)
