"""The Taylor test: a gradient is right when the Taylor remainder shrinks one order faster with it.

For a direction ``v`` and steps ``h = h0, h0/2, h0/4, ...``::

    r0(h) = |f(x + h v) - f(x)|                             ~ h    (any f)
    r1(h) = |f(x + h v) - f(x) - h ∇f·v|                    ~ h²   (a right gradient; a wrong one leaves ~ h)
    r2(h) = |f(x + h v) - f(x) - h ∇f·v - h²/2 vᵀHv|        ~ h³   (a right Hessian term too, ``order=2``)

This is how scientific computing validates hand-written adjoints
(dolfin-adjoint's ``taylor_test``). Unlike a central difference it has no
step to get right: the *order* is read off from how the remainder shrinks
between steps, so a constant offset of 1e9 in ``f``, inputs of size 1e-8 or a
kink 1e-7 away cannot pass a wrong gradient or fail a right one. What it
cannot judge it says: a remainder at f's rounding floor is not measured, and
a step that crosses a kink (the derivative along ``v`` jumps between ``x`` and
``x + h v``, which explains the remainder) is reported as a kink, never as a
failure.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, overload

from ..autodiff.function_args import check_input
from ..autodiff.gradient_tape import GradientTape
from ..engine.arena import new
from ..engine.tensor import Tensor, TensorFn, TensorLike
from ..engine.types import is_int, is_number
from ..errors import InvalidArgumentError, ShapeError, explain
from ..language import N_, tr
from ..ops.floats import safe_total
from ..views.html import BAD, FONT, GOOD, WARN, escape, table
from .culprit import rounding_scale
from .numerical import EPS_MACHINE, ROUNDING_MARGIN, Fn, as_output, check_fn, check_inputs, run_paused

__all__ = ["TaylorOrder", "TaylorReport", "TaylorVerdict", "taylor_test"]

TaylorOrder: TypeAlias = Literal[1, 2]
"""``taylor_test(order=...)``: test the gradient (remainder ~ h²), or also the Hessian term (~ h³)."""
TaylorVerdict: TypeAlias = Literal["passed", "failed", "inconclusive"]
"""What :class:`TaylorReport` concludes."""

HIGH: Final = 0.25
"""A remainder whose observed order is within this of the expected one (2, or 3) passes."""
LOW: Final = 0.3
"""A remainder whose observed order is within this of one less than expected fails, unless a kink explains it."""
EXPLAINED: Final = 1.5
"""A remainder up to this many times ``h`` times the change of the derivative along the step is explained by that change."""

_WORDS: Final = (N_("passed"), N_("failed"), N_("inconclusive"), N_("order"), N_("floor"), N_("kink"), N_("crossed"))
"""The verdicts and the table's words, kept as values and printed with ``tr``."""


