"""The grading child process: run one student file's checks, write what happens as JSON lines.

A notebook (``.ipynb``) runs as the module made of its code cells (see
``notebooks.py``); its errors name the cell and the line in it.

``grader.py`` starts one of these per file with
``python -m microtape.classroom.grade_child FILE EVENTS MEMORY_MB FIRST SEED [CHECKS]``. Before touching
the student's file the child caps its own address space at ``MEMORY_MB``
(``resource.RLIMIT_AS``, where the OS has it) and the size of any file it
writes (so endless printing stops), then loads the file under a fresh module
name and runs its exercise's checks. Every step is appended to ``EVENTS``
at once, one JSON object a line, so when the parent has to kill the child
(time limit) or the child dies (a crash, ``os._exit``), the parent still
knows which checks finished and which one was running.

Events: ``{"event": "start", "exercise", "chapter", "title", "checks": [names],
"plan": [{"name", "points", "timeout", "hidden", "hints"}]}``, then ``{"event":
"running", "index", "check"}`` and ``{"event": "check", "index", "name",
"status", "details", "hints"}`` per check, or ``{"event": "load_failed",
"details"}``; ``{"event": "notes", "notes"}`` when a notebook's magic or shell
lines were skipped; an unknown file gives ``{"event": "error", "message", "hint"}``;
``{"event": "threads", "names"}`` when the file left threads running; the last
line is ``{"event": "end"}``, and then the process ends at once (threads or not).

The checks are the exercise's own, then (with ``CHECKS``, the teacher's
``--checks`` folder) the hidden ones of the same exercise. The child runs
them from the one numbered ``FIRST`` (the grader starts a new child after a
check that ran over its time or crashed); before each check it seeds the
checks' random inputs with ``SEED`` and the check's name, so a check draws
the same inputs whichever child runs it. Each check runs in a copy of the
context and in its own tidy scope, so a tape left open, a leak or a crash
in one check cannot change the next.
"""

from __future__ import annotations

import contextvars
import json
import linecache
import os
import sys
import threading
import traceback
import types
from collections.abc import Callable
from typing import NoReturn
from pathlib import Path

from ..engine import arena
from .processes import process_table
from .definition import Check, Exercise, Fail
from .check_tools import seed_checks
from .catalog import identify, load_exercise
from ..book.notebooks import LOADED, NotebookError, code_of, place

__all__ = ["run_file"]

Emit = Callable[[dict[str, object]], None]

FILE_SIZE_LIMIT = 64 * 2**20
"""The most a graded file (or its printing) may write to one file, in bytes."""


def _line(path: Path, line: int | None) -> str:
    """'file.py:12', or 'file.ipynb, cell 3, line 2' for a notebook."""
    return place(str(path), "?" if line is None else line)


def _where(err: BaseException, path: Path) -> str:
    """' (file.py:12 in f)' (or ' (file.ipynb, cell 3, line 2 in f)') for the innermost frame of the student's file, or ''."""
    if isinstance(err, SyntaxError) and err.filename == str(path) and err.lineno is not None:
        return f" ({_line(path, err.lineno)})"
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == str(path)]
    if not frames:
        return ""
    f = frames[-1]
    return f" ({_line(path, f.lineno)} in {f.name})"


def _message(err: BaseException, limit: int = 12) -> list[str]:
    text = str(err) if not isinstance(err, SyntaxError) else (err.msg or "invalid syntax")
    lines = text.splitlines() or [""]
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more lines)"]
    return lines


def _explain(err: BaseException, path: Path) -> list[str]:
    """What a student's exception says: 'your code raised X (file.py:3 in f):' and its message."""
    origin = "your code" if _where(err, path) else "the check"
    lines = [f"{origin} raised {type(err).__name__}{_where(err, path)}:", *("  " + line for line in _message(err))]
    if isinstance(err, MemoryError):
        lines.append("  (the grader limits each file's memory; an allocation this large is a bug)")
    if isinstance(err, SystemExit):
        lines.append("  (sys.exit() or exit() stops a program; an exercise function returns instead)")
    return lines


