"""Bugs planted on purpose that the rest of the suite let through: each test here fails on one.

A planted-bug check (``tests/mutation.py``) put small bugs into important
places one at a time; these went unnoticed until the tests below were
written. Each docstring names the bug it guards against, so that a reader
who weakens a test knows what it would let through again.
"""

from __future__ import annotations

import dataclasses
import io
import math
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import microtape as mt
from microtape import cli
from microtape.views import habits as _habits
from microtape.classroom import grader
from microtape.classroom.judge import Limits, grade_file
from microtape.dashboard.charts import esc

from ._fixtures import free_variables_made_by_the_test  # noqa: F401 - autouse in this module

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "tutorials" / "exercises" / "solutions"

# ── the page escapes what it shows ──────────────────────────────────────────────────────────

EVIL = '<img src=x onerror="alert(1)">'
ESCAPED = "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"


def test_the_escaping_function_escapes_markup_and_quotes() -> None:
    """Planted bug: ``esc`` replaced by ``return text``."""
    assert esc(EVIL) == ESCAPED
    assert esc("a & b < c > d 'e'") == "a &amp; b &lt; c &gt; d &#x27;e&#x27;"


def test_a_title_and_names_with_markup_reach_the_page_as_text() -> None:
    """Planted bug: the dashboard's HTML escaping replaced by ``return text``: an ``<img onerror>``
    in the title, a variable's name or a mark's label then runs as markup in the reader's browser."""
    w = mt.variable(mt.tensor([1.0, -2.0]), name="planted_w")
    dash = mt.Dashboard(EVIL)
    for step in range(3):
        value, grads = mt.variable_grads(lambda: (w * w).sum())
        dash.log(step, loss=value, grads={EVIL: grads[w]}, variables={EVIL: w})
        mt.dispose([value, *grads.values()])
    dash.mark(1, EVIL)
    for page in (dash.html(), dash.html(live=True), *dash.render()["charts"].values()):
        assert "<img" not in page and 'onerror="' not in page, "markup from a name reached the page unescaped"
    report = dash.html()
    assert report.count(ESCAPED) >= 3, "the title, the name and the mark's label are shown, escaped"
    assert f"<title>{ESCAPED}</title>" in report and f"<h1>{ESCAPED}</h1>" in report


# ── the grader's time limit is the one it reports ───────────────────────────────────────────


