"""The layering of the code: a sealed engine on a budget, packages in layers, no import cycle.

* ``microtape/`` is a handful of top-level modules (``errors``, ``language``
  and ``_version`` at the bottom; ``__init__``, ``__main__``, ``cli`` and the ``exercise``
  alias for check files at the top) and one subpackage per job, bottom to
  top: ``engine``, ``ops``, ``views``, ``explain``, ``autodiff``,
  ``checking``, ``debug``, ``train``, ``replay``, ``i18n``, ``book``,
  ``classroom``, ``dashboard``. A module of a subpackage imports only its
  own subpackage, the subpackages below it and the bottom modules; the
  engine imports nothing of microtape but ``errors``, and its import closure
  holds at most ``ENGINE_BUDGET`` lines of code (the figure is printed).
* The import graph of the package, the tests and the benchmarks has no
  cycle. Every ``import`` and ``from ... import`` is read with ``ast``: at
  module level, inside functions and under ``if TYPE_CHECKING:`` alike, so an
  import moved into a function or hidden from the interpreter still counts.
* No module of the package imports another one inside a function, except the
  command line, which imports each command's module when that command runs.
* No module uses another module's private (``_``) name, and no test or
  benchmark imports a private module or name of the package.
* Each folder's ``__init__`` docstring names every file it holds, in an order
  where each imports only files named before it (the engine's is the reading
  order); every module opens with its job; no two modules share a name, no
  module's name repeats its folder's; the tests folder mirrors the package's.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from pathlib import Path

import pytest

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


PACKAGES = (
    "engine", "ops", "views", "explain", "autodiff", "checking", "debug",
    "train", "replay", "i18n", "book", "classroom", "dashboard",
)
"""The subpackages, bottom to top: each imports only the ones before it."""
BOTTOM = {"errors", "language", "_version"}
"""Top-level modules every layer may import."""
TOP = {"__init__", "__main__", "cli", "exercise"}
"""Top-level modules above every subpackage."""
ENGINE_BUDGET = 2000
"""Lines of code (docstrings, comments and blank lines not counted) the engine's import closure may hold."""


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
    assert "microtape.engine.arena" in graph["microtape.engine.tensor"]  # from . import runtime
    assert "microtape" in graph["tests.test_api"]  # import microtape as mt
    hidden = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .tensor import Tensor\n"
        "def f() -> None:\n    from .. import ops\n"
    )
    modules = {"microtape.engine.types", "microtape.engine.tensor", "microtape.ops"}
    assert imports_of("microtape.engine.types", False, hidden, modules) == {"microtape.engine.tensor", "microtape.ops"}
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
    outside = sorted(
        f"{m} imports {t}" for m, ts in graph.items() if m.startswith("microtape.engine")
        for t in ts if not (t.startswith("microtape.engine") or t == "microtape.errors")
    )
    assert not outside, "the engine imports nothing of microtape but errors:\n" + "\n".join(outside)


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


def _listed_files(docstring: str) -> list[str]:
    """The module stems a folder's docstring names (``tape.py`` gives ``tape``), in order, once each."""
    stems: list[str] = []
    for stem in re.findall(r"``(\w+)\.py``", docstring):
        if stem not in stems:
            stems.append(stem)
    return stems


@pytest.mark.parametrize("folder", PACKAGES)
def test_each_folder_says_what_it_holds_in_reading_order(folder: str) -> None:
    """A folder's ``__init__`` docstring names every file it holds, each after the files it imports:
    the engine's is *the* reading order (README and the engine page link to it)."""
    init = ROOT / "microtape" / folder / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    files = sorted(p.stem for p in init.parent.glob("*.py") if p.name != "__init__.py")
    listed = _listed_files(doc)
    assert set(listed) >= set(files), f"microtape/{folder}/__init__.py does not name {sorted(set(files) - set(listed))}"
    graph = import_graph()
    order = [f"microtape.{folder}.{stem}" for stem in listed if stem in files]
    for i, name in enumerate(order):
        later = sorted(graph[name] & set(order[i + 1 :]))
        assert not later, f"microtape/{folder}/__init__.py lists {name} before {later}, which it imports"


def test_each_module_opens_with_its_job() -> None:
    """Every module's docstring opens with a line (at most three) that says the module's job."""
    vague: list[str] = []
    for path in _package_modules():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        first = (doc or "").split("\n\n")[0]
        if not doc or len(first.splitlines()) > 3 or first.strip().startswith("TODO"):
            vague.append(_short(path))
    assert not vague, f"open these modules with one to three lines that say their job: {vague}"


def code_lines(source: str) -> int:
    """Lines that hold code: not blank, not only a comment, not part of a docstring."""
    tree = ast.parse(source)
    docs: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            docs.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))  # docstrings, attribute docs
    lines: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            lines.update(n for n in range(tok.start[0], tok.end[0] + 1) if n not in docs)
    return len(lines)


def engine_closure() -> list[str]:
    """``microtape.engine`` and every module it imports, directly or not."""
    graph = import_graph()
    seen = {"microtape.engine"}
    todo = ["microtape.engine", *(m for m in graph if m.startswith("microtape.engine."))]
    while todo:
        for dep in graph[todo.pop()]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return sorted(seen | {m for m in graph if m.startswith("microtape.engine.")})


def test_the_engine_fits_its_budget(capsys: pytest.CaptureFixture[str]) -> None:
    """The engine a student reads is small: at most ENGINE_BUDGET lines of code in its import
    closure (as tinygrad's CI counts its lines); the figure is printed on every run."""
    modules = _modules()
    counts = {m: code_lines(modules[m].read_text(encoding="utf-8")) for m in engine_closure()}
    total = sum(counts.values())
    with capsys.disabled():
        print(f"\nthe engine: {total} lines of code in {len(counts)} modules (budget {ENGINE_BUDGET})")
    assert counts.keys() >= {"microtape.engine.tape", "microtape.engine.backward", "microtape.errors"}
    assert set(counts) <= {*(m for m in modules if m.startswith("microtape.engine")), "microtape.errors", "microtape.language"}
    assert total <= ENGINE_BUDGET, "over budget: " + ", ".join(f"{m} {n}" for m, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def test_code_lines_counts_code_only() -> None:
    source = '"""Doc."""\n\n# a comment\nx = 1  # counted\n\ndef f() -> None:\n    """Doc\n    more."""\n    return None\n'
    assert code_lines(source) == 3


def test_no_two_modules_share_a_name() -> None:
    """A file name says one thing: no stem is used twice in the package (``__init__`` aside)."""
    stems: dict[str, list[str]] = {}
    for path in _package_modules():
        if path.name != "__init__.py":
            stems.setdefault(path.stem, []).append(_short(path))
    repeated = {stem: paths for stem, paths in stems.items() if len(paths) > 1}
    assert not repeated, f"name these by what they hold: {repeated}"


def test_no_module_repeats_its_folders_name() -> None:
    repeats = [_short(p) for p in _package_modules() if p.parent.name != "microtape" and p.stem.startswith(p.parent.name)]
    assert not repeats, f"name these by what they hold, not by their folder: {repeats}"


def test_the_tests_mirror_the_package() -> None:
    tests = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert set(PACKAGES) <= tests, f"tests/ has no folder for {sorted(set(PACKAGES) - tests)}"
