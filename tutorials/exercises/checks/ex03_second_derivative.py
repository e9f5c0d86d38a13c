"""Checks of ex03_second_derivative: nested tapes, and SGD with a tape.

The functions handed to second_derivative are made where the student's code
runs (``child_fn``), so its tapes record them; their second derivatives and
the exact SGD on x² + y² (each step multiplies x and y by 1 - 2·lr, with
|1 - 2·lr| < 1 for every random rate) are worked out in plain Python.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable

from microtape import exp, sin, tensor
from microtape.exercise import Exercise, Fail, child_fn, expect_values, fmt, fn, number, rng, tensor_of

EXERCISE = Exercise(
    "ex03_second_derivative", chapter=3, title="The tape: a second derivative with nested tapes, SGD on x² + y²", minutes=15
)


def randoms(n: int, low: float = -2.5, high: float = 2.5) -> list[float]:
    return [round(rng().uniform(low, high), 3) for _ in range(n)]


@EXERCISE.check(
    "second_derivative matches f''",
    hints=(
        "chapter 3: a tape also records another tape's backward pass",
        "open an outer tape and an inner one, both watching x; compute f(x) inside the inner one",
        "ask the inner tape for dy/dx while the outer tape is still recording, then ask the outer tape for the gradient of that",
    ),
)
def second(m: types.ModuleType) -> None:
    second_derivative = fn(m, "second_derivative")
    k = round(rng().uniform(0.5, 2.0), 2)
    cases: list[tuple[str, object, Callable[[float], float]]] = [  # the functions are made where the student's code runs
        ("x**3", child_fn("lambda t: t ** 3"), lambda v: 6.0 * v),
        ("sin", sin, lambda v: -math.sin(v)),
        ("exp", exp, math.exp),
        (f"x**4 * {k}", child_fn("lambda t: t ** 4 * k", k=k), lambda v: 12.0 * k * v * v),
    ]
    for x in (tensor([-1.5, 0.5, 2.0]), tensor(randoms(4))):
        for label, f, f2 in cases:
            got = tensor_of(second_derivative(f, x), f"second_derivative({label}, x)", x.shape)
            first = [3.0 * v * v if label == "x**3" else math.nan for v in x.data_sync()]
            hint = "that is the first derivative: differentiate it once more" if all(
                abs(g - w) < 1e-9 for g, w in zip(got.data_sync(), first)) else None
            want = [f2(v) for v in x.data_sync()]
            expect_values(got.data_sync(), want, f"second_derivative({label}) at x = {fmt(x.data_sync())}", 1e-6, hint)


@EXERCISE.check(
    "minimize_paraboloid does SGD on x² + y²",
    hints=(
        "chapter 3's example: x² + y² minimised with variables and a tape",
        "variables are watched by a tape automatically; record f on a tape each step and ask it for both gradients",
        "update x and y in place, lr times their gradients; return the final values as floats",
    ),
)
def paraboloid(m: types.ModuleType) -> None:
    minimize = fn(m, "minimize_paraboloid")
    x0, y0 = randoms(2, -5.0, 5.0)
    cases = [(2.0, 3.0, 0.1, 0), (2.0, 3.0, 0.1, 1), (2.0, 3.0, 0.1, 2), (-1.0, 4.0, 0.25, 50)]
    cases.append((x0, y0, round(rng().uniform(0.01, 0.4), 3), rng().randint(1, 25)))
    for x0, y0, lr, steps in cases:
        result = minimize(x0, y0, lr, steps)
        if not (type(result) is tuple and len(result) == 2):
            raise Fail(f"minimize_paraboloid returned {type(result).__name__}, expected a pair of floats (x, y).")
        got = [number(result[0], "minimize_paraboloid(...)[0]"), number(result[1], "minimize_paraboloid(...)[1]")]
        factor = (1.0 - 2.0 * lr) ** steps  # each step multiplies x and y by 1 - 2·lr
        expect_values(got, [x0 * factor, y0 * factor], f"minimize_paraboloid({x0}, {y0}, lr={lr}, steps={steps})", 1e-9)
