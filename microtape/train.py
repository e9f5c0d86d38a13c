"""Optimizers: ``mt.train.sgd``, ``momentum``, ``adagrad``, ``adadelta``, ``adam``, ``adamax``, ``rmsprop``.

Read after ``functional.py`` and ``memory.py``. These are TensorFlow.js's
optimizers (``tf.train.*``) with TF.js's update rules and defaults. Each
optimizer turns the gradients of :func:`~microtape.variable_grads` into new
values for the variables::

    value, grads = mt.variable_grads(loss)      # what minimize() does, spelled out
    opt.apply_gradients(grads)                  # w <- w - (something) * dw
    mt.dispose(grads)

The maths of one step is written on Python floats, entry by entry, in each
optimizer's ``_step`` with its formula above it, so it can be checked by eye.
No tensor is made during an update, which is why a training loop keeps
``mt.memory().num_tensors`` flat. State that lives between steps (a running
mean of the gradient, ...) is kept in *slots*: non-trainable variables named
as in TF.js (``"w/m"`` is Adam's first moment of ``w``), visible in
``mt.memory().num_variables``, in :attr:`Optimizer.slots` and in
:meth:`Optimizer.get_weights`. ``dispose()`` frees them.

Every call validates all of its input before it changes anything: a failed
``apply_gradients`` leaves every variable, every slot and the iteration count
as they were.
"""

from __future__ import annotations

import difflib
import math
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, Literal, TypeAlias, overload

from ._runtime import VARIABLES
from ._types import HasVariables, Shape
from .errors import InvalidArgumentError, ShapeError, explain
from .functional import GradMap, VariableGrads, variable_grads_as
from .memory import dispose as dispose_all
from .ops import _safe_div as _div
from .ops import _safe_sqrt as _sqrt
from .tensor import Tensor, _detached, scalar
from .variable import Variable, variable

__all__ = [
    "AdadeltaOptimizer",
    "AdagradOptimizer",
    "AdamOptimizer",
    "AdamaxOptimizer",
    "MomentumOptimizer",
    "Optimizer",
    "RMSPropOptimizer",
    "SGDOptimizer",
    "adadelta",
    "adagrad",
    "adam",
    "adamax",
    "momentum",
    "rmsprop",
    "sgd",
]

EPSILON: Final = 1e-7
"""What ``epsilon=None`` means: TF.js's ``ENGINE.backend.epsilon()`` for float32."""

ITER_NAME: Final = "iter"
"""Name of the iteration count in :meth:`Optimizer.get_weights` (as in TF.js)."""

Gradients: TypeAlias = (
    VariableGrads
    | Mapping[str, Tensor | None]
    | Mapping[Variable, Tensor | None]
    | Mapping[str | Variable, Tensor | None]
    | Sequence[tuple[Tensor | None, Variable | str]]
)
"""What :meth:`Optimizer.apply_gradients` accepts."""

Weights: TypeAlias = "Sequence[tuple[str, Tensor]] | Mapping[str, Tensor]"
"""What :meth:`Optimizer.set_weights` accepts (what ``get_weights`` returns)."""

_Entry: TypeAlias = "tuple[str, Shape, list[float]]"
"""One saved slot, without tensors: its TF.js name, shape and flat values."""

_NAN: Final = math.nan


# ── IEEE-754 scalar helpers: Python raises where a tensor framework gives inf/nan ──
# _div and _sqrt are the ops' own safe scalar functions (microtape.ops).


def _maximum(a: float, b: float) -> float:
    if a != a or b != b:
        return _NAN  # tf.maximum propagates NaN; Python's max() would not
    return a if a >= b else b


# ── validation helpers ─────────────────────────────────────────────────────────


