"""The tidy arena: exact tensor and byte counts for every rule of tidy, keep and dispose.

Also what tapes keep alive and release, the intermediates of grad and minimize, the error for a
disposed tensor, profile, leak_check, and threads and asyncio tasks that each keep their own scopes
and tapes. Every count here is a difference of ``mt.memory()`` before and after, in
tensors *and* bytes (8 per entry), so a leak of a single scalar fails a test.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import itertools
import sys
import threading
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Generator, Iterator
from dataclasses import dataclass

import pytest

import microtape as mt
from microtape.engine import arena as _runtime


@pytest.fixture(autouse=True)
def _collected() -> None:
    """Variables are held weakly: collect other tests' garbage so counts only move because of us."""
    gc.collect()


def counts() -> tuple[int, int]:
    """(num_tensors, num_bytes) now."""
    info = mt.memory()
    return info.num_tensors, info.num_bytes


def grew(before: tuple[int, int]) -> tuple[int, int]:
    """How many tensors and bytes were added since ``before``."""
    now = counts()
    return now[0] - before[0], now[1] - before[1]


def here() -> int:
    """The line number of the caller."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


# -- creation, ops, dispose ---------------------------------------------------------


def test_creation_counts_tensors_and_bytes() -> None:
    before = counts()
    a = mt.tensor([1.0, 2.0, 3.0])
    assert grew(before) == (1, 24)
    b = mt.zeros((2, 5))
    assert grew(before) == (2, 24 + 80)
    c = mt.scalar(4.0)
    assert grew(before) == (3, 24 + 80 + 8)
    for t in (a, b, c):
        t.dispose()
    assert grew(before) == (0, 0)


def test_each_op_adds_its_output_and_converted_constants() -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    before = counts()
    y = x + x  # one output
    assert grew(before) == (1, 24)
    z = x * 2.0  # the scalar 2.0 becomes a tensor for the op, gone when it returns (TF.js's op scope)
    assert grew(before) == (2, 24 + 24)
    s = z.sum()
    assert grew(before) == (3, 24 + 24 + 8)
    mt.dispose([y, z, s])
    assert grew(before) == (0, 0)
    assert mt.memory().num_bytes_held_by_tapes == 0


def test_dispose_twice_is_harmless_and_counts_once() -> None:
    t = mt.ones((4,))
    before = counts()
    t.dispose()
    t.dispose()
    mt.dispose(t)
    assert grew(before) == (-1, -32)
    assert t.is_disposed


def test_dispose_of_nested_containers() -> None:
    a, b, c, d = mt.ones((1,)), mt.ones((2,)), mt.ones((3,)), mt.ones((4,))
    keep = mt.ones((5,))
    before = counts()
    mt.dispose({"a": a, "rest": [b, (c, {"deep": d})], "number": 3, "text": "not a tensor"})
    assert grew(before) == (-4, -8 * (1 + 2 + 3 + 4))
    assert [t.is_disposed for t in (a, b, c, d, keep)] == [True, True, True, True, False]


def test_variables_count_until_disposed() -> None:
    before = counts()
    before_vars = mt.memory().num_variables
    w = mt.variable(mt.zeros((3,)), name="mem_w")  # the zeros tensor stays too: 2 tensors
    assert grew(before) == (2, 48)
    assert mt.memory().num_variables - before_vars == 1
    mt.dispose([w])
    assert grew(before) == (1, 24)
    assert mt.memory().num_variables - before_vars == 0
    again = mt.variable([1.0], name="mem_w")  # the name is free again; the list is converted and freed
    assert again.name == "mem_w"
    assert grew(before) == (2, 32)


# -- tidy ----------------------------------------------------------------------------


def test_tidy_keeps_only_the_result() -> None:
    x = mt.tensor([1.0, 2.0])
    before = counts()
    y = mt.tidy(lambda: (x * x + 1.0).sum())
    assert grew(before) == (1, 8)
    assert y.item() == 7.0
    assert not y.is_disposed


def test_tidy_with_a_name_and_arguments() -> None:
    x = mt.tensor([1.0, 2.0])
    before = counts()
    y = mt.tidy("double", lambda t, k: t * k, x, 2.0)
    assert y.data_sync() == [2.0, 4.0]
    assert grew(before) == (1, 16)  # the constant 2.0 was made inside and disposed


def test_tidy_keeps_tensors_in_nested_lists_tuples_and_dicts() -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    before = counts()
    result = mt.tidy(lambda: {"a": [x * x, (x + 1.0,)], "b": (x * 3.0).sum(), "note": "text"})
    # kept: x*x (3), x+1 (3), the sum (1); disposed: the constants 1.0 and 3.0 and x*3
    assert grew(before) == (3, 8 * (3 + 3 + 1))
    assert result["a"][0].data_sync() == [1.0, 4.0, 9.0]  # type: ignore[index]  # a dict of mixed values
    assert result["note"] == "text"


@dataclass
class Params:
    w: mt.Tensor
    extra: list[mt.Tensor]


def test_tidy_keeps_tensors_in_dataclasses() -> None:
    x = mt.tensor([1.0, 2.0])
    before = counts()
    p = mt.tidy(lambda: Params(w=x * 2.0, extra=[mt.exp(x * 0.0)]))
    assert grew(before) == (2, 32)
    assert p.w.data_sync() == [2.0, 4.0]
    assert p.extra[0].data_sync() == [1.0, 1.0]


def test_tidy_never_disposes_variables() -> None:
    before_vars = mt.memory().num_variables

    def make() -> None:
        v = mt.variable([1.0, 2.0], name="made_in_tidy")
        made.append(v)

    made: list[mt.Variable] = []
    mt.tidy(make)
    assert not made[0].is_disposed
    assert made[0].data_sync() == [1.0, 2.0]
    assert mt.memory().num_variables - before_vars == 1
    made[0].dispose()


def test_returned_tensor_moves_to_the_outer_scope() -> None:
    x = mt.tensor([1.0, 2.0])
    inner: list[mt.Tensor] = []
    before = counts()

    def outer() -> mt.Tensor:
        y = mt.tidy(lambda: x * 3.0)  # survives the inner scope ...
        inner.append(y)
        return y.sum()

    total = mt.tidy(outer)
    assert total.item() == 9.0
    assert inner[0].is_disposed  # ... but the outer scope disposes it
    assert grew(before) == (1, 8)


def test_keep_survives_every_enclosing_scope() -> None:
    x = mt.tensor([1.0, 2.0])
    kept: list[mt.Tensor] = []
    before = counts()

    def innermost() -> None:
        kept.append(mt.keep(x * 5.0))
        _ = x * 7.0  # disposed

    mt.tidy("outer", lambda: mt.tidy("middle", lambda: mt.tidy("inner", innermost)))
    assert not kept[0].is_disposed
    assert kept[0].data_sync() == [5.0, 10.0]
    assert grew(before) == (1, 16)
    kept[0].dispose()
    assert grew(before) == (0, 0)


def test_keep_of_a_container_and_of_a_disposed_tensor() -> None:
    t = mt.ones((2,))
    pair = mt.keep([t, {"again": t}])
    assert pair[0] is t and t._kept
    gone = mt.ones((1,))
    gone.dispose()
    with pytest.raises(mt.DisposedTensorError, match="Tensor is disposed"):
        mt.keep(gone)


def test_exception_inside_tidy_disposes_everything_and_restores_the_scopes() -> None:
    x = mt.tensor([1.0, 2.0])
    made: list[mt.Tensor] = []
    before = counts()

    def boom() -> mt.Tensor:
        made.append(x * x)
        made.append(mt.keep(x * 4.0))  # kept tensors survive even an exception
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        mt.tidy(boom)
    assert made[0].is_disposed and not made[1].is_disposed
    assert grew(before) == (1, 16)
    assert _runtime.STATE.get().scopes == ()
    made[1].dispose()


def test_exception_in_a_nested_tidy_leaves_the_outer_scope_working() -> None:
    x = mt.tensor([1.0, 2.0])
    before = counts()
    depth: list[int] = []

    def outer() -> mt.Tensor:
        a = x + 1.0
        try:
            mt.tidy("inner", lambda: (x * 9.0, 1 / 0))
        except ZeroDivisionError:
            depth.append(len(_runtime.STATE.get().scopes))
        return a * 2.0

    y = mt.tidy("outer", outer)
    assert depth == [1]  # only "outer" is open again after the inner failure
    assert y.data_sync() == [4.0, 6.0]
    assert grew(before) == (1, 16)


def test_tidy_argument_errors() -> None:
    with pytest.raises(mt.InvalidArgumentError, match="needs a function"):
        mt.tidy(42)  # type: ignore[call-overload]  # deliberately wrong
    with pytest.raises(mt.InvalidArgumentError, match="needs a function after the name"):
        mt.tidy("name_only")  # type: ignore[call-overload]  # deliberately wrong
    assert _runtime.STATE.get().scopes == ()


# -- tidy refuses results it cannot scope --------------------------------------------


def _no_never_awaited_warning(call: object) -> mt.TidyError:
    """Call ``call``, expect a TidyError, and check Python did not warn later."""
    assert callable(call)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(mt.TidyError) as info:
            call()
        gc.collect()
    assert [str(w.message) for w in caught] == []
    assert _runtime.STATE.get().scopes == ()
    return info.value


def test_tidy_refuses_a_coroutine() -> None:
    x = mt.tensor([1.0])
    before = counts()

    async def step() -> mt.Tensor:
        return x * 2.0

    err = _no_never_awaited_warning(lambda: mt.tidy("train", step))
    assert err.kind == "coroutine"  # type: ignore[attr-defined]  # facts are attributes
    text = str(err)
    assert "tidy('train')" in text and "coroutine" in text and "Tensor is disposed" in text
    assert "hint:" in text and "await mt.next_frame()" in text
    assert grew(before) == (0, 0)


def test_tidy_refuses_a_coroutine_made_after_tensors_and_disposes_them() -> None:
    x = mt.tensor([1.0])
    before = counts()

    async def later() -> None:
        return None

    def step() -> Awaitable[None]:
        _ = x * 3.0  # made before the coroutine: disposed by the failing scope
        return later()

    _no_never_awaited_warning(lambda: mt.tidy(step))
    assert grew(before) == (0, 0)


def test_tidy_refuses_generators_async_generators_and_awaitables() -> None:
    def gen() -> Generator[mt.Tensor, None, None]:
        yield mt.ones((1,))

    async def agen() -> AsyncIterator[int]:
        yield 1

    class Pending:
        def __await__(self) -> Iterator[None]:
            yield None

    kinds = [_no_never_awaited_warning(lambda f=f: mt.tidy(f)).kind for f in (gen, agen, Pending)]  # type: ignore[attr-defined]  # facts are attributes
    assert kinds == ["generator", "async_generator", "Pending"]


# -- a training loop: flat inside tidy, growing outside -----------------------------------


_models = itertools.count()


def _linear_model() -> tuple[mt.Variable, mt.Variable, mt.Tensor, mt.Tensor]:
    """The Russian text's linear model: x=[1,2,3,4], y=[1,3,5,7], so w -> 2 and b -> -1."""
    n = next(_models)
    w = mt.variable(0.5, name=f"memory_test_w{n}")
    b = mt.variable(0.0, name=f"memory_test_b{n}")
    return w, b, mt.tensor([1.0, 2.0, 3.0, 4.0]), mt.tensor([1.0, 3.0, 5.0, 7.0])


