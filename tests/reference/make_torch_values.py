"""Write ``torch_values.json`` and ``torch_forward.json``: PyTorch's float64 numbers the tests compare with.

Run by hand, never by pytest (PyTorch is not a test dependency), with an interpreter that has torch
(a venv of its own: ``python3 -m venv /work/torchenv && /work/torchenv/bin/pip install torch``)::

    /work/torchenv/bin/python tests/reference/make_torch_values.py

``torch_forward.json`` holds, for every case of the op table
(``microtape/checking/samples.py``), PyTorch's ``torch.func.jvp`` and
``torch.autograd.functional.hvp`` of the op at the case's inputs, along
seeded random tangents that the file keeps (``tests/autodiff/test_forward_torch.py``
compares ``mt.jvp``, ``mt.linearize`` and ``mt.hvp`` with them). Inputs PyTorch
cannot differentiate (a ``where``'s condition, ``gather``'s indices, the inputs of a
comparison) are held constant there and get a zero tangent.

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
FORWARD = Path(__file__).with_name("torch_forward.json")
ROOT = Path(__file__).resolve().parents[2]


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


def _torch_ops() -> dict[str, tuple[Callable[..., torch.Tensor], tuple[int, ...]]]:
    """Each op of the op table as PyTorch computes it, and the inputs PyTorch holds constant."""
    import torch
    import torch.nn.functional as F

    def axes(axis: object, x: torch.Tensor) -> tuple[int, ...]:
        if axis is None:
            return tuple(range(x.dim()))
        return tuple(axis) if isinstance(axis, (list, tuple)) else (int(axis),)  # type: ignore[call-overload]

    def reduce_loss(loss: torch.Tensor, reduction: str) -> torch.Tensor:
        return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()

    def slice_(x: torch.Tensor, begin: tuple[int, ...], size: tuple[int, ...]) -> torch.Tensor:
        index = tuple(slice_obj(b, x.shape[d] if s == -1 else b + s) for d, (b, s) in enumerate(zip(begin, size)))
        return x[index]

    slice_obj = slice

    def pad(x: torch.Tensor, paddings: list[tuple[int, int]], constant_value: float = 0.0) -> torch.Tensor:
        flat = [n for pair in reversed(paddings) for n in pair]
        return F.pad(x, flat, value=constant_value)

    def gather(x: torch.Tensor, idx: torch.Tensor, axis: int = 0) -> torch.Tensor:
        ax = axis % x.dim()
        taken = x.movedim(ax, 0)[idx.long()]  # indices.shape + the other axes
        k = idx.dim()
        order = list(range(k, k + ax)) + list(range(k)) + list(range(k + ax, taken.dim()))
        return taken.permute(order)

    def norm(x: torch.Tensor, ord: object = 2, axis: object = None, keepdims: bool = False) -> torch.Tensor:
        p = 2 if ord == "fro" else ord
        return torch.linalg.vector_norm(x, p, dim=axes(axis, x), keepdim=keepdims)  # type: ignore[arg-type, unused-ignore]

    def softmax_ce(labels: torch.Tensor, logits: torch.Tensor, axis: int = -1, reduction: str = "mean") -> torch.Tensor:
        return reduce_loss(-(labels * torch.log_softmax(logits, dim=axis)).sum(dim=axis), reduction)

    def sigmoid_ce(labels: torch.Tensor, logits: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(logits, labels, reduction=reduction)

    def arg(fn: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        def run(x: torch.Tensor, axis: int | None = 0) -> torch.Tensor:
            return (fn(x) if axis is None else fn(x, dim=axis)).to(torch.float64)
        return run

    def one_hot(idx: torch.Tensor, depth: int, on_value: float = 1.0, off_value: float = 0.0) -> torch.Tensor:
        hot = idx.long().unsqueeze(-1) == torch.arange(depth)  # as TF: an index outside [0, depth) is a row of off_value
        return hot.to(torch.float64) * (on_value - off_value) + off_value

    f64 = torch.float64
    return {
        "add": (torch.add, ()), "sub": (torch.sub, ()), "mul": (torch.mul, ()), "div": (torch.div, ()),
        "neg": (torch.neg, ()), "clone": (torch.clone, ()), "square": (torch.square, ()), "sqrt": (torch.sqrt, ()),
        "pow": (torch.pow, ()), "exp": (torch.exp, ()), "log": (torch.log, ()), "abs": (torch.abs, ()),
        "sin": (torch.sin, ()), "cos": (torch.cos, ()), "tanh": (torch.tanh, ()), "sigmoid": (torch.sigmoid, ()),
        "relu": (torch.relu, ()), "maximum": (torch.maximum, ()), "minimum": (torch.minimum, ()),
        "sum": (lambda x, axis=None, keepdims=False: torch.sum(x, dim=axes(axis, x), keepdim=keepdims), ()),
        "max": (lambda x, axis=None, keepdims=False: torch.amax(x, dim=axes(axis, x), keepdim=keepdims), ()),
        "logsumexp": (lambda x, axis=-1, keepdims=False: torch.logsumexp(x, dim=axes(axis, x), keepdim=keepdims), ()),
        "matmul": (torch.matmul, ()),
        "transpose": (lambda x, perm=None: x.permute(perm if perm is not None else tuple(reversed(range(x.dim())))), ()),
        "reshape": (lambda x, shape: x.reshape(shape), ()),
        "broadcast_to": (lambda x, shape: torch.broadcast_to(x, shape), ()),
        "clip_by_value": (lambda x, clip_value_min, clip_value_max: torch.clamp(x, clip_value_min, clip_value_max), ()),
        "slice": (slice_, ()), "pad": (pad, ()),
        "concat": (lambda *xs, axis=0: torch.cat(xs, dim=axis), ()),
        "where": (lambda c, a, b: torch.where(c != 0, a, b), (0,)),
        "greater": (lambda a, b: torch.gt(a, b).to(f64), (0, 1)),
        "greater_equal": (lambda a, b: torch.ge(a, b).to(f64), (0, 1)),
        "less": (lambda a, b: torch.lt(a, b).to(f64), (0, 1)),
        "less_equal": (lambda a, b: torch.le(a, b).to(f64), (0, 1)),
        "equal": (lambda a, b: torch.eq(a, b).to(f64), (0, 1)),
        "sign": (torch.sign, (0,)), "zeros_like": (torch.zeros_like, (0,)),
        "atan": (torch.atan, ()), "atan2": (torch.atan2, ()), "expm1": (torch.expm1, ()), "log1p": (torch.log1p, ()),
        "log2": (torch.log2, ()),
        "softplus": (lambda x: torch.logaddexp(x, torch.zeros_like(x)), ()),  # F.softplus cuts over to x above 20
        "log_sigmoid": (F.logsigmoid, ()),
        "sigmoid_cross_entropy": (sigmoid_ce, ()), "softmax_cross_entropy": (softmax_ce, ()),
        "norm": (norm, ()),
        "argmax": (arg(torch.argmax), (0,)), "argmin": (arg(torch.argmin), (0,)),
        "one_hot": (one_hot, (0,)),
        "gather": (gather, (1,)),
        "is_nan": (lambda x: torch.isnan(x).to(f64), (0,)),
        "is_finite": (lambda x: torch.isfinite(x).to(f64), (0,)),
        "is_inf": (lambda x: torch.isinf(x).to(f64), (0,)),
        "stop_gradient": (torch.Tensor.detach, (0,)),
    }


def forward_cases() -> dict[str, dict[str, object]]:
    """PyTorch's JVP and HVP of every case of the op table, along tangents drawn here (and kept)."""
    import random
    import sys

    import torch

    sys.path.insert(0, str(ROOT))
    from microtape.checking.samples import CASES

    torch.set_default_dtype(torch.float64)
    ops = _torch_ops()
    missing = sorted(set(CASES) - set(ops))
    assert not missing, f"no PyTorch twin for {missing}: add them to _torch_ops"
    found: dict[str, dict[str, object]] = {}
    for name in sorted(CASES):
        fn, constant = ops[name]
        for n, case in enumerate(CASES[name]):
            key = f"{case} #{n}"  # two cases may print alike (same shapes, other values)
            assert key not in found, f"two cases print as {key}"
            rng = random.Random(key)
            xs = [torch.tensor(v, dtype=torch.float64) for v in case.inputs]
            vs = [torch.zeros_like(x) if i in constant else torch.tensor([rng.uniform(-1, 1) for _ in range(x.numel())]).reshape(x.shape)
                  for i, x in enumerate(xs)]
            free = [i for i in range(len(xs)) if i not in constant]

            def f(*moving: torch.Tensor, xs: list[torch.Tensor] = xs, free: list[int] = free, fn: Callable[..., torch.Tensor] = fn,
                  params: dict[str, object] = case.params) -> torch.Tensor:
                args = list(xs)
                for i, m in zip(free, moving):
                    args[i] = m
                return fn(*args, **params)

            value = f(*[xs[i] for i in free])
            if free:
                _, tangent = torch.func.jvp(f, tuple(xs[i] for i in free), tuple(vs[i] for i in free))
            else:
                tangent = torch.zeros_like(value)
            w = torch.tensor([rng.uniform(-1, 1) for _ in range(value.numel())]).reshape(value.shape)
            hv = [torch.zeros_like(x) for x in xs]
            if free:
                _, hs = torch.autograd.functional.hvp(lambda *m: (f(*m) * w).sum(), tuple(xs[i] for i in free), tuple(vs[i] for i in free))
                for i, h in zip(free, hs):
                    hv[i] = h
            found[key] = {
                "op": name,
                "tangents": [v.tolist() for v in vs],
                "value": value.tolist(),
                "jvp": tangent.tolist(),
                "weights": w.tolist(),
                "hvp": [h.tolist() for h in hv],
            }
    return found


def main() -> None:
    import torch

    forward = forward_cases()
    forward["_about"] = {"torch": torch.__version__, "dtype": "float64", "made_by": "tests/reference/make_torch_values.py",
                         "jvp": "torch.func.jvp", "hvp": "torch.autograd.functional.hvp of sum(weights * op(...))"}
    FORWARD.write_text(json.dumps(forward, indent=1, sort_keys=True, allow_nan=True) + "\n", encoding="utf-8")
    print(f"wrote {FORWARD} ({len(forward) - 1} cases of the op table)")
    found = cases()
    found["_about"] = {"torch": torch.__version__, "dtype": "float64", "made_by": "tests/reference/make_torch_values.py"}
    text = json.dumps(found, indent=1, sort_keys=True, allow_nan=True)
    assert "NaN" not in text.replace('"NaN"', ""), "a reference holds a NaN: the formula is not the fixed one"
    OUT.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(found) - 1} cases, torch {torch.__version__})")


if __name__ == "__main__":
    main()
