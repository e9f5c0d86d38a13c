"""The book in the browser: "Run in the browser" on every chapter, and every exercise as a page that checks itself.

Every chapter page (both editions) gets a bar at its top with a button. The
button turns the page's code cells (sphinx-gallery's ``highlight-Python``
blocks: the code the book shows, its comments in the edition's language) into
editable cells with a Run button each, and starts Python in a Web Worker:
Pyodide, the pinned runtime of ``docs/_ext/pyodide_runtime.py``, and
microtape installed from the wheel this very build makes (hatchling, into
``_static/browser/``), with ``pyodide.unpackArchive``. Each cell runs as the
tour runs it (:mod:`microtape.book.browser`); the book's own outputs and
figures stay on the page. matplotlib is not available offline in Pyodide: the
bar says so, and a cell that draws runs without its plot and says so, as the
tour does. The page's own words are in the edition's language (``WORDS``).

Every exercise gets a page of its own, ``exercises/<name>.html`` (made with
the theme's page template, so it has the sidebar and the link to the other
edition): its task statement and starter code in the edition's language,
split into cells as ``exercises DIR --notebook`` splits them, and a last cell
that saves the cells above as the exercise's file and checks it with
:func:`microtape.classroom.grader.check_in_process` (the grader's own checks
and feedback, in-process: a browser has no child processes). The page ends
the worker after ``CHECK_LIMIT`` seconds, so an endless loop never freezes it;
the page says that marks are the command line's job. The exercises page links
to them.

Offline and self-contained: the runtime's files go into ``_static/pyodide/`` of
the English edition, which the Russian edition (in ``ru/``, see
``editions.py``) shares, so a reader's browser fetches it once for both.
Nothing on these pages names another host. A build without the runtime (no
cache, no network) still builds: it says on stderr that the browser pages
cannot run and how to fetch the runtime, and the pages say so when the
button is pressed.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

import pyodide_runtime
from editions import SUBDIR, _edition

CHECK_LIMIT = 30
"""Seconds the last cell of an exercise page may take before the page stops Python (its Web Worker)."""

CHAPTER = re.compile(r"book/\d\d_\w+")
CELLS = "article div.highlight-Python"
"""The page's code cells: sphinx-gallery writes the chapters' code as ``.. code-block:: Python``."""

WORDS: dict[str, dict[str, str]] = {
    "en": {
        "button": "Run in the browser",
        "about": (
            "Press the button to edit and run this page's code right here: Python (Pyodide {pyodide}, CPython 3.14) "
            "runs in your browser with microtape installed from this book's own files, with nothing to install and "
            "no network. matplotlib is not available offline in the browser, so a cell that draws runs without its "
            "plot and says so; the figures on this page are the book's."
        ),
        "about_exercise": (
            "Press the button to edit and run the starter's cells here: Python (Pyodide {pyodide}, CPython 3.14) runs "
            "in your browser, with nothing to install and no network. The last cell checks the cells above with the "
            "grader's own checks and prints its feedback. It gives no marks: marks are the command line's job "
            "(`python -m microtape grade`). A check that runs longer than {limit} s is stopped, and Python restarts."
        ),
        "run_all": "Run all",
        "stop": "Stop",
        "run": "Run",
        "cell_label": "cell {n}",
        "starting": "Starting Python in the browser…",
        "ready": "Python is ready: Pyodide {pyodide}, Python {python}.",
        "no_start": "Python did not start in this browser: {error}",
        "running": "Running…",
        "done": "Done.",
        "no_output": "(no output)",
        "stopped": "Stopped: Python was restarted, so run the cells again from the top.",
        "timed_out": "Stopped after {limit} s: an endless loop, or far too much work? Python was restarted, so run the cells again from the top.",
        "failed": "The cell could not run: {error}",
        "file_protocol": (
            "Browsers run Python only on pages served over HTTP: in the book's folder run `python -m http.server` "
            "and open the address it prints."
        ),
        "missing": "This build of the book has no Python for the browser ({why}). Fetch it with `{how}`, then build the book again.",
        "exercise_title": "Exercise {name} in the browser",
        "cells_intro": "The starter's code, in cells: fill in the `TODO` lines, then run every cell.",
        "check_title": "Check your work",
        "check_intro": (
            "This cell saves the cells above as `{file}` and checks it with the checks and the feedback of "
            "`python -m microtape grade`. It gives no marks: marks are the command line's job."
        ),
        "check_comment": "# The page saved the cells above as {file}; check it as the grader does (no marks here).",
        "open_exercise": "Run this exercise in the browser",
        "statement_title": "The task",
    },
    "ru": {
        "button": "Запустить в браузере",
        "about": (
            "Нажмите кнопку, чтобы править и выполнять код этой страницы прямо здесь: Python (Pyodide {pyodide}, "
            "CPython 3.14) работает в вашем браузере, а microtape установлен из файлов самой книги, так что ничего "
            "не нужно устанавливать и сеть не нужна. Без сети в браузере нет matplotlib, поэтому ячейка с рисунком "
            "выполняется без графика и говорит об этом; рисунки на странице взяты из книги."
        ),
        "about_exercise": (
            "Нажмите кнопку, чтобы править и выполнять ячейки заготовки прямо здесь: Python (Pyodide {pyodide}, "
            "CPython 3.14) работает в вашем браузере, ничего не нужно устанавливать и сеть не нужна. Последняя "
            "ячейка проверяет ячейки выше проверками самой проверяющей программы и печатает её отзыв. Баллов она "
            "не ставит: баллы ставит командная строка (`python -m microtape grade`). Проверку дольше {limit} с "
            "страница останавливает, и Python запускается заново."
        ),
        "run_all": "Выполнить все",
        "stop": "Остановить",
        "run": "Выполнить",
        "cell_label": "ячейка {n}",
        "starting": "Python запускается в браузере…",
        "ready": "Python готов: Pyodide {pyodide}, Python {python}.",
        "no_start": "Python не запустился в этом браузере: {error}",
        "running": "Выполняется…",
        "done": "Готово.",
        "no_output": "(ничего не напечатано)",
        "stopped": "Остановлено: Python запущен заново, выполните ячейки снова сверху.",
        "timed_out": "Остановлено через {limit} с: бесконечный цикл или слишком много работы? Python запущен заново, выполните ячейки снова сверху.",
        "failed": "Ячейку не удалось выполнить: {error}",
        "file_protocol": (
            "Браузеры выполняют Python только на страницах, открытых по HTTP: в папке книги выполните "
            "`python -m http.server` и откройте адрес, который он напечатает."
        ),
        "missing": "В этой сборке книги нет Python для браузера ({why}). Получите его командой `{how}` и соберите книгу снова.",
        "exercise_title": "Упражнение {name} в браузере",
        "cells_intro": "Код заготовки по ячейкам: заполните места `TODO` и выполните все ячейки.",
        "check_title": "Проверьте свою работу",
        "check_intro": (
            "Эта ячейка сохраняет ячейки выше в файл `{file}` и проверяет его проверками и с отзывом команды "
            "`python -m microtape grade`. Баллов она не ставит: баллы ставит командная строка."
        ),
        "check_comment": "# Страница сохранила ячейки выше в {file}; проверим его, как проверяющая программа (без баллов).",
        "open_exercise": "Выполнить это упражнение в браузере",
        "statement_title": "Задача",
    },
}
"""The pages' own words, per edition (the worker's messages and the run bar's)."""


