"""A user's script, as a type checker sees it: gradients three ways.

tests/test_typing.py copies this file out of the checkout and runs mypy
--strict and pyright (strict) on it against the installed microtape, then
runs it. ``assert_type`` lines must hold; each line marked ``# type:
ignore[code]`` / ``# pyright: ignore[rule]`` must fail to type-check (both
checkers report an ignore that is not needed), so the types refuse what the
runtime refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # typing_extensions' stub ships with both checkers, so the checks run on Python 3.10 too
    from typing_extensions import assert_type  # pyright: ignore[reportMissingModuleSource]  # the stub is enough
else:
    def assert_type(value: object, typ: object, /) -> object:
        return value

import microtape as mt

x = mt.tensor([1.0, 2.0, 3.0])
assert_type(x, mt.Tensor)
assert_type(mt.tensor(list(range(3))), mt.Tensor)
ints = [1, 2, 3]
assert_type(mt.tensor([ints, ints]), mt.Tensor)  # a list[list[int]] is fine (ListLike is covariant)
w = mt.variable(mt.scalar(0.5), name="typing_w")
b = mt.variable(0.0, name="typing_b")
assert_type(w, mt.Variable)

# grad and value_and_grad: g(x, dy=None)
square = mt.grad(lambda t: t * t)
assert_type(square(x), mt.Tensor)
assert_type(square(x, mt.ones_like(x)), mt.Tensor)
assert_type(mt.grad(mt.grad(lambda t: t**3))(x), mt.Tensor)
value, dx = mt.value_and_grad(lambda t: (t * t).sum())(x)
assert_type(value, mt.Tensor)
assert_type(dx, mt.Tensor)

# grads and value_and_grads: a list of inputs in, a list of gradients out
dxs = mt.grads(lambda p, q: p * q)([x, w])
assert_type(dxs, list[mt.Tensor])
assert_type(dxs[0] * 2, mt.Tensor)
total, (da, db) = mt.value_and_grads(lambda p, q: (p * q).sum())([w, b])
assert_type(total, mt.Tensor)
assert_type(da, mt.Tensor)

# variable_grads: gradients by variable and by name
cost, grads = mt.variable_grads(lambda: ((x * w + b) ** 2).mean())
assert_type(cost, mt.Tensor)
assert_type(grads, mt.GradMap)
assert_type(grads[w], mt.Tensor)
assert_type(grads["typing_b"], mt.Tensor)
assert_type(list(grads), list[str])


# custom_grad keeps the signature of the function it wraps
@mt.custom_grad
def softplus(t: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], mt.Tensor]]:
    return mt.log(1.0 + mt.exp(t)), lambda dy: dy * mt.sigmoid(t)


assert_type(softplus(x), mt.Tensor)
assert_type(mt.grad(softplus)(x), mt.Tensor)


# with save, custom_grad gives a function of the tensors alone
def scaled_tanh(
    t: mt.Tensor, save: Callable[[list[mt.Tensor]], None]
) -> tuple[mt.Tensor, Callable[[mt.Tensor, list[mt.Tensor]], mt.Tensor]]:
    th = mt.tanh(t)
    save([th])
    return 2.0 * th, lambda dy, saved: dy * 2.0 * (1.0 - saved[0] * saved[0])


scaled = mt.custom_grad(scaled_tanh)
assert_type(scaled(x), mt.Tensor)
assert_type(mt.grad(scaled)(x), mt.Tensor)

# the tape: one source, a list of sources, a dict of sources
with mt.GradientTape(persistent=True) as tape:
    y = (x * w + b).sum()
assert_type(tape.gradient(y, w), mt.Tensor | None)
assert_type(tape.gradient(y, [w, b]), list[mt.Tensor | None])
assert_type(tape.gradient(y, {"w": w, "b": b}), dict[str, mt.Tensor | None])
assert_type(tape.jacobian(x * w, w), mt.Tensor | None)
tape.release()


def two_inputs(p: mt.Tensor, q: mt.Tensor) -> mt.Tensor:
    return p * q


def what_the_runtime_refuses() -> None:
    """Never called: every line here must fail to type-check."""
    square("1.0")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    square(x, "ones")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    square(x, None, 3)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    mt.tensor("abc")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    mt.tensor(range(3))  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    mt.tensor(b"abc")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    mt.tensor(["1", "2"])  # type: ignore[list-item]  # pyright: ignore[reportArgumentType]
    mt.variable("0.5")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    mt.grads(lambda p, q: p * q)(x)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    mt.grads(lambda p, q: p * q)(range(2))  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    mt.grad(two_inputs)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    softplus(x, x)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    scaled(x, x)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    grads[0]  # type: ignore[index]  # pyright: ignore[reportArgumentType]
    dxs[0] = None  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType, reportCallIssue]


def what_the_types_accept() -> None:
    """Never called here (the runtime takes numbers and lists for grad's x where the engine supports it)."""
    assert_type(square(3.0), mt.Tensor)
    assert_type(square([1.0, 2.0]), mt.Tensor)
    assert_type(softplus(1.0), mt.Tensor)  # custom_grad's function takes what ops take
    assert_type(mt.grads(lambda p, q: p * q)([x, 2.0]), list[mt.Tensor])


print("gradients:", dxs[0], grads[w])
