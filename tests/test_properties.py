"""Property-based tests (hypothesis): random expression graphs, algebraic laws of
gradients, and random tidy/keep/dispose sequences."""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import microtape as mt
from microtape.engine import arena as _runtime
from microtape.ops.index_maps import broadcast_shapes

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Each op keeps to a safe domain: positive arguments for log/sqrt/pow bases,
# bounded arguments for exp, denominators away from zero.
UNARY: dict[str, Callable[[mt.Tensor], mt.Tensor]] = {
    "exp": lambda x: mt.exp(mt.tanh(x)),
    "log": lambda x: mt.log(mt.square(x) + 0.5),
    "sqrt": lambda x: mt.sqrt(mt.square(x) + 0.5),
    "tanh": mt.tanh,
    "sigmoid": mt.sigmoid,
    "sin": mt.sin,
    "cos": mt.cos,
    "neg": mt.neg,
    "square": mt.square,
    "softmax": lambda x: mt.softmax(x) if x.rank else x,
    "log_softmax": lambda x: mt.log_softmax(x) if x.rank else x,
    "transpose": mt.transpose,
    "flatten": lambda x: x.reshape((-1,)),
}
BINARY: dict[str, Callable[[mt.Tensor, mt.Tensor], mt.Tensor]] = {
    "add": mt.add,
    "sub": mt.sub,
    "mul": mt.mul,
    "div": lambda x, y: x / (mt.square(y) + 0.5),
    "pow": lambda x, y: (mt.square(x) + 0.5) ** mt.tanh(y),
    "maximum": mt.maximum,
    "minimum": mt.minimum,
}
REDUCE = ["sum", "mean", "max", "logsumexp"]
SMOOTH_UNARY = [k for k in UNARY]
SMOOTH_BINARY = ["add", "sub", "mul", "div", "pow"]

Step = tuple[str, tuple[int, ...], object]


def _values(data: st.DataObject, shape: tuple[int, ...]) -> mt.Tensor:
    n = math.prod(shape)
    vals = data.draw(st.lists(st.floats(-1.5, 1.5, allow_nan=False), min_size=n, max_size=n))
    # nudge apart equal values so maximum/minimum and max have no ties
    vals = [v + 1e-3 * i for i, v in enumerate(vals)]
    return mt.tensor(vals, shape=shape)


