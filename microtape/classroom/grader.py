"""The classroom grader: ``python -m microtape grade PATH... [--format F] [--output FILE] [--checks DIR] [--seed N] [--assignment FILE]``.

The
checks are written with :mod:`microtape.exercise` and run here, in the
grader's process (``judge.py``), against the student's code, which runs in a
child process (``grade_child.py``) that answers with data only: the marks are
decided here. Every exercise is a starter file that
sets ``EXERCISE = "exNN_..."`` (found from
``microtape.book.resources.exercises_dir()``) and a checks file of the
same name in its ``checks/`` folder. The grader reads a student's
``EXERCISE`` without running the file (``ast``), so a copy graded from
anywhere is matched to its exercise. A Jupyter notebook (``.ipynb``, as
``exercises DIR --notebook`` writes them) is graded like a ``.py`` file, by
its code cells in order; its IPython magics and shell lines are skipped, with
a note in its report (see ``notebooks.py``).

Each file's code runs in its own child process, in a session of its own,
with a time limit (``--timeout``, 10 s by default, start-up included; each
check has its own limit inside it, half the file's unless its check file
sets one) and, where the OS allows it (``resource.RLIMIT_AS``: Linux, most
Unixes; not Windows), a memory limit (``--memory``, 1024 MB). An endless
loop, a crash, ``sys.exit``, a huge allocation or an exception is reported
for that check or that file, and grading goes on; when a file's grading
ends, every process it started is killed (see ``processes.py``).
Ctrl-C stops everything within a second (exit 130), SIGTERM too (exit 143).
Nothing a file does reaches a mark except through what its functions
return; the student's code still runs with the grader's permissions (the
teachers' page says what a container adds). A file whose code is the
starter's as handed out is not run: every check is ``TODO``.

Each check is worth points (1 unless its check file says otherwise); a
file's score is the sum of the points of the checks it passed. ``--checks
DIR`` adds a teacher's own check files (the same format as the shipped
ones, named after the exercise): their checks run after the public ones of
the same exercise and are marked hidden. Checks draw random inputs from a
seed, printed with the results; ``--seed N`` replays a run.
``--assignment FILE`` (or ``--require ex04e,ex05b``) says what an assignment
asks for (see ``assignment.py``): each path is then one submission, an
exercise it lacks is an entry ``"status": "missing"`` ("not submitted"),
and the points are the assignment's.

One file prints its checks: ``PASS``, ``FAIL`` (what was wrong and a hint),
``TODO`` (a ``NotImplementedError`` left in the starter), ``TIME`` or
``CRASH``. Hints come only after a failed check, by level: ``--hint 1``
(the default) names the idea and the chapter, ``--hint 2`` and ``--hint 3``
add more specific ones. Several files or a folder print one table (file,
exercise, checks passed, score, status, time). A path that cannot be graded
(missing, a symlink loop, an empty folder, not an exercise) is one entry
of its own; the same file reached by two paths is graded once.

``--format json`` (or ``--json``) prints one JSON document instead (schema
version 2); ``gradescope`` and ``classroom50`` print those services'
documents (see :mod:`microtape.classroom.formats`); ``--output FILE`` writes the
document or the text to a file::

    {"schema_version": 2, "microtape_version": "0.1.0",
     "timeout_seconds": 10.0, "memory_limit_mb": 1024, "hint_level": 1, "checks_dir": null,
     "assignment": null,   # with --assignment or --require: {"source", "name", "exercises": [{"exercise", "points"}]}
     "seed": 1234, "all_passed": false, "score": 9, "max_score": 10,
     "summary": {"files": 2, "passed": 1, "failed": 0, "timeout": 1, "crashed": 0, "error": 0},
     "files": [{"path": "class/alice/ex00_gradient_by_hand.py",
                "exercise": "ex00_gradient_by_hand", "chapter": 0, "title": "...",
                "status": "passed",   # passed | failed | timeout | crashed | error | missing
                "checks_passed": 4, "checks_total": 4, "score": 4, "max_score": 4, "seconds": 0.41,
                "message": null,      # one line when status is not passed (or a note)
                "checks": [{"name": "...", "points": 1, "score": 1, "hidden": false,
                            "status": "PASS",  # PASS | FAIL | TODO | TIMEOUT | CRASH | NOT_RUN
                            "details": [], "hints": [], "seconds": 0.1}],   # hints up to --hint, only when not PASS
                "output": "",         # what the file printed (the last 4000 characters)
                "report": "grading ..."}, ...]}   # the text one-file grading prints

With ``lang="ru"`` (``grade --lang ru``) the text report, the table and the
summary are in Russian; the JSON keeps the keys and English texts above and
adds the Russian beside them: ``title_ru``, ``message_ru``, ``report_ru``,
and per check ``name_ru``, ``details_ru``, ``hints_ru`` (see
``microtape.i18n.grader_ru``).

Exit status: 0 when every check of every file passed, 1 otherwise, 2 when
nothing could be graded (every path missing, empty or not an exercise) or an
option is out of range, 130 after Ctrl-C, 143 after SIGTERM.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO, cast

from .processes import STOP, stop_on_signals
from .judge import CHECK_SHARE, Child, FileGrade, Limits, child_env, grade_file
from .._version import __version__
from .catalog import check_folder
from .submissions import Found, collect_paths
from .assignment import Assignment, read_assignment, shares
from .assignment import require as require_exercises
from .catalog import identify, load_exercise
from .definition import Exercise
from ..errors import InvalidArgumentError, explain
from .formats import FORMATS, STATUSES, GradeFormat, document, report, table_head, table_row, table_summary
from .proxy import LoopbackTransport
from ..i18n.messages import LANGUAGES, Language, default_language, say
from ..language import N_, tr
from ..i18n.grader_ru import add_russian

__all__ = [
    "CHECK_SHARE",
    "apply_assignment",
    "DEFAULT_MEMORY_MB",
    "DEFAULT_TIMEOUT",
    "MAX_MEMORY_MB",
    "MAX_TIMEOUT",
    "SCHEMA_VERSION",
    "check_in_process",
    "grade",
]

SCHEMA_VERSION: Final = 2
"""The version of the ``--json`` document's layout (see the module docstring)."""

