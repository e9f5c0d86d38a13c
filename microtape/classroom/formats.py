"""The documents ``grade --format`` writes: microtape's JSON, Gradescope's ``results.json``, Classroom 50's ``result.json``.

``grader.py`` grades the files and hands their entries (one dict per graded
path, described in :mod:`microtape.classroom.grader`) to ``document``. Each outside format is written
from one table of its fields (name, type, meaning): ``GRADESCOPE_RESULTS``
with ``GRADESCOPE_TEST``, ``CLASSROOM50_RESULT`` with
``CLASSROOM50_TEST``. ``problems`` checks a document against its
tables (the names, the types, the scores adding up), the way the tests do.

A test is one check of one graded file, worth the check's points; a path
that could not be graded (a symlink loop, an empty folder, a file that is
not an exercise) is a test worth 0 points that says why, so nothing is
dropped silently. Hidden checks (``grade --checks DIR``) are
``"visibility": "after_due_date"`` in Gradescope; Classroom 50 has no
visibility, so its message for a hidden check says only passed or failed.

Languages: with ``grade --lang ru`` every entry carries the Russian beside
the English (``title_ru``, ``message_ru``, ``report_ru``; per check
``name_ru``, ``details_ru``, ``hints_ru``, made by ``russian.py``).
microtape's JSON keeps its English keys and texts and adds those fields;
the text report, the table and Gradescope's and Classroom 50's documents
use the Russian texts in their usual places.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Literal, TextIO, TypeAlias

from .._version import __version__
from ..i18n.messages import say
from ..i18n.grader_ru import translate_line
from ..language import N_, tr

__all__ = [
    "CLASSROOM50_RESULT",
    "CLASSROOM50_SCHEMA",
    "CLASSROOM50_TEST",
    "FORMATS",
    "GradeFormat",
    "GRADESCOPE_RESULTS",
    "GRADESCOPE_TEST",
    "Field",
    "STATUSES",
    "classroom50",
    "document",
    "gradescope",
    "problems",
    "report",
    "table_head",
    "table_row",
    "table_summary",
]

Field = tuple[str, type, str]
"""One row of a format's table: the field's name, its JSON type (as a Python type), what it holds."""

GradeFormat: TypeAlias = Literal["text", "json", "gradescope", "classroom50"]
"""What ``grade`` writes: its text report, microtape's JSON, Gradescope's or Classroom 50's document."""
FORMATS: Final[tuple[GradeFormat, ...]] = ("text", "json", "gradescope", "classroom50")
"""The values of ``grade --format``."""

GRADESCOPE_RESULTS: Final[tuple[Field, ...]] = (
    ("score", float, "the points earned: the sum of the tests' scores"),
    ("max_score", float, "the points available: the sum of the tests' max_score"),
    ("execution_time", float, "seconds the whole grading took"),
    ("output", str, "for the whole submission: microtape's version, the seed (to replay), what could not be graded"),
    ("tests", list, "one per check of each graded file, then one per path that could not be graded"),
)
"""The top level of Gradescope's ``results.json`` as ``grade --format gradescope`` writes it."""

GRADESCOPE_TEST: Final[tuple[Field, ...]] = (
    ("name", str, "the file (or, alone, the exercise) and the check: 'alice/ex04_softplus_vjp.py: the VJP agrees ...'"),
    ("score", float, "the check's points if it passed, else 0"),
    ("max_score", float, "the check's points (0 for a path that could not be graded)"),
    ("status", str, '"passed" or "failed"'),
    ("output", str, "what was wrong and the hints, as the text report prints them ('' when passed)"),
    ("visibility", str, '"visible", or "after_due_date" for a hidden check (grade --checks DIR)'),
    ("execution_time", float, "seconds the check took (0 for one that did not run)"),
)
"""One entry of ``tests`` in Gradescope's ``results.json``."""

CLASSROOM50_SCHEMA: Final = "classroom50/result/v1"
"""The ``schema`` value of a Classroom 50 ``result.json``."""