@dataclass(frozen=True)
class TaylorReport:
    """What :func:`taylor_test` measured: remainders per step, their observed orders and the verdict.

    ``remainders[m][k]`` is the remainder with the terms up to order ``m``
    (0: none, 1: the gradient term, 2: the Hessian term when ``order=2``) at
    step ``hs[k]``; ``orders[m][k]`` is ``log2(remainders[m][k] / remainders[m][k + 1])``, NaN
    where a remainder is at the rounding floor ``floors[k]`` (not measured). ``crossed[k]``
    is True where the derivative along the direction changes over step ``k`` by so much that it
    explains the remainder (a kink between ``x`` and ``x + h v``). ``reason`` and ``notes``
    are English, the data a test reads; ``str()`` and the notebook view print them in the
    language ``mt.set_language`` chose.

    Examples:
        >>> report = mt.taylor_test(lambda x: (x ** 3).sum(), [mt.tensor([1.0, 2.0])])
        >>> report.verdict, report.ok, [round(p, 1) for p in report.orders[1]]
        ('passed', True, [2.0, 2.0, 2.0, 2.0])
    """

    verdict: TaylorVerdict
    reason: str
    order: int
    hs: tuple[float, ...]
    remainders: tuple[tuple[float, ...], ...]
    orders: tuple[tuple[float, ...], ...]
    floors: tuple[float, ...]
    crossed: tuple[bool, ...]
    value: float
    """``f`` at ``x`` (after the weighting of a non-scalar ``f``)."""
    derivative: float
    """``∇f·v`` at ``x``: the gradient under test, along the direction."""
    curvature: float | None = None
    """``vᵀHv`` at ``x`` when ``order=2``."""
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the verdict is ``"passed"``."""
        return self.verdict == "passed"

    def __bool__(self) -> bool:
        return self.ok

    def headline(self) -> str:
        """The report's first line: the verdict and what was expanded."""
        return (
            tr("taylor_test {verdict}: order {order}, {n} steps from h0={h0}, f(x) = {value}, gradient along v = {slope}").format(
                verdict=tr(self.verdict), order=self.order, n=len(self.hs), h0=f"{self.hs[0]:g}",
                value=f"{self.value:.7g}", slope=f"{self.derivative:.7g}",
            )
            + (f", vᵀHv = {self.curvature:.7g}" if self.curvature is not None else "")
        )

    def columns(self) -> list[str]:
        """The table's column titles."""
        names = ["|f(x+hv) - f(x)|", "... - h ∇f·v", "... - h²/2 vᵀHv"][: len(self.remainders)]
        out = ["h"]
        for name in names:
            out += [name, tr("order")]
        return out + [tr("floor"), tr("kink")]

    def cells(self) -> list[list[str]]:
        """The table's rows as text: a remainder at its floor is marked ``*``, an order not measured ``-``."""
        rows = []
        for k, h in enumerate(self.hs):
            row = [f"{h:.4g}"]
            for m in range(len(self.remainders)):
                r = self.remainders[m][k]
                mark = "*" if math.isfinite(r) and r <= self.floors[k] else ""
                p = self.orders[m][k - 1] if k else math.nan
                row += [f"{r:.3e}{mark}", "" if k == 0 else ("-" if p != p else f"{p:.2f}")]
            rows.append(row + [f"{self.floors[k]:.1e}", tr("crossed") if self.crossed[k] else ""])
        return rows

    def __str__(self) -> str:
        columns, cells = self.columns(), self.cells()
        widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
        lines = [self.headline(), "  " + "  ".join(c.rjust(w) for c, w in zip(columns, widths))]
        lines += ["  " + "  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
        lines.append("  " + tr("(* at the rounding floor: not measured; order: log2 of the remainder's ratio to the previous step's)"))
        lines.append(f"  {tr('why')}: {tr(self.reason)}")
        lines.extend(f"  {tr('note')}: {tr(n)}" for n in self.notes)
        return "\n".join(lines)

    def _repr_html_(self) -> str:  # Jupyter: the verdict coloured, the table, a log-log plot of the remainders
        style = {"passed": GOOD, "failed": BAD}.get(self.verdict, WARN)
        rows = [[escape(v) for v in row] for row in self.cells()]
        styles = [WARN if c else "" for c in self.crossed]
        return "".join([
            f'<div style="{FONT}"><div style="{style}; padding: 4px 6px; font-weight: bold">{escape(self.headline())}</div>',
            table(self.columns(), rows, row_styles=styles),
            _plot(self),
            f'<div style="margin: 4px 0">{escape(tr("why"))}: {escape(tr(self.reason))}</div>',
            *(f'<div style="color: #52525b">{escape(tr("note"))}: {escape(tr(n))}</div>' for n in self.notes),
            "</div>",
        ])


def _plot(report: TaylorReport) -> str:
    """An inline SVG: each remainder against h on log-log axes (the slope is the order)."""
    points = [
        [(math.log10(h), math.log10(r)) for h, r in zip(report.hs, rs) if math.isfinite(r) and r > 0]
        for rs in report.remainders
    ]
    flat = [p for ps in points for p in ps]
    if len(flat) < 2:
        return ""
    x0, x1 = min(p[0] for p in flat), max(p[0] for p in flat)
    y0, y1 = min(p[1] for p in flat), max(p[1] for p in flat)
    w, ht, pad = 320.0, 200.0, 24.0

    def at(p: tuple[float, float]) -> str:
        x = pad + (p[0] - x0) / ((x1 - x0) or 1.0) * (w - 2 * pad)
        y = ht - pad - (p[1] - y0) / ((y1 - y0) or 1.0) * (ht - 2 * pad)
        return f"{x:.1f},{y:.1f}"

    colours = ("#6b7280", "#2563eb", "#16a34a")
    lines = "".join(
        f'<polyline fill="none" stroke="{colours[m]}" stroke-width="2" points="{" ".join(at(p) for p in ps)}"/>'
        for m, ps in enumerate(points) if len(ps) > 1
    )
    labels = "".join(
        f'<text x="{w - pad:.0f}" y="{14 + 12 * m}" font-size="10" text-anchor="end" fill="{colours[m]}">r{m}</text>'
        for m in range(len(points))
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{ht:.0f}" role="img">'
        f"<title>{escape(tr('remainders against h, log-log'))}</title>"
        f'<rect x="0" y="0" width="{w:.0f}" height="{ht:.0f}" fill="white" stroke="#d4d4d8"/>{lines}{labels}'
        f'<text x="{pad:.0f}" y="{ht - 6:.0f}" font-size="10">{escape(tr("log10 h: {x0} to {x1}").format(x0=f"{x0:.2f}", x1=f"{x1:.2f}"))}</text></svg>'
    )


# -- measuring ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _At:
    """f, its derivative along v and (order 2) its second derivative along v, at one point."""

    value: float
    slope: float
    curvature: float


def _derivatives(f: Fn, datas: list[list[float]], shapes: list[tuple[int, ...]], vs: list[list[float]], order: int) -> _At:
    """``f``, ``∇f·v`` and (order 2) ``vᵀHv`` at the point ``datas``, by one or two reverse passes."""
    xs = [new(Tensor, list(d), s, "tensor") for d, s in zip(datas, shapes)]
    directions = [new(Tensor, list(v), s, "tensor") for v, s in zip(vs, shapes)]
    with GradientTape(watch_accessed_variables=False) as outer:
        outer.watch(xs)
        with GradientTape(watch_accessed_variables=False) as inner:
            inner.watch(xs)
            y = f(*xs)
        gs = inner.gradient(y, xs, unconnected_gradients="zero")
        terms = [(g * v).sum() for g, v in zip(gs, directions) if g is not None]
        s = terms[0]
        for t in terms[1:]:
            s = s + t
    curvature = 0.0
    if order == 2:
        hs = outer.gradient(s, xs, unconnected_gradients="zero")
        curvature = safe_total(a * b for h, v in zip(hs, vs) if h is not None for a, b in zip(h.data_sync(), v))
    return _At(y.item(), s.item(), curvature)


def _weighted(f: Fn, shape: tuple[int, ...], weights: list[float]) -> Fn:
    """``sum(w * f(*xs))``: the scalar a non-scalar ``f`` is tested through."""

    def scalar(*xs: Tensor) -> Tensor:
        return (as_output(f(*xs)) * new(Tensor, list(weights), shape, "tensor")).sum()

    return scalar


def _scalar(f: Fn) -> Fn:
    def scalar(*xs: Tensor) -> Tensor:
        return as_output(f(*xs)).sum()

    return scalar


def _order_of(a: float, b: float, floor_a: float, floor_b: float) -> float:
    """``log2(a / b)`` for remainders at two steps h and h/2; NaN when either is at its rounding floor."""
    if not (math.isfinite(a) and math.isfinite(b)) or a <= floor_a or b <= floor_b:
        return math.nan
    return math.log2(a / b)


def _text(v: float) -> str:
    return f"{v:.4g}"


@dataclass(frozen=True)
class _Reasons:
    """What :func:`_judge` says about one term, written out for it (so a translation can agree with the term)."""

    exact: str
    fell: str
    one_step: str
    passed: str
    kink: str
    failed: str
    between: str


REASONS: Final = {
    1: _Reasons(
        exact=N_("the gradient term cancels f's change down to rounding at every step: f is linear along the direction, "
                 "and the gradient is exact"),
        fell=N_("the remainder with the gradient term falls from {0} at h={1} to below the rounding floor at h={2}: "
                "faster than order 1, as a correct gradient's does"),
        one_step=N_("the remainder with the gradient term is measurable at only one step (h={0}), the others are at f's "
                    "rounding floor or not finite: too few steps to measure an order; try a larger h0"),
        passed=N_("the remainder with the gradient term shrinks like h^{0} at the smallest steps, as a correct gradient's does "
                  "(a wrong one leaves order 1)"),
        kink=N_("a kink (or another non-smooth point) lies between x and x + h·v: the derivative along the direction changes "
                "by {0} over the step even at h={1}, which explains the remainder (order {2}); the Taylor test cannot judge "
                "the gradient there: try a smaller h0, so that x + h0·v stays on one side of it, or another point"),
        failed=N_("the remainder with the gradient term shrinks like h^{0}, not h^2: the gradient along the direction is wrong "
                  "(it gives {1}, f's change says about {2} at h={3})"),
        between=N_("the remainder with the gradient term shrinks like h^{0} at the smallest steps, between order 1 (a wrong "
                   "gradient) and 2 (a correct one): not clear enough to tell; try more steps or a smaller h0"),
    ),
    2: _Reasons(
        exact=N_("the Hessian term cancels f's change down to rounding at every step: f is quadratic along the direction, "
                 "and the second derivative is exact"),
        fell=N_("the remainder with the Hessian term falls from {0} at h={1} to below the rounding floor at h={2}: "
                "faster than order 2, as a correct second derivative's does"),
        one_step=N_("the remainder with the Hessian term is measurable at only one step (h={0}), the others are at f's "
                    "rounding floor or not finite: too few steps to measure an order; try a larger h0"),
        passed=N_("the remainder with the Hessian term shrinks like h^{0} at the smallest steps, as a correct second "
                  "derivative's does (a wrong one leaves order 2)"),
        kink=N_("a kink (or another non-smooth point) lies between x and x + h·v: the derivative along the direction changes "
                "by {0} over the step even at h={1}, which explains the remainder (order {2}); the Taylor test cannot judge "
                "the second derivative there: try a smaller h0, so that x + h0·v stays on one side of it, or another point"),
        failed=N_("the remainder with the Hessian term shrinks like h^{0}, not h^3: the second derivative along the direction "
                  "is wrong (it gives {1}, f's change says about {2} at h={3})"),
        between=N_("the remainder with the Hessian term shrinks like h^{0} at the smallest steps, between order 2 (a wrong "
                   "second derivative) and 3 (a correct one): not clear enough to tell; try more steps or a smaller h0"),
    ),
}
"""The reasons :func:`_judge` gives, by term: 1 the gradient term, 2 the Hessian term (English: the data; ``tr`` prints them)."""


@dataclass(frozen=True)
class _Judged:
    verdict: TaylorVerdict
    reason: str
    notes: tuple[str, ...] = ()


def _judge(
    m: int, rs: list[float], floors: list[float], hs: list[float], changes: list[float], usable: list[bool],
    expected_term: float, measured: Callable[[int], float],
) -> tuple[_Judged, list[float], list[bool]]:
    """The verdict on remainder ``m`` (1: the gradient term, 2: the Hessian term), its orders and crossings.

    ``changes[k]`` is how much the ``m``-th derivative along v changes from ``x`` to
    ``x + h_k v``: a remainder up to ``EXPLAINED * h^m * changes[k]`` is what that change
    alone makes (a kink crossed), not evidence against the term under test.
    """
    want, low = m + 1, m
    says = REASONS[m]
    n = len(hs)
    orders = [_order_of(rs[k], rs[k + 1], floors[k], floors[k + 1]) if usable[k] and usable[k + 1] else math.nan for k in range(n - 1)]
    explained = [
        usable[k] and math.isfinite(changes[k]) and rs[k] <= EXPLAINED * hs[k] ** m * changes[k] + floors[k] and rs[k] > floors[k]
        for k in range(n)
    ]
    # a step crosses a kink when its remainder is explained by the derivative's change and shrinks only like h^m there
    near = [orders[k] if k < n - 1 else orders[k - 1] for k in range(n)]
    explained = [e and near[k] <= low + LOW for k, e in enumerate(explained)]
    measurable = [k for k in range(n) if usable[k] and rs[k] > floors[k]]
    if not measurable:
        return _Judged("passed", says.exact), orders, explained
    pairs = [k for k in range(n - 1) if orders[k] == orders[k]]
    if not pairs:
        k = measurable[-1]
        if k + 1 < n and usable[k + 1] and rs[k] > 4 * floors[k + 1] >= 4 * rs[k + 1]:
            return _Judged("passed", says.fell.format(f"{rs[k]:.2g}", f"{hs[k]:g}", f"{hs[k + 1]:g}")), orders, explained
        return _Judged("inconclusive", says.one_step.format(f"{hs[k]:g}")), orders, explained
    k = pairs[-1]
    p = orders[k]
    notes: tuple[str, ...] = ()
    crossed_large = [hs[j] for j in range(k) if explained[j]]
    if p >= want - HIGH:
        if crossed_large:
            notes = (N_("the steps h >= {0} cross a kink (the derivative along the direction jumps there); the verdict rests on "
                        "the smaller steps").format(f"{min(crossed_large):g}"),)
        return _Judged("passed", says.passed.format(f"{p:.2f}"), notes), orders, explained
    if p <= low + LOW:
        if explained[k] and explained[k + 1]:
            h = hs[k + 1]
            return _Judged("inconclusive", says.kink.format(_text(changes[k + 1]), f"{h:g}", f"{p:.2f}")), orders, explained
        return _Judged("failed", says.failed.format(
            f"{p:.2f}", f"{expected_term:.7g}", f"{measured(k + 1):.7g}", f"{hs[k + 1]:g}",
        )), orders, explained
    return _Judged("inconclusive", says.between.format(f"{p:.2f}")), orders, explained


# One overload per count of inputs (1 to 6): a lambda's parameters are tensors (see TensorFn).
@overload
def taylor_test(
    f: Callable[[Tensor], Tensor], inputs: Tensor | Sequence[Tensor], direction: Sequence[TensorLike] | None = None, *,
    h0: float = 0.1, steps: int = 5, order: TaylorOrder = 1, seed: int | None = None,
) -> TaylorReport: ...
@overload
def taylor_test(
    f: Callable[[Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], direction: Sequence[TensorLike] | None = None, *,
    h0: float = 0.1, steps: int = 5, order: TaylorOrder = 1, seed: int | None = None,
) -> TaylorReport: ...
@overload
def taylor_test(
    f: Callable[[Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], direction: Sequence[TensorLike] | None = None, *,
    h0: float = 0.1, steps: int = 5, order: TaylorOrder = 1, seed: int | None = None,
) -> TaylorReport: ...
@overload
def taylor_test(
    f: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], direction: Sequence[TensorLike] | None = None, *,
    h0: float = 0.1, steps: int = 5, order: TaylorOrder = 1, seed: int | None = None,
) -> TaylorReport: ...
@overload
def taylor_test(
    f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], direction: Sequence[TensorLike] | None = None, *,
    h0: float = 0.1, steps: int = 5, order: TaylorOrder = 1, seed: int | None = None,
) -> TaylorReport: ...
@overload
def taylor_test(
    f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor],
    direction: Sequence[TensorLike] | None = None, *, h0: float = 0.1, steps: int = 5, order: TaylorOrder = 1, seed: int | None = None,
) -> TaylorReport: ...


