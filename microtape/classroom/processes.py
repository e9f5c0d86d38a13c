"""The grader's child processes: start one per graded file, watch it, and leave nothing behind.

The child (``python -m microtape.classroom.grade_child``) starts in a
session of its own (``start_new_session=True``), so everything it starts
with ``fork``, ``subprocess`` or ``multiprocessing`` shares its process
group and its session. On Linux the child also makes itself the "subreaper"
of what it starts (``prctl``), so a daemon whose parent exits stays in its
tree, and it kills its whole tree before it exits. When the file's grading
ends, passed or not, ``end_all()`` kills the group, every process of the
session (even one whose parent died and was handed to ``init``), and every
descendant seen while the file ran (even one that called ``setsid`` to leave
the session). The process table is read from ``/proc`` (Linux); elsewhere
the group alone is killed.

``STOP`` is set by Ctrl-C or SIGTERM (see ``stop_on_signals()``): every
watch loop notices it within a tenth of a second and ends its child.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = ["POLL_SECONDS", "STOP", "ChildRun", "alive", "end_all", "process_table", "register", "stop_on_signals", "unregister"]

POLL_SECONDS: Final = 0.05
"""How often a running child is looked at (its events, its time, the stop flag)."""

STOP = threading.Event()
"""Set when grading must stop at once (Ctrl-C, SIGTERM): every child is ended."""

_PROC: Final = Path("/proc")


# -- the process table -------------------------------------------------------------------


def process_table() -> dict[int, tuple[int, int, int, str, str]]:
    """``{pid: (parent, group, session, start time, state)}`` of every process, from ``/proc`` (empty elsewhere).

    Examples:
        >>> import os
        >>> from microtape.classroom.processes import process_table
        >>> table = process_table()
        >>> not table or table[os.getpid()][0] == os.getppid()
        True
    """
    table: dict[int, tuple[int, int, int, str, str]] = {}
    try:
        names = os.listdir(_PROC)
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            text = (_PROC / name / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:  # ended while we looked
            continue
        fields = text.rpartition(")")[2].split()  # the command name may hold spaces and parentheses
        if len(fields) < 20:
            continue
        table[int(name)] = (int(fields[1]), int(fields[2]), int(fields[3]), fields[19], fields[0])
    return table


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie, dead but not yet reaped, is not).

    Examples:
        >>> import os
        >>> from microtape.classroom.processes import alive
        >>> alive(os.getpid())
        True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = (_PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True  # no /proc here: kill(pid, 0) is all we know
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


@dataclass(eq=False)
class ChildRun:
    """One child process and every process seen descending from it, as ``(pid, start time)``."""

    proc: subprocess.Popen[bytes]
    seen: set[tuple[int, str]] = field(default_factory=set)

    def watch(self) -> None:
        """Remember the child's descendants now (they are ended with it, even if they leave its session)."""
        table = process_table()
        children: dict[int, list[int]] = {}
        for pid, (parent, *_rest) in table.items():
            children.setdefault(parent, []).append(pid)
        todo = list(children.get(self.proc.pid, []))
        while todo:
            pid = todo.pop()
            self.seen.add((pid, table[pid][3]))
            todo += children.get(pid, [])


_RUNNING: set[ChildRun] = set()
_RUNNING_LOCK = threading.Lock()


def _kill_pid(pid: int, started: str | None, table: dict[int, tuple[int, int, int, str, str]]) -> None:
    if started is not None and (pid not in table or table[pid][3] != started):
        return  # ended already, and the number may belong to someone else now
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def end_all(run: ChildRun) -> None:
    """Kill the child, its process group, its session and every descendant seen, then reap the child.

    Examples:
        >>> import subprocess, sys
        >>> from microtape.classroom.processes import ChildRun, alive, end_all
        >>> proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
        >>> end_all(ChildRun(proc))
        >>> alive(proc.pid)
        False
    """
    pid = run.proc.pid
    if run.proc.poll() is None:
        run.watch()  # while the tree is whole: the child is their subreaper (see _grade_child)
    for _ in range(3):  # a process may fork while we kill: look again until nothing is left
        if hasattr(os, "killpg"):
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        else:  # pragma: no cover - Windows
            run.proc.kill()
        table = process_table()
        if run.proc.poll() is None:
            _kill_pid(pid, None, table)
        left = [p for p, (_, group, session, _, state) in table.items() if (session == pid or group == pid) and p != os.getpid() and state != "Z"]
        for p in left:
            _kill_pid(p, None, table)
        for p, started in list(run.seen):
            _kill_pid(p, started, table)
        run.proc.wait()
        if not left:
            break
    with _RUNNING_LOCK:
        _RUNNING.discard(run)


def register(run: ChildRun) -> None:
    """Remember a running child, so that a stop (Ctrl-C, SIGTERM) ends it too.

    Examples:
        >>> import subprocess, sys
        >>> from microtape.classroom.processes import ChildRun, end_all, register, unregister
        >>> run = ChildRun(subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True))
        >>> register(run); end_all(run); unregister(run)
    """
    with _RUNNING_LOCK:
        _RUNNING.add(run)


def unregister(run: ChildRun) -> None:
    """Forget a child that has been ended (see :func:`register`)."""
    with _RUNNING_LOCK:
        _RUNNING.discard(run)


def _end_every_child() -> None:
    with _RUNNING_LOCK:
        runs = list(_RUNNING)
    for run in runs:
        end_all(run)


@contextmanager
def stop_on_signals() -> Iterator[list[int]]:
    """While grading: Ctrl-C and SIGTERM set :data:`STOP` (the list receives the signal's number).

    Only the main thread can install handlers; elsewhere nothing changes.
    The old handlers come back on exit, and every child still running is ended.

    Examples:
        >>> from microtape.classroom.processes import STOP, stop_on_signals
        >>> with stop_on_signals() as received:
        ...     pass
        >>> received, STOP.is_set()
        ([], False)
    """
    received: list[int] = []
    STOP.clear()
    old: dict[signal.Signals, object] = {}

    def handler(signum: int, frame: object) -> None:
        received.append(signum)
        STOP.set()

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            old[sig] = signal.signal(sig, handler)
    try:
        yield received
    finally:
        _end_every_child()
        for sig, previous in old.items():
            signal.signal(sig, previous)  # type: ignore[arg-type]  # what signal.signal returned before
        STOP.clear()
