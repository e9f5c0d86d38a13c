"""Forward mode: ``mt.jvp``, ``mt.linearize`` and ``mt.hvp`` against PyTorch over every op of the op table,
and on the cases where a tool could go wrong (kinks, NaN, a wrong tangent, ``f`` run twice).

The reference numbers are PyTorch's float64 ``torch.func.jvp`` and
``torch.autograd.functional.hvp``, made once by ``tests/reference/make_torch_values.py``
and kept in ``tests/reference/torch_forward.json`` with the tangents they used, so the
suite needs no torch. A case of the op table without its reference fails here: run the
generator again after adding an op or a case.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import cast

import pytest

import microtape as mt

from ..op_cases import ALL_CASES, CASES, Case, call, inputs_of

REFERENCE = json.loads((Path(__file__).parents[1] / "reference" / "torch_forward.json").read_text(encoding="utf-8"))
KEYED = [(f"{case} #{n}", case) for name in sorted(CASES) for n, case in enumerate(CASES[name])]


def flat(v: object) -> list[float]:
    """A nested list (or a number) of floats, flattened row-major."""
    if isinstance(v, list):
        return [x for item in v for x in flat(item)]
    return [float(cast(float, v))]


def close(got: list[float], want: list[float], what: str) -> None:
    assert len(got) == len(want), f"{what}: {len(got)} entries, PyTorch has {len(want)}"
    for i, (a, b) in enumerate(zip(got, want)):
        assert math.isclose(a, b, rel_tol=1e-11, abs_tol=1e-12), f"{what}[{i}]: microtape {a!r}, PyTorch {b!r}"


def test_every_case_of_the_op_table_has_a_pytorch_reference() -> None:
    missing = [key for key, _ in KEYED if key not in REFERENCE]
    assert not missing, f"no PyTorch reference for {missing}: run tests/reference/make_torch_values.py with torch"
    about = REFERENCE["_about"]
    assert about["dtype"] == "float64" and about["jvp"] == "torch.func.jvp" and about["torch"].startswith("2.")
    assert len(KEYED) == len(ALL_CASES) == len(REFERENCE) - 1


@pytest.mark.parametrize(("key", "case"), KEYED, ids=[k for k, _ in KEYED])
def test_jvp_and_linearize_agree_with_torch(key: str, case: Case) -> None:
    ref = REFERENCE[key]
    tangents = [mt.tensor(v) for v in ref["tangents"]]
    value, out = mt.jvp(call(case), inputs_of(case), tangents)
    close(value.data_sync(), flat(ref["value"]), f"{key} value")
    close(out.data_sync(), flat(ref["jvp"]), f"{key} jvp")
    assert out.shape == value.shape
    value2, f_jvp = mt.linearize(call(case), inputs_of(case))
    close(f_jvp(tangents).data_sync(), flat(ref["jvp"]), f"{key} linearize")
    assert value2.data_sync() == value.data_sync()


@pytest.mark.parametrize(("key", "case"), KEYED, ids=[k for k, _ in KEYED])
def test_hvp_agrees_with_torch(key: str, case: Case) -> None:
    ref = REFERENCE[key]
    op = call(case)
    w = mt.tensor(ref["weights"])
    _, hs = mt.hvp(lambda *xs: (op(*xs) * w).sum(), inputs_of(case), [mt.tensor(v) for v in ref["tangents"]])
    assert len(hs) == len(case.inputs)
    for i, (h, want) in enumerate(zip(hs, ref["hvp"])):
        close(h.data_sync(), flat(want), f"{key} hvp of input {i}")


# -- kinks, NaN and misuse -----------------------------------------------------------------


def test_jvp_at_a_kink_uses_the_subgradient_the_vjp_uses() -> None:
    # relu at 0: the VJP's subgradient is 0, so forward mode says 0 too (one rule, whichever mode)
    _, dy = mt.jvp(mt.relu, [mt.tensor([0.0, 2.0, -1.0])], [mt.tensor([1.0, 1.0, 1.0])])
    assert dy.data_sync() == [0.0, 1.0, 0.0]
    _, dy = mt.jvp(mt.abs, [mt.tensor([0.0, -3.0])], [mt.tensor([5.0, 2.0])])
    assert dy.data_sync() == [0.0, -2.0]
    # a tie in max splits the gradient, so the tangent of the max is the mean of the tied tangents
    _, dy = mt.jvp(lambda x: mt.max(x), [mt.tensor([1.0, 1.0])], [mt.tensor([1.0, 3.0])])
    assert dy.item() == 2.0


def test_jvp_carries_nan_and_inf_rather_than_hiding_them() -> None:
    _, dy = mt.jvp(mt.sqrt, [mt.tensor([0.0, 4.0])], [mt.tensor([1.0, 1.0])])
    assert dy.data_sync()[0] == math.inf and dy.data_sync()[1] == 0.25
    _, dy = mt.jvp(mt.log, [mt.tensor([-1.0])], [mt.tensor([1.0])])
    assert math.isnan(dy.item()) or dy.item() == -1.0  # log(-1) is nan; its derivative 1/x is -1
    value, dy = mt.jvp(lambda x: x * math.nan, [mt.tensor([1.0])], [mt.tensor([1.0])])
    assert math.isnan(value.item()) and math.isnan(dy.item())


def test_hvp_of_a_piecewise_linear_function_is_zero_and_of_a_quadratic_exact() -> None:
    _, (h,) = mt.hvp(lambda x: mt.relu(x).sum(), [mt.tensor([-1.0, 2.0])], [mt.tensor([1.0, 1.0])])
    assert h.data_sync() == [0.0, 0.0]
    _, (ha, hb) = mt.hvp(lambda a, b: (a * b).sum(), [mt.tensor([1.0]), mt.tensor([2.0])], [mt.tensor([3.0]), mt.tensor([5.0])])
    assert (ha.item(), hb.item()) == (5.0, 3.0)


@pytest.mark.parametrize("api", ["jvp", "hvp", "linearize"])
def test_a_tangent_of_the_wrong_shape_says_the_shapes_the_rule_and_a_hint(api: str) -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    with pytest.raises(mt.ShapeError) as caught:
        if api == "jvp":
            mt.jvp(mt.sin, [x], [mt.tensor([1.0, 0.0])])
        elif api == "hvp":
            mt.hvp(lambda t: t.sum(), [x], [mt.tensor([1.0, 0.0])])
        else:
            mt.linearize(mt.sin, [x])[1]([mt.tensor([1.0, 0.0])])
    text = str(caught.value)
    assert text.startswith(f"{api}: tangents have shapes [(2,)], primals [(3,)].")
    assert "one per primal, of the primal's shape" in text and "hint: pass tangents=[mt.ones_like(x) for x in primals]" in text
    assert caught.value.shapes == ((2,),)


@pytest.mark.parametrize("api", ["jvp", "hvp"])
def test_a_missing_tangent_is_an_error_too(api: str) -> None:
    fn = mt.jvp if api == "jvp" else mt.hvp
    with pytest.raises(mt.ShapeError, match=r"tangents have shapes \[\(\)\], primals \[\(\), \(\)\]"):
        fn(lambda a, b: (a * b).sum(), [1.0, 2.0], [1.0])


def test_the_hint_of_the_shape_error_runs_and_fixes_the_call() -> None:
    primals = [mt.tensor([1.0, 2.0])]
    tangents = [mt.ones_like(x) for x in primals]  # the hint, as it stands
    assert mt.jvp(mt.sin, primals, tangents)[1].shape == (2,)


def test_f_must_return_a_tensor() -> None:
    with pytest.raises(mt.MicrotapeError):
        mt.jvp(lambda x: 3.0, [mt.tensor(1.0)], [mt.tensor(1.0)])  # type: ignore[arg-type, return-value]


def test_linearize_does_not_run_f_again() -> None:
    calls: list[int] = []

    def f(x: mt.Tensor) -> mt.Tensor:
        calls.append(1)
        return mt.tanh(x) * x

    x = mt.tensor([0.5, -1.0])
    value, f_jvp = mt.linearize(f, [x])
    assert len(calls) == 1
    outs = [f_jvp([mt.tensor(v)]).data_sync() for v in ([1.0, 0.0], [0.0, 1.0], [2.0, 2.0])]
    assert len(calls) == 1, "f_jvp called f again"
    _, want = mt.jvp(f, [x], [mt.tensor([2.0, 2.0])])
    assert outs[2] == want.data_sync()
    assert [a + b for a, b in zip(outs[0], outs[1])] == [v / 2 for v in outs[2]]  # linear in the tangent
    assert value.data_sync() == f(x).data_sync()


def test_jvp_runs_f_once_and_leaves_nothing_alive() -> None:
    calls: list[int] = []

    def f(x: mt.Tensor) -> mt.Tensor:
        calls.append(1)
        return x * x

    x = mt.tensor([1.0, 2.0])
    before = mt.memory().num_tensors
    value, dy = mt.jvp(f, [x], [mt.tensor([1.0, 1.0])])
    assert len(calls) == 1
    assert mt.memory().num_tensors - before == 3  # the tangent given, the value and J v: nothing else
    assert dy.data_sync() == [2.0, 4.0]
