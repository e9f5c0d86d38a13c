"""The starters' texts that stay as they are in every language.

``book/statements.py`` writes a Russian starter
(``exercises DIR --lang ru``): the task statement (the module docstring)
comes from the book's exercises catalog, and every other text a student
reads in the file (comments, function docstrings, the ``TODO`` messages of
``NotImplementedError``) from the package's catalog, keyed by its English
text (``extract.starter_texts`` finds them). The code itself is not
touched. A comment that is code (``# grad_fn(dy, saved)``) is listed in
``CODE_COMMENTS`` and stays as it is. ``grader_ru.py`` reads the same
catalog for the TODO messages the grader prints.
"""

from __future__ import annotations

import ast
import io
import tokenize
from typing import Final

__all__ = ["CODE_COMMENTS", "starter_texts"]

CODE_COMMENTS: Final[frozenset[str]] = frozenset({"grad_fn(dy)", "grad_fn(dy, saved)", "y = 2x - 1"})
"""Comments that are code or a formula, the same in every language."""


def starter_texts(source: str) -> list[str]:
    """What a student reads in a starter besides its code and task statement: comments, docstrings, TODO strings.

    Examples:
        >>> starter_texts("def f():\\n    'Return 1.'  # one\\n    raise NotImplementedError('TODO 1: return 1')\\n")
        ['one', 'Return 1.', 'TODO 1: return 1']
    """
    found = [t.string[1:].strip() for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and (doc := ast.get_docstring(node, clean=False)):
            found.append(doc)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("TODO"):
            found.append(node.value)
    return [text for text in found if text not in CODE_COMMENTS]
