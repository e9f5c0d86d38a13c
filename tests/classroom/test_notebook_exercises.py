"""Exercises as Jupyter notebooks: ``exercises DIR --notebook`` writes them, ``grade`` grades them like ``.py`` files.

The notebooks are checked against the nbformat 4 schema (``nbformat``, installed
with the dev extra's nbclient). The grading tests run the real command line
(child processes), so they are slow: every worked solution, turned into a
notebook, must grade exactly as its ``.py`` file does.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from microtape.cli import exercises
from microtape.classroom.catalog import identify, list_exercises
from microtape.book.notebooks import NotebookError, code_of, starter_notebook
from microtape.book.resources import starter_files
from microtape.book.statements import catalog, statement, translate_code, translate_starter
from microtape.i18n.messages import Language

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "tutorials" / "exercises" / "solutions"
ENV = dict(os.environ, PYTHONIOENCODING="utf-8")


def grade(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "microtape", "grade", *map(str, args)],
        capture_output=True, text=True, encoding="utf-8", env=ENV, timeout=600,
    )


def notebook(*cells: tuple[str, str | list[str]]) -> str:
    """A minimal nbformat 4 notebook of (kind, source) cells."""
    return json.dumps({
        "cells": [
            {"cell_type": kind, "id": f"c{i}", "metadata": {}, "source": text, **({"outputs": [], "execution_count": None} if kind == "code" else {})}
            for i, (kind, text) in enumerate(cells)
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    })


def cells(path: Path) -> list[tuple[str, str]]:
    return [(c["cell_type"], "".join(c["source"])) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]


# -- writing the starters as notebooks ---------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_exercises_notebook_writes_one_valid_notebook_per_starter(tmp_path: Path, lang: Language) -> None:
    out = io.StringIO()
    assert exercises(tmp_path, out=out, lang=lang, notebook=True) == 0
    starters = starter_files()
    written = sorted(tmp_path.iterdir())
    assert [p.name for p in written] == sorted(f"{p.stem}.ipynb" for p in starters)
    assert "grade " in out.getvalue() and ".ipynb" in out.getvalue().splitlines()[-1]
    messages = catalog(lang)
    for starter in starters:
        path = tmp_path / f"{starter.stem}.ipynb"
        nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)  # type: ignore[no-untyped-call]
        nbformat.validate(nb)  # raises on anything the schema forbids (duplicate ids too: they warn, and warnings are errors)
        found = cells(path)
        assert found[0][0] == "markdown" and all(kind == "code" for kind, _ in found[1:]) and len(found) >= 3
        # the task statement, in the language asked for: its title and its grading command
        source = starter.read_text(encoding="utf-8")
        text = translate_starter(translate_code(source), messages) if messages else source  # as exercises --lang ru writes it
        title = (statement(starter) if not messages else text.split('"""')[1]).splitlines()[0]
        assert found[0][1].startswith(f"# {title}"), (found[0][1][:80], title)
        assert f"grade {starter.stem}.ipynb" in found[0][1] and f"{starter.stem}.py" not in found[0][1]
        # the code cells hold the starter's code after its docstring, every line of it, in order
        code = "\n".join(src for _, src in found[1:])
        after_doc = text.split('"""', 2)[2]
        assert [line for line in code.splitlines() if line.strip()] == [line for line in after_doc.splitlines() if line.strip()]
        assert f'EXERCISE = "{starter.stem}"' in found[1][1]


def test_the_russian_notebook_follows_the_russian_starter(tmp_path: Path) -> None:
    """The notebook is written from the very text of the .py starter in that language (its TODOs included)."""
    assert exercises(tmp_path / "py", out=io.StringIO(), lang="ru") == 0
    assert exercises(tmp_path / "nb", out=io.StringIO(), lang="ru", notebook=True) == 0
    for py in sorted((tmp_path / "py").glob("*.py")):
        nb = tmp_path / "nb" / f"{py.stem}.ipynb"
        assert nb.read_text(encoding="utf-8") == starter_notebook(py.read_text(encoding="utf-8"), py.stem)
    statement_cell = cells(tmp_path / "nb" / "ex04_softplus_vjp.ipynb")[0][1]
    assert "Упражнение" in statement_cell