def _hyper(api: str, what: str, value: object, ok: Callable[[float], bool], rule: str, hint: str) -> float:
    """Return ``value`` as a float, or raise a teaching error naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgumentError(
            explain(
                f"{api}: {what} must be a number, got {type(value).__name__}: {value!r}.",
                rule,
                hint,
            ),
            name=what,
            value=value,
        )
    number = float(value)
    if not math.isfinite(number) or not ok(number):
        raise InvalidArgumentError(explain(f"{api}: {what}={value!r} is out of range.", rule, hint), name=what, value=value)
    return number


def _flag(api: str, what: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(
            explain(
                f"{api}: {what} must be True or False, got {type(value).__name__}: {value!r}.",
                f"{what} switches a variant of the update rule on or off.",
                f"pass {what}=True or {what}=False.",
            ),
            name=what,
            value=value,
        )
    return value


def _learning_rate(api: str, value: object) -> float:
    return _hyper(
        api,
        "learning_rate",
        value,
        lambda v: v > 0.0,
        "The learning rate is the step size: a positive, finite number.",
        "try 0.1 for SGD or 0.001 for Adam, and lower it if the loss blows up.",
    )


def _unit(api: str, what: str, value: object, default: str, *, closed: bool = False) -> float:
    """A decay rate: in [0, 1), or [0, 1] when ``closed``."""
    interval = "[0, 1]" if closed else "[0, 1)"
    return _hyper(
        api,
        what,
        value,
        (lambda v: 0.0 <= v <= 1.0) if closed else (lambda v: 0.0 <= v < 1.0),
        f"{what} is the weight of the past in a running average: a number in {interval}.",
        f"the usual value is {default}.",
    )


def _epsilon(api: str, value: object) -> float:
    if value is None:
        return EPSILON
    return _hyper(
        api,
        "epsilon",
        value,
        lambda v: v >= 0.0,
        "epsilon keeps a denominator away from zero: a small non-negative number.",
        "leave it out (epsilon=None means 1e-7, as in TF.js).",
    )


def _non_negative(api: str, what: str, value: object, hint: str) -> float:
    return _hyper(api, what, value, lambda v: v >= 0.0, f"{what} must be a finite number >= 0.", hint)


def _variable_names_hint(name: str) -> str:
    close = difflib.get_close_matches(name, list(VARIABLES.keys()), n=3)
    if close:
        return f"did you mean {' or '.join(repr(c) for c in close)}?"
    return "pass the Variable itself, or the name of a variable that is alive."


@dataclass(slots=True)
class _SlotSet:
    """The slots of one variable: who owns them, and the slot variables by slot name."""

    owner: weakref.ref[Variable]
    variables: dict[str, Variable]


@dataclass(slots=True)
class _Plan:
    """A validated ``set_weights``: the iteration count and new slot values per variable."""

    iterations: int
    values: dict[str, tuple[Variable, dict[str, list[float]]]]


# ── the base class ─────────────────────────────────────────────────────────────


class Optimizer(ABC):
    """Base class of every optimizer (``tf.train.Optimizer`` in TF.js).

    A subclass lists its slot names and writes ``_step``: the update of one
    variable on flat lists of floats. The base class does the rest: it runs
    :func:`~microtape.variable_grads`, checks the gradients, keeps the slots,
    counts iterations and saves and restores its state.

    Examples:
        >>> w = mt.variable(mt.scalar(3.0))
        >>> opt = mt.train.sgd(0.25)
        >>> isinstance(opt, mt.train.Optimizer)
        True
        >>> opt.minimize(lambda: w * w)       # dw = 2w = 6, w <- 3 - 0.25 * 6
        >>> w.item(), opt.iterations
        (1.5, 1)
    """

    class_name: ClassVar[str] = "Optimizer"
    """The TF.js class name (``"Adam"``), stored in checkpoints."""

    def __init__(self, learning_rate: float) -> None:
        self._learning_rate = _learning_rate(self._api, learning_rate)
        self._iterations = 0
        self._slots: dict[str, _SlotSet] = {}

    # -- what a subclass provides -------------------------------------------

    @property
    def _api(self) -> str:
        return type(self).__name__

    @property
    def _slot_names(self) -> tuple[str, ...]:
        """Names of the per-variable state, in TF.js's ``getWeights`` order."""
        return ()

    def _slot_initial(self, slot: str) -> float:
        """The value a slot starts from (0 unless the optimizer says otherwise)."""
        return 0.0

    @abstractmethod
    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        """Return the new values of ``w``; replace each list in ``s`` by its new values.

        ``t`` is the number of this step, counting from 1.
        """

    @abstractmethod
    def get_config(self) -> dict[str, float | bool]:
        """The hyperparameters (``getConfig()`` in TF.js), with ``epsilon`` resolved.

        Examples:
            >>> mt.train.adam(0.01, epsilon=None).get_config()["epsilon"]
            1e-07
        """

    # -- public API ---------------------------------------------------------

    @property
    def learning_rate(self) -> float:
        """The step size; settable between steps (``setLearningRate`` in TF.js).

        Examples:
            >>> opt = mt.train.sgd(0.1)
            >>> opt.learning_rate = 0.05     # e.g. a schedule that decays it
            >>> opt.learning_rate
            0.05
            >>> try:
            ...     opt.learning_rate = -1
            ... except mt.InvalidArgumentError as err:
            ...     print(str(err).splitlines()[0])
            SGDOptimizer: learning_rate=-1 is out of range.
        """
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self._learning_rate = _learning_rate(self._api, value)

    @property
    def iterations(self) -> int:
        """How many times gradients were applied (``optimizer.iterations`` in TF.js).

        Examples:
            >>> w = mt.variable(mt.scalar(1.0))
            >>> opt = mt.train.adam(0.1)
            >>> for _ in range(3):
            ...     opt.minimize(lambda: w * w)
            >>> opt.iterations
            3
        """
        return self._iterations

    @property
    def slots(self) -> dict[str, dict[str, Variable]]:
        """The state kept between steps: variable name -> slot name -> slot variable.

        Slots are created on the first step that updates a variable. They are
        non-trainable variables owned by the optimizer: read them, do not
        dispose them (``opt.dispose()`` does). TF.js keeps the same state in
        private ``OptimizerVariable`` lists and shows it only through
        ``getWeights()``.

        Examples:
            >>> w = mt.variable(mt.tensor([1.0, -1.0]), name="w_slots")
            >>> opt = mt.train.momentum(0.1, 0.9)
            >>> opt.minimize(lambda: (w * w).sum())
            >>> opt.slots
            {'w_slots': {'momentum': Variable([2.0, -2.0], shape=(2,), name='w_slots/momentum', trainable=False)}}
        """
        return {name: dict(s.variables) for name, s in self._slots.items() if s.owner() is not None}

    def compute_gradients(
        self, f: Callable[[], Tensor], var_list: Sequence[Variable] | HasVariables | None = None
    ) -> VariableGrads:
        """Run ``f`` and return its value and gradients (``computeGradients`` in TF.js).

        The same as :func:`~microtape.variable_grads`; the caller owns the
        tensors it returns.

        Examples:
            >>> w = mt.variable(mt.scalar(3.0))
            >>> value, grads = mt.train.sgd(0.1).compute_gradients(lambda: w * w)
            >>> value.item(), grads[w].item()
            (9.0, 6.0)
        """
        use = (
            "compute_gradients(f) calls f(), which computes the loss from variables (w here)",
            "value, grads = opt.compute_gradients(lambda: (w * w).sum())",
        )
        return variable_grads_as(f"{self._api}.compute_gradients", f, self._var_list(var_list), use)

    @overload
    def minimize(
        self,
        f: Callable[[], Tensor],
        return_cost: Literal[False] = False,
        var_list: Sequence[Variable] | HasVariables | None = None,
    ) -> None: ...

    @overload
    def minimize(
        self,
        f: Callable[[], Tensor],
        return_cost: Literal[True],
        var_list: Sequence[Variable] | HasVariables | None = None,
    ) -> Tensor: ...

    @overload
    def minimize(
        self,
        f: Callable[[], Tensor],
        return_cost: bool,
        var_list: Sequence[Variable] | HasVariables | None = None,
    ) -> Tensor | None: ...

    def minimize(
        self,
        f: Callable[[], Tensor],
        return_cost: bool = False,
        var_list: Sequence[Variable] | HasVariables | None = None,
    ) -> Tensor | None:
        """Take one step downhill on the scalar ``f()`` (``optimizer.minimize`` in TF.js).

        Runs :func:`~microtape.variable_grads` on ``f`` (every trainable
        variable ``f`` reads, or only those in ``var_list``), applies the
        gradients and disposes them. The cost is disposed too, unless
        ``return_cost=True``: then it is returned and yours to dispose.

        Args:
            f: A function of no arguments that returns a scalar loss.
            return_cost: Whether to return the loss.
            var_list: The variables to update (a list, or an object with a
                ``variables()`` method); default: all that ``f`` uses.

        Returns:
            The loss before the step, if ``return_cost``; otherwise None.

        Raises:
            GradientError: ``f`` returned a non-scalar, or no trainable
                variable is connected to it. Nothing is changed then.

        Examples:
            >>> x = mt.tensor([1.0, 2.0, 3.0, 4.0])
            >>> y = mt.tensor([1.0, 3.0, 5.0, 7.0])
            >>> w, b = mt.variable(mt.scalar(0.0)), mt.variable(mt.scalar(0.0))
            >>> opt = mt.train.sgd(0.1)
            >>> for step in range(500):
            ...     opt.minimize(lambda: ((w * x + b - y) ** 2).mean())
            >>> round(w.item(), 3), round(b.item(), 3)
            (2.0, -1.0)
            >>> loss = opt.minimize(lambda: ((w * x + b - y) ** 2).mean(), return_cost=True)
            >>> loss.item() < 1e-6
            True
            >>> loss.dispose()
        """
        given: object = return_cost  # annotated bool; TF.js habits pass the variables here
        if isinstance(given, (list, tuple)) or callable(getattr(given, "variables", None)):
            raise InvalidArgumentError(
                explain(
                    f"{self._api}.minimize: the second argument is return_cost, and it got the "
                    f"{type(given).__name__} {given!r:.60}.",
                    "The order is minimize(f, return_cost=False, var_list=None), so pass the variables by keyword.",
                    "opt.minimize(lambda: (w * w).sum(), var_list=[w])",
                ),
                value=given,
            )
        wanted = _flag(f"{self._api}.minimize", "return_cost", return_cost)
        use = (
            "minimize(f) records f() on a tape; f computes the loss from variables (w here)",
            "opt.minimize(lambda: (w * w).sum())",
        )
        value, grads = variable_grads_as(f"{self._api}.minimize", f, self._var_list(var_list), use)
        try:
            self.apply_gradients(grads)
        except BaseException:
            value.dispose()
            raise
        finally:
            dispose_all(grads)
        if wanted:
            return value
        value.dispose()
        return None

    def apply_gradients(self, grads: Gradients) -> None:
        """Update variables from their gradients (``applyGradients`` in TF.js).

        ``grads`` is what :func:`~microtape.variable_grads` returns (or its
        ``.grads``), a dict keyed by variables or their names, or a list of
        ``(gradient, variable)`` pairs as in TensorFlow for Python. A
        ``None`` gradient is skipped, as in TF.js. Everything is checked
        first; on any error nothing changes. The caller still owns (and
        disposes) the gradient tensors.

        Raises:
            ShapeError: a gradient's shape differs from its variable's.
            InvalidArgumentError: an unknown name, a non-tensor gradient, a
                non-trainable or repeated variable, or no gradient at all.

        Examples:
            >>> w = mt.variable(mt.tensor([1.0, 2.0]), name="w_apply")
            >>> opt = mt.train.sgd(0.5)
            >>> dw = mt.tensor([1.0, 1.0])
            >>> opt.apply_gradients({"w_apply": dw})        # by name
            >>> opt.apply_gradients({w: dw})                # by variable
            >>> opt.apply_gradients([(dw, w)])              # (gradient, variable) pairs
            >>> w.data_sync()
            [-0.5, 0.5]
            >>> try:
            ...     opt.apply_gradients({w: mt.tensor([1.0, 2.0, 3.0])})
            ... except mt.ShapeError as err:
            ...     print(str(err).splitlines()[0])
            SGDOptimizer.apply_gradients: the gradient for 'w_apply' has shape (3,), but the variable has shape (2,).
            >>> w.data_sync()                               # unchanged
            [-0.5, 0.5]
        """
        items = self._collect(grads)
        t = self._iterations + 1
        # 1. compute every new value on plain lists (nothing can fail after this)
        updates: list[tuple[Variable, list[float], dict[str, list[float]]]] = []
        for var, g in items:
            slot_set = self._live_slots(var)
            s = {
                name: slot_set.variables[name].data_sync() if slot_set else [self._slot_initial(name)] * var.size
                for name in self._slot_names
            }
            updates.append((var, self._step(var.data_sync(), g, s, t), s))
        # 2. write them; values carry their exact shape, so a (0, 3) variable is
        # written like any other. A step is atomic: should a write still fail,
        # every variable and slot written so far is put back.
        undo: list[tuple[Variable, list[float] | None]] = []
        made: list[str] = []
        try:
            for var, new_w, s in updates:
                undo.append((var, var._data))
                var.assign(_detached(new_w, var.shape))
                slot_set = self._live_slots(var)
                if slot_set is None:
                    self._make_slots(var, s)
                    made.append(var.name)
                else:
                    for name, data in s.items():
                        undo.append((slot_set.variables[name], slot_set.variables[name]._data))
                        slot_set.variables[name].assign(_detached(data, var.shape))
        except BaseException:
            for v, old in reversed(undo):
                v._data = old
            for name in made:
                for slot_var in self._slots.pop(name).variables.values():
                    slot_var.dispose()
            raise
        self._iterations = t

    def get_weights(self) -> list[tuple[str, Tensor]]:
        """The iteration count and every slot, as ``(name, tensor)`` pairs (``getWeights`` in TF.js).

        The first pair is ``("iter", scalar)``; then the slots, grouped by
        slot kind as TF.js orders them (all ``/m`` then all ``/v`` for Adam).
        The tensors are fresh copies: dispose them with ``mt.dispose(weights)``.

        Examples:
            >>> w = mt.variable(mt.tensor([1.0, 2.0]), name="w_getw")
            >>> opt = mt.train.adam(0.1)
            >>> opt.minimize(lambda: (w * w).sum())
            >>> weights = opt.get_weights()
            >>> [name for name, _ in weights]
            ['iter', 'w_getw/m', 'w_getw/v']
            >>> weights[0][1].item(), [round(v, 6) for v in weights[1][1].data_sync()]
            (1.0, [0.2, 0.4])
            >>> mt.dispose(weights)
        """
        iterations, entries = self._export()
        pairs: list[tuple[str, Tensor]] = [(ITER_NAME, scalar(float(iterations)))]
        pairs.extend((name, Tensor(data, shape)) for name, shape, data in entries)
        return pairs

    def set_weights(self, weights: Weights) -> None:
        """Restore the iteration count and slots from ``get_weights()`` (``setWeights`` in TF.js).

        Names are ``"iter"`` and ``"<variable name>/<slot>"``; every named
        variable must be alive and have the slot's shape, and a variable
        needs all of its slots. Everything is checked first; on any error
        nothing changes. The previous state is replaced.

        Raises:
            InvalidArgumentError: a missing ``"iter"``, an unknown slot or
                variable name, a missing slot.
            ShapeError: a slot whose shape differs from its variable's.

        Examples:
            >>> w = mt.variable(mt.tensor([1.0, 2.0]), name="w_setw")
            >>> first = mt.train.momentum(0.1, 0.5)
            >>> first.minimize(lambda: (w * w).sum())
            >>> saved = first.get_weights()
            >>> second = mt.train.momentum(0.1, 0.5)   # e.g. after a restart
            >>> second.set_weights(saved)
            >>> second.iterations, second.slots["w_setw"]["momentum"].data_sync()
            (1, [2.0, 4.0])
            >>> mt.dispose(saved); first.dispose()
        """
        api = f"{self._api}.set_weights"
        pairs: list[object]  # checked one by one below: callers may pass anything
        if isinstance(weights, Mapping):
            pairs = list(weights.items())
        elif isinstance(weights, (list, tuple)):
            pairs = list(weights)
        else:
            raise InvalidArgumentError(
                explain(
                    f"{api}: weights must be a list of (name, tensor) pairs or a dict, got {type(weights).__name__}.",
                    "set_weights takes what get_weights returns.",
                    "pass opt.set_weights(other.get_weights()).",
                ),
                value=weights,
            )
        iterations: object = None
        entries: list[_Entry] = []
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise InvalidArgumentError(
                    explain(
                        f"{api}: weights[{i}] is {pair!r:.60}, not a (name, tensor) pair.",
                        "Each weight is a pair of its name and a tensor.",
                        "pass what get_weights() returns.",
                    ),
                    index=i,
                )
            name, t = pair
            if not isinstance(name, str) or not isinstance(t, Tensor):
                raise InvalidArgumentError(
                    explain(
                        f"{api}: weights[{i}] is ({type(name).__name__}, {type(t).__name__}), "
                        "not (str, Tensor).",
                        "Each weight is a pair of its name and a tensor.",
                        "pass what get_weights() returns.",
                    ),
                    index=i,
                )
            if name == ITER_NAME:
                if iterations is not None:
                    raise InvalidArgumentError(
                        explain(f"{api}: 'iter' appears twice.", "There is one iteration count.", "pass it once."),
                        name=name,
                    )
                iterations = t.data_sync()[0] if t.size == 1 else t.shape
            else:
                entries.append((name, t.shape, t.data_sync()))
        self._install(self._plan(iterations, entries, api))

    def dispose(self) -> None:
        """Free every slot variable and start afresh (``optimizer.dispose()`` in TF.js).

        Afterwards the optimizer is as new: no slots, ``iterations == 0``.

        Examples:
            >>> w = mt.variable(mt.tensor([1.0, 2.0]))
            >>> before = mt.memory().num_variables
            >>> opt = mt.train.adam(0.1)
            >>> opt.minimize(lambda: (w * w).sum())
            >>> mt.memory().num_variables - before          # w/m and w/v
            2
            >>> opt.dispose()
            >>> mt.memory().num_variables - before, opt.iterations
            (0, 0)
        """
        for slot_set in self._slots.values():
            for v in slot_set.variables.values():
                v.dispose()
        self._slots.clear()
        self._iterations = 0

    def __repr__(self) -> str:
        config = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({config}, iterations={self._iterations})"

    # -- internals ------------------------------------------------------------

    def _var_list(self, var_list: Sequence[Variable] | HasVariables | None) -> Sequence[Variable] | None:
        """``var_list`` as variable_grads takes it; an object with ``variables()`` is expanded."""
        if var_list is None or isinstance(var_list, Sequence):
            return var_list  # variable_grads checks what the sequence holds
        variables = getattr(var_list, "variables", None)
        if not callable(variables):
            raise InvalidArgumentError(
                explain(
                    f"{self._api}: var_list must be a list of variables, got {type(var_list).__name__}.",
                    "var_list restricts which variables are updated.",
                    "pass var_list=[w, b], or an object with a variables() method.",
                ),
                value=var_list,
            )
        return list(variables())

    def _collect(self, grads: object) -> list[tuple[Variable, list[float]]]:
        """Check every (variable, gradient) and read the gradients, changing nothing."""
        api = f"{self._api}.apply_gradients"
        raw: list[tuple[object, object]] = []
        if isinstance(grads, VariableGrads):
            grads = grads.grads
        if isinstance(grads, GradMap):
            raw = [(v, g) for v, g in grads.pairs()]
        elif isinstance(grads, Mapping):
            raw = [(key, g) for key, g in grads.items()]
        elif isinstance(grads, (list, tuple)):
            for i, pair in enumerate(grads):
                if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                    raise InvalidArgumentError(
                        explain(
                            f"{api}: item {i} is {pair!r:.60}, not a (gradient, variable) pair.",
                            "A list holds (gradient, variable) pairs, as in TensorFlow's apply_gradients.",
                            "pass [(dw, w), (db, b)], or the dict from mt.variable_grads(f).grads.",
                        ),
                        index=i,
                    )
                g, key = pair
                if isinstance(g, Variable) and not isinstance(key, Variable) and isinstance(key, Tensor):
                    raise InvalidArgumentError(
                        explain(
                            f"{api}: item {i} is (variable {g.name!r}, gradient): the order is reversed.",
                            "Pairs are (gradient, variable), as in TensorFlow's apply_gradients(zip(grads, vars)).",
                            "swap them: [(dw, w)]; or pass the GradMap itself: opt.apply_gradients(grads).",
                        ),
                        index=i,
                    )
                raw.append((key, g))
        else:
            raise InvalidArgumentError(
                explain(
                    f"{api}: got {type(grads).__name__}, which holds no gradients I can read.",
                    "apply_gradients takes the result of mt.variable_grads (or its .grads), a dict keyed "
                    "by variables or names, or a list of (gradient, variable) pairs.",
                    "value, grads = mt.variable_grads(loss); opt.apply_gradients(grads)",
                ),
                value=grads,
            )
        items: list[tuple[Variable, list[float]]] = []
        seen: set[str] = set()
        for key, g in raw:
            var = self._resolve(key, api)
            if var.name in seen:
                raise InvalidArgumentError(
                    explain(
                        f"{api}: variable {var.name!r} has two gradients.",
                        "Each variable gets one gradient per step.",
                        "add them first: (dw1 + dw2, w).",
                    ),
                    name=var.name,
                )
            seen.add(var.name)
            if g is None:
                continue
            if not isinstance(g, Tensor):
                raise InvalidArgumentError(
                    explain(
                        f"{api}: the gradient for {var.name!r} is a {type(g).__name__} ({g!r:.40}), not a Tensor.",
                        "Gradients are tensors with the variable's shape.",
                        f"wrap it: mt.tensor(values, shape={var.shape}).",
                    ),
                    name=var.name,
                    value=g,
                )
            if g.shape != var.shape:
                raise ShapeError(
                    explain(
                        f"{api}: the gradient for {var.name!r} has shape {g.shape}, "
                        f"but the variable has shape {var.shape}.",
                        "A gradient has exactly the shape of its variable (dL/dw_i for every entry w_i).",
                        "check which gradient belongs to which variable, and reduce over batch axes "
                        f"so it has shape {var.shape}.",
                    ),
                    name=var.name,
                    shapes=(g.shape, var.shape),
                )
            items.append((var, g.data_sync()))  # raises DisposedTensorError for a disposed gradient
        if not items:
            raise InvalidArgumentError(
                explain(
                    f"{api}: no gradients provided for any variable.",
                    "apply_gradients needs at least one (variable, gradient) with a gradient.",
                    "check that the loss depends on the variables (mt.variable_grads says which ones).",
                )
            )
        return items

    def _resolve(self, key: object, api: str) -> Variable:
        if isinstance(key, Variable):
            var = key
        elif isinstance(key, str):
            found = VARIABLES.get(key)
            if found is None or found.is_disposed:
                raise InvalidArgumentError(
                    explain(
                        f"{api}: no variable named {key!r} is alive.",
                        "Gradients keyed by name update the variable of that name.",
                        _variable_names_hint(key),
                    ),
                    name=key,
                )
            var = found
        else:
            raise InvalidArgumentError(
                explain(
                    f"{api}: {key!r:.40} ({type(key).__name__}) is neither a Variable nor a variable name.",
                    "Only variables can be updated; a plain tensor is a constant.",
                    "make it a variable: w = mt.variable(t), and key the gradient by w or w.name.",
                ),
                value=key,
            )
        var.data_sync()  # raises DisposedTensorError for a disposed variable
        if not var.trainable:
            raise InvalidArgumentError(
                explain(
                    f"{api}: variable {var.name!r} is not trainable.",
                    "Optimizers update trainable variables only.",
                    f"set {var.name}.trainable = True if it is a parameter.",
                ),
                name=var.name,
            )
        return var

    def _live_slots(self, var: Variable) -> _SlotSet | None:
        """The slots of ``var``, or None; slots of a gone variable of that name are freed."""
        slot_set = self._slots.get(var.name)
        if slot_set is None:
            return None
        if slot_set.owner() is var:
            return slot_set
        for v in slot_set.variables.values():
            v.dispose()
        del self._slots[var.name]
        return None

    def _make_slots(self, var: Variable, values: Mapping[str, list[float]]) -> None:
        made: dict[str, Variable] = {}
        for slot in self._slot_names:
            base = f"{var.name}/{slot}"  # TF.js's name; a suffix only if another optimizer took it
            name, k = base, 0
            while name in VARIABLES:
                k += 1
                name = f"{base}_{k}"
            made[slot] = variable(_detached(values[slot], var.shape), trainable=False, name=name)
        self._slots[var.name] = _SlotSet(weakref.ref(var), made)

    def _export(self) -> tuple[int, list[_Entry]]:
        """The state as plain data, in TF.js's order (by slot kind, then variable)."""
        alive = [(name, s) for name, s in self._slots.items() if s.owner() is not None]
        entries: list[_Entry] = []
        for slot in self._slot_names:
            for name, slot_set in alive:
                v = slot_set.variables[slot]
                entries.append((f"{name}/{slot}", v.shape, v.data_sync()))
        return self._iterations, entries

    def _plan(self, iterations: object, entries: Sequence[_Entry], api: str) -> _Plan:
        """Validate a state to restore; raise before anything changes."""
        if iterations is None:
            raise InvalidArgumentError(
                explain(
                    f"{api}: no 'iter' entry.",
                    "The weights start with ('iter', scalar): the iteration count.",
                    "pass what get_weights() returns.",
                )
            )
        if not isinstance(iterations, (int, float)) or isinstance(iterations, bool) or not (
            math.isfinite(iterations) and iterations >= 0 and iterations == int(iterations)
        ):
            raise InvalidArgumentError(
                explain(
                    f"{api}: 'iter' is {iterations!r}, not a count.",
                    "The iteration count is a whole number >= 0, stored as a scalar.",
                    "pass ('iter', mt.scalar(n)).",
                ),
                value=iterations,
            )
        values: dict[str, tuple[Variable, dict[str, list[float]]]] = {}
        for name, shape, data in entries:
            owner, _, slot = name.rpartition("/")
            if slot not in self._slot_names or not owner:
                expected = ", ".join(f"'<variable>/{s}'" for s in self._slot_names) or "only 'iter'"
                raise InvalidArgumentError(
                    explain(
                        f"{api}: {name!r} is not a slot of {self._api}.",
                        f"{self._api} keeps {expected}.",
                        "restore weights saved by the same kind of optimizer (and the same centered flag).",
                    ),
                    name=name,
                )
            var = VARIABLES.get(owner)
            if var is None or var.is_disposed:
                raise InvalidArgumentError(
                    explain(
                        f"{api}: slot {name!r} belongs to a variable {owner!r} that is not alive.",
                        "Slots are restored for existing variables, matched by name.",
                        "create (or load) the variables first; " + _variable_names_hint(owner),
                    ),
                    name=name,
                )
            if tuple(shape) != var.shape or len(data) != var.size:
                raise ShapeError(
                    explain(
                        f"{api}: slot {name!r} has shape {tuple(shape)}, but variable {owner!r} has shape {var.shape}.",
                        "A slot has exactly the shape of its variable.",
                        "restore weights saved for these same variables.",
                    ),
                    name=name,
                    shapes=(tuple(shape), var.shape),
                )
            _, slot_values = values.setdefault(owner, (var, {}))
            if slot in slot_values:
                raise InvalidArgumentError(
                    explain(f"{api}: slot {name!r} appears twice.", "Each slot has one value.", "pass it once."),
                    name=name,
                )
            slot_values[slot] = list(data)
        for owner, (_, slot_values) in values.items():
            missing = [s for s in self._slot_names if s not in slot_values]
            if missing:
                raise InvalidArgumentError(
                    explain(
                        f"{api}: variable {owner!r} lacks slot(s) {', '.join(repr(f'{owner}/{s}') for s in missing)}.",
                        f"{self._api} keeps {len(self._slot_names)} slot(s) per variable; all are restored together.",
                        "pass every weight that get_weights() returned.",
                    ),
                    name=owner,
                )
        return _Plan(int(iterations), values)

    def _install(self, plan: _Plan) -> None:
        """Replace the state by a validated plan (cannot fail)."""
        for name in [n for n in self._slots if n not in plan.values]:
            for v in self._slots.pop(name).variables.values():
                v.dispose()
        for var, slot_values in plan.values.values():
            slot_set = self._live_slots(var)
            if slot_set is None:
                self._make_slots(var, slot_values)
            else:
                for slot, data in slot_values.items():
                    slot_set.variables[slot].assign(_detached(data, var.shape))
        self._iterations = plan.iterations


