"""Run the book's chapters in the terminal, cell by cell.

A chapter in ``tutorials/`` is a script split into cells by ``# %%``
lines; comment lines are prose. The tour prints each cell's prose, its
code, and what it prints, plus the value of a final expression, the way
the book shows them. The chapters come from :mod:`microtape.book.resources`
(package data in a wheel, ``tutorials/`` in a checkout); if neither is there
it falls back to a short built-in tour.

Plots: with matplotlib installed, each figure a cell draws is saved as a PNG
(when the caller gives a folder) and the tour prints its path. Without
matplotlib, the statements that need it are left out of the cell (an import
of matplotlib, and every statement that reads a name such a statement bound),
the rest of the cell runs, and one line says how to get the plots.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from . import resources
from .. import language
from ..i18n.messages import ENV, say
from .prose import chapter_catalog, render

_RULE = "─" * 72
NO_PLOTS: str = say("en", "no_plots")
"""The line printed where a cell's plot would be, when matplotlib is missing (in English; ``messages.py`` has the others)."""


def chapters() -> list[Path]:
    """The chapter files, in book order (empty when the book is missing)."""
    return resources.chapter_files()


def have_matplotlib() -> bool:
    """Whether matplotlib can be imported (the tour draws plots only then)."""
    return importlib.util.find_spec("matplotlib") is not None


def split_cells(source: str) -> tuple[str, list[tuple[str, str, int]]]:
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


def _loop_names(stmt: ast.stmt) -> set[str]:
    return {
        n.id
        for node in ast.walk(stmt)
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension))
        for n in ast.walk(node.target)
        if isinstance(n, ast.Name)
    }


def _binds(stmt: ast.stmt) -> set[str]:
    """The names a statement binds, loop variables aside."""
    names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names - _loop_names(stmt)


def _needs_plotting(stmt: ast.stmt, tainted: set[str]) -> bool:
    for node in ast.walk(stmt):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "matplotlib" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "matplotlib":
            return True
    reads = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    # a function's parameters are its own names, whatever a plot called a variable of the same name
    parameters = {a.arg for n in ast.walk(stmt) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                  for a in (*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs, n.args.vararg, n.args.kwarg) if a is not None}
    return bool((reads - _loop_names(stmt) - parameters) & tainted)


def _drop_plotting(tree: ast.Module, tainted: set[str]) -> bool:
    """Leave out the statements that need matplotlib; return whether one of them draws.

    ``tainted`` holds the names bound by statements left out so far (in this
    chapter); it is updated in place.

    Examples:
        >>> import ast
        >>> from microtape.book.tour import _drop_plotting
        >>> tree = ast.parse("import matplotlib.pyplot as plt\\nfig, ax = plt.subplots()\\nx = 1\\nax.plot([x])")
        >>> tainted: set[str] = set()
        >>> _drop_plotting(tree, tainted), ast.unparse(tree), sorted(tainted)
        (True, 'x = 1', ['ax', 'fig', 'plt'])
        >>> tree = ast.parse("def f(ax):\\n    return ax + 1")  # a parameter is not the plot's ax
        >>> _drop_plotting(tree, tainted), ast.unparse(tree).splitlines()[0]
        (False, 'def f(ax):')
    """
    kept: list[ast.stmt] = []
    drawing = False  # an import alone draws nothing: say nothing about it
    for stmt in tree.body:
        if _needs_plotting(stmt, tainted):
            tainted |= _binds(stmt)
            drawing |= not isinstance(stmt, (ast.Import, ast.ImportFrom))
        else:
            tainted -= _binds(stmt)
            kept.append(stmt)
    tree.body = kept
    return drawing


def execute_cell(
    code: str,
    namespace: dict[str, object],
    filename: str = "<tour>",
    line: int = 1,
    tainted: set[str] | None = None,
    lang: str = "en",
    *,
    note: str | None = None,
    out: TextIO | None = None,
) -> str:
    """Run a cell; return what it printed plus the repr of a final expression.

    Line numbers are those of the chapter file, so leak reports and tracebacks
    point at the chapter's real lines. With ``tainted`` (a set, shared by the
    cells of a chapter), the statements that need matplotlib are left out and
    ``note`` is printed instead (by default ``NO_PLOTS``, in ``lang``). With
    ``out``, what the cell prints goes there as it is printed (so it is kept
    when the cell raises), and the result is empty.
    """
    tree = ast.parse(code)
    ast.increment_lineno(tree, line - 1)
    dropped = tainted is not None and _drop_plotting(tree, tainted)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body = tree.body[:-1]
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured if out is None else out):
        exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - running our own chapters is the point
        if last is not None:
            value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)  # noqa: S307
            if value is not None:
                print(repr(value))
        if dropped:
            print(say(lang, "no_plots") if note is None else note)
    return captured.getvalue()


