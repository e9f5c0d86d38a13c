"""Checks of ex07_profile_memory: measure memory, profile a function.

The functions handed to the student's code are made where it runs
(``child_fn``), and what they leave alive and their peak are measured there
too, by calling them inside ``observe``.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable

from microtape import ProfileInfo, tensor
from microtape.exercise import Exercise, Fail, child_fn, expect_values, fn, integer, observe, rng, tensor_of

EXERCISE = Exercise("ex07_profile_memory", chapter=7, title="Analysis tools: measure memory and profile a function", minutes=15)


def making(n: int, size: int) -> Callable[..., object]:
    """A function that leaves ``n`` tensors of ``size`` entries alive."""
    return child_fn("lambda: [mt.zeros((size,)) for _ in range(n)]", n=n, size=size)


def too(got: int, want: int) -> str:
    return "too many" if got > want else "too few"


def measure(call: Callable[..., object]) -> int:
    """How many more tensors are alive after one call than before it."""
    with observe() as seen:
        call()
    return seen.tensors


@EXERCISE.check(
    "leftover_tensors counts what a call leaves alive",
    hints=(
        "chapter 7: mt.memory() counts what is alive right now",
        "read the tensor count before the call and after it",
        "return the difference as an int; fn is called exactly once",
    ),
)
def leftover(m: types.ModuleType) -> None:
    leftover_tensors = fn(m, "leftover_tensors")
    calls: list[tuple[str, Callable[..., object]]] = [
        ("a function making 3 tensors", child_fn("lambda: [mt.ones((2,)), mt.zeros((3,)), mt.fill((1,), 2.0)]")),
        ("a tidy returning one sum", child_fn("lambda: mt.tidy(lambda: (mt.ones((3,)) * 2.0).sum())")),
        ("a function doing nothing", child_fn("lambda: None")),
        ("a function leaving some tensors (a random number)", making(rng().randint(1, 9), rng().randint(1, 5))),
        ("a function leaving some tensors (another random number)", making(rng().randint(10, 30), 1)),
    ]
    for label, call in calls:
        want = measure(call)
        got = integer(leftover_tensors(call), "leftover_tensors(fn)")
        if got != want:
            raise Fail(f"leftover_tensors({label}) is wrong: it counts {too(got, want)} tensors.")


@EXERCISE.check(
    "profile_layer profiles layer inside tidy",
    hints=(
        "chapter 7: mt.profile runs a function and reports its kernels and memory",
        "profile a function of no arguments that calls layer(x, w) once",
        "inside that function, wrap the call in tidy, so only the result survives",
    ),
)
def profile_layer(m: types.ModuleType) -> None:
    drawn_x = [[round(rng().uniform(-2.0, 2.0), 2) for _ in range(2)] for _ in range(rng().randint(2, 5))]
    drawn_w = [[round(rng().uniform(-2.0, 2.0), 2) for _ in range(4)] for _ in range(2)]
    for x_rows, w_rows in (
        ([[1.0, -2.0], [0.5, 3.0], [-1.0, 1.0]], [[0.5, -1.0, 2.0, 0.0], [1.0, 0.25, -0.5, 1.5]]),
        (drawn_x, drawn_w),
    ):
        info = fn(m, "profile_layer")(tensor(x_rows), tensor(w_rows))
        if type(info) is not ProfileInfo:
            raise Fail(f"profile_layer(x, w) returned {type(info).__name__}, not what mt.profile returns.")
        if info.kernel_names != ["matmul", "relu", "sum"]:
            raise Fail(f"the profile saw the kernels {info.kernel_names}, expected ['matmul', 'relu', 'sum'] (one call of layer).")
        if type(info.new_tensors) is not int or info.new_tensors != 1:
            raise Fail(f"the profile reports new_tensors={info.new_tensors}, expected 1: only layer's result should survive.")
        value = tensor_of(info.result, "the profiled function", ())
        want = math.fsum(max(0.0, a * w_rows[0][j] + b * w_rows[1][j]) for a, b in x_rows for j in range(4))
        expect_values(value.data_sync(), [want], f"info.result for x = {x_rows}, w = {w_rows}")


@EXERCISE.check(
    "extra_peak_bytes measures the peak above what was alive",
    hints=(
        "peak_bytes counts every live tensor, not only fn's",
        "measure what is alive just before profiling, in bytes",
        "return the profile's peak minus that baseline, as an int",
    ),
)
def peak(m: types.ModuleType) -> None:
    extra_peak_bytes = fn(m, "extra_peak_bytes")
    size = rng().randint(10, 3000)
    calls: list[tuple[str, Callable[..., object]]] = [
        ("a tidy with two 1000-entry temporaries", child_fn("lambda: mt.tidy(lambda: (mt.ones((1000,)) * 2.0).sum())")),
        ("a function leaking one 100-entry tensor", child_fn("lambda: mt.zeros((100,))")),
        ("a function doing nothing", child_fn("lambda: None")),
        ("a tidy with temporaries of a random size", child_fn("lambda: mt.tidy(lambda: (mt.ones((size,)) * 3.0).sum())", size=size)),
        ("a function leaking tensors of a random size", making(rng().randint(1, 4), rng().randint(5, 500))),
    ]
    for label, call in calls:
        with observe(peak=True) as seen:
            call()
        want = seen.peak
        got = integer(extra_peak_bytes(call), "extra_peak_bytes(fn)")
        if got != want:
            hint = "the profile's peak counts every live tensor, and some of them were alive before fn started" if got > want else None
            raise Fail(f"extra_peak_bytes({label}) is wrong: it counts {too(got, want)} bytes.", hint)
