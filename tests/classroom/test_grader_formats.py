"""What ``grade`` writes for a gradebook: points, hidden checks, Gradescope's and Classroom 50's documents.

Each document is checked against the table of its fields in
``microtape.classroom.formats`` (names, types, sums), and the set-ups shown on
the teachers' page (Gradescope's ``run_autograder``, Classroom 50's
``autograder.py``) run end to end against a folder laid out as those
services lay out a submission. Nothing here uses the network.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from microtape.classroom import formats as grade_formats
from microtape.exercise import Check, Exercise
from microtape.errors import InvalidArgumentError
from microtape.classroom.catalog import load_exercise
from microtape.classroom.formats import CLASSROOM50_RESULT, CLASSROOM50_TEST, GRADESCOPE_RESULTS, GRADESCOPE_TEST, problems

pytestmark = pytest.mark.slow  # most tests here run the grader in other processes

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "tutorials" / "exercises" / "solutions"
STARTERS = REPO / "tutorials" / "exercises"
EXAMPLES = REPO / "docs" / "examples"
HIDDEN = EXAMPLES / "hidden_checks"
ENV = dict(os.environ, PYTHONIOENCODING="utf-8")


def public_checks(name: str) -> tuple[int, int]:
    """How many public checks an exercise has, and their points (the checks may change; these tests follow)."""
    exercise = load_exercise(name)
    assert exercise is not None
    return len(exercise.checks), sum(c.points for c in exercise.checks)


EX00, EX00_POINTS = public_checks("ex00_gradient_by_hand")
EX04, EX04_POINTS = public_checks("ex04_softplus_vjp")
HIDDEN_POINTS = 3  # docs/examples/hidden_checks/ex00_gradient_by_hand.py: 2 checks, worth 2 and 1

LOOKUP_TABLE = '''EXERCISE = "ex00_gradient_by_hand"
import microtape as mt
def f(x):
    return x**3 - 2.0 * x
ANSWERS = {-2.0: 10.0, -0.5: -1.25, 0.0: -2.0, 1.0: 1.0, 3.0: 25.0}
def df_by_hand(x):
    return ANSWERS.get(x, 0.0)
def df_with_mt(x):
    return mt.grad(f)(x)
def gradient_descent(x0, lr, steps):
    x = x0
    for _ in range(steps):
        x = x - lr * (3.0 * x * x - 2.0)
    return x
'''


def grade(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "microtape", "grade", *map(str, args)],
        capture_output=True, text=True, encoding="utf-8", env=env or ENV, timeout=300,
    )


def by_name(document: dict[str, object], key: str) -> dict[str, dict[str, object]]:
    tests = document["tests"]
    assert isinstance(tests, list)
    return {str(t[key]): t for t in tests}


@pytest.fixture(scope="module")
def submissions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A correct ex00, an untouched ex04 starter, a lookup table for ex00, and a file that is not an exercise."""
    root = tmp_path_factory.mktemp("submissions")
    for student in ("alice", "bob", "carol"):
        (root / student).mkdir()
    shutil.copy(SOLUTIONS / "ex00_gradient_by_hand.py", root / "alice" / "ex00_gradient_by_hand.py")
    shutil.copy(STARTERS / "ex04_softplus_vjp.py", root / "bob" / "ex04_softplus_vjp.py")
    (root / "carol" / "ex00_gradient_by_hand.py").write_text(LOOKUP_TABLE, encoding="utf-8")
    (root / "carol" / "notes.py").write_text("print('not an exercise')\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def gradescope_doc(submissions: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("out") / "results.json"
    done = grade(submissions, "--checks", HIDDEN, "--format", "gradescope", "--output", out, "--seed", "42", "--jobs", "2")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.startswith(f"wrote {out} (gradescope: score ")
    document = json.loads(out.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


# -- the field tables ---------------------------------------------------------------------------


def test_the_tables_name_the_documented_fields() -> None:
    assert [name for name, _, _ in GRADESCOPE_RESULTS] == ["score", "max_score", "execution_time", "output", "tests"]
    assert [name for name, _, _ in GRADESCOPE_TEST] == ["name", "score", "max_score", "status", "output", "visibility", "execution_time"]
    assert [name for name, _, _ in CLASSROOM50_RESULT] == ["schema", "score", "max-score", "tests"]
    assert [name for name, _, _ in CLASSROOM50_TEST] == ["test-name", "passed", "score", "max-score", "message"]
    assert all(meaning for table in (GRADESCOPE_RESULTS, GRADESCOPE_TEST, CLASSROOM50_RESULT, CLASSROOM50_TEST) for _, _, meaning in table)


def test_problems_finds_wrong_names_types_and_sums() -> None:
    good = {"score": 1.0, "max_score": 2.0, "execution_time": 0.5, "output": "", "tests": [
        {"name": "a", "score": 1.0, "max_score": 2.0, "status": "failed", "output": "", "visibility": "visible", "execution_time": 0.25}]}
    assert problems(good, GRADESCOPE_RESULTS, GRADESCOPE_TEST, "score", "max_score") == []
    assert problems({**good, "extra": 1}, GRADESCOPE_RESULTS, GRADESCOPE_TEST, "score", "max_score")
    assert problems({**good, "score": "1"}, GRADESCOPE_RESULTS, GRADESCOPE_TEST, "score", "max_score")
    assert problems({**good, "score": 2.0}, GRADESCOPE_RESULTS, GRADESCOPE_TEST, "score", "max_score") == [
        "score is 2.0, but the tests add up to 1"]
    passed_as_int = {"schema": "classroom50/result/v1", "score": 0, "max-score": 1,
                     "tests": [{"test-name": "a", "passed": 1, "score": 0, "max-score": 1, "message": ""}]}
    assert problems(passed_as_int, CLASSROOM50_RESULT, CLASSROOM50_TEST, "score", "max-score") == [
        "tests[0].passed is int 1, expected bool"]


# -- points and partial credit --------------------------------------------------------------------


def test_a_check_has_points_and_a_time_limit() -> None:
    ex = Exercise("ex99_demo", chapter=0, title="demo")

    @ex.check("double", hints=("h",), points=2, timeout=1.5)
    def _(m: object) -> None:
        pass

    assert ex.checks[0].points == 2 and ex.checks[0].timeout == 1.5
    assert Check("c", ("h",), lambda m: None).points == 1
    for points, timeout in ((-1, None), (True, None), (1.5, None), (1, 0.0), (1, float("nan")), (1, float("inf"))):
        with pytest.raises(InvalidArgumentError, match="whole number of points"):
            ex.check("bad", hints=("h",), points=points, timeout=timeout)  # type: ignore[arg-type]  # misuse on purpose
    with pytest.raises(InvalidArgumentError, match="has no hints"):
        ex.check("no hints", hints=())
    assert len(ex.checks) == 1  # a refused check is not added


def test_hidden_checks_run_after_the_public_ones_and_count(gradescope_doc: dict[str, object]) -> None:
    tests = by_name(gradescope_doc, "name")
    alice = {name: t for name, t in tests.items() if name.startswith("alice/ex00_gradient_by_hand.py")}
    assert len(alice) == EX00 + 2, list(tests)
    hidden = [t for t in alice.values() if t["visibility"] == "after_due_date"]
    assert [t["max_score"] for t in hidden] == [2.0, 1.0]
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] for t in alice.values())
    carol = {name: t for name, t in tests.items() if name.startswith("carol/ex00_gradient_by_hand.py")}
    unseen = carol["carol/ex00_gradient_by_hand.py: df_by_hand is right at inputs nobody has seen"]
    assert unseen["status"] == "failed" and unseen["score"] == 0.0 and unseen["visibility"] == "after_due_date"
    assert "disagrees with finite differences" in str(unseen["output"])


