"""One rule per op, and it is the one that runs.

A student who edits the VJP printed beside an op must see every gradient
change, whoever watches the pass: ``mt.grad`` (a first-order pass nothing
else watches), a tape inside another tape, and ``check_grads``, which must
then fail. The test edits the source text of each differentiable op's VJP
in a copy of the package (every ``return`` of the VJP gives each gradient
plus one) and runs the checks in a fresh interpreter that imports the copy:
nothing is replaced at run time, so a second copy of a rule anywhere in the
package (a VJP on lists, a kernel table) would let a gradient stay right and
fail this test.
"""

from __future__ import annotations

import ast
import inspect
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import microtape as mt
from microtape.engine.primitive import OPS, Op, Primitive

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "microtape"
DIFFERENTIABLE = sorted(name for name, op in OPS.items() if op.differentiable)


def test_an_op_has_exactly_one_vjp_field() -> None:
    """``Op`` holds one rule for the backward pass: ``vjp`` (no list-only twin beside it)."""
    rules = [name for name in Op.__dataclass_fields__ if "vjp" in name and name != "wants_needs"]
    assert rules == ["vjp"]


def _defvjp_sites() -> dict[str, list[str]]:
    """Every place the package attaches a VJP (``@x.defvjp`` above a function, or ``x.defvjp(fn)``),
    by the op name of ``x``."""
    sites: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        found: list[tuple[ast.expr, str]] = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += [(d, node.name) for d in node.decorator_list]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args and isinstance(node.args[0], ast.Name):
                found.append((node.func, node.args[0].id))
        for target, fn in found:
            if isinstance(target, ast.Attribute) and target.attr.startswith("defvjp") and isinstance(target.value, ast.Name):
                prim = getattr(sys.modules[module], target.value.id)
                assert isinstance(prim, Primitive), f"{module}: {target.value.id}.{target.attr} is not on a primitive"
                sites.setdefault(prim.op.name, []).append(f"{module}.{fn} ({target.attr})")
    return sites


def test_every_differentiable_op_has_one_vjp_beside_its_forward() -> None:
    sites = _defvjp_sites()
    for name in DIFFERENTIABLE:
        op = OPS[name]
        assert op.vjp is not None, f"{name} has no VJP"
        assert sites.get(name, []) == [f"{op.vjp.__module__}.{op.vjp.__name__} (defvjp)"], f"{name}: {sites.get(name)}"
        assert op.vjp.__module__ == op.forward.__module__, f"{name}'s VJP is not beside its forward"
    assert set(sites) <= set(DIFFERENTIABLE), f"VJPs of non-differentiable ops: {sorted(set(sites) - set(DIFFERENTIABLE))}"


def _mutated(source: str, vjp_name: str) -> str:
    """``source`` with every ``return`` of ``vjp_name`` giving each of its gradients plus one."""
    tree = ast.parse(source)
    lines = source.split("\n")
    (fn,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == vjp_name]
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
    assert returns, f"{vjp_name} has no return"
    for ret in sorted(returns, key=lambda r: r.lineno, reverse=True):
        assert ret.value is not None
        expr = ast.get_source_segment(source, ret.value)
        assert expr is not None
        indent = lines[ret.lineno - 1][: ret.col_offset]
        planted = f"return tuple(None if _g is None else _g + 1.0 for _g in ({expr}))  # planted: +1"
        head = lines[ret.lineno - 1][: ret.col_offset]
        tail = lines[(ret.end_lineno or ret.lineno) - 1][ret.end_col_offset or 0 :]
        lines[ret.lineno - 1 : ret.end_lineno] = [indent + planted if head.strip() == "" else head + planted + tail]
    return "\n".join(lines)


CHILD = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import microtape as mt
    assert mt.__file__.startswith(sys.argv[1]), mt.__file__
    from tests.op_cases import CASES, call, inputs_of
    name = sys.argv[2]
    out = []
    for case in CASES[name]:
        f = call(case)
        xs = inputs_of(case)
        g = mt.grads(lambda *ts: f(*ts))(xs)
        with mt.GradientTape() as outer:  # a watched pass: the VJP's ops are recorded
            outer.watch(xs)
            with mt.GradientTape() as inner:
                inner.watch(xs)
                y = f(*xs)
            watched = inner.gradient(y, xs)
        report = mt.check_grads(f, xs)
        out.append({
            "grad": [t.data_sync() for t in g],
            "watched": [None if t is None else t.data_sync() for t in watched],
            "ok": report.ok,
        })
    print(json.dumps(out))
    """
)


def _run(root: Path, name: str) -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), name], capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: list[dict[str, object]] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def copy_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("one_rule")
    shutil.copytree(PACKAGE, root / "microtape", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.mark.slow
@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_editing_the_vjp_in_its_source_changes_every_gradient(name: str, copy_root: Path) -> None:
    vjp = OPS[name].vjp
    assert vjp is not None
    source_file = Path(inspect.getsourcefile(vjp) or "")
    target = copy_root / source_file.relative_to(PACKAGE.parent)
    original = target.read_text(encoding="utf-8")
    target.write_text(_mutated(original, vjp.__name__), encoding="utf-8")
    try:
        planted = _run(copy_root, name)
    finally:
        target.write_text(original, encoding="utf-8")
    clean = _run(copy_root, name)
    for case, (bad, good) in enumerate(zip(planted, clean)):
        assert good["ok"], f"{name} case {case}: the unedited VJP fails check_grads"
        assert bad["grad"] != good["grad"], f"{name} case {case}: mt.grad did not change when the VJP was edited"
        assert bad["watched"] != good["watched"], f"{name} case {case}: a watched pass did not change"
        assert not bad["ok"], f"{name} case {case}: check_grads passed a VJP edited to be wrong"


def test_the_planted_edit_is_a_real_edit() -> None:
    source = "def _f_vjp(dout, out, x):\n    if x:\n        return (dout,)\n    return (None, dout)\n"
    mutated = _mutated(source, "_f_vjp")
    assert mutated.count("# planted: +1") == 2
    namespace: dict[str, object] = {}
    exec(compile(mutated, "<planted>", "exec"), namespace)  # noqa: S102 - the test's own source
    fn = namespace["_f_vjp"]
    assert callable(fn)
    assert fn(1.0, None, True) == (2.0,)
    assert fn(1.0, None, False) == (None, 2.0)
