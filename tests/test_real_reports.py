"""Gradient bugs people actually reported, reproduced in microtape: the symptom, and the tool that names its cause.

Each test cites its public report (TensorFlow, TensorFlow.js, PyTorch, JAX, HIPS
autograd, candle, MXNet, tinygrad and others) by URL, reproduces it in microtape's
own terms (float64: where a report needs float32 to overflow, the value is moved
to where float64 overflows, and the docstring says so), asserts the symptom (a
NaN or Inf gradient, a false failure of a gradient check, a missing gradient, a
memory count that grows), and then asserts that the right tool says the real
cause: ``detect_anomaly`` names the op, the line and the masking ``where``, with a
hint in the user's own names; ``check_grads`` fails a non-finite gradient and
blames no correct op; ``tape.gradient`` and ``variable_grads`` name the cut;
``leak_check`` names optimizer state. The code here is written for this test;
no report's text is copied.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence

import pytest

import microtape as mt

NAN, INF = math.nan, math.inf


def line_of(fn: Callable[..., object], text: str) -> str:
    """``file:line`` of the first line of ``fn``'s source that contains ``text``."""
    lines, start = inspect.getsourcelines(fn)
    return f"{inspect.getsourcefile(fn)}:{start + next(k for k, line in enumerate(lines) if text in line)}"


def finite(t: mt.Tensor) -> bool:
    return all(math.isfinite(v) for v in t.data_sync())


def traced(fn: Callable[[], object]) -> mt.AnomalyTrace:
    with mt.detect_anomaly(mode="trace") as trace:
        fn()
    return trace


def raised(fn: Callable[[], object]) -> mt.AnomalyError:
    with pytest.raises(mt.AnomalyError) as info:
        with mt.detect_anomaly():
            fn()
    return info.value


# -- a where hides a NaN or an Inf in the forward pass, and 0·inf makes one on the way back ------


def test_tf_38349_where_with_sqrt_of_a_negative_number() -> None:
    """https://github.com/tensorflow/tensorflow/issues/38349"""

    def loss(x: mt.Tensor) -> mt.Tensor:
        return mt.where(x.greater(0.0), mt.sqrt(x), 0.0).sum()  # type: ignore[arg-type]

    g = mt.grad(loss)(mt.tensor([-4.0, 9.0]))
    assert math.isnan(g.data_sync()[0])  # the symptom: the picked branch is 0, the gradient NaN
    trace = traced(lambda: mt.grad(loss)(mt.tensor([-4.0, 9.0])))
    assert trace.first is not None and (trace.first.op, trace.first.phase) == ("sqrt", "forward")
    backward = next(e for e in trace.spread if e.op == "sqrt" and e.phase == "backward")
    assert backward.masked_by.startswith(f"where at {line_of(loss, 'mt.where').split('/')[-1]} hid entry (0,) of sqrt's output")
    assert trace.hint == "mt.where(x.greater(0.0), mt.sqrt(mt.where(x.greater(0.0), x, 1.0)), 0.0)"


def test_pytorch_187297_where_picks_the_identity_and_the_sqrt_branch_poisons_it() -> None:
    """https://github.com/pytorch/pytorch/issues/187297"""

    def loss(x: mt.Tensor) -> mt.Tensor:
        return mt.where(x.greater(0.0), mt.sqrt(x), x).sum()

    g = mt.grad(loss)(mt.tensor([-1.0, -4.0]))
    assert all(math.isnan(v) for v in g.data_sync())  # expected [1, 1]
    err = raised(lambda: mt.grad(loss)(mt.tensor([-1.0, -4.0])))
    assert err.op == "sqrt" and err.phase == "forward" and "computed inside the where" in str(err)
    assert err.hint == "mt.where(x.greater(0.0), mt.sqrt(mt.where(x.greater(0.0), x, 1.0)), x)"


def test_jax_347_a_length_by_hand_then_a_where_that_skips_the_zero_row() -> None:
    """https://github.com/jax-ml/jax/issues/347"""

    def loss(x: mt.Tensor) -> mt.Tensor:
        d = mt.sqrt((x * x).sum(axis=1))
        return mt.where(d.greater(0.5), d, 1.0).sum()  # type: ignore[arg-type]

    x = mt.tensor([[1.0, 2.0], [3.0, 4.0], [0.0, 0.0]])
    assert any(math.isnan(v) for v in mt.grad(loss)(x).data_sync())
    err = raised(lambda: mt.grad(loss)(x))
    assert (err.op, err.phase) == ("sqrt", "backward") and "where at" in err.masked_by and "0·inf = nan" in err.masked_by
    assert err.hint == "mt.norm(x, axis=1)"  # the where's condition reads d: the norm fixes it without it


