"""Optimizers (``mt.train``) and ``mt.next_frame``.

The seven update rules, slots and their names, flat memory across steps, steps that fail (or are
interrupted) and change nothing, hyperparameters, and state saved with ``get_weights`` and restored
with ``set_weights``. The expected numbers come from two independent places: the TF.js optimizer
tests (float32 results of TF.js itself, checked to 1e-6 where TF.js is
exact) and the update formulas written out again here, one scalar at a
time, for several steps.
"""

from __future__ import annotations

import asyncio
import gc
import math
import re
from collections.abc import Callable

import pytest

import microtape as mt
from microtape.train import slots as state_module
from microtape.train import Optimizer

from .._fixtures import free_variables_made_by_the_test  # noqa: F401 - autouse in this module

Loss = Callable[[], mt.Tensor]
Factory = Callable[[], Optimizer]

FACTORIES: dict[str, Factory] = {
    "sgd": lambda: mt.train.sgd(0.1),
    "momentum": lambda: mt.train.momentum(0.1, 0.9),
    "nesterov": lambda: mt.train.momentum(0.1, 0.9, use_nesterov=True),
    "adagrad": lambda: mt.train.adagrad(0.1),
    "adadelta": lambda: mt.train.adadelta(0.1),
    "adam": lambda: mt.train.adam(0.1),
    "adamax": lambda: mt.train.adamax(0.1, decay=0.01),
    "rmsprop": lambda: mt.train.rmsprop(0.1, momentum=0.5),
    "rmsprop_centered": lambda: mt.train.rmsprop(0.1, momentum=0.5, centered=True),
}

SLOTS_PER_VARIABLE = {
    "sgd": 0,
    "momentum": 1,
    "nesterov": 1,
    "adagrad": 1,
    "adadelta": 2,
    "adam": 2,
    "adamax": 2,
    "rmsprop": 2,
    "rmsprop_centered": 3,
}




def close(actual: list[float], expected: list[float], tol: float = 1e-6) -> bool:
    return len(actual) == len(expected) and all(abs(a - e) <= tol for a, e in zip(actual, expected))


def squares(x: mt.Variable) -> Loss:
    """f(x) = sum(x^2), whose gradient is 2x: the loss of the TF.js optimizer tests."""
    return lambda: (x * x).sum()


def steps(opt: Optimizer, x0: list[float], n: int) -> list[list[float]]:
    """Minimize sum(x^2) from x0 for n steps; return x after each step."""
    x = mt.variable(mt.tensor(x0))
    out = []
    for _ in range(n):
        opt.minimize(squares(x))
        out.append(x.data_sync())
    opt.dispose()
    x.dispose()
    return out


# ── values from TF.js's own optimizer tests ───────────────────────────────────


@pytest.mark.parametrize(
    ("make", "x0", "expected"),
    [
        (lambda: mt.train.sgd(0.1), [4.0], [[3.2], [2.56]]),
        (lambda: mt.train.momentum(0.1, 0.5), [1.0, 2.0], [[0.8, 1.6], [0.54, 1.08]]),
        (lambda: mt.train.momentum(0.1, 0.5, use_nesterov=True), [1.0, 2.0], [[0.7, 1.4], [0.44, 0.88]]),
        (lambda: mt.train.adagrad(0.1, 0.1), [1.0, 2.0], [[0.9012270405, 1.9003110428]]),
        (lambda: mt.train.adadelta(0.1, 0.95), [1.0, 2.0], [[0.8, 1.6], [0.64, 1.28]]),
        (lambda: mt.train.adam(0.1, 0.8, 0.9), [2.0, 4.0], [[1.9, 3.9]]),
        (lambda: mt.train.adamax(0.1, 0.8, 0.9, None, 0.1), [2.0, 4.0], [[1.9, 3.9]]),
        (lambda: mt.train.rmsprop(0.1, 0.95, 0.1), [1.0, 2.0], [[0.5527865, 1.5527864], [0.2874418, 1.2294267]]),
        (
            lambda: mt.train.rmsprop(0.1, 0.95, 0.1, None, True),
            [1.0, 2.0],
            [[0.5411684, 1.5411685], [0.2677834, 1.2035918]],
        ),
    ],
    ids=["sgd", "momentum", "nesterov", "adagrad", "adadelta", "adam", "adamax", "rmsprop", "rmsprop_centered"],
)
def test_matches_tfjs_test_values(make: Factory, x0: list[float], expected: list[list[float]]) -> None:
    got = steps(make(), x0, len(expected))
    for step, (a, e) in enumerate(zip(got, expected), start=1):
        assert close(a, e, 5e-7), f"step {step}: {a} != {e}"


# ── several steps against the formulas, written out again one scalar at a time ─

X0 = [1.0, -2.0, 0.5]
N = 4


