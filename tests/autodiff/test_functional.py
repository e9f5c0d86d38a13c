"""grad, grads, value_and_grad(s), variable_grads and custom_grad with TF.js's semantics and errors,
and variables: assign, names, the trainable flag, dispose."""

from __future__ import annotations

import pytest

import microtape as mt

X = [1.0, 2.0, 3.0, 4.0]
Y = [1.0, 3.0, 5.0, 7.0]


def test_grad_and_dy() -> None:
    g = mt.grad(lambda x: x * x)
    assert g(mt.tensor([1.0, 3.0])).data_sync() == [2.0, 6.0]
    assert g(mt.tensor([1.0, 3.0]), mt.tensor([0.5, 2.0])).data_sync() == [1.0, 12.0]
    with pytest.raises(mt.ShapeError, match=r"dy has shape \(3,\)"):
        g(mt.tensor([1.0, 3.0]), mt.ones((3,)))


def test_grads_and_value_and_grads() -> None:
    f = lambda a, b: (a * b).sum()  # noqa: E731
    da, db = mt.grads(f)([mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0])])
    assert (da.data_sync(), db.data_sync()) == ([3.0, 4.0], [1.0, 2.0])
    value, (da2, db2) = mt.value_and_grads(f)([mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0])])
    assert value.item() == 11.0 and da2.data_sync() == [3.0, 4.0]
    v, d = mt.value_and_grad(lambda x: mt.exp(x).sum())(mt.tensor([0.0]))
    assert (v.item(), d.item()) == (1.0, 1.0)


def test_grad_of_grad() -> None:
    assert mt.grad(mt.grad(lambda x: x ** 4.0))(mt.scalar(2.0)).item() == 48.0
    assert mt.grad(mt.grad(mt.grad(lambda x: x ** 4.0)))(mt.scalar(2.0)).item() == 48.0


def test_grad_and_tape_agree() -> None:
    def f(x: mt.Tensor) -> mt.Tensor:
        return mt.tanh(x @ x.T).sum()

    x = mt.tensor([[0.1, 0.2], [0.3, -0.4]])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    via_tape = tape.gradient(y, x)
    assert via_tape is not None
    assert mt.grad(f)(x).data_sync() == pytest.approx(via_tape.data_sync())


def test_unreachable_x_keeps_tfjs_phrase() -> None:
    with pytest.raises(mt.GradientError) as info:
        mt.grad(lambda x: mt.scalar(1.0))(mt.scalar(2.0))
    assert "Cannot compute gradient of y=f(x) with respect to x" in str(info.value)
    with pytest.raises(mt.GradientError, match=r"input 1 \(of 2, shape \(2,\)\)"):
        mt.grads(lambda a, b: a * 2.0)([mt.scalar(1.0), mt.tensor([1.0, 2.0])])
    # a path cut by going through Python floats
    with pytest.raises(mt.GradientError, match="item"):
        mt.grad(lambda x: mt.scalar(x.item() * 2.0))(mt.scalar(1.0))


def test_bad_f_and_inputs() -> None:
    with pytest.raises(mt.InvalidArgumentError, match="function"):
        mt.grad(3.0)  # type: ignore[arg-type]
    with pytest.raises(mt.GradientError, match="must be a tensor"):
        mt.grad(lambda x: 2.0)(mt.scalar(1.0))  # type: ignore[arg-type, return-value]
    with pytest.raises(mt.InvalidArgumentError, match="cannot be made a tensor"):
        mt.grad(lambda x: x)("one")  # type: ignore[arg-type]
    with pytest.raises(mt.InvalidArgumentError, match="list of tensors"):
        mt.grads(lambda x: x)(mt.scalar(1.0))  # type: ignore[arg-type]


def test_every_call_returns_fresh_gradients() -> None:
    g = mt.grad(lambda x: x * 3.0)
    x = mt.scalar(1.0)
    first, second = g(x), g(x)
    assert first is not second and first.item() == second.item() == 3.0  # no accumulation


def test_variable_grads_on_the_texts_linear_model() -> None:
    w = mt.variable(mt.scalar(0.5), name="vg_w")
    b = mt.variable(mt.scalar(0.0), name="vg_b")
    x, y = mt.tensor1d(X), mt.tensor1d(Y)
    value, grads = mt.variable_grads(lambda: mt.tidy(lambda: ((x * w + b - y) ** 2).mean()))
    assert value.item() == pytest.approx(10.375)
    assert grads[w].item() == pytest.approx(-17.5) and grads["vg_w"] is grads[w]
    assert grads[b].item() == pytest.approx(-5.5)
    assert set(grads) == {"vg_w", "vg_b"} and w in grads and "nope" not in grads  # type: ignore[comparison-overlap]  # a GradMap also accepts variables
    result = mt.variable_grads(lambda: ((x * w + b - y) ** 2).mean(), var_list=[w])
    assert list(result.grads) == ["vg_w"] and result.value.item() == pytest.approx(10.375)
    with pytest.raises(KeyError) as info:
        result.grads[b]
    assert isinstance(info.value, mt.MicrotapeError) and "vg_w" in str(info.value)
    assert [v.name for v, _ in result.grads.pairs()] == ["vg_w"]


