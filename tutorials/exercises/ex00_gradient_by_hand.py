"""Exercise 0: a gradient by hand, and the same gradient with ``mt.grad``.

Chapter 0, "Gradient debugging" (Отладка градиентов).

A gradient tells you which way is uphill; training takes small steps the
other way. Work out the derivative of f(x) = x³ - 2x on paper, check it
against microtape's autodiff, then use it to walk downhill.

1. ``df_by_hand(x)``: return f'(x) as a Python float, from your own algebra.
2. ``df_with_mt(x)``: return the same derivative computed by ``mt.grad(f)``
   (for every entry of the tensor x). Use the module's ``f``; do not type
   the formula again.
3. ``gradient_descent(x0, lr, steps)``: start at ``x0`` and repeat
   ``x = x - lr * f'(x)`` exactly ``steps`` times; return the final x.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex00_gradient_by_hand.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex00_gradient_by_hand"  # the grader reads this: do not change it


def f(x: mt.Tensor) -> mt.Tensor:
    """f(x) = x³ - 2x, entry by entry. Given: do not change it."""
    return x**3 - 2.0 * x


def df_by_hand(x: float) -> float:
    """Return f'(x), worked out by hand, as a float."""
    raise NotImplementedError("TODO 1: return the derivative of x**3 - 2*x at x, worked out on paper")


def df_with_mt(x: mt.Tensor) -> mt.Tensor:
    """Return f'(x) for every entry of x, computed by microtape."""
    raise NotImplementedError("TODO 2: return f'(x) for every entry of x, computed by microtape from the module's f")


def gradient_descent(x0: float, lr: float, steps: int) -> float:
    """Take ``steps`` steps x ← x - lr·f'(x) from ``x0``; return the final x."""
    raise NotImplementedError("TODO 3: start at x0, take `steps` gradient-descent steps, return the final x")