def test_thousand_steps_inside_tidy_keep_num_tensors_constant() -> None:
    w, b, x, y = _linear_model()
    losses: list[float] = []

    def step() -> None:
        value, grads = mt.variable_grads(lambda: ((x * w + b - y) ** 2).mean())
        w.assign_sub(grads[w] * 0.05)
        b.assign_sub(grads[b] * 0.05)
        losses.append(value.item())

    before = counts()
    for i in range(1000):
        mt.tidy(step)
        if i % 100 == 0:
            assert grew(before) == (0, 0), f"step {i}"
    assert grew(before) == (0, 0)
    assert losses[-1] < 1e-6 < losses[0]  # it did train
    assert w.item() == pytest.approx(2.0, abs=1e-3) and b.item() == pytest.approx(-1.0, abs=1e-3)


def test_the_same_loop_without_tidy_grows_by_five_tensors_a_step() -> None:
    w, b, x, y = _linear_model()

    def step() -> None:
        _, grads = mt.variable_grads(lambda: ((x * w + b - y) ** 2).mean())
        w.assign_sub(grads[w] * 0.02)  # the product stays alive (the 0.02 went with the op)
        b.assign_sub(grads[b] * 0.02)

    before = counts()
    for i in range(1, 51):
        step()
        # the loss value, 2 gradients and 2 products: 5 scalars of 8 bytes
        assert grew(before) == (5 * i, 40 * i)