DEFAULT_TIMEOUT: Final = 10.0
"""Seconds a file may take, start-up included, before it is stopped."""

DEFAULT_MEMORY_MB: Final = 1024
"""The address-space limit of each grading process, in MB (0: no limit)."""

MAX_TIMEOUT: Final = 86400.0
"""The longest ``--timeout`` accepted (a day): more is a typo."""

MAX_MEMORY_MB: Final = 2**20
"""The largest ``--memory`` accepted (1 TB); 0 means no limit."""

MIN_MEMORY_MB: Final = 64
"""The smallest memory limit a Python process can start in."""

OUTPUT_LIMIT: Final = 4000
"""How many characters of a file's printed output are kept (the last ones)."""


# -- grading one file ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Settings:
    timeout: float
    memory_mb: int
    hint: int
    seed: int
    checks_dir: Path | None
    lang: str = "en"


def _grade_one(shown: Path, real: Path, settings: _Settings) -> dict[str, object]:
    limits = Limits(settings.timeout, settings.memory_mb, settings.seed, settings.checks_dir)
    with tempfile.TemporaryDirectory(prefix="microtape-grade-") as tmp:
        output_path = Path(tmp) / "output.txt"
        with output_path.open("wb") as output:
            env = child_env()
            grade = grade_file(real, limits, lambda: Child(settings.memory_mb, output, tmp, env))
        printed = output_path.read_bytes()[-4 * OUTPUT_LIMIT :].decode("utf-8", errors="replace")[-OUTPUT_LIMIT:]
    return _entry(shown, grade, printed, settings)


