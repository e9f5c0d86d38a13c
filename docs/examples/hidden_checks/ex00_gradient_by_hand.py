"""Hidden checks of ex00_gradient_by_hand: a teacher's own, kept out of the students' copies.

Grade with them: ``python -m microtape grade SUBMISSIONS --checks docs/examples/hidden_checks``.
They run after the public checks of the same exercise and count towards the
score; Gradescope shows them after the due date. Inputs the students never
see make a table of answers useless, and the messages say what was wrong
without giving the expected values away.
"""

from __future__ import annotations

import types

from microtape import numerical_grad, scalar
from microtape.exercise import Exercise, Fail, close, fn, number, tensor_fn

EXERCISE = Exercise("ex00_gradient_by_hand", chapter=0, title="Gradient debugging: hidden checks")


@EXERCISE.check(
    "df_by_hand is right at inputs nobody has seen",
    hints=("differentiate f(x) = x³ - 2x term by term; the answer must hold for every x, not only the public ones",),
    points=2,
)
def unseen_inputs(m: types.ModuleType) -> None:
    f, df = tensor_fn(m, "f"), fn(m, "df_by_hand")
    for x in (0.37, -1.9, 2.6, -0.05, 11.0):
        [numeric] = numerical_grad(f, [scalar(x)])
        if not close(number(df(x), "df_by_hand(x)"), numeric.item(), 1e-5):
            raise Fail("df_by_hand disagrees with finite differences of f at an input of the hidden checks.")


@EXERCISE.check(
    "gradient_descent settles at the minimum",
    hints=("f'(x) = 0 at the minimum: gradient descent from x0 = 1 with a small rate must stop moving there",),
    timeout=3.0,
)
def settles(m: types.ModuleType) -> None:
    gd = fn(m, "gradient_descent")
    x = number(gd(1.0, 0.05, 500), "gradient_descent(1.0, 0.05, 500)")
    if not close(3.0 * x * x - 2.0, 0.0, 1e-6) or x < 0:
        raise Fail("after 500 steps from x0 = 1.0, gradient_descent is not at the minimum of f (f'(x) is not 0 there).")
