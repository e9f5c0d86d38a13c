"""The language microtape prints in, and its messages read from the gettext catalog.

A bottom module: every layer (the engine through ``errors``) may use it, and
it imports nothing of microtape. The English text is the msgid; the
translation comes from ``microtape/locale/<lang>/LC_MESSAGES/microtape.mo``,
read with the standard library's ``gettext``. A wheel ships the ``.mo``
compiled at build time (``hatch_build.py`` calls ``compile_po``); a checkout
or an editable install compiles it on first use, beside the ``.po`` when the
folder is writable, else in a cache folder, whenever it is missing or older
than the ``.po`` (so an edited catalog is seen at the next run).

The language is the one given to ``mt.set_language`` (``use`` here), else
``MICROTAPE_LANG`` when it names a language, else English.
"""

from __future__ import annotations

import ast
import gettext
import os
import re
import struct
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal, TypeAlias

__all__ = [
    "DOMAIN", "ENV", "LANGUAGES", "LOCALE_DIR", "Language",
    "N_", "chosen", "compile_po", "current", "messages", "read_po", "tr", "translation", "use",
]

Language: TypeAlias = Literal["en", "ru"]
"""A language microtape speaks: ``mt.set_language``, ``MICROTAPE_LANG``, ``--lang`` and the ``lang=`` of its functions."""
LANGUAGES: Final[tuple[Language, ...]] = ("en", "ru")
"""The languages microtape speaks (English is the source text; Russian is in the catalog)."""
ENV: Final = "MICROTAPE_LANG"
"""The environment variable that sets the default language (``mt.set_language`` and ``--lang`` win)."""
DOMAIN: Final = "microtape"
"""The gettext domain of the package's messages."""
LOCALE_DIR: Final = Path(__file__).resolve().parent / "locale"
"""The folder of the package's catalogs (``<lang>/LC_MESSAGES/microtape.po``, ``.mo``)."""

_chosen: list[Language] = []  # what set_language chose, for the whole process (threads too)
_CACHE: dict[str, gettext.NullTranslations] = {}


def use(lang: Language | None) -> None:
    """Print in ``lang`` from now on, in this process (``None``: back to ``MICROTAPE_LANG``).

    ``mt.set_language`` checks its argument and calls this.

    Examples:
        >>> from microtape import language
        >>> language.use("ru"); language.current()
        'ru'
        >>> language.use(None)
    """
    _chosen[:] = [] if lang is None else [lang]


def chosen() -> Language | None:
    """The language ``use`` (``mt.set_language``) chose, or ``None`` when none was.

    Examples:
        >>> from microtape import language
        >>> language.chosen() is None
        True
    """
    return _chosen[0] if _chosen else None


def current(environ: Mapping[str, str] | None = None) -> Language:
    """The language messages are printed in now: the chosen one, else ``MICROTAPE_LANG``, else ``"en"``.

    An unknown ``MICROTAPE_LANG`` counts as English here; the command line
    and ``mt.set_language`` report it.

    Examples:
        >>> from microtape import language
        >>> language.current({"MICROTAPE_LANG": "ru"}), language.current({})
        ('ru', 'en')
    """
    if _chosen:
        return _chosen[0]
    value = (os.environ if environ is None else environ).get(ENV, "").strip().lower()
    return "ru" if value == "ru" else "en"


def tr(english: str, lang: str | None = None) -> str:
    """``english`` in ``lang`` (default: ``current()``), from the catalog; the English itself when it has no entry.

    A message with values is written with numbered fields and marked for the
    extractor, ``N_("{0} is not a tensor.").format(name)``; its filled-in
    English is matched against the template here and the values kept, so the
    English itself can stay the data (a report's ``why``, a note) and be
    translated only where it is printed.

    Examples:
        >>> from microtape.language import tr
        >>> tr("hint", "ru"), tr("hint", "en")
        ('подсказка', 'hint')
        >>> tr("{n} failed", "ru").format(n=2)
        'не пройдено: 2'
        >>> tr("a kink: the one-sided slopes are 0 and 1, and the gradient lies between them", "ru")
        'излом: односторонние наклоны равны 0 и 1, и градиент лежит между ними'
    """
    if not english:  # gettext's "" is the catalog's header
        return english
    chosen_lang = current() if lang is None else lang
    found = translation(chosen_lang).gettext(english)
    if found is english and chosen_lang != "en" and "\n" not in english:
        return _by_template(english, chosen_lang)
    return found


_TEMPLATES: dict[str, list[tuple[re.Pattern[str], str]]] = {}
_FIELD = re.compile(r"\{(\d+)\}")


def _templates(lang: str) -> list[tuple[re.Pattern[str], str]]:
    """The catalog's numbered templates (``"{0} is not {1}."``) as patterns matching their English filled in."""
    if lang not in _TEMPLATES:
        found: list[tuple[re.Pattern[str], str]] = []
        for msgid, msgstr in messages(lang).items():
            if _FIELD.search(msgid) and not re.search(r"\{[^\d}]", msgid):
                seen: set[str] = set()
                parts = []
                for i, part in enumerate(_FIELD.split(msgid)):
                    if not i % 2:
                        parts.append(re.escape(part))
                    elif part in seen:  # a field used twice ("write {0} = 10, or {0} = true") holds one value
                        parts.append(f"(?P=f{part})")
                    else:
                        seen.add(part)
                        parts.append(f"(?P<f{part}>.*?)")
                found.append((re.compile("".join(parts), re.DOTALL), msgstr))
        found.sort(key=lambda item: -len(item[0].pattern))  # the most specific template first
        _TEMPLATES[lang] = found
    return _TEMPLATES[lang]


