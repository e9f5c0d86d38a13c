"""Exercise 3: a second derivative with nested tapes, and SGD with a tape.

Chapter 3, "The tape" (Отслеживание операций с tf.GradientTape).

A tape records what runs inside its ``with`` block, including another
tape's backward pass. So a gradient computed inside an outer tape can be
differentiated again by the outer tape.

1. ``second_derivative(f, x)``: f''(x) for every entry of x (f acts entry
   by entry). Open an outer tape, and inside it an inner tape; ask the inner
   tape for dy/dx *while the outer tape is still recording*, then ask the
   outer tape for the gradient of that.
2. ``minimize_paraboloid(x0, y0, lr, steps)``: minimise f(x, y) = x² + y²
   from (x0, y0). Make x and y variables; in each step record f on a
   ``GradientTape`` (variables are watched automatically), take
   ``tape.gradient(f, [x, y])`` and update both in place. Return the final
   (x, y) as floats.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex03_second_derivative.py
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex03_second_derivative"  # the grader reads this: do not change it


def second_derivative(f: Callable[[mt.Tensor], mt.Tensor], x: mt.Tensor) -> mt.Tensor:
    """Return f''(x), entry by entry, with two nested GradientTapes."""
    raise NotImplementedError("TODO 1: return f''(x) computed with two nested GradientTapes")


def minimize_paraboloid(x0: float, y0: float, lr: float, steps: int) -> tuple[float, float]:
    """SGD on x² + y² from (x0, y0); return the final (x, y)."""
    raise NotImplementedError("TODO 2: minimise x² + y² from (x0, y0) with two variables and a GradientTape; return (x, y) as floats")
