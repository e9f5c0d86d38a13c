"""Session fixtures of the test files: what several files read is made once per run.

The repository root's ``conftest.py`` holds the rest of the shared set-up (``mt`` in the
doctests, nothing left open, the slow tier and the time limits of the tests that use the
fixtures below).
"""

from __future__ import annotations

import pytest

from .book_builds import Editions, build_editions


@pytest.fixture(scope="session")
def editions(tmp_path_factory: pytest.TempPathFactory) -> Editions:
    """Both editions of the book, built once (``-W``, chapters run, no ``dot`` on PATH) and
    read by ``test_docs.py`` (the pages) and ``test_notebooks.py`` (the downloadable notebooks)."""
    return build_editions(tmp_path_factory.mktemp("book"))
