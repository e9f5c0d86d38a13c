"""One vocabulary: every glossary term has one Russian translation, and each chapter one name.

The glossary (``docs/glossary.rst``) is a Sphinx glossary; its Russian
catalog gives each term the Russian word the Russian edition uses. The
variant translations that once crept into the catalogs («свёртки» for
reductions, «persistent-лента», «корутина», slot variables three ways,
…) are listed below with the word that replaces them, and no Russian text of
the project may use them again: not the book's catalogs, not the package's
(``microtape/locale/ru/LC_MESSAGES/microtape.po``, what microtape prints), not its Python files. The chapters are named the same way in every place
that names them: their own headings, the book's contents, the teachers' page
and the exercises' titles, in both editions.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "docs" / "locale" / "ru" / "LC_MESSAGES"

# English term -> (its Russian term, the variants that must not be used for it).
VOCABULARY: dict[str, tuple[str, tuple[str, ...]]] = {
    "reduction": ("редукция", (r"св[её]рт(к|ы?ва)",)),  # «свёртка» is a convolution in Russian ML
    "persistent tape": ("постоянная лента", (r"persistent-лент", r"персистентн")),
    "non-persistent tape": ("одноразовая лента", (r"непостоянн\w* лент",)),
    "gradient tape": ("лента градиентов", (r"градиентн\w* лент",)),
    "batch": ("батч", (r"\bпакет\w*\s+(данных|примеров|x\b)", r"строк\w* пакета", r"мини-пакет")),  # «пакет» is a Python package
    "coroutine": ("сопрограмма", (r"корутин",)),
    "sparkline": ("спарклайн", (r"мини-график", r"микрограф")),
    "slot": ("слот оптимизатора", (r"слот-переменн", r"переменн\w*-слот", r"ячейк\w* (момента|состояния|оптимизатора)")),
    "gradient check": ("проверка градиентов", (r"докаж", r"доказ\w* (его|её|их) (верност|правильност)")),
    "broadcasting": ("трансляция (broadcasting)", (r"бродкаст", r"вещани")),
    "exploding gradient": ("взрывающийся градиент", (r"взрывн\w* градиент",)),
    "vanishing gradient": ("затухающий градиент", (r"исчезающ\w* градиент",)),
    "gradient clipping": ("обрезка градиентов", (r"клиппинг", r"отсечени\w* градиент")),
    "finite differences": ("конечные разности", (r"конечн\w* приращени",)),
    "kink": ("излом", (r"\bкинк", r"точк\w* перегиба")),
    "culprit op": ("виновная операция", (r"операци\w*-виновни", r"виновник\w* операци")),
    "learning rate": ("скорость обучения", (r"темп\w* обучения", r"коэффициент\w* обучения")),
}

# Words of the book that are not glossary terms but were once used in two ways.
PHRASES: tuple[tuple[str, str], ...] = (
    (r"громк\w* ошибк|ошибк\w* громк|Первая громкая", "«явная ошибка»"),
    (r"\bтих(ая|ую|ой) (ошибк|утечк)|ошибка тихая", "«скрытая ошибка», «незаметная утечка»"),
    (r"градиенты многих переменных", "«градиенты по многим переменным»"),
    (r"``Scaler`` узна[её]т", "«вычисляет» (a scaler computes, it does not learn)"),
    (r"\b[Пп]отер(я|ю|ей)\b(?! (значимости|точности))", "«потери», «функция потерь» (the glossary's loss)"),
    (r"\b[Оо]бычн\w* лент", "«одноразовая лента» (the glossary's non-persistent tape)"),
    (r"отбрасывани", "«ошибка усечения» (truncation error, as chapter 4 says)"),
    (r"громк\w* вход|усилени\w* \{gain\}", "«входы полного размера», ``gain`` (as chapter 6 says)"),
)

# The chapters' names by number: English, Russian, and the Russian section of the text each follows.
# A chapter beyond the Russian text has no section: its index row says where to read it instead,
# and its heading is its own (BEYOND_THE_TEXT).
CHAPTERS: dict[int, tuple[str, str, str]] = {
    0: ("Gradient debugging", "Отладка градиентов", "Отладка градиентов"),
    1: ("Variables", "Переменные", "Функция tf.variable и обновление параметров"),
    2: ("Automatic gradients", "Автоматические градиенты", "Автоматическое вычисление градиентов"),
    3: ("The tape", "Лента градиентов", "Отслеживание операций с tf.GradientTape"),
    4: ("Checking gradients", "Проверка градиентов", "Проверка градиентов"),
    5: ("The computation graph", "Граф вычислений", "Особенности работы с графом вычислений"),
    6: ("In practice", "На практике", "Практическое применение"),
    7: ("Analysis tools", "Инструменты анализа", "Встроенные функции для анализа"),
    8: ("Casebook", "Разбор случаев", "— (после раздела 7)"),
    9: ("Numerics", "Численные методы", "— (после раздела 4)"),
}
BEYOND_THE_TEXT: dict[int, tuple[str, str]] = {
    8: ("Casebook: real gradient bugs", "Разбор случаев: настоящие ошибки в градиентах"),
    9: ("Numerics: stable losses, modes and precision", "Численные методы: устойчивые потери, режимы и точность"),
}
"""Headings (English, Russian) of the chapters that follow no section of the Russian text."""


def catalog(path: Path) -> dict[str, str]:
    """msgid -> msgstr of a catalog's translated, current messages."""
    with path.open("rb") as f:
        return {m.id: m.string for m in read_po(f) if isinstance(m.id, str) and m.id and isinstance(m.string, str)}


