"""The book builds with ``sphinx -W`` in English and in Russian, shows real computed output,
breaks on a broken chapter, and its Russian catalogs are complete and up to date.

Both editions are the session fixture ``editions`` (``tests/conftest.py``, built by
``tests/book_builds.py``): one copy of ``docs/``, ``tutorials/`` and the package in a
temporary folder, both editions built there in subprocesses, in the layout the README
gives (English in ``out/``, Russian in ``out/ru/``), with ``-W`` and no ``dot`` on PATH,
so the repository's own ``docs/book/`` and ``docs/_build/`` are never touched. The same
build gives ``test_notebooks.py`` the notebooks it runs. The tests below that need a build
of their own (twice the same edition, a broken chapter, the gettext catalogs) make it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path
from types import ModuleType

import pytest

from .book_builds import NO_DOT_PATH, Editions, build, copy_project, sphinx

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("index", "api", "tfjs", "teachers", "exercises", "glossary", "bridge", "book/index")
REFRESH = "python docs/update_catalogs.py"


def page_text(path: Path) -> str:
    """The visible text of a generated page, without tags."""
    return re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8"))


def prose(path: Path) -> str:
    """The text of a page's paragraphs and headings, without code or program output."""
    html = path.read_text(encoding="utf-8")
    html = html.split('<article role="main"', 1)[-1].split("</article>", 1)[0]
    html = re.sub(r"<(pre|code|math|table)\b.*?</\1>", " ", html, flags=re.DOTALL)
    found = re.findall(r"<(p|h1|h2|h3|li)\b[^>]*>(.*?)</\1>", html, flags=re.DOTALL)
    return " ".join(re.sub(r"<[^>]+>", "", body) for _, body in found)


def cyrillic_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum("а" <= c.lower() <= "я" or c in "ёЁ" for c in letters) / max(1, len(letters))


def download_prose(name: str, text: str) -> str:
    """The prose of a downloadable chapter: a notebook's Markdown cells, a script's docstring and comment lines."""
    if name.endswith(".ipynb"):
        cells = json.loads(text)["cells"]
        markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        return re.sub(r"```.*?```|`[^`]*`|\$[^$]*\$", " ", markdown, flags=re.DOTALL)
    docstring = text.split('"""')[1] if text.startswith('"""') else ""
    comments = re.findall(r"^# (?!%%)(.*)$", text, flags=re.MULTILINE)
    return re.sub(r"``[^`]*``|:\w+:`[^`]*`", " ", docstring + "\n" + "\n".join(comments))