# ── the optimizers ─────────────────────────────────────────────────────────────


class SGDOptimizer(Optimizer):
    """Plain gradient descent (``tf.train.sgd`` / ``SGDOptimizer`` in TF.js).

    The update, for every entry of every variable, with learning rate lr::

        w <- w - lr * g

    It keeps no slots.

    Examples:
        >>> x = mt.variable(mt.scalar(4.0))
        >>> opt = mt.train.sgd(0.1)
        >>> opt.minimize(lambda: x * x)           # g = 2x = 8, x <- 4 - 0.1 * 8
        >>> round(x.item(), 10)
        3.2
    """

    class_name: ClassVar[str] = "SGD"

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr = self._learning_rate
        return [wi - lr * gi for wi, gi in zip(w, g)]

    def get_config(self) -> dict[str, float | bool]:
        """The hyperparameters (``getConfig()`` in TF.js).

        Examples:
            >>> mt.train.sgd(0.1).get_config()
            {'learning_rate': 0.1}
        """
        return {"learning_rate": self._learning_rate}


class MomentumOptimizer(Optimizer):
    """Gradient descent with momentum (``tf.train.momentum`` / ``MomentumOptimizer`` in TF.js).

    With learning rate lr, momentum mu and the slot ``a`` (named
    ``"<var>/momentum"``, starting at 0)::

        a <- mu * a + g
        w <- w - lr * a                   (use_nesterov=False)
        w <- w - lr * (g + mu * a)        (use_nesterov=True, with the new a)

    Examples:
        >>> x = mt.variable(mt.tensor([1.0, 2.0]))
        >>> opt = mt.train.momentum(0.1, 0.5)
        >>> opt.minimize(lambda: (x * x).sum())     # a = g = [2, 4]
        >>> opt.minimize(lambda: (x * x).sum())     # a = 0.5 * [2, 4] + [1.6, 3.2]
        >>> [round(v, 10) for v in x.data_sync()]
        [0.54, 1.08]
    """

    class_name: ClassVar[str] = "Momentum"

    def __init__(self, learning_rate: float, momentum: float, use_nesterov: bool = False) -> None:
        super().__init__(learning_rate)
        self._momentum = _non_negative(self._api, "momentum", momentum, "the usual value is 0.9.")
        self._use_nesterov = _flag(self._api, "use_nesterov", use_nesterov)

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("momentum",)

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr, mu = self._learning_rate, self._momentum
        a = [mu * ai + gi for ai, gi in zip(s["momentum"], g)]
        s["momentum"] = a
        if self._use_nesterov:
            return [wi - lr * (gi + mu * ai) for wi, gi, ai in zip(w, g, a)]
        return [wi - lr * ai for wi, ai in zip(w, a)]

    def get_config(self) -> dict[str, float | bool]:
        """The hyperparameters (``getConfig()`` in TF.js).

        Examples:
            >>> mt.train.momentum(0.1, 0.9, use_nesterov=True).get_config()
            {'learning_rate': 0.1, 'momentum': 0.9, 'use_nesterov': True}
        """
        return {"learning_rate": self._learning_rate, "momentum": self._momentum, "use_nesterov": self._use_nesterov}


