"""Exercises as Jupyter notebooks: a starter written as one, and the code a grader runs from one.

``cli.py`` (``exercises DIR --notebook``), ``catalog.py`` and
``grade_child.py`` (``grade FILE.ipynb``) use it. A notebook is JSON
(nbformat 4), written and read here with the standard library alone. A
starter notebook has the task statement in a Markdown cell, then the
starter's code in code cells: the imports and ``EXERCISE``, then one cell
per function or class. Grading a notebook runs its code cells in order, as
one module, each cell compiled on its own as Jupyter's *Restart & Run All*
does (so a ``from __future__`` import may open any cell and holds for the
cells after it); IPython's magics (``%pip``, ``%%time``) and shell lines
(``!ls``) are not Python and do not run: each becomes ``pass`` (so a block
stays a block) and a note says which lines were skipped. A line magic that
carries a statement runs it, as IPython does (``%time SCALE = 1.0`` runs
``SCALE = 1.0``; ``%timeit`` runs its statement in a function of its own, so
it is skipped), and a help request (``mt.check_grads?``, ``??f``) is
skipped with a note. The body of a cell magic that times or captures a cell
(``%%time``, ``%%timeit``, ``%%capture``) is Python and runs; the body of
any other cell magic (``%%bash``) is skipped. Lines end where Python's end
(``\\n``, ``\\r\\n``, ``\\r``), not at the other line breaks ``str.splitlines``
knows (U+2028 inside a string literal is part of the string), and a
byte-order mark before a file's text is dropped, as Python drops it.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Final

from ..errors import InvalidArgumentError
from ..views.places import LOADED, place

__all__ = ["LOADED", "NotebookCode", "NotebookError", "code_of", "place", "source_lines", "starter_notebook", "without_bom"]

NBFORMAT: Final[tuple[int, int]] = (4, 5)
"""The notebook format written: nbformat 4.5 (cells have ids)."""

PYTHON_CELL_MAGICS: Final[frozenset[str]] = frozenset({"time", "timeit", "capture", "prun"})
"""Cell magics whose body is Python: the body is graded, the magic line skipped."""

_MAGIC = re.compile(r"^(\s*)(?:[A-Za-z_][\w.]*\s*=\s*)?[%!]")
_RUNS_ITS_STATEMENT = re.compile(r"^(?P<indent>\s*)(?:(?P<target>[A-Za-z_][\w.]*)\s*=\s*)?%(?P<magic>time|prun)\s+(?P<stmt>\S.*)$")
"""A line magic whose statement IPython runs in the notebook's namespace (``%time x = f()``, ``y = %time f()``)."""
_HELP = re.compile(r"^\s*(?:\?{1,2}[A-Za-z_][\w.]*|[A-Za-z_][\w.]*(?:\(\))?\?{1,2}|%(?:pinfo2?|pdoc|psource|pdef)\s+\S+)\s*$")
"""An IPython help request: ``mt.check_grads?``, ``f??``, ``?f``, ``%pinfo f``."""
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def source_lines(text: str, keepends: bool = False) -> list[str]:
    r"""The lines of Python source as Python splits them: at ``\n``, ``\r\n`` and ``\r`` only.

    ``str.splitlines`` also breaks at U+2028, U+2029, form feeds and other
    characters that are part of a line (or of a string literal) to Python.

    Examples:
        >>> from microtape.book.notebooks import source_lines
        >>> source_lines('s = "a\u2028b"\nt = 1\n')
        ['s = "a\u2028b"', 't = 1']
        >>> len('s = "a\u2028b"\nt = 1\n'.splitlines())
        3
    """
    if not text:
        return []
    pieces: list[str] = []
    start = 0
    for match in _LINE_BREAK.finditer(text):
        pieces.append(text[start : match.end() if keepends else match.start()])
        start = match.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def without_bom(text: str) -> str:
    r"""``text`` without the byte-order mark a Windows editor may put before it (Python ignores it too).

    Examples:
        >>> from microtape.book.notebooks import without_bom
        >>> without_bom("\ufeffx = 1\n")
        'x = 1\n'
    """
    return text[1:] if text.startswith("\ufeff") else text


class NotebookError(InvalidArgumentError):
    """A file that is not a notebook the grader can read: the message says what is wrong and where.

    Examples:
        >>> import microtape as mt
        >>> from microtape.book.notebooks import NotebookError, code_of
        >>> try:
        ...     code_of('{"cells": [], "nbformat": 3}')
        ... except mt.MicrotapeError as err:
        ...     print(type(err).__name__, "-", err)
        NotebookError - nbformat 3: the grader reads nbformat 4 notebooks (save it again with Jupyter)
    """