def reference(update: Callable[[float, float, dict[str, float], int], float], init: dict[str, float]) -> list[list[float]]:
    """Run ``update(x, g, state, t) -> new x`` for each entry of X0 for N steps, g = 2x."""
    states = [dict(init) for _ in X0]
    xs = list(X0)
    history = []
    for t in range(1, N + 1):
        xs = [update(x, 2.0 * x, s, t) for x, s in zip(xs, states)]
        history.append(list(xs))
    return history


def ref_sgd(x: float, g: float, s: dict[str, float], t: int) -> float:
    return x - 0.3 * g


def ref_momentum(nesterov: bool) -> Callable[[float, float, dict[str, float], int], float]:
    def update(x: float, g: float, s: dict[str, float], t: int) -> float:
        s["a"] = 0.9 * s["a"] + g
        return x - 0.1 * (g + 0.9 * s["a"]) if nesterov else x - 0.1 * s["a"]

    return update


def ref_adagrad(x: float, g: float, s: dict[str, float], t: int) -> float:
    s["acc"] += g * g
    return x - 0.5 * g / math.sqrt(s["acc"] + 1e-7)


def ref_adadelta(x: float, g: float, s: dict[str, float], t: int) -> float:
    u = g * math.sqrt(s["au"] + 1e-6) / math.sqrt(s["ag"] + 1e-6)  # the previous ag, as TF.js
    s["ag"] = 0.8 * s["ag"] + 0.2 * g * g
    s["au"] = 0.8 * s["au"] + 0.2 * u * u
    return x - 0.2 * u


def ref_adam(x: float, g: float, s: dict[str, float], t: int) -> float:
    s["m"] = 0.8 * s["m"] + 0.2 * g
    s["v"] = 0.9 * s["v"] + 0.1 * g * g
    m_hat = s["m"] / (1 - 0.8**t)
    v_hat = s["v"] / (1 - 0.9**t)
    return x - 0.1 * m_hat / (math.sqrt(v_hat) + 1e-7)


def ref_adamax(x: float, g: float, s: dict[str, float], t: int) -> float:
    lr_t = 0.1 / (1 + 0.5 * (t - 1))
    s["m"] = 0.8 * s["m"] + 0.2 * g
    s["u"] = max(0.9 * s["u"], abs(g))
    return x - lr_t / (1 - 0.8**t) * s["m"] / (s["u"] + 1e-7)


def ref_rmsprop(centered: bool) -> Callable[[float, float, dict[str, float], int], float]:
    def update(x: float, g: float, s: dict[str, float], t: int) -> float:
        s["ms"] = 0.9 * s["ms"] + 0.1 * g * g
        s["mg"] = 0.9 * s["mg"] + 0.1 * g
        denominator = s["ms"] - s["mg"] ** 2 + 1e-7 if centered else s["ms"] + 1e-7
        s["mom"] = 0.5 * s["mom"] + 0.01 * g / math.sqrt(denominator)
        return x - s["mom"]

    return update


@pytest.mark.parametrize(
    ("make", "update", "init"),
    [
        (lambda: mt.train.sgd(0.3), ref_sgd, {}),
        (lambda: mt.train.momentum(0.1, 0.9), ref_momentum(False), {"a": 0.0}),
        (lambda: mt.train.momentum(0.1, 0.9, use_nesterov=True), ref_momentum(True), {"a": 0.0}),
        (lambda: mt.train.adagrad(0.5, initial_accumulator_value=0.3), ref_adagrad, {"acc": 0.3}),
        (lambda: mt.train.adadelta(0.2, rho=0.8, epsilon=1e-6), ref_adadelta, {"ag": 0.0, "au": 0.0}),
        (lambda: mt.train.adam(0.1, beta1=0.8, beta2=0.9), ref_adam, {"m": 0.0, "v": 0.0}),
        (lambda: mt.train.adamax(0.1, beta1=0.8, beta2=0.9, decay=0.5), ref_adamax, {"m": 0.0, "u": 0.0}),
        (lambda: mt.train.rmsprop(0.01, momentum=0.5), ref_rmsprop(False), {"ms": 0.0, "mg": 0.0, "mom": 0.0}),
        (
            lambda: mt.train.rmsprop(0.01, momentum=0.5, centered=True),
            ref_rmsprop(True),
            {"ms": 0.0, "mg": 0.0, "mom": 0.0},
        ),
    ],
    ids=["sgd", "momentum", "nesterov", "adagrad", "adadelta", "adam", "adamax_decay", "rmsprop", "rmsprop_centered"],
)
def test_several_steps_follow_the_formula(
    make: Factory, update: Callable[[float, float, dict[str, float], int], float], init: dict[str, float]
) -> None:
    got = steps(make(), X0, N)
    for step, (a, e) in enumerate(zip(got, reference(update, init)), start=1):
        assert close(a, e, 1e-12), f"step {step}: {a} != {e}"


