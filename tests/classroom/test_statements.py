"""A task statement never holds its solution's line, in English or in Russian.

The statements are the starters' docstrings, and their Russian is the book's
catalog ``docs/locale/ru/LC_MESSAGES/exercises.po`` (what ``exercises --lang ru``
writes). A solution line is a line of the worked solution that is not in the
starter; a statement holds it when the line (or, for ``return X``, the returned
expression) appears in it, inline-literal quotes and line breaks aside. ex04's
statement once said "return ``mt.check_grads(softplus, [x], order=2)``", the
solution's line, in both languages.
"""

from __future__ import annotations

import re

import pytest

from microtape.book import statements

from .test_exercises import NAMES, STARTERS, solution_lines

RUSSIAN = statements.catalog("ru")


def _flat(text: str) -> str:
    return " ".join(text.replace("``", "").split())


def statement_texts(name: str) -> dict[str, str]:
    english = statements.statement(STARTERS / f"{name}.py")
    russian = " ".join(RUSSIAN.get(message, message) for message in statements.message_ids(english))
    return {"en": _flat(english), "ru": _flat(russian)}


def forms(line: str) -> list[str]:
    """The line, and what it returns when it is a ``return``."""
    found = [line]
    returned = re.fullmatch(r"return\s+(.+)", line)
    if returned:
        found.append(returned.group(1))
    return [_flat(f) for f in found if len(f) >= 12]


def test_the_russian_statements_are_translated() -> None:
    assert RUSSIAN, "the catalog docs/locale/ru/LC_MESSAGES/exercises.po should be there"
    for name in NAMES:
        english = statements.statement(STARTERS / f"{name}.py")
        assert all(m in RUSSIAN for m in statements.message_ids(english)), name


@pytest.mark.parametrize("name", NAMES)
def test_a_statement_never_holds_its_solution_s_line(name: str) -> None:
    lines = solution_lines(name)
    assert lines, f"{name}: the solution should differ from the starter"
    for lang, text in statement_texts(name).items():
        held = [line for line in lines for form in forms(line) if form in text]
        assert not held, f"the {lang} statement of {name} holds the solution's line(s): {held}"