# -- tapes and tidy together ----------------------------------------------------------------


def test_a_tape_outlives_the_tidy_scope_of_its_forward_pass() -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    before = counts()
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.tidy(lambda: (mt.exp(x) * x).sum())
    # exp(x) and the product were disposed by tidy but the tape still holds them
    info = mt.memory()
    assert grew(before) == (3, 8 * (3 + 3 + 1))
    assert (info.num_tensors_held_by_tapes, info.num_bytes_held_by_tapes) == (4, 8 * (3 + 3 + 3 + 1))
    g = tape.gradient(y, x)
    assert g is not None
    assert g.data_sync() == pytest.approx([2.718281828459045 * 2, 7.38905609893065 * 3, 20.085536923187668 * 4])
    # a non-persistent tape lets go after gradient(): only y and the gradient stay
    assert grew(before) == (2, 32)
    assert mt.memory().num_tensors_held_by_tapes == 0


def test_reading_a_tensor_that_only_a_tape_keeps_is_an_error() -> None:
    x = mt.scalar(2.0)
    inner: list[mt.Tensor] = []
    with mt.GradientTape() as tape:
        tape.watch(x)

        def f() -> mt.Tensor:
            inner.append(x * x)
            return inner[0] + 1.0

        y = mt.tidy("forward", f)
    with pytest.raises(mt.DisposedTensorError, match="Tensor is disposed"):
        inner[0].data_sync()
    g = tape.gradient(y, x)  # the backward pass may still read it
    assert g is not None and g.item() == 4.0


