"""``check_grads(modes=("rev", "fwd"))``: the JVP against directional differences, and the dot-product test.

Driven by the op table: every op passes both forward-mode tests on its
samples, and a VJP that is right only for the cotangent ``dy = 1`` (it
forgets ``dy``, or squares it), which the reverse check of ``op(x).sum()``
passes, fails the dot-product test with that op named as the culprit. The
default ``modes=("rev",)`` prints exactly what it printed before.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

import microtape as mt
from microtape.checking.forward_tests import DOT_RTOL, dot_agrees
from microtape.checking.samples import CASES
from microtape.engine.primitive import OPS
from microtape.errors import InvalidArgumentError

from ..op_cases import inputs_of
from .test_culprit_mutation import SMALL_LINE, _call, differentiable_ops, faulty_vjp

GradFn = Callable[[mt.Tensor], mt.Tensor]


def _square_forgot_dy(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    return t * t, lambda dy: 2.0 * t  # BUG: the gradient of t² is dy * 2t


def _square_read_out(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
    # right values, but dy is read out as numbers: no tape sees how the gradient depends on it
    return t * t, lambda dy: mt.tensor(dy.data_sync(), shape=dy.shape) * 2.0 * t


X = mt.tensor([0.5, -1.3, 2.0])


def test_the_default_prints_what_it_printed_before() -> None:
    f = lambda t: mt.tanh(t * t).sum()  # noqa: E731
    default, explicit = mt.check_grads(f, [X]), mt.check_grads(f, [X], modes=("rev",))
    assert str(default) == str(explicit)
    assert "tests:" not in str(default) and default.modes == ("rev",)
    assert all(r.test == "rev" for r in default.rows) and default.tests == {"rev": "passed"}


def test_a_right_function_passes_every_test_and_the_report_says_which_ran() -> None:
    report = mt.check_grads(lambda t: mt.tanh(t) * t, [X], modes=("rev", "fwd"))
    assert report.ok and report.tests == {"rev": "passed", "fwd": "passed", "dot": "passed"}
    assert [r.test for r in report.rows].count("fwd") == 3 and [r.test for r in report.rows].count("dot") == 1
    assert "  tests: rev passed, fwd passed, dot passed" in str(report).splitlines()
    only = mt.check_grads(lambda t: mt.tanh(t) * t, [X], modes=["fwd"])
    assert only.ok and only.tests == {"fwd": "passed", "dot": "passed"}
    assert all(r.test != "rev" for r in only.rows)


def test_a_vjp_that_forgets_dy_passes_the_reverse_check_and_fails_the_dot_product_test() -> None:
    op = mt.custom_grad(_square_forgot_dy)
    f = lambda t: op(t).sum()  # noqa: E731 - the sum sends dy = 1, and 1 * 2t = 2t
    assert mt.check_grads(f, [X]).ok
    report = mt.check_grads(f, [X], modes=("rev", "fwd"))
    assert not report.ok and report.verdict == "FAILED"
    assert report.tests == {"rev": "passed", "fwd": "FAILED", "dot": "FAILED"}
    dot = next(r for r in report.rows if r.test == "dot")
    assert dot.analytic == 0.0 and abs(dot.numeric) > 0.1  # forward mode sees no dependence on dy at all
    culprit = report.culprit
    assert culprit is not None and culprit.op == "custom_grad(_square_forgot_dy)" and culprit.test == "dot"
    assert culprit.where.endswith(f"test_forward_modes.py:{test_a_vjp_that_forgets_dy_passes_the_reverse_check_and_fails_the_dot_product_test.__code__.co_firstlineno + 2}")
    text = str(report)
    assert "its VJP is not linear in the cotangent" in text and "multiply the local derivative by dy" in text


def test_the_hint_fixes_it() -> None:
    def fixed(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
        return t * t, lambda dy: dy * 2.0 * t  # the hint applied: multiplied by dy

    assert mt.check_grads(lambda t: mt.custom_grad(fixed)(t).sum(), [X], modes=("rev", "fwd")).ok


def test_a_vjp_that_reads_dy_out_as_numbers_is_named_at_order_2() -> None:
    op = mt.custom_grad(_square_read_out)
    report = mt.check_grads(lambda t: op(t).sum(), [X], modes=("rev", "fwd"))
    assert report.tests["dot"] == "FAILED" and report.tests["rev"] == "passed"
    culprit = report.culprit
    assert culprit is not None and culprit.op == "custom_grad(_square_read_out)"
    assert culprit.test == "dot-tape"  # linear in dy, but a tape cannot differentiate it in dy
    assert "grad_fn uses values no tape recorded" in str(culprit)


def test_a_wrong_factor_fails_rev_and_fwd_but_not_dot() -> None:
    def triple(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
        return t * t, lambda dy: dy * 3.0 * t  # BUG: 3t, but linear in dy

    report = mt.check_grads(lambda t: mt.custom_grad(triple)(t).sum(), [X], modes=("rev", "fwd"))
    assert report.tests == {"rev": "FAILED", "fwd": "FAILED", "dot": "passed"}
    assert report.culprit is not None and report.culprit.op == "custom_grad(triple)" and report.culprit.test == "rev"


def test_nan_is_never_agreement() -> None:
    def nan_vjp(t: mt.Tensor) -> tuple[mt.Tensor, GradFn]:
        return t * t, lambda dy: dy * math.nan

    report = mt.check_grads(lambda t: mt.custom_grad(nan_vjp)(t).sum(), [X], modes=("rev", "fwd"))
    assert not report.ok and report.tests["fwd"] == "FAILED" and report.tests["dot"] == "inconclusive"
    assert dot_agrees(math.nan, math.nan, 0.0) is None
    assert dot_agrees(math.nan, 1.0, 1.0) is False and dot_agrees(1.0, math.inf, 1.0) is False
    assert dot_agrees(0.0, 0.0, 0.0) is True and dot_agrees(0.0, 1e-300, 0.0) is False
    assert dot_agrees(1.0, 1.0 + 0.5 * DOT_RTOL, 1.0) and not dot_agrees(1.0, 1.0 + 2 * DOT_RTOL, 1.0)


@pytest.mark.parametrize(
    ("name", "f", "x"),
    [
        ("offset 1e9", lambda t: ((t * t).sum() + 1e9) - 1e9, [0.5, -1.3, 2.0]),
        ("tiny scale", lambda t: (t * t * 1e8).sum(), [1e-8, -3e-8, 2e-8]),
        ("zeros", lambda t: mt.sin(t) * t, [0.0, 0.0]),
        ("kink", lambda t: mt.relu(t) + mt.abs(t), [0.0, 1.0]),
        ("aliasing", lambda t: t * t + t, [0.5, 2.0]),
        ("huge", lambda t: mt.exp(t), [700.0]),
    ],
)
def test_the_dot_product_test_passes_right_gradients_where_differences_struggle(name: str, f: GradFn, x: list[float]) -> None:
    report = mt.check_grads(f, [mt.tensor(x)], modes=("rev", "fwd"))
    assert report.tests["dot"] == "passed", str(report)
    assert report.tests["fwd"] != "FAILED" and report.tests["rev"] != "FAILED", str(report)


def test_the_dot_product_test_catches_a_forgotten_dy_at_a_tiny_scale() -> None:
    op = mt.custom_grad(_square_forgot_dy)
    report = mt.check_grads(lambda t: op(t).sum(), [mt.tensor([1e-8, -3e-8])], modes=("rev", "fwd"))
    assert report.tests["dot"] == "FAILED"
    assert report.culprit is not None and report.culprit.test == "dot"


def test_order_2_runs_the_forward_tests_on_the_gradient_too() -> None:
    report = mt.check_grads(lambda t: mt.tanh(t).sum(), [X], order=2, modes=("rev", "fwd"))
    assert report.ok and {r.order for r in report.rows if r.test == "dot"} == {1, 2}


def test_fast_mode_with_forward_tests() -> None:
    report = mt.check_grads(lambda t: mt.sin(t) * t, [X], mode="fast", modes=("rev", "fwd"))
    assert report.ok and report.tests == {"rev": "passed", "fwd": "passed", "dot": "passed"}


@pytest.mark.parametrize("modes", ["fwd", (), ("rev", "rev"), ("fwdd",), None, 3])
def test_a_wrong_modes_argument_teaches(modes: object) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        mt.check_grads(mt.tanh, [X], modes=modes)  # type: ignore[call-overload]
    assert 'modes=("rev", "fwd")' in str(info.value) and repr(modes)[:20] in str(info.value)


def test_in_russian() -> None:
    op = mt.custom_grad(_square_forgot_dy)
    mt.set_language("ru")
    try:
        text = str(mt.check_grads(lambda t: op(t).sum(), [X], modes=("rev", "fwd")))
        with pytest.raises(InvalidArgumentError) as info:
            mt.check_grads(mt.tanh, [X], modes="fwd")  # type: ignore[arg-type]
    finally:
        mt.set_language(None)
    assert "тесты: rev пройдена, fwd НЕ ПРОЙДЕНА, dot НЕ ПРОЙДЕНА" in text
    assert "не линейна по котангенсу" in text and "not linear" not in text and "forgets dy" not in text
    assert "тест скалярного произведения не пройден" in text
    assert "подсказка" in str(info.value) and "hint" not in str(info.value)


# -- the op table ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_passes_the_forward_tests_on_its_samples(name: str) -> None:
    op = OPS[name]
    if not op.differentiable or op.vjp is None:
        pytest.skip(f"{name} has no VJP")
    for case in CASES[name]:
        xs = inputs_of(case)
        report = mt.check_grads(_call(case), xs, modes=("rev", "fwd"))
        assert report.tests["dot"] == "passed", (case, str(report))
        # moving every input at once can cross a jump (where's 0/1 condition): inconclusive, with a reason
        assert report.tests["fwd"] != "FAILED", (case, str(report))
        assert all(r.why for r in report.rows if r.test == "fwd" and r.status == "inconclusive"), (case, str(report))


def _forgot_dy(dout: mt.Tensor) -> mt.Tensor:
    return mt.ones_like(dout)


def _dy_squared(dout: mt.Tensor) -> mt.Tensor:
    return dout * dout


@pytest.mark.parametrize("fault", [_forgot_dy, _dy_squared], ids=["forgot dy", "dy squared"])
@pytest.mark.parametrize("name", differentiable_ops())
def test_a_vjp_right_only_at_dy_1_is_named_by_the_dot_product_test(name: str, fault: Callable[[mt.Tensor], mt.Tensor]) -> None:
    case = CASES[name][0]
    xs = inputs_of(case)
    small = _call(case)
    op = OPS[name]
    original = op.vjp
    assert original is not None

    def vjp(dout: mt.Tensor, out: mt.Tensor, *ins: mt.Tensor, **params: object) -> tuple[mt.Tensor | None, ...]:
        return original(fault(dout), out, *ins, **params)

    loss = lambda *ts: small(*ts).sum()  # noqa: E731 - dy = 1 reaches the op: the reverse check passes
    op.vjp = vjp
    try:
        assert mt.check_grads(loss, xs).ok
        report = mt.check_grads(loss, xs, modes=("rev", "fwd"))
    finally:
        op.vjp = original
    assert report.tests["dot"] == "FAILED", str(report)
    assert report.culprit is not None and report.culprit.op == name and report.culprit.test == "dot", str(report)
    assert report.culprit.where.endswith(f":{SMALL_LINE}")


def test_the_html_report_speaks_the_text_report_s_language() -> None:
    op = mt.custom_grad(_square_forgot_dy)
    mt.set_language("ru")
    try:
        failed = mt.check_grads(lambda t: op(t).sum(), [X], modes=("rev", "fwd"))._repr_html_()
        passed = mt.check_grads(mt.tanh, [X])._repr_html_()
    finally:
        mt.set_language(None)
    assert "тесты: rev пройдена" in failed and "виновная операция" in failed and "<b>ОШИБКА</b>" in failed
    assert "culprit" not in failed and ">fwd<" in failed and ">dot<" in failed
    english = mt.check_grads(mt.tanh, [X])._repr_html_()

    def head(html: str) -> str:  # the headline's box, coloured by the verdict
        return html.split("</div>")[0]

    assert head(passed).replace("пройдена", "") != head(passed) and head(english).split('"')[3] == head(passed).split('"')[3]
