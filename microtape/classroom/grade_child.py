"""The process that runs a student's file: it answers the grader's questions about it, and decides nothing.

``judge.py`` starts one with ``python -m microtape.classroom.grade_child MEMORY_MB``,
its standard input and output the two pipes of the channel (``wire.py``): the child
moves them aside first, so what the file prints goes where its errors go, to a file
the grader shows as "the file printed". Before touching the student's code
the child caps its own address space at ``MEMORY_MB`` (``resource.RLIMIT_AS``, where
the OS has it) and the size of any file it writes (so endless printing stops), makes
itself the subreaper of what it starts (Linux), and forks: the process that then runs
the student's code is a grandchild of the grader, so a file that kills its parent ends
a process that holds nothing. Then it serves one request at a time:

* ``load``: run the file's source (or a notebook's code cells, each compiled on its
  own) as a fresh module; a file that fails to load says why, with its line;
* ``begin`` / ``end``: one check; what is made in between lives in a tidy scope of its
  own and a copy of the context, so a tape left open or a leak cannot reach the next;
* ``get`` / ``set``: an attribute of the module or of an object the child handed out;
* ``call``: call one, with arguments the grader chose, measured if asked
  (``measure.py``); ``eval``: the value or a gradient of such a call (how the grader
  differentiates the student's functions, see ``proxy.py``); ``culprit``: what
  ``check_grads`` names at such a call;
* ``bye``: report the threads the file left running, and end.

Every answer is data: values, shapes, types, what an exception said and where,
what was measured. The checks, their references and their verdicts stay with the
grader, which never sends them here; the check files are never loaded here, so a
teacher's hidden checks never reach the student's process.
"""

from __future__ import annotations

import codeop
import contextvars
import linecache
import math
import os
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path
from typing import Literal, NoReturn

import microtape

from .. import language
from ..engine import arena
from ..engine.tensor import Tensor
from ..engine.variable import Variable, variable
from ..ops.creation import tensor
from ..autodiff.gradient_tape import GradientTape
from ..checking.gradcheck import check_grads
from ..book.notebooks import LOADED, NotebookError, code_of, place, source_lines
from .processes import process_table
from .measure import KINDS, measured_call
from .catalog import sentence
from .wire import (
    ChannelClosed, ChannelError, exception_lines, exception_to_wire, floats_from_wire, from_wire, read_frame,
    record_from_wire, tensor_to_wire, to_wire, write_frame,
)

__all__ = ["Server"]

FILE_SIZE_LIMIT = 64 * 2**20
"""The most a graded file (or its printing) may write to one file, in bytes."""

Send = Callable[[dict[str, object]], None]


