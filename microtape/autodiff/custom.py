"""``custom_grad``: a function with a gradient written by hand, recorded as one op.

``f`` runs in its own scope with no tape recording; a tape records a single
op whose VJP calls the user's ``grad_fn``, and whose inputs are ``f``'s
inputs followed by the tensors ``f`` saved for it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import overload

from ..engine import arena
from ..engine.primitive import Op, emit
from ..engine.arena import STATE
from ..engine.tensor import Grads, Tensor, TensorLike, as_tensor
from ..engine.types import Flat
from ..engine.variable import Variable
from ..errors import DisposedTensorError, InvalidArgumentError, ShapeError, explain
from ..language import N_
from .function_args import check_callable
from .results import GradFn, GradResult, TakesSave1, TakesSave2, TakesSave3

__all__ = ["custom_grad"]


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
                N_("{0}: grad_fn read a disposed tensor. {1}").format(name, err.message.splitlines()[0]),
                N_("custom_grad runs f in its own scope, as TF.js does: what f makes besides its value is disposed when f returns, unless f saves it for the backward pass."),
                N_("give f a save parameter and save what grad_fn needs: def f(x, save): t = mt.tanh(x); save([t]); return 2.0 * t, lambda dy, saved: dy * 2.0 * (1.0 - saved[0] * saved[0])."),
            ),
            **err.facts,
        ) from None
    items: list[object] = [raw] if isinstance(raw, Tensor) or raw is None else list(raw)  # type: ignore[call-overload]  # checked below
    if len(items) != len(xs):
        raise InvalidArgumentError(
            explain(
                N_("{0}: grad_fn returned {1} gradient(s) for {2} input(s).").format(name, len(items), len(xs)),
                N_("grad_fn(dy) returns one gradient per input of f, in order."),
                N_("return a list such as [dy * 2 * x] (one entry per input)."),
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
                    N_("{0}: the gradient for input {1} has shape {2}, but input {3} has shape {4}.").format(name, i, t.shape, i, x.shape),
                    N_("A gradient has the shape of its input."),
                    N_("sum over broadcast axes, or reshape the gradient to the input's shape."),
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


# One overload per count of tensors (1 to 3), each followed by the same count with ``save``,
# so that a lambda's parameters are tensors to mypy and pyright alike (with no overload that
# would take any function: there mypy would give a lambda untyped parameters). An f that takes
# ``save`` is told apart by the parameter's name, as custom_grad does at run time (TakesSave1..3),
# and its grad_fn by taking (dy, saved). The result takes what ops take: numbers are converted.
@overload
def custom_grad(f: Callable[[Tensor], tuple[Tensor, Callable[[Tensor], GradResult]]]) -> Callable[[TensorLike], Tensor]: ...
@overload
def custom_grad(f: TakesSave1) -> Callable[[TensorLike], Tensor]: ...
@overload
def custom_grad(
    f: Callable[[Tensor, Tensor], tuple[Tensor, Callable[[Tensor], GradResult]]],
) -> Callable[[TensorLike, TensorLike], Tensor]: ...
@overload
def custom_grad(f: TakesSave2) -> Callable[[TensorLike, TensorLike], Tensor]: ...
@overload
def custom_grad(
    f: Callable[[Tensor, Tensor, Tensor], tuple[Tensor, Callable[[Tensor], GradResult]]],
) -> Callable[[TensorLike, TensorLike, TensorLike], Tensor]: ...
@overload
def custom_grad(f: TakesSave3) -> Callable[[TensorLike, TensorLike, TensorLike], Tensor]: ...


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

    To a type checker, ``f`` takes one to three tensors (then, optionally,
    ``save``), so a lambda's parameters are tensors, and the result takes
    what ops take. An ``f`` with settings after its tensors
    (``f(x, *, k)``, called as ``op(x, k=3.0)``) runs, but its settings are
    not in those types.

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
    check_callable(f, "custom_grad")
    return named_custom_grad(f, f"custom_grad({getattr(f, '__name__', 'f')})")


def named_custom_grad(f: Callable[..., tuple[Tensor, GradFn]], name: str) -> Callable[..., Tensor]:
    """:func:`custom_grad` under another op name (the grader's stand-ins for a student's functions)."""
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
                        N_("{0}: save() needs a list of tensors, got {1}: {2}.").format(name, type(tensors).__name__, format(repr(tensors), '.60')),
                        N_("save keeps tensors of the forward pass for grad_fn(dy, saved)."),
                        N_("call save([t1, t2]) with microtape tensors."),
                    ),
                    op=name,
                )
            for t in items:
                if t._data is None:
                    raise arena.disposed_error(t)
            saved[:] = items

        # no tape records f's ops; and f's tensors are registered even inside a backward pass or a
        # gradient check that skips the arena, so its scope treats them the same everywhere
        token = STATE.set(STATE.get().replace(tapes=(), skip_arena=False))
        try:
            result = fn(*xs, save=save, **keywords) if takes_save else fn(*xs, **keywords)
        finally:
            STATE.reset(token)
        if not _is_value_and_grad_fn(result):
            raise InvalidArgumentError(
                explain(
                    N_("{0}: f must return (value, grad_fn), got {1}: {2}.").format(name, type(result).__name__, format(repr(result), '.80')),
                    N_("value is the output tensor; grad_fn(dy) returns the gradients of the inputs."),
                    N_("end f with: return value, lambda dy: [dy * ...]."),
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
                arena.check_usable(a)
        st = STATE.get()
        start = perf_counter()
        scope = arena.Scope(name, N_("the op {0} when it returned").format(name))
        STATE.set(st.replace(scopes=st.scopes + (scope,)))
        try:
            xs = tuple([x if isinstance(x, Tensor) else as_tensor(x) for x in args])  # type: ignore[arg-type]  # as_tensor reports bad values
            # f sees a variable's values as they are now, as a tape records them (TensorFlow
            # reads a variable passed to a custom gradient): its grad_fn may close over them
            seen = tuple([x._recorded() if isinstance(x, Variable) else x for x in xs])
            value, grad_fn, saved = call_f(seen, kwargs)
            if takes_save and not _accepts_saved(grad_fn):
                raise InvalidArgumentError(
                    explain(
                        N_("{0}: f takes save, so grad_fn is called as grad_fn(dy, saved), but it takes one argument.").format(name),
                        N_("With save, TF.js and microtape pass the saved tensors to grad_fn."),
                        N_("write the gradient as lambda dy, saved: [...]."),
                    ),
                    op=name,
                )
        except BaseException:
            STATE.set(st)
            arena.close_scope(scope, (), st.scopes)
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
            arena.close_scope(scope, (), st.scopes)
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
