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
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, overload

from ..engine import arena
from ..engine.arena import STATE, new
from ..engine.types import Shape, is_number
from ..errors import InvalidArgumentError, explain
from ..language import N_, tr
from ..engine.convert import conversion_hint
from ..ops.floats import safe_total
from ..engine.tensor import Tensor, TensorFn

__all__ = ["Culprit", "DifferenceMethod", "GradCheckRow", "Probe", "compare_along", "judge", "numerical_grad"]

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
                N_("check_grads: f must return a tensor, got {0}: {1}.").format(type(y).__name__, f"{y!r:.60}"),
                N_("The checker differentiates a tensor-valued function f(*inputs)."),
                N_("return the result of microtape ops, for example (x * x).sum()."),
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
                N_("{0}(f, inputs) needs a function, got {1}: {2}.").format(api, type(f).__name__, f"{f!r:.60}"),
                N_("It calls f(*inputs)."),
                N_("write mt.{0}(lambda x: (x * x).sum(), [x]).").format(api),
            ),
            value=f,
        )


def check_inputs(inputs: object, api: str) -> list[Tensor]:
    items = [inputs] if isinstance(inputs, Tensor) else inputs
    if not isinstance(items, (list, tuple)) or not items:
        raise InvalidArgumentError(
            explain(
                N_("{0}: inputs must be a tensor or a non-empty list of tensors, got {1}.").format(api, type(inputs).__name__),
                N_("f is called as f(*inputs)."),
                N_("write mt.{0}(f, [x, y]).").format(api),
            ),
            value=inputs,
        )
    out = []
    for i, x in enumerate(items):
        if not isinstance(x, Tensor):
            raise InvalidArgumentError(
                explain(
                    N_("{0}: inputs[{1}] is a {2}, not a tensor: {3}.").format(api, i, type(x).__name__, f"{x!r:.60}"),
                    N_("Every input must be a tensor."),
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
                N_("eps={0} is not a usable step.").format(repr(eps)),
                N_("The finite-difference step must be a small positive number (0 < eps < 1)."),
                N_("use eps=1e-6 in float64."),
            ),
            value=eps,
        )
    if method not in ("central", "forward"):
        raise InvalidArgumentError(
            explain(
                N_('method={0} is not "central" or "forward".').format(repr(method)),
                N_("Central differences are accurate to O(eps²), forward ones to O(eps)."),
                N_('use method="central".'),
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
    test: str = "rev"
    """Which test made the row (``check_grads(modes=...)``): ``"rev"``, the VJP against central differences;
    ``"fwd"``, entry ``output`` of the JVP ``J v`` against the central difference along a random direction
    ``v``; ``"dot"``, the dot-product test, ``analytic`` ⟨w, J v⟩ (forward mode) against ``numeric`` ⟨Jᵀw, v⟩
    (the VJP). A ``fwd`` or ``dot`` row belongs to no one input: its ``input`` is -1."""


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
    test: str = "rev"
    """What found it: ``"rev"``, finite differences; with ``check_grads(modes=("rev", "fwd"))`` also
    ``"dot"``, its VJP is not linear in the cotangent (``analytic`` is ⟨vjp(w₁ + w₂), v⟩, ``numeric``
    ⟨vjp(w₁) + vjp(w₂), v⟩), or ``"dot-tape"``, a tape differentiates its VJP wrongly in the cotangent
    (``analytic`` is ⟨w, ∂⟨vjp(w), v⟩/∂w⟩, ``numeric`` ⟨vjp(w), v⟩, equal for a VJP a tape follows)."""

    def __str__(self) -> str:
        shapes = ", ".join(str(s) for s in self.input_shapes)
        what = (tr("the VJP of {op}") if self.order == 1 else tr("the second derivative through the VJP of {op}")).format(op=repr(self.op))
        head = tr("culprit: {what} (inputs {shapes}) called at {where}").format(what=what, shapes=shapes, where=self.where)
        if self.test == "dot-tape":
            return "\n".join([
                head,
                tr("  a tape cannot differentiate its VJP in the cotangent: <w, d<vjp(w), v>/dw> = {a}, but <vjp(w), v> = {b} "
                   "at random w and v").format(a=f"{self.analytic:.7g}", b=f"{self.numeric:.7g}"),
                "  " + tr("hint") + ": " + tr(self.second_order_hint()),
            ])
        if self.test == "dot":
            return "\n".join([
                head,
                tr("  its VJP is not linear in the cotangent: <vjp(w1 + w2), v> = {a}, <vjp(w1) + vjp(w2), v> = {b} "
                   "at random w1, w2 and v").format(a=f"{self.analytic:.7g}", b=f"{self.numeric:.7g}"),
                "  " + tr("hint") + ": " + tr("a VJP must return J^T dy for every cotangent dy: multiply the local "
                                              "derivative by dy, and add nothing that does not depend on dy"),
            ])
        if self.analytic != self.analytic and self.numeric != self.numeric:
            return f"{head}\n  {tr(self.detail)}"
        own = re.fullmatch(r"for input (\d+)\[(.*)\], with the gradient that reached it,", self.detail)
        if own:  # re-checked at its own scale, for the failing entry
            along = tr("for input {input}[{index}], with the gradient that reached it,").format(input=own[1], index=own[2])
        elif self.detail.startswith("for input "):
            along = self.detail
        else:
            along = tr("along a random direction of {detail}").format(detail=tr(self.detail)) if self.detail else tr("along a random direction")
        rel = relative_error(self.analytic, self.numeric)
        lines = [
            head,
            tr("  {along} it gives {analytic}, finite differences give {numeric}").format(
                along=along, analytic=f"{self.analytic:.7g}", numeric=f"{self.numeric:.7g}"),
            tr("  (relative difference {rel})").format(rel=f"{rel:.1e}") if rel == rel else tr("  (one of the two is not a finite number)"),
        ]
        if self.order == 2:
            lines.append("  " + tr("hint") + ": " + tr(self.second_order_hint()))
        return "\n".join(lines)

    def second_order_hint(self) -> str:
        """Why a tape differentiates this VJP wrongly, by what it reads: saved tensors, or values a tape never saw."""
        if self.saved:
            return N_(
                "grad_fn reads the {0} tensor(s) f saved with save([...]): f's forward pass is not recorded, "
                "so to the tape that differentiates grad_fn they are constants; compute them inside grad_fn from "
                "the inputs it closes over (x * x there, not a saved x * x)").format(self.saved)
        if self.custom:
            return N_(
                "grad_fn uses values no tape recorded: a tensor made in f (its forward pass is not recorded) or "
                "numbers read out with .data_sync() or .item(); compute them inside grad_fn with microtape ops "
                "on the inputs it closes over"
            )
        return N_(
            "the VJP of {0} computes its gradient from values a tape cannot see (numbers read out with "
            ".data_sync() or .item(), or tensors made from them): write it with microtape ops on its inputs").format(repr(self.op))


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
        self.calls: int = 0

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


def gaps_of(slopes: Sequence[tuple[float, float]]) -> list[float]:
    """The gaps between pairs of one-sided slopes."""
    return [abs(hi - lo) for lo, hi in slopes]


def steady(slopes: tuple[float, float], slopes_small: tuple[float, float]) -> bool:
    """Whether both one-sided slopes stay put at a 10x smaller step (a kink at the point: each side is a
    straight line there), moving by less than a tenth of the gap between them."""
    (lo, hi), (lo_s, hi_s) = slopes, slopes_small
    return abs(lo - lo_s) + abs(hi - hi_s) <= 0.1 * abs(hi_s - lo_s)


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
        return N_("f's values are too large for its slope to show in a difference of two of them: check f without its large constant part")
    return N_("try a larger step: eps={0}").format(f"{_nice_step(step):g}")


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
    * The one-sided slopes disagree (beyond f's rounding): f bends within
      the step, so the step shrinks, 10, 100, 1000 times, and

      - where the slopes agree (a kink the step reached but a smaller one
        does not: ``relu`` at 1e-7), the difference there is used;
      - where their gap shrinks with the step, as a smooth function's does
        (``log`` or a division near 0), the smallest such step is used;
      - when both slopes stay put down to eps/1000: ``kink`` if ``a`` lies
        between them, a valid subgradient (``relu``/``abs`` at 0, a tie in
        ``max``), else compared as below;
      - when their gap grows like 1/step, f jumps at the point: ``ok`` when f
        is continuous through both sides and ``a`` matches the difference
        through them (``where``'s condition at 0), else ``inconclusive``;
      - otherwise ``inconclusive``: f bends too close to the point to measure.
    * ``ok`` when ``a`` is within ``atol + rtol * |numeric|``.
    * ``inconclusive`` when the disagreement is below the rounding floor:
      about ``EPS_MACHINE`` times the size of the values the difference
      subtracts, over the step (f's values, and ``scale()``: the size of
      f's intermediate values weighted by how much f depends on them, as a
      1e9 added and taken away again inside f), or when the finite
      difference itself moves when the step doubles (it is not measuring a
      derivative yet; when it halves, f jumps within the step).
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
        never = N_("a NaN gradient never passes") if a != a else N_("an infinite gradient never passes")
        if not math.isfinite(v):
            return row("FAIL", central, N_("the analytic gradient is {0}; f itself is {1} there: {2}").format(_text(a), _text(v), never))
        return row("FAIL", central, N_("the analytic gradient is {0}: {1}").format(_text(a), never))
    if not math.isfinite(v):
        return row("inconclusive", central, N_("f is {0} at this point: finite differences cannot measure its slope").format(_text(v)))
    step, note = eps, ""
    if not (math.isfinite(plus) and math.isfinite(minus)):
        side, got = ("x + eps", plus) if not math.isfinite(plus) else ("x - eps", minus)
        for smaller in (eps / 10, eps / 100, eps / 1000):
            if math.isfinite(probe.at(smaller)[k]) and math.isfinite(probe.at(-smaller)[k]):
                step = smaller
                note = N_("f({0}) is {1}: the step eps leaves f's domain, so the difference at eps={2} is used").format(side, _text(got), f"{smaller:g}")
                break
        else:
            return row(
                "inconclusive", central,
                N_("the numeric side is not finite: f({0}) is {1}, the step leaves f's domain, also at a 1000 times "
                   "smaller step; check a point farther from the edge of f's domain").format(side, _text(got)),
            )
        plus, minus = probe.at(step)[k], probe.at(-step)[k]
        central = (plus - minus) / (2 * step)
    left, right = (v - minus) / step, (plus - v) / step
    n = central
    measured: list[float] = []

    def apart(lo: float, hi: float, s: float, ends: tuple[float, float]) -> bool:
        """Whether one-sided slopes at step ``s`` disagree by more than f's rounding can explain."""
        if is_close(lo, hi, atol, rtol):
            return False
        magnitude = max(abs(v), abs(ends[0]), abs(ends[1]))
        if abs(hi - lo) <= 2 * ROUNDING_MARGIN * EPS_MACHINE * magnitude / s:
            return False
        if scale is not None:
            if not measured:
                measured.append(scale())
            magnitude = max(magnitude, measured[0])
        return abs(hi - lo) > 2 * ROUNDING_MARGIN * EPS_MACHINE * magnitude / s

    if apart(left, right, step, (plus, minus)):
        # The one-sided slopes disagree: f bends within the step. Shrink it until they agree (a kink or a
        # singularity near the point, not at it), or until eps/1000 (a kink or a jump at the point itself).
        slopes, ends = [(left, right)], [(plus, minus)]
        chosen: tuple[float, float, str] | None = None
        for small in (step / 10, step / 100, step / 1000):
            ps, ms = probe.at(small)[k], probe.at(-small)[k]
            if not (math.isfinite(ps) and math.isfinite(ms)):
                break
            lo, hi = (v - ms) / small, (ps - v) / small
            through = (ps - ms) / (2 * small)
            if not apart(lo, hi, small, (ps, ms)):
                chosen = (small, through, N_(
                    "f bends sharply within the step (a kink or a singularity near the point), so the difference "
                    "at eps={0} ({1}), where its one-sided slopes agree, is used"
                ).format(f"{small:g}", _text(through)))
                break
            shrinks = 0.05 * gaps_of(slopes)[-1] <= abs(hi - lo) <= 0.2 * gaps_of(slopes)[-1]
            slopes.append((lo, hi))
            ends.append((ps, ms))
            # The gap shrinks with the step, as a smooth function's does: keep the smallest such step.
            chosen = (small, through, N_(
                "f curves sharply here: its one-sided slopes still differ at eps={0}, but their gap shrinks "
                "with the step as a smooth function's does, so the central difference there ({1}) is used"
            ).format(f"{small:g}", _text(through))) if shrinks else None
        if chosen is not None:
            step, n, note = chosen
        elif len(slopes) == 4:  # the slopes disagree at every step down to eps/1000, not as a smooth f's do
            gaps = gaps_of(slopes)
            if all(later >= 5.0 * earlier for earlier, later in zip(gaps, gaps[1:])):  # ~1/step: a jump in f's value
                through = (ends[1][0] - ends[1][1]) / (2 * step / 10)
                if is_close(central, through, atol, rtol) and is_close(a, central, atol, rtol):
                    return row(  # f is continuous through the point, only its value there differs (where's condition at 0)
                        "ok", central,
                        N_("f's value at the point differs from its neighbours' on both sides (a where's condition at 0): "
                           "compared through both sides, where the slope is the same at eps and eps/10"),
                    )
                return row(
                    "inconclusive", central,
                    N_("f jumps here: its one-sided slopes ({0} and {1}) grow apart as the step "
                       "shrinks, down to eps={2}, so it has no derivative at this point; check another point").format(
                        _text(left), _text(right), f"{step / 1000:g}"),
                )
            lo2, hi2 = slopes[-1]
            if not all(steady(p, q) for p, q in zip(slopes[1:], slopes[2:])):
                return row(
                    "inconclusive", central,
                    N_("the one-sided slopes disagree at every step down to eps={0} ({1} and "
                       "{2} there) and still change with the step: f bends too close to this point to measure; "
                       "check another point").format(f"{step / 1000:g}", _text(lo2), _text(hi2)),
                )
            if min(lo2, hi2) - atol <= a <= max(lo2, hi2) + atol:
                return row("kink", central, N_("a kink: the one-sided slopes are {0} and {1}, and the gradient lies between them").format(_text(lo2), _text(hi2)))
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
            N_("the difference {0} is below the rounding floor {1}: values of about {2} go into f "
               "here, so f(x + eps) and f(x - eps) differ by less than their own rounding; {3}").format(
                f"{err:.2g}", f"{floor:.2g}", f"{magnitude:.3g}", _larger_step(magnitude, atol + rtol * max(abs(a), abs(n)))),
        )
    p2, m2 = probe.at(2 * step)[k], probe.at(-2 * step)[k]
    n2 = (p2 - m2) / (4 * step)
    if math.isfinite(n2) and n != 0.0 and abs(2.0 * n2 - n) <= 0.1 * abs(n):  # the difference times the step stays put
        return row(
            "inconclusive", n,
            N_("f jumps within the step: its difference halves when the step doubles ({0} at eps={1}, "
               "{2} at twice that), as a jump in f's value does, not a slope; check another point, or a "
               "smaller eps if the jump is not at the point itself").format(_text(n), f"{step:g}", _text(n2)),
        )
    if not (math.isfinite(n2) and abs(n2 - n) <= STABLE * err):
        return row(
            "inconclusive", n,
            N_("the finite difference is not stable here: {0} at eps={1}, {2} at twice that step, "
               "so it does not measure the slope well enough to tell; try another point, or eps={3}").format(
                _text(n), f"{step:g}", _text(n2), f"{step / 10:g}"),
        )
    return row("FAIL", n, note)


def compare_along(
    a: float, along: Callable[[float], float], eps: float, atol: float, rtol: float, scale: float = 0.0,
) -> GradCheckRow:
    """:func:`judge` for one number: ``along(t)`` is a scalar function of the step (the culprit finder's
    check of one op). ``scale`` is the size of what the difference subtracts beyond ``along``'s own values
    (an op's inputs times their gradients: ``1e9 - 1e9`` rounds at 1e9, not at its result)."""
    return judge(a, Probe(lambda t: [along(t)], [along(0.0)]), 0, eps, atol, rtol, scale=lambda: scale)
