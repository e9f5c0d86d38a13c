"""What the gradient functions return: ``GradMap``, ``VariableGrads``, the signatures of ``grad`` and friends,
and ``Operation``, one recorded op as ``GradientTape.operations`` lists it.

``GradMap`` holds gradients keyed by variable name and also accepts the
variable itself; ``VariableGrads`` is the ``(value, grads)`` pair of
``variable_grads``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NamedTuple, Protocol, TypeAlias

from ..engine.types import ListLike
from ..errors import GradientKeyError, explain
from ..language import N_
from ..engine.tensor import Tensor, TensorLike
from ..engine.variable import Variable

__all__ = [
    "GradFunction",
    "GradMap",
    "GradsFunction",
    "ValueAndGradFunction",
    "ValueAndGradsFunction",
    "VariableGrads",
]

GradResult: TypeAlias = "Tensor | Sequence[Tensor | None] | None"
"""What a custom gradient's grad_fn returns: one gradient per input (a tensor for one input)."""
GradFn = Callable[..., GradResult]
"""grad_fn(dy), or grad_fn(dy, saved) when f takes save."""
SaveFn = Callable[[Sequence[Tensor]], None]
"""The ``save`` that custom_grad passes to an f that takes it: ``save([t, ...])``."""
SavedGradFn = Callable[[Tensor, list[Tensor]], GradResult]
"""The grad_fn of an f that takes save: ``grad_fn(dy, saved)``."""


# What custom_grad takes when f has a parameter named save (passed by keyword, as at run time).


class TakesSave1(Protocol):
    """``f(x, save)`` for :func:`~microtape.custom_grad`: one tensor, then ``save``; its grad_fn takes ``(dy, saved)``."""

    def __call__(self, x: Tensor, /, *, save: SaveFn) -> tuple[Tensor, SavedGradFn]: ...


class TakesSave2(Protocol):
    """``f(x, y, save)`` for :func:`~microtape.custom_grad`: two tensors, then ``save``."""

    def __call__(self, x: Tensor, y: Tensor, /, *, save: SaveFn) -> tuple[Tensor, SavedGradFn]: ...


class TakesSave3(Protocol):
    """``f(x, y, z, save)`` for :func:`~microtape.custom_grad`: three tensors, then ``save``."""

    def __call__(self, x: Tensor, y: Tensor, z: Tensor, /, *, save: SaveFn) -> tuple[Tensor, SavedGradFn]: ...


# What grad, grads, value_and_grad and value_and_grads return: the signature a
# type checker holds a call to (a string, a range or a wrong count of arguments
# is an error before the code runs).


class GradFunction(Protocol):
    """What :func:`~microtape.grad` returns: ``g(x, dy=None)`` is the gradient of ``f`` at ``x``.

    Examples:
        >>> g: mt.functional.GradFunction = mt.grad(lambda x: x * x)
        >>> g(mt.scalar(3.0))
        Tensor(6.0, shape=())
    """

    def __call__(self, x: TensorLike, dy: TensorLike | None = None) -> Tensor: ...


class GradsFunction(Protocol):
    """What :func:`~microtape.grads` returns: ``g(xs, dy=None)`` is the list of gradients of ``f(*xs)``.

    Examples:
        >>> g: mt.functional.GradsFunction = mt.grads(lambda a, b: a * b)
        >>> g([mt.scalar(2.0), mt.scalar(5.0)])
        [Tensor(5.0, shape=()), Tensor(2.0, shape=())]
    """

    def __call__(self, xs: ListLike[TensorLike], dy: TensorLike | None = None) -> list[Tensor]: ...


class ValueAndGradFunction(Protocol):
    """What :func:`~microtape.value_and_grad` returns: ``g(x, dy=None)`` is ``(f(x), gradient)``.

    Examples:
        >>> g: mt.functional.ValueAndGradFunction = mt.value_and_grad(lambda x: x * x)
        >>> g(mt.scalar(3.0))
        (Tensor(9.0, shape=()), Tensor(6.0, shape=()))
    """

    def __call__(self, x: TensorLike, dy: TensorLike | None = None) -> tuple[Tensor, Tensor]: ...