class AdagradOptimizer(Optimizer):
    """Adagrad: a step size per entry that shrinks with the gradients seen (``tf.train.adagrad``).

    With learning rate lr, the slot ``acc`` (``"<var>/accumulator"``,
    starting at ``initial_accumulator_value``) and eps = 1e-7 (fixed, as in
    TF.js's ``AdagradOptimizer``)::

        acc <- acc + g^2
        w   <- w - lr * g / sqrt(acc + eps)

    Examples:
        >>> x = mt.variable(mt.tensor([1.0, 2.0]))
        >>> opt = mt.train.adagrad(0.1)
        >>> opt.minimize(lambda: (x * x).sum())     # acc = 0.1 + [4, 16]
        >>> [round(v, 6) for v in x.data_sync()]
        [0.901227, 1.900311]
    """

    class_name: ClassVar[str] = "Adagrad"

    def __init__(self, learning_rate: float, initial_accumulator_value: float = 0.1) -> None:
        super().__init__(learning_rate)
        self._initial = _non_negative(
            self._api, "initial_accumulator_value", initial_accumulator_value, "the usual value is 0.1."
        )

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("accumulator",)

    def _slot_initial(self, slot: str) -> float:
        return self._initial

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr = self._learning_rate
        acc = [ai + gi * gi for ai, gi in zip(s["accumulator"], g)]
        s["accumulator"] = acc
        return [wi - lr * _div(gi, _sqrt(ai + EPSILON)) for wi, gi, ai in zip(w, g, acc)]

    def get_config(self) -> dict[str, float | bool]:
        """The hyperparameters (``getConfig()`` in TF.js).

        Examples:
            >>> mt.train.adagrad(0.1).get_config()
            {'learning_rate': 0.1, 'initial_accumulator_value': 0.1}
        """
        return {"learning_rate": self._learning_rate, "initial_accumulator_value": self._initial}


