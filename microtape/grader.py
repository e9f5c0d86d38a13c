"""The classroom grader: ``python -m microtape grade PATH... [--timeout S] [--json] [--hint N]``.

Read after ``cli.py``; the checks are written with :mod:`microtape.exercise`
and run by ``microtape._grade_child``. Every exercise is a starter file
that sets ``EXERCISE = "exNN_..."`` (found from
``microtape._resources.exercises_dir()``) and a checks file of the same
name in its ``checks/`` folder. The grader reads a student's ``EXERCISE``
without running the file (``ast``), so a copy graded from anywhere is
matched to its exercise.

Each file is graded in its own child process (``python -m
microtape._grade_child``), with a time limit (``--timeout``, 10 s by default)
and, where the OS allows it (``resource.RLIMIT_AS``: Linux, most Unixes; not
Windows), a memory limit (``--memory``, 1024 MB). An endless loop, a crash,
``sys.exit``, a huge allocation or an exception at import is reported for
that file and grading goes on with the next. This protects a class from
accidents, not from malice: the student's code runs with the grader's
permissions.

One file prints its checks: ``PASS``, ``FAIL`` (what was wrong, with the
real values, and a hint) or ``TODO`` (a ``NotImplementedError`` left in the
starter). Hints come only after a failed check, by level: ``--hint 1`` (the
default) names the idea and the chapter, ``--hint 2`` and ``--hint 3`` add
more specific ones. Several files or a folder print one table (file,
exercise, checks passed, status, time). ``--json`` prints one JSON document
instead (schema version 1)::

    {"schema_version": 1, "microtape_version": "0.1.0",
     "timeout_seconds": 10.0, "memory_limit_mb": 1024, "hint_level": 1,
     "all_passed": false,
     "summary": {"files": 2, "passed": 1, "failed": 0, "timeout": 1, "crashed": 0, "error": 0},
     "files": [{"path": "class/alice/ex00_gradient_by_hand.py",
                "exercise": "ex00_gradient_by_hand", "chapter": 0, "title": "...",
                "status": "passed",   # passed | failed | timeout | crashed | error
                "checks_passed": 4, "checks_total": 4, "seconds": 0.41,
                "message": null,      # one line when status is not passed
                "checks": [{"name": "...",
                            "status": "PASS",  # PASS | FAIL | TODO | TIMEOUT | CRASH | NOT_RUN
                            "details": [], "hints": []}],   # hints up to --hint, only when not PASS
                "output": "",         # what the file printed (the last 4000 characters)
                "report": "grading ..."}, ...]}   # the text one-file grading prints

Exit status: 0 when every check of every file passed, 1 otherwise, 2 when
nothing could be graded (a missing path, a folder without ``.py`` files,
or only files that are not exercises).
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final, TextIO

from ._resources import exercises_dir
from ._version import __version__
from .exercise import Exercise

__all__ = ["DEFAULT_MEMORY_MB", "DEFAULT_TIMEOUT", "SCHEMA_VERSION", "exercises", "grade", "identify", "list_exercises", "load_exercise"]

SCHEMA_VERSION: Final = 1
"""The version of the ``--json`` document's layout (see the module docstring)."""

DEFAULT_TIMEOUT: Final = 10.0
"""Seconds a file may take, start-up included, before it is stopped."""

DEFAULT_MEMORY_MB: Final = 1024
"""The address-space limit of each grading process, in MB (0: no limit)."""

OUTPUT_LIMIT: Final = 4000
"""How many characters of a file's printed output are kept (the last ones)."""


# -- discovery ---------------------------------------------------------------------


def _checks_dir() -> Path | None:
    folder = exercises_dir()
    return folder / "checks" if folder is not None and (folder / "checks").is_dir() else None


def list_exercises() -> list[str]:
    """Return the names of every exercise the grader knows, in book order.

    Examples:
        >>> from microtape.grader import list_exercises
        >>> names = list_exercises()
        >>> names[0], len(names) >= 17
        ('ex00_gradient_by_hand', True)
    """
    folder = _checks_dir()
    return sorted(p.stem for p in folder.glob("ex*.py")) if folder is not None else []


