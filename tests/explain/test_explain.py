"""explain_gradient and tape.explain: the paths add up to the gradient on random graphs (listed,
grouped, and grouped from one backward pass), each step's local derivative and line, the
choice of entry, the errors, the table and its HTML, and chapter 6's exploding recurrent net."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable

import pytest

import microtape as mt
from microtape.explain import paths as explain_module

Tensor = mt.Tensor


def random_graph(seed: int, n_ops: int) -> Callable[[Tensor, Tensor], Tensor]:
    """A random function of x (3,) and y (2, 3): adds, products, tanh, sin, broadcasting and
    reductions, every intermediate kept in a pool that later ops draw from (so a DAG with fan-out)."""

    def f(x: Tensor, y: Tensor) -> Tensor:
        rng = random.Random(seed)
        pool = [x, y]
        for _ in range(n_ops):
            a, b = rng.choice(pool), rng.choice(pool[-4:])
            kind = rng.randrange(7)
            if kind == 0:
                t = a + b
            elif kind == 1:
                t = a * b * 0.5
            elif kind == 2:
                t = mt.tanh(a - b)
            elif kind == 3:
                t = mt.sin(a) * rng.uniform(-1.5, 1.5)
            elif kind == 4:
                t = a.sum(axis=0) if a.shape == (2, 3) else a * 2.0
            elif kind == 5:
                t = a.mean(axis=0) * 3.0 if a.shape == (2, 3) else mt.tanh(a)
            else:
                t = a * rng.uniform(-2.0, 2.0)
            pool.append(t)
        return (pool[-1] * pool[-2]).sum() + pool[-3].mean()

    return f


def inputs(seed: int) -> tuple[Tensor, Tensor]:
    rng = random.Random(1000 + seed)
    x = mt.tensor([rng.uniform(-1.0, 1.0) for _ in range(3)])
    y = mt.tensor([[rng.uniform(-1.0, 1.0) for _ in range(3)] for _ in range(2)])
    return x, y


def assert_adds_up(e: mt.GradientExplanation, gradient_entry: float) -> None:
    """The listed contributions plus the rest are the gradient entry, and the entry is tape.gradient's
    (relative 1e-12; an absolute slack of 1e-12 of the contributions' magnitudes where they cancel)."""
    parts = [p.contribution for p in e.paths]
    scale = math.fsum(abs(c) for c in parts) + abs(e.rest)
    assert math.isclose(math.fsum(parts) + e.rest, e.total, rel_tol=1e-12, abs_tol=1e-12 * scale)
    assert math.isclose(e.total, gradient_entry, rel_tol=1e-12, abs_tol=1e-12 * scale)


def explain_all(f: Callable[[Tensor, Tensor], Tensor], seed: int, top: int) -> list[tuple[mt.GradientExplanation, float]]:
    x, y = inputs(seed)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        loss = f(x, y)
    found = []
    for source in (x, y):
        g = tape.gradient(loss, source, unconnected_gradients="zero")
        assert g is not None
        for k in range(source.size):
            found.append((tape.explain(loss, source, index=k, top=top), g.data_sync()[k]))
    tape.release()
    return found


@pytest.mark.parametrize("seed", range(12))
def test_the_paths_add_up_to_the_gradient_on_random_graphs(seed: int) -> None:
    found = explain_all(random_graph(seed, 12), seed, top=3)
    for e, g in found:
        assert not e.grouped and (e.dominant is not None) == e.connected
        assert_adds_up(e, g)
        for p in e.paths:
            assert p.contribution == math.prod(s.local for s in p.steps)
    assert max(e.count for e, _ in found) > 3  # the graph has branches: the sum is over several paths


def test_a_graph_with_too_many_paths_is_grouped_by_the_edges_into_the_input() -> None:
    def f(x: Tensor, y: Tensor) -> Tensor:
        h = x
        for _ in range(14):  # every layer triples the paths: 3**14 > 10,000
            h = mt.tanh(h * h * 0.5 + h * 0.3)
        return (h * y).sum()

    for e, g in explain_all(f, 0, top=2):
        assert_adds_up(e, g)
    x, y = inputs(0)
    e = mt.explain_gradient(f, [x, y])
    assert e.grouped and "Too many paths to list" in str(e)
    assert e.dominant is not None and len(e.dominant.steps) > 14
    assert e.dominant.contribution == math.prod(s.local for s in e.dominant.steps)
    assert all(p.contribution == p.upstream * p.steps[0].local and len(p.steps) == 1 for p in e.paths)
    assert "The largest single path contributes" in str(e)


def test_grouping_is_by_the_number_of_paths_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explain_module, "MAX_PATHS", 1)  # as if every graph had more paths than the rule lists
    for seed in range(4):
        for e, g in explain_all(random_graph(seed, 10), seed, top=2):
            assert e.grouped == (e.path_count > 1) and (e.dominant is not None) == e.connected
            assert_adds_up(e, g)


