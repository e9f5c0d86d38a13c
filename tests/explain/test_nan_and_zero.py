"""The two situations that send a student to a "why" tool: a NaN and a zero.

A NaN gradient is explained as NaN (the total is the backward pass's), with the paths that carry
it, the factor that is infinite or NaN and the 0 that met it, by op and line; a path exists only
where the op's pattern connects two entries, so a one-hot row never smears 0 * NaN into a path
that is not there. A zero gradient names the op whose factor 0 stops the paths and how many of its
entries were 0; "no path" is said only when the output does not depend on the entry. A released
tape is refused; grouping happens only past the documented 10,000 paths.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable

import pytest

import microtape as mt
from microtape.explain import paths as explain_paths

Tensor = mt.Tensor


def line_of(fn: Callable[..., object], marker: str) -> int:
    """The line of this file, inside ``fn``, that ends with the comment ``# marker``."""
    lines, first = inspect.getsourcelines(fn)
    (found,) = [first + i for i, text in enumerate(lines) if text.rstrip().endswith(f"# {marker}")]
    return found


def same(a: float, b: float) -> bool:
    """Bit for bit, NaN equal to NaN."""
    return a == b or (math.isnan(a) and math.isnan(b))


# -- NaN and Inf ------------------------------------------------------------------------

target = mt.tensor1d([1.0, 2.0])
ZERO = mt.scalar(0.0)


def distance(a: Tensor) -> Tensor:
    return mt.sqrt(((a - target) ** 2).sum())  # distance


def test_chapter_4s_distance_at_its_target_is_nan_and_says_why() -> None:
    grad = mt.grad(distance)(target).data_sync()
    e = mt.explain_gradient(distance, [target])
    assert math.isnan(e.total) and all(math.isnan(g) for g in grad)  # as PyTorch: nan, nan
    assert e.connected and e.count == 2 and all(math.isnan(p.contribution) for p in e.paths)
    line = line_of(distance, "distance")
    assert e.nonfinite == (f"`sqrt` at line {line} has derivative inf at 0.0; `pow` at line {line} has derivative 0.0 at 0.0: inf·0 = NaN",)
    text = str(e)
    assert "d output / d a[0] = nan" in text and "Why the gradient is nan:" in text and "0 path" not in text
    assert e.blocked == ()  # the 0 met an Inf: it is in the story, not a stopped path


def sqrt_times_zero(x: Tensor) -> Tensor:
    return (mt.sqrt(x) * 0.0).sum()  # times zero


def safe_sqrt(x: Tensor) -> Tensor:
    root = mt.sqrt(x)  # the root
    return mt.where(x.greater(0.0), root, ZERO).sum()  # the where


def test_zero_times_an_infinite_derivative_is_nan_with_the_zero_named() -> None:
    x = mt.tensor([0.0])
    e = mt.explain_gradient(sqrt_times_zero, [x])
    line = line_of(sqrt_times_zero, "times zero")
    assert math.isnan(e.total) and math.isnan(mt.grad(sqrt_times_zero)(x).item())
    assert e.nonfinite == (f"`sqrt` at line {line} has derivative inf at 0.0; `mul` at line {line} passed 0.0 to it: 0·inf = NaN",)

    e = mt.explain_gradient(safe_sqrt, [x])
    root, where = line_of(safe_sqrt, "the root"), line_of(safe_sqrt, "the where")
    assert math.isnan(e.total) and math.isnan(mt.grad(safe_sqrt)(x).item())  # PyTorch: nan too
    assert e.nonfinite == (f"`sqrt` at line {root} has derivative inf at 0.0; `where` at line {where} passed 0.0 to it: 0·inf = NaN",)
    assert f"`where` at line {where} passed 0.0 to it: 0·inf = NaN" in str(e)


def test_a_nan_in_one_entry_is_never_smeared_into_a_path_that_does_not_exist() -> None:
    x = mt.tensor([-1.0, 4.0])
    e = mt.explain_gradient(lambda x: mt.sqrt(x).sum(), [x], index=0)
    assert e.count == 1 and math.isnan(e.total)
    (path,) = e.paths
    assert [(s.op, s.entry) for s in path.steps] == [("sum", ()), ("sqrt", (0,))]  # sqrt[1] does not read x[0]
    assert path.steps[-1].value == -1.0 and math.isnan(path.steps[-1].local)
    assert "has derivative nan at -1.0" in e.nonfinite[0]
    e1 = mt.explain_gradient(lambda x: mt.sqrt(x).sum(), [x], index=1)
    assert e1.count == 1 and e1.total == 0.25 and e1.paths[0].contribution == 0.25

    e = mt.explain_gradient(safe_sqrt, [x], index=0)
    assert same(e.total, mt.grad(safe_sqrt)(x).data_sync()[0])
    entries = {(s.op, s.entry) for p in e.paths for s in p.steps}
    assert ("sqrt", (0,)) in entries and ("sqrt", (1,)) not in entries and ("where", (1,)) not in entries
    assert e.count == 2  # through sqrt, and through the comparison (derivative 0)


