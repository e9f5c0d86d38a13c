"""Finite differences: evaluate ``f`` without recording, ``numerical_grad``, and compare one entry.

The reference for every gradient is the central
difference ``(f(x + ε) - f(x - ε)) / 2ε``: with float64 and ε = 1e-6 its
error is around 1e-10 for smooth functions (float32 frameworks need ε near
1e-3, because float32 keeps only 7 digits and the subtraction would lose
them all). ``compare_row`` compares an analytic number with it and marks
kinks (where the one-sided differences still disagree at a ten times
smaller step) instead of failing them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias, overload

from ..engine import arena
from ..engine.arena import STATE, new
from ..engine.types import Shape, is_number
from ..errors import InvalidArgumentError, explain
from ..engine.convert import conversion_hint
from ..engine.tensor import Tensor, TensorFn

__all__ = ["Culprit", "DifferenceMethod", "GradCheckRow", "numerical_grad"]

Fn = Callable[..., Tensor]
DifferenceMethod: TypeAlias = Literal["central", "forward"]
"""``numerical_grad(method=...)``: central differences (error O(eps²)) or forward ones (O(eps), half the calls)."""


# -- evaluating f without recording and without leaking -------------------


def run_paused(fn: Callable[[], object]) -> object:
    """Run ``fn`` with no tape recording, leaving nothing in the arena.

    Its tensors skip the arena (``skip_arena``, as in an unobserved backward
    pass) and go as soon as nothing references them. Under ``profile`` or
    ``leak_check`` they are registered as usual, so those tools see every op
    of the check; the scope disposes them.
    """
    st = STATE.get()
    token = STATE.set(st.replace(tapes=(), skip_arena=not st.observers))
    try:
        # A scope still: a nested backward pass that another tape watches (order 2)
        # registers its tensors, and this scope disposes them.
        return arena.run_in_scope("check_grads()", fn, returns_tensors=False)
    finally:
        STATE.reset(token)


def as_output(y: object) -> Tensor:
    """``y`` if it is a tensor; otherwise the error that says f must return one."""
    if not isinstance(y, Tensor):
        raise InvalidArgumentError(
            explain(
                f"check_grads: f must return a tensor, got {type(y).__name__}: {y!r:.60}.",
                "The checker differentiates a tensor-valued function f(*inputs).",
                "return the result of microtape ops, for example (x * x).sum().",
            ),
            value=y,
        )
    return y


def evaluator(f: Fn, datas: Sequence[list[float]], shapes: Sequence[Shape]) -> Callable[[], list[float]]:
    """A function of no arguments: the flat output values of ``f`` at the current contents of ``datas``.

    Call it inside :func:`run_paused` (once around a whole loop of calls: per
    call, the set-up cost more than a small ``f``). The input tensors are
    made once and wrap the caller's working lists without a copy, so a loop
    moves an input by writing one entry of its list and calls again: no list
    copied, no tensor made per call (a copy per call made full mode O(n²)).
    The output is copied out before the caller writes an entry again.
    """
    xs = tuple(new(Tensor, d, s, "tensor") for d, s in zip(datas, shapes))

    def evaluate() -> list[float]:
        return as_output(f(*xs)).data_sync()

    return evaluate


def values_at(f: Fn, datas: Sequence[list[float]], shapes: Sequence[Shape]) -> list[float]:
    """Flat output values of ``f`` at inputs given as flat lists: one call of an :func:`evaluator`."""
    return evaluator(f, datas, shapes)()


def check_fn(f: object, api: str) -> None:
    if not callable(f):
        raise InvalidArgumentError(
            explain(
                f"{api}(f, inputs) needs a function, got {type(f).__name__}: {f!r:.60}.",
                "It calls f(*inputs).",
                f"write mt.{api}(lambda x: (x * x).sum(), [x]).",
            ),
            value=f,
        )


def check_inputs(inputs: object, api: str) -> list[Tensor]:
    items = [inputs] if isinstance(inputs, Tensor) else inputs
    if not isinstance(items, (list, tuple)) or not items:
        raise InvalidArgumentError(
            explain(
                f"{api}: inputs must be a tensor or a non-empty list of tensors, got {type(inputs).__name__}.",
                "f is called as f(*inputs).",
                f"write mt.{api}(f, [x, y]).",
            ),
            value=inputs,
        )
    out = []
    for i, x in enumerate(items):
        if not isinstance(x, Tensor):
            raise InvalidArgumentError(
                explain(
                    f"{api}: inputs[{i}] is a {type(x).__name__}, not a tensor: {x!r:.60}.",
                    "Every input must be a tensor.",
                    conversion_hint(x),
                ),
                value=x,
            )
        if x._data is None:
            raise arena.disposed_error(x)
        out.append(x)
    return out


def check_eps(eps: float, method: str = "central") -> None:
    if not (is_number(eps) and 0.0 < eps < 1.0):
        raise InvalidArgumentError(
            explain(
                f"eps={eps!r} is not a usable step.",
                "The finite-difference step must be a small positive number (0 < eps < 1).",
                "use eps=1e-6 in float64.",
            ),
            value=eps,
        )
    if method not in ("central", "forward"):
        raise InvalidArgumentError(
            explain(
                f'method={method!r} is not "central" or "forward".',
                "Central differences are accurate to O(eps²), forward ones to O(eps).",
                'use method="central".',
            ),
            value=method,
        )


# One overload per count of inputs (1 to 6): a lambda's parameters are tensors (see TensorFn).
@overload
def numerical_grad(
    f: Callable[[Tensor], Tensor], inputs: Tensor | Sequence[Tensor], eps: float = 1e-6, method: DifferenceMethod = "central"
) -> list[Tensor]: ...
@overload
def numerical_grad(
    f: Callable[[Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], eps: float = 1e-6, method: DifferenceMethod = "central"
) -> list[Tensor]: ...
@overload
def numerical_grad(
    f: Callable[[Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], eps: float = 1e-6, method: DifferenceMethod = "central"
) -> list[Tensor]: ...
@overload
def numerical_grad(
    f: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], eps: float = 1e-6, method: DifferenceMethod = "central"
) -> list[Tensor]: ...
@overload
def numerical_grad(
    f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], eps: float = 1e-6, method: DifferenceMethod = "central"
) -> list[Tensor]: ...
@overload
def numerical_grad(
    f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], eps: float = 1e-6, method: DifferenceMethod = "central"
) -> list[Tensor]: ...


def numerical_grad(
    f: TensorFn, inputs: Tensor | Sequence[Tensor], eps: float = 1e-6, method: DifferenceMethod = "central"
) -> list[Tensor]:
    """Gradient of ``sum(f(*inputs))`` by finite differences, one tensor per input.

    ``method="central"`` uses ``(f(x+ε) - f(x-ε)) / 2ε`` (error O(ε²));
    ``"forward"`` uses ``(f(x+ε) - f(x)) / ε`` (error O(ε), half the calls).
    Nothing is recorded on open tapes.

    Examples:
        >>> [g] = mt.numerical_grad(lambda x: x * x, [mt.tensor([1.0, 3.0])])
        >>> [round(v, 6) for v in g.data_sync()]      # 2x
        [2.0, 6.0]
    """
    check_fn(f, "numerical_grad")
    xs = check_inputs(inputs, "numerical_grad")
    check_eps(eps, method)
    datas = [list(x._values()) for x in xs]
    shapes = [x.shape for x in xs]

    def differences() -> list[list[float]]:
        evaluate = evaluator(f, datas, shapes)
        base = math.fsum(evaluate()) if method == "forward" else 0.0
        grads = []
        for data in datas:
            grad = []
            for j in range(len(data)):
                keep = data[j]
                data[j] = keep + eps
                plus = math.fsum(evaluate())
                if method == "central":
                    data[j] = keep - eps
                    minus = math.fsum(evaluate())
                    grad.append((plus - minus) / (2 * eps))
                else:
                    grad.append((plus - base) / eps)
                data[j] = keep
            grads.append(grad)
        return grads

    computed = run_paused(differences)
    assert isinstance(computed, list)
    result = []
    for i, grad in enumerate(computed):
        result.append(new(Tensor, grad, shapes[i], "numerical_grad"))
    return result


@dataclass(frozen=True, slots=True)
class GradCheckRow:
    """One compared entry: ∂ output[output] / ∂ inputs[input][index]."""

    input: int
    index: tuple[int, ...]
    output: tuple[int, ...]
    analytic: float
    numeric: float
    abs_error: float
    rel_error: float
    status: str  # "ok", "FAIL" or "kink"
    order: int = 1


@dataclass(frozen=True, slots=True)
class Culprit:
    """The op whose VJP disagrees with finite differences at the inputs it saw.

    ``detail`` says along what it was re-checked (or which input disagreed
    along a random direction, or what is wrong with the VJP's result);
    ``analytic`` and ``numeric`` are its two values there; ``order`` is 2 when the VJP is right but a tape cannot
    differentiate it correctly (the second derivative is wrong).
    """

    op: str
    where: str
    input_shapes: tuple[Shape, ...]
    analytic: float
    numeric: float
    detail: str = ""
    order: int = 1

    def __str__(self) -> str:
        shapes = ", ".join(str(s) for s in self.input_shapes)
        what = f"the VJP of {self.op!r}" if self.order == 1 else f"the second derivative through the VJP of {self.op!r}"
        head = f"culprit: {what} (inputs {shapes}) called at {self.where}"
        if self.analytic != self.analytic and self.numeric != self.numeric:
            return f"{head}\n  {self.detail}"
        if self.detail.startswith("for input "):  # re-checked at its own scale, for the failing entry
            along = self.detail
        else:
            along = "along a random direction" + (f" of {self.detail}" if self.detail else "")
        lines = [
            head,
            f"  {along} it gives {self.analytic:.7g}, finite differences give {self.numeric:.7g}",
            f"  (relative difference {relative_error(self.analytic, self.numeric):.1e})",
        ]
        if self.order == 2:
            lines.append(
                "  hint: compute grad_fn with microtape ops on the inputs it closes over; values taken out "
                "of the graph (.data_sync(), .item()) or computed in f's forward (saved ones too) are constants to a tape"
            )
        return "\n".join(lines)


def relative_error(a: float, n: float) -> float:
    scale = max(abs(a), abs(n))
    return abs(a - n) / scale if scale > 0 else 0.0


# -- comparing -----------------------------------------------------------------


def is_close(a: float, n: float, atol: float, rtol: float) -> bool:
    if not (math.isfinite(a) and math.isfinite(n)):
        return a == n or (a != a and n != n)
    return abs(a - n) <= atol + rtol * abs(n)


def compare_row(
    i: int, index: tuple[int, ...], output: tuple[int, ...], a: float, n: float,
    left: float, right: float, atol: float, rtol: float, order: int, kink: bool = False,
) -> GradCheckRow:
    """Compare analytic ``a`` with central ``n``; ``left``/``right`` are the one-sided slopes.

    ``kink`` says the slopes still disagree at a ten times smaller step, so the
    function really bends there (a smooth function's slopes converge): such an
    entry is a kink even when ``a`` happens to equal the central difference
    (``abs`` at 0, a tie in ``max``). Without it an entry is never a kink:
    slopes that disagree at one step only are a smooth function of high
    curvature, and an analytic value between them can still be wrong.
    """
    err = abs(a - n) if math.isfinite(a) and math.isfinite(n) else (0.0 if is_close(a, n, atol, rtol) else math.inf)
    scale = max(abs(a), abs(n))
    rel = err / scale if scale > 0 and math.isfinite(err) else (0.0 if err == 0 else math.inf)
    between = min(left, right) - atol <= a <= max(left, right) + atol
    if kink and between:
        status = "kink"
    elif is_close(a, n, atol, rtol):
        status = "ok"
    else:
        status = "FAIL"
    return GradCheckRow(i, index, output, a, n, err, rel, status, order)


def same_jump(jump: float, jump_small: float) -> bool:
    """Whether the gap between the one-sided slopes stays the same at a 10x smaller step.

    Smooth functions: the gap is curvature times the step, so it shrinks 10x.
    A kink (a jump in the slope): it stays. A jump in the value (a step, like
    the condition of ``where``): it grows 10x, and is not a kink.
    """
    return 0.5 * abs(jump) < abs(jump_small) < 2.0 * abs(jump)


def slopes(along: Callable[[float], float], at: float, plus: float, minus: float, step: float, atol: float, rtol: float) -> tuple[float, float, bool]:
    """The one-sided slopes of ``along`` at 0 and whether they show a kink.

    ``plus``, ``minus`` and ``at`` are ``along`` at ``step``, ``-step`` and 0.
    Slopes that disagree are a kink only if they still disagree at a ten
    times smaller step (:func:`same_jump`): the rule of ``check_grads`` and of
    the culprit finder alike, so the two never tell a kink apart differently.
    """
    left, right = (at - minus) / step, (plus - at) / step
    if is_close(left, right, atol, rtol):
        return left, right, False
    small = step / 10
    return left, right, same_jump(right - left, (along(small) - at) / small - (at - along(-small)) / small)
