"""The layering of the code: packages in layers, no import cycle, no hidden import, no private name shared.

* ``microtape/`` is a handful of top-level modules (``errors``, ``_version``
  at the bottom; ``__init__``, ``__main__``, ``cli`` and the ``exercise``
  alias for check files at the top) and one subpackage per concern, in the
  order of the book: ``core``, ``ops``, ``autodiff``, ``checking``,
  ``debug``, ``train``, ``classroom``, ``dashboard``. A module of a
  subpackage imports only its own subpackage, the subpackages below it and
  the bottom modules; ``core`` imports no other subpackage.
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
* No module uses another module's private (``_``) name, and no test or
  benchmark imports a private module or name of the package.
* The README's "How to read the engine" lists the packages bottom to top and,
  inside each, its modules in an order where each imports only modules listed
  before it.
* No module of the package is over 500 lines; no module's name repeats its
  folder's name as a prefix; the tests folder mirrors the package's folders.
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


@functools.cache  # several tests read it; parsing every file once is enough (nobody mutates it)
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


PACKAGES = ("core", "ops", "autodiff", "checking", "debug", "train", "classroom", "dashboard")
"""The subpackages, bottom to top (the order of the book)."""
BOTTOM = {"errors", "_version"}
"""Top-level modules every layer may import."""
TOP = {"__init__", "__main__", "cli", "exercise"}
"""Top-level modules above every subpackage."""


def _layer(module: str) -> int:
    """0 for the bottom modules, 1.. for the subpackages in order, len+1 for the top."""
    parts = module.split(".")
    if len(parts) == 1:
        return len(PACKAGES) + 1  # microtape/__init__.py
    if parts[1] in PACKAGES:
        return PACKAGES.index(parts[1]) + 1
    if parts[1] in BOTTOM:
        return 0
    assert parts[1] in TOP, f"microtape/{parts[1]}.py is neither a bottom, a top module nor a subpackage"
    return len(PACKAGES) + 1


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "microtape.core.runtime" in graph["microtape.core.tensor"]  # from . import runtime
    assert "microtape" in graph["tests.test_api"]  # import microtape as mt
    hidden = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .tensor import Tensor\n"
        "def f() -> None:\n    from .. import ops\n"
    )
    modules = {"microtape.core.types", "microtape.core.tensor", "microtape.ops"}
    assert imports_of("microtape.core.types", False, hidden, modules) == {"microtape.core.tensor", "microtape.ops"}
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_top_level_shows_the_layers() -> None:
    top = {p.stem for p in (ROOT / "microtape").glob("*.py")}
    folders = {p.name for p in (ROOT / "microtape").iterdir() if (p / "__init__.py").is_file()}
    assert top == BOTTOM | TOP, f"top-level modules: {sorted(top)}; move the others into a subpackage"
    assert len(top) <= 12
    assert folders == set(PACKAGES), f"subpackages {sorted(folders)} are not the list {PACKAGES}"


def test_each_subpackage_imports_only_the_ones_below_it() -> None:
    graph = import_graph()
    upward: list[str] = []
    for module, targets in sorted(graph.items()):
        if not module.startswith("microtape"):
            continue
        for target in sorted(t for t in targets if t.startswith("microtape")):
            if target == "microtape":
                if _layer(module) <= len(PACKAGES):
                    upward.append(f"{module} imports microtape itself (import from the defining module)")
            elif _layer(target) > _layer(module):
                upward.append(f"{module} imports {target}, a higher layer")
    assert not upward, "imports that go up the layers:\n" + "\n".join(upward)
    core = {t.split(".")[1] for m, ts in graph.items() if m.startswith("microtape.core") for t in ts if t.count(".") >= 1}
    assert core <= {"core", *BOTTOM}, f"core imports {sorted(core - {'core'})}"


LAZY_OK = {"cli.py"}
"""The command line imports each command's module when that command runs, so that
``python -m microtape --help`` does not load the grader, the tour or the dashboard."""


def _package_modules() -> list[Path]:
    return sorted((ROOT / "microtape").rglob("*.py"))


def _short(path: Path) -> str:
    return str(path.relative_to(ROOT / "microtape"))


def test_no_import_of_the_package_inside_a_function() -> None:
    hidden: list[str] = []
    for path in _package_modules():
        if _short(path) in LAZY_OK:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("microtape")):
                    hidden.append(f"{_short(path)}:{node.lineno} in {fn.name}(): from {'.' * node.level}{node.module or ''}")
                elif isinstance(node, ast.Import) and any(a.name.startswith("microtape") for a in node.names):
                    hidden.append(f"{_short(path)}:{node.lineno} in {fn.name}(): import microtape")
    assert not hidden, "imports hidden in functions (move them to the top):\n" + "\n".join(hidden)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_private_name_used_across_modules() -> None:
    modules = _modules()
    uses: list[str] = []
    for name, path in sorted(modules.items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        module_aliases: set[str] = set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = _resolve(name, is_package, node.level, node.module)
            if not base.startswith("microtape"):
                continue
            if any(_private(part) for part in base.split(".")[1:]) and base != "microtape._version":
                uses.append(f"{name}:{node.lineno}: from {base} import ... (a private module)")
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    module_aliases.add(alias.asname or alias.name)  # from . import runtime
                    if _private(alias.name):
                        uses.append(f"{name}:{node.lineno}: from {base} import {alias.name} (a private module)")
                elif _private(alias.name) and alias.name != "__version__":
                    uses.append(f"{name}:{node.lineno}: from {base} import {alias.name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in module_aliases:
                if _private(node.attr):
                    uses.append(f"{name}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not uses, "private names used outside their module:\n" + "\n".join(uses)


def _readme_engine_order() -> list[tuple[str, list[str]]]:
    """[(folder, [module stems in reading order])] from the README, bottom to top ("" is the top level)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## How to read the engine", 1)[1].split("\n## ", 1)[0]
    order: list[tuple[str, list[str]]] = []
    for item in re.split(r"\n(?=\d+\. )", section):
        folder = re.match(r"\d+\. \*\*`(\w+)/`\*\*", item)
        stems = re.findall(r"`(\w+)\.py`", item)
        if folder:
            order.append((folder.group(1), stems))
        elif re.match(r"\d+\. ", item):
            order.append(("", stems))
    return order


