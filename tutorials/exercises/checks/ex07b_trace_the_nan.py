"""Checks of ex07b_trace_the_nan: read where the NaN came from in the trace, then repair ``distance``.

The op and the pass the trace names first are kept as hashes (``digest``),
not written here; distances and their gradients are compared with
``math.hypot`` and unit vectors in plain Python.
"""

from __future__ import annotations

import math
import types

from microtape import GradientTape, tensor
from microtape.exercise import Exercise, Fail, close, digest, fn, number, observe, off_by, rng, tensor_fn, tensor_of

EXERCISE = Exercise("ex07b_trace_the_nan", chapter=7, title="Analysis tools: trace a NaN back to where it came from", kind="debug", minutes=10)


FIRST_OP_DIGESTS = ("7e2131ab7c5075b12aa74cafd5f0710ef489835c2d6dae0b00e7cbc4611a01b3",)
"""The hash of the op the starter's trace names first (see ``digest``)."""
FIRST_PASS_DIGESTS = ("47823b565d4a696e1db5f479faca0aa271899c05d24971730015cb294d0b6446",)
"""The hash of the pass it names."""
TOLERANCE = 1e-6
"""How far a distance may be from the exact one."""


def cloud() -> tuple[list[list[float]], list[float]]:
    """Random points and a center placed exactly on one of them."""
    points = [[round(rng().uniform(-3.0, 3.0), 3) for _ in range(2)] for _ in range(rng().randint(3, 7))]
    return points, list(points[rng().randrange(len(points))])


@EXERCISE.check(
    "FIRST_OP and FIRST_PASS name where the trace starts",
    hints=(
        "chapter 7: run fit(3, 0.1) inside `with mt.detect_anomaly(mode=\"trace\") as trace:` and print(trace)",
        "the first line of the printed trace names the op, and in brackets the pass",
        "copy the op's name and the pass between the quotes, in lower case",
    ),
)
def first(m: types.ModuleType) -> None:
    op, phase = getattr(m, "FIRST_OP", None), getattr(m, "FIRST_PASS", None)
    for name, answer in (("FIRST_OP", op), ("FIRST_PASS", phase)):
        if not isinstance(answer, str):
            raise Fail(f"{name} is {answer!r}, expected a str.")
        if answer.strip().upper().startswith("TODO"):
            raise NotImplementedError(f"{name} = {answer!r}")
    assert isinstance(op, str) and isinstance(phase, str)
    if digest(op.strip().strip("'\"")) not in FIRST_OP_DIGESTS:
        raise Fail(f"FIRST_OP = {op!r}, but the trace names another op first.")
    if digest(phase.strip().strip("'\"")) not in FIRST_PASS_DIGESTS:
        raise Fail(f"FIRST_PASS = {phase!r}: {op.strip()} made its non-finite value in the other pass.")


@EXERCISE.check(
    "distance is exact, and its gradient finite even at a point on the center",
    hints=(
        "the trace said which op's derivative is infinite, and at which input value",
        "sqrt has the slope 1/(2*sqrt(x)): at x = 0 it is inf, and 0 * inf is NaN",
        "keep sqrt away from 0 by a tiny amount (a small epsilon, or a maximum), small enough for the 1e-6 tolerance",
    ),
)
def distance(m: types.ModuleType) -> None:
    dist = tensor_fn(m, "distance")
    for points, center in (([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 1.0]], [0.0, 0.0]), cloud()):
        c = tensor(center)
        with GradientTape() as tape:
            tape.watch(c)
            d = dist(tensor(points), c)
            total = d.sum()
        got = tensor_of(d, "distance(points, center)", (len(points),)).data_sync()
        for p, v in zip(points, got):
            want = math.hypot(p[0] - center[0], p[1] - center[1])
            if not math.isfinite(v) or abs(v - want) > TOLERANCE:
                raise Fail(f"distance from {p} to {center} is {v}: {off_by(v, want)} from the exact distance, more than the {TOLERANCE:g} allowed.")
        g = tape.gradient(total, c)
        if g is None:
            raise Fail("the gradient of distance(...).sum() with respect to the center is None: the path from the center is cut.")
        grad = tensor_of(g, "d sum(distance) / d center", (2,)).data_sync()
        if not all(math.isfinite(v) for v in grad):
            raise Fail(f"with the center {center} on one of the points {points}, the gradient is {grad}: not finite.")
        far = [p for p in points if p != center]
        for k in range(2):
            want = math.fsum((center[k] - p[k]) / math.hypot(p[0] - center[0], p[1] - center[1]) for p in far)
            if abs(grad[k] - want) > 1e-4:  # the point on the center may add a tiny slope of its own
                raise Fail(f"entry {k} of the center's gradient is {grad[k]}: {off_by(grad[k], want)} from the sum of unit vectors.")


