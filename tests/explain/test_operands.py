"""Steps a student can tell apart: each names its operand (a variable's name, the explained input's
name, else the operand's text on the line), two ``mul`` on one line read differently, the
backward steps show their local derivatives, hostile names stay text in HTML and SVG, lines in
Jupyter read "cell N, line M", and the cost of an explanation is a few VJPs per recorded op."""

from __future__ import annotations

import os
import sys
import xml.dom.minidom
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import microtape as mt
from microtape.engine.primitive import OPS

Tensor = mt.Tensor
COLUMNS = sys.version_info >= (3, 11)  # co_positions(): the columns of each call


def test_two_muls_on_one_line_read_differently() -> None:
    x, w = mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0])
    e = mt.explain_gradient(lambda x, w: (x * w * 2.0).sum(), [x, w], wrt=1, index=0)
    (path,) = e.paths
    assert [s.op for s in path.steps] == ["sum", "mul", "mul"]
    outer, inner = path.steps[1], path.steps[2]
    assert inner.operand == "w" and inner.input_text() == "w[0]"  # the explained input, by f's name
    if COLUMNS:
        assert outer.operand == "x * w" and outer.input_text() == "(x * w)[0]"
        assert (outer.expression, inner.expression) == ("x * w * 2.0", "x * w")
        assert path.steps[0].operand == "x * w * 2.0"
    assert outer.where == inner.where  # one line: the texts tell them apart
    assert "(x * w)[0]" in str(e) or not COLUMNS