def _program(data: st.DataObject, smooth: bool) -> tuple[list[mt.Tensor], list[Step]]:
    base = tuple(data.draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    n_inputs = data.draw(st.integers(1, 3))
    shapes = []
    for _ in range(n_inputs):
        keep = [d if data.draw(st.booleans()) else 1 for d in base]
        shapes.append(tuple(keep[data.draw(st.integers(0, len(keep))) :]))
    inputs = [_values(data, s) for s in shapes]
    env_shapes = [x.shape for x in inputs]
    steps: list[Step] = []
    for _ in range(data.draw(st.integers(1, 6))):
        kinds = ["unary", "binary"] + ([] if smooth else ["reduce"])
        kind = data.draw(st.sampled_from(kinds))
        i = data.draw(st.integers(0, len(env_shapes) - 1))
        if kind == "binary":
            partners = [j for j, s in enumerate(env_shapes) if _fits(env_shapes[i], s)]
            j = data.draw(st.sampled_from(partners))
            name = data.draw(st.sampled_from(SMOOTH_BINARY if smooth else list(BINARY)))
            steps.append((name, (i, j), None))
            env_shapes.append(broadcast_shapes(env_shapes[i], env_shapes[j]))
        elif kind == "reduce" and env_shapes[i]:
            name = data.draw(st.sampled_from(REDUCE))
            axis = data.draw(st.sampled_from([None, 0, -1]))
            steps.append((name, (i,), axis))
            env_shapes.append(mt.ones(env_shapes[i]).sum(axis=axis).shape)
        else:
            name = data.draw(st.sampled_from(SMOOTH_UNARY))
            steps.append((name, (i,), None))
            shape = env_shapes[i]
            env_shapes.append(tuple(reversed(shape)) if name == "transpose" else (math.prod(shape),) if name == "flatten" else shape)
    return inputs, steps


def _fits(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        broadcast_shapes(a, b)
    except mt.ShapeError:
        return False
    return True


def _replay(steps: list[Step]) -> Callable[..., mt.Tensor]:
    def f(*xs: mt.Tensor) -> mt.Tensor:
        env = list(xs)
        for name, args, param in steps:
            if name in BINARY:
                env.append(BINARY[name](env[args[0]], env[args[1]]))
            elif name in UNARY:
                env.append(UNARY[name](env[args[0]]))
            else:
                env.append(getattr(mt, name)(env[args[0]], axis=param))
        return env[-1]

    return f


@SETTINGS
@given(data=st.data())
def test_random_graphs_match_finite_differences(data: st.DataObject) -> None:
    inputs, steps = _program(data, smooth=False)
    report = mt.check_grads(_replay(steps), inputs)
    assert report.ok, f"{steps}\n{report}"


@SETTINGS
@given(data=st.data())
def test_random_smooth_graphs_second_order(data: st.DataObject) -> None:
    inputs, steps = _program(data, smooth=True)
    report = mt.check_grads(_replay(steps), inputs, order=2, mode="fast")
    assert report.ok, f"{steps}\n{report}"


@SETTINGS
@given(data=st.data())
def test_gradient_laws(data: st.DataObject) -> None:
    inputs, steps = _program(data, smooth=True)
    f = _replay(steps)
    # grad and tape.gradient agree
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(inputs)
        y = f(*inputs)
    via_tape = tape.gradient(y, inputs, unconnected_gradients="zero")
    via_grads = mt.grads(lambda *xs: f(*xs) + 0.0 * sum_all(xs))(inputs)
    for a, b in zip(via_tape, via_grads):
        assert a is not None
        assert a.data_sync() == b.data_sync()
    # linearity of the VJP in dy: g(2·dy1 + dy2) = 2·g(dy1) + g(dy2)
    dy1, dy2 = _values(data, y.shape), _values(data, y.shape)
    g1 = tape.gradient(y, inputs, output_gradients=dy1, unconnected_gradients="zero")
    g2 = tape.gradient(y, inputs, output_gradients=dy2, unconnected_gradients="zero")
    g12 = tape.gradient(y, inputs, output_gradients=dy1 * 2.0 + dy2, unconnected_gradients="zero")
    for a1, a2, a12 in zip(g1, g2, g12):
        assert a1 is not None and a2 is not None and a12 is not None
        for u, v, w in zip(a1.data_sync(), a2.data_sync(), a12.data_sync()):
            assert math.isclose(2 * u + v, w, rel_tol=1e-9, abs_tol=1e-9)
    # jacobian rows equal the gradients of each output
    j = tape.jacobian(y, inputs[0], unconnected_gradients="zero")
    assert j is not None and j.shape == y.shape + inputs[0].shape
    rows = j.reshape((max(y.size, 1) if y.size else 0, -1)).tolist() if y.size and inputs[0].size else []
    for k, row in enumerate(rows):  # type: ignore[arg-type]
        onehot = [0.0] * y.size
        onehot[k] = 1.0
        g = tape.gradient(y, inputs[0], output_gradients=mt.tensor(onehot, shape=y.shape), unconnected_gradients="zero")
        assert g is not None and g.data_sync() == row
    tape.release()


def sum_all(xs: tuple[mt.Tensor, ...]) -> mt.Tensor:
    total = mt.scalar(0.0)
    for x in xs:
        total = total + x.sum()
    return total


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple))
def test_gradient_of_sum_is_ones(shape: tuple[int, ...]) -> None:
    x = mt.random_normal(shape, seed=1)
    assert mt.grad(lambda t: t.sum())(x).data_sync() == [1.0] * x.size
    assert mt.grad(lambda t: t)(x).data_sync() == [1.0] * x.size  # non-scalar f: gradient of its sum


# -- the arena under random tidy/keep/dispose sequences --------------------------------

Action = st.sampled_from(["make", "op", "dispose", "keep", "tidy", "tidy_raise", "variable"])