def test_a_persistent_tape_holds_its_tensors_until_released() -> None:
    x = mt.tensor([1.0, 2.0])
    before = counts()
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mt.tidy(lambda: (x * x).sum())
    assert grew(before) == (2, 24)  # y and the pending x*x
    assert mt.memory().num_tensors_held_by_tapes == 3  # x, x*x, y
    g1, g2 = tape.gradient(y, x), tape.gradient(y, x)
    assert g1 is not None and g2 is not None and g1 is not g2
    assert grew(before) == (4, 24 + 32)
    assert mt.memory().num_tensors_held_by_tapes == 3
    tape.release()
    assert mt.memory().num_tensors_held_by_tapes == 0
    assert grew(before) == (3, 8 + 32)  # x*x is freed: y and the two gradients remain


def test_a_forgotten_persistent_tape_shows_up_in_memory() -> None:
    x = mt.ones((10,))
    before_held = mt.memory().num_bytes_held_by_tapes
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mt.tidy(lambda: mt.exp(x).sum())
    assert mt.memory().num_bytes_held_by_tapes - before_held == 8 * (10 + 10 + 1)
    del tape  # dropping the tape releases it, too
    gc.collect()
    assert mt.memory().num_bytes_held_by_tapes == before_held
    y.dispose()


def test_grad_grads_and_variable_grads_dispose_their_intermediates() -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    z = mt.tensor([0.5, 0.5, 0.5])
    before = counts()
    g = mt.grad(lambda t: (mt.exp(t) * t + t * 2.0).sum())(x)
    assert grew(before) == (1, 24)  # only the gradient
    gs = mt.grads(lambda a, c: (a * c * 3.0).sum())([x, z])
    assert len(gs) == 2 and grew(before) == (3, 72)
    value, dx = mt.value_and_grad(lambda t: (t * t).sum())(x)
    assert grew(before) == (5, 72 + 8 + 24)
    w = mt.variable(mt.tensor([1.0, -1.0]), name="vg_w")
    before = counts()  # the variable and its initial tensor are not part of what variable_grads makes
    result = mt.variable_grads(lambda: (w * w * 4.0).sum())
    assert grew(before) == (2, 8 + 16)  # the loss and one gradient
    assert result.grads[w].data_sync() == [8.0, -8.0]
    assert mt.memory().num_tensors_held_by_tapes == 0
    assert g.data_sync() == pytest.approx([2.718281828459045 * 2 + 2.0, 7.38905609893065 * 3 + 2.0, 20.085536923187668 * 4 + 2.0])
    assert value.item() == 14.0 and dx.data_sync() == [2.0, 4.0, 6.0]


