"""The grading child process: run one student file's checks, write what happens as JSON lines.

Read after ``grader.py``, which starts one of these per file with
``python -m microtape._grade_child FILE EVENTS MEMORY_MB``. Before touching
the student's file the child caps its own address space at ``MEMORY_MB``
(``resource.RLIMIT_AS``, where the OS has it) and the size of any file it
writes (so endless printing stops), then loads the file under a fresh module
name and runs its exercise's checks. Every step is appended to ``EVENTS``
at once, one JSON object a line, so when the parent has to kill the child
(time limit) or the child dies (a crash, ``os._exit``), the parent still
knows which checks finished and which one was running.

Events: ``{"event": "start", "exercise", "chapter", "title", "checks": [names]}``,
then ``{"event": "running", "check"}`` and ``{"event": "check", "name",
"status", "details", "hints"}`` per check, or ``{"event": "load_failed",
"details"}``; an unknown file gives ``{"event": "error", "message", "hint"}``;
the last line is ``{"event": "end"}``.

Each check runs in a copy of the context and in its own tidy scope, so a
tape left open, a leak or a crash in one check cannot change the next.
"""

from __future__ import annotations

import contextvars
import json
import sys
import traceback
import types
from collections.abc import Callable
from pathlib import Path

from . import _runtime
from .exercise import Check, Exercise, Fail
from .grader import identify

__all__ = ["run_file"]

Emit = Callable[[dict[str, object]], None]

FILE_SIZE_LIMIT = 64 * 2**20
"""The most a graded file (or its printing) may write to one file, in bytes."""


def _where(err: BaseException, path: Path) -> str:
    """' (file.py:12 in f)' for the innermost frame of the student's file, or ''."""
    if isinstance(err, SyntaxError) and err.filename == str(path) and err.lineno is not None:
        return f" ({path.name}:{err.lineno})"
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == str(path)]
    if not frames:
        return ""
    f = frames[-1]
    return f" ({path.name}:{f.lineno} in {f.name})"


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
        _runtime.run_in_scope(f"grade: {check.name}", lambda: check.run(module))

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


def run_file(path: Path, emit: Emit) -> None:
    """Grade ``path``, reporting every step through ``emit`` (see the module docstring).

    Examples:
        >>> from pathlib import Path
        >>> events = []
        >>> run_file(Path("no_such_file.py"), events.append)
        >>> events[0]["event"], events[-1]
        ('error', {'event': 'end'})
    """
    try:
        _run(path, emit)
    finally:
        emit({"event": "end"})


def _run(path: Path, emit: Emit) -> None:
    exercise, source = identify(path)
    if not isinstance(exercise, Exercise):
        emit({"event": "error", "message": exercise, "hint": source})
        return
    emit(
        {
            "event": "start",
            "exercise": exercise.name,
            "chapter": exercise.chapter,
            "title": exercise.title,
            "checks": [c.name for c in exercise.checks],
        }
    )
    file = path.resolve()
    module = types.ModuleType(f"_microtape_exercise_{file.stem}")
    module.__file__ = str(file)
    sys.modules[module.__name__] = module  # dataclasses and typing look modules up while the file runs
    try:
        code = compile(source, str(file), "exec")
    except SyntaxError as err:
        text = f"          {err.text.rstrip()}" if err.text else ""
        details = [f"the file does not parse: SyntaxError{_where(err, file)}: {err.msg}", *([text.strip()] if text else [])]
        emit({"event": "load_failed", "details": details, "hints": ["fix the line shown (or the one before it), then grade again."]})
        return
    _load_and_check(exercise, module, code, file, emit)


def _load_and_check(exercise: Exercise, module: types.ModuleType, code: types.CodeType, file: Path, emit: Emit) -> None:
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
        for check in exercise.checks:
            emit({"event": "running", "check": check.name})
            status, details = _run_check(check, module, file)
            emit({"event": "check", "name": check.name, "status": status, "details": details, "hints": list(check.hints)})

    contextvars.copy_context().run(lambda: _runtime.run_in_scope(f"grade {file.name}", body))


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


def main(argv: list[str]) -> int:
    """``python -m microtape._grade_child FILE EVENTS MEMORY_MB``."""
    file, events, memory_mb = Path(argv[0]), Path(argv[1]), int(argv[2])
    out = events.open("a", encoding="utf-8")

    def emit(event: dict[str, object]) -> None:
        out.write(json.dumps(event, ensure_ascii=False) + "\n")
        out.flush()

    _limit_resources(memory_mb)
    run_file(file, emit)
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
