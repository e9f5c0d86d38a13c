"""How tensors, tapes and reports look: text, HTML for Jupyter, SVG, and the habit hints.

Nothing here is needed to compute a gradient, so the engine does not import
it: importing this package installs the presentation on the engine's
classes from above (``Tensor._repr_html_``, ``MemoryInfo._repr_html_``, the
PyTorch and NumPy habits that raise with a hint), as ``microtape`` does when
it is imported. Files, in reading order: ``html.py`` (the HTML and SVG
pieces), ``places.py`` (a line of the user's code as a reader names it:
``ex.py:12``, a graded notebook's cell, a Jupyter cell), ``habits.py`` (the
habits and their hints), ``tape_text.py`` (``tape.operations``,
``summary()``, ``to_dot()``), ``tape_svg.py`` (``to_svg()``).
"""

from __future__ import annotations

from ..engine.memory import MemoryInfo
from ..engine.tensor import Tensor
from ..engine.variable import Variable
from . import habits
from .html import record_html, tensor_html

__all__ = ["install"]


def _tensor_html(self: Tensor) -> str:
    """Jupyter's picture of a tensor (``repr`` and ``str`` stay text)."""
    return tensor_html(type(self).__name__, self._data, self.shape, self._repr_extra())


def install() -> None:
    """Put the presentation on the engine's classes (done once, when this package is imported)."""
    Tensor._repr_html_ = _tensor_html  # type: ignore[method-assign]  # installed from above, on purpose
    MemoryInfo._repr_html_ = record_html  # type: ignore[method-assign, assignment]  # as above; record_html takes any record
    habits.install(Tensor)  # t.backward(), len(t), t > 0 raise with a hint
    habits.install_variable(Variable)  # w -= g raises with the assign_sub hint instead of rebinding w


install()
