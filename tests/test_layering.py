"""The layering of the code: no import cycle, no hidden import, no private name shared.

* The import graph of the package, the tests and the benchmarks has no
  cycle. Every ``import`` and ``from ... import`` is read with ``ast``: at
  module level, inside functions and under ``if TYPE_CHECKING:`` alike, so an
  import moved into a function or hidden from the interpreter still counts.
  An edge goes from a module to each module of this repository it imports
  (``from . import x`` counts as importing ``x`` when ``x`` is a module; a
  module's own parent packages are not edges, since Python has run them
  before it). A cycle is printed as the chain of modules that closes it.
* No module of the package imports another one inside a function (which
  would hide an edge from a reader of the imports at the top), except the
  command line, which imports each command's module when that command runs.
* No module of the package uses another module's private (``_``) name:
  neither ``from .x import _name`` nor ``x._name``.
* The README's "How to read the engine" lists the engine's modules in an
  order where each imports only modules listed before it.
* No module of the package is over 700 lines.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREES = ("microtape", "tests", "bench")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            if "typing" in path.relative_to(ROOT).parts[1:-1]:
                continue  # tests/typing: user scripts checked by the type checkers, not imported
            found[_module_name(path)] = path
    return found


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name of a (possibly relative) import in ``module``."""
    if level == 0:
        return target or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


@functools.cache  # three tests read it; parsing every file once is enough (nobody mutates it)
def import_graph() -> dict[str, set[str]]:
    """module -> the modules of this repository it imports, anywhere in its code."""
    modules = _modules()
    return {
        name: imports_of(name, path.name == "__init__.py", path.read_text(encoding="utf-8"), set(modules))
        for name, path in modules.items()
    }


def imports_of(name: str, is_package: bool, source: str, modules: set[str]) -> set[str]:
    """The modules among ``modules`` that module ``name`` (whose code is ``source``) imports."""
    found_edges: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, is_package, node.level, node.module)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        if name.split(".")[0] in ("tests", "bench"):
            # run as scripts or by pytest with their folder on sys.path: ``import chain`` is bench/chain.py
            folder = name.split(".")[0]
            targets += [f"{folder}.{t}" for t in targets if t and f"{folder}.{t.split('.')[0]}" in modules]
        for target in targets:
            # the longest prefix that is one of our modules: microtape.ops.add -> microtape.ops
            parts = target.split(".")
            while parts and ".".join(parts) not in modules:
                parts.pop()
            found = ".".join(parts)
            if parts and found != name and not name.startswith(found + "."):
                found_edges.add(found)  # a package's own __init__ always runs first: not an edge
    return found_edges


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_through(graph, set(c)) for c in components]


def _cycle_through(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest closed chain inside ``component``, starting at its first module."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt: list[str] = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    return paths[v] + [start]
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    return sorted(component)


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "microtape._runtime" in graph["microtape.tensor"]  # from . import _runtime
    assert "microtape" in graph["tests.test_api"]  # import microtape as mt
    hidden = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .tensor import Tensor\n"
        "def f() -> None:\n    from . import ops\n"
    )
    modules = {"microtape._types", "microtape.tensor", "microtape.ops"}
    assert imports_of("microtape._types", False, hidden, modules) == {"microtape.tensor", "microtape.ops"}
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


LAZY_OK = {"cli.py"}
"""The command line imports each command's module when that command runs, so that
``python -m microtape --help`` does not load the grader, the tour or the dashboard."""


def _package_modules() -> list[Path]:
    return sorted((ROOT / "microtape").glob("*.py"))


def test_no_import_of_the_package_inside_a_function() -> None:
    hidden: list[str] = []
    for path in _package_modules():
        if path.name in LAZY_OK:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("microtape")):
                    hidden.append(f"{path.name}:{node.lineno} in {fn.name}(): from {'.' * node.level}{node.module or ''}")
                elif isinstance(node, ast.Import) and any(a.name.startswith("microtape") for a in node.names):
                    hidden.append(f"{path.name}:{node.lineno} in {fn.name}(): import microtape")
    assert not hidden, "imports hidden in functions (move them to the top):\n" + "\n".join(hidden)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_private_name_used_across_modules() -> None:
    package = {p.stem for p in _package_modules()}
    uses: list[str] = []
    for path in _package_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_aliases: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                for alias in node.names:
                    if node.module is None and alias.name in package:
                        module_aliases.add(alias.asname or alias.name)  # from . import _runtime
                    elif node.module is not None and _private(alias.name):
                        uses.append(f"{path.name}:{node.lineno}: from .{node.module} import {alias.name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in module_aliases:
                if _private(node.attr):
                    uses.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not uses, "private names used outside their module:\n" + "\n".join(uses)


def _readme_engine_order() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## How to read the engine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"`(\w+)\.py`", section)


def test_the_readme_lists_the_engine_bottom_to_top() -> None:
    order = _readme_engine_order()
    assert len(order) == len(set(order)), f"listed twice: {sorted({m for m in order if order.count(m) > 1})}"
    graph = import_graph()
    package = {name.split(".")[1] for name in graph if name.count(".") == 1 and name.startswith("microtape.")}
    assert not package - set(order) - {"__main__"}, f"not in the README's list: {sorted(package - set(order))}"
    for i, stem in enumerate(order):
        name = f"microtape.{stem}"
        assert name in graph, f"README lists {stem}.py, which does not exist"
        later = {f"microtape.{s}" for s in order[i + 1 :]}
        upward = sorted(graph[name] & later)
        assert not upward, f"README lists {stem}.py before {upward}, which it imports"


def test_no_module_of_the_package_is_over_700_lines() -> None:
    long = {p.name: n for p in _package_modules() if (n := len(p.read_text(encoding="utf-8").splitlines())) > 700}
    assert not long, f"split these by concept: {long}"
