"""The glossary's "first in" chapter is where the book first uses the term.

The rule, for each entry of ``docs/glossary.rst``: the first chapter whose
prose (the title docstring and the ``#`` comments, leaving out the
``Next: ...`` sentence that points ahead) names the term, or one of the
cues below for a term the chapters say in other words, is the chapter the
entry gives. A term no chapter names in words is first in the first chapter
whose code calls one of the entry's microtape names (its ``:mt:``
references, or ``mt.`` names in double backquotes), as ``mt.name`` or as a
method, ``x.name(...)``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "tutorials").glob("[0-9][0-9]_*.py"))

CUES: dict[str, tuple[str, ...]] = {
    "gradient check": ("gradient check", "check_grads"),
    "culprit op": ("culprit",),
    "printing a tensor": ("mt.print", "tf.print"),
    "broadcasting": ("broadcast",),
    "tidy scope": ("tidy",),
    "arena of live tensors": ("arena",),
    "keep": ("mt.keep", "keep()"),  # "keeps" is also an English verb
    "next frame": ("next_frame", "nextFrame"),
    "training dashboard": ("dashboard",),
    "computation graph": ("computation graph", "graph"),
}
"""Other words the chapters use for a term (the term itself always counts, but for ``keep``)."""


def _entries() -> list[tuple[list[str], str]]:
    """(terms, body) for every entry of every ``.. glossary::`` block."""
    entries: list[tuple[list[str], str]] = []
    terms: list[str] = []
    body: list[str] = []
    inside = False
    for line in (ROOT / "docs" / "glossary.rst").read_text(encoding="utf-8").splitlines():
        if line.startswith(".. glossary::"):
            inside = True
        elif inside and re.match(r"^   \S", line):
            if body:
                entries.append((terms, "\n".join(body)))
                terms, body = [], []
            terms.append(line.strip())
        elif inside and line.startswith("      "):
            body.append(line)
        elif inside and line and not line.startswith(" "):
            inside = False
    if body:
        entries.append((terms, "\n".join(body)))
    return entries


def _prose(chapter: Path) -> str:
    source = chapter.read_text(encoding="utf-8")
    title = re.match(r'\s*"""(.*?)"""', source, re.S)
    parts = [title.group(1)] if title else []
    parts += [line[1:] for line in source.splitlines() if line.startswith("#")]
    text = re.sub(r"\s+", " ", " ".join(parts))
    return re.sub(r"Next: [^.]*\.", " ", text)


def _names(text: str, word: str) -> bool:
    if word[-1].isalnum():
        return re.search(r"(?<![\w.])" + re.escape(word) + r"(s|es)?\b", text, re.IGNORECASE) is not None
    return word in text


def first_chapter(terms: list[str], body: str) -> int | None:
    """The chapter an entry should give, by the rule of this module."""
    cues = [cue for term in terms for cue in CUES.get(term, (term,))]
    for chapter in CHAPTERS:  # by the number in the file name: a book may skip a number
        if any(_names(_prose(chapter), cue) for cue in cues):
            return int(chapter.name[:2])
    api = re.findall(r":mt:`~?([\w.]+)`", body) + re.findall(r"``mt\.(\w+)", body)
    for chapter in CHAPTERS:
        code = chapter.read_text(encoding="utf-8")
        if any(re.search(r"(\bmt|\w\))\." + re.escape(name) + r"\b", code) for name in api):
            return int(chapter.name[:2])
    return None


ENTRIES = _entries()


def test_the_glossary_is_read_whole() -> None:
    assert len(ENTRIES) >= 40 and all(terms for terms, _ in ENTRIES)


@pytest.mark.parametrize("terms, body", ENTRIES, ids=[terms[0] for terms, _ in ENTRIES])
def test_first_in_is_where_the_book_first_uses_the_term(terms: list[str], body: str) -> None:
    given = re.search(r"first\s+in\s+:chapter:`(\d+)`", body)
    expected = first_chapter(terms, body)
    assert expected is not None, f"{terms[0]!r}: no chapter uses it; add a cue or drop the entry"
    assert given is not None, f"{terms[0]!r}: say where it is first used: first in :chapter:`{expected}`"
    assert int(given.group(1)) == expected, f"{terms[0]!r} is first used in chapter {expected}, not {given.group(1)}"
