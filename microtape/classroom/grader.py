"""The classroom grader: ``python -m microtape grade PATH... [--format F] [--output FILE] [--checks DIR] [--seed N]``.

The
checks are written with :mod:`microtape.exercise` and run by
``microtape.classroom.grade_child``. Every exercise is a starter file that
sets ``EXERCISE = "exNN_..."`` (found from
``microtape.book.resources.exercises_dir()``) and a checks file of the
same name in its ``checks/`` folder. The grader reads a student's
``EXERCISE`` without running the file (``ast``), so a copy graded from
anywhere is matched to its exercise. A Jupyter notebook (``.ipynb``, as
``exercises DIR --notebook`` writes them) is graded like a ``.py`` file, by
its code cells in order; its IPython magics and shell lines are skipped, with
a note in its report (see ``notebooks.py``).

Each file is graded in its own child process, in a session of its own, with
a time limit (``--timeout``, 10 s by default, start-up included; each check
has its own limit inside it, half the file's unless its check file sets
one) and, where the OS allows it (``resource.RLIMIT_AS``: Linux, most
Unixes; not Windows), a memory limit (``--memory``, 1024 MB). An endless
loop, a crash, ``sys.exit``, a huge allocation or an exception is reported
for that check or that file, and grading goes on; when a file's grading
ends, every process it started is killed (see ``processes.py``).
Ctrl-C stops everything within a second (exit 130), SIGTERM too (exit 143).
This protects a class from accidents, not from malice: the student's code
runs with the grader's permissions.

Each check is worth points (1 unless its check file says otherwise); a
file's score is the sum of the points of the checks it passed. ``--checks
DIR`` adds a teacher's own check files (the same format as the shipped
ones, named after the exercise): their checks run after the public ones of
the same exercise and are marked hidden. Checks draw random inputs from a
seed, printed with the results; ``--seed N`` replays a run.

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
     "seed": 1234, "all_passed": false, "score": 9, "max_score": 10,
     "summary": {"files": 2, "passed": 1, "failed": 0, "timeout": 1, "crashed": 0, "error": 0},
     "files": [{"path": "class/alice/ex00_gradient_by_hand.py",
                "exercise": "ex00_gradient_by_hand", "chapter": 0, "title": "...",
                "status": "passed",   # passed | failed | timeout | crashed | error
                "checks_passed": 4, "checks_total": 4, "score": 4, "max_score": 4, "seconds": 0.41,
                "message": null,      # one line when status is not passed (or a note)
                "checks": [{"name": "...", "points": 1, "score": 1, "hidden": false,
                            "status": "PASS",  # PASS | FAIL | TODO | TIMEOUT | CRASH | NOT_RUN
                            "details": [], "hints": []}],   # hints up to --hint, only when not PASS
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
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

from .processes import STOP, Outcome, run_checks, stop_on_signals
from .grade_child import run_file
from ..errors import InvalidArgumentError
from .._version import __version__
from .catalog import check_folder
from .submissions import collect_paths
from .formats import FORMATS, STATUSES, GradeFormat, document, report, table_head, table_row, table_summary
from ..i18n.messages import LANGUAGES, Language, say
from ..i18n.grader_ru import add_russian

__all__ = [
    "CHECK_SHARE",
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

CHECK_SHARE: Final = 0.5
"""A check's time limit, unless its check file sets one: this share of the file's limit."""

OUTPUT_LIMIT: Final = 4000
"""How many characters of a file's printed output are kept (the last ones)."""


# -- running one file in child processes ------------------------------------------------------


@dataclass(frozen=True)
class _Settings:
    timeout: float
    memory_mb: int
    hint: int
    seed: int
    checks_dir: Path | None
    lang: str = "en"


