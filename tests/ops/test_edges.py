"""The newer ops at their edges: ±inf, nan, huge and tiny values, kinks and indices, values and gradients.

The op table (``test_ops.py``) checks every op at ordinary points, to second
order; here each op meets the inputs where a naive formula overflows, loses
its digits or divides 0 by 0, and its documented convention is pinned.
"""

from __future__ import annotations

import math

import pytest

import microtape as mt

NAN = math.nan
INF = math.inf


def same(got: list[float], want: list[float]) -> bool:
    """Entry by entry, NaN equal to NaN and the sign of an infinity respected."""
    return len(got) == len(want) and all((g != g and w != w) or g == w or math.isclose(g, w, rel_tol=1e-12) for g, w in zip(got, want))


@pytest.mark.parametrize(
    ("fn", "values", "want"),
    [
        (mt.atan, [INF, -INF, NAN, 1e300], [math.pi / 2, -math.pi / 2, NAN, math.pi / 2]),
        (mt.expm1, [1e-10, 1000.0, -INF, INF, NAN], [1.00000000005e-10, INF, -1.0, INF, NAN]),
        (mt.log1p, [1e-10, -1.0, -2.0, INF, NAN], [9.9999999995e-11, -INF, NAN, INF, NAN]),
        (mt.log2, [1024.0, 0.0, -1.0, INF, 1e-300], [10.0, -INF, NAN, INF, math.log2(1e-300)]),
        (mt.softplus, [1000.0, -1000.0, INF, -INF, NAN, 0.0], [1000.0, 0.0, INF, 0.0, NAN, math.log(2.0)]),
        (mt.log_sigmoid, [-1000.0, 1000.0, -INF, INF, NAN], [-1000.0, 0.0, -INF, 0.0, NAN]),
        (mt.is_nan, [NAN, INF, 0.0], [1.0, 0.0, 0.0]),
        (mt.is_finite, [NAN, INF, -1e308], [0.0, 0.0, 1.0]),
        (mt.is_inf, [NAN, -INF, 1e308], [0.0, 1.0, 0.0]),
    ],
)
def test_unary_values_at_the_edges(fn: object, values: list[float], want: list[float]) -> None:
    got = fn(mt.tensor(values)).data_sync()  # type: ignore[operator]
    assert same(got, want), (got, want)


def test_atan2_follows_ieee_and_its_gradient_at_the_origin_is_nan() -> None:
    y = mt.tensor([0.0, -0.0, 0.0, INF, 1.0])
    x = mt.tensor([-1.0, -1.0, 0.0, INF, 0.0])
    assert same(mt.atan2(y, x).data_sync(), [math.pi, -math.pi, 0.0, math.pi / 4, math.pi / 2])
    dy, dx = mt.grads(lambda a, b: mt.atan2(a, b))([mt.scalar(0.0), mt.scalar(0.0)])
    assert math.isnan(dy.item()) and math.isnan(dx.item())  # 0/0: the angle of the origin is not defined


def test_log1p_and_expm1_keep_the_digits_near_zero() -> None:
    tiny = mt.tensor([1e-12])
    assert mt.log1p(tiny).item() == math.log1p(1e-12) != mt.log(1.0 + tiny).item()
    assert mt.expm1(tiny).item() == math.expm1(1e-12) != (mt.exp(tiny) - 1.0).item()
    assert mt.grad(mt.log1p)(mt.tensor([-1.0])).data_sync() == [INF]  # 1/(1 + x) at -1


def test_softplus_and_log_sigmoid_have_finite_gradients_where_the_naive_forms_overflow() -> None:
    x = mt.tensor([-1000.0, 0.0, 1000.0])
    naive = mt.grad(lambda t: mt.log(1.0 + mt.exp(t)))(x).data_sync()
    assert math.isnan(naive[2])  # exp(1000) = inf: inf / inf
    assert mt.grad(mt.softplus)(x).data_sync() == [0.0, 0.5, 1.0]
    assert mt.grad(mt.log_sigmoid)(x).data_sync() == [1.0, 0.5, 0.0]


def test_sigmoid_cross_entropy_is_finite_where_the_loss_on_probabilities_is_not() -> None:
    labels, logits = mt.tensor([0.0, 1.0, 1.0, 0.0]), mt.tensor([40.0, -800.0, INF, -INF])
    losses = mt.sigmoid_cross_entropy(labels, logits, reduction="none").data_sync()
    assert losses == [40.0, 800.0, 0.0, 0.0]  # no 0·inf: a 0 label factor is 0 even at an infinite logit
    g = mt.grad(lambda t: mt.sigmoid_cross_entropy(labels, t, reduction="sum"))(logits).data_sync()
    assert g == [1.0, -1.0, 0.0, 0.0]
    probabilities = -(labels * mt.log(mt.sigmoid(logits)) + (1.0 - labels) * mt.log(1.0 - mt.sigmoid(logits)))
    assert not all(math.isfinite(v) for v in probabilities.data_sync())
    assert mt.sigmoid_cross_entropy(labels, mt.tensor([NAN, 0.0, 0.0, 0.0]), reduction="none").data_sync()[0] != 0.0