def taylor_test(
    f: TensorFn,
    inputs: Tensor | Sequence[Tensor],
    direction: Sequence[TensorLike] | None = None,
    *,
    h0: float = 0.1,
    steps: int = 5,
    order: TaylorOrder = 1,
    seed: int | None = None,
) -> TaylorReport:
    """Test ``f``'s gradient (and with ``order=2`` its Hessian term) by the convergence of the Taylor remainder.

    At steps ``h = h0, h0/2, ...`` (``steps`` of them) along ``direction``
    (one tensor per input; by default random, seeded, each entry scaled to
    its input's magnitude so that inputs of 1e-8 and of 1e3 are moved alike),
    it measures ``|f(x + h v) - f(x)|`` (order 1), ``|... - h ∇f·v|`` (order 2
    for a right gradient, 1 for a wrong one) and, with ``order=2``,
    ``|... - h²/2 vᵀHv|`` (order 3). A non-scalar ``f`` is tested through
    ``sum(w * f)`` with seeded random weights ``w``.

    The verdict is ``"passed"`` when the observed order at the smallest steps
    is the expected one (or the remainder is at f's rounding floor at every
    step: ``f`` is linear along ``v``), ``"failed"`` when it is one less and no
    kink explains it, else ``"inconclusive"`` with the reason: a kink crossed
    by the steps, an order in between, NaN or Inf in ``f`` or its gradient.

    How small an error it sees depends on ``steps``: a gradient wrong by a
    share ``δ`` leaves a term ``δ·h·|∇f·v|`` that outgrows the right
    remainder's ``h²`` only for ``h`` below about ``δ`` times ``f``'s
    curvature scale. With the default 5 steps from ``h0=0.1`` (down to
    0.00625) an error of 1% shows, one of 0.1% does not yet (the order still
    reads 2 and the test passes); ask for ``steps=14`` or more (down to
    about 1e-5) to see errors of that size, or use ``check_grads``, whose
    tolerance ``rtol=1e-4`` is finer.

    Raises:
        ShapeError: ``direction`` does not have one tensor per input, of its shape.
        InvalidArgumentError: ``h0``, ``steps``, ``order`` or ``seed`` is not usable.

    Examples:
        >>> mt.taylor_test(lambda x: mt.sin(x).sum(), [mt.tensor([0.3, 1.2])]).verdict
        'passed'
        >>> def wrong(x):
        ...     return 2.0 * x, lambda dy: [dy]  # BUG: d(2x) is 2 dy
        >>> report = mt.taylor_test(lambda x: mt.custom_grad(wrong)(x).sum(), [mt.tensor([1.0, 3.0])])
        >>> report.verdict, round(report.orders[1][-1], 2)
        ('failed', 1.0)
        >>> mt.taylor_test(lambda x: (x ** 3).sum(), [mt.tensor([1.0])], order=2).verdict
        'passed'
    """
    check_fn(f, "taylor_test")
    xs = check_inputs(inputs, "taylor_test")
    given_order = order  # checked: an untyped caller may pass anything
    if given_order not in (1, 2) or isinstance(given_order, bool):
        raise InvalidArgumentError(
            explain(
                N_("taylor_test: order={0} is not 1 or 2.").format(repr(order)),
                N_("order=2 adds the Hessian term h²/2 vᵀHv (remainder ~ h³)."),
                N_("use order=1 or order=2."),
            ),
            value=order,
        )
    if not (is_number(h0) and 0.0 < h0 < math.inf):
        raise InvalidArgumentError(
            explain(
                N_("taylor_test: h0={0} is not a usable first step.").format(repr(h0)),
                N_("h0 is a positive finite number: the steps are h0, h0/2, h0/4, ..."),
                N_("use h0=0.1."),
            ),
            value=h0,
        )
    if not is_int(steps) or steps < 2:
        raise InvalidArgumentError(
            explain(
                N_("taylor_test: steps={0} gives no order.").format(repr(steps)),
                N_("An order is measured between two steps: steps is an int, 2 or more."),
                N_("use steps=5."),
            ),
            value=steps,
        )
    if seed is not None and not is_int(seed):
        raise InvalidArgumentError(
            explain(
                N_("taylor_test: seed={0} is not an int.").format(repr(seed)),
                N_("The seed draws the default direction and the weights of a non-scalar f."),
                N_("pass seed=0, or leave it out."),
            ),
            value=seed,
        )
    rng = random.Random(0 if seed is None else seed)
    datas = [list(x._values()) for x in xs]
    shapes = [x.shape for x in xs]
    vs = _directions(direction, datas, shapes, rng)
    result = run_paused(lambda: _measure(f, datas, shapes, vs, h0, steps, order, rng, 0 if seed is None else seed, direction is None))
    assert isinstance(result, TaylorReport)
    return result