def _child_env() -> dict[str, str]:
    """The child finds this very copy of microtape, whatever folder it starts in."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1", PYTHONSAFEPATH="1")
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def _signal_name(code: int) -> str:
    if code >= 0:
        return f"exit status {code}"
    try:
        return f"signal {signal.Signals(-code).name}"
    except ValueError:
        return f"signal {-code}"


def _plan(events: list[dict[str, object]]) -> list[dict[str, object]]:
    for event in events:
        plan = event.get("plan")
        if event.get("event") == "start" and isinstance(plan, list):
            return [p for p in plan if isinstance(p, dict)]
    return []


def _check_limit(settings: _Settings, index: int, events: list[dict[str, object]]) -> float:
    """A check's own time limit: its check file's, or a share of the file's limit."""
    plan = _plan(events)
    own = plan[index].get("timeout") if index < len(plan) else None
    return min(settings.timeout, float(own) if isinstance(own, (int, float)) else settings.timeout * CHECK_SHARE)


def _grade_one(shown: Path, real: Path, settings: _Settings) -> dict[str, object]:
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="microtape-grade-") as tmp:
        events_path, output_path = Path(tmp) / "events.jsonl", Path(tmp) / "output.txt"
        with output_path.open("wb") as output:

            def spawn(first: int) -> subprocess.Popen[bytes]:
                command = [
                    sys.executable, "-m", "microtape.classroom.grade_child", str(real), str(events_path), str(settings.memory_mb),
                    str(first), str(settings.seed), str(settings.checks_dir or ""),
                ]
                return subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                    cwd=tmp, env=_child_env(), start_new_session=True,  # a student's json.py cannot shadow the grader's
                )

            outcome = run_checks(spawn, events_path, settings.timeout, lambda i, events: _check_limit(settings, i, events))
        seconds = time.monotonic() - start
        printed = output_path.read_bytes()[-4 * OUTPUT_LIMIT :].decode("utf-8", errors="replace")[-OUTPUT_LIMIT:]
    return _entry(shown, outcome, seconds, printed, settings)


def _new_entry(path: Path, seconds: float = 0.0, printed: str = "") -> dict[str, object]:
    return {
        "path": str(path), "exercise": None, "chapter": None, "title": None, "status": "error",
        "checks_passed": 0, "checks_total": 0, "score": 0, "max_score": 0, "seconds": round(seconds, 3),
        "message": None, "checks": [], "output": printed,
    }


