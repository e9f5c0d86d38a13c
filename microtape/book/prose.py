"""The chapters' prose for the terminal: plain text, in English or in Russian.

``plain()`` turns it into text a terminal shows well: roles become
words (``:func:`~microtape.grad``` reads ``mt.grad``), and LaTeX becomes
Unicode (``\\frac1n \\sum_i x_i^2`` reads ``1/n Σᵢ xᵢ²``).

The Russian edition of the book is a set of gettext catalogs, one per page
(``docs/locale/ru/LC_MESSAGES/book/03_gradient_tape.po``). The tour reads the
same catalogs (``chapter_catalog()``, a small stdlib ``.po`` reader) and
looks up each paragraph, title and list item of a chapter by its message id,
which Sphinx makes from the paragraph's source with line breaks turned into
spaces. A paragraph that is not in the catalog (or not translated yet) stays
English.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from pathlib import Path

from . import resources
from ..language import N_, tr

__all__ = ["chapter_catalog", "inline_markup", "latex_to_text", "message_ids", "plain", "read_po", "render"]

WIDTH = 76
"""Where translated paragraphs are wrapped (the English ones keep their own lines)."""

ADMONITIONS = {"note": N_("Note"), "warning": N_("Warning"), "tip": N_("Tip"), "important": N_("Important")}
"""The title each admonition is printed with in the terminal (translated through the package's catalog)."""


# -- .po files ---------------------------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}


def _unquote(text: str) -> str:
    body = text.strip()
    if len(body) < 2 or body[0] != '"' or body[-1] != '"':
        raise ValueError(f"not a quoted .po string: {text!r}")
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body[1:-1])


def read_po(path: Path) -> dict[str, str]:
    """The translated messages of a gettext ``.po`` file: msgid -> msgstr.

    Untranslated, fuzzy and obsolete (``#~``) entries and the header are left
    out, so a caller falls back to the original text for them.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from microtape.book.prose import read_po
        >>> po = 'msgid ""\\nmsgstr "Language: ru\\\\n"\\n\\nmsgid "Hello"\\nmsgstr ""\\n"При"\\n"вет"\\n\\n'
        >>> po += '#, fuzzy\\nmsgid "Old"\\nmsgstr "Старое"\\n\\nmsgid "Empty"\\nmsgstr ""\\n'
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = Path(tmp) / "x.po"
        ...     _ = path.write_text(po, encoding="utf-8")
        ...     read_po(path)
        {'Hello': 'Привет'}
    """
    messages: dict[str, str] = {}
    entry: dict[str, str] = {}
    flags: set[str] = set()
    field = ""

    def finish() -> None:
        msgid, msgstr = entry.get("msgid", ""), entry.get("msgstr", "")
        if msgid and msgstr and "fuzzy" not in flags and "msgid_plural" not in entry and "msgctxt" not in entry:
            messages[msgid] = msgstr

    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):  # comments, flags, and obsolete "#~" entries
            if "msgstr" in entry:
                finish()
                entry, flags, field = {}, set(), ""
            if stripped.startswith("#,"):
                flags |= {flag.strip() for flag in stripped[2:].split(",")}
            continue
        keyword, _, rest = stripped.partition(" ")
        if keyword.startswith("msg"):
            if keyword in ("msgid", "msgctxt") and "msgstr" in entry:
                finish()
                entry, flags = {}, set()
            field = keyword
            entry[field] = _unquote(rest)
        elif stripped.startswith('"') and field:
            entry[field] += _unquote(stripped)
    if entry:
        finish()
    return messages


def chapter_catalog(chapter: str, lang: str) -> dict[str, str]:
    """The translations of a chapter's messages (empty for English or a missing catalog).

    ``chapter`` is the chapter file's stem, e.g. ``"02_automatic_gradients"``.

    Examples:
        >>> from microtape.book.prose import chapter_catalog
        >>> chapter_catalog("02_automatic_gradients", "en")
        {}
    """
    if lang == "en":
        return {}
    folder = resources.locale_dir()
    path = folder / lang / "LC_MESSAGES" / "book" / f"{chapter}.po" if folder is not None else None
    return read_po(path) if path is not None and path.is_file() else {}


# -- translating a chapter's prose, block by block ------------------------------------

_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+])\1+$")
_DIRECTIVE = re.compile(r"^\.\. ([a-z-]+)::(.*)$")
_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+\.|#\.)\s+)(.*)$")


def _msgid(lines: list[str]) -> str:
    return " ".join(line.strip() for line in lines).strip()


