"""The figures' words: one table per language, the same keys and fields in each, chosen by MICROTAPE_LANG."""

from __future__ import annotations

import string

import pytest

from microtape.book.figures import ENVIRONMENT_VARIABLE, FIGURE_WORDS, figure_language, figure_words


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_language_has_every_key_with_the_same_fields() -> None:
    english = FIGURE_WORDS["en"]
    for lang, table in FIGURE_WORDS.items():
        assert set(table) == set(english), f"{lang}: keys differ from English: {set(table) ^ set(english)}"
        for key, text in table.items():
            assert text.strip(), f"{lang}:{key} is empty"
            assert _fields(text) == _fields(english[key]), f"{lang}:{key} has other {{fields}} than English"


def test_the_russian_table_is_russian() -> None:
    for key, text in FIGURE_WORDS["ru"].items():
        assert text != FIGURE_WORDS["en"][key] or not any(c.isalpha() for c in text), f"ru:{key} is the English text"


def test_the_environment_variable_chooses_the_language(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert figure_language() == "en" and figure_words()["step"] == "step"
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "ru")
    assert figure_language() == "ru" and figure_words()["step"] == "шаг"
    assert figure_words("en")["step"] == "step", "an explicit language wins over the environment"
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "xx")
    assert figure_language() == "en", "an unknown language falls back to English"