_LOADED: dict[str, Exercise] = {}
_LOCK = threading.Lock()


def load_exercise(name: str) -> Exercise | None:
    """The exercise called ``name`` with its checks, or None when there is none.

    Examples:
        >>> from microtape.grader import load_exercise
        >>> ex = load_exercise("ex04_softplus_vjp")
        >>> ex.chapter, ex.file, len(ex.checks) > 0
        (4, 'ex04_softplus_vjp.py', True)
        >>> load_exercise("ex99_nothing") is None
        True
    """
    with _LOCK:
        if name in _LOADED:
            return _LOADED[name]
        folder = _checks_dir()
        if folder is None or not re.fullmatch(r"ex\w+", name) or not (folder / f"{name}.py").is_file():
            return None
        module_name = f"_microtape_checks_{name}"
        spec = importlib.util.spec_from_file_location(module_name, folder / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        exercise = getattr(module, "EXERCISE", None)
        if not isinstance(exercise, Exercise) or exercise.name != name:
            raise RuntimeError(f"{folder / name}.py must define EXERCISE = Exercise({name!r}, ...)")
        _LOADED[name] = exercise
        return exercise


def exercises() -> list[Exercise]:
    """Every exercise with its checks, in book order.

    Examples:
        >>> from microtape.grader import exercises
        >>> sorted({ex.chapter for ex in exercises()})
        [0, 1, 2, 3, 4, 5, 6, 7]
    """
    found = [load_exercise(name) for name in list_exercises()]
    return [ex for ex in found if ex is not None]


def _exercise_name(source: str) -> str | None:
    """The literal ``EXERCISE = "..."`` of a file, without running it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # the child reports the syntax error; find the name anyway
        match = re.search(r"^EXERCISE\s*(?::\s*str\s*)?=\s*[\"'](\w+)[\"']", source, re.MULTILINE)
        return match.group(1) if match else None
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        named = any(isinstance(t, ast.Name) and t.id == "EXERCISE" for t in targets)
        if named and isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return None


def _starter_hint(name: str) -> str:
    stem = Path(name).stem
    if stem in list_exercises():
        return f"copy the starters with python -m microtape exercises DIR, then: python -m microtape grade DIR/{stem}.py"
    return "pass the path of your exercise file (or a folder of them), e.g. python -m microtape grade mywork/ex04_softplus_vjp.py"


def identify(path: Path) -> tuple[Exercise, str] | tuple[str, str]:
    """``(exercise, source)`` for a gradable file, else ``(what is wrong, hint)``.

    Examples:
        >>> from pathlib import Path
        >>> from microtape.grader import identify
        >>> identify(Path("no/such/file.py"))[0]
        "'no/such/file.py': no such file."
    """
    if not path.is_file():
        what = "is a directory, not a file" if path.is_dir() else "no such file"
        return f"{str(path)!r}: {what}.", _starter_hint(str(path))
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return f"cannot read {str(path)!r}: {err}.", "save the exercise as a UTF-8 text file."
    name = _exercise_name(source)
    known = ", ".join(list_exercises())
    if name is None:
        return (
            f"{str(path)!r} does not say which exercise it is: it has no line EXERCISE = \"...\".",
            f'every starter file sets it, e.g. EXERCISE = "ex04_softplus_vjp"; known exercises: {known}.',
        )
    exercise = load_exercise(name)
    if exercise is None:
        close = difflib.get_close_matches(name, list_exercises(), n=1)
        did_you_mean = f"did you mean {close[0]!r}? " if close else ""
        return f"unknown exercise EXERCISE = {name!r} in {str(path)!r}.", f"{did_you_mean}known exercises: {known}."
    return exercise, source


# -- running one file in a child process ----------------------------------------------------

_RUNNING: set[subprocess.Popen[bytes]] = set()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Stop the child and anything it started (its own process group on POSIX)."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


def _child_env() -> dict[str, str]:
    """The child finds this very copy of microtape, whatever folder it starts in."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1", PYTHONSAFEPATH="1")
    here = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def _events(path: Path) -> list[dict[str, object]]:
    events: list[dict[str, object]] = []
    if not path.is_file():
        return events
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _signal_name(code: int) -> str:
    if code >= 0:
        return f"exit status {code}"
    try:
        return f"signal {signal.Signals(-code).name}"
    except ValueError:
        return f"signal {-code}"


