"""Checks of ex08d_second_derivative: find the order at which a custom gradient fails, then repair it.

The verdict is kept as a hash (``digest``); the first and second derivatives
are compared with 3x² and 6x in plain Python.
"""

from __future__ import annotations

import types

from microtape import GradientTape, grad, tensor
from microtape.exercise import Exercise, Fail, digest, expect_values, rng, tensor_fn, tensor_of

EXERCISE = Exercise("ex08d_second_derivative", chapter=8, title="Casebook: a custom gradient with no second derivative", kind="debug", minutes=10)

VERDICT_DIGESTS = ("5d28a90f4498a81461efbaf6f628a19d9778390bb5c81a393dd936181cc3d826",)
"""The hash of the verdict at order 2 (see ``digest``)."""


@EXERCISE.check(
    "ORDER_2_VERDICT is the verdict check_grads gives at order 2",
    hints=(
        "chapter 8, case 14: run mt.check_grads(lambda t: cube_op(t).sum(), [X]) and print its verdict",
        "then run it again with order=2 and print that verdict",
        "copy the second verdict between the quotes, as it prints",
    ),
)
def verdict(m: types.ModuleType) -> None:
    answer = getattr(m, "ORDER_2_VERDICT", None)
    if not isinstance(answer, str):
        raise Fail(f"ORDER_2_VERDICT is {answer!r}, expected a str.")
    if answer.strip().upper().startswith("TODO"):
        raise NotImplementedError(f"ORDER_2_VERDICT = {answer!r}")
    if digest(answer.strip().strip("'\"")) not in VERDICT_DIGESTS:
        raise Fail(f"ORDER_2_VERDICT = {answer!r}, but check_grads gives another verdict at order 2.")


def points() -> list[list[float]]:
    return [[0.5, -1.5, 2.0], [round(rng().uniform(-3.0, 3.0), 2) for _ in range(rng().randint(1, 5))]]


@EXERCISE.check(
    "cube_op is x³, and its first derivative 3x²",
    hints=(
        "keep the forward value x * x * x",
        "the first derivative was right to begin with: do not change what the rule computes, only how",
        "the VJP returns dy times 3x²",
    ),
)
def first(m: types.ModuleType) -> None:
    cube_op = tensor_fn(m, "cube_op")
    for xs in points():
        got = tensor_of(cube_op(tensor(xs)), f"cube_op({xs})", (len(xs),)).data_sync()
        expect_values(got, [v ** 3 for v in xs], f"cube_op({xs})", 1e-12)
        d1 = tensor_of(grad(lambda t: cube_op(t).sum())(tensor(xs)), "d sum(cube_op(x)) / dx", (len(xs),)).data_sync()
        expect_values(d1, [3.0 * v * v for v in xs], f"the first derivative of cube_op at {xs}", 1e-12)


@EXERCISE.check(
    "its second derivative is 6x",
    hints=(
        "a value saved in the forward pass is a constant to the outer derivative",
        "the outer derivative can only follow ops it has recorded on x",
        "write the rule with ops on x itself (custom_grad can give a rule that takes dy alone)",
    ),
)
def second(m: types.ModuleType) -> None:
    cube_op = tensor_fn(m, "cube_op")
    for xs in points():
        x = tensor(xs)
        with GradientTape() as outer:
            outer.watch(x)
            with GradientTape() as inner:
                inner.watch(x)
                total = cube_op(x).sum()
            d1 = inner.gradient(total, x)
            if d1 is None:
                raise Fail("the first derivative of cube_op is None: the path from x is cut.")
            slope = d1.sum()
        d2 = outer.gradient(slope, x)
        if d2 is None:
            raise Fail(f"the second derivative of cube_op at {xs} is None: the outer derivative does not see the rule depend on x.")
        got = tensor_of(d2, "d² sum(cube_op(x)) / dx²", (len(xs),)).data_sync()
        expect_values(got, [6.0 * v for v in xs], f"the second derivative of cube_op at {xs}", 1e-9)
