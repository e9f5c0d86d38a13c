"""What the tape and the gradient functions are given, checked, before any backward work.

Read after ``results.py`` and before ``backward.py``. For ``GradientTape``:
its flags, what ``watch`` is given, the targets, sources and output gradients
of ``gradient()`` and ``jacobian()``, the ``unconnected_gradients`` mode, and
the error for a VJP that returned a gradient of the wrong shape (raised
during a backward pass). For ``grad``, ``grads``, ``value_and_grad(s)``,
``variable_grads`` and ``custom_grad`` (``functional.py``, ``custom.py``):
the function ``f``, its inputs, its result and ``dy``, with hints that show
a call of the function the user called that runs as it stands.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

from ..core.types import Shape
from ..errors import GradientError, InvalidArgumentError, ShapeError, explain
from ..core.convert import conversion_hint
from ..core.tensor import Tensor, as_tensor
from ..core import runtime

__all__ = [
    "USES",
    "check_arity",
    "check_callable",
    "check_dy",
    "check_flag",
    "check_input",
    "check_output",
    "check_tensor",
    "input_list",
    "jacobian_target",
    "output_gradients_for",
    "sources_of",
    "targets_of",
    "unconnected_mode",
    "watchable",
    "wrong_gradient_shape",
]

# ── the tape's arguments ─────────────────────────────────────────────────────


def check_flag(flag: str, value: object) -> None:
    """``GradientTape(persistent=..., watch_accessed_variables=...)`` takes True or False."""
    if not isinstance(value, bool):
        raise InvalidArgumentError(
            explain(
                f"GradientTape({flag}={value!r}): expected True or False.",
                f"{flag} is a flag.",
                f"write GradientTape({flag}=True).",
            ),
            value=value,
        )


def watchable(tensor: object) -> list[Tensor]:
    """What ``watch`` was given, as a list of live tensors (one tensor, or each of a list)."""
    items: list[object] = [tensor] if isinstance(tensor, Tensor) or not isinstance(tensor, (list, tuple)) else list(tensor)
    for t in items:
        if not isinstance(t, Tensor):
            raise InvalidArgumentError(
                explain(
                    f"watch() needs tensors, got {type(t).__name__}: {t!r}.",
                    "A tape tracks tensors made with mt.tensor, mt.variable and ops.",
                    "convert first: x = mt.tensor(values); tape.watch(x).",
                ),
                value=t,
            )
        if t._data is None:
            raise runtime.disposed_error(t)
    return [t for t in items if isinstance(t, Tensor)]  # all of them, checked above


def wrong_gradient_shape(op: str, index: int, got: Shape, want: Shape) -> ShapeError:
    return ShapeError(
        explain(
            f"the VJP of {op!r} returned a gradient of shape {got} for input {index}, whose shape is {want}.",
            "A gradient has the shape of its input; a broadcast input needs its gradient summed back.",
            "sum over the broadcast axes (microtape.ops.unbroadcast) in that VJP; "
            "mt.check_grads names the op whose VJP is wrong.",
        ),
        op=op,
        shapes=(got, want),
        input=index,
    )


def unconnected_mode(value: object) -> bool:
    if value not in ("none", "zero"):
        raise InvalidArgumentError(
            explain(
                f"unconnected_gradients={value!r} is not an option.",
                'It is "none" (unconnected sources get None) or "zero" (they get zeros).',
                'pass unconnected_gradients="zero".',
            ),
            value=value,
        )
    return value == "zero"


def check_tensor(t: object, what: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise InvalidArgumentError(
            explain(
                f"gradient(): {what} must be tensors, got {type(t).__name__}: {t!r}.",
                "Gradients are taken of and with respect to tensors.",
                "convert first with mt.tensor(...) and tape.watch() it.",
            ),
            value=t,
        )
    if t._data is None:
        raise runtime.disposed_error(t)
    return t


def sources_of(sources: object) -> list[Tensor]:
    """The sources of ``gradient()`` as a list: a tensor, a list (or tuple), or a dict's values."""
    if isinstance(sources, Tensor):
        flat: list[object] = [sources]
    elif isinstance(sources, Mapping):
        flat = list(sources.values())
    elif isinstance(sources, (list, tuple)):
        flat = list(sources)
    else:
        raise InvalidArgumentError(
            explain(
                f"gradient(): sources must be a tensor, a list or a dict of tensors, got {type(sources).__name__}.",
                "The result has the same structure as sources.",
                "pass tape.gradient(loss, [w, b]).",
            ),
            value=sources,
        )
    return [check_tensor(s, "sources") for s in flat]


