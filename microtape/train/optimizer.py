"""The optimizer machinery: the ``Optimizer`` base class, its slots, ``apply_gradients`` and ``minimize``.

The seven
optimizers that build on it are in ``optimizers.py``, and ``mt.train``
gathers both. These
are TensorFlow.js's optimizers (``tf.train.*``) with TF.js's update rules and
defaults. Each optimizer turns the gradients of
:func:`~microtape.variable_grads` into new values for the variables::

    value, grads = mt.variable_grads(loss)      # what minimize() does, spelled out
    opt.apply_gradients(grads)                  # w <- w - (something) * dw
    mt.dispose(grads)

The maths of one step is written on Python floats, entry by entry, in each
optimizer's ``_step`` with its formula above it, so it can be checked by eye.
No tensor is made during an update, which is why a training loop keeps
``mt.memory().num_tensors`` flat. State that lives between steps (a running
mean of the gradient, ...) is kept in *slots*: non-trainable variables named
as in TF.js (``"w/m"`` is Adam's first moment of ``w``), visible in
``mt.memory().num_variables``, in :attr:`~microtape.train.Optimizer.slots` and in
:meth:`~microtape.train.Optimizer.get_weights`. ``dispose()`` frees them.

Every call validates all of its input before it changes anything: a failed
``apply_gradients`` leaves every variable, every slot and the iteration count
as they were.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal, Protocol, TypeAlias, overload

from ..views import habits
from ..engine import arena
from ..errors import N_, InvalidArgumentError, explain
from .validate import check_flag, check_learning_rate, collect_gradients
from .slots import ITER_NAME, SlotKeeper, export_state, install_state, plan_restore, read_weights
from ..autodiff.functional import VariableGrads, variable_grads_as
from ..engine.memory import dispose as dispose_all
from ..ops.creation import scalar
from ..engine.arena import TensorBase, new
from ..engine.tensor import Tensor
from ..engine.variable import HasVariables, Variable

__all__ = ["Optimizer", "OptimizerName"]

OptimizerName: TypeAlias = Literal["Optimizer", "SGD", "Momentum", "Adagrad", "Adadelta", "Adam", "Adamax", "RMSProp"]
"""An optimizer's TF.js class name (``opt.class_name``), as a checkpoint records it."""

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


class UpdateWatcher(Protocol):
    """An observer told of each optimizer update as one instruction (``mt.function``'s
    tracer, ``replay/tracer.py``), and asked to look away while the optimizer reads
    and writes its own state."""

    def on_update(
        self, owner: object, apply: Callable[[Any, list[Any], list[list[float]]], None],
        variables: Sequence[TensorBase], grads: Sequence[TensorBase], label: str,
    ) -> None: ...

    def on_setting(self, owner: object, name: str) -> None:
        """The traced code read the setting ``name`` of ``owner`` (``learning_rate``, ``get_config``):
        a Python value the program depends on."""

    def pause(self) -> None: ...

    def resume(self) -> None: ...


def update_watcher() -> UpdateWatcher | None:
    """The observer of this context that watches updates, if any (none: the cost of a lookup)."""
    for obs in arena.STATE.get().observers:
        if getattr(obs, "traces", False):
            return obs  # type: ignore[return-value]  # has traces=True: mt.function's tracer
    return None

# ── the base class ─────────────────────────────────────────────────────────────


