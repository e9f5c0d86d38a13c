"""Untouched means zero: every starter, as handed out, scores 0 and shows TODO on every check.

The 19 starters once earned 12 of their 63 points untouched (ex04 2/5, ex04c 2/4,
ex05 2/4 ...), and 12 of them showed FAIL where the teachers' page says TODO. Here
every starter is graded as ``exercises DIR`` writes it, in English and in Russian,
as a file and as a notebook, by the real command line: each scores 0 of its
points, and each of its checks is TODO with the reason. A starter touched in
one line is graded for real (its checks run).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from microtape.cli import exercises
from microtape.classroom.catalog import list_exercises, load_exercise
from microtape.classroom.judge import untouched

pytestmark = pytest.mark.slow  # the real command line grades 76 files (none of them runs: each is a starter)

NAMES = list_exercises()


@pytest.fixture(scope="module")
def handed_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("handed_out")
    for lang in ("en", "ru"):
        for notebook in (False, True):
            folder = root / f"{lang}-{'ipynb' if notebook else 'py'}"
            assert exercises(folder, out=io.StringIO(), lang=lang, notebook=notebook) == 0
    return root


@pytest.fixture(scope="module")
def graded(handed_out: Path) -> dict[str, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "microtape", "grade", str(handed_out), "--json", "--seed", "4", "--jobs", "2"],
        capture_output=True, text=True, encoding="utf-8", env=dict(os.environ, PYTHONIOENCODING="utf-8"), timeout=600,
    )
    assert done.returncode == 1, done.stderr
    return {f"{Path(str(e['path'])).parent.name}/{Path(str(e['path'])).stem}": e for e in json.loads(done.stdout)["files"]}


@pytest.mark.parametrize("kind", ["en-py", "en-ipynb", "ru-py", "ru-ipynb"])
@pytest.mark.parametrize("name", NAMES)
def test_an_untouched_starter_scores_0_with_todo_on_every_check(graded: dict[str, dict[str, object]], kind: str, name: str) -> None:
    entry = graded[f"{kind}/{name}"]
    exercise = load_exercise(name)
    assert exercise is not None
    assert entry["exercise"] == name and entry["score"] == 0 and entry["max_score"] == sum(c.points for c in exercise.checks)
    checks = entry["checks"]
    assert isinstance(checks, list) and len(checks) == len(exercise.checks)
    assert all(c["status"] == "TODO" and c["score"] == 0 for c in checks), [c["status"] for c in checks]
    assert all("not started" in " ".join(c["details"]) for c in checks)
    assert float(str(entry["seconds"])) < 5.0  # nothing ran


def test_a_starter_touched_in_one_line_is_graded_for_real(handed_out: Path) -> None:
    starter = (handed_out / "en-py" / "ex04c_broadcast_vjp.py").read_text(encoding="utf-8")
    touched = starter.replace("return [dy, dy]", "return [dy, -dy.sum(axis=0)]")
    assert touched != starter and untouched("ex04c_broadcast_vjp", starter) and not untouched("ex04c_broadcast_vjp", touched)
    comments_only = starter.replace('"""x - b, with b of shape (columns,) broadcast over the rows of x."""', '"""Another docstring."""') + "\n# a comment\n"
    assert untouched("ex04c_broadcast_vjp", comments_only)  # comments, docstrings and layout are not code
