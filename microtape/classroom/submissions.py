"""The paths given to ``grade``, turned into the files to grade and the paths that cannot be graded.

``grader.py`` uses it. Folders are searched for
``*.py`` and ``*.ipynb`` (hidden names, such as ``.ipynb_checkpoints``, ``__pycache__`` and ``__init__.py`` skipped), in
sorted order; the same file reached by two paths is graded once. A path that
cannot be graded (missing, a symlink loop, a link to a folder above it, an
unreadable or empty folder, not a regular file) becomes one entry of its own,
with what is wrong and a hint.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from .catalog import starter_hint

__all__ = ["Found", "collect_paths"]


Found = tuple[Path, Optional[Path], Optional[tuple[str, str]]]
"""A path to report: as given, its real file (None when it cannot be graded) and what is wrong with it."""


def collect_paths(paths: Sequence[str | Path]) -> list[Found]:
    """The files to grade, in order (folders searched for ``*.py`` and ``*.ipynb``), once each, and the paths that cannot be graded.

    Examples:
        >>> from microtape.classroom.submissions import collect_paths
        >>> shown, real, (what, how) = collect_paths(["no/such/file.py"])[0]
        >>> real, what
        (None, "'no/such/file.py': no such file or folder.")
    """
    found: list[Found] = []
    seen: set[str] = set()

    def add_file(shown: Path) -> None:
        try:
            real = os.path.realpath(shown, strict=True)
        except (OSError, RuntimeError) as err:
            loop = isinstance(err, RuntimeError) or getattr(err, "errno", None) == errno.ELOOP
            what = "a symlink loop (the link leads back to itself)" if loop else f"cannot be opened ({getattr(err, 'strerror', None) or err})"
            found.append((shown, None, (f"{str(shown)!r}: {what}.", "replace it with the exercise file itself.")))
            return
        if real in seen:
            return  # the same file through another path: graded once
        seen.add(real)
        if not os.path.isfile(real):
            found.append((shown, None, (f"{str(shown)!r}: not a regular file.", "pass exercise files (.py or .ipynb) or folders of them.")))
            return
        found.append((shown, Path(real), None))

    def walk(folder: Path, above: frozenset[str]) -> int:
        real = os.path.realpath(folder)
        if real in above:
            found.append((folder, None, (f"{str(folder)!r}: a symlink to a folder above it (a loop); not searched.", "remove the link.")))
            return 1
        def leads_to_folder(entry: os.DirEntry[str]) -> bool:
            try:
                return entry.is_dir()
            except OSError:  # a symlink loop: add_file reports it
                return False

        try:
            with os.scandir(folder) as it:
                names = sorted((e.name, leads_to_folder(e)) for e in it)
        except OSError as err:
            found.append((folder, None, (f"{str(folder)!r}: cannot be read ({err.strerror or err}).", "check the folder's permissions.")))
            return 1
        count = 0
        for name, is_dir in names:
            if name.startswith((".", "__pycache__")):
                continue
            if is_dir:
                count += walk(folder / name, above | {real})
            elif name.endswith((".py", ".ipynb")) and name != "__init__.py":
                add_file(folder / name)
                count += 1
        if count == 0:
            found.append((folder, None, (f"{str(folder)!r}: a folder without .py files (or .ipynb notebooks).", starter_hint(str(folder)))))
            return 1
        return count

    for given in map(Path, paths):
        if given.is_dir():
            walk(given, frozenset())
        elif given.is_file() or given.is_symlink():
            add_file(given)
        else:
            found.append((given, None, (f"{str(given)!r}: no such file or folder.", starter_hint(str(given)))))
    return found
