"""Exercise 9: the dot-product test catches a VJP that check_grads passes.

Chapter 9, "Numerics: stable losses, modes and precision", section "Checks that need no step: the dot-product test".

``soft_abs`` below is √(x² + 1), a smooth ``abs``, with a hand-written
gradient (``mt.custom_grad``). Run this file: ``mt.check_grads`` on
``loss``, the sum of ``soft_abs``, says the gradient is right. It is not.
A VJP must give Jᵀu for *every* cotangent u, and the sum only ever sends
it u = 1.

1. Write ``dot_test(f, x, u, v)``. It returns the two sides of the
   dot-product test as Python floats: ⟨u, J v⟩ from forward mode (a JVP
   of ``f`` at ``x`` along ``v``), and ⟨Jᵀu, v⟩ from reverse mode (a VJP
   of ``f`` at ``x`` with the cotangent ``u``). For a right gradient they
   agree to rounding, whatever the random ``u`` and ``v``.
2. Run ``dot_test`` on ``soft_abs`` at ``X`` with random ``u`` and ``v``
   (``mt.random_normal``), see the two sides disagree, and fix the VJP.
   Change only the gradient, not the forward value.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex09_dot_product_test.py
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
    return mt.sqrt(x * x + 1.0), lambda dy: [x / mt.sqrt(x * x + 1.0)]


def loss(x: mt.Tensor) -> mt.Tensor:
    """The sum of soft_abs(x)."""
    return soft_abs(x).sum()


def dot_test(f: Callable[[mt.Tensor], mt.Tensor], x: mt.Tensor, u: mt.Tensor, v: mt.Tensor) -> tuple[float, float]:
    """The dot-product test of f at x: (⟨u, J v⟩, ⟨Jᵀu, v⟩), as Python floats."""
    raise NotImplementedError("TODO 1: return <u, J v> from a JVP along v and <J^T u, v> from a VJP with the cotangent u, as floats")


if __name__ == "__main__":
    print("check_grads on loss:", mt.check_grads(loss, [X]).ok)
