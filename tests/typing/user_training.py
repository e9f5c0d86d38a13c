"""A user's script, as a type checker sees it: tidy, reports, optimizers, clipping, memory.

See user_gradients.py for how tests/test_typing.py runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # typing_extensions' stub ships with both checkers, so the checks run on Python 3.10 too
    from typing_extensions import assert_type  # pyright: ignore[reportMissingModuleSource]  # the stub is enough
else:
    def assert_type(value: object, typ: object, /) -> object:
        return value

import microtape as mt

x = mt.tensor1d([1, 2, 3, 4])
y = mt.tensor1d([1, 3, 5, 7])
w = mt.variable(mt.scalar(0.0), name="typing_train_w")
b = mt.variable(mt.scalar(0.0), name="typing_train_b")


def loss() -> mt.Tensor:
    return ((x * w + b - y) ** 2).mean()


# tidy returns what its function returns
assert_type(mt.tidy(loss), mt.Tensor)
assert_type(mt.tidy("named", loss), mt.Tensor)
assert_type(mt.tidy(lambda: (x * 2, len("ab"))), tuple[mt.Tensor, int])
assert_type(mt.keep(x * 2), mt.Tensor)

# optimizers
opt = mt.train.adam(0.1)
assert_type(opt, mt.train.AdamOptimizer)
assert_type(opt.minimize(loss), None)
assert_type(opt.minimize(loss, return_cost=True), mt.Tensor)
sgd: mt.train.Optimizer = mt.train.sgd(0.05)
value, grads = sgd.compute_gradients(loss)
assert_type(value, mt.Tensor)
sgd.apply_gradients(grads)
sgd.apply_gradients({"typing_train_w": grads[w]})

# clipping: a list of tensors stays a list of tensors
clipped, norm = mt.clip_by_global_norm([grads[w], grads[b]], 1.0)
assert_type(clipped, list[mt.Tensor])
assert_type(clipped[0] * 2, mt.Tensor)
assert_type(norm, mt.Tensor)
maybe, _ = mt.clip_by_global_norm([grads[w], None], 1.0)
assert_type(maybe, list[mt.Tensor | None])
assert_type(mt.clip_by_norm(grads[w], 1.0), mt.Tensor)

# reports
report = mt.check_grads(lambda t: mt.tanh(t @ t.T).sum(), [mt.random_normal((3, 3), seed=0)])
assert_type(report, mt.GradCheckReport)
assert_type(report.ok, bool)
assert_type(report.max_abs_error, float)
stats = mt.grad_stats(grads)
assert_type(stats["typing_train_w"].norm, float)
monitor = mt.GradientMonitor()
assert_type(monitor.record(grads), list[str])
with mt.GradientTape() as tape:
    cost = loss()
assert_type(mt.grad_stats(tape.gradient(cost, {"w": w, "b": b})), dict[str, mt.GradStats])  # tape results as they come
assert_type(mt.memory().num_tensors, int)
assert_type(mt.numerical_grad(lambda t: (t * t).sum(), [x]), list[mt.Tensor])


def what_the_runtime_refuses() -> None:
    """Never called: every line here must fail to type-check."""
    mt.tidy(3)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]
    opt.minimize(lambda: 1.0)  # type: ignore[arg-type, return-value]  # pyright: ignore[reportArgumentType]
    mt.clip_by_global_norm(x, 1.0)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType, reportCallIssue]
    mt.clip_by_global_norm(range(3), 1.0)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType, reportCallIssue]
    mt.clip_by_norm([1.0, 2.0], 1.0)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    verdict: str = report.ok  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]
    print(verdict)


print("training:", report.ok, clipped[0])