def test_minimize_disposes_everything_but_the_cost_it_returns() -> None:
    w, b, x, y = _linear_model()
    for opt in (mt.train.sgd(0.05), mt.train.adam(0.05)):
        opt.minimize(lambda: ((x * w + b - y) ** 2).mean())  # the first step makes the optimizer's slots
        before = counts()
        for _ in range(20):
            assert opt.minimize(lambda: ((x * w + b - y) ** 2).mean()) is None
        assert grew(before) == (0, 0)  # no tidy needed: minimize disposes its intermediates, as in TF.js
        cost = opt.minimize(lambda: ((x * w + b - y) ** 2).mean(), return_cost=True)
        assert grew(before) == (1, 8)
        cost.dispose()
        opt.dispose()


def test_a_gradient_is_never_the_callers_dy() -> None:
    x, dy = mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0])
    g = mt.grad(lambda t: t + 1.0)(x, dy)
    g.dispose()
    assert not dy.is_disposed


def test_a_failed_grad_leaves_nothing_behind() -> None:
    x = mt.tensor([1.0])
    before = counts()
    with pytest.raises(mt.GradientError, match="Cannot compute gradient of y=f"):
        mt.grad(lambda t: mt.ones((1,)) * 2.0)(x)
    assert grew(before) == (0, 0)
    assert _runtime.STATE.get().scopes == () and _runtime.STATE.get().tapes == ()


# -- the disposed-tensor error ----------------------------------------------------------


def test_disposed_tensor_error_names_op_shape_scope_and_hint() -> None:
    x = mt.tensor([1.0, 2.0])
    escaped: list[mt.Tensor] = []

    def step() -> None:
        escaped.append(mt.exp(x) * 3.0)

    mt.tidy("train_step", step)
    with pytest.raises(mt.DisposedTensorError) as info:
        escaped[0] + 1.0
    err = info.value
    text = str(err)
    assert text.startswith("Tensor is disposed")
    assert f"Tensor#{escaped[0].id}" in text and "(2,)" in text and "'mul'" in text
    assert "tidy scope 'train_step'" in text
    assert "hint: return it from the function given to tidy, or mt.keep() it" in text
    assert (err.op, err.shape, err.tensor_id) == ("mul", (2,), escaped[0].id)
    assert "train_step" in err.disposed_by


def test_every_way_of_reading_a_disposed_tensor_raises() -> None:
    t = mt.tensor([[1.0, 2.0]])
    t.dispose()
    for read in (t.data_sync, t.tolist, t.item, lambda: t.sum(), lambda: mt.exp(t), lambda: t.clone(), lambda: mt.keep(t)):
        with pytest.raises(mt.DisposedTensorError, match=r"Tensor is disposed.*shape \(1, 2\).*'tensor'.*dispose\(\)"):
            read()
    assert repr(t) == f"Tensor(<disposed>, shape=(1, 2), id={t.id})"