CLASSROOM50_RESULT: Final[tuple[Field, ...]] = (
    ("schema", str, f'always "{CLASSROOM50_SCHEMA}"'),
    ("score", int, "the points earned: the sum of the tests' scores"),
    ("max-score", int, "the points available: the sum of the tests' max-score"),
    ("tests", list, "one per check of each graded file, then one per path that could not be graded"),
)
"""The fields of Classroom 50's ``result.json`` that an autograder owns (its runner stamps who, what and when)."""

CLASSROOM50_TEST: Final[tuple[Field, ...]] = (
    ("test-name", str, "the file (or, alone, the exercise) and the check"),
    ("passed", bool, "whether the check passed"),
    ("score", int, "the check's points if it passed, else 0"),
    ("max-score", int, "the check's points (0 for a path that could not be graded)"),
    ("message", str, "what was wrong and the hints ('' when passed; only passed or failed for a hidden check)"),
)
"""One entry of ``tests`` in Classroom 50's ``result.json``."""


# -- one test per check ---------------------------------------------------------------------


def _check_output(entry: dict[str, object], check: dict[str, object], lang: str = "en") -> str:
    status = check.get("status")
    if status == "PASS":
        return ""
    lines = [str(line) for line in _list(_in(check, "details", lang))]
    if status in ("TIMEOUT", "CRASH", "NOT_RUN") and entry.get("message") and entry.get("status") != "missing":
        lines.append(str(_in(entry, "message", lang)))
    if status == "TODO" and not lines:
        lines.append(say(lang, "not_done"))
    if entry.get("status") == "missing":
        lines = [str(_in(entry, "message", lang))]
    hints = enumerate(_list(_in(check, "hints", lang)), start=1)
    lines += [f"{say(lang, 'hint')}: {h}" if level == 1 else f"{say(lang, 'hint_level', level=level)}: {h}" for level, h in hints]
    return "\n".join(lines) or str(status).lower().replace("_", " ")


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _short_paths(paths: list[str]) -> list[str]:
    """The paths relative to the folder they share ('alice/ex00.py'), so that a test's name is short and stable."""
    if len(paths) < 2:
        return [os.path.basename(p) or p for p in paths]
    try:
        base = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in paths])
    except ValueError:  # different drives (Windows)
        return paths
    return [os.path.relpath(os.path.abspath(p), base).replace(os.sep, "/") for p in paths]


Test = tuple[str, int, int, bool, str, bool, float]
"""``(name, score, max score, passed, output, hidden, seconds)`` of one test."""


def _tests(entries: Sequence[dict[str, object]], lang: str = "en") -> list[Test]:
    """One test for every check of every entry (an exercise not submitted too), then one for every path not graded."""
    shown = _short_paths([str(e.get("path")) for e in entries])
    tests: list[Test] = []
    not_graded: list[Test] = []
    for entry, path in zip(entries, shown):
        exercise = entry.get("exercise")
        checks = [c for c in _list(entry.get("checks")) if isinstance(c, dict)]
        if exercise is None or not checks:
            message = str(_in(entry, "message", lang) or say(lang, "could_not_grade"))
            what = "not submitted" if entry.get("status") == "missing" else "not graded"
            label = f"{path} ({exercise})" if exercise is not None and len(entries) > 1 else str(exercise or path)
            not_graded.append((f"{label}: {what}", 0, _int(entry.get("max_score")), False, message, False, 0.0))
            continue
        prefix = str(exercise) if len(entries) == 1 else path if Path(path).stem == exercise else f"{path} ({exercise})"
        for check in checks:
            passed = check.get("status") == "PASS"
            points = _int(check.get("points", 1))
            seconds = check.get("seconds")
            name, output = f"{prefix}: {_in(check, 'name', lang)}", _check_output(entry, check, lang)
            tests.append((name, points if passed else 0, points, passed, output, bool(check.get("hidden")),
                          float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else 0.0))
    return tests + not_graded