def _wrap(text: str, indent: str = "", first: str | None = None) -> list[str]:
    return textwrap.wrap(
        text, WIDTH, initial_indent=indent if first is None else first, subsequent_indent=indent,
        break_long_words=False, break_on_hyphens=False,
    )


def _items(lines: list[str]) -> list[list[str]]:
    items: list[list[str]] = []
    for line in lines:
        if _ITEM.match(line) or not items:
            items.append([line])
        else:
            items[-1].append(line)
    return items


_TABLE_BORDER = re.compile(r"^=+( +=+)+$")


def _table_text(lines: list[str], catalog: dict[str, str], lang: str) -> list[str]:
    r"""A reST simple table as terminal lines: one item per row, the other columns under it.

    The columns are where the border's runs of ``=`` start; each cell is
    looked up by its text, the message id Sphinx gives a table cell. A
    table's rows are too wide for a terminal side by side, so a row reads as
    its first cell, then each other cell after its column's heading.

    Examples:
        >>> from microtape.book.prose import _table_text
        >>> table = ["=====  ======", "Case   Fix", "=====  ======", "a NaN  a ``where``", "=====  ======"]
        >>> print("\n".join(_table_text(table, {"Fix": "Исправление"}, "ru")))
        - a NaN
           Исправление: a where
    """
    starts = [m.start() for m in re.finditer(r"=+", lines[0])]
    rows = [[line[a:b].strip() for a, b in zip(starts, [*starts[1:], len(line)])]
            for line in lines if not _TABLE_BORDER.match(line.strip())]
    borders = [i for i, line in enumerate(lines) if _TABLE_BORDER.match(line.strip())]
    header = rows.pop(0) if len(borders) > 2 else []
    # A cell that is only code has no words to translate, and Sphinx makes no message of it.
    cells = [[plain(catalog.get(cell, cell) if re.search(r"\w", re.sub(r"``.*?``", "", cell)) else cell, lang)
              for cell in row] for row in rows]
    heads = [plain(catalog.get(cell, cell), lang) for cell in header]
    out: list[str] = []
    for row in cells:
        out += _wrap(row[0], "  ", "- ")
        for i, cell in enumerate(row[1:], start=1):
            label = f"{heads[i]}: " if i < len(heads) and heads[i] else ""
            out += _wrap(cell, "      ", "   " + label)
    return out


def _block_text(lines: list[str], catalog: dict[str, str], lang: str) -> list[str]:
    """One block of prose (lines between blank lines) as terminal lines."""
    if _TABLE_BORDER.match(lines[0].strip()):
        return _table_text(lines, catalog, lang)
    if len(lines) == 2 and _UNDERLINE.match(lines[1].strip()) and lines[0].strip():
        title = plain(catalog.get(lines[0].strip(), lines[0].strip()), lang)
        return [title, lines[1].strip()[0] * len(title)]
    directive = _DIRECTIVE.match(lines[0])
    if directive:
        name, argument = directive.groups()
        if name == "math":
            return ["    " + latex_to_text(line) for line in [argument, *lines[1:]] if line.strip()]
        if name not in ADMONITIONS:  # code-block and friends: keep the lines
            return [plain(line, lang) for line in lines]
        msgid = _msgid([argument, *lines[1:]])
        return _wrap(plain(catalog.get(msgid, msgid), lang), "   ", f"{tr(ADMONITIONS[name], lang)}: ")
    if _ITEM.match(lines[0]):
        out: list[str] = []
        for item in _items(lines):
            marker, first = _ITEM.match(item[0]).groups()  # type: ignore[union-attr]
            marker = re.sub(r"[*+]", "-", marker, count=1)  # a bullet reads "-", never a markup star
            msgid = _msgid([first, *item[1:]])
            out += _wrap(plain(catalog.get(msgid, msgid), lang), " " * len(marker), marker)
        return out
    if lines[0].startswith(" "):  # an indented block: code after "::" or a directive's body
        return lines
    msgid = _msgid(lines)
    return _wrap(plain(catalog.get(msgid, msgid), lang))


