"""The chapters' Jupyter notebooks, written in Markdown that Jupyter renders.

sphinx-gallery turns each chapter's text blocks into notebook cells with its
own small reST to Markdown converter, which handles headings, math, notes and
code blocks but leaves Sphinx roles (``:class:`~microtape.Tensor```) and
reST's double-backtick literals as they are, so Jupyter showed raw markup.
This extension wraps that converter: roles become inline code (or words, for
cross-references to pages and chapters) before it runs, and the remaining
reST inline markup is rewritten after it. pandoc is not needed.

``FIRST_CELL`` is the notebooks' first cell (``first_notebook_cell`` in conf.py):
it says how to install microtape.

In the Russian edition (``-D language=ru``) the downloads are Russian too:
sphinx-gallery writes each chapter's ``.py`` copy and notebook into
``docs/book/`` and zips them; just before it zips them, the ``.py`` copy is
rewritten with the chapter's catalog (``docs/locale/ru/LC_MESSAGES/book/<chapter>.po``:
every paragraph, title and commented code block the catalog translates) and
the notebook is made again from it, so the single downloads, the chapter's zip
and the book's zips all carry the Russian text. A paragraph the catalog does
not have stays English (the catalog check keeps that from happening). The next
English build copies the English sources back.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

FIRST_CELLS = {
    "ru": (
        "# Глава книги microtape. Запускайте её там, где установлены microtape (чистый Python,\n"
        "# без зависимостей) и matplotlib (для рисунков). Раскомментируйте одну строку:\n"
        "# %pip install -e '/путь/к/вашей/копии/microtape[dev]'\n"
        "# %pip install /путь/к/microtape-*.whl matplotlib   # wheel, собранный python -m build\n"
        "import os; os.environ['MICROTAPE_LANG'] = 'ru'  # подписи рисунков по-русски\n"
        "%matplotlib inline"
    ),
}
FIRST_CELL = (
    "# A chapter of the microtape book. Run it where microtape (pure Python, no\n"
    "# dependencies) and matplotlib (for the figures) are installed. Uncomment one:\n"
    "# %pip install -e '/path/to/your/checkout/of/microtape[dev]'\n"
    "# %pip install /path/to/microtape-*.whl matplotlib   # a wheel made with python -m build\n"
    "%matplotlib inline"
)

# :role:`text`, :role:`~target`, :role:`title <target>`
_ROLE = re.compile(r":(?P<role>[a-z]+(?::[a-z]+)?):`(?P<body>[^`]+)`")
_TITLED = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
_LITERAL = re.compile(r"(?<!`)``(?!`)(?P<code>.+?)(?<!`)``(?!`)", re.DOTALL)
_DIRECTIVE = re.compile(r"^\.\. (?P<name>[a-z-]+)::[ \t]*(?P<arg>.*)$", re.MULTILINE)
_WORD_ROLES = {"doc", "ref", "chapter", "term", "download"}


def _role(match: re.Match[str]) -> str:
    role, body = match["role"], match["body"]
    if role == "math":
        return match[0]  # sphinx-gallery turns it into $...$
    titled = _TITLED.match(body)
    if titled:
        text = titled["title"]
    elif role == "chapter":
        text = f"chapter {int(body)}" if body.strip().isdigit() else body
    elif body.startswith("~"):
        text = body[1:].rsplit(".", 1)[-1]
    elif role == "doc":
        text = body.rsplit("/", 1)[-1].replace("_", " ")
    else:
        text = body
    if role.split(":")[-1] in _WORD_ROLES:
        return text
    if text.startswith("microtape."):  # the notebooks import microtape as mt
        text = "mt." + text.removeprefix("microtape.")
    if role in ("func", "meth") and not text.endswith(")"):
        text += "()"
    return f"`{text}`"


def roles_to_markdown(rst: str) -> str:
    """Sphinx roles as Markdown: inline code for code objects, words for pages.

    >>> roles_to_markdown("Use :func:`~microtape.grad` and :class:`microtape.Tensor`, see :doc:`tfjs`.")
    'Use `grad()` and `mt.Tensor`, see tfjs.'
    """
    return _ROLE.sub(_role, rst)


def literals_to_markdown(markdown: str) -> str:
    """reST's ````code```` literals as Markdown's single-backtick code.

    >>> literals_to_markdown("a ``x + 1`` b\\n```python\\nx\\n```")
    'a `x + 1` b\\n```python\\nx\\n```'
    """
    return _LITERAL.sub(lambda m: "`" + m["code"] + "`", markdown)


def _other_directives(markdown: str) -> str:
    """Any directive sphinx-gallery left alone becomes a bold label (its body stays as text)."""
    return _DIRECTIVE.sub(lambda m: f"**{m['name'].replace('-', ' ').capitalize()}:** {m['arg']}".rstrip(), markdown)


def _wrap(convert: Callable[..., str]) -> Callable[..., str]:
    def rst2md(text: str, *args: Any, **kwargs: Any) -> str:
        markdown = convert(roles_to_markdown(text), *args, **kwargs)
        return _other_directives(literals_to_markdown(markdown))

    rst2md.__wrapped__ = convert  # type: ignore[attr-defined]
    return rst2md


_TITLE_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+<>:.])\1+$")
_ITEM = re.compile(r"^(?P<bullet>[-*] |\d+\. |#\. )")
_DIRECTIVE_START = re.compile(r"^\.\. (?P<name>[a-z-]+)::[ \t]*(?P<arg>.*)$")


def _paragraph(lines: list[str], catalog: Mapping[str, str], prefix: str = "", indent: str = "") -> list[str]:
    """A paragraph's lines, translated and re-wrapped when the catalog has it."""
    msgid = " ".join(line.strip() for line in lines)
    translated = catalog.get(msgid) or (catalog.get(msgid[:-1]) + ":" if msgid.endswith("::") and catalog.get(msgid[:-1]) else None)
    if not translated:
        return [prefix + lines[0].lstrip(), *lines[1:]] if prefix else lines
    return textwrap.wrap(translated, width=76, initial_indent=prefix, subsequent_indent=indent or " " * len(prefix),
                         break_long_words=False, break_on_hyphens=False)


