"""Every hint of detect_anomaly that is code is applied, literally, to the code it points at.

Each case is a small user module written to a file (so its lines can be read, as a
user's can): ``detect_anomaly`` runs on it, in both modes, and must give a hint
that is code in the module's own names. The test then puts the hint in place of
the expression it is meant for, runs the module again and checks that the NaN is
gone (``detect_anomaly`` raises nothing) and that the gradient is right: equal to
PyTorch's in float64 for the function the fix computes (``tests/reference/
torch_values.json``, made by ``make_torch_values.py``).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

import microtape as mt

REFERENCE = json.loads((Path(__file__).parents[1] / "reference" / "torch_values.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class HintCase:
    """A user's module (its ``grads()`` returns the gradients), the expression the hint replaces and what the hint must be."""

    name: str
    code: str
    broken: str
    hint: str
    modes: tuple[str, ...] = ("raise", "trace")


CASES = [
    HintCase(  # TF #38349, PyTorch #187297, MLX: sqrt in the branch a where does not pick, at x = -1 and 0
        "where_sqrt",
        """
        def grads():
            x = mt.tensor([-1.0, 0.0, 4.0])
            return mt.grads(lambda x: mt.where(x.greater(0.0), mt.sqrt(x), 0.0).sum())([x])
        """,
        "mt.where(x.greater(0.0), mt.sqrt(x), 0.0)",
        "mt.where(x.greater(0.0), mt.sqrt(mt.where(x.greater(0.0), x, 1.0)), 0.0)",
    ),
    HintCase(  # PyTorch #68425 in float64: exp overflows in the branch that is not picked
        "where_exp",
        """
        def grads():
            a = mt.tensor([1000.0, -1.0])
            return mt.grads(lambda a: mt.where(a.less_equal(0.0), mt.exp(a), 1.0 + a).sum())([a])
        """,
        "mt.where(a.less_equal(0.0), mt.exp(a), 1.0 + a)",
        "mt.where(a.less_equal(0.0), mt.exp(mt.where(a.less_equal(0.0), a, 0.0)), 1.0 + a)",
    ),
    HintCase(  # TF #38349 (a comment): pow(10, exp(a)) overflows in the branch that is not picked
        "where_pow",
        """
        def grads():
            a = mt.tensor([10.0, 14.0])
            return mt.grads(lambda a: mt.where(a.less(15.0), a, mt.pow(10.0, mt.exp(a))).sum())([a])
        """,
        "mt.where(a.less(15.0), a, mt.pow(10.0, mt.exp(a)))",
        "mt.where(a.less(15.0), a, mt.pow(10.0, mt.where(a.less(15.0), 0.0, mt.exp(a))))",
    ),
    HintCase(  # PyTorch #16317: divide, then replace the 0/0 entries with a where on the next line
        "where_div",
        """
        def loss(x, n):
            y = x / n
            return mt.where(n.equal(0.0), 0.0, y).sum()

        def grads():
            return mt.grads(loss)([mt.tensor([0.0, 1.0]), mt.tensor([0.0, 2.0])])
        """,
        "y = x / n",
        "y = x / mt.where(n.equal(0.0), 1.0, n)",
        ("trace",),  # the forward 0/0 is made on a line without the where: raise mode can only say it in words
    ),
    HintCase(  # JAX #347: a length by hand, then a where that does not pick the zero row
        "masked_norm",
        """
        def loss(x):
            d = mt.sqrt((x * x).sum(axis=1))
            return mt.where(d.greater(0.5), d, 1.0).sum()

        def grads():
            return mt.grads(loss)([mt.tensor([[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]])])
        """,
        "mt.sqrt((x * x).sum(axis=1))",
        "mt.norm(x, axis=1)",
    ),
    HintCase(  # tensorflow/models #181: the log of a softmax that rounds to 0
        "log_softmax",
        """
        def grads():
            labels = mt.tensor([0.0, 1.0, 0.0])
            return mt.grads(lambda z: -(labels * mt.log(mt.softmax(z))).sum())([mt.tensor([1000.0, 0.0, -1000.0])])
        """,
        "mt.log(mt.softmax(z))",
        "mt.log_softmax(z)",
    ),
    HintCase(  # candle #2561: binary cross-entropy on probabilities, at a logit of 40
        "bce_logits",
        """
        def loss(z):
            y = mt.tensor([0.0, 1.0])
            return -(y * mt.log(mt.sigmoid(z)) + (1.0 - y) * mt.log(1 - mt.sigmoid(z))).sum()

        def grads():
            return mt.grads(loss)([mt.tensor([40.0, -40.0])])
        """,
        "mt.log(1 - mt.sigmoid(z))",
        "mt.log_sigmoid(-(z))",
    ),
    HintCase(  # HIPS autograd #151, the book's distance: a norm by hand, at 0
        "norm_at_zero",
        """
        def grads():
            target = mt.tensor([1.0, 2.0])
            return mt.grads(lambda a: mt.sqrt(((a - target) ** 2).sum()))([mt.tensor([1.0, 2.0])])
        """,
        "mt.sqrt(((a - target) ** 2).sum())",
        "mt.norm(a - target)",
    ),
    HintCase(  # log(1 + exp(x)) for a large x
        "softplus",
        """
        def grads():
            return mt.grads(lambda x: mt.log(1 + mt.exp(x)).sum())([mt.tensor([1000.0, 0.0])])
        """,
        "mt.log(1 + mt.exp(x))",
        "mt.softplus(x)",
    ),
]