class _State:
    """What the build found: the runtime's tarball (or why there is none) and the wheel it made."""

    def __init__(self) -> None:
        self.pin: pyodide_runtime.Pin | None = None
        self.tarball: Path | None = None
        self.missing: str | None = None
        self.wheel: Path | None = None
        self.tmp: tempfile.TemporaryDirectory[str] | None = None


STATE = _State()


def _root(app: Sphinx) -> Path:
    return Path(app.srcdir).parent


def _words(app: Sphinx) -> dict[str, str]:
    return WORDS[_edition(app.config.language)]


def _prepare(app: Sphinx) -> None:
    """Find (or fetch) the runtime and build microtape's wheel, once per build."""
    if app.builder.format != "html":
        return
    root = _root(app)
    STATE.pin = pyodide_runtime.pin(root)
    try:
        STATE.tarball = pyodide_runtime.ensure(STATE.pin)
        STATE.missing = None
    except pyodide_runtime.RuntimeMissing as err:
        STATE.tarball, STATE.missing = None, str(err)
        print(
            f"\nbrowser pages: the book is built without its Python for the browser: {err}.\n"
            f"  The 'Run in the browser' buttons will say so. To include it: {STATE.pin.how}, then build again.\n",
            file=sys.stderr,
        )
    from hatchling.builders.wheel import WheelBuilder

    STATE.tmp = tempfile.TemporaryDirectory(prefix="microtape-wheel-")
    built = list(WheelBuilder(str(root)).build(directory=STATE.tmp.name, versions=["standard"]))
    STATE.wheel = Path(built[0])


