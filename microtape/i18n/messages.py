"""The terminal's own words, in English and in Russian: one message table per language.

What the command line itself prints (the tour's markers, the pause prompt,
the words of a grading report and of the class table) is here, in
``MESSAGES``, a table per language with the same keys. ``say(lang, key,
**values)`` formats one message.

The language of ``tour``, ``exercises`` and ``grade`` is ``--lang``, else
the environment variable ``MICROTAPE_LANG``, else English
(``default_language``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final, Literal, TypeAlias

from ..errors import InvalidArgumentError

__all__ = ["ENV", "LANGUAGES", "Language", "MESSAGES", "default_language", "say"]

Language: TypeAlias = Literal["en", "ru"]
"""A language microtape speaks: ``--lang``, ``MICROTAPE_LANG`` and the ``lang=`` of its functions."""
LANGUAGES: Final[tuple[Language, ...]] = ("en", "ru")
"""The languages of the command line: the tour's prose, the starters, the grader's reports, ``--help``."""

ENV: Final = "MICROTAPE_LANG"
"""The environment variable that sets the default language (an explicit ``--lang`` wins)."""

MESSAGES: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {
        # the tour
        "figure_saved": "(figure saved as {path})",
        "no_plots": "(a plot is left out here: matplotlib is not installed; pip install 'microtape[book]' to draw it)",
        "no_plots_browser": "(a plot is left out here: Python in the browser has no matplotlib offline; the book's figure is on this page)",
        "no_server_browser": "(left out here: the code that serves or visits a web page ({names}); Python in a browser cannot open a network server or connection, and the book's output of this cell is on this page)",
        "pause": "── Enter for chapter {number}, q to stop ── ",
        "no_chapter": "no chapter {number}; {known}",
        "chapters_are": "the chapters are {numbers}",
        "no_book": "the book's chapters are not installed",
        # a grading report
        "grading": "grading {path}:",
        "grading_exercise": "grading {path}: {name} (chapter {chapter}: {title})",
        "could_not_grade": "could not grade the file",
        "printed": "the file printed (last lines):",
        "loading": "loading the file",
        "could_not_load": "{name}: could not load the file; 0 of {total} checks ran.",
        "hidden": "(hidden)",
        "hint": "hint",
        "hint_level": "hint {level}",
        "see_chapter": " (see chapter {chapter})",
        "points": "[{points} pt{s}]",
        "score": " Score: {score} of {top} points.",
        "all_passed": "{name}: all {total} checks passed.{score}",
        "stopped": "{name}: {message} {passed} of {total} checks passed.{score}",
        "passed_of": "{passed} of {total} checks passed",
        "failed_n": "{n} failed",
        "todo_n": "{n} not done yet",
        "closer_hint": " (--hint {level} for a closer hint)",
        "fix_and_again": "{name}: {parts}.{score} Fix the lines marked FAIL and TODO, then grade again{more}.",
        "note": "note: {message}",
        "not_done": "not done yet",
        # the class table
        "seed": "random inputs drawn with seed {seed} (grade again with --seed {seed} to replay them)",
        "head": "{file}  {exercise}  {checks}  {score}  {status}  {time}",
        "col_file": "file",
        "col_exercise": "exercise",
        "col_checks": "checks",
        "col_score": "score",
        "col_status": "status",
        "col_time": "time",
        "files_passed": "{passed} of {total} files passed every check{extra}.",
        "n_failed": "{n} failed",
        "n_timeout": "{n} timed out",
        "n_crashed": "{n} crashed",
        "n_error": "{n} not graded",
        "n_missing": "{n} not submitted",
        "details": "details: python -m microtape grade FILE [--hint 2], or --format json for everything",
        "wrote_document": "wrote {output} ({format}: score {score} of {top})",
        "interrupted": "\ngrade: stopped by {name}; {done} of {total} paths graded, every process it started is ended.",
        # exercises
        "wrote": "wrote {path}",
        "work_then_grade": "\nWork on a file, then grade it, e.g.: {command}",
        "no_starters": "the starter exercises are not installed with this copy of microtape",
        "no_exercises": "the exercises are not installed with this copy of microtape",
        "list_head": f"{'exercise':<28}{'chapter':>7}  {'kind':<10}{'minutes':>7}{'points':>7}  title",
        "list_total": "{count} exercises, about {minutes} minutes and {points} points in all.",
        "not_copying": "not copying: {names} already exist{s} (your work?).",
        "pick_another": "Pick another folder, or add --force to overwrite: {command}",
    },
    "ru": {
        "figure_saved": "(рисунок сохранён в {path})",
        "no_plots": "(здесь пропущен график: matplotlib не установлен; чтобы его нарисовать, pip install 'microtape[book]')",
        "no_plots_browser": "(здесь пропущен график: у Python в браузере нет matplotlib без сети; рисунок из книги есть на этой странице)",
        "no_server_browser": "(здесь пропущен код, который открывает веб-страницу как сервер или как клиент ({names}); Python в браузере не может открыть сетевой сервер или соединение, а вывод этой ячейки в книге есть на этой странице)",
        "pause": "── Enter: глава {number}, q: выход ── ",
        "no_chapter": "главы {number} нет; {known}",
        "chapters_are": "есть главы {numbers}",
        "no_book": "главы книги не установлены",
        "grading": "проверка {path}:",
        "grading_exercise": "проверка {path}: {name} (глава {chapter}: {title})",
        "could_not_grade": "файл не удалось проверить",
        "printed": "файл напечатал (последние строки):",
        "loading": "загрузка файла",
        "could_not_load": "{name}: файл не загрузился; из {total} проверок не выполнено ни одной.",
        "hidden": "(скрытая)",
        "hint": "подсказка",
        "hint_level": "подсказка {level}",
        "see_chapter": " (см. главу {chapter})",
        "points": "[баллов: {points}]",
        "score": " Баллы: {score} из {top}.",
        "all_passed": "{name}: все проверки пройдены ({total}).{score}",
        "stopped": "{name}: {message} Пройдено проверок: {passed} из {total}.{score}",
        "passed_of": "пройдено проверок: {passed} из {total}",
        "failed_n": "не пройдено: {n}",
        "todo_n": "не сделано: {n}",
        "closer_hint": " (--hint {level} даст более точную подсказку)",
        "fix_and_again": "{name}: {parts}.{score} Исправьте строки с пометками FAIL и TODO и проверьте снова{more}.",
        "note": "примечание: {message}",
        "not_done": "ещё не сделано",
        "seed": "случайные входы взяты с зерном {seed} (проверьте снова с --seed {seed}, чтобы их повторить)",
        "head": "{file}  {exercise}  {checks}  {score}  {status}  {time}",
        "col_file": "файл",
        "col_exercise": "упражнение",
        "col_checks": "проверки",
        "col_score": "баллы",
        "col_status": "итог",
        "col_time": "время",
        "files_passed": "Все проверки прошли файлов: {passed} из {total}{extra}.",
        "n_failed": "не пройдено: {n}",
        "n_timeout": "превысили время: {n}",
        "n_crashed": "аварийно завершились: {n}",
        "n_error": "не проверено: {n}",
        "n_missing": "не сдано: {n}",
        "details": "подробности: python -m microtape grade ФАЙЛ [--hint 2], или --format json, чтобы получить всё",
        "wrote_document": "записан {output} ({format}: баллы {score} из {top})",
        "interrupted": "\ngrade: остановлено ({name}); проверено путей: {done} из {total}, все запущенные процессы завершены.",
        "wrote": "записан {path}",
        "work_then_grade": "\nРешите задание в файле и проверьте его, например: {command}",
        "no_starters": "заготовки упражнений не установлены вместе с этой копией microtape",
        "no_exercises": "упражнения не установлены вместе с этой копией microtape",
        "list_head": f"{'упражнение':<28}{'глава':>7}  {'вид':<10}{'минуты':>7}{'баллы':>7}  название",
        "list_total": "Упражнений: {count}, всего около {minutes} минут и {points} баллов.",
        "not_copying": "не копирую: {names} уже есть (ваша работа?).",
        "pick_another": "Выберите другую папку или добавьте --force, чтобы перезаписать: {command}",
    },
}
"""Every message of the terminal, by language then key (the same keys in every language)."""


def default_language(environ: Mapping[str, str] | None = None) -> str:
    """The language when no ``--lang`` is given: ``MICROTAPE_LANG`` if set, else ``"en"``.

    An unknown value is an error that names the allowed ones.

    Examples:
        >>> from microtape.i18n.messages import default_language
        >>> default_language({}), default_language({"MICROTAPE_LANG": "ru"})
        ('en', 'ru')
        >>> try:
        ...     default_language({"MICROTAPE_LANG": "de"})
        ... except ValueError as err:
        ...     print(str(err).splitlines()[0])
        MICROTAPE_LANG='de': not a language of microtape's command line.
    """
    value = (os.environ if environ is None else environ).get(ENV, "").strip()
    if not value:
        return "en"
    if value.lower() in LANGUAGES:
        return value.lower()
    raise InvalidArgumentError(
        f"{ENV}={value!r}: not a language of microtape's command line.\n"
        f"  The languages are {', '.join(LANGUAGES)}.\n"
        f"  hint: export {ENV}=ru for Russian, or unset {ENV} (English); --lang overrides it for one command.",
        op=ENV, value=value,
    )


def say(lang: str, key: str, **values: object) -> str:
    """The message ``key`` in ``lang`` (English for an unknown language), formatted with ``values``.

    Examples:
        >>> from microtape.i18n.messages import say
        >>> say("ru", "figure_saved", path="/tmp/a.png")
        '(рисунок сохранён в /tmp/a.png)'
        >>> say("en", "see_chapter", chapter=4)
        ' (see chapter 4)'
    """
    table = MESSAGES.get(lang, MESSAGES["en"])
    return table[key].format(**values)
