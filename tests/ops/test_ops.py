"""Every op: forward values, VJPs against central differences, IEEE, kinks, errors.

The op table drives the gradient tests, so a new primitive cannot go untested.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microtape as mt
from microtape.engine.primitive import OPS
from microtape.engine import arena as _runtime
from microtape.engine.arena import DISPATCH

from ..op_cases import ALL_CASES, CASES, COMPOSITES, SMOOTH, Case, Composite, call, inputs_of


DIFFERENTIABLE_CASES = [case for case in ALL_CASES if OPS[case.name].differentiable]
"""Every case but those of ``stop_gradient``, which no tape records: its gradient is none by design."""


@pytest.fixture(autouse=True)
def _dispose_what_each_test_left() -> Iterator[None]:
    """Dispose the tensors a test left in the arena, so a thousand cases do not pile up
    (a big arena makes later memory measurements in the suite noisy)."""
    before = set(_runtime.LIVE)
    yield
    mt.dispose([t for i, t in list(_runtime.LIVE.items()) if i not in before])


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_has_cases(name: str) -> None:
    assert name in CASES and CASES[name], f"add sample inputs for {name!r} to microtape/checking/samples.py"


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_is_public_and_documented(name: str) -> None:
    fn = getattr(mt, name)
    assert name in [*mt.__all__, *mt.__builtin_named__]
    assert fn.__doc__ and "Examples:" in fn.__doc__


@pytest.mark.parametrize("case", DIFFERENTIABLE_CASES, ids=str)
def test_vjp_matches_central_differences_in_full_and_fast_mode(case: Case) -> None:
    full = mt.check_grads(call(case), inputs_of(case))
    # the sample inputs stay away from kinks, so the check is clean, not just passed
    assert full.ok and full.failures == [] and full.kinks == [] and full.culprit is None, str(full)
    assert full.max_abs_error < 1e-6
    fast = mt.check_grads(call(case), inputs_of(case), mode="fast", seed=11)
    assert fast.ok, str(fast)
    if case.name == "where":
        # a random direction also moves the condition, and where() picks the other branch only at
        # the point itself, where a 0 in the condition is not ±eps: both sides of the point see one
        # branch, the gradient at the point the other. Finite differences cannot check that one
        # number (inconclusive), so the check falls back to the full table, entry by entry, which passes
        assert fast.notes == ["fast mode: the directional derivative was inconclusive; ran the full check to name entries"]
    else:
        assert fast.evaluations == 3 and len(fast.rows) == 1, str(fast)


@pytest.mark.parametrize("case", DIFFERENTIABLE_CASES, ids=str)
def test_second_derivatives(case: Case) -> None:
    # every op, kinked ones included: the samples keep away from kinks, where the
    # gradient of relu's or max's mask is 0 and a comparison's is 0 everywhere
    report = mt.check_grads(call(case), inputs_of(case), order=2)
    assert report.ok and report.order == 2, str(report)
    assert any(r.order == 2 for r in report.rows)


def _first_gradients(case: Case, xs: list[mt.Tensor], w: list[float]) -> list[mt.Tensor]:
    """The gradient of sum(w · op(xs)) with respect to every input (zeros where unconnected)."""
    with mt.GradientTape() as tape:
        tape.watch(xs)
        y = call(case)(*xs)
        s = (y * mt.tensor(w, shape=y.shape)).sum()
    gs = tape.gradient(s, xs, unconnected_gradients="zero")
    return [g for g in gs if g is not None]


@pytest.mark.parametrize("case", DIFFERENTIABLE_CASES, ids=str)
def test_grad_of_grad_agrees_with_differences_of_the_first_gradient(case: Case) -> None:
    """grad(grad(f)) by nested tapes, against central differences of the first gradient.

    And a first gradient that changes with x must stay connected to x: the masks of
    relu, abs, max, maximum, clip_by_value and where are recorded (with a zero
    derivative), not cut, so ``mt.grad(mt.grad(f))`` gives zeros instead of raising.
    """
    rng = random.Random(3)
    xs = inputs_of(case)
    out_size = call(case)(*xs).size
    w = [rng.uniform(-1.0, 1.0) for _ in range(out_size)]
    vs = [[rng.uniform(-1.0, 1.0) for _ in range(x.size)] for x in xs]
    with mt.GradientTape() as outer:
        outer.watch(xs)
        gs = _first_gradients(case, xs, w)
        s = (gs[0] * mt.tensor(vs[0], shape=gs[0].shape)).sum()
        for g, v in zip(gs[1:], vs[1:]):
            s = s + (g * mt.tensor(v, shape=g.shape)).sum()
    connected = outer._reaches(s, xs)
    hs = outer.gradient(s, xs, unconnected_gradients="zero")
    eps = 1e-6
    for j, (x, h) in enumerate(zip(xs, hs)):
        assert h is not None
        base = x.data_sync()
        for k in range(x.size):
            values = []
            for t in (eps, -eps):
                moved = [mt.tensor([b + (t if i == k else 0.0) for i, b in enumerate(base)], shape=x.shape) if m == j else xx
                         for m, xx in enumerate(xs)]
                g_moved = _first_gradients(case, moved, w)
                values.append(math.fsum(a * b for g, v in zip(g_moved, vs) for a, b in zip(g.data_sync(), v)))
            numeric = (values[0] - values[1]) / (2 * eps)
            assert h.data_sync()[k] == pytest.approx(numeric, rel=1e-4, abs=1e-5), (case, j, k)
        # far from x (every entry's sign flipped), does the first gradient change? then it depends on x
        far = [mt.tensor([-b - 0.5 for b in base], shape=x.shape) if m == j else xx for m, xx in enumerate(xs)]
        try:
            moved_far = _first_gradients(case, far, w)
        except mt.InvalidArgumentError:  # indices (of gather, one_hot): not every number is one
            continue
        if [g.data_sync() for g in moved_far] != [g.data_sync() for g in gs]:
            assert connected[j], f"{case}: the gradient depends on input {j} but the graph was cut"


@pytest.mark.parametrize("case", ALL_CASES, ids=str)
def test_outside_a_tape_an_op_adds_exactly_its_result(case: Case) -> None:
    xs = inputs_of(case)
    before = mt.memory().num_tensors
    out = call(case)(*xs)
    assert mt.memory().num_tensors - before == 1
    out.dispose()
    # the same call with Python numbers and lists: what the op converts goes when it returns
    raw = DISPATCH[case.name](list(case.inputs), **case.params) if OPS[case.name].n_inputs < 0 else DISPATCH[case.name](*case.inputs, **case.params)
    assert mt.memory().num_tensors - before == 1
    raw.dispose()
    assert mt.memory().num_tensors == before


@pytest.mark.parametrize("case", DIFFERENTIABLE_CASES, ids=str)
def test_inside_a_tape_what_an_op_holds_is_released_with_the_tape(case: Case) -> None:
    xs = inputs_of(case)
    before = mt.memory()
    with mt.GradientTape() as tape:
        tape.watch(xs)
        out = call(case)(*xs)
    assert mt.memory().num_tensors - before.num_tensors == 1  # only the result is new (held, with xs)
    assert mt.memory().num_tensors_held_by_tapes - before.num_tensors_held_by_tapes == len(xs) + 1
    mt.dispose(tape.gradient(out, xs, unconnected_gradients="zero"))
    assert mt.memory().num_tensors_held_by_tapes == before.num_tensors_held_by_tapes
    out.dispose()
    assert mt.memory().num_tensors == before.num_tensors


def test_the_only_op_no_tape_records_is_stop_gradient() -> None:
    assert [name for name, op in OPS.items() if not op.differentiable] == ["stop_gradient"]
    x = mt.tensor([1.0, 2.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.stop_gradient(x) * 3.0
    assert tape.operations == [] and y.data_sync() == [3.0, 6.0]
    assert tape.gradient(y, x) is None  # TensorFlow's None for a source the target does not depend on


# -- second derivatives by nesting tapes, compared with differences of the first --


@pytest.mark.parametrize(
    ("name", "f", "x0"),
    [
        ("exp", mt.exp, 0.3),
        ("tanh", mt.tanh, 0.7),
        ("sigmoid", mt.sigmoid, -0.4),
        ("log", mt.log, 1.7),
        ("sqrt", mt.sqrt, 2.0),
        ("sin", mt.sin, 0.9),
        ("pow", lambda x: x ** 3.0, 1.3),
        ("div", lambda x: 1.0 / x, 0.8),
    ],
)
def test_nested_tapes_give_second_derivative(name: str, f: object, x0: float) -> None:
    fn = f  # the lambda or op

    def first(v: float) -> float:
        x = mt.scalar(v)
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)  # type: ignore[operator]
        g = tape.gradient(y, x)
        assert g is not None
        return g.item()

    x = mt.scalar(x0)
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)  # type: ignore[operator]
        dy = inner.gradient(y, x)
    assert dy is not None
    d2 = outer.gradient(dy, x)
    assert d2 is not None
    eps = 1e-6
    numeric = (first(x0 + eps) - first(x0 - eps)) / (2 * eps)
    assert d2.item() == pytest.approx(numeric, rel=1e-5, abs=1e-7), name
    assert mt.grad(mt.grad(fn))(mt.scalar(x0)).item() == pytest.approx(numeric, rel=1e-5, abs=1e-7)  # type: ignore[arg-type]


def test_third_derivative_of_tanh_stays_connected() -> None:
    t = math.tanh(0.5)
    expected = -2 * (1 - t * t) * (1 - 3 * t * t)  # d³/dx³ tanh
    d3 = mt.grad(mt.grad(mt.grad(mt.tanh)))(mt.scalar(0.5))
    assert d3.item() == pytest.approx(expected, rel=1e-9)


# -- hypothesis: random broadcast-compatible shapes --------------------------------

dims = st.integers(min_value=1, max_value=3)


@st.composite
def broadcast_pair(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    out = draw(st.lists(dims, min_size=0, max_size=3))
    a = [d if draw(st.booleans()) else 1 for d in out]
    b = [d if draw(st.booleans()) else 1 for d in out]
    a = a[draw(st.integers(0, len(a))) :]
    b = b[draw(st.integers(0, len(b))) :]
    return tuple(a), tuple(b)


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow"]


@settings(max_examples=60, deadline=None)
@given(pair=broadcast_pair(), name=st.sampled_from(BINARY), seed=st.integers(0, 10_000))
def test_binary_ops_broadcast_gradients(pair: tuple[tuple[int, ...], tuple[int, ...]], name: str, seed: int) -> None:
    sa, sb = pair
    rng = random.Random(seed)

    def values(shape: tuple[int, ...], positive: bool) -> mt.Tensor:
        n = math.prod(shape)
        # distinct magnitudes keep maximum/minimum away from ties
        vals = [(0.5 + 0.37 * i + rng.random() * 0.1) * (1 if positive or rng.random() < 0.5 else -1) for i in range(n)]
        return mt.tensor(vals, shape=shape)

    x = values(sa, positive=name in ("pow", "div"))
    y = values(sb, positive=name in ("div",)) + (0.123 if name in ("maximum", "minimum") else 0.0)
    fn = getattr(mt, name)
    out = fn(x, y)
    assert out.shape == mt.ones(sa).broadcast_to(out.shape).shape
    report = mt.check_grads(fn, [x, y])
    assert report.ok, str(report)


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(dims, min_size=1, max_size=3).map(tuple),
    data=st.data(),
    keepdims=st.booleans(),
    name=st.sampled_from(["sum", "max", "logsumexp", "mean"]),
)
def test_reductions_over_random_axes(shape: tuple[int, ...], data: st.DataObject, keepdims: bool, name: str) -> None:
    rank = len(shape)
    axis = data.draw(
        st.one_of(
            st.none(),
            st.integers(-rank, rank - 1),
            st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True).map(tuple),
        )
    )
    n = math.prod(shape)
    x = mt.tensor([0.1 + 0.713 * ((i * 7919) % 23) for i in range(n)], shape=shape)
    fn = getattr(mt, name)
    out = fn(x, axis=axis, keepdims=keepdims)
    assert out.rank == (rank if keepdims else rank - len(set(range(rank)) if axis is None else {a % rank for a in ([axis] if isinstance(axis, int) else axis)}))
    mt.check_grads(lambda t: fn(t, axis=axis, keepdims=keepdims), [x]).raise_if_failed()


# -- forward values -----------------------------------------------------------------


def test_reflected_operators() -> None:
    x = mt.tensor([1.0, 2.0])
    assert (2.0 * x).data_sync() == [2.0, 4.0]
    assert (1 - x).data_sync() == [0.0, -1.0]
    assert (1 / x).data_sync() == [1.0, 0.5]
    assert (2 ** x).data_sync() == [2.0, 4.0]
    assert (x ** 2).data_sync() == [1.0, 4.0]
    assert (-x).data_sync() == [-1.0, -2.0]
    assert abs(mt.tensor([-3.0])).data_sync() == [3.0]
    assert (+x) is x
    assert ([[1.0, 0.0], [0.0, 1.0]] @ x).data_sync() == [1.0, 2.0]


def test_reductions_values() -> None:
    x = mt.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    assert mt.sum(x).item() == 21.0
    assert x.sum(axis=0).data_sync() == [5.0, 7.0, 9.0]
    assert x.sum(axis=-1, keepdims=True).shape == (2, 1)
    assert x.sum(axis=(0, 1)).shape == ()
    assert x.max(axis=1).data_sync() == [5.0, 6.0]
    assert x.min(axis=0).data_sync() == [1.0, 2.0, 3.0]
    assert x.mean().item() == 3.5
    assert mt.logsumexp(mt.tensor([0.0, 0.0])).item() == pytest.approx(math.log(2))
    assert mt.softmax(x).sum(axis=-1).data_sync() == pytest.approx([1.0, 1.0])


def test_matmul_shapes() -> None:
    a = mt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert (a @ mt.ones((2, 4))).shape == (3, 4)
    assert (a @ mt.ones((2,))).shape == (3,)
    assert (mt.ones((3,)) @ a).shape == (2,)
    assert (mt.tensor([1.0, 2.0]) @ mt.tensor([3.0, 4.0])).item() == 11.0
    with pytest.raises(mt.ShapeError, match="inner dimensions") as info:
        a @ mt.ones((3, 3))
    assert info.value.shapes == ((3, 2), (3, 3))
    with pytest.raises(mt.ShapeError, match="rank 3"):
        mt.ones((2, 2, 2)) @ a


def test_shape_ops_values_and_errors() -> None:
    x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.reshape((3, -1)).tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    assert x.T.tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert mt.concat([x, x], axis=0).shape == (4, 3)
    assert mt.stack([x, x], axis=2).shape == (2, 3, 2)
    assert mt.slice(x, (1, 1), (1, 2)).tolist() == [[5.0, 6.0]]
    assert mt.pad(mt.tensor([1.0]), [(1, 1)], constant_value=9.0).data_sync() == [9.0, 1.0, 9.0]
    assert mt.where(mt.tensor([1.0, 0.0, 1.0]), x, mt.scalar(0.0)).tolist() == [[1.0, 0.0, 3.0], [4.0, 0.0, 6.0]]
    with pytest.raises(mt.ShapeError, match="6 entries"):
        x.reshape((4, 2))
    with pytest.raises(mt.ShapeError, match="-1"):
        x.reshape((4, -1))
    with pytest.raises(mt.InvalidArgumentError, match="permutation"):
        x.transpose((0, 0))
    with pytest.raises(mt.ShapeError, match="differ"):
        mt.concat([x, mt.ones((2, 2))], axis=0)
    with pytest.raises(mt.InvalidArgumentError, match="concat"):
        mt.concat(x)  # type: ignore[arg-type]
    with pytest.raises(mt.ShapeError):
        mt.stack([x, mt.ones((3, 2))])
    with pytest.raises(mt.InvalidArgumentError, match="begin"):
        mt.slice(x, (0, 2), (2, 2))
    with pytest.raises(mt.ShapeError, match="broadcast_to"):
        mt.broadcast_to(x, (3, 3))


def test_clip_by_value_is_inclusive_and_checks_bounds() -> None:
    x = mt.tensor([-2.0, -1.0, 0.5, 1.0, 2.0])
    assert mt.clip_by_value(x, -1, 1).data_sync() == [-1.0, -1.0, 0.5, 1.0, 1.0]
    g = mt.grad(lambda t: mt.clip_by_value(t, -1, 1))(x)
    assert g.data_sync() == [0.0, 1.0, 1.0, 1.0, 0.0]  # gradient flows at the bounds, as in TF.js
    with pytest.raises(mt.InvalidArgumentError, match="clip_value_min"):
        mt.clip_by_value(x, 1, -1)


def test_numbers_and_lists_are_converted_by_functions() -> None:
    assert mt.add([1.0, 2.0], 1.0).data_sync() == [2.0, 3.0]  # type: ignore[arg-type]
    assert mt.maximum(mt.tensor([1.0, -1.0]), 0.0).data_sync() == [1.0, 0.0]  # type: ignore[arg-type]
    with pytest.raises(mt.InvalidArgumentError, match="'a'"):
        mt.exp("a")  # type: ignore[arg-type]
    with pytest.raises(mt.InvalidArgumentError, match="extra positional"):
        mt.sum(mt.ones((2,)), 0, False, "x")  # type: ignore[call-arg]


# -- IEEE-754: no Python arithmetic error escapes an op -------------------------------


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (lambda: mt.tensor([1.0, -1.0, 0.0]) / 0.0, [math.inf, -math.inf, math.nan]),
        (lambda: mt.tensor([1.0]) / mt.tensor([-0.0]), [-math.inf]),
        (lambda: mt.log(mt.tensor([0.0, -1.0, 1.0])), [-math.inf, math.nan, 0.0]),
        (lambda: mt.sqrt(mt.tensor([-1.0, 4.0])), [math.nan, 2.0]),
        (lambda: mt.exp(mt.tensor([1000.0, 0.0, -1000.0])), [math.inf, 1.0, 0.0]),
        (lambda: mt.tensor([-8.0, 0.0, 10.0, -10.0]) ** mt.tensor([1 / 3, -1.0, 400.0, 401.0]), [math.nan, math.inf, math.inf, -math.inf]),
        (lambda: mt.sin(mt.tensor([math.inf])), [math.nan]),
        (lambda: mt.cos(mt.tensor([-math.inf, 0.0])), [math.nan, 1.0]),
        (lambda: mt.tensor([1e308]) * 10.0, [math.inf]),
        (lambda: mt.sigmoid(mt.tensor([-1e6, 1e6, math.nan])), [0.0, 1.0, math.nan]),
        (lambda: mt.relu(mt.tensor([math.nan])), [math.nan]),
        (lambda: mt.max(mt.tensor([1.0, math.nan, 3.0])).reshape((1,)), [math.nan]),
        (lambda: mt.max(mt.tensor([[1.0, math.nan], [2.0, 0.0]]), axis=1), [math.nan, 2.0]),
        (lambda: mt.maximum(mt.tensor([math.nan, 1.0]), mt.tensor([0.0, math.nan])), [math.nan, math.nan]),
        (lambda: mt.logsumexp(mt.tensor([-math.inf, -math.inf])).reshape((1,)), [-math.inf]),
        (lambda: mt.sign(mt.tensor([math.nan, -0.0])), [math.nan, 0.0]),
    ],
)
def test_ieee_semantics(expr: object, expected: list[float]) -> None:
    out = expr().data_sync()  # type: ignore[operator]
    assert len(out) == len(expected)
    for got, want in zip(out, expected):
        assert (math.isnan(got) and math.isnan(want)) or got == want, (out, expected)


def test_nan_propagates_through_vjps() -> None:
    x = mt.tensor([math.nan, 1.0])
    for fn in (mt.exp, mt.tanh, mt.sigmoid, mt.square, mt.sin):
        g = mt.grad(fn)(x).data_sync()
        assert math.isnan(g[0]) and math.isfinite(g[1]), fn


def test_constant_exponent_keeps_backward_finite() -> None:
    # d/dx x**3 at a negative x is fine; the exponent's gradient must not put NaN anywhere
    with mt.detect_anomaly():
        g = mt.grad(lambda t: t ** 3.0)(mt.tensor([-2.0]))
    assert g.data_sync() == [12.0]


# -- kinks and ties: the documented conventions ---------------------------------------


def test_kink_conventions() -> None:
    zero = mt.tensor([0.0])
    assert mt.grad(mt.relu)(zero).data_sync() == [0.0]
    assert mt.grad(mt.abs)(zero).data_sync() == [0.0]
    a = mt.tensor([2.0])
    # maximum(a, a): the whole gradient goes to the first argument, so d/da is 1
    assert mt.grad(lambda t: mt.maximum(t, t))(a).data_sync() == [1.0]
    gx, gy = mt.grads(lambda x, y: mt.maximum(x, y))([mt.tensor([1.0]), mt.tensor([1.0])])
    assert (gx.item(), gy.item()) == (1.0, 0.0)
    gx, gy = mt.grads(lambda x, y: mt.minimum(x, y))([mt.tensor([1.0]), mt.tensor([1.0])])
    assert (gx.item(), gy.item()) == (1.0, 0.0)
    # max over ties splits the gradient evenly
    assert mt.grad(mt.max)(mt.tensor([3.0, 1.0, 3.0, 3.0])).data_sync() == pytest.approx([1 / 3, 0.0, 1 / 3, 1 / 3])
    assert mt.grad(lambda t: mt.max(t, axis=1))(mt.tensor([[1.0, 1.0], [0.0, 2.0]])).tolist() == [[0.5, 0.5], [0.0, 1.0]]
