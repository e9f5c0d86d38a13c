"""A line of the user's code as a reader names it: a file's line, a graded notebook's cell, a
running Jupyter kernel's cell (what IPython's own tracebacks read), never IPython's file name."""

from __future__ import annotations

import sys
import types

import pytest

from microtape.views.places import LOADED, jupyter_cell, place, place_of


class _Cells:
    def locate(self, line: int) -> tuple[int, int]:
        return (3, line - 10) if line > 10 else (1, line)


def test_files_graded_notebooks_and_unknown_lines() -> None:
    assert place("/home/me/ex05.py", 12) == "ex05.py:12"
    assert place("C:\\work\\ex05.py", 3) == "ex05.py:3"
    assert place("/home/me/ex05.py", "?") == "ex05.py:?"
    LOADED["/tmp/ex.ipynb"] = _Cells()
    try:
        assert place("/tmp/ex.ipynb", 12) == "ex.ipynb, cell 3, line 2"
        assert place_of("/tmp/ex.ipynb:12") == "ex.ipynb, cell 3, line 2"
    finally:
        del LOADED["/tmp/ex.ipynb"]
    assert place_of("<unknown>") == "<unknown>"


def test_a_jupyter_cell_reads_cell_and_line(monkeypatch: pytest.MonkeyPatch) -> None:
    name = "/tmp/ipykernel_81/3295137715.py"
    assert jupyter_cell(name) is None and place(name, 3) == "3295137715.py:3"  # no IPython: the file
    shell = types.SimpleNamespace(compile=types.SimpleNamespace(_filename_map={name: 5}))
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: shell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert jupyter_cell(name) == 5 and place(name, 3) == "cell 5, line 3" and place_of(f"{name}:3") == "cell 5, line 3"
    assert place("/home/me/train.py", 3) == "train.py:3"  # not a cell
    shell.compile._filename_map = {name: True}  # not a count: not trusted
    assert jupyter_cell(name) is None
    assert place("<ipython-input-7-0f3b2a9c>", 2) == "cell 7, line 2"  # IPython before 7.24
