"""Every chapter of the book runs as a plain script, warnings as errors.

The fast twin of the Sphinx build (``test_docs.py``): each
``tutorials/NN_*.py`` runs in its own ``python -W error`` process, as a reader
would run it. sphinx-gallery captures warnings into the page instead of
failing, so this is where a chapter that warns is caught.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "tutorials").glob("[0-9][0-9]_*.py"))


def test_the_book_has_chapters() -> None:
    assert len(CHAPTERS) >= 4, f"expected the book's chapters in {ROOT / 'tutorials'}, found {CHAPTERS}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
@pytest.mark.slow
def test_chapter_runs(chapter: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "MPLBACKEND": "Agg",  # figures render off-screen, as in the Sphinx build
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "PYTHONHASHSEED": "0",
    }
    proc = subprocess.run(
        [sys.executable, "-W", "error", str(chapter)],
        cwd=tmp_path,  # a chapter must not depend on (or write into) the working directory
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, (
        f"{chapter.name} failed (exit {proc.returncode}).\n"
        f"--- stderr ---\n{proc.stderr}\n--- last lines of stdout ---\n{proc.stdout[-2000:]}"
    )
    assert not proc.stderr.strip(), f"{chapter.name} wrote to stderr:\n{proc.stderr}"


BOX_CHARS = 100
"""Characters of program output that fit on one line of the book's output box (furo's content
column, sphinx-gallery's output font: measured in Chromium, 673 px of 6.69 px characters)."""


def _chapter_output(stem: str) -> str:
    chapter = ROOT / "tutorials" / f"{stem}.py"
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(chapter)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _tables(text: str) -> list[list[str]]:
    """The explain_gradient and check_grads tables a chapter prints: each its heading and rows."""
    tables: list[list[str]] = []
    rows: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(("  contribution  ", "  input index ")):
            rows = [line]
            tables.append(rows)
        elif rows is not None and line.startswith("  ") and not line.startswith(("  why:", "  worst", "  note:", "  culprit", "  ...", "  `")):
            rows.append(line)
        else:
            rows = None
    return tables


def test_chapter_4_prints_the_derivative_of_sqrt_whole() -> None:
    """The chapter's short() trims file paths only: a formula such as 1/(2*sqrt(x)) keeps its '1/'."""
    out = _chapter_output("04_checking_gradients")
    assert "its derivative 1/(2*sqrt(x)) is inf" in out
    assert "derivative (2*sqrt(x))" not in out


@pytest.mark.parametrize("stem", ["04_checking_gradients", "07_analysis_tools"])
def test_tables_fit_the_output_box(stem: str) -> None:
    """Every row of every gradient table a chapter prints fits on one line of the page's output box."""
    out = _chapter_output(stem)
    tables = _tables(out)
    assert len(tables) >= 2, f"{stem}: expected its explain_gradient and check_grads tables"
    wide = [row for table in tables for row in table if len(row) > BOX_CHARS]
    assert not wide, f"{stem}: rows wider than {BOX_CHARS} characters wrap inside the box:\n" + "\n".join(wide)
    assert "GradCheckRow(" not in out, "a report's rows print as sentences or tables, not as their repr"
