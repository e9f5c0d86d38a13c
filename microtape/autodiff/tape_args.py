"""What ``GradientTape`` is given, checked before any backward work: the public face of the engine's tape.

Its flags, what ``watch`` is given, the targets, sources and output
gradients of ``gradient()`` and ``jacobian()`` and the ``unconnected_gradients``
mode. The engine's ``Tape`` trusts its caller; ``GradientTape`` checks here first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeAlias

from ..errors import InvalidArgumentError, ShapeError, explain
from ..language import N_
from ..engine import arena
from ..engine.tensor import Tensor, as_tensor

__all__ = [
    "UnconnectedGradients",
    "check_flag",
    "check_tensor",
    "jacobian_target",
    "output_gradients_for",
    "sources_of",
    "targets_of",
    "unconnected_mode",
    "watchable",
]

def check_flag(flag: str, value: object) -> None:
    """``GradientTape(persistent=..., watch_accessed_variables=...)`` takes True or False."""
    if not isinstance(value, bool):
        raise InvalidArgumentError(
            explain(
                N_("GradientTape({0}={1}): expected True or False.").format(flag, repr(value)),
                N_("{0} is a flag.").format(flag),
                N_("write GradientTape({0}=True).").format(flag),
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
                    N_("watch() needs tensors, got {0}: {1}.").format(type(t).__name__, repr(t)),
                    N_("A tape tracks tensors made with mt.tensor, mt.variable and ops."),
                    N_("convert first: x = mt.tensor(values); tape.watch(x)."),
                ),
                value=t,
            )
        if t._data is None:
            raise arena.disposed_error(t)
    return [t for t in items if isinstance(t, Tensor)]  # all of them, checked above


UnconnectedGradients: TypeAlias = Literal["none", "zero"]
"""``gradient(unconnected_gradients=...)``: a source the target does not reach gets None, or zeros (TensorFlow's option)."""


def unconnected_mode(value: object) -> bool:
    if value not in ("none", "zero"):
        raise InvalidArgumentError(
            explain(
                N_("unconnected_gradients={0} is not an option.").format(repr(value)),
                N_('It is "none" (unconnected sources get None) or "zero" (they get zeros).'),
                N_('pass unconnected_gradients="zero".'),
            ),
            value=value,
        )
    return value == "zero"


def check_tensor(t: object, what: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise InvalidArgumentError(
            explain(
                N_("gradient(): {0} must be tensors, got {1}: {2}.").format(what, type(t).__name__, repr(t)),
                N_("Gradients are taken of and with respect to tensors."),
                N_("convert first with mt.tensor(...) and tape.watch() it."),
            ),
            value=t,
        )
    if t._data is None:
        raise arena.disposed_error(t)
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
                N_("gradient(): sources must be a tensor, a list or a dict of tensors, got {0}.").format(type(sources).__name__),
                N_("The result has the same structure as sources."),
                N_("pass tape.gradient(loss, [w, b])."),
            ),
            value=sources,
        )
    return [check_tensor(s, "sources") for s in flat]


def jacobian_target(target: object) -> Tensor:
    """The one target of ``jacobian()`` (callers may pass a list: that is an error here)."""
    if isinstance(target, (list, tuple)):
        raise InvalidArgumentError(
            explain(
                N_("jacobian() takes one target tensor, got a {0} of {1}.").format(type(target).__name__, len(target)),
                N_("The Jacobian of one target has shape target.shape + source.shape; gradient() is the one that sums several targets."),
                N_("make the tape persistent and take one per target: [tape.jacobian(y, x) for y in (y1, y2)]."),
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
            N_("gradient(): target must be a tensor (or a list of tensors), got {0}: {1}.").format(type(target).__name__, repr(target)),
            N_("The target is what you differentiate, usually the loss."),
            N_("compute the loss with microtape ops inside the tape's block."),
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
                N_("gradient(): {0} output_gradients for {1} targets.").format(len(items), len(targets)),
                N_("Give one output gradient per target."),
                N_("pass a list as long as the list of targets."),
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
                    N_("gradient(): output_gradients has shape {0} but the target has shape {1}.").format(d.shape, t.shape),
                    N_("The output gradient (dy) holds one weight per entry of the target."),
                    N_("pass a tensor of shape {0}, e.g. mt.ones({1}).").format(t.shape, t.shape),
                ),
                shapes=(d.shape, t.shape),
            )
        out.append(d)
    return out
