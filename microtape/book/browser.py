"""The book's pages in the browser: run one code cell of a page in Pyodide, as the page's Python session.

The book's "Run in the browser" pages (``docs/_ext/browser.py`` builds them,
``docs/_static/browser/worker.js`` runs Python in a Web Worker) call
``run_cell`` for every cell a reader runs. The cells of a page share one
namespace, as a notebook's cells do; each cell runs as the tour runs a
chapter's cell (``tour.execute_cell``: what it prints, then
the repr of a final expression). Without matplotlib (Pyodide has it only from
a network), the statements that draw are left out, as the tour leaves them
out, and one line says so. Python in a browser cannot open a network server
or connection either: a statement that serves a page (``with``/``async with``
a ``Dashboard``) or connects to one (``asyncio.open_connection``, ``socket``),
and every later statement that reads a name such a statement bound, is left
out the same way, with a line that says so. An exception ends the cell, not
the session: its traceback (the reader's cells only) is printed after what
the cell printed.
"""

from __future__ import annotations

import ast
import contextlib
import io
import linecache
import traceback

from ..i18n.messages import say
from .tour import execute_cell, have_matplotlib

__all__ = ["NETWORK_CALLS", "SESSION", "Session", "leave_out_network", "run_cell"]


NETWORK_CALLS = frozenset({"open_connection", "start_server", "create_connection", "create_server", "socket", "urlopen"})
"""Calls that open a network connection or server (``asyncio.open_connection``, ``socket.socket`` ...)."""


def _opens_network(stmt: ast.stmt, tainted: set[str]) -> bool:
    """Whether a statement serves or visits a page, or reads a name such a statement bound."""
    for node in ast.walk(stmt):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and (getattr(call.func, "attr", None) or getattr(call.func, "id", None)) == "Dashboard":
                    return True
        if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in NETWORK_CALLS:
            return True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in tainted:
            return True
    return False


def _bound(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def leave_out_network(code: str, tainted: set[str]) -> tuple[str, list[str]]:
    r"""``code`` with its network statements blanked out (lines kept, so line numbers hold), and the names they bound.

    ``tainted`` holds the names bound by statements left out so far in the page; it is updated in place.

    Examples:
        >>> from microtape.book.browser import leave_out_network
        >>> code = "async def visit():\n    await asyncio.open_connection('127.0.0.1', 80)\n\nx = 1\ny = visit()"
        >>> kept, names = leave_out_network(code, set())
        >>> kept.splitlines(), names
        (['', '', '', 'x = 1'], ['visit', 'y'])
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, []
    lines = code.splitlines()
    names: list[str] = []
    for stmt in tree.body:
        if _opens_network(stmt, tainted):
            bound = _bound(stmt)
            tainted |= bound
            names += sorted(bound - set(names))
            first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
            for number in range(first, (stmt.end_lineno or stmt.lineno) + 1):
                lines[number - 1] = ""
    return "\n".join(lines), names


class Session:
    """The Python session of one page: the cells' shared namespace, and what plotting left out.

    Examples:
        >>> from microtape.book.browser import Session
        >>> session = Session()
        >>> session.run("x = 2\\nx * 21", "<cell 1>")
        '42\\n'
        >>> print(session.run("y = x +", "<cell 2>").splitlines()[-1]), session.failed
        SyntaxError: invalid syntax
        (None, True)
    """

    def __init__(self) -> None:
        self.namespace: dict[str, object] = {"__name__": "__main__"}
        self.tainted: set[str] | None = None if have_matplotlib() else set()
        self.offline: set[str] = set()
        self.failed: bool = False
        """Whether the last cell raised (the page marks it, and "Run all" stops there)."""
        self.files: dict[str, list[str]] = {}
        """The lines of each file the cells ran as (a chapter's cells fill in its file, line by line)."""

    def run(self, code: str, name: str, lang: str = "en", line: int = 1) -> str:
        """Run ``code`` as lines ``line``, ``line + 1``, ... of the file ``name``; return what it printed, or that and its traceback.

        A chapter's cells run as lines of the chapter's file, so what they print (a leak's line, an
        anomaly's) names the lines the book names.
        """
        shown = self.files.setdefault(name, [])
        shown += ["\n"] * (line - 1 + len(code.splitlines()) - len(shown))
        shown[line - 1 : line - 1 + len(code.splitlines())] = [text + "\n" for text in code.splitlines()]
        linecache.cache[name] = (sum(map(len, shown)), None, list(shown), name)  # tracebacks show the cells' lines
        out = io.StringIO()
        runnable, left_out = leave_out_network(code, self.offline)
        self.failed = False
        try:
            with contextlib.redirect_stderr(out):
                execute_cell(runnable, self.namespace, name, line, self.tainted, lang, note=say(lang, "no_plots_browser"), out=out)
                if left_out:
                    print(say(lang, "no_server_browser", names=", ".join(left_out)), file=out)
        except BaseException as err:  # noqa: BLE001 - a reader's cell: show its error, as Jupyter does, and go on
            self.failed = True
            frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename in self.files]
            if out.getvalue() and not out.getvalue().endswith("\n"):
                out.write("\n")
            out.write("Traceback (most recent call last):\n" if frames else "")
            out.write("".join(traceback.format_list(frames)))
            out.write("".join(traceback.format_exception_only(type(err), err)))
        return out.getvalue()


SESSION = Session()
"""The session of the page this Python runs for (a Web Worker serves one page)."""


def run_cell(code: str, name: str, lang: str = "en", line: int = 1) -> str:
    """Run one cell of the page in ``SESSION`` (as lines of ``name`` from ``line``); return its output (``lang``: of the notes).

    Examples:
        >>> from microtape.book.browser import run_cell
        >>> print(run_cell("import microtape as mt\\nmt.grad(lambda x: x * x)(mt.scalar(3.0))", "<cell 1>"))
        Tensor(6.0, shape=())
        <BLANKLINE>
    """
    return SESSION.run(code, name, lang, line)
