"""Sample inputs for every primitive: the op table's test cases.

``python -m microtape selfcheck`` and the test suite both read this table,
so a new op without samples fails the tests. Inputs keep away from kinks
and from the edges of each op's domain, and cover broadcasting.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.tensor import TensorLike

__all__ = ["CASES", "Case", "SMOOTH"]


@dataclass(frozen=True)
class Case:
    """One call of an op: nested-list inputs and keyword params."""

    name: str
    inputs: tuple[TensorLike, ...]
    params: dict[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        shapes = "x".join(_shape_text(v) for v in self.inputs)
        extra = "".join(f",{k}={v}" for k, v in self.params.items())
        return f"{self.name}[{shapes}{extra}]"


def _shape_text(v: object) -> str:
    dims = []
    while isinstance(v, (list, tuple)):
        dims.append(len(v))
        v = v[0] if v else 0.0
    return "(" + ",".join(map(str, dims)) + ")"


A = [[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]]  # (2, 3), no ties, no zeros
B = [[0.9, 0.1, -0.6], [-0.3, 1.1, 0.8]]
ROW = [0.5, -0.25, 1.3]  # (3,) broadcasts against (2, 3)
COL = [[1.4], [-0.8]]  # (2, 1)
POS = [[0.6, 1.7, 2.3], [0.9, 1.2, 3.1]]  # strictly positive

CASES: dict[str, list[Case]] = {
    "add": [Case("add", (A, B)), Case("add", (A, ROW)), Case("add", (COL, ROW)), Case("add", (0.5, A))],
    "sub": [Case("sub", (A, B)), Case("sub", (ROW, A)), Case("sub", (A, COL))],
    "mul": [Case("mul", (A, B)), Case("mul", (A, ROW)), Case("mul", (COL, ROW)), Case("mul", (2.5, A))],
    "div": [Case("div", (A, POS)), Case("div", (A, [0.5, 2.0, -1.5])), Case("div", (COL, POS))],
    "neg": [Case("neg", (A,))],
    "clone": [Case("clone", (A,))],
    "square": [Case("square", (A,))],
    "sqrt": [Case("sqrt", (POS,))],
    "pow": [Case("pow", (POS, B)), Case("pow", (POS, 2.0)), Case("pow", (POS, [-0.5, 1.5, 3.0]))],
    "exp": [Case("exp", (A,))],
    "log": [Case("log", (POS,))],
    "abs": [Case("abs", (A,))],
    "sin": [Case("sin", (A,))],
    "cos": [Case("cos", (A,))],
    "tanh": [Case("tanh", (A,))],
    "sigmoid": [Case("sigmoid", (A,))],
    "relu": [Case("relu", (A,))],
    "maximum": [Case("maximum", (A, B)), Case("maximum", (A, ROW))],
    "minimum": [Case("minimum", (A, B)), Case("minimum", (COL, ROW))],
    "sum": [
        Case("sum", (A,)),
        Case("sum", (A,), {"axis": 0}),
        Case("sum", (A,), {"axis": -1, "keepdims": True}),
        Case("sum", (A,), {"axis": (0, 1)}),
    ],
    "max": [Case("max", (A,)), Case("max", (A,), {"axis": 1}), Case("max", (A,), {"axis": 0, "keepdims": True})],
    "logsumexp": [Case("logsumexp", (A,)), Case("logsumexp", (A,), {"axis": 0}), Case("logsumexp", (A,), {"axis": None})],
    "matmul": [
        Case("matmul", (A, [[0.2, -0.5], [1.1, 0.3], [-0.7, 0.9]])),
        Case("matmul", (A, ROW)),
        Case("matmul", ([0.4, -1.0], A)),
        Case("matmul", (ROW, ROW)),
    ],
    "transpose": [Case("transpose", (A,)), Case("transpose", ([[[0.1, 0.2], [0.3, 0.4]], [[0.5, 0.6], [0.7, 0.8]]],), {"perm": (2, 0, 1)})],
    "reshape": [Case("reshape", (A,), {"shape": (3, 2)}), Case("reshape", (A,), {"shape": (-1,)})],
    "broadcast_to": [Case("broadcast_to", (ROW,), {"shape": (2, 3)}), Case("broadcast_to", (COL,), {"shape": (2, 4)})],
    "clip_by_value": [Case("clip_by_value", (A,), {"clip_value_min": -0.5, "clip_value_max": 0.8})],
    "slice": [Case("slice", (A,), {"begin": (0, 1), "size": (2, 2)}), Case("slice", (A,), {"begin": (1, 0), "size": (1, -1)})],
    "pad": [Case("pad", (A,), {"paddings": [(1, 0), (0, 2)]}), Case("pad", (ROW,), {"paddings": [(2, 1)], "constant_value": 5.0})],
    "concat": [Case("concat", (A, B), {"axis": 0}), Case("concat", (A, COL), {"axis": 1})],
    "where": [Case("where", ([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], A, B)), Case("where", ([1.0, 0.0, 1.0], A, 0.5))],
    "greater": [Case("greater", (A, B))],
    "greater_equal": [Case("greater_equal", (A, ROW))],
    "less": [Case("less", (A, B))],
    "less_equal": [Case("less_equal", (A, B))],
    "equal": [Case("equal", (A, B)), Case("equal", (ROW, A))],
    "sign": [Case("sign", (A,))],
    "zeros_like": [Case("zeros_like", (A,))],
}

SMOOTH: frozenset[str] = frozenset(
    {"add", "sub", "mul", "div", "neg", "clone", "square", "sqrt", "pow", "exp", "log", "sin", "cos", "tanh",
     "sigmoid", "sum", "logsumexp", "matmul", "transpose", "reshape", "broadcast_to", "slice", "pad", "concat"}
)
"""Ops whose second derivatives the self-check also verifies (no kinks near the samples)."""