class Server:
    """Answers the grader's requests about one student's file (the loop is ``serve``; ``answer`` one request).

    Examples:
        >>> from microtape.classroom.grade_child import Server
        >>> server = Server()
        >>> server.answer({"id": 1, "op": "load", "file": "ex.py", "source": "def f(x):\\n    return 2 * x\\n"})["ok"]
        {'notes': []}
        >>> f = server.answer({"id": 2, "op": "get", "target": None, "name": "f"})["ok"]
        >>> f["$"], f["type"]
        ('ref', 'function')
        >>> server.answer({"id": 3, "op": "call", "target": f["h"], "args": [21]})["ok"]
        42
    """

    def __init__(self) -> None:
        self.module: types.ModuleType = types.ModuleType("_microtape_student")
        self.file: str = "<student>"
        self.objects: dict[str, object] = {}
        self.handles: dict[int, str] = {}
        self.mirrors: dict[str, Variable] = {}  # the grader's variables, as this process holds them
        self.reported: dict[str, list[float] | None] = {}
        self._next = 0

    # -- handles: what this process handed out --------------------------------------------------

    def handle(self, obj: object) -> str:
        """The handle of ``obj`` (the same object always gets the same one, until the check ends)."""
        key = id(obj)
        if key not in self.handles:
            self._next += 1
            self.handles[key] = f"c{self._next}"
            self.objects[self.handles[key]] = obj
        return self.handles[key]

    def ref(self, obj: object) -> dict[str, object]:
        kind = type(obj)
        name = getattr(obj, "__name__", None)
        return {
            "$": "ref", "h": self.handle(obj), "type": kind.__name__, "callable": callable(obj),
            "name": name if isinstance(name, str) else None,
        }

    def tensor_handle(self, t: Tensor) -> str:
        for h, mirror in self.mirrors.items():
            if mirror is t:
                return h
        return self.handle(t)

    def encode(self, value: object) -> object:
        return to_wire(value, self.ref, lambda t: tensor_to_wire(t, self.tensor_handle(t)))

    def resolve(self, data: dict[str, object], leaves: list[Tensor] | None = None) -> object:
        """A tagged value from the grader: a tensor, one of this process's objects, an op, a function made from code."""
        tag = data.get("$")
        h = data.get("h")
        if tag == "leaf" and leaves is not None and isinstance(data.get("i"), int):
            return leaves[int(str(data["i"]))]
        if tag == "ref" and isinstance(h, str) and h in self.objects:
            return self.objects[h]
        if tag == "tensor":
            return self.tensor_from(data)
        if tag == "op" and data.get("name") in microtape.__all__:
            return getattr(microtape, str(data["name"]))
        if tag == "code" and isinstance(data.get("src"), str):
            env = data.get("env")
            names = from_wire(env, lambda d: self.resolve(d, leaves)) if env is not None else {}
            scope: dict[str, object] = {"mt": microtape, "math": math, **(names if isinstance(names, dict) else {})}
            made: object = eval(str(data["src"]), scope)  # noqa: S307 - the grader's own code, run where the student's runs
            return made
        if tag == "record":
            return record_from_wire(data, lambda d: self.resolve(d, leaves))
        if tag == "opaque":
            return None
        raise ChannelError(f"a value tagged {tag!r} that this process cannot make")

    def tensor_from(self, data: dict[str, object]) -> Tensor:
        h = data.get("h")
        if isinstance(h, str) and h in self.objects and isinstance(self.objects[h], Tensor):
            found = self.objects[h]
            assert isinstance(found, Tensor)
            return found
        shape = tuple(int(d) for d in data.get("shape", []) if type(d) is int)  # type: ignore[attr-defined]  # a list, as sent
        values = floats_from_wire(data.get("data"))
        if data.get("variable"):
            if isinstance(h, str) and h in self.mirrors:
                return self.mirrors[h]
            made = variable(tensor(values, shape), trainable=bool(data.get("trainable", True)))
            if isinstance(h, str):
                self.mirrors[h] = made
                self.reported[h] = list(values)
            return made
        if data.get("disposed"):
            t = tensor([0.0] * math.prod(shape), shape)
            t.dispose()
            return t
        return tensor(values, shape)

    def decode(self, data: object, leaves: list[Tensor] | None = None) -> object:
        return from_wire(data, lambda d: self.resolve(d, leaves))

    # -- the variables both sides hold ----------------------------------------------------------

    def _variables(self) -> dict[str, Variable]:
        found = {h: v for h, v in self.objects.items() if isinstance(v, Variable)}
        found.update(self.mirrors)
        return found

    def take_sync(self, sync: object) -> None:
        """Assign the values the grader gave its copies of shared variables."""
        if not isinstance(sync, dict):
            return
        known = self._variables()
        for h, values in sync.items():
            v = known.get(str(h))
            if v is not None and not v.is_disposed and values is None:
                v.dispose()  # the check disposed its copy
                self.reported[str(h)] = None
            elif v is not None and not v.is_disposed:
                data = floats_from_wire(values)
                if len(data) == v.size:
                    v.assign(tensor(data, v.shape))
                    self.reported[str(h)] = data

    def give_sync(self) -> dict[str, object]:
        """The shared variables whose values changed here since the grader last heard of them."""
        changed: dict[str, object] = {}
        for h, v in self._variables().items():
            now = None if v.is_disposed else v.data_sync()
            if self.reported.get(h, "unseen") != now:
                self.reported[h] = now
                changed[h] = None if now is None else tensor_to_wire(v, h)
        return changed

    # -- requests -------------------------------------------------------------------------------

    def answer(self, request: dict[str, object]) -> dict[str, object]:
        """The reply to one request (``begin`` and ``end`` only do the bookkeeping here; ``serve`` adds the scope)."""
        reply: dict[str, object] = {"id": request.get("id")}
        try:
            self.take_sync(request.get("sync"))
            reply.update(self._answer(request))
        except (ChannelError, ChannelClosed):
            raise
        except BaseException as err:  # noqa: BLE001 - whatever the student's code raises is reported, even sys.exit
            reply["raised"] = exception_to_wire(err, self.file)
        try:
            reply["sync"] = self.give_sync()
        except Exception:  # noqa: BLE001 - a variable broken by the student's code: its values are not reported
            reply["sync"] = {}
        return reply

    def _answer(self, request: dict[str, object]) -> dict[str, object]:
        op = request.get("op")
        if op == "load":
            return self.load(str(request.get("file")), str(request.get("source")), bool(request.get("notebook")))
        if op == "end":
            self.objects.clear()
            self.handles.clear()
            self.mirrors.clear()
            self.reported.clear()
            return {"ok": None}
        if op in ("begin", "hello"):
            return {"ok": {"pid": os.getpid()}}
        if op == "get":
            target = self.target(request.get("target"))
            name = str(request.get("name"))
            if not hasattr(target, name):
                return {"missing": True}
            return {"ok": self.encode(getattr(target, name))}
        if op == "set":
            target = self.target(request.get("target"))
            setattr(target, str(request.get("name")), self.decode(request.get("value")))
            return {"ok": None}
        if op == "call":
            return self.call(request)
        if op == "eval":
            leaves = [self.tensor_from(d) for d in request.get("leaves", []) if isinstance(d, dict)]  # type: ignore[attr-defined]  # a list, as sent
            out = self.evaluate(request.get("recipe"), leaves)
            return {"ok": [None if g is None else tensor_to_wire(g, None) for g in out]}
        if op == "culprit":
            leaves = [self.tensor_from(d) for d in request.get("leaves", []) if isinstance(d, dict)]  # type: ignore[attr-defined]  # a list, as sent
            recipe = request.get("recipe")
            order: Literal[1, 2] = 2 if request.get("order") == 2 else 1
            fn: Callable[..., Tensor] = lambda *xs: self._one(self.evaluate(recipe, list(xs)))  # noqa: E731 - one expression
            report = check_grads(fn, leaves, order=order)
            return {"ok": self.encode(report.culprit)}
        if op == "bye":
            left = [t.name for t in threading.enumerate() if t is not threading.current_thread() and t.is_alive()]
            return {"ok": {"threads": left[:10]}}
        raise ChannelError(f"a request {op!r} this process does not know")

    def target(self, h: object) -> object:
        if h is None:
            return self.module
        if isinstance(h, str) and h in self.objects:
            return self.objects[h]
        raise ChannelError(f"no object {h!r} here (its check ended)")

    def call(self, request: dict[str, object]) -> dict[str, object]:
        code = request.get("code")
        f = self.decode(code) if isinstance(code, dict) else self.target(request.get("target"))
        if not callable(f):
            raise TypeError(f"{type(f).__name__} object is not callable")
        args = self.decode(request.get("args", []))
        kwargs = self.decode(request.get("kwargs", {"$": "dict", "v": []}))
        assert isinstance(args, list) and isinstance(kwargs, dict)
        measure = request.get("measure")
        if isinstance(measure, list):
            what = [str(m) for m in measure if m in KINDS]
            result, found = measured_call(f, tuple(args), {str(k): v for k, v in kwargs.items()}, what, self.module)
            return {"ok": self.encode(result), "measured": found}
        return {"ok": self.encode(f(*args, **{str(k): v for k, v in kwargs.items()}))}

    # -- the values and gradients the grader differentiates ---------------------------------

    @staticmethod
    def _one(out: list[Tensor | None]) -> Tensor:
        if not out or out[0] is None:
            raise ValueError("no gradient: the output does not depend on these inputs")
        return out[0]

    def evaluate(self, recipe: object, leaves: list[Tensor]) -> list[Tensor | None]:
        """What ``recipe`` computes from ``leaves``: a call's tensor, or the gradients of one (see ``proxy.py``)."""
        if not isinstance(recipe, dict):
            raise ChannelError("a recipe that is not an object")
        if "call" in recipe:
            f = self.target(recipe.get("call"))
            if not callable(f):
                raise TypeError(f"{type(f).__name__} object is not callable")
            args = self.decode(recipe.get("args", []), leaves)
            assert isinstance(args, list)
            value: object = f(*args)
            pick = recipe.get("pick")
            for step in pick if isinstance(pick, list) else []:
                value = value[step]  # type: ignore[index]  # the path the first call's result had (a TypeError otherwise)
            if not isinstance(value, Tensor):
                raise TypeError(f"the call returned {type(value).__name__} this time, not a Tensor")
            return [value]
        if "vjp" in recipe:
            n, dy = recipe.get("n"), recipe.get("dy")
            if not (isinstance(n, int) and isinstance(dy, int) and 0 <= n <= len(leaves) and 0 <= dy < len(leaves)):
                raise ChannelError("a gradient recipe with no inputs")
            xs = leaves[:n]
            tape = GradientTape(persistent=True)
            try:
                with tape:
                    tape.watch(xs)
                    y = self._one(self.evaluate(recipe.get("vjp"), leaves))
                grads = tape.gradient(y, xs, output_gradients=leaves[dy])
            finally:
                tape.release()
            return list(grads)
        if "item" in recipe:
            i = recipe.get("i")
            out = self.evaluate(recipe.get("item"), leaves)
            if not isinstance(i, int) or not 0 <= i < len(out):
                raise ChannelError("a recipe that picks no gradient")
            return [out[i]]
        raise ChannelError("a recipe of no known kind")

    # -- loading the student's file ---------------------------------------------------------------

    def load(self, file: str, source: str, notebook: bool) -> dict[str, object]:
        """Run the file as a fresh module; ``{"ok": {"notes"}}``, or ``{"load_failed": {"details", "hints"}}``."""
        self.file = file
        name = f"_microtape_exercise_{Path(file).stem}"
        self.module = types.ModuleType(name)
        self.module.__file__ = file
        sys.modules[name] = self.module  # dataclasses and typing look modules up while the file runs
        units = [source]
        notes: list[str] = []
        if notebook:
            try:
                code = code_of(source)
            except NotebookError as err:
                return {"load_failed": {"details": [f"the notebook {Path(file).name} cannot be read: {sentence(str(err))}"],
                                        "hints": ["open it in Jupyter and save it again (File > Save), or hand out a fresh starter with exercises DIR --notebook."]}}
            LOADED[file] = code  # its lines are shown as cells and lines in them (see notebooks.place)
            source, units, notes = code.source, list(code.cells), code.messages()
        linecache.cache[file] = (len(source), None, source_lines(source, keepends=True), file)  # tracebacks, inspect
        compiler = codeop.Compile()  # remembers each unit's __future__ imports for the units after it, as IPython does
        try:
            compiled = [compiler(unit, file, "exec") for unit in units]
        except (SyntaxError, ValueError) as err:  # ValueError: a NUL byte on Python < 3.12
            line = getattr(err, "text", None)
            details = [f"the file does not parse: {type(err).__name__}{_syntax_where(err, file)}: {getattr(err, 'msg', str(err))}"]
            details += [line.strip()] if isinstance(line, str) and line.strip() else []
            return {"load_failed": {"details": details, "hints": ["fix the line shown (or the one before it), then grade again."]}}
        try:
            for unit in compiled:
                exec(unit, self.module.__dict__)  # noqa: S102 - running the student's file is the point
        except BaseException as err:  # noqa: BLE001 - even sys.exit at import is reported
            details = [line.replace("your code raised", "loading the file raised", 1) for line in exception_lines(err, file)]
            return {"load_failed": {"details": details, "hints": [
                "the file must run top to bottom without errors; keep module-level code to definitions and constants."]}}
        return {"ok": {"notes": notes}}

    # -- the loop ------------------------------------------------------------------------------

    def serve(self, read_fd: int, write_fd: int, until: str | None = None) -> None:
        """Answer requests until ``bye`` (or, inside a check, until its ``end``)."""
        while True:
            request = read_frame(read_fd)
            op = request.get("op")
            if op == "begin" and until is None:
                write_frame(write_fd, self.answer(request))
                name = f"grade: {request.get('name')}"
                contextvars.copy_context().run(lambda: arena.run_in_scope(name, lambda: self.serve(read_fd, write_fd, "end"), returns_tensors=False))
                continue
            reply = self.answer(request)
            write_frame(write_fd, reply)
            if op == until or op == "bye":
                if op == "bye" and until is not None:
                    raise ChannelClosed("bye")
                return


