"""``exercises DIR --lang ru``: a student reads Russian everywhere in a starter, and the code is the English starter's."""

from __future__ import annotations

import ast
import contextvars
import io
import re
import sys
import tokenize
import types
from pathlib import Path

import pytest

import microtape as mt
from microtape import cli
from microtape.exercise import Fail, seed_checks
from microtape.book import resources, statements
from microtape.classroom.catalog import load_exercise
from microtape.i18n.starters_ru import CODE_COMMENTS
from microtape.language import messages

CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)
STARTERS = resources.starter_files()
RUSSIAN = messages("ru")
"""The package catalog's Russian, English -> Russian."""


def texts(source: str) -> list[str]:
    """What a student reads besides the code and the task statement: comments, function docstrings, raised messages, TODO strings."""
    found = [t.string[1:].strip() for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and (doc := ast.get_docstring(node, clean=False)):
            found.append(doc)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("TODO"):
            found.append(node.value)
    return found


def code_of(source: str) -> str:
    """The program without its texts: every string constant emptied, comments gone (ast drops them)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


def test_every_text_of_every_starter_has_its_russian() -> None:
    missing = [f"{p.name}: {text}" for p in STARTERS for text in texts(p.read_text(encoding="utf-8"))
               if text not in RUSSIAN and text not in CODE_COMMENTS]
    assert not missing, "no Russian in microtape/locale/ru/LC_MESSAGES/microtape.po for:\n" + "\n".join(missing)


@pytest.mark.parametrize("path", STARTERS, ids=lambda p: p.name)
def test_a_russian_starter_reads_russian_and_keeps_the_code(path: Path) -> None:
    english = path.read_text(encoding="utf-8")
    russian = statements.translate_starter(statements.translate_code(english), statements.catalog("ru"))
    compile(russian, path.name, "exec")
    assert code_of(russian) == code_of(english), "the code changed"
    left = [t for t in texts(russian) if not CYRILLIC.search(t) and t not in CODE_COMMENTS and RUSSIAN.get(t) != t]
    assert not left, f"English left in the Russian {path.name}: {left}"
    assert len(russian.splitlines()) >= len(english.splitlines()) - 2


def statuses(name: str, source: str, where: Path) -> dict[str, str]:
    """Each check's status on ``source``, run in this process the way the grader's child runs it."""
    module = types.ModuleType(f"_test_starter_{name}")
    module.__file__ = str(where)
    sys.modules[module.__name__] = module
    exec(compile(source, str(where), "exec"), module.__dict__)  # noqa: S102 - the repository's own starter
    exercise = load_exercise(name)
    assert exercise is not None
    results: dict[str, str] = {}

    def body() -> None:
        for check in exercise.checks:
            seed_checks(4, check.name)
            try:
                contextvars.copy_context().run(lambda: mt.tidy(lambda: check.run(module)))  # noqa: B023 - run now
            except Fail:
                results[check.name] = "FAIL"
            except NotImplementedError:
                results[check.name] = "TODO"
            except Exception as err:  # noqa: BLE001 - any other failure of the student's code
                results[check.name] = type(err).__name__
            else:
                results[check.name] = "PASS"

    contextvars.copy_context().run(lambda: mt.tidy(body))
    return results


@pytest.mark.slow
@pytest.mark.parametrize("path", STARTERS, ids=lambda p: p.name)
def test_a_russian_starter_fails_its_checks_as_the_english_one_does(path: Path, tmp_path: Path) -> None:
    assert cli.exercises(tmp_path, out=io.StringIO(), lang="ru") == 0
    russian = (tmp_path / path.name).read_text(encoding="utf-8")
    english = statuses(path.stem, path.read_text(encoding="utf-8"), path)
    assert statuses(path.stem, russian, tmp_path / path.name) == english
    assert "PASS" not in set(english.values()) or len(set(english.values())) > 1  # a starter does not pass everything


def test_exercises_speaks_russian_when_it_refuses_and_when_it_writes(tmp_path: Path) -> None:
    (tmp_path / STARTERS[0].name).write_text("my work\n", encoding="utf-8")
    out = io.StringIO()
    assert cli.exercises(tmp_path, out=out, lang="ru") == 1
    assert out.getvalue().startswith(f"не копирую: {tmp_path / STARTERS[0].name} уже есть") and "--force" in out.getvalue()
    out = io.StringIO()
    assert cli.exercises(tmp_path / "new", out=out, lang="ru") == 0
    assert out.getvalue().startswith("записан ") and "grade" in out.getvalue() and out.getvalue().rstrip().endswith("--lang ru")
