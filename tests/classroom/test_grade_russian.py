"""``grade --lang ru``: every name, hint and failure message of the shipped checks reads in Russian; the JSON keeps its English.

The checks' texts are f-strings with real values; ``microtape.i18n.grader_ru``
translates them line by line. These tests read the check files themselves,
so a new check or a reworded message without its Russian fails here.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from microtape.classroom import formats
from microtape.i18n import grader_ru
from microtape.classroom.catalog import exercises
from microtape.language import messages

ROOT = Path(__file__).resolve().parents[2]
CHECKS = sorted((ROOT / "tutorials" / "exercises" / "checks").glob("ex*.py"))
HELPERS = ROOT / "microtape" / "classroom" / "check_tools.py"
CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)
EXACT = messages("ru")
"""The package catalog's Russian, English -> Russian."""


def sample(node: ast.expr) -> str | None:
    """A message as a check could write it: each value of an f-string replaced by 7 (None if it is not a string)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(part.value) if isinstance(part, ast.Constant) else "7" for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # "..." + ("..." if x else "")
        left = sample(node.left)
        return left + "." if left is not None and not left.endswith(".") else left
    return None


REALISTIC = {
    "7 is wrong7: 77.": "df(x) is wrong at entry 3: its sign is wrong (2 of 5 entries are wrong).",
    "CULPRIT = 7 is not an op of the model7.": "CULPRIT = 'foo' is not an op of the model: its ops are matmul, custom_grad(swish), mean.",
    "WRONG_OP = 7 is not an op of this table7.": "WRONG_OP = 'foo' is not an op of this table: the table's names are sum, mul[2], custom_grad(cube)[2].",
}
"""Samples whose values are fragments of the sentence, as a check would fill them in."""


def fail_messages(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Fail" and node.args:
            text = sample(node.args[0])
            if text is not None:
                found += [REALISTIC.get(line, line) for line in text.split("\n")]
    return found


def named_hints(path: Path) -> list[str]:
    """The texts a check file assigns to ``hint`` (or ``where``) for a particular failure."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("hint", "where") for t in node.targets):
            found += [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str) and " " in c.value]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Fail" and len(node.args) > 1:
            hint = node.args[1]
            if isinstance(hint, ast.Constant) and isinstance(hint.value, str):
                found.append(hint.value)
    return found


def test_every_check_name_hint_and_title_has_its_russian() -> None:
    missing = []
    for exercise in exercises():
        texts = [exercise.title] + [text for check in exercise.checks for text in (check.name, *check.hints)]
        missing += [f"{exercise.name}: {text}" for text in texts if text not in EXACT]
    for path in CHECKS:
        missing += [f"{path.name}: {text}" for text in named_hints(path) if text not in EXACT]
    assert not missing, "no Russian in microtape/locale/ru/LC_MESSAGES/microtape.po for:\n" + "\n".join(missing)


@pytest.mark.parametrize("path", [*CHECKS, HELPERS], ids=lambda p: p.name)
def test_every_failure_message_of_the_checks_translates(path: Path) -> None:
    messages = [line for line in fail_messages(path) if line.strip()]
    assert messages or path.name in ("ex05_stop_the_leak.py",)
    untranslated = [line for line in messages if grader_ru.translate_line(line) == line]
    assert not untranslated, f"no Russian pattern in the catalog (patterns in microtape/i18n/grader_ru.py, exercise_checks_ru.py) for {path.name}:\n" + "\n".join(untranslated)


def test_phrases_inside_messages_are_translated_too() -> None:
    line = "gradient_descent(2.0, 0.05, 3) is wrong: about 3 times too large."
    assert grader_ru.translate_line(line) == "gradient_descent(2.0, 0.05, 3) вычислено неверно: примерно в 3 раз(а) больше нужного."
    assert grader_ru.translate("fit(w, 3, 0.05) left 2 tensor(s) alive; training must leave memory flat.\n  another fit(w, 3, 0.05) leaves nothing") == (
        "fit(w, 3, 0.05) оставила живыми тензоров: 2; обучение не должно увеличивать память.\n  ещё один вызов fit(w, 3, 0.05) оставляет ничего"
    )


def entry() -> dict[str, object]:
    made: dict[str, object] = {
        "path": "a.py", "exercise": "ex00_gradient_by_hand", "chapter": 0, "title": "Gradient debugging: a derivative by hand and with mt.grad",
        "status": "failed", "message": None, "checks_passed": 1, "checks_total": 2, "score": 1, "max_score": 2, "seconds": 0.5, "output": "",
        "checks": [
            {"name": "df_by_hand matches finite differences", "points": 1, "score": 1, "hidden": False, "status": "PASS", "details": [], "hints": []},
            {"name": "gradient_descent steps downhill", "points": 1, "score": 0, "hidden": False, "status": "FAIL",
             "details": ["gradient_descent(2.0, 0.05, 1) is wrong: its sign is wrong."],
             "hints": ["gradient descent moves against the gradient, a small step at a time"]},
        ],
    }
    grader_ru.add_russian(made)
    return made