def _entry(path: Path, outcome: Outcome, seconds: float, printed: str, settings: _Settings) -> dict[str, object]:
    entry = _new_entry(path, seconds, printed)
    plan = _plan(outcome.events)
    checks = [
        {"name": str(p.get("name")), "points": p.get("points", 1), "score": 0, "hidden": bool(p.get("hidden")),
         "status": "NOT_RUN", "details": [], "hints": []}
        for p in plan
    ]
    hints_of = [[str(h) for h in hints] if isinstance(hints := p.get("hints"), list) else [] for p in plan]
    load_failed: dict[str, object] | None = None
    threads: list[str] = []
    for event in outcome.events:
        kind, index = event.get("event"), event.get("index")
        if kind == "error":
            entry["message"] = f"{event.get('message')}\n  hint: {event.get('hint')}"
        elif kind == "start":
            entry.update(exercise=event.get("exercise"), chapter=event.get("chapter"), title=event.get("title"))
        elif kind == "check" and isinstance(index, int) and 0 <= index < len(checks):
            hints, details = event.get("hints"), event.get("details")
            if isinstance(hints, list):
                hints_of[index] = [str(h) for h in hints]
            checks[index].update(status=event.get("status"), details=details if isinstance(details, list) else [])
        elif kind == "load_failed":
            load_failed = event
        elif kind == "threads" and isinstance(names := event.get("names"), list):
            threads = [str(n) for n in names]
        elif kind == "notes" and isinstance(notes := event.get("notes"), list):
            entry["notes"] = [str(n) for n in notes]
    running = outcome.running if outcome.running is not None and outcome.running < len(checks) else None
    where = f"in the check {checks[running]['name']!r}" if running is not None else "while loading the file"
    for index, (kind, why) in outcome.stopped.items():
        if index < len(checks):
            limit = _check_limit(settings, index, outcome.events)
            text = f"stopped after {limit:g} s (the check's time limit): an endless loop, or far too much work?" if kind == "TIMEOUT" else (
                f"the grading process ended in this check without finishing ({_signal_name(int(why))})"
            )
            checks[index].update(status=kind, details=[text])
    if outcome.file_timed_out and running is not None:
        checks[running]["status"] = "TIMEOUT"
    elif not outcome.ended and running is not None:
        checks[running]["status"] = "CRASH"
    for check, hints in zip(checks, hints_of):
        check["hints"] = hints[: settings.hint] if check["status"] not in ("PASS", "NOT_RUN") else []
        check["score"] = check["points"] if check["status"] == "PASS" else 0
    entry["checks"] = checks
    entry["checks_total"] = len(checks)
    entry["checks_passed"] = sum(1 for c in checks if c["status"] == "PASS")
    entry["score"] = sum(int(str(c["score"])) for c in checks)
    entry["max_score"] = sum(int(str(c["points"])) for c in checks)
    statuses = {str(c["status"]) for c in checks}
    if outcome.file_timed_out:
        entry["status"] = "timeout"
        after = " after its checks had finished" if plan and running is None and "NOT_RUN" not in statuses else f" {where}"
        entry["message"] = f"stopped after {settings.timeout:g} s{after}: an endless loop, or far too much work?"
    elif not outcome.ended:
        why = _signal_name(outcome.code)
        if outcome.code == -getattr(signal, "SIGXFSZ", 0):
            why += ": it printed or wrote more than 64 MB"
        elif outcome.code == -getattr(signal, "SIGKILL", 0):
            why += f": killed from outside, perhaps out of memory (the limit is {settings.memory_mb} MB)"
        entry["status"] = "crashed"
        entry["message"] = f"the grading process ended {where} without finishing ({why})."
    elif entry["exercise"] is None:
        entry["status"] = "error"
    elif load_failed is not None:
        entry["status"] = "failed"
        details, hints = load_failed.get("details"), load_failed.get("hints")
        lines = [str(line).strip() for line in details] if isinstance(details, list) else []
        entry["message"] = "could not load the file: " + " ".join(lines)
        entry["load_error"] = {"details": details, "hints": hints}
    elif "TIMEOUT" in statuses or "CRASH" in statuses:
        entry["status"] = "timeout" if "TIMEOUT" in statuses else "crashed"
        stopped = [c["name"] for c in checks if c["status"] in ("TIMEOUT", "CRASH")]
        entry["message"] = f"{len(stopped)} check(s) stopped ({', '.join(map(repr, stopped))}), scored 0; the other checks ran."
    else:
        entry["status"] = "passed" if entry["checks_passed"] == entry["checks_total"] else "failed"
    if threads:
        note = f"the file left {len(threads)} thread(s) running ({', '.join(threads)}); they were stopped when its grading ended."
        entry["message"] = f"{entry['message']} Also, {note}" if entry["message"] else note[0].upper() + note[1:]
    _finish_entry(entry, settings.hint, settings.lang)
    return entry


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
    return (
        f"grade: {', '.join(b for b in bad if b)}: out of range.\n"
        f"  hint: the timeout is a number of seconds above 0 and at most {MAX_TIMEOUT:g}, jobs 1 to 256, the memory 0 (no limit) "
        f"or {MIN_MEMORY_MB} to {MAX_MEMORY_MB} MB, the hint level 1 to 3, the format one of {', '.join(FORMATS)}, the seed 0 or more, "
        f"the language one of {', '.join(LANGUAGES)}."
    )


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
    lang: Language = "en",
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
    format = "json" if as_json else format
    if isinstance(paths, (str, Path)):
        paths = [paths]
    refused = _refused(timeout, jobs, memory_mb, hint, format, seed, lang)
    checks_dir = Path(checks).resolve() if checks is not None else None
    if refused is None and checks_dir is not None and (wrong := check_folder(checks_dir)):
        refused = "grade: " + "\n  ".join(wrong) + "\n  hint: see 'Hidden checks' on the teachers' page."
    if refused is not None:
        print(refused, file=stream if format == "text" else sys.stderr)
        return 2
    settings = _Settings(float(timeout), memory_mb, hint, seed if seed is not None else random.SystemRandom().randrange(10**9), checks_dir, lang)
    found = collect_paths(paths)
    single = len(paths) == 1 and len(found) == 1 and not Path(paths[0]).is_dir()
    width = max([len(str(p)) for p, _, _ in found] + [4])
    try:
        target = open(output, "w", encoding="utf-8") if output is not None else stream  # noqa: SIM115 - closed below
    except OSError as err:
        print(f"grade: cannot write --output {str(output)!r}: {err.strerror or err}.\n  hint: name a file in a folder that exists.", file=sys.stderr)
        return 2
    text = format == "text"
    entries: list[dict[str, object]] = []
    with stop_on_signals() as received:
        pool = ThreadPoolExecutor(max_workers=max(1, jobs if jobs is not None else (os.cpu_count() or 1)))
        try:
            futures: list[Future[dict[str, object]] | dict[str, object]] = [
                pool.submit(_grade_one, shown, real, settings) if real is not None else _problem_entry(shown, *(problem or ("?", "?")), lang)
                for shown, real, problem in found
            ]
            if text:
                print(say(lang, "seed", seed=settings.seed), file=target)
                if not single:
                    print(table_head(width, lang), file=target)
            for item in futures:
                while isinstance(item, Future) and not STOP.is_set():
                    try:
                        item = item.result(timeout=0.1)
                    except FutureTimeout:
                        continue
                if STOP.is_set() or isinstance(item, Future):
                    break
                entries.append(item)
                if text:
                    print(item["report_ru" if lang == "ru" else "report"] if single else table_row(item, width), file=target, flush=True)
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
    return _finish(entries, settings, format, output, target if output is None else None, single)


