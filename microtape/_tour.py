"""Run the book's chapters in the terminal, cell by cell.

A chapter in ``tutorials/`` is a script split into cells by ``# %%``
lines; comment lines are prose. The tour prints each cell's prose, its
code, and what it prints, plus the value of a final expression, the way
the book shows them. Without a source checkout (no ``tutorials/`` next to
the package) it falls back to a short built-in tour.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ._prose import chapter_catalog, plain, render

TUTORIALS = Path(__file__).resolve().parent.parent / "tutorials"
_RULE = "─" * 72


def chapters() -> list[Path]:
    """The chapter files, in book order (empty without a source checkout)."""
    return sorted(TUTORIALS.glob("[0-9][0-9]_*.py")) if TUTORIALS.is_dir() else []


def _cells(source: str) -> tuple[str, list[tuple[str, str, int]]]:
    """Split a chapter into its title docstring and (prose, code, first code line) cells."""
    module = ast.parse(source)
    doc = ast.get_docstring(module) or ""
    lines = source.splitlines()
    start = module.body[0].end_lineno or 0 if module.body and isinstance(module.body[0], ast.Expr) else 0
    cells: list[tuple[str, str, int]] = []
    prose: list[str] = []
    code: list[str] = []
    code_line = 0

    def flush() -> None:
        while code and not code[-1].strip():
            code.pop()
        text = "\n".join(prose).strip()
        if text or code:
            cells.append((text, "\n".join(code), code_line))

    for number, line in enumerate(lines[start:], start=start + 1):
        if line.startswith("# %%"):
            flush()
            prose, code = [], []
        elif not code and (line.startswith("#") or not line.strip()):
            prose.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
        else:
            if not code:
                code_line = number
            code.append(line)
    flush()
    return doc, cells


def _execute(code: str, namespace: dict[str, object], filename: str = "<tour>", line: int = 1) -> str:
    """Run a cell; return what it printed plus the repr of a final expression.

    Line numbers are those of the chapter file, so leak reports and tracebacks
    point at the chapter's real lines.
    """
    tree = ast.parse(code)
    ast.increment_lineno(tree, line - 1)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body = tree.body[:-1]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - running our own chapters is the point
        if last is not None:
            value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)  # noqa: S307
            if value is not None:
                print(repr(value))
    return buffer.getvalue()


def show(path: Path, out: TextIO, lang: str = "en") -> None:
    """Print one chapter: title, then each cell's prose (in ``lang`` where translated), code and output."""
    doc, cells = _cells(path.read_text(encoding="utf-8"))
    catalog = chapter_catalog(path.stem, lang)
    print(_RULE, file=out)
    print(render(doc.strip(), catalog, lang), file=out)
    print(_RULE, file=out)
    namespace: dict[str, object] = {"__name__": "__main__", "__file__": str(path)}
    for prose, code, line in cells:
        if prose:
            print(render(prose, catalog, lang), file=out)
        if code:
            print(textwrap.indent(code, "    │ "), file=out)
            output = _execute(code, namespace, str(path), line)
            if output:
                print(textwrap.indent(output.rstrip("\n"), "    ▸ "), file=out)
        print(file=out)


def run(
    chapter: int | None,
    out: TextIO,
    fallback: Callable[[TextIO], None],
    pause: Callable[[str], str] | None = None,
    lang: str = "en",
) -> int:
    """Show every chapter (or chapter N); return the exit code.

    With ``pause`` (``input`` in an interactive terminal), wait for Enter
    between chapters; "q" stops the tour.
    """
    found = chapters()
    if not found:
        fallback(out)
        return 0
    if chapter is not None:
        picked = [p for p in found if int(p.name[:2]) == chapter]
        if not picked:
            numbers = ", ".join(str(int(p.name[:2])) for p in found)
            print(f"no chapter {chapter}; the chapters are {numbers}", file=out)
            return 2
        found = picked
    for n, path in enumerate(found):
        if pause is not None and n:
            answer = pause(f"── Enter for chapter {int(path.name[:2])}, q to stop ── ")
            if answer.strip().lower().startswith("q"):
                break
        show(path, out, lang=lang)
    return 0