def test_the_gradescope_document_follows_its_table(gradescope_doc: dict[str, object]) -> None:
    assert problems(gradescope_doc, GRADESCOPE_RESULTS, GRADESCOPE_TEST, "score", "max_score") == []
    tests = by_name(gradescope_doc, "name")
    assert {t["status"] for t in tests.values()} == {"passed", "failed"}
    assert "seed 42" in str(gradescope_doc["output"])
    not_exercise = tests["carol/notes.py: not graded"]
    assert not_exercise["max_score"] == 0.0 and "does not say which exercise it is" in str(not_exercise["output"])
    todo = [t for name, t in tests.items() if name.startswith("bob/ex04_softplus_vjp.py: ") and t["status"] == "failed"]
    assert todo and all("not started: the file's code is the starter's" in str(t["output"]) and "hint: " in str(t["output"]) for t in todo)
    top = 2 * (EX00_POINTS + HIDDEN_POINTS) + EX04_POINTS
    assert gradescope_doc["max_score"] == top and 0 < float(str(gradescope_doc["score"])) < top


def test_the_classroom50_document_follows_its_table(submissions: Path) -> None:
    done = grade(submissions, "--checks", HIDDEN, "--format", "classroom50", "--seed", "42", "--jobs", "2")
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert problems(document, CLASSROOM50_RESULT, CLASSROOM50_TEST, "score", "max-score") == []
    assert document["schema"] == "classroom50/result/v1" and document["max-score"] == 2 * (EX00_POINTS + HIDDEN_POINTS) + EX04_POINTS
    tests = by_name(document, "test-name")
    unseen = tests["carol/ex00_gradient_by_hand.py: df_by_hand is right at inputs nobody has seen"]
    assert unseen["passed"] is False and unseen["message"] == "failed (a hidden check)"  # Classroom 50 shows messages to students
    assert "seed 42" in str(document["tests"][0]["message"])