def test_variables_and_the_explained_tensor_go_by_their_names() -> None:
    w = mt.variable(mt.tensor([[0.5], [-1.0]]), name="w")
    b = mt.variable(mt.scalar(0.1), name="bias")
    xs = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    with mt.GradientTape(persistent=True) as tape:
        h = mt.tanh(mt.matmul(xs, w) + b)
        loss = (h * h).mean()
    e = tape.explain(loss, w, index=(1, 0))
    assert e.source == "w" and "d output / d w[1, 0]" in str(e)  # not "source"
    ops = {s.op: s for s in e.paths[0].steps}
    assert ops["matmul"].operand == "w"
    if COLUMNS:
        assert ops["add"].operand == "mt.matmul(xs, w)" and ops["tanh"].operand == "mt.matmul(xs, w) + b"
        assert {s.operand for p in e.paths for s in p.steps if s.op == "mul"} == {"h"}  # h * h: by the name the code gives it
    eb = tape.explain(loss, b)
    assert eb.source == "bias" and {p.steps[-1].operand for p in eb.paths} == {"bias"}
    x = mt.tensor([1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape2:
        tape2.watch(x)
        y = (x * x).sum()
    assert tape2.explain(y, x).source == "x"  # a plain tensor: the caller's name for it
    tape.release()
    tape2.release()


def test_operand_texts_of_calls_methods_and_operators() -> None:
    x = mt.tensor([0.2, 0.4])
    c = mt.tensor([1.0, 0.0])

    def f(x: Tensor) -> Tensor:
        return mt.where(c.greater(0.5), mt.exp(x), -x).sum() + mt.where(c.greater(0.5), mt.exp(x) * mt.exp(x) * mt.exp(x), x).sum()

    e = mt.explain_gradient(f, [x], index=0)
    steps = [s for p in e.paths for s in p.steps]
    by_op = {s.op: s for s in steps}
    if COLUMNS:
        assert "mt.where(c.greater(0.5), mt.exp(x), -x)" in {s.operand for s in steps if s.op == "sum"}
        assert any(s.operand.startswith("mt.where(") and "…" in s.operand and len(s.operand) <= 48 for s in steps)  # cut
        assert {s.operand for s in steps if s.op == "where"} == {"mt.exp(x)", "-x", "mt.exp(x) * mt.exp(x) * mt.exp(x)", "x"}
        assert by_op["exp"].operand == "x" and by_op["exp"].expression == "mt.exp(x)"
    assert "mt.where" in str(e) or not COLUMNS


def test_a_line_without_source_falls_back_to_the_line() -> None:
    namespace: dict[str, object] = {"mt": mt}
    exec(compile("def f(x):\n    return (x * x * 2.0).sum()\n", "<no source>", "exec"), namespace)
    f = namespace["f"]
    assert callable(f)
    e = mt.explain_gradient(f, [mt.tensor([1.0])])
    assert all(s.expression == "" for p in e.paths for s in p.steps)
    assert {s.where for p in e.paths for s in p.steps} == {"<no source>:2"}
    assert e.paths[0].steps[-1].operand == "x"  # still: the explained input's name
    assert "input 0[0]" in str(e) or "x[0]" in str(e)


def test_backward_steps_show_each_local_derivative_and_operand() -> None:
    x, y = mt.scalar(2.0), mt.scalar(3.0)
    with mt.GradientTape() as tape:
        tape.watch([x, y])
        z = x * y + mt.sin(y)
    steps = list(tape.backward_steps(z, {"x": x, "y": y}))
    by_op = {s.op: s for s in steps}
    mul, sin = by_op["mul"], by_op["sin"]
    assert [t.item() if t is not None else None for t in mul.local] == [3.0, 2.0]
    assert sin.local[0] is not None and sin.local[0].item() == pytest.approx(-0.9899924966)
    assert mul.operands == ("x", "y")
    assert "local 3.0, 2.0 -> grads 3.0, 2.0" in str(mul)
    html = mul._repr_html_()
    assert "local derivative by x" in html and "VJP for y" in html
    if COLUMNS:
        assert mul.expression == "x * y" and "(x * y)" in str(mul)


def test_backward_steps_locals_of_reductions_matmul_and_broadcasting() -> None:
    a = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = mt.tensor([[0.5, -1.0], [2.0, 0.25]])
    v = mt.tensor([10.0, 20.0])
    with mt.GradientTape() as tape:
        tape.watch([a, b])
        loss = ((a @ b) * v).max(axis=1).sum()
    by_op = {s.op: s for s in tape.backward_steps(loss, [a, b])}
    mm = by_op["matmul"].local
    assert mm[0] is not None and mm[0].tolist() == b.tolist()  # d (a @ b)[r, c] / d a[r, k] = b[k, c]
    assert mm[1] is not None and mm[1].tolist() == a.tolist()  # d (a @ b)[r, c] / d b[k, c] = a[r, k]
    mul = by_op["mul"].local
    assert mul[0] is not None and mul[0].tolist() == [[10.0, 20.0], [10.0, 20.0]] and mul[1] is None  # v broadcast, entry by entry
    mx = by_op["max"].local[0]
    assert mx is not None and mx.tolist() == [[1.0, 0.0], [1.0, 0.0]]  # rows [25, -15] and [95, -40]: 1 for the chosen entry


def hostile_names() -> Iterator[str]:
    yield "w\x01\x1b[31m"
    yield "<script>alert('x')</script>&"
    yield "\ufffe\x7fname\x00"


@pytest.mark.parametrize("name", list(hostile_names()))
def test_svg_and_html_stay_well_formed_for_any_name(name: str) -> None:
    w = mt.variable(mt.tensor([1.0, -2.0]), name=name)
    with mt.GradientTape(persistent=True) as tape:
        loss = mt.relu(w * 2.0).sum()
    _ = tape.gradient(loss, w)
    picture = tape.to_svg(title=name)
    xml.dom.minidom.parseString(picture)  # well-formed XML, or this raises
    assert "<script>" not in picture and "\x1b" not in picture and "\x01" not in picture
    for page in (tape._repr_html_(), tape.explain(loss, w, index=1)._repr_html_()):
        assert "<script>" not in page and "\x1b" not in page and "\x00" not in page
        xml.dom.minidom.parseString(f"<div>{page.replace('<br>', '')}</div>")
    steps_page = next(iter(tape.backward_steps(loss, {name: w})))._repr_html_()
    assert "<script>" not in steps_page and "\x1b" not in steps_page
    tape.release()


def test_explaining_one_entry_costs_a_few_vjps_per_op_whatever_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted, not timed: the VJP calls and the entries of their output gradients, against one
    backward pass, for inputs of 10 and of 1,000 entries (4,000 and 48 x 48 are bench/explain.py's)."""
    calls: Counter[str] = Counter()

    def counting(name: str, vjp: Callable[..., object]) -> Callable[..., object]:
        def wrapper(dout: Tensor, *args: object, **kwargs: object) -> object:
            calls["vjp"] += 1
            calls["entries"] += dout.size
            return vjp(dout, *args, **kwargs)

        return wrapper

    for name, op in OPS.items():
        if op.vjp is not None:
            monkeypatch.setattr(op, "vjp", counting(name, op.vjp))

    def cost(n: int, f: Callable[[Tensor], Tensor], x: Tensor) -> tuple[float, float]:
        calls.clear()
        mt.grad(f)(x)
        grad = dict(calls)
        calls.clear()
        mt.explain_gradient(f, [x], index=n // 2)
        return calls["vjp"] / grad["vjp"], calls["entries"] / grad["entries"]

    for n in (10, 1_000):
        t = mt.random_normal((n,), seed=1)
        vector = cost(n, lambda x: ((mt.tanh(x) * 2.0 - t) ** 2).mean(), mt.random_normal((n,), seed=2))
        assert vector[0] <= 4.0 and vector[1] <= 4.0, vector
    for side in (4, 24):
        xs = mt.random_normal((side, side), seed=3)
        weight = cost(side * side, lambda w: mt.tanh(xs @ w).sum(), mt.random_normal((side, side), seed=4))
        assert weight[0] <= 4.0 and weight[1] <= 4.0, weight


@pytest.mark.slow  # about 3 s: starts a Jupyter kernel
def test_jupyter_cells_read_cell_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real kernel: the explanation's lines and backward_steps' read "cell N, line M" (IPython
    compiles a cell under a file name such as ``/tmp/ipykernel_81/3295137715.py``)."""
    import nbformat
    from ipykernel.kernelspec import install
    from nbclient import NotebookClient

    install(kernel_name="microtape-explain-test", display_name="microtape tests", prefix=str(tmp_path / "kernel"))
    monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join([str(tmp_path / "kernel" / "share" / "jupyter"), *filter(None, [os.environ.get("JUPYTER_PATH")])]))
    cells = [
        "import microtape as mt",
        "x = mt.tensor([1.0, 4.0])\n\ndef f(x):\n    return (mt.sqrt(x) * 2.0).sum()",
        "e = mt.explain_gradient(f, [x], index=0)\nprint(str(e))",
        "with mt.GradientTape() as tape:\n    tape.watch(x)\n    y = (x * x).sum()\nfor s in tape.backward_steps(y, x):\n    print(s)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])  # type: ignore[no-untyped-call]
    NotebookClient(nb, timeout=120, kernel_name="microtape-explain-test", resources={"metadata": {"path": str(tmp_path)}}).execute()
    out = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "cell 2, line 4" in out, out  # the def ran as In [2]; its return is the cell's 4th line
    assert "cell 4, line 3" in out, out
    assert "ipykernel" not in out and ".py:" not in out, out
