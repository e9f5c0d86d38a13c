"""``mt.function``: trace once, replay bit for bit.

Every replayed step is compared with the same step run eagerly inside ``tidy``
on a twin set of variables: the results, the variables and the optimizer slots
must be equal as lists of floats (bit for bit), and ``mt.memory()`` must show
the same counts. Then what the trace cannot see: a new shape, a value read,
randomness, observers, and the listing of ``step.program``.
"""

from __future__ import annotations

import gc
import random
from collections.abc import Callable

import pytest

import microtape as mt
from microtape.train import Optimizer

from .._fixtures import free_variables_made_by_the_test  # noqa: F401 - autouse in this module

OPTIMIZERS: dict[str, Callable[[], Optimizer]] = {
    "sgd": lambda: mt.train.sgd(0.1),
    "momentum": lambda: mt.train.momentum(0.05, 0.9),
    "nesterov": lambda: mt.train.momentum(0.05, 0.9, use_nesterov=True),
    "adagrad": lambda: mt.train.adagrad(0.1),
    "adadelta": lambda: mt.train.adadelta(1.0),
    "adam": lambda: mt.train.adam(0.05),
    "adamax": lambda: mt.train.adamax(0.05),
    "rmsprop": lambda: mt.train.rmsprop(0.05),
    "rmsprop_centered": lambda: mt.train.rmsprop(0.05, momentum=0.5, centered=True),
}


def mlp(tag: str) -> list[mt.Variable]:
    rng = random.Random(3)
    return [
        mt.variable(mt.tensor([[rng.gauss(0, 0.5) for _ in range(4)] for _ in range(2)]), name=f"{tag}_w1"),
        mt.variable(mt.zeros((4,)), name=f"{tag}_b1"),
        mt.variable(mt.tensor([[rng.gauss(0, 0.5)] for _ in range(4)]), name=f"{tag}_w2"),
    ]


