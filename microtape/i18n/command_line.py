"""The command line's parser, with its help in English or in Russian.

Our own help strings are in ``HELP``, in English; their Russian is in the
package's catalog. argparse's words ("usage:", "options", its error
messages) come from gettext's ``argparse`` domain, which has no Russian
catalog; ``Parser`` and its formatter say them from ``ARGPARSE`` and
``ERRORS`` through our catalog instead (standard library only, nothing
global is patched).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, NoReturn

from ..language import LANGUAGES, tr
from .messages import default_language

__all__ = ["ARGPARSE", "ERRORS", "HELP", "Parser", "build_parser", "language_of"]

HELP: Final[Mapping[str, str]] = {
    "description": "microtape: learn gradient debugging",
    "commands": "commands",
    "lang": "language of the output and of this help (en, ru; default: $MICROTAPE_LANG, else en)",
    "tour": "walk through the book's chapters in the terminal",
    "chapter": "show only chapter N (0-7)",
    "no_pause": "do not wait for Enter between chapters",
    "selfcheck": "gradient-check every primitive against finite differences",
    "exercises": "copy the starter exercises into a folder (never the solutions), or --list them",
    "folder": "where to put them (made if missing)",
    "list": "list the exercises: chapter, kind, expected minutes, points, title",
    "force": "overwrite files that are already there",
    "notebook": "write each starter as a Jupyter notebook (.ipynb), which grade accepts too",
    "grade": "check exercise files or folders of them, each in its own process with a time limit",
    "paths": "exercise files (.py or .ipynb), or folders searched for them",
    "timeout": "seconds each file may take (default 10)",
    "format": "text (default), json (microtape's document), gradescope (results.json), classroom50 (result.json)",
    "json": "the same as --format json",
    "output": "write the document (or the text) to FILE",
    "checks": "a teacher's folder of check files: hidden checks added to the public ones",
    "assignment": "an assignment's TOML file: its exercises, their points, its hidden checks; each PATH is one submission",
    "require": "the exercises an assignment asks for, e.g. ex04e,ex05b (each at its own points); each PATH is one submission",
    "seed": "seed of the checks' random inputs (default: drawn, and printed)",
    "hint": "hint level after a failed check (default 1)",
    "jobs": "files graded at the same time (default: CPUs)",
    "memory": "memory limit per file where the OS allows (default 1024, 0: none)",
    "dashboard": "the live training page in a browser (--demo trains chapter 6's recurrent net)",
    "demo": "train the book's recurrent net (exploding, then clipped) while serving the page",
    "host": "address to bind (default 127.0.0.1: this machine only)",
    "port": "port to serve on (default 8765; 0 picks a free one)",
    "steps": "training steps (default 400)",
    "delay": "seconds to pause after each step so you can watch (default 0.03)",
    "exit_when_done": "stop serving when training ends instead of waiting for Ctrl-C",
    "not_seconds": "{text!r} is not a number of seconds",
    "not_finite": "{text!r} is not a finite number of seconds (a limit of nan or inf would be no limit)",
}
"""The help of every command and option in English, by key (their Russian is in the catalog)."""

ARGPARSE: Final[Mapping[str, str]] = {
    "usage": "usage: ", "positional": "positional arguments", "options": "options",
    "help": "show this help message and exit", "error": "{prog}: error: {message}\n",
}
"""argparse's own words, which it takes from gettext's ``argparse`` domain (no Russian catalog ships with
Python): said here in English and translated from the package's catalog instead."""

ERRORS: Final[tuple[str, ...]] = (
    r"invalid choice: (.*) \(choose from (.*)\)",
    r"the following arguments are required: (.*)",
    r"unrecognized arguments: (.*)",
    r"expected one argument",
    r"invalid (\w+) value: (.*)",
    r"ambiguous option: (.*) could match (.*)",
    r"^argument ([^:]+): ",
    r"is not a number of seconds",
)
"""argparse's error messages, as patterns (in order of trial); each pattern's msgstr in the catalog is its
replacement (``\\1`` for a group)."""


def _translated_error(message: str, lang: str) -> str:
    for pattern in ERRORS:
        replacement = tr(pattern, lang)
        if replacement != pattern:
            message = re.sub(pattern, replacement, message)
    return message


def _formatter(lang: str) -> type[argparse.HelpFormatter]:
    words = {key: tr(english, lang) for key, english in ARGPARSE.items()}

    class Formatter(argparse.HelpFormatter):
        def add_usage(self, usage: str | None, actions: object, groups: object, prefix: str | None = None) -> None:
            super().add_usage(usage, actions, groups, words["usage"] if prefix is None else prefix)  # type: ignore[arg-type]

    return Formatter


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose help and errors read in ``lang``: usage, section titles, ``-h``, error lines.

    Add arguments to its groups ``positional`` and ``options``, whose titles
    are in ``lang`` (argparse's own groups would be titled in English).

    Examples:
        >>> from microtape.i18n.command_line import Parser
        >>> parser = Parser("ru", prog="demo", description="пример")
        >>> _ = parser.positional.add_argument("N", type=int, help="число")
        >>> print(parser.format_help())
        использование: demo [-h] N
        <BLANKLINE>
        пример
        <BLANKLINE>
        позиционные аргументы:
          N           число
        <BLANKLINE>
        параметры:
          -h, --help  показать эту справку и выйти
        <BLANKLINE>
    """

    lang: str
    """The language of this parser's help and errors."""
    positional: argparse._ArgumentGroup  # argparse names its group class privately; add_argument_group returns it
    """The group of positional arguments, titled in ``lang``."""
    options: argparse._ArgumentGroup
    """The group of options (``-h`` first), titled in ``lang``."""

    def __init__(self, lang: str, **kwargs: object) -> None:
        self.lang = lang if lang in LANGUAGES else "en"
        words = {key: tr(english, self.lang) for key, english in ARGPARSE.items()}
        super().__init__(formatter_class=_formatter(self.lang), add_help=False, **kwargs)  # type: ignore[arg-type]
        self.positional = self.add_argument_group(words["positional"])
        self.options = self.add_argument_group(words["options"])
        self.options.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS, help=words["help"])

    def error(self, message: str) -> NoReturn:
        """Print the usage and the error in this parser's language, then exit with status 2."""
        self.print_usage(sys.stderr)
        self.exit(2, tr(ARGPARSE["error"], self.lang).format(prog=self.prog, message=_translated_error(message, self.lang)))


