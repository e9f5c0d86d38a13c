"""Grading leaves nothing running: children, forks, escaped daemons and threads end with their file.

The student files here start processes and write their ids to a file; the
tests then read the process table (``/proc``, ``os.kill(pid, 0)``), polling
with a deadline, never sleeping and hoping. Ctrl-C and SIGTERM are sent to
a real ``python -m microtape grade`` while it grades runaway files.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from microtape.classroom.processes import alive

pytestmark = [
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc (Linux)"),
    pytest.mark.slow,  # every test here starts graders and the processes they must end
]

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "tutorials" / "exercises" / "solutions"
ENV = dict(os.environ, PYTHONIOENCODING="utf-8")


def solution(name: str) -> str:
    return (SOLUTIONS / f"{name}.py").read_text(encoding="utf-8")


def spawner(pids: Path, *, sleep: bool = False, fork: bool = False, daemon: bool = False, thread: bool = False) -> str:
    """Module-level code that starts processes (and records their ids in ``pids``) when the file is loaded."""
    lines = ["import os as _os, subprocess as _sp, threading as _th, time as _t", f"_PIDS = {str(pids)!r}",
             "def _record(pid):", "    with open(_PIDS, 'a') as f:", "        f.write(f'{pid}\\n')"]
    if sleep:
        lines += ["_record(_sp.Popen(['sleep', '1000']).pid)"]
    if fork:
        lines += ["_pid = _os.fork()", "if _pid == 0:", "    while True:", "        pass", "_record(_pid)"]
    if daemon:  # a grandchild that leaves the session (setsid) after its parent has exited
        lines += [
            "_pid = _os.fork()",
            "if _pid == 0:",
            "    _os.setsid()",
            "    if _os.fork() == 0:",
            "        _record(_os.getpid())",
            "        while True:",
            "            pass",
            "    _os._exit(0)",
            "_os.waitpid(_pid, 0)",
            "_t0 = _t.monotonic()",
            "while len(open(_PIDS).read().split()) < 1 + " + str(int(sleep) + int(fork)) + " and _t.monotonic() - _t0 < 5:",
            "    _t.sleep(0.01)",
        ]
    if thread:
        lines += ["_th.Thread(target=lambda: _t.sleep(1000), name='left-behind').start()"]
    return "\n".join(lines) + "\n"


def recorded(pids: Path) -> list[int]:
    return [int(p) for p in pids.read_text().split()] if pids.exists() else []


def gone_within(pids: list[int], seconds: float) -> list[int]:
    """The processes still alive after waiting up to ``seconds`` for them all to end."""
    deadline = time.monotonic() + seconds
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


def grade_json(*args: str | Path) -> tuple[int, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "microtape", "grade", *map(str, args), "--json"],
        capture_output=True, text=True, encoding="utf-8", env=ENV, timeout=300,
    )
    assert "Traceback" not in done.stderr, done.stderr
    document = json.loads(done.stdout)
    assert isinstance(document, dict)
    return done.returncode, document


def only_entry(document: dict[str, object]) -> dict[str, object]:
    files = document["files"]
    assert isinstance(files, list) and len(files) == 1
    entry = files[0]
    assert isinstance(entry, dict)
    return entry


def test_a_passing_file_leaves_no_process(tmp_path: Path) -> None:
    """Bug guarded: a file that passed left ``sleep 1000``, a spinning fork and a setsid daemon running."""
    pids = tmp_path / "pids.txt"
    student = tmp_path / "ex01_variables_sgd.py"
    student.write_text(solution("ex01_variables_sgd") + spawner(pids, sleep=True, fork=True, daemon=True), encoding="utf-8")
    code, document = grade_json(student, "--timeout", "60")
    entry = only_entry(document)
    assert code == 0 and entry["status"] == "passed", entry["report"]
    started = recorded(pids)
    assert len(started) >= 3, started  # the child of each restart records its own; at least one run's worth
    assert gone_within(started, 5.0) == []


def test_threads_left_running_are_reported_and_ended(tmp_path: Path) -> None:
    """Bug guarded: a passing file that left a thread was reported as "stopped while loading the file"."""
    student = tmp_path / "ex01_variables_sgd.py"
    student.write_text(solution("ex01_variables_sgd") + spawner(tmp_path / "pids.txt", thread=True), encoding="utf-8")
    code, document = grade_json(student, "--timeout", "60")
    entry = only_entry(document)
    assert code == 0 and entry["status"] == "passed", entry["report"]
    assert "left 1 thread(s) running (left-behind)" in str(entry["message"])
    assert "while loading the file" not in str(entry["report"])
    assert float(str(entry["seconds"])) < 30  # it ended when its checks did, not at the time limit


def first_call_only(marker: Path, body: str) -> str:
    """``df_with_mt`` runs ``body`` at its first call in the whole grading (a marker file remembers it across processes)."""
    return solution("ex00_gradient_by_hand").replace(
        "def df_with_mt(x: mt.Tensor) -> mt.Tensor:\n",
        "def df_with_mt(x: mt.Tensor) -> mt.Tensor:\n"
        f"    import os, pathlib\n    if not pathlib.Path({str(marker)!r}).exists():\n"
        f"        pathlib.Path({str(marker)!r}).touch()\n        {body}\n",
        1,
    )


def test_a_runaway_check_scores_0_and_the_next_checks_still_run(tmp_path: Path) -> None:
    """Bug guarded: one endless check cost the whole file its points; now only its own, and the next checks run."""
    (tmp_path / "loops").mkdir()
    (tmp_path / "crashes").mkdir()
    loop = first_call_only(tmp_path / "looped", "while True: pass")
    (tmp_path / "loops" / "ex00_gradient_by_hand.py").write_text(loop, encoding="utf-8")
    crash = first_call_only(tmp_path / "crashed", "os._exit(3)")
    (tmp_path / "crashes" / "ex00_gradient_by_hand.py").write_text(crash, encoding="utf-8")
    code, document = grade_json(tmp_path, "--timeout", "12", "--jobs", "2")
    files = document["files"]
    assert isinstance(files, list) and code == 1
    crashes, loops = files
    statuses = [c["status"] for c in loops["checks"]]
    assert statuses.count("TIMEOUT") == 1 and set(statuses) == {"PASS", "TIMEOUT"}, loops["report"]
    assert statuses[-1] == "PASS"  # the checks after the runaway one ran
    assert loops["status"] == "timeout" and loops["score"] == loops["max_score"] - 1
    assert "stopped after 6 s (the check's time limit)" in str(loops["report"])
    statuses = [c["status"] for c in crashes["checks"]]
    assert statuses.count("CRASH") == 1 and set(statuses) == {"PASS", "CRASH"} and statuses[-1] == "PASS", crashes["report"]
    assert crashes["status"] == "crashed" and crashes["score"] == crashes["max_score"] - 1
    assert "exit status 3" in str(crashes["report"])


def runaway_class(tmp_path: Path, count: int) -> tuple[Path, Path]:
    """Files that start a ``sleep`` child and then loop at import (each run records its child)."""
    pids = tmp_path / "pids.txt"
    folder = tmp_path / "class"
    folder.mkdir()
    for i in range(count):
        (folder / f"student{i}.py").write_text(
            'EXERCISE = "ex00_gradient_by_hand"\n' + spawner(pids, sleep=True, fork=True) + "while True:\n    pass\n", encoding="utf-8"
        )
    return folder, pids


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code", "word"), [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")])
def test_a_signal_stops_grading_at_once_and_ends_every_child(tmp_path: Path, sig: signal.Signals, code: int, word: str) -> None:
    """Bug guarded: Ctrl-C waited for every file's time limit and printed a traceback; SIGTERM left the children running."""
    folder, pids = runaway_class(tmp_path, 4)
    grader = subprocess.Popen(
        [sys.executable, "-m", "microtape", "grade", str(folder), "--timeout", "120", "--jobs", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )
    try:
        deadline = time.monotonic() + 60
        while len(recorded(pids)) < 4 and time.monotonic() < deadline:  # two files running, each with two children
            time.sleep(0.02)
        started = recorded(pids)
        assert len(started) >= 4, started
        sent = time.monotonic()
        grader.send_signal(sig)
        out, err = grader.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if grader.poll() is None:
            grader.kill()
    assert grader.returncode == code, err
    assert took < 2.0, took
    assert "Traceback" not in err and f"grade: stopped by {word}" in err
    assert gone_within(started, 5.0) == []
