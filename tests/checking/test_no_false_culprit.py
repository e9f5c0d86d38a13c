"""No false culprit, ever: every op of the table, with its correct VJP, at points where finite differences mislead.

A gradient check that names an op whose VJP is right is the most misleading
thing it can say. Here every sample of every differentiable op is checked where
central differences are at their worst: its inputs scaled to 1e-7 (every
entry within a step of 0: the kinks of relu, abs, max, the edge of sqrt's and
log's domain), scaled to 1e-8 (tiny values), with 1e9 added to f (a difference
far below f's rounding), with that 1e9 added and taken away inside f (the
rounding happens in an intermediate value, not in f), and with its first input
moved by 3e-7 next to a copy of itself (a tie within the step). The check may
pass, or say it cannot tell (inconclusive, with the reason); it must never fail
an entry whose analytic value is finite, and never name a culprit. The culprit
finder is also run on its own at those points, both ways it searches (each op
re-checked at its own scale for the entry with the largest difference, and
along random directions): it names nobody.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import microtape as mt
from microtape.checking.culprit import find_culprit
from microtape.engine.primitive import OPS

from ..op_cases import ALL_CASES, Case, call

CASES = [case for case in ALL_CASES if OPS[case.name].differentiable]
INDEX_INPUTS = {"one_hot": (0,), "gather": (1,)}
"""Inputs that are indices: they stay as they are (an index is not a value to scale)."""


def _scaled(case: Case, factor: float) -> list[mt.Tensor]:
    keep = INDEX_INPUTS.get(case.name, ())
    return [mt.tensor(v) if i in keep else mt.tensor(v) * factor for i, v in enumerate(case.inputs)]


def _sum(case: Case) -> Callable[..., mt.Tensor]:
    op = call(case)
    return lambda *xs: op(*xs).sum()


VARIANTS: dict[str, Callable[[Case], tuple[Callable[..., mt.Tensor], list[mt.Tensor]]]] = {
    "near kinks (x 1e-7)": lambda c: (_sum(c), _scaled(c, 1e-7)),
    "tiny (x 1e-8)": lambda c: (_sum(c), _scaled(c, 1e-8)),
    "offset 1e9": lambda c: ((lambda f: lambda *xs: f(*xs) + 1e9)(_sum(c)), _scaled(c, 1.0)),
    "1e9 in and out": lambda c: ((lambda f: lambda *xs: (f(*xs) + 1e9) - 1e9)(_sum(c)), _scaled(c, 1.0)),
}


def _assert_no_false_verdict(report: mt.GradCheckReport, where: str) -> None:
    assert report.culprit is None, f"{where}: a correct VJP named as culprit:\n{report}"
    wrong = [r for r in report.failures if r.analytic == r.analytic and abs(r.analytic) != float("inf")]
    assert not wrong, f"{where}: an entry of a correct VJP failed:\n{report}"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_correct_vjp_is_never_blamed(case: Case, variant: str) -> None:
    f, xs = VARIANTS[variant](case)
    _assert_no_false_verdict(mt.check_grads(f, xs), f"{case} {variant}")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_culprit_finder_alone_names_nobody(case: Case, variant: str) -> None:
    f, xs = VARIANTS[variant](case)
    rows = [r for r in mt.check_grads(f, xs).rows if r.abs_error < float("inf")]
    worst = max(rows, key=lambda r: r.abs_error, default=None)
    notes: list[str] = []
    assert find_culprit(f, xs, notes=notes) is None, f"{case} {variant}: {notes}"
    if worst is not None:
        assert find_culprit(f, xs, row=worst) is None, f"{case} {variant}, for {worst}"


@pytest.mark.parametrize("case", [c for c in CASES if c.name in ("max", "maximum", "minimum", "norm", "argmax")], ids=str)
def test_a_tie_within_the_step_blames_nobody(case: Case) -> None:
    xs = _scaled(case, 1.0)
    first = xs[0].data_sync()
    xs[0] = mt.tensor([first[0] + 3e-7 if k == 1 else (first[0] if k == 0 else v) for k, v in enumerate(first)], shape=xs[0].shape)
    _assert_no_false_verdict(mt.check_grads(_sum(case), xs), f"{case} with a tie 3e-7 apart")


def test_the_variants_do_mislead_plain_central_differences() -> None:
    """The points are adversarial: at them the plain comparison of the central difference fails."""
    [relu_near] = mt.numerical_grad(lambda t: mt.relu(t).sum(), [mt.tensor([1e-7])])
    assert abs(relu_near.item() - 1.0) > 0.4  # the step crosses the kink: 0.55, not 1
    [offset] = mt.numerical_grad(lambda t: (t * t).sum() + 1e9, [mt.tensor([1.0])])
    assert abs(offset.item() - 2.0) > 1e-3  # rounding of 1e9: far beyond the check's tolerance


@pytest.mark.parametrize(
    ("f", "x", "status", "why"),
    [
        (lambda t: mt.log(t).sum(), 3e-6, "ok", "f curves sharply here"),  # a singularity just beyond the step
        (lambda t: (1.0 / t).sum(), 2e-6, "ok", "f curves sharply here"),
        (lambda t: mt.abs(t).sum(), 3e-7, "ok", "f bends sharply within the step"),  # the kink the step reaches
        (lambda t: mt.relu(t).sum(), 0.0, "kink", "a kink: the one-sided slopes are 0 and 1"),
        (lambda t: mt.sign(t).sum(), 0.0, "inconclusive", "f jumps within the step"),  # a jump in f's value
        (lambda t: (t * t).sum() + 1e9, 0.5, "inconclusive", "below the rounding floor"),
    ],
    ids=["log near 0", "1/x near 0", "abs near its kink", "relu at its kink", "sign at its jump", "a 1e9 offset"],
)
def test_each_verdict_says_what_the_judge_saw(f: Callable[[mt.Tensor], mt.Tensor], x: float, status: str, why: str) -> None:
    [row] = mt.check_grads(f, [mt.tensor([x])]).rows
    assert row.status == status and why in row.why, row