def _syntax_where(err: BaseException, file: str) -> str:
    lineno = getattr(err, "lineno", None)
    if isinstance(err, SyntaxError) and isinstance(lineno, int):
        return f" ({place(file, lineno)})"
    return ""


def _limit_resources(memory_mb: int) -> None:
    """Cap this process's address space and file sizes, where the OS allows it."""
    try:
        import resource
    except ImportError:  # Windows: no rlimits; the time limit still applies
        return
    limits = [(resource.RLIMIT_FSIZE, FILE_SIZE_LIMIT)]
    if memory_mb > 0:
        limits.append((resource.RLIMIT_AS, memory_mb * 2**20))
    for which, value in limits:
        try:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, hard))
        except (ValueError, OSError):  # not supported here (RLIMIT_AS on macOS): go on without it
            pass


def _become_subreaper() -> None:
    """Linux: orphans of what the file starts become this process's children, so none escapes the tree."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):  # no prctl here: the grader's group and session kills remain
        pass


def _end_descendants() -> None:
    """Kill every process below this one (children, forks, daemons that left the session), a few rounds."""
    me = os.getpid()
    for _ in range(5):
        table = process_table()
        below: set[int] = set()
        todo = [me]
        while todo:
            parent = todo.pop()
            for pid, (ppid, *_rest) in table.items():
                if ppid == parent and pid not in below and table[pid][4] != "Z":
                    below.add(pid)
                    todo.append(pid)
        if not below:
            return
        for pid in below:
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def _keeper(fds: tuple[int, ...]) -> None:
    """Fork: this process waits for the one that runs the student's code, its only child, and ends with it.

    The student's code then has a parent that holds nothing (not even the channel): killing it ends no grading.
    """
    if not hasattr(os, "fork"):
        return
    pid = os.fork()
    if pid == 0:
        return  # the worker: go on
    for fd in fds:
        os.close(fd)  # the channel ends when the worker ends
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            _exit(0)
        except InterruptedError:
            continue
        _exit(os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else 0)


def _channel() -> tuple[int, int]:
    """The channel's pipes (this process's standard input and output), moved aside; stdout then goes where stderr goes."""
    read_fd, write_fd = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return read_fd, write_fd


def main(argv: list[str]) -> int:
    """``python -m microtape.classroom.grade_child MEMORY_MB`` (the channel on standard input and output)."""
    memory_mb = int(argv[0])
    language.use("en")  # the child reports in English, the catalog's msgids; the grader translates what it prints
    read_fd, write_fd = _channel()
    _limit_resources(memory_mb)
    _become_subreaper()
    _keeper((read_fd, write_fd))
    server = Server()
    try:
        server.serve(read_fd, write_fd)
    except (ChannelClosed, ChannelError):
        pass
    _end_descendants()
    return 0


def _exit(status: int) -> NoReturn:
    """Flush what the file printed and end at once: threads it left running must not keep the process alive."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


if __name__ == "__main__":
    _exit(main(sys.argv[1:]))  # threads a graded file left running must not keep its process alive
