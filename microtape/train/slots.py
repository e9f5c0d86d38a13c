"""An optimizer's state as plain data: the iteration count and its slots, saved and restored.

``optimizer.py``'s ``Optimizer`` builds on ``SlotKeeper``. Every optimizer keeps, between steps, an
iteration count and *slots*: per-variable state (a running mean of the
gradient, ...) held in non-trainable variables named as in TF.js (``"w/m"``
is Adam's first moment of ``w``). This module owns them: it makes and finds
the slots of a variable, and turns the whole state into plain data
(``(name, shape, values)`` entries) and back, for ``get_weights`` and
``set_weights`` and for checkpoints (``checkpoint.py``).

Restoring is two steps, so a failure changes nothing: ``plan_restore()``
checks everything and returns a ``RestorePlan``; ``install_state()``
applies it and cannot fail.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from ..engine import user_line
from ..engine.arena import new
from ..debug.leaks import STATE_OF
from ..engine.tensor import Tensor
from ..engine.types import Shape
from ..engine.variable import VARIABLES, Variable, variable
from ..errors import N_, InvalidArgumentError, ShapeError, explain
from .validate import variable_names_hint

__all__ = ["ITER_NAME", "RestorePlan", "SlotKeeper", "export_state", "install_state", "plan_restore", "read_weights"]

ITER_NAME: Final = "iter"
"""Name of the iteration count in :meth:`~microtape.train.Optimizer.get_weights` (as in TF.js)."""

_Entry: TypeAlias = "tuple[str, Shape, list[float]]"
"""One saved slot, without tensors: its TF.js name, shape and flat values."""


@dataclass(slots=True)
class _SlotSet:
    """The slots of one variable: who owns them, and the slot variables by slot name."""

    owner: weakref.ref[Variable]
    variables: dict[str, Variable]


@dataclass(slots=True)
class RestorePlan:
    """A validated state to restore: the iteration count and the new slot values per variable.

    Made by ``plan_restore`` (which checks everything), used by
    ``install_state`` (which cannot fail); ``set_weights`` and
    ``load_variables`` restore an optimizer in these two steps.
    """

    iterations: int
    values: dict[str, tuple[Variable, dict[str, list[float]]]]



_OWNERS: Final[weakref.WeakKeyDictionary[Variable, tuple[str, str]]] = weakref.WeakKeyDictionary()
"""Every slot variable alive, with the optimizer that made it and the user's line that ran that step."""


def _slot_state(v: Variable) -> tuple[str, str, str] | None:
    """What ``leak_check`` reports for a slot made inside its block: (optimizer, slot name, line)."""
    found = _OWNERS.get(v)
    return None if found is None else (found[0], v.name, found[1])


STATE_OF.append(_slot_state)


class SlotKeeper:
    """What every optimizer keeps between steps: its iteration count and the slots of each variable.

    ``_slots`` maps a variable's name to its ``_SlotSet``; slots are made
    on the first step that updates the variable and freed when it is gone.
    ``Optimizer`` (``optimizer.py``) is the one subclass; its subclasses name
    their slots in ``_slot_names``.
    """

    def __init__(self) -> None:
        self._iterations = 0
        self._slots: dict[str, _SlotSet] = {}

    @property
    def _api(self) -> str:
        return type(self).__name__

    @property
    def _slot_names(self) -> tuple[str, ...]:
        """Names of the per-variable state, in TF.js's ``getWeights`` order."""
        return ()

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
            made[slot] = variable(new(Tensor, values[slot], var.shape, "tensor", arena=False), trainable=False, name=name)
            _OWNERS[made[slot]] = (self._api, user_line.user_frame_line())
        self._slots[var.name] = _SlotSet(weakref.ref(var), made)


# ── the state as plain data: get_weights, set_weights and checkpoints ─────────


def read_weights(api: str, weights: object) -> tuple[object, list[_Entry]]:
    """The iteration count (unchecked: ``plan_restore`` checks it) and the slot entries of ``set_weights``'s pairs."""
    pairs: list[object]  # checked one by one below: callers may pass anything
    if isinstance(weights, Mapping):
        pairs = list(weights.items())
    elif isinstance(weights, (list, tuple)):
        pairs = list(weights)
    else:
        raise InvalidArgumentError(
            explain(
                N_("{0}: weights must be a list of (name, tensor) pairs or a dict, got {1}.").format(api, type(weights).__name__),
                N_("set_weights takes what get_weights returns."),
                N_("pass opt.set_weights(other.get_weights())."),
            ),
            value=weights,
        )
    iterations: object = None
    entries: list[_Entry] = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise InvalidArgumentError(
                explain(
                    N_("{0}: weights[{1}] is {2}, not a (name, tensor) pair.").format(api, i, repr(pair)[:60]),
                    N_("Each weight is a pair of its name and a tensor."),
                    N_("pass what get_weights() returns."),
                ),
                index=i,
            )
        name, t = pair
        if not isinstance(name, str) or not isinstance(t, Tensor):
            raise InvalidArgumentError(
                explain(
                    N_("{0}: weights[{1}] is ({2}, {3}), not (str, Tensor).").format(api, i, type(name).__name__, type(t).__name__),
                    N_("Each weight is a pair of its name and a tensor."),
                    N_("pass what get_weights() returns."),
                ),
                index=i,
            )
        if name == ITER_NAME:
            if iterations is not None:
                raise InvalidArgumentError(
                    explain(N_("{0}: 'iter' appears twice.").format(api), N_("There is one iteration count."), N_("pass it once.")),
                    name=name,
                )
            iterations = t.data_sync()[0] if t.size == 1 else t.shape
        else:
            entries.append((name, t.shape, t.data_sync()))
    return iterations, entries


