"""Refresh the Russian edition's catalogs after the English text changed.

Run from the repository root::

    python docs/update_catalogs.py

It extracts every message of the book with Sphinx's gettext builder (the
chapters are not executed: ``-D plot_gallery=0``) into a temporary folder,
then merges the templates into ``docs/locale/ru/LC_MESSAGES/**.po`` with
``sphinx-intl update``: new messages arrive untranslated, changed ones fuzzy,
and removed ones become obsolete (``#~``) entries, which this script then
deletes (a translation that no page uses only misleads the next translator;
git keeps the old text). Translate the new and fuzzy messages (and delete the
``#, fuzzy`` flag); the test suite fails until every message is translated and
none is fuzzy.

``python docs/update_catalogs.py --check`` changes nothing and lists the
catalogs whose messages differ from the sources, and every untranslated, fuzzy
or obsolete message (the test suite runs the same checks).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from babel.messages.pofile import read_po

DOCS = Path(__file__).resolve().parent
LOCALE = DOCS / "locale"
LANGUAGES = ("ru",)
COMMAND = "python docs/update_catalogs.py"
THEME_CATALOG = "sphinx.po"  # the theme's own strings (Previous, Next, ...): no template, kept by hand


def extract(docs: Path, out: Path) -> None:
    """Write the .pot templates of ``docs`` into ``out``."""
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "gettext", "-D", "plot_gallery=0", str(docs), str(out)],
        check=True,
    )


def msgids(path: Path) -> set[str]:
    """The (non-obsolete) message ids of a .po or .pot file."""
    with path.open("rb") as f:
        catalog = read_po(f)
    return {str(m.id) for m in catalog if m.id}


def untranslated(path: Path) -> list[str]:
    """Messages of a .po file that are untranslated or fuzzy, as 'fuzzy: ...' / 'untranslated: ...'."""
    with path.open("rb") as f:
        catalog = read_po(f)
    found = []
    for m in catalog:
        if not m.id:
            continue
        if m.fuzzy:
            found.append(f"fuzzy: {m.id}")
        elif not m.string:
            found.append(f"untranslated: {m.id}")
    return found


def obsolete(path: Path) -> list[str]:
    """The obsolete (``#~``) messages of a .po file, as 'obsolete: ...'."""
    with path.open("rb") as f:
        catalog = read_po(f)
    return [f"obsolete: {msgid}" for msgid in catalog.obsolete]


def drop_obsolete(path: Path) -> int:
    """Delete the obsolete (``#~``) entries of a .po file in place; return how many were dropped.

    Works on the text, entry by entry (entries are separated by blank lines), so
    the other entries keep their wrapping and the diff shows only what went.
    """
    text = path.read_text(encoding="utf-8")
    entries = text.split("\n\n")
    kept = [e for e in entries if not _is_obsolete(e)]
    if len(kept) != len(entries):
        path.write_text("\n\n".join(kept).rstrip("\n") + "\n", encoding="utf-8")
    return len(entries) - len(kept)


def _is_obsolete(entry: str) -> bool:
    lines = [line for line in entry.strip("\n").splitlines() if line.strip()]
    return bool(lines) and any(line.startswith("#~") for line in lines) and all(line.startswith("#") for line in lines)


def problems(pot_dir: Path, locale_dir: Path = LOCALE) -> list[str]:
    """Everything ``--check`` reports: stale catalogs, and untranslated, fuzzy or obsolete messages."""
    found = [p for lang in LANGUAGES for p in stale(pot_dir, locale_dir, lang)]
    for po in sorted(locale_dir.rglob("*.po")):
        found += [f"{po.relative_to(locale_dir)}: {msg[:90]}" for msg in untranslated(po) + obsolete(po)]
    return found


def stale(pot_dir: Path, locale_dir: Path = LOCALE, language: str = "ru") -> list[str]:
    """Problems found comparing the templates in ``pot_dir`` with the catalogs: one line each."""
    catalogs = locale_dir / language / "LC_MESSAGES"
    problems = []
    templates = {p.relative_to(pot_dir).with_suffix(".po") for p in pot_dir.rglob("*.pot")}
    for rel in sorted(templates):
        po = catalogs / rel
        if not po.is_file():
            problems.append(f"{rel}: no catalog")
            continue
        want, have = msgids(pot_dir / rel.with_suffix(".pot")), msgids(po)
        for msg in sorted(want - have):
            problems.append(f"{rel}: new message {msg[:70]!r}")
        for msg in sorted(have - want):
            problems.append(f"{rel}: message no longer in the sources {msg[:70]!r}")
    for po in sorted(catalogs.rglob("*.po")):
        rel = po.relative_to(catalogs)
        if rel not in templates and rel.name != THEME_CATALOG:
            problems.append(f"{rel}: no page has this catalog any more")
    return problems


def update(pot_dir: Path, locale_dir: Path = LOCALE) -> None:
    for language in LANGUAGES:
        subprocess.run(
            [sys.executable, "-m", "sphinx_intl", "update", "-p", str(pot_dir), "-l", language, "-d", str(locale_dir)],
            check=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report catalogs that are out of date")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        pot_dir = Path(tmp) / "gettext"
        extract(DOCS, pot_dir)
        if args.check:
            found = problems(pot_dir)
            print("\n".join(found) or "the catalogs are up to date and fully translated")
            return 1 if found else 0
        update(pot_dir)
    for po in sorted(LOCALE.rglob("*.po")):
        drop_obsolete(po)
    print("updated; now translate the new and fuzzy messages in docs/locale/ru/LC_MESSAGES/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
