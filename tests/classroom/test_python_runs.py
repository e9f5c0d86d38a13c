"""The grader runs what Python (and Jupyter's "Restart & Run All") runs, file or notebook.

Each case is the same code twice: as a ``.py`` file, and as a notebook written as a
student's Jupyter saves it. A byte-order mark (a Windows editor's), U+2028 or
U+2029 inside a string literal, a ``from __future__`` import at the top of a later
cell, a line magic that carries a statement (``%time SCALE = 40.0``, which IPython
runs) and IPython help lines (``mt.check_grads?``) once made the grader refuse
work Python runs; here each scores what the plain file scores. The fast tests load
the code in the grader's own student-side server; the slow one grades both with
the real command line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from microtape.book.notebooks import code_of, source_lines, starter_notebook
from microtape.classroom.catalog import identify
from microtape.classroom.grade_child import Server

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "tutorials" / "exercises" / "solutions"
PLAIN = (SOLUTIONS / "ex04d_nan_hunt.py").read_text(encoding="utf-8")


def notebook(*cells: str) -> str:
    """A notebook of code cells, each written as Jupyter writes it (a list of lines)."""
    made: list[dict[str, object]] = [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "outputs": [], "execution_count": None,
             "source": cell.splitlines(keepends=True)} for i, cell in enumerate(cells)]
    return json.dumps({"cells": made, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, ensure_ascii=False)


def load(source: str, notebook: bool = False) -> tuple[dict[str, object], Server]:
    server = Server()
    reply = server.answer({"id": 1, "op": "load", "file": "/tmp/mine.ipynb" if notebook else "/tmp/mine.py", "source": source, "notebook": notebook})
    return reply, server


def value_of(server: Server, name: str) -> object:
    return server.answer({"id": 2, "op": "get", "target": None, "name": name}).get("ok")


def test_python_lines_end_where_python_ends_them() -> None:
    """Guards a bug: ``splitlines`` split a cell at U+2028 inside a string literal, so the notebook did not parse."""
    for char in ("\u2028", "\u2029", "\x0c", "\x1c", "\x85"):
        text = f's = "a{char}b"\nt = 1\r\nu = 2\rv = 3'
        assert source_lines(text) == [f's = "a{char}b"', "t = 1", "u = 2", "v = 3"]
        assert "".join(source_lines(text, keepends=True)) == text


@pytest.mark.parametrize("char", ["\u2028", "\u2029"])
def test_a_line_separator_inside_a_literal_runs_in_a_notebook_as_in_a_file(char: str) -> None:
    code = f'LABEL = "soft{char}plus"\n'
    for source, is_notebook in ((code, False), (notebook(code), True)):
        reply, server = load(source, is_notebook)
        assert "ok" in reply and value_of(server, "LABEL") == f"soft{char}plus", reply


def test_a_byte_order_mark_is_dropped_as_python_drops_it(tmp_path: Path) -> None:
    """Guards a bug: a file saved with a byte-order mark failed with "invalid non-printable character U+FEFF"."""
    code = PLAIN
    exec(compile(("\ufeff" + code).encode("utf-8"), "mine.py", "exec"), {"__name__": "mine"})  # noqa: S102 - what Python does with the file's bytes
    path = tmp_path / "mine.py"
    path.write_bytes(("\ufeff" + code).encode("utf-8"))
    exercise, source = identify(path)
    assert getattr(exercise, "name", None) == "ex04d_nan_hunt" and not source.startswith("\ufeff")
    reply, _ = load(source)
    assert "ok" in reply, reply
    assert code_of("\ufeff" + notebook(code)).source == code


def test_a_future_import_may_open_any_cell_and_holds_for_the_cells_after() -> None:
    """Guards a bug: the cells were joined into one module, so a ``from __future__`` import in the second cell was a SyntaxError."""
    first = "print('setting up')\n"
    second = "from __future__ import annotations\n\ndef f(x: Undefined) -> Undefined:\n    return x\n"
    third = "def g(y: AlsoUndefined) -> int:\n    return 1\n"
    reply, server = load(notebook(first, second, third), True)
    assert "ok" in reply, reply
    assert value_of(server, "f") and value_of(server, "g")  # the annotations were never evaluated, in either cell


def test_a_line_magic_with_a_statement_runs_the_statement() -> None:
    """Guards a bug: ``%time SCALE = 1.0`` became ``pass``, so a later cell met a NameError that Jupyter does not."""
    code = code_of(notebook("%time SCALE = 40.0\n", "y = %time SCALE * 2\n", "%timeit SCALE + 1\n", "RESULT = SCALE + y\n"))
    assert "SCALE = 40.0" in code.source and "y = SCALE * 2" in code.source
    reply, server = load(notebook("%time SCALE = 40.0\n", "y = %time SCALE * 2\n", "%timeit SCALE + 1\n", "RESULT = SCALE + y\n"), True)
    assert "ok" in reply and value_of(server, "RESULT") == 120.0, reply
    notes = reply["ok"]["notes"]  # type: ignore[index]  # the reply of a load
    assert "run as IPython runs it, the statement after the magic: cell 1, line 1: %time SCALE = 40.0; cell 2, line 1: y = %time SCALE * 2" in notes
    assert "not run (IPython magics and shell lines are not Python): cell 3, line 1: %timeit SCALE + 1" in notes


def test_help_lines_are_skipped_with_a_note() -> None:
    """Guards a bug: an IPython help line (``mt.check_grads?``) failed the whole notebook as a syntax error."""
    cells = ("import microtape as mt\nmt.check_grads?\n??mt.grad\nmt.tidy??\n%pinfo mt.variable\nX = 1\n",)
    reply, server = load(notebook(*cells), True)
    assert "ok" in reply and value_of(server, "X") == 1, reply
    assert reply["ok"]["notes"] == [  # type: ignore[index]  # the reply of a load
        "not run (a help request shows documentation, nothing else): cell 1, line 2: mt.check_grads?; cell 1, line 3: ??mt.grad; "
        "cell 1, line 4: mt.tidy??; cell 1, line 5: %pinfo mt.variable"
    ]


def test_the_invalid_json_message_ends_as_a_sentence() -> None:
    """Guards a bug: the message ended "saved completely?." (a full stop after the question mark)."""
    reply, _ = load('{"cells": [', True)
    [detail] = reply["load_failed"]["details"]  # type: ignore[index]  # the reply of a load that failed
    assert detail.endswith("was the notebook saved completely?") and "?." not in detail


# -- the same code as a file and as a notebook, graded by the command line -------------------------------


def cases() -> dict[str, tuple[bytes, str]]:
    """{name: (the .py file's bytes, the notebook's text)}: the same program, written each way."""
    cells = json.loads(starter_notebook(PLAIN, "ex04d_nan_hunt"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    scaled = [c.replace("SCALE = 40.0  # the inputs are multiplied by this: large logits", "%time SCALE = 40.0") for c in code]
    helped = [code[0] + "\nmt.logsumexp?\n??mt.detect_anomaly\n", *code[1:]]
    separated = [code[0] + '\nNOTE = "log\u2028sum\u2029exp"\n', *code[1:]]
    later_future = ["print('first cell')\n", *code]
    return {
        "bom": (("\ufeff" + PLAIN).encode("utf-8"), "\ufeff" + notebook(*code)),
        "line_separators": ((PLAIN + '\nNOTE = "log\u2028sum\u2029exp"\n').encode("utf-8"), notebook(*separated)),
        "future_in_a_later_cell": (PLAIN.encode("utf-8"), notebook(*later_future)),
        "time_magic": (PLAIN.encode("utf-8"), notebook(*scaled)),
        "help_lines": (PLAIN.encode("utf-8"), notebook(*helped)),
    }


@pytest.mark.slow
def test_a_notebook_scores_what_the_same_code_scores_as_a_file(tmp_path: Path) -> None:
    for name, (py, nb) in cases().items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "ex04d_nan_hunt.py").write_bytes(py)
        (tmp_path / name / "ex04d_nan_hunt.ipynb").write_text(nb, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "microtape", "grade", str(tmp_path), "--json", "--seed", "3", "--jobs", "2", "--timeout", "120"],
        capture_output=True, text=True, encoding="utf-8", env=dict(os.environ, PYTHONIOENCODING="utf-8"), timeout=600,
    )
    files = {(Path(str(e["path"])).parent.name, Path(str(e["path"])).suffix): e for e in json.loads(done.stdout)["files"]}
    for name in cases():
        py, nb = files[(name, ".py")], files[(name, ".ipynb")]
        assert py["status"] == "passed", (name, py["report"])
        assert nb["status"] == "passed" and nb["score"] == py["score"], (name, nb["report"])
        assert [c["status"] for c in nb["checks"]] == [c["status"] for c in py["checks"]]
    assert "run as IPython runs it, the statement after the magic" in str(files[("time_magic", ".ipynb")]["report"])
    assert "not run (a help request shows documentation, nothing else)" in str(files[("help_lines", ".ipynb")]["report"])
