"""Checks of ex05b_tidy_too_eager: keep what a ``tidy`` must not dispose, and nothing more.

The z-scores are compared with column statistics in plain Python; what fit
leaves alive is counted where it runs.
"""

from __future__ import annotations

import math
import types

from microtape import Tensor, tensor
from microtape.exercise import Exercise, Fail, expect_values, fn, leaks, observe, rng, tensor_of

EXERCISE = Exercise(
    "ex05b_tidy_too_eager", chapter=5, title="The computation graph: a tidy that disposes a tensor needed later", kind="debug", minutes=10
)
ROWS = [[1.0, 10.0], [3.0, 14.0], [2.0, 9.0], [6.0, 11.0], [3.0, 6.0]]
NEW = [[2.0, 12.0], [0.0, 8.0]]


def column_stats(rows: list[list[float]]) -> tuple[list[float], list[float]]:
    n = len(rows)
    means = [math.fsum(r[j] for r in rows) / n for j in range(len(rows[0]))]
    stds = [math.sqrt(math.fsum((r[j] - means[j]) ** 2 for r in rows) / n) for j in range(len(rows[0]))]
    return means, stds


def scaler(m: types.ModuleType) -> object:
    make = fn(m, "Scaler")
    return make()


def random_rows(n: int, cols: int) -> list[list[float]]:
    return [[round(rng().uniform(-5.0, 20.0), 2) for _ in range(cols)] for _ in range(n)]


@EXERCISE.check(
    "transform works after fit and gives z-scores",
    hints=(
        "chapter 5: tidy disposes every tensor made inside it except what its function returns",
        "the mean and the std are made inside the tidy and stored on self, but not returned; read the DisposedTensorError",
        "let the tidy's function return the two tensors and store what mt.tidy returns (or keep them)",
    ),
)
def works(m: types.ModuleType) -> None:
    cols = rng().randint(2, 4)
    fitted, new = random_rows(rng().randint(3, 7), cols), random_rows(2, cols)
    # measuring leaks records where each tensor is made, so a DisposedTensorError names the line
    with observe(leaks=True):
        for data, later in ((ROWS, NEW), (fitted, new)):
            s = scaler(m)
            fn(s, "fit")(tensor(data))
            means, stds = column_stats(data)
            for label, rows in (("the fitted rows", data), ("new rows", later), ("new rows, a second time", later)):
                got = tensor_of(fn(s, "transform")(tensor(rows)), f"transform({label})", (len(rows), len(data[0])))
                want = [(v - means[j]) / stds[j] for row in rows for j, v in enumerate(row)]
                expect_values(got.data_sync(), want, f"transform({label}) after fit on {len(data)} rows of {len(data[0])} columns", 1e-9)


@EXERCISE.check(
    "fit leaves at most the mean and the std alive",
    hints=(
        "the fix must not bring the leak back: only the two statistics may survive fit",
        "keep tidy around the work; what is returned survives, everything else made inside still goes",
        "the grader counts mt.memory().num_tensors before and after one fit",
    ),
)
def no_leak(m: types.ModuleType) -> None:
    for rows in (ROWS, random_rows(rng().randint(3, 7), rng().randint(2, 4))):
        s = scaler(m)
        data = tensor(rows)
        with observe() as seen:
            fn(s, "fit")(data)
        left = seen.tensors
        if left > 2:
            again: Tensor = tensor(rows)
            raise Fail(
                f"one fit left {left} new tensor(s) alive, expected at most 2 (the mean and the std).\n"
                f"  another fit leaves {leaks(lambda: fn(s, 'fit')(again))}"
            )