@settings(max_examples=60, deadline=None)
@given(script=st.lists(st.tuples(Action, st.integers(0, 1000)), max_size=25))
def test_random_arena_sequences_stay_consistent(script: list[tuple[str, int]]) -> None:
    start = set(_runtime.LIVE)
    mine: list[mt.Tensor] = []
    variables: list[mt.Variable] = []

    def run(actions: list[tuple[str, int]], depth: int) -> list[mt.Tensor]:
        made: list[mt.Tensor] = []
        for action, k in actions:
            live = [t for t in mine if not t.is_disposed]
            if action == "make" or (action in ("op", "dispose", "keep") and not live):
                t = mt.ones((1 + k % 3,))
            elif action == "op":
                t = mt.exp(live[k % len(live)])
            elif action == "dispose":
                live[k % len(live)].dispose()
                continue
            elif action == "keep":
                mt.keep(live[k % len(live)])
                continue
            elif action == "variable":
                variables.append(mt.variable([0.0, 0.0]))
                continue
            elif action == "tidy" and depth < 3:
                inner = actions[: k % 4]
                out = mt.tidy(lambda: run(inner, depth + 1)[-1:])
                made.extend(out)
                continue
            elif action == "tidy_raise" and depth < 3:
                def failing(part: list[tuple[str, int]] = actions[: k % 3]) -> None:
                    run(part, depth + 1)
                    raise ZeroDivisionError("inside tidy")

                try:
                    mt.tidy(failing)
                except ZeroDivisionError:
                    pass
                continue
            else:
                continue
            mine.append(t)
            made.append(t)
        return made

    run(script, 0)
    info = mt.memory()
    live_now = set(_runtime.LIVE) - start
    # every tensor the arena counts is one we made and did not dispose
    assert live_now == {t.id for t in mine if not t.is_disposed}
    for t in mine:
        assert t.is_disposed == (t.id not in _runtime.LIVE)
        if t.is_disposed:
            try:
                t.data_sync()
            except mt.DisposedTensorError:
                pass
            else:
                raise AssertionError("a disposed tensor was readable")
    assert info.num_tensors >= len(live_now)
    st_ = _runtime.STATE.get()
    assert not st_.scopes and not st_.tapes
    for v in variables:
        assert not v.is_disposed  # tidy never disposes variables
    mt.dispose(mine)
    assert set(_runtime.LIVE) - start == set()


# -- numbers in a tensor are always floats ------------------------------------------------------

_EMPTY_OR_SMALL = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)


@SETTINGS
@given(shape=_EMPTY_OR_SMALL, data=st.data())
def test_every_entry_of_every_op_is_a_float(shape: tuple[int, ...], data: st.DataObject) -> None:
    """Whatever goes in (ints, bools, empty shapes), every entry that comes out is a Python float:
    an int 0 from an empty sum would make 1.0 / -s give +inf instead of -inf."""
    n = math.prod(shape)
    raw = data.draw(st.lists(st.one_of(st.integers(-3, 3), st.booleans(), st.floats(-3, 3)), min_size=n, max_size=n))
    x = mt.tensor(raw, shape=shape)
    outs = [x, x.clone(), mt.sum(x), mt.max(x) if n else mt.sum(x), x * 2, 1 - x, mt.relu(x),
            mt.abs(x), mt.sign(x), mt.greater(x, mt.scalar(0.0)), mt.zeros_like(x), mt.where(x, x, 3)]  # type: ignore[arg-type]
    if x.rank:
        outs += [mt.sum(x, axis=0), mt.sum(x, axis=-1, keepdims=True), mt.mean(x, axis=0) if shape[0] else mt.sum(x, axis=0)]
        flat = x.reshape((-1,))
        outs += [flat @ flat, mt.reshape(flat, (1, -1)) @ mt.reshape(flat, (-1, 1)), mt.concat([flat, flat])]
    for out in outs:
        assert all(type(v) is float for v in out.data_sync()), (out.op, out.data_sync())
    assert type(mt.sum(mt.zeros(shape)).item()) is float
