"""The book's two editions, English and Russian (``-D language=ru``), and how they meet.

* Layout: the English edition is built into ``<out>/`` and the Russian one
  into ``<out>/ru/``. Every page links to the same page in the other edition
  (``html-page-context`` computes the relative link, the sidebar template
  ``docs/_templates/sidebar/language.html`` shows it).
* Every page's head names both editions for search engines and browsers:
  ``<link rel="alternate" hreflang="en|ru|x-default">`` (English is the default).
* The Russian edition's title and copyright line are Russian, unless set on
  the command line. furo's own words (Previous, Next ...) come from
  ``docs/locale/ru/LC_MESSAGES/sphinx.po``; the few that furo writes into its
  templates without a gettext call (the labels of its buttons, "@pradyunsg's"
  in the footer) are replaced from ``THEME_WORDS`` by the template override
  ``docs/_templates/page.html``. sphinx-gallery's "Out:" label is CSS
  (``docs/_static/editions.css``).
* The build tells the chapters which language to draw their figures in
  (``MICROTAPE_LANG``, read by :mod:`microtape.book.figures`).
* Code blocks are translated (``gettext_additional_targets = ["literal-block"]``
  in conf.py) when they have something to translate: a comment, or a
  ``microtape tour`` command (the Russian edition adds ``--lang ru``). Every
  other code block stays out of the catalogs, so a change to code without
  comments never makes a catalog stale; so does code a page includes from the
  package (``literalinclude``): it is the package's own text in every edition.
* sphinx-gallery's download links (``:download:`Download Jupyter notebook: ...```)
  are translated like any paragraph: they are not lists of names.
* Reference entries that autodoc generates from docstrings are code
  documentation: they change with the code and stay English, so they are
  marked untranslatable and never enter ``api.po``; so are lists of names and
  module titles, which change whenever ``__all__`` does, and paragraphs with
  no English in them (numbers, the Russian titles the English edition
  quotes). The API page's own prose is translated.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from html import escape

from docutils import nodes
from markupsafe import Markup
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.config import Config

EDITIONS = {"en": "This page in English", "ru": "Эта страница по-русски"}  # each in its own language
SUBDIR = {"en": "", "ru": "ru/"}  # where each edition lives, relative to the English root
TITLES = {"ru": "microtape: книга об отладке градиентов"}
COPYRIGHTS = {"ru": "авторы microtape"}
# Words furo writes into its templates without gettext: (English, Russian). The credit to furo's
# author stays in the link to the theme ("... и темы Furo"), in the translated footer of sphinx.po.
THEME_WORDS = {
    "ru": (
        ('<a class="muted-link" href="https://pradyunsg.me">@pradyunsg</a>\'s', ""),
        ('aria-label="Toggle site navigation sidebar"', 'aria-label="Показать или скрыть навигацию по книге"'),
        ('aria-label="Toggle table of contents sidebar"', 'aria-label="Показать или скрыть содержание страницы"'),
        ('aria-label="Toggle Light / Dark / Auto color theme"', 'aria-label="Светлая, тёмная или системная тема"'),
        (">Toggle site navigation sidebar<", ">Показать или скрыть навигацию по книге<"),
        (">Toggle table of contents sidebar<", ">Показать или скрыть содержание страницы<"),
        (">Toggle Light / Dark / Auto color theme<", ">Светлая, тёмная или системная тема<"),
        ("<title>Auto light/dark, in light mode</title>", "<title>Как в системе, сейчас светлая</title>"),
        ("<title>Auto light/dark, in dark mode</title>", "<title>Как в системе, сейчас тёмная</title>"),
        ("<title>Light mode</title>", "<title>Светлая тема</title>"),
        ("<title>Dark mode</title>", "<title>Тёмная тема</title>"),
        ("<title>Contents</title>", "<title>Содержание</title>"),
        ("<title>Copy</title>", "<title>Копировать</title>"),
        ("<title>Copied!</title>", "<title>Скопировано!</title>"),
        ("<title>Menu</title>", "<title>Меню</title>"),
        ("<title>Expand</title>", "<title>Развернуть</title>"),
        ('aria-label="Toggle navigation of ', 'aria-label="Развернуть или свернуть раздел: '),
        # the API page's docstrings stay English (see above): say so to browsers and screen readers
        ('<dl class="py', '<dl lang="en" class="py'),
        # an English word quoted on purpose (the :en: role: the glossary's English names)
        ('<span class="lang-en">', '<span lang="en" class="lang-en">'),
    ),
}
_DOCSTRING = re.compile(r'<(\w+)((?: [^>]*?)?) class="([^"]*\bdocstring\b[^"]*)"')


def _edition(language: str | None) -> str:
    return "ru" if (language or "en").startswith("ru") else "en"


def other_edition_link(pagename: str, language: str | None) -> tuple[str, str, str]:
    """(relative URL, language code, label) of ``pagename`` in the other edition.

    >>> other_edition_link("book/03_gradient_tape", "en")
    ('../ru/book/03_gradient_tape.html', 'ru', 'Эта страница по-русски')
    >>> other_edition_link("index", "ru")
    ('../index.html', 'en', 'This page in English')
    """
    here = _edition(language)
    there = "ru" if here == "en" else "en"
    to_own_root = "../" * pagename.count("/")
    to_english_root = to_own_root + ("../" if SUBDIR[here] else "")
    return f"{to_english_root}{SUBDIR[there]}{pagename}.html", there, EDITIONS[there]


def alternate_links(pagename: str, language: str | None) -> str:
    """The ``<link rel="alternate" hreflang=...>`` tags of ``pagename``: both editions, English the default.

    >>> print(alternate_links("book/index", "ru"))
    <link rel="alternate" hreflang="ru" href="index.html">
    <link rel="alternate" hreflang="en" href="../../book/index.html">
    <link rel="alternate" hreflang="x-default" href="../../book/index.html">
    """
    own = pagename.rsplit("/", 1)[-1] + ".html"
    url, there, _ = other_edition_link(pagename, language)
    here = _edition(language)
    urls = {here: own, there: url}
    return "\n".join(
        f'<link rel="alternate" hreflang="{code}" href="{escape(urls[lang], quote=True)}">'
        for code, lang in ((here, here), (there, there), ("x-default", "en"))
    )


def theme_words(language: str | None) -> object:
    """A function for the templates: ``html`` with furo's hard-coded English words in the edition's language."""
    pairs = THEME_WORDS.get(_edition(language), ())

    def translate(html: str) -> Markup:
        text = str(html)
        for english, own in pairs:
            text = text.replace(english, own)
        if pairs:
            text = _DOCSTRING.sub(r'<\1\2 lang="en" class="\3"', text)
        return Markup(text)  # noqa: S704 - the theme's own, already escaped HTML

    return translate


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict[str, object], doctree: object) -> None:
    url, code, label = other_edition_link(pagename, app.config.language)
    context["other_edition"] = {"url": url, "lang": code, "label": label}
    context["metatags"] = str(context.get("metatags") or "") + "\n" + alternate_links(pagename, app.config.language) + "\n"
    context["edition_words"] = theme_words(app.config.language)


def _only_references(node: nodes.Element) -> bool:
    """A paragraph made of cross-references, code and punctuation (a list of names)."""
    if any(isinstance(n, addnodes.download_reference) for n in node.findall()):
        return False  # sphinx-gallery's "Download Jupyter notebook: ..." is a sentence to translate
    code = (addnodes.pending_xref, nodes.literal)
    words = [t for t in node.findall(nodes.Text) if not any(isinstance(a, code) for a in _ancestors(t))]
    return node.children != [] and all(re.fullmatch(r"[\s,.;:/()]*(\.\.\.)?", str(t)) for t in words)


def _ancestors(node: nodes.Node) -> list[nodes.Node]:
    found = []
    while node.parent is not None:
        node = node.parent
        found.append(node)
    return found


_COMMENT = re.compile(r"(^|\s)#(\s|$)", re.MULTILINE)


def code_to_translate(code: str) -> bool:
    """Whether a code block has words for a translator: a ``#`` comment, or a tour command.

    >>> code_to_translate("x = 1  # one"), code_to_translate('c = "#fff"\\nx = 1')
    (True, False)
    >>> code_to_translate("python -m microtape tour --chapter 2")
    True
    """
    return bool(_COMMENT.search(code)) or "microtape tour" in code


def _from_package(app: Sphinx, source: str) -> bool:
    """Whether a literal block was included from a file of the package (``microtape/`` beside ``docs/``)."""
    package = (Path(app.srcdir).parent / "microtape").resolve()
    return bool(source) and Path(source).resolve().is_relative_to(package)


def _untranslatable_reference(app: Sphinx, doctree: nodes.document) -> None:
    """Keep autodoc's entries (signatures and docstrings), lists of names and code without comments out of the catalogs."""
    for block in doctree.findall(nodes.literal_block):
        # code a page includes from the package (literalinclude) is shown as it is in every edition
        if _from_package(app, block.get("source", "")) or not code_to_translate(block.astext()):
            block["translatable"] = False
    for node in doctree.findall(nodes.TextElement):
        inside_entry = any(isinstance(a, addnodes.desc) for a in _ancestors(node))
        from_docstring = ":docstring of " in (node.source or "")
        names_only = isinstance(node, nodes.paragraph) and _only_references(node)
        module_title = isinstance(node, nodes.title) and re.fullmatch(r"microtape(\.\w+)*", node.astext())
        no_english = isinstance(node, nodes.paragraph) and not re.search(r"[A-Za-z]", node.astext())  # 3, or Russian already
        if inside_entry or from_docstring or names_only or module_title or no_english:
            node["translatable"] = False
        if from_docstring and not inside_entry:
            node["classes"].append("docstring")  # a module's docstring: English in both editions