def reference_losses(m: types.ModuleType, steps: int, lr: float) -> list[float]:
    """Plain gradient descent on the mean distance, by hand (a point on the center adds no slope)."""
    pts = tensor_of(getattr(m, "POINTS", None), "POINTS").data_sync()
    start = getattr(m, "START", None)
    points = [(pts[i], pts[i + 1]) for i in range(0, len(pts), 2)]
    c = [number(v, "START entry") for v in (start if isinstance(start, list) else [])]
    losses = []
    for _ in range(steps):
        dists = [math.hypot(px - c[0], py - c[1]) for px, py in points]
        losses.append(math.fsum(dists) / len(points))
        grad = [math.fsum((c[k] - p[k]) / d for p, d in zip(points, dists) if d > 0) / len(points) for k in range(2)]
        c = [c[k] - lr * grad[k] for k in range(2)]
    return losses


@EXERCISE.check(
    "fit runs to the end with finite losses that fall",
    hints=(
        "once distance is repaired, the given loop works",
        "keep loss_fn and fit as they are",
        "fit(50, 0.1) should return 50 finite losses, the last one below the first",
    ),
)
def fit(m: types.ModuleType) -> None:
    fit_fn = fn(m, "fit")
    cases = [(50, 0.1), (rng().randint(3, 10), round(rng().uniform(0.02, 0.2), 3))]

    for steps, lr in cases:
        with observe(calls=True) as seen:
            losses = fit_fn(steps, lr)
        if type(losses) is not list or len(losses) != steps:
            raise Fail(f"fit({steps}, {lr}) returned {type(losses).__name__}, expected a list of {steps} losses.")
        floats = [number(v, f"fit(...) loss {i}") for i, v in enumerate(losses)]
        bad = [i for i, v in enumerate(floats) if not math.isfinite(v)]
        wrong = [i for i, (got, want) in enumerate(zip(floats, reference_losses(m, steps, lr))) if not close(got, want, 1e-5)]
        if (bad or wrong) and seen.calls.get("distance") and distance_fails(m):
            raise Fail("fit uses your distance(), which fails its check above: fix distance() first.")
        if bad:
            raise Fail(f"fit({steps}, {lr}): the loss became {floats[bad[0]]} at step {bad[0]}.")
        if wrong:
            i = wrong[0]
            raise Fail(f"fit({steps}, {lr}): the loss of step {i} is wrong: {off_by(floats[i], reference_losses(m, steps, lr)[i])} from plain gradient descent.")


def distance_fails(m: types.ModuleType) -> bool:
    """Whether the file's distance fails on the fixed points its own check always uses (a wrong value, or no finite gradient)."""
    points, center = [[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 1.0]], [0.0, 0.0]
    c = tensor(center)
    with GradientTape() as tape:
        tape.watch(c)
        d = tensor_fn(m, "distance")(tensor(points), c)
        total = d.sum()
    values = d.data_sync() if d.shape == (len(points),) else []
    g = tape.gradient(total, c)
    exact = all(math.isfinite(v) and abs(v - math.hypot(p[0], p[1])) <= TOLERANCE for p, v in zip(points, values)) and len(values) == len(points)
    return not exact or g is None or not all(math.isfinite(v) for v in g.data_sync())
