"""What a solution gives away, to look for in what students install: its function bodies, its lines, its accepted answers.

``test_answers.py`` scans the checkout's check files with it, ``tests/test_wheel.py``
the wheel's and the sdist's. A solution's *function bodies* are those of its
functions (and methods) that differ from the starter's; its *lines* are its code
lines not in the starter (16 characters or more, a loop's or a branch's head aside); its *accepted answers* are the
values of its module-level constants that differ from the starter's (``CULPRIT =
"custom_grad(swish)"``), as the literals a check would hold; its *api* is the
microtape functions it newly calls to compute them (``clip_by_global_norm``), which a
check must not call (the functions that make inputs and the checker's instruments aside).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "tutorials" / "exercises" / "solutions"
STARTERS = REPO / "tutorials" / "exercises"


def flat(text: str) -> str:
    """Code with its layout left out: every run of whitespace one space."""
    return " ".join(text.split())


def _definitions(text: str) -> dict[str, tuple[str, str]]:
    """{name: (its source, its body's source)} for each function and method of a file."""
    found: dict[str, tuple[str, str]] = {}
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body[1:] if ast.get_docstring(node) is not None and len(node.body) > 1 else node.body
            found[f"{node.name}:{node.lineno}"] = (ast.get_source_segment(text, node) or "", "\n".join(ast.get_source_segment(text, b) or "" for b in body))
    return found


def _constants(text: str) -> dict[str, object]:
    found: dict[str, object] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


INSTRUMENTS = frozenset({
    "tensor", "tensor1d", "tensor2d", "scalar", "variable", "zeros", "ones", "fill", "Tensor", "Variable",  # inputs
    "GradientTape", "check_grads", "numerical_grad", "grads", "grad", "GradCheckReport", "ProfileInfo", "GradientMonitor",  # instruments
})
"""microtape names a check may use whatever the solution calls: they make inputs, or measure."""


def _api(tree: ast.AST) -> set[str]:
    """The microtape names code uses: ``mt.X`` and ``from microtape import X``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "mt":
            found.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and node.module == "microtape":
            found.update(alias.name for alias in node.names)
    return found


def solution_api(name: str) -> set[str]:
    """The microtape functions the solution newly calls to compute its answers (inputs and instruments aside)."""
    solution = ast.parse((SOLUTIONS / f"{name}.py").read_text(encoding="utf-8"))
    starter = ast.parse((STARTERS / f"{name}.py").read_text(encoding="utf-8"))
    return _api(solution) - _api(starter) - INSTRUMENTS


def giveaways(name: str) -> dict[str, list[str]]:
    """What the solution of ``name`` gives away: {"bodies": [...], "lines": [...], "answers": [...]}, each flattened."""
    solution = (SOLUTIONS / f"{name}.py").read_text(encoding="utf-8")
    starter = (STARTERS / f"{name}.py").read_text(encoding="utf-8")
    starter_sources = {flat(source) for source, _ in _definitions(starter).values()}
    bodies = [flat(body) for source, body in _definitions(solution).values() if flat(source) not in starter_sources and len(flat(body)) >= 16]
    starter_lines = {flat(line.split("  # ")[0]) for line in starter.splitlines()}
    lines = []
    for raw in solution.splitlines():
        code = flat(raw.split("  # ")[0])
        generic = re.fullmatch(r"(for|while|with|if|elif|else|try|except|finally)\b.*:", code) is not None  # a loop's head gives nothing away
        if len(code) >= 16 and code not in starter_lines and not generic and not code.startswith(("#", "import ", "from ", '"""', "def ", "class ")):
            lines.append(code)
    before = _constants(starter)
    answers = []
    for key, value in _constants(solution).items():
        if key in before and before[key] != value and key != "EXERCISE":
            answers += [repr(value), f'"{value}"'] if isinstance(value, str) else [repr(value)]
    return {"bodies": bodies, "lines": lines, "answers": answers}


def found_in(text: str, name: str) -> list[str]:
    """The giveaways of ``name``'s solution that ``text`` (a check file, say) holds, and the microtape functions it shares with it."""
    shown = flat(text)
    given = giveaways(name)
    found = [f"{kind}: {item}" for kind, items in given.items() for item in items if item in shown or (kind == "answers" and item in text)]
    return found + [f"api: {n}" for n in sorted(solution_api(name) & _api(ast.parse(text)))]
