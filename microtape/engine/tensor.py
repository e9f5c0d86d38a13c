"""The immutable ``Tensor``: a flat ``list[float]`` plus a shape tuple.

This module adds the methods. Data is stored row-major in one Python list; a
tensor never changes after it is made (only a ``Variable`` can be assigned).
Every tensor is registered in the arena (``arena.LIVE``) when created and
stays there until it is disposed, as in TensorFlow.js. Methods and operators
call the ops by name through ``DISPATCH``, so this module does not import
``ops/``. The functions that make tensors (``tensor``, ``zeros``, ...) are
in ``creation.py``; how a tensor prints is in ``formatting.py``; how Python
values become a tensor's data is in ``convert.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar, Final, TypeAlias, Union, cast

from . import arena, user_line
from .arena import TensorBase, new
from .types import Axis, Nested, Rows, Shape
from ..errors import InvalidArgumentError, explain
from ..errors import N_
from .formatting import format_number as format_number
from .formatting import format_values, nest_values
from .convert import flatten_values

__all__ = ["Grads", "Tensor", "TensorFn", "TensorLike"]

DISPATCH: Final = cast("dict[str, Callable[..., Tensor]]", arena.DISPATCH)
"""The ops by name (``arena.DISPATCH``, typed: every op returns a Tensor); methods call through it."""
_get_state = arena.STATE.get
DTYPE: Final = "float64"
BYTES_PER_ENTRY: Final = 8


class Tensor(TensorBase):
    """An immutable n-dimensional array of float64 numbers.

    Make tensors with :func:`tensor`, :func:`scalar`, :func:`zeros` and
    friends (``tf.tensor`` in TensorFlow.js). ``Tensor(values, shape)`` works
    too. Ops are both functions (``mt.exp(x)``) and methods (``x.exp()``),
    and Python's operators broadcast like NumPy.

    Comparisons are ops too: ``mt.greater(t, 0)`` (or ``t.greater(0)``) is
    the 0/1 mask NumPy writes ``t > 0``. ``==`` and ``hash`` keep Python's
    identity meaning, so tensors work as dict keys and with ``in``; that is
    why ``<``, ``<=``, ``>`` and ``>=`` raise
    :class:`~microtape.UnsupportedOperationError` instead of making a mask
    that ``==`` could not match. Habits from PyTorch and NumPy (``t.backward()``,
    ``t.grad``, ``len(t)``, ``t[0]``, ``for x in t``) raise errors that say
    what to write here; they are still ``AttributeError`` and ``TypeError``.

    Examples:
        >>> x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> x
        Tensor([[1.0, 2.0], [3.0, 4.0]], shape=(2, 2))
        >>> x.shape, x.size, x.rank, x.dtype
        ((2, 2), 4, 2, 'float64')
        >>> (2.0 * x - 1).sum()
        Tensor(16.0, shape=())
        >>> x.greater(2.0)
        Tensor([[0.0, 0.0], [1.0, 1.0]], shape=(2, 2))
    """

    __slots__ = ()  # the storage fields are TensorBase's (arena.py)

    if TYPE_CHECKING:  # installed from above by views/ (Jupyter's picture of the tensor)

        def _repr_html_(self) -> str: ...

    def __new__(cls, values: TensorLike, shape: Sequence[int] | None = None) -> Tensor:
        data, inferred = flatten_values(values, shape)
        return new(cls, data, inferred, "tensor")

    # -- reading values ---------------------------------------------------
    # Every attribute is read-only (``shape``, ``size`` and ``id`` are TensorBase's):
    # a tensor never changes, and views/habits.py gives each property a setter that
    # raises, saying what to write instead.

    @property
    def rank(self) -> int:
        """Number of dimensions (``len(shape)``)."""
        return len(self._shape)

    @property
    def dtype(self) -> str:
        """Always ``"float64"``, because entries are Python floats."""
        return DTYPE

    @property
    def is_disposed(self) -> bool:
        """True once the tensor was disposed (directly or by a tidy scope)."""
        return self._disposed is not None

    @property
    def op(self) -> str:
        """Name of the op that made this tensor (``"tensor"`` for creation)."""
        return self._op

    def _values(self) -> list[float]:
        data = self._data
        if data is None or self._disposed is not None:
            arena.check_usable(self)
            assert data is not None  # check_usable raised otherwise
        return data

    def data_sync(self) -> list[float]:
        """Return a copy of the values as a flat row-major list.

        Like ``dataSync()`` in TensorFlow.js.

        Examples:
            >>> mt.tensor([[1, 2], [3, 4]]).data_sync()
            [1.0, 2.0, 3.0, 4.0]
        """
        st = _get_state()
        if st.observers or st.tapes:
            arena.notify_read(self, _reader("data_sync()"))
        return list(self._values())

    async def data(self) -> list[float]:
        """Return the values, as an awaitable (``await t.data()`` in TF.js).

        Examples:
            >>> import asyncio
            >>> asyncio.run(mt.tensor([1.0, 2.0]).data())
            [1.0, 2.0]
        """
        return self.data_sync()

    def tolist(self) -> Nested:
        """Return the values as nested lists (a float for a scalar).

        Examples:
            >>> mt.tensor([[1, 2], [3, 4]]).tolist()
            [[1.0, 2.0], [3.0, 4.0]]
            >>> mt.scalar(5).tolist()
            5.0
        """
        st = _get_state()
        if st.observers or st.tapes:
            arena.notify_read(self, _reader("tolist()"))
        return nest_values(self._values(), self._shape)

    def array_sync(self) -> Nested:
        """Same as :meth:`tolist` (``arraySync()`` in TensorFlow.js).

        Examples:
            >>> mt.tensor([1, 2]).array_sync()
            [1.0, 2.0]
        """
        return self.tolist()

    def item(self) -> float:
        """Return the single value of a one-entry tensor as a float.

        Examples:
            >>> mt.tensor([[7.0]]).item()
            7.0
        """
        st = _get_state()
        if st.observers or st.tapes:
            arena.notify_read(self, _reader("item()"))
        data = self._values()
        if len(data) != 1:
            raise InvalidArgumentError(
                explain(
                    N_("item() needs a tensor with one entry, this one has shape {0} ({1} entries).").format(self.shape, self.size),
                    N_("Only a tensor of size 1 has a single value."),
                    N_("reduce it first, for example t.sum().item(), or read t.data_sync()."),
                ),
                shape=self.shape,
            )
        return data[0]

    def __float__(self) -> float:
        return self.item()

    def dispose(self) -> None:
        """Free this tensor now (``tensor.dispose()`` in TF.js).

        Reading it afterwards raises :class:`~microtape.DisposedTensorError`.
        Disposing twice is harmless.

        Examples:
            >>> t = mt.ones((2,))
            >>> t.dispose()
            >>> t.is_disposed
            True
        """
        arena.dispose(self, "dispose()")

    def clone(self) -> Tensor:
        """``mt.clone(self)``: a new tensor with the same values, recorded as the identity op.

        Examples:
            >>> mt.tensor([1.0]).clone()
            Tensor([1.0], shape=(1,))
        """
        return DISPATCH["clone"](self)

    def __repr__(self) -> str:
        name = type(self).__name__
        if self._data is None:
            return f"{name}(<disposed>, shape={self._shape}, id={self._id})"
        return f"{name}({format_values(self._data, self._shape)}, shape={self._shape}{self._repr_extra()})"

    def _repr_extra(self) -> str:
        return ""

    def __str__(self) -> str:
        return self.__repr__()

    def __copy__(self) -> Tensor:
        return self  # immutable, like a tuple: a copy is the tensor itself

    def __deepcopy__(self, memo: dict[int, object]) -> Tensor:
        return self

    def __reduce__(self) -> tuple[type[Tensor], tuple[list[float], Shape]]:
        return (Tensor, (self.data_sync(), self.shape))  # pickle: a new tensor with these values

    def __hash__(self) -> int:
        # By identity (as ``==`` is): a tensor is a dict key or set member only as itself.
        return id(self)

    def __bool__(self) -> bool:
        if self._size == 1:
            return self.item() != 0.0
        raise InvalidArgumentError(  # a ValueError, as NumPy's: `except ValueError` catches it
            explain(
                N_("The truth value of a tensor of shape {0} ({1} entries) is ambiguous.").format(self.shape, self.size),
                N_("Python's if/and/or need one bool; a tensor holds numbers."),
                N_("compare explicitly: t.item() > 0, or mt.greater(t, 0) for a mask."),
            ),
            shape=self.shape,
        )

    # -- operators: each two-input op puts its own on the class when it registers
    # (``@primitive("mul", n_inputs=2, dunder="mul")``: ``Primitive.operator`` in primitive.py)

    __add__: ClassVar[BinaryOperator]
    __radd__: ClassVar[BinaryOperator]
    __sub__: ClassVar[BinaryOperator]
    __rsub__: ClassVar[BinaryOperator]
    __mul__: ClassVar[BinaryOperator]
    __rmul__: ClassVar[BinaryOperator]
    __truediv__: ClassVar[BinaryOperator]
    __rtruediv__: ClassVar[BinaryOperator]
    __pow__: ClassVar[BinaryOperator]
    __rpow__: ClassVar[BinaryOperator]

    def __matmul__(self, other: TensorLike) -> Tensor:
        return DISPATCH["matmul"](self, other)

    def __rmatmul__(self, other: TensorLike) -> Tensor:
        return DISPATCH["matmul"](other, self)

    def __neg__(self) -> Tensor:
        return DISPATCH["neg"](self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return DISPATCH["abs"](self)

    # -- op methods (same names as the functions) -------------------------

    def add(self, other: TensorLike) -> Tensor:
        """``mt.add(self, other)``."""
        return DISPATCH["add"](self, other)

    def sub(self, other: TensorLike) -> Tensor:
        """``mt.sub(self, other)``."""
        return DISPATCH["sub"](self, other)

    def mul(self, other: TensorLike) -> Tensor:
        """``mt.mul(self, other)``."""
        return DISPATCH["mul"](self, other)

    def div(self, other: TensorLike) -> Tensor:
        """``mt.div(self, other)``."""
        return DISPATCH["div"](self, other)

    def pow(self, exponent: TensorLike) -> Tensor:
        """``mt.pow(self, exponent)``."""
        return DISPATCH["pow"](self, exponent)

    def maximum(self, other: TensorLike) -> Tensor:
        """``mt.maximum(self, other)``."""
        return DISPATCH["maximum"](self, other)

    def minimum(self, other: TensorLike) -> Tensor:
        """``mt.minimum(self, other)``."""
        return DISPATCH["minimum"](self, other)

    def matmul(self, other: TensorLike) -> Tensor:
        """``mt.matmul(self, other)``."""
        return DISPATCH["matmul"](self, other)

    def greater(self, other: TensorLike) -> Tensor:
        """``mt.greater(self, other)``."""
        return DISPATCH["greater"](self, other)

    def greater_equal(self, other: TensorLike) -> Tensor:
        """``mt.greater_equal(self, other)``."""
        return DISPATCH["greater_equal"](self, other)

    def less(self, other: TensorLike) -> Tensor:
        """``mt.less(self, other)``."""
        return DISPATCH["less"](self, other)

    def less_equal(self, other: TensorLike) -> Tensor:
        """``mt.less_equal(self, other)``."""
        return DISPATCH["less_equal"](self, other)

    def equal(self, other: TensorLike) -> Tensor:
        """``mt.equal(self, other)``."""
        return DISPATCH["equal"](self, other)

    def neg(self) -> Tensor:
        """``mt.neg(self)``."""
        return DISPATCH["neg"](self)

    def square(self) -> Tensor:
        """``mt.square(self)``."""
        return DISPATCH["square"](self)

    def sqrt(self) -> Tensor:
        """``mt.sqrt(self)``."""
        return DISPATCH["sqrt"](self)

    def exp(self) -> Tensor:
        """``mt.exp(self)``."""
        return DISPATCH["exp"](self)

    def log(self) -> Tensor:
        """``mt.log(self)``."""
        return DISPATCH["log"](self)

    def abs(self) -> Tensor:
        """``mt.abs(self)``."""
        return DISPATCH["abs"](self)

    def sign(self) -> Tensor:
        """``mt.sign(self)``."""
        return DISPATCH["sign"](self)

    def sin(self) -> Tensor:
        """``mt.sin(self)``."""
        return DISPATCH["sin"](self)

    def cos(self) -> Tensor:
        """``mt.cos(self)``."""
        return DISPATCH["cos"](self)

    def tanh(self) -> Tensor:
        """``mt.tanh(self)``."""
        return DISPATCH["tanh"](self)

    def sigmoid(self) -> Tensor:
        """``mt.sigmoid(self)``."""
        return DISPATCH["sigmoid"](self)

    def relu(self) -> Tensor:
        """``mt.relu(self)``."""
        return DISPATCH["relu"](self)

    def atan(self) -> Tensor:
        """``mt.atan(self)``."""
        return DISPATCH["atan"](self)

    def atan2(self, x: TensorLike) -> Tensor:
        """``mt.atan2(self, x)``: the angle of the point ``(x, self)``."""
        return DISPATCH["atan2"](self, x)

    def expm1(self) -> Tensor:
        """``mt.expm1(self)``."""
        return DISPATCH["expm1"](self)

    def log1p(self) -> Tensor:
        """``mt.log1p(self)``."""
        return DISPATCH["log1p"](self)

    def softplus(self) -> Tensor:
        """``mt.softplus(self)``."""
        return DISPATCH["softplus"](self)

    def log_sigmoid(self) -> Tensor:
        """``mt.log_sigmoid(self)``."""
        return DISPATCH["log_sigmoid"](self)

    def is_nan(self) -> Tensor:
        """``mt.is_nan(self)``."""
        return DISPATCH["is_nan"](self)

    def is_finite(self) -> Tensor:
        """``mt.is_finite(self)``."""
        return DISPATCH["is_finite"](self)

    def is_inf(self) -> Tensor:
        """``mt.is_inf(self)``."""
        return DISPATCH["is_inf"](self)

    def norm(self, ord: float | str = 2, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """``mt.norm(self, ord, axis, keepdims)``."""
        return DISPATCH["norm"](self, ord=ord, axis=axis, keepdims=keepdims)

    def argmax(self, axis: int = 0) -> Tensor:
        """``mt.argmax(self, axis)``."""
        return DISPATCH["argmax"](self, axis=axis)

    def argmin(self, axis: int = 0) -> Tensor:
        """``mt.argmin(self, axis)``."""
        return DISPATCH["argmin"](self, axis=axis)

    def gather(self, indices: TensorLike, axis: int = 0) -> Tensor:
        """``mt.gather(self, indices, axis)``."""
        return DISPATCH["gather"](self, indices, axis=axis)

    def one_hot(self, depth: int, on_value: float = 1.0, off_value: float = 0.0) -> Tensor:
        """``mt.one_hot(self, depth, on_value, off_value)``."""
        return DISPATCH["one_hot"](self, depth=depth, on_value=on_value, off_value=off_value)

    def sum(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """``mt.sum(self, axis, keepdims)``."""
        return DISPATCH["sum"](self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """``mt.mean(self, axis, keepdims)``."""
        return DISPATCH["mean"](self, axis=axis, keepdims=keepdims)

    def max(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """``mt.max(self, axis, keepdims)``."""
        return DISPATCH["max"](self, axis=axis, keepdims=keepdims)

    def min(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """``mt.min(self, axis, keepdims)``."""
        return DISPATCH["min"](self, axis=axis, keepdims=keepdims)

    def logsumexp(self, axis: Axis = -1, keepdims: bool = False) -> Tensor:
        """``mt.logsumexp(self, axis, keepdims)``."""
        return DISPATCH["logsumexp"](self, axis=axis, keepdims=keepdims)

    def softmax(self, axis: int = -1) -> Tensor:
        """``mt.softmax(self, axis)``."""
        return DISPATCH["softmax"](self, axis=axis)

    def log_softmax(self, axis: int = -1) -> Tensor:
        """``mt.log_softmax(self, axis)``."""
        return DISPATCH["log_softmax"](self, axis=axis)

    def reshape(self, shape: Sequence[int]) -> Tensor:
        """``mt.reshape(self, shape)``."""
        return DISPATCH["reshape"](self, shape=shape)

    def transpose(self, perm: Sequence[int] | None = None) -> Tensor:
        """``mt.transpose(self, perm)``."""
        return DISPATCH["transpose"](self, perm=perm)

    @property
    def T(self) -> Tensor:
        """The transpose (axes reversed), as in NumPy."""
        return DISPATCH["transpose"](self, perm=None)

    def broadcast_to(self, shape: Sequence[int]) -> Tensor:
        """``mt.broadcast_to(self, shape)``."""
        return DISPATCH["broadcast_to"](self, shape=shape)

    def clip_by_value(self, clip_value_min: float, clip_value_max: float) -> Tensor:
        """``mt.clip_by_value(self, clip_value_min, clip_value_max)``."""
        return DISPATCH["clip_by_value"](
            self, clip_value_min=clip_value_min, clip_value_max=clip_value_max
        )



def _reader(how: str) -> str:
    """``how`` when the code that read a tensor's values is the user's (two frames up), else "":
    the package reads values for its own reports, which cut nothing."""
    return how if user_line.is_user_file(sys._getframe(2).f_code.co_filename) else ""


# -- converting a value an op was given (the rules are in convert.py) ----------


def as_tensor(value: TensorLike) -> Tensor:
    """Return ``value`` if it is a tensor, else convert it like :func:`tensor`."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, float):
        return new(Tensor, [value], (), "tensor")
    data, shape = flatten_values(value, None)
    return new(Tensor, data, shape, "tensor")


