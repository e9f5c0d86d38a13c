"""Sample inputs for every primitive: the op table's test cases.

``python -m microtape selfcheck`` and the test suite both read this table,
so a new op without samples fails the tests. Inputs keep away from kinks
and from the edges of each op's domain, and cover broadcasting.
"""

from __future__ import annotations

import math
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
LABELS = [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]  # binary labels
SOFT = [[0.2, 0.9, 0.5], [1.0, 0.0, 0.35]]  # labels between 0 and 1
ROWS = [[0.2, 0.3, 0.5], [0.0, 1.0, 0.0]]  # each row a distribution over 3 classes

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
    "atan": [Case("atan", (A,))],
    "atan2": [Case("atan2", (A, B)), Case("atan2", (A, ROW)), Case("atan2", (COL, POS))],
    "expm1": [Case("expm1", (A,))],
    "log1p": [Case("log1p", (POS,)), Case("log1p", ([[-0.5, 0.2, 1.5], [-0.9, 3.0, 0.1]],))],
    "log2": [Case("log2", (POS,))],
    "softplus": [Case("softplus", (A,)), Case("softplus", ([-30.0, 0.5, 30.0],))],
    "log_sigmoid": [Case("log_sigmoid", (A,)), Case("log_sigmoid", ([-30.0, 0.5, 30.0],))],
    "sigmoid_cross_entropy": [
        Case("sigmoid_cross_entropy", (LABELS, A)),
        Case("sigmoid_cross_entropy", (SOFT, A), {"reduction": "none"}),
        Case("sigmoid_cross_entropy", (SOFT, B), {"reduction": "sum"}),
    ],
    "softmax_cross_entropy": [
        Case("softmax_cross_entropy", (ROWS, A)),
        Case("softmax_cross_entropy", (ROWS, B), {"axis": -1, "reduction": "none"}),
        Case("softmax_cross_entropy", ([[0.5, 0.1, 0.3], [0.5, 0.9, 0.7]], A), {"axis": 0, "reduction": "sum"}),
    ],
    "norm": [
        Case("norm", (A,)),
        Case("norm", (A,), {"axis": 1}),
        Case("norm", (A,), {"ord": 1, "axis": 0, "keepdims": True}),
        Case("norm", (A,), {"ord": math.inf, "axis": 1}),
        Case("norm", (A,), {"ord": -math.inf}),
        Case("norm", (A,), {"ord": "fro", "axis": (0, 1)}),
    ],
    "argmax": [Case("argmax", (A,)), Case("argmax", (A,), {"axis": 1})],
    "argmin": [Case("argmin", (A,)), Case("argmin", (A,), {"axis": -1})],
    "one_hot": [Case("one_hot", ([0.0, 2.0, 1.0],), {"depth": 3}), Case("one_hot", ([[1.0, 0.0], [3.0, 5.0]],), {"depth": 4, "on_value": 2.0})],
    "gather": [
        Case("gather", (A, [1.0, 0.0, 1.0])),
        Case("gather", (A, [2.0, 0.0]), {"axis": 1}),
        Case("gather", (ROW, [[0.0, 2.0], [2.0, 2.0]])),
    ],
    "is_nan": [Case("is_nan", (A,))],
    "is_finite": [Case("is_finite", (A,))],
    "is_inf": [Case("is_inf", (A,))],
    "stop_gradient": [Case("stop_gradient", (A,))],
}

SMOOTH: frozenset[str] = frozenset(
    {"add", "sub", "mul", "div", "neg", "clone", "square", "sqrt", "pow", "exp", "log", "sin", "cos", "tanh",
     "sigmoid", "sum", "logsumexp", "matmul", "transpose", "reshape", "broadcast_to", "slice", "pad", "concat",
     "atan", "atan2", "expm1", "log1p", "log2", "softplus", "log_sigmoid", "sigmoid_cross_entropy",
     "softmax_cross_entropy", "norm", "gather"}
)
"""Ops whose second derivatives the self-check also verifies (no kinks near the samples)."""
