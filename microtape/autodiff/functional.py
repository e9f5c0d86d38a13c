"""TF.js-style gradient functions: each a few lines over a ``GradientTape``.

Read after ``tape.py``. ``grad(f)`` returns a function that opens a tape,
watches its argument, runs ``f`` and asks the tape for the gradient, all
inside a scope that disposes the forward pass's intermediates (as TF.js
does). Errors are checked before any backward work. Nothing accumulates
between calls: every call returns fresh tensors.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import ParamSpec, overload

from ..core import runtime
from ..core.registry import Op, emit
from ..core.runtime import STATE
from ..core.types import Flat, ListLike
from ..errors import DisposedTensorError, GradientError, GradientKeyError, InvalidArgumentError, ShapeError, explain
from .results import (
    GradFn,
    GradFunction,
    GradMap,
    GradsFunction,
    ValueAndGradFunction,
    ValueAndGradsFunction,
    VariableGrads,
)
from .tape import GradientTape
from ..core.convert import conversion_hint
from ..core.tensor import Grads, Tensor, TensorFn, TensorLike, as_tensor
from ..core.variable import Variable

__all__ = [
    "GradFunction",
    "GradMap",
    "GradientKeyError",
    "GradsFunction",
    "ValueAndGradFunction",
    "ValueAndGradsFunction",
    "VariableGrads",
    "custom_grad",
    "grad",
    "grads",
    "value_and_grad",
    "value_and_grads",
    "variable_grads",
]

P = ParamSpec("P")


# What each function does with f, and a call of it that runs as it stands
# (given a variable ``w`` or an optimizer ``opt`` where the call needs one).
_USES: dict[str, tuple[str, str]] = {
    "grad": ("grad(f) turns f into a function that returns df/dx", "dx = mt.grad(lambda x: (x * x).sum())(mt.tensor([1.0, 2.0]))"),
    "value_and_grad": (
        "value_and_grad(f) turns f into a function that returns f(x) and df/dx",
        "y, dx = mt.value_and_grad(lambda x: (x * x).sum())(mt.tensor([1.0, 2.0]))",
    ),
    "grads": (
        "grads(f) turns f into a function that returns one gradient per input",
        "da, db = mt.grads(lambda a, b: (a * b).sum())([mt.tensor([1.0]), mt.tensor([2.0])])",
    ),
    "value_and_grads": (
        "value_and_grads(f) turns f into a function that returns f(*xs) and the gradients",
        "y, (da, db) = mt.value_and_grads(lambda a, b: (a * b).sum())([mt.tensor([1.0]), mt.tensor([2.0])])",
    ),
    "variable_grads": (
        "variable_grads(f) calls f(), which computes the loss from variables (w here)",
        "value, grads = mt.variable_grads(lambda: (w * w).sum())",
    ),
    "custom_grad": (
        "custom_grad(f) wraps f, which returns (value, grad_fn)",
        "square = mt.custom_grad(lambda x: (x * x, lambda dy: dy * 2.0 * x))",
    ),
}


def _check_callable(f: object, api: str, use: tuple[str, str] | None = None) -> None:
    if not callable(f):
        rule, hint = use or _USES[api]
        rule = f"A tensor is a value computed once; {rule}." if isinstance(f, Tensor) else rule + "."
        raise InvalidArgumentError(
            explain(f"{api}(f) needs a function, got {type(f).__name__}: {f!r:.60}.", rule, hint),
            value=f,
        )


def _check_input(x: object, api: str, index: int | None = None) -> Tensor:
    """The input as a tensor: numbers and nested lists are converted as ops
    convert them (call this inside the function's scope, so the converted
    tensor is disposed with the rest when the call returns)."""
    what = "x" if index is None else f"xs[{index}]"
    if not isinstance(x, Tensor):
        try:
            return as_tensor(x)  # type: ignore[arg-type]  # as_tensor reports bad values
        except InvalidArgumentError as err:
            raise type(err)(
                explain(
                    f"{api}: {what} cannot be made a tensor: {err.message.splitlines()[0]}",
                    "Gradients are taken with respect to tensors; numbers and nested lists are converted.",
                    conversion_hint(x),
                ),
                **err.facts,
            ) from None
    if x._data is None:
        raise runtime.disposed_error(x)
    return x


def _check_arity(f: Callable[..., object], n: int, api: str, use: tuple[str, str] | None = None) -> None:
    """After f(*xs) raised a TypeError: if f cannot take ``n`` arguments at all, say so."""
    try:
        signature = inspect.signature(f)
        signature.bind(*range(n))
    except ValueError:  # no signature to read (some builtins): keep Python's error
        return
    except TypeError:
        rule, hint = use or _USES[api]
        raise InvalidArgumentError(
            explain(
                f"{api}: f{signature} cannot be called with {n} argument(s), as {api} calls it.",
                rule + ".",
                hint,
            ),
            value=f,
        ) from None


def _check_output(y: object, api: str) -> Tensor:
    if not isinstance(y, Tensor):
        raise GradientError(
            explain(
                f"{api}: the result y returned by f() must be a tensor, got {type(y).__name__}: {y!r}.",
                "Only tensors computed with microtape ops carry gradients.",
                "f returned None: end it with return, as in return (x * x).sum()."
                if y is None
                else "compute y with microtape ops (x * x, mt.exp(x), ...), not Python floats.",
            ),
            value=y,
        )
    return y


def _check_dy(dy: object, y: Tensor, api: str) -> Tensor | None:
    if dy is None:
        return None
    d = dy if isinstance(dy, Tensor) else as_tensor(dy)  # type: ignore[arg-type]  # as_tensor reports bad values
    if d.shape != y.shape:
        raise ShapeError(
            explain(
                f"{api}: dy has shape {d.shape} but y=f(x) has shape {y.shape}.",
                "dy weights each entry of y, so the shapes must match.",
                f"pass dy of shape {y.shape}, or leave it out to use ones.",
            ),
            shapes=(d.shape, y.shape),
        )
    return d


def _check_connected(tape: GradientTape, y: Tensor, xs: list[Tensor], api: str) -> None:
    for i, (x, ok) in enumerate(zip(xs, tape._reaches(y, xs))):
        if ok or x is y:
            continue
        which = "x" if len(xs) == 1 else f"input {i} (of {len(xs)}, shape {x.shape})"
        raise GradientError(
            explain(
                "Cannot compute gradient of y=f(x) with respect to x. "
                f"{api}: y does not depend on {which}.",
                "Make sure that the f you passed encloses all operations that lead from x to y.",
                "compute y from x with microtape ops inside f; converting to float "
                "(x.item(), x.data_sync()) cuts the path.",
            ),
            index=i,
        )


def _forward(f: Callable[..., object], xs: list[Tensor], api: str) -> tuple[GradientTape, Tensor]:
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(xs)
        try:
            y = f(*xs)
        except BaseException as err:
            tape.release()
            if isinstance(err, TypeError):
                _check_arity(f, len(xs), api)
            raise
    try:
        return tape, _check_output(y, api)
    except BaseException:
        tape.release()
        raise


def _vjp(f: Callable[..., object], xs: list[Tensor], dy: object, api: str) -> tuple[Tensor, list[Tensor]]:
    tape, y = _forward(f, xs, api)
    try:
        d = _check_dy(dy, y, api)
        _check_connected(tape, y, xs, api)
        # every input is connected (checked above); one whose paths carry no
        # gradient (a custom_grad that returns None for it) gets zeros
        gs = tape.gradient(y, xs, output_gradients=d, unconnected_gradients="zero")
    finally:
        tape.release()  # on failure too: what the tape held goes with the scope
    return y, [g for g in gs if g is not None]  # none is None, with "zero"


def _inputs(xs: object, api: str) -> list[object]:
    if isinstance(xs, Tensor) or not isinstance(xs, (list, tuple)):
        raise InvalidArgumentError(
            explain(
                f"{api}: xs must be a list of tensors, got {type(xs).__name__}.",
                f"{api}(f) calls f(*xs) and returns one gradient per tensor.",
                "pass a list: g([x, y]); for one input use mt.grad.",
            ),
            value=xs,
        )
    return list(xs)


def _convert_inputs(xs: list[object], api: str) -> list[Tensor]:
    return [_check_input(x, api, i) for i, x in enumerate(xs)]


def grad(f: Callable[[Tensor], Tensor]) -> GradFunction:
    """Return ``g(x, dy=None)``: the gradient of ``f`` at ``x`` (``tf.grad``).

    For a non-scalar ``f`` the result is the gradient of ``sum(f(x))``, or
    of ``sum(f(x) * dy)`` when ``dy`` is given. ``grad`` can be nested:
    ``mt.grad(mt.grad(f))`` is the second derivative. ``x`` (and ``dy``) may
    be a tensor, a number or a nested list, converted as ops convert them.

    Raises:
        GradientError: ``f(x)`` does not depend on ``x``, or is not a tensor.
        ShapeError: ``dy`` does not have the shape of ``f(x)``.

    Examples:
        >>> g = mt.grad(lambda x: x * x)          # d/dx x² = 2x
        >>> g(mt.tensor([1.0, 3.0]))
        Tensor([2.0, 6.0], shape=(2,))
        >>> mt.grad(mt.grad(lambda x: x ** 3))(mt.scalar(2.0))  # 6x
        Tensor(12.0, shape=())
        >>> mt.grad(mt.abs)(-10)                  # numbers are converted
        Tensor(-1.0, shape=())
    """
    _check_callable(f, "grad")

    def g(x: TensorLike, dy: TensorLike | None = None) -> Tensor:
        result = runtime.run_in_scope("grad()", lambda: _vjp(f, [_check_input(x, "grad")], dy, "grad")[1][0])
        assert isinstance(result, Tensor)
        return result

    return g


def grads(f: TensorFn) -> GradsFunction:
    """Return ``g(xs, dy=None)``: gradients of ``f(*xs)`` for each input (``tf.grads``).

    The result has one gradient per input, in order. An input that ``f``'s
    result does not depend on raises :class:`~microtape.GradientError`
    ("Cannot compute gradient ..."), as in TF.js. An input that is connected
    but whose every path has a zero derivative gets zeros: the condition of
    ``mt.where``, the operands of a comparison.

    Examples:
        >>> g = mt.grads(lambda a, b: a * b)
        >>> g([mt.scalar(2.0), mt.scalar(5.0)])
        [Tensor(5.0, shape=()), Tensor(2.0, shape=())]
        >>> c, a, b = mt.tensor([1.0, 0.0]), mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0])
        >>> mt.grads(lambda c, a, b: mt.where(c, a, b))([c, a, b])
        [Tensor([0.0, 0.0], shape=(2,)), Tensor([1.0, 0.0], shape=(2,)), Tensor([0.0, 1.0], shape=(2,))]
    """
    _check_callable(f, "grads")

    def g(xs: ListLike[TensorLike], dy: TensorLike | None = None) -> list[Tensor]:
        inputs = _inputs(xs, "grads")
        result = runtime.run_in_scope("grads()", lambda: _vjp(f, _convert_inputs(inputs, "grads"), dy, "grads")[1])
        assert isinstance(result, list)
        return result

    return g


def value_and_grad(f: Callable[[Tensor], Tensor]) -> ValueAndGradFunction:
    """Like :func:`grad`, but return ``(f(x), gradient)`` (``tf.valueAndGrad``).

    Examples:
        >>> value, dx = mt.value_and_grad(lambda x: (x * x).sum())(mt.tensor([1.0, 2.0]))
        >>> value, dx
        (Tensor(5.0, shape=()), Tensor([2.0, 4.0], shape=(2,)))
    """
    _check_callable(f, "value_and_grad")

    def g(x: TensorLike, dy: TensorLike | None = None) -> tuple[Tensor, Tensor]:
        def run() -> tuple[Tensor, Tensor]:
            y, gs = _vjp(f, [_check_input(x, "value_and_grad")], dy, "value_and_grad")
            return y, gs[0]

        result = runtime.run_in_scope("value_and_grad()", run)
        assert isinstance(result, tuple)
        return result

    return g


def value_and_grads(f: TensorFn) -> ValueAndGradsFunction:
    """Like :func:`grads`, but return ``(f(*xs), gradients)`` (``tf.valueAndGrads``).

    Examples:
        >>> loss = lambda w, b: ((mt.tensor([1.0, 2.0]) * w + b) ** 2).sum()
        >>> value, (dw, db) = mt.value_and_grads(loss)([mt.scalar(1.0), mt.scalar(0.0)])
        >>> value, dw, db
        (Tensor(5.0, shape=()), Tensor(10.0, shape=()), Tensor(6.0, shape=()))
    """
    _check_callable(f, "value_and_grads")

    def g(xs: ListLike[TensorLike], dy: TensorLike | None = None) -> tuple[Tensor, list[Tensor]]:
        inputs = _inputs(xs, "value_and_grads")
        result = runtime.run_in_scope(
            "value_and_grads()", lambda: _vjp(f, _convert_inputs(inputs, "value_and_grads"), dy, "value_and_grads")
        )
        assert isinstance(result, tuple)
        return result

    return g


def variable_grads(f: Callable[[], Tensor], var_list: Sequence[Variable] | None = None) -> VariableGrads:
    """Gradients of the scalar ``f()`` with respect to trainable variables (``tf.variableGrads``).

    By default every trainable variable that ``f`` reads is used. The result
    has ``.value`` (the loss) and ``.grads`` (a :class:`GradMap` keyed by
    name that also accepts the variable), and unpacks: ``value, grads = ...``.
    Intermediate tensors of the computation are disposed, as in TF.js.

    Raises:
        GradientError: ``f`` does not return a scalar, no variable is
            trainable, or none of them is connected to the result.

    Examples:
        >>> w = mt.variable(mt.scalar(3.0), name="w_vg")
        >>> b = mt.variable(mt.scalar(1.0), name="b_vg")
        >>> value, grads = mt.variable_grads(lambda: (w * 2.0 + b) ** 2)
        >>> value, grads[w], grads["b_vg"]
        (Tensor(49.0, shape=()), Tensor(28.0, shape=()), Tensor(14.0, shape=()))
    """
    return variable_grads_as("variable_grads", f, var_list)


def variable_grads_as(
    api: str, f: Callable[[], Tensor], var_list: Sequence[Variable] | None, use: tuple[str, str] | None = None
) -> VariableGrads:
    """:func:`variable_grads`, with errors that name ``api``, the function the user called.

    ``use`` is what ``api`` does with ``f`` and a call of it that runs (given
    a variable ``w``); it makes the hints. Optimizers' ``minimize`` and
    ``compute_gradients`` run through here.

    Examples:
        >>> try:
        ...     variable_grads_as("minimize", mt.ones((2,)), None, ("minimize(f) calls f", "opt.minimize(lambda: (w * w).sum())"))
        ... except mt.InvalidArgumentError as err:
        ...     print(str(err).splitlines()[-1])
          hint: opt.minimize(lambda: (w * w).sum())
    """
    rule, example = use or _USES[api]
    _check_callable(f, api, (rule, example))
    chosen: list[Variable] | None = None
    if var_list is not None:
        if isinstance(var_list, Tensor) or not isinstance(var_list, (list, tuple)):
            raise InvalidArgumentError(
                explain(
                    f"{api}: var_list must be a list of variables, got {type(var_list).__name__}.",
                    "var_list restricts which variables get gradients.",
                    "pass var_list=[w, b].",
                ),
                value=var_list,
            )
        for v in var_list:
            if not isinstance(v, Variable):
                raise InvalidArgumentError(
                    explain(
                        f"{api}: var_list holds a {type(v).__name__}, not a Variable: {v!r:.60}.",
                        "Only variables can be listed; plain tensors are constants.",
                        "make it a variable with mt.variable(t), or use mt.grads for tensors.",
                    ),
                    value=v,
                )
        chosen = [v for v in var_list if v.trainable]
        if not chosen:
            raise GradientError(
                explain(
                    f"{api}() expects at least one of the input variables to be trainable, "
                    f"but none of the {len(var_list)} variables is trainable.",
                    "Gradients are computed only for trainable variables; w.trainable says which.",
                    "w.trainable = True",
                ),
                count=len(var_list),
            )

    def run() -> VariableGrads:
        tape = GradientTape(watch_accessed_variables=chosen is None)
        try:
            return measure(tape)
        finally:
            tape.release()  # also when f or a check fails

    def measure(tape: GradientTape) -> VariableGrads:
        with tape:
            if chosen is not None:
                tape.watch(chosen)
            try:
                y = f()
            except TypeError:
                _check_arity(f, 0, api, (rule, example))
                raise
        value = _check_output(y, api)
        if value.rank != 0:
            raise GradientError(
                explain(
                    f"The f passed in {api}(f) must return a scalar, but it returned shape {value.shape}.",
                    "A loss is one number; gradients of a vector need a dy (see mt.grads).",
                    "reduce it: return loss.mean() or loss.sum().",
                ),
                shape=value.shape,
            )
        vs = chosen if chosen is not None else [v for v in tape.watched_variables() if v.trainable]
        if chosen is None and isinstance(value, Variable) and value.trainable and value not in vs:
            vs.append(value)  # f returned a variable itself: its gradient is ones, as TF.js's
        reached = tape._reaches(value, vs)
        connected = [v for v, ok in zip(vs, reached) if ok]
        if not vs:
            raise GradientError(
                explain(
                    "Cannot find a connection between any variable and the result of the loss "
                    "function y=f(x): f read no trainable variable.",
                    f"{api} needs the trainable variables that f reads; tensors and .data_sync() values are constants.",
                    "w = mt.variable(mt.tensor([1.0, 2.0])); " + example,
                )
            )
        if not connected:
            raise GradientError(
                explain(
                    "Cannot find a connection between any variable and the result of the loss "
                    "function y=f(x).",
                    "Please make sure the operations that use variables are inside the function f "
                    f"passed to {api}().",
                    "compute the loss from the variables inside f; a loss computed outside "
                    "(or from x.data_sync()) is a constant.",
                )
            )
        gs = tape.gradient(value, connected)
        return VariableGrads(value, GradMap([(v, g) for v, g in zip(connected, gs) if g is not None]))

    result = runtime.run_in_scope(f"{api}()", run)
    assert isinstance(result, VariableGrads)
    return result


def _custom_vjp(
    dout: Tensor,
    out: Tensor,
    *inputs: Tensor,
    grad_fn: Callable[..., object],
    name: str = "custom_grad",
    kwargs: object = None,
    n_inputs: int | None = None,
    takes_saved: bool = False,
) -> Grads:
    # the record's inputs are f's inputs followed by the tensors f saved
    n = len(inputs) if n_inputs is None else n_inputs
    xs, saved = inputs[:n], list(inputs[n:])
    try:
        raw = grad_fn(dout, saved) if takes_saved else grad_fn(dout)
    except DisposedTensorError as err:
        raise DisposedTensorError(
            explain(
                f"{name}: grad_fn read a disposed tensor. {err.message.splitlines()[0]}",
                "custom_grad runs f in its own scope, as TF.js does: what f makes besides its value "
                "is disposed when f returns, unless f saves it for the backward pass.",
                "give f a save parameter and save what grad_fn needs: def f(x, save): t = mt.tanh(x); "
                "save([t]); return 2.0 * t, lambda dy, saved: dy * 2.0 * (1.0 - saved[0] * saved[0]).",
            ),
            **err.facts,
        ) from None
    items: list[object] = [raw] if isinstance(raw, Tensor) or raw is None else list(raw)  # type: ignore[call-overload]  # checked below
    if len(items) != len(xs):
        raise InvalidArgumentError(
            explain(
                f"{name}: grad_fn returned {len(items)} gradient(s) for {len(xs)} input(s).",
                "grad_fn(dy) returns one gradient per input of f, in order.",
                "return a list such as [dy * 2 * x] (one entry per input).",
            ),
            op=name,
        )
    result: list[Tensor | None] = []
    for i, (g, x) in enumerate(zip(items, xs)):
        if g is None:
            result.append(None)
            continue
        t = g if isinstance(g, Tensor) else as_tensor(g)  # type: ignore[arg-type]  # as_tensor reports bad values
        if t.shape != x.shape:
            raise ShapeError(
                explain(
                    f"{name}: the gradient for input {i} has shape {t.shape}, but input {i} has shape {x.shape}.",
                    "A gradient has the shape of its input.",
                    "sum over broadcast axes, or reshape the gradient to the input's shape.",
                ),
                op=name,
                shapes=(t.shape, x.shape),
                input=i,
            )
        result.append(t)
    return (*result, *(None for _ in saved))  # a saved tensor gets no gradient through grad_fn


def _is_value_and_grad_fn(result: object) -> bool:
    return isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], Tensor) and callable(result[1])


def _takes_save(f: Callable[..., object]) -> bool:
    """Whether ``f`` has a parameter named ``save`` (then it is passed, by keyword)."""
    try:
        param = inspect.signature(f).parameters.get("save")
    except (TypeError, ValueError):  # a builtin or C function: no signature to read
        return False
    return param is not None and param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY)


# custom_grad keeps the signature of f; an f that takes ``save`` (1 to 3 tensors, then
# save) gives a function of the tensors alone.
@overload
def custom_grad(
    f: Callable[[Tensor, Callable[[Sequence[Tensor]], None]], tuple[Tensor, GradFn]],
) -> Callable[[TensorLike], Tensor]: ...
@overload
def custom_grad(
    f: Callable[[Tensor, Tensor, Callable[[Sequence[Tensor]], None]], tuple[Tensor, GradFn]],
) -> Callable[[TensorLike, TensorLike], Tensor]: ...
@overload
def custom_grad(
    f: Callable[[Tensor, Tensor, Tensor, Callable[[Sequence[Tensor]], None]], tuple[Tensor, GradFn]],
) -> Callable[[TensorLike, TensorLike, TensorLike], Tensor]: ...
@overload
def custom_grad(f: Callable[P, tuple[Tensor, GradFn]]) -> Callable[P, Tensor]: ...


def custom_grad(f: Callable[..., tuple[Tensor, GradFn]]) -> Callable[..., Tensor]:
    """Give a function your own gradient (``tf.customGrad``).

    ``f(*inputs)`` returns ``(value, grad_fn)``; ``grad_fn(dy)`` returns one
    gradient per input. Tapes see a single op named ``custom_grad(<f's name>)``.
    Write ``grad_fn`` with microtape ops and the result can be differentiated
    again. Prove a custom gradient with :func:`~microtape.check_grads`.

    Like every op, ``f`` runs in its own scope, as in TF.js: what it makes
    besides ``value`` is disposed when it returns, so ``grad_fn`` may read
    the inputs and ``value`` but not other tensors of the forward pass. To
    keep some, give ``f`` a parameter named ``save`` (the rule: a parameter
    of that name is passed by keyword): ``f(*inputs, save)`` calls
    ``save([t, ...])`` and ``grad_fn(dy, saved)`` receives that list. Saved
    tensors live exactly as long as a tape needs them (counted in
    ``memory()`` as held by tapes until then); outside a tape nothing is kept.
    To a second differentiation they are constants, as in TF.js (they were
    computed without a tape): for a correct second derivative, compute
    from the inputs inside ``grad_fn``.

    Examples:
        >>> def softplus(x):
        ...     value = mt.log(1.0 + mt.exp(x))
        ...     return value, lambda dy: dy * mt.sigmoid(x)
        >>> sp = mt.custom_grad(softplus)
        >>> mt.grad(sp)(mt.tensor([0.0]))
        Tensor([0.5], shape=(1,))
        >>> def scaled_tanh(x, save):             # keeps tanh(x) for the backward pass
        ...     t = mt.tanh(x)
        ...     save([t])
        ...     return 2.0 * t, lambda dy, saved: dy * 2.0 * (1.0 - saved[0] * saved[0])
        >>> mt.grad(mt.custom_grad(scaled_tanh))(mt.tensor([0.0, 1.0]))
        Tensor([2.0, 0.8399], shape=(2,))
    """
    _check_callable(f, "custom_grad")
    name = f"custom_grad({getattr(f, '__name__', 'f')})"
    takes_save = _takes_save(f)
    fn: Callable[..., object] = f

    def call_f(xs: Sequence[Tensor], keywords: dict[str, object]) -> tuple[Tensor, Callable[..., object], list[Tensor]]:
        """Run f with no tape recording: (value, grad_fn, saved tensors)."""
        saved: list[Tensor] = []

        def save(tensors: Sequence[Tensor]) -> None:
            items = [tensors] if isinstance(tensors, Tensor) else tensors
            if not isinstance(items, (list, tuple)) or not all(isinstance(t, Tensor) for t in items):
                raise InvalidArgumentError(
                    explain(
                        f"{name}: save() needs a list of tensors, got {type(tensors).__name__}: {tensors!r:.60}.",
                        "save keeps tensors of the forward pass for grad_fn(dy, saved).",
                        "call save([t1, t2]) with microtape tensors.",
                    ),
                    op=name,
                )
            for t in items:
                if t._data is None:
                    raise runtime.disposed_error(t)
            saved[:] = items

        # no tape records f's ops; and f's tensors are registered even in a light
        # backward pass or a gradient check, so its scope treats them the same everywhere
        token = STATE.set(STATE.get().but(tapes=(), light=False))
        try:
            result = fn(*xs, save=save, **keywords) if takes_save else fn(*xs, **keywords)
        finally:
            STATE.reset(token)
        if not _is_value_and_grad_fn(result):
            raise InvalidArgumentError(
                explain(
                    f"{name}: f must return (value, grad_fn), got {type(result).__name__}: {result!r:.80}.",
                    "value is the output tensor; grad_fn(dy) returns the gradients of the inputs.",
                    "end f with: return value, lambda dy: [dy * ...].",
                ),
                op=name,
            )
        assert isinstance(result, tuple)
        return result[0], result[1], saved

    def rerun(*xs: Tensor, kwargs: object = None, n_inputs: object = None, **_: object) -> tuple[Tensor, dict[str, object]]:
        # Runs f again at new inputs, with the keywords it was called with: the
        # value and a fresh grad_fn (the gradient checker's culprit finder calls it).
        # Saved tensors are bound into that grad_fn, so the copies of the old ones
        # among the recorded inputs are ignored.
        keywords = kwargs if isinstance(kwargs, dict) else {}
        real = xs[:n_inputs] if isinstance(n_inputs, int) else xs
        value, grad_fn, saved = call_f(real, keywords)
        bound: Callable[..., object] = (lambda dy, _old: grad_fn(dy, saved)) if takes_save else grad_fn
        return value, {"grad_fn": bound, "name": name, "kwargs": keywords, "n_inputs": len(real), "takes_saved": takes_save}

    def forward(*xs: Tensor, **params: object) -> Flat:
        value = rerun(*xs, **params)[0]
        return list(value._values()), value.shape

    op = Op(name, forward, _custom_vjp, True, 0, (), rerun)

    @functools.wraps(f)
    def wrapped(*args: object, **kwargs: object) -> Tensor:
        for a in args:
            if isinstance(a, Tensor) and a._disposed is not None:
                runtime.check_usable(a)
        st = STATE.get()
        start = perf_counter()
        scope = runtime.Scope(name, f"the op {name} when it returned")
        STATE.set(st.but(scopes=st.scopes + (scope,)))
        try:
            xs = tuple([x if isinstance(x, Tensor) else as_tensor(x) for x in args])  # type: ignore[arg-type]  # as_tensor reports bad values
            # f sees a variable's values as they are now, as a tape records them (TensorFlow
            # reads a variable passed to a custom gradient): its grad_fn may close over them
            seen = tuple([x._recorded() if isinstance(x, Variable) else x for x in xs])
            value, grad_fn, saved = call_f(seen, kwargs)
            if takes_save and not _accepts_saved(grad_fn):
                raise InvalidArgumentError(
                    explain(
                        f"{name}: f takes save, so grad_fn is called as grad_fn(dy, saved), but it takes one argument.",
                        "With save, TF.js and microtape pass the saved tensors to grad_fn.",
                        "write the gradient as lambda dy, saved: [...].",
                    ),
                    op=name,
                )
        except BaseException:
            STATE.set(st)
            runtime.close_scope(scope, (), st.scopes)
            raise
        STATE.set(st)
        params: dict[str, object] = {
            "grad_fn": grad_fn, "name": name, "kwargs": dict(kwargs), "n_inputs": len(xs), "takes_saved": takes_save,
        }
        # the saved tensors are recorded as inputs, so a tape holds them for grad_fn
        try:
            out = emit(op, xs + tuple(saved), params, list(value._values()), value.shape, perf_counter() - start)
        finally:
            # the op's scope ends: f's tensors (value and tensors made from numbers) go, and
            # saved ones too unless a tape holds them (then when its backward pass is done)
            runtime.close_scope(scope, (), st.scopes)
        return out

    return wrapped


def _accepts_saved(grad_fn: Callable[..., object]) -> bool:
    try:
        inspect.signature(grad_fn).bind(None, None)
    except TypeError:
        return False
    except ValueError:  # no signature to read: trust it
        return True
    return True
