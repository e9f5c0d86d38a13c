"""The debugging toolkit: print, check_numerics, detect_anomaly,
gradient statistics, the gradient monitor, clipping and text plots."""

from __future__ import annotations

import gc
import inspect
import io
import math

import pytest

import microtape as mt
from microtape.engine import arena as _runtime

NAN, INF = math.nan, math.inf


def here() -> int:
    """The line number of the caller."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


def printed(t: mt.Tensor, capsys: pytest.CaptureFixture[str], verbose: bool = False) -> str:
    capsys.readouterr()
    mt.print(t, verbose=verbose)
    return capsys.readouterr().out


# -- mt.print: the layout of tf.print ----------------------------------------------------------


def test_print_scalar_vector_and_matrix(capsys: pytest.CaptureFixture[str]) -> None:
    assert printed(mt.scalar(3.5), capsys) == "Tensor\n    3.5\n"
    assert printed(mt.tensor([1.0, 2.5, -3.0]), capsys) == "Tensor\n    [1, 2.5, -3]\n"
    # the columns of a matrix share a width (values are left-aligned and padded, as in TF.js)
    assert printed(mt.tensor([[1.0, -0.5], [10.0, 2.0]]), capsys) == (
        "Tensor\n"
        "    [[1 , -0.5],\n"
        "     [10, 2   ]]\n"
    )
    assert printed(mt.tensor([[1.0, 2.0]]), capsys) == "Tensor\n    [[1, 2]]\n"


def test_print_rank_three_separates_blocks_with_a_blank_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert printed(mt.tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]), capsys) == (
        "Tensor\n"
        "    [[[1, 2],\n"
        "      [3, 4]],\n"
        "\n"
        "     [[5, 6],\n"
        "      [7, 8]]]\n"
    )


def test_print_verbose_adds_dtype_rank_and_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert printed(mt.tensor([[1.0, 2.0], [3.0, 4.0]]), capsys, verbose=True) == (
        "Tensor\n"
        "  dtype: float64\n"
        "  rank: 2\n"
        "  shape: [2,2]\n"
        "  values:\n"
        "    [[1, 2],\n"
        "     [3, 4]]\n"
    )
    assert printed(mt.scalar(1.0), capsys, verbose=True) == "Tensor\n  dtype: float64\n  rank: 0\n  shape: []\n  values:\n    1\n"


def test_print_summarises_dimensions_longer_than_twenty(capsys: pytest.CaptureFixture[str]) -> None:
    assert printed(mt.tensor([float(i) for i in range(20)]), capsys) == "Tensor\n    [" + ", ".join(map(str, range(20))) + "]\n"
    assert printed(mt.tensor([float(i) for i in range(25)]), capsys) == "Tensor\n    [0, 1, 2, ..., 22, 23, 24]\n"
    rows = printed(mt.tensor([[float(i), float(-i)] for i in range(22)]), capsys).splitlines()
    assert rows == [
        "Tensor",
        "    [[0 , 0  ],",
        "     [1 , -1 ],",
        "     [2 , -2 ],",
        "     ...,",
        "     [19, -19],",
        "     [20, -20],",
        "     [21, -21]]",
    ]


def test_print_numbers_as_tfjs_does(capsys: pytest.CaptureFixture[str]) -> None:
    values = [1 / 3, NAN, INF, -INF, 1e-8, 1e-7, 2.5e-6, 1e22, -0.0, 123456789.125]
    assert printed(mt.tensor(values), capsys) == (
        "Tensor\n    [0.3333333, NaN, Infinity, -Infinity, 0, 1e-7, 0.0000025, 1e+22, 0, 123456789.125]\n"
    )


def test_print_to_a_file_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    buffer = io.StringIO()
    mt.print(mt.tensor([1.0]), file=buffer)
    assert buffer.getvalue() == "Tensor\n    [1]\n"
    assert capsys.readouterr().out == ""
    with pytest.raises(mt.InvalidArgumentError, match=r"print\(\) needs a tensor, got list"):
        mt.print([1.0, 2.0])  # type: ignore[arg-type]  # deliberately wrong
    gone = mt.ones((1,))
    gone.dispose()
    with pytest.raises(mt.DisposedTensorError, match="Tensor is disposed"):
        mt.print(gone)


# -- check_numerics ---------------------------------------------------------------------------


def test_check_numerics_passes_finite_tensors_through() -> None:
    t = mt.tensor([1.0, -2.0])
    assert mt.check_numerics(t, "loss") is t


def test_check_numerics_nan_and_inf_wording() -> None:
    with pytest.raises(mt.NumericsError) as info:
        mt.check_numerics(mt.tensor([[1.0, NAN], [INF, NAN]]), "grad of w")
    err = info.value
    lines = str(err).splitlines()
    assert lines[0] == "grad of w : Tensor had Inf and NaN values"  # TensorFlow's wording for both
    assert "2 NaN and 1 Inf among 4 entries of a tensor of shape (2, 2)" in lines[1]
    assert "first is at flat index 1" in lines[1]
    assert "hint:" in lines[2] and "detect_anomaly" in lines[2]
    assert (err.nans, err.infs, err.shape) == (2, 1, (2, 2))
    with pytest.raises(mt.NumericsError, match=r"^logits : Tensor had Inf values\n"):
        mt.check_numerics(mt.exp(mt.tensor([1000.0])), "logits")
    with pytest.raises(mt.InvalidArgumentError, match="check_numerics"):
        mt.check_numerics(1.0, "x")  # type: ignore[arg-type]  # deliberately wrong


# -- detect_anomaly ---------------------------------------------------------------------------


def test_detect_anomaly_is_off_by_default() -> None:
    assert _runtime.STATE.get().anomaly is False
    y = mt.log(mt.tensor([-1.0]))  # NaN, silently, as in every tensor framework
    assert math.isnan(y.item())
    g = mt.grad(lambda t: mt.sqrt(t).sum())(mt.tensor([0.0]))
    assert g.data_sync() == [INF]


def test_detect_anomaly_forward_nan_names_op_phase_and_line() -> None:
    x = mt.tensor([1.0, 0.0])
    with mt.detect_anomaly():
        with pytest.raises(mt.AnomalyError) as info:
            line = here() + 1
            mt.log(x * 0.0 - 1.0)
    err = info.value
    assert (err.op, err.phase, err.kind, err.where) == ("log", "forward", "NaN", f"{__file__}:{line}")
    text = str(err)
    assert text.startswith("forward pass: the output of 'log' has NaN values.")
    assert "shapes (2,); value ranges [-1.0, -1.0]" in text
    assert "hint: log(0) is -inf" in text
    assert _runtime.STATE.get().anomaly is False  # switched off again after the block


def test_detect_anomaly_forward_inf() -> None:
    x = mt.tensor([1.0, 2.0])
    with mt.detect_anomaly():
        with pytest.raises(mt.AnomalyError) as overflow:
            line = here() + 1
            mt.exp(x * 1000.0)
        with pytest.raises(mt.AnomalyError) as zero:
            _ = x / 0.0
    assert (overflow.value.op, overflow.value.kind, overflow.value.where) == ("exp", "Inf", f"{__file__}:{line}")
    assert "value ranges [1000.0, 2000.0]" in str(overflow.value)
    assert (zero.value.op, zero.value.phase, zero.value.kind) == ("div", "forward", "Inf")


def test_detect_anomaly_backward_inf_and_nan_name_the_line_that_made_the_op() -> None:
    x = mt.tensor([0.0, 1.0])
    with mt.detect_anomaly():
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            line = here() + 1
            root = mt.sqrt(x)  # fine forward: sqrt(0) = 0
            y = root.sum()
            z = (root * 0.0).sum()
        with pytest.raises(mt.AnomalyError) as inf:
            tape.gradient(y, x)  # d sqrt/dx at 0 is inf
        with pytest.raises(mt.AnomalyError) as nan:
            tape.gradient(z, x)  # 0 * inf
        tape.release()
    for info, kind in ((inf, "Inf"), (nan, "NaN")):
        err = info.value
        assert (err.op, err.phase, err.kind, err.where) == ("sqrt", "backward", kind, f"{__file__}:{line}")
        assert str(err).startswith(f"backward pass: the gradient for input 0 of 'sqrt' has {kind} values.")
    assert _runtime.STATE.get().backward == 0 and _runtime.STATE.get().scopes == ()


def test_detect_anomaly_through_grad_and_a_nan_that_comes_in_as_data() -> None:
    with mt.detect_anomaly():
        with pytest.raises(mt.AnomalyError) as info:
            mt.grad(lambda t: mt.sqrt(t).sum())(mt.tensor([0.0, 4.0]))
        assert (info.value.op, info.value.phase) == ("sqrt", "backward")
        data = mt.tensor([NAN, 1.0])
        y = data * 2.0  # the NaN was not made by an op here: not an anomaly
        assert math.isnan(y.data_sync()[0])


def test_detect_anomaly_restores_state_after_an_error_and_nests() -> None:
    with pytest.raises(ValueError, match="boom"):
        with mt.detect_anomaly():
            raise ValueError("boom")
    assert _runtime.STATE.get().anomaly is False
    with mt.detect_anomaly():
        with mt.detect_anomaly():
            pass
        assert _runtime.STATE.get().anomaly is True
    assert _runtime.STATE.get().anomaly is False


# -- grad_stats and the monitor ---------------------------------------------------------------


def test_grad_stats_numbers() -> None:
    stats = mt.grad_stats({"w": mt.tensor([3.0, 0.0, -4.0, 0.0]), "b": mt.tensor([NAN, 2.0, INF]), "none": None})  # None entries are skipped
    assert list(stats) == ["w", "b"]
    w = stats["w"]
    assert (w.name, w.shape, w.norm, w.max_abs, w.mean_abs, w.zero_fraction, w.nan_count, w.inf_count) == (
        "w", (4,), 5.0, 4.0, 7.0 / 4, 0.5, 0, 0,
    )
    b = stats["b"]
    assert math.isnan(b.norm) and math.isnan(b.max_abs) and (b.nan_count, b.inf_count) == (1, 1)
    assert str(w) == "w            (4,)       norm       5.0  max|g|       4.0  mean|g|      1.75  zeros 50.0%  nan 0  inf 0"


def test_grad_stats_accepts_lists_tensors_and_variable_grads() -> None:
    assert list(mt.grad_stats([mt.tensor([1.0]), None, mt.tensor([2.0])])) == ["0", "2"]  # None entries are skipped
    assert mt.grad_stats(mt.tensor([6.0, 8.0]))["grad"].norm == 10.0
    w = mt.variable(mt.tensor([1.0, 2.0]), name="stats_w")
    _, grads = mt.variable_grads(lambda: (w * w).sum())
    stats = mt.grad_stats(grads)
    assert list(stats) == ["stats_w"] and stats["stats_w"].norm == pytest.approx(math.sqrt(4.0 + 16.0))
    with pytest.raises(mt.InvalidArgumentError, match="expected gradients"):
        mt.grad_stats(3.0)  # type: ignore[arg-type]  # deliberately wrong


def test_monitor_flags_explosion_above_the_threshold() -> None:
    monitor = mt.GradientMonitor(explode_norm=100.0)
    new = [monitor.record({"w": mt.tensor([3.0 * 10.0**k]), "b": mt.tensor([4.0 * 10.0**k])}) for k in range(5)]
    assert monitor.global_norms == pytest.approx([5.0, 50.0, 500.0, 5000.0, 50000.0])
    assert new[:2] == [[], []]
    assert new[2] == ["step 2: exploding: global norm 500.0 > 100.0"]
    assert monitor.exploding and not monitor.vanishing
    assert monitor.history["w"] == pytest.approx([3.0, 30.0, 300.0, 3000.0, 30000.0])


def test_monitor_flags_growth_over_a_window() -> None:
    monitor = mt.GradientMonitor(explode_norm=1e12, growth=100.0, window=3)
    for k in range(6):
        monitor.record([mt.tensor([5.0**k])])  # x5 a step: x125 over 3 steps
    assert monitor.flags == [
        "step 3: exploding: global norm grew 125.0x in 3 steps",
        "step 4: exploding: global norm grew 125.0x in 3 steps",
        "step 5: exploding: global norm grew 125.0x in 3 steps",
    ]
    slow = mt.GradientMonitor(explode_norm=1e12, growth=100.0, window=3)
    for k in range(6):
        slow.record([mt.tensor([4.0**k])])  # x64 over 3 steps: below the factor
    assert slow.flags == [] and not slow.exploding


def test_monitor_flags_vanishing_and_nan() -> None:
    monitor = mt.GradientMonitor(vanish_norm=1e-6)
    for k in range(5):
        monitor.record({"deep": mt.tensor([10.0 ** (-2 * k)]), "top": mt.tensor([1.0])})
    assert monitor.flags == [
        "step 4: vanishing: |grad deep| = 1e-08 < 1e-06",
    ]
    assert monitor.vanishing and not monitor.exploding
    monitor.record({"deep": mt.tensor([NAN]), "top": mt.tensor([1.0])})
    assert monitor.flags[-1] == "step 5: NaN/Inf in the gradient of deep"
    assert monitor.exploding


def test_monitor_report_has_a_sparkline_per_variable() -> None:
    monitor = mt.GradientMonitor(explode_norm=150.0)
    for k in range(6):
        monitor.record({"w": mt.tensor([10.0**k]), "bias": mt.tensor([1.0])})
    lines = monitor.report().splitlines()
    assert lines[0] == "GradientMonitor: 6 steps, 3 flags"
    assert lines[1] == "w        ▁▂▄▅▇█  last 1e+05"
    assert lines[2] == "bias     ▁▁▁▁▁▁  last 1.0"
    assert lines[3].startswith("global   ▁▂▄▅▇█  last 1e+05")
    assert lines[4:] == [
        "  step 3: exploding: global norm 1000.0 > 150.0",
        "  step 4: exploding: global norm 1e+04 > 150.0",
        "  step 5: exploding: global norm 1e+05 > 150.0",
    ]
    assert mt.GradientMonitor().report() == "GradientMonitor: 0 steps, 0 flags\nglobal     last -"


@pytest.mark.parametrize(
    "kwargs",
    [{"explode_norm": 0.0}, {"vanish_norm": -1.0}, {"growth": 1.0}, {"window": 0}, {"window": 2.5}, {"explode_norm": NAN}],
)
def test_monitor_rejects_unusable_settings(kwargs: dict[str, float]) -> None:
    with pytest.raises(mt.InvalidArgumentError, match="is not usable"):
        mt.GradientMonitor(**kwargs)  # type: ignore[arg-type]  # deliberately wrong


# -- clipping --------------------------------------------------------------------------------


def test_clip_by_value_is_inclusive_and_checks_its_bounds() -> None:
    t = mt.tensor([-2.0, -1.0, 0.5, 1.0, 3.0])
    assert mt.clip_by_value(t, -1.0, 1.0).data_sync() == [-1.0, -1.0, 0.5, 1.0, 1.0]
    assert t.clip_by_value(0.5, 0.5).data_sync() == [0.5] * 5
    assert mt.grad(lambda x: mt.clip_by_value(x, -1.0, 1.0).sum())(mt.tensor([-2.0, 0.5, 3.0])).data_sync() == [0.0, 1.0, 0.0]
    with pytest.raises(mt.InvalidArgumentError, match=r"clip_value_min \(2.0\) must be <= clip_value_max \(1.0\)"):
        mt.clip_by_value(t, 2.0, 1.0)


def test_clip_by_norm_against_hand_computed_values() -> None:
    assert mt.clip_by_norm(mt.tensor([3.0, 4.0]), 1.0).data_sync() == pytest.approx([0.6, 0.8])
    assert mt.clip_by_norm(mt.tensor([3.0, 4.0]), 10.0).data_sync() == [3.0, 4.0]  # short enough: unchanged
    assert mt.clip_by_norm(mt.tensor([3.0, 4.0]), 5.0).data_sync() == [3.0, 4.0]  # exactly at the bound
    # per row: [3, 4] has norm 5 and is scaled to norm 2; [0.3, 0.4] has norm 0.5 and stays
    rows = mt.clip_by_norm(mt.tensor([[3.0, 4.0], [0.3, 0.4]]), 2.0, axes=1)
    assert rows.data_sync() == pytest.approx([1.2, 1.6, 0.3, 0.4])
    cols = mt.clip_by_norm(mt.tensor([[3.0, 0.0], [4.0, 0.5]]), 1.0, axes=[0])
    assert cols.data_sync() == pytest.approx([0.6, 0.0, 0.8, 0.5])
    assert mt.clip_by_norm(mt.zeros((2,)), 1.0).data_sync() == [0.0, 0.0]
    assert mt.clip_by_norm(mt.scalar(-3.0), 1.0).item() == -1.0


def test_clip_by_norm_is_differentiable() -> None:
    report = mt.check_grads(lambda t: mt.clip_by_norm(t, 1.0), [mt.tensor([3.0, -4.0, 1.0])])
    assert report.ok and not report.kinks


@pytest.mark.parametrize("axes", [None, 1])
def test_clip_by_norm_gradient_at_zero_is_the_identity(axes: int | None) -> None:
    # sqrt's derivative at 0 is infinite; the two-where trick keeps it out, so near 0
    # (where clip_by_norm is the identity) the gradient is ones, not NaN
    x = mt.tensor([[0.0, 0.0, 0.0], [0.3, -0.4, 0.0]])
    g = mt.grad(lambda t: mt.clip_by_norm(t, 1.0, axes=axes).sum())(x)
    assert g.data_sync() == pytest.approx([1.0] * 6)
    assert mt.grad(lambda t: mt.clip_by_norm(t, 1.0).sum())(mt.zeros((3,))).data_sync() == [1.0, 1.0, 1.0]
    report = mt.check_grads(lambda t: mt.clip_by_norm(t, 1.0, axes=axes), [x])
    assert report.ok, str(report)


def test_clip_by_global_norm_gradient_at_zero_is_finite() -> None:
    def f(a: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
        (ca, cb), norm = mt.clip_by_global_norm([a, b], 1.0)
        return ca.sum() + cb.sum() + norm

    ga, gb = mt.grads(f)([mt.zeros((2,)), mt.zeros((1, 2))])
    assert ga.data_sync() == [1.0, 1.0] and gb.data_sync() == [1.0, 1.0]  # the norm's gradient at 0 is 0


def test_clip_by_global_norm_against_hand_computed_values() -> None:
    a, b = mt.tensor([3.0]), mt.tensor([[4.0, 0.0]])
    clipped, norm = mt.clip_by_global_norm([a, None, b], 2.5)
    assert norm.item() == 5.0 and norm.shape == ()
    assert clipped[1] is None
    first, third = clipped[0], clipped[2]
    assert first is not None and third is not None
    assert first.data_sync() == pytest.approx([1.5]) and third.data_sync() == pytest.approx([2.0, 0.0])
    kept, norm = mt.clip_by_global_norm((a, b), 10.0)  # short enough: same values
    assert [t.data_sync() for t in kept] == [[3.0], [4.0, 0.0]] and norm.item() == 5.0
    nothing, zero = mt.clip_by_global_norm([None, None], 1.0)
    assert nothing == [None, None] and zero.item() == 0.0


def test_clip_by_global_norm_of_an_infinite_norm_gives_nan() -> None:
    clipped, norm = mt.clip_by_global_norm([mt.tensor([INF, 1.0]), mt.tensor([2.0])], 1.0)
    assert norm.item() == INF
    assert all(math.isnan(v) for t in clipped for v in t.data_sync())
    nan_in, nan_norm = mt.clip_by_global_norm([mt.tensor([NAN])], 1.0)
    assert math.isnan(nan_norm.item())
    assert math.isnan(nan_in[0].item())


@pytest.mark.parametrize("bad", [0.0, -1.0, NAN, INF, "1", None])
def test_clipping_rejects_a_bad_clip_norm(bad: object) -> None:
    for clip in (lambda: mt.clip_by_norm(mt.ones((2,)), bad), lambda: mt.clip_by_global_norm([mt.ones((2,))], bad)):  # type: ignore[arg-type, call-overload]  # deliberately wrong
        with pytest.raises(mt.InvalidArgumentError, match="clip_norm=.* must be a positive, finite number"):
            clip()


def test_clipping_rejects_what_is_not_a_tensor() -> None:
    with pytest.raises(mt.InvalidArgumentError, match=r"clip_by_norm\(\) needs a tensor, got list"):
        mt.clip_by_norm([3.0, 4.0], 1.0)  # type: ignore[arg-type]  # deliberately wrong
    with pytest.raises(mt.InvalidArgumentError, match=r"(?s)needs a list of tensors, got Tensor.*for one tensor use mt.clip_by_norm"):
        mt.clip_by_global_norm(mt.ones((2,)), 1.0)  # type: ignore[call-overload]  # deliberately wrong
    with pytest.raises(mt.InvalidArgumentError, match="clip_by_norm: axis 3 is out of range for a tensor of rank 1"):
        mt.clip_by_norm(mt.ones((2,)), 1.0, axes=3)
    with pytest.raises(mt.InvalidArgumentError, match="entry 1 is a float, not a tensor or None"):
        mt.clip_by_global_norm([mt.ones((2,)), 3.0], 1.0)  # type: ignore[list-item]  # deliberately wrong


def test_clipping_keeps_only_its_results_in_memory() -> None:
    gc.collect()
    t, u = mt.tensor([3.0, 4.0]), mt.tensor([12.0])
    before = mt.memory().num_tensors, mt.memory().num_bytes
    clipped = mt.clip_by_norm(t, 1.0)
    assert (mt.memory().num_tensors - before[0], mt.memory().num_bytes - before[1]) == (1, 16)
    pair, norm = mt.clip_by_global_norm([t, u], 1.0)
    assert (mt.memory().num_tensors - before[0], mt.memory().num_bytes - before[1]) == (4, 16 + 16 + 8 + 8)
    assert norm.item() == 13.0
    mt.dispose([clipped, pair, norm])
    # under a tape the intermediates are kept for the backward pass, and gradients still flow
    g = mt.grad(lambda x: mt.clip_by_norm(x, 1.0).sum())(t)
    assert g.data_sync() == pytest.approx([0.032, -0.024])
    assert (mt.memory().num_tensors - before[0], mt.memory().num_bytes - before[1]) == (1, 16)


# -- text plots ---------------------------------------------------------------------------


def test_sparkline() -> None:
    assert mt.sparkline([1, 2, 3, 4, 8]) == "▁▂▃▄█"
    assert mt.sparkline([1e-6, 1e-3, 1.0], log=True) == "▁▅█"
    assert mt.sparkline(mt.tensor([0.0, 1.0])) == "▁█"
    assert mt.sparkline([5.0, 5.0, 5.0]) == "▁▁▁"
    assert mt.sparkline([1.0, NAN, 3.0, INF]) == "▁!█!"
    assert mt.sparkline([NAN, NAN]) == "!!"
    assert mt.sparkline([]) == ""
    assert mt.sparkline([0.0, 10.0, 100.0], log=True) == "▁▁█"  # log of 0 draws the lowest bar


def test_histogram() -> None:
    assert mt.histogram([0.0, 0.1, 0.2, 0.9, 1.0], bins=2, width=6) == "[0, 0.5)  ###### 3\n[0.5, 1]  #### 2"
    lines = mt.histogram(mt.tensor([0.0, 0.0, 0.0, 1.0, 2.0, 3.0, NAN]), bins=3, width=9).splitlines()
    assert lines == ["[0, 1)  ######### 3", "[1, 2)  ### 1", "[2, 3]  ###### 2", "(1 NaN/Inf value left out)"]
    assert mt.histogram([NAN, INF]) == "(no finite values)\n(2 NaN/Inf values left out)"
    assert mt.histogram([7.0, 7.0], bins=1, width=4) == "[7, 8]  #### 2"
    with pytest.raises(mt.InvalidArgumentError, match="bins=0 must be a positive int"):
        mt.histogram([1.0], bins=0)


def test_gradient_monitor_html_has_svg_sparklines_and_escaped_names() -> None:
    monitor = mt.GradientMonitor(explode_norm=10.0)
    for step in range(4):
        _ = monitor.record({"<script>alert(1)</script>": mt.tensor([100.0**step]), 'b&"': mt.tensor([0.0])})
    _ = monitor.record({"<script>alert(1)</script>": mt.tensor([1.5e308, 1.5e308]), 'b&"': mt.tensor([float("nan")])})
    markup = monitor._repr_html_()
    assert "<script>" not in markup and "&lt;script&gt;" in markup and "b&amp;&quot;" in markup
    assert markup.count("<polyline") == 3  # two variables and the global norm
    assert markup.count('fill="#dc2626"') >= 1  # the NaN step is marked
    assert "exploding" in markup and monitor.report().startswith("GradientMonitor: 5 steps")


def test_leak_check_reports_optimizer_state_as_what_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    """TF.js's MomentumOptimizer kept a tensor after dispose(); here the slots made inside the block are
    reported as optimizer state (counted by memory(), freed by opt.dispose()), and gone after dispose()."""
    w = mt.variable(mt.tensor([1.0, 2.0, 3.0]), name="w_leak_state")
    opt = mt.train.momentum(0.1, 0.9)
    before = mt.memory()
    with mt.leak_check() as report:
        opt.minimize(lambda: (w * w).sum())
    after = mt.memory()
    assert after.num_tensors - before.num_tensors == 1 and after.num_variables - before.num_variables == 1
    assert report.count == 0 and not report  # not a leak
    (group,) = report.state
    assert (group.owner, group.count, group.names, group.num_bytes) == ("MomentumOptimizer", 1, ("w_leak_state/momentum",), 24)
    assert group.where.endswith(f"test_debug.py:{here() - 6}")
    printed = capsys.readouterr().out
    assert printed.startswith("leak_check: no leaks;\noptimizer state made inside the block is still alive: 1 slot variable(s)")
    assert "opt.dispose() frees them" in printed
    opt.dispose()
    assert mt.memory().num_tensors == before.num_tensors and mt.memory().num_variables == before.num_variables
    with mt.leak_check(on_leak="raise") as clean:
        opt.minimize(lambda: (w * w).sum())
        opt.dispose()
    assert clean.state == [] and str(clean) == "leak_check: no leaks"