def _prefix(pagename: str) -> str:
    return "../" * pagename.count("/")


def chapter_lines(path: Path) -> list[int]:
    """The line of the chapter file where each of its code blocks starts (sphinx-gallery's blocks, blank lines skipped)."""
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    _, blocks = split_code_and_text_blocks(str(path))
    lines = []
    for block in blocks:
        if block.type == "code" and block.content.strip():
            lines.append(block.lineno + len(block.content) - len(block.content.lstrip("\n")))
    return lines


def _config(app: Sphinx, pagename: str, check: int | None = None, file: str | None = None,
            source: Path | None = None) -> str:
    """The JSON a page's run.js reads: where the worker, the runtime and the wheel are, and the page's words."""
    edition = _edition(app.config.language)
    to_root = _prefix(pagename)
    to_english = to_root + ("../" if SUBDIR[edition] else "")
    words = _words(app)
    assert STATE.pin is not None and STATE.wheel is not None
    missing = words["missing"].format(why=STATE.missing, how=STATE.pin.how) if STATE.missing else None
    config = {
        "worker": f"{to_root}_static/browser/worker.js",
        "runtime": f"{to_english}_static/pyodide/",
        "wheel": f"{to_root}_static/browser/{STATE.wheel.name}",
        "lang": edition,
        "cells": CELLS,
        "check": check,
        "file": file,
        # a chapter's cells run as lines of its file, so what they print names the lines the book names
        "source": source.name if source is not None else None,
        "lines": chapter_lines(source) if source is not None else None,
        "limit": CHECK_LIMIT,
        "missing": missing,
        "words": {k: v.replace("{pyodide}", STATE.pin.version) for k, v in words.items()},
    }
    text = json.dumps(config, ensure_ascii=False, sort_keys=True).replace("</", "<\\/")
    return f'<script type="application/json" id="mt-run-config">{text}</script>'


def _bar(app: Sphinx, pagename: str, about: str) -> str:
    words = _words(app)
    assert STATE.pin is not None
    text = html.escape(about.format(pyodide=STATE.pin.version, limit=CHECK_LIMIT))
    return (
        '<div id="mt-run-bar" class="mt-run-bar" data-state="idle">\n'
        f'<p><button type="button" id="mt-run-button">{html.escape(words["button"])}</button> '
        '<span class="mt-run-status" role="status"></span></p>\n'
        f'<p class="mt-run-about">{text}</p>\n'
        f'<p class="mt-run-tools" hidden><button type="button" class="mt-run-all">{html.escape(words["run_all"])}</button>'
        f'<button type="button" class="mt-run-stop">{html.escape(words["stop"])}</button></p>\n'
        "</div>\n"
        f'<script src="{_prefix(pagename)}_static/browser/run.js" defer></script>\n'
    )