def load(path: Path, code: str) -> ModuleType:
    path.write_text("import microtape as mt\n" + textwrap.dedent(code), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"hint_case_{path.stem}_{abs(hash(code))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hint_in(mode: str, module: ModuleType) -> str:
    if mode == "raise":
        with pytest.raises(mt.AnomalyError) as info:
            with mt.detect_anomaly():
                module.grads()
        return str(info.value.hint)
    with mt.detect_anomaly(mode="trace") as trace:
        module.grads()
    assert trace.hint and f"hint: {trace.hint}" in str(trace), str(trace)
    return trace.hint


def close(got: object, want: object) -> bool:
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(close(g, w) for g, w in zip(got, want))
    assert isinstance(got, float) and isinstance(want, float)
    return math.isfinite(got) and math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_hint_is_code_in_the_users_names_and_applying_it_fixes_the_gradient(case: HintCase, tmp_path: Path) -> None:
    assert case.broken in textwrap.dedent(case.code)
    module = load(tmp_path / "broken.py", case.code)
    before = [g.data_sync() for g in module.grads()]
    assert any(not math.isfinite(v) for g in before for v in g), f"{case.name}: the case does not show the bug"
    for mode in case.modes:
        assert hint_in(mode, module) == case.hint, f"{case.name}, mode {mode}"
    fixed = load(tmp_path / "fixed.py", textwrap.dedent(case.code).replace(case.broken, case.hint))
    with mt.detect_anomaly():  # raises at the first NaN or Inf any op makes: none must be left
        gs = fixed.grads()
    want = REFERENCE[case.name]["grads"]
    got = [g.tolist() for g in gs]
    assert close(got, want), f"{case.name}: {got} != PyTorch's {want}"


def test_a_hint_in_words_when_the_users_line_cannot_be_read() -> None:
    """Code typed at a prompt has no source line to rewrite: the hint is advice, never a guess at names."""
    namespace: dict[str, object] = {"mt": mt}
    exec(compile("def f(x):\n    return mt.where(x.greater(0.0), mt.sqrt(x), 0.0).sum()\n", "<typed>", "exec"), namespace)
    with mt.detect_anomaly(mode="trace") as trace:
        mt.grad(namespace["f"])(mt.tensor([0.0, 4.0]))  # type: ignore[arg-type]  # the function exec made
    event = trace.first
    assert event is not None and event.masked_by.startswith("where at <typed>:2 hid entry (0,)")
    assert "0·inf = nan" in event.masked_by and "double where" in event.hint and "mt.where(" not in event.hint


def test_the_references_were_made_by_pytorch_in_float64() -> None:
    about = REFERENCE["_about"]
    assert about["dtype"] == "float64" and about["torch"].startswith("2.") and about["made_by"].endswith("make_torch_values.py")
    assert {c.name for c in CASES} <= set(REFERENCE)


def test_the_new_ops_agree_with_pytorch() -> None:
    """The new ops' values and gradients, against PyTorch's own functions (float64)."""

    def check(name: str, f: object, *values: object) -> None:
        ref = REFERENCE[name]
        xs = [mt.tensor(v) for v in values]  # type: ignore[arg-type]  # nested lists of floats
        value = f(*xs)  # type: ignore[operator]
        assert math.isclose(value.item(), ref["value"], rel_tol=1e-12), (name, value.item(), ref["value"])
        gs = mt.grads(f)(xs)  # type: ignore[call-overload]  # f is any of the ops' lambdas
        assert close([g.tolist() for g in gs], ref["grads"]), (name, [g.tolist() for g in gs], ref["grads"])

    check("atan2", lambda y, x: mt.atan2(y, x).sum(), *REFERENCE["atan2"]["inputs"])
    check("log1p_expm1", lambda x: (mt.log1p(x) + mt.expm1(x)).sum(), *REFERENCE["log1p_expm1"]["inputs"])
    check("log_sigmoid", lambda x: mt.log_sigmoid(x).sum(), *REFERENCE["log_sigmoid"]["inputs"])
    labels = mt.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    check("sigmoid_cross_entropy", lambda z: mt.sigmoid_cross_entropy(labels, z), *REFERENCE["sigmoid_cross_entropy"]["inputs"])
    soft = mt.tensor([[0.2, 0.3, 0.5], [0.0, 1.0, 0.0]])
    check("softmax_cross_entropy", lambda z: mt.softmax_cross_entropy(soft, z), *REFERENCE["softmax_cross_entropy"]["inputs"])
    check("norm_rows", lambda x: mt.norm(x, axis=1).sum(), *REFERENCE["norm_rows"]["inputs"])
    weights = mt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    check("gather", lambda x: (mt.gather(x, mt.tensor([2.0, 0.0, 2.0])) * weights).sum(), *REFERENCE["gather"]["inputs"])
    check("norm_at_zero", lambda a: mt.norm(a - mt.tensor([1.0, 2.0])), *REFERENCE["norm_at_zero"]["inputs"])
    check("softplus", lambda x: mt.softplus(x).sum(), *REFERENCE["softplus"]["inputs"])


def test_sys_path_is_left_alone() -> None:
    assert not any("hint_case" in name for name in sys.path)