# -- profile ------------------------------------------------------------------------------


def test_profile_figures() -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    start = mt.memory().num_bytes
    info = mt.profile(lambda: mt.tidy(lambda: (x * x + 1.0).sum()))
    assert (info.new_tensors, info.new_bytes) == (1, 8)
    assert info.peak_bytes == start + 24 + 8 + 24  # x*x, the constant 1.0 and x*x+1.0 while add ran
    assert info.kernel_names == ["mul", "add", "sum"]
    assert [k.input_shapes for k in info.kernels] == [((3,), (3,)), ((3,), ()), ((3,),)]
    assert [k.output_shapes for k in info.kernels] == [((3,),), ((3,),), ((),)]
    # add also made the constant 1.0, freed when add returned (before sum added its 8 bytes)
    assert [k.bytes_added for k in info.kernels] == [24, 32, 0]
    assert [k.tensors_added for k in info.kernels] == [1, 2, 0]
    assert [k.total_bytes for k in info.kernels] == [start + 24, start + 56, start + 56]
    assert all(k.time_ms >= 0.0 for k in info.kernels)
    assert isinstance(info.result, mt.Tensor) and info.result.item() == 17.0
    text = str(info)
    assert text.splitlines()[0] == f"new_tensors=1 new_bytes=8 peak_bytes={start + 56}"
    assert "mul" in text and "(3,), ()" in text


def test_profile_without_tidy_shows_the_leak_and_restores_state_on_error() -> None:
    x = mt.tensor([1.0, 2.0])
    info = mt.profile(lambda: mt.exp(x).sum())
    assert (info.new_tensors, info.new_bytes) == (2, 24)
    with pytest.raises(ZeroDivisionError):
        mt.profile(lambda: 1 / 0)
    assert _runtime.STATE.get().observers == ()
    with pytest.raises(mt.InvalidArgumentError, match="profile\\(\\) needs a function"):
        mt.profile(3)  # type: ignore[arg-type]  # deliberately wrong


def test_profile_of_a_gradient_shows_the_backward_kernels() -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    start = mt.memory().num_bytes
    info = mt.profile(lambda: mt.grad(lambda t: (t * t).sum())(x))
    assert (info.new_tensors, info.new_bytes) == (1, 24)  # grad disposed everything but the gradient
    assert info.kernel_names[:2] == ["mul", "sum"]  # the forward pass ...
    assert len(info.kernel_names) > 2 and "mul" in info.kernel_names[2:]  # ... then the VJPs' ops
    assert info.peak_bytes == max(k.total_bytes for k in info.kernels) > start + 24
    assert isinstance(info.result, mt.Tensor) and info.result.data_sync() == [2.0, 4.0, 6.0]


# -- leak_check ---------------------------------------------------------------------------


def test_leak_check_names_the_op_and_the_line() -> None:
    x = mt.tensor([1.0, 2.0])
    with mt.leak_check(on_leak="ignore") as report:
        first = here() + 1
        a = mt.exp(x)
        for _ in range(3):
            b = x * x  # three leaks on one line
        second = here() - 1
        kept = mt.tidy(lambda: x + 1.0)  # returned by tidy and never disposed: a leak
        third = here() - 1
        fine = mt.tidy(lambda: x - 1.0)
        fine.dispose()
    assert report.count == 5 and report.num_bytes == 5 * 16
    by_op = {g.op: g for g in report.groups}
    assert set(by_op) == {"exp", "mul", "add"}
    assert by_op["mul"].count == 3 and by_op["mul"].where == f"{__file__}:{second}"
    assert by_op["exp"].where == f"{__file__}:{first}"
    assert by_op["add"].where == f"{__file__}:{third}"
    assert report.groups[0].op == "mul"  # the biggest group first
    assert by_op["mul"].shapes == ((2,), (2,), (2,))
    del a, b, kept


