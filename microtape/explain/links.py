"""Which entries of its inputs each output entry of a recorded op reads, and the local derivative of
each such pair, asked of the op's own VJP with a few whole-tensor calls (never one call per entry).

``paths.py`` and ``steps.py`` use it. A pair that the op's pattern connects is an edge even where
its derivative is 0 (a dead ``relu``, the side ``where`` did not choose): that zero is what blocks
a gradient, and what meets an infinite factor to make NaN. A pair the pattern does not connect
(``sqrt``'s out[1] and x[0]) is no edge, whatever a one-hot row of the Jacobian holds there.

The patterns, by op name (an op of none of them, such as a ``custom_grad`` op, is read one
Jacobian row per output entry, its zeros taken as no edge):

* entry by entry, with broadcasting: out[j] reads input[b(j)] (``broadcast_index``). One VJP of
  ones on the inputs stretched to the output's shape gives every pair's derivative;
* copies (``reshape``, ``transpose``, ``slice``, ``pad``, ``concat`` ...): out[j] is a copy of one
  input entry, found by running the forward on the entries' own numbers (and checked against the
  real output); its derivative is what the VJP of ones gives that entry, shared by its copies;
* reductions over axes (``sum``, ``max``, ``logsumexp``): out[j] reads its group; each input entry
  is in one group, so one VJP of ones gives every pair's derivative (``max``: 0 off the chosen one);
* ``matmul``: out[r, c] reads x[r, :] and y[:, c]; the derivative by x[r, k] is y[k, c] and by
  y[k, c] is x[r, k], which one VJP of one-hot rows per needed column (or row) returns, on a
  problem of as many rows (or columns).

A second VJP, of NaN, says which zeros *block*: ``where``'s unchosen side passes exactly 0.0
whatever reaches it, a ``mul`` by a 0 passes NaN on (0 * NaN). The paths' products follow that,
so they add up to what the backward pass computes, NaN and Inf included.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Sequence
from typing import Final

from ..engine.arena import new
from ..engine.backward import Record
from ..engine.tensor import Tensor
from ..engine.types import Shape
from ..errors import MicrotapeError
from ..ops.index_maps import broadcast_index, broadcast_shapes, normalize_axes, reduce_index, reduced_shape

__all__ = ["COPIES", "ELEMENTWISE", "JACOBIAN_ENTRIES", "REDUCTIONS", "Links", "links_of"]

ELEMENTWISE: Final = frozenset(
    {
        "abs", "add", "sub", "mul", "div", "pow", "neg", "square", "sqrt", "exp", "log", "sin", "cos",
        "tanh", "sigmoid", "relu", "maximum", "minimum", "clip_by_value", "where", "greater",
        "greater_equal", "less", "less_equal", "equal", "sign", "zeros_like",
        # the entry-by-entry ops of the next round, by the names DESIGN.md gives them
        "atan", "atan2", "log1p", "expm1", "softplus", "log_sigmoid", "log2", "is_nan", "is_finite",
        "is_inf", "stop_gradient",
    }
)  # fmt: skip
"""Ops whose out[j] reads input[b(j)] alone (b: broadcasting), checked by shape before use."""
COPIES: Final = frozenset({"reshape", "transpose", "slice", "pad", "concat", "broadcast_to", "clone", "gather"})
"""Ops whose every output entry is a copy of one input entry or a constant, checked on the real output."""
REDUCTIONS: Final = frozenset({"sum", "max", "min", "logsumexp", "prod", "norm"})
"""Ops that reduce ``axis`` (``keepdims``), each output entry reading its group alone, checked by shape."""
JACOBIAN_ENTRIES: Final = 4_096
"""``Links.local_tensor`` gives an op of no pattern its Jacobian up to this many entries."""
_FILL_PARAMS: Final = ("constant_value",)
"""Settings that fill what a copy does not take from an input (``pad``): 0.0 while reading the pattern."""

Local = tuple[float, bool]
"""A pair's local derivative and whether it blocks (passes exactly 0.0 whatever reaches it)."""


def _tensor(data: list[float], shape: Shape) -> Tensor:
    return new(Tensor, data, shape, "explain")