def _finish(
    entries: list[dict[str, object]], settings: _Settings, format: str, output: str | Path | None, stream: TextIO | None, single: bool
) -> int:
    counts = {status: sum(1 for e in entries if e["status"] == status) for status in STATUSES}
    all_passed = bool(entries) and counts["passed"] == len(entries)
    if format != "text":
        meta = {
            "schema_version": SCHEMA_VERSION, "microtape_version": __version__, "timeout_seconds": settings.timeout,
            "memory_limit_mb": settings.memory_mb, "hint_level": settings.hint,
            "checks_dir": str(settings.checks_dir) if settings.checks_dir is not None else None,
        }
        doc = document(format, entries, settings.seed, meta, settings.lang)
        if output is not None:
            Path(output).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
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


# -- one file in this very process (no child processes: the book's pages in a browser) ----------


def check_in_process(path: str | Path, *, lang: str = "en", hint: int = 1, seed: int | None = None) -> str:
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

    def whole(value: object, low: int, high: int) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and low <= value < high

    bad = [
        f"hint={hint!r}" * (not whole(given[0], 1, 4)),
        f"lang={lang!r}" * (lang not in LANGUAGES),
        f"seed={seed!r}" * (given[1] is not None and not whole(given[1], 0, 2**63)),
    ]
    if any(bad):
        raise InvalidArgumentError(
            f"check_in_process: {', '.join(b for b in bad if b)}: out of range.\n"
            f"  hint: the hint level is 1 to 3, the language one of {', '.join(LANGUAGES)}, the seed 0 or more: "
            'check_in_process(path, hint=1, lang="en")',
            op="check_in_process", value=(hint, lang, seed),
        )
    drawn = seed if seed is not None else random.SystemRandom().randrange(10**9)
    settings = _Settings(DEFAULT_TIMEOUT, 0, hint, drawn, None, lang)
    events: list[dict[str, object]] = []
    printed = io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        run_file(Path(path), events.append, seed=drawn)
    entry = _entry(Path(path), Outcome(events=events, ended=True), time.monotonic() - start, printed.getvalue()[-OUTPUT_LIMIT:], settings)
    return say(lang, "seed", seed=drawn) + "\n" + str(entry["report_ru" if lang == "ru" else "report"])
