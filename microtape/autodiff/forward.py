"""Forward mode from two reverse passes: ``jvp``, ``linearize`` and ``hvp``.

No op has a JVP rule of its own. The VJP ``u ↦ Jᵀu`` is linear in the
cotangent ``u``, so differentiating it with respect to ``u`` (a second
reverse pass, over the ops the first one recorded) gives ``v ↦ J v``. Every
derivative still comes from the one VJP written beside each forward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import overload

from ..engine import arena
from ..engine.tensor import Tensor, TensorFn, TensorLike
from ..language import N_
from ..errors import ShapeError, explain
from ..ops import concat, mul, reduce_sum, reshape
from ..ops.creation import ones_like
from .function_args import check_callable, check_input, check_output, input_list
from .gradient_tape import GradientTape

__all__ = ["hvp", "jvp", "linearize"]

LinearFn = Callable[[Sequence[TensorLike]], Tensor]
"""What :func:`linearize` returns: the tangents ``v`` (one per primal) to ``J v``."""


def _flat(ts: Sequence[Tensor]) -> Tensor:
    return concat([reshape(t, shape=(t.size,)) for t in ts], axis=0)


def _tangents(tangents: Sequence[TensorLike], xs: list[Tensor], api: str) -> list[Tensor]:
    vs = [check_input(v, api, i) for i, v in enumerate(input_list(tangents, api))]
    if len(vs) != len(xs) or any(v.shape != x.shape for v, x in zip(vs, xs)):
        raise ShapeError(
            explain(
                N_("{0}: tangents have shapes {1}, primals {2}.").format(api, [v.shape for v in vs], [x.shape for x in xs]),
                N_("A tangent is a direction in input space: one per primal, of the primal's shape."),
                N_("pass tangents=[mt.ones_like(x) for x in primals]."),
            ),
            shapes=tuple(v.shape for v in vs),
        )
    return vs


class _Linearized:
    """The recorded first reverse pass, kept so ``J v`` needs no new call of ``f``."""

    __slots__ = ("outer", "u", "flat_vjp", "xs", "value")

    def __init__(self, f: TensorFn, xs: list[Tensor], api: str) -> None:
        self.xs = xs
        self.outer = GradientTape(persistent=True, watch_accessed_variables=False)
        try:
            with self.outer:
                with GradientTape(watch_accessed_variables=False) as inner:
                    inner.watch(xs)
                    y = check_output(f(*xs), api)
                # any u will do (the VJP is linear in it); ones keep 0·inf out of it
                self.u = ones_like(y)
                self.outer.watch(self.u)
                gs = inner.gradient(y, xs, output_gradients=self.u, unconnected_gradients="zero")
                self.flat_vjp = _flat([g for g in gs if g is not None])
            self.value = y
        except BaseException:
            self.outer.release()
            raise

    def release(self) -> None:
        """Let go of the recording and of the two tensors it made (``u`` and ``Jᵀu``)."""
        self.outer.release()
        arena.dispose(self.u, "jvp()")
        arena.dispose(self.flat_vjp, "jvp()")

    def apply(self, vs: list[Tensor]) -> Tensor:
        """``J v``: the gradient of ``⟨Jᵀu, v⟩`` with respect to ``u``."""
        dy = self.outer.gradient(self.flat_vjp, self.u, output_gradients=_flat(vs), unconnected_gradients="zero")
        assert dy is not None
        return dy


def _record(f: TensorFn, primals: Sequence[TensorLike], api: str) -> _Linearized:
    check_callable(f, api)
    raw = input_list(primals, api)

    def run() -> tuple[Tensor, Tensor, Tensor, _Linearized]:
        lin = _Linearized(f, [check_input(x, api, i) for i, x in enumerate(raw)], api)
        return lin.value, lin.u, lin.flat_vjp, lin  # the tensors outlive the scope with the recording

    result = arena.run_in_scope(f"{api}()", run)
    assert isinstance(result, tuple)
    lin = result[3]
    assert isinstance(lin, _Linearized)
    return lin


# One overload per count of inputs (1 to 6): a lambda's parameters are tensors (see TensorFn).
@overload
def jvp(f: Callable[[Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, Tensor]: ...
@overload
def jvp(f: Callable[[Tensor, Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, Tensor]: ...
@overload
def jvp(f: Callable[[Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, Tensor]: ...
@overload
def jvp(f: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, Tensor]: ...
@overload
def jvp(f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, Tensor]: ...
@overload
def jvp(f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, Tensor]: ...


def jvp(f: TensorFn, primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, Tensor]:
    """Return ``(f(*primals), J v)``: the directional derivative of ``f`` along ``tangents`` (``jax.jvp``).

    Forward mode costs about two reverse passes whatever the number of
    inputs, and gives one column-combination of the Jacobian per call: the
    cheap mode when ``f`` has few inputs and many outputs. It is computed
    from the VJPs (no rule is written twice).

    Raises:
        ShapeError: a tangent does not have its primal's shape.
        GradientError: ``f`` does not return a tensor.

    Examples:
        >>> value, dy = mt.jvp(lambda x: x * x, [mt.tensor([1.0, 3.0])], [mt.tensor([1.0, 0.0])])
        >>> value, dy                           # d(x²) = 2x·v
        (Tensor([1.0, 9.0], shape=(2,)), Tensor([2.0, 0.0], shape=(2,)))
        >>> mt.jvp(lambda a, b: a * b, [2.0, 5.0], [1.0, 1.0])[1]
        Tensor(7.0, shape=())
    """
    lin = _record(f, primals, "jvp")
    try:

        def apply() -> Tensor:
            return reshape(lin.apply(_tangents(tangents, lin.xs, "jvp")), shape=lin.value.shape)

        out = arena.run_in_scope("jvp()", apply)
    finally:
        lin.release()
    assert isinstance(out, Tensor)
    return lin.value, out


@overload
def linearize(f: Callable[[Tensor], Tensor], primals: Sequence[TensorLike]) -> tuple[Tensor, LinearFn]: ...
@overload
def linearize(f: Callable[[Tensor, Tensor], Tensor], primals: Sequence[TensorLike]) -> tuple[Tensor, LinearFn]: ...
@overload
def linearize(f: Callable[[Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike]) -> tuple[Tensor, LinearFn]: ...
@overload
def linearize(f: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike]) -> tuple[Tensor, LinearFn]: ...
@overload
def linearize(f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike]) -> tuple[Tensor, LinearFn]: ...
@overload
def linearize(f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike]) -> tuple[Tensor, LinearFn]: ...


def linearize(f: TensorFn, primals: Sequence[TensorLike]) -> tuple[Tensor, LinearFn]:
    """Return ``(f(*primals), f_jvp)`` where ``f_jvp(tangents)`` is ``J v`` (``jax.linearize``).

    ``f`` runs once; ``f_jvp`` replays the recorded reverse pass for each new
    tangent and never calls ``f`` again. The recording lives as long as
    ``f_jvp`` does.

    Examples:
        >>> calls = []
        >>> def f(x):
        ...     calls.append(1)
        ...     return mt.sin(x)
        >>> value, f_jvp = mt.linearize(f, [mt.scalar(0.0)])
        >>> f_jvp([1.0]), f_jvp([2.0]), len(calls)     # cos(0)·v
        (Tensor(1.0, shape=()), Tensor(2.0, shape=()), 1)
    """
    lin = _record(f, primals, "linearize")
    shape = lin.value.shape

    def f_jvp(tangents: Sequence[TensorLike]) -> Tensor:
        def apply() -> Tensor:
            return reshape(lin.apply(_tangents(tangents, lin.xs, "linearize")), shape=shape)

        out = arena.run_in_scope("linearize()", apply)
        assert isinstance(out, Tensor)
        return out

    return lin.value, f_jvp


@overload
def hvp(f: Callable[[Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, list[Tensor]]: ...
@overload
def hvp(f: Callable[[Tensor, Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, list[Tensor]]: ...
@overload
def hvp(f: Callable[[Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, list[Tensor]]: ...
@overload
def hvp(f: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, list[Tensor]]: ...
@overload
def hvp(f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, list[Tensor]]: ...
@overload
def hvp(f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, list[Tensor]]: ...


def hvp(f: TensorFn, primals: Sequence[TensorLike], tangents: Sequence[TensorLike]) -> tuple[Tensor, list[Tensor]]:
    """Return ``(f(*primals), H v)`` for a scalar ``f`` (``torch.autograd.functional.hvp``).

    ``H v`` is the gradient of ``⟨∇f, v⟩``: reverse mode over reverse mode,
    one entry per primal. A non-scalar ``f`` is summed first, as in ``mt.grads``.

    Examples:
        >>> value, (hv,) = mt.hvp(lambda x: (x ** 3).sum(), [mt.tensor([1.0, 2.0])], [mt.tensor([1.0, 1.0])])
        >>> value, hv                           # H = diag(6x)
        (Tensor(9.0, shape=()), Tensor([6.0, 12.0], shape=(2,)))
    """
    check_callable(f, "hvp")
    raw = input_list(primals, "hvp")

    def run() -> tuple[Tensor, list[Tensor]]:
        xs = [check_input(x, "hvp", i) for i, x in enumerate(raw)]
        vs = _tangents(tangents, xs, "hvp")
        with GradientTape(watch_accessed_variables=False) as outer:
            outer.watch(xs)
            with GradientTape(watch_accessed_variables=False) as inner:
                inner.watch(xs)
                y = check_output(f(*xs), "hvp")
            gs = inner.gradient(y, xs, unconnected_gradients="zero")
            s = reduce_sum(mul(_flat([g for g in gs if g is not None]), _flat(vs)))
        hs = outer.gradient(s, xs, unconnected_gradients="zero")
        return y, [h for h in hs if h is not None]

    result = arena.run_in_scope("hvp()", run)
    assert isinstance(result, tuple)
    return result
