"""Checks of ex01_variables_sgd: make variables, update them in place."""

from __future__ import annotations

import types

from microtape import Variable, scalar, tensor, variable
from microtape.exercise import Exercise, Fail, expect_values, fn, observe, off_by, rng

EXERCISE = Exercise("ex01_variables_sgd", chapter=1, title="Variables: make them, assign an SGD step in place", minutes=15)


def randoms(n: int) -> list[float]:
    return [round(rng().uniform(-3.0, 3.0), 3) for _ in range(n)]


@EXERCISE.check(
    "make_weights makes a trainable variable",
    hints=(
        "a model's weights are variables, made from the values you are given",
        "mt.variable accepts a tensor or a list of numbers; variables are trainable by default",
        "return the new variable itself; the grader reads its shape, values and trainable flag",
    ),
)
def weights(m: types.ModuleType) -> None:
    for values in ([1.0, -2.0, 0.5], randoms(rng().randint(2, 6))):
        w = fn(m, "make_weights")(values)
        if type(w) is not Variable:
            raise Fail(f"make_weights({values}) returned {type(w).__name__}, not a Variable.")
        if w.shape != (len(values),):
            raise Fail(f"make_weights({values}) has shape {w.shape}, expected ({len(values)},).")
        expect_values(w.data_sync(), values, f"make_weights({values})")
        if not w.trainable:
            raise Fail("make_weights(...) returned a variable with trainable=False; weights must be trainable.")
        w.dispose()  # two variables alive at once are the next check's question


@EXERCISE.check(
    "make_weights can be called twice",
    hints=(
        "two variables alive at the same time cannot share a name",
        "leave out name=...: microtape then picks a fresh name for each variable",
        "a fixed name works once and fails the second time with VariableError",
    ),
)
def twice(m: types.ModuleType) -> None:
    make = fn(m, "make_weights")
    a, b = make([1.0]), make([2.0])
    if not (type(a) is Variable and type(b) is Variable):
        raise Fail(f"make_weights returned {type(a).__name__} and {type(b).__name__}, not variables.")
    if a is b:
        raise Fail("two calls of make_weights returned the same variable object; each call should make a new one.")


@EXERCISE.check(
    "make_step_counter is a frozen scalar at 0",
    hints=(
        "a step counter is state, not a parameter: optimizers must not train it",
        "mt.variable has a keyword that marks a variable as not trainable",
        "the counter is a scalar (shape ()), made from the number 0.0",
    ),
)
def counter(m: types.ModuleType) -> None:
    c = fn(m, "make_step_counter")()
    if type(c) is not Variable:
        raise Fail(f"make_step_counter() returned {type(c).__name__}, not a Variable.")
    if c.shape != ():
        raise Fail(f"make_step_counter() has shape {c.shape}, expected a scalar, shape ().")
    if c.item() != 0.0:
        raise Fail(f"make_step_counter() does not start at 0: {off_by(c.item(), 0.0)}.")
    if c.trainable:
        raise Fail("make_step_counter() is trainable, so variable_grads and optimizers would change it.")


@EXERCISE.check(
    "sgd_step updates the variable in place",
    hints=(
        "an update must change the variable itself; rebinding a local name changes nothing outside",
        "variables have methods that write new values into them: assign, assign_sub, assign_add",
        "the new value is the old one minus the learning rate times the gradient; the gradient is not changed",
    ),
)
def sgd(m: types.ModuleType) -> None:
    n = rng().randint(2, 5)
    cases = [([1.0, 2.0, 3.0], [0.5, -1.0, 2.0], 0.1), (randoms(n), randoms(n), round(rng().uniform(0.01, 0.5), 3))]
    for start, grad, lr in cases:
        w = variable(tensor(start))
        g = tensor(grad)
        with observe() as seen:
            fn(m, "sgd_step")(w, g, lr)
        got = w.data_sync()
        if got == start:
            raise Fail(f"after sgd_step(w, grad, {lr}), w still holds {start}: the variable was not updated.")
        want = [v - lr * d for v, d in zip(start, grad)]
        if all(abs(a - (v + lr * d)) < 1e-9 for a, v, d in zip(got, start, grad)):
            raise Fail(f"w after sgd_step(w={start}, grad={grad}, lr={lr}) moved up the gradient.", "subtract, do not add")
        expect_values(got, want, f"w after sgd_step(w={start}, grad={grad}, lr={lr})")
        expect_values(g.data_sync(), grad, "grad after sgd_step")
        made = seen.variables
        if made > 0:
            raise Fail(f"sgd_step made {made} new variable(s); an SGD step assigns to the existing one.")
        if not w.trainable:
            raise Fail("sgd_step left w with trainable=False.")


@EXERCISE.check(
    "count_step adds 1 in place",
    hints=(
        "like the SGD step, the counter changes in place",
        "one of the assign methods adds to the current value",
        "add the number 1.0; the counter must stay a non-trainable scalar",
    ),
)
def count(m: types.ModuleType) -> None:
    step = fn(m, "count_step")
    for calls in (3, rng().randint(4, 12)):
        c = variable(scalar(0.0), trainable=False)
        for _ in range(calls):
            step(c)
        if c.item() != float(calls):
            raise Fail(f"after {calls} calls of count_step(counter), starting at 0, the counter is wrong: {off_by(c.item(), float(calls))}.")