def test_first_adam_step_moves_each_entry_by_the_learning_rate() -> None:
    # bias correction: m_hat = g and v_hat = g^2 at t = 1, so the step is lr * sign(g)
    got = steps(mt.train.adam(0.01), [3.0, -0.001, 250.0], 1)[0]
    assert close(got, [2.99, 0.009, 249.99], 1e-6)


def test_adamax_decay_shrinks_later_steps() -> None:
    # with |g| constant the unscaled step is lr / (1 + decay * (t - 1)) / (1 - b1^t) * m / u
    w = mt.variable(mt.scalar(0.0))
    opt = mt.train.adamax(1.0, beta1=0.0, beta2=0.0, decay=1.0)
    moves = []
    for _ in range(3):
        before = w.item()
        opt.minimize(lambda: w * 1.0)  # g = 1 always
        moves.append(before - w.item())
    assert close(moves, [1.0, 0.5, 1.0 / 3.0], 1e-6)


def test_adadelta_from_zero_slots_moves_like_sgd_as_in_tfjs() -> None:
    # TF.js divides by the previous accum_grad, so accum_grad == accum_var at every
    # step and the update is exactly lr * g: documented in AdadeltaOptimizer.
    assert steps(mt.train.adadelta(0.05, rho=0.7), X0, 5) == steps(mt.train.sgd(0.05), X0, 5)


def test_centered_rmsprop_with_a_zero_gradient_stays_finite() -> None:
    # TF.js computes sqrt(ms - (mg^2 + eps)) and would give NaN here
    w = mt.variable(mt.tensor([1.0, 2.0]))
    opt = mt.train.rmsprop(0.1, centered=True)
    opt.apply_gradients({w: mt.zeros((2,))})
    assert w.data_sync() == [1.0, 2.0]


# ── every optimizer fits the book's linear model ───────────────────────────────

XS = [1.0, 2.0, 3.0, 4.0]
YS = [1.0, 3.0, 5.0, 7.0]

# (optimizer, [(learning rate, steps), ...]): a later phase lowers the learning rate,
# which RMSProp needs to settle (its normalised steps have size ~lr)
FITS: dict[str, tuple[Factory, list[tuple[float, int]]]] = {
    "sgd": (lambda: mt.train.sgd(0.1), [(0.1, 500)]),
    "momentum": (lambda: mt.train.momentum(0.02, 0.9), [(0.02, 400)]),
    "nesterov": (lambda: mt.train.momentum(0.02, 0.9, use_nesterov=True), [(0.02, 300)]),
    "adagrad": (lambda: mt.train.adagrad(1.0), [(1.0, 500)]),
    "adadelta": (lambda: mt.train.adadelta(0.1), [(0.1, 500)]),
    "adam": (lambda: mt.train.adam(0.1), [(0.1, 500)]),
    "adamax": (lambda: mt.train.adamax(0.3, decay=0.001), [(0.3, 1000)]),
    "rmsprop": (lambda: mt.train.rmsprop(0.01), [(0.01, 500), (0.001, 200), (0.0001, 100)]),
    "rmsprop_centered": (
        lambda: mt.train.rmsprop(0.01, momentum=0.5, centered=True),
        [(0.01, 300), (0.001, 150), (0.0001, 150)],
    ),
}


@pytest.mark.parametrize("name", sorted(FITS))
def test_every_optimizer_fits_the_linear_model(name: str) -> None:
    make, phases = FITS[name]
    x, y = mt.tensor(XS), mt.tensor(YS)
    w, b = mt.variable(mt.scalar(0.0)), mt.variable(mt.scalar(0.0))
    opt = make()
    loss = lambda: ((w * x + b - y) ** 2).mean()  # noqa: E731
    for learning_rate, n in phases:
        opt.learning_rate = learning_rate
        for _ in range(n):
            opt.minimize(loss)
    final = opt.minimize(loss, return_cost=True)
    assert abs(w.item() - 2.0) < 2e-3 and abs(b.item() + 1.0) < 5e-3, (w.item(), b.item())
    assert final.item() < 1e-5
    final.dispose()
    opt.dispose()


