"""Checks of ex04b_find_the_bug: name the op with the wrong VJP, then fix it.

The op to name is kept as a hash (``digest``), not written here; an answer is
read as the culprit line prints it or not (``custom_grad(...)``, quotes and an
index may be left out). The forward values are compared with the starter's
model in plain Python; every VJP with finite differences of the student's own
forward.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable

from microtape import check_grads, tensor
from microtape.exercise import (
    Exercise, Fail, digest, expect_values, fmt, fn, gradcheck_failure, ignores_dy, observe, op_name, rng, tensor_fn, tensor_of,
)

EXERCISE = Exercise(
    "ex04b_find_the_bug", chapter=4, title="Checking gradients: find the wrong VJP with the culprit finder", kind="debug", minutes=10
)
AT = [-1.5, -0.2, 0.0, 0.7, 2.0]
W_ROWS = [[0.7, -0.4], [0.1, 0.9]]
X_ROWS = [[0.5, -1.5], [1.2, 0.4], [-0.3, 0.8]]


def randoms(rows: int, cols: int) -> list[list[float]]:
    return [[round(rng().uniform(-1.5, 1.5), 3) for _ in range(cols)] for _ in range(rows)]


def points() -> list[list[float]]:
    """The fixed points and random ones."""
    return [AT, [round(rng().uniform(-3.0, 3.0), 3) for _ in range(4)]]
OPS = ("swish", "scaled_tanh", "smooth_abs")


def swish(v: float) -> float:
    return v / (1.0 + math.exp(-v))


def model_reference(w: list[list[float]], x: list[list[float]]) -> float:
    outs = []
    for row in x:
        for j in range(len(w[0])):
            h = 2.0 * math.tanh(swish(math.fsum(row[k] * w[k][j] for k in range(len(row)))))
            outs.append(math.sqrt(h * h + 1.0) - 1.0)
    return math.fsum(outs) / len(outs)


CULPRIT_DIGESTS = ("63718a50ee57d3201e7da859f2ad3b043215a8318e0132e6802aeb5398d4481d",)
"""The hash of the op the starter's culprit line names (see ``digest``)."""


def culprit_found(m: types.ModuleType) -> bool:
    """Whether the file's CULPRIT is right; until it is, the checks below do not name the op."""
    answer = getattr(m, "CULPRIT", None)
    return isinstance(answer, str) and digest(op_name(answer)) in CULPRIT_DIGESTS


def model_ops(m: types.ModuleType) -> list[str]:
    """The ops the file's model records, in order, each once (empty when the model cannot run)."""
    try:
        with observe(ops=True) as seen:
            fn(m, "model")(tensor(W_ROWS), tensor(X_ROWS))
    except Exception:  # noqa: BLE001 - a broken model: the other checks say so
        return []
    return list(dict.fromkeys(seen.ops))


@EXERCISE.check(
    "CULPRIT names the op with the wrong VJP",
    hints=(
        "chapter 4: when check_grads fails it re-checks every op the model ran and names the first wrong one",
        "run the checker on model with W and X, and print the report: its last line names the culprit",
        "copy the op name between the quotes of the culprit line",
    ),
)
def culprit(m: types.ModuleType) -> None:
    answer = getattr(m, "CULPRIT", None)
    if not isinstance(answer, str):
        raise Fail(f"CULPRIT is {answer!r}, expected a str such as 'custom_grad(some_op)'.")
    if answer.strip().upper().startswith("TODO"):
        raise NotImplementedError(answer)
    if culprit_found(m):
        return
    ops = model_ops(m)
    if op_name(answer) not in {op_name(op) for op in ops}:
        listed = f": its ops are {', '.join(ops)}" if ops else ""
        raise Fail(f"CULPRIT = {answer!r} is not an op of the model{listed}.")
    raise Fail(f"CULPRIT = {answer!r}: the culprit line of check_grads(model, [W, X]) on the starter names another op, whose VJP is the wrong one.")


@EXERCISE.check(
    "the model's gradient agrees with finite differences",
    hints=(
        "find the op whose VJP disagrees, then fix that VJP (chapter 4)",
        "differentiate the culprit's forward value again, factor by factor, and compare with its VJP",
        "the product rule: in x·s both factors depend on x, and s = sigmoid(x) has the derivative s·(1 - s)",
    ),
)
def model(m: types.ModuleType) -> None:
    for w_rows, x_rows in ((W_ROWS, X_ROWS), (randoms(2, 2), randoms(rng().randint(2, 4), 2))):
        report = check_grads(tensor_fn(m, "model"), [tensor(w_rows), tensor(x_rows)])
        if not report.ok:
            raise Fail(gradcheck_failure(report, "model(w, x)", ["w", "x"], m, culprit=culprit_found(m)))


@EXERCISE.check(
    "every custom op passes check_grads alone",
    hints=(
        "each VJP must be the derivative of its own forward value",
        "check the ops one at a time with the gradient checker, each on a small tensor",
        "the culprit finder names the one to look at first",
    ),
)
def each(m: types.ModuleType) -> None:
    at = points()
    wrong = [name for name in OPS if not all(check_grads(tensor_fn(m, name), [tensor(p)]).ok for p in at)]
    if wrong and not culprit_found(m):
        verb = "disagrees" if len(wrong) == 1 else "disagree"
        raise Fail(f"{len(wrong)} of the 3 custom ops {verb} with finite differences when checked alone; the culprit finder tells you which.")
    for name in wrong:
        for p in at:
            report = check_grads(tensor_fn(m, name), [tensor(p)])
            if not report.ok:
                hint = "did you multiply by dy?" if ignores_dy(tensor_fn(m, name), [tensor(p)]) else None
                raise Fail(gradcheck_failure(report, f"{name} at {p}", ["x"], m), hint)


@EXERCISE.check(
    "the forward values are unchanged",
    hints=(
        "fix the gradient, not the value",
        "the model must still compute mean(smooth_abs(2·tanh(swish(x @ w))))",
        "undo changes to the forward value of each custom op",
    ),
)
def forward(m: types.ModuleType) -> None:
    refs: dict[str, Callable[[float], float]] = {
        "swish": swish,
        "scaled_tanh": lambda v: 2.0 * math.tanh(v),
        "smooth_abs": lambda v: math.sqrt(v * v + 1.0) - 1.0,
    }
    for p in points():
        x = tensor(p)
        for name, ref in refs.items():
            got = tensor_of(fn(m, name)(x), f"{name}(x)", x.shape)
            expect_values(got.data_sync(), [ref(v) for v in p], f"{name}({fmt(p)})")
    for w_rows, x_rows in ((W_ROWS, X_ROWS), (randoms(2, 2), randoms(3, 2))):
        got_model = tensor_of(fn(m, "model")(tensor(w_rows), tensor(x_rows)), "model(w, x)", ())
        expect_values(got_model.data_sync(), [model_reference(w_rows, x_rows)], f"model(w, x) at w = {w_rows}, x = {x_rows}")