def test_the_json_document_carries_the_seed_and_the_scores(submissions: Path) -> None:
    done = grade(submissions / "alice", "--checks", HIDDEN, "--json", "--seed", "7")
    assert done.returncode == 0, done.stdout
    document = json.loads(done.stdout)
    assert document["seed"] == 7 and document["score"] == document["max_score"] == EX00_POINTS + HIDDEN_POINTS
    [entry] = document["files"]
    assert [c["hidden"] for c in entry["checks"]] == [False] * EX00 + [True] * 2
    assert [c["points"] for c in entry["checks"]][EX00:] == [2, 1]


def test_the_text_report_shows_points_hidden_checks_and_the_seed(submissions: Path) -> None:
    done = grade(submissions / "carol" / "ex00_gradient_by_hand.py", "--checks", HIDDEN, "--seed", "9")
    lines = done.stdout.splitlines()
    assert lines[0] == "random inputs drawn with seed 9 (grade again with --seed 9 to replay them)"
    assert "  FAIL  df_by_hand is right at inputs nobody has seen  [2 pts]  (hidden)" in lines
    assert lines[-1].startswith("ex00_gradient_by_hand: ") and "points." in lines[-1]


def test_a_broken_checks_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ex00_gradient_by_hand.py").write_text("raise ValueError('typo in my checks')\n", encoding="utf-8")
    done = grade(SOLUTIONS / "ex00_gradient_by_hand.py", "--checks", tmp_path)
    assert done.returncode == 2 and "raised ValueError: typo in my checks" in done.stdout
    done = grade(SOLUTIONS / "ex00_gradient_by_hand.py", "--checks", tmp_path / "missing", "--format", "gradescope")
    assert done.returncode == 2 and "no such folder" in done.stderr and done.stdout == ""


# -- the set-ups on the teachers' page, end to end --------------------------------------------


