"""The package's gettext catalog: complete, checked, compiled, and read the way the standard library reads it."""

from __future__ import annotations

import gettext
import io
import re
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import microtape as mt
from microtape import language
from microtape.i18n import extract

CATALOG = extract.CATALOG


def test_extract_check_passes_every_message_has_its_russian() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        code = extract.main(["--check"])
    assert code == 0, out.getvalue()
    assert extract.status().ok


def catalog_copy(tmp_path: Path, edit: str, replace: str) -> Path:
    text = CATALOG.read_text(encoding="utf-8")
    assert edit in text
    copy = tmp_path / "microtape.po"
    copy.write_text(text.replace(edit, replace, 1), encoding="utf-8")
    return copy


def test_a_message_without_russian_fails_the_check(tmp_path: Path) -> None:
    copy = catalog_copy(tmp_path, 'msgid "hint"\nmsgstr "подсказка"\n', 'msgid "hint"\nmsgstr ""\n')
    assert extract.status(copy).missing == ["hint"]
    copy = catalog_copy(tmp_path, 'msgid "hint"\nmsgstr "подсказка"\n\n', "")
    assert extract.status(copy).missing == ["hint"] and not extract.status(copy).ok


def test_a_fuzzy_or_obsolete_entry_fails_the_check(tmp_path: Path) -> None:
    fuzzy = catalog_copy(tmp_path, 'msgid "hint"\n', '#, fuzzy\nmsgid "hint"\n')
    assert extract.status(fuzzy).fuzzy == ["hint"] and not extract.status(fuzzy).ok
    obsolete = catalog_copy(tmp_path, 'msgid "hint"\n', 'msgid "a message no code prints"\nmsgstr "сообщение"\n\nmsgid "hint"\n')
    assert extract.status(obsolete).obsolete == ["a message no code prints"]


def test_a_new_english_message_in_the_code_needs_its_russian(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the extractor finds in a module: every tr("...") literal, as xgettext finds _("...")."""
    found = list(extract.tr_literals('x = tr("a brand new message {n}").format(n=1)\ny = tr(name)\n'))
    assert found == ["a brand new message {n}"]
    wanted = {**extract.msgids(), "a brand new message {n}": "somewhere.py"}
    monkeypatch.setattr(extract, "msgids", lambda: wanted)
    assert extract.status().missing == ["a brand new message {n}"]


def test_every_russian_keeps_the_fields_of_its_english() -> None:
    """A translation with a field its English does not give would crash at .format(); one that drops a field loses a
    value (except ``{s}``, an English plural ending)."""
    fields = re.compile(r"(?<!\{)\{(\w*)[^{}]*\}(?!\})")
    wrong = []
    for msgid, (msgstr, _) in language.read_po(CATALOG).items():
        if "(?P<" in msgid or "\\" in msgid:  # a pattern: its msgstr is filled from the groups (or \1 replacements)
            continue
        given, used = set(fields.findall(msgid)), set(fields.findall(msgstr))
        if not used <= given or given - used - {"s"}:
            wrong.append(f"{msgid!r} -> {msgstr!r}")
    assert not wrong, "\n".join(wrong)


def test_the_compiled_catalog_is_what_gettext_reads(tmp_path: Path) -> None:
    folder = tmp_path / "ru" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    language.compile_po(CATALOG, folder / "microtape.mo")
    read = gettext.translation("microtape", str(tmp_path), ["ru"])
    entries = language.read_po(CATALOG)
    assert all(read.gettext(msgid) == msgstr for msgid, (msgstr, _) in entries.items())
    assert language.messages("ru") == {msgid: msgstr for msgid, (msgstr, _) in entries.items()}


def test_a_checkout_compiles_the_catalog_when_it_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locale = tmp_path / "locale"
    (locale / "ru" / "LC_MESSAGES").mkdir(parents=True)
    shutil.copy(CATALOG, locale / "ru" / "LC_MESSAGES" / "microtape.po")
    monkeypatch.setattr(language, "LOCALE_DIR", locale)
    monkeypatch.setattr(language, "_CACHE", {})
    assert language.tr("hint", "ru") == "подсказка"
    assert (locale / "ru" / "LC_MESSAGES" / "microtape.mo").is_file()


def test_set_language_and_the_environment_choose_the_language(monkeypatch: pytest.MonkeyPatch) -> None:
    def message() -> str:
        with pytest.raises(mt.InvalidArgumentError) as caught:
            mt.ones((2, 3)).sum(axis=2)
        assert caught.value.axis == 2  # the same attributes in every language
        return str(caught.value)

    monkeypatch.delenv("MICROTAPE_LANG", raising=False)
    assert "  hint: " in message()
    monkeypatch.setenv("MICROTAPE_LANG", "ru")
    assert "  подсказка: " in message()
    try:
        mt.set_language("en")
        assert "  hint: " in message()
        mt.set_language("ru")
        monkeypatch.delenv("MICROTAPE_LANG")
        assert "  подсказка: " in message()
    finally:
        mt.set_language(None)
    assert "  hint: " in message()
    with pytest.raises(mt.InvalidArgumentError, match="not a language of microtape"):
        mt.set_language("de")  # type: ignore[arg-type]  # a wrong value, on purpose
