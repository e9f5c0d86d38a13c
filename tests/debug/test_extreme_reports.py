"""Reports survive the exploding run they exist to watch.

Huge finite gradients (up to the largest float, about 1.8e308), NaN and Inf:
``grad_stats``, ``GradientMonitor``, ``sparkline`` and ``histogram`` draw and
report them instead of raising, and ``check_grads`` notes and culprit lines
name the right inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

import microtape as mt
from microtape.ops.floats import safe_mean_abs, safe_norm
from microtape.autodiff.results import GradFn

BIG = 1.7e308  # finite, near the largest float


def test_the_monitor_records_huge_finite_gradients() -> None:
    """Guards the bug: fsum's 'intermediate overflow' OverflowError on [1e154, 1e154]."""
    monitor = mt.GradientMonitor()
    flags = monitor.record({"w": mt.tensor([1e154, 1e154])})
    assert monitor.global_norms == [pytest.approx(math.sqrt(2) * 1e154)]
    assert flags == ["step 0: exploding: global norm 1.414e+154 > 1000.0"]


def test_a_norm_that_overflows_is_inf_and_says_overflow_not_nan() -> None:
    stats = mt.grad_stats({"w": mt.tensor([BIG, -BIG]), "b": mt.tensor([1e308, 1e308])})
    assert stats["w"].norm == math.inf and stats["w"].overflow and stats["w"].max_abs == BIG
    assert stats["w"].mean_abs == BIG and "overflow" in str(stats["w"])
    assert stats["b"].norm == pytest.approx(math.sqrt(2) * 1e308) and not stats["b"].overflow
    monitor = mt.GradientMonitor()
    (flag,) = monitor.record({"w": mt.tensor([BIG, BIG])})
    assert monitor.global_norms == [math.inf]
    assert "global norm inf" in flag and "overflow" in flag and "NaN" not in flag
    assert monitor.exploding
    report = monitor.report()
    assert "inf (overflow)" in report and "nan" not in report.lower()


def test_nan_gradients_stay_nan_and_are_flagged_as_such() -> None:
    stats = mt.grad_stats([mt.tensor([1.0, math.nan, math.inf])])["0"]
    assert math.isnan(stats.norm) and not stats.overflow and (stats.nan_count, stats.inf_count) == (1, 1)
    monitor = mt.GradientMonitor()
    assert monitor.record({"w": mt.tensor([math.nan])}) == ["step 0: NaN/Inf in the gradient of w"]


def test_safe_norm_keeps_ordinary_norms_bit_for_bit() -> None:
    for values in ([3.0, 4.0], [0.1, 0.2, 0.3], [1e-3] * 7, [2.5, -1e10, 3.0]):
        assert safe_norm(values) == math.sqrt(math.fsum(v * v for v in values))
    assert safe_norm([3e-200, 4e-200]) == pytest.approx(5e-200)  # squares underflow: rescaled
    assert safe_norm([1.0, -math.inf]) == math.inf and math.isnan(safe_norm([math.nan, BIG]))
    assert safe_mean_abs([BIG, BIG, BIG], 3) == pytest.approx(BIG)


def test_the_report_shows_the_first_flag_then_the_latest_saying_how_many_are_left_out() -> None:
    """Guards the bug: report() printed the last five flags, dropping the step-0 flag that explains the rest."""
    monitor = mt.GradientMonitor(explode_norm=10.0)
    monitor.record({"w": mt.tensor([3.95e6])})
    for step in range(1, 20):
        monitor.record({"w": mt.tensor([1.0])})
    monitor.record({"w": mt.tensor([1e9])})
    for step in range(6):
        monitor.record({"w": mt.tensor([1e20 * 10.0 ** step])})
    lines = monitor.report().splitlines()
    flag_lines = [line.strip() for line in lines if line.startswith("  ")]
    assert flag_lines[0] == "step 0: exploding: global norm 3.95e+06 > 10.0"
    assert flag_lines[1] == "... 3 more flags left out (monitor.flags has them all)"
    assert flag_lines[2:] == monitor.flags[-4:]
    assert len(monitor.flags) == 8


