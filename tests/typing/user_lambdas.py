"""A user's script, as a type checker sees it: lambdas, settings and a tensor that does not change.

Every function that calls a user's function with tensors types a lambda's
parameters as tensors, under mypy as under pyright: ``grad``, ``grads``,
``value_and_grad``, ``value_and_grads``, ``check_grads``, ``numerical_grad``,
``explain_gradient``, ``custom_grad``, ``jvp``, ``linearize``, ``hvp`` and
``taylor_test`` (``tests/test_typing.py`` lists
them). Settings with a fixed set of values are ``Literal`` types, and every
attribute of a tensor is read-only. tests/test_typing.py runs this file as
user_gradients.py (see there): the ``assert_type`` lines must hold, and each
line marked ``# type: ignore[code]`` / ``# pyright: ignore[rule]`` must fail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # typing_extensions' stub ships with both checkers, so the checks run on Python 3.10 too
    from typing_extensions import assert_type  # pyright: ignore[reportMissingModuleSource]  # the stub is enough
else:
    def assert_type(value: object, typ: object, /) -> object:
        return value

import microtape as mt
from microtape.train.optimizer import OptimizerName

x = mt.tensor([1.0, 2.0])
y = mt.tensor([3.0, 4.0])

# A lambda's parameters are tensors: one parameter, then two. (mypy checks a lambda given to an
# overloaded function once with untyped parameters first, so an assert_type inside one would
# fail there; the lines that must fail, below, show the parameters are tensors.)
assert_type(mt.grad(lambda t: (assert_type(t, mt.Tensor) * t).sum())(x), mt.Tensor)
assert_type(mt.value_and_grad(lambda t: (assert_type(t, mt.Tensor) * t).sum())(x), tuple[mt.Tensor, mt.Tensor])
assert_type(mt.grads(lambda t: t.sum())([x]), list[mt.Tensor])
assert_type(mt.grads(lambda a, b: (a * b).sum())([x, y]), list[mt.Tensor])
assert_type(mt.value_and_grads(lambda a, b: (a * b).sum())([x, y]), tuple[mt.Tensor, list[mt.Tensor]])
assert_type(mt.check_grads(lambda t: t.tanh(), [x]), mt.GradCheckReport)
assert_type(mt.check_grads(lambda a, b: a * b, [x, y], mode="fast", order=2, seed=0), mt.GradCheckReport)
assert_type(mt.check_grads(lambda t: t.tanh(), [x], modes=("rev", "fwd")), mt.GradCheckReport)
assert_type(mt.numerical_grad(lambda t: t.exp(), [x], method="forward"), list[mt.Tensor])
assert_type(mt.numerical_grad(lambda a, b: a - b, [x, y]), list[mt.Tensor])
assert_type(mt.explain_gradient(lambda t: (t * t).sum(), [x]), mt.GradientExplanation)
assert_type(mt.explain_gradient(lambda a, b: (a * b).sum(), [x, y], wrt=1), mt.GradientExplanation)
assert_type(mt.jvp(lambda t: t.sin(), [x], [y]), tuple[mt.Tensor, mt.Tensor])
assert_type(mt.jvp(lambda a, b: a * b, [x, y], [y, x]), tuple[mt.Tensor, mt.Tensor])
assert_type(mt.hvp(lambda t: (t * t * t).sum(), [x], [y]), tuple[mt.Tensor, list[mt.Tensor]])
assert_type(mt.hvp(lambda a, b: (a * b).sum(), [x, y], [y, x]), tuple[mt.Tensor, list[mt.Tensor]])
value_at, f_jvp = mt.linearize(lambda t: t.exp(), [x])
assert_type(f_jvp([y]), mt.Tensor)
assert_type(mt.linearize(lambda a, b: a - b, [x, y])[0], mt.Tensor)
assert_type(mt.taylor_test(lambda t: (t * t).sum(), [x]), mt.TaylorReport)
assert_type(mt.taylor_test(lambda a, b: (a * b).sum(), [x, y], direction=[y, x], h0=0.05, steps=4, order=2, seed=1).reason, str)

# custom_grad: f's parameters are tensors, and so is what its grad_fn is given
square = mt.custom_grad(lambda t: (t**2, lambda dy: dy * 2.0 * t))
product = mt.custom_grad(lambda a, b: (a * b, lambda dy: [dy * b, dy * a]))
assert_type(square(x), mt.Tensor)
assert_type(square(2.0), mt.Tensor)  # numbers are converted, as ops convert them
assert_type(product(x, y), mt.Tensor)
assert_type(mt.grads(lambda a, b: product(a, b).sum())([x, y]), list[mt.Tensor])

# settings are literals: the values the run time accepts type-check
with mt.GradientTape(persistent=True) as tape:
    tape.watch(x)
    z = (x * x).sum()
assert_type(tape.gradient(z, y, unconnected_gradients="zero"), mt.Tensor | None)
assert_type(tape.to_dot(rankdir="TB"), str)
tape.release()
with mt.detect_anomaly(mode="trace") as trace:
    pass
assert_type(trace, mt.AnomalyTrace)
with mt.leak_check(on_leak="ignore") as leaks:
    pass
assert_type(leaks.count, int)
assert_type(mt.train.adam(0.1).class_name, OptimizerName)

# a tensor's attributes are read, never assigned
assert_type(x.shape, tuple[int, ...])
assert_type(x.size, int)
assert_type(x.id, int)
w = mt.variable(x, name="typing_lambdas_w")
assert_type(w.name, str)
w.trainable = False  # the one attribute that is set


def what_the_runtime_refuses() -> None:
    """Never called: every line here must fail to type-check."""
    # a lambda whose body is wrong, for each function that takes a user's function
    mt.grad(lambda t: t.no_such_method())  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.grads(lambda t: t.no_such_method())  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.value_and_grad(lambda t: t.no_such_method())  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.value_and_grads(lambda t: t.no_such_method())  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.check_grads(lambda t: t.no_such_method(), [x])  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.numerical_grad(lambda t: t.no_such_method(), [x])  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.explain_gradient(lambda t: t.no_such_method(), [x])  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.custom_grad(lambda t: t.no_such_method())  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.jvp(lambda t: t.no_such_method(), [x], [y])  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.linearize(lambda t: t.no_such_method(), [x])  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.hvp(lambda t: t.no_such_method(), [x], [y])  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.taylor_test(lambda t: t.no_such_method(), [x])  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    # with two parameters too (mypy then reports the lambda against the one-input overload)
    mt.grads(lambda a, b: a * b.no_such_method())  # type: ignore[misc, arg-type]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.check_grads(lambda a, b: a.no_such_method() * b, [x, y])  # type: ignore[misc, arg-type]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    mt.custom_grad(lambda a, b: (a.no_such_method(), lambda dy: [dy, dy]))  # type: ignore[misc, arg-type]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownLambdaType]
    # a setting outside its values
    mt.check_grads(lambda t: t * t, [x], mode="fulll")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType, reportCallIssue]
    mt.check_grads(lambda t: t * t, [x], order=3)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType, reportCallIssue]
    mt.check_grads(lambda t: t * t, [x], modes=("rev", "fwdd"))  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]
    mt.numerical_grad(lambda t: t * t, [x], method="backward")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType, reportCallIssue]
    mt.taylor_test(lambda t: (t * t).sum(), [x], order=3)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType, reportCallIssue]
    mt.detect_anomaly(mode="trase")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    mt.leak_check(on_leak="shout")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    tape.gradient(z, x, unconnected_gradients="zeros")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType, reportCallIssue]
    tape.to_dot(rankdir="UP")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    # an attribute assigned: a tensor never changes (a variable, through assign)
    x.shape = (2, 1)  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]
    x.size = 3  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]
    x.id = 1  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]
    x.dtype = "float32"  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]
    x.requires_grad = True  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]
    x.grad = None  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]
    w.name = "another"  # type: ignore[misc]  # pyright: ignore[reportAttributeAccessIssue]


print("lambdas:", square(x), product(x, y), trace.first is None, leaks.count, value_at)