def test_the_readme_lists_the_engine_folder_by_folder_bottom_to_top() -> None:
    order = _readme_engine_order()
    graph = import_graph()
    folders = [f for f, _ in order if f]
    assert folders == list(PACKAGES), f"README lists the folders {folders}, the layers are {list(PACKAGES)}"
    listed: list[str] = []
    for folder, stems in order:
        listed += [f"microtape.{folder}.{s}" if folder else f"microtape.{s}" for s in stems]
    names = [n.removesuffix(".__init__") for n in listed]
    assert len(names) == len(set(names)), f"listed twice: {sorted({m for m in names if names.count(m) > 1})}"
    package = {n for n in graph if n.startswith("microtape.") and n not in set(f"microtape.{p}" for p in PACKAGES)}
    assert not package - set(names) - {"microtape.__main__"}, f"not in the README's list: {sorted(package - set(names))}"
    for i, name in enumerate(names):
        assert name in graph, f"README lists {name}, which does not exist"
        upward = sorted(graph[name] & set(names[i + 1 :]))
        assert not upward, f"README lists {name} before {upward}, which it imports"


def test_no_module_of_the_package_is_over_500_lines() -> None:
    long = {_short(p): n for p in _package_modules() if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert not long, f"split these by concept: {long}"


def test_no_module_repeats_its_folders_name() -> None:
    repeats = [_short(p) for p in _package_modules() if p.parent.name != "microtape" and p.stem.startswith(p.parent.name)]
    assert not repeats, f"name these by what they hold, not by their folder: {repeats}"


def test_the_tests_mirror_the_package() -> None:
    tests = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert set(PACKAGES) <= tests, f"tests/ has no folder for {sorted(set(PACKAGES) - tests)}"