def render(rst: str, catalog: dict[str, str] | None = None, lang: str = "en") -> str:
    r"""A chapter's prose as terminal text, each block translated from ``catalog`` where it can be.

    Titles, paragraphs, list items and notes are looked up by their message
    id; a block without a translation stays English. Paragraphs are wrapped
    again once roles and formulas have become plain words.

    Examples:
        >>> from microtape.book.prose import render
        >>> catalog = {"What we built": "Что мы построили", "It is :math:`x^2`.": "Это :math:`x^2`."}
        >>> print(render("What we built\n-------------\n\nIt is\n:math:`x^2`.\n\nNot :func:`here <x>`.", catalog, "ru"))
        Что мы построили
        ----------------
        <BLANKLINE>
        Это x².
        <BLANKLINE>
        Not here.
    """
    out: list[str] = []
    block: list[str] = []
    for line in [*rst.splitlines(), ""]:
        if line.strip():
            block.append(line)
            continue
        if block:
            out += _block_text(block, {} if catalog is None else catalog, lang)
            block = []
        out.append(line)
    return "\n".join(out[:-1])


class _Recorder(dict[str, str]):
    """A catalog that translates nothing and remembers every id looked up."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        self.asked.append(key)
        return default


def message_ids(rst: str) -> list[str]:
    r"""The message ids :func:`render` looks up for ``rst``, in order.

    Examples:
        >>> from microtape.book.prose import message_ids
        >>> message_ids("Title\n=====\n\nOne\nparagraph.\n\n- an item\n- another\n\n.. note:: Mind\n   this.")
        ['Title', 'One paragraph.', 'an item', 'another', 'Mind this.']
    """
    recorder = _Recorder()
    render(rst, recorder)
    return recorder.asked


# -- plain text for the terminal ---------------------------------------------------------

_SYMBOLS = {
    "cdot": "·", "times": "×", "eta": "η", "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ",
    "epsilon": "ε", "varepsilon": "ε", "lambda": "λ", "mu": "μ", "sigma": "σ", "theta": "θ", "pi": "π",
    "Delta": "Δ", "nabla": "∇", "partial": "∂", "sum": "Σ", "prod": "Π", "leftarrow": "←",
    "rightarrow": "→", "to": "→", "approx": "≈", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
    "ne": "≠", "neq": "≠", "infty": "∞", "odot": "⊙", "pm": "±", "ldots": "…", "cdots": "⋯", "in": "∈",
    "log": "log", "exp": "exp", "tanh": "tanh", "max": "max", "min": "min",
}
_SUPER = str.maketrans("0123456789+-=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ")
_SUB = str.maketrans("0123456789+-=()aeijknrstx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢⱼₖₙᵣₛₜₓ")
_ARG = r"(\{[^{}]*\}|\\[A-Za-z]+|[A-Za-z0-9])"


def _group(arg: str) -> str:
    return arg[1:-1] if arg.startswith("{") else arg


def _script(text: str, table: dict[int, int], mark: str) -> str:
    converted = text.translate(table)
    if all(ord(c) in table.values() or c == " " for c in converted):
        return converted
    return f"{mark}({text})" if len(text) > 1 else f"{mark}{text}"


def _atom(text: str) -> str:
    """``text``, in parentheses unless it is a single name or number."""
    return text if re.fullmatch(r"[^\s+\-*/=()]+", text) else f"({text})"


def latex_to_text(latex: str) -> str:
    r"""A LaTeX formula written out in Unicode, for a terminal.

    Examples:
        >>> from microtape.book.prose import latex_to_text
        >>> latex_to_text(r"L = \frac1n \sum_i (x_i w + b - y_i)^2")
        'L = 1/n Σᵢ (xᵢ w + b - yᵢ)²'
        >>> latex_to_text(r"\partial L/\partial w = \frac{2}{n} \sum_i r_i x_i")
        '∂L/∂w = 2/n Σᵢ rᵢ xᵢ'
        >>> latex_to_text(r"w \leftarrow w - \eta \, dL/dw")
        'w ← w - η dL/dw'
        >>> latex_to_text(r"\sqrt{41.5}/2 \approx 3.221"), latex_to_text(r"\hat y - y"), latex_to_text(r"\mathrm{diag}(2v)")
        ('√41.5/2 ≈ 3.221', 'ŷ - y', 'diag(2v)')
    """
    text = latex
    text = re.sub(r"\\(?:mathrm|text|mathbf|operatorname)\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\hat\s*" + _ARG, lambda m: _group(m.group(1)) + "\u0302", text)

    text = re.sub(r"\\(partial|nabla|Delta)\b ?", lambda m: _SYMBOLS[m.group(1)], text)  # "\partial L" reads "∂L"

    def frac(m: re.Match[str]) -> str:
        return f"{_atom(_group(m.group(1)))}/{_atom(_group(m.group(2)))}"

    text = re.sub(r"\\[dt]?frac\s*" + _ARG + r"\s*" + _ARG, frac, text)
    text = re.sub(r"\\sqrt\s*" + _ARG, lambda m: "√" + _atom(_group(m.group(1))), text)
    text = re.sub(r"\\[,;:! ]", " ", text)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _SYMBOLS.get(m.group(1), m.group(1)), text)
    text = re.sub(r"\^" + _ARG, lambda m: _script(_group(m.group(1)), _SUPER, "^"), text)
    text = re.sub(r"_" + _ARG, lambda m: _script(_group(m.group(1)), _SUB, "_"), text)
    text = text.replace("{", "").replace("}", "")
    return unicodedata.normalize("NFC", re.sub(r"  +", " ", text).strip())  # ŷ as one character


_ROLE = re.compile(r":(?P<role>[a-z]+(?::[a-z]+)?):`(?P<body>[^`]*)`")
_TITLED = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)


def _name(target: str) -> str:
    return "mt." + target.removeprefix("microtape.") if target.startswith("microtape.") else target


def _role(match: re.Match[str], lang: str) -> str:
    role, body = match["role"], match["body"]
    if role == "math":
        return latex_to_text(body)
    titled = _TITLED.match(body)
    if titled:
        return titled["title"]
    if role == "chapter":
        return tr(N_("chapter {0}"), lang).format(int(body)) if body.strip().isdigit() else body
    if role == "doc":
        return body.rsplit("/", 1)[-1].replace("_", " ")
    return _name(body.lstrip("~"))


_LITERAL = re.compile(r"``(.+?)``")
_LINK = re.compile(r"`([^`<>]*?)\s*<[^<>`]*>`__?")  # `text <target>`_ and anonymous `text <target>`__
_REFERENCE = re.compile(r"`([^`]+)`__?|(?<![\w/.])([A-Za-z][\w-]*[A-Za-z0-9])__?(?!\w|\.\w)")
_STRONG = re.compile(r"(?<![\w*])\*\*(?=\S)(.+?)(?<=\S)\*\*(?![\w*])")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_DEFAULT_ROLE = re.compile(r"`([^`]+)`")


def inline_markup(text: str) -> str:
    """Drop reST's inline markup, keeping the words: literals, links, references, strong and emphasis.

    Inline literals lose their backticks and keep their text as it is (a
    ``*`` inside one is code, not emphasis).

    Examples:
        >>> from microtape.book.prose import inline_markup
        >>> inline_markup("The **culprit**: *central* ``a * b``, see `the docs <https://x.org>`_ or Furo_.")
        'The culprit: central a * b, see the docs or Furo.'
        >>> inline_markup("operators (``*``, ``-``, ``**``) and ``snake_case_``")
        'operators (*, -, **) and snake_case_'
    """
    literals: list[str] = []

    def keep(match: re.Match[str]) -> str:
        literals.append(match.group(1))
        return f"\x00{len(literals) - 1}\x00"

    text = _LITERAL.sub(keep, text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _REFERENCE.sub(lambda m: m.group(1) or m.group(2), text)
    text = _STRONG.sub(lambda m: m.group(1), text)
    text = _EMPHASIS.sub(lambda m: m.group(1), text)
    text = _DEFAULT_ROLE.sub(lambda m: m.group(1), text)
    return re.sub("\x00([0-9]+)\x00", lambda m: literals[int(m.group(1))], text)


def plain(rst: str, lang: str = "en") -> str:
    """Turn the chapters' reStructuredText prose into terminal text.

    Examples:
        >>> from microtape.book.prose import plain
        >>> plain("Use :func:`~microtape.grad` on ``x``, *not* **by hand**. .. note:: Careful.")
        'Use mt.grad on x, not by hand. Note: Careful.'
        >>> plain("h_t = tanh(h_{t-1}·W + x_{t}·U)")
        'h_t = tanh(hₜ₋₁·W + xₜ·U)'
        >>> plain(r"Here :math:`dL/dw = 2(3w - 6) \\cdot 3`, see :chapter:`4`.", "ru")
        'Here dL/dw = 2(3w - 6) · 3, see глава 4.'
    """
    text = _ROLE.sub(lambda m: _role(m, lang), rst)
    text = inline_markup(text)
    text = re.sub(r"(?<=\w)_\{([^{}]*)\}", lambda m: _script(m.group(1), _SUB, "_"), text)  # h_{t−1} outside :math:
    text = re.sub(
        r"\.\. code-block:: *(\w+)",
        lambda m: tr(N_("In {0}:"), lang).format(m.group(1).replace("javascript", "JavaScript")),
        text,
    )
    return re.sub(r"\.\. (note|warning|tip|important)::", lambda m: tr(ADMONITIONS[m.group(1)], lang) + ":", text)