def test_tf_20355_where_with_a_division_by_zero_in_the_other_branch() -> None:
    """https://github.com/tensorflow/tensorflow/issues/20355"""

    def transfer(x: mt.Tensor) -> mt.Tensor:
        return mt.where(x.less(0.0), 1.0 / (1.0 - x), mt.log(x + 1.0)).sum()

    assert math.isnan(mt.grad(transfer)(mt.tensor([1.0])).item())  # expected 1/2
    err = raised(lambda: mt.grad(transfer)(mt.tensor([1.0])))
    assert (err.op, err.phase, err.kind) == ("div", "forward", "Inf")
    assert err.hint == "mt.where(x.less(0.0), 1.0 / (mt.where(x.less(0.0), 1.0 - x, 1.0)), mt.log(x + 1.0))"


def test_tf_27684_where_with_the_log_of_negative_numbers_and_a_trainable_factor() -> None:
    """https://github.com/tensorflow/tensorflow/issues/27684"""
    x = mt.tensor([-1.5, 0.5, 2.0])

    def loss(alpha: mt.Tensor) -> mt.Tensor:
        return mt.where(x.greater_equal(0.0), alpha * mt.log(x), 0.0).sum()  # type: ignore[arg-type]

    assert math.isnan(mt.grad(loss)(mt.scalar(1.0)).item())
    err = raised(lambda: mt.grad(loss)(mt.scalar(1.0)))
    assert (err.op, err.phase) == ("log", "forward")
    assert err.hint == "mt.where(x.greater_equal(0.0), alpha * mt.log(mt.where(x.greater_equal(0.0), x, 1.0)), 0.0)"


def test_pytorch_68425_where_with_exp_that_overflows_where_it_is_not_picked() -> None:
    """https://github.com/pytorch/pytorch/issues/68425 (float32 overflows at a = 100; float64 at 1000)"""

    def f(a: mt.Tensor) -> mt.Tensor:
        return mt.where(a.less_equal(0.0), mt.exp(a), 1.0 + a)

    assert math.isnan(mt.grad(f)(mt.scalar(1000.0)).item())  # expected 1
    err = raised(lambda: mt.grad(f)(mt.scalar(1000.0)))
    assert (err.op, err.kind) == ("exp", "Inf") and err.hint == "mt.where(a.less_equal(0.0), mt.exp(mt.where(a.less_equal(0.0), a, 0.0)), 1.0 + a)"


def test_tf_20091_where_with_a_division_by_a_zero_variable_in_the_branch_not_taken() -> None:
    """https://github.com/tensorflow/tensorflow/issues/20091"""
    w1 = mt.variable(mt.tensor([2.0]), name="r20091_w1")
    w2 = mt.variable(mt.tensor([0.0]), name="r20091_w2")

    def loss() -> mt.Tensor:
        return mt.where(w2.greater(0.0), w1 / w2, w1).sum()

    grads = mt.variable_grads(loss).grads
    assert math.isnan(grads[w1].item()) and math.isnan(grads[w2].item())  # expected 1 and 0
    err = raised(lambda: mt.variable_grads(loss))
    assert (err.op, err.phase, err.kind) == ("div", "forward", "Inf") and "0·inf = nan" in str(err)
    assert err.hint == "mt.where(w2.greater(0.0), w1 / mt.where(w2.greater(0.0), w2, 1.0), w1)"

    def fixed() -> mt.Tensor:
        return mt.where(w2.greater(0.0), w1 / mt.where(w2.greater(0.0), w2, 1.0), w1).sum()  # type: ignore[arg-type]  # the hint

    with mt.detect_anomaly():
        fixed_grads = mt.variable_grads(fixed).grads
    assert (fixed_grads[w1].item(), fixed_grads[w2].item()) == (1.0, 0.0)


