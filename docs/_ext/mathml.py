"""Render ``:math:`` and ``.. math::`` as MathML at build time, with no JavaScript.

Sphinx's default renderer, MathJax, loads its script from a CDN, so the book
showed raw LaTeX to anyone reading it offline. docutils ships a LaTeX to
MathML converter, and every current browser draws MathML natively. A formula
that the converter cannot read is a build warning (so an error under ``-W``)
and is shown as code rather than silently dropped.
"""

from __future__ import annotations

from docutils import nodes
from docutils.utils.math import latex2mathml
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number
from sphinx.writers.html5 import HTML5Translator

logger = logging.getLogger(__name__)


def _mathml(self: HTML5Translator, node: nodes.Element, block: bool) -> str:
    latex = node.astext()
    try:
        return latex2mathml.tex2mathml(latex, as_block=block)
    except Exception as err:  # noqa: BLE001 - the converter raises several kinds of error
        logger.warning("cannot convert math to MathML (%s): %s", err, latex, location=node)
        return f"<code>{self.encode(latex)}</code>"


def visit_math(self: HTML5Translator, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate"))
    self.body.append(_mathml(self, node, block=False))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_displaymath(self: HTML5Translator, node: nodes.math_block) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math notranslate"))
    if node.get("number"):
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, "Link to this equation")
        self.body.append("</span>")
    self.body.append(_mathml(self, node, block=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict[str, object]:
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_displaymath, None))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