def _new_entry(path: Path, seconds: float = 0.0, printed: str = "") -> dict[str, object]:
    return {
        "path": str(path), "exercise": None, "chapter": None, "title": None, "status": "error",
        "checks_passed": 0, "checks_total": 0, "score": 0, "max_score": 0, "seconds": round(seconds, 3),
        "message": None, "checks": [], "output": printed,
    }


def _entry(path: Path, grade: FileGrade, printed: str, settings: _Settings) -> dict[str, object]:
    entry = _new_entry(path, grade.seconds, printed)
    if grade.exercise is None:
        what, how = grade.problem or ("?", "?")
        entry["message"] = f"{what}\n  hint: {how}"
        _finish_entry(entry, settings.hint, settings.lang)
        return entry
    exercise = grade.exercise
    entry.update(exercise=exercise.name, chapter=exercise.chapter, title=exercise.title)
    checks: list[dict[str, object]] = []
    for result in grade.checks:
        shown = result.status not in ("PASS", "NOT_RUN")
        checks.append({
            "name": result.name, "points": result.points, "score": result.points if result.status == "PASS" else 0,
            "hidden": result.hidden, "status": result.status, "details": list(result.details),
            "hints": list(result.hints[: settings.hint]) if shown else [], "seconds": round(result.seconds, 3),
        })
    entry["checks"] = checks
    entry["checks_total"] = len(checks)
    entry["checks_passed"] = sum(1 for c in checks if c["status"] == "PASS")
    entry["score"] = sum(int(str(c["score"])) for c in checks)
    entry["max_score"] = sum(int(str(c["points"])) for c in checks)
    if grade.notes:
        entry["notes"] = list(grade.notes)
    statuses = {str(c["status"]) for c in checks}
    running = next((c["name"] for c in checks if c["status"] == "TIMEOUT"), None)
    if grade.timed_out is not None:
        entry["status"] = "timeout"
        where = (
            "while loading the file" if grade.timed_out == "loading"
            else " after its checks had finished".strip() if grade.timed_out == "after" and "NOT_RUN" not in statuses
            else f"in the check {running!r}" if running is not None else "between its checks"
        )
        entry["message"] = f"stopped after {settings.timeout:g} s {where}: an endless loop, or far too much work?"
    elif grade.crashed is not None:
        _, code = grade.crashed
        why = _signal_name(code)
        if code == -getattr(signal, "SIGXFSZ", 0):
            why += ": it printed or wrote more than 64 MB"
        elif code == -getattr(signal, "SIGKILL", 0):
            why += f": killed from outside, perhaps out of memory (the limit is {settings.memory_mb} MB)"
        entry["status"] = "crashed"
        entry["message"] = f"the grading process ended while loading the file without finishing ({why})."
    elif grade.load_error is not None:
        entry["status"] = "failed"
        details, hints = grade.load_error
        entry["message"] = "could not load the file: " + " ".join(line.strip() for line in details)
        entry["load_error"] = {"details": details, "hints": hints}
    elif "TIMEOUT" in statuses or "CRASH" in statuses:
        entry["status"] = "timeout" if "TIMEOUT" in statuses else "crashed"
        stopped = [c["name"] for c in checks if c["status"] in ("TIMEOUT", "CRASH")]
        entry["message"] = f"{len(stopped)} check(s) stopped ({', '.join(map(repr, stopped))}), scored 0; the other checks ran."
    else:
        entry["status"] = "passed" if entry["checks_passed"] == entry["checks_total"] else "failed"
    if grade.threads:
        note = f"the file left {len(grade.threads)} thread(s) running ({', '.join(grade.threads)}); they were stopped when its grading ended."
        entry["message"] = f"{entry['message']} Also, {note}" if entry["message"] else note[0].upper() + note[1:]
    _finish_entry(entry, settings.hint, settings.lang)
    return entry


def _signal_name(code: int) -> str:
    if code >= 0:
        return f"exit status {code}"
    try:
        return f"signal {signal.Signals(-code).name}"
    except ValueError:
        return f"signal {-code}"


