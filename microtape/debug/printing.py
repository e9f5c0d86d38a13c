"""Printing a tensor the way TF.js's ``tf.print`` does: ``print_tensor`` (``mt.print``).

Nothing in this folder changes how gradients are computed, it makes them
visible, and this is the first look: the values themselves. The layout is
TF.js's ``tensorToString``, number for number: nested brackets, one
innermost row per line, columns padded to a common width, long dimensions
summarised, and each value printed as JavaScript prints
``parseFloat(v.toFixed(7))``.
"""

from __future__ import annotations

import math
import sys
from decimal import Decimal
from typing import Final, TextIO

from ..engine.arena import STATE, notify
from ..errors import N_, InvalidArgumentError, explain
from ..engine.tensor import Tensor

__all__ = ["print_tensor"]


_PRINT_LIMIT: Final = 20  # TF.js FORMAT_LIMIT_NUM_VALS: longer dimensions are summarised
_PRINT_EDGE: Final = 3  # TF.js FORMAT_NUM_FIRST_LAST_VALS: entries shown at each end
_PRINT_DIGITS: Final = 7  # TF.js FORMAT_NUM_SIG_DIGITS, used with toFixed


def _js_str(v: float) -> str:
    """JavaScript's ``Number.prototype.toString`` for a float."""
    if v != v:
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "0"
    if 1e-6 <= abs(v) < 1e21:
        text = format(Decimal(repr(v)), "f")  # shortest round-trip digits, never an exponent
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa, _, exponent = repr(v).partition("e")
    return f"{mantissa}e{'+' if int(exponent) > 0 else '-'}{abs(int(exponent))}"


def _js_number(v: float) -> str:
    """How TF.js prints one value: ``parseFloat(v.toFixed(7)).toString()``."""
    if math.isfinite(v) and abs(v) < 1e21:
        v = float(f"{v:.{_PRINT_DIGITS}f}")
    return _js_str(v)


def _layout(data: list[float], shape: tuple[int, ...]) -> list[str]:
    """The lines of TF.js ``tensorToString``: nested brackets, one innermost row per
    line, columns padded to a common width, dimensions longer than 20 summarised."""
    if not shape:
        return [_js_number(data[0])]
    cols = shape[-1]
    pad = [0] * cols
    if len(shape) > 1 and cols:
        for start in range(0, len(data), cols):
            for j in range(cols):
                pad[j] = max(pad[j], len(_js_number(data[start + j])))
    return _sub_layout(data, shape, pad, True)


def _sub_layout(data: list[float], shape: tuple[int, ...], pad: list[int], last: bool) -> list[str]:
    size, rank = shape[0], len(shape)
    if rank == 1:
        cells = [_js_number(v).ljust(pad[j]) for j, v in enumerate(data)]
        if size > _PRINT_LIMIT:
            cells = cells[:_PRINT_EDGE] + ["..."] + cells[-_PRINT_EDGE:]
        return ["[" + ", ".join(cells) + "]"]
    step = len(data) // size if size else 0
    if size > _PRINT_LIMIT:  # checked first: (10**17, 0) is summarised without a list of 10**17 picks
        picks: list[int | None] = [*range(_PRINT_EDGE), None, *range(size - _PRINT_EDGE, size)]
    else:
        picks = list(range(size))
    lines: list[str] = []
    for i in picks:
        if i is None:
            lines.append("...")
        else:
            lines.extend(_sub_layout(data[i * step : (i + 1) * step], shape[1:], pad, i == size - 1))
    end = "]" + ("" if last else ",\n" + "\n" * (rank - 2))  # blocks of rank >= 3 get a blank line
    if not lines:
        return ["[" + end]
    if len(lines) == 1:
        return ["[" + lines[0] + end]
    sep = "," if rank == 2 else ""
    lines[0] = "[" + lines[0] + sep
    for k in range(1, len(lines) - 1):
        lines[k] = " " + lines[k] + sep
    lines[-1] = " " + lines[-1] + end
    return lines


def print_tensor(t: Tensor, verbose: bool = False, file: TextIO | None = None) -> None:
    """Print a tensor in the layout of TF.js ``tf.print`` (``mt.print``).

    As in TF.js, values are rounded to 7 decimals (``1/3`` shows as
    ``0.3333333``), the columns of a matrix share a width, and a dimension
    longer than 20 is summarised with its first and last 3 entries and
    ``...``, so printing a big gradient stays readable. ``verbose=True``
    adds the dtype, rank and shape.

    Examples:
        >>> mt.print(mt.tensor([1.0, 2.5, 3.0]))
        Tensor
            [1, 2.5, 3]
        >>> mt.print(mt.tensor([[1.0, -0.5], [10.0, 2.0]]))
        Tensor
            [[1 , -0.5],
             [10, 2   ]]
        >>> mt.print(mt.tensor([[1.0, 2.0], [3.0, 4.0]]), verbose=True)
        Tensor
          dtype: float64
          rank: 2
          shape: [2,2]
          values:
            [[1, 2],
             [3, 4]]
    """
    if not isinstance(t, Tensor):
        raise InvalidArgumentError(
            explain(
                N_('print() needs a tensor, got {0}: {1}.').format(type(t).__name__, f'{t!r:.60}'),
                N_('mt.print shows a tensor the way tf.print does.'),
                N_("use Python's print() for other values."),
            ),
            value=t,
        )
    _print_values(t._values(), t.shape, t.dtype, verbose, file)
    if STATE.get().observers:  # mt.function's tracer: a print is an instruction of its program, as tf.print is
        shape, dtype = t.shape, t.dtype
        notify("on_effect", "print", [t], lambda data: _print_values(data, shape, dtype, verbose, file))


def _print_values(data: list[float], shape: tuple[int, ...], dtype: str, verbose: bool, file: TextIO | None) -> None:
    """What ``print_tensor`` prints, from the values (at a replay, the program's list)."""
    out = file if file is not None else sys.stdout
    lines = _layout(data, shape)
    if verbose:
        dims = "[" + ",".join(str(d) for d in shape) + "]"
        print(f"Tensor\n  dtype: {dtype}\n  rank: {len(shape)}\n  shape: {dims}\n  values:", file=out)
        pad = "    "
    else:
        print("Tensor", file=out)
        pad = "    "
    for line in lines:
        print(pad + line, file=out)
