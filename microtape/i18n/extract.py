"""Keep the package's catalog in step with the code: ``python -m microtape.i18n.extract [--check]``.

The translatable messages (msgids) are found where the code writes them:

* the English tables: ``messages.MESSAGES``, ``command_line.HELP``,
  ``command_line.ARGPARSE`` and ``command_line.ERRORS``, the grader's
  patterns (``grader_ru.HELPER_PATTERNS``, ``exercise_checks_ru.PATTERNS_CHECKS``:
  a msgid is the English regular expression, its msgstr the Russian template);
* every call ``tr("...")`` or ``N_("...")`` (a word kept as a value, translated
  where it is printed) in the package whose first argument is a literal
  (as ``xgettext`` finds ``_("...")``);
* the starters' texts: comments, function docstrings, ``TODO`` strings of
  ``tutorials/exercises/ex*.py`` (``starters_ru.starter_texts``);
* the shipped checks' names, hints and titles: ``tests/classroom/test_grade_russian.py``
  requires their Russian; here any string of a check file counts as known.

Without ``--check`` the catalog is rewritten: a new msgid gets an empty
msgstr for a translator to fill, an entry no source holds any more is marked
obsolete (``#~``); fuzzy entries stay fuzzy. ``--check`` writes nothing and
exits 1 when a msgid has no Russian, a Russian is fuzzy, or an entry is
obsolete (``tests/i18n/test_catalog.py`` runs it).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..language import DOMAIN, LOCALE_DIR, read_po
from .command_line import ARGPARSE, ERRORS, HELP
from .exercise_checks_ru import PATTERNS_CHECKS
from .grader_ru import HELPER_PATTERNS
from .messages import MESSAGES
from .starters_ru import starter_texts

__all__ = ["CATALOG", "Status", "main", "msgids", "status", "tr_literals", "write_po"]

PACKAGE: Final = Path(__file__).resolve().parent.parent
CATALOG: Final = LOCALE_DIR / "ru" / "LC_MESSAGES" / f"{DOMAIN}.po"
"""The Russian catalog of the package's messages."""


def _exercises_folder() -> Path:
    checkout = PACKAGE.parent / "tutorials" / "exercises"
    return checkout if checkout.is_dir() else PACKAGE / "_tutorials" / "exercises"


def tr_literals(source: str) -> Iterator[str]:
    """The msgids a module's source writes: the literal first argument of every ``tr(...)`` and ``N_(...)`` call.

    Examples:
        >>> list(tr_literals('x = tr("a message {n}").format(n=1)\\ny = tr(name)\\n'))
        ['a message {n}']
    """
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tr", "N_") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value


def msgids() -> dict[str, str]:
    """Every translatable message of the package -> where it is written (for the reports).

    Examples:
        >>> found = msgids()
        >>> found["hint"]
        'messages.MESSAGES'
    """
    found: dict[str, str] = {}
    for where, texts in (
        ("messages.MESSAGES", MESSAGES.values()), ("command_line.HELP", HELP.values()),
        ("command_line.ARGPARSE", ARGPARSE.values()), ("command_line.ERRORS", ERRORS),
        ("grader_ru.HELPER_PATTERNS", HELPER_PATTERNS), ("exercise_checks_ru.PATTERNS_CHECKS", PATTERNS_CHECKS),
    ):
        for text in texts:
            found.setdefault(text, where)
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_tutorials" in path.parts:
            continue
        for text in tr_literals(path.read_text(encoding="utf-8")):
            found.setdefault(text, str(path.relative_to(PACKAGE.parent)))
    for path in sorted(_exercises_folder().glob("ex*.py")):
        for text in starter_texts(path.read_text(encoding="utf-8")):
            found.setdefault(text, path.name)
    return found


def _check_strings() -> set[str]:
    """Every string constant of the shipped checks and the graders' helpers (names, hints, titles among them)."""
    strings: set[str] = set()
    for path in [*sorted((_exercises_folder() / "checks").glob("ex*.py")), PACKAGE / "classroom" / "check_tools.py"]:
        if path.is_file():
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    strings.add(node.value)
    return strings


@dataclass(frozen=True, slots=True)
class Status:
    """How the catalog stands against the code: what lacks Russian, what is fuzzy, what nothing uses."""

    missing: list[str]
    """msgids the code has and the catalog has no Russian for."""
    fuzzy: list[str]
    """msgids whose Russian is marked fuzzy (a guess not yet checked)."""
    obsolete: list[str]
    """msgids in the catalog that no source holds any more."""

    @property
    def ok(self) -> bool:
        """Nothing missing, fuzzy or obsolete."""
        return not (self.missing or self.fuzzy or self.obsolete)


def status(path: Path = CATALOG) -> Status:
    """Compare the catalog at ``path`` with the code's messages.

    Examples:
        >>> status().ok
        True
    """
    entries = read_po(path) if path.is_file() else {}
    wanted = msgids()
    known = set(wanted) | _check_strings()
    return Status(
        missing=sorted(m for m in wanted if not entries.get(m, ("", False))[0]),
        fuzzy=sorted(m for m, (_, fuzzy) in entries.items() if fuzzy),
        obsolete=sorted(m for m in entries if m not in known),
    )


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def write_po(path: Path, entries: dict[str, tuple[str, bool]], obsolete: Collection[str] = ()) -> None:
    """Write ``entries`` (msgid -> (msgstr, fuzzy)) as a gettext catalog sorted by msgid; ``obsolete`` ones as ``#~``.

    Examples:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.po"
        >>> write_po(p, {"hint": ("подсказка", False), "old": ("старое", False)}, {"old"})
        >>> print(p.read_text(encoding="utf-8").split("\\n\\n", 1)[1])
        msgid "hint"
        msgstr "подсказка"
        <BLANKLINE>
        #~ msgid "old"
        #~ msgstr "старое"
        <BLANKLINE>
    """
    lines = ['msgid ""', 'msgstr ""', '"Content-Type: text/plain; charset=UTF-8\\n"', '"Language: ru\\n"', ""]
    for msgid in sorted(m for m in entries if m not in obsolete):
        msgstr, fuzzy = entries[msgid]
        lines += ["#, fuzzy"] if fuzzy else []
        lines += [f"msgid {_quote(msgid)}", f"msgstr {_quote(msgstr)}", ""]
    for msgid in sorted(m for m in entries if m in obsolete):
        lines += [f"#~ msgid {_quote(msgid)}", f"#~ msgstr {_quote(entries[msgid][0])}", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Bring new msgids into the catalog (or, with ``--check``, only report); print what needs a translator."""
    args = sys.argv[1:] if argv is None else argv
    found = status()
    if "--check" not in args:
        entries = read_po(CATALOG) if CATALOG.is_file() else {}
        for msgid in msgids():
            entries.setdefault(msgid, ("", False))
        write_po(CATALOG, entries, set(found.obsolete))
    for label, items in (("no Russian", found.missing), ("fuzzy", found.fuzzy), ("obsolete", found.obsolete)):
        for msgid in items:
            print(f"{label}: {msgid!r}")
    print(f"{CATALOG}: {len(found.missing)} without Russian, {len(found.fuzzy)} fuzzy, {len(found.obsolete)} obsolete")
    return 1 if "--check" in args and not found.ok else 0


if __name__ == "__main__":
    raise SystemExit(main())
