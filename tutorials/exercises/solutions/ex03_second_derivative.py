"""Solution: exercise 3, a second derivative with nested tapes (chapter 3).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex03_second_derivative.py``
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex03_second_derivative"  # the grader reads this: do not change it


def second_derivative(f: Callable[[mt.Tensor], mt.Tensor], x: mt.Tensor) -> mt.Tensor:
    """f''(x) entry by entry: the outer tape records the inner tape's backward pass."""
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy_dx = inner.gradient(y, x)  # computed while the outer tape records
    assert dy_dx is not None  # f uses x, so the gradient exists
    d2y_dx2 = outer.gradient(dy_dx, x)
    assert d2y_dx2 is not None
    return d2y_dx2


def minimize_paraboloid(x0: float, y0: float, lr: float, steps: int) -> tuple[float, float]:
    """SGD on f(x, y) = x² + y² with two variables and a GradientTape."""
    x = mt.variable(x0)
    y = mt.variable(y0)
    for _ in range(steps):

        def step() -> None:
            with mt.GradientTape() as tape:
                f = x * x + y * y
            dx, dy = tape.gradient(f, [x, y])
            assert dx is not None and dy is not None  # both variables are used
            x.assign_sub(dx * lr)
            y.assign_sub(dy * lr)

        mt.tidy(step)
    return x.item(), y.item()
