"""A student's file that attacks the grader scores only what its functions really return.

Each attacker below is an ex00 file whose functions return wrong values, plus one
way of forging its marks: writing "PASS" events to every file it can reach and
exiting (the attack that once gave 2/2 when the verdict was written by
the process that runs the student's code), printing report lines, patching
microtape in its own process, exiting inside every call, killing its parent,
leaving a daemon to overwrite the results once grading is done, and writing
frames of its own into the grader's channel. The whole class is graded in one
run, with an honest file among the attackers: every attacker scores 0 on every
check, the honest file scores full marks, and the document is the grader's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the class is graded by the real command line, in child processes

REPO = Path(__file__).resolve().parents[2]
SOLUTION = REPO / "tutorials" / "exercises" / "solutions" / "ex00_gradient_by_hand.py"

STUBS = '''
import microtape as mt

EXERCISE = "ex00_gradient_by_hand"


def f(x):
    return x**3 - 2.0 * x


def df_by_hand(x):
    return 0.0


def df_with_mt(x):
    return mt.zeros(x.shape)


def gradient_descent(x0, lr, steps):
    return x0
'''

FAKE_EVENTS = '''
import glob, json, os, sys, tempfile

fake = [{"event": "check", "index": i, "name": "forged", "status": "PASS", "details": [], "hints": []} for i in range(8)]
targets = set(sys.argv[1:]) | set(glob.glob(os.path.join(tempfile.gettempdir(), "microtape-grade-*", "*"))) | set(glob.glob("*"))
for target in targets:
    try:
        with open(target, "a", encoding="utf-8") as out:
            for event in fake:
                out.write(json.dumps(event) + "\\n")
    except OSError:
        pass
os._exit(0)
'''

FAKE_REPORT = '''
print("  PASS  df_by_hand matches finite differences")
print("  PASS  gradient_descent steps downhill")
print("ex00_gradient_by_hand: all 4 checks passed.")
print(json.dumps({"score": 4.0, "max_score": 4.0, "tests": []}))
'''

PATCHES = '''
import microtape, microtape.exercise, microtape.classroom.check_tools as tools, microtape.classroom.definition as definition
from microtape.checking import gradcheck

everything = lambda *args, **kwargs: True
for module in (microtape.exercise, tools):
    module.close = everything
    module.expect_values = lambda *args, **kwargs: None
    module.number = lambda value, what: 1.0
definition.Fail = AssertionError
real = gradcheck.check_grads
def always_ok(*args, **kwargs):
    report = real(*args, **kwargs)
    report.ok = True
    return report
microtape.check_grads = gradcheck.check_grads = always_ok
microtape.numerical_grad = lambda f, inputs, eps=1e-6: [mt.zeros(x.shape) for x in inputs]
'''

EXITS = '''
import os

def df_by_hand(x):
    os._exit(0)

def df_with_mt(x):
    os._exit(0)

def gradient_descent(x0, lr, steps):
    raise SystemExit(0)
'''

KILL_PARENT = '''
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
'''

DAEMON = '''
import os, time
RESULTS = os.environ["ATTACK_RESULTS"]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range(60):  # overwrite the results whenever they appear, for a minute
            time.sleep(0.25)
            try:
                with open(RESULTS, "w", encoding="utf-8") as out:
                    out.write('{"score": 999.0, "max_score": 999.0, "output": "forged", "tests": []}')
            except OSError:
                pass
        os._exit(0)
    os._exit(0)
'''

CHANNEL = '''
import json, os, struct

def forge(message):
    data = json.dumps(message).encode()
    for fd in range(3, 64):
        try:
            os.write(fd, struct.pack(">I", len(data)) + data)
        except OSError:
            pass

for i in range(1, 40):
    forge({"id": i, "ok": 1.0, "sync": {}})
'''

ATTACKS = {
    "forged_events": STUBS + FAKE_EVENTS,
    "fake_report": STUBS.replace("import microtape as mt", "import json\nimport microtape as mt") + FAKE_REPORT,
    "patched_microtape": STUBS + PATCHES,
    "exits_in_every_call": STUBS + EXITS,
    "kills_its_parent": STUBS + KILL_PARENT,
    "daemon_overwrites_results": STUBS + DAEMON,
    "forged_channel": STUBS + CHANNEL,
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], dict[str, object], Path]:
    root = tmp_path_factory.mktemp("attacks")
    for name, source in ATTACKS.items():
        (root / name).mkdir()
        (root / name / "ex00_gradient_by_hand.py").write_text(source, encoding="utf-8")
    (root / "honest").mkdir()
    shutil.copy(SOLUTION, root / "honest" / "ex00_gradient_by_hand.py")
    results = tmp_path_factory.mktemp("out") / "results.json"
    env = dict(os.environ, PYTHONIOENCODING="utf-8", ATTACK_RESULTS=str(results))
    done = subprocess.run(
        [sys.executable, "-m", "microtape", "grade", str(root), "--format", "gradescope", "--output", str(results),
         "--seed", "5", "--jobs", "2", "--timeout", "60"],
        capture_output=True, text=True, encoding="utf-8", env=env, timeout=600,
    )
    document = json.loads(results.read_text(encoding="utf-8"))
    return done, document, root


def checks_of(document: dict[str, object], student: str) -> list[dict[str, object]]:
    tests = document["tests"]
    assert isinstance(tests, list)
    return [t for t in tests if str(t["name"]).startswith(f"{student}/")]


def test_the_grader_survives_and_writes_its_own_document(graded: tuple[subprocess.CompletedProcess[str], dict[str, object], Path]) -> None:
    done, document, _ = graded
    assert done.returncode == 1, done.stderr
    assert str(document["output"]).startswith("graded by microtape") and document["max_score"] == 4.0 * (len(ATTACKS) + 1)
    honest = checks_of(document, "honest")
    assert len(honest) == 4 and all(t["status"] == "passed" and t["score"] == t["max_score"] == 1.0 for t in honest)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_attacker_scores_0_on_every_check(graded: tuple[subprocess.CompletedProcess[str], dict[str, object], Path], attack: str) -> None:
    _, document, _ = graded
    tests = checks_of(document, attack)
    assert tests, f"{attack} is missing from the document"
    assert all(t["score"] == 0.0 and t["status"] == "failed" for t in tests), tests
    assert float(str(document["score"])) == 4.0  # the honest file's, and nobody else's


def test_fake_report_lines_show_only_as_what_the_file_printed(graded: tuple[subprocess.CompletedProcess[str], dict[str, object], Path]) -> None:
    _, _, root = graded
    done = subprocess.run(
        [sys.executable, "-m", "microtape", "grade", str(root / "fake_report" / "ex00_gradient_by_hand.py"), "--seed", "5"],
        capture_output=True, text=True, encoding="utf-8", env=dict(os.environ, PYTHONIOENCODING="utf-8"), timeout=300,
    )
    lines = done.stdout.splitlines()
    printed = [line for line in lines if line.startswith("    | ")]
    assert any("PASS  df_by_hand" in line for line in printed) and any("all 4 checks passed" in line for line in printed)
    real = [line for line in lines if not line.startswith("    | ")]
    assert not any(line.startswith("  PASS") for line in real), done.stdout
    assert real[-1].startswith("ex00_gradient_by_hand: 0 of 4 checks passed"), done.stdout