def test_exercises_notebook_does_not_overwrite(tmp_path: Path) -> None:
    assert exercises(tmp_path, out=io.StringIO(), notebook=True) == 0
    mine = tmp_path / "ex00_gradient_by_hand.ipynb"
    mine.write_text("my work", encoding="utf-8")
    out = io.StringIO()
    assert exercises(tmp_path, out=out, notebook=True) == 1
    assert mine.read_text(encoding="utf-8") == "my work" and "--notebook --force" in out.getvalue()
    assert exercises(tmp_path, out=io.StringIO()) == 0  # the .py starters are not in the way of notebooks


def test_the_command_line_takes_notebook(tmp_path: Path) -> None:
    from microtape.cli import main

    assert main(["exercises", str(tmp_path), "--notebook", "--lang", "ru"]) == 0
    assert (tmp_path / "ex00_gradient_by_hand.ipynb").is_file() and not list(tmp_path.glob("*.py"))


# -- reading a notebook's code -----------------------------------------------------------------------


def test_code_cells_run_in_order_and_markdown_is_left_out() -> None:
    code = code_of(notebook(("markdown", "# Task\nx = 99"), ("code", "x = 1\n"), ("raw", "x = 2"), ("code", ["y = x + 1\n", "z = y"])))
    assert code.source == "x = 1\ny = x + 1\nz = y\n" and code.notes == ()
    assert [code.locate(n) for n in (1, 2, 3)] == [(2, 1), (4, 1), (4, 2)]


def test_magics_and_shell_lines_are_skipped_with_a_note() -> None:
    code = code_of(notebook(
        ("code", "%pip install microtape\nimport math\n!ls -l\nfiles = !ls\nif True:\n    %timeit math.sqrt(2)\n"),
        ("code", "%%time\nx = math.sqrt(4)"),
        ("code", "%%bash\necho hi\nrm -rf /"),
        ("code", 'text = ("%d"\n        % 3)'),  # a line that starts with % inside an expression is Python
    ))
    namespace: dict[str, object] = {}
    exec(compile(code.source, "nb", "exec"), namespace)  # noqa: S102 - the code the grader would run
    assert namespace["x"] == 2.0 and namespace["text"] == "3"
    assert [n.split(":")[0] for n in code.notes] == ["cell 1, line 1", "cell 1, line 3", "cell 1, line 4", "cell 1, line 6", "cell 2, line 1", "cell 3, line 1"]
    assert code.notes[-1].endswith("(the whole cell)") and "%pip install microtape" in code.notes[0]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"cells": [{"cell_type": "code", "source": "x = 1"}', "not valid JSON (line 1"),
        ('[1, 2]', "not a Jupyter notebook"),
        ('{"cells": [], "nbformat": 3}', "nbformat 3"),
        ('{"cells": [{"source": "x"}], "nbformat": 4}', "cell 1 is not a notebook cell"),
        ('{"cells": [{"cell_type": "code", "source": 5}], "nbformat": 4}', "cell 1: its source is int"),
    ],
)
def test_a_malformed_notebook_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(NotebookError, match=re.escape(says)):
        code_of(text)


def test_identify_reads_the_exercise_from_the_code_cells(tmp_path: Path) -> None:
    good = tmp_path / "mine.ipynb"
    good.write_text(notebook(("markdown", 'EXERCISE = "ex99_not_this"'), ("code", 'EXERCISE = "ex04_softplus_vjp"')), encoding="utf-8")
    exercise, _ = identify(good)
    assert getattr(exercise, "name", None) == "ex04_softplus_vjp"
    broken = tmp_path / "broken.ipynb"
    broken.write_text('{"cells": [', encoding="utf-8")
    what, hint = identify(broken)
    assert isinstance(what, str) and "not a notebook the grader can read" in what and "not valid JSON" in what and "--notebook" in hint


# -- grading notebooks ---------------------------------------------------------------------------