def test_a_large_input_with_one_nan_entry_is_nan_listed_and_grouped() -> None:
    values = [0.5 + i / 100 for i in range(2_500)]
    values[7] = -1.0
    x = mt.tensor(values)
    w = mt.tensor([1.0 + (i % 3) for i in range(2_500)])

    def f(x: Tensor) -> Tensor:
        return (mt.sqrt(x) * w).sum()

    grad = mt.grad(f)(x).data_sync()
    e = mt.explain_gradient(f, [x])
    assert e.index == (7,) and math.isnan(e.total) and math.isnan(grad[7]) and e.count == 1
    assert math.isnan(e.paths[0].contribution)
    for k in (6, 8):
        assert mt.explain_gradient(f, [x], index=k).total == grad[k]


def test_grouped_rows_carry_the_nan_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explain_paths, "MAX_PATHS", 0)
    e = mt.explain_gradient(distance, [target], index=1)
    assert e.grouped and math.isnan(e.total) and any(math.isnan(p.contribution) for p in e.paths)
    assert math.isnan(math.fsum([p.contribution for p in e.paths]) + e.rest)
    assert e.dominant is not None and e.nonfinite and "`sqrt`" in e.nonfinite[0]


def test_where_passes_exactly_zero_on_its_unchosen_side_even_an_infinite_gradient() -> None:
    """sqrt(where(x > 1, x, 0)) at x = 0: sqrt' is inf, but where's VJP passes 0.0 to x, not inf * 0."""
    x = mt.tensor([0.0, 4.0])

    def blocked(x: Tensor) -> Tensor:
        return mt.sqrt(mt.where(x.greater(1.0), x, ZERO)).sum()  # blocked

    def passed(x: Tensor) -> Tensor:
        return mt.sqrt(mt.where(x.less(1.0), ZERO, x)).sum()  # the other side: inf - inf = NaN

    for f in (blocked, passed):
        grad = mt.grad(f)(x).data_sync()
        for k in (0, 1):
            e = mt.explain_gradient(f, [x], index=k)
            assert same(e.total, grad[k])
            if math.isfinite(e.total):
                assert math.fsum([p.contribution for p in e.paths]) + e.rest == e.total
    e = mt.explain_gradient(blocked, [x], index=0)
    assert e.total == 0.0 and all(p.contribution == 0.0 for p in e.paths)
    assert any(s.op == "where" and s.blocks for p in e.paths for s in p.steps)
    assert [b.op for b in e.blocked][0] == "where" and e.blocked[0].every
    assert math.isnan(mt.explain_gradient(passed, [x], index=0).total)


def test_infinite_paths_of_opposite_signs_make_nan() -> None:
    x = mt.tensor([0.0])
    e = mt.explain_gradient(lambda x: (mt.sqrt(x) - mt.sqrt(x)).sum(), [x])
    assert math.isnan(e.total) and sorted(p.contribution for p in e.paths) == [-math.inf, math.inf]
    assert len(e.nonfinite) == 1 and "derivative inf at 0.0" in e.nonfinite[0]


# -- zeros --------------------------------------------------------------------------------


def dead_layer(w: Tensor) -> Tensor:
    xs = mt.tensor([[1.0, 2.0, 0.5], [0.3, 1.0, 2.0], [1.5, 0.2, 0.1], [2.0, 2.0, 2.0]])
    h = mt.relu(xs @ w - 100.0)  # dead relu
    return h.sum()


def test_a_dead_relu_is_named_with_its_zeros() -> None:
    w = mt.tensor([[0.5, -0.2], [0.1, 0.3], [-0.4, 0.2]])
    e = mt.explain_gradient(dead_layer, [w], index=(1, 0))
    line = line_of(dead_layer, "dead relu")
    assert e.total == 0.0 and e.connected and e.count == 4 and e.path_count == 4
    assert [p.contribution for p in e.paths] == [0.0] * 4
    (relu,) = e.blocked
    assert (relu.op, relu.zeros, relu.entries, relu.paths, relu.every) == ("relu", 4, 4, 4, True)
    sentence = f"`relu` at line {line}: derivative 0 for 4 of 4 entries; every path from `w` passes through it"
    assert relu.sentence(e.source, e.path_count) == sentence
    assert "The gradient is 0.0 because every path is stopped by a factor 0:" in str(e) and sentence in str(e)
    assert "0 path" not in str(e) and "does not depend" not in str(e)