def _directions(direction: Sequence[TensorLike] | None, datas: list[list[float]], shapes: list[tuple[int, ...]], rng: random.Random) -> list[list[float]]:
    if direction is None:
        out = []
        for d in datas:
            top = max((abs(a) for a in d if math.isfinite(a)), default=0.0) or 1.0
            out.append([rng.uniform(-1.0, 1.0) * (abs(a) if a != 0.0 and math.isfinite(a) else top) for a in d])
        return out
    if isinstance(direction, Tensor) or not isinstance(direction, (list, tuple)):
        raise InvalidArgumentError(
            explain(
                N_("taylor_test: direction must be a list of tensors, one per input, got {0}.").format(type(direction).__name__),
                N_("The direction v moves every input: x + h v."),
                N_("pass direction=[mt.ones_like(x) for x in inputs], or leave it out for a random one."),
            ),
            value=direction,
        )
    def convert() -> list[Tensor]:
        return [check_input(v, "taylor_test", i) for i, v in enumerate(direction)]

    converted = run_paused(convert)
    assert isinstance(converted, list)
    got = [v.shape for v in converted]
    if len(got) != len(shapes) or any(g != s for g, s in zip(got, shapes)):
        raise ShapeError(
            explain(
                N_("taylor_test: direction has shapes {0}, inputs {1}.").format(got, shapes),
                N_("The direction v moves every input: one tensor per input, of the input's shape."),
                N_("pass direction=[mt.ones_like(x) for x in inputs], or leave it out for a random one."),
            ),
            shapes=tuple(got),
        )
    return [list(v._values()) for v in converted]


