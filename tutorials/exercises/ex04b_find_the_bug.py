"""Exercise 4b: find the wrong VJP with the culprit finder, and fix it.

Chapter 4, "Checking gradients" (Проверка градиентов).

The tiny network below is built from three ops with hand-written gradients
(``mt.custom_grad``). One of them has a wrong VJP, so the model's gradient
is wrong, and nothing crashes: training would just go the wrong way.
``mt.check_grads`` notices, and when it fails it re-checks every op the
model ran and names the first one whose VJP disagrees with finite
differences: ``report.culprit``.

1. Run the checker on the model and read the culprit::

       report = mt.check_grads(model, [W, X])
       print(report)          # the table, and a line "culprit: the VJP of '...'"

   Set ``CULPRIT`` to the op name it prints (the text between the quotes).
2. Fix that op's VJP. Change only its gradient, not its forward value.
   Afterwards ``mt.check_grads(model, [W, X]).ok`` is True.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex04b_find_the_bug.py
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex04b_find_the_bug"  # the grader reads this: do not change it

VJP = Callable[[mt.Tensor, list[mt.Tensor]], list[mt.Tensor]]  # grad_fn(dy, saved)
Save = Callable[[list[mt.Tensor]], None]  # f's save: keeps tensors the VJP reads

W = mt.tensor([[0.5, -0.3], [0.2, 0.8]])
X = mt.tensor([[1.0, 2.0], [-1.0, 0.5], [0.3, 0.3]])

CULPRIT = "TODO 1: the op name that mt.check_grads(model, [W, X]).culprit prints"


@mt.custom_grad
def swish(x: mt.Tensor, save: Save) -> tuple[mt.Tensor, VJP]:
    """swish(x) = x·sigmoid(x)."""
    s = mt.sigmoid(x)
    save([s])  # the VJP reads s; unsaved, it would be disposed when swish returns
    return x * s, lambda dy, saved: [dy * (s + x * (1.0 - s))]


@mt.custom_grad
def scaled_tanh(x: mt.Tensor, save: Save) -> tuple[mt.Tensor, VJP]:
    """2·tanh(x)."""
    t = mt.tanh(x)
    save([t])  # the VJP reads t; unsaved, it would be disposed when scaled_tanh returns
    return 2.0 * t, lambda dy, saved: [dy * 2.0 * (1.0 - t * t)]


@mt.custom_grad
def smooth_abs(x: mt.Tensor, save: Save) -> tuple[mt.Tensor, VJP]:
    """sqrt(x² + 1) - 1, a smooth |x|."""
    r = mt.sqrt(x * x + 1.0)
    save([r])  # the VJP reads r; unsaved, it would be disposed when smooth_abs returns
    return r - 1.0, lambda dy, saved: [dy * x / r]


def model(w: mt.Tensor, x: mt.Tensor) -> mt.Tensor:
    """A tiny network: mean(smooth_abs(scaled_tanh(swish(x @ w))))."""
    return smooth_abs(scaled_tanh(swish(x @ w))).mean()


if __name__ == "__main__":
    print(mt.check_grads(model, [W, X]))
