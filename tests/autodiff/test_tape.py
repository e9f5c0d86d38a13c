"""GradientTape: recording, persistence, nesting, the structure of results, unconnected gradients,
deep chains without a recursion limit, jacobian, the summary and the Graphviz drawing, argument
errors, and a graph that frees itself without the cyclic garbage collector."""

from __future__ import annotations

import gc
import math
import shutil
import subprocess

import pytest

import microtape as mt


def test_reused_intermediate_accumulates() -> None:
    a = mt.scalar(1.0)
    with mt.GradientTape() as tape:
        tape.watch(a)
        b = a + a
        c = b + b
    g = tape.gradient(c, a)
    assert g is not None and g.item() == 4.0


def test_diamond_and_fan_out() -> None:
    x = mt.scalar(3.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = mt.exp(y) + y * x + mt.sin(x)
    g = tape.gradient(z, x)
    import math

    expected = math.exp(9.0) * 6.0 + 3 * 9.0 + math.cos(3.0)
    assert g is not None and g.item() == pytest.approx(expected)


@pytest.mark.slow
def test_hundred_thousand_ops_deep_has_no_recursion_limit() -> None:
    x = y = mt.scalar(1.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        for _ in range(100_000):
            y = y * 1.0
    g = tape.gradient(y, x)
    assert g is not None and g.item() == 1.0


@pytest.mark.slow
def test_ten_thousand_ops_deep() -> None:
    x = y = mt.scalar(1.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        for i in range(10_000):
            y = mt.tanh(y) if i % 100 == 0 else y * 1.0
    g = tape.gradient(y, x)
    assert g is not None
    expected, v = 1.0, 1.0  # the chain rule by hand: d tanh(v)/dv = 1 - tanh(v)², times 1.0 elsewhere
    for _ in range(100):
        v = math.tanh(v)
        expected *= 1.0 - v * v
    assert g.item() == pytest.approx(expected, rel=1e-9)


def test_non_persistent_tape_used_twice() -> None:
    x = mt.scalar(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(mt.TapeError, match="A non-persistent GradientTape can only be used to compute one set of gradients"):
        tape.gradient(y, x)
    with pytest.raises(mt.TapeError, match="persistent=True"):
        tape.jacobian(y, x)


def test_persistent_tape() -> None:
    x = mt.scalar(2.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * x
    dy, dz = tape.gradient(y, x), tape.gradient(z, x)
    assert dy is not None and dz is not None and (dy.item(), dz.item()) == (4.0, 12.0)
    assert tape.persistent
    tape.release()
    assert tape.operations == []


def test_structures_of_sources() -> None:
    a, b = mt.scalar(2.0), mt.scalar(3.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = a * b
    as_list = tape.gradient(y, [a, b])
    assert [g.item() for g in as_list if g is not None] == [3.0, 2.0]
    as_dict = tape.gradient(y, {"a": a, "b": b})
    assert set(as_dict) == {"a", "b"} and as_dict["a"] is not None and as_dict["a"].item() == 3.0
    as_tuple = tape.gradient(y, (a, b))  # any sequence of sources gives a list
    assert type(as_tuple) is list and len(as_tuple) == 2
    single = tape.gradient(y, a)
    assert single is not None and single.item() == 3.0


def test_unconnected_gradients() -> None:
    a, unused = mt.scalar(2.0), mt.tensor([1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([a, unused])
        y = a * a
    assert tape.gradient(y, unused) is None
    zero = tape.gradient(y, unused, unconnected_gradients="zero")
    assert zero is not None and zero.data_sync() == [0.0, 0.0]
    with pytest.raises(mt.InvalidArgumentError, match="unconnected_gradients"):
        tape.gradient(y, a, unconnected_gradients="zeros")  # type: ignore[call-overload]  # the mistake under test


def test_output_gradients_and_non_scalar_target() -> None:
    x = mt.tensor([1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x)  # gradient of sum(y)
    assert g is not None and g.data_sync() == [2.0, 4.0]
    g = tape.gradient(y, x, output_gradients=mt.tensor([1.0, 0.5]))
    assert g is not None and g.data_sync() == [2.0, 2.0]
    with pytest.raises(mt.ShapeError, match=r"output_gradients has shape \(3,\)"):
        tape.gradient(y, x, output_gradients=mt.ones((3,)))


def test_watch_accessed_variables() -> None:
    w = mt.variable(mt.scalar(3.0), name="tape_w")
    frozen = mt.variable(mt.scalar(5.0), trainable=False, name="tape_frozen")
    with mt.GradientTape() as tape:
        y = w * frozen
    assert [v.name for v in tape.watched_variables()] == ["tape_w"]
    gw = tape.gradient(y, [w, frozen])
    assert gw[0] is not None and gw[0].item() == 5.0 and gw[1] is None
    with mt.GradientTape(watch_accessed_variables=False) as tape2:
        y2 = w * 2.0
    assert tape2.gradient(y2, w) is None and tape2.watched_variables() == []


def test_constants_need_watch() -> None:
    c = mt.scalar(2.0)
    with mt.GradientTape() as tape:
        y = c * c
    assert tape.gradient(y, c) is None
    with pytest.raises(mt.InvalidArgumentError, match="watch"):
        mt.GradientTape().watch([1.0])  # type: ignore[list-item]


def test_stop_recording_and_reset() -> None:
    x = mt.scalar(2.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            hidden = x * 10.0
        y = x * 3.0
    assert tape.gradient(hidden, x) is None
    g = tape.gradient(y, x)
    assert g is not None and g.item() == 3.0
    with pytest.raises(mt.TapeError, match="not recording"):
        with tape.stop_recording():
            pass
    with mt.GradientTape() as tape2:
        tape2.watch(x)
        _ = x * 2.0
        tape2.reset()
        y2 = x * 3.0
    assert tape2.gradient(y2, x) is None  # reset forgot the watch too


def test_nested_tapes_second_derivative() -> None:
    x = mt.scalar(3.0)
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = x ** 3.0
        dy = inner.gradient(y, x)
    assert dy is not None and dy.item() == 27.0
    d2 = outer.gradient(dy, x)
    assert d2 is not None and d2.item() == 18.0


def test_gradient_inside_own_block_does_not_record_itself() -> None:
    x = mt.scalar(2.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        n = len(tape.operations)
        tape.gradient(y, x)
        assert len(tape.operations) == n


def test_jacobian() -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x * x.sum()  # y_i = x_i * sum(x): dy_i/dx_j = sum(x) [i == j] + x_i
    j = tape.jacobian(y, x)
    assert j is not None and j.shape == (3, 3)
    s = 6.0
    expected = [[s + 1.0, 1.0, 1.0], [2.0, s + 2.0, 2.0], [3.0, 3.0, s + 3.0]]
    assert j.tolist() == expected


def test_jacobian_rows_equal_grads_of_each_output() -> None:
    x = mt.tensor([0.5, -1.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mt.tanh(x) * x.sum()
    j = tape.jacobian(y, x)
    assert j is not None
    for k in range(2):
        onehot = [0.0, 0.0]
        onehot[k] = 1.0
        row = tape.gradient(y, x, output_gradients=mt.tensor(onehot))
        assert row is not None and row.data_sync() == pytest.approx(j.tolist()[k])  # type: ignore[index]


def test_operations_summary_and_dot() -> None:
    w = mt.variable(mt.tensor([1.0, -2.0]), name="tape_dot_w")
    with mt.GradientTape(persistent=True) as tape:
        loss = mt.relu(w * 3.0).sum()
    ops = tape.operations
    assert [op.name for op in ops] == ["mul", "relu", "sum"]
    assert ops[0].input_shapes == ((2,), ()) and ops[0].output_shape == (2,)
    assert "|grad out|" in tape.summary() and tape.summary().count("\n") == 3
    tape.gradient(loss, w)
    summary = tape.summary().splitlines()
    assert summary[1].split()[-1] == "1.0"  # d loss / d(w*3) = relu'(w*3) = [1, 0]: norm 1
    dot = tape.to_dot()
    assert dot.startswith("digraph tape {") and "tape_dot_w" in dot and "|g|=" in dot and dot.endswith("}")
    assert "|g|=" not in tape.to_dot(grad_norms=False)
    assert "GradientTape(persistent=True" in repr(tape)


def test_to_dot_escapes_names_and_graphviz_renders_it() -> None:
    odd = 'layer "1" \\ path\nsecond line'
    w = mt.variable(mt.tensor([1.0, 2.0]), name=odd)
    with mt.GradientTape(persistent=True) as tape:
        loss = (w * w).sum()
    tape.gradient(loss, w)
    dot = tape.to_dot()
    assert 'label="layer \\"1\\" \\\\ path\\nsecond line\\n(2,)"' in dot
    lines = dot.splitlines()
    assert all(line.startswith("  ") for line in lines[1:-1]) and lines[-1] == "}"  # the name's line break is escaped
    exe = shutil.which("dot")
    if exe is None:
        pytest.skip("Graphviz's dot is not installed, so the text cannot be rendered")
    done = subprocess.run([exe, "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "<svg" in done.stdout and "second line" in done.stdout
    tape.release()


def test_bad_arguments() -> None:
    x = mt.scalar(1.0)
    with pytest.raises(mt.InvalidArgumentError, match="persistent"):
        mt.GradientTape(persistent="yes")  # type: ignore[arg-type]
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(mt.InvalidArgumentError, match="target"):
        tape.gradient(2.0, x)  # type: ignore[call-overload]
    with pytest.raises(mt.InvalidArgumentError, match="sources"):
        tape.gradient(y, "x")  # type: ignore[arg-type]
    with pytest.raises(mt.TapeError, match="already open"):
        t = mt.GradientTape()
        with t:
            with t:
                pass


def test_no_reference_cycles() -> None:
    gc.collect()
    gc.disable()
    try:
        before = gc.get_count()[0]
        x = mt.scalar(1.0)
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(200):
                y = mt.tanh(y * 1.5)
        tape.gradient(y, x)
        del tape, y
        found = gc.collect()
    finally:
        gc.enable()
    assert found == 0, f"the graph made {found} objects only the cyclic collector could free ({before})"


def test_summary_measures_the_last_backward_pass_quietly() -> None:
    x = mt.tensor([3.0, 4.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        loss = y.sum()
    tape.gradient(loss, x)
    assert tape.summary().splitlines()[1].split()[-1] == "1.414"  # y's gradient is [1, 1]: norm sqrt(2)
    tape.gradient(y, x, output_gradients=mt.tensor([3.0, 4.0]))  # the last pass is the one measured
    rows = tape.summary().splitlines()
    assert rows[1].split()[-1] == "5.0" and rows[2].split()[-1] == "-"  # |[3, 4]| = 5; the sum got nothing
    before = mt.memory()
    with mt.GradientTape() as outer:
        outer.watch(x)  # the replay's VJP multiplies by x: an open tape watching x would record that
        text = tape.to_dot()
    assert "5.0" in text and outer.operations == []  # the replay records nothing on an open tape
    assert mt.memory().num_tensors == before.num_tensors  # and leaves nothing in the arena
    tape.release()
    assert tape.summary().count("\n") == 0  # released: no records, nothing to replay
