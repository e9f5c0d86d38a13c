"""A bounded series of (step, value) points: old points are thinned by halving.

"""

from __future__ import annotations

import math

__all__ = ["Series"]


class Series:
    """(step, value) points, at most ``limit`` of them: old ones are thinned by halving.

    Examples:
        >>> from microtape.dashboard.series import Series
        >>> s = Series(limit=4)
        >>> for step, value in enumerate([1.0, 9.0, 2.0, 3.0, 5.0, 4.0]):
        ...     s.add(step, value)
        >>> s.points(), s.stride            # pairs merged, each keeping its larger value
        ([(1, 9.0), (3, 3.0), (4, 5.0)], 2)

    When the list is full, neighbouring points are merged in pairs and from then
    on every ``stride`` incoming points make one (the point being built is kept
    as one running winner, never as a list). A merged point keeps the larger
    value (NaN and Inf win), so a spike is never thinned away.
    """

    __slots__ = ("steps", "values", "limit", "stride", "_count", "_best")

    def __init__(self, limit: int) -> None:
        self.steps: list[int] = []
        self.values: list[float] = []
        self.limit: int = limit
        self.stride: int = 1
        self._count = 0
        self._best: tuple[int, float] = (0, 0.0)

    @staticmethod
    def _wins(a: float, b: float) -> bool:
        """Whether ``a`` beats ``b``: larger, and any non-finite value beats a finite one."""
        if math.isfinite(a) and math.isfinite(b):
            return a >= b
        return not math.isfinite(a)

    def add(self, step: int, value: float) -> None:
        if self._count == 0 or not self._wins(self._best[1], value):
            self._best = (step, value)
        self._count += 1
        if self._count < self.stride:
            return
        self._count = 0
        self.steps.append(self._best[0])
        self.values.append(self._best[1])
        if len(self.steps) >= self.limit:
            steps, values = self.steps, self.values
            keep = [i if i + 1 == len(steps) or self._wins(values[i], values[i + 1]) else i + 1 for i in range(0, len(steps), 2)]
            self.steps = [steps[i] for i in keep]
            self.values = [values[i] for i in keep]
            self.stride *= 2

    def points(self) -> list[tuple[int, float]]:
        pts = list(zip(self.steps, self.values))
        if self._count:
            pts.append(self._best)
        return pts

    def __len__(self) -> int:
        return len(self.steps) + (1 if self._count else 0)