_TOOLTIP = re.compile(r'tooltip="[^"]*"')
_THUMB_TITLE = re.compile(r'(<div class="sphx-glr-thumbnail-title">)(.*?)(</div>)', re.DOTALL)


def _translated_thumbnails(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Give the gallery's thumbnails the chapters' translated titles.

    sphinx-gallery writes each thumbnail's caption and tooltip as raw HTML,
    which no catalog reaches; the link next to each one is a reference that
    carries the chapter's (translated) title, so the captions take it from there.
    """
    if _edition(app.config.language) == "en":
        return
    container: nodes.raw | None = None
    title = ""
    for node in list(doctree.findall(lambda n: isinstance(n, (nodes.raw, nodes.reference)))):
        if isinstance(node, nodes.reference):
            title = node.astext()
            continue
        html = node.astext()
        if "sphx-glr-thumbcontainer" in html:
            container, title = node, ""
        elif "sphx-glr-thumbnail-title" in html and container is not None and title:
            text = escape(title, quote=True)
            container.replace(container[0], nodes.Text(_TOOLTIP.sub(f'tooltip="{text}"', container.astext())))
            node.replace(node[0], nodes.Text(_THUMB_TITLE.sub(lambda m: m[1] + text + m[3], html)))
            container = None


def _title(app: Sphinx, config: Config) -> None:
    edition = _edition(config.language)
    os.environ["MICROTAPE_LANG"] = edition  # the chapters' figures (microtape.book.figures)
    if edition in TITLES and "html_title" not in config._overrides:
        config.html_title = TITLES[edition]
    if edition in COPYRIGHTS and "copyright" not in config._overrides:
        config.copyright = COPYRIGHTS[edition]


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("config-inited", _title)
    app.connect("doctree-read", _untranslatable_reference)
    app.connect("html-page-context", _page_context)
    app.connect("doctree-resolved", _translated_thumbnails)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
