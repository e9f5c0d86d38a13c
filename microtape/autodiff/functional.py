"""TF.js-style gradient functions: each a few lines over a ``GradientTape``.

``custom.py`` follows. ``grad(f)`` returns a function that opens a tape,
watches its argument, runs ``f`` and asks the tape for the gradient, all
inside a scope that disposes the forward pass's intermediates (as TF.js
does). Errors are checked (``arguments.py``) before any backward work. Nothing accumulates
between calls: every call returns fresh tensors. ``explain_gradient`` runs ``f`` the same
way and hands the tape to ``explain.py``.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from typing import overload

from ..engine import arena
from ..engine.types import ListLike
from ..errors import GradientError, GradientKeyError, GradientWarning, InvalidArgumentError, explain
from ..language import N_
from .function_args import USES, check_arity, check_callable, check_dy, check_input, check_output, input_list
from ..explain.paths import check_top, explain_records
from ..explain.report import GradientExplanation
from .results import GradFunction, GradMap, GradsFunction, ValueAndGradFunction, ValueAndGradsFunction, VariableGrads
from .gradient_tape import GradientTape
from ..engine.tensor import Tensor, TensorFn, TensorLike
from ..engine.variable import Variable

__all__ = [
    "GradFunction",
    "GradMap",
    "GradientKeyError",
    "GradsFunction",
    "ValueAndGradFunction",
    "ValueAndGradsFunction",
    "VariableGrads",
    "explain_gradient",
    "grad",
    "grads",
    "value_and_grad",
    "value_and_grads",
    "variable_grads",
]


def _check_connected(tape: GradientTape, y: Tensor, xs: list[Tensor], api: str) -> None:
    for i, (x, ok) in enumerate(zip(xs, tape._reaches(y, xs))):
        if ok or x is y:
            continue
        which = "x" if len(xs) == 1 else N_("input {0} (of {1}, shape {2})").format(i, len(xs), x.shape)
        cause = tape._why_none(y, x, which)
        raise GradientError(
            explain(
                N_("Cannot compute gradient of y=f(x) with respect to x. {0}: y does not depend on {1}.").format(api, which)
                if cause.kind == "unused"
                else N_("Cannot compute gradient of y=f(x) with respect to x. {0}: y does not depend on {1}: {2}.").format(api, which, cause.sentence),
                N_("Make sure that the f you passed encloses all operations that lead from x to y."),
                cause.hint if cause.kind != "unused" else N_("compute y from x with microtape ops inside f; "
                                                             "converting to float (x.item(), x.data_sync()) cuts the path."),
            ),
            index=i,
            cause=cause.kind,
            where=cause.where,
        )


def _forward(f: Callable[..., object], xs: list[Tensor], api: str) -> tuple[GradientTape, Tensor]:
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(xs)
        try:
            y = f(*xs)
        except BaseException as err:
            tape.release()
            if isinstance(err, TypeError):
                check_arity(f, len(xs), api)
            raise
    try:
        return tape, check_output(y, api)
    except BaseException:
        tape.release()
        raise


def _vjp(f: Callable[..., object], xs: list[Tensor], dy: object, api: str) -> tuple[Tensor, list[Tensor]]:
    tape, y = _forward(f, xs, api)
    try:
        d = check_dy(dy, y, api)
        _check_connected(tape, y, xs, api)
        # every input is connected (checked above); one whose paths carry no
        # gradient (a custom_grad that returns None for it) gets zeros
        gs = tape.gradient(y, xs, output_gradients=d, unconnected_gradients="zero")
    finally:
        tape.release()  # on failure too: what the tape held goes with the scope
    return y, [g for g in gs if g is not None]  # none is None, with "zero"


def _convert_inputs(xs: list[object], api: str) -> list[Tensor]:
    return [check_input(x, api, i) for i, x in enumerate(xs)]


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
    check_callable(f, "grad")

    def g(x: TensorLike, dy: TensorLike | None = None) -> Tensor:
        result = arena.run_in_scope("grad()", lambda: _vjp(f, [check_input(x, "grad")], dy, "grad")[1][0])
        assert isinstance(result, Tensor)
        return result

    return g


# One overload per count of inputs (1 to 6): a lambda's parameters are tensors (see TensorFn).
@overload
def grads(f: Callable[[Tensor], Tensor]) -> GradsFunction: ...
@overload
def grads(f: Callable[[Tensor, Tensor], Tensor]) -> GradsFunction: ...
@overload
def grads(f: Callable[[Tensor, Tensor, Tensor], Tensor]) -> GradsFunction: ...
@overload
def grads(f: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]) -> GradsFunction: ...
@overload
def grads(f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]) -> GradsFunction: ...
@overload
def grads(f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]) -> GradsFunction: ...


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
    check_callable(f, "grads")

    def g(xs: ListLike[TensorLike], dy: TensorLike | None = None) -> list[Tensor]:
        inputs = input_list(xs, "grads")
        result = arena.run_in_scope("grads()", lambda: _vjp(f, _convert_inputs(inputs, "grads"), dy, "grads")[1])
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
    check_callable(f, "value_and_grad")

    def g(x: TensorLike, dy: TensorLike | None = None) -> tuple[Tensor, Tensor]:
        def run() -> tuple[Tensor, Tensor]:
            y, gs = _vjp(f, [check_input(x, "value_and_grad")], dy, "value_and_grad")
            return y, gs[0]

        result = arena.run_in_scope("value_and_grad()", run)
        assert isinstance(result, tuple)
        return result

    return g


@overload
def value_and_grads(f: Callable[[Tensor], Tensor]) -> ValueAndGradsFunction: ...
@overload
def value_and_grads(f: Callable[[Tensor, Tensor], Tensor]) -> ValueAndGradsFunction: ...
@overload
def value_and_grads(f: Callable[[Tensor, Tensor, Tensor], Tensor]) -> ValueAndGradsFunction: ...
@overload
def value_and_grads(f: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]) -> ValueAndGradsFunction: ...
@overload
def value_and_grads(f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]) -> ValueAndGradsFunction: ...
@overload
def value_and_grads(f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]) -> ValueAndGradsFunction: ...


def value_and_grads(f: TensorFn) -> ValueAndGradsFunction:
    """Like :func:`grads`, but return ``(f(*xs), gradients)`` (``tf.valueAndGrads``).

    Examples:
        >>> loss = lambda w, b: ((mt.tensor([1.0, 2.0]) * w + b) ** 2).sum()
        >>> value, (dw, db) = mt.value_and_grads(loss)([mt.scalar(1.0), mt.scalar(0.0)])
        >>> value, dw, db
        (Tensor(5.0, shape=()), Tensor(10.0, shape=()), Tensor(6.0, shape=()))
    """
    check_callable(f, "value_and_grads")

    def g(xs: ListLike[TensorLike], dy: TensorLike | None = None) -> tuple[Tensor, list[Tensor]]:
        inputs = input_list(xs, "value_and_grads")
        result = arena.run_in_scope(
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
    rule, example = use or USES[api]
    check_callable(f, api, (rule, example))
    chosen: list[Variable] | None = None
    if var_list is not None:
        if isinstance(var_list, Tensor) or not isinstance(var_list, (list, tuple)):
            raise InvalidArgumentError(
                explain(
                    N_("{0}: var_list must be a list of variables, got {1}.").format(api, type(var_list).__name__),
                    N_("var_list restricts which variables get gradients."),
                    N_("pass var_list=[w, b]."),
                ),
                value=var_list,
            )
        for v in var_list:
            if not isinstance(v, Variable):
                raise InvalidArgumentError(
                    explain(
                        N_("{0}: var_list holds a {1}, not a Variable: {2}.").format(api, type(v).__name__, format(repr(v), '.60')),
                        N_("Only variables can be listed; plain tensors are constants."),
                        N_("make it a variable with mt.variable(t), or use mt.grads for tensors."),
                    ),
                    value=v,
                )
        chosen = [v for v in var_list if v.trainable]
        if not chosen:
            raise GradientError(
                explain(
                    N_("{0}() expects at least one of the input variables to be trainable, but none of the {1} variables is trainable.").format(api, len(var_list)),
                    N_("Gradients are computed only for trainable variables; w.trainable says which."),
                    N_("w.trainable = True"),
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
                check_arity(f, 0, api, (rule, example))
                raise
        value = check_output(y, api)
        if value.rank != 0:
            raise GradientError(
                explain(
                    N_("The f passed in {0}(f) must return a scalar, but it returned shape {1}.").format(api, value.shape),
                    N_("A loss is one number; gradients of a vector need a dy (see mt.grads)."),
                    N_("reduce it: return loss.mean() or loss.sum()."),
                ),
                shape=value.shape,
            )
        vs = chosen if chosen is not None else [v for v in tape.watched_variables() if v.trainable]
        if chosen is None and isinstance(value, Variable) and value.trainable and value not in vs:
            vs.append(value)  # f returned a variable itself: its gradient is ones, as TF.js's
        reached = tape._reaches(value, vs)
        connected = [v for v, ok in zip(vs, reached) if ok]
        missing = {v.name: tape._why_none(value, v, N_("variable {0}").format(repr(v.name))) for v, ok in zip(vs, reached) if not ok}
        if chosen is not None and connected:
            for name, cause in missing.items():
                warnings.warn(
                    GradientWarning(
                        explain(
                            N_("{0}: the variable {1} of var_list gets no gradient: {2}.").format(api, repr(name), cause.sentence),
                            N_("A variable the loss does not depend on through recorded ops has no gradient; it is left out of grads, as in TF.js."),
                            cause.hint,
                        )
                    ),
                    stacklevel=4,
                )
        if not vs:
            raise GradientError(
                explain(
                    N_("Cannot find a connection between any variable and the result of the loss function y=f(x): f read no trainable variable."),
                    N_("{0} needs the trainable variables that f reads; tensors and .data_sync() values are constants.").format(api),
                    "w = mt.variable(mt.tensor([1.0, 2.0])); " + example,
                )
            )
        if not connected:
            cause = next(iter(missing.values()))
            known = cause.kind in ("cut", "read")
            raise GradientError(
                explain(
                    N_("Cannot find a connection between any variable and the result of the loss function y=f(x). The first: {0}.").format(cause.sentence)
                    if known
                    else N_("Cannot find a connection between any variable and the result of the loss function y=f(x)."),
                    N_("Please make sure the operations that use variables are inside the function f passed to {0}().").format(api),
                    cause.hint if known and cause.kind == "cut" else N_("compute the loss from the variables inside f; "
                                                                        "a loss computed outside (or from x.data_sync()) is a constant."),
                ),
                cause=cause.kind,
                where=cause.where,
            )
        gs = tape.gradient(value, connected)
        reasons = {name: cause.sentence for name, cause in missing.items()}
        return VariableGrads(value, GradMap([(v, g) for v, g in zip(connected, gs) if g is not None], reasons))

    result = arena.run_in_scope(f"{api}()", run)
    assert isinstance(result, VariableGrads)
    return result


# One overload per count of inputs, as for grads.
@overload
def explain_gradient(
    f: Callable[[Tensor], Tensor], inputs: Sequence[TensorLike], *, wrt: int = 0, index: int | tuple[int, ...] | None = None, top: int = 10
) -> GradientExplanation: ...
@overload
def explain_gradient(
    f: Callable[[Tensor, Tensor], Tensor], inputs: Sequence[TensorLike], *, wrt: int = 0, index: int | tuple[int, ...] | None = None, top: int = 10
) -> GradientExplanation: ...
@overload
def explain_gradient(
    f: Callable[[Tensor, Tensor, Tensor], Tensor], inputs: Sequence[TensorLike], *, wrt: int = 0, index: int | tuple[int, ...] | None = None, top: int = 10
) -> GradientExplanation: ...
@overload
def explain_gradient(
    f: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Sequence[TensorLike], *, wrt: int = 0, index: int | tuple[int, ...] | None = None, top: int = 10
) -> GradientExplanation: ...
@overload
def explain_gradient(
    f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Sequence[TensorLike], *, wrt: int = 0, index: int | tuple[int, ...] | None = None, top: int = 10
) -> GradientExplanation: ...
@overload
def explain_gradient(
    f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Sequence[TensorLike], *, wrt: int = 0, index: int | tuple[int, ...] | None = None, top: int = 10
) -> GradientExplanation: ...


def explain_gradient(
    f: TensorFn,
    inputs: Sequence[TensorLike],
    *,
    wrt: int = 0,
    index: int | tuple[int, ...] | None = None,
    top: int = 10,
) -> GradientExplanation:
    """Explain one entry of the gradient of the scalar ``f(*inputs)`` with respect to ``inputs[wrt]``.

    Runs ``f`` on a tape, remembering the line of your code that made each
    op, and returns the paths from the output back to entry ``index`` of
    ``inputs[wrt]`` (default: the entry with the largest gradient, NaN
    first), the ``top`` largest first. Each path lists its steps: the op,
    the input it goes through (by name), its local derivative, the value
    where it is taken and its line; the path's contribution is their
    product, and the contributions add up to the gradient entry, which is
    ``mt.grad``'s, bit for bit. A NaN or Inf entry says which factor is
    infinite or NaN and which 0 met it (``.nonfinite``); a 0 entry names the
    ops whose factor 0 stops the paths (``.blocked``). Up to 10,000 paths
    are listed; past that the gradient is split by the edges into the ops
    that read the entry, and the largest single path is still given. The
    cost is a few VJPs per recorded op, whatever the sizes.

    Raises:
        ShapeError: ``f`` does not return a scalar.
        InvalidArgumentError: bad ``wrt``, ``index`` or ``top``.

    Examples:
        >>> x = mt.tensor([0.5, -2.0])
        >>> e = mt.explain_gradient(lambda x: (x * x * 3.0).sum(), [x])
        >>> e.index, e.total, [p.contribution for p in e.paths]   # 6x at x=-2, two paths of 3x
        ((1,), -12.0, [-6.0, -6.0])
        >>> print(str(e).splitlines()[0])
        d output / d x[1] = -12.0
        >>> nan = mt.explain_gradient(lambda x: (mt.sqrt(x) * 0.0).sum(), [mt.tensor([0.0])])
        >>> nan.total, nan.nonfinite[0].split("; ")[1]
        (nan, '`mul` at line 1 passed 0.0 to it: 0·inf = NaN')
    """
    check_callable(f, "explain_gradient", (N_("explain_gradient(f, inputs) runs f(*inputs) on a tape."), N_("pass a function: mt.explain_gradient(lambda x: (x * x).sum(), [x])")))
    xs_raw = input_list(inputs, "explain_gradient")
    position: object = wrt  # checked: a caller may pass anything
    if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < len(xs_raw):
        raise InvalidArgumentError(
            explain(
                N_("explain_gradient: wrt={0}, but there are {1} input(s).").format(repr(wrt), len(xs_raw)),
                N_("wrt is the position of the input whose gradient is explained."),
                N_("pass an int from 0 to {0}.").format(len(xs_raw) - 1) if xs_raw else N_("pass at least one input."),
            ),
            value=wrt,
        )
    check_top(top)
    label = _parameter_name(f, wrt) or ("x" if len(xs_raw) == 1 else f"inputs[{wrt}]")

    def run() -> GradientExplanation:
        xs = [check_input(x, "explain_gradient", i) for i, x in enumerate(xs_raw)]
        with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
            tape.watch(xs)
            try:
                y = f(*xs)
            except BaseException as err:
                tape.release()
                if isinstance(err, TypeError):
                    check_arity(f, len(xs), "explain_gradient", (N_("explain_gradient(f, inputs) calls f(*inputs)."), N_("give f one parameter per input")))
                raise
        try:
            return explain_records(
                tape._records, tape._wheres, tape._tracked, check_output(y, "explain_gradient"), xs[wrt], index, top, label, tape._variable_names()
            )
        finally:
            tape.release()

    result = arena.run_in_scope("explain_gradient()", run)
    assert isinstance(result, GradientExplanation)
    return result


def _parameter_name(f: Callable[..., object], position: int) -> str | None:
    """The name of ``f``'s parameter number ``position`` (the explanation's name for that input), if it has one."""
    try:
        parameters = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):  # no signature to read (some builtins)
        return None
    if position < len(parameters) and parameters[position].kind in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        return parameters[position].name
    return None
