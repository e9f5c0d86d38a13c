"""Every error microtape raises on purpose.

Read first. Each class is a :class:`MicrotapeError`, and also the builtin a
Python programmer would try to catch (``ShapeError`` is a ``ValueError``), so
``except ValueError`` keeps working. Messages have three parts: what happened
with the real values, the rule, and a hint. Facts are kept as attributes
(``err.op``, ``err.shapes``) so tests can check data, not prose.

A hint is either advice in words or a line of code, never code inside a
sentence that would break when pasted. A hint that is code runs as it
stands, given ``mt`` and the names the message itself uses (``t`` for the
tensor in question, ``w`` for a variable, ``opt`` for an optimizer); the
misuse table in ``tests/test_misuse.py`` executes such hints. A hint that
does not fit the mistake is left out rather than guessed.

Messages are written in English and printed in the reader's language
(``mt.set_language``, ``MICROTAPE_LANG``): ``explain`` looks each of its
three parts up in the package's catalog (``microtape.language.tr``), so a
part with values is written as a template, ``tr("... {n} ...").format(n=n)``.
The classes and their attributes are the same in every language.
"""

from __future__ import annotations

from typing import Final

from .language import N_ as N_, tr as tr  # re-exported: the engine marks and prints its messages through errors, its one way up

__all__ = [
    "AnomalyError",
    "CheckpointError",
    "DisposedTensorError",
    "GradientCheckError",
    "GradientError",
    "GradientKeyError",
    "GradientWarning",
    "InvalidArgumentError",
    "LeakError",
    "MicrotapeError",
    "NumericsError",
    "ShapeError",
    "TapeError",
    "TidyError",
    "UnsupportedAttributeError",
    "UnsupportedOperationError",
    "VariableError",
]

_INDENT: Final = "  "


def explain(what: str, rule: str = "", hint: str = "") -> str:
    """Join the three parts of a teaching error message, each in the reader's language.

    A part the catalog knows (its English exactly) is printed translated; one
    it does not know stays as written.

    Examples:
        >>> from microtape.errors import explain
        >>> print(explain("x is 3.", "x must be even.", "use 4"))
        x is 3.
          x must be even.
          hint: use 4
    """
    lines = [tr(what)]
    if rule:
        lines.append(_INDENT + tr(rule))
    if hint:
        lines.append(_INDENT + tr("hint") + ": " + tr(hint))
    return "\n".join(lines)


class MicrotapeError(Exception):
    """Base class for every error microtape raises on purpose.

    Keyword arguments become attributes, so a test can read ``err.shapes``
    instead of parsing the message.

    Examples:
        >>> try:
        ...     mt.tensor([[1.0, 2.0], [3.0]])
        ... except mt.MicrotapeError as err:
        ...     print(type(err).__name__)
        ShapeError
    """

    def __init__(self, message: str, **facts: object) -> None:
        super().__init__(message)
        self.message = message
        self.facts = facts
        for key, value in facts.items():
            setattr(self, key, value)


class ShapeError(MicrotapeError, ValueError):
    """Shapes that do not fit together: broadcasting, reshape, matmul, assign.

    Examples:
        >>> try:
        ...     mt.ones((2, 3)) + mt.ones((2,))
        ... except mt.ShapeError as err:
        ...     err.shapes
        ((2, 3), (2,))
    """

    op: str
    shapes: tuple[object, ...]


class InvalidArgumentError(MicrotapeError, ValueError):
    """A value that is not allowed: an axis out of range, a bad option string.

    Examples:
        >>> try:
        ...     mt.ones((2, 3)).sum(axis=2)
        ... except mt.InvalidArgumentError as err:
        ...     err.axis
        2
    """

    op: str
    value: object
    axis: object


class TapeError(MicrotapeError, RuntimeError):
    """A GradientTape used in a way it does not support (for example twice).

    Examples:
        >>> x = mt.scalar(3.0)
        >>> with mt.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = x * x
        >>> _ = tape.gradient(y, x)
        >>> try:
        ...     tape.gradient(y, x)
        ... except mt.TapeError:
        ...     print("used twice")
        used twice
    """


