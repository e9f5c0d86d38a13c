"""Grading a whole class: bad input is reported per path, never per class, and nothing is left running.

The last tests are the issue's "done when": a folder of about 30 student
files (correct work, a lookup table, an equality trick, runaway loops,
forks, ``sys.exit``, a symlink loop, an empty sub-folder...) graded in one
command to a Gradescope ``results.json`` with the right scores and no
process left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from microtape.classroom.processes import alive
from microtape.classroom.formats import GRADESCOPE_RESULTS, GRADESCOPE_TEST, problems
from microtape.classroom.catalog import list_exercises, load_exercise
from .test_grader_formats import LOOKUP_TABLE
from .test_grader_processes import first_call_only, spawner

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "tutorials" / "exercises" / "solutions"
STARTERS = REPO / "tutorials" / "exercises"
ENV = dict(os.environ, PYTHONIOENCODING="utf-8")

pytestmark = pytest.mark.slow  # every test here runs the grader in other processes


def run(*args: str | Path, env: dict[str, str] | None = None, command: str = "grade") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "microtape", command, *map(str, args)],
        capture_output=True, text=True, encoding="utf-8", errors="replace", env=env or ENV, timeout=600,
    )


def files_of(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, object]]:
    assert "Traceback" not in done.stderr, done.stderr
    document = json.loads(done.stdout)
    files = document["files"]
    assert isinstance(files, list)
    return {Path(str(e["path"])).name: e for e in files}


# -- bad input, one path at a time ------------------------------------------------------------


def test_symlink_loops_empty_folders_and_duplicates_are_per_path(tmp_path: Path) -> None:
    """Bug guarded: a symlink loop crashed the run, an empty folder stopped the class, a file named twice was graded three times."""
    good = tmp_path / "class" / "alice" / "ex01_variables_sgd.py"
    good.parent.mkdir(parents=True)
    shutil.copy(SOLUTIONS / "ex01_variables_sgd.py", good)
    (tmp_path / "class" / "alice" / "same.py").symlink_to(good)  # the same file again
    (tmp_path / "class" / "bob").mkdir()  # handed nothing in
    (tmp_path / "class" / "loop.py").symlink_to(tmp_path / "class" / "loop.py")
    (tmp_path / "class" / "alice" / "up").symlink_to(tmp_path / "class")  # a folder loop
    done = run(tmp_path / "class", good, tmp_path / "class" / "alice" / "same.py", tmp_path / "missing", "--json", "--jobs", "2")
    files = files_of(done)
    assert done.returncode == 1
    assert sorted(files) == ["bob", "ex01_variables_sgd.py", "loop.py", "missing", "up"]
    assert files["ex01_variables_sgd.py"]["status"] == "passed"
    assert "a symlink loop" in str(files["loop.py"]["message"])
    assert "a folder without .py files" in str(files["bob"]["message"])
    assert "a symlink to a folder above it" in str(files["up"]["message"])
    assert "no such file or folder" in str(files["missing"]["message"])
    assert all(files[name]["status"] == "error" for name in ("bob", "loop.py", "missing", "up"))


def test_unreadable_files_are_reported_and_the_rest_graded(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")  # reading it would block for ever: it is not a regular file
    (tmp_path / "latin1.py").write_bytes(b'EXERCISE = "ex00_gradient_by_hand"\n# caf\xe9\n')
    shutil.copy(SOLUTIONS / "ex01_variables_sgd.py", tmp_path / "ex01_variables_sgd.py")
    done = run(tmp_path, "--json", "--jobs", "2")
    files = files_of(done)
    assert done.returncode == 1 and files["ex01_variables_sgd.py"]["status"] == "passed"
    assert "not a regular file" in str(files["pipe.py"]["message"])
    assert "cannot read" in str(files["latin1.py"]["message"]) and "utf-8" in str(files["latin1.py"]["message"])


def test_nothing_gradable_still_prints_a_valid_document(tmp_path: Path) -> None:
    for fmt in ("json", "gradescope", "classroom50"):
        done = run(tmp_path, tmp_path / "missing.py", "--format", fmt)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        document = json.loads(done.stdout)
        assert isinstance(document, dict) and "missing.py" in done.stdout
    document = json.loads(run(tmp_path, "--format", "gradescope").stdout)
    assert problems(document, GRADESCOPE_RESULTS, GRADESCOPE_TEST, "score", "max_score") == []


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--timeout", "nan", "not a finite number of seconds"),
        ("--timeout", "inf", "not a finite number of seconds"),
        ("--timeout", "1e9", "out of range"),
        ("--timeout", "-1", "out of range"),
        ("--memory", "1", "out of range"),
        ("--memory", str(10**12), "out of range"),
        ("--jobs", "0", "out of range"),
        ("--seed", "-5", "out of range"),
    ],
)
def test_absurd_limits_are_refused(option: str, value: str, says: str) -> None:
    """Bug guarded: ``--timeout nan`` removed the limit."""
    done = run(SOLUTIONS / "ex01_variables_sgd.py", option, value)
    assert done.returncode == 2 and says in done.stdout + done.stderr and "Traceback" not in done.stderr


def test_an_output_file_that_cannot_be_written_is_refused(tmp_path: Path) -> None:
    done = run(SOLUTIONS / "ex01_variables_sgd.py", "--format", "gradescope", "--output", tmp_path / "no" / "results.json")
    assert done.returncode == 2 and "cannot write --output" in done.stderr and "Traceback" not in done.stderr


def test_the_json_message_carries_the_exceptions_text(tmp_path: Path) -> None:
    """Bug guarded: the JSON said "raised NameError (typo.py:2 in <module>):" and stopped there."""
    (tmp_path / "typo.py").write_text('EXERCISE = "ex00_gradient_by_hand"\ny = x + 1\n', encoding="utf-8")
    entry = files_of(run(tmp_path / "typo.py", "--json"))["typo.py"]
    assert entry["message"] == "could not load the file: loading the file raised NameError (typo.py:2 in <module>): name 'x' is not defined"


def test_a_terminal_that_cannot_encode_gets_replacements_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "ex00_gradient_by_hand.py").write_text(
        (STARTERS / "ex00_gradient_by_hand.py").read_text(encoding="utf-8") + "print('Привет, ∂f/∂x')\n", encoding="utf-8"
    )
    env = dict(os.environ, PYTHONIOENCODING="cp1252")
    done = run(tmp_path / "ex00_gradient_by_hand.py", env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr and "| ??????, ?f/?x" in done.stdout
    as_json = run(tmp_path / "ex00_gradient_by_hand.py", "--json", env=env)
    document = json.loads(as_json.stdout)  # escaped, so nothing is lost
    assert "Привет, ∂f/∂x" in document["files"][0]["output"]


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """Bug guarded: ``grade ... | head`` ended with a BrokenPipeError traceback."""
    for name in ("ex00_gradient_by_hand", "ex01_variables_sgd", "ex03_second_derivative"):
        shutil.copy(SOLUTIONS / f"{name}.py", tmp_path / f"{name}.py")
    grader = subprocess.Popen(
        [sys.executable, "-m", "microtape", "grade", str(tmp_path), "--jobs", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
    )
    assert grader.stdout is not None and grader.stderr is not None
    first = grader.stdout.readline()
    grader.stdout.close()  # like head -1
    err = grader.stderr.read().decode()
    grader.stderr.close()
    grader.wait(timeout=120)
    assert first.startswith(b"random inputs drawn with seed")
    assert "Traceback" not in err and "BrokenPipeError" not in err and grader.returncode == 141


def test_an_untouched_starter_is_todo_in_the_table(tmp_path: Path) -> None:
    shutil.copy(STARTERS / "ex04_softplus_vjp.py", tmp_path / "ex04_softplus_vjp.py")
    shutil.copy(SOLUTIONS / "ex01_variables_sgd.py", tmp_path / "ex01_variables_sgd.py")
    done = run(tmp_path, "--jobs", "2")
    [row] = [line for line in done.stdout.splitlines() if "ex04_softplus_vjp.py" in line]
    assert " TODO " in row and " FAIL " not in row


def test_exercises_list_shows_chapter_kind_minutes_and_points() -> None:
    """Guards a bug: ``exercises --list`` showed no points, so a teacher could not tell what to enter in a gradebook."""
    done = run("--list", command="exercises")
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[0].split() == ["exercise", "chapter", "kind", "minutes", "points", "title"]
    rows = {line.split()[0]: line.split() for line in lines[1:] if line.startswith("ex")}
    assert sorted(rows) == list_exercises()
    assert rows["ex00_gradient_by_hand"][1:3] == ["0", "writing"] and rows["ex04b_find_the_bug"][2] == "debugging"
    assert all(row[3] == "-" or row[3].isdigit() for row in rows.values())
    for name, row in rows.items():
        exercise = load_exercise(name)
        assert exercise is not None and row[4] == str(sum(c.points for c in exercise.checks)), name
    total = sum(int(row[4]) for row in rows.values())
    assert lines[-1].endswith(f"minutes and {total} points in all."), lines[-1]


# -- the "done when": a class of 30 files -------------------------------------------------------

EQUALITY_TRICK = '''EXERCISE = "ex07_profile_memory"
import microtape as mt
class Anything(int):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = int.__hash__
def layer(x, w):
    return mt.relu(x @ w).sum()
def leftover_tensors(fn):
    return Anything(0)
def profile_layer(x, w):
    return mt.profile(lambda: mt.tidy(lambda: layer(x, w)))
def extra_peak_bytes(fn):
    return Anything(0)
'''


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, dict[str, object]], list[int], Path]:
    """Grade the class folder in one command to a Gradescope results.json."""
    root = tmp_path_factory.mktemp("class")
    pids = root.parent / f"{root.name}-pids.txt"
    for name in list_exercises():
        (root / "correct" / name).mkdir(parents=True)
        shutil.copy(SOLUTIONS / f"{name}.py", root / "correct" / name / f"{name}.py")
    odd = root / "odd"
    odd.mkdir()
    ex00, ex01 = (SOLUTIONS / "ex00_gradient_by_hand.py").read_text(encoding="utf-8"), (SOLUTIONS / "ex01_variables_sgd.py").read_text(encoding="utf-8")
    files = {
        "lookup/ex00_gradient_by_hand.py": LOOKUP_TABLE,
        "trick/ex07_profile_memory.py": EQUALITY_TRICK,
        "loops_at_import/ex00_gradient_by_hand.py": 'EXERCISE = "ex00_gradient_by_hand"\nwhile True:\n    pass\n',
        "loops_in_a_check/ex00_gradient_by_hand.py": first_call_only(root.parent / f"{root.name}-looped", "while True: pass"),
        "forks/ex01_variables_sgd.py": ex01 + spawner(pids, fork=True),
        "popen/ex00_gradient_by_hand.py": ex00 + spawner(pids, sleep=True),
        "exits/ex00_gradient_by_hand.py": ex00 + "import sys\nsys.exit(3)\n",
        "starter/ex04_softplus_vjp.py": (STARTERS / "ex04_softplus_vjp.py").read_text(encoding="utf-8"),
        "syntax/ex00_gradient_by_hand.py": 'EXERCISE = "ex00_gradient_by_hand"\ndef f(x)\n    return x\n',
        "notes/notes.py": "print('hello')\n",
        "dies/ex00_gradient_by_hand.py": first_call_only(root.parent / f"{root.name}-died", "os._exit(9)"),
    }
    for relative, text in files.items():
        (odd / relative).parent.mkdir(parents=True)
        (odd / relative).write_text(text, encoding="utf-8")
    (odd / "links").mkdir()
    (odd / "links" / "loop.py").symlink_to(odd / "links" / "loop.py")
    (odd / "links" / "again.py").symlink_to(root / "correct" / "ex01_variables_sgd" / "ex01_variables_sgd.py")
    (odd / "empty").mkdir()
    results = root.parent / f"{root.name}-results.json"
    done = run(root, "--format", "gradescope", "--output", results, "--timeout", "12", "--jobs", "2", "--seed", "2026")
    assert "Traceback" not in done.stderr, done.stderr
    document = json.loads(results.read_text(encoding="utf-8"))
    assert problems(document, GRADESCOPE_RESULTS, GRADESCOPE_TEST, "score", "max_score") == []
    by_file: dict[str, dict[str, object]] = {}
    for test in document["tests"]:
        path = str(test["name"]).split(": ", 1)[0].split(" (")[0]
        entry = by_file.setdefault(path, {"score": 0.0, "max_score": 0.0, "tests": []})
        entry["score"] = float(str(entry["score"])) + float(test["score"])
        entry["max_score"] = float(str(entry["max_score"])) + float(test["max_score"])
        entry["tests"].append(test)  # type: ignore[attr-defined]  # a list, made just above
    by_file["*"] = {"score": document["score"], "max_score": document["max_score"], "output": document["output"]}
    return done.returncode, by_file, recorded_pids(pids), root


def recorded_pids(pids: Path) -> list[int]:
    return [int(p) for p in pids.read_text().split()] if pids.exists() else []


def points(entry: dict[str, object]) -> tuple[float, float]:
    return float(str(entry["score"])), float(str(entry["max_score"]))


def failed(entry: dict[str, object]) -> list[str]:
    tests = entry["tests"]
    assert isinstance(tests, list)
    return [str(t["name"]).split(": ", 1)[1] for t in tests if t["status"] == "failed"]


@pytest.mark.slow
def test_a_class_of_30_files_gets_the_right_scores(graded_class: tuple[int, dict[str, dict[str, object]], list[int], Path]) -> None:
    code, by_file, _, _ = graded_class
    assert code == 1
    correct = [f"correct/{n}/{n}.py" for n in list_exercises()]
    assert len(correct) + 14 >= 30
    for path in correct + ["odd/forks/ex01_variables_sgd.py", "odd/popen/ex00_gradient_by_hand.py"]:
        score, top = points(by_file[path])
        assert score == top > 0, (path, failed(by_file[path]))
    top = points(by_file["correct/ex00_gradient_by_hand/ex00_gradient_by_hand.py"])[1]
    assert points(by_file["odd/loops_at_import/ex00_gradient_by_hand.py"]) == (0.0, top)
    assert points(by_file["odd/exits/ex00_gradient_by_hand.py"]) == (0.0, top)
    assert points(by_file["odd/syntax/ex00_gradient_by_hand.py"]) == (0.0, top)
    assert points(by_file["odd/loops_in_a_check/ex00_gradient_by_hand.py"]) == (top - 1, top)  # only the check that looped
    assert points(by_file["odd/dies/ex00_gradient_by_hand.py"]) == (top - 1, top)
    starter_score, starter_top = points(by_file["odd/starter/ex04_softplus_vjp.py"])
    assert starter_score < starter_top
    for path, why in (("odd/links/loop.py", "a symlink loop"), ("odd/empty", "a folder without .py files"), ("odd/notes/notes.py", "EXERCISE")):
        tests = by_file[path]["tests"]
        assert isinstance(tests, list) and len(tests) == 1
        assert tests[0]["max_score"] == 0.0 and why in tests[0]["output"], tests
    assert "odd/links/again.py" not in by_file  # the same file as a correct one: graded once
    assert "seed 2026" in str(by_file["*"]["output"])
    assert by_file["*"]["score"] == sum(points(e)[0] for p, e in by_file.items() if p != "*")


@pytest.mark.slow
def test_the_class_leaves_no_process_behind(graded_class: tuple[int, dict[str, dict[str, object]], list[int], Path]) -> None:
    _, _, pids, root = graded_class
    assert len(pids) >= 2, pids  # the fork and the sleep were started
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [p for p in pids if alive(p)] == []
    table = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True, check=False).stdout.splitlines()
    mine = [line for line in table if str(root) in line and " Z" not in line]
    assert mine == []


@pytest.mark.slow
def test_lookup_tables_and_equality_tricks_do_not_pass(graded_class: tuple[int, dict[str, dict[str, object]], list[int], Path]) -> None:
    _, by_file, _, _ = graded_class
    assert "df_by_hand matches finite differences" in failed(by_file["odd/lookup/ex00_gradient_by_hand.py"])
    trick = failed(by_file["odd/trick/ex07_profile_memory.py"])
    assert "leftover_tensors counts what a call leaves alive" in trick
    assert "extra_peak_bytes measures the peak above what was alive" in trick