def russian_texts() -> list[tuple[str, str]]:
    """(where, text) for every Russian message of every catalog, and every Python file of the package."""
    texts = [(f"{p.relative_to(LOCALE)}: {mid[:50]!r}", text) for p in sorted(LOCALE.rglob("*.po")) for mid, text in catalog(p).items()]
    texts += [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in sorted((ROOT / "microtape").rglob("*.py"))]
    package = ROOT / "microtape" / "locale" / "ru" / "LC_MESSAGES" / "microtape.po"  # what microtape prints in Russian
    texts += [(f"microtape.po: {mid[:50]!r}", text) for mid, text in catalog(package).items()]
    return texts


def glossary_terms() -> list[str]:
    """The terms of every ``.. glossary::`` block in docs/glossary.rst, in order."""
    terms: list[str] = []
    inside = False
    for line in (ROOT / "docs" / "glossary.rst").read_text(encoding="utf-8").splitlines():
        if line.startswith(".. glossary::"):
            inside = True
        elif inside and line and not line.startswith(" "):
            inside = False
        elif inside and re.fullmatch(r"   \S.*", line):
            terms.append(line.strip())
    return terms


def test_the_glossary_is_a_sphinx_glossary_with_every_term() -> None:
    terms = glossary_terms()
    assert len(terms) >= 40, terms
    assert len(terms) == len(set(terms)), "a term is defined twice"
    missing = sorted(set(VOCABULARY) - set(terms))
    assert not missing, f"terms the vocabulary test knows but the glossary does not define: {missing}"


@pytest.mark.parametrize("term", sorted(VOCABULARY))
def test_each_term_has_its_one_russian_translation(term: str) -> None:
    russian, _ = VOCABULARY[term]
    assert catalog(LOCALE / "glossary.po").get(term) == russian


@pytest.mark.parametrize("term", sorted(VOCABULARY))
def test_no_variant_translation_of_a_term_anywhere(term: str) -> None:
    russian, variants = VOCABULARY[term]
    found = [
        f"{where}: …{text[max(0, m.start() - 30):m.end() + 30]}…"
        for where, text in russian_texts()
        for variant in variants
        for m in re.finditer(variant, text, flags=re.IGNORECASE)
    ]
    assert not found, f"{term!r} is «{russian}» in the Russian edition (see the glossary), not:\n" + "\n".join(found)


@pytest.mark.parametrize(("pattern", "instead"), PHRASES)
def test_no_phrase_that_was_replaced(pattern: str, instead: str) -> None:
    found = [f"{where}: {m.group(0)!r}" for where, text in russian_texts() for m in re.finditer(pattern, text)]
    assert not found, f"write {instead}:\n" + "\n".join(found)


