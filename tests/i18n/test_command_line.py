"""``--help`` and argparse's errors in the chosen language; ``MICROTAPE_LANG`` as the default of every command."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from microtape import cli
from microtape.i18n import command_line
from microtape.i18n import messages
from microtape.language import tr

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("tour", "selfcheck", "exercises", "grade", "dashboard")
LATIN_WORD = re.compile(r"(?<![-\w$./'])[A-Za-z]{4,}(?![\w(])")
"""An English-looking word in help text (names of options, files, formats and programs are allowed below)."""
ALLOWED = {
    "microtape", "python", "MICROTAPE_LANG", "text", "json", "gradescope", "classroom50", "results", "result",
    "tour", "selfcheck", "exercises", "grade", "dashboard", "demo", "list", "CHAPTER", "FILE", "PATH", "NAME", "TOML", "Enter", "Ctrl", "Jupyter", "ipynb", "py",
}


def help_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def english_words(text: str) -> set[str]:
    return {w for w in LATIN_WORD.findall(text) if w not in ALLOWED and w.lower() not in ALLOWED}


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_is_russian_with_lang_ru_and_english_without(
    command: str | None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(messages.ENV, raising=False)
    tail = [command, "--help"] if command else ["--help"]
    russian = help_of(["--lang", "ru", *tail], capsys)
    assert russian.startswith("использование: ") and "показать эту справку и выйти" in russian
    assert "usage:" not in russian and "options" not in russian and "show this help" not in russian
    assert not english_words(russian), f"English in the Russian help: {sorted(english_words(russian))}\n{russian}"
    english = help_of(tail, capsys)
    assert english.startswith("usage: ") and "show this help message and exit" in english
    assert not re.search("[а-яё]", english, re.IGNORECASE)


@pytest.mark.parametrize("command", COMMANDS)
def test_microtape_lang_sets_the_language_of_every_help(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(messages.ENV, "ru")
    assert help_of([command, "--help"], capsys).startswith("использование: ")
    assert help_of([command, "--lang", "en", "--help"], capsys).startswith("usage: ")  # an explicit --lang wins


def test_microtape_lang_is_the_default_of_tour_exercises_and_grade(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(messages.ENV, "ru")
    for argv in (["tour"], ["exercises", "x"], ["grade", "x.py"]):
        parser = command_line.build_parser("microtape", command_line.language_of(argv))
        assert parser.parse_args(argv).lang == "ru", argv
        assert parser.parse_args([*argv, "--lang", "en"]).lang == "en"
        assert parser.parse_args(["--lang", "en", *argv]).lang == "en"
    monkeypatch.delenv(messages.ENV)
    assert command_line.build_parser("microtape", command_line.language_of(["tour"])).parse_args(["tour"]).lang == "en"


def test_an_unknown_microtape_lang_is_a_clear_error(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(messages.ENV, "de")
    assert cli.main(["tour", "--chapter", "0"]) == 2
    err = capsys.readouterr().err
    assert "MICROTAPE_LANG='de'" in err and "The languages are en, ru." in err
    monkeypatch.setenv(messages.ENV, "RU")  # a shell's capitals are fine
    assert messages.default_language() == "ru"
    monkeypatch.setenv(messages.ENV, "de")
    assert help_of(["tour", "--lang", "en", "--help"], capsys).startswith("usage: ")  # --lang wins, the variable is not read


def test_argparse_errors_in_russian(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(messages.ENV, raising=False)
    for argv, said in (
        (["--lang", "ru", "grade"], "ошибка: не хватает обязательных аргументов: PATH"),
        (["grade", "x.py", "--lang", "ru", "--timeout", "inf"], "ошибка: аргумент --timeout: 'inf' не конечное число секунд"),
        (["--lang", "ru", "tour", "--chapter", "two"], "ошибка: аргумент --chapter: недопустимое значение (int): 'two'"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(argv)
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and err.startswith("использование: ") and said in err, err
    with pytest.raises(SystemExit):
        cli.main(["grade", "--timeout", "inf"])
    assert "error: argument --timeout: 'inf' is not a finite number of seconds" in capsys.readouterr().err


def test_every_help_string_and_message_has_its_russian_with_the_same_fields() -> None:
    for table in (command_line.HELP, command_line.ARGPARSE, messages.MESSAGES):
        for key, text in table.items():  # no placeholder the English is not given, so no message crashes
            russian = tr(text, "ru")
            assert russian != text or not re.search("[a-z]{3}", re.sub(r"\{\w+\}", "", text)), key
            assert set(re.findall(r"\{(\w+)", russian)) <= set(re.findall(r"\{(\w+)", text)), key


@pytest.mark.slow
def test_help_in_a_fresh_process_follows_microtape_lang() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "microtape", "tour", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "MICROTAPE_LANG": "ru", "PYTHONIOENCODING": "utf-8"}, encoding="utf-8",
    )
    assert result.returncode == 0 and result.stdout.startswith("использование: ") and "--no-pause" in result.stdout


@pytest.mark.slow
def test_russian_help_on_a_terminal_that_cannot_encode_it() -> None:
    """Guards a crash: --help printed before the streams were told to replace what they cannot encode."""
    result = subprocess.run(
        [sys.executable, "-m", "microtape", "--lang", "ru", "--help"], cwd=ROOT, capture_output=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "cp1252"},
    )
    assert result.returncode == 0 and b"Traceback" not in result.stderr and result.stdout.startswith(b"?????????????: ")
