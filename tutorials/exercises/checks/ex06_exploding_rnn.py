"""Checks of ex06_exploding_rnn: clip the gradients of an exploding recurrent net, watch them with a monitor.

Clipping is checked by what it must keep and what it must reach: every
gradient scaled by one and the same positive factor, to a global norm of
max_norm (or left alone below it). The training run is replayed in plain
Python, clipping included, from the file's own data.
"""

from __future__ import annotations

import math
import types
from collections.abc import Sequence

from microtape import GradientMonitor, Tensor, grads, scalar, tensor
from microtape.exercise import Exercise, Fail, close, expect_values, fmt, fn, number, observe, off_by, rng, tensor_fn, tensor_of
from microtape.engine.tensor import format_number

EXERCISE = Exercise("ex06_exploding_rnn", chapter=6, title="In practice: tame an exploding recurrent net with clipping", minutes=15)


def random_grads(total: float) -> list[list[float]]:
    """Two random gradients (of random sizes) whose global norm is ``total``."""
    raw = [[rng().uniform(-1.0, 1.0) for _ in range(rng().randint(1, 4))] for _ in range(2)]
    scale = total / math.sqrt(math.fsum(v * v for g in raw for v in g))
    return [[v * scale for v in g] for g in raw]


def reference_losses(m: types.ModuleType, steps: int, lr: float, max_norm: float) -> list[float]:
    """The losses of SGD with global-norm clipping on the file's recurrent net, by hand."""
    xs = getattr(m, "XS", None)
    if not isinstance(xs, list):
        raise Fail(f"XS is {type(xs).__name__}, expected the list of inputs.")
    xs = [number(x, "XS[...]") for x in xs]
    target = number(getattr(m, "TARGET", None), "TARGET")
    w, u = number(getattr(m, "W0", None), "W0"), number(getattr(m, "U0", None), "U0")
    losses = []
    for _ in range(steps):
        h = dh_dw = dh_du = 0.0
        for x in xs:
            h, dh_dw, dh_du = w * h + u * x, h + w * dh_dw, x + w * dh_du
        losses.append((h - target) ** 2)
        gw, gu = 2.0 * (h - target) * dh_dw, 2.0 * (h - target) * dh_du
        total = math.hypot(gw, gu)
        if total > max_norm:  # scaled together, to the global norm max_norm
            gw, gu = gw * (max_norm / total), gu * (max_norm / total)
        w, u = w - lr * gw, u - lr * gu
    return losses


def norm(ts: Sequence[Tensor]) -> float:
    return math.sqrt(math.fsum(v * v for t in ts for v in t.data_sync()))


def clipped(m: types.ModuleType, gs: list[Tensor], max_norm: float) -> list[Tensor]:
    result = fn(m, "clipped_grads")(gs, max_norm)
    if not isinstance(result, (list, tuple)) or len(result) != len(gs):
        raise Fail(f"clipped_grads(grads, {max_norm}) returned {type(result).__name__} {result!r:.80}, expected a list of {len(gs)} tensors.")
    return [tensor_of(r, f"clipped_grads(...)[{i}]", g.shape) for i, (r, g) in enumerate(zip(result, gs))]


@EXERCISE.check(
    "clipped_grads rescales to the global norm",
    hints=(
        "chapter 6: clipping by the global norm scales every gradient by the same factor",
        "the factor is max_norm divided by the global L2 norm of all gradients together",
        "microtape has an op for exactly this; it returns the clipped list and the norm it measured",
    ),
)
def clip(m: types.ModuleType) -> None:
    max_norm = round(rng().uniform(0.5, 3.0), 2)
    for values, limit in (([[3.0, 4.0], [12.0]], 1.0), (random_grads(max_norm * rng().uniform(2.0, 50.0)), max_norm)):
        gs = [tensor(v) for v in values]
        got = clipped(m, gs, limit)
        total = norm(got)
        what = f"clipped_grads(grads, {limit}) with grads of global norm {format_number(norm(gs))}"
        if total > limit * (1.0 + 1e-9):
            hint = "each gradient was clipped by its own norm: clip by the norm of all of them together" if len(gs) > 1 and all(
                close(norm([r]), min(limit, norm([g])), 1e-9) for r, g in zip(got, gs)) else None
            raise Fail(f"after clipped_grads(grads, {limit}) the global norm is {format_number(total)}, above max_norm.", hint)
        ratios = [r / g for t, v in zip(got, values) for r, g in zip(t.data_sync(), v) if g != 0.0]
        if not ratios or not all(close(q, ratios[0], 1e-9) for q in ratios) or ratios[0] <= 0.0:
            raise Fail(f"{what}: the gradients were not all scaled by the same positive factor, so their direction changed.")
        if not close(total, limit, 1e-9):
            raise Fail(f"{what}: the global norm after clipping should be max_norm exactly, and it is {off_by(total, limit)}.")