@dataclass(frozen=True)
class NotebookCode:
    r"""The code cells of a notebook joined into one module, and where each line came from.

    ``starts`` holds, for each code cell, its number in the notebook (counting
    every cell from the top, from 1) and the line of ``source`` it starts on;
    ``notes`` says which magic and shell lines were skipped.

    Examples:
        >>> from microtape.book.notebooks import code_of
        >>> code = code_of('{"cells": [{"cell_type": "markdown", "source": "# Task"},'
        ...                ' {"cell_type": "code", "source": ["x = 1\\n", "!ls\\n"]}], "nbformat": 4}')
        >>> print(code.source)
        x = 1
        pass  # skipped by the grader: !ls
        <BLANKLINE>
        >>> code.locate(2), code.notes
        ((2, 2), ('cell 2, line 2: !ls',))
    """

    source: str
    starts: tuple[tuple[int, int], ...]
    notes: tuple[str, ...] = ()
    cells: tuple[str, ...] = ()
    """Each code cell's source as graded, padded with blank lines to start on its line of ``source``."""
    ran: tuple[str, ...] = ()
    """Line magics whose statement ran (``cell 3, line 1: %time x = 1``)."""
    helped: tuple[str, ...] = ()
    """Help requests skipped (``cell 4, line 1: mt.check_grads?``)."""

    def messages(self) -> list[str]:
        r"""The notes a report shows about what of the notebook did not run as written, one per kind.

        Examples:
            >>> import json
            >>> from microtape.book.notebooks import code_of
            >>> cell = {"cell_type": "code", "source": ["%time x = 1\n", "x?\n", "!ls\n"]}
            >>> for line in code_of(json.dumps({"nbformat": 4, "cells": [cell]})).messages():
            ...     print(line)
            not run (IPython magics and shell lines are not Python): cell 1, line 3: !ls
            run as IPython runs it, the statement after the magic: cell 1, line 1: %time x = 1
            not run (a help request shows documentation, nothing else): cell 1, line 2: x?
        """
        found = []
        if self.notes:
            found.append(f"not run (IPython magics and shell lines are not Python): {'; '.join(self.notes)}")
        if self.ran:
            found.append(f"run as IPython runs it, the statement after the magic: {'; '.join(self.ran)}")
        if self.helped:
            found.append(f"not run (a help request shows documentation, nothing else): {'; '.join(self.helped)}")
        return found

    def locate(self, line: int) -> tuple[int, int]:
        """``(cell, line in that cell)`` of a line of ``source`` (both from 1)."""
        cell, first = self.starts[0] if self.starts else (1, 1)
        for number, start in self.starts:
            if start <= line:
                cell, first = number, start
        return cell, line - first + 1