def language_of(argv: Sequence[str]) -> str:
    """The language a command runs in: its ``--lang`` (if it names one), else ``MICROTAPE_LANG``, else ``"en"``.

    An unknown ``MICROTAPE_LANG`` raises ``InvalidArgumentError`` naming the
    languages, unless ``--lang`` is given (an explicit choice wins).

    Examples:
        >>> from microtape.i18n.command_line import language_of
        >>> language_of(["tour", "--lang", "ru"]), language_of(["--lang=ru", "grade", "x.py", "--lang=en"])
        ('ru', 'en')
    """
    given: str | None = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        value = arg.partition("=")[2] if arg.startswith("--lang=") else argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else None
        given = value if value is not None else given  # the last --lang wins, as argparse has it
    if given is not None:
        return given if given in LANGUAGES else "en"  # argparse reports a wrong --lang itself
    return default_language()


def _seconds(lang: str) -> object:
    def seconds(text: str) -> float:
        """``--timeout``: a finite number of seconds (the grader checks the range and says it)."""
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(tr(HELP["not_seconds"], lang).format(text=text)) from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(tr(HELP["not_finite"], lang).format(text=text))
        return value

    return seconds


def build_parser(prog: str, lang: str = "en") -> Parser:
    """The parser of ``python -m microtape``, its help in ``lang``; every ``--lang`` defaults to ``lang``.

    Examples:
        >>> from microtape.i18n.command_line import build_parser
        >>> args = build_parser("microtape", "ru").parse_args(["tour", "--chapter", "2"])
        >>> args.command, args.chapter, args.lang
        ('tour', 2, 'ru')
        >>> build_parser("microtape", "ru").parse_args(["--lang", "ru", "tour", "--lang", "en"]).lang
        'en'
    """
    lang = lang if lang in LANGUAGES else "en"
    text = {key: tr(english, lang) for key, english in HELP.items()}
    parser = Parser(lang, prog=prog, description=text["description"])
    parser.options.add_argument("--lang", choices=LANGUAGES, default=lang, help=text["lang"])
    sub = parser.add_subparsers(  # each subcommand is a Parser too, in the same language
        dest="command", required=True, title=text["commands"], metavar="{tour,selfcheck,exercises,grade,dashboard}", parser_class=Parser
    )

    def command(name: str) -> Parser:
        made = sub.add_parser(name, help=text[name], description=text[name], lang=lang)
        assert isinstance(made, Parser)
        made.options.add_argument("--lang", choices=LANGUAGES, default=argparse.SUPPRESS, help=text["lang"])
        return made

    t = command("tour")
    t.options.add_argument("--chapter", type=int, default=None, metavar="N", help=text["chapter"])
    t.options.add_argument("--no-pause", action="store_true", help=text["no_pause"])
    command("selfcheck")
    e = command("exercises")
    e.positional.add_argument("folder", metavar="DIR", type=Path, nargs="?", default=None, help=text["folder"])
    e.options.add_argument("--list", action="store_true", help=text["list"])
    e.options.add_argument("--force", action="store_true", help=text["force"])
    e.options.add_argument("--notebook", action="store_true", help=text["notebook"])
    g = command("grade")
    g.positional.add_argument("paths", nargs="+", metavar="PATH", help=text["paths"])
    g.options.add_argument("--timeout", type=_seconds(lang), default=10.0, metavar="S", help=text["timeout"])  # type: ignore[arg-type]
    g.options.add_argument("--format", choices=("text", "json", "gradescope", "classroom50"), default="text", help=text["format"])
    g.options.add_argument("--json", action="store_true", help=text["json"])
    g.options.add_argument("--output", metavar="FILE", default=None, help=text["output"])
    g.options.add_argument("--checks", metavar="DIR", default=None, help=text["checks"])
    g.options.add_argument("--assignment", metavar="FILE", default=None, help=text["assignment"])
    g.options.add_argument("--require", metavar="NAME,...", default=None, help=text["require"])
    g.options.add_argument("--seed", type=int, default=None, metavar="N", help=text["seed"])
    g.options.add_argument("--hint", type=int, default=1, choices=(1, 2, 3), help=text["hint"])
    g.options.add_argument("--jobs", type=int, default=None, metavar="N", help=text["jobs"])
    g.options.add_argument("--memory", type=int, default=1024, metavar="MB", help=text["memory"])
    d = command("dashboard")
    d.options.add_argument("--demo", action="store_true", help=text["demo"])
    d.options.add_argument("--host", default="127.0.0.1", metavar="IP", help=text["host"])
    d.options.add_argument("--port", type=int, default=8765, metavar="N", help=text["port"])
    d.options.add_argument("--steps", type=int, default=400, metavar="N", help=text["steps"])
    d.options.add_argument("--delay", type=float, default=0.03, metavar="S", help=text["delay"])
    d.options.add_argument("--exit-when-done", action="store_true", help=text["exit_when_done"])
    return parser