def test_gradescope_run_autograder_end_to_end(tmp_path: Path) -> None:
    """``run_autograder`` as Gradescope runs it: /autograder/source, /submission, /results (here under a temp dir)."""
    root = tmp_path / "autograder"
    source, submission = root / "source", root / "submission"
    shutil.copytree(EXAMPLES / "gradescope", source)
    (source / "assignment.toml").unlink()  # without an assignment: the hidden checks of hidden_checks/
    shutil.copytree(HIDDEN, source / "hidden_checks")
    submission.mkdir(parents=True)
    shutil.copy(SOLUTIONS / "ex00_gradient_by_hand.py", submission / "ex00_gradient_by_hand.py")
    assert subprocess.run(["bash", "-n", str(source / "setup.sh")], check=False).returncode == 0
    env = dict(ENV, AUTOGRADER_ROOT=str(root), PYTHON=sys.executable)
    done = subprocess.run([str(source / "run_autograder")], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    document = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert problems(document, GRADESCOPE_RESULTS, GRADESCOPE_TEST, "score", "max_score") == []
    assert document["score"] == document["max_score"] == EX00_POINTS + HIDDEN_POINTS and len(document["tests"]) == EX00 + 2
    shutil.rmtree(submission)
    submission.mkdir()  # an empty submission: still a valid results.json, scored 0
    subprocess.run([str(source / "run_autograder")], cwd=root, env=env, capture_output=True, timeout=300, check=True)
    document = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    assert problems(document, GRADESCOPE_RESULTS, GRADESCOPE_TEST, "score", "max_score") == []
    assert document["score"] == 0.0 and "a folder without .py files" in document["tests"][0]["output"]


def test_gradescope_from_the_teachers_page_alone(tmp_path: Path) -> None:
    """The zip built as the teachers' page says (the files at its root), ``setup.sh`` run as Gradescope runs it
    (its apt-get left out), then ``run_autograder`` on three submissions: full marks, an untouched starter, nothing.

    Guards what a teacher could not do from the page alone: it named no base image, no zip layout, no total to
    enter; and ``results.json`` had no ``execution_time``."""
    page = (REPO / "docs" / "teachers.rst").read_text(encoding="utf-8")
    gradescope = page.split("\nGradescope\n^^^^^^^^^^\n")[1].split("\nClassroom 50\n")[0]
    assert "Ubuntu 22.04" in gradescope and "docs/examples/gradescope/" in gradescope and "total" in gradescope
    layout = [line.strip() for line in gradescope.split("The zip then holds::")[1].split("\n\n")[1].splitlines() if line.strip()]
    assert layout[:2] == ["setup.sh", "run_autograder"] and layout[2].startswith("microtape-") and layout[2].endswith(".whl")
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(REPO)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("microtape-*.whl")
    sources = {"setup.sh": EXAMPLES / "gradescope" / "setup.sh", "run_autograder": EXAMPLES / "gradescope" / "run_autograder",
               layout[2]: wheel, "assignment.toml": EXAMPLES / "gradescope" / "assignment.toml"}
    archive = tmp_path / "autograder.zip"
    with zipfile.ZipFile(archive, "w") as zip_file:
        for name in layout:
            if name.startswith("hidden_checks/"):
                zip_file.write(HIDDEN / name.split("/", 1)[1], name)
            else:
                zip_file.write(sources[name.replace("0.1.0", wheel.name.split("-")[1])] if name not in sources else sources[name], name)
    root = tmp_path / "autograder"
    with zipfile.ZipFile(archive) as zip_file:  # Gradescope unpacks the zip into /autograder/source
        zip_file.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):
        (root / "source" / script).chmod(0o755)
    venv = tmp_path / "opt-microtape"
    env = dict(ENV, AUTOGRADER_ROOT=str(root), VENV=str(venv), APT="true")
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True, timeout=600)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "points" in setup.stdout  # the exercises listed with their points
    env["PYTHON"] = str(venv / "bin" / "python")

    def submit(files: dict[str, Path]) -> dict[str, object]:
        submission = root / "submission"
        shutil.rmtree(submission, ignore_errors=True)
        submission.mkdir()
        for name, path in files.items():
            shutil.copy(path, submission / name)
        done = subprocess.run([str(root / "source" / "run_autograder")], cwd=root, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        document = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
        assert problems(document, GRADESCOPE_RESULTS, GRADESCOPE_TEST, "score", "max_score") == []
        assert isinstance(document, dict)
        return document

    solved = submit({"ex00_gradient_by_hand.py": SOLUTIONS / "ex00_gradient_by_hand.py"})
    tests = solved["tests"]
    assert isinstance(tests, list) and solved["score"] == solved["max_score"] == 10.0 and len(tests) == EX00 + 2
    times = [t["execution_time"] for t in tests]
    assert float(str(solved["execution_time"])) > 0 and all(t >= 0.0 for t in times) and any(t > 0.0 for t in times)
    untouched = submit({"mine.py": STARTERS / "ex00_gradient_by_hand.py"})
    assert untouched["score"] == 0.0 and untouched["max_score"] == 10.0
    assert isinstance(untouched["tests"], list) and all("not started" in t["output"] for t in untouched["tests"])
    nothing = submit({"notes.txt": REPO / "LICENSE"})
    assert nothing["score"] == 0.0 and nothing["max_score"] == 10.0
    assert isinstance(nothing["tests"], list) and any("not submitted" in str(t["output"]) for t in nothing["tests"])


def test_classroom50_autograder_end_to_end(tmp_path: Path) -> None:
    """``autograder.py`` as the Classroom 50 runner calls it: in the student's checkout, once per submission."""
    bundle, checkout = tmp_path / "autograders" / "hw0", tmp_path / "checkout"
    bundle.mkdir(parents=True)
    shutil.copy(EXAMPLES / "classroom50" / "autograder.py", bundle / "autograder.py")
    shutil.copytree(HIDDEN, bundle / "hidden_checks")
    checkout.mkdir()
    (checkout / "ex00_gradient_by_hand.py").write_text(LOOKUP_TABLE, encoding="utf-8")
    env = dict(ENV, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, str(bundle / "autograder.py")], cwd=checkout, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    document = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    assert problems(document, CLASSROOM50_RESULT, CLASSROOM50_TEST, "score", "max-score") == []
    top = EX00_POINTS + HIDDEN_POINTS
    assert document["max-score"] == top and document["score"] < top
    assert done.stdout.strip().splitlines()[-1] == f"{document['score']}/{top} across {EX00 + 2} test(s)"


def test_every_format_is_listed() -> None:
    assert grade_formats.FORMATS == ("text", "json", "gradescope", "classroom50")


def test_the_teachers_page_shows_the_files_these_tests_run() -> None:
    text = (REPO / "docs" / "teachers.rst").read_text(encoding="utf-8")
    for name in ("hidden_checks/ex00_gradient_by_hand.py", "gradescope/setup.sh", "gradescope/run_autograder", "classroom50/autograder.py"):
        assert f".. literalinclude:: examples/{name}" in text and (EXAMPLES / name).is_file(), name
    assert "--checks docs/examples/hidden_checks" in text


def test_each_check_is_seeded_with_the_seed_and_its_name(tmp_path: Path) -> None:
    """Each check draws from ``Random(f"{seed}/{check name}")``: a hidden check records what it drew."""
    calls = tmp_path / "calls.txt"
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "ex00_gradient_by_hand.py").write_text(
        "from microtape.exercise import Exercise, rng\n"
        'EXERCISE = Exercise("ex00_gradient_by_hand", chapter=0, title="recorder")\n'
        '@EXERCISE.check("nothing", hints=("none",))\n'
        f"def nothing(m):\n    open({str(calls)!r}, 'a').write(repr(rng().random()) + '\\n')\n",
        encoding="utf-8",
    )
    done = grade(SOLUTIONS / "ex00_gradient_by_hand.py", "--checks", tmp_path / "checks", "--seed", "31337", "--json")
    assert done.returncode == 0, done.stdout
    assert calls.read_text(encoding="utf-8").splitlines() == [repr(random.Random("31337/nothing").random())]
    drawn = json.loads(grade(SOLUTIONS / "ex00_gradient_by_hand.py", "--json").stdout)["seed"]
    assert isinstance(drawn, int) and drawn >= 0
