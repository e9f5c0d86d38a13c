#!/usr/bin/env python3
"""Classroom 50 autograder for microtape exercises: put it at CLASSROOM/autograders/ASSIGNMENT/autograder.py.

The runner calls it once per submission, in the student's checkout. It grades
every exercise file there and writes ``result.json`` (``classroom50/result/v1``:
``schema``, ``score``, ``max-score``, ``tests``); the runner stamps who
submitted what, and when. An ``assignment.toml`` beside this file (the
exercises, their points, its hidden checks' folder) makes an exercise the
student did not hand in score 0 as "not submitted"; without one, hidden checks
go in ``hidden_checks/`` beside this file. microtape must be installed in the
runner's Python, 3.10 or later (``pip install microtape``, in the assignment's
runtime block).

``CLASSROOM50_WORKSPACE`` (a folder) replaces the current one, to try it out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKSPACE = Path(os.environ.get("CLASSROOM50_WORKSPACE") or Path.cwd())
RESULT = WORKSPACE / "result.json"


def main() -> int:
    assignment, hidden = HERE / "assignment.toml", HERE / "hidden_checks"
    command = [sys.executable, "-m", "microtape", "grade", str(WORKSPACE), "--format", "classroom50",
               "--output", str(RESULT), "--timeout", "60", "--jobs", "1"]
    if assignment.is_file():
        command += ["--assignment", str(assignment)]  # its checks = "..." line names the hidden checks, if any
    elif hidden.is_dir():
        command += ["--checks", str(hidden)]
    RESULT.unlink(missing_ok=True)
    done = subprocess.run(command, check=False)
    if not RESULT.is_file():  # the grader itself could not run: still a valid result, scored 0
        message = f"the grader could not run (exit status {done.returncode}); see the workflow's log."
        test = {"test-name": "microtape grade", "passed": False, "score": 0, "max-score": 0, "message": message}
        document = {"schema": "classroom50/result/v1", "score": 0, "max-score": 0, "tests": [test]}
        RESULT.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    score = json.loads(RESULT.read_text(encoding="utf-8"))
    print(f"{score['score']}/{score['max-score']} across {len(score['tests'])} test(s)")
    return 0  # a failing grade is not a runner failure


if __name__ == "__main__":
    sys.exit(main())