def _save_figures(chapter: Path, figures: Path | None, first: int, lang: str = "en") -> list[str]:
    """Save (when ``figures`` is a folder) and close the figures a cell drew; return the PNG paths."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    saved: list[str] = []
    for number in pyplot.get_fignums():
        figure = pyplot.figure(number)
        if figures is not None:
            figures.mkdir(parents=True, exist_ok=True)
            target = figures / f"{chapter.stem}_{first + len(saved)}.png"
            figure.savefig(target)
            saved.append(say(lang, "figure_saved", path=target))
        pyplot.close(figure)
    return saved


def show(path: Path, out: TextIO, figures: Path | None = None, plots: bool | None = None, lang: str = "en") -> None:
    """Print one chapter: title, then each cell's prose, code and output.

    Prose is printed in ``lang`` where the Russian edition translates it.
    Figures are saved into ``figures`` (if given) and closed after each cell;
    ``plots=False`` (the default when matplotlib is missing) leaves plotting out.
    """
    doc, cells = split_cells(path.read_text(encoding="utf-8"))
    catalog = chapter_catalog(path.stem, lang)
    print(_RULE, file=out)
    print(render(doc.strip(), catalog, lang), file=out)
    print(_RULE, file=out)
    namespace: dict[str, object] = {"__name__": "__main__", "__file__": str(path)}
    tainted: set[str] | None = None if (have_matplotlib() if plots is None else plots) else set()
    saved = 0
    with _figures_in(lang):
        for prose, code, line in cells:
            prose = "\n".join(line for line in prose.splitlines() if not _GALLERY_SETTING.match(line))
            if prose.strip():
                print(render(prose, catalog, lang), file=out)
            if code:
                # the code as the edition shows it: its comments translated where the catalog has the block
                shown = "\n".join(line for line in catalog.get(code.strip("\n"), code).splitlines() if not _GALLERY_SETTING.match(line))
                if shown.strip():
                    print(textwrap.indent(shown, "    │ "), file=out)
                output = execute_cell(code, namespace, str(path), line, tainted, lang)
                notes = _save_figures(path, figures, saved + 1, lang)
                saved += len(notes)
                output = "".join(f"{text}\n" for text in [output.rstrip("\n"), *notes] if text)
                if output:
                    print(textwrap.indent(output.rstrip("\n"), "    ▸ "), file=out)
            print(file=out)


_GALLERY_SETTING = re.compile(r"\s*(# )?sphinx_gallery_\w+ *=")
"""A sphinx-gallery setting written as a comment: the book does not show it, nor does the tour."""


@contextlib.contextmanager
def _figures_in(lang: str) -> Iterator[None]:
    """While a chapter runs, it prints in ``lang`` (``language.use``: its errors, reports, tables) and
    its figures take their words in ``lang`` (``figures.figure_language`` reads ``MICROTAPE_LANG``,
    as the book's build sets it); both are put back after."""
    before, chosen = os.environ.get(ENV), language.chosen()
    os.environ[ENV] = lang
    language.use("ru" if lang == "ru" else "en")
    try:
        yield
    finally:
        language.use(chosen)
        if before is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = before


def run(
    chapter: int | None,
    out: TextIO,
    fallback: Callable[[TextIO], None],
    pause: Callable[[str], str] | None = None,
    figures: Path | None = None,
    lang: str = "en",
) -> int:
    """Show every chapter (or chapter N); return the exit code.

    With ``pause`` (``input`` in an interactive terminal), wait for Enter
    between chapters; "q" stops the tour. An unknown chapter number is an
    error (exit code 2).
    """
    found = chapters()
    if not found and chapter is None:
        fallback(out)
        return 0
    if chapter is not None:
        picked = [p for p in found if int(p.name[:2]) == chapter]
        if not picked:
            numbers = ", ".join(str(int(p.name[:2])) for p in found)
            known = say(lang, "chapters_are", numbers=numbers) if found else say(lang, "no_book")
            print(say(lang, "no_chapter", number=chapter, known=known), file=out)
            return 2
        found = picked
    for n, path in enumerate(found):
        if pause is not None and n:
            answer = pause(say(lang, "pause", number=int(path.name[:2])))
            if answer.strip().lower().startswith("q"):
                break
        show(path, out, figures, lang=lang)
    return 0