def _finish_entry(entry: dict[str, object], hint: int, lang: str) -> None:
    """The entry's report, and in Russian the ``*_ru`` fields beside the English ones and ``report_ru``."""
    if lang == "ru":
        add_russian(entry)
        load_error = entry.get("load_error")
        if isinstance(load_error, dict):
            add_russian(load_error)
    entry["report"] = report(entry, hint)
    if lang == "ru":
        entry["report_ru"] = report(entry, hint, lang)
    entry.pop("load_error", None)
    entry.pop("notes", None)  # a notebook's skipped magics: said in the report's head



# -- many files: the table, the documents -------------------------------------------


def _problem_entry(path: Path, what: str, how: str, lang: str = "en") -> dict[str, object]:
    entry = _new_entry(path)
    entry["message"] = f"{what}\n  hint: {how}"
    _finish_entry(entry, 1, lang)
    return entry


def _refused(timeout: float, jobs: int | None, memory_mb: int, hint: int, format: str, seed: int | None, lang: str = "en") -> str | None:
    """Why these options cannot be used, or None."""
    bad = [
        f"timeout={timeout}" * (not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT)),
        f"jobs={jobs}" * (jobs is not None and not 1 <= jobs <= 256),
        f"memory_mb={memory_mb}" * (not (memory_mb == 0 or MIN_MEMORY_MB <= memory_mb <= MAX_MEMORY_MB)),
        f"hint={hint}" * (not 1 <= hint <= 3),
        f"format={format!r}" * (format not in FORMATS),
        f"seed={seed}" * (seed is not None and not 0 <= seed < 2**63),
        f"lang={lang!r}" * (lang not in LANGUAGES),
    ]
    if not any(bad):
        return None
    words = "en" if lang not in LANGUAGES else lang
    return tr("grade: {bad}: out of range.", words).format(bad=", ".join(b for b in bad if b)) + "\n  " + tr("hint", words) + ": " + tr(
        "the timeout is a number of seconds above 0 and at most {top}, jobs 1 to 256, the memory 0 (no limit) "
        "or {low} to {high} MB, the hint level 1 to 3, the format one of {formats}, the seed 0 or more, "
        "the language one of {languages}.", words,
    ).format(top=f"{MAX_TIMEOUT:g}", low=MIN_MEMORY_MB, high=MAX_MEMORY_MB, formats=", ".join(FORMATS), languages=", ".join(LANGUAGES))


