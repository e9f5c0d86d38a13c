"""Checks for optimizer arguments: hyperparameters, and the gradients ``apply_gradients`` is given.

None changes any state.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from typing import Final

from ..engine.variable import VARIABLES
from ..errors import N_, InvalidArgumentError, ShapeError, explain
from ..autodiff.functional import GradMap, VariableGrads
from ..engine.tensor import Tensor
from ..engine.variable import Variable

EPSILON: Final = 1e-7
"""What ``epsilon=None`` means: TF.js's ``ENGINE.backend.epsilon()`` for float32."""

_NAN: Final = math.nan


# ── IEEE-754 scalar helpers: Python raises where a tensor framework gives inf/nan ──
# _div and _sqrt in optimizers.py are the ops' own safe scalar functions (microtape.ops.floats).


def nan_maximum(a: float, b: float) -> float:
    if a != a or b != b:
        return _NAN  # tf.maximum propagates NaN; Python's max() would not
    return a if a >= b else b


# ── validation helpers ─────────────────────────────────────────────────────────


def check_hyper(api: str, what: str, value: object, ok: Callable[[float], bool], rule: str, hint: str) -> float:
    """Return ``value`` as a float, or raise a teaching error naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgumentError(
            explain(
                N_("{0}: {1} must be a number, got {2}: {3}.").format(api, what, type(value).__name__, repr(value)),
                rule,
                hint,
            ),
            name=what,
            value=value,
        )
    number = float(value)
    if not math.isfinite(number) or not ok(number):
        raise InvalidArgumentError(explain(N_("{0}: {1}={2} is out of range.").format(api, what, repr(value)), rule, hint), name=what, value=value)
    return number


def check_flag(api: str, what: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgumentError(
            explain(
                N_("{0}: {1} must be True or False, got {2}: {3}.").format(api, what, type(value).__name__, repr(value)),
                N_("{0} switches a variant of the update rule on or off.").format(what),
                N_("pass {0}=True or {1}=False.").format(what, what),
            ),
            name=what,
            value=value,
        )
    return value


def check_learning_rate(api: str, value: object) -> float:
    return check_hyper(
        api,
        "learning_rate",
        value,
        lambda v: v > 0.0,
        N_("The learning rate is the step size: a positive, finite number."),
        N_("try 0.1 for SGD or 0.001 for Adam, and lower it if the loss blows up."),
    )


def check_unit(api: str, what: str, value: object, default: str, *, closed: bool = False) -> float:
    """A decay rate: in [0, 1), or [0, 1] when ``closed``."""
    interval = "[0, 1]" if closed else "[0, 1)"
    return check_hyper(
        api,
        what,
        value,
        (lambda v: 0.0 <= v <= 1.0) if closed else (lambda v: 0.0 <= v < 1.0),
        N_("{0} is the weight of the past in a running average: a number in {1}.").format(what, interval),
        N_("the usual value is {0}.").format(default),
    )


def check_epsilon(api: str, value: object) -> float:
    if value is None:
        return EPSILON
    return check_hyper(
        api,
        "epsilon",
        value,
        lambda v: v >= 0.0,
        N_("epsilon keeps a denominator away from zero: a small non-negative number."),
        N_("leave it out (epsilon=None means 1e-7, as in TF.js)."),
    )


def check_non_negative(api: str, what: str, value: object, hint: str) -> float:
    return check_hyper(api, what, value, lambda v: v >= 0.0, N_("{0} must be a finite number >= 0.").format(what), hint)


def variable_names_hint(name: str) -> str:
    close = difflib.get_close_matches(name, list(VARIABLES.keys()), n=3)
    if close:
        return N_("did you mean {0}?").format(" or ".join(repr(c) for c in close))
    return N_("pass the Variable itself, or the name of a variable that is alive.")


def collect_gradients(
    api: str, grads: object, tensors: list[Tensor] | None = None
) -> list[tuple[Variable, list[float]]]:
    """Check every (variable, gradient) and read the gradients, changing nothing
    (``tensors``, when given, receives the gradient tensors, in the same order)."""
    raw: list[tuple[object, object]] = []
    if isinstance(grads, VariableGrads):
        grads = grads.grads
    if isinstance(grads, GradMap):
        raw = [(v, g) for v, g in grads.pairs()]
    elif isinstance(grads, Mapping):
        raw = [(key, g) for key, g in grads.items()]
    elif isinstance(grads, (list, tuple)):
        for i, pair in enumerate(grads):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise InvalidArgumentError(
                    explain(
                        N_("{0}: item {1} is {2}, not a (gradient, variable) pair.").format(api, i, repr(pair)[:60]),
                        N_("A list holds (gradient, variable) pairs, as in TensorFlow's apply_gradients."),
                        N_("pass [(dw, w), (db, b)], or the dict from mt.variable_grads(f).grads."),
                    ),
                    index=i,
                )
            g, key = pair
            if isinstance(g, Variable) and not isinstance(key, Variable) and isinstance(key, Tensor):
                raise InvalidArgumentError(
                    explain(
                        N_("{0}: item {1} is (variable {2}, gradient): the order is reversed.").format(api, i, repr(g.name)),
                        N_("Pairs are (gradient, variable), as in TensorFlow's apply_gradients(zip(grads, vars))."),
                        N_("swap them: [(dw, w)]; or pass the GradMap itself: opt.apply_gradients(grads)."),
                    ),
                    index=i,
                )
            raw.append((key, g))
    else:
        raise InvalidArgumentError(
            explain(
                N_("{0}: got {1}, which holds no gradients I can read.").format(api, type(grads).__name__),
                N_("apply_gradients takes the result of mt.variable_grads (or its .grads), a dict keyed "
                   "by variables or names, or a list of (gradient, variable) pairs."),
                "value, grads = mt.variable_grads(loss); opt.apply_gradients(grads)",
            ),
            value=grads,
        )
    items: list[tuple[Variable, list[float]]] = []
    seen: set[str] = set()
    for key, g in raw:
        var = resolve_variable(key, api)
        if var.name in seen:
            raise InvalidArgumentError(
                explain(
                    N_("{0}: variable {1} has two gradients.").format(api, repr(var.name)),
                    N_("Each variable gets one gradient per step."),
                    N_("add them first: (dw1 + dw2, w)."),
                ),
                name=var.name,
            )
        seen.add(var.name)
        if g is None:
            continue
        if not isinstance(g, Tensor):
            raise InvalidArgumentError(
                explain(
                    N_("{0}: the gradient for {1} is a {2} ({3}), not a Tensor.").format(api, repr(var.name), type(g).__name__, repr(g)[:40]),
                    N_("Gradients are tensors with the variable's shape."),
                    N_("wrap it: mt.tensor(values, shape={0}).").format(var.shape),
                ),
                name=var.name,
                value=g,
            )
        if g.shape != var.shape:
            raise ShapeError(
                explain(
                    N_("{0}: the gradient for {1} has shape {2}, but the variable has shape {3}.").format(api, repr(var.name), g.shape, var.shape),
                    N_("A gradient has exactly the shape of its variable (dL/dw_i for every entry w_i)."),
                    N_("check which gradient belongs to which variable, and reduce over batch axes so it has shape {0}.").format(var.shape),
                ),
                name=var.name,
                shapes=(g.shape, var.shape),
            )
        items.append((var, g.data_sync()))  # raises DisposedTensorError for a disposed gradient
        if tensors is not None:
            tensors.append(g)
    if not items:
        raise InvalidArgumentError(
            explain(
                N_("{0}: no gradients provided for any variable.").format(api),
                N_("apply_gradients needs at least one (variable, gradient) with a gradient."),
                N_("check that the loss depends on the variables (mt.variable_grads says which ones)."),
            )
        )
    return items

def resolve_variable(key: object, api: str) -> Variable:
    """The live, trainable variable that ``key`` (a Variable or a name) stands for."""
    if isinstance(key, Variable):
        var = key
    elif isinstance(key, str):
        found = VARIABLES.get(key)
        if found is None or found.is_disposed:
            raise InvalidArgumentError(
                explain(
                    N_("{0}: no variable named {1} is alive.").format(api, repr(key)),
                    N_("Gradients keyed by name update the variable of that name."),
                    variable_names_hint(key),
                ),
                name=key,
            )
        var = found
    else:
        raise InvalidArgumentError(
            explain(
                N_("{0}: {1} ({2}) is neither a Variable nor a variable name.").format(api, repr(key)[:40], type(key).__name__),
                N_("Only variables can be updated; a plain tensor is a constant."),
                N_("make it a variable: w = mt.variable(t), and key the gradient by w or w.name."),
            ),
            value=key,
        )
    var.data_sync()  # raises DisposedTensorError for a disposed variable
    if not var.trainable:
        raise InvalidArgumentError(
            explain(
                N_("{0}: variable {1} is not trainable.").format(api, repr(var.name)),
                N_("Optimizers update trainable variables only."),
                N_("set {0}.trainable = True if it is a parameter.").format(var.name),
            ),
            name=var.name,
        )
    return var