class GradientError(MicrotapeError, ValueError):
    """A gradient that cannot be computed: no connection, a non-scalar loss.

    Examples:
        >>> try:
        ...     mt.grad(lambda x: mt.scalar(1.0))(mt.scalar(2.0))
        ... except mt.GradientError as err:
        ...     print(str(err).startswith("Cannot compute gradient of y=f(x) with respect to x."))
        True
    """

    cause: str = ""
    """What cut the path, when one did: "cut" (stop_gradient, a copy, an assign), "read" (numbers
    read out by the user's code), "unwatched", "variable" or "unused"; "" when not known."""


class GradientWarning(UserWarning):
    """A gradient that is ``None`` or missing for a reason that looks like a mistake, named with its line.

    ``tape.gradient`` returns ``None`` for a source the target does not depend on,
    as TensorFlow does; when the path was cut by a copy, an assign or a
    read-out, or the source was used but never watched, it also warns, saying
    which and where. ``variable_grads`` warns for a variable of ``var_list`` that
    gets no gradient. The message has the three parts of every microtape error.

    Examples:
        >>> import warnings
        >>> x = mt.scalar(2.0)
        >>> with mt.GradientTape() as tape:
        ...     tape.watch(x)
        ...     y = mt.tensor(x) * 3.0           # a copy of x: a tensor with no history
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     print(tape.gradient(y, x))
        None
        >>> print(str(caught[0].message).splitlines()[0])
        tape.gradient: source 0 (shape ()) gets None: mt.tensor(...) at <doctest microtape.errors.GradientWarning[2]>:3 copied a value computed from x into a new tensor with no history, and the target was computed from the copy.
    """


class GradientKeyError(MicrotapeError, KeyError):
    """A gradient was looked up for a variable that has none.

    It is a ``KeyError`` too, so ``grads.get(w)`` and ``w in grads`` behave
    as for any mapping.

    Examples:
        >>> a = mt.variable(mt.scalar(1.0), name="a_key")
        >>> unused = mt.variable(mt.scalar(1.0), name="unused_key")
        >>> _, gs = mt.variable_grads(lambda: a * 2.0, [a])
        >>> try:
        ...     gs[unused]
        ... except mt.GradientKeyError as err:
        ...     print(str(err).splitlines()[0])
        no gradient for Variable(1.0, shape=(), name='unused_key', trainable=True).
    """

    key: object

    def __str__(self) -> str:
        return self.message  # KeyError would show the repr of the message


class VariableError(MicrotapeError, ValueError):
    """A variable misused: a duplicate name, a bad ``trainable`` flag.

    Examples:
        >>> v = mt.variable(mt.scalar(1.0), name="only_one")
        >>> try:
        ...     mt.variable(mt.scalar(2.0), name="only_one")
        ... except mt.VariableError as err:
        ...     err.name
        'only_one'
    """

    name: str


class DisposedTensorError(MicrotapeError, RuntimeError):
    """A tensor was read after ``dispose()`` or after its tidy scope ended.

    The message keeps TensorFlow.js's phrase "Tensor is disposed". Inside
    :func:`~microtape.leak_check`, which records where each tensor is made,
    it also names that line (``made_at``, else None).

    Examples:
        >>> t = mt.tensor([1.0, 2.0])
        >>> t.dispose()
        >>> try:
        ...     t.data_sync()
        ... except mt.DisposedTensorError as err:
        ...     print(str(err).split(":")[0])
        Tensor is disposed
    """

    tensor_id: int
    op: str
    shape: tuple[int, ...]
    disposed_by: str
    made_at: str | None


class TidyError(MicrotapeError, TypeError):
    """``tidy`` was given something it cannot scope, such as a coroutine.

    Examples:
        >>> async def step() -> None: ...
        >>> try:
        ...     mt.tidy(step)
        ... except mt.TidyError:
        ...     print("refused")
        refused
    """