def test_the_child_is_given_the_timeout_the_user_asked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted bug: the grader's ``--timeout`` multiplied by ten while the message still says
    "after 3 s". The limit the grader watches the child with must be the one on the command line
    (a stand-in records it, then runs the real watch with a short limit so the test is quick)."""
    runaway = tmp_path / "runaway.py"
    runaway.write_text('EXERCISE = "ex00_gradient_by_hand"\nwhile True:\n    pass\n', encoding="utf-8")
    given: list[float] = []
    real = grade_file

    def recording(path: Path, limits: Limits, start: Any) -> Any:
        given.append(limits.timeout)
        return real(path, dataclasses.replace(limits, timeout=min(limits.timeout, 0.2)), start)

    monkeypatch.setattr(grader, "grade_file", recording)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    code = cli.main(["grade", str(runaway), "--timeout", "3", "--json"])
    document = json.loads(out.getvalue())
    assert code == 1 and document["timeout_seconds"] == 3.0
    [entry] = document["files"]
    assert entry["status"] == "timeout" and "stopped after 3 s" in str(entry["message"])
    assert given and max(given) <= 3.0, f"the child was watched for up to {given} s, not 3 s"


@pytest.mark.slow
def test_a_runaway_file_is_stopped_near_its_limit_not_ten_times_later(tmp_path: Path) -> None:
    """Planted bug: ``--timeout`` multiplied by ten. With a 2 s limit the file must be stopped well
    before 20 s: a margin of 10 s covers a busy machine, and the bug would take 20 s."""
    runaway = tmp_path / "runaway.py"
    runaway.write_text('EXERCISE = "ex00_gradient_by_hand"\nimport time\ntime.sleep(600)\n', encoding="utf-8")
    out = io.StringIO()
    assert grader.grade(runaway, timeout=2, as_json=True, out=out) == 1
    [entry] = json.loads(out.getvalue())["files"]
    assert entry["status"] == "timeout" and "stopped after 2 s" in str(entry["message"])
    assert 2.0 <= float(entry["seconds"]) < 12.0, entry["seconds"]


# ── checkpoints refuse what the format forbids ──────────────────────────────────────────────


def _checkpoint(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="planted_ck_w")
    opt = mt.train.adam(0.1)
    opt.minimize(lambda: (w * w).sum())
    path = tmp_path / "run.json"
    mt.save_variables(path, [w], optimizer=opt)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict) and doc["optimizer"]["iterations"] == 1
    return path, doc


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # Planted bug: the check `optimizer.iterations < 0` removed.
        (lambda d: d["optimizer"].update(iterations=-1), '"optimizer.iterations" is -1'),
        (lambda d: d["optimizer"].update(iterations=True), '"optimizer.iterations" is True'),
        (lambda d: d["optimizer"].update(iterations=1.0), '"optimizer.iterations" is 1.0'),
        # Planted bug: bool dimensions accepted in a shape (True == 1 in Python).
        (lambda d: d["variables"][0].update(shape=[True, 2], data=[1.0, 2.0]), "has the shape [true, 2]"),
        (lambda d: d["optimizer"]["slots"][0].update(shape=[True, 2]), "has the shape [true, 2]"),
        # Planted bug: a non-object optimizer.config accepted.
        (lambda d: d["optimizer"].update(config=[0.1]), '"optimizer.config" is not an object'),
        (lambda d: d["optimizer"].update(config=None), '"optimizer.config" is not an object'),
    ],
    ids=["negative-iterations", "bool-iterations", "float-iterations", "bool-dimension", "bool-slot-dimension",
         "config-list", "config-null"],
)
def test_a_checkpoint_that_breaks_the_format_is_refused_and_changes_nothing(
    tmp_path: Path, change: Any, message: str
) -> None:
    """Each row is a planted bug that once passed: a removed or weakened check in ``checkpoint_file``."""
    path, doc = _checkpoint(tmp_path)
    change(doc)
    text = json.dumps(doc)
    path.write_text(text, encoding="utf-8")
    w = mt.variable(mt.tensor([5.0, 6.0]), name="planted_ck_into")
    opt = mt.train.adam(0.1)
    with pytest.raises(mt.CheckpointError) as info:
        mt.load_variables(path, into={"planted_ck_w": w}, optimizer=opt)
    assert message.lower() in str(info.value).lower(), str(info.value)
    assert w.data_sync() == [5.0, 6.0] and opt.iterations == 0 and opt.slots == {}


# ── habit hints that are code return what they promise ──────────────────────────────────────

A = [[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]]


def _run_hint(error: mt.MicrotapeError, t: mt.Tensor) -> object:
    """Evaluate the hint of ``error`` (a line of code) with ``t`` and ``mt``, and return its value."""
    [line] = [x for x in str(error).splitlines() if x.startswith("  hint: ")]
    code = line.removeprefix("  hint: ")
    names: dict[str, object] = {"mt": mt, "t": t}
    if "=" in code.split("(")[0]:  # an assignment: run it, return what it bound last
        exec(code, names)
        return names[code.split("=")[0].split(";")[-1].strip()]
    return eval(code, names)


@pytest.mark.parametrize("index", [0, 1])
def test_the_indexing_hint_cuts_out_the_row_asked_for(index: int) -> None:
    """Planted bug: the ``t[1]`` hint changed to cut an empty tensor. The hint is executed and must
    give row ``index``, with the shape ``(1, 3)`` that keeps the gradient's shape."""
    t = mt.tensor(A)
    with pytest.raises(mt.UnsupportedOperationError) as info:
        t[index]  # type: ignore[index]  # the habit under test
    row = _run_hint(info.value, t)
    assert isinstance(row, mt.Tensor) and row.shape == (1, 3) and row.tolist() == [A[index]]