def _summary(entries: Sequence[dict[str, object]], seed: int, lang: str = "en") -> str:
    lines = [
        tr(N_("graded by microtape {0}; random inputs drawn with seed {1} (replay: grade ... --seed {1})."), lang).format(__version__, seed)
    ]
    for entry in entries:
        if entry.get("status") == "missing":
            lines.append(str(_in(entry, "message", lang)))
        elif entry.get("exercise") is None or entry.get("status") not in ("passed", "failed"):
            lines.append(f"{entry.get('path')}: {_in(entry, 'message', lang) or entry.get('status')}")
    return "\n".join(lines)


def gradescope(entries: Sequence[dict[str, object]], seed: int, lang: str = "en", seconds: float = 0.0) -> dict[str, object]:
    """Gradescope's ``results.json`` for graded entries (fields: :data:`GRADESCOPE_RESULTS`, :data:`GRADESCOPE_TEST`).

    With ``lang="ru"`` (``grade --lang ru``) the tests' names and outputs are
    the Russian ones (the entries' ``*_ru`` fields); the fields stay the format's.
    ``seconds`` is the whole grading's ``execution_time``; each test has its check's.

    Examples:
        >>> from microtape.classroom.formats import gradescope
        >>> entry = {"path": "a.py", "exercise": "ex00_gradient_by_hand", "status": "failed", "message": None,
        ...          "checks": [{"name": "by hand", "status": "PASS", "points": 2},
        ...                     {"name": "secret", "status": "FAIL", "points": 1, "hidden": True, "details": ["wrong"]}]}
        >>> doc = gradescope([entry], seed=7)
        >>> doc["score"], doc["max_score"], [(t["name"], t["status"], t["visibility"]) for t in doc["tests"]]
        (2.0, 3.0, [('ex00_gradient_by_hand: by hand', 'passed', 'visible'), ('ex00_gradient_by_hand: secret', 'failed', 'after_due_date')])
    """
    rows = _tests(entries, lang)
    tests = [
        {
            "name": name, "score": float(score), "max_score": float(top), "status": "passed" if passed else "failed",
            "output": output, "visibility": "after_due_date" if hidden else "visible", "execution_time": round(took, 3),
        }
        for name, score, top, passed, output, hidden, took in rows
    ]
    return {
        "score": math.fsum(float(row[1]) for row in rows),
        "max_score": math.fsum(float(row[2]) for row in rows),
        "execution_time": round(float(seconds), 3),
        "output": _summary(entries, seed, lang),
        "tests": tests,
    }


def classroom50(entries: Sequence[dict[str, object]], seed: int, lang: str = "en") -> dict[str, object]:
    """Classroom 50's ``result.json`` for graded entries (fields: :data:`CLASSROOM50_RESULT`, :data:`CLASSROOM50_TEST`).

    With ``lang="ru"`` the tests' names and messages are the Russian ones.

    ``seed`` is not a field of the format: it is in the message of the first test.

    Examples:
        >>> from microtape.classroom.formats import classroom50
        >>> entry = {"path": "a.py", "exercise": "ex00_gradient_by_hand", "status": "passed", "message": None,
        ...          "checks": [{"name": "by hand", "status": "PASS", "points": 2}]}
        >>> doc = classroom50([entry], seed=7)
        >>> doc["schema"], doc["score"], doc["max-score"], doc["tests"][0]["passed"]
        ('classroom50/result/v1', 2, 2, True)
    """
    tests: list[dict[str, object]] = []
    for name, score, top, passed, output, hidden, _ in _tests(entries, lang):
        message = tr(N_("passed (a hidden check)") if passed else N_("failed (a hidden check)"), lang) if hidden else output
        tests.append({"test-name": name, "passed": passed, "score": score, "max-score": top, "message": message})
    if tests:
        first = str(tests[0]["message"])
        drawn = tr(N_("(random inputs drawn with seed {0})"), lang).format(seed)
        tests[0]["message"] = (first + "\n" if first else "") + drawn
    return {
        "schema": CLASSROOM50_SCHEMA,
        "score": sum(_int(t["score"]) for t in tests),
        "max-score": sum(_int(t["max-score"]) for t in tests),
        "tests": tests,
    }


