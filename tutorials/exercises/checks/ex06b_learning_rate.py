"""Checks of ex06b_learning_rate: the stability limit of SGD on a quadratic, and a rate below it.

The Hessian is measured from the loss itself (second differences, exact for a
quadratic), and its eigenvalues found as the roots of det(H - λ·I) by
bisection: no formula for the limit is written here.
"""

from __future__ import annotations

import math
import types

from microtape.exercise import Exercise, Fail, close, fmt, fn, number, off_by, replaced, rng
from microtape.engine.tensor import format_number

EXERCISE = Exercise("ex06b_learning_rate", chapter=6, title="In practice: a learning rate past the stability limit", kind="debug", minutes=10)


def hessian(xs: list[float]) -> tuple[float, float, float]:
    """(d²L/dw², d²L/dw db, d²L/db²) of the mean squared error of w·x + b at XS, by second differences (exact: L is quadratic)."""
    ys = [0.0] * len(xs)  # the targets move the minimum, not the curvature

    def loss(w: float, b: float) -> float:
        return math.fsum((w * x + b - y) ** 2 for x, y in zip(xs, ys)) / len(xs)

    h = 1.0
    ww = (loss(h, 0.0) - 2.0 * loss(0.0, 0.0) + loss(-h, 0.0)) / (h * h)
    bb = (loss(0.0, h) - 2.0 * loss(0.0, 0.0) + loss(0.0, -h)) / (h * h)
    wb = (loss(h, h) - loss(h, -h) - loss(-h, h) + loss(-h, -h)) / (4.0 * h * h)
    return ww, wb, bb


def eigenvalue(xs: list[float], largest: bool = True) -> float:
    """The largest (or smallest) root of det(H - λ·I) = 0, found by bisection."""
    a, c, d = hessian(xs)

    def det(lam: float) -> float:
        return (a - lam) * (d - lam) - c * c

    middle = (a + d) / 2.0  # det(middle) <= 0: one root on each side of it
    low, high = (middle, a + d + abs(c) + 1.0) if largest else (-abs(c) - 1.0, middle)
    for _ in range(200):  # det > 0 outside the roots, <= 0 between them
        mid = (low + high) / 2.0
        if (det(mid) > 0.0) == largest:
            high = mid
        else:
            low = mid
    return (low + high) / 2.0


def limit(xs: list[float], smallest: bool = False) -> float:
    """2 / λ_max of the Hessian (2 / λ_min with ``smallest``, a wrong answer worth a hint)."""
    lam = eigenvalue(xs, largest=not smallest)
    return 2.0 / lam if lam > 1e-12 * max(1.0, sum(abs(v) for v in hessian(xs))) else math.inf


@EXERCISE.check(
    "stability_limit is 2 / λ_max, from the data",
    hints=(
        "chapter 6: plain SGD on a quadratic converges only below 2 / λ_max",
        "build the 2x2 Hessian from the mean of x² and the mean of x; λ_max is its larger eigenvalue",
        "a 2x2 symmetric matrix has eigenvalues (trace ± sqrt(trace² - 4·det)) / 2",
    ),
)
def stability(m: types.ModuleType) -> None:
    stability_limit = fn(m, "stability_limit")
    original = getattr(m, "XS", None)
    if not isinstance(original, list):
        raise Fail(f"XS is {original!r:.60}, expected the list of inputs.")
    drawn = [round(rng().uniform(-4.0, 6.0), 2) for _ in range(rng().randint(3, 8))]
    for xs in (original, [0.5, 1.0, -2.0, 3.0], [10.0, 11.0, 12.0], drawn):
        with replaced(m, "XS", xs):
            got = number(stability_limit(), f"stability_limit() with XS = {fmt(xs)}")
        want = limit(xs)
        if not close(got, want, 1e-6):
            hint = "that is 2 / λ_min: the limit comes from the largest eigenvalue" if close(got, limit(xs, smallest=True), 1e-6) else None
            raise Fail(f"stability_limit() with XS = {fmt(xs)} is not 2 / λ_max: {off_by(got, want)}.", hint)


@EXERCISE.check(
    "fit(LR, 300) converges",
    hints=(
        "a loss that grows step after step, with right gradients, means the steps are too long",
        "the rate must stay below stability_limit(); too far below, 300 steps are not enough",
        "try rates a little below the limit and watch the last loss of fit(rate, 300)",
    ),
)
def converges(m: types.ModuleType) -> None:
    lr = number(getattr(m, "LR", None), "LR")
    losses = fn(m, "fit")(lr, 300)
    if not isinstance(losses, list) or len(losses) != 300:
        raise Fail(f"fit(LR, 300) returned {type(losses).__name__} {losses!r:.60}, expected 300 losses.")
    last = number(losses[-1], "fit(LR, 300)[-1]")
    first = number(losses[0], "fit(LR, 300)[0]")
    if not (math.isfinite(last) and last < 1e-3):
        # the direction only, read off the losses as a student can: the limit is the answer to TODO 1
        where = "above the stability limit: the loss grows" if not (math.isfinite(last) and last < first) else (
            "below the stability limit, but so far below that 300 steps are not enough")
        raise Fail(
            f"with LR = {format_number(lr)} the loss went from {format_number(first)} to {format_number(last)} in 300 steps, "
            f"not below 1e-3: the rate is {where}."
        )
