"""Grading one file: its checks run here, against its code running in a child process, and here every mark is decided.

``grader.py`` calls ``grade_file`` once per file. The grader reads the file (never
runs it), finds its exercise and plans the checks: the shipped ones, then the
teacher's hidden ones. A file whose code is the starter's as handed out (in English
or in Russian, as a file or a notebook: compared as code, comments and docstrings
aside) is not run at all: every check is ``TODO``. Otherwise a child process
(``grade_child.py``) loads the file and each check runs *here*, with the student's
module replaced by a ``Submission`` (``proxy.py``): the check draws its inputs here,
keeps its references and comparisons here, and decides ``PASS`` or ``FAIL`` here,
from the values the student's functions returned. The child sends back only data,
so nothing a file does (writing files, printing report lines, patching microtape
in its own process, exiting, killing its parent) can reach a mark except through
what its functions really return.

Each check has its time limit (its check file's, or half the file's), inside the
file's (start-up included). A check that runs over it is ``TIMEOUT``, one during
which the child dies is ``CRASH`` (both 0 points); the child is then ended and a new
one loads the file for the next check, so one runaway check costs only its own
points. Ctrl-C or SIGTERM (``processes.STOP``) stops everything within a tenth of a
second.
"""

from __future__ import annotations

import ast
import contextvars
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

from ..engine import arena
from ..book import resources, statements
from ..book.notebooks import LOADED, NotebookError, code_of, without_bom
from .catalog import identify, load_exercise
from .check_tools import seed_checks
from .definition import Check, Exercise, Fail
from .processes import STOP, POLL_SECONDS, ChildRun, end_all, register, unregister
from .proxy import ChildGone, ChildTimeout, GradingStopped, LoadFailed, Session, Submission, grading
from .wire import Channel, ChannelClosed, ChannelError, message_lines

__all__ = ["CHECK_SHARE", "CheckResult", "Child", "FileGrade", "grade_file", "run_check", "untouched"]

CHECK_SHARE: Final = 0.5
"""A check's time limit, unless its check file sets one: this share of the file's limit."""


@dataclass
class CheckResult:
    """What one check of one file came to: ``status`` is PASS, FAIL, TODO, TIMEOUT, CRASH or NOT_RUN."""

    name: str
    points: int
    hidden: bool
    hints: tuple[str, ...]
    status: str = "NOT_RUN"
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class FileGrade:
    """What grading one file came to, before it is written up (``grader.py`` makes the report and the documents)."""

    exercise: Exercise | None = None
    problem: tuple[str, str] | None = None  # (what is wrong, hint) when the file cannot be graded at all
    checks: list[CheckResult] = field(default_factory=list)
    load_error: tuple[list[str], list[str]] | None = None
    notes: list[str] = field(default_factory=list)
    threads: list[str] = field(default_factory=list)
    timed_out: str | None = None  # "loading" or the check that was running when the file's time ran out
    crashed: tuple[str, int] | None = None  # (where, exit status) when the child died while loading
    untouched: bool = False
    stopped: bool = False  # grading was stopped (Ctrl-C, SIGTERM) while this file was graded
    printed: str = ""
    seconds: float = 0.0


# -- the starter as handed out -----------------------------------------------------------------