def document(
    format: str, entries: Sequence[dict[str, object]], seed: int, meta: dict[str, object], lang: str = "en", seconds: float = 0.0
) -> dict[str, object]:
    """The document of ``format`` ("json", "gradescope" or "classroom50"); ``meta`` heads the JSON one.

    The JSON keeps its English keys and texts in every language; with
    ``grade --lang ru`` each entry also carries the Russian beside the English
    (``title_ru``, ``message_ru``, ``report_ru``, and per check ``name_ru``,
    ``details_ru``, ``hints_ru``). Gradescope's and Classroom 50's documents
    get the Russian texts in their own fields.

    Examples:
        >>> from microtape.classroom.formats import document
        >>> sorted(document("json", [], 7, {"schema_version": 2}))
        ['all_passed', 'files', 'max_score', 'schema_version', 'score', 'seed', 'summary']
    """
    if format == "gradescope":
        return gradescope(entries, seed, lang, seconds)
    if format == "classroom50":
        return classroom50(entries, seed, lang)
    counts = {status: sum(1 for e in entries if e.get("status") == status) for status in STATUSES}
    return {
        **meta,
        "seed": seed,
        "all_passed": bool(entries) and counts["passed"] == len(entries),
        "score": sum(_int(e.get("score")) for e in entries),
        "max_score": sum(_int(e.get("max_score")) for e in entries),
        "summary": {"files": len(entries), **counts},
        "files": list(entries),
    }


def problems(doc: object, top: Sequence[Field], test: Sequence[Field], score: str, max_score: str) -> list[str]:
    """What is wrong with ``doc`` against its tables: missing or extra fields, wrong types, sums that do not add up.

    Examples:
        >>> from microtape.classroom.formats import CLASSROOM50_RESULT, CLASSROOM50_TEST, problems
        >>> problems({"schema": "classroom50/result/v1", "score": 1, "max-score": 2, "tests": []},
        ...          CLASSROOM50_RESULT, CLASSROOM50_TEST, "score", "max-score")
        ['score is 1, but the tests add up to 0', 'max-score is 2, but the tests add up to 0']
    """
    found: list[str] = []

    def fields(value: object, table: Sequence[Field], where: str) -> bool:
        if not isinstance(value, dict):
            found.append(f"{where} is {type(value).__name__}, not an object")
            return False
        names = [name for name, _, _ in table]
        if sorted(value) != sorted(names):
            found.append(f"{where} has the fields {sorted(value)}, expected {sorted(names)}")
            return False
        for name, kind, _ in table:
            item = value[name]
            ok = isinstance(item, (int, float)) and not isinstance(item, bool) and math.isfinite(item) if kind is float else (
                isinstance(item, kind) and (kind is bool or not isinstance(item, bool))
            )
            if not ok:
                found.append(f"{where}.{name} is {type(item).__name__} {item!r:.40}, expected {kind.__name__}")
        return True

    if not fields(doc, top, "the document"):
        return found
    assert isinstance(doc, dict)
    tests = doc["tests"]
    if not isinstance(tests, list):
        return found
    for i, t in enumerate(tests):
        fields(t, test, f"tests[{i}]")
    if found:
        return found
    for total, field in ((score, score), (max_score, max_score)):
        added = math.fsum(float(t[field]) for t in tests)
        if abs(float(doc[total]) - added) > 1e-9:
            found.append(f"{total} is {doc[total]}, but the tests add up to {added:g}")
    for i, t in enumerate(tests):
        if float(t[score]) > float(t[max_score]) or float(t[score]) < 0:
            found.append(f"tests[{i}] scores {t[score]} of {t[max_score]}")
    return found


