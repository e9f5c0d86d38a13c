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
from typing import Final

from ..engine import arena
from ..engine.arena import STATE, new
from ..engine.types import Shape, is_number
from ..errors import InvalidArgumentError, explain
from ..engine.convert import conversion_hint
from ..ops.floats import safe_total
from ..engine.tensor import Tensor, TensorFn

__all__ = ["Culprit", "GradCheckRow", "Probe", "compare_along", "judge", "numerical_grad"]

Fn = Callable[..., Tensor]


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


def numerical_grad(
    f: TensorFn, inputs: Tensor | Sequence[Tensor], eps: float = 1e-6, method: str = "central"
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
        base = safe_total(evaluate()) if method == "forward" else 0.0
        grads = []
        for data in datas:
            grad = []
            for j in range(len(data)):
                keep = data[j]
                data[j] = keep + eps
                plus = safe_total(evaluate())
                if method == "central":
                    data[j] = keep - eps
                    minus = safe_total(evaluate())
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
    status: str  # "ok", "FAIL", "kink" or "inconclusive"
    order: int = 1
    why: str = ""
    """For every status but ``ok``: what was seen (which side is not finite, the slopes of a kink,
    the rounding floor, a jump) and what to try."""


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
    saved: int = 0
    """How many tensors a ``custom_grad``'s ``f`` saved for its ``grad_fn`` (``save([...])``)."""
    custom: bool = False
    """Whether the op is a ``custom_grad`` (its VJP is the user's ``grad_fn``), not a primitive."""

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
        rel = relative_error(self.analytic, self.numeric)
        lines = [
            head,
            f"  {along} it gives {self.analytic:.7g}, finite differences give {self.numeric:.7g}",
            f"  (relative difference {rel:.1e})" if rel == rel else "  (one of the two is not a finite number)",
        ]
        if self.order == 2:
            lines.append("  hint: " + self.second_order_hint())
        return "\n".join(lines)

    def second_order_hint(self) -> str:
        """Why a tape differentiates this VJP wrongly, by what it reads: saved tensors, or values a tape never saw."""
        if self.saved:
            return (
                f"grad_fn reads the {self.saved} tensor(s) f saved with save([...]): f's forward pass is not recorded, "
                "so to the tape that differentiates grad_fn they are constants; compute them inside grad_fn from "
                "the inputs it closes over (x * x there, not a saved x * x)"
            )
        if self.custom:
            return (
                "grad_fn uses values no tape recorded: a tensor made in f (its forward pass is not recorded) or "
                "numbers read out with .data_sync() or .item(); compute them inside grad_fn with microtape ops "
                "on the inputs it closes over"
            )
        return (
            f"the VJP of {self.op!r} computes its gradient from values a tape cannot see (numbers read out with "
            ".data_sync() or .item(), or tensors made from them): write it with microtape ops on its inputs"
        )


# -- comparing: can the finite difference be trusted? ---------------------------------

EPS_MACHINE: Final = 2.0**-52
"""The spacing of float64 numbers near 1: f's values carry rounding errors of about this times |f|."""
ROUNDING_MARGIN: Final = 4.0
"""A disagreement smaller than this many rounding floors (``EPS_MACHINE * |f| / step``) is not measured."""
STABLE: Final = 0.25
"""A finite difference is trusted when doubling its step moves it by less than this share of the disagreement."""


class Probe:
    """``f`` moved along one direction: its flat output values at a step ``t``, each step evaluated once.

    ``move(t)`` evaluates ``f`` with the input moved by ``t`` (an entry, or a
    random direction in fast mode); ``base`` is ``f`` at the point itself.
    The judge asks for the steps it needs (±eps, then ±eps/10 or ±2·eps only
    for an entry that needs a closer look), and ``calls`` counts them.
    """

    def __init__(self, move: Callable[[float], list[float]], base: list[float]) -> None:
        self._move = move
        self._values: dict[float, list[float]] = {0.0: base}
        self.calls = 0

    def at(self, t: float) -> list[float]:
        values = self._values.get(t)
        if values is None:
            values = self._values[t] = self._move(t)
            self.calls += 1
        return values


def is_close(a: float, n: float, atol: float, rtol: float) -> bool:
    """Both finite and within ``atol + rtol * |n|``: a non-finite value is never close to anything."""
    if not (math.isfinite(a) and math.isfinite(n)):
        return False
    return abs(a - n) <= atol + rtol * abs(n)


def relative_error(a: float, n: float) -> float:
    """``|a - n| / max(|a|, |n|)``; ``nan`` when either is not finite (a NaN has no distance)."""
    if not (math.isfinite(a) and math.isfinite(n)):
        return math.nan
    scale = max(abs(a), abs(n))
    return abs(a - n) / scale if scale > 0 else 0.0


def same_jump(jump: float, jump_small: float) -> bool:
    """Whether the gap between the one-sided slopes stays the same at a 10x smaller step.

    Smooth functions: the gap is curvature times the step, so it shrinks 10x.
    A kink at the point (a jump in the slope): it stays. A jump in the value
    (a step, like the condition of ``where``): it grows 10x. A kink the big
    step reaches but the small one does not: it falls to about 0.
    """
    return 0.5 * abs(jump) < abs(jump_small) < 2.0 * abs(jump)


def _text(v: float) -> str:
    return f"{v:.4g}"


def _nice_step(step: float) -> float:
    """The smallest of 1, 2 and 5 times a power of ten that is at least ``step``."""
    power = 10.0 ** math.floor(math.log10(step))
    return next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= step * (1 - 1e-12))