def translate_rst(text: str, catalog: Mapping[str, str]) -> str:
    r"""A chapter's reST text block with every paragraph, title and list item the catalog translates.

    >>> catalog = {"Tapes": "Ленты", "A tape records ``ops``.": "Лента записывает ``ops``.", "one": "одна"}
    >>> print(translate_rst("Tapes\n=====\n\nA tape records\n``ops``.\n\n- one\n- two\n\n.. math:: x", catalog))
    Ленты
    =====
    <BLANKLINE>
    Лента записывает ``ops``.
    <BLANKLINE>
    - одна
    - two
    <BLANKLINE>
    .. math:: x
    <BLANKLINE>
    """
    out: list[str] = []
    for block in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = block.splitlines()
        if len(lines) == 2 and _TITLE_UNDERLINE.match(lines[1].strip()) and lines[0].strip():
            title = catalog.get(lines[0].strip(), lines[0].strip())
            out.append(f"{title}\n{lines[1][0] * max(len(title), len(lines[1]))}")
        elif lines[0].startswith((" ", "\t")) or lines[0].startswith(".. math") or lines[0].startswith(".. code"):
            out.append(block)  # a literal block, a formula, code: as it is
        elif (directive := _DIRECTIVE_START.match(lines[0])) is not None:
            body = [directive["arg"], *textwrap.dedent("\n".join(lines[1:])).splitlines()] if directive["arg"] else textwrap.dedent("\n".join(lines[1:])).splitlines()
            head = f".. {directive['name']}:: "
            if body and not directive["arg"]:
                out.append(head.rstrip() + "\n\n" + "\n".join(_paragraph(body, catalog, "   ")))
            else:
                out.append("\n".join(_paragraph(body, catalog, head, "   ")) if body else block)
        elif _ITEM.match(lines[0]):
            items: list[list[str]] = []
            for line in lines:
                if _ITEM.match(line) or not items:
                    items.append([line])
                else:
                    items[-1].append(line)
            rendered = []
            for item in items:
                bullet = _ITEM.match(item[0])
                mark = bullet["bullet"] if bullet else ""
                rendered += _paragraph([item[0][len(mark):], *item[1:]], catalog, mark, " " * len(mark))
            out.append("\n".join(rendered))
        else:
            out.append("\n".join(_paragraph(lines, catalog)))
    return "\n\n".join(out) + "\n"


