"""Workload ``function``: steps traced once with ``mt.function`` and replayed.

Rows (each replay is checked bit for bit against the eager step first; the
trace, the first call, is not timed):

* the 20,000-op chain of ``chain.py`` (``GradientTape`` + ``gradient`` inside
  the function) replayed, against the tuple tape (target ``<= 2x``);
* the MLP step of ``mlp.py`` (tape, gradient, ``assign_sub``) replayed,
  against the hand-written lists (target ``<= 1.1x``);
* chapter 6's training loop (``fit``: ``opt.minimize(f, return_cost=True)``
  on the four-point linear model, loss read with ``item()`` after each step)
  eager against replayed (target: replayed ``>= 3x`` faster);
* the step of ``dashboard --demo`` (the recurrent net of chapter 6, 20 time
  steps, batch 16, 8 hidden units: ``variable_grads`` + SGD; the monitor and
  the page read the returned gradients outside the traced function; the
  demo's clipped phase is left out, as it was when ``clip_by_global_norm`` read
  the norm with ``item()`` and could not be traced) eager against replayed
  (target ``>= 3x``);
* per op (information): one op of each kind, eager inside ``tidy`` against
  the same op replayed, time per op;
* the guards (information): for each replayed step above, the check that every
  value its program depends on is unchanged (``guards.py``), alone, against the
  whole replayed call: the time the guards add to each call.

Two prototypes, information rows, measure what the two replay targets that
are missed would take:

* the MLP step replayed with the builtin ``sum`` in place of ``math.fsum``
  (in microtape's kernels, which the replay calls too, swapped for that row only):
  the same step as the hand-written lists, the same arithmetic, so it shows
  what the exactly rounded sum costs the replay (microtape keeps ``fsum``:
  the same bits on every Python version, and the replay gives the eager
  step's bits);
* the demo step's dot products alone, on lists (every matrix product the
  step's forward and backward pass compute, the rest left out), against the
  eager step: the most any replay that computes the same floats can gain,
  with ``fsum`` and with the builtin ``sum``.

Run: ``python bench/function.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import contextlib
import math
import operator
import random
import sys
import types
from typing import Any
from collections.abc import Callable, Iterator

import chain
import mlp
import microtape as mt
import microtape.ops.kernels
from _timing import Config, Row, Timing, compare, fmt_time, ratio_row


def _guard_row(label: str, step: mt.Function[..., Any], replayed: Callable[[], object], cfg: Config) -> Row:
    """The guards' check of ``step``'s latest program alone (a), against the whole replayed call (b)."""
    program = step._last
    assert program is not None and program.check() == -1  # every guard holds: the replay is what is timed
    t = compare(program.check, replayed, cfg)
    n = len(program.guards)
    return Row(f"  guards: {label}, {n} checked per call", fmt_time(t.a), fmt_time(t.b), t.ratio,
               "(info: share of the call)", None)


def _speedup_row(workload: str, t: Timing, limit: float) -> Row:
    """``t`` compares eager (a) with replayed (b): the ratio is the speed-up, the target ``>= limit``."""
    return Row(workload, fmt_time(t.b), fmt_time(t.a), t.ratio, f">= {limit:g}x faster", t.ratio >= limit, None)


def chain_rows(cfg: Config) -> list[Row]:
    n = 500 if cfg.quick else 20_000
    prog = chain.program(n)

    def body(x: mt.Tensor) -> tuple[mt.Tensor, mt.Tensor | None]:
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for name, c in prog:
                if name == "mul":
                    y = y * c
                elif name == "add":
                    y = y + c
                else:
                    y = mt.tanh(y)
        return y, tape.gradient(y, x)

    step = mt.function(body)
    x = mt.keep(mt.scalar(chain.X0))

    def replayed() -> tuple[float, float]:
        y, g = step(x)
        assert g is not None
        out = y.item(), g.item()
        mt.dispose([y, g])
        return out

    first = replayed()  # the trace
    assert first == replayed() == chain.tape_chain(prog), (first, chain.tape_chain(prog))
    t = compare(replayed, lambda: chain.plain_chain(prog), cfg)
    row = ratio_row(f"chain of {n:,} scalar ops, fwd+bwd, replayed, vs tuple tape", t, 2.0)
    per = f"{t.a / n * 1e6:.2f} µs/op"
    GUARDS.append(_guard_row(f"the chain (its {n:,}-entry list of ops)", step, replayed, cfg))
    x.dispose()
    return [Row(row.workload, f"{row.microtape} ({per})", row.baseline, row.ratio, row.target, row.met, row.limit)]


GUARDS: list[Row] = []
"""The guard rows, made by each workload while its step is alive, printed after the others."""


def replayed_mlp_step(model: mlp.TapeMLP, steps: list[mt.Function[..., Any]] | None = None) -> Callable[[], float]:
    """The MLP step of ``mlp.py`` (tape, gradient, ``assign_sub``) under ``mt.function``; returns the loss."""

    def body() -> mt.Tensor:
        with mt.GradientTape() as tape:
            loss = model.loss()
        grads = tape.gradient(loss, model.params)
        for v, g in zip(model.params, grads):
            assert g is not None
            v.assign_sub(g * mlp.LR)
        return loss

    step = mt.function(body)
    if steps is not None:
        steps.append(step)

    def replayed() -> float:
        loss = step()
        value = loss.item()
        loss.dispose()
        return value

    return replayed


def mlp_rows(cfg: Config) -> list[Row]:
    xs, ys = mlp.two_moons(20 if cfg.quick else 100)
    p = mlp.init_params()
    eager_model = mlp.TapeMLP(p, xs, ys)
    model = mlp.TapeMLP(p, xs, ys)
    steps: list[mt.Function[..., Any]] = []
    replayed = replayed_mlp_step(model, steps)
    for _ in range(3):
        assert replayed() == eager_model.step()
    assert [v.data_sync() for v in model.params] == [v.data_sync() for v in eager_model.params]
    plain_p = [[row[:] for row in m] for m in p]
    for _ in range(3):
        mlp.plain_step(plain_p, xs, ys)
    assert math.isclose(replayed(), mlp.plain_step(plain_p, xs, ys), rel_tol=1e-9)
    try:
        t = compare(replayed, lambda: mlp.plain_step(plain_p, xs, ys), cfg)
        GUARDS.append(_guard_row("the MLP step", steps[0], replayed, cfg))
    finally:
        model.dispose()
        eager_model.dispose()
    n = 20 if cfg.quick else 100
    return [ratio_row(f"MLP 2-16-16-1 step, {n} points, replayed, vs lists", t, 1.1)]


@contextlib.contextmanager
def builtin_sum() -> Iterator[None]:
    """Inside: microtape's kernels (the replay's too) add with ``sum`` where they call ``math.fsum`` (a prototype)."""
    modules = [microtape.ops.kernels]
    swapped = types.SimpleNamespace(**{k: getattr(math, k) for k in dir(math) if not k.startswith("_")})
    swapped.fsum = sum
    for m in modules:
        setattr(m, "math", swapped)
    try:
        yield
    finally:
        for m in modules:
            setattr(m, "math", math)


def mlp_sum_rows(cfg: Config) -> list[Row]:
    """The MLP replay with the builtin sum: what would meet the 1.1x target (a prototype, not microtape's numbers)."""
    xs, ys = mlp.two_moons(20 if cfg.quick else 100)
    p = mlp.init_params()
    with builtin_sum():
        model = mlp.TapeMLP(p, xs, ys)
        replayed = replayed_mlp_step(model)
        plain_p = [[row[:] for row in m] for m in p]
        for _ in range(3):
            assert math.isclose(replayed(), mlp.plain_step(plain_p, xs, ys), rel_tol=1e-12)
        try:
            t = compare(replayed, lambda: mlp.plain_step(plain_p, xs, ys), cfg)
        finally:
            model.dispose()
    return [Row("  prototype: MLP replayed with builtin sum for fsum, vs lists", fmt_time(t.a), fmt_time(t.b), t.ratio, "(info)", None)]


def fit_rows(cfg: Config) -> list[Row]:
    x, y = mt.keep(mt.tensor1d([1, 2, 3, 4])), mt.keep(mt.tensor1d([1, 3, 5, 7]))

    steps: list[mt.Function[..., Any]] = []

    def fitter(traced: bool) -> Callable[[], float]:
        w, b = mt.variable(mt.scalar(0.0)), mt.variable(mt.scalar(0.0))
        opt = mt.train.adam(0.01)

        def step() -> mt.Tensor:
            return opt.minimize(lambda: ((x * w + b - y) ** 2).mean(), return_cost=True)

        run = mt.function(step) if traced else step
        if traced:
            steps.append(run)  # type: ignore[arg-type]  # a Function when traced

        def one() -> float:
            cost = run()
            value = cost.item()
            cost.dispose()
            return value

        return one

    eager, replayed = fitter(False), fitter(True)
    for _ in range(5):
        assert eager() == replayed()
    t = compare(eager, replayed, cfg)
    GUARDS.append(_guard_row("chapter 6 fit step", steps[0], replayed, cfg))
    mt.dispose([x, y])
    return [_speedup_row("chapter 6 fit step (adam, 4 points), replayed vs eager", t, 3.0)]


def rnn_rows(cfg: Config) -> list[Row]:
    steps, hidden, batch = (5, 4, 4) if cfg.quick else (20, 8, 16)
    rng = random.Random(0)
    inputs = [mt.keep(mt.tensor([rng.uniform(-1, 1) for _ in range(batch)], shape=(batch, 1))) for _ in range(steps)]
    scale = 1 / math.sqrt(hidden)
    start = [mt.random_normal((hidden, hidden), stddev=scale, seed=2) * 2.0,
             mt.random_normal((1, hidden), seed=3), mt.random_normal((hidden, 1), stddev=scale, seed=4)]

    traced_steps: list[mt.Function[..., Any]] = []

    def maker(traced: bool) -> Callable[[], float]:
        params = [mt.variable(t) for t in start]
        opt = mt.train.sgd(0.05)
        monitor = mt.GradientMonitor()

        def loss() -> mt.Tensor:
            h = mt.zeros((batch, hidden))
            for x_t in inputs:
                h = mt.tanh(h @ params[0] + x_t @ params[1])
            return ((h @ params[2] - inputs[0]) ** 2).mean()

        def step() -> tuple[mt.Tensor, dict[str, mt.Tensor | None]]:
            value, grads = mt.variable_grads(loss)
            opt.apply_gradients(grads)
            return value, {n: grads[p] for n, p in zip("WUV", params)}

        run: Callable[[], tuple[mt.Tensor, dict[str, mt.Tensor | None]]] = (
            mt.function(step) if traced else (lambda: mt.tidy(step))
        )
        if traced:
            traced_steps.append(run)  # type: ignore[arg-type]  # a Function when traced

        def one() -> float:
            value, raw = run()
            monitor.record(raw)
            out = value.item()
            mt.dispose([value, *[g for g in raw.values() if g is not None]])
            return out

        return one

    eager, replayed = maker(False), maker(True)
    for _ in range(3):
        assert eager() == replayed()
    t = compare(eager, replayed, cfg)
    GUARDS.append(_guard_row("dashboard --demo step", traced_steps[0], replayed, cfg))
    rows = [_speedup_row(f"dashboard --demo step (RNN {steps}x{batch}x{hidden}), replayed vs eager", t, 3.0)]
    # the floor: the products of matrices this step computes, and nothing else (the shapes of its program)
    dots = [((batch, hidden), (hidden, hidden))] * (2 * steps - 1)  # h @ W forward, dz @ W.T backward (not at h0)
    dots += [((hidden, batch), (batch, hidden))] * steps  # h.T @ dz: the gradient of W
    dots += [((1, batch), (batch, hidden))] * steps  # x.T @ dz: the gradient of U
    dots += [((batch, hidden), (hidden, 1)), ((hidden, batch), (batch, 1)), ((batch, 1), (1, hidden))]  # V's three
    mats = [(_matrix(rng, a), _matrix(rng, b)) for a, b in dots]
    for name, total in (("fsum", math.fsum), ("builtin sum", sum)):

        def floor(total: Callable[[Iterator[float]], float] = total) -> None:
            for a, b in mats:
                cols = list(zip(*b))
                [[total(map(operator.mul, row, c)) for c in cols] for row in a]

        f = compare(eager, floor, cfg)
        rows.append(Row(f"  floor: the demo step's dot products alone ({name}), vs eager", fmt_time(f.b), fmt_time(f.a), f.ratio,
                        "(info: most a replay gains)", None))
    mt.dispose(start)
    return rows


def _matrix(rng: random.Random, shape: tuple[int, int]) -> list[list[float]]:
    return [[rng.uniform(-1.0, 1.0) for _ in range(shape[1])] for _ in range(shape[0])]


PER_OP: list[tuple[str, Callable[[mt.Tensor, mt.Tensor], mt.Tensor], tuple[int, ...]]] = [
    ("mul ()", lambda a, b: a * b, ()),
    ("add ()", lambda a, b: a + b, ()),
    ("tanh ()", lambda a, b: mt.tanh(a), ()),
    ("mul (16, 8)", lambda a, b: a * b, (16, 8)),
    ("relu (16, 8)", lambda a, b: mt.relu(a), (16, 8)),
    ("matmul (8, 8)", lambda a, b: a @ b, (8, 8)),
]
"""Each op is chained k times (out = op(out, b)), so the replay keeps every one."""


def per_op_rows(cfg: Config) -> list[Row]:
    rows: list[Row] = []
    k = 10 if cfg.quick else 200
    for label, op, shape in PER_OP:
        a = mt.keep(mt.random_normal(shape, seed=1))
        b = mt.keep(mt.random_uniform(shape, 0.99, 1.01, seed=2) if "matmul" not in label
                    else mt.random_normal(shape, stddev=1 / math.sqrt(8), seed=2))

        def body(x: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
            out = x
            for _ in range(k):
                out = op(out, y)
            return out

        step = mt.function(body)
        step(a, b).dispose()
        assert len(step.program) == k + 2  # header, k ops, return
        t = compare(lambda: mt.tidy(lambda: body(a, b)).dispose(), lambda: step(a, b).dispose(), cfg)
        rows.append(Row(f"  per op: {label}, eager vs replayed", fmt_time(t.a / k), fmt_time(t.b / k), t.ratio, "(info)", None))
        mt.dispose([a, b])
    return rows


def run(cfg: Config) -> list[Row]:
    GUARDS.clear()
    rows = [*chain_rows(cfg), *mlp_rows(cfg), *mlp_sum_rows(cfg), *fit_rows(cfg), *rnn_rows(cfg), *per_op_rows(cfg)]
    return rows + GUARDS


if __name__ == "__main__":
    import os
    import runpy

    sys.argv = [sys.argv[0], "--only", "function", *sys.argv[1:]]
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"), run_name="__main__")
