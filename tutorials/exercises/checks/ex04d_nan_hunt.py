"""Checks of ex04d_nan_hunt: find the op that overflows with ``detect_anomaly``, make it stable.

The reference log(Σ eᶻ) is computed with ``decimal`` at 40 digits, whose exponent
range has room for e¹⁵⁰⁰, so the check needs no trick of its own to be exact.
"""

from __future__ import annotations

import decimal
import functools
import math
import types

from microtape import GradientTape, tensor
from microtape.exercise import Exercise, Fail, close, expect_values, fn, number, observe, off_by, rng, tensor_fn, tensor_of

EXERCISE = Exercise("ex04d_nan_hunt", chapter=4, title="Checking gradients: a NaN hunt with detect_anomaly", kind="debug", minutes=10)
ROWS = [[1.0, 2.0, 3.0], [1000.0, 999.0, 0.0], [-1000.0, -1001.0, -999.0], [750.0, -750.0, 20.0]]
W0 = [[0.01, -0.02, 0.0], [0.0, 0.01, -0.01]]  # train's starting weights


_PRECISE = decimal.Context(prec=40, Emax=10**6, Emin=-(10**6))


def lse(row: list[float] | tuple[float, ...]) -> float:
    """log(Σ eᶻ) of a row, exactly to double precision."""
    total = _PRECISE.add(decimal.Decimal(0), decimal.Decimal(0))
    for v in row:
        total = _PRECISE.add(total, _PRECISE.exp(decimal.Decimal(v)))
    return float(_PRECISE.ln(total))


def random_rows() -> list[list[float]]:
    """Rows of random logits, some huge, some small; a random number of columns."""
    cols = rng().randint(2, 5)
    scale = [1.0, 30.0, 800.0, 1500.0]
    return [[round(rng().uniform(-1.0, 1.0) * s, 2) for _ in range(cols)] for s in scale]


def reference_losses(m: types.ModuleType, steps: int, lr: float) -> list[float]:
    """The losses of plain SGD on softmax cross-entropy, by hand, from the file's X, LABELS and SCALE."""
    x, labels = tensor_of(getattr(m, "X", None), "X"), tensor_of(getattr(m, "LABELS", None), "LABELS")
    scale = number(getattr(m, "SCALE", None), "SCALE")
    return _losses(tuple(x.data_sync()), x.shape, tuple(labels.data_sync()), labels.shape, scale, steps, lr)


@functools.lru_cache(maxsize=32)
def _losses(xd: tuple[float, ...], xshape: tuple[int, ...], yd: tuple[float, ...], yshape: tuple[int, ...], scale: float, steps: int, lr: float) -> list[float]:
    (n, d), k = xshape, yshape[1]
    xs = [[scale * v for v in xd[i * d : (i + 1) * d]] for i in range(n)]
    ys = [yd[i * k : (i + 1) * k] for i in range(n)]
    w = [row[:] for row in W0]
    losses = []
    for _ in range(steps):
        logits = [[math.fsum(xs[i][a] * w[a][j] for a in range(d)) for j in range(k)] for i in range(n)]
        total = [lse(row) for row in logits]
        losses.append(-math.fsum(math.fsum(y * (v - t) for y, v in zip(ys[i], logits[i])) for i, t in enumerate(total)) / n)
        delta = [[(math.exp(logits[i][j] - total[i]) - ys[i][j]) / n for j in range(k)] for i in range(n)]
        w = [[w[a][j] - lr * math.fsum(xs[i][a] * delta[i][j] for i in range(n)) for j in range(k)] for a in range(d)]
    return losses


def lse_fails(m: types.ModuleType) -> bool:
    """Whether the file's log_sum_exp is wrong on the fixed rows its own check always uses."""
    got = tensor_of(fn(m, "log_sum_exp")(tensor(ROWS)), "log_sum_exp(z)", (len(ROWS), 1)).data_sync()
    return not all(math.isfinite(v) and close(v, lse(row), 1e-9) for v, row in zip(got, ROWS))


