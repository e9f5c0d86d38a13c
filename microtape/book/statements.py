"""The exercises' task statements, in English or translated from the book's catalog.

Each starter exercise begins with a
module docstring, its task statement, written in reStructuredText. The book
page ``docs/exercises.rst`` shows every statement, so their paragraphs enter
that page's gettext catalog (``docs/locale/ru/LC_MESSAGES/exercises.po``)
and are translated there, with the rest of the Russian edition. A starter
written in Russian is the English starter with each paragraph, title and
list item of its docstring replaced by its translation from that catalog
(the same message ids Sphinx makes: the block's source with line breaks
turned into spaces). Literal blocks (after ``::``) stay as they are, and a
block without a translation stays English. The rest of the text a student
reads in a starter (comments, function docstrings, ``TODO`` messages) is
translated by ``translate_code`` from ``starters_ru.py``; the code is
left exactly as it is.
"""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

from . import prose
from . import resources
from ..i18n.starters_ru import starter_texts
from ..language import messages

__all__ = ["Block", "blocks", "catalog", "grade_in", "message_ids", "statement", "translate_code", "translate_starter"]

WIDTH = 76
"""Where translated blocks are wrapped (the width of the starters' own lines)."""

CATALOG = "exercises"
"""The stem of the catalog that holds the statements (the book page ``exercises.rst``)."""

_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+\.)\s+)(.*)$")


@dataclass(frozen=True)
class Block:
    """A piece of a statement: ``lines`` of the docstring, with the message id to translate it by.

    ``msgid`` is empty for a literal block (kept as it is); ``marker`` is the
    text before a list item's words (``"1. "``, ``"   * "``) or the
    indentation of a paragraph.
    """

    lines: tuple[str, ...]
    msgid: str
    marker: str = ""
    indent: str = ""
    chunk: int = 0


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(lines: list[str]) -> str:
    return " ".join(line.strip() for line in lines).strip()


def blocks(text: str) -> list[Block]:
    r"""Split a statement into titles, paragraphs, list items and literal blocks.

    Examples:
        >>> from microtape.book.statements import blocks
        >>> doc = "Title.\n\nSome\nwords::\n\n    code()\n\n1. an\n   item\n2. two::\n\n       go()\n\n   more of two\n3. end"
        >>> [(b.msgid, b.marker) for b in blocks(doc)]
        [('Title.', ''), ('Some words::', ''), ('', ''), ('an item', '1. '), ('two::', '2. '), ('', ''), ('more of two', '   '), ('end', '3. ')]
    """
    out: list[Block] = []
    literal_above: int | None = None  # the indentation a "::" paragraph's literal block must exceed
    for number, chunk in enumerate(re.split(r"\n[ \t]*\n", text.strip("\n"))):
        lines = [line.rstrip() for line in chunk.split("\n") if line.strip()]
        if not lines:
            continue
        if literal_above is not None and _indent(lines[0]) > literal_above:
            out.append(Block(tuple(lines), "", chunk=number))
            continue
        literal_above = None
        groups: list[list[str]] = []  # a paragraph, then one group per list item
        for line in lines:
            if not groups or _ITEM.match(line) and _indent(line) <= _indent(lines[0]):
                groups.append([line])
            else:
                groups[-1].append(line)
        content = 0
        for group in groups:
            item = _ITEM.match(group[0])
            if item:
                marker, first = item.groups()
                out.append(Block(tuple(group), _join([first, *group[1:]]), marker, " " * len(marker), number))
                content = len(marker)
            else:
                indent = " " * _indent(group[0])
                out.append(Block(tuple(group), _join(group), indent, indent, number))
                content = len(indent)
        if lines[-1].endswith("::"):
            literal_above = content
    return out


def message_ids(text: str) -> list[str]:
    r"""The message ids of a statement's prose, in order (literal blocks have none).

    Examples:
        >>> from microtape.book.statements import message_ids
        >>> message_ids("Run it::\n\n    go()\n\n* one\n  line\n* two")
        ['Run it::', 'one line', 'two']
    """
    return [block.msgid for block in blocks(text) if block.msgid]


def statement(path: Path) -> str:
    """The task statement of a starter file: its module docstring, as written.

    Examples:
        >>> from microtape.book.resources import starter_files
        >>> from microtape.book.statements import statement
        >>> statement(starter_files()[0]).splitlines()[0]
        'Exercise 0: a gradient by hand, and the same gradient with ``mt.grad``.'
    """
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
    return doc or ""


def catalog(lang: str) -> dict[str, str]:
    """The translated messages of the exercises page (empty for English or a missing catalog).

    Examples:
        >>> from microtape.book.statements import catalog
        >>> catalog("en")
        {}
    """
    if lang == "en":
        return {}
    folder = resources.locale_dir()
    path = folder / lang / "LC_MESSAGES" / f"{CATALOG}.po" if folder is not None else None
    return prose.read_po(path) if path is not None and path.is_file() else {}