def _by_template(english: str, lang: str) -> str:
    """``english`` translated through a numbered template whose English it fills (the values kept, a value that
    is itself a message translated), else itself."""
    for pattern, template in _templates(lang):
        match = pattern.fullmatch(english)
        if match:
            return _FIELD.sub(lambda m: tr(match[f"f{m[1]}"], lang), template)  # a value may be a message too
    return english


def N_(english: str) -> str:
    """Mark ``english`` as a message translated later by ``tr(value)`` (gettext's ``N_``): returns it unchanged.

    The extractor (``python -m microtape.i18n.extract``) finds the literal
    argument of ``N_`` as it finds ``tr``'s, for words kept as values (a
    status, a verdict) and translated where they are printed.

    Examples:
        >>> from microtape.language import N_, tr
        >>> word = N_("kink"); word, tr(word, "ru")
        ('kink', 'излом')
    """
    return english


def _unquote(line: str) -> str:
    text = ast.literal_eval(line)
    assert isinstance(text, str)
    return text


def read_po(path: Path) -> dict[str, tuple[str, bool]]:
    """Every entry of a ``.po`` file: msgid -> (msgstr, fuzzy); obsolete (``#~``) entries and the header left out.

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
        if msgid and msgstr is not None:
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

    Pure Python, so neither a build nor a checkout needs the system ``msgfmt``.

    Examples:
        >>> import gettext, tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "a.po").write_text('msgid "hint"\\nmsgstr "подсказка"\\n', encoding="utf-8")
        >>> compile_po(d / "a.po", d / "a.mo")
        >>> with open(d / "a.mo", "rb") as f:
        ...     gettext.GNUTranslations(f).gettext("hint")
        'подсказка'
    """
    kept = {k: v for k, (v, fuzzy) in read_po(po).items() if v and not fuzzy}
    kept[""] = "Content-Type: text/plain; charset=UTF-8\n"
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
    header = struct.pack("<Iiiiiii", 0x950412DE, 0, n, 7 * 4, 7 * 4 + 8 * n, 0, 0)
    mo.parent.mkdir(parents=True, exist_ok=True)
    tmp = mo.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(header + struct.pack(f"<{4 * n}i", *offsets) + blob)
    tmp.replace(mo)


def _fresh(mo: Path, po: Path) -> bool:
    return mo.is_file() and (not po.is_file() or mo.stat().st_mtime >= po.stat().st_mtime)


def _compiled(lang: str) -> Path | None:
    """The folder holding an up-to-date ``<lang>/LC_MESSAGES/microtape.mo`` (compiled now if needed)."""
    po = LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
    mo = po.with_suffix(".mo")
    if _fresh(mo, po):
        return LOCALE_DIR
    if not po.is_file():
        return None
    try:
        compile_po(po, mo)
        return LOCALE_DIR
    except OSError:  # a read-only install: compile into a cache folder instead
        cache = Path(os.environ.get("XDG_CACHE_HOME", tempfile.gettempdir())) / "microtape-locale"
        target = cache / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"
        if not _fresh(target, po):
            compile_po(po, target)
        return cache


def translation(lang: str) -> gettext.NullTranslations:
    """The package's translations into ``lang``, read by ``gettext`` (a null translation for English or an unknown one).

    Examples:
        >>> from microtape.language import translation
        >>> translation("ru").gettext("hint"), translation("de").gettext("hint")
        ('подсказка', 'hint')
    """
    if lang not in _CACHE:
        folder = _compiled(lang) if lang in LANGUAGES and lang != "en" else None
        _CACHE[lang] = (
            gettext.translation(DOMAIN, str(folder), [lang], fallback=True)
            if folder is not None else gettext.NullTranslations()
        )
    return _CACHE[lang]


def messages(lang: str) -> dict[str, str]:
    """Every message the catalog of ``lang`` translates: English -> translation, as read from its ``.mo``.

    Examples:
        >>> from microtape.language import messages
        >>> messages("ru")["hint"], messages("en")
        ('подсказка', {})
    """
    folder = _compiled(lang) if lang in LANGUAGES and lang != "en" else None
    if folder is None:
        return {}
    data = (folder / lang / "LC_MESSAGES" / f"{DOMAIN}.mo").read_bytes()
    n, ids, strs = struct.unpack("<3i", data[8:20])
    found: dict[str, str] = {}
    for i in range(n):
        id_len, id_at = struct.unpack("<2i", data[ids + 8 * i: ids + 8 * i + 8])
        str_len, str_at = struct.unpack("<2i", data[strs + 8 * i: strs + 8 * i + 8])
        if id_len:
            found[data[id_at: id_at + id_len].decode("utf-8")] = data[str_at: str_at + str_len].decode("utf-8")
    return found
