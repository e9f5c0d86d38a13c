"""The command line's own commands: ``exercises DIR`` and the program's name in ``--help``."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from microtape import cli

from microtape.book import resources as _resources

from microtape.book import statements as _statements

ROOT = Path(__file__).resolve().parents[1]


def code_of(source: str) -> str:
    """The program without its texts: every string constant emptied (comments are not in the tree)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


def test_exercises_copies_the_starters_and_nothing_else(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "class" / "mine"
    assert cli.main(["exercises", str(target)]) == 0
    copied = sorted(p.name for p in target.iterdir())
    starters = sorted(p.name for p in (ROOT / "tutorials" / "exercises").glob("ex*.py"))
    assert copied == starters and len(copied) >= 8
    for name in copied:
        assert (target / name).read_bytes() == (ROOT / "tutorials" / "exercises" / name).read_bytes()
    out = capsys.readouterr().out
    assert f"wrote {target / copied[0]}" in out
    assert f"grade {target / copied[0]}" in out  # how to grade the copy


def test_exercises_never_overwrites_work_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _resources.starter_files()[0].name
    (tmp_path / first).write_text("my work\n", encoding="utf-8")
    assert cli.main(["exercises", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"not copying: {tmp_path / first} already exists" in out and "--force" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [first]  # nothing copied
    assert (tmp_path / first).read_text(encoding="utf-8") == "my work\n"
    assert cli.main(["exercises", str(tmp_path), "--force"]) == 0
    assert (tmp_path / first).read_text(encoding="utf-8") != "my work\n"


def test_exercises_without_the_book_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_resources, "tutorials_dir", lambda: None)
    assert cli.main(["exercises", str(tmp_path / "x")]) == 1
    assert "not installed" in capsys.readouterr().out
    assert not (tmp_path / "x").exists()


def test_every_task_statement_is_translated_in_the_exercises_catalog() -> None:
    russian = _statements.catalog("ru")
    assert russian, "docs/locale/ru/LC_MESSAGES/exercises.po is missing or empty"
    untranslated = {
        path.name: [m for m in _statements.message_ids(_statements.statement(path)) if m not in russian]
        for path in _resources.starter_files()
    }
    assert {name: ids for name, ids in untranslated.items() if ids} == {}


@pytest.mark.slow
def test_exercises_in_russian_translate_the_texts_not_the_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["exercises", str(tmp_path), "--lang", "ru"]) == 0
    starters = _resources.starter_files()
    assert sorted(p.name for p in tmp_path.iterdir()) == [p.name for p in starters]
    for path in starters:
        english = path.read_text(encoding="utf-8")
        copy = (tmp_path / path.name).read_text(encoding="utf-8")
        tree = ast.parse(copy)  # still valid Python
        statement = ast.get_docstring(tree, clean=False) or ""
        # the code is untouched, the EXERCISE line included (its comments, docstrings and TODOs are Russian too)
        assert code_of(copy) == code_of(english)
        assert f'EXERCISE = "{path.stem}"' in copy
        # no English paragraph is left, and the literal blocks (commands, code) are the English ones
        left = set(_statements.message_ids(statement)) & set(_statements.message_ids(_statements.statement(path)))
        assert left == set(), f"{path.name} kept English prose: {left}"
        # except the grade command, which asks for Russian (--lang ru) so that it answers in Russian
        command = f"python -m microtape grade {path.name}"
        literal = [b.lines for b in _statements.blocks(_statements.statement(path)) if not b.msgid]
        russian_literal = [b.lines for b in _statements.blocks(statement) if not b.msgid]
        assert [tuple(line.replace(command, command + " --lang ru") for line in lines) for lines in literal] == russian_literal
        assert statement.splitlines()[0].startswith("Упражнение"), statement.splitlines()[0]
        assert f"{command} --lang ru" in statement
    # a Russian starter grades like the English one: its TODOs fail, helpfully
    capsys.readouterr()
    for name in ("ex00_gradient_by_hand", "ex04b_find_the_bug"):
        assert cli.main(["grade", str(tmp_path / f"{name}.py"), "--timeout", "120"]) == 1  # margin for busy cores
        out = capsys.readouterr().out
        assert name in out and "TODO" in out and "Traceback" not in out, out


def test_exercises_know_only_their_languages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["exercises", str(tmp_path / "de"), "--lang", "de"])
    assert exit_info.value.code == 2 and "invalid choice: 'de'" in capsys.readouterr().err
    assert cli.exercises(tmp_path / "de", lang="de") == 2  # type: ignore[arg-type]  # an untyped caller: refused at run time too
    assert "the languages are en, ru" in capsys.readouterr().out
    assert not (tmp_path / "de").exists()


@pytest.mark.parametrize(
    ("argv0", "orig", "expected"),
    [
        ("/venv/lib/python3.11/site-packages/microtape/__main__.py", ["python3", "-m", "microtape"], "python3 -m microtape"),
        ("/venv/bin/microtape", ["/venv/bin/python", "/venv/bin/microtape"], "microtape"),
        ("-c", ["python", "-c", "..."], "python -m microtape"),
    ],
)
def test_the_program_is_named_as_the_user_called_it(
    monkeypatch: pytest.MonkeyPatch, argv0: str, orig: list[str], expected: str
) -> None:
    monkeypatch.setattr(sys, "argv", [argv0])
    monkeypatch.setattr(sys, "orig_argv", orig)
    assert cli.program_name() == expected


@pytest.mark.slow
def test_help_in_a_fresh_process_names_python_dash_m() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "microtape", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0
    assert result.stdout.startswith(f"usage: {Path(sys.executable).name} -m microtape ")
    assert "exercises" in result.stdout


@pytest.mark.parametrize(
    ("argv", "env", "first"),
    [
        ([], None, "usage: "),
        ([], "ru", "использование: "),
        (["--lang", "ru"], None, "использование: "),
        (["--lang=en"], "ru", "usage: "),
    ],
)
def test_the_program_alone_prints_the_help_and_succeeds(
    argv: list[str], env: str | None, first: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m microtape`` with no command was argparse's usage error (exit 2); it is the help now, in either language."""
    if env is None:
        monkeypatch.delenv("MICROTAPE_LANG", raising=False)
    else:
        monkeypatch.setenv("MICROTAPE_LANG", env)
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(first) and "selfcheck" in out and "exercises" in out


def test_a_language_microtape_does_not_speak_is_still_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["--lang", "de"])
    assert info.value.code == 2 and "invalid choice: 'de'" in capsys.readouterr().err
