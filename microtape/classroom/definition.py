"""What an exercise's checks are written with: ``Exercise``, ``Check`` and ``Fail``.

``grader.py`` runs them. Each classroom
exercise is three files with the same name: the starter
``tutorials/exercises/exNN_name.py`` (the task, in its docstring), its checks ``tutorials/exercises/checks/exNN_name.py`` (shipped
with the package, so grading works after ``pip install``) and a worked
solution in ``tutorials/exercises/solutions/`` (kept in the repository only).
A checks file makes one ``Exercise`` called ``EXERCISE`` and adds checks
to it with ``Exercise.check``::

    EXERCISE = Exercise("ex00_gradient_by_hand", chapter=0, title="...")

    @EXERCISE.check("df_by_hand matches finite differences", hints=(
        "the idea (level 1)", "more specific (level 2)", "most specific (level 3)"))
    def by_hand(m: types.ModuleType) -> None:
        df = fn(m, "df_by_hand")
        for x in (2.0, round(rng().uniform(-3.0, 3.0), 3)):
            ...
            raise Fail(f"df_by_hand({x}) is wrong: {off_by(got, want)}.", hint="...")

A check receives the student's module (during grading, a stand-in whose
functions run in the student's process: see ``proxy.py``), calls its
functions on fixed cases and on inputs drawn from ``rng()`` (seeded by the
grader, a fresh generator per check), and compares what comes back, by
exact type and by value, with an independent answer worked out from what
the answer must satisfy (finite differences of the student's own forward,
invariants, plain ``math``, tensor counts measured with ``observe``), never
from a solution. When the answer is wrong it raises ``Fail`` saying what is
true of it (the entry, how far off, the sign, the earlier function it relies
on), never the expected value, so a table of answers cannot be built from
the messages; a ``NotImplementedError`` from the student's code means "not
done yet".
Hints are shown only after a check fails, one level at a time
(``grade --hint N``): level 1 names the idea and the chapter, levels 2 and 3
are more specific, and none of them is a line of the solution.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ..errors import InvalidArgumentError

__all__ = [
    "Check",
    "Exercise",
    "Fail",
]

CheckFn = Callable[[types.ModuleType], None]
ExerciseKind: TypeAlias = Literal["write", "debug"]
"""An exercise's kind: write what a chapter shows, or debug a broken program with a tool from the book."""


class Fail(Exception):
    """A check saw a wrong result; the message says what was wrong, never the expected value.

    ``hint`` is advice for the failure the check saw (shown as the message's
    last line, after "hint: "), on top of the check's hints by level.

    Examples:
        >>> from microtape.exercise import Fail
        >>> print(Fail("vjp(x, dy) is wrong at a random dy: off by about 50 %.", hint="did you multiply by dy?"))
        vjp(x, dy) is wrong at a random dy: off by about 50 %.
        hint: did you multiply by dy?
    """

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(f"{message}\nhint: {hint}" if hint else message)


@dataclass(frozen=True, slots=True)
class Check:
    """One check of an exercise: a short name, hints by level, the test itself, its points.

    ``points`` is what passing the check adds to the file's score (a check
    that fails, times out or crashes scores 0); ``timeout`` is the check's own
    time limit in seconds, inside the file's (None: the grader's default,
    half the file's limit).

    Examples:
        >>> from microtape.exercise import Check
        >>> c = Check("it works", ("the idea", "closer", "closest"), lambda m: None)
        >>> c.hint(1), c.hint(9), c.points, c.timeout
        (['the idea'], ['the idea', 'closer', 'closest'], 1, None)
    """

    name: str
    hints: tuple[str, ...]
    run: CheckFn
    points: int = 1
    timeout: float | None = None

    def hint(self, level: int) -> list[str]:
        """The hints up to ``level`` (1 = the idea; higher levels add detail)."""
        return list(self.hints[: max(0, level)])


@dataclass(slots=True)
class Exercise:
    """An exercise: its name (the starter's ``EXERCISE``), the chapter it practises, a title, its checks.

    ``kind`` is ``"write"`` (write what a chapter shows) or ``"debug"`` (repair
    a broken program with a tool from the book); the exercises page shows it.

    Examples:
        >>> from microtape.exercise import Exercise
        >>> ex = Exercise("ex99_demo", chapter=4, title="A demo")
        >>> @ex.check("always passes", hints=("nothing to do",))
        ... def _(m):
        ...     pass
        >>> ex.file, [c.name for c in ex.checks]
        ('ex99_demo.py', ['always passes'])
    """

    name: str
    chapter: int
    title: str
    kind: ExerciseKind = "write"
    checks: list[Check] = field(default_factory=list)
    minutes: int = 0
    """How long a student is expected to need (``exercises --list`` shows it)."""

    @property
    def file(self) -> str:
        """The file name shared by the starter, its checks and its solution."""
        return f"{self.name}.py"

    def check(
        self, name: str, hints: Sequence[str], *, points: int = 1, timeout: float | None = None
    ) -> Callable[[CheckFn], CheckFn]:
        """Decorator: add a check worth ``points`` (a limit of ``timeout`` s), in the order the checks are written.

        Examples:
            >>> from microtape.exercise import Exercise
            >>> ex = Exercise("ex99_demo", chapter=4, title="A demo")
            >>> try:
            ...     ex.check("counts double", hints=("the idea",), points=-2)
            ... except ValueError as err:
            ...     print(err)
            check 'counts double' of ex99_demo: points=-2, timeout=None.
              A check is worth a whole number of points, 0 or more, and its time limit is a positive number of seconds (or None).
              hint: write points=2 for a check that counts double, timeout=5.0 for a slow one.
        """
        if not hints:
            raise InvalidArgumentError(
                f"check {name!r} of {self.name} has no hints.\n"
                "  A failed check shows at least one hint (level 1: the idea and the chapter).\n"
                '  hint: @EXERCISE.check("...", hints=("the idea, and the chapter that shows it",))',
                op="Exercise.check", value=name,
            )
        given: tuple[object, object] = (points, timeout)  # a check file may pass anything
        bad_points = isinstance(given[0], bool) or not isinstance(given[0], int) or given[0] < 0
        bad_timeout = given[1] is not None and (
            isinstance(given[1], bool) or not isinstance(given[1], (int, float)) or not math.isfinite(given[1]) or given[1] <= 0
        )
        if bad_points or bad_timeout:
            raise InvalidArgumentError(
                f"check {name!r} of {self.name}: points={points!r}, timeout={timeout!r}.\n"
                "  A check is worth a whole number of points, 0 or more, and its time limit is a positive number of seconds (or None).\n"
                "  hint: write points=2 for a check that counts double, timeout=5.0 for a slow one.",
                op="Exercise.check", value=(points, timeout),
            )

        def register(run: CheckFn) -> CheckFn:
            self.checks.append(Check(name, tuple(hints), run, points, None if timeout is None else float(timeout)))
            return run

        return register