def _run_check(check: Check, module: types.ModuleType, path: Path) -> tuple[str, list[str]]:
    """Run one check in its own context and tidy scope; return (status, detail lines)."""

    def run() -> None:
        arena.run_in_scope(f"grade: {check.name}", lambda: check.run(module))

    try:
        contextvars.copy_context().run(run)
    except Fail as fail:
        return "FAIL", str(fail).splitlines()
    except NotImplementedError as err:
        todo = " ".join(str(err).split()) or "a function still raises NotImplementedError"
        return "TODO", [f"not done yet: {todo}{_where(err, path)}"]
    except BaseException as err:  # noqa: BLE001 - a student's bug (even sys.exit) must never stop the grader
        return "FAIL", _explain(err, path)
    return "PASS", []


def run_file(path: Path, emit: Emit, *, first: int = 0, seed: int = 0, checks_dir: Path | None = None) -> None:
    """Grade ``path``, reporting every step through ``emit`` (see the module docstring).

    Examples:
        >>> from pathlib import Path
        >>> events = []
        >>> run_file(Path("no_such_file.py"), events.append)
        >>> events[0]["event"], events[-1]
        ('error', {'event': 'end'})
    """
    try:
        _run(path, emit, first, seed, checks_dir)
    finally:
        emit({"event": "end"})


Plan = list[tuple[Check, bool]]


def _plan(exercise: Exercise, checks_dir: Path | None) -> Plan:
    """The checks to run: the exercise's own, then the teacher's hidden ones."""
    hidden = load_exercise(exercise.name, checks_dir) if checks_dir is not None else None
    if hidden is exercise:  # an exercise only the teacher's folder has: every check is hidden
        return [(c, True) for c in exercise.checks]
    return [(c, False) for c in exercise.checks] + [(c, True) for c in (hidden.checks if hidden is not None else [])]


def _run(path: Path, emit: Emit, first: int, seed: int, checks_dir: Path | None) -> None:
    exercise, source = identify(path, checks_dir)
    if not isinstance(exercise, Exercise):
        emit({"event": "error", "message": exercise, "hint": source})
        return
    plan = _plan(exercise, checks_dir)
    emit(
        {
            "event": "start",
            "exercise": exercise.name,
            "chapter": exercise.chapter,
            "title": exercise.title,
            "checks": [c.name for c, _ in plan],
            "plan": [
                {"name": c.name, "points": c.points, "timeout": c.timeout, "hidden": hidden, "hints": list(c.hints)} for c, hidden in plan
            ],
        }
    )
    file = path.resolve()
    module = types.ModuleType(f"_microtape_exercise_{file.stem}")
    module.__file__ = str(file)
    sys.modules[module.__name__] = module  # dataclasses and typing look modules up while the file runs
    if file.suffix == ".ipynb":
        try:
            notebook = code_of(source)
        except NotebookError as err:
            emit({"event": "load_failed", "details": [f"the notebook {file.name} cannot be read: {err}."],
                  "hints": ["open it in Jupyter and save it again (File > Save), or hand out a fresh starter with exercises DIR --notebook."]})
            return
        LOADED[str(file)] = notebook  # its lines are shown as cells and lines in them (see notebooks.place)
        source = notebook.source
        linecache.cache[str(file)] = (len(source), None, source.splitlines(keepends=True), str(file))  # tracebacks, inspect
        if notebook.notes:
            emit({"event": "notes", "notes": [f"not run (IPython magics and shell lines are not Python): {'; '.join(notebook.notes)}"]})
    try:
        code = compile(source, str(file), "exec")
    except SyntaxError as err:
        text = f"          {err.text.rstrip()}" if err.text else ""
        details = [f"the file does not parse: SyntaxError{_where(err, file)}: {err.msg}", *([text.strip()] if text else [])]
        emit({"event": "load_failed", "details": details, "hints": ["fix the line shown (or the one before it), then grade again."]})
        return
    _load_and_check(plan, module, code, file, emit, first, seed)


