"""The checkpoint file: its JSON document, read with limits and validated field by field.

Loads trust nothing: the size, the nesting depth, the length of
integers and every field are checked before anything is assigned, and every
refusal is a :class:`~microtape.CheckpointError` that says where in the file
the problem is.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import stat
from dataclasses import dataclass
from typing import Final

from ..engine.types import Shape
from ..errors import N_, CheckpointError, explain
from ..language import tr

__all__ = ["FORMAT", "VERSION", "OptimizerState", "Record", "load_error", "parse_checkpoint", "read_text"]

FORMAT: Final = "microtape-checkpoint"
"""The value of the ``format`` field."""

VERSION: Final = 1
"""The ``version`` this microtape writes and reads."""

MAX_DEPTH: Final = 16
"""Deepest nesting of ``[`` and ``{`` a checkpoint may have (a valid one has 5)."""

MAX_RANK: Final = 32
"""Most dimensions a saved shape may have."""

_MAX_INT_DIGITS: Final = 18  # shapes and counts; a longer integer is not a size


_TOP_KEYS: Final = frozenset({"format", "version", "variables", "optimizer"})
_VARIABLE_KEYS: Final = frozenset({"name", "shape", "trainable", "data"})
_OPTIMIZER_KEYS: Final = frozenset({"class", "config", "iterations", "slots"})
_SLOT_KEYS: Final = frozenset({"name", "shape", "data"})

_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


@dataclass(frozen=True, slots=True)
class Record:
    """One saved tensor: name, shape, trainable flag and flat values."""

    name: str
    shape: Shape
    trainable: bool
    data: list[float]


@dataclass(frozen=True, slots=True)
class OptimizerState:
    class_name: str
    iterations: int
    slots: list[Record]


def read_text(where: str, max_bytes: int) -> str:
    try:
        # looked at before opening: opening a FIFO blocks until a writer comes, a device may never end
        mode = os.stat(where).st_mode
        if not stat.S_ISREG(mode):
            kind = N_("a directory") if stat.S_ISDIR(mode) else N_("a FIFO (named pipe)") if stat.S_ISFIFO(mode) else (
                N_("a device") if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else N_("not a regular file")
            )
            raise load_error(
                where,
                N_('it is {0}, not a regular file.').format(kind),
                N_('A checkpoint is a JSON file written by mt.save_variables; nothing else is opened.'),
                N_('pass the path of the checkpoint file itself, for example run1/model.json.'),
                kind=kind,
            )
        with open(where, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            raw = b"" if size > max_bytes else f.read(max_bytes + 1)
    except OSError as err:
        raise CheckpointError(
            explain(
                N_('cannot read checkpoint {0}: {1}.').format(repr(where), err.strerror or err),
                N_('load_variables reads a file written by mt.save_variables.'),
                N_('check the path; os.path.exists(path) tells whether it is there.'),
            ),
            path=where,
        ) from err
    if size > max_bytes or len(raw) > max_bytes:
        raise load_error(
            where,
            N_('the file has {0} bytes, more than max_bytes={1}.').format(max(size, len(raw)), max_bytes),
            N_('Huge files are refused before they are parsed, so a wrong path cannot exhaust memory.'),
            N_('if the checkpoint really is that big, pass a larger max_bytes=...'),
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise load_error(
            where,
            N_('the file is not UTF-8 text (byte {0}).').format(err.start),
            N_('A checkpoint is a JSON text file.'),
            N_('this is probably not a microtape checkpoint (pickle and binary files are not read).'),
        ) from None


def parse_checkpoint(text: str, where: str) -> tuple[list[Record], OptimizerState | None]:
    depth, still_open = _nesting(text)
    if depth > MAX_DEPTH:
        raise load_error(
            where,
            N_('the JSON is nested {0} levels deep.').format(depth),
            N_('A checkpoint is at most {0} levels deep (a valid one has 5); deeper input is refused before parsing, since parsing it could exhaust the stack.').format(MAX_DEPTH),
            N_('this is not a microtape checkpoint.'),
        )
    try:
        doc = json.loads(
            text,
            parse_constant=_NonFinite,  # NaN, Infinity, -Infinity: marked, then refused with their place
            parse_float=_finite_float,
            parse_int=_bounded_int,
        )
    except json.JSONDecodeError as err:
        truncated = N_("; it ends before every [ and { is closed, so it looks truncated") if still_open > 0 else ""
        raise load_error(
            where,
            N_('the file is not valid JSON: {0} (line {1}, column {2}){3}.').format(err.msg, err.lineno, err.colno, truncated),
            N_('A checkpoint is a JSON document written by mt.save_variables.'),
            N_('restore an older copy of the file, or save it again.'),
        ) from None
    return _validate(doc, where)


def _nesting(text: str) -> tuple[int, int]:
    """How deep the ``[`` and ``{`` of a JSON text nest, and how many are still open at its end.

    The strings are cut out first (a bracket inside a string does not nest),
    then everything but brackets, so the scan runs at the speed of ``re``.
    This is the only depth guard: ``json.loads`` recurses once per level, and
    it only sees texts at most ``MAX_DEPTH`` deep, far from the recursion limit.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = max(itertools.accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)
    still_open = brackets.count("[") + brackets.count("{") - brackets.count("]") - brackets.count("}")
    return depth, still_open


class _NonFinite:
    """A number JSON cannot hold (NaN, Infinity, 1e999), kept as text so errors can say where it was."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text[:30]

    def __repr__(self) -> str:
        return self.text


def _finite_float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _bounded_int(text: str) -> int | float | _NonFinite:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        return _finite_float(text)  # a long integer is only ever a value, never a size
    return int(text)


def _validate(doc: object, where: str) -> tuple[list[Record], OptimizerState | None]:
    if not isinstance(doc, dict):
        raise load_error(where, N_('{0} is a {1}, not an object.').format(N_('the JSON'), _json_type(doc)), N_('A checkpoint is an object with "format": "{0}".').format(FORMAT), N_('this is not a microtape checkpoint.'))
    if doc.get("format") != FORMAT:
        raise load_error(
            where,
            N_('"format" is {0}, not {1}.').format(f"{doc.get('format')!r:.60}", repr(FORMAT)),
            N_('Every microtape checkpoint says what it is in its first field.'),
            N_('this file was written by another program.'),
        )
    version = doc.get("version")
    if version != VERSION or isinstance(version, bool):
        raise load_error(
            where,
            N_('"version" is {0}; this microtape reads version {1}.').format(f'{version!r:.40}', VERSION),
            N_('The version says how to read the rest of the file.'),
            N_('load it with the microtape that wrote it, or save it again.'),
            version=version,
        )
    _check_keys(doc, _TOP_KEYS, {"format", "version", "variables"}, N_("the checkpoint"), where)
    raw_vars = doc["variables"]
    if not isinstance(raw_vars, list):
        raise load_error(where, N_('"variables" is a {0}, not a list.').format(_json_type(raw_vars)), N_('It lists one record per variable.'), N_('save the checkpoint again.'))
    records = [_record(item, i, where, "variables", _VARIABLE_KEYS) for i, item in enumerate(raw_vars)]
    names = [r.name for r in records]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise load_error(where, N_('the names {0} appear more than once.').format(repeated), N_('Names in a checkpoint are unique.'), N_('save the checkpoint again.'), names=repeated)
    opt_state = None
    if "optimizer" in doc:
        opt_state = _optimizer_state(doc["optimizer"], where)
    return records, opt_state


def _check_keys(d: dict[str, object], allowed: frozenset[str], required: set[str], what: str, where: str) -> None:
    missing = sorted(required - set(d))
    extra = sorted(set(d) - allowed)
    if missing or extra:
        unknown = [e[:40] for e in extra]
        problem = (
            N_("{0} lacks {1}; has unknown fields {2}.").format(what, missing, unknown) if missing and extra
            else N_("{0} lacks {1}.").format(what, missing) if missing
            else N_("{0} has unknown fields {1}.").format(what, unknown)
        )
        raise load_error(
            where,
            problem,
            N_('The fields are {0}; required: {1}.').format(sorted(allowed), sorted(required)),
            N_('the file is damaged or was written by another program; save it again.'),
        )


def _record(item: object, i: int, where: str, section: str, keys: frozenset[str]) -> Record:
    what = f"{section}[{i}]"
    if not isinstance(item, dict):
        raise load_error(where, N_('{0} is a {1}, not an object.').format(what, _json_type(item)), N_('Each record is an object with a name, a shape and data.'), N_('save the checkpoint again.'))
    _check_keys(item, keys, set(keys), what, where)
    name = item["name"]
    if not isinstance(name, str) or not name:
        raise load_error(where, N_('{0} has the name {1}, not a non-empty string.').format(what, f'{name!r:.40}'), N_('Names identify the values.'), N_('save the checkpoint again.'))
    what = f"{section}[{i}] ({name!r:.60})"
    shape = item["shape"]
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_RANK
        or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
    ):
        raise load_error(
            where,
            N_('{0} has the shape {1}.').format(what, f'{shape!r:.60}'),
            N_('A shape is a list of at most {0} ints >= 0, such as [2, 3] (or [] for a scalar).').format(MAX_RANK),
            N_('save the checkpoint again.'),
            name=name,
        )
    trainable = item.get("trainable", False)
    if not isinstance(trainable, bool):
        raise load_error(where, N_('{0} has "trainable": {1}.').format(what, f'{trainable!r:.40}'), N_('trainable is true or false.'), N_('save the checkpoint again.'), name=name)
    data = item["data"]
    if not isinstance(data, list):
        raise load_error(where, N_('{0} has "data" of type {1}.').format(what, _json_type(data)), N_('data is a flat list of numbers in row-major order.'), N_('save the checkpoint again.'), name=name)
    size = math.prod(shape)
    if len(data) != size:
        raise load_error(
            where,
            N_('{0} has shape {1}, which needs {2} values, but its data has {3}.').format(what, tuple(shape), size, len(data)),
            N_('data holds exactly one number per entry of the shape.'),
            N_('the file is damaged; restore an older copy or save it again.'),
            name=name,
        )
    for j, v in enumerate(data):
        if isinstance(v, _NonFinite):
            raise load_error(
                where,
                N_('{0} has {1} at data[{2}].').format(what, v, j),
                N_('A checkpoint holds finite float64 numbers only; NaN and Infinity are not JSON.'),
                N_('the file was not written by mt.save_variables, which refuses non-finite values; find where they came from with mt.check_numerics.'),
                name=name,
                index=j,
            )
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise load_error(
                where,
                N_('{0} has {1} {2} at data[{3}], not a number.').format(what, _json_type(v), f'{v!r:.40}', j),
                N_('data holds finite numbers only.'),
                N_('the file is damaged or was edited by hand; save it again.'),
                name=name,
                index=j,
            )
    return Record(name, tuple(shape), trainable, [float(v) for v in data])


def _optimizer_state(raw: object, where: str) -> OptimizerState:
    if not isinstance(raw, dict):
        raise load_error(where, N_('"optimizer" is a {0}, not an object.').format(_json_type(raw)), N_("It holds an optimizer's class, config, iterations and slots."), N_('save the checkpoint again.'))
    _check_keys(raw, _OPTIMIZER_KEYS, set(_OPTIMIZER_KEYS), '"optimizer"', where)
    class_name, iterations, slots = raw["class"], raw["iterations"], raw["slots"]
    if not isinstance(class_name, str):
        raise load_error(where, N_('"optimizer.class" is {0}, not a string.').format(f'{class_name!r:.40}'), N_('It is the optimizer\'s TF.js class name, such as "Adam".'), N_('save the checkpoint again.'))
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0:
        raise load_error(where, N_('"optimizer.iterations" is {0}.').format(f'{iterations!r:.40}'), N_('It is a whole number >= 0.'), N_('save the checkpoint again.'))
    if not isinstance(raw["config"], dict):
        raise load_error(where, N_('"optimizer.config" is not an object.'), N_('It holds the hyperparameters by name.'), N_('save the checkpoint again.'))
    if not isinstance(slots, list):
        raise load_error(where, N_('"optimizer.slots" is a {0}, not a list.').format(_json_type(slots)), N_('It lists one record per slot.'), N_('save the checkpoint again.'))
    return OptimizerState(class_name, iterations, [_record(s, i, where, "optimizer.slots", _SLOT_KEYS) for i, s in enumerate(slots)])


def _json_type(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, _NonFinite):
        return "non-finite number"
    return type(v).__name__


def load_error(where: str, what: str, rule: str, hint: str, **facts: object) -> CheckpointError:
    what = tr(N_("checkpoint {0}: {1}")).format(repr(where), tr(what))  # the part translated first: its own template wins
    return CheckpointError(explain(what, rule, hint), path=where, **facts)