def test_variable_grads_errors() -> None:
    w = mt.variable(mt.tensor([1.0, 2.0]), name="vge_w")
    frozen = mt.variable(mt.scalar(1.0), trainable=False, name="vge_frozen")
    with pytest.raises(mt.GradientError, match="must return a scalar"):
        mt.variable_grads(lambda: w * 2.0)
    with pytest.raises(mt.GradientError, match="none of the 1 variables is trainable"):
        mt.variable_grads(lambda: (frozen * 2.0).sum(), var_list=[frozen])
    with pytest.raises(mt.GradientError, match="Cannot find a connection"):
        mt.variable_grads(lambda: mt.scalar(3.0) * 2.0, var_list=[w])
    with pytest.raises(mt.GradientError, match="must be a tensor"):
        mt.variable_grads(lambda: None)  # type: ignore[arg-type, return-value]
    with pytest.raises(mt.InvalidArgumentError, match="not a Variable"):
        mt.variable_grads(lambda: w.sum(), var_list=[mt.scalar(1.0)])  # type: ignore[list-item]


def test_the_texts_nested_snippet_and_the_fix() -> None:
    x = mt.variable(mt.scalar(2.0), name="nested_x")

    def inside() -> None:
        tape = mt.grad(lambda t: t.square() + 10.0)
        tape(x)

    with pytest.raises(mt.GradientError, match="must be a tensor"):
        mt.tidy(lambda: mt.variable_grads(inside))  # type: ignore[arg-type]
    fixed = mt.tidy(lambda: mt.grad(lambda t: t.square() + 10.0)(x))
    assert fixed.item() == 4.0


def test_custom_grad() -> None:
    def softplus(x: mt.Tensor) -> tuple[mt.Tensor, object]:
        return mt.log(1.0 + mt.exp(x)), lambda dy: dy * mt.sigmoid(x)

    sp = mt.custom_grad(softplus)  # type: ignore[arg-type]
    x = mt.tensor([-1.0, 0.0, 2.0])
    mt.check_grads(sp, [x], order=2).raise_if_failed()  # grad_fn uses ops: differentiable again
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = sp(x).sum()
    assert [op.name for op in tape.operations] == ["custom_grad(softplus)", "sum"]


def test_custom_grad_errors() -> None:
    wrong_count = mt.custom_grad(lambda a, b: (a * b, lambda dy: [dy]))
    with pytest.raises(mt.InvalidArgumentError, match="1 gradient"):
        mt.grads(lambda a, b: wrong_count(a, b).sum())([mt.scalar(1.0), mt.scalar(2.0)])
    wrong_shape = mt.custom_grad(lambda a: (a.sum(), lambda dy: dy))
    with pytest.raises(mt.ShapeError, match=r"has shape \(\)"):
        mt.grad(wrong_shape)(mt.tensor([1.0, 2.0]))
    not_a_pair = mt.custom_grad(lambda a: a * 2.0)  # type: ignore[arg-type, return-value]  # the mistake under test
    with pytest.raises(mt.InvalidArgumentError, match=r"\(value, grad_fn\)"):
        not_a_pair(mt.scalar(1.0))


def test_variables() -> None:
    v = mt.variable([1.0, 2.0], name="var_a")
    assert v.trainable and v.name == "var_a" and isinstance(v, mt.Tensor)
    v.assign(mt.tensor([3.0, 4.0]))
    v.assign_add(mt.tensor([1.0, 1.0]))
    v.assign_sub([0.5, 0.5])
    assert v.data_sync() == [3.5, 4.5]
    with pytest.raises(mt.ShapeError) as info:
        v.assign(mt.tensor([1.0, 2.0, 3.0]))
    assert "var_a" in str(info.value) and "(2,)" in str(info.value) and "(3,)" in str(info.value)
    assert v.data_sync() == [3.5, 4.5]  # a failed assign changes nothing
    with pytest.raises(mt.VariableError, match="already exists"):
        mt.variable(0.0, name="var_a")
    with pytest.raises(mt.InvalidArgumentError, match="trainable"):
        mt.variable(0.0, trainable=1)  # type: ignore[arg-type]
    with pytest.raises(mt.InvalidArgumentError, match="name"):
        mt.variable(0.0, name="")
    auto1, auto2 = mt.variable(0.0), mt.variable(0.0)
    assert auto1.name != auto2.name
    v.trainable = False
    assert not v.trainable
    source = mt.tensor([1.0])
    copy = mt.variable(source)
    copy.assign([5.0])
    assert source.data_sync() == [1.0]  # the variable copied its initial value
    v.dispose()
    with pytest.raises(mt.DisposedTensorError):
        v.assign([1.0, 1.0])
    mt.variable(0.0, name="var_a")  # the name is free again
    with pytest.raises(TypeError):
        mt.Variable(0.0)


# -- gradients that are missing for a reason say which reason, and where -------------------------


def _line_of(text: str, fn: object) -> int:
    import inspect

    lines, start = inspect.getsourcelines(fn)  # type: ignore[arg-type]  # a function
    return start + next(k for k, line in enumerate(lines) if text in line)