def load_catalog_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("update_catalogs", ROOT / "docs" / "update_catalogs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_english_edition_builds_with_real_output(editions: Editions) -> None:
    assert editions.english.returncode == 0, f"sphinx -W failed:\n{editions.english.stderr[-6000:]}"
    out = editions.en
    for page in PAGES:
        assert (out / f"{page}.html").is_file(), f"{page}.html was not generated"
    chapter = page_text(out / "book" / "02_automatic_gradients.html")
    # The gradient of the text's linear model at w=0.5, b=0, printed by data_sync():
    # only a chapter that really ran can show it.
    assert "[-17.5]" in chapter and "[-5.5]" in chapter, "chapter 2's computed gradients are missing"
    api = page_text(out / "api.html")
    import microtape as mt

    missing = [name for name in [*mt.__all__, *mt.__builtin_named__] if f"microtape.{name}" not in api and f"mt.{name}" not in api]
    assert not missing, f"names in microtape.__all__ without an API entry: {missing}"


def test_russian_edition_builds_and_reads_in_russian(editions: Editions) -> None:
    assert editions.russian.returncode == 0, f"sphinx -W -D language=ru failed:\n{editions.russian.stderr[-6000:]}"
    out = editions.ru
    for page in PAGES:
        assert (out / f"{page}.html").is_file(), f"ru/{page}.html was not generated"
    assert re.search(r'<html [^>]*lang="ru"', (out / "index.html").read_text(encoding="utf-8"))
    chapter = page_text(out / "book" / "02_automatic_gradients.html")
    assert "[-17.5]" in chapter and "[-5.5]" in chapter, "the Russian chapter 2 lost its computed output"
    english_prose = {
        page.relative_to(out).as_posix(): round(cyrillic_share(prose(page)), 2)
        for page in [*sorted((out / "book").glob("[0-9][0-9]_*.html")), *(out / f"{p}.html" for p in PAGES)]
        if page.name != "api.html" and cyrillic_share(prose(page)) < 0.6
    }
    assert not english_prose, f"pages whose prose is not mostly Russian (share of Cyrillic letters): {english_prose}"
    # The API page: its own words are Russian, and it says that the entries (docstrings) are English.
    api = (out / "api.html").read_text(encoding="utf-8")
    headings = " ".join(re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<h[12]>(.*?)</h[12]>", api, flags=re.DOTALL))
    assert cyrillic_share(headings) > 0.6, headings
    assert "на английском" in page_text(out / "api.html")
    gallery = (out / "book" / "index.html").read_text(encoding="utf-8")
    captions = re.findall(r'sphx-glr-thumbnail-title">([^<]*)<', gallery)
    assert captions and all(cyrillic_share(c) > 0.6 for c in captions), f"gallery captions: {captions}"
    # furo's own words (Previous/Next, "On this page") come from docs/locale/ru/LC_MESSAGES/sphinx.po.
    chapter_html = (out / "book" / "03_gradient_tape.html").read_text(encoding="utf-8")
    assert "Next" not in page_text(out / "book" / "03_gradient_tape.html").split("Copyright")[0]
    assert "Далее" in chapter_html or "Следующ" in chapter_html


def test_each_page_links_to_itself_in_the_other_edition(editions: Editions) -> None:
    assert editions.english.returncode == editions.russian.returncode == 0
    link = re.compile(r'class="sidebar-edition-link" href="([^"]+)"')
    checked = 0
    for here, there in ((editions.en, editions.ru), (editions.ru, editions.en)):
        for page in here.rglob("*.html"):
            rel = page.relative_to(here)
            if rel.parts[0] in ("ru", "_static", "_sources", "_downloads", "_images"):
                continue
            found = link.findall(page.read_text(encoding="utf-8"))
            assert found, f"{page} has no link to the other edition"
            target = (page.parent / found[0]).resolve()
            assert target == (there / rel).resolve(), f"{page} links to {target}, not to {there / rel}"
            assert target.is_file(), f"{page} links to {target}, which was not built"
            checked += 1
    assert checked >= 2 * len(PAGES)


# Words a Russian page may show outside code and program output: proper names, and the names of
# programs, formats and libraries, which Russian text writes in Latin letters too.
ALLOWED_ENGLISH = frozenset(
    """microtape Python TensorFlow TF js Jupyter NumPy PyTorch JAX Keras Sphinx Furo Graphviz matplotlib
    asyncio pytest mypy pip pickle dataclass autograd fork Gradescope Classroom GitHub JavaScript Linux
    Windows macOS Ctrl Adam Adamax Adagrad Adadelta RMSProp Jacobian Unicode IEEE True False None inf Inf
    float int softplus Markdown""".split()
)


def code_names() -> frozenset[str]:
    """microtape's public names and their attributes: prose may name them without code markup."""
    import microtape as mt

    names = set(mt.__all__) | set(mt.__builtin_named__)
    for name in list(names):
        names |= {attr for attr in dir(getattr(mt, name, None)) if not attr.startswith("_")}
    return frozenset(names)


def _drop_balanced(html: str, opening: str, tag: str) -> str:
    """``html`` without every element that starts with ``opening`` (nested ``<tag>``s counted)."""
    out, pos = [], 0
    while (start := html.find(opening, pos)) != -1:
        out.append(html[pos:start])
        depth, end = 0, len(html)
        for m in re.finditer(rf"<(/?){tag}\b[^>]*>", html[start:]):
            depth += -1 if m[1] else 1
            if depth == 0:
                end = start + m.end()
                break
        pos = end
    return "".join(out) + html[pos:]


def english_words(html: str, glossary: bool = False) -> list[str]:
    """Latin-letter words a reader meets on a page, outside code, program output and formulas.

    Left out: code (``<pre>``, ``<code>``), formulas, scripts, program output (sphinx-gallery's
    rendered HTML output), elements marked ``lang="en"`` (the link to the English edition, the
    API page's docstrings, which are English by design: see docs/_ext/editions.py), names
    (dotted, snake_case, CamelCase, ALLCAPS, ``f()``, one or two letters such as ``dx``),
    English glosses in brackets after a Russian word (``отложенным (pending)``), quoted
    English messages («...»), and the glossary's column of English terms. Kept: alt texts and
    button labels.
    """
    html = re.sub(r"<(script|style|pre|code|math|head)\b.*?</\1>", " ", html, flags=re.DOTALL)
    html = _drop_balanced(_drop_balanced(html, '<dl class="py', "dl"), '<dl lang="en" class="py', "dl")
    html = _drop_balanced(html, '<div class="output_subarea', "div")
    for tag in ("p", "div", "span", "a", "section", "dl", "td", "li"):
        html = re.sub(rf'<{tag}\b[^>]*\blang="en"[^>]*>.*?</{tag}>', " ", html, flags=re.DOTALL)
    if glossary:  # its last table (the book's own words) pairs each Russian word with the English one
        html = re.sub(r"<td><p>[^<а-яёА-ЯЁ]*</p></td>", " ", html)
    labels = re.findall(r'\b(?:alt|aria-label|placeholder)="([^"]*)"', html)
    text = unescape(re.sub(r"<[^>]+>", " ", html) + " " + " ".join(labels))
    text = re.sub(r"([а-яёА-ЯЁ»]\s*)\([^()]*\)", r"\1", text)  # a gloss: отложенным (pending)
    text = re.sub(r"«[^«»а-яёА-ЯЁ]*»", " ", text)  # a quoted English message
    words = []
    for token in re.findall(r"[^\s,;:!?«»—–]+", text):
        core = token.strip(".'’\"")
        if not re.search(r"[A-Za-z]", core) or re.search(r"[а-яёА-ЯЁ]", core):
            continue
        if re.search(r"[^A-Za-z'’-]", core) or re.fullmatch(r"[A-Z0-9]{2,}s?|[a-z]+[A-Z]\w*|[A-Z]\w*[A-Z]\w*|\w{1,2}", core):
            continue  # a name: tf.grads, clip_by_value, f(), x², 1e-3, NaN, ALLCAPS, camelCase, dx
        words += [w for w in re.split(r"['’-]", core) if len(w) > 1 and w not in ALLOWED_ENGLISH and w not in code_names()]
    return words


def test_the_english_word_finder() -> None:
    html = (
        '<p>Градиент <code>tf.grads</code> и tf.variable, NaN, dx, x², adadelta() <span>Download now</span></p>'
        '<p>отложенным (pending), сообщение «The result must be a tensor.»</p>'
        '<pre>print("hello")</pre><img alt="01 walks downhill"><a lang="en" href="x">This page in English</a>'
        '<dl class="py function"><dt>grad</dt><dd><dl><dt>x</dt></dl><p>Docstring words</p></dd></dl>'
    )
    assert english_words(html) == ["Download", "now", "walks", "downhill"]


def test_russian_pages_have_no_english_outside_code(editions: Editions) -> None:
    assert editions.russian.returncode == 0, editions.russian.stderr[-3000:]
    found: dict[str, set[str]] = {}
    for page in sorted(editions.ru.rglob("*.html")):
        rel = page.relative_to(editions.ru).as_posix()
        if rel.startswith("_") or rel in ("genindex.html", "py-modindex.html"):
            continue  # the indexes list code names, and only them
        for word in english_words(page.read_text(encoding="utf-8"), glossary=rel == "glossary.html"):
            found.setdefault(word, set()).add(rel)
    report = [f"{word!r} on {sorted(pages)[:3]}" for word, pages in sorted(found.items())]
    assert not found, f"{len(found)} English words on Russian pages (outside code and output):\n" + "\n".join(report[:60])


def test_every_page_names_both_editions_in_its_head(editions: Editions) -> None:
    assert editions.english.returncode == editions.russian.returncode == 0
    alternate = re.compile(r'<link rel="alternate" hreflang="([\w-]+)" href="([^"]+)">')
    for here, there, lang in ((editions.en, editions.ru, "en"), (editions.ru, editions.en, "ru")):
        for page in sorted(here.rglob("*.html")):
            rel = page.relative_to(here)
            if rel.parts[0] in ("ru", "_static", "_sources", "_downloads", "_images"):
                continue
            head = page.read_text(encoding="utf-8").split("</head>", 1)[0]
            links = dict(alternate.findall(head))
            assert set(links) == {"en", "ru", "x-default"}, f"{page}: hreflang links {links}"
            english = editions.en / rel if lang == "en" else there / rel
            assert (page.parent / links[lang]).resolve() == page.resolve(), f"{page}: its own hreflang link"
            assert (page.parent / links["en"]).resolve() == english.resolve() and english.is_file()
            assert (page.parent / links["x-default"]).resolve() == english.resolve()
            russian = here / rel if lang == "ru" else there / rel
            assert (page.parent / links["ru"]).resolve() == russian.resolve() and russian.is_file()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_two_builds_give_the_same_pages(editions: Editions) -> None:
    """Nothing volatile (a memory address in a repr, a timing, a date) reaches a page.

    The English edition is built a second time, from scratch, into another folder and every
    page is compared byte for byte: nothing is stripped before comparing.
    """
    assert editions.english.returncode == 0
    again = build(editions.project, "out_again")
    assert again.returncode == 0, again.stderr[-3000:]
    first, second = editions.en, editions.project / "out_again"
    pages = sorted(p.relative_to(first) for p in first.rglob("*.html") if "ru" not in p.relative_to(first).parts[:1])
    assert pages
    differ = [str(p) for p in pages if (first / p).read_bytes() != (second / p).read_bytes()]
    assert not differ, f"pages that differ between two builds: {differ}"
    assert not re.search(r"object at 0x[0-9a-f]+", "".join((first / p).read_text(encoding="utf-8") for p in pages))


def test_catalogs_are_fully_translated() -> None:
    tool = load_catalog_tool()
    catalogs = sorted((ROOT / "docs" / "locale").rglob("*.po"))
    assert catalogs, "no catalogs under docs/locale"
    problems = [f"{po.relative_to(ROOT)}: {msg[:100]}" for po in catalogs for msg in tool.untranslated(po)]
    assert not problems, (
        f"{len(problems)} messages are untranslated or fuzzy; translate them (and drop the fuzzy flag):\n"
        + "\n".join(problems[:40])
    )


def test_catalogs_have_no_obsolete_entries() -> None:
    """A ``#~`` entry is a translation no page uses: ``update_catalogs.py`` deletes them."""
    tool = load_catalog_tool()
    found = [f"{po.relative_to(ROOT)}: {msg[:100]}" for po in sorted((ROOT / "docs" / "locale").rglob("*.po")) for msg in tool.obsolete(po)]
    assert not found, f"{len(found)} obsolete entries; run `{REFRESH}`, which deletes them:\n" + "\n".join(found[:40])


def test_the_catalog_check_fails_on_obsolete_entries_and_the_update_drops_them(tmp_path: Path) -> None:
    tool = load_catalog_tool()
    pot_dir, catalogs = tmp_path / "pot", tmp_path / "locale" / "ru" / "LC_MESSAGES"
    pot_dir.mkdir()
    catalogs.mkdir(parents=True)
    (pot_dir / "page.pot").write_text('msgid ""\nmsgstr ""\n\nmsgid "Kept"\nmsgstr ""\n', encoding="utf-8")
    po = catalogs / "page.po"
    po.write_text(
        'msgid ""\nmsgstr ""\n"Language: ru\\n"\n\nmsgid "Kept"\nmsgstr "Оставлено"\n\n'
        '#~ msgid "Gone"\n#~ msgstr "Ушло"\n\n#, fuzzy\n#~ msgid "Gone too"\n#~ msgstr "Тоже"\n',
        encoding="utf-8",
    )
    found = tool.problems(pot_dir, tmp_path / "locale")
    assert found == ["ru/LC_MESSAGES/page.po: obsolete: Gone", "ru/LC_MESSAGES/page.po: obsolete: Gone too"], found
    assert tool.drop_obsolete(po) == 2
    assert tool.problems(pot_dir, tmp_path / "locale") == []
    assert tool.msgids(po) == {"Kept"} and "Оставлено" in po.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_catalogs_match_the_sources(tmp_path: Path) -> None:
    tool = load_catalog_tool()
    project = copy_project(tmp_path)
    proc = sphinx(project, "-b", "gettext", "-D", "plot_gallery=0", "docs", "pot")
    assert proc.returncode == 0, proc.stderr[-4000:]
    problems = tool.stale(project / "pot", ROOT / "docs" / "locale", "ru")
    assert not problems, (
        f"the Russian catalogs are out of date with the sources; run `{REFRESH}` from the repository root, "
        "then translate the new and fuzzy messages:\n" + "\n".join(problems[:40])
    )


def test_the_tape_figure_is_drawn(editions: Editions) -> None:
    """Chapter 3 shows its tape as the SVG ``tape.to_svg()`` draws, built with no ``dot`` on PATH."""
    assert shutil.which("dot", path=NO_DOT_PATH) is None
    for out, grad in ((editions.en, "|grad|"), (editions.ru, "|град|")):
        tape_page = (out / "book" / "03_gradient_tape.html").read_text(encoding="utf-8")
        match = re.search(r'<svg xmlns="http://www.w3.org/2000/svg" class="mt-tape".*?</svg>', tape_page, flags=re.DOTALL)
        assert match, f"chapter 3's drawing of the tape is missing in {out}"
        drawing = match.group(0)
        assert drawing.count('class="mt-node"') == 11 and ">line_w<" in drawing and f"{grad} 3.221" in drawing
        assert "sphinx_gallery_" not in tape_page  # the configuration comments are not shown


def test_every_chapter_has_a_figure_for_its_thumbnail(editions: Editions) -> None:
    """sphinx-gallery makes a chapter's gallery thumbnail from its first figure (or a placeholder)."""
    gallery = (editions.en / "book" / "index.html").read_text(encoding="utf-8")
    for chapter in sorted(p.stem for p in (ROOT / "tutorials").glob("[0-9][0-9]_*.py")):
        assert f"sphx_glr_{chapter}_thumb.png" in gallery, f"{chapter} is not in the gallery"
        page = (editions.en / "book" / f"{chapter}.html").read_text(encoding="utf-8")
        if chapter.startswith("03_"):
            # its figure is the SVG of to_svg(), inline; the thumbnail is a picture of it (docs/_static)
            assert 'class="mt-tape"' in page
            thumb = editions.en / "_images" / f"sphx_glr_{chapter}_thumb.png"
            assert thumb.is_file() and thumb.stat().st_size > 1000, thumb
            continue
        assert re.search(rf'<img [^>]*src="[^"]*sphx_glr_{chapter}_0\d\d\.png"', page), (
            f"{chapter} draws no figure, so its thumbnail is sphinx-gallery's placeholder"
        )


def test_notebooks_are_markdown_and_say_how_to_install(editions: Editions) -> None:
    notebooks = sorted((editions.project / "docs" / "book").glob("[0-9][0-9]_*.ipynb"))
    assert len(notebooks) == len(list((ROOT / "tutorials").glob("[0-9][0-9]_*.py")))
    for notebook in notebooks:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        first = "".join(cells[0]["source"])
        assert cells[0]["cell_type"] == "code" and "%pip install" in first and "microtape" in first, first
        markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        outside_code = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
        for markup in (":func:`", ":class:`", ":meth:`", ":attr:`", ":doc:`", ":chapter:`", ".. note::", ".. "):
            assert markup not in outside_code, f"{notebook.name} still has reST markup {markup!r}"
        assert "``" not in outside_code, f"{notebook.name} still has reST ``literals``"


def test_each_edition_offers_downloads_in_its_language(editions: Editions) -> None:
    """The Russian pages' notebooks, scripts and zips are Russian (made from the catalogs); the English ones English."""
    import zipfile

    assert editions.english.returncode == editions.russian.returncode == 0
    for out, russian in ((editions.en, False), (editions.ru, True)):
        downloads = out / "_downloads"
        chapters = sorted(p for p in downloads.rglob("[0-9][0-9]_*.*") if p.suffix in (".py", ".ipynb", ".zip"))
        assert len(chapters) == 3 * len(list((ROOT / "tutorials").glob("[0-9][0-9]_*.py"))), chapters
        for path in chapters:
            if path.suffix == ".zip":
                with zipfile.ZipFile(path) as archive:
                    files = {name: archive.read(name).decode("utf-8") for name in archive.namelist()}
            else:
                files = {path.name: path.read_text(encoding="utf-8")}
            for name, text in files.items():
                share = cyrillic_share(download_prose(name, text))
                assert (share > 0.5) == russian, f"{path.relative_to(out)}:{name}: Cyrillic share of the prose {share:.2f}"
        for name in ("book_python.zip", "book_jupyter.zip"):
            (archive_path,) = downloads.rglob(name)
            with zipfile.ZipFile(archive_path) as archive:
                shares = {n: cyrillic_share(download_prose(n, archive.read(n).decode("utf-8"))) for n in archive.namelist()}
            assert shares and all((v > 0.5) == russian for v in shares.values()), f"{archive_path.relative_to(out)}: {shares}"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_chapter_3_draws_the_tape_without_dot(tmp_path: Path) -> None:
    """With no Graphviz on PATH the tape chapter still draws its tape (to_svg) and shows to_dot's text."""
    env = {**os.environ, "PATH": str(tmp_path), "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-W", "error", str(ROOT / "tutorials" / "03_gradient_tape.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    # to_dot's text names the data by the order the tape read it, the same in every process
    assert "digraph tape {" in proc.stdout and "rankdir=TB" in proc.stdout, proc.stdout[:3000]
    assert 't0 [shape=box, label="constant 1\\n(4,)"];' in proc.stdout, proc.stdout[:3000]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_chapter_that_raises_breaks_the_build(tmp_path: Path) -> None:
    project = copy_project(tmp_path)
    # Named to sort first, so sphinx-gallery reaches it (and aborts) before the real chapters.
    (project / "tutorials" / "00_aaa_broken.py").write_text(
        '"""\nA broken chapter\n================\n\nIt raises.\n"""\n\n'
        "# %%\n"
        'raise RuntimeError("this chapter is broken on purpose")\n',
        encoding="utf-8",
    )
    proc = build(project)
    assert proc.returncode != 0, "a chapter that raises must fail the build"
    assert "this chapter is broken on purpose" in proc.stderr + proc.stdout


def test_conf_py_points_only_at_files_that_exist() -> None:
    """Paths that docs/conf.py tells a reader to open (docs/..., *.md) are in the repository."""
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    named = set(re.findall(r"\b(?:docs/[\w./-]+\.\w+|[\w-]+\.md)\b", conf))
    assert named, "conf.py names no file at all: this test looks for the wrong pattern"
    missing = sorted(name for name in named if not (ROOT / name).exists())
    assert not missing, f"docs/conf.py mentions files that do not exist: {missing}"


@pytest.mark.parametrize("name", ["editions", "notebooks"])
def test_extension_examples(name: str) -> None:
    """The examples in docs/_ext's docstrings (link layout, reST roles to Markdown) hold."""
    import doctest

    spec = importlib.util.spec_from_file_location(f"_ext_{name}", ROOT / "docs" / "_ext" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0, result


def test_the_engine_page_runs_as_written() -> None:
    """The examples on "How the engine works" print what the page says (run as a doctest)."""
    import doctest

    import microtape as mt

    result = doctest.testfile(
        str(ROOT / "docs" / "engine.rst"), module_relative=False, globs={"mt": mt}, optionflags=doctest.ELLIPSIS
    )
    assert result.attempted >= 5 and result.failed == 0, result


@pytest.mark.parametrize("name, code", [
    ("mul's VJP", "def _mul_vjp("), ("emit", "def emit("), ("the record", "def _record("), ("the backward loop", "def walk("),
])
def test_the_engine_page_shows_the_real_code_in_both_editions(editions: Editions, name: str, code: str) -> None:
    """The listings are the package's own functions (literalinclude by name): a moved function
    breaks the -W build, and both editions show the same code."""
    assert editions.english.returncode == editions.russian.returncode == 0
    for out in (editions.en, editions.ru):
        page = unescape(re.sub(r"<[^>]+>", "", (out / "engine.html").read_text(encoding="utf-8")))
        assert code in page, f"{out.name}/engine.html lacks {name}"
    ru = (editions.ru / "engine.html").read_text(encoding="utf-8")
    assert "Как устроен движок" in ru


def test_the_browser_runtime_is_used_only_as_pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/_ext/pyodide_runtime.py: a missing runtime says why and what to run; a tarball that is
    not the pinned one (pyproject.toml's sha256) is refused, not used."""
    spec = importlib.util.spec_from_file_location("pyodide_runtime", ROOT / "docs" / "_ext" / "pyodide_runtime.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "pyodide_runtime", tool)  # its dataclass looks its module up
    spec.loader.exec_module(tool)
    monkeypatch.setenv("MICROTAPE_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm here
    pin = tool.pin(ROOT)
    assert pin.name == f"pyodide-{pin.version}.tgz" and re.fullmatch(r"[0-9a-f]{64}", pin.sha256)
    with pytest.raises(tool.RuntimeMissing, match="npm is not installed"):
        tool.ensure(pin)
    with pytest.raises(tool.RuntimeMissing, match=r"is not there; fetch it with python3 docs/_ext/pyodide_runtime\.py"):
        tool.ensure(pin, allow_fetch=False)
    (tmp_path / pin.name).write_bytes(b"not the runtime")
    with pytest.raises(tool.RuntimeMissing, match="not the pinned"):
        tool.ensure(pin)
    assert tool.cached(pin) is None
