"""Solution: exercise 9, the dot-product test catches a VJP that check_grads passes (chapter 9).

The starter's VJP returned the local slope x/√(x² + 1) alone, forgetting to
multiply by ``dy``. ``check_grads(loss, [X])`` differentiates a sum, which
sends ``dy = 1``, so it could not tell. The dot-product test with a random
cotangent u can: ⟨Jᵀu, v⟩ no longer depends on u, and ⟨u, J v⟩ (here from
``mt.jvp``, which microtape builds from the VJP) is 0.

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex09_dot_product_test.py``
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex09_dot_product_test"  # the grader reads this: do not change it

VJP = Callable[[mt.Tensor], list[mt.Tensor]]  # grad_fn(dy)

X = mt.tensor([0.5, -1.5, 2.0, 0.1])


@mt.custom_grad
def soft_abs(x: mt.Tensor) -> tuple[mt.Tensor, VJP]:
    """√(x² + 1): a smooth abs, with a hand-written gradient."""
    return mt.sqrt(x * x + 1.0), lambda dy: [dy * x / mt.sqrt(x * x + 1.0)]


def loss(x: mt.Tensor) -> mt.Tensor:
    """The sum of soft_abs(x)."""
    return soft_abs(x).sum()


def dot_test(f: Callable[[mt.Tensor], mt.Tensor], x: mt.Tensor, u: mt.Tensor, v: mt.Tensor) -> tuple[float, float]:
    """The dot-product test of f at x: (⟨u, J v⟩, ⟨Jᵀu, v⟩), as Python floats."""
    _, jv = mt.jvp(f, [x], [v])
    jtu = mt.grad(lambda t: (f(t) * u).sum())(x)
    return (u * jv).sum().item(), (jtu * v).sum().item()


if __name__ == "__main__":
    u, v = mt.random_normal(X.shape, seed=1), mt.random_normal(X.shape, seed=2)
    print("dot test:", dot_test(soft_abs, X, u, v))