def _vjp(record: Record, dout: Tensor, inputs: Sequence[Tensor] | None = None, needs: tuple[bool, ...] | None = None) -> list[list[float] | None]:
    """The record's VJP on ``dout`` (and other ``inputs``), as flat lists (None: no gradient)."""
    op, real, params, out, wanted = record
    xs = real if inputs is None else inputs
    flags = wanted if needs is None else needs
    vjp = op.vjp
    assert vjp is not None  # only differentiable ops are recorded
    grads = vjp(dout, out, *xs, needs=flags, **params) if op.wants_needs else vjp(dout, out, *xs, **params)
    return [None if g is None or not w else g._data for g, w in zip(grads, flags)]


class Links:
    """The edges of one record: the pattern (``forward``, ``reads``) and, once ``prepare`` has
    asked the VJP, each edge's local derivative (``local``). This base class is the op of no
    pattern: one Jacobian row per output entry asked for, its zeros read as no edge."""

    __slots__ = ("record", "out", "_rows", "_solid")
    kind = "jacobian"

    def __init__(self, record: Record) -> None:
        self.record: Record = record
        self.out: Tensor = record[3]

    # -- the pattern ---------------------------------------------------------------

    def forward(self, slot: int, entries: Iterable[int]) -> set[int]:
        """The output entries that read any of ``entries`` of input ``slot``."""
        return set(range(self.out.size)) if any(True for _ in entries) else set()

    def reads(self, j: int, slot: int) -> Iterable[int]:
        """The entries of input ``slot`` that output entry ``j`` reads (after ``prepare``)."""
        row = self._rows[j][slot]
        if row is None:
            return ()
        return [k for k, v in enumerate(row) if v != 0.0 and (v == v or (slot, k) not in self._solid)]

    # -- the derivatives ---------------------------------------------------------------

    def prepare(self, live: Iterable[int], slots: Sequence[int]) -> None:
        """Ask the VJP for what ``local`` will be asked: the edges of output entries ``live``."""
        out = self.out
        if not hasattr(self, "_rows"):
            self._rows: dict[int, list[list[float] | None]] = {}
            self._solid: set[tuple[int, int]] = set()
        for j in live:
            if j not in self._rows:
                data = [0.0] * out.size
                data[j] = 1.0
                self._rows[j] = _vjp(self.record, _tensor(data, out.shape))
        # A one-hot row has zeros for the other output entries, and 0 * inf is NaN: ``sqrt`` at
        # [0, 4] gives the row of out[1] a NaN for x[0]. A NaN where another row has a number is that.
        self._solid = {
            (slot, k) for row in self._rows.values() for slot, data in enumerate(row) if data is not None
            for k, v in enumerate(data) if v == v and v != 0.0
        }  # fmt: skip

    def local(self, j: int, slot: int, k: int) -> Local:
        row = self._rows[j][slot]
        assert row is not None  # reads() gave k
        return row[k], False

    def local_tensor(self, slot: int) -> Tensor | None:
        """``steps.py``'s picture of the local derivative by input ``slot``: here the Jacobian,
        shape ``out.shape + input.shape``, when it has at most ``JACOBIAN_ENTRIES`` entries."""
        x = self.record[1][slot]
        if self.out.size * x.size > JACOBIAN_ENTRIES:
            return None
        self.prepare(range(self.out.size), [slot])
        data: list[float] = []
        for j in range(self.out.size):
            row = self._rows[j][slot]
            data.extend([0.0] * x.size if row is None else row)
        return _tensor(data, self.out.shape + x.shape)


