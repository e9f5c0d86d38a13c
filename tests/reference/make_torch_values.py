"""Write ``torch_values.json``: PyTorch's float64 values and gradients for the cases the tests compare with.

Run by hand, never by pytest (PyTorch is not a test dependency), with an interpreter that has torch::

    /work/benchenv/bin/python tests/reference/make_torch_values.py

Each case is the function a hint of microtape's turns the user's code into (the double where,
``log_softmax``, ``log_sigmoid``, ``norm``, ``softplus``), or the loss a real report meant,
written here with PyTorch; the test applies microtape's hint to the user's code and checks the
NaN is gone and the gradient is this one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

OUT = Path(__file__).with_name("torch_values.json")


def grad_of(f: Callable[..., torch.Tensor], *values: list[float] | list[list[float]]) -> dict[str, object]:
    """The value of ``f`` at ``values`` and its gradient with respect to each of them."""
    import torch  # here, not at the top: pytest imports this file for its doctests, where torch is absent

    xs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    y = f(*xs)
    gs = torch.autograd.grad(y, xs, allow_unused=True)
    return {
        "inputs": values,
        "value": y.item(),
        "grads": [None if g is None else g.tolist() for g in gs],
    }


def cases() -> dict[str, dict[str, object]]:
    import torch

    torch.set_default_dtype(torch.float64)
    w = torch.where
    return {
        # mt.where(x > 0, mt.sqrt(x), 0): the double where
        "where_sqrt": grad_of(lambda x: w(x > 0, torch.sqrt(w(x > 0, x, 1.0)), 0.0).sum(), [-1.0, 0.0, 4.0]),
        # mt.where(a <= 0, mt.exp(a), 1 + a) at an a where exp overflows (float64: 1000)
        "where_exp": grad_of(lambda a: w(a <= 0, torch.exp(w(a <= 0, a, 0.0)), 1 + a).sum(), [1000.0, -1.0]),
        # mt.where(a < 15, a, mt.pow(10.0, mt.exp(a))): the power overflows where it is not selected
        "where_pow": grad_of(lambda a: w(a < 15, a, torch.pow(10.0, w(a < 15, 0.0, torch.exp(a)))).sum(), [10.0, 14.0]),
        # y = x / n, then mt.where(n == 0, 0, y): divide only by safe values
        "where_div": grad_of(lambda x, n: w(n == 0, 0.0, x / w(n == 0, 1.0, n)).sum(), [0.0, 1.0], [0.0, 2.0]),
        # d = sqrt(sum(x * x, axis=1)); where(d > 0.5, d, 1): the norm, whose gradient at 0 is 0
        "masked_norm": grad_of(
            lambda x: w(torch.linalg.vector_norm(x, dim=1) > 0.5, torch.linalg.vector_norm(x, dim=1), 1.0).sum(),
            [[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]],
        ),
        # -(labels * log(softmax(z))).sum() as log_softmax
        "log_softmax": grad_of(lambda z: -(torch.tensor([0.0, 1.0, 0.0]) * torch.log_softmax(z, dim=-1)).sum(), [1000.0, 0.0, -1000.0]),
        # binary cross-entropy on probabilities, as log_sigmoid (the loss on logits)
        "bce_logits": grad_of(
            lambda z: torch.nn.functional.binary_cross_entropy_with_logits(z, torch.tensor([0.0, 1.0]), reduction="sum"),
            [40.0, -40.0],
        ),
        # sqrt(((a - target) ** 2).sum()) at a == target, as the norm
        "norm_at_zero": grad_of(lambda a: torch.linalg.vector_norm(a - torch.tensor([1.0, 2.0])), [1.0, 2.0]),
        # log(1 + exp(x)) as softplus
        "softplus": grad_of(lambda x: torch.nn.functional.softplus(x).sum(), [1000.0, 0.0]),
        # the new ops, against PyTorch's own
        "atan2": grad_of(lambda y, x: torch.atan2(y, x).sum(), [1.0, -2.0, 0.5], [1.0, 3.0, -0.7]),
        "log1p_expm1": grad_of(lambda x: (torch.log1p(x) + torch.expm1(x)).sum(), [1e-10, 0.5, 2.0]),
        "log_sigmoid": grad_of(lambda x: torch.nn.functional.logsigmoid(x).sum(), [-1000.0, 0.0, 1000.0]),
        "sigmoid_cross_entropy": grad_of(
            lambda z: torch.nn.functional.binary_cross_entropy_with_logits(z, torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])),
            [[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]],
        ),
        "softmax_cross_entropy": grad_of(
            lambda z: torch.nn.functional.cross_entropy(z, torch.tensor([[0.2, 0.3, 0.5], [0.0, 1.0, 0.0]])),
            [[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]],
        ),
        "norm_rows": grad_of(lambda x: torch.linalg.vector_norm(x, dim=1).sum(), [[3.0, -4.0], [1.0, 1.0]]),
        "gather": grad_of(lambda x: (x[torch.tensor([2, 0, 2])] * torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum(),
                          [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
    }


def main() -> None:
    import torch

    found = cases()
    found["_about"] = {"torch": torch.__version__, "dtype": "float64", "made_by": "tests/reference/make_torch_values.py"}
    text = json.dumps(found, indent=1, sort_keys=True, allow_nan=True)
    assert "NaN" not in text.replace('"NaN"', ""), "a reference holds a NaN: the formula is not the fixed one"
    OUT.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(found) - 1} cases, torch {torch.__version__})")


if __name__ == "__main__":
    main()