def export_state(optimizer: SlotKeeper, owners: Mapping[int, str] | None = None) -> tuple[int, list[_Entry]]:
    """The iteration count and every live slot as plain data, in TF.js's order (by slot kind, then variable).

    Slots are named after their variable's name; with ``owners`` (variable id -> the
    name it is saved under, as a checkpoint's dict keys), only the slots of those
    variables, under those names.
    """
    alive: list[tuple[str, _SlotSet]] = []
    for name, s in optimizer._slots.items():
        owner = s.owner()
        if owner is not None and (owners is None or owner.id in owners):
            alive.append((name if owners is None else owners[owner.id], s))
    entries: list[_Entry] = []
    for slot in optimizer._slot_names:
        for name, slot_set in alive:
            v = slot_set.variables[slot]
            entries.append((f"{name}/{slot}", v.shape, v.data_sync()))
    return optimizer._iterations, entries


def plan_restore(
    optimizer: SlotKeeper, iterations: object, entries: Sequence[_Entry], api: str,
    owners: Mapping[str, Variable] | None = None,
) -> RestorePlan:
    """Check a state to restore into ``optimizer``; raise before anything changes.

    A slot's owner is the live variable of that name (``set_weights``, as in
    TF.js) or, with ``owners`` (a checkpoint's names -> the variables loaded
    into), that variable: never another one that happens to share the name.
    Slots of names not in ``owners`` are skipped (their variables were not loaded).
    """
    if iterations is None:
        raise InvalidArgumentError(
            explain(
                N_("{0}: no 'iter' entry.").format(api),
                N_("The weights start with ('iter', scalar): the iteration count."),
                N_("pass what get_weights() returns."),
            )
        )
    if not isinstance(iterations, (int, float)) or isinstance(iterations, bool) or not (
        math.isfinite(iterations) and iterations >= 0 and iterations == int(iterations)
    ):
        raise InvalidArgumentError(
            explain(
                N_("{0}: 'iter' is {1}, not a count.").format(api, repr(iterations)),
                N_("The iteration count is a whole number >= 0, stored as a scalar."),
                N_("pass ('iter', mt.scalar(n))."),
            ),
            value=iterations,
        )
    values: dict[str, tuple[Variable, dict[str, list[float]]]] = {}
    for name, shape, data in entries:
        owner, _, slot = name.rpartition("/")
        if slot not in optimizer._slot_names or not owner:
            expected = ", ".join(f"'<variable>/{s}'" for s in optimizer._slot_names) or N_("only 'iter'")
            raise InvalidArgumentError(
                explain(
                    N_("{0}: {1} is not a slot of {2}.").format(api, repr(name), optimizer._api),
                    N_("{0} keeps {1}.").format(optimizer._api, expected),
                    N_("restore weights saved by the same kind of optimizer (and the same centered flag)."),
                ),
                name=name,
            )
        if owners is not None and owner not in owners:
            continue
        var = owners[owner] if owners is not None else VARIABLES.get(owner)
        if var is None or var.is_disposed:
            raise InvalidArgumentError(
                explain(
                    N_("{0}: slot {1} belongs to a variable {2} that is not alive.").format(api, repr(name), repr(owner)),
                    N_("Slots are restored for existing variables, matched by name."),
                    N_("create (or load) the variables first; {0}").format(variable_names_hint(owner)),
                ),
                name=name,
            )
        if tuple(shape) != var.shape or len(data) != var.size:
            raise ShapeError(
                explain(
                    N_("{0}: slot {1} has shape {2}, but variable {3} has shape {4}.").format(api, repr(name), tuple(shape), repr(owner), var.shape),
                    N_("A slot has exactly the shape of its variable."),
                    N_("restore weights saved for these same variables."),
                ),
                name=name,
                shapes=(tuple(shape), var.shape),
            )
        _, slot_values = values.setdefault(var.name, (var, {}))  # by the live name, as _slots
        if slot in slot_values:
            raise InvalidArgumentError(
                explain(N_("{0}: slot {1} appears twice.").format(api, repr(name)), N_("Each slot has one value."), N_("pass it once.")),
                name=name,
            )
        slot_values[slot] = list(data)
    for owner, (var, slot_values) in values.items():
        owner = next((k for k, v in owners.items() if v is var), owner) if owners else owner  # as the file names it
        missing = [s for s in optimizer._slot_names if s not in slot_values]
        if missing:
            raise InvalidArgumentError(
                explain(
                    N_("{0}: variable {1} lacks slot(s) {2}.").format(api, repr(owner), ", ".join(repr(f"{owner}/{s}") for s in missing)),
                    N_("{0} keeps {1} slot(s) per variable; all are restored together.").format(optimizer._api, len(optimizer._slot_names)),
                    N_("pass every weight that get_weights() returned."),
                ),
                name=owner,
            )
    return RestorePlan(int(iterations), values)


def install_state(optimizer: SlotKeeper, plan: RestorePlan) -> None:
    """Replace the state of ``optimizer`` by a checked plan (cannot fail)."""
    for name in [n for n in optimizer._slots if n not in plan.values]:
        for v in optimizer._slots.pop(name).variables.values():
            v.dispose()
    for var, slot_values in plan.values.values():
        slot_set = optimizer._live_slots(var)
        if slot_set is None:
            optimizer._make_slots(var, slot_values)
        else:
            for slot, data in slot_values.items():
                slot_set.variables[slot].assign(new(Tensor, data, var.shape, "tensor", arena=False))
    optimizer._iterations = plan.iterations