# ── memory: flat loops, slots as variables, dispose ───────────────────────────


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_minimize_loop_outside_tidy_keeps_memory_flat(name: str) -> None:
    x, y = mt.tensor(XS), mt.tensor(YS)
    w, b = mt.variable(mt.scalar(0.5)), mt.variable(mt.scalar(0.0))
    opt = FACTORIES[name]()
    start = mt.memory()
    opt.minimize(lambda: ((w * x + b - y) ** 2).mean())
    after_first = mt.memory()
    assert after_first.num_variables - start.num_variables == 2 * SLOTS_PER_VARIABLE[name]
    assert after_first.num_tensors - start.num_tensors == 2 * SLOTS_PER_VARIABLE[name]  # variables count as tensors
    for _ in range(5):
        opt.minimize(lambda: ((w * x + b - y) ** 2).mean())
        assert mt.memory() == after_first
    cost = opt.minimize(lambda: ((w * x + b - y) ** 2).mean(), return_cost=True)
    assert mt.memory().num_tensors == after_first.num_tensors + 1  # only the cost we asked for
    cost.dispose()
    opt.dispose()
    assert mt.memory() == start


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_minimize_loop_inside_tidy_keeps_memory_flat(name: str) -> None:
    x, y = mt.tensor(XS), mt.tensor(YS)
    w, b = mt.variable(mt.scalar(0.5)), mt.variable(mt.scalar(0.0))
    opt = FACTORIES[name]()

    def train() -> list[int]:
        counts = []
        for _ in range(6):
            cost = opt.minimize(lambda: ((w * x + b - y) ** 2).mean(), return_cost=True)
            cost.dispose()
            counts.append(mt.memory().num_tensors)
        return counts

    counts = mt.tidy(train)
    assert len(set(counts)) == 1, counts  # the slots appear in step 1, then nothing more
    per_step = [mt.tidy(lambda: opt.minimize(lambda: ((w * x + b - y) ** 2).mean(), return_cost=True)) for _ in range(3)]
    assert mt.memory().num_tensors == counts[0] + 3  # exactly the three costs we kept
    mt.dispose(per_step)
    assert mt.memory().num_tensors == counts[0]
    opt.dispose()


def test_steps_leak_nothing_and_run_only_the_forward_and_backward_ops() -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]))
    opt = mt.train.adam(0.1)
    with mt.leak_check(on_leak="raise") as leaks:
        opt.minimize(lambda: (w * w).sum())  # the first step makes the slots: optimizer state, not leaks
        opt.minimize(lambda: (w * w).sum())
    assert leaks.count == 0 and [(g.owner, g.count, g.names) for g in leaks.state] == [("AdamOptimizer", 2, (f"{w.name}/m", f"{w.name}/v"))]
    assert "opt.dispose() frees them" in str(leaks)
    report = mt.profile(lambda: opt.minimize(lambda: (w * w).sum()))
    assert report.new_tensors == 0
    assert report.kernel_names[:2] == ["mul", "sum"]  # the update itself runs no op
    opt.dispose()


def test_dispose_frees_every_slot_and_resets() -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w_dispose")
    b = mt.variable(mt.scalar(0.0), name="b_dispose")
    before = mt.memory()
    opt = mt.train.rmsprop(0.1, centered=True)
    opt.minimize(lambda: (w * w).sum() + b * b)
    assert sorted(opt.slots) == ["b_dispose", "w_dispose"]
    assert sorted(opt.slots["w_dispose"]) == ["mg", "momentum", "rms"]
    assert mt.memory().num_variables == before.num_variables + 6
    slot = opt.slots["w_dispose"]["rms"]
    opt.dispose()
    assert mt.memory() == before
    assert slot.is_disposed and opt.slots == {} and opt.iterations == 0
    opt.minimize(lambda: (w * w).sum())  # usable again, with fresh slots
    assert opt.iterations == 1 and list(opt.slots) == ["w_dispose"]
    opt.dispose()


def test_slots_are_named_like_tfjs_and_never_collide() -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w_names")
    first, second = mt.train.adam(0.1), mt.train.adam(0.1)
    first.minimize(lambda: (w * w).sum())
    second.minimize(lambda: (w * w).sum())
    assert [v.name for v in first.slots["w_names"].values()] == ["w_names/m", "w_names/v"]
    assert [v.name for v in second.slots["w_names"].values()] == ["w_names/m_1", "w_names/v_1"]
    assert all(not v.trainable for v in first.slots["w_names"].values())
    weights = second.get_weights()
    assert [n for n, _ in weights] == ["iter", "w_names/m", "w_names/v"]  # TF.js names, whatever the variable
    mt.dispose(weights)
    first.dispose()
    second.dispose()


def test_a_new_variable_with_an_old_name_gets_fresh_slots() -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w_reborn")
    opt = mt.train.momentum(0.1, 0.9)
    opt.minimize(lambda: (w * w).sum())
    old_slot = opt.slots["w_reborn"]["momentum"]
    w.dispose()
    w2 = mt.variable(mt.tensor([1.0, 2.0, 3.0]), name="w_reborn")
    opt.minimize(lambda: (w2 * w2).sum())
    assert old_slot.is_disposed
    assert opt.slots["w_reborn"]["momentum"].data_sync() == [2.0, 4.0, 6.0]
    opt.dispose()


# ── apply_gradients: every accepted form, and errors that change nothing ───────