class AdadeltaOptimizer(Optimizer):
    """Adadelta (``tf.train.adadelta`` / ``AdadeltaOptimizer`` in TF.js).

    With learning rate lr, decay rho and the slots ``ag``
    (``"<var>/accum_grad"``) and ``au`` (``"<var>/accum_var"``), both
    starting at 0::

        u  <- g * sqrt(au + eps) / sqrt(ag + eps)      (ag from before this step)
        ag <- rho * ag + (1 - rho) * g^2
        au <- rho * au + (1 - rho) * u^2
        w  <- w - lr * u

    As in TF.js, ``u`` divides by the *previous* ``ag``; Keras and
    TensorFlow for Python use the updated one. So the first step is
    ``w - lr * g`` here.

    Examples:
        >>> x = mt.variable(mt.tensor([1.0, 2.0]))
        >>> opt = mt.train.adadelta(0.1, rho=0.95)
        >>> opt.minimize(lambda: (x * x).sum())     # u = g = [2, 4]
        >>> [round(v, 6) for v in x.data_sync()]
        [0.8, 1.6]
    """

    class_name: ClassVar[str] = "Adadelta"

    def __init__(self, learning_rate: float = 0.001, rho: float = 0.95, epsilon: float | None = None) -> None:
        super().__init__(learning_rate)
        self._rho = _unit(self._api, "rho", rho, "0.95", closed=True)
        self._epsilon = _epsilon(self._api, epsilon)

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("accum_grad", "accum_var")

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr, rho, eps = self._learning_rate, self._rho, self._epsilon
        ag, au = s["accum_grad"], s["accum_var"]
        u = [gi * _div(_sqrt(aui + eps), _sqrt(agi + eps)) for gi, agi, aui in zip(g, ag, au)]
        s["accum_grad"] = [rho * agi + (1.0 - rho) * gi * gi for agi, gi in zip(ag, g)]
        s["accum_var"] = [rho * aui + (1.0 - rho) * ui * ui for aui, ui in zip(au, u)]
        return [wi - lr * ui for wi, ui in zip(w, u)]

    def get_config(self) -> dict[str, float | bool]:
        """The hyperparameters (``getConfig()`` in TF.js).

        Examples:
            >>> mt.train.adadelta().get_config()
            {'learning_rate': 0.001, 'rho': 0.95, 'epsilon': 1e-07}
        """
        return {"learning_rate": self._learning_rate, "rho": self._rho, "epsilon": self._epsilon}