def test_each_step_has_its_op_local_derivative_argument_and_line() -> None:
    x = mt.tensor([0.5, -2.0])
    e = mt.explain_gradient(lambda x: (x * x * 3.0).sum(), [x])  # the line below is the ops' line
    line = test_each_step_has_its_op_local_derivative_argument_and_line.__code__.co_firstlineno + 2
    assert e.index == (1,) and e.total == -12.0 and e.count == 2 and not e.grouped
    assert [p.contribution for p in e.paths] == [-6.0, -6.0]
    for path, argument in zip(e.paths, (0, 1)):  # x * x: one path through each operand
        assert [(s.op, s.local) for s in path.steps] == [("sum", 1.0), ("mul", 3.0), ("mul", -2.0)]
        assert path.steps[-1].argument == argument and path.steps[-1].input_entry == (1,)
        assert all(s.where.endswith(f"test_explain.py:{line}") for s in path.steps)
    assert e.dominant == e.paths[0]


def test_broadcasting_and_reductions_have_their_local_derivatives() -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    e = mt.explain_gradient(lambda x: (mt.ones((4, 3)) * x).mean(), [x], index=2)
    assert e.total == pytest.approx(4 / 12) and e.count == 4  # one path through each broadcast row
    assert {(s.op, s.local) for p in e.paths for s in p.steps} == {("div", 1 / 12), ("sum", 1.0), ("mul", 1.0)}  # mean is sum, then div


def test_top_lists_the_largest_and_sums_the_rest() -> None:
    x = mt.scalar(1.0)
    e = mt.explain_gradient(lambda x: x * 1.0 + x * 5.0 + x * -3.0 + x * 0.5, [x], top=2)
    assert [p.contribution for p in e.paths] == [5.0, -3.0]
    assert e.rest == 1.5 and e.total == 3.5 and e.count == 4
    assert "(2 other paths)" in str(e)


def test_the_default_entry_is_the_largest_gradient() -> None:
    x = mt.tensor([[1.0, -4.0], [2.0, 3.0]])
    e = mt.explain_gradient(lambda x: (x * x).sum(), [x])
    assert e.index == (0, 1) and e.total == -8.0
    assert mt.explain_gradient(lambda x: (x * x).sum(), [x], index=3).index == (1, 1)
    assert mt.explain_gradient(lambda x: (x * x).sum(), [x], index=(1, 0)).total == 4.0


def test_an_unconnected_input_says_so_with_a_zero_total() -> None:
    x, y = mt.scalar(1.0), mt.scalar(2.0)
    e = mt.explain_gradient(lambda x, y: x * 3.0, [x, y], wrt=1)
    assert not e.connected and e.total == 0.0 and e.paths == () and e.rest == 0.0
    assert "does not depend on y" in str(e)  # the input is named after f's parameter