def _grade_one(path: Path, timeout: float, memory_mb: int, hint: int) -> dict[str, object]:
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="microtape-grade-") as tmp:
        events_path, output_path = Path(tmp) / "events.jsonl", Path(tmp) / "output.txt"
        command = [sys.executable, "-m", "microtape._grade_child", str(path.resolve()), str(events_path), str(memory_mb)]
        with output_path.open("wb") as output:
            proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                cwd=tmp, env=_child_env(), start_new_session=True,  # a student's json.py cannot shadow the grader's
            )
            _RUNNING.add(proc)
            try:
                code = proc.wait(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                _kill(proc)
                code = proc.wait()
                timed_out = True
            finally:
                _RUNNING.discard(proc)
        seconds = time.monotonic() - start
        events = _events(events_path)
        printed = output_path.read_bytes()[-4 * OUTPUT_LIMIT :].decode("utf-8", errors="replace")[-OUTPUT_LIMIT:]
    return _entry(path, events, code, timed_out, seconds, printed, timeout, memory_mb, hint)


def _entry(
    path: Path, events: list[dict[str, object]], code: int, timed_out: bool, seconds: float,
    printed: str, timeout: float, memory_mb: int, hint: int,
) -> dict[str, object]:
    entry: dict[str, object] = {
        "path": str(path), "exercise": None, "chapter": None, "title": None, "status": "error",
        "checks_passed": 0, "checks_total": 0, "seconds": round(seconds, 3), "message": None,
        "checks": [], "output": printed,
    }
    checks: dict[str, dict[str, object]] = {}
    running: str | None = None
    load_failed: dict[str, object] | None = None
    ended = False
    for event in events:
        kind = event.get("event")
        if kind == "error":
            entry["message"] = f"{event.get('message')}\n  hint: {event.get('hint')}"
        elif kind == "start":
            entry.update(exercise=event.get("exercise"), chapter=event.get("chapter"), title=event.get("title"))
            names = event.get("checks")
            for name in names if isinstance(names, list) else []:
                checks[str(name)] = {"name": str(name), "status": "NOT_RUN", "details": [], "hints": []}
        elif kind == "running":
            running = str(event.get("check"))
        elif kind == "check":
            name = str(event.get("name"))
            hints = event.get("hints")
            shown = [str(h) for h in hints[:hint]] if isinstance(hints, list) and event.get("status") != "PASS" else []
            details = event.get("details")
            checks[name] = {"name": name, "status": event.get("status"), "details": details if isinstance(details, list) else [], "hints": shown}
            running = None
        elif kind == "load_failed":
            load_failed = event
        elif kind == "end":
            ended = True
    entry["checks"] = list(checks.values())
    entry["checks_total"] = len(checks)
    entry["checks_passed"] = sum(1 for c in checks.values() if c["status"] == "PASS")
    if timed_out or not ended:
        where = f"in the check {running!r}" if running is not None else "while loading the file"
        if running is not None:
            checks[running]["status"] = "TIMEOUT" if timed_out else "CRASH"
        if timed_out:
            entry["status"] = "timeout"
            entry["message"] = f"stopped after {timeout:g} s {where}: an endless loop, or far too much work?"
        else:
            why = _signal_name(code)
            if code == -getattr(signal, "SIGXFSZ", 0):
                why += ": it printed or wrote more than 64 MB"
            elif code == -getattr(signal, "SIGKILL", 0):
                why += f": killed from outside, perhaps out of memory (the limit is {memory_mb} MB)"
            entry["status"] = "crashed"
            entry["message"] = f"the grading process ended {where} without finishing ({why})."
    elif entry["exercise"] is None:
        entry["status"] = "error"
    elif load_failed is not None:
        entry["status"] = "failed"
        details = load_failed.get("details")
        hints = load_failed.get("hints")
        entry["message"] = "could not load the file: " + (str(details[0]) if isinstance(details, list) and details else "")
        entry["load_error"] = {"details": details, "hints": hints}
    else:
        entry["status"] = "passed" if entry["checks_passed"] == entry["checks_total"] else "failed"
    entry["report"] = _report(entry, hint)
    entry.pop("load_error", None)
    return entry


# -- the report of one file ------------------------------------------------------------------


def _report(entry: dict[str, object], hint: int) -> str:
    """The text one-file grading prints (also the ``report`` field of the JSON)."""
    lines: list[str] = []
    path, name, status = entry["path"], entry["exercise"], entry["status"]
    if name is None:
        head = f"grading {path}:"
        lines.append(head)
        lines += [f"  {line}" for line in str(entry["message"] or "could not grade the file").splitlines()]
        return "\n".join(lines)
    chapter = entry["chapter"]
    lines.append(f"grading {path}: {name} (chapter {chapter}: {entry['title']})")
    printed = str(entry["output"]).rstrip()
    if printed:
        tail = printed.splitlines()[-20:]
        lines.append("  the file printed (last lines):")
        lines += [f"    | {line}" for line in tail]
    load_error = entry.get("load_error")
    if isinstance(load_error, dict):
        lines.append("  FAIL  loading the file")
        lines += [f"        {line}" for line in load_error.get("details") or []]
        lines += [f"        hint: {h}" for h in (load_error.get("hints") or [])[:1]]
        total = entry["checks_total"]
        lines.append(f"{name}: could not load the file; 0 of {total} checks ran.")
        return "\n".join(lines)
    checks = entry["checks"]
    assert isinstance(checks, list)
    for check in checks:
        label = {"TIMEOUT": "TIME", "NOT_RUN": "----"}.get(check["status"], check["status"])
        lines.append(f"  {label:<5} {check['name']}")
        lines += [f"        {line}" for line in check["details"]]
        for level, text in enumerate(check["hints"], start=1):
            tag = "hint" if level == 1 else f"hint {level}"
            where = f" (see chapter {chapter})" if level == 1 and "chapter" not in text else ""
            lines.append(f"        {tag}: {text}{where}")
    passed, total = entry["checks_passed"], entry["checks_total"]
    if status == "passed":
        lines.append(f"{name}: all {total} checks passed.")
    elif status in ("timeout", "crashed"):
        lines.append(f"{name}: {entry['message']} {passed} of {total} checks passed before that.")
    else:
        failed = sum(1 for c in checks if c["status"] == "FAIL")
        todo = sum(1 for c in checks if c["status"] == "TODO")
        parts = [f"{passed} of {total} checks passed"] + [f"{failed} failed"] * bool(failed) + [f"{todo} not done yet"] * bool(todo)
        more = f" (--hint {hint + 1} for a closer hint)" if hint < 3 else ""
        lines.append(f"{name}: " + ", ".join(parts) + f". Fix the lines marked FAIL and TODO, then grade again{more}.")
    return "\n".join(lines)


# -- many files: collecting, the table, JSON ----------------------------------------------------


def _collect(paths: Sequence[str | Path]) -> tuple[list[Path], list[tuple[str, str]]]:
    """The files to grade (folders searched for ``*.py``) and the paths that could not be used."""
    files: list[Path] = []
    problems: list[tuple[str, str]] = []
    for given in map(Path, paths):
        if given.is_dir():
            found = sorted(
                p for p in given.rglob("*.py")
                if p.name != "__init__.py" and not any(part.startswith((".", "__pycache__")) for part in p.relative_to(given).parts)
            )
            if not found:
                problems.append((f"{str(given)!r}: a folder without .py files.", _starter_hint(str(given))))
            files += found
        elif given.is_file():
            files.append(given)
        else:
            problems.append((f"{str(given)!r}: no such file or folder.", _starter_hint(str(given))))
    return files, problems


_STATUS_WORD: Final = {"passed": "PASS", "failed": "FAIL", "timeout": "TIMEOUT", "crashed": "CRASH", "error": "ERROR"}


def _table_row(entry: dict[str, object], width: int) -> str:
    checks = f"{entry['checks_passed']}/{entry['checks_total']}" if entry["exercise"] is not None else "-"
    return f"{str(entry['path']):<{width}}  {str(entry['exercise'] or '?'):<26}  {checks:>6}  {_STATUS_WORD[str(entry['status'])]:<7}  {entry['seconds']:>5.1f} s"


def grade(
    paths: str | Path | Sequence[str | Path],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    as_json: bool = False,
    hint: int = 1,
    jobs: int | None = None,
    memory_mb: int = DEFAULT_MEMORY_MB,
    out: TextIO | None = None,
) -> int:
    """Grade exercise files and folders, each file in its own child process; return the exit status.

    One file prints its report (a line per check, hints up to level
    ``hint``); several files or a folder print a table; ``as_json`` prints
    the JSON document described in the module docstring. ``jobs`` files are
    graded at a time (the number of CPUs by default).

    Args:
        paths: An exercise file or folder, or a list of them (folders are searched for ``*.py``).
        timeout: Seconds each file may take before it is stopped.
        as_json: Print one JSON document instead of text.
        hint: How many levels of hints to show after a failed check (1-3).
        jobs: How many files to grade at the same time.
        memory_mb: Address-space limit of each child process in MB (0: none).
        out: Where to print (standard output by default).

    Returns:
        0 if every check of every file passed, 1 if not, 2 if nothing could be graded.

    Examples:
        >>> import io, tempfile
        >>> from pathlib import Path
        >>> from microtape.grader import grade
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "runaway.py").write_text('EXERCISE = "ex00_gradient_by_hand"\\nwhile True:\\n    pass\\n')
        >>> text = io.StringIO()
        >>> grade(folder / "runaway.py", timeout=2, out=text)
        1
        >>> print(text.getvalue().splitlines()[-1])
        ex00_gradient_by_hand: stopped after 2 s while loading the file: an endless loop, or far too much work? 0 of 4 checks passed before that.
    """
    stream = out if out is not None else sys.stdout
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if timeout <= 0 or (jobs is not None and jobs < 1) or memory_mb < 0 or not 1 <= hint <= 3:
        print(f"grade: timeout={timeout}, jobs={jobs}, memory_mb={memory_mb}, hint={hint}: out of range.", file=stream)
        print("  hint: the timeout and jobs must be positive, the memory 0 (no limit) or more, the hint level 1 to 3.", file=stream)
        return 2
    files, problems = _collect(paths)
    if problems or not files:
        for what, how in problems or [("nothing to grade.", _starter_hint(""))]:
            print(f"grade: {what}\n  hint: {how}", file=stream)
        return 2
    single = len(paths) == 1 and Path(paths[0]).is_file()
    workers = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    entries: list[dict[str, object]] = []
    width = max(len(str(p)) for p in files)
    if not as_json and not single:
        print(f"{'file':<{width}}  {'exercise':<26}  {'checks':>6}  {'status':<7}  {'time':>7}", file=stream)
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for entry in pool.map(lambda p: _grade_one(p, timeout, memory_mb, hint), files):
                entries.append(entry)
                if not as_json:
                    print(entry["report"] if single else _table_row(entry, width), file=stream, flush=True)
    finally:
        for proc in list(_RUNNING):  # Ctrl-C: stop every child still running
            _kill(proc)
    counts = {status: sum(1 for e in entries if e["status"] == status) for status in _STATUS_WORD}
    all_passed = counts["passed"] == len(entries)
    if as_json:
        document = {
            "schema_version": SCHEMA_VERSION, "microtape_version": __version__,
            "timeout_seconds": timeout, "memory_limit_mb": memory_mb, "hint_level": hint,
            "all_passed": all_passed, "summary": {"files": len(entries), **counts}, "files": entries,
        }
        print(json.dumps(document, indent=2, ensure_ascii=False), file=stream)
    elif not single:
        others = [f"{counts[s]} {w}" for s, w in (("failed", "failed"), ("timeout", "timed out"), ("crashed", "crashed"), ("error", "not exercises")) if counts[s]]
        extra = f" ({', '.join(others)})" if others else ""
        print(f"{counts['passed']} of {len(entries)} files passed every check{extra}.", file=stream)
        if not all_passed:
            print("details: python -m microtape grade FILE [--hint 2], or --json for everything", file=stream)
    if counts["error"] == len(entries):
        return 2
    return 0 if all_passed else 1
