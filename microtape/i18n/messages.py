"""The terminal's own words (English, the catalog's msgids) and the language of a command.

What the command line itself prints (the tour's markers, the pause prompt,
the words of a grading report and of the class table) is in ``MESSAGES``,
keyed by a short name; its Russian is in the package's catalog
(``microtape/locale/ru/LC_MESSAGES/microtape.po``). ``say(lang, key,
**values)`` formats one message in ``lang``.

The language of ``tour``, ``exercises`` and ``grade`` is ``--lang``, else
``mt.set_language``'s, else the environment variable ``MICROTAPE_LANG``,
else English (``default_language``); ``set_language`` is ``mt.set_language``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

from .. import language
from ..errors import InvalidArgumentError
from ..language import ENV, LANGUAGES, Language, tr

__all__ = ["ENV", "LANGUAGES", "Language", "MESSAGES", "default_language", "say", "set_language"]

MESSAGES: Final[Mapping[str, str]] = {
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
}
"""Every message of the terminal in English, by key (the msgids of their translations)."""


def default_language(environ: Mapping[str, str] | None = None) -> Language:
    """The language when no ``--lang`` is given: ``mt.set_language``'s, else ``MICROTAPE_LANG`` if set, else ``"en"``.

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
    picked = language.chosen()
    if environ is None and picked is not None:
        return picked
    value = (os.environ if environ is None else environ).get(ENV, "").strip()
    if not value:
        return "en"
    if value.lower() in LANGUAGES:
        return language.current({ENV: value})
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
    return tr(MESSAGES[key], lang).format(**values)


def set_language(lang: Language | None) -> None:
    """Print everything microtape says in ``lang`` ("en" or "ru") from now on; ``None`` goes back to ``MICROTAPE_LANG``.

    Error messages and their hints, reports, the tour, the grader: all of
    them read the language when they print. The exception classes and their
    attributes are the same in every language; only the words change.

    Args:
        lang: ``"ru"`` or ``"en"``, or ``None`` for the default
            (``MICROTAPE_LANG``, else English).

    Raises:
        InvalidArgumentError: ``lang`` is not a language of microtape.

    Examples:
        >>> mt.set_language("ru")
        >>> try:
        ...     mt.ones((2, 3)).sum(axis=2)
        ... except mt.InvalidArgumentError as err:
        ...     print(err.axis, str(err).splitlines()[-1].split(":")[0].strip())
        2 подсказка
        >>> mt.set_language(None)
    """
    if lang is not None and lang not in LANGUAGES:
        raise InvalidArgumentError(
            f"set_language({lang!r}): not a language of microtape.\n"
            f"  The languages are {', '.join(LANGUAGES)}.\n"
            f"  hint: mt.set_language(\"ru\")",
            op="set_language", value=lang,
        )
    language.use(lang)
