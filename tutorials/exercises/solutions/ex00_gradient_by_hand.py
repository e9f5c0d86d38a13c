"""Solution: exercise 0, a gradient by hand and with ``mt.grad`` (chapter 0).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex00_gradient_by_hand.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex00_gradient_by_hand"  # the grader reads this: do not change it


def f(x: mt.Tensor) -> mt.Tensor:
    """f(x) = x³ - 2x, entry by entry. Given: do not change it."""
    return x**3 - 2.0 * x


def df_by_hand(x: float) -> float:
    """f'(x) = 3x² - 2 (power rule, term by term)."""
    return 3.0 * x * x - 2.0


def df_with_mt(x: mt.Tensor) -> mt.Tensor:
    """Let microtape differentiate ``f``: ``mt.grad(f)`` is a function of x."""
    return mt.grad(f)(x)


def gradient_descent(x0: float, lr: float, steps: int) -> float:
    """Take ``steps`` steps x ← x - lr·f'(x) from ``x0``."""
    x = x0
    for _ in range(steps):
        x = x - lr * df_by_hand(x)
    return x