def _translated(block: Block, messages: dict[str, str]) -> list[str]:
    text = messages.get(block.msgid) if block.msgid else None
    if text is None:
        return list(block.lines)
    if block.chunk == 0:
        return [text]  # the title: one line, as in the English
    return textwrap.wrap(
        text, WIDTH, initial_indent=block.marker, subsequent_indent=block.indent,
        break_long_words=False, break_on_hyphens=False,
    )


def translate_starter(source: str, messages: dict[str, str]) -> str:
    r'''A starter's source with its task statement translated block by block from ``messages``.

    Only the module docstring changes; code, literal blocks and untranslated
    blocks stay as they are.

    Examples:
        >>> from microtape.book.statements import translate_starter
        >>> src = '"""Task one.\n\nRun::\n\n    go()\n"""\n\nEXERCISE = "x"\n'
        >>> print(translate_starter(src, {"Task one.": "Задача один.", "Run::": "Запустите::"}))
        """Задача один.
        <BLANKLINE>
        Запустите::
        <BLANKLINE>
            go()
        """
        <BLANKLINE>
        EXERCISE = "x"
        <BLANKLINE>
    '''
    tree = ast.parse(source)
    first = tree.body[0] if tree.body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)):
        return source
    doc = first.value.value
    start, end = source.index('"""'), source.index('"""', source.index('"""') + 3)
    if source[start + 3 : end] != doc:  # escapes or another quote style: leave the file alone
        return source
    chunks: dict[int, list[str]] = {}
    for block in blocks(doc):
        chunks.setdefault(block.chunk, []).extend(_translated(block, messages))
    body = "\n\n".join("\n".join(lines) for lines in chunks.values()) + "\n"
    if '"""' in body or "\\" in body:
        return source
    return source[: start + 3] + body + source[end:]


def grade_in(source: str, lang: str) -> str:
    """``source`` with each ``python -m microtape grade FILE`` line of a starter saying ``--lang`` (for a language but English).

    A student who copies the command from a Russian starter is answered in Russian.

    Examples:
        >>> from microtape.book.statements import grade_in
        >>> grade_in("Check::\\n\\n    python -m microtape grade ex04.py\\n", "ru").splitlines()[-1]
        '    python -m microtape grade ex04.py --lang ru'
        >>> grade_in("    python -m microtape grade ex04.py\\n", "en").strip()
        'python -m microtape grade ex04.py'
    """
    if lang == "en":
        return source
    return re.sub(r"^([ \t]*python -m microtape grade \S+)[ \t]*$", rf"\1 --lang {lang}", source, flags=re.MULTILINE)


def _literal(token: str, text: str) -> str | None:
    """``text`` as a string literal in the quotes of ``token`` (None when ``token`` has a prefix such as f or r)."""
    quote = token[:3] if token[:3] in ('"""', "'''") else token[:1]
    if quote not in ('"""', "'''", '"', "'"):
        return None
    if "\\" in text or quote in text or (len(quote) == 1 and "\n" in text):
        return repr(text)
    return quote + text + quote


def translate_code(source: str, table: dict[str, str] | None = None) -> str:
    r'''A starter's comments, docstrings and string literals replaced by their translation in ``table``.

    Only the texts ``table`` knows change (by default the Russian of the starter's own texts, from the
    package's catalog: ``microtape.i18n.starters_ru.starter_texts``);
    every other token, and the layout, stays as it is.

    Examples:
        >>> from microtape.book.statements import translate_code
        >>> src = 'def f(x):\n    """Return x."""\n    raise NotImplementedError("TODO 1: return x")  # keep this\n'
        >>> print(translate_code(src, {"Return x.": "Верните x.", "TODO 1: return x": "TODO 1: верните x", "keep this": "оставьте"}))
        def f(x):
            """Верните x."""
            raise NotImplementedError("TODO 1: верните x")  # оставьте
        <BLANKLINE>
    '''
    if table is None:
        russian = messages("ru")
        known = {text: russian[text] for text in starter_texts(source) if text in russian}
    else:
        known = table
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    edits: list[tuple[int, int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        new: str | None = None
        if token.type == tokenize.COMMENT:
            text = token.string[1:].strip()
            new = f"# {known[text]}" if text in known else None
        elif token.type == tokenize.STRING:
            try:
                value = ast.literal_eval(token.string)
            except (ValueError, SyntaxError):
                value = None
            new = _literal(token.string, known[value]) if isinstance(value, str) and value in known else None
        if new is not None:
            (row, col), (end_row, end_col) = token.start, token.end
            edits.append((starts[row - 1] + col, starts[end_row - 1] + end_col, new))
    for begin, end, new in reversed(edits):
        source = source[:begin] + new + source[end:]
    return source
