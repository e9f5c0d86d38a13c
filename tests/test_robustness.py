"""Numbers at the edges (NaN and infinities through every op, huge and tiny values), empty tensors
in every op and reduction, and long runs whose memory stays flat (ten thousand tidy steps, training after
a full garbage collection, a persistent tape's release). Threads and asyncio tasks: test_memory.py."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable

import pytest

import microtape as mt
from microtape.engine.primitive import OPS
from microtape.engine.arena import DISPATCH

from .op_cases import ALL_CASES, Case, call

NAN, INF = math.nan, math.inf


def _with_value(case: Case, value: float) -> list[mt.Tensor]:
    """The case's inputs with every entry of the first input replaced by ``value``."""
    xs = [mt.tensor(v) for v in case.inputs]
    xs[0] = mt.fill(xs[0].shape, value)
    return xs


ONE_PER_OP: list[Case] = sorted({c.name: c for c in reversed(ALL_CASES)}.values(), key=lambda c: c.name)


@pytest.mark.parametrize("case", ONE_PER_OP, ids=str)
def test_nan_propagates_forward_and_backward(case: Case) -> None:
    xs = _with_value(case, NAN)
    out = call(case)(*xs).data_sync()
    if case.name in ("greater", "greater_equal", "less", "less_equal", "equal"):
        assert out == [0.0] * len(out), out  # every comparison with NaN is false, as in IEEE
        return
    if case.name in ("where",):
        # The NaN went into the condition: a NaN condition is true, so every entry comes from x.
        assert out == call(case)(mt.ones(xs[0].shape), *xs[1:]).data_sync() == xs[1].data_sync(), out
        return
    if case.name == "zeros_like":
        assert out == [0.0] * len(out)  # only the shape of x is read
        return
    if case.name in ("is_nan", "is_finite", "is_inf"):
        assert out == [float(case.name == "is_nan")] * len(out), out  # the tests say what they see
        return
    if case.name in ("argmax", "argmin"):
        assert out == [0.0] * len(out), out  # an index: NaN counts as the largest and the smallest, the first one wins
        return
    assert any(v != v for v in out), f"{case.name} lost a NaN: {out}"
    if not OPS[case.name].differentiable or case.name in ("clip_by_value", "relu", "maximum", "minimum", "max", "abs", "reshape", "transpose", "broadcast_to", "slice", "pad", "concat", "neg", "add", "sub", "sum", "clone", "sign", "gather", "stop_gradient", "one_hot"):
        return  # these pass the incoming gradient through unchanged (or give zeros), which is finite
    with mt.GradientTape() as tape:
        tape.watch(xs)
        y = call(case)(*xs)
    gs = tape.gradient(y, xs, unconnected_gradients="zero")
    # d(x*y)/dy = x carries the NaN (d/dx = y need not): some input's gradient must
    assert any(v != v for g in gs if g is not None for v in g.data_sync()), f"{case.name}'s VJP lost a NaN"


@pytest.mark.parametrize("case", ONE_PER_OP, ids=str)
def test_infinities_never_raise(case: Case) -> None:
    """Extreme values give an output of the usual shape, all floats, and gradients of the inputs' shapes."""
    usual = call(case)(*[mt.tensor(v) for v in case.inputs]).shape
    for value in (INF, -INF, 1e308, -1e308, 5e-324, 0.0, -0.0):
        xs = _with_value(case, value)
        out = call(case)(*xs)
        values = out.data_sync()
        assert out.shape == usual and len(values) == out.size, (value, out.shape, usual)
        assert all(type(v) is float for v in values), (value, values)
        if OPS[case.name].differentiable:
            with mt.GradientTape() as tape:
                tape.watch(xs)
                y = call(case)(*xs)
            gs = tape.gradient(y, xs, unconnected_gradients="zero")  # no Python arithmetic error escapes
            assert [g.shape if g is not None else None for g in gs] == [x.shape for x in xs], value