class Optimizer(SlotKeeper, ABC):
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

    class_name: ClassVar[OptimizerName] = "Optimizer"
    """The TF.js class name (``"Adam"``), stored in checkpoints."""

    config_fields: ClassVar[tuple[str, ...]] = ("learning_rate",)
    """The hyperparameters :meth:`get_config` reports, in TF.js's order."""

    def __init__(self, learning_rate: float) -> None:
        super().__init__()  # no iterations, no slots (state.py)
        self._learning_rate = check_learning_rate(self._api, learning_rate)

    # -- what a subclass provides (and ``_slot_names``: see state.py) ---------

    def _slot_initial(self, slot: str) -> float:
        """The value a slot starts from (0 unless the optimizer says otherwise)."""
        return 0.0

    @abstractmethod
    def _step(self, w: list[float], g: list[float], s: dict[str, list[float]], t: int) -> list[float]:
        """Return the new values of ``w``; replace each list in ``s`` by its new values.

        ``t`` is the number of this step, counting from 1.
        """

    def get_config(self) -> dict[str, float | bool]:
        """The hyperparameters (``getConfig()`` in TF.js), with ``epsilon`` resolved.

        The names come from the subclass's ``config_fields``; each one is kept
        in the attribute of the same name with a leading underscore.

        Examples:
            >>> mt.train.adam(0.01, epsilon=None).get_config()["epsilon"]
            1e-07
            >>> mt.train.momentum(0.1, 0.9, use_nesterov=True).get_config()
            {'learning_rate': 0.1, 'momentum': 0.9, 'use_nesterov': True}
        """
        watcher = update_watcher()
        if watcher is not None:
            watcher.on_setting(self, "get_config")
        config: dict[str, float | bool] = {}
        for name in self.config_fields:
            value = getattr(self, "_" + name)
            assert isinstance(value, (int, float))
            config[name] = value
        return config

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
        watcher = update_watcher()
        if watcher is not None:  # mt.function is tracing code that reads it: a value the program depends on
            watcher.on_setting(self, "learning_rate")
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self._learning_rate = check_learning_rate(self._api, value)

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
        watcher = update_watcher()
        if watcher is not None:
            watcher.on_setting(self, "iterations")
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
            N_("compute_gradients(f) calls f(), which computes the loss from variables (w here)"),
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
                    N_("{0}.minimize: the second argument is return_cost, and it got the {1} {2}.").format(
                        self._api, type(given).__name__, repr(given)[:60]),
                    N_("The order is minimize(f, return_cost=False, var_list=None), so pass the variables by keyword."),
                    "opt.minimize(lambda: (w * w).sum(), var_list=[w])",
                ),
                value=given,
            )
        wanted = check_flag(f"{self._api}.minimize", "return_cost", return_cost)
        use = (
            N_("minimize(f) records f() on a tape; f computes the loss from variables (w here)."),
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
        tracer = update_watcher()
        if tracer is None:
            self._apply_items(collect_gradients(f"{self._api}.apply_gradients", grads))
            return
        # mt.function is tracing: the update is one instruction of its program, and
        # what it reads and writes (checked lists, slots) is not the traced code's
        tensors: list[Tensor] = []
        tracer.pause()
        try:
            items = collect_gradients(f"{self._api}.apply_gradients", grads, tensors)
        finally:
            tracer.resume()
        tracer.on_update(self, _apply_lists, [v for v, _ in items], tensors, f"{self.class_name}.apply_gradients")
        tracer.pause()
        try:
            self._apply_items(items)
        finally:
            tracer.resume()

    def _apply_items(self, items: list[tuple[Variable, list[float]]]) -> None:
        """``apply_gradients`` once the gradients are checked lists (and what a replay runs)."""
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
        undo: list[tuple[Variable, list[float]]] = []
        made: list[str] = []
        try:
            for var, new_w, s in updates:
                undo.append((var, var.data_sync()))
                var.assign(new(Tensor, new_w, var.shape, "tensor", arena=False))
                slot_set = self._live_slots(var)
                if slot_set is None:
                    self._make_slots(var, s)
                    made.append(var.name)
                else:
                    for name, data in s.items():
                        slot_var = slot_set.variables[name]
                        undo.append((slot_var, slot_var.data_sync()))
                        slot_var.assign(new(Tensor, data, var.shape, "tensor", arena=False))
        except BaseException:
            for v, old in reversed(undo):
                v.assign(new(Tensor, old, v.shape, "tensor", arena=False))
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
        iterations, entries = export_state(self)
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
        iterations, entries = read_weights(api, weights)
        install_state(self, plan_restore(self, iterations, entries, api))

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
                    N_("{0}: var_list must be a list of variables, got {1}.").format(self._api, type(var_list).__name__),
                    N_("var_list restricts which variables are updated."),
                    N_("pass var_list=[w, b], or an object with a variables() method."),
                ),
                value=var_list,
            )
        return list(variables())


habits.install_optimizer(Optimizer)  # opt.zero_grad() and opt.step() say what to write instead


def _apply_lists(opt: Optimizer, variables: list[Variable], grads: list[list[float]]) -> None:
    """One optimizer update of an ``mt.function`` replay: the gradients are the program's lists."""
    opt._apply_items(list(zip(variables, grads)))
