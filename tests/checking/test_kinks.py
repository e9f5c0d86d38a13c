"""check_grads never passes a wrong gradient as a kink.

A kink needs the one-sided slopes to disagree still at a ten times smaller
step. Before the fix ``compare_row`` fell back to "slopes disagree at one step
and the analytic value lies between them", which a smooth function of high
curvature satisfies: a 0.03 % too large gradient passed as a kink.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import microtape as mt
from microtape.checking.gradcheck import GradCheckMode
from microtape.engine.tensor import Tensor


def _steep(x: Tensor) -> tuple[Tensor, Callable[[Tensor], list[Tensor]]]:
    """5e5 x², with a gradient 0.03 % too large (the issue's example)."""
    return 5e5 * x * x, lambda dy: [dy * 1e6 * x * 1.0003]


def _steep_right(x: Tensor) -> tuple[Tensor, Callable[[Tensor], list[Tensor]]]:
    return 5e5 * x * x, lambda dy: [dy * 1e6 * x]


@pytest.mark.parametrize("mode", ["full", "fast"])
def test_a_wrong_gradient_of_high_curvature_fails_in_both_modes(mode: GradCheckMode) -> None:
    """Guards a fixed bug: both modes reported this wrong gradient as a kink and passed."""
    report = mt.check_grads(mt.custom_grad(_steep), [mt.tensor([1e-3])], mode=mode, seed=0)
    assert not report.ok
    assert report.kinks == []
    (row,) = report.failures
    assert row.analytic == pytest.approx(1000.3) and row.numeric == pytest.approx(1000.0)
    with pytest.raises(mt.GradientCheckError):
        report.raise_if_failed()


@pytest.mark.parametrize("mode", ["full", "fast"])
def test_the_right_gradient_of_the_same_function_passes(mode: GradCheckMode) -> None:
    report = mt.check_grads(mt.custom_grad(_steep_right), [mt.tensor([1e-3])], mode=mode, seed=0)
    assert report.ok and report.kinks == [], str(report)


@pytest.mark.parametrize("mode", ["full", "fast"])
@pytest.mark.parametrize("name", ["relu", "abs"])
def test_real_kinks_are_still_kinks(name: str, mode: GradCheckMode) -> None:
    op = getattr(mt, name)
    report = mt.check_grads(lambda t: op(t).sum(), [mt.tensor([0.0, 1.0])], mode=mode, seed=0)
    assert report.ok, str(report)
    assert [r.index for r in report.kinks] == [(0,)]


def test_the_culprit_finder_does_not_blame_a_real_kink() -> None:
    """The culprit finder judges each op with the same rule: relu at 0 is a kink,
    the wrong custom gradient after it is the culprit."""
    wrong = mt.custom_grad(_steep)

    def f(t: Tensor) -> Tensor:
        return wrong(mt.relu(t) + 1e-3).sum()

    report = mt.check_grads(f, [mt.tensor([0.0, 0.5])])
    assert not report.ok
    assert report.culprit is not None and report.culprit.op.startswith("custom_grad(_steep)"), str(report)
