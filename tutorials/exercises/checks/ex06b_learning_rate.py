"""Checks of ex06b_learning_rate: the stability limit of SGD on a quadratic, and a rate below it."""

from __future__ import annotations

import math
import types

from microtape.exercise import Exercise, Fail, close, fmt, fn, number, off_by, replaced, rng
from microtape.engine.tensor import format_number

EXERCISE = Exercise("ex06b_learning_rate", chapter=6, title="In practice: a learning rate past the stability limit", kind="debug", minutes=10)


def limit(xs: list[float], smallest: bool = False) -> float:
    """2 / λ_max of the Hessian (2 / λ_min with ``smallest``, a wrong answer worth a hint)."""
    n = len(xs)
    a, c = 2.0 * math.fsum(x * x for x in xs) / n, 2.0 * math.fsum(xs) / n
    trace, det = a + 2.0, 2.0 * a - c * c
    root = math.sqrt(max(0.0, trace * trace - 4.0 * det))
    lam = (trace - root) / 2.0 if smallest else (trace + root) / 2.0
    return 2.0 / lam if lam > 0.0 else math.inf


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
