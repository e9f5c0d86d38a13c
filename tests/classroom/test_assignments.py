"""An assignment knows what it asked for: ``grade --assignment FILE`` and ``--require``.

A submission that holds only ex04e once scored 4.0 of 4.0, with no word that ex05b
was asked for too. With an assignment, each path is one student's submission, an
exercise it lacks scores 0 and says "not submitted", the exercises' points are the
assignment's (shared among their checks in whole points), and the totals agree in
every format. The TOML is read with ``tomllib``; Python 3.10's subset reader is
tested here too, against ``tomllib`` on the same files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from microtape.classroom import grader
from microtape.classroom.assignment import Assignment, parse_toml, read_assignment, require, shares
from microtape.classroom.formats import (
    CLASSROOM50_RESULT, CLASSROOM50_TEST, GRADESCOPE_RESULTS, GRADESCOPE_TEST, classroom50, document, gradescope, problems,
)
from microtape.errors import InvalidArgumentError

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "tutorials" / "exercises" / "solutions"
WEEK4 = '''# the exercises of week 4
[assignment]
name = "Week 4: checking #gradients"   # a # inside a string is not a comment
checks = "hidden"

[exercises]
ex04e = 10
ex05b_tidy_too_eager = true
"ex04_softplus_vjp" = 0
'''


@pytest.mark.parametrize("subset", [False, True])
def test_an_assignment_file_reads_the_same_with_tomllib_and_without(tmp_path: Path, subset: bool) -> None:
    tables = parse_toml(WEEK4, subset=subset)
    assert tables == {
        "assignment": {"name": "Week 4: checking #gradients", "checks": "hidden"},
        "exercises": {"ex04e": 10, "ex05b_tidy_too_eager": True, "ex04_softplus_vjp": 0},
    }
    path = tmp_path / "week4.toml"
    path.write_text(WEEK4, encoding="utf-8")
    asked = read_assignment(path)
    assert asked.exercises == (("ex04e_wrong_factor", 10), ("ex05b_tidy_too_eager", None), ("ex04_softplus_vjp", 0))
    assert asked.name == "Week 4: checking #gradients" and asked.checks == (tmp_path / "hidden").resolve()


def test_the_subset_reader_refuses_what_it_does_not_read() -> None:
    for text in ("[exercises]\nex04e = [1, 2]\n", "[exercises]\nex04e = {points = 2}\n", "[exercises]\nex04e = 1.5\n", "[a.b]\nx = 1\n"):
        with pytest.raises(InvalidArgumentError, match="TOML"):
            parse_toml(text, subset=True)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[exercises]\nex99 = 3\n", "'ex99' is not an exercise the grader knows"),
        ("[exercises]\nex04e = -1\n", "ex04e = -1 is not a number of points"),
        ("[exercises]\nex04e = \"ten\"\n", "ex04e = 'ten' is not a number of points"),
        ("[assignment]\nname = \"x\"\n", "lists no exercise"),
        ("[homework]\nex04e = 1\n", "unknown table(s) [homework]"),
        ("ex04e = 1\n", "outside any table"),
        ("[exercises]\nex04e = 1\nex04e_wrong_factor = 2\n", "listed twice"),
        ("[exercises\n", "is not TOML"),
    ],
)
def test_a_wrong_assignment_file_says_what_is_wrong(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "a.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidArgumentError) as info:
        read_assignment(path)
    assert says in str(info.value) and "hint: " in str(info.value)


def test_require_takes_full_or_short_names() -> None:
    assert require("ex04e, ex05b_tidy_too_eager").exercises == (("ex04e_wrong_factor", None), ("ex05b_tidy_too_eager", None))
    with pytest.raises(InvalidArgumentError, match="names no exercise"):
        require(" , ")


def test_points_are_shared_in_whole_points_that_add_up() -> None:
    for weights in ([1, 1, 1, 1], [2, 1, 1], [1], [3, 0, 1], [1, 1, 1, 1, 1, 1, 1]):
        for total in (0, 1, 2, 5, 10, 13, 100):
            got = shares(weights, total)
            assert sum(got) == total and all(g >= 0 for g in got)
            assert all(abs(g - total * w / sum(weights)) < 1 for g, w in zip(got, weights))


def entry(path: str, exercise: str, passed: list[bool], status: str | None = None) -> dict[str, object]:
    checks = [{"name": f"check {i}", "points": 1, "score": int(p), "hidden": False, "status": "PASS" if p else "FAIL",
               "details": [] if p else ["wrong"], "hints": [], "seconds": 0.1} for i, p in enumerate(passed)]
    return {"path": path, "exercise": exercise, "chapter": 4, "title": "t", "status": status or ("passed" if all(passed) else "failed"),
            "checks_passed": sum(passed), "checks_total": len(passed), "score": sum(passed), "max_score": len(passed), "seconds": 0.4,
            "message": None, "checks": checks, "output": ""}


def test_a_missing_exercise_scores_0_and_the_totals_agree_in_every_format() -> None:
    """Guards a bug: a submission with ex04e alone scored 4.0 of 4.0, and nothing said that ex05b was missing."""
    asked = require("ex04e,ex05b")
    entries = grader.apply_assignment(asked, [entry("alice/ex04e_wrong_factor.py", "ex04e_wrong_factor", [True, True, True, True])], ["alice"], ["alice"])
    missing = [e for e in entries if e["status"] == "missing"]
    assert [e["exercise"] for e in missing] == ["ex05b_tidy_too_eager"]
    assert "not submitted" in str(missing[0]["message"]) and missing[0]["max_score"] == 2 and missing[0]["score"] == 0
    json_doc = document("json", entries, 7, {})
    scope = gradescope(entries, 7, seconds=1.5)
    c50 = classroom50(entries, 7)
    assert (json_doc["score"], json_doc["max_score"]) == (scope["score"], scope["max_score"]) == (c50["score"], c50["max-score"]) == (4, 6)
    assert problems(scope, GRADESCOPE_RESULTS, GRADESCOPE_TEST, "score", "max_score") == []
    assert problems(c50, CLASSROOM50_RESULT, CLASSROOM50_TEST, "score", "max-score") == []
    absent = [t for t in scope["tests"] if "ex05b" in str(t["name"])]  # type: ignore[attr-defined]  # a list of tests
    assert absent and all(t["score"] == 0.0 and "not submitted" in str(t["output"]) for t in absent)
    assert scope["execution_time"] == 1.5 and all(isinstance(t["execution_time"], float) for t in scope["tests"])  # type: ignore[attr-defined]


def test_an_assignment_s_points_replace_the_checks_and_one_file_per_exercise_counts() -> None:
    asked = read_assignment_text("[exercises]\nex04e = 10\n")
    first = entry("bob/a.py", "ex04e_wrong_factor", [True, False, True, True])
    second = entry("bob/b.py", "ex04e_wrong_factor", [True, True, True, True])
    entries = grader.apply_assignment(asked, [first, second], ["bob", "bob"], ["bob"])
    assert [e["path"] for e in entries] == ["bob/a.py", "bob/b.py"]
    assert [c["points"] for c in second["checks"]] == [3, 3, 2, 2] and second["score"] == second["max_score"] == 10  # type: ignore[attr-defined]
    assert first["max_score"] == 0 and "does not count" in str(first["message"])
    assert document("json", entries, 7, {})["max_score"] == 10


def read_assignment_text(text: str) -> Assignment:
    folder = Path(tempfile.mkdtemp())
    (folder / "a.toml").write_text(text, encoding="utf-8")
    return read_assignment(folder / "a.toml")


@pytest.mark.slow
def test_grade_with_an_assignment_end_to_end(tmp_path: Path) -> None:
    for student, names in (("alice", ["ex04e_wrong_factor"]), ("bob", ["ex04e_wrong_factor", "ex05b_tidy_too_eager", "ex00_gradient_by_hand"])):
        (tmp_path / student).mkdir()
        for name in names:
            shutil.copy(SOLUTIONS / f"{name}.py", tmp_path / student / f"{name}.py")
    (tmp_path / "week4.toml").write_text("[exercises]\nex04e = 10\nex05b = 5\n", encoding="utf-8")
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    totals = {}
    for fmt in ("json", "gradescope", "classroom50", "text"):
        done = subprocess.run(
            [sys.executable, "-m", "microtape", "grade", str(tmp_path / "alice"), str(tmp_path / "bob"),
             "--assignment", str(tmp_path / "week4.toml"), "--format", fmt, "--seed", "1", "--jobs", "2", "--timeout", "120"],
            capture_output=True, text=True, encoding="utf-8", env=env, timeout=600,
        )
        assert done.returncode == 1, done.stdout + done.stderr
        if fmt == "text":
            assert "MISSING" in done.stdout and "1 not submitted" in done.stdout and "10/10" in done.stdout
            continue
        doc = json.loads(done.stdout)
        totals[fmt] = (doc["score"], doc.get("max_score", doc.get("max-score")))
        if fmt == "json":
            statuses = sorted((Path(str(e["path"])).name, e["status"]) for e in doc["files"])
            assert ("alice", "missing") in statuses and ("ex00_gradient_by_hand.py", "error") in statuses
            assert doc["assignment"]["exercises"] == [{"exercise": "ex04e_wrong_factor", "points": 10}, {"exercise": "ex05b_tidy_too_eager", "points": 5}]
    assert set(totals.values()) == {(25, 30)}, totals
    both = subprocess.run(
        [sys.executable, "-m", "microtape", "grade", str(tmp_path), "--assignment", str(tmp_path / "week4.toml"), "--require", "ex04e"],
        capture_output=True, text=True, encoding="utf-8", env=env, timeout=300,
    )
    assert both.returncode == 2 and "--assignment and --require both say what to grade" in both.stdout
