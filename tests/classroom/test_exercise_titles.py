"""Every chapter an exercise's docstring names is quoted by the title the book gives it.

An exercise once sent students to "Variables and updating parameters", a
chapter the book calls "Variables": each ``Chapter N, "Title"`` in a starter's
or a solution's docstring must match the heading of ``tutorials/NN_*.py``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXERCISES = REPO / "tutorials" / "exercises"
QUOTED = re.compile(r'[Cc]hapter\s+(\d+),?\s+"([^"]+)"')


def _chapter_titles() -> dict[int, str]:
    titles = {}
    for chapter in sorted((REPO / "tutorials").glob("[0-9][0-9]_*.py")):
        heading = (ast.get_docstring(ast.parse(chapter.read_text(encoding="utf-8"))) or "").splitlines()[0]
        titles[int(chapter.name[:2])] = heading.split(" (", 1)[0].strip()
    return titles


def test_each_chapter_title_quoted_in_an_exercise_docstring_is_the_chapters() -> None:
    titles = _chapter_titles()
    files = sorted(EXERCISES.glob("ex*.py")) + sorted((EXERCISES / "solutions").glob("ex*.py"))
    quoted = 0
    wrong = []
    for path in files:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        for number, title in QUOTED.findall(" ".join(doc.split())):
            quoted += 1
            if titles.get(int(number)) != title:
                wrong.append(f"{path.relative_to(REPO)}: chapter {number} quoted as {title!r}, the book calls it {titles.get(int(number))!r}")
    assert quoted >= len(sorted(EXERCISES.glob("ex*.py"))), "expected every starter to name its chapter"
    assert not wrong, "\n".join(wrong)