class UnsupportedAttributeError(MicrotapeError, AttributeError):
    """An attribute that PyTorch or NumPy tensors have and microtape's do not.

    ``t.backward()``, ``t.grad``, ``t.numpy()``, ``t.assign(...)`` on a
    tensor that is not a variable: the message says what microtape does
    instead. It is an ``AttributeError`` too, so ``hasattr(t, "grad")`` is
    False and ``getattr(t, "grad", None)`` is None, as before.

    Examples:
        >>> t = mt.tensor([1.0, 2.0])
        >>> try:
        ...     t.backward()
        ... except mt.UnsupportedAttributeError as err:
        ...     err.name
        'backward'
        >>> hasattr(t, "grad")
        False
    """

    name: str


class UnsupportedOperationError(MicrotapeError, TypeError):
    """An operation a tensor does not support, where NumPy or PyTorch would.

    ``len(t)``, ``t > 0``, ``t[0]``, ``for x in t``, or ``mt.Variable(...)``
    called directly. It is a ``TypeError`` too, as Python's own error for
    these would be.

    Examples:
        >>> t = mt.tensor([1.0, -2.0])
        >>> try:
        ...     t > 0
        ... except mt.UnsupportedOperationError as err:
        ...     print(str(err).splitlines()[-1])
          hint: t.greater(0)
    """

    op: str


class LeakError(MicrotapeError, RuntimeError):
    """``leak_check(on_leak="raise")`` found tensors that outlived the block.

    Examples:
        >>> try:
        ...     with mt.leak_check(on_leak="raise"):
        ...         kept_by_mistake = mt.ones((3,))
        ... except mt.LeakError as err:
        ...     err.count
        1
    """

    count: int
    groups: list[object]


class GradientCheckError(MicrotapeError, AssertionError):
    """Analytic gradients disagree with finite differences.

    It is an ``AssertionError`` too, so a failing check fails a test the way
    an ``assert`` would.

    Examples:
        >>> wrong = mt.custom_grad(lambda x: (x * x, lambda dy: dy * x))
        >>> try:
        ...     mt.check_grads(wrong, [mt.tensor([1.0, 2.0])]).raise_if_failed()
        ... except mt.GradientCheckError:
        ...     print("caught")
        caught
    """

    report: object
    culprit: object


class NumericsError(MicrotapeError, ArithmeticError):
    """``check_numerics`` found NaN or Inf values.

    Examples:
        >>> try:
        ...     mt.check_numerics(mt.tensor([1.0, float("nan")]), "loss")
        ... except mt.NumericsError as err:
        ...     print(str(err).splitlines()[0])
        loss : Tensor had NaN values
    """

    nans: int
    infs: int
    shape: tuple[int, ...]


class AnomalyError(MicrotapeError, ArithmeticError):
    """``detect_anomaly`` saw an op produce NaN or Inf, forward or backward.

    Examples:
        >>> with mt.detect_anomaly():
        ...     try:
        ...         mt.log(mt.tensor([-1.0]))
        ...     except mt.AnomalyError as err:
        ...         print(err.op, err.phase)
        log forward
    """

    op: str
    phase: str
    kind: str
    where: str
    cause: str
    masked_by: str
    """The masking op that hid the entries and passed them 0 (a masked-branch NaN), or ""."""
    hint: str
    """The fix: a line of code in the user's names where one does it, else advice."""


class CheckpointError(MicrotapeError, ValueError):
    """A checkpoint that cannot be written or read as asked.

    Raised for a file that is not a microtape checkpoint (not JSON,
    truncated, another format or version, NaN or text where numbers belong)
    and for one that does not fit the variables it is loaded into (a missing
    or unknown name, a different shape). Loading checks everything first, so
    after this error no variable has changed.

    Examples:
        >>> try:
        ...     mt.load_variables("no/such/checkpoint.json")
        ... except mt.CheckpointError as err:
        ...     print(str(err).splitlines()[0])
        cannot read checkpoint 'no/such/checkpoint.json': No such file or directory.
    """
