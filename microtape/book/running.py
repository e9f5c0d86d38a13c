"""Running a chapter's coroutine to its end wherever the chapter runs.

Chapter 7 trains in asyncio coroutines. A script runs one with
:func:`asyncio.run`, but a Jupyter kernel already runs an event loop in its
thread, where ``asyncio.run`` refuses to start a second one, and Python in a
browser (Pyodide) has no threads at all. ``run_to_end()`` hides that
plumbing so the chapter shows only the training loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import sys
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

__all__ = ["run_to_end"]

T = TypeVar("T")


def run_to_end(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end and return its result: ``asyncio.run`` in a script,
    in Jupyter and in a browser alike.

    With no event loop running in this thread, it is ``asyncio.run``. In a
    notebook, whose kernel runs a loop in this thread, the coroutine runs in
    a thread of its own with its own event loop (and this thread's context
    variables). In Pyodide, which has no threads, it waits on the browser's
    own event loop with ``pyodide.ffi.run_sync``.

    Example:
        >>> async def answer() -> int:
        ...     return 42
        >>> run_to_end(answer())
        42
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    if sys.platform == "emscripten":
        run_sync = importlib.import_module("pyodide.ffi").run_sync
        return cast(T, run_sync(coroutine))
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(contextvars.copy_context().run, asyncio.run, coroutine).result()
