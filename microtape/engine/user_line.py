"""Which line of the user's code is running: what error messages, reports and tapes point at.

Tapes ask on every record, so the answers are cached: by
file, by code object and by call site.
"""

from __future__ import annotations

import os
import sys
from types import CodeType, FrameType
from typing import Final

__all__ = ["BOOK_DIR", "PACKAGE_DIR", "SPOTS", "count_as_user", "frame_text", "is_user_file", "user_frame", "user_frame_line"]

PACKAGE_DIR: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The package's root folder (``microtape/``): frames inside it are not the user's."""
BOOK_DIR: Final = os.path.join(PACKAGE_DIR, "_tutorials")
"""The book's chapters and exercises inside an installed wheel: the reader's code, not the engine's."""


def count_as_user(path: str) -> None:
    """Count the package's file ``path`` as the reader's code: example code it ships (the dashboard's demo)."""
    _USER_FILES[path] = _USER_FILES[os.path.abspath(path)] = True


def user_frame_line() -> str:
    """Return ``file:line`` of the innermost caller outside this package."""
    return frame_text(user_frame(2))


def frame_text(found: tuple[str, int] | None) -> str:
    """``file:line`` of what ``user_frame`` found, or ``<unknown>``."""
    return "<unknown>" if found is None else f"{found[0]}:{found[1]}"


_USER_FILES: dict[str, bool] = {}
"""Whether each file name ``user_frame`` has seen is the user's (outside the package, or a chapter)."""
SPOTS: Final[dict[int, tuple[object, dict[int, tuple[str, int]] | None]]] = {}
"""By ``id`` of a code object ``user_frame`` has seen: the code itself (held, so that
its id is never reused while it is a key) and ``None`` for the package's own code,
else that code's ``(file, line)`` tuples by instruction offset, made once and shared."""
_MOST_SPOTS: Final = 10_000
"""``SPOTS`` starts again past this many code objects (code made on the fly, say by ``exec`` in a loop)."""


def user_frame(skip: int = 1) -> tuple[str, int] | None:
    """``(file, line)`` of the innermost caller outside this package, or None.

    Cheap enough (well under a microsecond) for a tape to call on every
    record: a caller that knows its own callers are the package's starts
    ``skip`` frames up (``sys._getframe(skip)``) instead of walking them; each
    code object's verdict is cached, and so is the line of each call site, by
    instruction offset (asking a frame for its line number scans the code's
    line table, thousands of instructions in a long script), and the same
    call site gives the same tuple, so a million records of a loop's body
    hold a handful of tuples between them."""
    frame: FrameType | None = sys._getframe(skip)
    spots = SPOTS
    while frame is not None:
        code = frame.f_code
        seen = spots.get(id(code))
        if seen is None:
            seen = _see(code)
        here = seen[1]
        if here is not None:
            at = frame.f_lasti
            found = here.get(at)
            if found is None:
                found = here[at] = (code.co_filename, frame.f_lineno)
            return found
        frame = frame.f_back
    return None


def is_user_file(filename: str) -> bool:
    """Whether code in ``filename`` is the user's: outside the package, a chapter, or counted as the user's."""
    mine = _USER_FILES.get(filename)
    if mine is None:
        path = os.path.abspath(filename)
        mine = _USER_FILES[filename] = not path.startswith(PACKAGE_DIR + os.sep) or path.startswith(BOOK_DIR + os.sep)
    return mine


def _see(code: CodeType) -> tuple[object, dict[int, tuple[str, int]] | None]:
    """Judge a code object ``user_frame`` meets for the first time, and remember it."""
    mine = is_user_file(code.co_filename)
    if len(SPOTS) >= _MOST_SPOTS:
        SPOTS.clear()
    seen: tuple[object, dict[int, tuple[str, int]] | None] = (code, {} if mine else None)
    SPOTS[id(code)] = seen
    return seen
