"""Text plots: ``sparkline`` (one line of bars) and ``histogram`` (one line per bin).

NaN and Inf cannot be placed on a scale: a sparkline shows them as
``!`` and a histogram counts them on a last line. Spans are computed with
halves, so the whole float range, from -1.8e308 to 1.8e308, does not overflow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..engine.types import is_int
from ..errors import N_, InvalidArgumentError, explain
from ..language import tr
from ..engine.formatting import format_number
from ..engine.tensor import Tensor

__all__ = ["histogram", "sparkline"]

_BARS = "▁▂▃▄▅▆▇█"


def _short_number(v: float) -> str:
    """Integers without a decimal point, other values with 4 significant digits."""
    if math.isfinite(v) and v == int(v) and abs(v) < 1e16:
        return str(int(v))
    return format_number(v)


def _series(values: Tensor | Sequence[float]) -> list[float]:
    if isinstance(values, Tensor):
        return values.data_sync()
    return [float(v) for v in values]


def sparkline(values: Tensor | Sequence[float], log: bool = False) -> str:
    """One-line bar chart of a series or a tensor's values: ``▁▂▄█``.

    ``log=True`` scales by log10, so norms spanning many orders of magnitude
    (exploding or vanishing gradients) stay readable. NaN and Inf show as ``!``.

    Examples:
        >>> mt.sparkline([1, 2, 3, 4, 8])
        '▁▂▃▄█'
        >>> mt.sparkline([1e-6, 1e-3, 1.0], log=True)
        '▁▅█'
        >>> mt.sparkline([0.0, 0.0, float("nan")], log=True)
        '▁▁!'
        >>> mt.sparkline([-1.7e308, 0.0, 1.7e308, float("inf")])    # the whole float range
        '▁▅█!'
    """
    data = _series(values)
    scaled = [(math.log10(v) if v > 0 else -math.inf) if log else v for v in data]
    finite = [v for v in scaled if math.isfinite(v)]
    if not finite:  # nothing to scale by: zeros (on a log scale) sit at the bottom
        return "".join("!" if not math.isfinite(raw) else _BARS[0] for raw in data)
    lo, hi = min(finite), max(finite)
    half_span = hi / 2 - lo / 2  # halves: the span of -1e308 and 1e308 does not overflow
    out = []
    for v, raw in zip(scaled, data):
        if not math.isfinite(raw):
            out.append("!")
        elif not math.isfinite(v):
            out.append(_BARS[0])
        else:
            place = (v / 2 - lo / 2) / half_span if half_span else 0.0
            out.append(_BARS[min(len(_BARS) - 1, int(place * (len(_BARS) - 1) + 0.5))])
    return "".join(out)


def histogram(values: Tensor | Sequence[float], bins: int = 10, width: int = 30) -> str:
    """Text histogram of a tensor's values, one line per bin.

    NaN and Inf cannot be binned: a last line counts them.

    Examples:
        >>> print(mt.histogram([0.0, 0.1, 0.2, 0.9, 1.0], bins=2, width=6))
        [0, 0.5)  ###### 3
        [0.5, 1]  #### 2
        >>> print(mt.histogram([-1.7e308, 1.7e308, 1.7e308, float("nan")], bins=2, width=6))
        [-1.7e+308, 0)  ### 1
        [0, 1.7e+308]   ###### 2
        (1 NaN/Inf value left out)
    """
    everything = _series(values)
    data = [v for v in everything if math.isfinite(v)]
    left_out = len(everything) - len(data)
    note = "\n" + (tr(N_("({0} NaN/Inf value left out)")) if left_out == 1 else tr(N_("({0} NaN/Inf values left out)"))).format(left_out) if left_out else ""
    if not is_int(bins) or bins < 1:
        raise InvalidArgumentError(explain(N_('bins={0} must be a positive int.').format(repr(bins)), N_('A histogram needs at least one bin.'), N_('use bins=10.')), value=bins)
    if not data:
        return tr(N_("(no finite values)")) + note
    lo, hi = min(data), max(data)
    half_span = (hi / 2 - lo / 2) or 0.5  # halves: the span of -1e308 and 1e308 does not overflow
    counts = [0] * bins
    for v in data:
        counts[min(bins - 1, int((v / 2 - lo / 2) / half_span * bins))] += 1
    top = max(counts)
    edges = [lo + 2 * half_span * i / bins if half_span < 8e307 else lo * (1 - i / bins) + hi * (i / bins) for i in range(bins + 1)]
    labels = [f"[{_short_number(edges[i])}, {_short_number(edges[i + 1])}{']' if i == bins - 1 else ')'}" for i in range(bins)]
    pad = max(len(label) for label in labels)
    return "\n".join(
        f"{label:<{pad}}  {'#' * max(1 if c else 0, round(c / top * width))} {c}" for label, c in zip(labels, counts)
    ) + note
