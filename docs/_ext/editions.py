"""The book's two editions, English and Russian (``-D language=ru``), and how they meet.

* Layout: the English edition is built into ``<out>/`` and the Russian one
  into ``<out>/ru/``. Every page links to the same page in the other edition
  (``html-page-context`` computes the relative link, the sidebar template
  ``docs/_templates/sidebar/language.html`` shows it).
* The Russian edition's title and copyright line are Russian, unless set on
  the command line. furo's own words (Previous, Next ...) come from
  ``docs/locale/ru/LC_MESSAGES/sphinx.po``.
* Reference entries that autodoc generates from docstrings are code
  documentation: they change with the code and stay English, so they are
  marked untranslatable and never enter ``api.po``; so are lists of names and
  module titles, which change whenever ``__all__`` does, and paragraphs with
  no English in them (numbers, the Russian titles the English edition
  quotes). The API page's own prose is translated.
"""

from __future__ import annotations

import re
from html import escape

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.config import Config

EDITIONS = {"en": "This page in English", "ru": "Эта страница по-русски"}  # each in its own language
SUBDIR = {"en": "", "ru": "ru/"}  # where each edition lives, relative to the English root
TITLES = {"ru": "microtape: книга об отладке градиентов"}
COPYRIGHTS = {"ru": "авторы microtape"}


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


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict[str, object], doctree: object) -> None:
    url, code, label = other_edition_link(pagename, app.config.language)
    context["other_edition"] = {"url": url, "lang": code, "label": label}


def _only_references(node: nodes.Element) -> bool:
    """A paragraph made of cross-references, code and punctuation (a list of names)."""
    code = (addnodes.pending_xref, nodes.literal)
    words = [t for t in node.findall(nodes.Text) if not any(isinstance(a, code) for a in _ancestors(t))]
    return node.children != [] and all(re.fullmatch(r"[\s,.;:/()]*(\.\.\.)?", str(t)) for t in words)


def _ancestors(node: nodes.Node) -> list[nodes.Node]:
    found = []
    while node.parent is not None:
        node = node.parent
        found.append(node)
    return found


def _untranslatable_reference(app: Sphinx, doctree: nodes.document) -> None:
    """Keep autodoc's entries (signatures and docstrings) and lists of names out of the catalogs."""
    for node in doctree.findall(nodes.TextElement):
        inside_entry = any(isinstance(a, addnodes.desc) for a in _ancestors(node))
        from_docstring = ":docstring of " in (node.source or "")
        names_only = isinstance(node, nodes.paragraph) and _only_references(node)
        module_title = isinstance(node, nodes.title) and re.fullmatch(r"microtape(\.\w+)*", node.astext())
        no_english = isinstance(node, nodes.paragraph) and not re.search(r"[A-Za-z]", node.astext())  # 3, or Russian already
        if inside_entry or from_docstring or names_only or module_title or no_english:
            node["translatable"] = False


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