def test_leak_check_reports_the_line_inside_a_nested_function() -> None:
    x = mt.tensor([1.0])

    def helper() -> mt.Tensor:
        return mt.exp(x)  # the leak is here, not at the call site

    line = here() - 2
    with mt.leak_check(on_leak="ignore") as report:
        leaked = helper()
    assert [(g.op, g.where, g.count) for g in report.groups] == [("exp", f"{__file__}:{line}", 1)]
    leaked.dispose()


def test_leak_check_print_raise_and_warn(capsys: pytest.CaptureFixture[str]) -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    with mt.leak_check():
        line = here() + 1
        leaked = x * x
    out = capsys.readouterr().out
    assert out.startswith("leak_check: 1 tensor(s), 24 bytes still alive:")
    assert f"1 x mul          at {__file__}:{line}  shapes (3,)" in out
    assert "hint: wrap the work in mt.tidy(...)" in out

    with pytest.raises(mt.LeakError) as info:
        with mt.leak_check(on_leak="raise"):
            line = here() + 1
            leaked = x + x
    assert info.value.count == 1
    assert info.value.groups[0].where == f"{__file__}:{line}"  # type: ignore[attr-defined]  # facts are attributes
    assert "add" in str(info.value)

    with pytest.warns(ResourceWarning, match="leak_check: 1 tensor"):
        with mt.leak_check(on_leak="warn"):
            leaked = x - x
    assert _runtime.STATE.get().observers == ()
    del leaked


def test_leak_check_is_quiet_when_nothing_leaks(capsys: pytest.CaptureFixture[str]) -> None:
    x = mt.tensor([1.0])
    w = mt.variable([2.0], name="leak_w")
    with mt.leak_check(on_leak="raise") as report:
        mt.tidy(lambda: w.assign(w * x + 1.0))  # variables and disposed tensors are not leaks
        kept = mt.keep(mt.ones((1,)))  # kept on purpose: not a leak
    assert not report and report.count == 0 and str(report) == "leak_check: no leaks"
    assert capsys.readouterr().out == ""
    assert w.data_sync() == [3.0]
    kept.dispose()


def test_leak_check_reports_what_a_forgotten_persistent_tape_holds() -> None:
    x = mt.tensor([1.0, 2.0])
    with mt.leak_check(on_leak="ignore") as report:
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            line = here() + 1
            y = mt.tidy(lambda: mt.exp(x).sum())  # tidy disposes exp(x), the tape still holds it
        _ = tape.gradient(y, x)
        mt.dispose([y, _])
    # exp(x) disposed by tidy, y disposed by us: the tape still holds both
    assert sorted((g.op, g.where, g.count, g.num_bytes, g.held) for g in report.groups) == [
        ("exp", f"{__file__}:{line}", 1, 16, True),
        ("sum", f"{__file__}:{line}", 1, 8, True),
    ]
    text = str(report)
    assert "(disposed, but a tape holds it)" in text and "tape.release()" in text
    tape.release()
    with mt.leak_check(on_leak="raise"):  # released inside the block: nothing is left
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = mt.tidy(lambda: mt.exp(x).sum())
        mt.dispose([tape.gradient(y, x), y])
        tape.release()


def test_keep_refuses_a_disposed_tensor_a_tape_still_holds_and_changes_nothing() -> None:
    x = mt.scalar(2.0)
    inner: list[mt.Tensor] = []
    def f() -> mt.Tensor:
        inner.append(x * x)
        return inner[0] + 1.0

    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.tidy(f)
    fresh = mt.ones((1,))
    with pytest.raises(mt.DisposedTensorError, match="Tensor is disposed"):
        mt.keep([fresh, inner[0]])
    assert not fresh._kept  # validated before anything was marked
    g = tape.gradient(y, x)
    assert g is not None and g.item() == 4.0


def test_leak_check_rejects_unknown_modes() -> None:
    with pytest.raises(mt.InvalidArgumentError, match='"print", "warn", "raise" or "ignore"'):
        with mt.leak_check(on_leak="shout"):  # type: ignore[arg-type]  # the mistake under test
            pass


# -- threads and asyncio tasks never see each other's scopes or tapes -----------------------------


