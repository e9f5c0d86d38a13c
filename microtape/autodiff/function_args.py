"""What ``grad``, ``grads``, ``value_and_grad(s)``, ``variable_grads`` and ``custom_grad`` are given.

The function ``f``, its inputs, its result and ``dy``, checked before any
work, with hints that show a call of the function the user called that runs
as it stands.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from ..errors import GradientError, InvalidArgumentError, ShapeError, explain
from ..language import N_
from ..engine.convert import conversion_hint
from ..engine.tensor import Tensor, as_tensor
from ..engine import arena

__all__ = ["USES", "check_arity", "check_callable", "check_dy", "check_input", "check_output", "input_list"]

USES: dict[str, tuple[str, str]] = {
    "grad": (N_("grad(f) turns f into a function that returns df/dx."), "dx = mt.grad(lambda x: (x * x).sum())(mt.tensor([1.0, 2.0]))"),
    "value_and_grad": (
        N_("value_and_grad(f) turns f into a function that returns f(x) and df/dx."),
        "y, dx = mt.value_and_grad(lambda x: (x * x).sum())(mt.tensor([1.0, 2.0]))",
    ),
    "grads": (
        N_("grads(f) turns f into a function that returns one gradient per input."),
        "da, db = mt.grads(lambda a, b: (a * b).sum())([mt.tensor([1.0]), mt.tensor([2.0])])",
    ),
    "value_and_grads": (
        N_("value_and_grads(f) turns f into a function that returns f(*xs) and the gradients."),
        "y, (da, db) = mt.value_and_grads(lambda a, b: (a * b).sum())([mt.tensor([1.0]), mt.tensor([2.0])])",
    ),
    "variable_grads": (
        N_("variable_grads(f) calls f(), which computes the loss from variables (w here)."),
        "value, grads = mt.variable_grads(lambda: (w * w).sum())",
    ),
    "custom_grad": (
        N_("custom_grad(f) wraps f, which returns (value, grad_fn)."),
        "square = mt.custom_grad(lambda x: (x * x, lambda dy: dy * 2.0 * x))",
    ),
}
"""What each gradient function does with f, and a call of it that runs as it stands
(given a variable ``w`` or an optimizer ``opt`` where the call needs one): the
rule and the hint of its errors. The rules are catalog messages, printed in the
reader's language; a rule given without its period (``use=``) gets one."""


def _sentence(rule: str) -> str:
    return rule if rule.endswith(".") else rule + "."


def check_callable(f: object, api: str, use: tuple[str, str] | None = None) -> None:
    """``f`` is a function; ``use`` (what ``api`` does with it, and a call that runs) makes the hint."""
    if not callable(f):
        rule, hint = use or USES[api]
        rule = N_("A tensor is a value computed once; {0}").format(_sentence(rule)) if isinstance(f, Tensor) else _sentence(rule)
        raise InvalidArgumentError(
            explain(N_("{0}(f) needs a function, got {1}: {2}.").format(api, type(f).__name__, format(repr(f), '.60')), rule, hint),
            value=f,
        )


def check_input(x: object, api: str, index: int | None = None) -> Tensor:
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
                    N_("{0}: {1} cannot be made a tensor: {2}").format(api, what, err.message.splitlines()[0]),
                    N_("Gradients are taken with respect to tensors; numbers and nested lists are converted."),
                    conversion_hint(x),
                ),
                **err.facts,
            ) from None
    if x._data is None:
        raise arena.disposed_error(x)
    return x


def check_arity(f: Callable[..., object], n: int, api: str, use: tuple[str, str] | None = None) -> None:
    """After f(*xs) raised a TypeError: if f cannot take ``n`` arguments at all, say so."""
    try:
        signature = inspect.signature(f)
        signature.bind(*range(n))
    except ValueError:  # no signature to read (some builtins): keep Python's error
        return
    except TypeError:
        rule, hint = use or USES[api]
        raise InvalidArgumentError(
            explain(
                N_("{0}: f{1} cannot be called with {2} argument(s), as {3} calls it.").format(api, signature, n, api),
                _sentence(rule),
                hint,
            ),
            value=f,
        ) from None


def check_output(y: object, api: str) -> Tensor:
    """What ``f`` returned is a tensor, so it can carry gradients."""
    if not isinstance(y, Tensor):
        raise GradientError(
            explain(
                N_("{0}: the result y returned by f() must be a tensor, got {1}: {2}.").format(api, type(y).__name__, repr(y)),
                N_("Only tensors computed with microtape ops carry gradients."),
                N_("f returned None: end it with return, as in return (x * x).sum().")
                if y is None
                else N_("compute y with microtape ops (x * x, mt.exp(x), ...), not Python floats."),
            ),
            value=y,
        )
    return y


def check_dy(dy: object, y: Tensor, api: str) -> Tensor | None:
    """``dy`` as a tensor of ``y``'s shape, or ``None`` (ones)."""
    if dy is None:
        return None
    d = dy if isinstance(dy, Tensor) else as_tensor(dy)  # type: ignore[arg-type]  # as_tensor reports bad values
    if d.shape != y.shape:
        raise ShapeError(
            explain(
                N_("{0}: dy has shape {1} but y=f(x) has shape {2}.").format(api, d.shape, y.shape),
                N_("dy weights each entry of y, so the shapes must match."),
                N_("pass dy of shape {0}, or leave it out to use ones.").format(y.shape),
            ),
            shapes=(d.shape, y.shape),
        )
    return d


def input_list(xs: object, api: str) -> list[object]:
    """The ``xs`` of ``grads`` and ``value_and_grads``: a list (or tuple), not one tensor."""
    if isinstance(xs, Tensor) or not isinstance(xs, (list, tuple)):
        raise InvalidArgumentError(
            explain(
                N_("{0}: xs must be a list of tensors, got {1}.").format(api, type(xs).__name__),
                N_("{0}(f) calls f(*xs) and returns one gradient per tensor.").format(api),
                N_("pass a list: g([x, y]); for one input use mt.grad."),
            ),
            value=xs,
        )
    return list(xs)