def _code_shape(code: str) -> str | None:
    """The code of ``code`` with docstrings, comments and layout left out (None if it does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


_STARTERS: dict[str, set[str]] = {}


def untouched(exercise: str, source: str, notebook: bool = False) -> bool:
    """Whether ``source`` is the starter of ``exercise`` as handed out: the same code, in English or in Russian, file or notebook.

    Examples:
        >>> from microtape.book.resources import starter_files
        >>> from microtape.classroom.judge import untouched
        >>> text = starter_files()[0].read_text(encoding="utf-8")
        >>> untouched("ex00_gradient_by_hand", text), untouched("ex00_gradient_by_hand", text.replace("raise NotImplementedError", "return 0.0 #"))
        (True, False)
    """
    if exercise not in _STARTERS:
        folder = resources.exercises_dir()
        path = folder / f"{exercise}.py" if folder is not None else None
        shapes: set[str] = set()
        if path is not None and path.is_file():
            text = path.read_text(encoding="utf-8")
            russian = statements.translate_starter(statements.translate_code(text), statements.catalog("ru"))
            shapes = {s for s in (_code_shape(text), _code_shape(russian)) if s is not None}
        _STARTERS[exercise] = shapes
    try:
        code = code_of(source).source if notebook else without_bom(source)
    except NotebookError:
        return False
    shape = _code_shape(code)
    return shape is not None and shape in _STARTERS[exercise]


# -- the child process -------------------------------------------------------------------------------


class Child:
    """A process running ``grade_child`` for one file, and the pipes to it (see ``wire.py``)."""

    def __init__(self, memory_mb: int, output: IO[bytes], cwd: str, env: dict[str, str]) -> None:
        command = [sys.executable, "-m", "microtape.classroom.grade_child", str(memory_mb)]
        self.proc: subprocess.Popen[bytes] = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=output,
            cwd=cwd, env=env, start_new_session=True,  # a student's json.py cannot shadow the grader's; its group dies with it
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.run: ChildRun = ChildRun(self.proc)
        register(self.run)
        self.channel: Channel = Channel(self.proc.stdout.fileno(), self.proc.stdin.fileno(), owns=False)
        self.last_watch: float = 0.0

    def request(self, message: dict[str, object], deadline: float | None) -> dict[str, object]:
        """Send ``message`` and wait for the answer until ``deadline`` (``ChildTimeout``), a stop (``GradingStopped``) or the end (``ChildGone``)."""
        try:
            self.channel.send(message)
        except (ChannelClosed, ChannelError) as err:
            raise ChildGone(self.why_gone(str(err))) from None
        while True:
            now = time.monotonic()
            if STOP.is_set():
                raise GradingStopped()
            if deadline is not None and now >= deadline:
                raise ChildTimeout()
            if now - self.last_watch >= 0.1:
                self.run.watch()  # remember what it starts: ended with it, even after setsid
                self.last_watch = now
            wait = POLL_SECONDS if deadline is None else min(POLL_SECONDS, max(0.0, deadline - now))
            try:
                reply = self.channel.receive(wait)
            except (ChannelClosed, ChannelError) as err:
                raise ChildGone(self.why_gone(str(err))) from None
            if reply is not None:
                return reply

    def why_gone(self, what: str) -> str:
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return f"its channel ended ({what}) while it still ran"
        return str(code)

    @property
    def code(self) -> int | None:
        return self.proc.poll()

    def end(self) -> None:
        """Kill it and everything it started; close the pipes."""
        end_all(self.run)
        unregister(self.run)
        self.channel.join(2.0)  # its reader has seen the end of the pipe: the pipe's number cannot be another child's yet
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


def child_env() -> dict[str, str]:
    """The child finds this very copy of microtape, whatever folder it starts in."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1", PYTHONSAFEPATH="1")
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


# -- the checks ----------------------------------------------------------------------------------------

Plan = list[tuple[Check, bool]]


def plan_of(exercise: Exercise, checks_dir: Path | None) -> Plan:
    """The checks to run: the exercise's own, then the teacher's hidden ones."""
    hidden = load_exercise(exercise.name, checks_dir) if checks_dir is not None else None
    if hidden is exercise:  # an exercise only the teacher's folder has: every check is hidden
        return [(c, True) for c in exercise.checks]
    return [(c, False) for c in exercise.checks] + [(c, True) for c in (hidden.checks if hidden is not None else [])]


def explain(err: BaseException) -> list[str]:
    """What an exception a check met says: the student's code's (with its line), or the check's own."""
    lines = getattr(err, "student_lines", None)
    if isinstance(lines, list):
        return [str(line) for line in lines]
    return [f"the check raised {type(err).__name__}:", *("  " + line for line in message_lines(err))]


def run_check(check: Check, module: Submission, session: Session) -> tuple[str, list[str]]:
    """Run one check here, against the student's module over there: ``(status, detail lines)``.

    The status is PASS, FAIL (the check's ``Fail``, or an exception, the student's
    code's with its line) or TODO (a ``NotImplementedError``); a time limit, a
    child that ends and a stop are raised for ``grade_file`` to handle.

    Examples:
        >>> from microtape.exercise import Exercise, Fail, fn
        >>> from microtape.classroom.judge import run_check
        >>> from microtape.classroom.proxy import LoopbackTransport, Session
        >>> session = Session(LoopbackTransport(), "ex.py")
        >>> m = session.load("def twice(x):\\n    return x + x + 1\\n")
        >>> ex = Exercise("ex99_demo", chapter=0, title="demo")
        >>> @ex.check("twice doubles", hints=("add it to itself",))
        ... def doubles(m):
        ...     if fn(m, "twice")(2) != 4:
        ...         raise Fail("twice(2) is wrong.")
        >>> run_check(ex.checks[0], m, session)
        ('FAIL', ['twice(2) is wrong.'])
    """

    def run() -> None:
        with grading(session):
            arena.run_in_scope(f"grade: {check.name}", lambda: check.run(module), returns_tensors=False)

    session.begin(check.name)
    try:
        contextvars.copy_context().run(run)
    except Fail as fail:
        return "FAIL", str(fail).splitlines()
    except NotImplementedError as err:
        todo = " ".join(" ".join(message_lines(err)).split()) or "a function still raises NotImplementedError"
        return "TODO", [f"not done yet: {todo}{getattr(err, 'student_where', '')}"]
    except (ChildTimeout, ChildGone, GradingStopped):
        raise
    except BaseException as err:  # noqa: BLE001 - whatever the check met (the student's SystemExit too) fails the check alone
        return "FAIL", explain(err)
    return "PASS", []


