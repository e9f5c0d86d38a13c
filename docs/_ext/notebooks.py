"""The chapters' Jupyter notebooks, written in Markdown that Jupyter renders.

sphinx-gallery turns each chapter's text blocks into notebook cells with its
own small reST to Markdown converter, which handles headings, math, notes and
code blocks but leaves Sphinx roles (``:class:`~microtape.Tensor```) and
reST's double-backtick literals as they are, so Jupyter showed raw markup.
This extension wraps that converter: roles become inline code (or words, for
cross-references to pages and chapters) before it runs, and the remaining
reST inline markup is rewritten after it. pandoc is not needed.

``FIRST_CELL`` is the notebooks' first cell (``first_notebook_cell`` in conf.py):
it says how to install microtape.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

FIRST_CELL = (
    "# A chapter of the microtape book. Run it where microtape (pure Python, no\n"
    "# dependencies) and matplotlib (for the figures) are installed. Uncomment one:\n"
    "# %pip install -e '/path/to/your/checkout/of/microtape[dev]'\n"
    "# %pip install /path/to/microtape-*.whl matplotlib   # a wheel made with python -m build\n"
    "%matplotlib inline"
)

# :role:`text`, :role:`~target`, :role:`title <target>`
_ROLE = re.compile(r":(?P<role>[a-z]+(?::[a-z]+)?):`(?P<body>[^`]+)`")
_TITLED = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
_LITERAL = re.compile(r"(?<!`)``(?!`)(?P<code>.+?)(?<!`)``(?!`)", re.DOTALL)
_DIRECTIVE = re.compile(r"^\.\. (?P<name>[a-z-]+)::[ \t]*(?P<arg>.*)$", re.MULTILINE)
_WORD_ROLES = {"doc", "ref", "chapter", "term", "download"}


def _role(match: re.Match[str]) -> str:
    role, body = match["role"], match["body"]
    if role == "math":
        return match[0]  # sphinx-gallery turns it into $...$
    titled = _TITLED.match(body)
    if titled:
        text = titled["title"]
    elif role == "chapter":
        text = f"chapter {int(body)}" if body.strip().isdigit() else body
    elif body.startswith("~"):
        text = body[1:].rsplit(".", 1)[-1]
    elif role == "doc":
        text = body.rsplit("/", 1)[-1].replace("_", " ")
    else:
        text = body
    if role.split(":")[-1] in _WORD_ROLES:
        return text
    if text.startswith("microtape."):  # the notebooks import microtape as mt
        text = "mt." + text.removeprefix("microtape.")
    if role in ("func", "meth") and not text.endswith(")"):
        text += "()"
    return f"`{text}`"


def roles_to_markdown(rst: str) -> str:
    """Sphinx roles as Markdown: inline code for code objects, words for pages.

    >>> roles_to_markdown("Use :func:`~microtape.grad` and :class:`microtape.Tensor`, see :doc:`tfjs`.")
    'Use `grad()` and `mt.Tensor`, see tfjs.'
    """
    return _ROLE.sub(_role, rst)


def literals_to_markdown(markdown: str) -> str:
    """reST's ````code```` literals as Markdown's single-backtick code.

    >>> literals_to_markdown("a ``x + 1`` b\\n```python\\nx\\n```")
    'a `x + 1` b\\n```python\\nx\\n```'
    """
    return _LITERAL.sub(lambda m: "`" + m["code"] + "`", markdown)


def _other_directives(markdown: str) -> str:
    """Any directive sphinx-gallery left alone becomes a bold label (its body stays as text)."""
    return _DIRECTIVE.sub(lambda m: f"**{m['name'].replace('-', ' ').capitalize()}:** {m['arg']}".rstrip(), markdown)


def _wrap(convert: Callable[..., str]) -> Callable[..., str]:
    def rst2md(text: str, *args: Any, **kwargs: Any) -> str:
        markdown = convert(roles_to_markdown(text), *args, **kwargs)
        return _other_directives(literals_to_markdown(markdown))

    rst2md.__wrapped__ = convert  # type: ignore[attr-defined]
    return rst2md


def _install(app: Sphinx, config: Config) -> None:
    from sphinx_gallery import notebook

    if not hasattr(notebook.rst2md, "__wrapped__"):
        notebook.rst2md = _wrap(notebook.rst2md)


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("config-inited", _install)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