def test_apply_gradients_accepts_every_form() -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w_forms")
    b = mt.variable(mt.scalar(1.0), name="b_forms")
    opt = mt.train.sgd(1.0)
    dw, db = mt.tensor([0.5, 0.5]), mt.scalar(0.25)
    opt.apply_gradients({"w_forms": dw, "b_forms": db})  # names, as TF.js
    opt.apply_gradients({w: dw, b: db})  # variables
    opt.apply_gradients([(dw, w), (db, b)])  # (gradient, variable), as TensorFlow
    opt.apply_gradients([(dw, "w_forms"), (None, b)])  # names in pairs; None is skipped
    assert w.data_sync() == [-1.0, 0.0] and b.item() == 0.25
    result = mt.variable_grads(lambda: (w * w).sum())  # dw = 2w = [-2, 0]
    opt.apply_gradients(result)  # the whole result of variable_grads
    opt.apply_gradients(result.grads)  # or its GradMap
    assert w.data_sync() == [3.0, 0.0]  # -1 + 2 + 2; 0 stays
    assert opt.iterations == 6
    mt.dispose(result)


@pytest.fixture
def trained() -> tuple[Optimizer, mt.Variable, mt.Variable]:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w_err")
    frozen = mt.variable(mt.tensor([5.0]), trainable=False, name="frozen_err")
    opt = mt.train.adam(0.1)
    opt.minimize(lambda: (w * w).sum())
    return opt, w, frozen


def snapshot(opt: Optimizer, *variables: mt.Variable) -> object:
    return (
        [v.data_sync() for v in variables],
        {n: {s: v.data_sync() for s, v in slots.items()} for n, slots in opt.slots.items()},
        opt.iterations,
        mt.memory(),
    )


@pytest.mark.parametrize(
    ("make_grads", "error", "message"),
    [
        (lambda w: {w: mt.tensor([1.0, 2.0, 3.0])}, mt.ShapeError, "has shape (3,), but the variable has shape (2,)"),
        (lambda w: {w: mt.ones((2, 1))}, mt.ShapeError, "has shape (2, 1)"),
        (lambda w: {"w_er": mt.ones((2,))}, mt.InvalidArgumentError, "did you mean 'w_err'"),
        (lambda w: {w: [1.0, 2.0]}, mt.InvalidArgumentError, "is a list"),
        (lambda w: {mt.ones((2,)): mt.ones((2,))}, mt.InvalidArgumentError, "neither a Variable nor a variable name"),
        (lambda w: {"frozen_err": mt.ones((1,))}, mt.InvalidArgumentError, "is not trainable"),
        (lambda w: [(mt.ones((2,)), w), (mt.ones((2,)), "w_err")], mt.InvalidArgumentError, "has two gradients"),
        (lambda w: [(w, mt.ones((2,)))], mt.InvalidArgumentError, "the order is reversed"),
        (lambda w: [mt.ones((2,))], mt.InvalidArgumentError, "not a (gradient, variable) pair"),
        (lambda w: {}, mt.InvalidArgumentError, "no gradients provided"),
        (lambda w: [(None, w)], mt.InvalidArgumentError, "no gradients provided"),
        (lambda w: mt.ones((2,)), mt.InvalidArgumentError, "holds no gradients"),
    ],
    ids=[
        "shape",
        "rank",
        "unknown-name",
        "not-a-tensor",
        "tensor-key",
        "not-trainable",
        "twice",
        "reversed",
        "not-a-pair",
        "empty",
        "all-none",
        "bare-tensor",
    ],
)
def test_bad_gradients_are_rejected_and_nothing_changes(
    trained: tuple[Optimizer, mt.Variable, mt.Variable],
    make_grads: Callable[[mt.Variable], object],
    error: type[mt.MicrotapeError],
    message: str,
) -> None:
    opt, w, frozen = trained
    grads = make_grads(w)
    before = snapshot(opt, w, frozen)
    with pytest.raises(error) as info:
        opt.apply_gradients(grads)  # type: ignore[arg-type]  # deliberately wrong input
    assert message in str(info.value)
    assert "hint:" in str(info.value)
    assert snapshot(opt, w, frozen) == before
    mt.dispose(grads)
    opt.dispose()


def test_a_bad_gradient_after_good_ones_changes_nothing(trained: tuple[Optimizer, mt.Variable, mt.Variable]) -> None:
    opt, w, frozen = trained
    b = mt.variable(mt.scalar(1.0), name="b_err")
    grads = [(mt.ones((2,)), w), (mt.ones((3,)), b)]
    before = snapshot(opt, w, b)
    with pytest.raises(mt.ShapeError) as info:
        opt.apply_gradients(grads)
    assert info.value.shapes == ((3,), ())
    assert snapshot(opt, w, b) == before
    assert "b_err" not in opt.slots
    opt.dispose()