def test_the_report_reads_in_russian_and_the_english_stays_beside_it() -> None:
    graded = entry()
    text = formats.report(graded, 1, "ru")
    assert text.splitlines() == [
        "проверка a.py: ex00_gradient_by_hand (глава 0: Отладка градиентов: производная вручную и с mt.grad)",
        "  PASS  df_by_hand совпадает с конечными разностями",
        "  FAIL  gradient_descent шагает вниз по склону",
        "        gradient_descent(2.0, 0.05, 1) вычислено неверно: неверный знак.",
        "        подсказка: градиентный спуск движется против градиента, маленькими шагами (см. главу 0)",
        "ex00_gradient_by_hand: пройдено проверок: 1 из 2, не пройдено: 1. Исправьте строки с пометками FAIL и TODO и проверьте снова"
        " (--hint 2 даст более точную подсказку).",
    ]
    assert formats.report(graded, 1).startswith("grading a.py: ex00_gradient_by_hand (chapter 0: Gradient debugging")
    checks = graded["checks"]
    assert isinstance(checks, list)
    assert checks[1]["details"] == ["gradient_descent(2.0, 0.05, 1) is wrong: its sign is wrong."]  # the English is kept
    doc = formats.gradescope([graded], 7, "ru")
    tests = doc["tests"]
    assert isinstance(tests, list)
    assert tests[1]["name"] == "ex00_gradient_by_hand: gradient_descent шагает вниз по склону"
    assert "подсказка: градиентный спуск" in tests[1]["output"] and str(doc["output"]).startswith("проверено microtape")
    c50 = formats.classroom50([graded], 7, "ru")
    assert "(случайные входы взяты с зерном 7)" in str(c50["tests"][0]["message"])  # type: ignore[index]
    # the services' documents keep their own fields, in Russian too
    assert formats.problems(doc, formats.GRADESCOPE_RESULTS, formats.GRADESCOPE_TEST, "score", "max_score") == []
    assert formats.problems(c50, formats.CLASSROOM50_RESULT, formats.CLASSROOM50_TEST, "score", "max-score") == []


@pytest.mark.slow
def test_grade_lang_ru_in_text_and_json(tmp_path: Path) -> None:
    starter = ROOT / "tutorials" / "exercises" / "ex04_softplus_vjp.py"
    env = {"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8"}
    text = subprocess.run(
        [sys.executable, "-m", "microtape", "grade", str(starter), "--lang", "ru", "--seed", "3", "--timeout", "120"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env, encoding="utf-8",
    )
    assert text.returncode == 1, text.stderr
    lines = text.stdout.splitlines()
    english = [line for line in lines if not CYRILLIC.search(line) and not line.strip().startswith("|")]
    assert not english and lines[0].startswith("случайные входы взяты с зерном 3"), text.stdout
    result = subprocess.run(
        [sys.executable, "-m", "microtape", "grade", str(starter), "--format", "json", "--seed", "3", "--timeout", "120"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**env, "MICROTAPE_LANG": "ru"}, encoding="utf-8",
    )
    doc = json.loads(result.stdout)
    [graded] = doc["files"]
    assert graded["title"].startswith("Checking gradients") and graded["title_ru"].startswith("Проверка градиентов")
    assert graded["report"].startswith("grading ") and graded["report_ru"].startswith("проверка ")
    check = graded["checks"][0]
    assert CYRILLIC.search(check["name_ru"]) and not CYRILLIC.search(check["name"])
    assert len(check["details_ru"]) == len(check["details"]) and len(check["hints_ru"]) == len(check["hints"])
    assert "message_ru" in graded and set(doc) >= {"schema_version", "files", "summary"}


def test_a_path_that_cannot_be_graded_is_explained_in_russian(tmp_path: Path) -> None:
    from microtape.classroom.catalog import identify
    from microtape.classroom.submissions import collect_paths

    (tmp_path / "plain.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "typo.py").write_text('EXERCISE = "ex00_gradient_by_hnd"\n', encoding="utf-8")
    (tmp_path / "empty").mkdir()
    problems = [identify(tmp_path / name) for name in ("plain.py", "typo.py", "missing.py")]
    problems += [problem for _, _, problem in collect_paths([tmp_path / "empty", tmp_path / "nothing"]) if problem is not None]
    assert len(problems) == 5
    for what, how in problems:
        assert isinstance(what, str)
        for line in (what, how):
            assert CYRILLIC.search(grader_ru.translate_line(line)), line


def test_the_exercises_titles_are_the_teachers_page_s() -> None:
    """One set of names: the grader's Russian titles are those of the Russian teachers' page."""
    from microtape.book.prose import read_po

    page = read_po(ROOT / "docs" / "locale" / "ru" / "LC_MESSAGES" / "teachers.po")
    differ = {e.title: (EXACT[e.title], page[e.title]) for e in exercises() if e.title in page and page[e.title] != EXACT[e.title]}
    assert not differ, differ


def test_a_failed_gradient_check_with_its_culprit_reads_in_russian() -> None:
    """The culprit line, re-checked at the op's own scale ('for input ..., with the gradient that reached it'), is translated."""
    import types
    from collections.abc import Callable

    import microtape as mt
    from microtape.exercise import gradcheck_failure

    @mt.custom_grad
    def cube(x: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], mt.Tensor]]:
        return x * x * x, lambda dy: dy * 3.0 * x  # wrong: 3·x²

    report = mt.check_grads(lambda x: (cube(x) * 2.0).sum(), [mt.tensor([0.5, 1.5, -2.0])])
    text = gradcheck_failure(report, "energy", ["x"], types.ModuleType("m"))
    assert "culprit: the VJP of 'custom_grad(cube)'" in text
    untranslated = [line for line in text.split("\n") if not CYRILLIC.search(grader_ru.translate_line(line))]
    assert not untranslated, untranslated