EMPTY_PARAMS: dict[str, dict[str, object]] = {
    "reshape": {"shape": (3, 0)},
    "broadcast_to": {"shape": (2, 0, 3)},
    "clip_by_value": {"clip_value_min": 0.0, "clip_value_max": 1.0},
    "slice": {"begin": (0, 0), "size": (0, 2)},
    "pad": {"paddings": [(1, 0), (0, 1)]},
    "sum": {"axis": 0},
    "max": {"axis": 1},
    "logsumexp": {"axis": 0},
    "one_hot": {"depth": 2},
}


# What each op gives for the (0, 3) input above (with EMPTY_PARAMS); every other op keeps the shape (0, 3).
EMPTY_RESULTS: dict[str, tuple[tuple[int, ...], list[float]]] = {
    "reshape": ((3, 0), []),
    "transpose": ((3, 0), []),
    "broadcast_to": ((2, 0, 3), []),
    "slice": ((0, 2), []),
    "pad": ((1, 4), [0.0] * 4),  # only the padding is left
    "sum": ((3,), [0.0] * 3),  # an empty sum is 0
    "max": ((0,), []),
    "logsumexp": ((3,), [-INF] * 3),  # log(0)
    "matmul": ((0, 2), []),
    "norm": ((), [0.0]),  # the length of no entries is 0
    "one_hot": ((0, 3, 2), []),
    "sigmoid_cross_entropy": ((), [0.0]),  # the mean of no loss is 0, as TF's (divNoNan)
    "softmax_cross_entropy": ((), [0.0]),
}
EMPTY_REFUSED: frozenset[str] = frozenset({"argmax", "argmin"})
"""Ops that refuse an empty axis: there is no index to return."""


@pytest.mark.parametrize("name", sorted(OPS))
def test_empty_tensors_work_in_every_op(name: str) -> None:
    empty = mt.zeros((0, 3))
    op = OPS[name]
    fn = DISPATCH[name]
    params = EMPTY_PARAMS.get(name, {})
    run: Callable[[mt.Tensor], mt.Tensor]
    if op.n_inputs < 0:
        run = lambda t: fn([t, t], axis=0)  # noqa: E731
    elif op.n_inputs == 1:
        run = lambda t: fn(t, **params)  # noqa: E731
    elif name in ("sigmoid_cross_entropy", "softmax_cross_entropy"):
        run = lambda t: fn(t, t)  # noqa: E731  # labels and logits of one shape
    elif name == "gather":
        run = lambda t: fn(t, mt.zeros((0,)))  # noqa: E731  # no index: (0,) + (3,)
    elif op.n_inputs == 2:
        other = mt.ones((3, 2)) if name == "matmul" else mt.ones((3,))
        run = lambda t: fn(t, other)  # noqa: E731
    else:
        run = lambda t: fn(mt.ones((3,)), t, t)  # noqa: E731
    if name in EMPTY_REFUSED:
        with pytest.raises(mt.InvalidArgumentError, match="no entries"):
            run(empty)
        return
    out = run(empty)
    assert (out.shape, out.data_sync()) == EMPTY_RESULTS.get(name, ((0, 3), [])), name
    if op.differentiable:
        g = mt.grad(run)(empty)
        assert g.shape == (0, 3)


def test_empty_reductions_follow_ieee() -> None:
    empty = mt.zeros((0,))
    assert mt.sum(empty).item() == 0.0
    assert mt.max(empty).item() == -INF
    assert math.isnan(mt.mean(empty).item())
    assert mt.logsumexp(empty, axis=0).item() == -INF


def test_huge_and_tiny_values() -> None:
    x = mt.tensor([1e300, 1e-300, -1e300])
    assert (x * x).data_sync() == [INF, 0.0, INF]
    assert mt.softmax(mt.tensor([1e300, 0.0])).data_sync() == [1.0, 0.0]
    assert mt.logsumexp(mt.tensor([1e300, 1e300])).item() == 1e300  # + log(2), which 1e300 absorbs; no overflow
    assert mt.sigmoid(mt.tensor([-1e300])).data_sync() == [0.0]
    g = mt.grad(lambda t: mt.log_softmax(t).sum())(mt.tensor([1000.0, -1000.0]))
    assert all(math.isfinite(v) for v in g.data_sync())