@EXERCISE.check(
    "clipped_grads leaves small gradients alone",
    hints=(
        "clip only when the global norm exceeds max_norm",
        "below the limit the factor is 1: the gradients come back unchanged",
        "return the clipped tensors only, in the order they came in",
    ),
)
def small(m: types.ModuleType) -> None:
    max_norm = round(rng().uniform(0.5, 3.0), 2)
    for values, limit in (([[0.1, -0.2], [0.3]], 1.0), (random_grads(max_norm * rng().uniform(0.1, 0.9)), max_norm)):
        got = clipped(m, [tensor(v) for v in values], limit)
        expect_values([v for t in got for v in t.data_sync()], [v for g in values for v in g], f"clipped_grads(grads, {limit}) below the limit, flattened", 1e-12)


def train_rnn(m: types.ModuleType, steps: int) -> tuple[list[float], GradientMonitor]:
    result = fn(m, "train_rnn")(steps, 0.02, 1.0)
    if not (type(result) is tuple and len(result) == 2):
        raise Fail(f"train_rnn(...) returned {type(result).__name__}, expected (losses, monitor).")
    losses, monitor = result
    if not isinstance(losses, list) or len(losses) != steps:
        count = len(losses) if isinstance(losses, list) else "?"
        raise Fail(f"train_rnn({steps}, ...) returned {type(losses).__name__} of {count} losses, expected a list of {steps} floats.")
    if type(monitor) is not GradientMonitor:
        raise Fail(f"train_rnn(...) returned {type(monitor).__name__} as the monitor, expected an mt.GradientMonitor.")
    return [number(v, f"train_rnn(...) loss {i}") for i, v in enumerate(losses)], monitor


@EXERCISE.check(
    "train_rnn converges with clipping",
    hints=(
        "the update must use clipped gradients, or one huge step throws the weights far away",
        "clip the raw gradients with your clipped_grads before they reach the update",
        "the loss should fall by more than 1000x in 100 steps with lr 0.02 and max_norm 1.0",
    ),
)
def train(m: types.ModuleType) -> None:
    losses, _ = train_rnn(m, 100)
    bad = [i for i, v in enumerate(losses) if not math.isfinite(v)]
    if bad:
        raise Fail(f"the loss became {losses[bad[0]]} at step {bad[0]} (losses: {fmt(losses[: bad[0] + 2])}...): the gradients exploded.")
    best = min(losses[-10:])
    if not best < losses[0] * 1e-3:
        raise Fail(f"train_rnn(100, 0.02, 1.0): first loss {format_number(losses[0])}, best of the last 10 {format_number(best)}; expected a drop of more than 1000x.")
    steps, lr, max_norm = rng().randint(2, 6), round(rng().uniform(0.005, 0.05), 3), round(rng().uniform(0.5, 2.0), 2)

    with observe(calls=True) as seen:
        result = fn(m, "train_rnn")(steps, lr, max_norm)
    got = result[0] if type(result) is tuple and len(result) == 2 and type(result[0]) is list else None
    if got is None or len(got) != steps:
        raise Fail(f"train_rnn({steps}, {lr}, {max_norm}) did not return (losses, monitor) with {steps} losses.")
    for i, (value, want) in enumerate(zip(got, reference_losses(m, steps, lr, max_norm))):
        if not close(number(value, f"train_rnn(...) loss {i}"), want, 1e-6):
            if seen.calls.get("clipped_grads") and clip_fails(m):
                raise Fail("train_rnn uses your clipped_grads(), which fails its check above: fix clipped_grads() first.")
            raise Fail(f"train_rnn({steps}, {lr}, {max_norm}): the loss of step {i} is wrong: {off_by(value, want)} from SGD with clipped gradients.")


def clip_fails(m: types.ModuleType) -> bool:
    """Whether the file's clipped_grads fails the fixed case its own check always uses."""
    try:
        got = clipped(m, [tensor([3.0, 4.0]), tensor([12.0])], 1.0)
    except Fail:
        return True
    want = [3.0 / 13.0, 4.0 / 13.0, 12.0 / 13.0]  # norm 13, scaled to 1
    return not all(close(v, w, 1e-9) for v, w in zip([v for t in got for v in t.data_sync()], want))


@EXERCISE.check(
    "the monitor saw the explosion",
    hints=(
        "chapter 6: a GradientMonitor records gradient norms step by step",
        "record the raw gradients, before clipping, once per step, under the names 'w' and 'u'",
        "keep the monitor's default thresholds, so it flags the explosion",
    ),
)
def monitor(m: types.ModuleType) -> None:
    w0, u0 = number(getattr(m, "W0", None), "W0"), number(getattr(m, "U0", None), "U0")
    raw = grads(tensor_fn(m, "loss_fn"))([scalar(w0), scalar(u0)])
    want = norm(raw)
    steps = rng().randint(2, 6)
    _, mon = train_rnn(m, steps)
    if len(mon.global_norms) != steps:
        raise Fail(f"train_rnn({steps}, ...) recorded {len(mon.global_norms)} steps in the monitor, expected one per step ({steps}).")
    first = mon.global_norms[0]
    if not close(first, want, 1e-6):
        clipped_first = close(first, 1.0, 1e-6) or first < 1.0 + 1e-9
        raise Fail(
            f"the monitor's first global norm is {format_number(first)}, not the raw gradient norm at w={w0}, u={u0}: "
            f"{off_by(first, want)}" + (" (were the gradients clipped before recording?)." if clipped_first else ".")
        )
    if not mon.exploding:
        raise Fail(f"monitor.exploding is False although the raw norm was {format_number(want)}.")
