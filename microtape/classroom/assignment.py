"""What an assignment asks for: its exercises, the points of each, its hidden checks (``grade --assignment``, ``--require``).

``grader.py`` uses it. An assignment file is a small TOML file::

    # week4.toml
    [assignment]
    name = "Week 4: checking gradients"   # optional
    checks = "hidden_checks"               # optional: a folder of hidden checks, beside this file

    [exercises]                            # each exercise, and the points it is worth
    ex04e_wrong_factor = 10
    ex05b = 5                              # the short name (up to the first "_") is enough
    ex07_profile_memory = true             # true: the points its checks are worth

It is read with the standard library's ``tomllib`` (Python 3.11 and later); on
Python 3.10, which has none, the subset above is read here (sections, comments,
``key = value`` with a whole number, ``true``/``false`` or a quoted string), and
anything beyond it is refused with a message that says so. ``--require
ex04e,ex05b`` is an assignment of those exercises at their own points.

An exercise's points are shared among its checks (hidden ones included) in
proportion to the checks' own points, in whole points (the largest remainder
goes first, ties to the earlier check), so every format's totals stay whole
numbers and add up to the assignment's. Each path given to ``grade`` is one
student's submission: an exercise it lacks scores 0 and says "not submitted".
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..language import N_
from ..errors import InvalidArgumentError, explain
from .catalog import list_exercises, load_exercise

__all__ = ["Assignment", "parse_toml", "read_assignment", "require", "shares"]


@dataclass(frozen=True)
class Assignment:
    """The exercises an assignment asks for, in its order, with their points (None: the checks' own), and its hidden checks.

    Examples:
        >>> from microtape.classroom.assignment import require
        >>> a = require("ex04e,ex05b_tidy_too_eager")
        >>> a.exercises
        (('ex04e_wrong_factor', None), ('ex05b_tidy_too_eager', None))
    """

    exercises: tuple[tuple[str, int | None], ...]
    name: str | None = None
    checks: Path | None = None
    source: str = "--require"
    names: tuple[str, ...] = field(default=())

    def points(self, exercise: str, own: int) -> int:
        """What ``exercise`` is worth here (``own``: what its checks are worth)."""
        for name, points in self.exercises:
            if name == exercise:
                return own if points is None else points
        return 0

    def asks_for(self, exercise: str | None) -> bool:
        """Whether the assignment asks for ``exercise``."""
        return any(name == exercise for name, _ in self.exercises)


def shares(weights: Sequence[int], total: int) -> list[int]:
    """``total`` whole points shared in proportion to ``weights`` (the largest remainders first, ties to the earlier).

    Examples:
        >>> from microtape.classroom.assignment import shares
        >>> shares([1, 1, 1, 1], 10), shares([2, 1], 4), shares([1, 1, 1], 2), shares([0, 0], 3)
        ([3, 3, 2, 2], [3, 1], [1, 1, 0], [2, 1])
    """
    if not weights:
        return []
    if sum(weights) <= 0:
        weights = [1] * len(weights)
    whole = sum(weights)
    exact = [total * w / whole for w in weights]
    out = [math.floor(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - out[i]), i))
    for i in order[: total - sum(out)]:
        out[i] += 1
    return out


def _refused(what: str, hint: str) -> InvalidArgumentError:
    return InvalidArgumentError(explain(what, N_("An assignment lists exercises the grader knows, each with its points (a whole number, 0 or more)."), hint))


def _exercise_named(given: str, where: str, checks: Path | None) -> str:
    known = list_exercises()
    found = [name for name in known if name == given or name.split("_", 1)[0] == given]
    if not found and checks is not None and load_exercise(given, checks) is not None:
        found = [given]
    if len(found) != 1:
        raise _refused(
            N_("{0}: {1} is not an exercise the grader knows.").format(where, repr(given)),
            N_("name it in full or by its first part (ex04e for ex04e_wrong_factor); the exercises are {0}.").format(", ".join(known)),
        )
    return found[0]


def require(names: str, checks: Path | None = None) -> Assignment:
    """The assignment ``--require A,B,...`` stands for: those exercises, at their own points.

    Examples:
        >>> from microtape.classroom.assignment import require
        >>> try:
        ...     require("ex04e,ex99")
        ... except ValueError as err:
        ...     print(str(err).splitlines()[0])
        --require: 'ex99' is not an exercise the grader knows.
    """
    wanted = [part.strip() for part in names.split(",") if part.strip()]
    if not wanted:
        raise _refused(N_("--require names no exercise."), N_("write --require ex04e,ex05b (the exercises, separated by commas)."))
    exercises = tuple(dict.fromkeys(_exercise_named(name, "--require", checks) for name in wanted))
    return Assignment(tuple((name, None) for name in exercises), checks=checks, names=exercises)


# -- reading TOML ---------------------------------------------------------------------------------

_KEY = r"[A-Za-z0-9_-]+"
_LINE = re.compile(rf'^(?P<key>{_KEY}|"[^"]*")\s*=\s*(?P<value>.*?)\s*$')


def _value(text: str, where: str, number: int) -> object:
    if re.fullmatch(r"[+-]?\d[\d_]*", text):
        return int(text.replace("_", ""))
    if text in ("true", "false"):
        return text == "true"
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'" and text[0] not in text[1:-1] and "\\" not in text:
        return text[1:-1]
    raise _refused(
        N_("{0}, line {1}: the value {2} is more TOML than this Python reads (Python 3.10 has no tomllib).").format(where, number, repr(text)),
        N_("write a whole number, true or false, or a string in quotes; or grade with Python 3.11 or later."),
    )


def _without_comment(line: str) -> str:
    """``line`` up to a ``#`` that is not inside a string."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            return line[:i]
    return line


def parse_toml(text: str, where: str = "the assignment", subset: bool = False) -> dict[str, dict[str, object]]:
    r"""The tables of a TOML document (keys outside any table under ``""``), as ``tomllib`` reads it.

    Without ``tomllib`` (Python 3.10), or with ``subset``, the hand-written reader
    of the subset an assignment uses reads it (see the module docstring).

    Examples:
        >>> from microtape.classroom.assignment import parse_toml
        >>> parse_toml('[exercises]  # the exercises\nex04e = 10\nex05b = true\n')
        {'exercises': {'ex04e': 10, 'ex05b': True}}
        >>> parse_toml('[exercises]\nex04e = 10\nex05b = true\n', subset=True)
        {'exercises': {'ex04e': 10, 'ex05b': True}}
    """
    try:
        tomllib = None if subset else importlib.import_module("tomllib")
    except ModuleNotFoundError:  # Python 3.10
        tomllib = None
    if tomllib is not None:
        try:
            loaded = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise _refused(N_("{0} is not TOML: {1}.").format(where, err), N_("see 'Assignments' on the teachers' page for an example file.")) from None
        out: dict[str, dict[str, object]] = {k: dict(v) for k, v in loaded.items() if isinstance(v, dict)}
        loose = {k: v for k, v in loaded.items() if not isinstance(v, dict)}
        return {"": loose, **out} if loose else out
    tables: dict[str, dict[str, object]] = {}
    table = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _without_comment(raw).strip()
        if not line:
            continue
        header = re.fullmatch(rf"\[\s*({_KEY})\s*\]", line)
        if header:
            table = header.group(1)
            if table in tables:
                raise _refused(N_("{0}, line {1}: the table [{2}] comes twice.").format(where, number, table), N_("write each table once."))
            tables[table] = {}
            continue
        match = _LINE.match(line)
        if not match:
            raise _refused(N_("{0}, line {1}: {2} is not a line of the TOML this Python reads.").format(where, number, repr(raw.strip())),
                           N_("write [table] headers and key = value lines."))
        key = match.group("key").strip('"')
        entries = tables.setdefault(table, {})
        if key in entries:
            raise _refused(N_("{0}, line {1}: the key {2} comes twice.").format(where, number, repr(key)), N_("write each exercise once."))
        entries[key] = _value(match.group("value"), where, number)
    return tables


def read_assignment(path: Path) -> Assignment:
    """The assignment in the TOML file ``path`` (see the module docstring); ``InvalidArgumentError`` says what is wrong.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from microtape.classroom.assignment import read_assignment
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "week4.toml").write_text('[exercises]\\nex04e = 10\\nex05b_tidy_too_eager = true\\n')
        >>> read_assignment(folder / "week4.toml").exercises
        (('ex04e_wrong_factor', 10), ('ex05b_tidy_too_eager', None))
    """
    where = f"--assignment {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise _refused(N_("{0}: cannot be read ({1}).").format(where, getattr(err, "strerror", None) or err), N_("pass the path of the assignment's TOML file.")) from None
    tables = parse_toml(text, where)
    if "" in tables:
        raise _refused(N_("{0}: {1} outside any table.").format(where, ", ".join(tables[""])), N_("put name and checks under [assignment], the exercises under [exercises]."))
    unknown = sorted(set(tables) - {"assignment", "exercises"})
    if unknown:
        raise _refused(N_("{0}: unknown table(s) {1}.").format(where, ", ".join(f"[{t}]" for t in unknown)), N_("an assignment has [assignment] (name, checks) and [exercises]."))
    head = tables.get("assignment", {})
    extra = sorted(set(head) - {"name", "checks"})
    if extra:
        raise _refused(N_("{0}: [assignment] has unknown key(s) {1}.").format(where, ", ".join(extra)), N_("[assignment] takes name and checks (a folder of hidden checks)."))
    name, folder = head.get("name"), head.get("checks")
    if name is not None and not isinstance(name, str):
        raise _refused(N_("{0}: name = {1} is not a string.").format(where, repr(name)), N_('write name = "Week 4".'))
    checks: Path | None = None
    if folder is not None:
        if not isinstance(folder, str):
            raise _refused(N_("{0}: checks = {1} is not a string.").format(where, repr(folder)), N_('write checks = "hidden_checks" (a folder beside the file).'))
        checks = (path.parent / folder).resolve()
    listed = tables.get("exercises", {})
    if not listed:
        raise _refused(N_("{0} lists no exercise.").format(where), N_("add an [exercises] table: one line per exercise, e.g. ex04e_wrong_factor = 10."))
    exercises: list[tuple[str, int | None]] = []
    for given, points in listed.items():
        full = _exercise_named(given, where, checks)
        if any(full == e for e, _ in exercises):
            raise _refused(N_("{0}: {1} is listed twice.").format(where, full), N_("list each exercise once."))
        if points is True:
            exercises.append((full, None))
        elif type(points) is int and points >= 0:
            exercises.append((full, points))
        else:
            raise _refused(N_("{0}: {1} = {2} is not a number of points.").format(where, given, repr(points)),
                           N_("write {0} = 10, or {0} = true for the points its checks are worth.").format(given))
    return Assignment(tuple(exercises), name, checks, str(path), tuple(e for e, _ in exercises))
