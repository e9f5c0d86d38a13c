"""Exercise 1: variables, and an SGD step that updates them in place.

Chapter 1, "Variables" (Функция tf.variable и обновление параметров).

A ``mt.Variable`` is the one tensor whose values change. Optimizers train
the trainable ones; a non-trainable variable is state they must not touch.
An update must change the variable itself (``assign``), not make a new one.

1. ``make_weights(values)``: a trainable variable holding ``values``. The
   grader calls it twice while both results are alive, so do not give it a
   fixed name.
2. ``make_step_counter()``: a scalar variable that starts at 0 and is not
   trainable.
3. ``sgd_step(w, grad, lr)``: update ``w`` in place to ``w - lr * grad``.
   Rebinding the local name (``w = w - ...``) does not change the caller's
   variable.
4. ``count_step(counter)``: add 1 to the counter, in place.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex01_variables_sgd.py
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex01_variables_sgd"  # the grader reads this: do not change it


def make_weights(values: list[float]) -> mt.Variable:
    """Return a trainable variable holding ``values``."""
    raise NotImplementedError("TODO 1: return a new trainable variable holding values")


def make_step_counter() -> mt.Variable:
    """Return a scalar variable at 0 that no optimizer may train."""
    raise NotImplementedError("TODO 2: return a scalar variable that starts at 0 and that no optimizer may train")


def sgd_step(w: mt.Variable, grad: mt.Tensor, lr: float) -> None:
    """Set w to w - lr·grad, changing the variable itself."""
    raise NotImplementedError("TODO 3: change w itself to w - lr * grad (the caller's variable must change)")


def count_step(counter: mt.Variable) -> None:
    """Add 1 to the counter, in place."""
    raise NotImplementedError("TODO 4: add 1 to the counter, changing the variable itself")
