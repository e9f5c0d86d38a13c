"""Checks of ex00_gradient_by_hand: a derivative by hand, with ``mt.grad``, and gradient descent.

The reference derivative is the slope of f itself (finite differences of the
student's f, or the five-point stencil of x³ - 2x in plain Python), never a
formula for it. The random starts of gradient descent lie to the right of
f's local maximum (-0.816) and the rates are small, so every correct descent
stays bounded (from further left it runs off to -inf and overflows).
"""

from __future__ import annotations

import math
import types

from microtape import numerical_grad, scalar, sin, tensor
from microtape.exercise import (
    Exercise, Fail, close, derivative, expect_values, fmt, fn, number, observe, off_by, replaced, rng, tensor_fn, tensor_of,
)

EXERCISE = Exercise("ex00_gradient_by_hand", chapter=0, title="Gradient debugging: a derivative by hand and with mt.grad", minutes=15)
FIXED = (-2.0, -0.5, 0.0, 1.0, 3.0)
"""Where df_by_hand is always checked (the random points come on top)."""


def random_x(low: float = -3.0, high: float = 3.0) -> float:
    return round(rng().uniform(low, high), 3)


def f_plain(x: float) -> float:
    """f of the exercise, in plain Python (given in the starter: x³ - 2x)."""
    return x**3 - 2.0 * x


def slope(x: float) -> float:
    """f'(x) from f itself: the five-point stencil, exact for a cubic up to rounding."""
    return derivative(f_plain, x)


@EXERCISE.check(
    "df_by_hand matches finite differences",
    hints=(
        "differentiate f(x) = x³ - 2x on paper, term by term",
        "the power rule: the derivative of xⁿ is n·xⁿ⁻¹, and of a·x it is a",
        "the result is a polynomial of degree 2 in x; check it at x = 1, where finite differences give 1.0",
    ),
)
def by_hand(m: types.ModuleType) -> None:
    f, df = tensor_fn(m, "f"), fn(m, "df_by_hand")
    for x in (*FIXED, random_x(), random_x()):
        [numeric] = numerical_grad(f, [scalar(x)])
        got = number(df(x), f"df_by_hand({x})")
        if not close(got, numeric.item(), 1e-5):
            value = f(scalar(x)).item()
            hint = "that is f(x) itself: return its derivative" if close(got, value, 1e-9) else None
            raise Fail(f"df_by_hand({x}) is wrong: {off_by(got, numeric.item())} from the finite differences of f.", hint)


@EXERCISE.check(
    "df_with_mt returns f'(x) as a tensor",
    hints=(
        "let microtape differentiate: chapter 0 turns a function into its gradient function",
        "mt.grad takes a function and returns a new function; call that new function on x",
        "the function to differentiate is the module's f itself, passed without calling it",
    ),
)
def with_mt(m: types.ModuleType) -> None:
    f, df = tensor_fn(m, "f"), fn(m, "df_with_mt")
    for x in (tensor([-2.0, 0.0, 1.5]), tensor([random_x() for _ in range(4)])):
        got = tensor_of(df(x), "df_with_mt(x)", x.shape)
        [numeric] = numerical_grad(f, [x])
        expect_values(got.data_sync(), numeric.data_sync(), f"df_with_mt({fmt(x.data_sync())})", 1e-5)


@EXERCISE.check(
    "df_with_mt differentiates f itself",
    hints=(
        "the point is autodiff: do not type the derivative formula again",
        "the grader swaps f for sin and expects cos back; a retyped formula cannot follow",
        "build the gradient function from f at every call, so it sees whatever f currently is",
    ),
)
def uses_autodiff(m: types.ModuleType) -> None:
    fn(m, "f")
    df = fn(m, "df_with_mt")
    x = tensor([0.0, 1.0, 2.0, random_x(), random_x()])
    with replaced(m, "f", sin):
        got = tensor_of(df(x), "df_with_mt(x)", x.shape).data_sync()
    want = [math.cos(v) for v in x.data_sync()]
    if not all(type(g) is float and close(g, w, 1e-6) for g, w in zip(got, want)):
        raise Fail(f"with f replaced by sin, df_with_mt(x) does not give cos(x) at x = {fmt(x.data_sync())}: it does not differentiate f.")


def descent_cases() -> list[tuple[float, float, int]]:
    """The fixed cases, then random ones: a start right of f's local maximum, a small rate, at most 30 steps."""
    cases = [(2.0, 0.05, 0), (2.0, 0.05, 1), (2.0, 0.05, 3), (-0.3, 0.1, 200)]
    return cases + [(random_x(-0.6, 1.4), round(rng().uniform(0.01, 0.1), 3), rng().randint(1, 30)) for _ in range(2)]


@EXERCISE.check(
    "gradient_descent steps downhill",
    hints=(
        "gradient descent moves against the gradient, a small step at a time",
        "each step subtracts the learning rate times the derivative at the current x; take exactly `steps` of them",
        "with steps = 0 the answer is x0 itself; reuse your df_by_hand for the derivative",
    ),
)
def descent(m: types.ModuleType) -> None:
    gd = fn(m, "gradient_descent")
    for x0, lr, steps in descent_cases():
        with observe(calls=True) as seen:
            got = number(gd(x0, lr, steps), f"gradient_descent({x0}, {lr}, {steps})")
        want = x0
        for _ in range(steps):
            want -= lr * slope(want)
        if close(got, want, 1e-6):
            continue
        if seen.calls.get("df_by_hand") and any(not close(number(fn(m, "df_by_hand")(x), "df_by_hand(x)"), slope(x), 1e-5) for x in FIXED):
            raise Fail("gradient_descent uses your df_by_hand(), which fails its check above: fix df_by_hand() first.")
        hint = "that is x0 itself: take the steps" if got == x0 and steps else None
        raise Fail(f"gradient_descent({x0}, {lr}, {steps}) is wrong: {off_by(got, want)}.", hint)