@EXERCISE.check(
    "log_sum_exp is exact for small and large inputs",
    hints=(
        "chapter 4: run a training step inside mt.detect_anomaly() and read which op first made Inf or NaN",
        "exp overflows above about 709; log(Σ eᶻ) can be computed without ever taking exp of a large number",
        "log(Σ eᶻ) = m + log(Σ eᶻ⁻ᵐ) for any m; pick m so that every exponent is at most 0",
    ),
)
def values(m: types.ModuleType) -> None:
    for rows in (ROWS, random_rows()):
        got = tensor_of(fn(m, "log_sum_exp")(tensor(rows)), "log_sum_exp(z)", (len(rows), 1))
        values_ = got.data_sync()
        for row, value in zip(rows, values_):
            if not math.isfinite(value):
                raise Fail(f"log_sum_exp({row}) = {value}: an overflow (or underflow) on the way.")
        expect_values(values_, [lse(row) for row in rows], f"log_sum_exp of the rows {rows}", 1e-9)


@EXERCISE.check(
    "its gradient is the softmax, finite everywhere",
    hints=(
        "the backward pass must not meet Inf either: detect_anomaly watches it too",
        "the derivative of log(Σ eᶻ) is the softmax of z; a stable forward gives a stable gradient",
        "write log_sum_exp with microtape ops on the tensor z, so the tape can differentiate it",
    ),
)
def gradient(m: types.ModuleType) -> None:
    log_sum_exp = tensor_fn(m, "log_sum_exp")
    for rows in (ROWS, random_rows()):
        z = tensor(rows)
        with GradientTape() as tape:
            tape.watch(z)
            total = log_sum_exp(z).sum()
        dz = tape.gradient(total, z)
        if dz is None:
            raise Fail("the gradient of sum(log_sum_exp(z)) with respect to z is None: the path from z is cut.")
        got = tensor_of(dz, "d sum(log_sum_exp(z)) / dz", z.shape).data_sync()
        want = [math.exp(v - lse(row)) for row in rows for v in row]
        bad = [v for v in got if not math.isfinite(v)]
        if bad:
            raise Fail(f"the gradient of log_sum_exp at the rows {rows} has {len(bad)} non-finite entries (the first is {bad[0]}).")
        expect_values(got, want, f"the gradient of sum(log_sum_exp(z)) at the rows {rows} (the softmax of each row)", 1e-9)


@EXERCISE.check(
    "train runs to the end with a finite loss",
    hints=(
        "once log_sum_exp is stable, the given training loop works",
        "keep loss_fn and train as they are",
        "train(100, 0.5) should return 100 finite losses, the last one below the first",
    ),
)
def train(m: types.ModuleType) -> None:
    train_fn = fn(m, "train")
    for steps, lr in ((100, 0.5), (rng().randint(2, 5), round(rng().uniform(0.05, 0.5), 3))):
        with observe(calls=True) as seen:
            losses = train_fn(steps, lr)
        if type(losses) is not list or len(losses) != steps:
            raise Fail(f"train({steps}, {lr}) returned {type(losses).__name__}, expected a list of {steps} losses.")
        floats = [number(v, f"train(...) loss {i}") for i, v in enumerate(losses)]
        bad = [i for i, v in enumerate(floats) if not math.isfinite(v)]
        wrong = [i for i, (got, expected) in enumerate(zip(floats, reference_losses(m, steps, lr))) if not close(got, expected, 1e-6)]
        if (bad or wrong) and seen.calls.get("log_sum_exp") and lse_fails(m):
            raise Fail("train uses your log_sum_exp(), which fails its check above: fix log_sum_exp() first.")
        if bad:
            raise Fail(f"train({steps}, {lr}): the loss became {floats[bad[0]]} at step {bad[0]}.")
        if wrong:
            i = wrong[0]
            raise Fail(f"train({steps}, {lr}): the loss of step {i} is wrong: {off_by(floats[i], reference_losses(m, steps, lr)[i])} from plain SGD on loss_fn.")