def test_a_partly_dead_relu_says_how_many_paths_it_stops() -> None:
    x = mt.tensor([[1.0], [-1.0], [2.0]])
    e = mt.explain_gradient(lambda w: mt.relu(x @ w).sum(), [mt.tensor([[1.0, 2.0]])], index=(0, 1))
    assert e.total == 3.0 and e.path_count == 3
    (relu,) = e.blocked
    assert (relu.zeros, relu.entries, relu.paths, relu.every) == (1, 3, 1, False)
    assert "1 of the 3 paths stop at a factor 0:" in str(e) and "derivative 0 for 1 of 3 entries; 1 of the 3 paths stop there" in str(e)


@pytest.mark.parametrize(
    ("name", "f"),
    [
        ("greater", lambda x: x.greater(0.5).sum()),
        ("clip_by_value", lambda x: mt.clip_by_value(x * 3.0, -1.0, 1.0).sum()),
        ("max", lambda x: (x * 2.0).max()),
        ("sign", lambda x: mt.sign(x).sum()),
    ],
)
def test_comparisons_clipping_and_the_unchosen_entries_of_max_stop_the_gradient(name: str, f: Callable[[Tensor], Tensor]) -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    e = mt.explain_gradient(f, [x], index=0)
    assert e.total == 0.0 == mt.grad(f)(x).data_sync()[0] and e.connected and e.path_count >= 1
    assert e.blocked and e.blocked[0].op == name and e.blocked[0].every
    assert f"`{name}` at line" in str(e)


def test_no_path_is_said_only_when_the_output_does_not_depend_on_the_entry() -> None:
    x = mt.tensor([1.0, 2.0, 3.0])
    e = mt.explain_gradient(lambda x: mt.slice(x, [0], [2]).sum(), [x], index=2)
    assert not e.connected and e.total == 0.0 and e.path_count == 0 and e.blocked == ()
    assert "The output does not depend on x[2]" in str(e)
    assert mt.explain_gradient(lambda x: mt.slice(x, [0], [2]).sum(), [x], index=1).connected
    e = mt.explain_gradient(lambda x, y: x * 3.0, [mt.scalar(1.0), mt.scalar(2.0)], wrt=1)
    assert not e.connected and "The output does not depend on y" in str(e)


# -- the tape, the totals, the grouping rule ------------------------------------------------