def test_a_huge_finite_norm_is_drawn_as_huge() -> None:
    monitor = mt.GradientMonitor()
    for v in (1.0, 1e100, 1e300, BIG, 1e200):
        monitor.record({"w": mt.tensor([v, v])})  # 1.7e308 * sqrt(2) overflows
    assert monitor.history["w"][3] == math.inf
    line = monitor.report().splitlines()[1]
    bars = line.split()[1]
    assert bars[3] == "█" and bars[0] == "▁" and "!" not in bars
    assert line.endswith("last 1.414e+200")


@pytest.mark.parametrize("log", [False, True])
def test_sparklines_of_the_whole_float_range_draw(log: bool) -> None:
    """Guards the bug: the span of -1e308 and 1e308 overflowed to inf and the bar index to NaN."""
    line = mt.sparkline([-BIG, 0.0, BIG, math.nan, math.inf, -math.inf, 1e-300], log=log)
    assert len(line) == 7 and line[3:6] == "!!!"
    assert line[2] == "█"
    if not log:
        assert line[0] == "▁" and line[1] in "▄▅"


def test_histograms_of_the_whole_float_range_draw() -> None:
    text = mt.histogram(mt.tensor([-BIG, -1e308, 0.0, 1e308, BIG, math.nan, math.inf]), bins=4)
    lines = text.splitlines()
    assert len(lines) == 5 and lines[-1] == "(2 NaN/Inf values left out)"
    assert lines[0].startswith("[-1.7e+308, ") and lines[3].split()[1] == "1.7e+308]"
    assert [int(line.split()[-1]) for line in lines[:4]] == [2, 0, 1, 2]
    assert mt.histogram([math.nan]) == "(no finite values)\n(1 NaN/Inf value left out)"


def _wrong_second_gradient(x: mt.Tensor, y: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    return x * y, lambda dy: [dy * y, mt.tensor([1.0, 2.0, 3.0])]


def test_a_wrongly_shaped_vjp_result_blames_the_input_it_was_for() -> None:
    """Guards the bug: the note said input 0, whose gradient was right; the wrong one is input 1's."""
    f = mt.custom_grad(_wrong_second_gradient)
    report = mt.check_grads(f, [mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0])])
    assert not report.ok
    (note,) = [n for n in report.notes if "returned a gradient of shape" in n]
    assert note.startswith("the VJP of 'custom_grad(_wrong_second_gradient)' returned a gradient of shape (3,) "
                           "for an input of shape (2,) (its input 1;")


def _tanh_times_three(x: mt.Tensor, save: Callable[[list[mt.Tensor]], None]) -> tuple[mt.Tensor, GradFn]:
    t = mt.tanh(x)
    save([t])
    return 2.0 * t, lambda dy, saved: dy * 3.0 * (1.0 - saved[0] * saved[0])


def test_the_culprit_lists_a_custom_grads_real_inputs_not_what_it_saved() -> None:
    """Guards the bug: a one-input custom_grad that saves a tensor was shown with two inputs."""
    report = mt.check_grads(mt.custom_grad(_tanh_times_three), [mt.tensor([1.0, 2.0, 0.5])])
    assert report.culprit is not None and report.culprit.input_shapes == ((3,),)
    assert "(inputs (3,)) called at" in str(report.culprit)


@pytest.mark.parametrize("grads", [{"w": 3.0}, [mt.tensor([1.0]), "x"], {"w": [1.0, 2.0]}])
def test_the_monitor_refuses_what_is_not_a_gradient_and_records_nothing(grads: object) -> None:
    """Guards the bug: a float among the gradients raised a bare AttributeError."""
    monitor = mt.GradientMonitor()
    with pytest.raises(mt.InvalidArgumentError, match="not a tensor"):
        monitor.record(grads)  # type: ignore[arg-type]
    assert (monitor.global_norms, monitor.history, monitor.flags) == ([], {}, [])