class MapLinks(Links):
    """out[j] reads ``src[slot][j]`` of each input (-1: nothing): entry by entry, or a copy."""

    __slots__ = ("src", "copies", "_inverse", "_locals", "_blocks")
    kind = "map"

    def __init__(self, record: Record, src: list[list[int] | None], copies: bool) -> None:
        super().__init__(record)
        self.src: list[list[int] | None] = src
        """Per input: the entry each output entry reads (None: the same entry, j itself)."""
        self.copies: bool = copies
        self._inverse: dict[int, dict[int, list[int]]] = {}
        self._locals: dict[int, list[float]] = {}
        self._blocks: dict[int, list[float] | None] = {}

    def forward(self, slot: int, entries: Iterable[int]) -> set[int]:
        src = self.src[slot]
        if src is None:
            return set(entries)
        inverse = self._inverse.get(slot)
        if inverse is None:
            inverse = self._inverse[slot] = {}
            for j, k in enumerate(src):
                if k >= 0:
                    inverse.setdefault(k, []).append(j)
        found: set[int] = set()
        for k in entries:
            found.update(inverse.get(k, ()))
        return found

    def reads(self, j: int, slot: int) -> Iterable[int]:
        src = self.src[slot]
        k = j if src is None else src[j]
        return (k,) if k >= 0 and slot in self._locals else ()

    def prepare(self, live: Iterable[int], slots: Sequence[int]) -> None:
        todo = [s for s in slots if s not in self._locals]
        if not todo:
            return
        if self.copies:
            self._copy_locals(todo)
        else:
            self._stretched_locals(todo)

    def _stretched(self) -> list[Tensor]:
        """The inputs broadcast to the output's shape (so no VJP sums over broadcast entries)."""
        out = self.out
        found = []
        for x, src in zip(self.record[1], self.src):
            data = x._data
            assert data is not None  # a tape holds its records' tensors
            found.append(x if src is None else _tensor([data[k] for k in src], out.shape))
        return found

    def _stretched_locals(self, todo: list[int]) -> None:
        out = self.out
        stretched = self._stretched()
        ones = _vjp(self.record, _tensor([1.0] * out.size, out.shape), stretched)
        nans: list[list[float] | None] | None = None
        for slot in todo:
            values = ones[slot]
            if values is None:  # a VJP that gives a needed input no gradient (stop_gradient): a 0 that blocks
                self._locals[slot] = self._blocks[slot] = [0.0] * out.size
                continue
            self._locals[slot] = values
            self._blocks[slot] = None
            if 0.0 in values:
                if nans is None:
                    nans = _vjp(self.record, _tensor([math.nan] * out.size, out.shape), stretched)
                self._blocks[slot] = nans[slot]

    def _copy_locals(self, todo: list[int]) -> None:
        out = self.out
        ones = _vjp(self.record, _tensor([1.0] * out.size, out.shape))
        for slot in todo:
            g, src = ones[slot], self.src[slot]
            if g is None:  # no gradient for a needed input: a 0 that blocks
                self._locals[slot] = self._blocks[slot] = [0.0] * out.size
                continue
            if src is None:
                self._locals[slot] = g
            else:
                copies: dict[int, int] = {}
                for k in src:
                    copies[k] = copies.get(k, 0) + 1
                self._locals[slot] = [g[k] / copies[k] if k >= 0 else 0.0 for k in src]
            self._blocks[slot] = None

    def local(self, j: int, slot: int, k: int) -> Local:
        v = self._locals[slot][j]
        blocks = self._blocks.get(slot)
        return v, v == 0.0 and blocks is not None and blocks[j] == 0.0

    def local_tensor(self, slot: int) -> Tensor | None:
        """d out[j] / d input[b(j)], in the output's shape."""
        self.prepare((), [slot])
        return _tensor(list(self._locals[slot]), self.out.shape)


class ReduceLinks(Links):
    """out[dst[k]] reads input[k]: a reduction over axes, each input entry in one group."""

    __slots__ = ("dst", "_groups", "_locals", "_blocks", "_asked")
    kind = "reduce"

    def __init__(self, record: Record, dst: list[int]) -> None:
        super().__init__(record)
        self.dst: list[int] = dst
        self._groups: dict[int, list[int]] | None = None
        self._locals: list[float] | None = None
        self._blocks: list[float] | None = None
        self._asked = False

    def forward(self, slot: int, entries: Iterable[int]) -> set[int]:
        dst = self.dst
        return {dst[k] for k in entries}

    def reads(self, j: int, slot: int) -> Iterable[int]:
        if self._locals is None:
            return ()
        if self._groups is None:
            self._groups = {}
            for k, g in enumerate(self.dst):
                self._groups.setdefault(g, []).append(k)
        return self._groups.get(j, ())

    def prepare(self, live: Iterable[int], slots: Sequence[int]) -> None:
        if self._asked:
            return
        self._asked = True
        out = self.out
        self._locals = _vjp(self.record, _tensor([1.0] * out.size, out.shape))[0]
        if self._locals is None:  # no gradient for its input: a 0 that blocks
            self._locals = self._blocks = [0.0] * self.record[1][0].size
        elif 0.0 in self._locals:
            self._blocks = _vjp(self.record, _tensor([math.nan] * out.size, out.shape))[0]

    def local(self, j: int, slot: int, k: int) -> Local:
        assert self._locals is not None  # reads() gave k
        v = self._locals[k]
        return v, v == 0.0 and self._blocks is not None and self._blocks[k] == 0.0

    def local_tensor(self, slot: int) -> Tensor | None:
        """d out[group of k] / d input[k], in the input's shape."""
        self.prepare((), [slot])
        return None if self._locals is None else _tensor(list(self._locals), self.record[1][0].shape)