def test_the_variant_check_catches_a_variant() -> None:
    """The patterns are live: each one matches the variant it was written for."""
    samples = {"reduction": "свёртки по осям", "coroutine": "обучающая корутина", "slot": "слот-переменные",
               "batch": "каждой строки пакета x", "sparkline": "рисует мини-графиками", "persistent tape": "забытая persistent-лента"}
    for term, sample in samples.items():
        assert any(re.search(v, sample, flags=re.IGNORECASE) for v in VOCABULARY[term][1]), term
    assert not any(re.search(v, "wheel-пакет microtape", flags=re.IGNORECASE) for v in VOCABULARY["batch"][1])
    for sample in ("потеря ровно падает", "Обычная лента освобождает", "побеждает отбрасывание", "громкие входы"):
        assert any(re.search(pattern, sample) for pattern, _ in PHRASES), sample
    assert not any(re.search(pattern, "потеря значимости, функция потерь") for pattern, _ in PHRASES)


def test_russian_headings_end_without_a_period() -> None:
    headings = {line for path in [*ROOT.glob("tutorials/*.py"), *ROOT.glob("docs/*.rst")]
                for line in heading_lines(path)}
    ends = [f"{mid!r} -> {text!r}" for p in LOCALE.rglob("*.po") for mid, text in catalog(p).items()
            if mid in headings and text.rstrip().endswith(".")]
    assert not ends, "\n".join(ends)


def heading_lines(path: Path) -> list[str]:
    """The section titles of a reST page or a sphinx-gallery chapter (its ``# `` prose lines)."""
    lines = [re.sub(r"^# ?", "", line) if path.suffix == ".py" else line for line in path.read_text(encoding="utf-8").splitlines()]
    return [a.strip() for a, b in zip(lines, lines[1:]) if a.strip() and re.fullmatch(r"([=\-~^])\1{2,}", b.strip())]


# -- one set of chapter names -------------------------------------------------------------


def chapter_files() -> dict[int, Path]:
    """The book's chapters by number, from the files (``tutorials/NN_*.py``)."""
    return {int(p.name[:2]): p for p in sorted(ROOT.glob("tutorials/[0-9][0-9]_*.py"))}


def test_every_chapter_has_its_names() -> None:
    assert len(chapter_files()) >= 8
    assert sorted(chapter_files()) == sorted(CHAPTERS), "a chapter file without its row in CHAPTERS, or a row without its file"
    assert set(BEYOND_THE_TEXT) <= set(CHAPTERS)


@pytest.mark.parametrize("number", sorted(chapter_files()))
def test_a_chapter_is_named_the_same_everywhere(number: int) -> None:
    english, russian, section = CHAPTERS[number]
    path = chapter_files()[number]
    heading = heading_lines(path)[0]
    book = catalog(LOCALE / "book" / f"{path.stem}.po")
    if number in BEYOND_THE_TEXT:
        own, own_ru = BEYOND_THE_TEXT[number]
        assert heading == own and own.startswith(f"{english}: "), f"{path.name}'s own heading"
        assert book[heading] == own_ru and own_ru.startswith(f"{russian}: "), "the Russian edition's heading"
    else:
        assert heading == f"{english} ({section})", f"{path.name}'s own heading"
        assert book[heading] == (russian if russian == section else f"{russian} ({section})"), "the Russian edition's heading"
    index = (ROOT / "docs" / "index.rst").read_text(encoding="utf-8")
    assert f"   {number} | {section} | {english} |" in index, "the book's contents (docs/index.rst)"
    teachers = catalog(LOCALE / "teachers.po")
    row = f"Read chapter {number}, {english}"
    assert row in (ROOT / "docs" / "teachers.rst").read_text(encoding="utf-8"), "the teachers' page"
    assert teachers[row] == f"Глава {number}, «{russian}»", "the Russian teachers' page"


def test_exercise_titles_start_with_their_chapters_name() -> None:
    from microtape.classroom.catalog import exercises

    teachers = catalog(LOCALE / "teachers.po")
    for ex in exercises():
        english, russian, _ = CHAPTERS[ex.chapter]
        assert ex.title.startswith(f"{english}: "), ex.title
        assert teachers[ex.title].startswith(f"{russian}: "), teachers[ex.title]
