"""Checks of ex06_exploding_rnn: clip the gradients of an exploding recurrent net, watch them with a monitor."""

from __future__ import annotations

import math
import types
from collections.abc import Sequence

from microtape import GradientMonitor, Tensor, grads, scalar, tensor
from microtape.exercise import Exercise, Fail, close, expect_values, fmt, fn, number, tensor_fn, tensor_of
from microtape.tensor import format_number

EXERCISE = Exercise("ex06_exploding_rnn", chapter=6, title="In practice: tame an exploding recurrent net with clipping")


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
    gs = [tensor([3.0, 4.0]), tensor([12.0])]  # global norm 13
    got = clipped(m, gs, 1.0)
    total = norm(got)
    if total > 1.0 + 1e-9:
        raise Fail(f"after clipped_grads([[3, 4], [12]], 1.0) the global norm is {format_number(total)}, expected at most 1.0.")
    expect_values([v for t in got for v in t.data_sync()], [3 / 13, 4 / 13, 12 / 13], "clipped_grads([[3, 4], [12]], 1.0), flattened", 1e-9)


@EXERCISE.check(
    "clipped_grads leaves small gradients alone",
    hints=(
        "clip only when the global norm exceeds max_norm",
        "below the limit the factor is 1: the gradients come back unchanged",
        "return the clipped tensors only, in the order they came in",
    ),
)
def small(m: types.ModuleType) -> None:
    gs = [tensor([0.1, -0.2]), tensor([0.3])]
    got = clipped(m, gs, 1.0)
    expect_values([v for t in got for v in t.data_sync()], [0.1, -0.2, 0.3], "clipped_grads([[0.1, -0.2], [0.3]], 1.0), flattened", 1e-12)


def train_rnn(m: types.ModuleType, steps: int) -> tuple[list[float], GradientMonitor]:
    result = fn(m, "train_rnn")(steps, 0.02, 1.0)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise Fail(f"train_rnn(...) returned {type(result).__name__} {result!r:.60}, expected (losses, monitor).")
    losses, monitor = result
    if not isinstance(losses, list) or len(losses) != steps:
        count = len(losses) if isinstance(losses, list) else "?"
        raise Fail(f"train_rnn({steps}, ...) returned {type(losses).__name__} of {count} losses, expected a list of {steps} floats.")
    if not isinstance(monitor, GradientMonitor):
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
    _, mon = train_rnn(m, 10)
    if len(mon.global_norms) != 10:
        raise Fail(f"train_rnn(10, ...) recorded {len(mon.global_norms)} steps in the monitor, expected one per step (10).")
    first = mon.global_norms[0]
    if not close(first, want, 1e-6):
        raise Fail(
            f"the monitor's first global norm is {format_number(first)}, but the raw gradient norm at w={w0}, u={u0} "
            f"is {format_number(want)} (were the gradients clipped before recording?)."
        )
    if not mon.exploding:
        raise Fail(f"monitor.exploding is False although the raw norm was {format_number(want)}.")
