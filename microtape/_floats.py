"""Scalar functions that follow IEEE-754 where Python raises: ``safe_exp(1000.0)`` is inf, not OverflowError.

Read before the op files, whose forwards map these over flat lists, and the
optimizers, which use ``safe_div`` and ``safe_sqrt`` in their updates. Each
returns what a float32 or float64 tensor framework gives: inf for overflow,
nan outside the domain.

Examples:
    >>> from microtape._floats import safe_div, safe_log
    >>> safe_div(1.0, 0.0), safe_div(0.0, 0.0), safe_log(0.0)
    (inf, nan, -inf)
"""

from __future__ import annotations

import math

__all__ = ["safe_cos", "safe_div", "safe_exp", "safe_log", "safe_pow", "safe_sin", "safe_sqrt"]

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
