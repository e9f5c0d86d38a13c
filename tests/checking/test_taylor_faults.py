"""mt.taylor_test against the culprit finder's injected faults (each one that changes a gradient is
failed), the cases that fool a central difference, and what it cannot know (inconclusive, with why).

Driven by the op table (``tests/op_cases.py``) and the faults of the culprit finder's measurement
(``tests/checking/test_culprit_mutation.py``), so a new op or a new fault cannot go untested.
"""

from __future__ import annotations

import math

import pytest

import microtape as mt
from microtape.engine.primitive import OPS
from tests.checking.test_culprit_mutation import FAULTS, differentiable_ops, faulty_vjp
from tests.op_cases import ALL_CASES, SMOOTH, Case, call, inputs_of

INDEX_OPS = ("gather", "one_hot")  # inputs that are indices: a direction must not move them
CONDITION_OPS = ("where",)  # the condition: moving it flips branches (a jump, not a gradient)


def direction(case: Case, xs: list[mt.Tensor]) -> list[mt.Tensor]:
    """A random direction, zero on the inputs no gradient is meant for (indices, a where's condition)."""
    ds = []
    for i, x in enumerate(xs):
        whole = all(float(v).is_integer() for v in x.data_sync())
        frozen = (case.name in INDEX_OPS and whole) or (case.name in CONDITION_OPS and i == 0)
        ds.append(mt.zeros(x.shape) if frozen else mt.random_normal(x.shape, seed=i + 1))
    return ds


def run(case: Case, steps: int = 5) -> mt.TaylorReport:
    xs = inputs_of(case)
    return mt.taylor_test(call(case), xs, direction(case, xs), seed=0, steps=steps)


@pytest.mark.parametrize("case", ALL_CASES, ids=str)
def test_a_correct_vjp_of_the_op_table_is_never_failed(case: Case) -> None:
    report = run(case)
    if case.name == "stop_gradient":  # its gradient is 0 by design, though f changes: not f's derivative
        assert report.verdict == "failed", report
    elif case.name in SMOOTH:
        if report.verdict == "inconclusive" and "try more steps" in report.reason:
            report = run(case, steps=14)  # the advice, applied
        assert report.verdict == "passed", report
    else:  # comparisons, zero-gradient ops, kinks: passed, or inconclusive with its reason
        assert report.verdict in ("passed", "inconclusive"), report
        assert report.reason


# taylor_test scalarizes a tensor output as sum(w * f(x)): a fault in mul or sum also hits that
# weighting, and a sign flip (or a swap) applied twice cancels. The dot product of two vectors in
# the op table multiplies a vector by itself ([0.5, -0.25, 1.3] twice): at that point swapping its
# two gradients, or giving the first to both, changes nothing (the fault only applies at the moved
# points where the kink check looks), so the test rightly passes; checked below, not skipped.
CANCELLED = {("mul", "sign"), ("mul", "2nd=1st"), ("mul", "swap"), ("sum", "sign")}
MUTANTS = [(case, fault) for name in differentiable_ops() for case in ALL_CASES if case.name == name for fault in FAULTS]


@pytest.mark.slow
@pytest.mark.parametrize(("case", "fault"), MUTANTS, ids=lambda p: str(p))
def test_a_fault_that_changes_a_gradient_is_failed(case: Case, fault: str) -> None:
    """With steps small enough to resolve a 0.1% error (14 halvings from h0 = 0.1, down to 1.2e-5)."""
    vector_dot = case.name == "matmul" and all(isinstance(v, list) and not isinstance(v[0], list) for v in case.inputs)
    if (case.name, fault) in CANCELLED:
        pytest.skip("the fault cancels in the test's own weighting (see CANCELLED)")
    applied: list[bool] = []
    with faulty_vjp(OPS[case.name], FAULTS[fault], applied):
        report = run(case, steps=14)
        xs = inputs_of(case)
        faulty = [g.tolist() for g in mt.grads(lambda *ts: call(case)(*ts).sum())(xs)]
    if not applied:
        pytest.skip("these shapes do not allow the fault")
    if vector_dot and fault in ("swap", "2nd=1st"):  # x · x: the fault leaves the gradient at x as it is
        assert faulty == [g.tolist() for g in mt.grads(lambda *ts: call(case)(*ts).sum())(xs)]
        assert report.verdict == "passed", report
        return
    assert report.verdict == "failed", report


def test_default_steps_resolve_a_large_error() -> None:
    x = mt.tensor([0.3, -1.2, 2.0])
    half = mt.custom_grad(lambda t: (t * t, lambda dy: dy * t))
    assert mt.taylor_test(lambda t: (t * t).sum(), [x]).verdict == "passed"
    report = mt.taylor_test(lambda t: half(t).sum(), [x])
    assert report.verdict == "failed" and "h^1.00" in report.reason
    swapped = mt.custom_grad(lambda a, b: ((a * b).sum(), lambda dy: (dy * a, dy * b)))
    assert mt.taylor_test(swapped, [x, mt.tensor([1.0, 0.5, -0.7])], steps=14).verdict == "failed"


@pytest.mark.parametrize(
    ("name", "fn", "point"),
    [
        ("near a kink (relu at 1e-7)", lambda t: mt.relu(t).sum(), [1e-7, 0.5]),
        ("a 1e9 offset", lambda t: (t * t).sum() + 1e9, [0.3, -1.2, 2.0]),
        ("a tiny scale (1e-8 inputs)", lambda t: (t * t).sum(), [1e-8, 2e-8, -3e-8]),
    ],
)
def test_it_tells_right_from_wrong_where_a_central_difference_is_fooled(name: str, fn: object, point: list[float]) -> None:
    assert callable(fn)
    x = mt.tensor(point)
    assert mt.taylor_test(fn, [x]).verdict == "passed", name
    wrong = mt.custom_grad(lambda t: (fn(t), lambda dy: dy * 0.5 * mt.ones_like(t)))
    assert mt.taylor_test(lambda t: wrong(t), [x]).verdict == "failed", name


def test_what_it_cannot_know_is_inconclusive_with_why() -> None:
    nan = mt.taylor_test(lambda t: t.log().sum(), [mt.tensor([-1.0, 2.0])])
    assert nan.verdict == "inconclusive" and "nan" in nan.reason
    inf = mt.taylor_test(lambda t: t.sqrt().sum(), [mt.tensor([0.0, 2.0])])
    assert inf.verdict == "inconclusive" and "inf" in inf.reason
    kink = mt.taylor_test(lambda t: t.abs().sum(), [mt.tensor([0.0, 2.0])])
    assert kink.verdict == "inconclusive" and "kink" in kink.reason
    jump = mt.taylor_test(lambda t: mt.where(t.greater(0.0), t + 1.0, t).sum(), [mt.tensor([0.0, 2.0])], [mt.tensor([1.0, 1.0])])
    assert jump.verdict == "inconclusive" and "jumps" in jump.reason


def test_order_two_checks_the_hessian_term() -> None:
    x = mt.tensor([0.3, -1.2, 2.0])
    report = mt.taylor_test(lambda t: (t.sin() * t.exp()).sum(), [x], order=2)
    assert report.verdict == "passed" and "h^3" in report.reason
    assert len(report.orders) == 3 and math.isclose(report.orders[2][-1], 3.0, abs_tol=0.25)


def test_the_report_shows_itself() -> None:
    report = mt.taylor_test(lambda t: (t * t).sum(), [mt.tensor([1.0, 2.0])])
    text = str(report)
    assert text.startswith("taylor_test passed") and "order" in text
    assert "<svg" in report._repr_html_() or "<table" in report._repr_html_()