def test_the_grader_s_own_new_messages_read_in_russian() -> None:
    """The messages of assignments, untouched starters, notebooks and time limits added with the verdict's move."""
    lines = [
        "not started: the file's code is the starter's, as handed out.",
        "not submitted: class/alice holds no file of ex05b_tidy_too_eager.",
        "not submitted",
        "'ex00_gradient_by_hand.py' is ex00_gradient_by_hand, which this assignment does not ask for; it is not graded.",
        "the assignment asks for ex04e_wrong_factor, ex05b_tidy_too_eager.",
        "Another file of ex04e_wrong_factor in this submission (bob/a.py) scored higher or came first; this one does not count.",
        "stopped when the file's 10 s were up, in this check.",
        "stopped after 10 s between its checks: an endless loop, or far too much work?",
        "run as IPython runs it, the statement after the magic: cell 3, line 1: %time SCALE = 40.0",
        "not run (a help request shows documentation, nothing else): cell 1, line 2: mt.check_grads?",
        "the notebook a.ipynb cannot be read: not valid JSON (line 1, column 12: Expecting value); was the notebook saved completely?",
    ]
    untranslated = [line for line in lines if not CYRILLIC.search(grader_ru.translate_line(line))]
    assert not untranslated, untranslated
    assert grader_ru.translate_line(lines[-1]).endswith("полностью?")  # one question mark, no full stop after it


@pytest.mark.parametrize(
    ("toml", "args", "english_part"),
    [
        (None, ["--require", "ex99"], "is not an exercise the grader knows"),
        (None, ["--require", " , "], "names no exercise"),
        ("[exercises]\nex04e = 10\n[extra]\n", [], "unknown table(s)"),
        ("name = 'w'\n[exercises]\nex04e = 10\n", [], "outside any table"),
        ("[assignment]\nlevel = 3\n[exercises]\nex04e = 10\n", [], "unknown key(s)"),
        ("[assignment]\nname = 4\n[exercises]\nex04e = 10\n", [], "is not a string"),
        ("[assignment]\nname = 'w'\n", [], "lists no exercise"),
        ("[exercises]\nex04e = 'ten'\n", [], "is not a number of points"),
        ("[exercises]\nex04e = 10\nex04e_wrong_factor = 5\n", [], "is listed twice"),
        ("[exercises]\nex04e = 10\n", ["--require", "ex04e"], "both say what to grade"),
        ("[exercises\n", [], "is not TOML"),
    ],
)
def test_a_teacher_s_assignment_refusals_read_in_russian(tmp_path: Path, toml: str | None, args: list[str], english_part: str) -> None:
    """--assignment and --require refusals: what is wrong with the file, the rule and the hint, all in Russian."""
    from microtape import cli
    from microtape.language import chosen

    from ..i18n.test_russian_run import english

    before = chosen()
    assert cli.main(["exercises", str(tmp_path / "ex"), "--lang", "en"]) == 0
    starter = tmp_path / "ex" / "ex04e_wrong_factor.py"
    given = list(args)
    if toml is not None:
        (tmp_path / "week.toml").write_text(toml, encoding="utf-8")
        given += ["--assignment", str(tmp_path / "week.toml")]
    for lang in ("en", "ru"):
        done = subprocess.run(
            [sys.executable, "-m", "microtape", "grade", str(starter), "--lang", lang, *given],
            capture_output=True, text=True, timeout=120,
        )
        said = done.stdout + done.stderr
        assert done.returncode != 0, said
        if lang == "en":
            assert english_part in said, said
        else:
            assert english_part not in said and "подсказка" in said, said
            keys = {"grade", "name", "checks", "level", "true"}  # the command, and the TOML an assignment is written in
            said = re.sub(r"не TOML: [^\n]*", "не TOML: ", said)  # tomllib's own message, Python's English
            assert [w for w in english(said.replace(str(tmp_path), "")) if w not in keys] == [], said
    assert chosen() == before
