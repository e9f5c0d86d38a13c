"""Solution: exercise 5b, a ``tidy`` that disposed a tensor still needed later (chapter 5).

``tidy`` keeps only what its function returns. ``compute`` returned nothing,
so the mean and the std, stored on ``self`` inside it, were disposed with
the intermediates. Returning them from the tidy keeps them (``mt.keep``
inside, or storing Python floats, work too).

Check it: ``python -m microtape grade tutorials/exercises/solutions/ex05b_tidy_too_eager.py``
"""

from __future__ import annotations

import microtape as mt

EXERCISE = "ex05b_tidy_too_eager"  # the grader reads this: do not change it

DATA = mt.tensor([[1.0, 200.0, -3.0], [2.0, 180.0, -1.0], [4.0, 260.0, -2.0], [5.0, 240.0, 0.0]])


class Scaler:
    """Standardise columns: (x - mean) / std, with the mean and std learnt by ``fit``."""

    def __init__(self) -> None:
        self.mean: mt.Tensor | None = None
        self.std: mt.Tensor | None = None

    def fit(self, data: mt.Tensor) -> None:
        """Learn the mean and the (population) standard deviation of every column."""

        def compute() -> tuple[mt.Tensor, mt.Tensor]:
            mean = data.mean(axis=0)
            return mean, mt.sqrt(((data - mean) ** 2).mean(axis=0))

        self.mean, self.std = mt.tidy(compute)  # returned from tidy: they survive it

    def transform(self, rows: mt.Tensor) -> mt.Tensor:
        """Standardise rows with what ``fit`` learnt."""
        assert self.mean is not None and self.std is not None, "call fit first"
        return (rows - self.mean) / self.std