def translate_code(code: str, catalog: Mapping[str, str]) -> str:
    """A code block, replaced by its translation (its comments) when the catalog has one."""
    core = code.strip("\n")
    translated = catalog.get(core)
    if not translated:
        return code
    head = code[: len(code) - len(code.lstrip("\n"))]
    tail = code[len(code.rstrip("\n")):]
    return head + translated + tail


def translate_script(path: Path, catalog: Mapping[str, str]) -> None:
    """Rewrite a chapter's ``.py`` copy (sphinx-gallery's format) with the catalog's translations."""
    from sphinx_gallery.py_source_parser import split_code_and_text_blocks

    _, blocks = split_code_and_text_blocks(path)
    header, *rest = blocks
    out = ['"""\n' + translate_rst(header.content, catalog) + '"""\n']
    previous = "text"
    for block in rest:
        if block.type == "text":
            commented = "\n".join(("# " + line).rstrip() for line in translate_rst(block.content, catalog).splitlines())
            out.append("\n# %%\n" + commented + "\n")
        else:
            out.append(("\n# %%\n" if previous == "code" else "") + translate_code(block.content, catalog))
        previous = block.type
    path.write_text("".join(out).rstrip("\n") + "\n", encoding="utf-8")


def _catalog(app: Sphinx, chapter: str) -> dict[str, str]:
    from babel.messages.pofile import read_po

    po = Path(app.srcdir) / "locale" / str(app.config.language) / "LC_MESSAGES" / "book" / f"{chapter}.po"
    if not po.is_file():
        return {}
    with po.open("rb") as f:
        return {str(m.id): str(m.string) for m in read_po(f) if m.id and m.string and not m.fuzzy}


def _translating_zip(app: Sphinx, zip_files: Callable[..., str]) -> Callable[..., str]:
    """sphinx-gallery's ``zip_files`` for one chapter, translating the chapter's ``.py`` and notebook first."""

    def zip_chapter(file_list: list[str], zipname: Any, relative_to: Any, *args: Any, **kwargs: Any) -> str:
        from sphinx_gallery.notebook import jupyter_notebook, save_notebook
        from sphinx_gallery.py_source_parser import split_code_and_text_blocks

        script = next((Path(f) for f in file_list if f.endswith(".py")), None)
        if script is not None and script.is_file():
            translate_script(script, _catalog(app, script.stem))
            notebook = script.with_suffix(".ipynb")
            if notebook.is_file():
                conf = dict(app.config.sphinx_gallery_conf)
                conf["first_notebook_cell"] = FIRST_CELLS.get(str(app.config.language), conf.get("first_notebook_cell"))
                _, blocks = split_code_and_text_blocks(script)
                save_notebook(jupyter_notebook(blocks, conf, script.parent), notebook)
        return zip_files(file_list, zipname, relative_to, *args, **kwargs)

    zip_chapter.__wrapped__ = zip_files  # type: ignore[attr-defined]
    return zip_chapter


def _install(app: Sphinx, config: Config) -> None:
    from sphinx_gallery import gen_rst, notebook

    if not hasattr(notebook.rst2md, "__wrapped__"):
        notebook.rst2md = _wrap(notebook.rst2md)
    original = getattr(gen_rst.zip_files, "__wrapped__", gen_rst.zip_files)
    translated_edition = str(config.language or "en").split("_")[0] in FIRST_CELLS
    gen_rst.zip_files = _translating_zip(app, original) if translated_edition else original


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("config-inited", _install)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