def test_tape_explain_uses_up_a_non_persistent_tape_and_a_failed_call_does_not() -> None:
    x = mt.scalar(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.exp(x * 3.0)
    with pytest.raises(mt.InvalidArgumentError, match="top=0"):
        tape.explain(y, x, top=0)
    e = tape.explain(y, x)
    assert [s.op for s in e.paths[0].steps] == ["exp", "mul"]
    assert e.paths[0].steps[0].where.endswith("test_explain.py:165")  # the line of `y = mt.exp(x * 3.0)`, which the tape recorded
    with pytest.raises(mt.TapeError):
        tape.explain(y, x)


def test_errors_name_the_values_and_give_a_hint() -> None:
    x, other = mt.tensor([1.0, 2.0]), mt.scalar(1.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(mt.ShapeError, match=r"shape \(2,\) \(2 entries\)") as shape_err:
        tape.explain(y, x)
    assert "hint:" in str(shape_err.value)
    with pytest.raises(mt.TapeError, match="not on this tape") as tape_err:
        tape.explain(y.sum(), other)
    assert "tape.watch" in str(tape_err.value)
    for bad in (2, -1, (0, 0), True, "0"):
        with pytest.raises(mt.InvalidArgumentError, match=r"index=.* has shape \(2,\) \(2 entries\)"):
            tape.explain(y.sum(), x, index=bad)  # type: ignore[arg-type]
    for top in (0, -3, 2.5, None):
        with pytest.raises(mt.InvalidArgumentError, match="top="):
            tape.explain(y.sum(), x, top=top)  # type: ignore[arg-type]
    with pytest.raises(mt.InvalidArgumentError, match="wrt=3, but there are 1 input"):
        mt.explain_gradient(lambda x: x.sum(), [x], wrt=3)
    with pytest.raises(mt.ShapeError, match="not one number"):
        mt.explain_gradient(lambda x: x * 2.0, [x])
    tape.release()


def test_a_function_that_raises_leaves_nothing_behind() -> None:
    x = mt.scalar(1.0)
    before = mt.memory().num_tensors

    def broken(x: Tensor) -> Tensor:
        y = x * 2.0
        raise ValueError(f"broken after {y.shape}")

    with pytest.raises(ValueError, match="broken after"):
        mt.explain_gradient(broken, [x])
    with pytest.raises(mt.InvalidArgumentError, match=r"f\(x\) cannot be called with 2 argument"):
        mt.explain_gradient(lambda x: x * 2.0, [x, x])
    assert mt.memory().num_tensors == before


def test_non_finite_factors_are_listed_first() -> None:
    x = mt.tensor([0.0, 4.0])
    e = mt.explain_gradient(lambda x: mt.sqrt(x).sum() + (x * 2.0).sum(), [x], index=0)
    assert e.total == math.inf and e.paths[0].contribution == math.inf and e.count == 2
    assert [s.op for s in e.paths[0].steps][-1] == "sqrt"
    assert e.total == mt.grad(lambda x: mt.sqrt(x).sum() + (x * 2.0).sum())(x).data_sync()[0]


def test_the_table_and_its_html_escape_user_text() -> None:
    x = mt.scalar(0.5)
    namespace: dict[str, object] = {"mt": mt}
    exec(compile("def f(x):\n    return mt.tanh(x * 2.0)\n", "<b>evil&.py", "exec"), namespace)
    f = namespace["f"]
    assert callable(f)
    e = mt.explain_gradient(f, [x])
    text = str(e)
    assert "d output / d x = " in text and "line: of <b>evil&.py)" in text and "100.0 %" in text
    assert text.splitlines()[-1].endswith("  2")  # one file holds every line: the column shows the number
    page = e._repr_html_()
    assert "&lt;b&gt;evil&amp;.py:2" in page and "<b>" not in page and "<table>" in page


def test_a_long_path_shows_its_ends() -> None:
    def deep(x: Tensor) -> Tensor:
        for _ in range(30):
            x = mt.tanh(x * 1.5)
        return x

    e = mt.explain_gradient(deep, [mt.scalar(0.3)])
    assert len(e.paths[0].steps) == 60 and "(52 more steps)" in str(e)
    assert all(0.0 < s.local < 1.0 for s in e.paths[0].steps if s.op == "tanh")  # tanh' < 1: the vanishing factors


@pytest.mark.slow  # about 0.5 s: 20 steps of 16 x 8 states, more paths than can be listed
def test_chapter_6s_exploding_recurrent_net_is_explained_by_its_recurrent_weight() -> None:
    """The net of tutorials/06_practice.py (same sizes, seeds and inputs), gain 2, quiet inputs.
    The gradient for an input weight U[0, k] reaches U at all 20 steps; the path that dominates
    goes back through the recurrent matmul again and again, each time with the same factor W[m, m']."""
    T, N_HIDDEN, BATCH = 20, 8, 16
    rng = random.Random(0)
    columns = [[rng.uniform(-1.0, 1.0) for _ in range(BATCH)] for _ in range(T)]
    xs = [mt.tensor(col, shape=(BATCH, 1)) for col in columns]
    scale_w = 1 / math.sqrt(N_HIDDEN)
    w = mt.random_normal((N_HIDDEN, N_HIDDEN), stddev=scale_w, seed=2) * 2.0
    u = mt.random_normal((1, N_HIDDEN), seed=3) * 0.01
    v = mt.random_normal((N_HIDDEN, 1), stddev=scale_w, seed=4)

    def loss(w: Tensor, u: Tensor) -> Tensor:
        h = mt.zeros((BATCH, N_HIDDEN))
        for x_t in xs:
            h = mt.tanh(h @ w + x_t @ u)
        return ((h @ v - xs[0]) ** 2).mean()

    e = mt.explain_gradient(loss, [w, u], wrt=1)
    g = mt.grads(loss)([w, u])[1]
    assert_adds_up(e, g.data_sync()[e.index[1]])
    assert e.grouped and e.dominant is not None
    recurrent = [s.local for s in e.dominant.steps if s.op == "matmul" and s.argument == 0]
    factor, times = Counter(recurrent).most_common(1)[0]
    w_values = w.data_sync()
    assert recurrent[0] in v.data_sync()  # the readout h @ V comes first, then the recurrence
    assert all(r in w_values for r in recurrent[1:])  # d(h @ W)/dh is an entry of W
    assert times >= 10 and abs(factor) > 1.0, (factor, times)
    assert "The largest single path contributes" in str(e)


def test_the_text_table_fits_the_books_output_box() -> None:
    """Long expressions and op names are cut in the middle (their entry kept), so no row of the table
    is wider than ``TABLE_WIDTH`` characters and the book's output box never wraps one."""
    from microtape.explain.report import TABLE_WIDTH

    def guarded(t: Tensor) -> Tensor:
        return mt.where(t.greater(0.0), mt.sqrt(t) * 2.0 + mt.exp(t * 0.5 - 1.0), mt.scalar(0.0)).sum()

    e = mt.explain_gradient(guarded, [mt.tensor([0.0, 4.0])], index=1)
    text = str(e)
    table = [line for line in text.splitlines() if line.startswith("  ") and not line.startswith("  `")]
    assert table[0].split() == ["contribution", "share", "step", "op", "input", "local", "at", "line"]
    assert max(len(line) for line in table) <= TABLE_WIDTH, "\n".join(table)
    cut = [cell for line in table for cell in line.split("  ") if "…" in cell]
    assert cut and all(cell.strip().endswith("[1]") for cell in cut), cut  # the entry survives the cut
    assert table[1].split()[-1] == str(guarded.__code__.co_firstlineno + 1)  # the line of the return, as a number
    assert e._repr_html_().count("local derivative") == 1  # the HTML table keeps the long heading, uncut
