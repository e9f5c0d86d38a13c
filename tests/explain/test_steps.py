"""tape.backward_steps: one step per VJP, in the backward pass's order, whose last
accumulated gradients are gradient()'s exactly (one source, a list, a dict,
variables, broadcasting, a persistent tape); the used-once rule; the line of the
user's code; str and HTML; and no tensor left behind inside tidy."""

from __future__ import annotations

import html
from typing import Any

import pytest

import microtape as mt


def _values(g: object) -> object:
    """Gradients as plain values, in their structure, to compare exactly."""
    if g is None:
        return None
    if isinstance(g, mt.Tensor):
        return (g.shape, g.data_sync())
    if isinstance(g, dict):
        return {k: _values(v) for k, v in g.items()}
    assert isinstance(g, list)
    return [_values(v) for v in g]


def _chapter3() -> tuple[mt.GradientTape, mt.Tensor, mt.Tensor, mt.Tensor]:
    x, y = mt.scalar(2.0), mt.scalar(3.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = x * x + y * y  # the line the steps name
    return tape, x, y, z


def test_steps_of_chapter_3s_example_run_from_the_loss_back() -> None:
    tape, x, y, z = _chapter3()
    steps = list(tape.backward_steps(z, {"x": x, "y": y}))
    assert [s.op for s in steps] == ["add", "mul", "mul"]
    assert [s.index for s in steps] == [0, 1, 2]
    assert all(s.where.endswith(f"test_steps.py:{_chapter3.__code__.co_firstlineno + 4}") for s in steps)
    first = steps[0]
    assert first.dout.item() == 1.0
    assert [g.item() if g is not None else None for g in first.grads] == [1.0, 1.0]
    assert first.accumulated == {"x": None, "y": None}  # not reached yet: None, as gradient()'s default
    assert _values(steps[-1].accumulated) == _values(tape.gradient(z, {"x": x, "y": y}))
    tape.release()


@pytest.mark.parametrize("structure", ["one", "list", "dict"])
def test_last_step_equals_gradient_with_variables_and_broadcasting(structure: str) -> None:
    w = mt.variable(mt.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]]), name="w_steps")
    b = mt.variable(mt.tensor([0.1, 0.2, 0.3]), name="b_steps")
    x = mt.tensor([[1.0, 2.0], [3.0, -4.0]])
    with mt.GradientTape(persistent=True) as tape:
        h = mt.tanh(mt.matmul(x, w) + b)  # b broadcasts over the rows
        loss = (h * h).mean() + (b * 2.0).sum()
    sources: Any = {"one": w, "list": [w, b], "dict": {"w": w, "b": b}}[structure]
    steps = list(tape.backward_steps(loss, sources))
    expected = tape.gradient(loss, sources)
    assert _values(steps[-1].accumulated) == _values(expected)
    assert len(steps) == len(tape.operations)
    tape.release()


def test_a_non_persistent_tape_is_used_once() -> None:
    x = mt.scalar(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert [s.op for s in tape.backward_steps(y, x)] == ["mul"]
    with pytest.raises(mt.TapeError, match="only be used to compute one set of gradients"):
        tape.backward_steps(y, x)


def test_a_source_not_reached_stays_none_and_unrelated_ops_are_skipped() -> None:
    x, u = mt.scalar(2.0), mt.scalar(5.0)
    with mt.GradientTape() as tape:
        tape.watch([x, u])
        _ = mt.exp(u)  # not on the way to y: no step
        y = x * 3.0
    steps = list(tape.backward_steps(y, [x, u]))
    assert [s.op for s in steps] == ["mul"]
    last = steps[-1].accumulated
    assert isinstance(last, list) and last[1] is None
    assert steps[-1].grads[1] is None  # the constant 3.0 needs no gradient


def test_str_is_one_line_and_html_escapes() -> None:
    tape, x, y, z = _chapter3()
    steps = list(tape.backward_steps(z, [x, y]))
    text = str(steps[1])
    assert "\n" not in text and text.startswith("step 1: mul at ") and "so far [0] None, [1] 6.0" in text
    steps[1].where = "<script>alert(1)</script>"
    page = steps[1]._repr_html_()
    assert "<script>" not in page and html.escape("<script>") in page and "<table" in page
    tape.release()


def test_steps_leave_no_tensor_behind_inside_tidy() -> None:
    x = mt.tensor([1.0, -2.0, 3.0])
    before = mt.memory().num_tensors

    def run() -> int:
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = (mt.exp(x) * x).sum()
        steps = list(tape.backward_steps(y, x))
        assert all(s.dout._data is not None for s in steps)  # alive while the scope lasts
        return len(steps)

    assert mt.tidy(run) == 3
    assert mt.memory().num_tensors == before


def test_steps_under_another_open_tape_still_match() -> None:
    x = mt.scalar(1.5)
    with mt.GradientTape() as outer:  # an open tape makes the pass record (not light)
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = mt.sin(x) * x
        steps = list(inner.backward_steps(y, x))
    last = steps[-1].accumulated
    assert isinstance(last, mt.Tensor)
    assert last.item() == pytest.approx(1.5 * 0.0707372016677029 + 0.9974949866040544, rel=1e-12)
    del outer
