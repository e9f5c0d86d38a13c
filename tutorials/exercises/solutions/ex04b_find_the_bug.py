"""Solution: exercise 4b, find the wrong VJP with the culprit finder and fix it (chapter 4).

``print(mt.check_grads(model, [W, X]))`` ends with
``culprit: the VJP of 'custom_grad(swish)' ...``: the forward is x·s with
s = sigmoid(x), so by the product rule the derivative is s + x·s·(1 - s);
the VJP had lost the factor s of the second term (s' = s·(1 - s)).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex04b_find_the_bug.py``
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex04b_find_the_bug"  # the grader reads this: do not change it

VJP = Callable[[mt.Tensor, list[mt.Tensor]], list[mt.Tensor]]  # grad_fn(dy, saved)
Save = Callable[[list[mt.Tensor]], None]  # f's save: keeps tensors the VJP reads

W = mt.tensor([[0.5, -0.3], [0.2, 0.8]])
X = mt.tensor([[1.0, 2.0], [-1.0, 0.5], [0.3, 0.3]])

CULPRIT = "custom_grad(swish)"


@mt.custom_grad
def swish(x: mt.Tensor, save: Save) -> tuple[mt.Tensor, VJP]:
    """swish(x) = x·sigmoid(x); swish'(x) = s + x·s·(1 - s) with s = sigmoid(x)."""
    s = mt.sigmoid(x)
    save([s])  # the VJP reads s; unsaved, it would be disposed when swish returns
    return x * s, lambda dy, saved: [dy * (s + x * s * (1.0 - s))]  # fixed: s' = s·(1 - s), the factor s was missing


@mt.custom_grad
def scaled_tanh(x: mt.Tensor, save: Save) -> tuple[mt.Tensor, VJP]:
    """2·tanh(x); its derivative is 2·(1 - tanh²x)."""
    t = mt.tanh(x)
    save([t])  # the VJP reads t; unsaved, it would be disposed when scaled_tanh returns
    return 2.0 * t, lambda dy, saved: [dy * 2.0 * (1.0 - t * t)]


@mt.custom_grad
def smooth_abs(x: mt.Tensor, save: Save) -> tuple[mt.Tensor, VJP]:
    """sqrt(x² + 1) - 1, a smooth |x|; its derivative is x / sqrt(x² + 1)."""
    r = mt.sqrt(x * x + 1.0)
    save([r])  # the VJP reads r; unsaved, it would be disposed when smooth_abs returns
    return r - 1.0, lambda dy, saved: [dy * x / r]


def model(w: mt.Tensor, x: mt.Tensor) -> mt.Tensor:
    """A tiny network: mean(smooth_abs(scaled_tanh(swish(x @ w))))."""
    return smooth_abs(scaled_tanh(swish(x @ w))).mean()
