"""Exercise 4: write the VJP of softplus with ``mt.custom_grad``, and prove it.

Chapter 4, "Checking gradients" (Проверка градиентов).

``mt.custom_grad`` lets you give a function your own gradient: the function
returns ``(value, grad_fn)``, and ``grad_fn(dy)`` returns one gradient per
input (the vector-Jacobian product, VJP). A hand-written VJP is exactly the
kind of code that is silently wrong, so prove it against finite differences.

1. In ``softplus``, write ``grad_fn``: softplus(x) = log(1 + eˣ); work out
   its derivative and return ``[dy * <derivative at x>]``. Use microtape ops
   (not Python floats), so the VJP can itself be differentiated.
2. ``prove()``: return the report of chapter 4's gradient checker on
   ``softplus``, at a tensor x of a few points (at least 3), asking it to
   check the gradient of your gradient too (the second order). Print the
   report to see the table.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex04_softplus_vjp.py
"""

from __future__ import annotations

from collections.abc import Callable

import microtape as mt

EXERCISE = "ex04_softplus_vjp"  # the grader reads this: do not change it


@mt.custom_grad
def softplus(x: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], list[mt.Tensor]]]:
    """softplus(x) = log(1 + eˣ), with a hand-written gradient."""
    value = mt.log(1.0 + mt.exp(x))

    def grad_fn(dy: mt.Tensor) -> list[mt.Tensor]:
        raise NotImplementedError("TODO 1: return [dy times the derivative of softplus at x], written with microtape ops")

    return value, grad_fn


def prove() -> mt.GradCheckReport:
    """Check softplus's first and second derivatives against finite differences."""
    raise NotImplementedError("TODO 2: return the gradient checker's report on softplus, first and second derivatives, at 3 or more points")
