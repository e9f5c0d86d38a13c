"""How the tests build the book: one copy of the project, both editions, shared by the session.

``tests/conftest.py`` turns :func:`build_editions` into the session fixture ``editions``,
so the English and the Russian editions are built once per test run and every test that
reads a built page or a download (``test_docs.py``, ``test_notebooks.py``) reads the same
build. Read ``test_docs.py`` for what is checked on it.

One copy of ``docs/``, ``tutorials/`` and the package goes into a temporary folder, and
both editions are built there in subprocesses, in the layout the README gives (English in
``out/``, Russian in ``out/ru/``), as the book is published: ``sphinx -W`` (a warning fails
the build, which still writes every page), chapters run by sphinx-gallery, and Graphviz's
``dot`` left off PATH, since the book must not need it. The repository's own ``docs/book/``
and ``docs/_build/`` are never touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NO_DOT_PATH = os.pathsep.join(
    d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "dot").exists()
)
"""The PATH the book is built with: Graphviz's ``dot`` left out, since the book must not need it."""

_GENERATED = shutil.ignore_patterns("_build", "__pycache__", "*.pyc", "*.mo", "sg_execution_times.rst")


def GENERATED(folder: str, names: list[str]) -> set[str]:
    """What the copy leaves out: build output, and the gallery's generated ``docs/book/``
    (but not ``docs/locale/ru/LC_MESSAGES/book/``, the chapters' catalogs)."""
    skipped = set(_GENERATED(folder, names))
    if Path(folder) == ROOT / "docs" and "book" in names:
        skipped.add("book")
    return skipped


def copy_project(dest: Path) -> Path:
    """Copy what the build needs into ``dest``; return ``dest``."""
    for name in ("docs", "tutorials", "microtape"):
        shutil.copytree(ROOT / name, dest / name, ignore=GENERATED)
    # LICENSE: the wheel the build makes names it; hatch_build.py: the hook that compiles its .mo
    for name in ("pyproject.toml", "README.md", "LICENSE", "hatch_build.py"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)
    return dest


def sphinx(project: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m sphinx -W -q ARGS`` in ``project`` (with ``PATH`` set to ``path`` if given)."""
    env = {
        **os.environ,
        "MPLBACKEND": "Agg",
        "PYTHONPATH": os.pathsep.join([str(project), os.environ.get("PYTHONPATH", "")]),
        "PYTHONHASHSEED": "0",
    }
    env.pop("DOCS_LANG", None)
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def build(project: Path, out: str = "out", *options: str) -> subprocess.CompletedProcess[str]:
    """One HTML edition of the book in ``project/out`` (``-W``, chapters run, PATH as it is)."""
    return sphinx(project, "-b", "html", *options, "docs", out)


@dataclass
class Editions:
    """Both editions of the book, built once in ``project`` (see the module's docstring)."""

    project: Path
    english: subprocess.CompletedProcess[str]
    russian: subprocess.CompletedProcess[str]

    @property
    def en(self) -> Path:
        return self.project / "out"

    @property
    def ru(self) -> Path:
        return self.project / "out" / "ru"


def build_editions(dest: Path) -> Editions:
    """Copy the project into ``dest`` and build the English, then the Russian edition there."""
    project = copy_project(dest)
    english = sphinx(project, "-b", "html", "docs", "out", path=NO_DOT_PATH)
    russian = sphinx(project, "-b", "html", "-D", "language=ru", "docs", "out/ru", path=NO_DOT_PATH)
    return Editions(project, english, russian)