# -- the aliases that mention Tensor (the others are in types.py) ------------

Grads: TypeAlias = "tuple[Tensor | None, ...]"
"""What a VJP returns: one entry per tensor input, ``None`` where there is no gradient."""
TensorLike: TypeAlias = Union["Tensor", Rows]
"""What ops and ``mt.tensor`` accept: a tensor, a number, or nested lists and tuples of numbers."""
BinaryOperator: TypeAlias = "Callable[[Tensor, TensorLike], Tensor]"
"""Python's operators on a tensor (``x + 2.0``, ``2.0 * x``): what ``Primitive.operator`` makes."""
# A function of one to six tensors: what grads, check_grads and the other functions that call
# f(*inputs) take. Each of them has one overload per count, spelled out (Callable[[Tensor,
# Tensor], Tensor], ...), so that both mypy and pyright type a lambda's parameters as tensors
# (mypy reads a lambda's parameters from one callable, never from a union of them) and a hover
# shows the parameters; this union is what the implementations behind the overloads accept.
TensorFn: TypeAlias = Union[
    Callable[[Tensor], Tensor],
    Callable[[Tensor, Tensor], Tensor],
    Callable[[Tensor, Tensor, Tensor], Tensor],
    Callable[[Tensor, Tensor, Tensor, Tensor], Tensor],
    Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor],
    Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], Tensor],
]
