"""The book's two editions, English and Russian (``-D language=ru``), and how they meet.

* Layout: the English edition is built into ``<out>/`` and the Russian one
  into ``<out>/ru/``. Every page links to the same page in the other edition
  (``html-page-context`` computes the relative link, the sidebar template
  ``docs/_templates/sidebar/language.html`` shows it).
* The Russian edition's title is Russian, unless ``html_title`` was set on
  the command line.
* Reference entries that autodoc generates from docstrings are code
  documentation: they change with the code and stay English, so they are
  marked untranslatable and never enter ``api.po``; so are lists of names and
  module titles, which change whenever ``__all__`` does. The API page's own
  prose is translated.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.config import Config

EDITIONS = {"en": "This page in English", "ru": "Эта страница по-русски"}  # each in its own language
SUBDIR = {"en": "", "ru": "ru/"}  # where each edition lives, relative to the English root
TITLES = {"ru": "microtape: книга об отладке градиентов"}


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
    """A paragraph made of cross-references and punctuation (a list of names)."""
    words = [t for t in node.findall(nodes.Text) if not any(isinstance(a, addnodes.pending_xref) for a in _ancestors(t))]
    return node.children != [] and all(re.fullmatch(r"[\s,.;:]*", str(t)) for t in words)


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
        if inside_entry or from_docstring or names_only or module_title:
            node["translatable"] = False


def _title(app: Sphinx, config: Config) -> None:
    edition = _edition(config.language)
    if edition in TITLES and "html_title" not in config._overrides:
        config.html_title = TITLES[edition]


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("config-inited", _title)
    app.connect("doctree-read", _untranslatable_reference)
    app.connect("html-page-context", _page_context)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