def _seed(seed: int, check: str) -> None:
    """Seed the checks' random inputs: each check draws from ``Random(f"{seed}/{check}")``."""
    seed_checks(seed, check)


def _load_and_check(plan: Plan, module: types.ModuleType, code: types.CodeType, file: Path, emit: Emit, first: int, seed: int) -> None:
    def body() -> None:
        try:
            exec(code, module.__dict__)  # noqa: S102 - running the student's file is the point
        except BaseException as err:  # noqa: BLE001 - even sys.exit at import is reported
            emit(
                {
                    "event": "load_failed",
                    "details": [line.replace("your code raised", "loading the file raised", 1) for line in _explain(err, file)],
                    "hints": ["the file must run top to bottom without errors; keep module-level code to definitions and constants."],
                }
            )
            return
        for index, (check, _hidden) in enumerate(plan):
            if index < first:
                continue
            emit({"event": "running", "index": index, "check": check.name})
            _seed(seed, check.name)
            status, details = _run_check(check, module, file)
            emit({"event": "check", "index": index, "name": check.name, "status": status, "details": details, "hints": list(check.hints)})

    contextvars.copy_context().run(lambda: arena.run_in_scope(f"grade {file.name}", body))


def _limit_resources(memory_mb: int) -> None:
    """Cap this process's address space and file sizes, where the OS allows it."""
    try:
        import resource
    except ImportError:  # Windows: no rlimits; the time limit still applies
        return
    limits = [(resource.RLIMIT_FSIZE, FILE_SIZE_LIMIT)]
    if memory_mb > 0:
        limits.append((resource.RLIMIT_AS, memory_mb * 2**20))
    for which, value in limits:
        try:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, hard))
        except (ValueError, OSError):  # not supported here (RLIMIT_AS on macOS): go on without it
            pass


def _become_subreaper() -> None:
    """Linux: orphans of what the file starts become this process's children, so none escapes the tree."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):  # no prctl here: the grader's group and session kills remain
        pass


def _end_descendants() -> None:
    """Kill every process below this one (children, forks, daemons that left the session), a few rounds."""
    me = os.getpid()
    for _ in range(5):
        table = process_table()
        below: set[int] = set()
        todo = [me]
        while todo:
            parent = todo.pop()
            for pid, (ppid, *_rest) in table.items():
                if ppid == parent and pid not in below and table[pid][4] != "Z":
                    below.add(pid)
                    todo.append(pid)
        if not below:
            return
        for pid in below:
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def _threads_left() -> list[str]:
    """The names of the threads still running besides this one (a file's own threads)."""
    return [t.name for t in threading.enumerate() if t is not threading.current_thread() and t.is_alive()]


def main(argv: list[str]) -> int:
    """``python -m microtape.classroom.grade_child FILE EVENTS MEMORY_MB FIRST SEED [CHECKS]``."""
    file, events, memory_mb, first, seed = Path(argv[0]), Path(argv[1]), int(argv[2]), int(argv[3]), int(argv[4])
    checks_dir = Path(argv[5]) if len(argv) > 5 and argv[5] else None
    out = events.open("a", encoding="utf-8")

    def emit(event: dict[str, object]) -> None:
        if event.get("event") == "end" and (left := _threads_left()):
            emit({"event": "threads", "names": left[:10]})
        out.write(json.dumps(event, ensure_ascii=False) + "\n")
        out.flush()

    _limit_resources(memory_mb)
    _become_subreaper()
    run_file(file, emit, first=first, seed=seed, checks_dir=checks_dir)
    out.close()
    _end_descendants()
    return 0


def _exit(status: int) -> NoReturn:
    """Flush what the file printed and end at once: threads it left running must not keep the process alive."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


if __name__ == "__main__":
    _exit(main(sys.argv[1:]))  # threads a graded file left running must not keep its process alive