def _measure(
    f: Fn, datas: list[list[float]], shapes: list[tuple[int, ...]], vs: list[list[float]],
    h0: float, steps: int, order: int, rng: random.Random, seed: int, random_direction: bool,
) -> TaylorReport:
    notes: list[str] = []
    if random_direction:
        notes.append(N_("direction: random (seed {0}), each entry scaled to its input's magnitude").format(seed))
    probe = as_output(f(*[new(Tensor, list(d), s, "tensor") for d, s in zip(datas, shapes)]))
    if probe.size == 1:
        g = _scalar(f)
    else:
        weights = [rng.uniform(-1.0, 1.0) for _ in range(probe.size)]
        g = _weighted(f, probe.shape, weights)
        notes.append(N_("f returns shape {0}: the test expands the scalar sum(w * f(x)), with seeded random weights w (seed {1})").format(
            probe.shape, seed,
        ))
    hs = [h0 / 2.0**k for k in range(steps)]

    def at(h: float) -> _At:
        return _derivatives(g, [[a + h * b for a, b in zip(d, v)] for d, v in zip(datas, vs)], shapes, vs, order)

    def report(verdict: TaylorVerdict, reason: str, base: _At, rems: list[list[float]], floors: list[float],
               orders: list[list[float]] | None = None, crossed: list[bool] | None = None) -> TaylorReport:
        orders = orders if orders is not None else [[math.nan] * (steps - 1) for _ in rems]
        return TaylorReport(
            verdict, reason, order, tuple(hs), tuple(tuple(r) for r in rems), tuple(tuple(o) for o in orders), tuple(floors),
            tuple(crossed if crossed is not None else [False] * steps), base.value, base.slope,
            base.curvature if order == 2 else None, tuple(notes),
        )

    nan_rems = [[math.nan] * steps for _ in range(order + 1)]
    try:
        base = at(0.0)
    except ShapeError as err:
        if not hasattr(err, "op"):
            raise
        got, want = err.shapes
        return report("failed", N_("the VJP of {0} returned a gradient of shape {1} for an input of shape {2}: no gradient to test").format(
            repr(err.op), got, want),
                      _At(math.nan, math.nan, math.nan), nan_rems, [math.nan] * steps)
    if not math.isfinite(base.value):
        return report("inconclusive", N_("f is {0} at x: nothing to expand around").format(_text(base.value)), base, nan_rems, [math.nan] * steps)
    if not math.isfinite(base.slope) or (order == 2 and not math.isfinite(base.curvature)):
        said = (
            N_("the gradient along the direction is {0} at x: a Taylor remainder cannot be measured against it "
               "(check_grads fails a non-finite gradient; mt.detect_anomaly finds the op that made it)").format(_text(base.slope))
            if not math.isfinite(base.slope) else
            N_("the second derivative along the direction is {0} at x: a Taylor remainder cannot be measured against it "
               "(check_grads fails a non-finite gradient; mt.detect_anomaly finds the op that made it)").format(_text(base.curvature))
        )
        return report("inconclusive", said, base, nan_rems, [math.nan] * steps)
    scale = rounding_scale(g, [new(Tensor, list(d), s, "tensor") for d, s in zip(datas, shapes)], ())
    points = [at(h) for h in hs]
    usable = [math.isfinite(p.value) and math.isfinite(p.slope) and math.isfinite(p.curvature) for p in points]
    rems: list[list[float]] = [[] for _ in range(order + 1)]
    floors = []
    for h, p in zip(hs, points):
        step = p.value - base.value
        rems[0].append(abs(step))
        rems[1].append(abs(step - h * base.slope))
        if order == 2:
            rems[2].append(abs(step - h * base.slope - h * h / 2 * base.curvature))
        size = abs(p.value) + abs(base.value) + 2 * scale + abs(h * base.slope) + abs(h * h * base.curvature)
        floors.append(ROUNDING_MARGIN * EPS_MACHINE * size if math.isfinite(size) else math.inf)
    bad = [hs[k] for k in range(steps) if not usable[k]]
    if bad:
        notes.append(N_("f (or its derivative along the direction) is not finite at h = {0}: those steps are left out").format(
            ", ".join(f"{h:g}" for h in bad),
        ))
    if sum(usable) < 2:
        return report("inconclusive", N_(
            "f (or its derivative along the direction) is not finite at {0} of the {1} steps: fewer than 2 steps "
            "left to measure an order; try a smaller h0"
        ).format(len(bad), steps), base, rems, floors)
    orders0 = [_order_of(rems[0][k], rems[0][k + 1], floors[k], floors[k + 1]) if usable[k] and usable[k + 1] else math.nan for k in range(steps - 1)]
    unmeasured = [[math.nan] * (steps - 1)] * order
    # f constant along v: a zero gradient agrees; a nonzero one leaves r1 = h |∇f·v|, order 1, judged below
    if all(not usable[k] or rems[0][k] <= floors[k] for k in range(steps)):
        if all(not usable[k] or rems[1][k] <= floors[k] for k in range(steps)) and (order == 1 or base.curvature == 0.0):
            return report("passed", N_(
                "f does not change along the direction by more than its rounding (about {0}) at any step, "
                "and the gradient along it is 0 to rounding too: the gradient agrees with f (a piecewise constant f, such as "
                "a comparison, has gradient 0)"
            ).format(f"{max(floors):.2g}"), base, rems, floors, [orders0] + unmeasured)
    jumps = [p for p in orders0 if p == p]
    if jumps and jumps[-1] < 1.0 - LOW:
        return report("inconclusive", N_(
            "f itself jumps between x and x + h·v: its change shrinks like h^{0} (a continuous f's shrinks at "
            "least like h), so no Taylor expansion holds across the step (a discontinuity, such as where() with a "
            "condition that the direction moves); keep such inputs fixed (a 0 in the direction) or test another point"
        ).format(f"{jumps[-1]:.2f}"), base, rems, floors, [orders0] + unmeasured)
    slope_changes = [abs(p.slope - base.slope) for p in points]
    first, orders1, crossed1 = _judge(
        1, rems[1], floors, hs, slope_changes, usable, base.slope, lambda k: (points[k].value - base.value) / hs[k],
    )
    notes.extend(first.notes)
    all_orders = [orders0, orders1]
    crossed = crossed1
    verdict, reason = first.verdict, first.reason
    if order == 2:
        curvature_changes = [abs(p.curvature - base.curvature) for p in points]
        second, orders2, crossed2 = _judge(
            2, rems[2], floors, hs, curvature_changes, usable, base.curvature,
            lambda k: 2 * (points[k].value - base.value - hs[k] * base.slope) / hs[k] ** 2,
        )
        all_orders.append(orders2)
        if first.verdict == "passed":
            verdict, reason = second.verdict, second.reason
            notes.extend(second.notes)
            crossed = [a or b for a, b in zip(crossed1, crossed2)]
    return report(verdict, reason, base, rems, floors, all_orders, crossed)
