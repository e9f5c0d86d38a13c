"""Where the book's chapters and the starter exercises are, installed or not.

The chapters (``tutorials/NN_*.py``) and the starter
exercises (``tutorials/exercises/``, without ``solutions/``) ship inside the
wheel as package data under ``microtape/_tutorials/``, so the tour and the
grader work after a plain ``pip install``. In a source checkout (and in an
editable install, which points at the checkout) that folder does not exist
and the checkout's own ``tutorials/`` is the book. Either way callers get a
path from here and nowhere else.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Final

__all__ = ["chapter_files", "exercises_dir", "locale_dir", "starter_files", "tutorials_dir"]

PACKAGED: Final = "_tutorials"
"""The folder inside the package that holds the book in a wheel."""


def tutorials_dir() -> Path | None:
    """The folder holding the chapters, or None when neither copy exists.

    Examples:
        >>> from microtape.book.resources import tutorials_dir
        >>> folder = tutorials_dir()
        >>> folder is None or (folder / "exercises").is_dir()
        True
    """
    packaged = resources.files("microtape") / PACKAGED
    if packaged.is_dir():
        # A wheel installs into a real directory, so the Traversable is a path.
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "tutorials"
    return checkout if checkout.is_dir() else None


def chapter_files() -> list[Path]:
    """The chapter scripts in book order (empty when the book is missing).

    Examples:
        >>> from microtape.book.resources import chapter_files
        >>> [p.name[:3] for p in chapter_files()][:2]
        ['00_', '01_']
    """
    folder = tutorials_dir()
    return sorted(folder.glob("[0-9][0-9]_*.py")) if folder is not None else []


def starter_files() -> list[Path]:
    """The starter exercises a student copies (``ex*.py`` at the top of :func:`exercises_dir`).

    Examples:
        >>> from microtape.book.resources import starter_files
        >>> [p.name for p in starter_files()][:1]
        ['ex00_gradient_by_hand.py']
    """
    folder = exercises_dir()
    return sorted(folder.glob("ex*.py")) if folder is not None else []


def exercises_dir() -> Path | None:
    """The folder holding the starter exercises (never the solutions in a wheel).

    Examples:
        >>> from microtape.book.resources import exercises_dir
        >>> folder = exercises_dir()
        >>> folder is None or any(folder.glob("ex00_*.py"))
        True
    """
    folder = tutorials_dir()
    return folder / "exercises" if folder is not None and (folder / "exercises").is_dir() else None


def locale_dir() -> Path | None:
    """The folder of the book's translations (``<lang>/LC_MESSAGES/book/<chapter>.po``), or None.

    The tour reads the chapters' Russian text from the same catalogs the
    Russian edition of the book is built from: ``docs/locale`` in a checkout,
    ``_tutorials/locale`` (the chapters' catalogs only) in a wheel.

    Examples:
        >>> from microtape.book.resources import locale_dir
        >>> folder = locale_dir()
        >>> folder is None or (folder / "ru" / "LC_MESSAGES").is_dir()
        True
    """
    packaged = resources.files("microtape") / PACKAGED / "locale"
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "docs" / "locale"
    return checkout if checkout.is_dir() else None
