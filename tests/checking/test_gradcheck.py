"""The gradient checker: finite differences, full and fast mode,
second order, kinks, the culprit finder and the report."""

from __future__ import annotations

import gc
import inspect
import math
from collections.abc import Callable

import pytest

import microtape as mt
from microtape.engine import arena as _runtime
from microtape.engine.primitive import OPS
from microtape.checking.gradcheck import GradCheckMode, GradCheckRow
from microtape.ops import unbroadcast

Fn = Callable[..., mt.Tensor]
GradFn = Callable[[mt.Tensor], "mt.Tensor | list[mt.Tensor | None]"]


def here() -> int:
    """The line number of the caller."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


A = [[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]]
B = [[0.9, 0.1, -0.6], [-0.3, 1.1, 0.8]]


# -- every correct composite passes (the op table is checked in tests/ops/test_ops.py) --------


COMPOSITES: list[tuple[str, Fn, list[list[list[float]]]]] = [
    ("mean", lambda x: mt.mean(x), [A]),
    ("mean_axis", lambda x: mt.mean(x, axis=0, keepdims=True), [A]),
    ("softmax", lambda x: mt.softmax(x), [A]),
    ("softmax_axis0", lambda x: mt.softmax(x, axis=0), [A]),
    ("log_softmax", lambda x: mt.log_softmax(x), [A]),
    ("stack", lambda x, y: mt.stack([x, y], axis=1), [A, B]),
    ("min", lambda x: mt.min(x, axis=1), [A]),
]


@pytest.mark.parametrize(("name", "fn", "values"), COMPOSITES, ids=[c[0] for c in COMPOSITES])
def test_composites_pass_full_fast_and_order_two(name: str, fn: Fn, values: list[list[list[float]]]) -> None:
    xs = [mt.tensor(v) for v in values]
    for report in (
        mt.check_grads(fn, xs),
        mt.check_grads(fn, xs, mode="fast", seed=5),
        mt.check_grads(fn, xs, order=2),
    ):
        assert report.ok and not report.kinks, f"{name}: {report}"


def test_a_model_passes_and_the_report_says_so() -> None:
    x = mt.random_normal((3, 4), seed=0)
    w = mt.random_normal((4, 2), seed=1)
    report = mt.check_grads(lambda a, b: mt.tanh(a @ b).sum(), [x, w])
    assert report.ok and bool(report)
    assert len(report.rows) == 12 + 8  # one row per input entry (a scalar output)
    assert report.evaluations == 2 * 20 + 1
    assert report.raise_if_failed() is report
    head = str(report).splitlines()[0]
    assert head == (
        "check_grads passed: mode=full, order=1, eps=1e-06, 20 entries compared, 0 failed, 0 kinks, 41 evaluations of f"
    )


# -- deliberately wrong VJPs are caught, in full and in fast mode ---------------------------


def _custom(name: str, f: Callable[..., tuple[mt.Tensor, GradFn]]) -> Fn:
    f.__name__ = name
    return mt.custom_grad(f)


def wrong_sign(x: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    return mt.exp(x), lambda dy: -dy * mt.exp(x)


def wrong_scale(x: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    return x * x, lambda dy: dy * x  # forgot the 2


def forgot_the_sum(x: mt.Tensor, y: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    # x: (2, 3), y: (3,) broadcast over the rows. dy must be summed over the
    # rows; this takes row 0 only: the right shape, the wrong value.
    return x * y, lambda dout: [dout * y, mt.reshape(mt.slice(dout * x, (0, 0), (1, 3)), (3,))]


WRONG: list[tuple[str, Fn, list[list[float] | list[list[float]]]]] = [
    ("wrong_sign", mt.custom_grad(wrong_sign), [[0.5, -0.3, 1.2]]),
    ("wrong_scale", mt.custom_grad(wrong_scale), [[0.5, -0.3, 1.2]]),
    ("forgot_the_sum", mt.custom_grad(forgot_the_sum), [A, [0.5, -0.25, 1.3]]),
]


@pytest.mark.parametrize("mode", ["full", "fast"])
@pytest.mark.parametrize(("name", "fn", "values"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_custom_vjps_are_caught(name: str, fn: Fn, values: list[list[float]], mode: GradCheckMode) -> None:
    xs = [mt.tensor(v) for v in values]
    line = here() + 1
    report = mt.check_grads(lambda *ts: fn(*ts).sum(), xs, mode=mode, seed=3)
    assert not report.ok and report.failures
    assert report.rows[0].status == "FAIL"  # the worst entries first
    assert report.culprit is not None and report.culprit.op == f"custom_grad({name})"
    assert report.culprit.where == f"{__file__}:{line}"
    if mode == "fast":
        assert report.notes[0].startswith("fast mode: the directional derivative was FAIL")
        assert len(report.rows) > 1  # the full check ran to name the entries


def test_wrong_sign_and_scale_show_in_the_rows() -> None:
    x = mt.tensor([0.5, 2.0])
    sign = mt.check_grads(mt.custom_grad(wrong_sign), [x])
    assert [r.index for r in sign.failures] == [(1,), (0,)]  # both entries, the worst (e^2) first
    for row, value in zip(sign.failures, (2.0, 0.5)):
        assert row.numeric == pytest.approx(math.exp(value), rel=1e-6)
        assert row.analytic == pytest.approx(-math.exp(value), rel=1e-12)
    scale = mt.check_grads(mt.custom_grad(wrong_scale), [x])
    assert sorted((r.index, r.analytic, round(r.numeric, 6)) for r in scale.failures) == [((0,), 0.5, 1.0), ((1,), 2.0, 4.0)]
    assert scale.max_abs_error == pytest.approx(2.0) and scale.max_rel_error == pytest.approx(0.5)


def test_forgotten_sum_fails_only_the_broadcast_input() -> None:
    report = mt.check_grads(mt.custom_grad(forgot_the_sum), [mt.tensor(A), mt.tensor([0.5, -0.25, 1.3])])
    assert {r.input for r in report.failures} == {1}


def _mul_vjp_without_unbroadcast(
    dout: mt.Tensor, out: mt.Tensor, x: mt.Tensor, y: mt.Tensor, needs: tuple[bool, ...] = (True, True)
) -> tuple[mt.Tensor | None, ...]:
    # the right value for each entry, but y's gradient keeps the broadcast shape
    return (unbroadcast(dout * y, x.shape) if needs[0] else None, dout * x if needs[1] else None)


@pytest.mark.parametrize("mode", ["full", "fast"])
def test_a_primitive_vjp_that_forgets_unbroadcast_is_caught(monkeypatch: pytest.MonkeyPatch, mode: GradCheckMode) -> None:
    monkeypatch.setattr(OPS["mul"], "vjp", _mul_vjp_without_unbroadcast)
    x, y = mt.tensor(A), mt.tensor([0.5, -0.25, 1.3])
    line = here() + 1
    report = mt.check_grads(lambda a, b: (a * b).sum(), [x, y], mode=mode, seed=1)
    assert not report.ok
    assert {r.input for r in report.failures} == {1}
    assert any("input 1 cannot be computed" in n and "shape (2, 3) for an input of shape (3,)" in n for n in report.notes)
    culprit = report.culprit
    assert culprit is not None and culprit.op == "mul" and culprit.where == f"{__file__}:{line}"
    assert culprit.input_shapes == ((2, 3), (3,))
    assert "gradient of shape (2, 3) for input 1, which has shape (3,)" in str(culprit)
    assert "unbroadcast" in str(culprit)


def test_a_primitive_vjp_with_the_wrong_sign_is_caught_in_both_modes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(OPS["exp"], "vjp", lambda dout, out, x: (-(dout * out),))
    x = mt.tensor([0.1, 0.7])
    for mode in ("full", "fast"):
        report = mt.check_grads(mt.exp, [x], mode=mode)
        assert not report.ok and report.culprit is not None and report.culprit.op == "exp"


def test_the_tape_rejects_a_gradient_of_the_wrong_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(OPS["mul"], "vjp", _mul_vjp_without_unbroadcast)
    x, y = mt.tensor(A), mt.tensor([0.5, -0.25, 1.3])
    with pytest.raises(mt.ShapeError, match="mul"):
        mt.grads(lambda a, b: (a * b).sum())([x, y])


# -- kinks --------------------------------------------------------------------------------------


def _statuses(report: mt.GradCheckReport) -> dict[tuple[int, tuple[int, ...], tuple[int, ...]], str]:
    return {(r.input, r.index, r.output): r.status for r in report.rows}


def test_relu_and_abs_at_zero_are_kinks() -> None:
    x = mt.tensor([0.0, 1.5, -2.0])
    for fn in (lambda t: mt.relu(t).sum(), lambda t: mt.abs(t).sum()):
        report = mt.check_grads(fn, [x])
        assert report.ok
        assert [(r.index, r.status) for r in report.kinks] == [((0,), "kink")]
        assert report.failures == []
    relu = mt.check_grads(lambda t: mt.relu(t).sum(), [x]).kinks[0]
    assert relu.analytic == 0.0 and relu.numeric == pytest.approx(0.5)  # subgradient 0, central difference 0.5
    absolute = mt.check_grads(lambda t: mt.abs(t).sum(), [x]).kinks[0]
    assert absolute.analytic == 0.0 and absolute.numeric == pytest.approx(0.0)  # equal, and still a kink


def test_max_over_ties_is_a_kink() -> None:
    report = mt.check_grads(mt.max, [mt.tensor([2.0, 1.0, 2.0])])
    assert report.ok
    assert sorted(r.index for r in report.kinks) == [(0,), (2,)]
    assert [r.analytic for r in report.kinks] == [0.5, 0.5]  # the split gradient
    assert _statuses(report)[(0, (1,), ())] == "ok"


def test_maximum_of_tied_inputs_is_a_kink_and_maximum_of_one_tensor_is_smooth() -> None:
    a = mt.tensor([2.0, 1.0])
    tied = mt.check_grads(mt.maximum, [a, a])  # x and y perturbed separately: the slopes jump
    assert tied.ok
    assert sorted((r.input, r.index, r.analytic) for r in tied.kinks) == [(0, (0,), 1.0), (0, (1,), 1.0), (1, (0,), 0.0), (1, (1,), 0.0)]
    same = mt.check_grads(lambda t: mt.maximum(t, t), [a])  # f(t) = t: no kink at all
    assert same.ok and same.kinks == []
    assert sorted(r.analytic for r in same.rows if r.index == r.output) == [1.0, 1.0]


def test_kinks_are_reported_in_fast_mode_through_the_full_table() -> None:
    report = mt.check_grads(lambda t: mt.abs(t).sum(), [mt.tensor([0.0, 1.0])], mode="fast")
    assert report.ok and report.mode == "fast"
    assert [r.index for r in report.kinks] == [(0,)]
    assert report.notes == ["fast mode: the directional derivative was kink; ran the full check to name entries"]


def test_a_wrong_gradient_at_a_kink_still_fails() -> None:
    def bad_relu(x: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
        return mt.relu(x), lambda dy: dy * 2.0  # 2 is outside [left, right] = [0, 1]

    report = mt.check_grads(mt.custom_grad(bad_relu), [mt.tensor([0.0])])
    assert not report.ok and report.rows[0].status == "FAIL"


def test_high_curvature_is_not_mistaken_for_a_kink() -> None:
    report = mt.check_grads(lambda t: (1.0 / t).sum(), [mt.tensor([0.01, 0.02])])
    assert report.ok and report.kinks == [], str(report)


# -- second order -------------------------------------------------------------------------------


def cube_with_frozen_grad(x: mt.Tensor, save: Callable[[list[mt.Tensor]], None]) -> tuple[mt.Tensor, Callable[[mt.Tensor, list[mt.Tensor]], mt.Tensor]]:
    frozen = mt.tensor(x.data_sync(), shape=x.shape)  # a copy outside the graph
    save([frozen])  # kept for grad_fn; an unsaved intermediate is disposed when f returns
    return x * x * x, lambda dy, saved: dy * 3.0 * saved[0] * saved[0]


def test_order_two_passes_on_smooth_functions() -> None:
    x = mt.tensor([0.4, -1.1, 2.0])
    for fn in (lambda t: mt.sin(t) * t, lambda t: mt.exp(t).sum(), lambda t: mt.tanh(t * t).mean()):
        report = mt.check_grads(fn, [x], order=2)
        assert report.ok and report.order == 2
        assert {r.order for r in report.rows} == {1, 2}


def test_order_two_fails_when_only_the_second_derivative_is_wrong() -> None:
    x = mt.tensor([0.5, -1.5])
    f = mt.custom_grad(cube_with_frozen_grad)
    assert mt.check_grads(f, [x]).ok  # first order is right
    line = here() + 1
    report = mt.check_grads(lambda t: f(t).sum(), [x], order=2)
    assert not report.ok
    assert {r.order for r in report.failures} == {2}
    assert sorted((r.index, r.output, r.analytic, round(r.numeric, 4)) for r in report.failures) == [
        ((0,), (0,), 0.0, 3.0),  # d²/dx² x³ = 6x
        ((1,), (1,), 0.0, -9.0),
    ]
    culprit = report.culprit
    assert culprit is not None and culprit.order == 2
    assert culprit.op == "custom_grad(cube_with_frozen_grad)" and culprit.where == f"{__file__}:{line}"
    text = str(culprit)
    assert "second derivative through the VJP of 'custom_grad(cube_with_frozen_grad)'" in text
    # the hint names the real cause: grad_fn reads what f saved, which no tape recorded
    assert "hint: grad_fn reads the 1 tensor(s) f saved with save([...])" in text and ".data_sync()" not in text


def test_order_two_names_a_primitive_whose_vjp_cuts_the_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    def frozen_sin_vjp(dout: mt.Tensor, out: mt.Tensor, x: mt.Tensor) -> tuple[mt.Tensor]:
        return (dout * mt.tensor([math.cos(v) for v in x.data_sync()], shape=x.shape),)  # right value, no graph

    monkeypatch.setattr(OPS["sin"], "vjp", frozen_sin_vjp)
    x = mt.tensor([0.3, 1.1])
    assert mt.check_grads(mt.sin, [x]).ok
    line = here() + 1
    report = mt.check_grads(lambda t: (mt.sin(t) * 2.0).sum(), [x], order=2)
    assert not report.ok
    assert report.culprit is not None and (report.culprit.op, report.culprit.order) == ("sin", 2)
    assert report.culprit.where == f"{__file__}:{line}"


def test_order_two_in_fast_mode() -> None:
    x = mt.random_normal((8,), seed=2)
    good = mt.check_grads(lambda t: (mt.sin(t) * t).sum(), [x], order=2, mode="fast")
    assert good.ok and good.evaluations == 6 and len(good.rows) == 2
    bad = mt.check_grads(lambda t: mt.custom_grad(cube_with_frozen_grad)(t).sum(), [x], order=2, mode="fast")
    assert not bad.ok and bad.culprit is not None and bad.culprit.order == 2


# -- fast mode: deterministic, O(1) evaluations ----------------------------------------------------


def test_fast_mode_is_deterministic_for_a_seed() -> None:
    x = mt.random_normal((4, 3), seed=9)

    def f(t: mt.Tensor) -> mt.Tensor:
        return mt.tanh(t @ t.T)

    one = mt.check_grads(f, [x], mode="fast", seed=42)
    two = mt.check_grads(f, [x], mode="fast", seed=42)
    other = mt.check_grads(f, [x], mode="fast", seed=43)
    assert one.rows == two.rows
    assert one.rows[0].analytic != other.rows[0].analytic  # another random direction
    assert mt.check_grads(f, [x], mode="fast").rows == mt.check_grads(f, [x], mode="fast", seed=0).rows


@pytest.mark.parametrize("n", [2, 50, 400])
def test_fast_mode_calls_f_three_times_whatever_the_size(n: int) -> None:
    calls = [0]

    def f(t: mt.Tensor) -> mt.Tensor:
        calls[0] += 1
        return (t * t).sum()

    report = mt.check_grads(f, [mt.random_normal((n,), seed=n)], mode="fast")
    assert report.ok and report.evaluations == calls[0] == 3


def test_full_mode_counts_its_calls() -> None:
    calls = [0]

    def f(t: mt.Tensor, u: mt.Tensor) -> mt.Tensor:
        calls[0] += 1
        return t * u

    report = mt.check_grads(f, [mt.ones((2, 3)), mt.ones((3,))])
    assert report.evaluations == calls[0] == 2 * 9 + 1
    assert len(report.rows) == 9 * 6  # every input entry against every output entry


# -- the culprit finder in a larger model -------------------------------------------------------


def center(x: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    value = x - x.mean(axis=-1, keepdims=True)
    return value, lambda dy: dy  # BUG: the mean moves with x; the right answer is dy - mean(dy)


def test_the_culprit_finder_names_the_op_and_line_in_a_twelve_op_model() -> None:
    center_op = mt.custom_grad(center)
    lines: dict[str, int] = {}

    def model(x: mt.Tensor, w1: mt.Tensor, b1: mt.Tensor, w2: mt.Tensor) -> mt.Tensor:
        h = x @ w1 + b1  # matmul, add
        h = h ** 3.0  # pow at negative bases: its exponent has no finite difference there
        h = mt.sigmoid(h) * 2.0  # sigmoid, mul
        lines["center"] = here() + 1
        h = center_op(h)  # the wrong VJP
        h = mt.tanh(h)
        out = mt.log_softmax(h @ w2)  # matmul, logsumexp, sub
        return -(out * mt.exp(out)).sum() + (w1 * w1).mean()  # mul, exp, sum, neg, mul, sum, div, add

    xs = [
        mt.random_normal((4, 3), seed=1),
        mt.random_normal((3, 5), seed=2),
        mt.random_normal((5,), seed=3),
        mt.random_normal((5, 2), seed=4),
    ]
    with mt.GradientTape() as tape:
        tape.watch(xs)
        model(*xs)
    assert len(tape.operations) >= 10
    report = mt.check_grads(model, xs)
    assert not report.ok
    culprit = report.culprit
    assert culprit is not None
    assert culprit.op == "custom_grad(center)"
    assert culprit.where == f"{__file__}:{lines['center']}"
    assert culprit.input_shapes == ((4, 5),)
    assert {r.input for r in report.failures} == {0, 1, 2}  # w2 comes after the bug
    assert f"culprit: the VJP of 'custom_grad(center)' (inputs (4, 5)) called at {__file__}:{lines['center']}" in str(report)


def test_no_culprit_when_f_cuts_the_gradient_path() -> None:
    def cut(t: mt.Tensor) -> mt.Tensor:
        return mt.tensor(t.data_sync()) * t  # the first factor is a constant to the tape

    report = mt.check_grads(cut, [mt.tensor([1.0, 2.0])])
    assert not report.ok and report.culprit is None
    # the note says what was examined (the mul and the sum, at the check's tolerances) and guesses no cause
    note = next(n for n in report.notes if n.startswith("no culprit at order 1"))
    assert "re-checked the VJP of 1 of the 1 op call(s) f made" in note and "1 agree (mul x1)" in note
    assert "atol=1e-05, rtol=0.0001" in note and ".item()" not in note


def scaled(x: mt.Tensor, *, k: float) -> tuple[mt.Tensor, GradFn]:
    return x * k, lambda dy: dy * k * 2.0  # BUG: twice too big


def test_a_custom_op_called_with_keywords_is_checked_at_its_keywords() -> None:
    op: Callable[..., mt.Tensor] = mt.custom_grad(scaled)  # type: ignore[arg-type]  # keyword settings: the overloads type tensors only
    report = mt.check_grads(lambda t: op(t, k=3.0).sum(), [mt.tensor([1.0])])  # must not raise
    assert not report.ok and [r.analytic for r in report.failures] == [6.0]
    assert report.failures[0].numeric == pytest.approx(3.0)


def test_the_culprit_finder_reruns_a_custom_op_called_with_keywords() -> None:
    op: Callable[..., mt.Tensor] = mt.custom_grad(scaled)  # type: ignore[arg-type]  # keyword settings: the overloads type tensors only
    report = mt.check_grads(lambda t: op(t, k=3.0).sum(), [mt.tensor([1.0])])
    assert report.culprit is not None and report.culprit.op == "custom_grad(scaled)"


# -- the report -----------------------------------------------------------------------------------


def test_report_fields_table_and_raise_if_failed() -> None:
    x = mt.tensor([0.5, 2.0, -1.0])
    report = mt.check_grads(mt.custom_grad(wrong_scale), [x], atol=1e-6, rtol=1e-5)
    assert (report.ok, report.mode, report.order, report.eps, report.atol, report.rtol) == (False, "full", 1, 1e-6, 1e-6, 1e-5)
    assert len(report.rows) == 9 and len(report.failures) == 3 and report.kinks == []
    assert all(isinstance(r, GradCheckRow) for r in report.rows)
    worst = report.rows[0]
    assert (worst.input, worst.index, worst.output, worst.status) == (0, (1,), (1,), "FAIL")
    assert worst.abs_error == pytest.approx(2.0) and worst.rel_error == pytest.approx(0.5)
    assert [r.abs_error for r in report.failures] == sorted((r.abs_error for r in report.failures), reverse=True)
    lines = str(report).splitlines()
    assert lines[0].startswith("check_grads FAILED: mode=full, order=1, eps=1e-06, 9 entries compared, 3 failed, 0 kinks")
    assert lines[1].split() == ["input", "index", "out", "analytic", "numeric", "abs", "err", "rel", "err", "status"]
    assert lines[2].split() == ["0", "1", "1", "2.0", "4.0", "2.00e+00", "5.00e-01", "FAIL"]
    assert "an entry fails when abs err > atol 1e-06 + rtol 1e-05 * |numeric|" in str(report)
    assert max(len(line) for line in lines if not line.startswith("  culprit") and "hint" not in line) <= 120
    with pytest.raises(mt.GradientCheckError) as info:
        report.raise_if_failed()
    assert isinstance(info.value, AssertionError)
    assert str(info.value) == str(report)
    assert info.value.report is report and info.value.culprit is report.culprit


def test_long_reports_are_cut_to_ten_rows() -> None:
    report = mt.check_grads(lambda t: t * 2.0, [mt.ones((5,))])
    lines = str(report).splitlines()
    assert sum(1 for line in lines if line.rstrip().endswith(("ok", "FAIL", "kink"))) == 10
    assert "  ... 15 more rows (report.rows has them all)" in lines


def test_an_output_that_shares_the_inputs_values_is_read_before_the_next_entry_moves() -> None:
    # the checker moves one input entry at a time in place; f returning its input (or a reshape of
    # it) must still give the identity Jacobian, and the caller's tensor keeps its values
    x = mt.tensor([[1.0], [2.0]])
    for f in (lambda t: t, lambda t: t.reshape((2,))):
        report = mt.check_grads(f, [x])
        assert report.ok and report.evaluations == 5 and len(report.rows) == 4
        for r in report.rows:
            want = 1.0 if r.index[0] == r.output[0] else 0.0
            assert (r.analytic, round(r.numeric, 6)) == (want, want), r
        [g] = mt.numerical_grad(f, [x])
        assert g.shape == (2, 1) and g.data_sync() == pytest.approx([1.0, 1.0], abs=1e-8)
    assert x.data_sync() == [1.0, 2.0]


def test_non_finite_values_compare_as_equal_only_when_both_sides_agree() -> None:
    report = mt.check_grads(lambda t: mt.sqrt(t), [mt.tensor([0.0, 4.0])])  # slope +inf at 0
    row = next(r for r in report.rows if r.index == r.output == (0,))
    assert math.isinf(row.analytic)
    assert row.status in ("FAIL", "kink")  # the one-sided slopes are not finite: never "ok"


# -- numerical_grad -------------------------------------------------------------------------------


def test_numerical_grad_central_and_forward() -> None:
    x = mt.tensor([1.0, 3.0])
    [central] = mt.numerical_grad(lambda t: t * t, [x])
    assert central.shape == (2,) and central.data_sync() == pytest.approx([2.0, 6.0], abs=1e-8)
    [forward] = mt.numerical_grad(lambda t: t * t, x, method="forward", eps=1e-4)
    assert forward.data_sync() == pytest.approx([2.0001, 6.0001], abs=1e-8)  # O(eps) bias: 2x + eps
    a, b = mt.numerical_grad(lambda s, t: (s * t).sum(), [mt.tensor([[1.0, 2.0]]), mt.tensor([3.0, 4.0])])
    assert a.shape == (1, 2) and a.data_sync() == pytest.approx([3.0, 4.0])
    assert b.data_sync() == pytest.approx([1.0, 2.0])


def test_numerical_grad_call_counts_and_no_recording() -> None:
    calls = [0]

    def f(t: mt.Tensor) -> mt.Tensor:
        calls[0] += 1
        return t.exp()

    x = mt.ones((4,))
    with mt.GradientTape() as tape:
        tape.watch(x)
        mt.numerical_grad(f, [x])
        assert calls[0] == 8
        mt.numerical_grad(f, [x], method="forward")
        assert calls[0] == 8 + 5
    assert tape.operations == []  # nothing was recorded on the open tape


def test_checking_leaves_no_tensors_scopes_or_tapes_behind() -> None:
    gc.collect()
    x = mt.tensor([0.5, 1.5])
    before = mt.memory().num_tensors
    with mt.GradientTape() as tape:
        tape.watch(x)
        mt.check_grads(lambda t: (mt.exp(t) * t).sum(), [x], order=2)
        mt.check_grads(mt.custom_grad(wrong_scale), [x], mode="fast")
    assert tape.operations == []  # the checker records nothing on the caller's tape
    assert mt.memory().num_tensors - before == 0
    st = _runtime.STATE.get()
    assert st.tapes == () and st.scopes == () and st.observers == ()


# -- argument validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"eps": 0.0}, "eps=0.0 is not a usable step"),
        ({"eps": 1.5}, "eps=1.5 is not a usable step"),
        ({"eps": math.nan}, "eps=nan is not a usable step"),
        ({"mode": "quick"}, "mode='quick' is not \"full\" or \"fast\""),
        ({"order": 3}, "order=3 is not 1 or 2"),
        ({"atol": -1.0}, "atol=-1.0 must be a non-negative number"),
        ({"rtol": "small"}, "rtol='small' must be a non-negative number"),
        ({"seed": "abc"}, "seed='abc' is not an int"),
    ],
)
def test_check_grads_validates_its_arguments(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(mt.InvalidArgumentError, match=match):
        mt.check_grads(mt.exp, [mt.ones((1,))], **kwargs)  # type: ignore[call-overload]  # deliberately wrong


def test_check_grads_and_numerical_grad_validate_f_and_inputs() -> None:
    x = mt.ones((2,))
    with pytest.raises(mt.InvalidArgumentError, match=r"check_grads\(f, inputs\) needs a function, got int"):
        mt.check_grads(3, [x])  # type: ignore[call-overload]  # deliberately wrong
    with pytest.raises(mt.InvalidArgumentError, match=r"numerical_grad\(f, inputs\) needs a function"):
        mt.numerical_grad("f", [x])  # type: ignore[call-overload]  # deliberately wrong
    with pytest.raises(mt.InvalidArgumentError, match="inputs must be a tensor or a non-empty list"):
        mt.check_grads(mt.exp, [])
    with pytest.raises(mt.InvalidArgumentError, match=r"inputs\[1\] is a float, not a tensor"):
        mt.check_grads(mt.add, [x, 2.0])  # type: ignore[arg-type, list-item]  # deliberately wrong (mypy also checks f against the first overload)
    with pytest.raises(mt.InvalidArgumentError, match="f must return a tensor, got float"):
        mt.check_grads(lambda t: 1.0, [x])  # type: ignore[arg-type, return-value]  # deliberately wrong
    with pytest.raises(mt.InvalidArgumentError, match="f must return a tensor, got list"):
        mt.check_grads(lambda t: [t], [x], mode="fast")  # type: ignore[call-overload]  # deliberately wrong
    with pytest.raises(mt.InvalidArgumentError, match='method=.central2. is not "central" or "forward"'):
        mt.numerical_grad(mt.exp, [x], method="central2")  # type: ignore[call-overload]  # deliberately wrong
    gone = mt.ones((1,))
    gone.dispose()
    with pytest.raises(mt.DisposedTensorError, match="Tensor is disposed"):
        mt.check_grads(mt.exp, [gone])
    st = _runtime.STATE.get()
    assert st.tapes == () and st.scopes == () and st.observers == ()


def test_an_op_the_culprit_finder_cannot_rerun_is_skipped_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    op = mt.custom_grad(lambda x: (x * 2.0, lambda dy: dy * 5.0))  # BUG: 5 instead of 2
    probe = mt.tensor([1.0])
    with mt.GradientTape() as tape:
        tape.watch(probe)
        op(probe)
    recorded = tape.operations and tape._records[0][0]  # the Op behind the custom gradient
    assert recorded and recorded.rerun is not None

    def refuse(*xs: mt.Tensor, **params: object) -> tuple[mt.Tensor, dict[str, object]]:
        raise RuntimeError("cannot run again")

    monkeypatch.setattr(recorded, "rerun", refuse)
    report = mt.check_grads(lambda t: op(t).sum(), [mt.tensor([1.0])])
    assert not report.ok and report.culprit is None
    # the note names the op, its line and what happened, never the error's own text
    note = next(n for n in report.notes if n.startswith("could not re-check 'custom_grad(<lambda>)'"))
    assert "it raised RuntimeError when run again at the inputs it saw" in note and "cannot run again" not in note
