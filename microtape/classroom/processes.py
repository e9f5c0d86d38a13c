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

The time limits: the file's own limit (start-up included) and, inside it, a
limit per check. When a check runs over its limit, or its process dies, the
check is marked (``TIMEOUT`` or ``CRASH``, 0 points), the process is ended,
and a new child starts at the next check, so one runaway check costs only
its own points.

``STOP`` is set by Ctrl-C or SIGTERM (see ``stop_on_signals()``): every
watch loop notices it within a tenth of a second and ends its child.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = ["POLL_SECONDS", "STOP", "ChildRun", "EventReader", "alive", "end_all", "process_table", "run_checks", "stop_on_signals"]

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


# -- the events a child writes -------------------------------------------------------------


class EventReader:
    """Reads the JSON lines a child appends to its events file, as they come (whole lines only).

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from microtape.classroom.processes import EventReader
        >>> path = Path(tempfile.mkdtemp()) / "events.jsonl"
        >>> _ = path.write_text('{"event": "start"}\\n{"event": "runn')
        >>> reader = EventReader(path)
        >>> reader.read(), reader.read()
        ([{'event': 'start'}], [])
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset: int = 0

    def read(self) -> list[dict[str, object]]:
        """The events written since the last call."""
        try:
            with self.path.open("rb") as file:
                file.seek(self.offset)
                data = file.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1
        self.offset += end
        events: list[dict[str, object]] = []
        for line in data[:end].decode("utf-8", errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
        return events


# -- running a file's checks, restarting after a runaway check --------------------------------------


@dataclass
class Outcome:
    """What the parent saw: the events, and what it had to do (time limits, crashes, a stop)."""

    events: list[dict[str, object]] = field(default_factory=list)
    stopped: dict[int, tuple[str, str]] = field(default_factory=dict)  # check index -> (TIMEOUT | CRASH, why)
    file_timed_out: bool = False
    code: int = 0
    ended: bool = False
    interrupted: bool = False
    running: int | None = None


def _index(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def run_checks(
    start: Callable[[int], subprocess.Popen[bytes]], events_path: Path, timeout: float, check_limit: Callable[[int, list[dict[str, object]]], float]
) -> Outcome:
    """Run a file's checks in children started by ``start(first_check)``; end every process when done.

    ``check_limit(index, events)`` is the time limit of a check. A check that
    runs over it, or whose process dies, is recorded in ``Outcome.stopped``
    and a new child starts at the next check, while the file's ``timeout``
    lasts.
    """
    outcome = Outcome()
    reader = EventReader(events_path)
    deadline = time.monotonic() + timeout
    first = 0
    while True:
        run = ChildRun(start(first))
        with _RUNNING_LOCK:
            _RUNNING.add(run)
        running: int | None = None
        since = time.monotonic()
        ended = False
        why = ""
        last_watch = 0.0
        try:
            while True:
                for event in reader.read():
                    outcome.events.append(event)
                    kind = event.get("event")
                    if kind == "running":
                        running, since = _index(event.get("index")), time.monotonic()
                    elif kind == "check":
                        running = None
                    elif kind == "end":
                        ended = True
                code = run.proc.poll()
                now = time.monotonic()
                if code is not None or ended:
                    break
                if STOP.is_set():
                    outcome.interrupted, why = True, "stop"
                    break
                if now >= deadline:
                    why = "file"
                    break
                if running is not None and now - since >= check_limit(running, outcome.events):
                    why = "check"
                    break
                if now - last_watch >= 0.1:
                    run.watch()
                    last_watch = now
                time.sleep(POLL_SECONDS)
        finally:
            end_all(run)
        outcome.events += reader.read()
        ended = ended or any(e.get("event") == "end" for e in outcome.events[-1:])
        outcome.code = run.proc.returncode
        outcome.running = running
        if ended or why == "stop":
            outcome.ended = ended
            return outcome
        if why == "file":
            outcome.file_timed_out = True
            return outcome
        if running is None:  # died while loading the file, or between checks
            return outcome
        outcome.stopped[running] = ("TIMEOUT", "check") if why == "check" else ("CRASH", str(outcome.code))
        first = running + 1
        plans = [plan for e in outcome.events if e.get("event") == "start" and isinstance(plan := e.get("plan"), list)]
        total = len(plans[0]) if plans else 0
        if first >= total:
            outcome.ended = True
            return outcome