def _without_path(entry: dict[str, object]) -> dict[str, object]:
    path = str(entry["path"])
    same = {k: v for k, v in entry.items() if k not in ("path", "seconds", "report", "checks")}
    same["checks"] = [{k: v for k, v in c.items() if k != "seconds"} for c in entry["checks"]]  # type: ignore[attr-defined]  # a list of dicts
    same["report"] = str(entry["report"]).replace(path, "FILE")
    return same


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_notebook_solution_grades_exactly_like_the_py_one(tmp_path: Path) -> None:
    (tmp_path / "py").mkdir()
    (tmp_path / "nb").mkdir()
    for solution in sorted(SOLUTIONS.glob("ex*.py")):
        shutil.copy2(solution, tmp_path / "py" / solution.name)
        (tmp_path / "nb" / f"{solution.stem}.ipynb").write_text(starter_notebook(solution.read_text(encoding="utf-8"), solution.stem), encoding="utf-8")
    runs = {kind: grade(tmp_path / kind, "--format", "json", "--seed", "2026") for kind in ("py", "nb")}
    docs = {kind: json.loads(run.stdout) for kind, run in runs.items()}
    assert runs["py"].returncode == 0, runs["py"].stdout[-3000:]
    by_name = {kind: {Path(str(e["path"])).stem: e for e in doc["files"]} for kind, doc in docs.items()}
    assert sorted(by_name["nb"]) == sorted(by_name["py"]) == list_exercises()
    for name, entry in by_name["py"].items():
        assert _without_path(by_name["nb"][name]) == _without_path(entry), name
    assert runs["nb"].returncode == 0 and docs["nb"]["score"] == docs["py"]["score"] > 0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_notebook_errors_name_the_cell_and_line_and_a_broken_notebook_fails_alone(tmp_path: Path) -> None:
    exercises(tmp_path, out=io.StringIO(), notebook=True)
    starter = tmp_path / "ex00_gradient_by_hand.ipynb"
    nb = json.loads(starter.read_text(encoding="utf-8"))
    nb["cells"].insert(1, {"cell_type": "code", "id": "magic", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": ["%pip install microtape\n", "!ls\n"]})
    nb["cells"][-1]["source"] = ["def oops(:\n"]
    starter.write_text(json.dumps(nb), encoding="utf-8")
    broken = tmp_path / "ex04_softplus_vjp.ipynb"
    text = broken.read_text(encoding="utf-8")
    broken.write_text(text[: text.index("EXERCISE = ") + 60], encoding="utf-8")  # cut off after its EXERCISE line: invalid JSON
    for other in tmp_path.glob("*.ipynb"):
        if other not in (starter, broken):
            other.unlink()
    (tmp_path / "notes.ipynb").write_text("{}", encoding="utf-8")
    run = grade(tmp_path, "--format", "json", "--seed", "1")
    assert run.returncode == 1, run.stderr
    files = {Path(str(e["path"])).name: e for e in json.loads(run.stdout)["files"]}
    last = len(nb["cells"])
    first = files[starter.name]
    assert first["status"] == "failed" and first["exercise"] == "ex00_gradient_by_hand"
    assert f"ex00_gradient_by_hand.ipynb, cell {last}, line 1" in str(first["message"]), first["message"]
    assert "note: not run (IPython magics and shell lines are not Python): cell 2, line 1: %pip install microtape; cell 2, line 2: !ls" in str(first["report"])
    cut = files[broken.name]
    assert cut["status"] == "failed" and cut["exercise"] == "ex04_softplus_vjp"
    assert "cannot be read: not valid JSON" in str(cut["message"]) and cut["checks_passed"] == 0
    assert files["notes.ipynb"]["status"] == "error" and "not a notebook the grader can read" in str(files["notes.ipynb"]["message"])


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_runtime_error_points_at_its_cell(tmp_path: Path) -> None:
    solution = (SOLUTIONS / "ex00_gradient_by_hand.py").read_text(encoding="utf-8")
    nb = json.loads(starter_notebook(solution, "ex00_gradient_by_hand"))
    nb["cells"].append({"cell_type": "code", "id": "late", "metadata": {}, "outputs": [], "execution_count": None,
                        "source": ["x = 1\n", "1 / 0\n"]})
    path = tmp_path / "mine.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    run = grade(path, "--seed", "1")
    assert run.returncode == 1
    assert f"loading the file raised ZeroDivisionError (mine.ipynb, cell {len(nb['cells'])}, line 2 in <module>)" in run.stdout, run.stdout


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_where_a_check_points_in_a_notebook_is_a_cell_and_line(tmp_path: Path) -> None:
    """leak_check's 'made at' lines (and the culprit's) name the notebook's cell, not a line of the joined code."""
    exercises(tmp_path, out=io.StringIO(), notebook=True)
    path = tmp_path / "ex05c_leaky_loop.ipynb"
    path.write_text(path.read_text(encoding="utf-8").replace("mt.scalar(lr)", "mt.scalar(float(lr))"), encoding="utf-8")  # begun, still leaking
    run = grade(path, "--seed", "1")
    assert run.returncode == 1
    assert re.search(r"x \w+ \(ex05c_leaky_loop\.ipynb, cell \d+, line \d+\)", run.stdout), run.stdout
    assert not re.search(r"ex05c_leaky_loop\.ipynb:\d", run.stdout), run.stdout