@dataclass(frozen=True)
class Limits:
    """How long a file and each of its checks may take, how much memory, the seed, the teacher's hidden checks."""

    timeout: float
    memory_mb: int
    seed: int
    checks_dir: Path | None


def grade_file(path: Path, limits: Limits, start: Callable[[], Child]) -> FileGrade:
    """Grade one file (see the module docstring); ``start()`` makes a new child process."""
    began = time.monotonic()
    grade = FileGrade()
    found, source = identify(path, limits.checks_dir)
    if not isinstance(found, Exercise):
        grade.problem = (found, source)
        return grade
    grade.exercise = found
    plan = plan_of(found, limits.checks_dir)
    grade.checks = [CheckResult(c.name, c.points, hidden, c.hints) for c, hidden in plan]
    notebook = path.suffix == ".ipynb"
    file = str(path.resolve())
    if notebook:
        try:
            LOADED[file] = code = code_of(source)  # where the student's lines are, as cells and lines in them
            grade.notes = code.messages()
        except NotebookError:
            pass
    if untouched(found.name, source, notebook):
        grade.untouched = True
        for result in grade.checks:
            result.status = "TODO"
            result.details = ["not started: the file's code is the starter's, as handed out."]
        return grade
    deadline = began + limits.timeout
    child: Child | None = None
    session: Session | None = None
    module: Submission | None = None
    try:
        for (check, _hidden), result in zip(plan, grade.checks):
            if time.monotonic() >= deadline:
                grade.timed_out = grade.timed_out or "after"
                break
            if child is None:
                child = start()
                session = Session(child, file)
                session.deadline = deadline
                try:
                    module = session.load(without_bom(source), notebook)
                except LoadFailed as failed:
                    grade.load_error = (failed.details, failed.hints)
                    break
                except ChildTimeout:
                    grade.timed_out = "loading"
                    break
                except ChildGone as gone:
                    grade.crashed = ("loading", _status(gone, child))
                    break
            assert session is not None and module is not None
            now = time.monotonic()
            own = check.timeout if check.timeout is not None else limits.timeout * CHECK_SHARE
            limit = min(own, deadline - now)
            session.deadline = now + limit
            seed_checks(limits.seed, check.name)
            started = time.monotonic()
            try:
                result.status, result.details = run_check(check, module, session)
            except ChildTimeout:
                if limit < own:  # the file's time ran out, not the check's
                    result.status, grade.timed_out = "TIMEOUT", check.name
                    result.details = [f"stopped when the file's {limits.timeout:g} s were up, in this check."]
                else:
                    result.status = "TIMEOUT"
                    result.details = [f"stopped after {own:g} s (the check's time limit): an endless loop, or far too much work?"]
                child.end()
                child = session = module = None
            except ChildGone as gone:
                result.status = "CRASH"
                result.details = [f"the grading process ended in this check without finishing ({_signal_name(_status(gone, child))})"]
                child.end()
                child = session = module = None
            else:
                try:
                    session.deadline = time.monotonic() + 5.0
                    session.end()
                except (ChildTimeout, ChildGone):
                    child.end()
                    child = session = module = None
            result.seconds = time.monotonic() - started
            if grade.timed_out:
                break
        if child is not None and session is not None:
            try:
                session.deadline = time.monotonic() + 2.0
                grade.threads = session.bye()
            except (ChildTimeout, ChildGone):
                pass
    except GradingStopped:  # Ctrl-C or SIGTERM: the grader reports the stop, not this file
        grade.stopped = True
    finally:
        if child is not None:
            child.end()
        grade.seconds = time.monotonic() - began
    return grade


def _status(gone: ChildGone, child: Child) -> int:
    text = str(gone)
    if text.lstrip("-").isdigit():
        return int(text)
    code = child.code
    return code if code is not None else 0


def _signal_name(code: int) -> str:
    import signal

    if code >= 0:
        return f"exit status {code}"
    try:
        return f"signal {signal.Signals(-code).name}"
    except ValueError:
        return f"signal {-code}"