def test_a_step_interrupted_while_writing_puts_everything_back(
    trained: tuple[Optimizer, mt.Variable, mt.Variable], monkeypatch: pytest.MonkeyPatch
) -> None:
    opt, w, frozen = trained
    b = mt.variable(mt.scalar(1.0), name="b_err")  # no slots yet: the step makes them, after writing w and its slots
    grads = [(mt.ones((2,)), w), (mt.ones(()), b)]
    before = snapshot(opt, w, b)

    def interrupted(*args: object, **kwargs: object) -> mt.Variable:
        raise KeyboardInterrupt

    monkeypatch.setattr(state_module, "variable", interrupted)  # where slots are made
    with pytest.raises(KeyboardInterrupt):
        opt.apply_gradients(grads)
    monkeypatch.undo()
    assert snapshot(opt, w, b) == before  # w, its slots, b and the count are back as they were
    assert "b_err" not in opt.slots
    opt.apply_gradients(grads)  # and the same step then runs normally
    assert opt.iterations == 2 and sorted(opt.slots) == ["b_err", "w_err"]
    mt.dispose(grads)
    opt.dispose()


def test_disposed_gradient_is_reported_before_anything_changes(
    trained: tuple[Optimizer, mt.Variable, mt.Variable],
) -> None:
    opt, w, frozen = trained
    g = mt.ones((2,))
    g.dispose()
    before = snapshot(opt, w)
    with pytest.raises(mt.DisposedTensorError):
        opt.apply_gradients({w: g})
    assert snapshot(opt, w) == before
    opt.dispose()


# ── minimize: errors from variable_grads surface, nothing changes ──────────────


@pytest.mark.parametrize(
    ("loss", "message"),
    [
        (lambda w: lambda: w * 2.0, "must return a scalar"),
        (lambda w: lambda: mt.scalar(3.0), "Cannot find a connection"),
        (lambda w: lambda: mt.scalar(w.data_sync()[0]) * 2.0, "Cannot find a connection"),
    ],
    ids=["non-scalar", "constant", "detached"],
)
def test_minimize_errors_surface_and_change_nothing(
    loss: Callable[[mt.Variable], Loss], message: str
) -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]))
    opt = mt.train.adam(0.1)
    before = (w.data_sync(), mt.memory())
    with pytest.raises(mt.GradientError, match=message):
        opt.minimize(loss(w))
    assert (w.data_sync(), mt.memory()) == before
    assert opt.iterations == 0 and opt.slots == {}


def test_minimize_with_only_frozen_variables_is_a_clear_error() -> None:
    frozen = mt.variable(mt.scalar(1.0), trainable=False)
    opt = mt.train.sgd(0.1)
    with pytest.raises(mt.GradientError, match="trainable"):
        opt.minimize(lambda: frozen * frozen, var_list=[frozen])
    assert frozen.item() == 1.0 and opt.iterations == 0


def test_minimize_rejects_a_non_bool_return_cost_before_any_work() -> None:
    w = mt.variable(mt.scalar(1.0))
    opt = mt.train.sgd(0.1)
    before = mt.memory()
    with pytest.raises(mt.InvalidArgumentError, match="return_cost"):
        opt.minimize(lambda: w * w, return_cost=1)  # type: ignore[call-overload]  # deliberately wrong
    assert w.item() == 1.0 and mt.memory() == before


def test_var_list_limits_what_is_updated() -> None:
    w, b = mt.variable(mt.scalar(1.0)), mt.variable(mt.scalar(1.0))
    opt = mt.train.sgd(0.5)
    opt.minimize(lambda: w * w + b * b, var_list=[w])
    assert (w.item(), b.item()) == (0.0, 1.0)

    class Model:
        def variables(self) -> list[mt.Variable]:
            return [b]

    opt.minimize(lambda: w * w + b * b, var_list=Model())  # anything with variables()
    assert (w.item(), b.item()) == (0.0, 0.0)
    with pytest.raises(mt.InvalidArgumentError, match="var_list"):
        opt.minimize(lambda: w * w, var_list=mt.scalar(1.0))  # type: ignore[call-overload]  # deliberately wrong


# ── numbers follow IEEE-754: no Python arithmetic error escapes an update ──────


def test_updates_give_nan_and_inf_instead_of_python_errors() -> None:
    w = mt.variable(mt.tensor([1.0, 2.0, 3.0]))
    mt.train.adam(0.1, epsilon=0.0).apply_gradients({w: mt.tensor([0.0, 1.0, 1.0])})  # 0/0
    assert math.isnan(w.data_sync()[0])
    v = mt.variable(mt.tensor([1.0, 1.0]))
    mt.train.adamax(0.1).apply_gradients({v: mt.tensor([float("nan"), 1.0])})
    assert math.isnan(v.data_sync()[0]) and math.isfinite(v.data_sync()[1])
    u = mt.variable(mt.tensor([1.0]))
    mt.train.rmsprop(0.1, epsilon=0.0).apply_gradients({u: mt.tensor([float("inf")])})  # inf/inf
    assert math.isnan(u.item())