# -- the report of one file ------------------------------------------------------------------


def _in(d: dict[str, object], key: str, lang: str) -> object:
    """``d[key]`` in ``lang``: the Russian beside it (``key_ru``, see ``microtape.i18n.grader_ru``) when there is one."""
    return d[f"{key}_ru"] if lang == "ru" and f"{key}_ru" in d else d.get(key)


def report(entry: dict[str, object], hint: int, lang: str = "en") -> str:
    """The text one-file grading prints (also the ``report`` field of the JSON; ``report_ru`` with ``--lang ru``).

    In ``lang="ru"`` the report's own words come from ``microtape.i18n.messages``
    and the checks' texts from the entry's ``*_ru`` fields.

    Examples:
        >>> from microtape.classroom.formats import report
        >>> print(report({"path": "a.py", "exercise": None, "status": "error", "message": "'a.py': no such file."}, 1))
        grading a.py:
          'a.py': no such file.
    """
    lines: list[str] = []
    path, name, status = entry["path"], entry["exercise"], entry["status"]
    if name is None or status == "missing":
        lines.append(say(lang, "grading", path=path))
        lines += [f"  {line}" for line in str(_in(entry, "message", lang) or say(lang, "could_not_grade")).splitlines()]
        return "\n".join(lines)
    chapter = entry["chapter"]
    lines.append(say(lang, "grading_exercise", path=path, name=name, chapter=chapter, title=_in(entry, "title", lang)))
    notes = entry.get("notes")  # a notebook's skipped magic and shell lines
    lines += [f"  {say(lang, 'note', message=translate_line(note) if lang == 'ru' else note)}" for note in notes] if isinstance(notes, list) else []
    printed = str(entry["output"]).rstrip()
    if printed:
        tail = printed.splitlines()[-20:]
        lines.append("  " + say(lang, "printed"))
        lines += [f"    | {line}" for line in tail]
    load_error = entry.get("load_error")
    if isinstance(load_error, dict):
        lines.append("  FAIL  " + say(lang, "loading"))
        lines += [f"        {line}" for line in _list(_in(load_error, "details", lang))]
        lines += [f"        {say(lang, 'hint')}: {h}" for h in _list(_in(load_error, "hints", lang))[:1]]
        lines.append(say(lang, "could_not_load", name=name, total=entry["checks_total"]))
        return "\n".join(lines)
    checks = entry["checks"]
    assert isinstance(checks, list)
    weighted = any(c["points"] != 1 for c in checks)
    for check in checks:
        label = {"TIMEOUT": "TIME", "NOT_RUN": "----"}.get(check["status"], check["status"])
        points = say(lang, "points", points=check["points"], s="s" * (check["points"] != 1))
        extra = (f"  {points}" if weighted else "") + (f"  {say(lang, 'hidden')}" if check["hidden"] else "")
        lines.append(f"  {label:<5} {_in(check, 'name', lang)}{extra}")
        lines += [f"        {line}" for line in _list(_in(check, "details", lang))]
        for level, text in enumerate(map(str, _list(_in(check, "hints", lang))), start=1):
            tag = say(lang, "hint") if level == 1 else say(lang, "hint_level", level=level)
            where = say(lang, "see_chapter", chapter=chapter) if level == 1 and "chapter" not in text and "глав" not in text else ""
            lines.append(f"        {tag}: {text}{where}")
    passed, total = entry["checks_passed"], entry["checks_total"]
    score = say(lang, "score", score=entry["score"], top=entry["max_score"]) if weighted else ""
    if status == "passed":
        lines.append(say(lang, "all_passed", name=name, total=total, score=score))
    elif status in ("timeout", "crashed"):
        lines.append(say(lang, "stopped", name=name, message=_in(entry, "message", lang), passed=passed, total=total, score=score))
    else:
        failed = sum(1 for c in checks if c["status"] == "FAIL")
        todo = sum(1 for c in checks if c["status"] == "TODO")
        parts = [say(lang, "passed_of", passed=passed, total=total)]
        parts += [say(lang, "failed_n", n=failed)] * bool(failed) + [say(lang, "todo_n", n=todo)] * bool(todo)
        more = say(lang, "closer_hint", level=hint + 1) if hint < 3 else ""
        lines.append(say(lang, "fix_and_again", name=name, parts=", ".join(parts), score=score, more=more))
    if status == "passed" and entry["message"]:
        lines.append(say(lang, "note", message=_in(entry, "message", lang)))
    return "\n".join(lines)