def test_mlx_3668_maximum_clamps_a_length_after_its_sqrt() -> None:
    """https://github.com/ml-explore/mlx/issues/3668"""

    def f(x: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
        rho = mt.sqrt(x * x + y * y)
        return mt.maximum(rho, mt.scalar(1e-10)).sum()

    xs = [mt.tensor([0.0, 3.0]), mt.tensor([0.0, 4.0])]
    gx, gy = mt.grads(f)(xs)
    assert math.isnan(gx.data_sync()[0]) and abs(gx.data_sync()[1] - 0.6) < 1e-12  # expected 0 at the origin
    err = raised(lambda: mt.grads(f)(xs))
    assert (err.op, err.phase) == ("sqrt", "backward")
    assert err.masked_by.startswith(f"maximum at {line_of(f, 'mt.maximum').split('/')[-1]} hid entry (0,) of sqrt's output")
    assert "0 times sqrt's infinite derivative: 0·inf = nan" in err.masked_by
    assert "maximum" in err.hint and "double where" in err.hint  # advice in words: no line of code here


def test_pytorch_16317_divide_then_replace_the_zeros_on_the_next_line() -> None:
    """https://github.com/pytorch/pytorch/issues/16317"""

    def loss(x: mt.Tensor, n: mt.Tensor) -> mt.Tensor:
        y = x / n
        return mt.where(n.equal(0.0), 0.0, y).sum()  # type: ignore[arg-type]

    gx, _ = mt.grads(loss)([mt.tensor([0.0, 1.0]), mt.tensor([0.0, 2.0])])
    assert math.isnan(gx.data_sync()[0])  # expected [0, 0.5]
    trace = traced(lambda: mt.grads(loss)([mt.tensor([0.0, 1.0]), mt.tensor([0.0, 2.0])]))
    assert trace.first is not None and (trace.first.op, trace.first.phase) == ("div", "forward")
    assert any(e.masked_by.startswith("where at") for e in trace.spread)
    assert trace.hint == "y = x / mt.where(n.equal(0.0), 1.0, n)"


def test_pytorch_108618_where_with_log2_of_zero() -> None:
    """https://github.com/pytorch/pytorch/issues/108618"""

    def f(x: mt.Tensor) -> mt.Tensor:
        return mt.where(x.greater(2.0), mt.log2(x), 2.0 * x)

    g = mt.grad(f)(mt.tensor([0.0, 2.0, 3.0]))
    assert math.isnan(g.data_sync()[0]) and g.data_sync()[1] == 2.0  # expected [2, 2, 0.48]
    err = raised(lambda: mt.grad(f)(mt.tensor([0.0, 2.0, 3.0])))
    assert (err.op, err.kind) == ("log2", "Inf")
    assert err.hint == "mt.where(x.greater(2.0), mt.log2(mt.where(x.greater(2.0), x, 1.0)), 2.0 * x)"


def test_pytorch_18287_where_with_cos_of_infinity() -> None:
    """https://github.com/pytorch/pytorch/issues/18287"""

    def f(x: mt.Tensor) -> mt.Tensor:
        return mt.where(x.less(1.0), mt.cos(x), mt.zeros_like(x))

    assert math.isnan(mt.grad(f)(mt.tensor([0.0, INF])).data_sync()[1])  # expected 0
    err = raised(lambda: mt.grad(f)(mt.tensor([0.0, INF])))
    assert (err.op, err.kind) == ("cos", "NaN")
    assert err.hint == "mt.where(x.less(1.0), mt.cos(mt.where(x.less(1.0), x, 0.0)), mt.zeros_like(x))"


def test_pytorch_36923_where_picks_x_but_the_other_branch_divides_by_zero() -> None:
    """https://github.com/pytorch/pytorch/issues/36923"""
    t = mt.scalar(0.0)

    def f(x: mt.Tensor) -> mt.Tensor:
        return mt.where(x.greater_equal(t), x, t * (x / t))

    assert math.isnan(mt.grad(f)(mt.scalar(1.0)).item())  # expected 1
    err = raised(lambda: mt.grad(f)(mt.scalar(1.0)))
    assert err.op == "div" and err.hint == "mt.where(x.greater_equal(t), x, t * (x / mt.where(x.greater_equal(t), 1.0, t)))"


def test_tf_2540_select_with_exp_of_a_huge_number_where_it_is_not_picked() -> None:
    """https://github.com/tensorflow/tensorflow/issues/2540"""

    def f(x: mt.Tensor) -> mt.Tensor:
        return mt.where(x.greater(0.0), 0.0, mt.exp(x))  # type: ignore[arg-type]

    assert math.isnan(mt.grad(f)(mt.scalar(1e10)).item())  # expected 0
    err = raised(lambda: mt.grad(f)(mt.scalar(1e10)))
    assert err.op == "exp" and err.hint == "mt.where(x.greater(0.0), 0.0, mt.exp(mt.where(x.greater(0.0), 0.0, x)))"


def test_tf_118674_where_guards_a_reciprocal_at_zero() -> None:
    """https://github.com/tensorflow/tensorflow/issues/118674"""

    def f(x: mt.Tensor) -> mt.Tensor:
        return mt.where(x.greater(0.0), 1.0 / x, 1.0)  # type: ignore[arg-type]

    assert math.isnan(mt.grad(f)(mt.scalar(0.0)).item())  # expected 0
    err = raised(lambda: mt.grad(f)(mt.scalar(0.0)))
    assert (err.op, err.phase) == ("div", "forward") and err.hint == "mt.where(x.greater(0.0), 1.0 / mt.where(x.greater(0.0), x, 1.0), 1.0)"


def test_tinygrad_15806_where_over_sqrt_at_zero_the_nan_is_made_on_the_way_back() -> None:
    """https://github.com/tinygrad/tinygrad/pull/15806"""

    def f(x: mt.Tensor) -> mt.Tensor:
        return mt.where(x.greater(0.0), mt.sqrt(x), 0.0)  # type: ignore[arg-type]

    assert math.isnan(mt.grad(f)(mt.tensor([0.0])).item())  # expected 0: the forward pass is clean
    trace = traced(lambda: mt.grad(f)(mt.tensor([0.0])))
    first = trace.first
    assert first is not None and (first.op, first.phase, first.made_here) == ("sqrt", "backward", True)
    assert "passed them a gradient of 0" in first.masked_by and "0·inf = nan" in first.masked_by
    assert first.hint == "mt.where(x.greater(0.0), mt.sqrt(mt.where(x.greater(0.0), x, 1.0)), 0.0)" and first.hint_is_code


def test_pytorch_156212_where_with_exp_that_overflows_and_a_nan_in_the_data() -> None:
    """https://github.com/pytorch/pytorch/issues/156212"""

    def f(x: mt.Tensor) -> mt.Tensor:
        return mt.where(x.less_equal(10.0), mt.exp(x), 1.0)  # type: ignore[arg-type]

    x = mt.tensor([1.0, NAN, 1e10])
    g = mt.grad(f)(x).data_sync()
    assert math.isnan(g[2])  # expected 0 for the overflowing entry
    trace = traced(lambda: mt.grad(f)(x))
    assert trace.first is not None and (trace.first.op, trace.first.kind, trace.first.entries) == ("exp", "Inf", ((2,),))
    assert trace.hint == "mt.where(x.less_equal(10.0), mt.exp(mt.where(x.less_equal(10.0), x, 0.0)), 1.0)"


def test_pytorch_23395_where_picks_the_other_tensor_at_zero_and_sqrt_blows_up() -> None:
    """https://github.com/pytorch/pytorch/issues/23395"""

    def f(x: mt.Tensor) -> mt.Tensor:
        return mt.where(x.equal(0.0), x / 2.0, mt.sqrt(x) + 1.0)

    g = mt.grad(f)(mt.tensor([16.0, 0.0])).data_sync()
    assert g[0] == 0.125 and not math.isfinite(g[1])  # expected [0.125, 0.5]
    err = raised(lambda: mt.grad(f)(mt.tensor([16.0, 0.0])))
    assert (err.op, err.phase) == ("sqrt", "backward") and "a value computed from sqrt's output" in err.masked_by
    assert err.hint == "mt.where(x.equal(0.0), x / 2.0, mt.sqrt(mt.where(x.equal(0.0), 1.0, x)) + 1.0)"


# -- NaN from infinities, logs of probabilities, softmax ------------------------------------------


def test_pytorch_41508_softmax_over_a_fully_masked_attention_row() -> None:
    """https://github.com/pytorch/pytorch/issues/41508"""
    scores = mt.tensor([[0.3, 1.2, -0.4], [-INF, -INF, -INF]])  # the second query may attend to nothing
    weights = mt.softmax(scores)
    assert all(math.isnan(v) for v in weights.data_sync()[3:])  # a row of NaN
    trace = traced(lambda: mt.softmax(scores))
    first = trace.first
    assert first is not None and (first.op, first.phase, first.kind, first.made_here) == ("sub", "forward", "NaN", True)
    assert "all -inf" in first.cause and "-1e9" in trace.hint
    with pytest.raises(mt.AnomalyError, match="inf - inf"):
        with mt.detect_anomaly():
            mt.softmax(scores)


def test_tensorflow_models_181_the_log_of_a_softmax_that_rounds_to_zero() -> None:
    """https://github.com/tensorflow/models/pull/181"""
    labels = mt.tensor([0.0, 1.0, 0.0])

    def loss(z: mt.Tensor) -> mt.Tensor:
        return -(labels * mt.log(mt.softmax(z))).sum()

    z = mt.tensor([1000.0, 0.0, -1000.0])
    assert not math.isfinite(loss(z).item())
    eps_fix = mt.grad(lambda t: -(labels * mt.log(mt.softmax(t) + 1e-7)).sum())(z)
    assert eps_fix.data_sync() == [0.0, 0.0, 0.0]  # the old hint: the NaN is gone, and so is the gradient
    err = raised(lambda: mt.grad(loss)(z))
    assert err.op == "log" and err.hint == "mt.log_softmax(z)"
    assert mt.grad(lambda t: -(labels * mt.log_softmax(t)).sum())(z).data_sync() == [1.0, -1.0, 0.0]


def test_tensorflow_examples_383_labels_times_the_log_of_a_zero_probability() -> None:
    """https://github.com/aymericdamien/TensorFlow-Examples/issues/383"""
    y = mt.tensor([[0.0, 1.0]])

    def cost(logits: mt.Tensor) -> mt.Tensor:
        pred = mt.softmax(logits)
        return (-(y * mt.log(pred)).sum(axis=1)).mean()

    logits = mt.tensor([[900.0, 0.0]])
    assert math.isinf(cost(logits).item())
    trace = traced(lambda: cost(logits))
    assert trace.first is not None and trace.first.op == "log" and trace.first.cause.endswith("is -inf; it is the log of a softmax, which rounds to 0 for a logit far below the others")
    assert trace.hint == "mt.log_softmax(logits)"


def test_candle_2561_binary_cross_entropy_on_probabilities_at_a_large_logit() -> None:
    """https://github.com/huggingface/candle/issues/2561"""

    def bce(z: mt.Tensor) -> mt.Tensor:
        return -mt.log(1 - mt.sigmoid(z)).sum()  # the label is 0

    z = mt.tensor([40.0])
    assert math.isinf(bce(z).item()) and math.isnan(mt.grad(bce)(z).item())
    report = mt.check_grads(bce, [z])
    assert report.verdict == "FAILED" and report.culprit is None  # the NaN never passes, and no VJP is blamed
    assert report.rows[0].why.startswith("the analytic gradient is nan; f itself is inf there")
    assert report.origin is not None and "log (forward)" in report.origin and "hint: mt.log_sigmoid(-(z))" in report.origin
    assert mt.grad(lambda t: mt.sigmoid_cross_entropy(mt.tensor([0.0]), t))(z).item() == 1.0


def test_tiny_dnn_410_zero_times_the_log_of_zero_in_a_cross_entropy() -> None:
    """https://github.com/tiny-dnn/tiny-dnn/issues/410"""
    y, t = mt.tensor([1.0, 0.3]), mt.tensor([1.0, 0.0])

    def loss(p: mt.Tensor) -> mt.Tensor:
        return -(t * mt.log(p) + (1.0 - t) * mt.log(1.0 - p)).sum()

    assert math.isnan(loss(y).item())
    trace = traced(lambda: loss(y))
    assert trace.first is not None and trace.first.op == "log" and trace.first.entries == ((0,),)
    made = [e for e in trace.spread if e.made_here and e.kind == "NaN"]
    assert made and made[0].op == "mul" and "0·inf" in made[0].cause  # (1 - t) · log(0): 0 · -inf


def test_fluxml_nnlib_68_cross_entropy_from_a_softmax_of_far_apart_logits() -> None:
    """https://github.com/FluxML/NNlib.jl/issues/68"""
    o, y = mt.tensor([-431.0, 279.0, 427.0]), mt.tensor([1.0, 0.0, 0.0])
    hand = mt.grad(lambda t: -(y * mt.log(mt.softmax(t))).sum())(o)
    assert not finite(hand)
    err = raised(lambda: mt.grad(lambda t: -(y * mt.log(mt.softmax(t))).sum())(o))
    assert err.op == "log" and err.hint == "mt.log_softmax(t)"
    g = mt.grad(lambda t: mt.softmax_cross_entropy(y, t))(o)
    assert g.data_sync() == pytest.approx([-1.0, 0.0, 1.0])


def test_optax_1762_a_masked_class_with_a_logit_of_minus_infinity() -> None:
    """https://github.com/google-deepmind/optax/pull/1762"""
    logits, labels = mt.tensor([-INF, 0.0, 0.0]), mt.tensor([0.0, 1.0, 0.0])
    hand = -(labels * mt.log_softmax(logits)).sum()
    assert math.isnan(hand.item())
    trace = traced(lambda: -(labels * mt.log_softmax(logits)).sum())
    assert trace.first is not None and (trace.first.op, trace.first.made_here) == ("mul", True) and "0·inf" in trace.first.cause
    assert mt.softmax_cross_entropy(labels, logits).item() == pytest.approx(math.log(2.0))
    assert finite(mt.grad(lambda t: mt.softmax_cross_entropy(labels, t))(logits))


def test_theano_3162_softmax_and_cross_entropy_at_unbounded_activations() -> None:
    """https://github.com/Theano/Theano/issues/3162"""
    z = mt.tensor([[math.exp(7.0), 3.0, math.exp(6.5)]])  # activations in the hundreds
    labels = mt.tensor([[0.0, 1.0, 0.0]])
    assert not finite(mt.grad(lambda t: -(labels * mt.log(mt.softmax(t))).sum())(z))
    assert raised(lambda: mt.grad(lambda t: -(labels * mt.log(mt.softmax(t))).sum())(z)).hint == "mt.log_softmax(t)"
    assert finite(mt.grad(lambda t: mt.softmax_cross_entropy(labels, t))(z))


# -- a length by hand at zero ---------------------------------------------------------------------


def test_hips_autograd_151_the_gradient_of_a_norm_at_zero() -> None:
    """https://github.com/HIPS/autograd/issues/151"""

    def length(x: mt.Tensor) -> mt.Tensor:
        return mt.sqrt((x * x).sum())

    assert all(math.isnan(v) for v in mt.grad(length)(mt.zeros((3,))).data_sync())
    err = raised(lambda: mt.grad(length)(mt.zeros((3,))))
    assert (err.op, err.phase) == ("sqrt", "backward") and "1/(2*sqrt(x)) is inf" in err.cause
    assert err.hint == "mt.norm(x)"
    assert mt.grad(mt.norm)(mt.zeros((3,))).data_sync() == [0.0, 0.0, 0.0]  # explained: 0 is a subgradient


def test_pytorch_2421_the_gradient_of_a_zero_norm() -> None:
    """https://github.com/pytorch/pytorch/issues/2421"""
    assert mt.grad(mt.norm)(mt.zeros((1,))).data_sync() == [0.0]  # as PyTorch after the fix
    report = mt.check_grads(mt.norm, [mt.zeros((2,))])
    assert report.ok and [r.status for r in report.rows] == ["kink", "kink"]  # a cone: no derivative, 0 is a subgradient


def test_jax_21723_the_squared_norm_at_zero() -> None:
    """https://github.com/jax-ml/jax/issues/21723"""
    assert mt.grad(lambda x: mt.norm(x) ** 2.0)(mt.scalar(0.0)).item() == 0.0
    by_hand = mt.grad(lambda x: mt.sqrt((x * x).sum()) ** 2.0)(mt.scalar(0.0))
    assert math.isnan(by_hand.item())
    assert raised(lambda: mt.grad(lambda x: mt.sqrt((x * x).sum()) ** 2.0)(mt.scalar(0.0))).op == "sqrt"


def test_hips_autograd_617_squared_norms_of_rows_at_a_zero_row() -> None:
    """https://github.com/HIPS/autograd/issues/617"""
    x = mt.tensor([[0.0, 0.0], [1.0, 2.0]])
    g = mt.grad(lambda t: (mt.norm(t, axis=-1) ** 2.0).sum())(x)
    assert g.tolist() == [[0.0, 0.0], [2.0, 4.0]]  # 2x, as the squared norm says
    assert not finite(mt.grad(lambda t: (mt.sqrt((t * t).sum(axis=-1)) ** 2.0).sum())(x))


def test_tf_4914_sqrt_of_a_product_with_a_zero_factor() -> None:
    """https://github.com/tensorflow/tensorflow/issues/4914"""
    x = mt.tensor([2.0, 3.0])

    def f(c: mt.Tensor) -> mt.Tensor:
        return mt.sqrt(c * x).sum()

    assert not finite(mt.grad(f)(mt.tensor([0.0, 1.0])))
    err = raised(lambda: mt.grad(f)(mt.tensor([0.0, 1.0])))
    assert (err.op, err.phase, err.kind) == ("sqrt", "backward", "Inf") and err.where == line_of(f, "mt.sqrt")


# -- a gradient check that tells the truth --------------------------------------------------------


def test_mxnet_16133_relu_checked_within_a_step_of_its_kink() -> None:
    """https://github.com/apache/mxnet/pull/16133"""
    report = mt.check_grads(lambda t: mt.relu(t).sum(), [mt.tensor([1e-7, -1e-7, 0.8])])
    assert report.ok and report.culprit is None  # before: FAILED, and relu (whose VJP is right) blamed
    assert all(r.status == "ok" for r in report.rows)
    assert "bends sharply within the step" in next(r.why for r in report.rows if r.why)


def test_odyssey_2077_relu_checked_at_exactly_zero() -> None:
    """https://github.com/HomericIntelligence/Odyssey/pull/2077"""
    report = mt.check_grads(lambda t: mt.relu(t).sum(), [mt.zeros((3,))])
    assert report.ok and [r.status for r in report.rows] == ["kink"] * 3
    assert report.rows[0].analytic == 0.0 and report.rows[0].numeric == pytest.approx(0.5)


def test_pytorch_114234_relu_gradcheck_at_inputs_that_are_zero() -> None:
    """https://github.com/pytorch/pytorch/issues/114234"""
    x = mt.tensor([[0.0, 0.7], [-0.2, 0.0]])
    report = mt.check_grads(mt.relu, [x])
    assert report.ok and len(report.kinks) == 2 and report.failures == []


def test_tf_fast_rcnn_12_max_next_to_an_almost_equal_second_value() -> None:
    """https://github.com/zplizzi/tensorflow-fast-rcnn/issues/12"""
    x = mt.tensor([1.0, 1.0 + 3e-7, 0.2])  # the two largest are closer than the step
    report = mt.check_grads(mt.max, [x])
    assert report.culprit is None and report.failures == []  # never blames max, whose VJP is right
    assert report.ok


def test_pytorch_5351_a_finite_difference_below_its_rounding_floor() -> None:
    """https://github.com/pytorch/pytorch/issues/5351 (there, float32 rounding; here, float64 values of 1e9)"""
    w, b = mt.tensor([0.6, -0.3]), mt.scalar(1e9)

    def linear(x: mt.Tensor) -> mt.Tensor:
        return (x * w).sum() + b

    x = mt.tensor([0.29, 0.53])
    report = mt.check_grads(linear, [x])
    assert report.verdict == "inconclusive" and report.culprit is None  # before: FAILED, and add blamed
    assert "below the rounding floor" in report.rows[0].why and "try a larger step: eps=" in report.rows[0].why
    suggested = float(report.rows[0].why.rsplit("eps=", 1)[1])
    assert mt.check_grads(linear, [x], eps=suggested).ok  # what it says to try works


def test_pytorch_76780_a_nan_gradient_never_passes_a_gradient_check() -> None:
    """https://github.com/pytorch/pytorch/issues/76780 (it asks for NaN == NaN to pass; microtape refuses)"""
    report = mt.check_grads(mt.sqrt, [mt.tensor([-0.5, -0.25])])  # NaN on both sides, as acosh below 1
    assert not report.ok and report.verdict == "FAILED"
    assert all(r.status == "FAIL" and r.why.startswith("the analytic gradient is nan") for r in report.failures)


def test_pytorch_114233_gradcheck_of_max_at_extreme_values() -> None:
    """https://github.com/pytorch/pytorch/issues/114233"""
    x = mt.tensor([1.3336e241, 1.3823e-310, 2.1646e-304])
    report = mt.check_grads(lambda t: mt.max(t, axis=0), [x])
    assert report.culprit is None and report.failures == []  # a step of 1e-6 vanishes in 1e241: inconclusive, not max's fault
    assert report.verdict == "inconclusive" and "rounding floor" in report.inconclusive[0].why


# -- gradients that are missing, and why ----------------------------------------------------------


def test_tf_30234_an_assign_inside_the_tape() -> None:
    """https://github.com/tensorflow/tensorflow/issues/30234"""
    v, x = mt.variable(mt.scalar(1.0), name="report_30234_v"), mt.scalar(2.0)

    def step() -> None:
        with mt.GradientTape() as tape:
            tape.watch(x)
            v.assign_add(x)
            loss = v * v
        with pytest.warns(mt.GradientWarning, match=r"report_30234_v\.assign_add\(\) at") as caught:
            assert tape.gradient(loss, x) is None  # TensorFlow's answer
        assert line_of(step, "v.assign_add(x)") in str(caught[0].message)

    step()


def test_tf_54532_a_model_that_assigns_its_weight_from_the_input() -> None:
    """https://github.com/tensorflow/tensorflow/issues/54532"""
    w = mt.variable(mt.scalar(0.0), name="report_54532_w")

    def log_posterior(x: mt.Tensor) -> mt.Tensor:
        w.assign(x)  # put the sample into the model's weight
        return -(w * w) / 2.0

    with pytest.raises(mt.GradientError, match=r"report_54532_w\.assign\(\) at .*: an assign writes values into a variable"):
        mt.grad(log_posterior)(mt.scalar(1.5))


def test_tf_29942_the_gradient_for_a_tensor_that_was_never_watched() -> None:
    """https://github.com/tensorflow/tensorflow/issues/29942"""
    x0 = mt.variable(mt.scalar(1.0), name="report_29942_x0")
    x = x0 + 3.0  # computed outside the tape
    with mt.GradientTape() as tape:
        z = x * x0  # the tape watches x0 (a trainable variable) but not x
    with pytest.warns(mt.GradientWarning, match=r"source 0 was read by mul at .* but never watched"):
        gx, gx0 = tape.gradient(z, [x, x0])
    assert gx is None and gx0 is not None


def test_tf_37501_gradients_do_not_exist_for_variables() -> None:
    """https://github.com/tensorflow/tensorflow/issues/37501"""
    w = mt.variable(mt.tensor([0.5, -0.5]), name="report_37501_w")
    emb = mt.variable(mt.tensor([1.0, 2.0]), name="report_37501_emb")

    def loss() -> mt.Tensor:
        features = mt.tensor(emb.data_sync())  # the embedding's values, copied: no path back to it
        return ((features * w).sum() - 1.0) ** 2.0

    with pytest.warns(mt.GradientWarning, match=r"report_37501_emb' of var_list gets no gradient: data_sync\(\) at"):
        _, grads = mt.variable_grads(loss, [w, emb])
    assert list(grads) == ["report_37501_w"]
    with pytest.raises(mt.GradientKeyError, match="data_sync"):
        grads[emb]


def test_tf_24849_zeros_instead_of_none_for_an_unused_variable() -> None:
    """https://github.com/tensorflow/tensorflow/issues/24849"""
    a, b = mt.variable(mt.scalar(2.0), name="report_24849_a"), mt.variable(mt.scalar(3.0), name="report_24849_b")
    with mt.GradientTape(persistent=True) as tape:
        y = a * a
    assert tape.gradient(y, [a, b])[1] is None  # TensorFlow's default, kept
    zeroed = tape.gradient(y, [a, b], unconnected_gradients="zero")[1]
    assert zeroed is not None and zeroed.item() == 0.0
    tape.release()


def test_jax_21220_a_custom_gradient_whose_grad_fn_reads_saved_values() -> None:
    """https://github.com/jax-ml/jax/issues/21220"""

    def cube(x: mt.Tensor, save: Callable[[Sequence[mt.Tensor]], None]) -> tuple[mt.Tensor, Callable[..., mt.Tensor]]:
        save([x * x])
        return x * x * x, lambda dy, saved: dy * 3.0 * saved[0]

    op: Callable[[mt.Tensor], mt.Tensor] = mt.custom_grad(cube)
    x = mt.tensor([0.5, -1.5])
    assert mt.check_grads(lambda t: op(t).sum(), [x]).ok  # the first derivative is right
    with pytest.raises(mt.GradientError, match="does not depend on x"):  # the symptom: no second derivative
        mt.grad(mt.grad(lambda t: op(t).sum()))(x)  # (JAX gives 0 where 6x is right; a tape sees no path at all)
    report = mt.check_grads(lambda t: op(t).sum(), [x], order=2)
    assert not report.ok and report.culprit is not None and report.culprit.order == 2
    assert "grad_fn reads the 1 tensor(s) f saved" in str(report.culprit) and ".item()" not in str(report.culprit)


def test_dfdx_486_a_relu_on_the_output_layer_kills_every_gradient() -> None:
    """https://github.com/chelsea0x3b/dfdx/issues/486 (grad_stats sees the zeros; the tape's summary shows where they start)"""
    w = mt.variable(mt.tensor([[-0.5], [-0.8]]), name="report_486_w")
    x = mt.tensor([[1.0, 2.0], [0.5, 1.5]])
    _, grads = mt.variable_grads(lambda: (mt.relu(x @ w) - 1.0).square().mean())
    stats = mt.grad_stats(grads)["report_486_w"]
    assert grads["report_486_w"].data_sync() == [0.0, 0.0]  # the symptom: zero gradients
    assert stats.zero_fraction == 1.0 and stats.norm == 0.0  # grad_stats: every entry is exactly zero
    with mt.GradientTape(persistent=True) as tape:
        loss = (mt.relu(x @ w) - 1.0).square().mean()
    tape.gradient(loss, w)
    rows = {line.split()[1]: line.split() for line in tape.summary().splitlines()[1:]}
    assert float(rows["relu"][-1]) > 0.0  # a gradient reaches the relu ...
    assert float(rows["matmul"][-1]) == 0.0  # ... and none gets past it: its outputs are all 0 (dead)
    tape.release()


# -- memory -------------------------------------------------------------------------------------


def test_tfjs_4647_optimizer_state_after_dispose() -> None:
    """https://github.com/tensorflow/tfjs/issues/4647"""
    w = mt.variable(mt.tensor([1.0, 2.0]), name="report_4647_w")
    before = mt.memory()
    opt = mt.train.momentum(0.001, 0.9)
    with mt.leak_check(on_leak="ignore") as report:
        opt.minimize(lambda: (w * w).sum())
    assert mt.memory().num_tensors == before.num_tensors + 1  # the symptom: memory grew
    assert report.count == 0 and [(g.owner, g.names) for g in report.state] == [("MomentumOptimizer", ("report_4647_w/momentum",))]
    assert "opt.dispose() frees them" in str(report)
    opt.dispose()
    assert mt.memory().num_tensors == before.num_tensors  # and dispose frees all of it, unlike the report
