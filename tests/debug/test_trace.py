"""detect_anomaly(mode="trace"): where a NaN came from (op, pass, entries, inputs, line) and every
op it then went through; the richer message of the default mode; a bad mode."""

from __future__ import annotations

import inspect
import math

import pytest

import microtape as mt
from microtape.engine import arena


def here() -> int:
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


def _softmax(z: mt.Tensor) -> mt.Tensor:
    e = mt.exp(z - z.max())
    return e / e.sum()


def test_a_nan_from_sqrt_0_inside_a_softmax_is_traced_to_its_line() -> None:
    q = mt.tensor([1.0, 2.0])
    keys = mt.tensor([[1.0, 2.0], [0.0, 2.0], [3.0, 1.0]])  # the first key is q itself: distance sqrt(0)
    with mt.detect_anomaly(mode="trace") as trace:
        with mt.GradientTape() as tape:
            tape.watch(q)
            line = here() + 1
            dist = mt.sqrt(((keys - q) ** 2.0).sum(axis=1))
            attention = _softmax(-dist)
            loss = (attention * mt.tensor([1.0, 2.0, 3.0])).sum()
        g = tape.gradient(loss, q)
    assert g is not None and any(math.isnan(v) for v in g.data_sync())  # nothing raised: recorded
    first = trace.first
    assert first is not None
    assert (first.op, first.phase, first.kind, first.where) == ("sqrt", "backward", "Inf", f"{__file__}:{line}")
    assert first.entries == ((0,),) and first.inputs == ((0.0, 1.0, 5.0),) and first.made_here
    assert "sqrt at 0.0, entry (0,): its derivative 1/(2*sqrt(x)) is inf" in first.cause
    assert [e.phase for e in trace.spread] == ["backward"] * len(trace.spread) and trace.spread
    assert trace.spread[-1].kind == "NaN"  # 0 * inf in the square's VJP, on the way to q's gradient
    text = str(trace)
    assert text.splitlines()[0].startswith(f"Inf first made by sqrt (backward) at test_trace.py:{line}: sqrt at 0.0")
    assert "then it spread through:" in text
    assert arena.STATE.get().anomaly is False and arena.STATE.get().observers == ()


def test_a_nan_from_log_0_is_traced_to_the_loss() -> None:
    p = mt.tensor([1.0, 0.0])
    labels = mt.tensor([0.0, 1.0])
    with mt.detect_anomaly(mode="trace") as trace:
        with mt.GradientTape() as tape:
            tape.watch(p)
            log_line = here() + 1
            logp = mt.log(p)
            loss_line = here() + 1
            loss = -(logp * labels).sum()
        tape.gradient(loss, p)
    first = trace.first
    assert first is not None
    assert (first.op, first.phase, first.where) == ("log", "forward", f"{__file__}:{log_line}")
    assert first.cause == "log at 0.0, entry (1,): log(0.0) is -inf" and first.inputs == ((1.0, 0.0),)
    forward = [e for e in trace.spread if e.phase == "forward"]
    assert [e.op for e in forward] == ["mul", "sum", "neg"]  # up to the loss
    assert forward[-1].where == f"{__file__}:{loss_line}" and not forward[-1].made_here
    backward = [e for e in trace.spread if e.phase == "backward"]
    assert [e.op for e in backward] == ["log"]  # and into the gradient: d log at 0 is inf
    assert not math.isfinite(loss.item())


def test_a_trace_with_nothing_wrong_says_so() -> None:
    with mt.detect_anomaly(mode="trace") as trace:
        mt.grad(lambda t: (t * t).sum())(mt.tensor([1.0, 2.0]))
    assert trace.first is None and trace.spread == []
    assert str(trace) == "detect_anomaly: no op made a NaN or an Inf."


def test_a_nan_that_comes_in_as_data_starts_no_trace() -> None:
    with mt.detect_anomaly(mode="trace") as trace:
        _ = mt.tensor([math.nan, 1.0]) * 2.0
    assert trace.first is None


def test_the_default_mode_names_inputs_entries_and_the_derivative() -> None:
    x = mt.tensor([4.0, 0.0])
    with mt.detect_anomaly():
        with pytest.raises(mt.AnomalyError) as info:
            mt.grad(lambda t: mt.sqrt(t).sum())(x)
    assert info.value.cause == "sqrt at 0.0, entry (1,): its derivative 1/(2*sqrt(x)) is inf"
    assert "sqrt at 0.0, entry (1,): its derivative 1/(2*sqrt(x)) is inf. Inputs:" in str(info.value)
    with mt.detect_anomaly():
        with pytest.raises(mt.AnomalyError) as zero:
            _ = mt.tensor([1.0, 2.0]) / mt.tensor([1.0, 0.0])
    assert zero.value.cause == "div at (2.0, 0.0), entry (1,): div(2.0, 0.0) is inf"


def test_an_op_without_a_formula_gets_a_plain_sentence() -> None:
    x = mt.tensor([0.0, 1.0])
    with mt.detect_anomaly():
        with pytest.raises(mt.AnomalyError) as info:
            mt.grad(lambda t: (mt.sqrt(t) * 0.0 + mt.abs(mt.sqrt(t))).sum())(x)
    assert info.value.op == "sqrt"  # abs's VJP passes inf on; sqrt made it
    with mt.detect_anomaly():
        with pytest.raises(mt.AnomalyError) as wide:
            mt.grad(lambda t: mt.logsumexp(t * 1e308 * 10.0))(x)
    assert "entry" in wide.value.cause


def test_a_bad_mode_is_refused_before_anything_changes() -> None:
    with pytest.raises(mt.InvalidArgumentError, match=r"detect_anomaly\(mode='loud'\) is not a mode") as info:
        mt.detect_anomaly(mode="loud")  # type: ignore[arg-type]  # the mistake under test
    assert "hint:" in str(info.value) and info.value.value == "loud"
    assert arena.STATE.get().anomaly is False


def test_a_nan_passed_on_below_the_mask_is_not_said_to_meet_it() -> None:
    """The log of a softmax whose third logit is far below: the mul hid log's -inf, and log's VJP made
    0·inf = nan there. The ops of the softmax below it (exp at -802, whose derivative is 0, and sub,
    whose derivative is 1) only pass that NaN on: no sentence says a mask's 0 met their derivative."""
    logits = mt.tensor([[2.0, 1.2, -800.0]])
    labels = mt.tensor([0.0, 1.0, 0.0])
    with mt.detect_anomaly(mode="trace") as trace:
        mt.grad(lambda z: -(labels * mt.log(mt.softmax(z))).sum())(logits)
    backward = [e for e in trace.spread if e.phase == "backward"]
    log_event = next(e for e in backward if e.op == "log")
    assert log_event.made_here and "0 times log's infinite derivative: 0·inf = nan" in log_event.masked_by
    for e in backward:
        if e.op in ("exp", "sub"):
            assert not e.made_here and e.masked_by == "", e
    exp_event = next(e for e in backward if e.op == "exp")
    assert exp_event.cause.endswith("its derivative exp(x) is 0.0, and the gradient that reached it is nan")
    assert trace.hint == "mt.log_softmax(z)"
