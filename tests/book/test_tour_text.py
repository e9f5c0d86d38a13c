"""The tour's prose reads as text, in English and in Russian, from the book's own catalogs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po as babel_read_po

from microtape.book import prose as _prose

from microtape.book import resources as _resources

from microtape.book import tour as _tour

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = ROOT / "docs" / "locale" / "ru" / "LC_MESSAGES"
MARKUP = re.compile(r"\\[A-Za-z]+|:[a-z]+:`|\.\. [a-z-]+::|``|\$")


def chapter_prose() -> list[tuple[Path, str]]:
    """Every chapter's title docstring and prose cells, as (chapter, reST)."""
    found = []
    for path in _resources.chapter_files():
        doc, cells = _tour.split_cells(path.read_text(encoding="utf-8"))
        found += [(path, doc), *((path, prose) for prose, _, _ in cells if prose)]
    return found


def cyrillic_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum("а" <= c.lower() <= "я" or c in "ёЁ" for c in letters) / max(1, len(letters))


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_no_latex_or_sphinx_markup_reaches_the_terminal(lang: str) -> None:
    leftovers = []
    for path, rst in chapter_prose():
        text = _prose.render(rst, _prose.chapter_catalog(path.stem, lang), lang)
        prose_lines = [line for line in text.splitlines() if not line.startswith("   ")]  # code examples stay code
        leftovers += [f"{path.name}: {line}" for line in prose_lines if MARKUP.search(line)]
    assert not leftovers, "markup left in the tour's text:\n" + "\n".join(leftovers[:20])


def test_formulas_and_references_become_words() -> None:
    assert _prose.latex_to_text(r"w \leftarrow w - \eta \, dL/dw") == "w ← w - η dL/dw"
    assert _prose.latex_to_text(r"\frac{\partial L}{\partial w} = 18 \cdot 1.5 - 36") == "∂L/∂w = 18 · 1.5 - 36"
    assert _prose.latex_to_text(r"\sqrt{4 \cdot 0.25^2} = 0.5") == "√(4 · 0.25²) = 0.5"
    text = _prose.plain("See :chapter:`4`, :doc:`tfjs`, :class:`~microtape.Tensor` and :ref:`the table <tab>`.")
    assert text == "See chapter 4, tfjs, mt.Tensor and the table."
    assert _prose.plain("See :chapter:`4`.", "ru") == "See глава 4."


def test_the_po_reader_agrees_with_babel() -> None:
    catalogs = sorted(CATALOGS.rglob("*.po"))
    assert catalogs
    for po in catalogs:
        with po.open("rb") as f:
            catalog = babel_read_po(f)
        expected = {str(m.id): str(m.string) for m in catalog if m.id and m.string and not m.fuzzy}
        assert _prose.read_po(po) == expected, po.name


def test_every_prose_block_of_the_tour_is_a_message_of_its_chapter() -> None:
    """The tour finds its paragraphs by the same ids Sphinx gives them; none falls back by accident."""
    missing = []
    for path, rst in chapter_prose():
        po = CATALOGS / "book" / f"{path.stem}.po"
        assert po.is_file(), f"no Russian catalog for {path.name}"
        with po.open("rb") as f:
            known = {str(m.id) for m in babel_read_po(f) if m.id}
        missing += [f"{path.name}: {msgid[:80]}" for msgid in _prose.message_ids(rst) if msgid not in known]
    assert not missing, "the tour looks up ids that the catalogs do not have:\n" + "\n".join(missing[:20])


@pytest.mark.slow
def test_tour_lang_ru_speaks_russian() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "microtape", "tour", "--lang", "ru", "--chapter", "2", "--no-pause"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    prose = "\n".join(
        line for line in result.stdout.splitlines() if not line.startswith("    ") and not line.startswith("   ")
    )
    assert cyrillic_share(prose) > 0.6, prose[:2000]
    assert "Автоматическое вычисление градиентов" in prose
    assert "-17.5" in result.stdout  # the chapter still runs: real computed output


LEFTOVER = re.compile(
    r"\*\*\S|(?<![\w*])\*[^\s*][^*]*[^\s*]\*(?![\w*])|`|:[a-z]+:`|<https?:|\w`_|\.\. [a-z-]+::|\\[A-Za-z]+"
)
"""reST or Markdown left in a line of prose: strong, emphasis, backticks, roles, link targets, directives, LaTeX."""


def test_inline_markup_becomes_plain_words() -> None:
    assert _prose.plain("The **culprit**, *central*, ``a * b`` and `docs <https://x.org>`_.") == "The culprit, central, a * b and docs."
    assert _prose.render("* one *item*\n* two", None, "ru") == "- one item\n- two"


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_whole_tour_prints_no_markup_and_speaks_its_language(lang: str, tmp_path: Path) -> None:
    """Every line of prose the tour prints (not code, not program output) is clean text; the markers are in ``lang``."""
    result = subprocess.run(
        [sys.executable, "-m", "microtape", "tour", "--lang", lang, "--no-pause"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, encoding="utf-8",
        env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path), "PYTHONIOENCODING": "utf-8"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    prose = [line for line in result.stdout.splitlines() if not re.match(r"\s+[│▸]", line)]
    leftovers = [line for line in prose if LEFTOVER.search(line.replace("**", "") if "(*, -, **)" in line else line)]
    assert len(prose) > 500 and not leftovers, "markup in the tour's text:\n" + "\n".join(leftovers[:20])
    saved = [line for line in result.stdout.splitlines() if ".png" in line]
    assert saved, "no figure marker: is matplotlib installed?"
    marker = "(рисунок сохранён в " if lang == "ru" else "(figure saved as "
    assert all(marker in line for line in saved), saved[:3]
    if lang == "ru":
        assert "figure saved" not in result.stdout and "left out here" not in result.stdout


def test_the_no_plots_marker_is_in_the_tours_language() -> None:
    tainted: set[str] = set()
    out = _tour.execute_cell("import matplotlib.pyplot as plt\nplt.plot([1])", {}, tainted=tainted, lang="ru")
    assert out.startswith("(здесь пропущен график: matplotlib не установлен") and "pip install 'microtape[book]'" in out
    assert _tour.NO_PLOTS in _tour.execute_cell("plt.show()", {}, tainted=tainted)
