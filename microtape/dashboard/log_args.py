"""What ``Dashboard.log`` accepts: gradients and variables named, odd values refused before anything is recorded.

"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from ..errors import InvalidArgumentError, explain
from ..engine.tensor import Tensor
from ..engine.variable import Variable

__all__ = ["named_grads", "named_variables", "short_repr"]


def named_grads(grads: object) -> list[tuple[str, Tensor]]:
    """Name each gradient: variable names, dict keys or list positions."""
    if hasattr(grads, "grads") and isinstance(getattr(grads, "grads"), Mapping):  # a VariableGrads
        grads = getattr(grads, "grads")
    if isinstance(grads, Tensor):
        return [(getattr(grads, "name", "grad"), grads)]
    if isinstance(grads, Mapping):
        named = [(k.name if isinstance(k, Variable) else str(k), v) for k, v in grads.items() if v is not None]
        odd = [(name, v) for name, v in named if not isinstance(v, Tensor)]
        if not odd:
            return cast(list[tuple[str, Tensor]], named)
        name, value = odd[0]
        raise InvalidArgumentError(
            explain(
                f"Dashboard.log(grads=...): the gradient of {name!r} is a {type(value).__name__}, not a tensor.",
                "Each entry of a dict of gradients is a tensor (or None for a variable that got none).",
                "value, grads = mt.variable_grads(loss); dash.log(step, loss=value, grads=grads)",
            ),
            value=value,
        )
    if isinstance(grads, (list, tuple)):
        out: list[tuple[str, Tensor]] = []
        for i, g in enumerate(grads):
            if isinstance(g, tuple) and len(g) == 2 and isinstance(g[1], Variable):  # (grad, variable) pairs
                if isinstance(g[0], Tensor):
                    out.append((g[1].name, g[0]))
                elif g[0] is not None:
                    break
            elif isinstance(g, Tensor):
                out.append((str(i), g))
            elif g is not None:
                break
        else:
            return out
    raise InvalidArgumentError(
        explain(
            f"Dashboard.log(grads=...) got {type(grads).__name__}, which is not a set of gradients.",
            "Pass what variable_grads, grads or tape.gradient returned: a tensor, a list, a dict "
            "keyed by name or variable, or (gradient, variable) pairs.",
            "value, grads = mt.variable_grads(loss); dash.log(step, loss=value, grads=grads)",
        ),
        value=grads,
    )


def named_variables(variables: object) -> list[tuple[str, Tensor]]:
    if isinstance(variables, Mapping):
        items = [(k.name if isinstance(k, Variable) else str(k), v) for k, v in variables.items()]
    elif isinstance(variables, (list, tuple)) and all(isinstance(v, Variable) for v in variables):
        items = [(v.name, v) for v in variables]
    else:
        items = []
    if not items or not all(isinstance(t, Tensor) for _, t in items):
        raise InvalidArgumentError(
            explain(
                f"Dashboard.log(variables=...) got {type(variables).__name__}: expected a list of variables "
                "or a dict of name -> tensor.",
                "The update-to-weight ratio compares each variable with its value at the previous log call.",
                "dash.log(step, loss=value, grads=grads, variables=[w, b])",
            ),
            value=variables,
        )
    return items


def short_repr(value: object) -> str:
    """A repr short enough for an error message (a step of 10**400 has 401 digits).

    Examples:
        >>> from microtape.dashboard.log_args import short_repr
        >>> short_repr(3), short_repr(10**400), short_repr(10**5000)
        ('3', '10000000000000000000...00000000 (401 characters)', 'an int of 5001 digits')
    """
    if isinstance(value, int) and abs(value) >= 10**40:  # str() of an int over 4300 digits raises on 3.11+
        size = abs(value)
        digits = len(str(size)) if size.bit_length() < 14000 else int(size.bit_length() * 0.30103) + 1
        if digits > 1000:
            return f"an int of {digits} digits"
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"