def test_the_indexing_hint_of_a_vector_and_of_a_cube() -> None:
    """The ``t[i]`` hint for other ranks: one entry of a vector, one slab of a cube."""
    v = mt.tensor([4.0, 5.0, 6.0])
    with pytest.raises(mt.UnsupportedOperationError) as info:
        v[2]  # type: ignore[index]
    out = _run_hint(info.value, v)
    assert isinstance(out, mt.Tensor) and out.shape == (1,) and out.tolist() == [6.0]
    cube = mt.tensor([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
    with pytest.raises(mt.UnsupportedOperationError) as info:
        cube[1]  # type: ignore[index]
    out = _run_hint(info.value, cube)
    assert isinstance(out, mt.Tensor) and out.shape == (1, 2, 2) and out.tolist() == [[[5.0, 6.0], [7.0, 8.0]]]


@pytest.mark.parametrize(
    ("op", "name", "expected"),
    [
        ("<", "less", [[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]),
        ("<=", "less_equal", [[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]),
        (">", "greater", [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
        (">=", "greater_equal", [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
    ],
)
def test_each_ordering_hint_names_its_own_op_and_gives_the_mask(op: str, name: str, expected: list[list[float]]) -> None:
    """Planted bug: the ``t < x`` hint naming ``greater`` (the mask then says the opposite)."""
    t = mt.tensor(A)
    with pytest.raises(mt.UnsupportedOperationError) as info:
        eval(f"t {op} 0.5", {"t": t})
    assert f"mt.{name} does" in str(info.value)
    mask = _run_hint(info.value, t)
    assert isinstance(mask, mt.Tensor) and mask.tolist() == expected


def test_the_other_habit_hints_that_are_code_return_what_they_say() -> None:
    """Every hint in ``HABITS`` that is code runs, and gives what its rule promises."""
    t = mt.tensor([1.0, 2.0])
    expected: dict[str, object] = {
        "backward": [2.0, 4.0],  # the gradient of sum(x * x) at [1, 2]
        "grad": [2.0, 4.0],
        "detach": [1.0, 2.0],
        "numpy": [1.0, 2.0],
        "ndim": 1,
        "flatten": [1.0, 2.0],
        "view": [1.0, 2.0],
        "copy": [1.0, 2.0],
        "requires_grad": [1.0, 2.0],
        "requires_grad_": [1.0, 2.0],
        "assign": [2.0, 4.0],
        "assign_add": [2.0, 4.0],
        "assign_sub": [0.0, 0.0],
        "dataSync": [1.0, 2.0],  # TF.js's names: the snake_case method
        "arraySync": [1.0, 2.0],
        "print": None,  # mt.print(t) prints and returns nothing
    }
    words = {name for name, (_, hint) in _habits.HABITS.items() if hint.endswith(".") and "(" not in hint.split(" ")[0]}
    assert set(_habits.HABITS) == set(expected) | words, "a new habit: add what its hint gives here"
    for name, want in expected.items():
        error = _habits.attribute_error(t, name, t.shape)
        got = _run_hint(error, t)
        if isinstance(got, mt.Variable):
            got_value: object = got.data_sync()
            got.dispose()
        elif isinstance(got, mt.Tensor):
            got_value = got.tolist()
        else:
            got_value = got
        assert got_value == want, f"the hint of t.{name} gave {got_value!r}, not {want!r}"


def test_the_len_and_iteration_hints_give_the_length_and_the_rows() -> None:
    t = mt.tensor(A)
    with pytest.raises(mt.UnsupportedOperationError) as info:
        len(t)  # type: ignore[arg-type]
    assert _run_hint(info.value, t) == 2
    with pytest.raises(mt.UnsupportedOperationError) as info:
        list(t)  # type: ignore[call-overload]
    assert _run_hint(info.value, t) == A
    s = mt.scalar(3.0)
    with pytest.raises(mt.UnsupportedOperationError) as info:
        len(s)  # type: ignore[arg-type]
    assert _run_hint(info.value, s) == 1


# ── update rules whose planted bugs the sample runs could not see ───────────────────────────


def test_adadelta_reads_each_accumulator_in_its_place() -> None:
    """Planted bug: Adadelta's ratio inverted, sqrt(accum_grad + eps) / sqrt(accum_var + eps).
    From zero slots both accumulators stay equal (the ratio is 1 at every step), so only slots
    that differ, as restored from a checkpoint or ``set_weights``, show which is which."""
    w = mt.variable(mt.tensor([1.0, -2.0]), name="planted_adadelta_w")
    lr, rho = 0.1, 0.95
    opt = mt.train.adadelta(lr, rho=rho)
    eps = float(str(opt.get_config()["epsilon"]))
    ag, au, g = [0.25, 4.0], [1.0, 0.01], [0.5, -1.5]
    opt.set_weights([
        ("iter", mt.scalar(3.0)),
        ("planted_adadelta_w/accum_grad", mt.tensor(ag)),
        ("planted_adadelta_w/accum_var", mt.tensor(au)),
    ])
    opt.apply_gradients({w: mt.tensor(g)})
    u = [gi * math.sqrt(aui + eps) / math.sqrt(agi + eps) for gi, agi, aui in zip(g, ag, au)]
    want_w = [wi - lr * ui for wi, ui in zip([1.0, -2.0], u)]
    want_ag = [rho * a + (1 - rho) * gi * gi for a, gi in zip(ag, g)]
    want_au = [rho * a + (1 - rho) * ui * ui for a, ui in zip(au, u)]
    got = dict(opt.get_weights())
    for name, want in (("w", want_w), ("ag", want_ag), ("au", want_au)):
        value = {"w": w.data_sync(), "ag": got["planted_adadelta_w/accum_grad"].data_sync(),
                 "au": got["planted_adadelta_w/accum_var"].data_sync()}[name]
        assert all(math.isclose(v, x, rel_tol=1e-12) for v, x in zip(value, want)), (name, value, want)
    mt.dispose([t for _, t in got.items()])
    opt.dispose()