def grade(
    paths: str | Path | Sequence[str | Path],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    as_json: bool = False,
    hint: int = 1,
    jobs: int | None = None,
    memory_mb: int = DEFAULT_MEMORY_MB,
    out: TextIO | None = None,
    format: GradeFormat = "text",
    output: str | Path | None = None,
    checks: str | Path | None = None,
    seed: int | None = None,
    lang: Language | None = None,
    assignment: str | Path | None = None,
    require: str | None = None,
) -> int:
    """Grade exercise files and folders, each file in its own child process; return the exit status.

    One file prints its report (a line per check, hints up to level
    ``hint``); several files or a folder print a table; ``format`` "json"
    (or ``as_json``), "gradescope" or "classroom50" prints that document
    instead (see the module docstring and :mod:`microtape.classroom.formats`).
    ``jobs`` files are graded at a time (the number of CPUs by default).

    Args:
        paths: An exercise file or folder, or a list of them (folders are searched for ``*.py`` and ``*.ipynb``).
        timeout: Seconds each file may take before it is stopped.
        as_json: The same as ``format="json"``.
        hint: How many levels of hints to show after a failed check (1-3).
        jobs: How many files to grade at the same time.
        memory_mb: Address-space limit of each child process in MB (0: none).
        out: Where to print (standard output by default).
        format: "text", "json", "gradescope" or "classroom50".
        output: A file to write the document (or the text) to, instead of ``out``.
        checks: A teacher's folder of check files, run after the public checks and marked hidden.
        seed: The seed of the checks' random inputs (drawn at random when None; printed either way).
        lang: "en" or "ru": the language of the text report, the table and the summary. The JSON keeps
            its English keys and texts and, in Russian, adds the Russian beside each English text
            (``message_ru``, ``report_ru``, per check ``name_ru``, ``details_ru``, ``hints_ru``);
            Gradescope's and Classroom 50's documents get the Russian texts.
            By default, ``mt.set_language``'s language, else ``MICROTAPE_LANG``'s, else English.
        assignment: An assignment's TOML file (its exercises, their points, its hidden checks; see
            :mod:`microtape.classroom.assignment`): each path is then one student's submission, an
            exercise it lacks scores 0 as "not submitted", and the points are the assignment's.
        require: ``"ex04e,ex05b"``: an assignment of those exercises at their own points.

    Returns:
        0 if every check of every file passed, 1 if not, 2 if nothing could be graded
        or an option is out of range, 130 after Ctrl-C, 143 after SIGTERM.

    Examples:
        >>> import io, tempfile
        >>> from pathlib import Path
        >>> from microtape.classroom.grader import grade
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "runaway.py").write_text('EXERCISE = "ex00_gradient_by_hand"\\nwhile True:\\n    pass\\n')
        >>> text = io.StringIO()
        >>> grade(folder / "runaway.py", timeout=2, out=text, seed=1)
        1
        >>> print(text.getvalue().splitlines()[-1])
        ex00_gradient_by_hand: stopped after 2 s while loading the file: an endless loop, or far too much work? 0 of 4 checks passed.
    """
    stream = out if out is not None else sys.stdout
    lang = default_language() if lang is None else lang
    format = "json" if as_json else format
    if isinstance(paths, (str, Path)):
        paths = [paths]
    refused = _refused(timeout, jobs, memory_mb, hint, format, seed, lang)
    checks_dir = Path(checks).resolve() if checks is not None else None
    asked: Assignment | None = None
    if refused is None and (assignment is not None or require is not None):
        try:
            asked = _assignment_of(assignment, require, checks_dir)
        except InvalidArgumentError as err:
            refused = f"grade: {err}"
        else:
            checks_dir = asked.checks or checks_dir
    if refused is None and checks_dir is not None and (wrong := check_folder(checks_dir)):
        refused = "grade: " + "\n  ".join(wrong) + "\n  hint: see 'Hidden checks' on the teachers' page."
    if refused is not None:
        print(refused, file=stream if format == "text" else sys.stderr)
        return 2
    settings = _Settings(float(timeout), memory_mb, hint, seed if seed is not None else random.SystemRandom().randrange(10**9), checks_dir, lang)
    found, owners = _found_by_submission(paths)
    single = asked is None and len(paths) == 1 and len(found) == 1 and not Path(paths[0]).is_dir()
    width = max([len(str(p)) for p, _, _ in found] + [len(str(p)) for p in paths] * (asked is not None) + [4])
    try:
        target = open(output, "w", encoding="utf-8") if output is not None else stream  # noqa: SIM115 - closed below
    except OSError as err:
        print(f"grade: cannot write --output {str(output)!r}: {err.strerror or err}.\n  hint: name a file in a folder that exists.", file=sys.stderr)
        return 2
    text = format == "text"
    entries: list[dict[str, object]] = []
    began = time.monotonic()
    with stop_on_signals() as received:
        pool = ThreadPoolExecutor(max_workers=max(1, jobs if jobs is not None else (os.cpu_count() or 1)))
        try:
            futures: list[Future[dict[str, object]] | dict[str, object]] = [
                pool.submit(_grade_one, shown, real, settings) if real is not None and (why := _not_asked(asked, real, checks_dir)) is None
                else _problem_entry(shown, *(problem or why or ("?", "?")), lang)
                for shown, real, problem in found
            ]
            if text:
                print(say(lang, "seed", seed=settings.seed), file=target)
                if not single:
                    print(table_head(width, lang), file=target)
            live = text and asked is None  # with an assignment the rows come once every file is graded
            for item in futures:
                while isinstance(item, Future) and not STOP.is_set():
                    try:
                        item = item.result(timeout=0.1)
                    except FutureTimeout:
                        continue
                if STOP.is_set() or isinstance(item, Future):
                    break
                entries.append(item)
                if live:
                    print(item["report_ru" if lang == "ru" else "report"] if single else table_row(item, width), file=target, flush=True)
            if asked is not None and not STOP.is_set():
                entries = apply_assignment(asked, entries, [str(paths[i]) for i in owners[: len(entries)]], [str(p) for p in paths],
                                           hint=settings.hint, lang=settings.lang, checks_dir=settings.checks_dir)
                for item in entries if text else []:
                    print(table_row(item, width), file=target, flush=True)
        except BaseException:
            STOP.set()  # a broken pipe, an error of ours: stop the children before going
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            if target is not stream:
                target.close()
        if received:
            name = "Ctrl-C" if received[0] == signal.SIGINT else "SIGTERM"
            print(say(lang, "interrupted", name=name, done=len(entries), total=len(found)), file=sys.stderr)
            return 128 + received[0]
    return _finish(entries, settings, format, output, target if output is None else None, single, asked, time.monotonic() - began)