# ── hyperparameters are checked when the optimizer is made ─────────────────────


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: mt.train.sgd(0.0), "learning_rate"),
        (lambda: mt.train.sgd(-0.1), "learning_rate"),
        (lambda: mt.train.sgd(float("inf")), "learning_rate"),
        (lambda: mt.train.sgd("0.1"), "learning_rate"),  # type: ignore[arg-type]  # deliberately wrong
        (lambda: mt.train.sgd(True), "learning_rate"),
        (lambda: mt.train.momentum(0.1, -0.5), "momentum"),
        (lambda: mt.train.momentum(0.1, 0.9, use_nesterov=1), "use_nesterov"),  # type: ignore[arg-type]  # deliberately wrong
        (lambda: mt.train.adagrad(0.1, -1.0), "initial_accumulator_value"),
        (lambda: mt.train.adadelta(rho=1.5), "rho"),
        (lambda: mt.train.adadelta(epsilon=-1e-7), "epsilon"),
        (lambda: mt.train.adam(beta1=1.0), "beta1"),
        (lambda: mt.train.adam(beta2=-0.1), "beta2"),
        (lambda: mt.train.adam(epsilon=float("nan")), "epsilon"),
        (lambda: mt.train.adamax(decay=-1.0), "decay"),
        (lambda: mt.train.rmsprop(0.1, decay=2.0), "decay"),
        (lambda: mt.train.rmsprop(0.1, centered="yes"), "centered"),  # type: ignore[arg-type]  # deliberately wrong
    ],
)
def test_bad_hyperparameters_are_rejected(make: Callable[[], object], name: str) -> None:
    with pytest.raises(mt.InvalidArgumentError) as info:
        make()
    assert info.value.name == name  # type: ignore[attr-defined]  # facts are attributes
    assert "hint:" in str(info.value)


def test_learning_rate_is_settable_between_steps() -> None:
    w = mt.variable(mt.scalar(1.0))
    opt = mt.train.sgd(0.5)
    opt.minimize(lambda: w * 1.0)
    opt.learning_rate = 0.25
    opt.minimize(lambda: w * 1.0)
    assert w.item() == 0.25
    with pytest.raises(mt.InvalidArgumentError):
        opt.learning_rate = 0
    assert opt.learning_rate == 0.25


def test_defaults_are_tfjs_defaults() -> None:
    assert mt.train.adam().get_config() == {"learning_rate": 0.001, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7}
    assert mt.train.adamax().get_config() == {
        "learning_rate": 0.002,
        "beta1": 0.9,
        "beta2": 0.999,
        "epsilon": 1e-7,
        "decay": 0.0,
    }
    assert mt.train.adadelta().get_config() == {"learning_rate": 0.001, "rho": 0.95, "epsilon": 1e-7}
    assert mt.train.adagrad(0.1).get_config()["initial_accumulator_value"] == 0.1
    assert mt.train.rmsprop(0.1).get_config() == {
        "learning_rate": 0.1,
        "decay": 0.9,
        "momentum": 0.0,
        "epsilon": 1e-7,
        "centered": False,
    }
    assert mt.train.momentum(0.1, 0.9).get_config()["use_nesterov"] is False
    classes = [type(f()).__name__ for f in FACTORIES.values()]
    assert set(classes) == {
        "SGDOptimizer",
        "MomentumOptimizer",
        "AdagradOptimizer",
        "AdadeltaOptimizer",
        "AdamOptimizer",
        "AdamaxOptimizer",
        "RMSPropOptimizer",
    }


# ── get_weights / set_weights ──────────────────────────────────────────────────


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_restored_state_continues_exactly_like_uninterrupted_training(name: str) -> None:
    make = FACTORIES[name]
    w = mt.variable(mt.tensor([1.0, -2.0]), name="w_resume")
    b = mt.variable(mt.scalar(0.5), name="b_resume")
    loss = lambda: (w * w).sum() + (b - 1.0) ** 2  # noqa: E731
    first = make()
    for _ in range(3):
        first.minimize(loss)
    saved = first.get_weights()
    start = (w.tolist(), b.tolist())
    for _ in range(3):
        first.minimize(loss)
    expected = (w.data_sync(), b.data_sync())

    _ = w.assign(start[0]), b.assign(start[1])
    second = make()
    second.set_weights(saved)
    assert second.iterations == 3
    for _ in range(3):
        second.minimize(loss)
    assert (w.data_sync(), b.data_sync()) == expected
    assert second.iterations == 6
    mt.dispose(saved)
    first.dispose()
    second.dispose()


