"""What ``GradientTape.gradient`` and ``jacobian`` are given, checked: targets,
sources, output gradients, the ``unconnected_gradients`` mode; and the error
for a VJP that returned a gradient of the wrong shape.

Read with ``tape.py``, which calls these before and during a backward pass.
"""

from __future__ import annotations

from ..core.types import Shape
from ..errors import InvalidArgumentError, ShapeError, explain
from ..core.tensor import Tensor, as_tensor
from ..core import runtime

__all__ = ["check_tensor", "output_gradients_for", "targets_of", "unconnected_mode", "wrong_gradient_shape"]


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