def mlp_loss(params: list[mt.Variable], x: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
    w1, b1, w2 = params
    h = mt.tanh(x @ w1 + b1).relu()
    return ((h @ w2).reshape((-1,)) - y).square().mean() + 1e-3 * (w1 * w1).sum()


def batch(seed: int) -> tuple[mt.Tensor, mt.Tensor]:
    rng = random.Random(seed)
    x = mt.tensor([[rng.uniform(-1, 1), rng.uniform(-1, 1)] for _ in range(6)])
    y = mt.tensor([rng.uniform(-1, 1) for _ in range(6)])
    return x, y


def values(vs: list[mt.Variable]) -> list[list[float]]:
    return [v.data_sync() for v in vs]


def slot_values(opt: Optimizer) -> list[list[float]]:
    return [v.data_sync() for _, s in sorted(opt.slots.items()) for _, v in sorted(s.items())]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_replay_equals_eager_for_every_optimizer(name: str) -> None:
    eager_p, traced_p = mlp(f"e_{name}"), mlp(f"t_{name}")
    eager_opt, traced_opt = OPTIMIZERS[name](), OPTIMIZERS[name]()

    def eager_step(x: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
        return eager_opt.minimize(lambda: mlp_loss(eager_p, x, y), return_cost=True)

    @mt.function
    def step(x: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
        loss, grads = mt.variable_grads(lambda: mlp_loss(traced_p, x, y))
        traced_opt.apply_gradients(grads)
        return loss

    for i in range(5):
        x, y = batch(i)
        a = mt.tidy(lambda: eager_step(x, y))
        before = mt.memory().num_tensors
        b = step(x, y)
        if i:  # (the first step makes the optimizer's slot variables, eager or traced)
            assert mt.memory().num_tensors == before + 1  # only the loss survives
        assert a.data_sync() == b.data_sync()
        assert values(eager_p) == values(traced_p)
        assert slot_values(eager_opt) == slot_values(traced_opt)
        assert eager_opt.iterations == traced_opt.iterations == i + 1
        mt.dispose([a, b, x, y])
    assert step.traces == 1


def test_memory_after_a_replay_is_that_of_the_step_inside_tidy() -> None:
    w = mt.variable(mt.tensor([1.0, -2.0]), name="w_mem")

    def body(x: mt.Tensor) -> tuple[mt.Tensor, mt.Tensor]:
        with mt.GradientTape() as tape:
            loss = (w * x).square().sum()
        (g,) = tape.gradient(loss, [w])
        assert g is not None
        w.assign_sub(g * 0.01)
        return loss, g

    step = mt.function(body)
    x = mt.tensor([0.5, 0.25])
    _ = step(x)  # the trace
    mt.dispose(list(_))
    start = mt.memory()
    eager = mt.tidy(lambda: body(x))
    after_eager = mt.memory()
    mt.dispose(list(eager))
    replayed = step(x)
    after_replay = mt.memory()
    assert after_replay.num_tensors == after_eager.num_tensors == start.num_tensors + 2
    assert after_replay.num_bytes == after_eager.num_bytes
    assert [t.shape for t in replayed] == [(), (2,)]


def test_chapter_2_loop_is_replayed_exactly() -> None:
    def run(traced: bool) -> tuple[list[float], float, float]:
        w = mt.variable(mt.scalar(0.5), name=f"w_ch2_{traced}")
        b = mt.variable(mt.scalar(0.0), name=f"b_ch2_{traced}")

        def loss_fn() -> mt.Tensor:
            def body() -> mt.Tensor:
                x, y = mt.tensor1d([1, 2, 3, 4]), mt.tensor1d([1, 3, 5, 7])
                return x.mul(w).add(b).sub(y).square().mean()

            return mt.tidy(body)

        def train_step() -> mt.Tensor:
            value, grads = mt.variable_grads(loss_fn)
            for v in (w, b):
                v.assign_sub(grads[v] * 0.1)
            return value

        step: Callable[[], mt.Tensor] = mt.function(train_step) if traced else (lambda: mt.tidy(train_step))
        losses = []
        for _ in range(50):
            loss = step()
            losses.append(loss.item())
            loss.dispose()
        return losses, w.item(), b.item()

    assert run(True) == run(False)


def test_chapter_3_tape_and_assign_step_is_replayed_exactly() -> None:
    def run(traced: bool) -> list[float]:
        x = mt.variable(mt.scalar(2.0), name=f"x_ch3_{traced}")
        y = mt.variable(mt.scalar(3.0), name=f"y_ch3_{traced}")

        def sgd_step() -> None:
            with mt.GradientTape() as tape:
                f = x.square() + y.square()
            dx, dy = tape.gradient(f, [x, y])
            assert dx is not None and dy is not None
            x.assign(x - dx * 0.1)
            y.assign(y - dy * 0.1)

        step: Callable[[], None] = mt.function(sgd_step) if traced else (lambda: mt.tidy(sgd_step))
        out = []
        for _ in range(20):
            step()
            out += [x.item(), y.item()]
        return out

    assert run(True) == run(False)


def test_chapter_6_fit_and_rnn_loops_are_replayed_exactly() -> None:
    x, y = mt.tensor1d([1, 2, 3, 4]), mt.tensor1d([1, 3, 5, 7])

    def fit(traced: bool) -> list[float]:
        w, b = mt.variable(mt.scalar(0.0)), mt.variable(mt.scalar(0.0))
        opt = mt.train.adam(0.1)

        def step() -> mt.Tensor:
            return opt.minimize(lambda: ((x * w + b - y) ** 2).mean() * 1.0, return_cost=True)

        run: Callable[[], mt.Tensor] = mt.function(step) if traced else step
        losses = []
        for _ in range(30):
            cost = run()
            losses.append(cost.item())
            cost.dispose()
        return losses + [w.item(), b.item()]

    assert fit(True) == fit(False)

    inputs = [mt.tensor([[0.1 * i - 0.3 * j] for j in range(3)]) for i in range(5)]

    def rnn(traced: bool) -> list[float]:
        params = [
            mt.variable(mt.random_normal((4, 4), seed=2), name=f"rw_{traced}"),
            mt.variable(mt.random_normal((1, 4), seed=3), name=f"ru_{traced}"),
            mt.variable(mt.random_normal((4, 1), seed=4), name=f"rv_{traced}"),
        ]
        opt = mt.train.sgd(0.3)

        def loss() -> mt.Tensor:
            w, u, v = params
            h = mt.zeros((3, 4))
            for x_t in inputs:
                h = mt.tanh(h @ w + x_t @ u)
            return ((h @ v - inputs[0]) ** 2).mean()

        def step() -> tuple[mt.Tensor, list[mt.Tensor | None]]:
            value, grads = mt.variable_grads(loss)
            opt.apply_gradients(grads)
            return value, [grads[p] for p in params]

        run: Callable[[], tuple[mt.Tensor, list[mt.Tensor | None]]] = mt.function(step) if traced else (lambda: mt.tidy(step))
        out: list[float] = []
        for _ in range(10):
            value, gs = run()
            out.append(value.item())
            out += [v for g in gs if g is not None for v in g.data_sync()]
        return out + [v for p in params for v in p.data_sync()]

    assert rnn(True) == rnn(False)


def test_a_new_shape_or_python_value_traces_again() -> None:
    @mt.function
    def scaled(x: mt.Tensor, k: float) -> mt.Tensor:
        return (x * k).sum()

    assert scaled(mt.tensor([1.0, 2.0]), 2.0).item() == 6.0
    assert scaled(mt.tensor([3.0, 4.0]), 2.0).item() == 14.0
    assert scaled.traces == 1
    assert scaled(mt.tensor([1.0, 2.0, 3.0]), 2.0).item() == 12.0
    assert scaled(mt.tensor([1.0, 2.0]), 3.0).item() == 9.0
    assert scaled.traces == 3
    assert scaled(mt.tensor([1.0, 1.0, 1.0]), 2.0).item() == 6.0
    assert scaled.traces == 3


def test_a_method_can_be_traced_per_instance() -> None:
    class Model:
        def __init__(self, tag: str, scale: float) -> None:
            self.w = mt.variable(mt.tensor([scale, scale]), name=f"w_method_{tag}")

        @mt.function
        def predict(self, x: mt.Tensor) -> mt.Tensor:
            return (self.w * x).sum()

    a, b = Model("a", 1.0), Model("b", 2.0)
    x = mt.tensor([1.0, 2.0])
    assert a.predict(x).item() == 3.0
    assert b.predict(x).item() == 6.0
    assert a.predict(x).item() == 3.0
    assert Model.predict.traces == 2


def test_the_same_tensor_passed_twice_is_its_own_signature() -> None:
    @mt.function
    def f(a: mt.Tensor, b: mt.Tensor) -> mt.Tensor:
        return a * 10.0 + b

    x, y = mt.tensor([1.0]), mt.tensor([2.0])
    assert f(x, x).item() == 11.0
    assert f(x, y).item() == 12.0
    assert f(y, y).item() == 22.0
    assert f.traces == 2


def test_reading_a_computed_value_while_tracing_is_refused_and_changes_nothing() -> None:
    w = mt.variable(mt.scalar(1.0), name="w_branch")

    @mt.function
    def step(x: mt.Tensor) -> mt.Tensor:
        w.assign_add(x)
        loss = (w * x).square()
        if loss.item() > 1.0:
            return loss * 0.5
        return loss

    start = mt.memory().num_tensors
    with pytest.raises(mt.UnsupportedOperationError, match=r"read the values of Tensor#\d+.*while tracing") as err:
        step(mt.scalar(2.0))
    assert "mt.where" in str(err.value)
    assert w.item() == 1.0  # the assign done before the read was undone
    assert mt.memory().num_tensors == start + 1  # only the argument
    assert step.traces == 0


def test_random_tensors_inside_are_refused() -> None:
    @mt.function
    def noisy(x: mt.Tensor) -> mt.Tensor:
        return x + mt.random_normal(x.shape)

    with pytest.raises(mt.UnsupportedOperationError, match="random_normal") as err:
        noisy(mt.tensor([1.0, 2.0]))
    assert "pass it in" in str(err.value)


def test_observers_make_the_call_eager_so_they_see_every_op() -> None:
    @mt.function
    def f(x: mt.Tensor) -> mt.Tensor:
        return (x * x).sum()

    x = mt.tensor([1.0, 2.0])
    f(x)  # traced
    info = mt.profile(lambda: f(x))
    assert info.kernel_names == ["mul", "sum"] and info.new_tensors == 1
    with pytest.raises(mt.AnomalyError):
        with mt.detect_anomaly():
            f(mt.tensor([1e200, 1.0]))  # x * x overflows: seen because the call runs eagerly


def test_program_lists_one_primitive_a_line() -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w_prog")

    @mt.function
    def step(x: mt.Tensor) -> mt.Tensor:
        loss = (w * x).sum()
        w.assign(w * 0.5)
        return loss

    with pytest.raises(mt.UnsupportedOperationError, match="before the first call"):
        step.program
    step(mt.tensor([3.0, 4.0]))
    lines = [line.split("  #")[0] for line in str(step.program).splitlines()]
    assert lines == [
        "program step(%0: (2,)):",
        "  %1 = read w_prog",
        "  %2 = mul %1 %0",
        "  %3 = sum %2 axis=None keepdims=False",
        "  %4 = const 0.5",
        "  %5 = mul %1 %4",
        "  assign w_prog %5",
        "  return %3",
    ]
    assert "# (2,) line " in str(step.program).splitlines()[2]
    assert step(mt.tensor([1.0, 1.0])).item() == 1.5
    assert w.data_sync() == [0.25, 0.5]


def test_a_replay_leaves_nothing_for_the_cyclic_collector() -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w_gc")
    opt = mt.train.sgd(0.1)

    @mt.function
    def step(x: mt.Tensor) -> mt.Tensor:
        return opt.minimize(lambda: (w * x).square().sum(), return_cost=True)

    x = mt.tensor([1.0, 1.0])
    step(x).dispose()
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            step(x).dispose()
        assert gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.parametrize("kind", ["minimize", "tape", "variable_grads"])
def test_an_eager_step_leaves_nothing_for_the_cyclic_collector(kind: str) -> None:
    # an op's result and its record form no reference cycle, so the collector finds nothing
    w = mt.variable(mt.tensor([1.0, 2.0]), name=f"w_cyc_{kind}")
    b = mt.variable(mt.scalar(0.5), name=f"b_cyc_{kind}")
    opt = mt.train.adam(0.1)
    x = mt.tensor([1.0, -1.0])

    def loss() -> mt.Tensor:
        return ((w * x + b) ** 2).mean()

    def step() -> mt.Tensor:
        if kind == "minimize":
            return opt.minimize(loss, return_cost=True)
        if kind == "tape":
            with mt.GradientTape() as tape:
                value = loss()
            dw, db = tape.gradient(value, [w, b])
            assert dw is not None and db is not None
            w.assign_sub(dw * 0.1)
            b.assign_sub(db * 0.1)
            return value
        value, grads = mt.variable_grads(loss)
        opt.apply_gradients(grads)
        return value

    mt.tidy(step).dispose()  # the first step makes the optimizer's slots
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            mt.tidy(step).dispose()
        assert gc.collect() == 0
    finally:
        gc.enable()


@pytest.mark.parametrize("values", [
    [1e308, -1e308, 0.0, -0.0],
    [float("inf"), float("-inf"), float("nan"), 1.0],
    [],
])
def test_extreme_values_replay_exactly_as_eager(values: list[float]) -> None:
    def body(x: mt.Tensor, s: mt.Tensor) -> tuple[mt.Tensor, mt.Tensor]:
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = (x * x + x.exp() / x - x.abs().sqrt() + (s * s).tanh()).log()
            z = y.sum()
        (g,) = tape.gradient(z, [x])
        assert g is not None
        return z, g

    step = mt.function(body)
    x, s = mt.tensor(values, shape=(len(values),)), mt.scalar(1e300)
    step(x, s)  # the trace
    eager = mt.tidy(lambda: body(x, s))
    replayed = step(x, s)
    assert [repr(v) for t in eager for v in t.data_sync()] == [repr(v) for t in replayed for v in t.data_sync()]