class MatmulLinks(Links):
    """x @ y: out[r, c] reads x[r, :] (derivative y[k, c]) and y[:, c] (derivative x[r, k])."""

    __slots__ = ("n", "k", "m", "_columns", "_rows_of_x")
    kind = "matmul"

    def __init__(self, record: Record) -> None:
        super().__init__(record)
        x, y = record[1][0], record[1][1]
        self.n: int = x.shape[0] if x.rank == 2 else 1
        self.k: int = x.shape[-1]
        self.m: int = y.shape[1] if y.rank == 2 else 1
        self._columns: dict[int, list[float]] = {}
        """For x: column c of y (d out[r, c] / d x[r, :]), by c."""
        self._rows_of_x: dict[int, list[float]] = {}
        """For y: row r of x (d out[r, c] / d y[:, c]), by r."""

    def forward(self, slot: int, entries: Iterable[int]) -> set[int]:
        n, k, m = self.n, self.k, self.m
        if slot == 0:
            rows = {e // k for e in entries}
            return {r * m + c for r in rows for c in range(m)}
        cols = {e % m for e in entries}
        return {r * m + c for c in cols for r in range(n)}

    def reads(self, j: int, slot: int) -> Iterable[int]:
        k, m = self.k, self.m
        if slot == 0:
            r = j // m
            return range(r * k, r * k + k) if (j % m) in self._columns else ()
        c = j % m
        return range(c, k * m, m) if (j // m) in self._rows_of_x else ()

    def prepare(self, live: Iterable[int], slots: Sequence[int]) -> None:
        m = self.m
        js = list(live)
        if 0 in slots:
            self._ask_columns(sorted({j % m for j in js} - set(self._columns)))
        if 1 in slots:
            self._ask_rows(sorted({j // m for j in js} - set(self._rows_of_x)))

    def _ask_columns(self, cols: list[int]) -> None:
        """One VJP for x on a problem of ``len(cols)`` rows, row i's output gradient one-hot at column cols[i]."""
        if not cols:
            return
        x, y = self.record[1][0], self.record[1][1]
        q, k, m = len(cols), self.k, self.m
        dout = [0.0] * (q * m)
        for i, c in enumerate(cols):
            dout[i * m + c] = 1.0
        shape = (q,) + y.shape[1:]
        grads = _vjp(self.record, _tensor(dout, shape), (_tensor([0.0] * (q * k), (q, k)), y), (True, False))[0]
        assert grads is not None and x.rank in (1, 2)  # matmul's VJP gives x its gradient
        for i, c in enumerate(cols):
            self._columns[c] = grads[i * k : i * k + k]

    def _ask_rows(self, rows: list[int]) -> None:
        """One VJP for y on a problem of ``len(rows)`` columns, column i's output gradient one-hot at row rows[i]."""
        if not rows:
            return
        x = self.record[1][0]
        q, k = len(rows), self.k
        n_rows = self.n
        dout = [0.0] * (n_rows * q)
        for i, r in enumerate(rows):
            dout[r * q + i] = 1.0
        shape = x.shape[:-1] + (q,)
        grads = _vjp(self.record, _tensor(dout, shape), (x, _tensor([0.0] * (k * q), (k, q))), (False, True))[1]
        assert grads is not None  # matmul's VJP gives y its gradient
        for i, r in enumerate(rows):
            self._rows_of_x[r] = grads[i::q]

    def local(self, j: int, slot: int, k: int) -> Local:
        m = self.m
        if slot == 0:
            return self._columns[j % m][k - (j // m) * self.k], False
        return self._rows_of_x[j // m][k // m], False

    def local_tensor(self, slot: int) -> Tensor | None:
        """d out[r, c] / d x[r, k] is y[k, c], so for x this is y; for y it is x (d out[r, c] / d y[k, c] = x[r, k])."""
        x, y = self.record[1][0], self.record[1][1]
        n, k, m = self.n, self.k, self.m
        if slot == 0:
            self.prepare(range(m), [0])
            return _tensor([self._columns[c][kk] for kk in range(k) for c in range(m)], y.shape)
        self.prepare(range(0, n * m, m), [1])
        return _tensor([self._rows_of_x[r][kk] for r in range(n) for kk in range(k)], x.shape)


_DEFAULTS: dict[str, dict[str, object]] = {}


def _setting(record: Record, name: str) -> object:
    """A setting of the record's op as the forward saw it: given, or the forward's default."""
    op, _, params, _, _ = record
    if name in params:
        return params[name]
    defaults = _DEFAULTS.get(op.name)
    if defaults is None:
        try:
            signature = inspect.signature(op.forward)
        except (TypeError, ValueError):
            signature = None
        defaults = _DEFAULTS[op.name] = {} if signature is None else {
            p.name: p.default for p in signature.parameters.values() if p.default is not inspect.Parameter.empty
        }  # fmt: skip
    return defaults.get(name)


def _elementwise(record: Record) -> Links | None:
    _, inputs, _, out, _ = record
    shape: Shape = ()
    for x in inputs:
        shape = broadcast_shapes(shape, x.shape)
    if shape != out.shape:
        return None
    return MapLinks(record, [None if x.shape == out.shape else broadcast_index(x.shape, out.shape) for x in inputs], False)


def _reduction(record: Record) -> Links | None:
    _, inputs, _, out, _ = record
    if len(inputs) != 1:
        return None
    x = inputs[0]
    axis = _setting(record, "axis")
    keepdims = _setting(record, "keepdims")
    if not isinstance(keepdims, bool):
        return None
    axes = normalize_axes(axis, x.rank, record[0].name)  # type: ignore[arg-type]  # the forward accepted it
    if reduced_shape(x.shape, axes, keepdims) != out.shape:
        return None
    return ReduceLinks(record, reduce_index(x.shape, axes))


def _copy(record: Record) -> Links | None:
    """Run the forward on each needed input's entry numbers (k + 1 + an offset per input, 0 for
    what comes from no input) and keep the map if it reproduces the real output."""
    op, inputs, params, out, needs = record
    coded: list[Tensor] = []
    offsets: list[int] = []
    offset = 0
    for x, wanted in zip(inputs, needs):
        offsets.append(offset)
        if wanted:
            coded.append(_tensor([float(offset + k + 1) for k in range(x.size)], x.shape))
            offset += x.size
        else:
            coded.append(x)
    settings = {name: (0.0 if name in _FILL_PARAMS else value) for name, value in params.items()}
    data, shape = op.forward(tuple(coded), **settings) if op.n_inputs < 0 else op.forward(*coded, **settings)
    if tuple(shape) != out.shape or len(data) != out.size:
        return None
    src: list[list[int] | None] = [[-1] * out.size if w else None for w in needs]
    real = out._data
    assert real is not None  # a tape holds its records' tensors
    for j, v in enumerate(data):
        if v == 0.0:
            continue
        code = int(v) - 1
        if v != code + 1 or not 0 <= code < offset:
            return None
        slot = max(s for s, start in enumerate(offsets) if start <= code and needs[s])
        k = code - offsets[slot]
        value = inputs[slot]._data[k]  # type: ignore[index]  # a tape holds its records' tensors
        if not (value == real[j] or (value != value and real[j] != real[j])):
            return None
        row = src[slot]
        assert row is not None
        row[j] = k
    return MapLinks(record, src, True)


def links_of(record: Record) -> Links:
    """The ``Links`` of one record: by its op's pattern, or one Jacobian row per output entry."""
    op = record[0]
    name = op.name
    found: Links | None = None
    try:
        if op.rerun is not None:  # custom_grad: a pattern microtape cannot know
            found = None
        elif name in ELEMENTWISE:
            found = _elementwise(record)
        elif name in REDUCTIONS:
            found = _reduction(record)
        elif name in COPIES:
            found = _copy(record)
        elif name == "matmul" and len(record[1]) == 2 and all(x.rank in (1, 2) for x in record[1]):
            found = MatmulLinks(record)
    except (MicrotapeError, TypeError, ValueError, IndexError):  # a pattern that does not fit: no pattern
        found = None
    return found if found is not None else Links(record)

