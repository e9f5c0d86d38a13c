"""Solution: exercise 2, ``variable_grads`` on the linear model, inside ``tidy`` (chapter 2).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex02_linear_model.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex02_linear_model"  # the grader reads this: do not change it

X = mt.tensor([1.0, 2.0, 3.0, 4.0])
Y = mt.tensor([1.0, 3.0, 5.0, 7.0])


def loss_fn(w: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
    """Mean squared error of the prediction ``w*X + b`` against ``Y``."""
    return ((X * w + b - Y) ** 2).mean()


def gradients(w: mt.Variable, b: mt.Variable) -> tuple[mt.Tensor, mt.Tensor]:
    """(dL/dw, dL/db) at the current values; only these two tensors survive."""

    def step() -> tuple[mt.Tensor, mt.Tensor]:
        _, grads = mt.variable_grads(lambda: loss_fn(w, b))
        return grads[w], grads[b]

    return mt.tidy(step)


def train(steps: int, lr: float) -> tuple[float, float]:
    """Fit w and b from 0 with plain SGD; return the final (w, b)."""
    w = mt.variable(0.0)
    b = mt.variable(0.0)
    for _ in range(steps):

        def step() -> None:
            dw, db = gradients(w, b)
            w.assign_sub(dw * lr)
            b.assign_sub(db * lr)

        mt.tidy(step)
    return w.item(), b.item()
