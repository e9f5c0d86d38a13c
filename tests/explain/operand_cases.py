"""Expressions whose steps the explanation names, printed one step a line: ``tests/test_versions.py``
runs this file on every CPython 3.10 to 3.13 and compares the outputs (3.11+ read the columns of
each call; 3.10 counts the calls and operators of each kind on the line), so the names are the same.

Run: ``python tests/explain/operand_cases.py``.
"""

from __future__ import annotations

import microtape as mt

Tensor = mt.Tensor
C = mt.tensor([1.0, 0.0])


def chained(x: Tensor, w: Tensor) -> Tensor:
    return (x * w * 2.0).sum()


def assigned(x: Tensor, w: Tensor) -> Tensor:
    h = mt.tanh(x * w + w * x)
    y = -h * (2.0 * 3.0)
    return mt.where(C.greater(0.5), mt.exp(y), y * y).mean()


def spread(x: Tensor, w: Tensor) -> Tensor:
    y = mt.where(C.greater(0.5),
                 mt.exp(x), w)  # fmt: skip
    z = (y
         * x)  # fmt: skip
    z *= w
    return sum([(z * 2.0).sum() for _ in range(1)], mt.scalar(0.0)) + mt.sin(z @ w)


def nested(x: Tensor, w: Tensor) -> Tensor:
    return (mt.sqrt(x * x) + (lambda t: t * 2.0)(w)).sum()


def main() -> None:
    x, w = mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0])
    for f in (chained, assigned, spread, nested):
        for wrt in (0, 1):
            e = mt.explain_gradient(f, [x, w], wrt=wrt, index=1, top=100)
            for path in e.paths:
                for step in path.steps:
                    print(f.__name__, wrt, step.op, step.where.rsplit(":", 1)[-1], repr(step.expression), repr(step.operand))
        with mt.GradientTape() as tape:
            tape.watch([x, w])
            y = f(x, w)
        for s in tape.backward_steps(y, {"x": x, "w": w}):
            print(f.__name__, "step", s.op, repr(s.expression), s.operands)


if __name__ == "__main__":
    main()
