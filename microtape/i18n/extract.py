"""Bring the Russian tables into the package's catalog: ``python -m microtape.i18n.extract``.

Collects every English message with its Russian from the tables
(``messages.MESSAGES``, ``command_line.HELP``, ``starters_ru.STARTERS_RU``,
``exercise_checks_ru.EXACT``), merges them into
``microtape/locale/ru/LC_MESSAGES/microtape.po`` (an entry already in the
catalog keeps its msgstr) and prints every msgid whose Russian is missing or
fuzzy; ``--check`` exits 1 when there is one. A new English message added to
a table with its Russian beside it is brought in by running this once.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .catalog import DOMAIN, LOCALE_DIR, read_po

__all__ = ["collect", "main", "write_po"]


def collect() -> dict[str, str]:
    """English -> Russian from every table (an empty Russian where a table has none)."""
    from .command_line import HELP
    from .exercise_checks_ru import EXACT
    from .messages import MESSAGES
    from .starters_ru import STARTERS_RU

    pairs: dict[str, str] = {}
    for table in (MESSAGES, HELP):
        for key, english in table["en"].items():
            pairs.setdefault(english, table.get("ru", {}).get(key, ""))
    for extra in (STARTERS_RU, EXACT):
        for english, russian in extra.items():
            pairs.setdefault(english, russian)
    return pairs


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def write_po(path: Path, pairs: dict[str, str]) -> None:
    """Write ``pairs`` as a gettext catalog, sorted by msgid."""
    lines = ['msgid ""', 'msgstr ""', '"Content-Type: text/plain; charset=UTF-8\\n"', '"Language: ru\\n"', ""]
    for english in sorted(pairs):
        if english:
            lines += [f"msgid {_quote(english)}", f"msgstr {_quote(pairs[english])}", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Merge the tables into the catalog and report what has no Russian."""
    args = sys.argv[1:] if argv is None else argv
    path = LOCALE_DIR / "ru" / "LC_MESSAGES" / f"{DOMAIN}.po"
    old = read_po(path) if path.is_file() else {}
    pairs = collect()
    for english, (russian, fuzzy) in old.items():
        if english in pairs and russian and not fuzzy:
            pairs[english] = russian
    missing = sorted(e for e, r in pairs.items() if e and not r)
    if "--check" not in args:
        write_po(path, pairs)
    for english in missing:
        print(f"no Russian: {english!r}")
    print(f"{path}: {len(pairs)} messages, {len(missing)} without Russian")
    return 1 if missing and "--check" in args else 0


if __name__ == "__main__":
    raise SystemExit(main())
