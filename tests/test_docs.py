"""The book builds with ``sphinx -W``, shows real computed output, and breaks on a broken chapter.

Each test copies ``docs/``, ``tutorials/`` and the package into ``tmp_path``
and runs ``python -m sphinx -W -b html docs out`` there in a subprocess, so
the repository's own ``docs/book/`` and ``docs/_build/`` are never touched.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    shutil.which("dot") is None,
    reason="Graphviz `dot` is not installed (apt-get install graphviz); the book's graphs need it",
)

GENERATED = shutil.ignore_patterns("_build", "book", "__pycache__", "*.pyc", "sg_execution_times.rst")


def copy_project(dest: Path) -> Path:
    """Copy what the build needs into ``dest``; return ``dest``."""
    for name in ("docs", "tutorials", "microtape"):
        shutil.copytree(ROOT / name, dest / name, ignore=GENERATED)
    for name in ("pyproject.toml", "README.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)
    return dest


def build(project: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "MPLBACKEND": "Agg",
        "PYTHONPATH": os.pathsep.join([str(project), os.environ.get("PYTHONPATH", "")]),
        "PYTHONHASHSEED": "0",
    }
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", "docs", "out"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def page_text(path: Path) -> str:
    """The visible text of a generated page, without tags."""
    return re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8"))


def test_book_builds_with_real_output(tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    proc = build(project)
    assert proc.returncode == 0, f"sphinx -W failed:\n{proc.stderr[-6000:]}"
    out = project / "out"
    for page in ("index", "api", "tfjs", "teachers", "book/index"):
        assert (out / f"{page}.html").is_file(), f"{page}.html was not generated"
    chapter = page_text(out / "book" / "02_automatic_gradients.html")
    # The gradient of the text's linear model at w=0.5, b=0, printed by data_sync():
    # only a chapter that really ran can show it.
    assert "[-17.5]" in chapter and "[-5.5]" in chapter, "chapter 2's computed gradients are missing"
    tape_page = (out / "book" / "03_gradient_tape.html").read_text(encoding="utf-8")
    assert re.search(r'<img [^>]*src="[^"]*sphx_glr_03_gradient_tape_001\.png"', tape_page), (
        "chapter 3's rendered tape graph is missing"
    )
    api = page_text(out / "api.html")
    import microtape as mt

    missing = [name for name in mt.__all__ if f"microtape.{name}" not in api and f"mt.{name}" not in api]
    assert not missing, f"names in microtape.__all__ without an API entry: {missing}"


def test_a_chapter_that_raises_breaks_the_build(tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    # Named to sort first, so sphinx-gallery reaches it (and aborts) before the real chapters.
    (project / "tutorials" / "00_aaa_broken.py").write_text(
        '"""\nA broken chapter\n================\n\nIt raises.\n"""\n\n'
        "# %%\n"
        'raise RuntimeError("this chapter is broken on purpose")\n',
        encoding="utf-8",
    )
    proc = build(project)
    assert proc.returncode != 0, "a chapter that raises must fail the build"
    assert "this chapter is broken on purpose" in proc.stderr + proc.stdout
