"""Checkpoints: ``save_variables`` and ``load_variables``, as plain JSON.

A checkpoint is a UTF-8 JSON file that a person can open and
read, with one variable per line::

    {
      "format": "microtape-checkpoint",
      "version": 1,
      "variables": [
        {"name": "w", "shape": [2], "trainable": true, "data": [2.0, -1.0]},
        {"name": "b", "shape": [], "trainable": true, "data": [0.5]}
      ],
      "optimizer": {"class": "Adam", "config": {"learning_rate": 0.01, ...}, "iterations": 3,
                    "slots": [{"name": "w/m", "shape": [2], "data": [0.1, 0.2]}, ...]}
    }

* ``format`` is always ``"microtape-checkpoint"`` and ``version`` is ``1``;
* each variable has its ``name`` (unique in the file), its ``shape`` (a list
  of ints >= 0; ``[]`` for a scalar), its ``trainable`` flag (recorded for
  reference: loading into a variable keeps that variable's own flag) and its
  ``data``: the values in row-major order as one flat list of finite numbers;
* ``optimizer`` is present only when saved with ``optimizer=``: the TF.js
  class name, the hyperparameters (for reference; loading does not change
  them), the iteration count and the slots of the saved variables
  (``"<name>/<slot>"``, where ``<name>`` is the name the variable is saved
  under: the dict key when saved from a dict). Loading attaches them to the
  variables loaded into under those names, never to another live variable
  that happens to have the name.

Writes are atomic: the text is written to a temporary file in the same
directory, flushed to disk (``fsync``) and renamed over the old file with
``os.replace``, so a crash leaves the previous checkpoint or the new one,
never half of one. The file keeps the permissions of the one it replaces; a
new file gets those ``open(path, "w")`` would give it. Loads trust nothing:
the size, the nesting depth, the JSON, every field, name, shape and number
are checked, and only then are variables assigned, all of them or none. NaN
and Infinity are refused in both directions (JSON has no such numbers).
There is no ``pickle`` and no ``eval``: a checkpoint is data, never code.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import Final, TypeAlias, overload

from ..engine.types import Shape
from .atomic_write import write_atomically
from .checkpoint_format import FORMAT, VERSION, OptimizerState, Record, load_error, parse_checkpoint, read_text
from ..errors import N_, CheckpointError, MicrotapeError, explain
from ..language import tr
from .optimizer import Optimizer
from .slots import RestorePlan, export_state, install_state, plan_restore
from ..engine.arena import new
from ..engine.tensor import Tensor
from ..engine.variable import Variable

__all__ = ["FORMAT", "MAX_BYTES", "VERSION", "load_variables", "save_variables"]

MAX_BYTES: Final = 64 * 1024 * 1024
"""Default size limit of :func:`load_variables` (64 MiB)."""

PathLike: TypeAlias = "str | os.PathLike[str]"
VariablesArg: TypeAlias = "Sequence[Variable] | Mapping[str, Tensor]"
IntoArg: TypeAlias = "Sequence[Variable] | Mapping[str, Variable]"

# ── saving ─────────────────────────────────────────────────────────────────────


def save_variables(path: PathLike, variables: VariablesArg, *, optimizer: Optimizer | None = None) -> None:
    """Write variables (and an optimizer's state) to a JSON checkpoint, atomically.

    Like saving a model's weights in TF.js (``model.save``), for plain
    variables. The file format is described in :mod:`microtape.train.checkpoint_format`.
    Everything is checked before the file is touched; the previous file at
    ``path`` survives any failure, even a crash in the middle of writing.
    If ``path`` is a symbolic link it is followed, as ``open(path, "w")``
    would: the file it points to is replaced and the link stays.

    Args:
        path: Where to write, for example ``"run1.json"``.
        variables: A list of variables (saved under their names), or a dict
            name -> variable or tensor (saved under the dict's keys, which
            stay stable when generated names like ``Variable_7`` change).
        optimizer: Also save this optimizer's iteration count and the slots
            of the saved variables, under the names the variables are saved
            under (``w/m`` for ``{"w": w1}``, whatever ``w1.name`` is).

    Raises:
        CheckpointError: nothing to save, repeated names, a NaN or Inf
            value, or the file cannot be written.

    Examples:
        >>> import pathlib, tempfile
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = pathlib.Path(folder.name) / "model.json"
        >>> w = mt.variable(mt.tensor([2.0, -1.0]), name="w_save")
        >>> mt.save_variables(path, [w])
        >>> print(path.read_text(), end="")
        {
          "format": "microtape-checkpoint",
          "version": 1,
          "variables": [
            {"name": "w_save", "shape": [2], "trainable": true, "data": [2.0, -1.0]}
          ]
        }
        >>> folder.cleanup()
    """
    where = _path(path, "save_variables")
    records, owners = _records_to_save(variables, where)
    lines = [
        "{",
        f'  "format": {json.dumps(FORMAT)},',
        f'  "version": {VERSION},',
        '  "variables": [',
        ",\n".join("    " + _dumps(_record_dict(r, with_trainable=True), where) for r in records),
        "  ]" + ("," if optimizer is not None else ""),
    ]
    if optimizer is not None:
        lines.append('  "optimizer": ' + _dumps(_optimizer_dict(optimizer, where, owners), where))
    lines.append("}")
    write_atomically(where, "\n".join(lines) + "\n")


def _path(path: object, api: str) -> str:
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not path:
        raise CheckpointError(
            explain(
                N_('{0}: path must be a non-empty str or os.PathLike, got {1}: {2}.').format(api, type(path).__name__, f'{path!r:.60}'),
                N_('A checkpoint is a file on disk.'),
                N_('pass a file name: mt.{0}("checkpoint.json", ...).').format(api),
            ),
            path=path,
        )
    return path


def _records_to_save(variables: object, where: str) -> tuple[list[Record], dict[int, str]]:
    """The records to write, and each saved variable's id -> the name it is saved under (for its slots)."""
    items: list[tuple[str, Tensor, bool]] = []
    if isinstance(variables, Mapping):
        for key, t in variables.items():
            if not isinstance(key, str) or not key:
                raise _save_error(where, N_('the dict key {0} is not a non-empty str.').format(f'{key!r:.40}'), N_('Keys are the names saved in the file.'), N_('use names: {"w": w, "b": b}.'))
            if not isinstance(t, Tensor):
                raise _save_error(where, N_('{0} is a {1}, not a tensor or variable.').format(repr(key), type(t).__name__), N_('Only tensors hold values to save.'), N_('pass the variable itself: {{{0}: {1}}}.').format(repr(key), key))
            items.append((key, t, t.trainable if isinstance(t, Variable) else False))
    elif isinstance(variables, (list, tuple)):
        for i, v in enumerate(variables):
            if not isinstance(v, Variable):
                raise _save_error(
                    where,
                    N_('item {0} is a {1}, not a Variable.').format(i, type(v).__name__),
                    N_("A list is saved under the variables' names; a plain tensor has no name."),
                    N_('name it with a dict: mt.save_variables(path, {"x": x}).'),
                )
            items.append((v.name, v, v.trainable))
    else:
        raise _save_error(
            where,
            N_('variables must be a list of variables or a dict name -> variable, got {0}.').format(type(variables).__name__),
            N_('save_variables writes named values.'),
            N_("pass [w, b] or {'w': w, 'b': b}."),
        )
    if not items:
        raise _save_error(where, N_('there are no variables to save.'), N_('A checkpoint holds at least one variable.'), N_('pass [w, b].'))
    records: list[Record] = []
    seen: set[str] = set()
    owners: dict[int, str] = {}
    for name, t, trainable in items:
        if name in seen:
            raise _save_error(where, N_('the name {0} appears twice.').format(repr(name)), N_('Names in a checkpoint are unique.'), N_('save each variable once.'))
        seen.add(name)
        if isinstance(t, Variable):
            owners.setdefault(t.id, name)  # its slots are saved under this name (the first, if saved twice)
        records.append(_finite_record(name, t.shape, trainable, t.data_sync(), where, "variable"))
    return records, owners


def _finite_record(name: str, shape: Shape, trainable: bool, data: list[float], where: str, kind: str) -> Record:
    for i, v in enumerate(data):
        if not math.isfinite(v):
            raise _save_error(
                where,
                N_('{0} {1} holds {2} at flat index {3}.').format(kind, repr(name), v, i),
                N_('A checkpoint stores finite numbers only (JSON has no NaN or Infinity); saving a broken model would only hide the problem.'),
                N_("find where it came from with mt.check_numerics(t, 'name') or mt.detect_anomaly()."),
            )
    return Record(name, shape, trainable, data)


def _record_dict(r: Record, *, with_trainable: bool) -> dict[str, object]:
    d: dict[str, object] = {"name": r.name, "shape": list(r.shape)}
    if with_trainable:
        d["trainable"] = r.trainable
    d["data"] = r.data
    return d


def _optimizer_dict(optimizer: object, where: str, owners: dict[int, str]) -> dict[str, object]:
    if not isinstance(optimizer, Optimizer):
        raise _save_error(
            where,
            N_('optimizer must be a microtape optimizer, got {0}.').format(type(optimizer).__name__),
            N_("Only an optimizer's slots and iteration count can be saved with the variables."),
            N_('pass optimizer=opt where opt = mt.train.adam(...).'),
        )
    iterations, entries = export_state(optimizer, owners)  # the slots of the saved variables, under their saved names
    slots = [_finite_record(name, shape, False, data, where, "optimizer slot") for name, shape, data in entries]
    return {
        "class": optimizer.class_name,
        "config": optimizer.get_config(),
        "iterations": iterations,
        "slots": [_record_dict(s, with_trainable=False) for s in slots],
    }


def _dumps(obj: object, where: str) -> str:
    try:
        return json.dumps(obj, allow_nan=False)
    except ValueError as err:  # a non-finite number slipped through: refuse, never write it
        raise _save_error(where, N_('cannot encode as JSON: {0}.').format(err), N_('Checkpoints hold finite numbers.'), N_('check the values with mt.check_numerics.')) from err


def _save_error(where: str, what: str, rule: str, hint: str) -> CheckpointError:
    what = tr(N_("save_variables({0}): {1}")).format(repr(where), tr(what))  # the part translated first: its own template wins
    return CheckpointError(explain(what, rule, hint), path=where)


# ── loading ────────────────────────────────────────────────────────────────────


@overload
def load_variables(
    path: PathLike,
    into: None = None,
    *,
    optimizer: Optimizer | None = None,
    strict: bool = True,
    max_bytes: int = MAX_BYTES,
) -> dict[str, Tensor]: ...


@overload
def load_variables(
    path: PathLike,
    into: IntoArg,
    *,
    optimizer: Optimizer | None = None,
    strict: bool = True,
    max_bytes: int = MAX_BYTES,
) -> dict[str, Variable]: ...


def load_variables(
    path: PathLike,
    into: IntoArg | None = None,
    *,
    optimizer: Optimizer | None = None,
    strict: bool = True,
    max_bytes: int = MAX_BYTES,
) -> dict[str, Tensor] | dict[str, Variable]:
    """Read a checkpoint written by :func:`save_variables`, checking everything first.

    Like restoring weights in TF.js (``tf.loadLayersModel``), for plain
    variables. Without ``into`` it returns new tensors by name (yours to
    dispose). With ``into`` it assigns the saved values to those variables:
    all names, shapes and numbers are checked first, so either every
    variable is assigned or, on any error, none is.

    Args:
        path: The checkpoint file.
        into: Variables to restore: a list (matched by ``.name``) or a
            dict name -> variable (matched by the keys used when saving).
        optimizer: Also restore this optimizer's iteration count and slots
            (the file must hold the state of the same kind of optimizer;
            needs ``into``). A slot saved under a name goes to the variable
            loaded under that name, so ``{"w": w2}`` gets the slots saved
            from ``{"w": w1}``, whatever the variables' own names.
        strict: With ``into``, refuse a file that holds names not in
            ``into``. A name in ``into`` missing from the file is always an
            error.
        max_bytes: Refuse larger files (default 64 MiB).

    Returns:
        ``{name: Tensor}`` without ``into``; ``{name: Variable}`` (the
        assigned variables) with it.

    Raises:
        CheckpointError: the file cannot be read, is not a valid checkpoint
            (not JSON, truncated, another version, too deep or too big,
            NaN or text where numbers belong), or does not fit ``into`` or
            ``optimizer``. Nothing has changed when it is raised.

    Examples:
        >>> import pathlib, tempfile
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = pathlib.Path(folder.name) / "model.json"
        >>> w = mt.variable(mt.tensor([2.0, -1.0]), name="w_load")
        >>> mt.save_variables(path, [w])
        >>> _ = w.assign(mt.tensor([0.0, 0.0]))          # training goes wrong...
        >>> mt.load_variables(path, into=[w])             # ...so restore it
        {'w_load': Variable([2.0, -1.0], shape=(2,), name='w_load', trainable=True)}
        >>> mt.load_variables(path)                       # or just read the values
        {'w_load': Tensor([2.0, -1.0], shape=(2,))}
        >>> v = mt.variable(mt.zeros((3,)), name="v_load")
        >>> try:
        ...     mt.load_variables(path, into={"w_load": v})
        ... except mt.CheckpointError as err:
        ...     print(str(err).splitlines()[0])
        checkpoint '...model.json': variable 'w_load' has shape (2,) in the file, but the variable to load into has shape (3,).
        >>> w.data_sync(), v.data_sync()                  # nothing changed
        ([2.0, -1.0], [0.0, 0.0, 0.0])
        >>> folder.cleanup()
    """
    where = _path(path, "load_variables")
    limit: object = max_bytes  # checked at run time: callers may pass anything
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise CheckpointError(
            explain(
                N_('load_variables: max_bytes must be a positive int, got {0}.').format(repr(max_bytes)),
                N_('It is the size of the largest file load_variables will read.'),
                N_('leave it out for 64 MiB.'),
            ),
            path=where,
        )
    flag: object = strict
    if not isinstance(flag, bool):
        raise CheckpointError(
            explain(N_('load_variables: strict must be True or False, got {0}.').format(repr(strict)), N_('strict refuses unknown names.'), N_('pass strict=False to ignore them.')),
            path=where,
        )
    records, opt_state = parse_checkpoint(read_text(where, limit), where)
    by_name = {r.name: r for r in records}

    targets = None if into is None else _targets(into, where)
    if targets is not None:
        for name, var in targets.items():
            record = by_name.get(name)
            if record is None:
                raise load_error(
                    where,
                    N_('no variable named {0} in the file; it holds {1}.').format(repr(name), sorted(by_name)),
                    N_('Every variable to load into must be in the checkpoint.'),
                    N_('save it first, or load into fewer variables.'),
                    name=name,
                )
            if record.shape != var.shape:
                raise load_error(
                    where,
                    N_('variable {0} has shape {1} in the file, but the variable to load into has shape {2}.').format(repr(name), record.shape, var.shape),
                    N_('A variable keeps its shape; the saved values must have exactly that shape.'),
                    N_('load into a variable made with the same shape, or read the values with load_variables(path).'),
                    name=name,
                    shapes=(record.shape, var.shape),
                )
        unknown = sorted(set(by_name) - set(targets))
        if strict and unknown:
            raise load_error(
                where,
                N_('the file holds {0} that are not among the variables to load into {1}.').format(unknown, sorted(targets)),
                N_('With strict=True every saved variable must be restored.'),
                N_('add them to into=..., or pass strict=False to ignore them.'),
                names=unknown,
            )

    plan = None
    if optimizer is not None:
        plan = _optimizer_plan(optimizer, opt_state, where, targets)

    # everything is checked: now change things (none of this can fail)
    result: dict[str, Tensor] | dict[str, Variable]
    if targets is None:
        result = {r.name: Tensor(r.data, r.shape) for r in records}
    else:
        for name, var in targets.items():
            var.assign(new(Tensor, by_name[name].data, var.shape, "tensor", arena=False))
        result = dict(targets)
    if optimizer is not None and plan is not None:
        install_state(optimizer, plan)
    return result


def _optimizer_plan(optimizer: object, state: OptimizerState | None, where: str, targets: dict[str, Variable] | None) -> RestorePlan:
    if not isinstance(optimizer, Optimizer):
        raise load_error(where, N_('optimizer must be a microtape optimizer, got {0}.').format(type(optimizer).__name__), N_('Its slots are restored from the file.'), N_('pass optimizer=opt where opt = mt.train.adam(...).'))
    if state is None:
        raise load_error(where, N_('the file holds no optimizer state.'), N_('optimizer= restores state saved with save_variables(..., optimizer=opt).'), N_('leave optimizer= out, or save with optimizer=opt.'))
    if state.class_name != optimizer.class_name:
        raise load_error(
            where,
            N_('the file holds the state of a {0} optimizer, not of a {1} one.').format(state.class_name, optimizer.class_name),
            N_('Each kind of optimizer keeps different slots.'),
            N_('restore it into mt.train.{0}(...).').format(state.class_name.lower()),
        )
    if targets is None:
        raise load_error(
            where,
            N_('optimizer= was given without into=.'),
            N_('The slots belong to the variables loaded into, under the names they were saved with; without into= there are none, and another live variable of that name is not their owner.'),
            N_("load into the variables the optimizer trains: mt.load_variables(path, into={'w': w}, optimizer=opt)."),
        )
    try:
        return plan_restore(optimizer, state.iterations, [(s.name, s.shape, s.data) for s in state.slots], "load_variables", targets)
    except MicrotapeError as err:
        raise load_error(
            where,
            N_("the optimizer state does not fit: {0}").format(err.message.splitlines()[0]),
            N_('Slots are restored for live variables of the same names and shapes.'),
            N_('create (or load) the variables first, with the shapes they had when saved.'),
        ) from err


def _targets(into: object, where: str) -> dict[str, Variable]:
    pairs: list[tuple[object, object]]
    if isinstance(into, Mapping):
        pairs = list(into.items())
    elif isinstance(into, (list, tuple)):
        pairs = [(v.name if isinstance(v, Variable) else None, v) for v in into]
    else:
        raise load_error(where, N_('into must be a list of variables or a dict name -> variable, got {0}.').format(type(into).__name__), N_('into says which variables receive the saved values.'), N_('pass into=[w, b].'))
    targets: dict[str, Variable] = {}
    for name, v in pairs:
        if not isinstance(v, Variable):
            raise load_error(where, N_('into holds a {0}, not a Variable.').format(type(v).__name__), N_('Only variables can be assigned; tensors are immutable.'), N_('make it a variable with mt.variable(t).'))
        if not isinstance(name, str) or not name:
            raise load_error(where, N_('into has the key {0}, not a non-empty str.').format(f'{name!r:.40}'), N_('Keys are names in the checkpoint.'), N_("use into={'w': w}."))
        if name in targets:
            raise load_error(where, N_('into names {0} twice.').format(repr(name)), N_('Each saved variable is loaded into one variable.'), N_('list each variable once.'))
        v.data_sync()  # raises DisposedTensorError for a disposed variable, before anything changes
        targets[name] = v
    return targets

