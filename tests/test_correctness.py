"""Classes of correctness bugs, one test group each: zero derivatives instead of cuts,
one gradient per input, composites' memory counts as TF.js's, custom_grad's save, the culprit
finder's tolerances, zero-size shapes (in ops, optimizer steps and checkpoints), empty reductions,
absurd sizes, atomic optimizer steps, and odd checkpoint files (directories, FIFOs, devices, symlinks).
(The op-table-driven checks, every primitive's second derivative and arena count, are in test_ops.py.)"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

import microtape as mt

from ._fixtures import free_variables_made_by_the_test  # noqa: F401 - autouse in this module
from .train.test_train import FACTORIES




def grew(before: mt.MemoryInfo) -> int:
    return mt.memory().num_tensors - before.num_tensors


# -- piecewise-constant ops have a zero derivative, not a cut ---------------------------------


@pytest.mark.parametrize(
    "f",
    [mt.relu, mt.abs, mt.sign, lambda x: mt.maximum(x, mt.scalar(0.1)), lambda x: mt.minimum(x, mt.scalar(0.1)),
     lambda x: mt.clip_by_value(x, -1.0, 1.0), lambda x: mt.max(x), lambda x: mt.min(x),
     lambda x: mt.greater_equal(x, mt.scalar(0.0)), lambda x: mt.where(mt.greater(x, mt.scalar(0.0)), x, -x)],
    ids=["relu", "abs", "sign", "maximum", "minimum", "clip_by_value", "max", "min", "greater_equal", "where"],
)
def test_second_derivative_through_a_mask_is_zero(f: Callable[[mt.Tensor], mt.Tensor]) -> None:
    x = mt.tensor([0.7, -1.3, 0.4])
    assert mt.grad(mt.grad(f))(x).data_sync() == [0.0, 0.0, 0.0]


def test_sign_and_comparisons_give_zero_gradients() -> None:
    assert mt.grad(mt.sign)(mt.scalar(5.2)).item() == 0.0
    assert mt.grad(lambda x: mt.greater_equal(x, mt.scalar(1.0)) * x)(mt.tensor([0.5, 2.0])).data_sync() == [0.0, 1.0]


def test_a_truly_disconnected_gradient_still_raises_and_zero_on_request() -> None:
    third = mt.grad(mt.grad(mt.grad(mt.square)))
    with pytest.raises(mt.GradientError, match="Cannot compute gradient of y=f\\(x\\) with respect to x"):
        third(mt.scalar(1.5))
    x = mt.scalar(1.5)
    with mt.GradientTape() as outer:
        outer.watch(x)
        h = mt.grad(mt.grad(mt.square))(x)  # 2, a constant
    third_zero = outer.gradient(h, x, unconnected_gradients="zero")
    assert third_zero is not None and third_zero.item() == 0.0


def test_clone_is_recorded_as_the_identity() -> None:
    x, dy = mt.tensor([1.0, 2.0]), mt.tensor([3.0, -4.0])
    assert mt.grad(lambda t: t.clone())(x, dy).data_sync() == [3.0, -4.0]
    assert mt.grad(lambda a: (a.clone() * a).sum())(x).data_sync() == [2.0, 4.0]
    with mt.GradientTape() as tape:
        tape.watch(x)
        mt.clone(x)
    assert [op.name for op in tape.operations] == ["clone"]


# -- one gradient per input, numbers accepted, identity gradients ------------------------------


def test_grads_returns_one_gradient_per_input_in_order() -> None:
    c, a, b = mt.tensor([1.0, 0.0]), mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0])
    dy = mt.tensor([5.0, 6.0])
    gc_, ga, gb = mt.grads(lambda c, a, b: mt.where(c, a, b))([c, a, b], dy)
    assert (gc_.data_sync(), ga.data_sync(), gb.data_sync()) == ([0.0, 0.0], [5.0, 0.0], [0.0, 6.0])
    assert mt.grad(lambda c: mt.where(c, a, b))(c).data_sync() == [0.0, 0.0]
    value, gs = mt.value_and_grads(lambda c, a, b: mt.where(c, a, b).sum())([c, a, b])
    assert value.item() == 5.0 and len(gs) == 3


def test_a_custom_grad_returning_none_gives_zeros_and_an_unused_input_raises() -> None:
    op = mt.custom_grad(lambda x, y: (x * y, lambda dy: [dy * y, None]))
    gx, gy = mt.grads(op)([mt.scalar(2.0), mt.scalar(3.0)])
    assert (gx.item(), gy.item()) == (3.0, 0.0)
    with pytest.raises(mt.GradientError, match="input 1"):
        mt.grads(lambda x, y: x * 2.0)([mt.scalar(1.0), mt.scalar(1.0)])


def test_grad_accepts_numbers_and_lists() -> None:
    before = mt.memory()
    assert mt.grad(mt.abs)(-10).item() == -1.0
    assert mt.grad(lambda x: x * x)([1, 2]).data_sync() == [2.0, 4.0]
    assert mt.grads(lambda a, b: a * b)([2, 3.0])[0].item() == 3.0
    value, dx = mt.value_and_grad(lambda x: x * x)(3, dy=2)
    assert (value.item(), dx.item()) == (9.0, 12.0)
    assert grew(before) == 2 + 2 + 2  # the results only; the converted inputs went with the call


def test_identity_gradients_are_ones() -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="identity_w")
    _, grads = mt.variable_grads(lambda: mt.sum(w))
    assert grads[w].data_sync() == [1.0, 1.0]
    s = mt.variable(mt.scalar(4.0), name="identity_s")
    value, grads = mt.variable_grads(lambda: s)
    assert value is s and grads[s].item() == 1.0
    assert mt.grad(lambda x: x)(mt.tensor([1.0, 2.0])).data_sync() == [1.0, 1.0]


# -- memory counts as TF.js's -----------------------------------------------------------------

COMPOSITES: dict[str, Callable[[mt.Tensor], mt.Tensor]] = {
    "x * 2.0": lambda x: x * 2.0,
    "2.0 - x": lambda x: 2.0 - x,
    "add number": lambda x: mt.add(x, 1.0),  # type: ignore[arg-type]  # converted, as TF.js converts
    "maximum list": lambda x: mt.maximum(x, [0.0, 0.0, 0.0]),  # type: ignore[arg-type]
    "mean": mt.mean,
    "min": mt.min,
    "softmax": mt.softmax,
    "log_softmax": mt.log_softmax,
    "stack": lambda x: mt.stack([x, x]),
    "clip_by_norm": lambda x: mt.clip_by_norm(x, 1.0),
    "custom_grad": mt.custom_grad(lambda x: (mt.exp(x) * 2.0, lambda dy: dy * mt.exp(x) * 2.0)),
}


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_outside_a_tape_an_op_adds_exactly_its_result(name: str) -> None:
    x = mt.tensor([1.0, -2.0, 0.5])
    before = mt.memory()
    y = COMPOSITES[name](x)
    assert grew(before) == 1
    y.dispose()
    assert grew(before) == 0


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_inside_a_tape_what_it_keeps_is_held_and_released_with_it(name: str) -> None:
    x = mt.tensor([1.0, -2.0, 0.5])
    before = mt.memory()
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.tidy(lambda: COMPOSITES[name](x).sum())
    held = mt.memory().num_tensors_held_by_tapes - before.num_tensors_held_by_tapes
    assert held >= 2 and grew(before) == held - 1  # what the tape keeps (x too, made before), nothing else
    tape.gradient(y, x).dispose()  # type: ignore[union-attr]
    assert mt.memory().num_tensors_held_by_tapes == before.num_tensors_held_by_tapes
    y.dispose()
    assert grew(before) == 0


# -- custom_grad's save -------------------------------------------------------------------------


def _scaled_tanh(x: mt.Tensor, save: Callable[[list[mt.Tensor]], None]) -> tuple[mt.Tensor, Callable[[mt.Tensor, list[mt.Tensor]], mt.Tensor]]:
    t = mt.tanh(x)
    save([t])
    return 2.0 * t, lambda dy, saved: dy * 2.0 * (1.0 - saved[0] * saved[0])


def test_saved_tensors_live_as_long_as_a_tape_needs_them() -> None:
    op = mt.custom_grad(_scaled_tanh)
    x = mt.tensor([0.0, 1.0])
    before = mt.memory()
    y = op(x)
    assert grew(before) == 1  # outside a tape nothing is saved
    y.dispose()
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.tidy(lambda: op(x))  # the scope ends before gradient(): saved tensors stay for the tape
    assert mt.memory().num_tensors_held_by_tapes - before.num_tensors_held_by_tapes == 3  # x, tanh(x) and y
    g = tape.gradient(y, x)
    assert g is not None and g.data_sync() == pytest.approx([2.0, 2.0 * (1.0 - math.tanh(1.0) ** 2)])
    assert mt.memory().num_tensors_held_by_tapes == before.num_tensors_held_by_tapes
    assert mt.check_grads(op, [x]).ok
    mt.dispose([g, y])
    assert grew(before) == 0


def test_a_grad_fn_reading_an_unsaved_intermediate_names_custom_grad_and_save() -> None:
    def leaky(x: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], mt.Tensor]]:
        t = mt.tanh(x)
        return 2.0 * t, lambda dy: dy * 2.0 * (1.0 - t * t)

    op = mt.custom_grad(leaky)
    with pytest.raises(mt.DisposedTensorError) as info:
        mt.grad(op)(mt.tensor([0.5]))
    text = str(info.value)
    assert "custom_grad(leaky)" in text and "save" in text and "Tensor is disposed" in text


def test_save_misuse_is_reported() -> None:
    bad_save = mt.custom_grad(lambda x, save: (save(3.0), (x * 2.0, lambda dy, saved: dy * 2.0))[1])
    with pytest.raises(mt.InvalidArgumentError, match="save\\(\\) needs a list of tensors"):
        bad_save(mt.scalar(1.0))
    one_arg = mt.custom_grad(lambda x, save: (x * 2.0, lambda dy: dy * 2.0))
    with pytest.raises(mt.InvalidArgumentError, match="grad_fn\\(dy, saved\\)"):
        one_arg(mt.scalar(1.0))  # type: ignore[call-arg]  # its grad_fn takes dy alone, so the types read f as two tensors


# -- the culprit finder uses the check's tolerances ---------------------------------------------


def test_a_vjp_one_part_in_a_thousand_off_is_blamed_with_its_line() -> None:
    def square(x: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], mt.Tensor]]:
        return x * x, lambda dy: dy * 2.002 * x  # 0.1 % too large

    op = mt.custom_grad(square)
    line = _here() + 1
    report = mt.check_grads(lambda t: op(t).sum(), [mt.tensor([0.5, -1.3, 2.0])])
    assert not report.ok and report.max_rel_error == pytest.approx(1e-3, rel=1e-2)
    assert report.culprit is not None and report.culprit.op == "custom_grad(square)"
    assert report.culprit.where == f"{__file__}:{line}"


def _here() -> int:
    import inspect

    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


# -- zero-size shapes keep every dimension, and a step or a load is atomic ----------------------


@pytest.mark.parametrize(("shape", "nested"), [((0, 3), []), ((2, 0, 3), [[], []]), ((2, 3, 0), [[[], [], []], [[], [], []]])])
def test_zero_size_shapes_keep_every_dimension(shape: tuple[int, ...], nested: list[object]) -> None:
    t = mt.zeros(shape)
    assert t.tolist() == nested and t.shape == shape
    assert repr(t) == f"Tensor({nested}, shape={shape})"
    assert mt.tensor(t.data_sync(), shape=shape).shape == shape
    assert mt.sum(t, axis=-1).shape == shape[:-1] and mt.sum(t, axis=0).shape == shape[1:]


def test_an_empty_tensor_with_a_huge_dimension_prints_without_allocating() -> None:
    t = mt.zeros((10**17, 0))
    assert repr(t) == "Tensor([[], [], [], ..., [], [], []], shape=(100000000000000000, 0))"
    assert t.sum().item() == 0.0
    mt.print(t)
    with pytest.raises(mt.ShapeError, match="more than this machine's memory"):
        t.tolist()  # 10**17 empty lists


def test_a_shape_too_big_for_memory_is_refused_before_allocating() -> None:
    makers: list[Callable[[], mt.Tensor]] = [
        lambda: mt.zeros((10**6, 10**7)),
        lambda: mt.random_normal((10**9, 10**9)),
        lambda: mt.broadcast_to(mt.zeros((1, 1)), (10**7, 10**7)),
        lambda: mt.zeros((10**6, 1)) + mt.zeros((1, 10**7)),
        lambda: mt.zeros((10**7, 0)) @ mt.zeros((0, 10**7)),
        lambda: mt.pad(mt.zeros((1,)), [(10**13, 0)]),
    ]
    for make in makers:
        with pytest.raises(mt.ShapeError, match="more than this machine's memory can hold"):
            make()


def test_empty_reductions_and_matmul_give_floats() -> None:
    s = mt.sum(mt.zeros((0,)))
    assert type(s.item()) is float
    assert (1.0 / -s).item() == -math.inf  # -0.0: an int 0 would give +inf
    product = mt.zeros((2, 0)) @ mt.zeros((0, 3))
    assert product.shape == (2, 3) and all(type(v) is float for v in product.data_sync())
    assert all(type(v) is float for v in mt.zeros((0, 3)).sum(axis=0).data_sync())


@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_an_optimizer_steps_over_a_zero_size_variable(kind: str) -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]))
    empty = mt.variable(mt.zeros((0, 3)))
    opt = FACTORIES[kind]()
    alone = mt.variable(mt.tensor([1.0, 2.0]))
    reference = FACTORIES[kind]()  # the same steps without the zero-size variable
    opt.apply_gradients({w: mt.tensor([0.5, 0.5]), empty: mt.zeros((0, 3))})
    reference.apply_gradients({alone: mt.tensor([0.5, 0.5])})
    assert empty.shape == (0, 3) and opt.iterations == 1 and w.data_sync() == alone.data_sync() != [1.0, 2.0]
    opt.minimize(lambda: (w * w).sum() + empty.sum())
    reference.minimize(lambda: (alone * alone).sum())
    assert empty.shape == (0, 3) and opt.iterations == 2 and w.data_sync() == alone.data_sync()


@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_a_failed_step_changes_nothing(kind: str) -> None:
    a, b = mt.variable(mt.tensor([1.0, 2.0])), mt.variable(mt.tensor([3.0]))
    opt = FACTORIES[kind]()
    opt.apply_gradients({a: mt.tensor([0.1, 0.1]), b: mt.tensor([0.1])})
    state = (a.data_sync(), b.data_sync(), [w.data_sync() for _, w in opt.get_weights()], opt.iterations)
    with pytest.raises(mt.ShapeError):
        opt.apply_gradients({a: mt.tensor([1.0, 1.0]), b: mt.tensor([1.0, 2.0])})
    assert (a.data_sync(), b.data_sync(), [w.data_sync() for _, w in opt.get_weights()], opt.iterations) == state


def test_a_zero_size_checkpoint_round_trips_and_a_bad_one_changes_nothing(tmp_path: Path) -> None:
    a = mt.variable(mt.tensor([1.0, 2.0]), name="ck_a")
    empty = mt.variable(mt.zeros((0, 3)), name="ck_empty")
    opt = mt.train.adam(0.1)
    opt.apply_gradients({a: mt.tensor([1.0, 1.0]), empty: mt.zeros((0, 3))})
    path = tmp_path / "model.json"
    saved = a.data_sync()
    assert saved != [1.0, 2.0]  # the step moved it
    mt.save_variables(path, [a, empty], optimizer=opt)
    loaded = mt.load_variables(path)
    assert loaded["ck_empty"].shape == (0, 3) and loaded["ck_a"].data_sync() == saved
    a.assign(mt.tensor([9.0, 9.0]))
    mt.load_variables(path, into=[a, empty], optimizer=opt)
    assert empty.shape == (0, 3) and a.data_sync() == saved and opt.iterations == 1
    bad = tmp_path / "bad.json"
    bad.write_text(path.read_text().replace('"shape": [0, 3], "trainable": true, "data": []', '"shape": [0, 3], "trainable": true, "data": [1.0]'))
    a.assign(mt.tensor([9.0, 9.0]))
    with pytest.raises(mt.CheckpointError, match="needs 0 values"):
        mt.load_variables(bad, into=[a, empty])
    assert a.data_sync() == [9.0, 9.0] and empty.shape == (0, 3)


# -- odd files ------------------------------------------------------------------------------------


def test_load_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(mt.CheckpointError, match="a directory"):
        mt.load_variables(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="this system has no os.mkfifo (named pipes)")
def test_load_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(mt.CheckpointError, match="a FIFO"):
        mt.load_variables(fifo)  # opening it would wait for a writer forever


@pytest.mark.skipif(
    not (os.path.exists("/dev/zero") and stat.S_ISCHR(os.stat("/dev/zero").st_mode)),
    reason="this system has no character device /dev/zero",
)
def test_load_refuses_a_device_without_reading_it_forever() -> None:
    with pytest.raises(mt.CheckpointError, match="a device"):
        mt.load_variables("/dev/zero")


def test_save_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path: Path) -> None:
    w = mt.variable(mt.tensor([1.0]), name="link_w")
    target = tmp_path / "run7.json"
    link = tmp_path / "latest.json"
    mt.save_variables(target, [w])
    link.symlink_to(target)
    w.assign(mt.tensor([2.0]))
    mt.save_variables(link, [w])
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert mt.load_variables(target)["link_w"].data_sync() == [2.0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.json", "run7.json"]  # no temporary left
