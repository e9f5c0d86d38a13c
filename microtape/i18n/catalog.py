"""The package's own gettext catalog: ``microtape/locale/ru/LC_MESSAGES/microtape.po``.

The English text is the msgid; the Russian is its msgstr. At run time the
standard library's ``gettext`` reads the compiled ``microtape.mo``. The
``.mo`` is never committed: ``compile_po`` (pure Python, no system
``msgfmt``) writes it. A wheel ships it compiled at build time; an editable
install (``pip install -e .``) compiles it on first use, beside the ``.po``
when the package folder is writable, else in a cache folder, whenever the
``.mo`` is missing or older than the ``.po`` (so an edited catalog is seen
at the next run without a rebuild).
"""

from __future__ import annotations

import ast
import gettext
import os
import struct
import tempfile
from pathlib import Path
from typing import Final

__all__ = ["DOMAIN", "LOCALE_DIR", "compile_po", "read_po", "translate_text"]

DOMAIN: Final = "microtape"
"""The gettext domain of the package's messages."""
LOCALE_DIR: Final = Path(__file__).resolve().parent.parent / "locale"
"""The folder of the package's catalogs (``<lang>/LC_MESSAGES/microtape.po``)."""

_CACHE: dict[str, gettext.NullTranslations] = {}


def _unquote(line: str) -> str:
    text = ast.literal_eval(line)
    assert isinstance(text, str)
    return text


def read_po(path: Path) -> dict[str, tuple[str, bool]]:
    """Every entry of a ``.po`` file: msgid -> (msgstr, fuzzy); the header (msgid "") included.

    Examples:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.po"
        >>> _ = p.write_text('#, fuzzy\\nmsgid "hint"\\nmsgstr "подсказка"\\n', encoding="utf-8")
        >>> read_po(p)
        {'hint': ('подсказка', True)}
    """
    entries: dict[str, tuple[str, bool]] = {}
    msgid: str | None = None
    msgstr: str | None = None
    fuzzy = next_fuzzy = False
    part = ""

    def flush() -> None:
        if msgid is not None and msgstr is not None:
            entries[msgid] = (msgstr, fuzzy)

    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith("#,") and "fuzzy" in line:
            next_fuzzy = True
        elif line.startswith("msgid "):
            flush()
            msgid, msgstr, part = _unquote(line[6:]), None, "id"
            fuzzy, next_fuzzy = next_fuzzy, False
        elif line.startswith("msgstr "):
            msgstr, part = _unquote(line[7:]), "str"
        elif line.startswith('"'):
            if part == "id" and msgid is not None:
                msgid += _unquote(line)
            elif part == "str" and msgstr is not None:
                msgstr += _unquote(line)
    flush()
    return entries


def compile_po(po: Path, mo: Path) -> None:
    """Write the GNU ``.mo`` of ``po`` (fuzzy and empty entries left out, as ``msgfmt`` does).

    Examples:
        >>> import gettext, tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "a.po").write_text('msgid "hint"\\nmsgstr "подсказка"\\n', encoding="utf-8")
        >>> compile_po(d / "a.po", d / "a.mo")
        >>> with open(d / "a.mo", "rb") as f:
        ...     gettext.GNUTranslations(f).gettext("hint")
        'подсказка'
    """
    kept = {k: v for k, (v, fuzzy) in read_po(po).items() if v and (not fuzzy or k == "")}
    kept.setdefault("", "Content-Type: text/plain; charset=UTF-8\n")
    keys = sorted(kept)
    ids = [k.encode("utf-8") for k in keys]
    strs = [kept[k].encode("utf-8") for k in keys]
    n = len(keys)
    start = 7 * 4 + 16 * n
    offsets: list[int] = []
    blob = b""
    for data in ids + strs:
        offsets += [len(data), start + len(blob)]
        blob += data + b"\0"
    header = struct.pack("Iiiiiii", 0x950412DE, 0, n, 7 * 4, 7 * 4 + 8 * n, 0, 0)
    tmp = mo.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(header + struct.pack(f"{4 * n}i", *offsets) + blob)
    tmp.replace(mo)


def _compiled(lang: str) -> Path | None:
    po = LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
    mo = po.with_suffix(".mo")
    if mo.is_file() and (not po.is_file() or mo.stat().st_mtime >= po.stat().st_mtime):
        return LOCALE_DIR
    if not po.is_file():
        return None
    try:
        compile_po(po, mo)
        return LOCALE_DIR
    except OSError:  # a read-only install: compile into a cache folder instead
        cache = Path(os.environ.get("XDG_CACHE_HOME", tempfile.gettempdir())) / "microtape-locale"
        target = cache / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.is_file() or target.stat().st_mtime < po.stat().st_mtime:
            compile_po(po, target)
        return cache


def translation(lang: str) -> gettext.NullTranslations:
    """The package's translations into ``lang`` (a null translation for English or an unknown one)."""
    if lang not in _CACHE:
        folder = None if lang == "en" else _compiled(lang)
        _CACHE[lang] = (
            gettext.translation(DOMAIN, str(folder), [lang], fallback=True)
            if folder is not None else gettext.NullTranslations()
        )
    return _CACHE[lang]


def translate_text(lang: str, english: str) -> str:
    """``english`` in ``lang`` from the catalog (the English itself when it has no entry).

    Examples:
        >>> translate_text("ru", "hint")
        'подсказка'
        >>> translate_text("en", "hint")
        'hint'
    """
    return translation(lang).gettext(english)
