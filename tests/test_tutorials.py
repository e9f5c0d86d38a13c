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