# -- long runs ---------------------------------------------------------------------------


_TEN_THOUSAND_STEPS = """
import tracemalloc
import microtape as mt

w = mt.variable(mt.tensor([0.5, -0.5]), name="robust_long_w")
x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
y = mt.tensor([1.0, 2.0])
opt = mt.train.sgd(0.01)


def step():
    opt.minimize(lambda: ((x @ w - y) ** 2).mean())


mt.tidy(step)
counts = mt.memory().num_tensors
tracemalloc.start()
for i in range(10_000):
    mt.tidy(step)
    if i == 999:
        early, _ = tracemalloc.get_traced_memory()
late, _ = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(mt.memory().num_tensors - counts, late - early)
"""


@pytest.mark.slow
def test_ten_thousand_tidy_steps_keep_memory_flat() -> None:
    # In a fresh interpreter: in this one, the tensors earlier tests left in
    # the arena can make its dict grow once during the loop, which is not a leak.
    done = subprocess.run(
        [sys.executable, "-c", _TEN_THOUSAND_STEPS], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    extra_tensors, grew = (int(v) for v in done.stdout.split())
    assert extra_tensors == 0
    assert grew < 64 * 1024, f"memory grew by {grew} bytes over 9,000 steps"


_FLAT_STEPS = """
import gc, tracemalloc
import microtape as mt

w = mt.variable(mt.tensor([[0.5, -0.5, 0.1], [0.2, 0.3, -0.4]]), name="w")
x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
labels = mt.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
opt = mt.train.sgd(0.01)

def loss():
    h = x @ w
    cross_entropy = -(labels * mt.log_softmax(h)).sum(axis=-1).mean()  # broadcasting backward
    folded = mt.where(h.greater(0.0), h, -h).max(axis=0)  # a zero-derivative op
    return cross_entropy + (folded**2).mean() + mt.transpose(h).reshape([-1]).mean()

def step():
    opt.minimize(loss)

mt.tidy(step)
counts = mt.memory().num_tensors
gc.collect()
gc.disable()  # a full collection in the loop would empty the free lists again and hide a rise
tracemalloc.start()
for _ in range(10):
    mt.tidy(step)  # refill the free lists to what a step holds at once
early, _ = tracemalloc.get_traced_memory()
for _ in range(600):
    mt.tidy(step)
late, _ = tracemalloc.get_traced_memory()
assert mt.memory().num_tensors == counts
print(late - early)
"""


@pytest.mark.slow
def test_training_steps_after_a_full_collection_keep_memory_flat() -> None:
    # A fresh interpreter, measured from gc.collect(), which empties CPython's
    # free lists of spare tuples: the result does not depend on what ran
    # before (other tests' tensors, a full collection at some step). A step
    # then refills the free lists to what it uses at once and no further,
    # unless it builds tuples from generators: tuple(d for d in shape) is
    # allocated long and shrunk, and each call leaves one more spare tuple of
    # its final length (up to 2,000 per length), about 150 bytes a step.
    done = subprocess.run(
        [sys.executable, "-c", _FLAT_STEPS], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    grew = int(done.stdout)
    # The 80-deep free lists of dicts and lists may still fill: at most about 10 KB.
    assert grew < 16 * 1024, f"memory grew by {grew} bytes over 600 steps"


def test_persistent_tape_release_frees_what_it_held() -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    before = mt.memory()
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mt.tidy(lambda: (mt.exp(x) * x).sum())
    held = mt.memory()
    assert held.num_tensors_held_by_tapes > before.num_tensors_held_by_tapes
    g = tape.gradient(y, x)
    assert g is not None
    assert g.data_sync() == pytest.approx([math.exp(v) * (1.0 + v) for v in (1.0, 2.0, 3.0)])  # d(e^x x)/dx
    tape.release()
    after = mt.memory()
    assert after.num_tensors_held_by_tapes == before.num_tensors_held_by_tapes
    assert after.num_tensors == before.num_tensors + 2  # y and its gradient