def jacobian_target(target: object) -> Tensor:
    """The one target of ``jacobian()`` (callers may pass a list: that is an error here)."""
    if isinstance(target, (list, tuple)):
        raise InvalidArgumentError(
            explain(
                f"jacobian() takes one target tensor, got a {type(target).__name__} of {len(target)}.",
                "The Jacobian of one target has shape target.shape + source.shape; "
                "gradient() is the one that sums several targets.",
                "make the tape persistent and take one per target: [tape.jacobian(y, x) for y in (y1, y2)].",
            ),
            value=target,
        )
    (t,) = targets_of(target)
    return t


def targets_of(target: object) -> list[Tensor]:
    if isinstance(target, Tensor):
        return [check_tensor(target, "target")]
    if isinstance(target, (list, tuple)) and target:
        return [check_tensor(t, "target") for t in target]
    raise InvalidArgumentError(
        explain(
            f"gradient(): target must be a tensor (or a list of tensors), got {type(target).__name__}: {target!r}.",
            "The target is what you differentiate, usually the loss.",
            "compute the loss with microtape ops inside the tape's block.",
        ),
        value=target,
    )


def output_gradients_for(given: object, targets: list[Tensor]) -> list[Tensor | None]:
    if given is None:
        return [None] * len(targets)
    if isinstance(given, Tensor):
        items: list[object] = [given]
    elif isinstance(given, (list, tuple)) and (
        len(targets) > 1 or all(d is None or isinstance(d, Tensor) for d in given)
    ):
        items = list(given)
    else:
        items = [given]  # values for the single target, converted below
    if len(items) != len(targets):
        raise InvalidArgumentError(
            explain(
                f"gradient(): {len(items)} output_gradients for {len(targets)} targets.",
                "Give one output gradient per target.",
                "pass a list as long as the list of targets.",
            )
        )
    out: list[Tensor | None] = []
    converted: list[Tensor] = []  # made here from values: disposed again if anything is wrong
    for t, d in zip(targets, items):
        if d is None:
            out.append(None)
            continue
        if not isinstance(d, Tensor):
            d = as_tensor(d)  # type: ignore[arg-type]  # as_tensor reports bad values
            converted.append(d)
        if d.shape != t.shape:
            for made in converted:
                made.dispose()
            raise ShapeError(
                explain(
                    f"gradient(): output_gradients has shape {d.shape} but the target has shape {t.shape}.",
                    "The output gradient (dy) holds one weight per entry of the target.",
                    f"pass a tensor of shape {t.shape}, e.g. mt.ones({t.shape}).",
                ),
                shapes=(d.shape, t.shape),
            )
        out.append(d)
    return out


# ── the gradient functions' arguments ──────────────────────────────────────

USES: dict[str, tuple[str, str]] = {
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
"""What each gradient function does with f, and a call of it that runs as it stands
(given a variable ``w`` or an optimizer ``opt`` where the call needs one): the
rule and the hint of its errors."""


def check_callable(f: object, api: str, use: tuple[str, str] | None = None) -> None:
    """``f`` is a function; ``use`` (what ``api`` does with it, and a call that runs) makes the hint."""
    if not callable(f):
        rule, hint = use or USES[api]
        rule = f"A tensor is a value computed once; {rule}." if isinstance(f, Tensor) else rule + "."
        raise InvalidArgumentError(
            explain(f"{api}(f) needs a function, got {type(f).__name__}: {f!r:.60}.", rule, hint),
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
                    f"{api}: {what} cannot be made a tensor: {err.message.splitlines()[0]}",
                    "Gradients are taken with respect to tensors; numbers and nested lists are converted.",
                    conversion_hint(x),
                ),
                **err.facts,
            ) from None
    if x._data is None:
        raise runtime.disposed_error(x)
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
                f"{api}: f{signature} cannot be called with {n} argument(s), as {api} calls it.",
                rule + ".",
                hint,
            ),
            value=f,
        ) from None


def check_output(y: object, api: str) -> Tensor:
    """What ``f`` returned is a tensor, so it can carry gradients."""
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


def check_dy(dy: object, y: Tensor, api: str) -> Tensor | None:
    """``dy`` as a tensor of ``y``'s shape, or ``None`` (ones)."""
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


def input_list(xs: object, api: str) -> list[object]:
    """The ``xs`` of ``grads`` and ``value_and_grads``: a list (or tuple), not one tensor."""
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
