"""The tour: the README's main command prints every chapter with its real outputs."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from microtape import _tour
from microtape.cli import _mini_tour, tour

ROOT = Path(__file__).resolve().parents[1]


def test_tour_runs_every_chapter_in_a_fresh_process() -> None:
    result = subprocess.run(
        [sys.executable, "-W", "error", "-m", "microtape", "tour"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for path in _tour.chapters():
        title = path.read_text(encoding="utf-8").split('"""')[1].strip().splitlines()[0]
        assert title in result.stdout, f"{path.name}'s title is missing from the tour"
    assert "▸ Tensor(-17.5, shape=())" in result.stdout or "-17.5" in result.stdout  # a real computed output
    assert "Traceback" not in result.stdout


def test_one_chapter_and_a_missing_one() -> None:
    out = io.StringIO()
    assert tour(chapter=2, out=out) == 0
    text = out.getvalue()
    assert "Automatic gradients" in text and "Variables (" not in text
    out = io.StringIO()
    assert tour(chapter=42, out=out) == 2
    assert "no chapter 42; the chapters are 0, 1, 2, 3, 4, 5, 6, 7" in out.getvalue()


def test_pausing_between_chapters_and_quitting() -> None:
    prompts: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        return "q"

    out = io.StringIO()
    assert _tour.run(None, out, _mini_tour, pause=answer) == 0
    assert prompts == ["── Enter for chapter 1, q to stop ── "]
    assert "Gradient debugging" in out.getvalue() and "Variables (" not in out.getvalue()


def test_without_a_source_checkout_the_short_tour_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(_tour, "TUTORIALS", tmp_path / "nowhere")
    out = io.StringIO()
    assert tour(out=out) == 0
    text = out.getvalue()
    assert "dL/dw = Tensor(-17.5, shape=())" in text and "x = 1.6, y = 2.4" in text


def test_cells_keep_the_chapter_line_numbers() -> None:
    source = '"""Title\n=====\n"""\n\n# %%\n# Some prose.\nx = 1\nx + 1\n\n# %%\n# More.\ny = 2\n'
    doc, cells = _tour._cells(source)
    assert doc.startswith("Title")
    assert cells == [("Some prose.", "x = 1\nx + 1", 7), ("More.", "y = 2", 12)]
    assert _tour._execute("x = 1\nx + 1", {}) == "2\n"