def _larger_step(magnitude: float, tol: float) -> str:
    """The eps at which the rounding floor of values of ``magnitude`` is a tenth of ``tol``, as advice."""
    step = 10.0 * EPS_MACHINE * magnitude / max(tol, 1e-300)
    if not step < 0.5:
        return "f's values are too large for its slope to show in a difference of two of them: check f without its large constant part"
    return f"try a larger step: eps={_nice_step(step):g}"


def judge(
    a: float, probe: Probe, k: int, eps: float, atol: float, rtol: float,
    i: int = 0, index: tuple[int, ...] = (), output: tuple[int, ...] = (), order: int = 1,
    scale: Callable[[], float] | None = None,
) -> GradCheckRow:
    """Compare the analytic ``a`` with the central difference of output ``k`` of ``probe``, and say
    whether that difference can be trusted.

    The verdicts, in the order they are decided:

    * ``FAIL``, the analytic side is not finite: a NaN or Inf gradient never passes.
    * ``inconclusive``, f is not finite at the point: nothing to measure a slope with.
    * The step leaves f's domain (f(x ± eps) is not finite): a step 10, 100 or
      1000 times smaller that stays inside is used instead, and said so;
      ``inconclusive`` when none does.
    * ``kink``: the one-sided slopes disagree, still at a ten times smaller
      step (so f really bends at the point: ``relu``/``abs`` at 0, a tie in
      ``max``) and ``a`` lies between them, a valid subgradient.
    * f jumps at the point (the slopes' gap grows at a smaller step):
      ``ok`` when f is continuous through both sides and ``a`` matches the
      difference through them (``where``'s condition at 0), else ``inconclusive``.
    * A kink that the step reaches but a ten times smaller one does not
      (``relu`` at 1e-7): the difference at the smaller step is used, and said so.
    * ``ok`` when ``a`` is within ``atol + rtol * |numeric|``.
    * ``inconclusive`` when the disagreement is below the rounding floor:
      about ``EPS_MACHINE`` times the size of the values the difference
      subtracts, over the step (f's values, and ``scale()``: the size of
      f's intermediate values weighted by how much f depends on them, as a
      1e9 added and taken away again inside f), or when the finite
      difference itself moves when the step doubles (it is not measuring a
      derivative yet).
    * ``FAIL`` otherwise: a disagreement the finite difference measures.

    ``why`` says, for every verdict but ``ok``, what was seen and what to try.
    """

    def row(status: str, n: float, why: str = "") -> GradCheckRow:
        err = abs(a - n) if math.isfinite(a) and math.isfinite(n) else math.inf
        return GradCheckRow(i, index, output, a, n, err, relative_error(a, n) if math.isfinite(err) else math.inf, status, order, why)

    v = probe.at(0.0)[k]
    plus, minus = probe.at(eps)[k], probe.at(-eps)[k]
    central = (plus - minus) / (2 * eps)
    if not math.isfinite(a):
        value = f"; f itself is {_text(v)} there" if not math.isfinite(v) else ""
        return row("FAIL", central, f"the analytic gradient is {_text(a)}{value}: a {'NaN' if a != a else 'infinite'} gradient never passes")
    if not math.isfinite(v):
        return row("inconclusive", central, f"f is {_text(v)} at this point: finite differences cannot measure its slope")
    step, note = eps, ""
    if not (math.isfinite(plus) and math.isfinite(minus)):
        side, got = ("x + eps", plus) if not math.isfinite(plus) else ("x - eps", minus)
        for smaller in (eps / 10, eps / 100, eps / 1000):
            if math.isfinite(probe.at(smaller)[k]) and math.isfinite(probe.at(-smaller)[k]):
                step = smaller
                note = f"f({side}) is {_text(got)}: the step eps leaves f's domain, so the difference at eps={smaller:g} is used"
                break
        else:
            return row(
                "inconclusive", central,
                f"the numeric side is not finite: f({side}) is {_text(got)}, the step leaves f's domain, also at a 1000 times "
                "smaller step; check a point farther from the edge of f's domain",
            )
        plus, minus = probe.at(step)[k], probe.at(-step)[k]
        central = (plus - minus) / (2 * step)
    left, right = (v - minus) / step, (plus - v) / step
    n = central
    if not is_close(left, right, atol, rtol):
        small = step / 10
        ps, ms = probe.at(small)[k], probe.at(-small)[k]
        if math.isfinite(ps) and math.isfinite(ms):
            gap, gap_small = right - left, (ps - v) / small - (v - ms) / small
            if same_jump(gap, gap_small):
                if min(left, right) - atol <= a <= max(left, right) + atol:
                    return row("kink", central, f"a kink: the one-sided slopes are {_text(left)} and {_text(right)}, and the gradient lies between them")
            elif abs(gap_small) >= 2.0 * abs(gap):
                through = (ps - ms) / (2 * small)
                if is_close(central, through, atol, rtol) and is_close(a, central, atol, rtol):
                    return row(  # f is continuous through the point, only its value there differs (where's condition at 0)
                        "ok", central,
                        "f's value at the point differs from its neighbours' on both sides (a where's condition at 0): "
                        "compared through both sides, where the slope is the same at eps and eps/10",
                    )
                return row(
                    "inconclusive", central,
                    f"f jumps here: its one-sided slopes ({_text(left)} and {_text(right)}) grow apart at a smaller step, "
                    "so it has no derivative at this point; check another point",
                )
            elif abs(gap_small) < 0.05 * abs(gap):  # a kink within the step of the point, but not within a tenth of it
                step, n = small, (ps - ms) / (2 * small)
                note = f"the step reaches a kink near the point, so the difference at eps={small:g} ({_text(n)}) is used"
    if is_close(a, n, atol, rtol):
        return row("ok", n, note)
    err = abs(a - n)
    magnitude = max(abs(v), abs(probe.at(step)[k]), abs(probe.at(-step)[k]))
    floor = EPS_MACHINE * magnitude / step
    if err > ROUNDING_MARGIN * floor and scale is not None:
        magnitude = max(magnitude, scale())
        floor = EPS_MACHINE * magnitude / step
    if err <= ROUNDING_MARGIN * floor:
        return row(
            "inconclusive", n,
            f"the difference {err:.2g} is below the rounding floor {floor:.2g}: values of about {magnitude:.3g} go into f "
            f"here, so f(x + eps) and f(x - eps) differ by less than their own rounding; "
            f"{_larger_step(magnitude, atol + rtol * max(abs(a), abs(n)))}",
        )
    p2, m2 = probe.at(2 * step)[k], probe.at(-2 * step)[k]
    n2 = (p2 - m2) / (4 * step)
    if not (math.isfinite(n2) and abs(n2 - n) <= STABLE * err):
        return row(
            "inconclusive", n,
            f"the finite difference is not stable here: {_text(n)} at eps={step:g}, {_text(n2)} at twice that step, "
            f"so it does not measure the slope well enough to tell; try another point, or eps={step / 10:g}",
        )
    return row("FAIL", n, note)


def compare_along(
    a: float, along: Callable[[float], float], eps: float, atol: float, rtol: float, scale: float = 0.0,
) -> GradCheckRow:
    """:func:`judge` for one number: ``along(t)`` is a scalar function of the step (the culprit finder's
    check of one op). ``scale`` is the size of what the difference subtracts beyond ``along``'s own values
    (an op's inputs times their gradients: ``1e9 - 1e9`` rounds at 1e9, not at its result)."""
    return judge(a, Probe(lambda t: [along(t)], [along(0.0)]), 0, eps, atol, rtol, scale=lambda: scale)
