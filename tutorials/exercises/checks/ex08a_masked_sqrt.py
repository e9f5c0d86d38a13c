"""Checks of ex08a_masked_sqrt: a NaN gradient through a ``where``, repaired.

Values and gradients are compared with ``math.sqrt`` and 1/(2√x) in plain
Python; no microtape code of the solution is here.
"""

from __future__ import annotations

import math
import types

from microtape import GradientTape, tensor
from microtape.exercise import Exercise, Fail, expect_values, rng, tensor_fn, tensor_of

EXERCISE = Exercise("ex08a_masked_sqrt", chapter=8, title="Casebook: a where that hides a square root", kind="debug", minutes=10)


def inputs() -> list[list[float]]:
    """The fixed input and a random one, with negative entries and an exact 0."""
    drawn = [round(rng().uniform(-5.0, 5.0), 2) for _ in range(rng().randint(2, 6))]
    return [[-4.0, 0.0, 2.25, 9.0], [*drawn, 0.0]]


@EXERCISE.check(
    "rooted keeps its values: √x where x > 0, 0 elsewhere",
    hints=(
        "the values were right to begin with: only the gradient is wrong",
        "do not add a small number to x, and do not take the absolute value: the values would change",
        "compare rooted(X) with the starter's rooted(X): they must be equal",
    ),
)
def values(m: types.ModuleType) -> None:
    rooted = tensor_fn(m, "rooted")
    for xs in inputs():
        got = tensor_of(rooted(tensor(xs)), f"rooted({xs})", (len(xs),)).data_sync()
        expect_values(got, [math.sqrt(v) if v > 0 else 0.0 for v in xs], f"rooted({xs})", 1e-12)


@EXERCISE.check(
    "the gradient of rooted is finite: 1/(2√x) where x > 0, 0 elsewhere",
    hints=(
        "chapter 8, case 1: run the gradient under mt.detect_anomaly() and read which op makes the NaN, and in which pass",
        "where computes both branches: the branch it throws away still runs, and its NaN comes back as 0 · NaN",
        "give sqrt an input that is safe where its result is thrown away (a second where), and keep the outer where",
    ),
)
def gradient(m: types.ModuleType) -> None:
    rooted = tensor_fn(m, "rooted")
    for xs in inputs():
        x = tensor(xs)
        with GradientTape() as tape:
            tape.watch(x)
            total = rooted(x).sum()
        g = tape.gradient(total, x)
        if g is None:
            raise Fail("the gradient of rooted(x).sum() is None: the path from x is cut.")
        got = tensor_of(g, "d sum(rooted(x)) / dx", (len(xs),)).data_sync()
        bad = [(v, d) for v, d in zip(xs, got) if not math.isfinite(d)]
        if bad:
            raise Fail(f"the gradient of rooted at {xs} is {bad[0][1]} at x = {bad[0][0]}: not finite.")
        expect_values(got, [0.5 / math.sqrt(v) if v > 0 else 0.0 for v in xs], f"the gradient of rooted at {xs}", 1e-9)