@pytest.mark.parametrize(
    ("weights", "error", "message"),
    [
        (lambda w: [], mt.InvalidArgumentError, "no 'iter' entry"),
        (lambda w: [("iter", mt.scalar(1.5))], mt.InvalidArgumentError, "not a count"),
        (lambda w: [("iter", mt.scalar(1.0)), ("w_sw/m", mt.zeros((2,)))], mt.InvalidArgumentError, "lacks slot"),
        (
            lambda w: [("iter", mt.scalar(1.0)), ("w_sw/m", mt.zeros((3,))), ("w_sw/v", mt.zeros((3,)))],
            mt.ShapeError,
            "has shape (3,)",
        ),
        (lambda w: [("iter", mt.scalar(1.0)), ("w_sw/momentum", mt.zeros((2,)))], mt.InvalidArgumentError, "not a slot of AdamOptimizer"),
        (lambda w: [("iter", mt.scalar(1.0)), ("ghost/m", mt.zeros((2,))), ("ghost/v", mt.zeros((2,)))], mt.InvalidArgumentError, "not alive"),
        (lambda w: [("iter", 1.0)], mt.InvalidArgumentError, "not (str, Tensor)"),
        (lambda w: "iter", mt.InvalidArgumentError, "list of (name, tensor) pairs"),
    ],
    ids=["no-iter", "fractional-iter", "missing-slot", "shape", "foreign-slot", "unknown-variable", "not-a-tensor", "a-string"],
)
def test_set_weights_validates_everything_first(
    weights: Callable[[mt.Variable], object], error: type[mt.MicrotapeError], message: str
) -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w_sw")
    opt = mt.train.adam(0.1)
    opt.minimize(lambda: (w * w).sum())
    given = weights(w)
    before = snapshot(opt, w)
    with pytest.raises(error, match=re.escape(message)):
        opt.set_weights(given)  # type: ignore[arg-type]  # deliberately wrong input
    assert snapshot(opt, w) == before
    mt.dispose(given)
    opt.dispose()


def test_sgd_has_only_the_iteration_count() -> None:
    opt = mt.train.sgd(0.1)
    weights = opt.get_weights()
    assert [(n, t.item()) for n, t in weights] == [("iter", 0.0)]
    opt.set_weights([("iter", mt.scalar(7.0))])
    assert opt.iterations == 7
    mt.dispose(weights)


# ── next_frame ─────────────────────────────────────────────────────────────────


def test_next_frame_interleaves_two_training_tasks() -> None:
    events: list[str] = []

    async def trainer(tag: str, start: float) -> float:
        w = mt.variable(mt.scalar(start))
        opt = mt.train.sgd(0.25)
        for step in range(3):
            mt.tidy(lambda: opt.minimize(lambda: w * w))
            events.append(f"{tag}{step}")
            await mt.next_frame()
        return w.item()

    async def main() -> list[float]:
        return list(await asyncio.gather(trainer("a", 8.0), trainer("b", -8.0)))

    results = asyncio.run(main())
    assert events == ["a0", "b0", "a1", "b1", "a2", "b2"]
    assert results == [1.0, -1.0]  # each step halves w: the tasks did not disturb each other


def test_without_next_frame_one_task_runs_to_the_end_first() -> None:
    events: list[str] = []

    async def busy(tag: str) -> None:
        for step in range(3):
            events.append(f"{tag}{step}")

    async def main() -> None:
        await asyncio.gather(busy("a"), busy("b"))

    asyncio.run(main())
    assert events == ["a0", "a1", "a2", "b0", "b1", "b2"]


def test_next_frame_is_an_awaitable_that_yields_once() -> None:
    order: list[str] = []

    async def other() -> None:
        order.append("other")

    async def main() -> None:
        task = asyncio.ensure_future(other())
        order.append("before")
        await mt.next_frame()
        order.append("after")
        await task

    asyncio.run(main())
    assert order == ["before", "other", "after"]


@pytest.mark.parametrize("make", [lambda: mt.train.sgd(0.1), lambda: mt.train.adam(0.01)], ids=["sgd", "adam"])
def test_a_training_step_leaves_nothing_for_the_cyclic_collector(make: Callable[[], Optimizer]) -> None:
    """Records point from outputs to inputs only, and the backward pass holds lists:
    a whole step (forward, gradients, update) is freed by reference counting alone."""
    w = mt.variable(mt.tensor([[0.5, -0.2], [0.1, 0.3]]), name="w_gc_step")
    b = mt.variable(mt.tensor([0.0, 0.1]), name="b_gc_step")
    x = mt.tensor([[1.0, 2.0], [-1.0, 0.5], [0.3, -0.7]])
    opt = make()

    def loss() -> mt.Tensor:
        return mt.mean(mt.square(mt.tanh(x @ w + b) - 0.5))

    for _ in range(3):  # the optimizer's slots are made at the first step
        mt.tidy(lambda: opt.minimize(loss))
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            mt.tidy(lambda: opt.minimize(loss))
            with mt.GradientTape() as tape:
                value = loss()
            tape.gradient(value, [w, b])
        del tape, value
        found = gc.collect()
    finally:
        gc.enable()
    assert found == 0, f"a training step left {found} objects only the cyclic collector frees"
