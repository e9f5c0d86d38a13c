"""Exercise 5b: a ``tidy`` that disposes a tensor still needed later.

Chapter 5, "The computation graph" (Особенности работы с графом вычислений).

A ``Scaler`` learns the mean and the standard deviation of each column of
some data (``fit``) and uses them later to standardise new rows
(``transform``). Someone wrapped ``fit`` in ``mt.tidy`` to stop it leaking,
and now ``transform`` fails with ``DisposedTensorError``::

    scaler = Scaler()
    scaler.fit(DATA)
    scaler.transform(DATA)      # DisposedTensorError: ... disposed by tidy

Read the error message: it says which tensor it was, where it was made and
which scope disposed it. (The line where it was made is known inside
``mt.leak_check()``, which records where every tensor is made; the grader
runs your code that way, and so can you.) ``tidy`` disposes every tensor
made inside it that is not returned. Repair ``fit`` so that the mean and the standard deviation
survive it, while everything else made inside still goes: one ``fit`` may
leave at most those two tensors alive (or none, if you keep them another
way), however many columns and rows.

Check your work (in the folder that holds this file)::

    python -m microtape grade ex05b_tidy_too_eager.py
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

        def compute() -> None:
            self.mean = data.mean(axis=0)
            self.std = mt.sqrt(((data - self.mean) ** 2).mean(axis=0))

        mt.tidy(compute)

    def transform(self, rows: mt.Tensor) -> mt.Tensor:
        """Standardise rows with what ``fit`` learnt."""
        assert self.mean is not None and self.std is not None, "call fit first"
        return (rows - self.mean) / self.std