def test_a_released_tape_is_refused_with_the_tapes_error_and_a_hint_that_works() -> None:
    x = mt.scalar(2.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 3.0
    tape.release()
    for call in (lambda: tape.explain(y, x), lambda: list(tape.backward_steps(y, x))):
        with pytest.raises(mt.TapeError, match=r"was released \(tape.release\(\)\)") as err:
            call()
        assert "hint: ask first, release last" in str(err.value) and "before tape.release()" in str(err.value)
    # the hint, applied: explain before releasing
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 3.0
    assert tape.explain(y, x).total == 3.0 and [s.op for s in tape.backward_steps(y, x)] == ["mul"]
    tape.release()
    with mt.GradientTape(persistent=True) as tape:  # reset() starts afresh: no refusal, just what it recorded since
        tape.watch(x)
        _ = x * 5.0
        tape.reset()
        tape.watch(x)
        z = x * 7.0
    assert tape.explain(z, x).total == 7.0
    tape.release()


def test_the_total_is_the_gradients_entry_bit_for_bit() -> None:
    """Sums of many paths, each rounded its own way: the total is still the backward pass's."""
    w = mt.random_normal((6, 5), seed=7)
    xs = mt.random_normal((4, 6), seed=8)

    def f(w: Tensor) -> Tensor:
        h = mt.tanh(xs @ w)
        return ((h @ mt.transpose(w)) * mt.sigmoid(xs)).mean() + (h * h).sum() * 0.1

    grad = mt.grad(f)(w).data_sync()
    for k in range(w.size):
        e = mt.explain_gradient(f, [w], index=k, top=3)
        assert e.total == grad[k]
        scale = math.fsum(abs(p.contribution) for p in e.paths) + abs(e.rest)
        assert math.isclose(math.fsum([p.contribution for p in e.paths]) + e.rest, e.total, rel_tol=1e-12, abs_tol=1e-12 * scale)


def test_grouping_follows_the_documented_rule_only() -> None:
    a, b = mt.random_normal((32, 32), seed=1), mt.random_normal((32, 32), seed=2)
    e = mt.explain_gradient(lambda a: (a @ b).sum(), [a], index=(3, 4))
    assert not e.grouped and e.count == e.path_count == 32 and e.dominant is e.paths[0]
    h = mt.scalar(0.3)

    def ladder(h: Tensor) -> Tensor:
        for _ in range(14):  # two paths a rung: 2**14 > 10,000
            h = mt.tanh(h * 0.6 + h * 0.5)
        return h

    e = mt.explain_gradient(ladder, [h])
    assert e.grouped and e.path_count == 2**14 and e.dominant is not None
    assert "Too many paths to list (16,384 paths, more than 10,000)" in str(e)
    e = mt.explain_gradient(lambda h: ladder(h) * 1.0, [h])
    assert e.path_count == 2**14

    def small_ladder(h: Tensor) -> Tensor:
        for _ in range(13):  # 8,192 paths: listed
            h = mt.tanh(h * 0.6 + h * 0.5)
        return h

    e = mt.explain_gradient(small_ladder, [h], top=3)
    assert not e.grouped and e.count == 2**13 and len(e.paths) == 3


def test_an_op_without_a_pattern_makes_a_missing_path_inconclusive_not_unconnected() -> None:
    def dead(t: Tensor) -> tuple[Tensor, Callable[[Tensor], Tensor]]:
        return mt.relu(t), lambda dy: dy * t.greater(0.0)

    op = mt.custom_grad(dead)
    x = mt.tensor([-1.0, 2.0])
    e = mt.explain_gradient(lambda x: op(x * 2.0).sum(), [x], index=0)
    assert e.total == 0.0 and not e.connected
    assert "does not depend" not in str(e) and "inconclusive" in str(e) and "custom_grad(dead)" in e.notes[0]
    live = mt.explain_gradient(lambda x: op(x * 2.0).sum(), [x], index=1)
    assert live.total == 2.0 and live.count == 1 and live.notes == ()


def test_a_path_with_two_zeros_counts_at_both_ops() -> None:
    """relu(x - 5) is dead, so the square after it has slope 0 too: both ops stop every path."""
    x = mt.tensor([1.0, 2.0])
    e = mt.explain_gradient(lambda x: (mt.relu(x - 5.0) ** 2).sum(), [x], index=0)
    assert e.total == 0.0 and e.stopped == e.path_count == 1
    assert {b.op: b.every for b in e.blocked} == {"relu": True, "pow": True}
    assert "every path is stopped by a factor 0" in str(e)


def test_explaining_leaves_memory_tapes_and_observers_alone() -> None:
    x = mt.tensor([0.0, 4.0, -1.0])
    before = mt.memory().num_tensors
    with mt.GradientTape(persistent=True) as outer:
        outer.watch(x)
        e = mt.explain_gradient(safe_sqrt, [x], index=1)
        with mt.leak_check(on_leak="ignore") as report:
            mt.explain_gradient(distance, [target], index=0)
    assert e.total == 0.25  # an outer tape records f's forward, as around mt.grad, but none of the explanation's VJPs
    assert [op.name for op in outer.operations] == ["sqrt", "greater", "where", "sum"]
    assert report.groups == [] or all(g.count == 0 for g in report.groups)
    outer.release()
    assert mt.memory().num_tensors == before
    with mt.detect_anomaly():  # the NaN probes are quiet: no AnomalyError from explaining
        assert math.isnan(mt.explain_gradient(sqrt_times_zero, [mt.tensor([0.0])]).total)


def test_an_op_that_gives_no_gradient_stops_the_paths_it_does_not_cut_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """A VJP that returns None for a needed input (what stop_gradient does) is a factor 0 that blocks:
    the output still depends on the input, so the op is named, never 'does not depend'."""
    from microtape.engine.primitive import OPS

    monkeypatch.setattr(OPS["clone"], "vjp", lambda dout, out, x: (None,))
    x = mt.tensor([1.0, 2.0])
    e = mt.explain_gradient(lambda x: (mt.clone(x) * 3.0 + mt.sin(x) * 0.0).sum(), [x], index=0)
    assert e.total == 0.0 and e.connected and e.path_count == 2
    assert {b.op for b in e.blocked} == {"clone", "mul"} and "does not depend" not in str(e)
    e = mt.explain_gradient(lambda x: mt.clone(x).sum(), [x], index=0)
    assert e.total == 0.0 and e.connected and e.blocked[0].op == "clone" and e.blocked[0].every