def _text(value: object, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    raise NotebookError(f"{where}: its source is {type(value).__name__}, not text or a list of lines")


def _skip_magics(lines: list[str], number: int, notes: list[str], ran: list[str] | None = None, helped: list[str] | None = None) -> list[str]:
    """The cell's lines with magic and shell lines turned into ``pass`` (or into their statement), noted (a cell that parses is left alone)."""
    ran = [] if ran is None else ran
    helped = [] if helped is None else helped
    try:
        ast.parse("\n".join(lines))
        return lines  # valid Python has no magics (a line that starts with % continues an expression)
    except (SyntaxError, ValueError):  # ValueError: a NUL character (Python < 3.12)
        pass
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        notes.append(f"cell {number}, line 1: {first}" + ("" if magic in PYTHON_CELL_MAGICS else " (the whole cell)"))
        if magic not in PYTHON_CELL_MAGICS:
            return [f"pass  # skipped by the grader: {first}"] + [f"# {line}" for line in lines[1:]]
        lines = [f"pass  # skipped by the grader: {first}", *lines[1:]]
        start = 1
    else:
        start = 0
    out = lines[:start]
    for index, line in enumerate(lines[start:], start=start + 1):
        runs = _RUNS_ITS_STATEMENT.match(line)
        if runs:
            target = runs.group("target")
            statement = f"{target} = {runs.group('stmt')}" if target else runs.group("stmt")
            ran.append(f"cell {number}, line {index}: {line.strip()}")
            out.append(f"{runs.group('indent')}{statement}")
        elif _HELP.match(line):
            helped.append(f"cell {number}, line {index}: {line.strip()}")
            out.append(f"{line[: len(line) - len(line.lstrip())]}pass  # skipped by the grader: {line.strip()}")
        elif (match := _MAGIC.match(line)) is not None:
            notes.append(f"cell {number}, line {index}: {line.strip()}")
            out.append(f"{match.group(1)}pass  # skipped by the grader: {line.strip()}")
        else:
            out.append(line)
    return out


def code_of(text: str) -> NotebookCode:
    """The code a grader runs from a notebook's JSON ``text``: its code cells in order, magics skipped.

    Raises ``NotebookError`` when ``text`` is not an nbformat 4 notebook
    (not JSON, no ``cells`` list, a cell without ``cell_type`` or text source).

    Examples:
        >>> from microtape.book.notebooks import NotebookError, code_of
        >>> try:
        ...     code_of('{"cells": [')
        ... except NotebookError as err:
        ...     print(err)
        not valid JSON (line 1, column 12: Expecting value); was the notebook saved completely?
    """
    try:
        doc = json.loads(without_bom(text))
    except json.JSONDecodeError as err:
        raise NotebookError(f"not valid JSON (line {err.lineno}, column {err.colno}: {err.msg}); was the notebook saved completely?") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise NotebookError("JSON, but not a Jupyter notebook: it has no list of \"cells\"")
    if doc.get("nbformat") != 4:
        raise NotebookError(f"nbformat {doc.get('nbformat')!r}: the grader reads nbformat 4 notebooks (save it again with Jupyter)")
    pieces: list[str] = []
    starts: list[tuple[int, int]] = []
    notes: list[str] = []
    ran: list[str] = []
    helped: list[str] = []
    cells: list[str] = []
    line = 1
    for number, cell in enumerate(doc["cells"], start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f"cell {number} is not a notebook cell (no \"cell_type\")")
        source = _text(cell.get("source", ""), f"cell {number}")
        if cell["cell_type"] != "code":
            continue
        lines = _skip_magics(source_lines(source), number, notes, ran, helped)
        starts.append((number, line))
        text = "".join(f"{piece}\n" for piece in lines)
        pieces.append(text)
        cells.append("\n" * (line - 1) + text)  # compiled alone, on the lines it has in the joined source
        line += len(lines)
    return NotebookCode("".join(pieces), tuple(starts), tuple(notes), tuple(cells), tuple(ran), tuple(helped))


def _cell(kind: str, number: int, text: str) -> dict[str, object]:
    lines = text.splitlines(keepends=True)
    cell: dict[str, object] = {"cell_type": kind, "id": f"{kind}-{number}", "metadata": {}, "source": lines}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _code_cells(code: str) -> list[str]:
    """The starter's code after its docstring, cut before each top-level function or class (with its comments)."""
    lines = code.splitlines()
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return [code.strip("\n")]
    cuts: list[int] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            while top > 0 and lines[top - 1].lstrip().startswith("#"):
                top -= 1
            cuts.append(top)
    cells: list[str] = []
    for begin, end in zip([0, *cuts], [*cuts, len(lines)]):
        text = "\n".join(lines[begin:end]).strip("\n")
        if text.strip():
            cells.append(text)
    return cells


def _markdown(statement: str) -> str:
    """The statement (reStructuredText) as Markdown shows it: the title a heading, ``text::`` as ``text:``.

    ````code````, lists and indented literal blocks read the same in both.
    """
    lines = [re.sub(r"(\S)::$", r"\1:", line) if line.endswith("::") else line for line in statement.splitlines()]
    lines = [line for line in lines if line.strip() != "::"]
    if lines and lines[0].strip() and (len(lines) == 1 or not lines[1].strip()):
        lines[0] = f"# {lines[0]}"
    return "\n".join(lines)


def starter_notebook(source: str, name: str) -> str:
    r'''A starter's source as a notebook (nbformat 4 JSON): the task statement in Markdown, the code in cells.

    ``source`` is the starter file's text as written for the student (in
    their language); ``name`` is the exercise (``ex04_softplus_vjp``): the
    statement's ``grade ex04_softplus_vjp.py`` becomes ``grade
    ex04_softplus_vjp.ipynb``.

    Examples:
        >>> import json
        >>> from microtape.book.notebooks import code_of, starter_notebook
        >>> src = '"""Task: write f.\n\nGrade it::\n\n    python -m microtape grade ex9.py\n"""\n\nEXERCISE = "ex9"\n\n\ndef f() -> int:\n    raise NotImplementedError("TODO")\n'
        >>> nb = json.loads(starter_notebook(src, "ex9"))
        >>> [c["cell_type"] for c in nb["cells"]], nb["nbformat"]
        (['markdown', 'code', 'code'], 4)
        >>> print("".join(nb["cells"][0]["source"]))
        # Task: write f.
        <BLANKLINE>
        Grade it:
        <BLANKLINE>
            python -m microtape grade ex9.ipynb
        >>> print(code_of(starter_notebook(src, "ex9")).source)
        EXERCISE = "ex9"
        def f() -> int:
            raise NotImplementedError("TODO")
        <BLANKLINE>
    '''
    tree = ast.parse(source)
    statement = ast.get_docstring(tree, clean=True) or ""
    code = source
    first = tree.body[0] if tree.body else None
    if statement and isinstance(first, ast.Expr) and first.end_lineno is not None:
        code = "\n".join(source.splitlines()[first.end_lineno :])
    statement = re.sub(rf"\b{re.escape(name)}\.py\b", f"{name}.ipynb", statement)
    statement = _markdown(statement)
    cells = [_cell("markdown", 1, statement)] if statement else []
    cells += [_cell("code", number, text) for number, text in enumerate(_code_cells(code), start=len(cells) + 1)]
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": NBFORMAT[0],
        "nbformat_minor": NBFORMAT[1],
    }
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