def _finish(
    entries: list[dict[str, object]], settings: _Settings, format: str, output: str | Path | None, stream: TextIO | None, single: bool,
    asked: Assignment | None = None, seconds: float = 0.0,
) -> int:
    counts = {status: sum(1 for e in entries if e["status"] == status) for status in STATUSES}
    all_passed = bool(entries) and counts["passed"] == len(entries)
    if format != "text":
        meta = {
            "schema_version": SCHEMA_VERSION, "microtape_version": __version__, "timeout_seconds": settings.timeout,
            "memory_limit_mb": settings.memory_mb, "hint_level": settings.hint,
            "checks_dir": str(settings.checks_dir) if settings.checks_dir is not None else None,
            "assignment": None if asked is None else {
                "source": asked.source, "name": asked.name,
                "exercises": [{"exercise": name, "points": points} for name, points in asked.exercises],
            },
        }
        doc = document(format, entries, settings.seed, meta, settings.lang, seconds)
        if output is not None:
            _write_atomically(Path(output), json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
            score, top = doc.get("score"), doc.get("max_score", doc.get("max-score"))
            print(say(settings.lang, "wrote_document", output=output, format=format, score=score, top=top), file=sys.stdout)
        else:
            assert stream is not None
            encoding = str(getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "").replace("_", "")
            print(json.dumps(doc, indent=2, ensure_ascii=encoding != "utf8"), file=stream)
    elif not single:
        if output is not None:
            with open(output, "a", encoding="utf-8") as file:
                table_summary(entries, file, settings.lang)
        else:
            assert stream is not None
            table_summary(entries, stream, settings.lang)
    if counts["error"] == len(entries):
        return 2
    return 0 if all_passed else 1


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` in one step: a file beside it, then renamed over it."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent) or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# -- assignments ---------------------------------------------------------------------------------


def _assignment_of(assignment: str | Path | None, require: str | None, checks_dir: Path | None) -> Assignment:
    if assignment is not None and require is not None:
        raise InvalidArgumentError(explain(
            N_("--assignment and --require both say what to grade."), N_("An assignment is given once."),
            N_("keep --assignment FILE (its [exercises]), or --require ex04e,ex05b alone."),
        ))
    asked = read_assignment(Path(assignment)) if assignment is not None else require_exercises(str(require), checks_dir)
    if asked.checks is not None and checks_dir is not None and asked.checks != checks_dir:
        raise InvalidArgumentError(explain(
            N_("--checks {0} and the assignment's checks = {1} both name hidden checks.").format(repr(str(checks_dir)), repr(str(asked.checks))),
            N_("Hidden checks are given once."), N_("keep the one in the assignment file, or drop its checks line."),
        ))
    return asked


def _found_by_submission(paths: Sequence[str | Path]) -> tuple[list[Found], list[int]]:
    """The files to grade (each once) and, for each, the number of the path it was found under (its submission)."""
    found: list[Found] = []
    owners: list[int] = []
    seen: set[str] = set()
    for index, given in enumerate(paths):
        for item in collect_paths([given]):
            real = item[1]
            if real is not None and str(real) in seen:
                continue
            if real is not None:
                seen.add(str(real))
            found.append(item)
            owners.append(index)
    return found, owners


def _not_asked(asked: Assignment | None, real: Path, checks_dir: Path | None) -> tuple[str, str] | None:
    """Why a file is not graded under this assignment (it is another exercise), or None."""
    if asked is None:
        return None
    exercise, _ = identify(real, checks_dir)
    if not isinstance(exercise, Exercise) or asked.asks_for(exercise.name):
        return None
    return (
        f"{str(real.name)!r} is {exercise.name}, which this assignment does not ask for; it is not graded.",
        f"the assignment asks for {', '.join(asked.names)}.",
    )


def apply_assignment(
    asked: Assignment, entries: list[dict[str, object]], owners: list[str], submissions: list[str],
    hint: int = 1, lang: str = "en", checks_dir: Path | None = None,
) -> list[dict[str, object]]:
    """The entries as the assignment counts them: its points shared among the checks, one file per exercise and submission
    counted (the best; another scores 0 of 0 and says so), and an entry "not submitted" for each exercise a submission lacks.

    ``owners`` is the submission of each entry; ``hint`` and ``lang`` are the reports'.

    Examples:
        >>> from microtape.classroom.assignment import require
        >>> from microtape.classroom.grader import apply_assignment
        >>> [e["status"] for e in apply_assignment(require("ex05b"), [], [], ["alice"])]
        ['missing']
    """
    out: list[dict[str, object]] = []
    for submission in submissions:
        mine = [e for e, owner in zip(entries, owners) if owner == submission]
        for name, _ in asked.exercises:
            files = [e for e in mine if e.get("exercise") == name]
            if not files:
                out.append(_missing(submission, name, asked, hint, lang, checks_dir))
                continue
            best = max(files, key=lambda e: (_int(e.get("score")) / max(1, _int(e.get("max_score"))), -files.index(e)))
            for entry in files:
                _share_points(entry, asked.points(name, _int(entry.get("max_score"))) if entry is best else 0)
                if entry is not best:
                    note = f"another file of {name} in this submission ({best['path']}) scored higher or came first; this one does not count."
                    entry["message"] = f"{entry['message']} {note}" if entry.get("message") else note[0].upper() + note[1:]
                _finish_entry(entry, hint, lang)
                out.append(entry)
        out += [e for e in mine if e.get("exercise") is None or not asked.asks_for(str(e.get("exercise")))]
    return out


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _share_points(entry: dict[str, object], total: int) -> None:
    checks = [c for c in entry.get("checks", []) if isinstance(c, dict)]  # type: ignore[attr-defined]  # a list, as made above
    for check, points in zip(checks, shares([_int(c.get("points")) for c in checks], total)):
        check["points"] = points
        check["score"] = points if check.get("status") == "PASS" else 0
    entry["score"] = sum(_int(c["score"]) for c in checks)
    entry["max_score"] = sum(_int(c["points"]) for c in checks)


def _missing(submission: str, name: str, asked: Assignment, hint: int, lang: str, checks_dir: Path | None) -> dict[str, object]:
    exercise = load_exercise(name) or (load_exercise(name, asked.checks) if asked.checks is not None else None)
    entry = _new_entry(Path(submission))
    entry.update(exercise=name, status="missing")
    if exercise is not None:
        plan = [(c, False) for c in exercise.checks]
        if checks_dir is not None and (hidden := load_exercise(name, checks_dir)) is not None and hidden is not exercise:
            plan += [(c, True) for c in hidden.checks]
        entry.update(chapter=exercise.chapter, title=exercise.title)
        entry["checks"] = [
            {"name": c.name, "points": c.points, "score": 0, "hidden": hidden, "status": "NOT_RUN",
             "details": ["not submitted"], "hints": [], "seconds": 0.0}
            for c, hidden in plan
        ]
        entry["checks_total"] = len(plan)
    entry["message"] = f"not submitted: {submission} holds no file of {name}."
    _share_points(entry, asked.points(name, sum(c.points for c in exercise.checks) if exercise is not None else 0))
    _finish_entry(entry, hint, lang)
    return entry


# -- one file in this very process (no child processes: the book's pages in a browser) ----------


def check_in_process(path: str | Path, *, lang: str | None = None, hint: int = 1, seed: int | None = None) -> str:
    """Check one exercise file in this process with its exercise's checks; return what ``grade FILE`` prints.

    For where no child process can be started: the book's exercise pages run
    Python in a browser (Pyodide), and their last cell calls this. The checks,
    their random inputs (drawn from ``seed``, a random one when None, printed
    first as ``grade`` prints it), the feedback and its hints (up to level
    ``hint``, in ``lang``) are those of ``python -m microtape grade FILE
    --hint N --lang L``; so is what the file printed. What a child process
    gives ``grade`` is not here: no time limit (the caller keeps one; the
    book's page ends its Web Worker after its limit), no memory limit, and the
    file runs in the caller's process. The score is reported as ``grade``
    reports it; marks are for ``grade`` to give.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from microtape.classroom.grader import check_in_process
        >>> path = Path(tempfile.mkdtemp()) / "ex00_gradient_by_hand.py"
        >>> _ = path.write_text('EXERCISE = "ex00_gradient_by_hand"\\n\\ndef f(x):\\n    return x * x\\n')
        >>> print(check_in_process(path, seed=1).splitlines()[1])
        grading ...ex00_gradient_by_hand.py: ex00_gradient_by_hand (chapter 0: ...)
        >>> try:
        ...     check_in_process(path, hint=4)
        ... except ValueError as err:
        ...     print(err)
        check_in_process: hint=4: out of range.
          hint: the hint level is 1 to 3, the language one of en, ru, the seed 0 or more: check_in_process(path, hint=1, lang="en")
    """
    given: tuple[object, object] = (hint, seed)  # a caller may pass anything
    lang = default_language() if lang is None else lang

    def whole(value: object, low: int, high: int) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and low <= value < high

    bad = [
        f"hint={hint!r}" * (not whole(given[0], 1, 4)),
        f"lang={lang!r}" * (lang not in LANGUAGES),
        f"seed={seed!r}" * (given[1] is not None and not whole(given[1], 0, 2**63)),
    ]
    if any(bad):
        raise InvalidArgumentError(
            explain(
                tr("check_in_process: {bad}: out of range.").format(bad=", ".join(b for b in bad if b)),
                hint=tr("the hint level is 1 to 3, the language one of {languages}, the seed 0 or more: {code}").format(
                    languages=", ".join(LANGUAGES), code='check_in_process(path, hint=1, lang="en")'),
            ),
            op="check_in_process", value=(hint, lang, seed),
        )
    drawn = seed if seed is not None else random.SystemRandom().randrange(10**9)
    settings = _Settings(DEFAULT_TIMEOUT, 0, hint, drawn, None, lang)
    limits = Limits(DEFAULT_TIMEOUT, 0, drawn, None)  # no memory limit: nothing here can set one
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        grade = grade_file(Path(path), limits, lambda: cast(Child, _InProcess()))  # a Child's request, end and code, here
    entry = _entry(Path(path), grade, printed.getvalue()[-OUTPUT_LIMIT:], settings)
    return say(lang, "seed", seed=drawn) + "\n" + str(entry["report_ru" if lang == "ru" else "report"])


class _InProcess(LoopbackTransport):
    """The student's side served in this process (``check_in_process``): nothing to end, no exit code."""

    code: int | None = None

    def end(self) -> None:
        """Nothing to stop: the student's code ran here."""
