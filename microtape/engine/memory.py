"""The arena's public face: ``tidy``, ``keep``, ``dispose`` and ``memory``.

As in TensorFlow.js, a tensor lives in the arena until it is disposed:
directly, or by the ``tidy`` scope it was made in. ``memory()`` counts what
is alive, so a loop without ``tidy`` shows the count growing and the same
loop inside ``tidy`` stays flat. Tapes hold what their backward pass needs
until ``gradient()`` is done (or the tape is released), and ``memory()``
says how much that is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, cast, overload

from . import arena
from .arena import LIVE
from ..errors import InvalidArgumentError, TidyError, explain
from ..errors import N_, tr
from .tensor import BYTES_PER_ENTRY, Tensor
from .variable import VARIABLES

__all__ = ["MemoryInfo", "dispose", "keep", "memory", "tidy"]

_KINDS = (N_("coroutine"), N_("generator"), N_("async_generator"))  # what tidy cannot scope, as its error names it

T = TypeVar("T")


@overload
def tidy(fn: Callable[..., T], /, *args: object) -> T: ...


@overload
def tidy(name: str, fn: Callable[..., T], /, *args: object) -> T: ...


def tidy(name_or_fn: str | Callable[..., T], /, *args: object) -> T:
    """Run a function and dispose every tensor it made, except what it returns.

    Like ``tf.tidy`` in TensorFlow.js. Tensors reachable from the result
    (also inside lists, tuples, dicts and dataclasses) survive and move to
    the enclosing scope; so do tensors passed to :func:`keep`. Variables are
    never disposed by ``tidy``. A name (``mt.tidy("step", fn)``) appears in
    error messages about tensors this scope disposed. If ``fn`` raises,
    everything it made is disposed and the error propagates.

    Args:
        name_or_fn: The function, or a name followed by the function.
        *args: Passed to the function.

    Raises:
        TidyError: the function returned a coroutine, generator or
            awaitable: its tensors would be made after the scope closed.

    Examples:
        >>> x = mt.tensor([1.0, 2.0])
        >>> before = mt.memory().num_tensors
        >>> y = mt.tidy(lambda: (x * x).sum())   # x*x is disposed, the sum survives
        >>> mt.memory().num_tensors - before
        1
        >>> mt.tidy("double", lambda t: t * 2.0, x)
        Tensor([2.0, 4.0], shape=(2,))
    """
    if isinstance(name_or_fn, str):
        if not args or not callable(args[0]):
            raise InvalidArgumentError(
                explain(
                    N_("tidy({0}, ...) needs a function after the name.").format(repr(name_or_fn)),
                    N_("The forms are tidy(fn, *args) and tidy(name, fn, *args)."),
                    N_("write mt.tidy({0}, lambda: ...).").format(repr(name_or_fn)),
                ),
                value=args[0] if args else None,
            )
        name, fn, rest = name_or_fn, cast("Callable[..., T]", args[0]), args[1:]
    elif callable(name_or_fn):
        fn, rest = name_or_fn, args
        name = getattr(fn, "__name__", "tidy")
    else:
        raise InvalidArgumentError(
            explain(
                N_("tidy() needs a function, got {0}: {1}.").format(type(name_or_fn).__name__, format(repr(name_or_fn), '.60')),
                N_("tidy runs the function and cleans up after it."),
                N_("pass a function: mt.tidy(lambda: model(x))."),
            ),
            value=name_or_fn,
        )
    assert callable(fn)

    def run() -> object:
        result = fn(*rest)
        if inspect.iscoroutine(result) or inspect.isgenerator(result) or inspect.isasyncgen(result) or inspect.isawaitable(result):
            kind = type(result).__name__  # one of _KINDS, printed in the reader's words
            close = getattr(result, "close", None)
            if close is not None:
                close()  # so Python does not warn "coroutine was never awaited"
            raise TidyError(
                explain(
                    N_("tidy({0}): the function returned a {1}, which tidy cannot scope.").format(repr(name), kind),
                    N_("tidy disposes tensors when the function returns; an async function or generator makes its tensors later, after the scope is gone (a classic source of 'Tensor is disposed' errors in TF.js)."),
                    N_("call tidy inside the async function around each synchronous step: loss = mt.tidy(lambda: step()); await mt.next_frame()."),
                ),
                kind=kind,
            )
        return result

    return arena.run_in_scope(name, run)  # type: ignore[return-value]  # run returns fn's result


def keep(t: T) -> T:
    """Protect a tensor from every enclosing ``tidy`` scope (``tf.keep``); returns it.

    A kept tensor is freed only by ``dispose()``.

    Examples:
        >>> saved = []
        >>> def step():
        ...     saved.append(mt.keep(mt.ones((2,))))
        ...     return None
        >>> mt.tidy(step)
        >>> saved[0].is_disposed
        False
    """
    tensors = arena.tensors_in(t)
    for tensor in tensors:
        if tensor._disposed is not None:  # also one a tape still holds: it cannot be revived
            raise arena.disposed_error(tensor)
    for tensor in tensors:
        tensor._kept = True
    return t


def dispose(container: object) -> None:
    """Dispose a tensor, or every tensor in a list, tuple or dict (``tf.dispose``).

    Examples:
        >>> a, b = mt.ones((2,)), mt.zeros((3,))
        >>> mt.dispose({"a": a, "rest": [b]})
        >>> a.is_disposed, b.is_disposed
        (True, True)
    """
    for t in arena.tensors_in(container):
        if isinstance(t, Tensor):  # every TensorBase is one; a Variable also frees its name
            t.dispose()


@dataclass(frozen=True, slots=True)
class MemoryInfo:
    """What :func:`memory` reports.

    ``num_tensors`` counts live tensors and variables; ``num_bytes`` is 8 per
    entry of each of them (a reshape counts again, though it shares data);
    ``num_tensors_held_by_tapes`` counts those kept alive for a backward pass,
    including disposed ones a tape still needs.

    Examples:
        >>> info = mt.memory()
        >>> info.num_tensors >= info.num_variables >= 0
        True
    """

    num_tensors: int
    num_bytes: int
    num_variables: int
    num_tensors_held_by_tapes: int
    num_bytes_held_by_tapes: int

    if TYPE_CHECKING:  # installed from above by views/ (Jupyter shows the fields as tables)

        def _repr_html_(self) -> str: ...

    def __str__(self) -> str:
        return tr("{0} tensors ({1} bytes), {2} variables, {3} held by tapes").format(
            self.num_tensors, self.num_bytes, self.num_variables, self.num_tensors_held_by_tapes
        )


def memory() -> MemoryInfo:
    """Count the tensors alive now (``tf.memory``).

    As in TF.js, every op runs in its own scope: outside a tape it adds
    exactly its result (the tensor made from the 2.0 in ``x * 2.0``, or a
    composite's intermediates, are gone when it returns). What a tape keeps
    for its backward pass is counted in ``num_tensors`` and in
    ``num_tensors_held_by_tapes`` until the tape is done with it.

    Examples:
        >>> before = mt.memory()
        >>> x = mt.zeros((10,))
        >>> after = mt.memory()
        >>> after.num_tensors - before.num_tensors, after.num_bytes - before.num_bytes
        (1, 80)
        >>> y = mt.softmax(x * 2.0)      # two ops, two results: no 2.0, no intermediates
        >>> mt.memory().num_tensors - after.num_tensors
        2
    """
    tensors = list(LIVE.values())
    # valuerefs() copies the weak references in one step: iterating the
    # WeakValueDictionary itself fails if another thread makes a variable meanwhile.
    variables = [v for v in (ref() for ref in VARIABLES.valuerefs()) if v is not None and v._data is not None]
    held = [t for t in tensors if t._holds > 0]
    return MemoryInfo(
        num_tensors=len(tensors) + len(variables),
        num_bytes=BYTES_PER_ENTRY * (sum(t._size for t in tensors) + sum(v._size for v in variables)),
        num_variables=len(variables),
        num_tensors_held_by_tapes=len(held),
        num_bytes_held_by_tapes=BYTES_PER_ENTRY * sum(t._size for t in held),
    )