def test_an_assign_inside_the_tape_is_named_with_its_line() -> None:
    """TF #30234: a value assigned into a variable inside the tape has no gradient (a variable's reads
    start afresh); the warning names the assign, not .item() or .data_sync()."""
    import warnings

    v = mt.variable(mt.scalar(1.0), name="fn_assign_v")
    x = mt.scalar(2.0)

    def step() -> mt.GradientTape:
        with mt.GradientTape() as tape:
            tape.watch(x)
            v.assign_add(x)
            loss = v * v
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert tape.gradient(loss, x) is None  # TensorFlow's answer, kept
        (warning,) = [w for w in caught if issubclass(w.category, mt.GradientWarning)]
        text = str(warning.message)
        assert f"fn_assign_v.assign_add() at {__file__}:{_line_of('v.assign_add(x)', step)}" in text
        assert ".item()" not in text and "data_sync" not in text and "hint: compute the new value as a tensor" in text
        return tape

    step()


def test_variable_grads_names_an_assign_that_cuts_every_path() -> None:
    u = mt.variable(mt.tensor([1.0, 2.0]), name="fn_assign_u")
    w = mt.variable(mt.tensor([0.0, 0.0]), name="fn_assign_w")

    def loss() -> mt.Tensor:
        return (w.assign(u * 2.0) * 1.0).sum()  # w holds 2u now, but the tape starts again at w

    with pytest.raises(mt.GradientError, match=r"Cannot find a connection .* fn_assign_w\.assign\(\) at .*test_functional\.py:\d+") as info:
        mt.variable_grads(loss, [u])
    assert info.value.cause == "cut"


def test_a_var_list_variable_cut_by_a_copy_warns_and_its_key_error_says_why() -> None:
    """A variable whose only path to the loss goes through a copy is left out of grads, as TF.js does,
    with a warning naming the copy and its line; looking it up later says the same, not "check that f reads it"."""
    w = mt.variable(mt.tensor([1.0, 2.0]), name="fn_copy_w")
    v = mt.variable(mt.tensor([3.0]), name="fn_copy_v")

    def loss() -> mt.Tensor:
        return (w * w).sum() + (mt.tensor(v) * 2.0).sum()

    with pytest.warns(mt.GradientWarning, match=r"the variable 'fn_copy_v' of var_list gets no gradient: mt\.tensor\(\.\.\.\) at .*test_functional\.py:\d+ copied"):
        value, grads = mt.variable_grads(loss, [w, v])
    assert list(grads) == ["fn_copy_w"] and value.item() == 11.0
    with pytest.raises(mt.GradientKeyError, match=r"no gradient for .*fn_copy_v.*: mt\.tensor\(\.\.\.\) at .* copied") as info:
        grads[v]
    assert "check that f reads the variable" not in str(info.value)


def test_grad_names_the_stop_gradient_or_the_copy_that_cut_the_path() -> None:
    with pytest.raises(mt.GradientError, match=r"ends in stop_gradient at .*test_functional\.py:\d+") as stopped:
        mt.grad(lambda t: mt.stop_gradient(t) * 2.0)(mt.scalar(1.0))
    assert stopped.value.cause == "cut" and "remove that stop_gradient" in str(stopped.value)
    with pytest.raises(mt.GradientError, match=r"mt\.tensor\(\.\.\.\) at .*test_functional\.py:\d+ copied") as copied:
        mt.grad(lambda t: mt.tensor(t.data_sync()) * 2.0 + mt.tensor(t) * 0.0)(mt.scalar(1.0))
    assert copied.value.cause == "cut"
    with pytest.raises(mt.GradientError, match=r"data_sync\(\) at .*test_functional\.py:\d+ read the values") as read:
        mt.grad(lambda t: mt.tensor(t.data_sync()) * 2.0)(mt.scalar(1.0))
    assert read.value.cause == "read" and "x.item(), x.data_sync()" not in str(read.value).split("hint:")[0]


def test_unconnected_gradients_none_and_zero_as_in_tensorflow() -> None:
    x, unused = mt.scalar(2.0), mt.tensor([1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x, unused])
        y = x * 3.0
    assert tape.gradient(y, [x, unused])[1] is None
    got = tape.gradient(y, [x, unused], unconnected_gradients="zero")
    assert got[0] is not None and got[0].item() == 3.0 and got[1] is not None and got[1].data_sync() == [0.0, 0.0]
    assert tape.gradient(y, {"u": unused}, unconnected_gradients="zero")["u"] is not None
    tape.release()


def test_an_unwatched_tensor_that_an_op_read_warns_with_that_op_and_line() -> None:
    c, w = mt.scalar(2.0), mt.variable(mt.scalar(3.0), name="fn_unwatched_w")
    with mt.GradientTape() as tape:
        y = c * w  # w is watched (a trainable variable), c is not
    with pytest.warns(mt.GradientWarning, match=r"source 0 \(shape \(\)\) gets None: source 0 was read by mul at .*test_functional\.py:\d+ but never watched"):
        gc, gw = tape.gradient(y, [c, w])
    assert gc is None and gw is not None and gw.item() == 2.0
