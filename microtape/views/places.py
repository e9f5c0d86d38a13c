"""Where a line of the user's code is, as a reader names it: ``ex.py:12``; ``ex.ipynb, cell 3, line 2``
in a notebook being graded; ``cell 5, line 3`` in a running Jupyter kernel, whose cells IPython
compiles under file names such as ``/tmp/ipykernel_81/3295137715.py`` that mean nothing to a reader.
"""

from __future__ import annotations

import re
import sys
from typing import Final, Protocol
from ..language import tr

__all__ = ["LOADED", "CellMap", "jupyter_cell", "place", "place_of"]


class CellMap(Protocol):
    """A notebook's code cells joined into one module (``book/notebooks.py``'s ``NotebookCode``)."""

    def locate(self, line: int) -> tuple[int, int]:
        """``(cell, line in that cell)`` of a line of the joined source."""
        ...


LOADED: dict[str, CellMap] = {}
"""The notebooks being graded in this process, by path (``classroom/grade_child.py`` fills it)."""

_OLD_CELL: Final = re.compile(r"^<ipython-input-(\d+)-[0-9a-f]+>$")
"""IPython before 7.24 named a cell's code ``<ipython-input-5-0f3b...>``."""


def jupyter_cell(file: str) -> int | None:
    """The execution count of the Jupyter cell compiled under ``file`` (``In [5]``), if it is one.

    IPython remembers the count of every cell it compiled (``get_ipython().compile._filename_map``,
    what its own tracebacks read to print ``Cell In[5], line 3``); outside IPython this is None.

    Examples:
        >>> from microtape.views.places import jupyter_cell
        >>> jupyter_cell("/home/me/train.py") is None, jupyter_cell("<ipython-input-5-0f3b2a>")
        (True, 5)
    """
    old = _OLD_CELL.match(file)
    if old:
        return int(old.group(1))
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    numbers = getattr(getattr(shell, "compile", None), "_filename_map", None)
    found = numbers.get(file) if isinstance(numbers, dict) else None
    return found if isinstance(found, int) and not isinstance(found, bool) else None


def place(file: str, line: int | str, lang: str | None = None) -> str:
    """'ex.py:12' for a line of a file, 'ex.ipynb, cell 3, line 2' for a line of a notebook being
    graded, 'cell 5, line 3' for a line of a Jupyter cell (in ``lang``, default: the reader's language).

    Examples:
        >>> from microtape.views.places import place
        >>> place("/home/me/ex05.py", 12)
        'ex05.py:12'
    """
    name = file.replace("\\", "/").rsplit("/", 1)[-1]
    if not str(line).isdigit():
        return f"{name}:{line}"
    code = LOADED.get(file)
    if code is not None:
        cell, within = code.locate(int(line))
        return tr("{name}, cell {cell}, line {line}", lang).format(name=name, cell=cell, line=within)
    number = jupyter_cell(file)
    if number is not None:
        return tr("cell {cell}, line {line}", lang).format(cell=number, line=line)
    return f"{name}:{line}"


def place_of(where: str) -> str:
    """``place`` of a ``file:line`` text (what tapes and reports record); other text is left alone.

    Examples:
        >>> from microtape.views.places import place_of
        >>> place_of("/home/me/ex05.py:12"), place_of("<unknown>")
        ('ex05.py:12', '<unknown>')
    """
    file, _, line = where.rpartition(":")
    return place(file, line) if file else where