_STATUS_WORD: Final[dict[str, str]] = {
    "passed": "PASS", "failed": "FAIL", "timeout": "TIMEOUT", "crashed": "CRASH", "error": "ERROR", "missing": "MISSING",
}

STATUSES: Final[tuple[str, ...]] = tuple(_STATUS_WORD)
"""The statuses of an entry: passed, failed, timeout, crashed, error (could not be graded), missing (an assignment's exercise not submitted)."""


def table_row(entry: dict[str, object], width: int) -> str:
    """One file's row of the table that grading a folder prints.

    Examples:
        >>> from microtape.classroom.formats import table_row
        >>> table_row({"path": "a.py", "exercise": "ex00_gradient_by_hand", "status": "failed", "message": None, "seconds": 0.5,
        ...            "checks_passed": 0, "checks_total": 1, "score": 0, "max_score": 1, "checks": [{"status": "TODO"}]}, 4)
        'a.py  ex00_gradient_by_hand          0/1     0/1  TODO       0.5 s'
    """
    known = entry["exercise"] is not None
    checks = f"{entry['checks_passed']}/{entry['checks_total']}" if known else "-"
    score = f"{entry['score']}/{entry['max_score']}" if known else "-"
    word = _STATUS_WORD[str(entry["status"])]
    statuses = [c["status"] for c in entry["checks"]] if isinstance(entry["checks"], list) else []
    if word == "FAIL" and "TODO" in statuses and "FAIL" not in statuses and "could not load" not in str(entry["message"]):
        word = "TODO"  # an untouched starter: not done yet, as the one-file report says
    return f"{str(entry['path']):<{width}}  {str(entry['exercise'] or '?'):<26}  {checks:>6}  {score:>6}  {word:<7}  {entry['seconds']:>5.1f} s"


def table_head(width: int, lang: str = "en") -> str:
    """The head of the table that grading several files prints, in ``lang``.

    Examples:
        >>> from microtape.classroom.formats import table_head
        >>> table_head(4, "ru").split()
        ['файл', 'упражнение', 'проверки', 'баллы', 'итог', 'время']
    """
    words = {key: say(lang, f"col_{key}") for key in ("file", "exercise", "checks", "score", "status", "time")}
    return f"{words['file']:<{width}}  {words['exercise']:<26}  {words['checks']:>6}  {words['score']:>6}  {words['status']:<7}  {words['time']:>7}"


def table_summary(entries: Sequence[dict[str, object]], stream: TextIO, lang: str = "en") -> None:
    """Print the lines under the table: how many files passed, and where to look next.

    Examples:
        >>> import sys
        >>> from microtape.classroom.formats import table_summary
        >>> table_summary([{"status": "passed"}, {"status": "error"}], sys.stdout)
        1 of 2 files passed every check (1 not graded).
        details: python -m microtape grade FILE [--hint 2], or --format json for everything
    """
    counts = {status: sum(1 for e in entries if e.get("status") == status) for status in STATUSES}
    all_passed = counts["passed"] == len(entries)
    others = [say(lang, f"n_{s}", n=counts[s]) for s in ("failed", "timeout", "crashed", "error", "missing") if counts[s]]
    extra = f" ({', '.join(others)})" if others else ""
    print(say(lang, "files_passed", passed=counts["passed"], total=len(entries), extra=extra), file=stream)
    if not all_passed:
        print(say(lang, "details"), file=stream)