def _train(tag: str, steps: int, barrier: threading.Barrier | None, seen: list[object]) -> list[float]:
    """A tiny model trained with a tape inside tidy; records what the thread sees of the state."""
    w = mt.variable([0.1, -0.2], name=f"thread_w_{tag}")
    b = mt.variable(0.0, name=f"thread_b_{tag}")
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = mt.tensor([1.0, 2.0, 3.0])
    losses: list[float] = []

    def step(i: int) -> None:
        with mt.GradientTape() as tape:
            loss = (((x @ w) + b - y) ** 2).mean()
            if i == 0 and barrier is not None:
                barrier.wait()  # every thread is inside its tidy scope and tape now
                st = _runtime.STATE.get()
                seen.append(([s.name for s in st.scopes], st.tapes == (tape,)))
                barrier.wait()
        dw, db = tape.gradient(loss, [w, b])
        assert dw is not None and db is not None
        w.assign_sub(dw * 0.01)
        b.assign_sub(db * 0.01)
        losses.append(loss.item())

    for i in range(steps):
        mt.tidy(f"step_{tag}", step, i)
    mt.dispose([w, b, x, y])
    return losses


def test_threads_training_at_once_match_sequential_runs() -> None:
    n, steps = 4, 40
    expected = [_train(f"seq{i}", steps, None, []) for i in range(n)]
    barrier = threading.Barrier(n, timeout=10)
    results: dict[int, list[float]] = {}
    seen: list[object] = []
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            results[i] = _train(f"par{i}", steps, barrier, seen)
        except BaseException as err:  # noqa: BLE001 - report it in the main thread
            errors.append(err)
            barrier.abort()

    before = counts()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    assert [results[i] for i in range(n)] == expected
    # each thread saw exactly its own tidy scope and its own tape, never another thread's
    assert sorted(str(s) for s in seen) == sorted(str(([f"step_par{i}"], True)) for i in range(n))
    assert grew(before) == (0, 0)
    assert _runtime.STATE.get().scopes == () and _runtime.STATE.get().tapes == ()


def test_memory_while_another_thread_makes_variables() -> None:
    stop = threading.Event()
    errors: list[BaseException] = []

    def maker() -> None:
        alive: list[mt.Variable] = []
        while not stop.is_set():
            alive.append(mt.variable([1.0]))
            if len(alive) > 50:
                alive.clear()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=maker)
    thread.start()
    try:
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            try:
                mt.memory()
            except RuntimeError as err:  # "dictionary changed size during iteration"
                errors.append(err)
                break
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old)
    assert errors == []


def test_asyncio_tasks_interleaving_keep_their_own_tapes_and_scopes() -> None:
    async def task(tag: str, scale: float, log: list[str]) -> tuple[float, list[str]]:
        x = mt.scalar(scale)
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.tidy(f"first_{tag}", lambda: x * x)
            await asyncio.sleep(0)  # the other task runs here, with its own tape open
            assert _runtime.STATE.get().tapes == (tape,)
            assert _runtime.STATE.get().scopes == ()
            log.append(tag)
            z = mt.tidy(f"second_{tag}", lambda: mt.sin(y) + y)
            await asyncio.sleep(0)
        recorded = [op.name for op in tape.operations]  # only this task's ops
        g = tape.gradient(z, x)
        assert g is not None
        return g.item(), recorded

    async def main() -> tuple[tuple[float, list[str]], tuple[float, list[str]], list[str]]:
        log: list[str] = []
        a, b = await asyncio.gather(task("a", 2.0, log), task("b", 3.0, log))
        return a, b, log

    before = counts()
    (ga, ops_a), (gb, ops_b), log = asyncio.run(main())
    import math

    assert ga == pytest.approx((math.cos(4.0) + 1.0) * 4.0)
    assert gb == pytest.approx((math.cos(9.0) + 1.0) * 6.0)
    assert ops_a == ops_b == ["mul", "sin", "add"]
    assert log == ["a", "b"]  # the tasks really interleaved
    # per task: x, y, z, the gradient
    assert grew(before) == (8, 64)