class ValueAndGradsFunction(Protocol):
    """What :func:`~microtape.value_and_grads` returns: ``g(xs, dy=None)`` is ``(f(*xs), gradients)``.

    Examples:
        >>> g: mt.functional.ValueAndGradsFunction = mt.value_and_grads(lambda a, b: a * b)
        >>> g([mt.scalar(2.0), mt.scalar(5.0)])
        (Tensor(10.0, shape=()), [Tensor(5.0, shape=()), Tensor(2.0, shape=())])
    """

    def __call__(self, xs: ListLike[TensorLike], dy: TensorLike | None = None) -> tuple[Tensor, list[Tensor]]: ...


class GradMap(Mapping[str, Tensor]):
    """Gradients keyed by variable name, that also accept the variable itself.

    TF.js's ``variableGrads`` returns ``{[name]: grad}``, so ``grads[w]``
    from the Russian text would not work in JavaScript; here both
    ``grads["w"]`` and ``grads[w]`` do. Iterating gives the names.

    Examples:
        >>> w = mt.variable(mt.scalar(2.0), name="w_map")
        >>> _, gs = mt.variable_grads(lambda: w * w)
        >>> gs[w], gs["w_map"], list(gs)
        (Tensor(4.0, shape=()), Tensor(4.0, shape=()), ['w_map'])
    """

    def __init__(self, pairs: Sequence[tuple[Variable, Tensor]], reasons: Mapping[str, str] | None = None) -> None:
        self._grads = {v.name: g for v, g in pairs}
        self._variables = {v.name: v for v, _ in pairs}
        self._reasons = dict(reasons or {})
        """Why a variable f read (or var_list named) has no gradient, by name: the cut and its line."""

    def __getitem__(self, key: str | Variable) -> Tensor:
        name = key.name if isinstance(key, Variable) else key
        try:
            return self._grads[name]
        except (KeyError, TypeError):
            try:
                reason = self._reasons.get(name)
            except TypeError:  # a key that cannot be one (a list): no reason to give
                reason = None
            if reason is not None:
                raise GradientKeyError(
                    explain(
                        N_("no gradient for {0}: {1}.").format(repr(key), reason),
                        N_("These variables have gradients: {0}. A variable the loss does not depend on through recorded ops gets none.").format(sorted(self._grads)),
                        N_("keep the path from the variable to the loss inside microtape ops (no copy, assign or read-out on it)."),
                    ),
                    key=key,
                ) from None
            raise GradientKeyError(
                explain(
                    N_("no gradient for {0}.").format(repr(key)),
                    N_("These variables have gradients: {0}. A variable that f does not use, or that is not trainable, gets none.").format(sorted(self._grads)),
                    N_("check that f reads the variable, and look it up by the variable or its name."),
                ),
                key=key,
            ) from None

    def __contains__(self, key: object) -> bool:
        name = key.name if isinstance(key, Variable) else key
        return name in self._grads

    def __iter__(self) -> Iterator[str]:
        return iter(self._grads)

    def __len__(self) -> int:
        return len(self._grads)

    def variables(self) -> list[Variable]:
        """The variables, in the order of the gradients."""
        return list(self._variables.values())

    def pairs(self) -> list[tuple[Variable, Tensor]]:
        """``(variable, gradient)`` pairs, for code that wants the objects."""
        return [(self._variables[n], g) for n, g in self._grads.items()]

    def __repr__(self) -> str:
        return f"GradMap({self._grads!r})"


class VariableGrads(NamedTuple):
    """What :func:`~microtape.variable_grads` returns: ``.value`` and ``.grads``; unpacks as a pair.

    Examples:
        >>> v = mt.variable(mt.scalar(3.0), name="v_result")
        >>> result = mt.variable_grads(lambda: v * v)
        >>> result.value, result.grads["v_result"]
        (Tensor(9.0, shape=()), Tensor(6.0, shape=()))
        >>> value, grads = result          # unpacks like TF.js's {value, grads}
    """

    value: Tensor
    grads: GradMap
