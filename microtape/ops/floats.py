"""Scalar functions that follow IEEE-754 where Python raises: ``safe_exp(1000.0)`` is inf, not OverflowError.

Each returns what a float32 or float64 tensor framework gives: inf for
overflow, nan outside the domain.

Examples:
    >>> from microtape.ops.floats import safe_div, safe_log
    >>> safe_div(1.0, 0.0), safe_div(0.0, 0.0), safe_log(0.0)
    (inf, nan, -inf)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = [
    "safe_cos",
    "safe_div",
    "safe_exp",
    "safe_expm1",
    "safe_log",
    "safe_log1p",
    "safe_log2",
    "safe_mean_abs",
    "safe_norm",
    "safe_pow",
    "safe_sin",
    "safe_sqrt",
    "safe_total",
]

_INF = math.inf
_NAN = math.nan


def safe_exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return _INF


def safe_log(v: float) -> float:
    if v > 0.0:
        return math.log(v)
    return -_INF if v == 0.0 else _NAN  # log 0 = -inf; negative or nan gives nan


def safe_expm1(v: float) -> float:
    try:
        return math.expm1(v)
    except OverflowError:
        return _INF


def safe_log1p(v: float) -> float:
    if v > -1.0:
        return math.log1p(v)
    return -_INF if v == -1.0 else _NAN  # log1p(-1) = -inf; below -1, or nan, gives nan


def safe_log2(v: float) -> float:
    if v > 0.0:
        return math.log2(v)
    return -_INF if v == 0.0 else _NAN


def safe_sqrt(v: float) -> float:
    return math.sqrt(v) if v >= 0.0 else _NAN


def safe_sin(v: float) -> float:
    return math.sin(v) if not math.isinf(v) else _NAN


def safe_cos(v: float) -> float:
    return math.cos(v) if not math.isinf(v) else _NAN


def safe_div(a: float, b: float) -> float:
    if b != 0.0:
        return a / b
    if a == 0.0 or a != a:
        return _NAN
    return math.copysign(_INF, a) * math.copysign(1.0, b)


def _is_odd_int(v: float) -> bool:
    return v == v and not math.isinf(v) and v == int(v) and int(v) % 2 == 1


def safe_pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return -_INF if a < 0 and _is_odd_int(b) else _INF
    except ValueError:
        if a == 0.0:  # zero to a negative power
            return math.copysign(_INF, a) if _is_odd_int(b) else _INF
        return _NAN  # a negative base to a fractional power


_TINY = 1e-150  # below this a norm's squares may have underflowed: rescale


def safe_norm(values: Iterable[float]) -> float:
    """The Euclidean norm ``sqrt(Σ v²)`` that never raises and never loses a huge or tiny value.

    The plain sum of squares is used when it is safe (so ordinary norms keep
    their exact digits); when a square overflows or underflows, the values
    are scaled by the largest ``|v|`` first, as BLAS's ``nrm2`` does. The
    result is ``inf`` only when the norm itself exceeds the largest float
    (an *overflow* of finite values), ``nan`` when a value is NaN.

    Examples:
        >>> from microtape.ops.floats import safe_norm
        >>> safe_norm([3.0, -4.0]), safe_norm([1e154, 1e154]), safe_norm([1e308, 1e308]), safe_norm([1.5e308, 1.5e308])
        (5.0, 1.4142135623730953e+154, 1.4142135623730951e+308, inf)
        >>> safe_norm([3e-200, 4e-200]), safe_norm([]), safe_norm([1.0, float("nan")])
        (5e-200, 0.0, nan)
    """
    data = values if isinstance(values, list) else list(values)
    try:
        plain = math.sqrt(math.fsum(v * v for v in data))
    except OverflowError:  # fsum's partial sums of finite squares overflowed
        plain = _INF
    if plain != plain or (_TINY < plain < _INF):
        return plain
    if any(v != v for v in data):
        return _NAN
    top = max((abs(v) for v in data), default=0.0)
    if top == 0.0 or top == _INF:
        return top
    return top * math.sqrt(math.fsum((v / top) * (v / top) for v in data))  # may round up to inf: a true overflow


def safe_total(values: Iterable[float]) -> float:
    """The exactly rounded sum (``math.fsum``), or IEEE's ``inf`` or ``nan`` where ``fsum`` raises
    (``inf + -inf``, or partial sums that overflow): what a report sums its values with.

    Examples:
        >>> from microtape.ops.floats import safe_total
        >>> safe_total([0.1, 0.2]), safe_total([math.inf, -math.inf]), safe_total([1e308, 1e308])
        (0.30000000000000004, nan, inf)
    """
    data = values if isinstance(values, list) else list(values)
    try:
        return math.fsum(data)
    except (OverflowError, ValueError):
        total = 0.0
        for v in data:
            total += v
        return total


def safe_mean_abs(values: Sequence[float], count: int) -> float:
    """``Σ|v| / count`` for finite values, with no OverflowError when the sum exceeds the float range.

    Examples:
        >>> from microtape.ops.floats import safe_mean_abs
        >>> safe_mean_abs([1.0, -3.0], 2), safe_mean_abs([1.7e308, 1.7e308], 2)
        (2.0, 1.7e+308)
    """
    try:
        return math.fsum(abs(v) for v in values) / count
    except OverflowError:
        return math.fsum(abs(v) / count for v in values)