def test_the_losses_reduce_as_tfjs_does() -> None:
    """TF.js's own tests: all wrong gives 6.6667 (sigmoid, the mean of 9 entries) and 20 (softmax, the mean of 3 rows)."""
    labels = mt.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    logits = mt.tensor([[10.0, -10.0, -10.0], [-10.0, 10.0, -10.0], [-10.0, -10.0, 10.0]])
    assert mt.sigmoid_cross_entropy(labels, logits).item() == pytest.approx(6.6667123, abs=1e-5)
    assert mt.softmax_cross_entropy(labels, logits).item() == pytest.approx(20.0, abs=1e-6)
    assert mt.softmax_cross_entropy(labels, logits, reduction="none").shape == (3,)
    assert mt.softmax_cross_entropy(labels, logits, reduction="sum").item() == pytest.approx(60.0, abs=1e-5)


def test_softmax_cross_entropy_with_a_masked_class() -> None:
    labels = mt.tensor([[0.0, 1.0, 0.0]])
    logits = mt.tensor([[2.0, 1.0, -INF]])  # the third class is impossible, and its label is 0
    loss = mt.softmax_cross_entropy(labels, logits)
    assert math.isfinite(loss.item())
    naive = -(labels * mt.log_softmax(logits)).sum()
    assert math.isnan(naive.item())  # 0 · -inf
    g = mt.grad(lambda t: mt.softmax_cross_entropy(labels, t))(logits).data_sync()
    assert g[2] == 0.0 and math.isfinite(g[0])
    every = mt.softmax_cross_entropy(labels, mt.tensor([[-INF, -INF, -INF]]))
    assert math.isnan(every.item())  # a row with no possible class has no distribution


def test_norm_never_overflows_and_its_gradient_at_zero_is_a_subgradient() -> None:
    assert mt.norm(mt.tensor([1e200, 1e200])).item() == pytest.approx(math.sqrt(2.0) * 1e200)
    assert mt.norm(mt.tensor([3e-200, 4e-200])).item() == pytest.approx(5e-200)
    assert mt.norm(mt.tensor([INF, 1.0])).item() == INF and math.isnan(mt.norm(mt.tensor([NAN, 1.0])).item())
    assert mt.grad(mt.norm)(mt.zeros((3,))).data_sync() == [0.0, 0.0, 0.0]
    hand_written = mt.grad(lambda t: mt.sqrt((t * t).sum()))(mt.zeros((3,))).data_sync()
    assert all(math.isnan(v) for v in hand_written)  # 0 · 1/(2·sqrt(0)) = 0 · inf
    report = mt.check_grads(mt.norm, [mt.zeros((2,))])
    assert report.ok and {r.status for r in report.rows} == {"kink"}  # |t|·|u| along any direction: a kink
    with pytest.raises(mt.InvalidArgumentError, match="matrix norm"):
        mt.norm(mt.ones((2, 2)), ord=1, axis=(0, 1))
    with pytest.raises(mt.InvalidArgumentError, match="ord=3"):
        mt.norm(mt.ones((2,)), ord=3)


def test_argmax_and_argmin_follow_tfjs_and_have_a_zero_gradient() -> None:
    x = mt.tensor([[1.0, 9.0, 9.0], [NAN, 0.0, 5.0]])
    assert mt.argmax(x).data_sync() == [1.0, 0.0, 0.0]  # axis 0 by default, as in TF.js; NaN counts as the largest
    assert mt.argmax(x, axis=1).data_sync() == [1.0, 0.0]  # a tie goes to the first index
    assert mt.argmin(x, axis=-1).data_sync() == [0.0, 0.0]  # NaN counts as the smallest too
    assert mt.grad(lambda t: mt.argmax(t, axis=1))(mt.tensor([[1.0, 2.0]])).data_sync() == [0.0, 0.0]
    with pytest.raises(mt.InvalidArgumentError, match="one int"):
        mt.argmax(x, axis=(0, 1))  # type: ignore[arg-type]  # the mistake under test


def test_one_hot_and_gather_take_whole_numbers() -> None:
    assert mt.one_hot(mt.tensor([1.0, -1.0, 7.0]), 3).tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    with pytest.raises(mt.InvalidArgumentError, match="not a whole number"):
        mt.one_hot(mt.tensor([1.5]), 3)
    x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert mt.gather(x, mt.tensor([2.0, 2.0]), axis=1).tolist() == [[3.0, 3.0], [6.0, 6.0]]
    assert mt.grad(lambda t: mt.gather(t, mt.tensor([2.0, 2.0]), axis=1))(x).tolist() == [[0.0, 0.0, 2.0], [0.0, 0.0, 2.0]]
    with pytest.raises(mt.InvalidArgumentError, match=r"index 3.0 is not in \[0, 3\)"):
        mt.gather(x, mt.tensor([3.0]), axis=1)


def test_stop_gradient_cuts_only_its_own_path() -> None:
    x = mt.scalar(2.0)
    assert mt.grad(lambda t: t * t + mt.stop_gradient(t * t))(x).item() == 4.0
    assert mt.grad(lambda t: mt.stop_gradient(t) * t)(x).item() == 2.0