def _chapter_bar(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Put the run bar (and the page's configuration) under a chapter's title."""
    if app.builder.format != "html" or not CHAPTER.fullmatch(docname):
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return
    title = next(iter(section.findall(nodes.title)), None)
    index = section.index(title) + 1 if title is not None else 0
    source = _root(app) / "tutorials" / (docname.split("/")[-1] + ".py")
    raw = _config(app, docname, source=source if source.is_file() else None) + "\n" + _bar(app, docname, _words(app)["about"])
    section.insert(index, nodes.raw("", raw, format="html"))


def _exercise_links(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """On the exercises page, a link to each exercise's browser page under its statement's file name."""
    if app.builder.format != "html" or docname != "exercises":
        return
    words = _words(app)
    for paragraph in list(doctree.findall(nodes.paragraph)):
        literal = next(iter(paragraph.findall(nodes.literal)), None)
        match = re.fullmatch(r"(ex\w+)\.py", literal.astext()) if literal is not None else None
        if match is None or len(paragraph.astext()) > len(literal.astext()) + 12:
            continue
        link = (f'<p class="mt-run-link"><a class="reference internal" href="exercises/{match[1]}.html">'
                f'{html.escape(words["open_exercise"])}</a></p>')
        paragraph.parent.insert(paragraph.parent.index(paragraph) + 1, nodes.raw("", link, format="html"))


def _code_block(app: Sphinx, code: str) -> str:
    highlighted = app.builder.highlighter.highlight_block(code, "python")  # type: ignore[attr-defined]
    return f'<div class="highlight-Python notranslate">{highlighted}</div>\n'


def _statement_html(text: str) -> str:
    """A task statement (reST) as HTML, its ``literals`` as Sphinx writes them (``<code>``)."""
    from docutils.core import publish_parts

    parts = publish_parts(text, writer_name="html5", settings_overrides={"report_level": 5, "halt_level": 5,
                                                                          "doctitle_xform": False, "syntax_highlight": "none"})
    body = parts["fragment"]
    body = re.sub(r'<span class="docutils literal">(.*?)</span>', r'<code class="docutils literal notranslate">\1</code>', body, flags=re.DOTALL)
    return body.replace('<pre class="literal-block">', '<pre class="literal-block notranslate">')


def exercise_cells(source: str, name: str) -> tuple[str, str, list[str]]:
    """A starter (in its language) as (title, the statement's other lines, code cells), split as ``--notebook`` splits it."""
    import ast

    from microtape.book.notebooks import starter_notebook

    statement = ast.get_docstring(ast.parse(source), clean=True) or ""
    title, _, rest = statement.partition("\n")
    cells = json.loads(starter_notebook(source, name))["cells"]
    code = ["".join(c["source"]).rstrip("\n") for c in cells if c["cell_type"] == "code"]
    return title.strip(), rest.strip("\n"), code


def _exercise_pages(app: Sphinx) -> Iterator[tuple[str, dict[str, object], str]]:
    """``exercises/<name>.html`` for every starter: statement, cells, and the cell that checks them."""
    if app.builder.format != "html" or STATE.pin is None:
        return
    from microtape.book import statements
    from microtape.book.resources import starter_files

    edition = _edition(app.config.language)
    words = _words(app)
    messages = statements.catalog(edition)
    for path in starter_files():
        name = path.stem
        source = path.read_text(encoding="utf-8")
        if edition != "en":
            source = statements.translate_starter(statements.translate_code(source), messages)
        title, rest, code = exercise_cells(source, name)
        file = f"{name}.py"
        check = "\n".join([
            words["check_comment"].format(file=file),
            "from microtape.classroom.grader import check_in_process",
            "",
            f'print(check_in_process("{file}", lang="{edition}"))',
        ])
        pagename = f"exercises/{name}"
        heading = title.rstrip(".")
        body = "\n".join([
            f'<section id="{name}">',
            f"<h1>{html.escape(heading)}</h1>",
            _config(app, pagename, check=len(code), file=file),
            _bar(app, pagename, words["about_exercise"]),
            _statement_html(rest),
            f"<p>{html.escape(words['cells_intro'])}</p>",
            *(_code_block(app, c) for c in code),
            f'<section id="check"><h2>{html.escape(words["check_title"])}</h2>',
            f"<p>{html.escape(words['check_intro'].format(file=file))}</p>",
            _code_block(app, check),
            "</section>",
            "</section>",
        ])
        context: dict[str, object] = {"title": heading, "body": body, "toc": "", "display_toc": False,
                                      "metatags": "", "sourcename": "", "page_source_suffix": ""}
        yield pagename, context, "page.html"


def _copy_files(app: Sphinx, exception: BaseException | None) -> None:
    """Put the wheel into this edition's ``_static/browser/`` and, in the English edition, the runtime into ``_static/pyodide/``."""
    if exception is not None or app.builder.format != "html" or STATE.wheel is None:
        return
    out = Path(app.outdir)
    target = out / "_static" / "browser"
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("microtape-*.whl"):
        old.unlink()
    shutil.copy2(STATE.wheel, target / STATE.wheel.name)
    if STATE.tarball is not None and not SUBDIR[_edition(app.config.language)]:
        runtime = out / "_static" / "pyodide"
        if runtime.exists():
            shutil.rmtree(runtime)
        pyodide_runtime.unpack(STATE.tarball, runtime)
    if STATE.tmp is not None:
        STATE.tmp.cleanup()
        STATE.tmp = None


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("builder-inited", _prepare)
    app.connect("doctree-resolved", _chapter_bar)
    app.connect("doctree-resolved", _exercise_links)
    app.connect("html-collect-pages", _exercise_pages)
    app.connect("build-finished", _copy_files)
    app.add_css_file("browser/run.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
