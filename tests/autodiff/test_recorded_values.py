"""A tape differentiates at the values it recorded, variables included.

Before the fix a record held the variable itself, so an ``assign`` between
the forward pass and ``gradient()`` changed the gradients of every other input
of the ops that read it (the issue's example gave 1.0 instead of 3.0).
TensorFlow records the value a variable read returned; so does microtape.
"""

from __future__ import annotations

from collections.abc import Sequence

import microtape as mt
from microtape.engine.tensor import Tensor


def _value(t: Tensor | None) -> list[float]:
    assert t is not None
    return t.data_sync()


def test_the_issues_example_gives_the_gradient_at_the_recorded_value() -> None:
    """Guards a fixed bug: gave 1.0 (the updated w) instead of 3.0."""
    w = mt.variable([1.0, 2.0])
    b = mt.variable(2.0)
    with mt.GradientTape(persistent=True) as tape:
        loss = (w * b).sum()
    dw = tape.gradient(loss, w)
    assert _value(dw) == [2.0, 2.0]
    assert dw is not None
    w.assign_sub(dw * 0.5)
    assert w.data_sync() == [0.0, 1.0]
    assert _value(tape.gradient(loss, b)) == [3.0]
    assert _value(tape.gradient(loss, w)) == [2.0, 2.0]
    tape.release()


def test_every_kind_of_assign_leaves_the_record_alone() -> None:
    w = mt.variable([1.0, 2.0])
    b = mt.variable(2.0)
    with mt.GradientTape(persistent=True) as tape:
        loss = (w * b).sum()
    w.assign(mt.tensor([10.0, 20.0]))
    assert _value(tape.gradient(loss, b)) == [3.0]
    w.assign_add(mt.tensor([1.0, 1.0]))
    assert _value(tape.gradient(loss, b)) == [3.0]
    b.assign(mt.scalar(-7.0))
    assert _value(tape.gradient(loss, w)) == [2.0, 2.0]
    tape.release()


def test_a_non_persistent_tape_too() -> None:
    w = mt.variable([1.0, 2.0])
    b = mt.variable(2.0)
    with mt.GradientTape() as tape:
        loss = (w * b).sum()
    w.assign(mt.tensor([5.0, 5.0]))
    assert _value(tape.gradient(loss, b)) == [3.0]


def test_a_variable_the_tape_does_not_watch_is_recorded_by_value() -> None:
    """A non-trainable variable is a constant to the tape, but the VJPs of the ops
    that read it still read it: at the value it had."""
    x = mt.tensor([1.0, 2.0])
    c = mt.variable(3.0, trainable=False)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = (x * c).sum()
    c.assign(mt.scalar(100.0))
    assert _value(tape.gradient(y, x)) == [3.0, 3.0]


def test_custom_grad_saved_variables_and_closures_see_the_recorded_values() -> None:
    w = mt.variable([1.0, 2.0])

    def saves(x: Tensor, save: object) -> tuple[Tensor, object]:
        assert callable(save)
        save([x])

        def grad_fn(dy: Tensor, saved: Sequence[Tensor]) -> list[Tensor]:
            return [dy * 2.0 * saved[0]]

        return x * x, grad_fn

    def closes_over(x: Tensor) -> tuple[Tensor, object]:
        return x * x, lambda dy: [dy * 2.0 * x]

    for f in (saves, closes_over):
        w.assign(mt.tensor([1.0, 2.0]))
        with mt.GradientTape(persistent=True) as tape:
            loss = mt.custom_grad(f)(w).sum()  # type: ignore[arg-type]  # both return (value, grad_fn)
        w.assign(mt.tensor([10.0, 20.0]))
        assert _value(tape.gradient(loss, w)) == [2.0, 4.0], f.__name__
        tape.release()


def test_custom_grad_saving_a_variable_it_was_not_given() -> None:
    scale = mt.variable(3.0, trainable=False)

    def f(x: Tensor, save: object) -> tuple[Tensor, object]:
        assert callable(save)
        save([scale])
        return x * scale, lambda dy, saved: [dy * saved[0]]

    x = mt.tensor([1.0, 2.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.custom_grad(f)(x).sum()  # type: ignore[arg-type]  # f returns (value, grad_fn)
    scale.assign(mt.scalar(-1.0))
    assert _value(tape.gradient(y, x)) == [3.0, 3.0]


def test_second_order_through_a_variable_read_before_an_assign() -> None:
    w = mt.variable(3.0)
    with mt.GradientTape(persistent=True) as outer:
        with mt.GradientTape() as inner:
            y = w * w * w
        dy = inner.gradient(y, w)  # 3 w^2 = 27
    w.assign(mt.scalar(1.0))
    assert dy is not None and _value(dy) == [27.0]
    assert _value(outer.gradient(dy, w)) == [18.0]  # 6 w at w = 3
    outer.release()


def test_recording_a_variable_read_copies_nothing_and_adds_nothing_to_memory() -> None:
    w = mt.variable([1.0, 2.0, 3.0])
    x = mt.tensor([1.0, 1.0, 1.0])
    before = mt.memory()
    with mt.GradientTape(persistent=True) as tape:
        a = w * x
        b = w + x
    during = mt.memory()
    # the two results only, as without the fix: the variable is counted once
    assert during.num_tensors - before.num_tensors == 2
    assert during.num_variables == before.num_variables
    records = tape._records
    assert records[0][1][0] is records[1][1][0]  # one recorded read shared by both ops
    assert records[0][1][0]._data is w._data  # the variable's own list, not a copy
    values = mt.tensor([4.0, 5.0, 6.0])
    count = mt.memory().num_tensors
    w.assign(values)
    assert records[0][1][0]._data == [1.0, 2.0, 3.0]
    assert mt.memory().num_tensors == count  # the old values the tape keeps are not counted
    tape.release()
    mt.dispose([a, b, x, values])


def test_a_disposed_variable_leaves_the_tape_its_recorded_values() -> None:
    w = mt.variable([1.0, 2.0])
    b = mt.variable(2.0)
    with mt.GradientTape() as tape:
        loss = (w * b).sum()
    w.dispose()
    assert _value(tape.gradient(loss, b)) == [3.0]


def test_to_dot_still_names_the_variables_a_record_read() -> None:
    w = mt.variable([1.0, 2.0], name="recorded_w")
    c = mt.variable(2.0, trainable=False, name="recorded_c")
    with mt.GradientTape() as tape:
        loss = (w * c).sum()
    dot = tape.to_dot()
    assert 'label="recorded_w' in dot and 'label="recorded_c' in dot
    tape.gradient(loss, w)