class AdamOptimizer(Optimizer):
    """Adam (``tf.train.adam`` / ``AdamOptimizer`` in TF.js).

    With learning rate lr, decay rates b1 and b2, step number t (1, 2, ...)
    and the slots ``m`` (``"<var>/m"``) and ``v`` (``"<var>/v"``), both
    starting at 0::

        m <- b1 * m + (1 - b1) * g
        v <- b2 * v + (1 - b2) * g^2
        w <- w - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)

    Dividing by ``1 - b^t`` (the bias correction) undoes the pull of the
    zero start, so the first step moves each entry by about lr.

    Examples:
        >>> x = mt.variable(mt.tensor([2.0, 4.0]))
        >>> opt = mt.train.adam(0.1, beta1=0.8, beta2=0.9)
        >>> opt.minimize(lambda: (x * x).sum())
        >>> [round(v, 6) for v in x.data_sync()]     # each entry moved by lr
        [1.9, 3.9]
    """

    class_name: ClassVar[str] = "Adam"

    def __init__(
        self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, epsilon: float | None = None
    ) -> None:
        super().__init__(learning_rate)
        self._beta1 = _unit(self._api, "beta1", beta1, "0.9")
        self._beta2 = _unit(self._api, "beta2", beta2, "0.999")
        self._epsilon = _epsilon(self._api, epsilon)

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("m", "v")

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr, b1, b2, eps = self._learning_rate, self._beta1, self._beta2, self._epsilon
        m = [b1 * mi + (1.0 - b1) * gi for mi, gi in zip(s["m"], g)]
        v = [b2 * vi + (1.0 - b2) * gi * gi for vi, gi in zip(s["v"], g)]
        s["m"], s["v"] = m, v
        c1, c2 = 1.0 - b1**t, 1.0 - b2**t
        return [wi - lr * _div(mi / c1, _sqrt(vi / c2) + eps) for wi, mi, vi in zip(w, m, v)]

    def get_config(self) -> dict[str, float | bool]:
        """The hyperparameters (``getConfig()`` in TF.js).

        Examples:
            >>> mt.train.adam().get_config()
            {'learning_rate': 0.001, 'beta1': 0.9, 'beta2': 0.999, 'epsilon': 1e-07}
        """
        return {"learning_rate": self._learning_rate, "beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon}


class AdamaxOptimizer(Optimizer):
    """Adamax, Adam with an infinity norm (``tf.train.adamax`` / ``AdamaxOptimizer`` in TF.js).

    With learning rate lr, decay rates b1 and b2, step number t (1, 2, ...),
    ``decay`` and the slots ``m`` (``"<var>/m"``) and ``u`` (named
    ``"<var>/v"`` as in TF.js), both starting at 0::

        lr_t = lr / (1 + decay * (t - 1))
        m <- b1 * m + (1 - b1) * g
        u <- max(b2 * u, |g|)
        w <- w - lr_t / (1 - b1^t) * m / (u + eps)

    TF.js has no ``getWeights``/``setWeights`` for Adamax; microtape does.

    Examples:
        >>> x = mt.variable(mt.tensor([2.0, 4.0]))
        >>> opt = mt.train.adamax(0.1, beta1=0.8, beta2=0.9, decay=0.1)
        >>> opt.minimize(lambda: (x * x).sum())
        >>> [round(v, 6) for v in x.data_sync()]
        [1.9, 3.9]
    """

    class_name: ClassVar[str] = "Adamax"

    def __init__(
        self,
        learning_rate: float = 0.002,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float | None = None,
        decay: float = 0.0,
    ) -> None:
        super().__init__(learning_rate)
        self._beta1 = _unit(self._api, "beta1", beta1, "0.9")
        self._beta2 = _unit(self._api, "beta2", beta2, "0.999", closed=True)
        self._epsilon = _epsilon(self._api, epsilon)
        self._decay = _non_negative(self._api, "decay", decay, "leave it at 0.0, or try 1e-4 to slow down over time.")

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("m", "v")

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        b1, b2, eps = self._beta1, self._beta2, self._epsilon
        lr_t = self._learning_rate / (1.0 + self._decay * (t - 1))
        m = [b1 * mi + (1.0 - b1) * gi for mi, gi in zip(s["m"], g)]
        u = [_maximum(b2 * ui, abs(gi)) for ui, gi in zip(s["v"], g)]
        s["m"], s["v"] = m, u
        scale = lr_t / (1.0 - b1**t)
        return [wi - scale * _div(mi, ui + eps) for wi, mi, ui in zip(w, m, u)]

    def get_config(self) -> dict[str, float | bool]:
        """The hyperparameters (``getConfig()`` in TF.js).

        Examples:
            >>> mt.train.adamax().get_config()
            {'learning_rate': 0.002, 'beta1': 0.9, 'beta2': 0.999, 'epsilon': 1e-07, 'decay': 0.0}
        """
        return {
            "learning_rate": self._learning_rate,
            "beta1": self._beta1,
            "beta2": self._beta2,
            "epsilon": self._epsilon,
            "decay": self._decay,
        }


class RMSPropOptimizer(Optimizer):
    """RMSProp (``tf.train.rmsprop`` / ``RMSPropOptimizer`` in TF.js).

    With learning rate lr, ``decay`` d, ``momentum`` mu and the slots ``ms``
    (``"<var>/rms"``), ``mom`` (``"<var>/momentum"``) and, when
    ``centered``, ``mg`` (``"<var>/mg"``), all starting at 0::

        ms  <- d * ms + (1 - d) * g^2
        mg  <- d * mg + (1 - d) * g                          (centered only)
        mom <- mu * mom + lr * g / sqrt(ms + eps)            (plain)
        mom <- mu * mom + lr * g / sqrt(ms - mg^2 + eps)     (centered)
        w   <- w - mom

    Centered RMSProp divides by an estimate of the gradient's variance
    instead of its second moment. TF.js's code computes
    ``sqrt(ms - (mg^2 + eps))``, which its own tests describe as
    ``+ eps`` and which turns a gradient that is exactly 0 into NaN;
    microtape adds eps as TensorFlow for Python and Keras do.

    Examples:
        >>> x = mt.variable(mt.tensor([1.0, 2.0]))
        >>> opt = mt.train.rmsprop(0.1, decay=0.95, momentum=0.1)
        >>> opt.minimize(lambda: (x * x).sum())     # ms = 0.05 * [4, 16]
        >>> [round(v, 5) for v in x.data_sync()]
        [0.55279, 1.55279]
    """

    class_name: ClassVar[str] = "RMSProp"

    def __init__(
        self,
        learning_rate: float,
        decay: float = 0.9,
        momentum: float = 0.0,
        epsilon: float | None = None,
        centered: bool = False,
    ) -> None:
        super().__init__(learning_rate)
        self._decay = _unit(self._api, "decay", decay, "0.9", closed=True)
        self._momentum = _non_negative(self._api, "momentum", momentum, "leave it at 0.0, or try 0.9.")
        self._epsilon = _epsilon(self._api, epsilon)
        self._centered = _flag(self._api, "centered", centered)

    @property
    def _slot_names(self) -> tuple[str, ...]:
        return ("rms", "momentum", "mg") if self._centered else ("rms", "momentum")

    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        lr, d, mu, eps = self._learning_rate, self._decay, self._momentum, self._epsilon
        ms = [d * msi + (1.0 - d) * gi * gi for msi, gi in zip(s["rms"], g)]
        s["rms"] = ms
        if self._centered:
            mg = [d * mgi + (1.0 - d) * gi for mgi, gi in zip(s["mg"], g)]
            s["mg"] = mg
            denominators = [msi - mgi * mgi + eps for msi, mgi in zip(ms, mg)]
        else:
            denominators = [msi + eps for msi in ms]
        mom = [mu * mi + lr * _div(gi, _sqrt(di)) for mi, gi, di in zip(s["momentum"], g, denominators)]
        s["momentum"] = mom
        return [wi - mi for wi, mi in zip(w, mom)]

    def get_config(self) -> dict[str, float | bool]:
        """The hyperparameters (``getConfig()`` in TF.js).

        Examples:
            >>> mt.train.rmsprop(0.01).get_config()
            {'learning_rate': 0.01, 'decay': 0.9, 'momentum': 0.0, 'epsilon': 1e-07, 'centered': False}
        """
        return {
            "learning_rate": self._learning_rate,
            "decay": self._decay,
            "momentum": self._momentum,
            "epsilon": self._epsilon,
            "centered": self._centered,
        }


# ── factories: the names users type, as in tf.train.* ─────────────────────────


def sgd(learning_rate: float) -> SGDOptimizer:
    """Make a gradient-descent optimizer (``tf.train.sgd``): ``w <- w - lr * g``.

    Examples:
        >>> mt.train.sgd(0.1)
        SGDOptimizer(learning_rate=0.1, iterations=0)
    """
    return SGDOptimizer(learning_rate)


def momentum(learning_rate: float, momentum: float, use_nesterov: bool = False) -> MomentumOptimizer:
    """Make a momentum optimizer (``tf.train.momentum``); see :class:`MomentumOptimizer`.

    Examples:
        >>> mt.train.momentum(0.1, 0.9)
        MomentumOptimizer(learning_rate=0.1, momentum=0.9, use_nesterov=False, iterations=0)
    """
    return MomentumOptimizer(learning_rate, momentum, use_nesterov)


def adagrad(learning_rate: float, initial_accumulator_value: float = 0.1) -> AdagradOptimizer:
    """Make an Adagrad optimizer (``tf.train.adagrad``); see :class:`AdagradOptimizer`.

    Examples:
        >>> mt.train.adagrad(0.5)
        AdagradOptimizer(learning_rate=0.5, initial_accumulator_value=0.1, iterations=0)
    """
    return AdagradOptimizer(learning_rate, initial_accumulator_value)


def adadelta(learning_rate: float = 0.001, rho: float = 0.95, epsilon: float | None = None) -> AdadeltaOptimizer:
    """Make an Adadelta optimizer (``tf.train.adadelta``); see :class:`AdadeltaOptimizer`.

    Examples:
        >>> mt.train.adadelta()
        AdadeltaOptimizer(learning_rate=0.001, rho=0.95, epsilon=1e-07, iterations=0)
    """
    return AdadeltaOptimizer(learning_rate, rho, epsilon)


def adam(
    learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, epsilon: float | None = None
) -> AdamOptimizer:
    """Make an Adam optimizer (``tf.train.adam``); see :class:`AdamOptimizer`.

    Examples:
        >>> mt.train.adam()
        AdamOptimizer(learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-07, iterations=0)
        >>> try:
        ...     mt.train.adam(beta1=1.5)
        ... except mt.InvalidArgumentError as err:
        ...     print(err)
        AdamOptimizer: beta1=1.5 is out of range.
          beta1 is the weight of the past in a running average: a number in [0, 1).
          hint: the usual value is 0.9.
    """
    return AdamOptimizer(learning_rate, beta1, beta2, epsilon)


def adamax(
    learning_rate: float = 0.002,
    beta1: float = 0.9,
    beta2: float = 0.999,
    epsilon: float | None = None,
    decay: float = 0.0,
) -> AdamaxOptimizer:
    """Make an Adamax optimizer (``tf.train.adamax``); see :class:`AdamaxOptimizer`.

    Examples:
        >>> mt.train.adamax(decay=0.01)
        AdamaxOptimizer(learning_rate=0.002, beta1=0.9, beta2=0.999, epsilon=1e-07, decay=0.01, iterations=0)
    """
    return AdamaxOptimizer(learning_rate, beta1, beta2, epsilon, decay)


def rmsprop(
    learning_rate: float,
    decay: float = 0.9,
    momentum: float = 0.0,
    epsilon: float | None = None,
    centered: bool = False,
) -> RMSPropOptimizer:
    """Make an RMSProp optimizer (``tf.train.rmsprop``); see :class:`RMSPropOptimizer`.

    Examples:
        >>> mt.train.rmsprop(0.01, centered=True)
        RMSPropOptimizer(learning_rate=0.01, decay=0.9, momentum=0.0, epsilon=1e-07, centered=True, iterations=0)
    """
    return RMSPropOptimizer(learning_rate, decay, momentum, epsilon, centered)

