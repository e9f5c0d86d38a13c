"""The gradient checker: ``check_grads`` and its report.

The reference for every gradient is the central
difference ``(f(x + ε) - f(x - ε)) / 2ε``: with float64 and ε = 1e-6 its
error is around 1e-10 for smooth functions (float32 frameworks need ε near
1e-3, because float32 keeps only 7 digits and the subtraction would lose
them all). ``check_grads`` compares it with the analytic gradient, entry by
entry (``mode="full"``) or along random directions (``mode="fast"``), marks
kinks (where the one-sided differences still disagree at a ten times smaller
step) instead of failing them,
and when something is wrong re-checks each op that ``f`` ran, so the report
can name the op whose VJP is wrong and the line of your code that called it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence  # noqa: F401 - Callable: TensorFn in the signatures resolves here
from dataclasses import dataclass, field
from itertools import product
from typing import Literal, TypeAlias, cast, overload

from ..engine.types import Shape, is_int, is_number
from .culprit import find_culprit, find_dot_culprit, rounding_scale
from .forward_tests import forward_rows
from .report_html import gradcheck_html
from ..errors import GradientCheckError, InvalidArgumentError, ShapeError, explain
from ..language import N_, tr
from ..ops.floats import safe_total
from .numerical import Culprit, Fn, GradCheckRow, Probe, as_output, check_eps, check_fn, check_inputs, evaluator, judge, numerical_grad, run_paused
from ..ops import concat, reshape
from ..autodiff.gradient_tape import GradientTape
from ..engine.formatting import format_number
from ..engine.arena import new
from ..engine.tensor import Tensor, TensorFn

_WORDS = (N_("passed"), N_("FAILED"), N_("inconclusive"), N_("ok"), N_("FAIL"), N_("kink"))  # verdicts and statuses, printed with tr

__all__ = ["Culprit", "GradCheckADMode", "GradCheckMode", "GradCheckOrder", "GradCheckReport", "GradCheckRow", "check_grads", "numerical_grad"]

GradCheckMode: TypeAlias = Literal["full", "fast"]
"""``check_grads(mode=...)``: every entry of the Jacobian, or one random directional derivative."""
GradCheckADMode: TypeAlias = Literal["rev", "fwd"]
"""``check_grads(modes=...)``: ``"rev"``, the VJP against central differences; ``"fwd"``, the JVP against
the directional difference and the VJP against the JVP by the dot-product test (as in ``jax.test_util.check_grads``)."""
GradCheckOrder: TypeAlias = Literal[1, 2]
"""``check_grads(order=...)``: the gradient, or also the gradient of the gradient."""


# -- the report ----------------------------------------------------------------


@dataclass
class GradCheckReport:
    """The result of :func:`check_grads`: ``.ok``, errors, rows (worst first), culprit.

    Examples:
        >>> report = mt.check_grads(mt.sin, [mt.tensor([0.5])])
        >>> report.ok, report.rows[0].status, report.culprit is None
        (True, 'ok', True)
    """

    ok: bool
    max_abs_error: float
    max_rel_error: float
    rows: list[GradCheckRow]
    mode: str
    order: int
    eps: float
    atol: float
    rtol: float
    evaluations: int = 0
    culprit: Culprit | None = None
    notes: list[str] = field(default_factory=list)
    origin: str | None = None
    """Where a non-finite analytic gradient came from, as ``detect_anomaly(mode="trace")`` traces it."""
    modes: tuple[str, ...] = ("rev",)
    """The tests that ran (``check_grads(modes=...)``); ``tests`` has each one's verdict."""

    @property
    def tests(self) -> dict[str, str]:
        """Each test's verdict, by the ``test`` of its rows: ``"rev"``, and with ``"fwd"`` in ``modes``
        also ``"fwd"`` (the JVP against the directional difference) and ``"dot"`` (the dot-product test).

        Examples:
            >>> mt.check_grads(mt.tanh, [mt.tensor([0.5])], modes=("rev", "fwd")).tests
            {'rev': 'passed', 'fwd': 'passed', 'dot': 'passed'}
        """
        names = [m for m in ("rev", "fwd") if m in self.modes] + (["dot"] if "fwd" in self.modes else [])
        found: dict[str, str] = {}
        for name in names:
            statuses = {r.status for r in self.rows if r.test == name}
            found[name] = "FAILED" if "FAIL" in statuses else "inconclusive" if "inconclusive" in statuses or not statuses else "passed"
        if found.get("rev") == "passed" and any("returned a gradient of shape" in n for n in self.notes):
            found["rev"] = "FAILED"
        return found

    @property
    def failures(self) -> list[GradCheckRow]:
        """Rows whose status is ``"FAIL"``."""
        return [r for r in self.rows if r.status == "FAIL"]

    @property
    def kinks(self) -> list[GradCheckRow]:
        """Rows at non-differentiable points (left and right slopes differ)."""
        return [r for r in self.rows if r.status == "kink"]

    @property
    def inconclusive(self) -> list[GradCheckRow]:
        """Rows finite differences could not check: ``row.why`` says why and what to try."""
        return [r for r in self.rows if r.status == "inconclusive"]

    @property
    def verdict(self) -> str:
        """``"passed"``, ``"FAILED"`` (an entry, or a VJP's shape, is wrong) or ``"inconclusive"``
        (nothing failed, but some entries could not be checked: not a pass either)."""
        if self.ok:
            return "passed"
        return "FAILED" if self.failures or any("returned a gradient of shape" in n for n in self.notes) else "inconclusive"

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        doubtful = len(self.inconclusive)
        head = (
            tr("check_grads {verdict}: mode={mode}, order={order}, eps={eps}, "
               "{rows} entries compared, {failed} failed, {kinks} kinks, ").format(
                verdict=tr(self.verdict), mode=self.mode, order=self.order, eps=f"{self.eps:g}",
                rows=len(self.rows), failed=len(self.failures), kinks=len(self.kinks))
            + (tr("{n} inconclusive, ").format(n=doubtful) if doubtful else "")
            + tr("{n} evaluations of f").format(n=self.evaluations)
        )
        lines = [head]
        if self.modes != ("rev",):
            lines.append(tr("  tests: {tests}").format(tests=", ".join(f"{name} {tr(v)}" for name, v in self.tests.items())))
        shown = self.rows[:10]
        if shown:
            lines.append(
                f"  {tr('input'):<6}{tr('index'):<10}{tr('out'):<8}{tr('analytic'):>11}{tr('numeric'):>11}"
                f"{tr('abs err'):>10}{tr('rel err'):>10}  {tr('status')}"
            )
            for r in shown:
                idx = ",".join(map(str, r.index)) or "()"
                out = ",".join(map(str, r.output)) or "()"
                ordr = "" if r.order == 1 else tr(" (order {order})").format(order=r.order)
                who = r.test if r.test != "rev" else str(r.input)  # a fwd or dot row belongs to no one input
                lines.append(
                    f"  {who:<6}{idx:<10}{out:<8}{format_number(r.analytic):>11}{format_number(r.numeric):>11}"
                    f"{r.abs_error:>10.2e}{r.rel_error:>10.2e}  {tr(r.status)}{ordr}"
                )
            if len(self.rows) > len(shown):
                lines.append(tr("  ... {n} more rows (report.rows has them all)").format(n=len(self.rows) - len(shown)))
        whys = list(dict.fromkeys(r.why for r in self.rows if r.why and r.status in ("FAIL", "inconclusive")))
        lines.extend("  " + tr("why") + ": " + tr(why) for why in whys[:3])
        if len(whys) > 3:
            lines.append(tr("  ... and {n} more reasons (row.why has each)").format(n=len(whys) - 3))
        lines.append(self._footer())
        if self.culprit is not None:
            lines.append("  " + str(self.culprit).replace("\n", "\n  "))
        lines.extend("  " + tr("note") + ": " + tr(n) for n in self.notes)
        return "\n".join(lines)

    def _footer(self) -> str:
        """The line with the worst errors and the rule an entry is judged by."""
        doubtful = len(self.inconclusive)
        rule = tr("an entry fails when abs err > atol {atol} + rtol {rtol} * |numeric|").format(
            atol=f"{self.atol:g}", rtol=f"{self.rtol:g}")
        checked = len(self.rows) - doubtful
        if doubtful and not checked:
            return tr("  worst abs err: none, no entry could be checked; {rule}").format(rule=rule)
        among = tr(" among the {n} entries checked").format(n=checked) if doubtful else ""
        return tr("  worst abs err {abs}, worst rel err {rel}{among}; {rule}").format(
            abs=f"{self.max_abs_error:.2e}", rel=f"{self.max_rel_error:.2e}", among=among, rule=rule)

    def _repr_html_(self) -> str:  # Jupyter: rows coloured by status, the culprit and its line highlighted
        lines = str(self).split("\n")
        footer = self._footer()
        tests = lines[1] if self.modes != ("rev",) else ""
        return gradcheck_html(lines[0], footer.strip(), self.rows, self.culprit, self.notes, passed=self.ok, tests=tests)

    def raise_if_failed(self) -> GradCheckReport:
        """Raise :class:`~microtape.GradientCheckError` with the table unless the check passed
        (an inconclusive check raises too: it did not show the gradient is right).

        Examples:
            >>> mt.check_grads(mt.exp, [mt.tensor([0.5])]).raise_if_failed().ok
            True
        """
        if not self.ok:
            raise GradientCheckError(str(self), report=self, culprit=self.culprit, verdict=self.verdict)
        return self


def _shape_note(err: ShapeError) -> str:
    """Whose VJP returned a wrongly shaped gradient, and for which of the op's inputs."""
    got, want = err.shapes
    bad = getattr(err, "input", None)
    if is_int(bad):
        return N_("the VJP of {0} returned a gradient of shape {1} for an input of shape {2} (its input {3}; "
                  "did it forget to sum over broadcast axes?)").format(repr(err.op), got, want, bad)
    return N_("the VJP of {0} returned a gradient of shape {1} for an input of shape {2} "
              "(did it forget to sum over broadcast axes?)").format(repr(err.op), got, want)


def _shape_notes(failures: dict[str, list[int]]) -> list[str]:
    """One note per wrongly shaped VJP result, naming the inputs of f whose gradient it spoils."""
    notes = []
    for why, inputs in failures.items():
        if len(inputs) == 1:
            notes.append(N_("{0}, so the analytic gradient of input {1} cannot be computed").format(why, inputs[0]))
        else:  # the tape refuses a VJP's result as a whole, whichever input was asked for
            notes.append(N_("{0}, so the analytic gradients of inputs {1} cannot be computed").format(why, ", ".join(map(str, inputs))))
    return notes


def _gradient_row(tape: GradientTape, y: Tensor, copies: list[Tensor], k: int) -> list[list[float]]:
    """∂y_k/∂x_i for every input i, flat, by one backward pass."""
    onehot = [0.0] * y.size
    onehot[k] = 1.0
    gs = tape.gradient(y, copies, output_gradients=new(Tensor, onehot, y.shape, "one_hot"), unconnected_gradients="zero")
    return [g.data_sync() if g is not None else [0.0] * c.size for g, c in zip(gs, copies)]


def _one_input_rows(f: Fn, copies: list[Tensor], i: int, n_out: int, failures: dict[str, list[int]]) -> list[list[float]]:
    """∂y_k/∂x_i for one input, with a tape that watches only it; NaN where a VJP fails."""
    with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(copies[i])
        y = as_output(f(*copies))
    try:
        return [_gradient_row(tape, y, [copies[i]], k)[0] for k in range(n_out)]
    except ShapeError as err:
        if not hasattr(err, "op"):
            raise
        failures.setdefault(_shape_note(err), []).append(i)
        return [[math.nan] * copies[i].size for _ in range(n_out)]
    finally:
        tape.release()


def _analytic_jacobian(
    f: Fn, xs: list[Tensor]
) -> tuple[list[float], Shape, list[list[list[float]]], list[str]]:
    """Output values, output shape, rows[k][i] = ∂y_k/∂x_i (flat) by backward passes, notes."""

    def run() -> tuple[list[float], Shape, list[list[list[float]]], list[str]]:
        copies = [new(Tensor, list(x._values()), x.shape, "tensor") for x in xs]
        with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
            tape.watch(copies)
            y = f(*copies)
        try:
            y = as_output(y)
            notes: list[str] = []
            try:
                rows = [_gradient_row(tape, y, copies, k) for k in range(y.size)]
            except ShapeError as err:
                if not hasattr(err, "op"):
                    raise
                # A VJP returned a wrong-shaped gradient: find which inputs it reaches,
                # one input at a time, so the other inputs' entries are still compared.
                rows = [[[] for _ in copies] for _ in range(y.size)]
                failures: dict[str, list[int]] = {}
                for i in range(len(copies)):
                    column = _one_input_rows(f, copies, i, y.size, failures)
                    for k in range(y.size):
                        rows[k][i] = column[k]
                notes.extend(_shape_notes(failures))
            return y.data_sync(), y.shape, rows, notes
        finally:
            tape.release()

    result = run_paused(run)
    assert isinstance(result, tuple)
    return result


def _full(
    f: Fn, xs: list[Tensor], eps: float, atol: float, rtol: float, order: int
) -> tuple[list[GradCheckRow], int, list[str], Shape]:
    values, out_shape, jac, notes = _analytic_jacobian(f, xs)  # the taped call is f's first evaluation
    datas = [list(x._values()) for x in xs]
    shapes = [x.shape for x in xs]
    loop = run_paused(lambda: _differences(f, datas, shapes, values, out_shape, jac, eps, atol, rtol, order))
    assert isinstance(loop, tuple)
    rows, evaluations = loop
    return rows, 1 + evaluations, notes, out_shape


def _indices(shape: Shape) -> list[tuple[int, ...]]:
    """Every index of ``shape`` in row-major order, the order of a tensor's flat data."""
    return list(product(*map(range, shape)))


def _differences(
    f: Fn, datas: list[list[float]], shapes: list[Shape], values: list[float], out_shape: Shape,
    jac: list[list[list[float]]], eps: float, atol: float, rtol: float, order: int,
) -> tuple[list[GradCheckRow], int]:
    """Central differences for every input entry, compared with the analytic Jacobian.

    Each entry is moved in place in its working list and ``f`` is called on
    the same input tensors again (see :func:`~microtape.checking.numerical.evaluator`).
    Two calls per entry, at ±eps; an entry that needs a closer look (slopes
    that disagree, a disagreement to confirm) gets the calls the judge asks
    for (``numerical.judge``), once for all of its outputs.
    """
    evaluate = evaluator(f, datas, shapes)
    outputs = list(zip(_indices(out_shape), values))
    originals = [new(Tensor, list(d), s, "tensor") for d, s in zip(datas, shapes)]  # the point, for rounding_scale
    scales: dict[tuple[int, ...], float] = {}
    rows: list[GradCheckRow] = []
    evaluations = 0
    for i, data in enumerate(datas):
        for j, index in enumerate(_indices(shapes[i])):
            keep = data[j]

            def move(t: float, data: list[float] = data, j: int = j, keep: float = keep) -> list[float]:
                data[j] = keep + t
                try:
                    return evaluate()
                finally:
                    data[j] = keep

            probe = Probe(move, values)
            for k, (output, _) in enumerate(outputs):
                a = jac[k][i][j]

                def scale(output: tuple[int, ...] = output, a: float = a, x: float = keep) -> float:
                    if output not in scales:  # once per output entry, and only for an entry about to fail
                        scales[output] = rounding_scale(f, originals, output)
                    return scales[output] + abs(x * a)

                rows.append(judge(a, probe, k, eps, atol, rtol, i, index, output, order, scale))
            evaluations += probe.calls
    return rows, evaluations


def _fast(
    f: Fn, xs: list[Tensor], eps: float, atol: float, rtol: float, rng: random.Random
) -> tuple[GradCheckRow, int]:
    """One random directional derivative vᵀ J u: one taped call, one backward pass, 2 more calls
    (more only when the judge needs a closer look)."""
    datas = [list(x._values()) for x in xs]
    shapes = [x.shape for x in xs]
    us = [[rng.uniform(-1.0, 1.0) for _ in d] for d in datas]
    norm = math.sqrt(safe_total(u * u for uu in us for u in uu)) or 1.0
    us = [[u / norm for u in uu] for uu in us]

    def run() -> tuple[float, list[float], list[float]]:
        copies = [new(Tensor, list(d), s, "tensor") for d, s in zip(datas, shapes)]
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(copies)
            y = f(*copies)
        y = as_output(y)
        base = y.data_sync()  # f at the point itself: the taped call doubles as the base value
        v = [rng.uniform(-1.0, 1.0) for _ in base]
        try:
            gs = tape.gradient(y, copies, output_gradients=new(Tensor, list(v), y.shape, "tensor"), unconnected_gradients="zero")
        except ShapeError as err:
            if not hasattr(err, "op"):
                raise
            return math.nan, base, v  # a VJP returned a wrong-shaped gradient; the full check names it
        analytic = safe_total(a * b for g, u in zip(gs, us) if g is not None for a, b in zip(g.data_sync(), u))
        return analytic, base, v

    def check() -> tuple[GradCheckRow, int]:
        analytic, base, v = run()
        moved = [list(d) for d in datas]
        evaluate = evaluator(f, moved, shapes)

        def along(t: float) -> list[float]:
            for m, d, u in zip(moved, datas, us):
                m[:] = [a + t * b for a, b in zip(d, u)]  # in place: the input tensors wrap these lists
            return [safe_total(a * b for a, b in zip(evaluate(), v))]

        probe = Probe(along, [safe_total(a * b for a, b in zip(base, v))])
        row = judge(analytic, probe, 0, eps, atol, rtol)
        return row, 1 + probe.calls

    result = run_paused(check)  # one scope: the taped call, the backward pass and every call along u
    assert isinstance(result, tuple)
    return result


# -- check_grads -----------------------------------------------------------------


# One overload per count of inputs (1 to 6): a lambda's parameters are tensors (see TensorFn).
@overload
def check_grads(
    f: Callable[[Tensor], Tensor], inputs: Tensor | Sequence[Tensor], *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-4,
    mode: GradCheckMode = "full", order: GradCheckOrder = 1, seed: int | None = None,
    modes: Sequence[GradCheckADMode] = ("rev",),
) -> GradCheckReport: ...
@overload
def check_grads(
    f: Callable[[Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-4,
    mode: GradCheckMode = "full", order: GradCheckOrder = 1, seed: int | None = None,
    modes: Sequence[GradCheckADMode] = ("rev",),
) -> GradCheckReport: ...
@overload
def check_grads(
    f: Callable[[Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-4,
    mode: GradCheckMode = "full", order: GradCheckOrder = 1, seed: int | None = None,
    modes: Sequence[GradCheckADMode] = ("rev",),
) -> GradCheckReport: ...
@overload
def check_grads(
    f: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-4,
    mode: GradCheckMode = "full", order: GradCheckOrder = 1, seed: int | None = None,
    modes: Sequence[GradCheckADMode] = ("rev",),
) -> GradCheckReport: ...
@overload
def check_grads(
    f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-4,
    mode: GradCheckMode = "full", order: GradCheckOrder = 1, seed: int | None = None,
    modes: Sequence[GradCheckADMode] = ("rev",),
) -> GradCheckReport: ...
@overload
def check_grads(
    f: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], inputs: Tensor | Sequence[Tensor], *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-4,
    mode: GradCheckMode = "full", order: GradCheckOrder = 1, seed: int | None = None,
    modes: Sequence[GradCheckADMode] = ("rev",),
) -> GradCheckReport: ...


def check_grads(
    f: TensorFn,
    inputs: Tensor | Sequence[Tensor],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    mode: GradCheckMode = "full",
    order: GradCheckOrder = 1,
    seed: int | None = None,
    modes: Sequence[GradCheckADMode] = ("rev",),
) -> GradCheckReport:
    """Compare the analytic gradients of ``f(*inputs)`` with finite differences.

    ``mode="full"`` compares the whole Jacobian (every output entry against
    every input entry: 2n+1 calls of f for n input entries, two more per
    entry that looks like a kink). ``mode="fast"`` compares one random
    directional derivative vᵀJu (3 calls of f and one backward pass,
    whatever n), as PyTorch's fast gradcheck and JAX's ``check_grads`` do;
    if it fails, the full check runs so the report can name entries.
    ``report.evaluations`` counts the calls of f. ``order=2`` also checks
    the gradient of the gradient.

    An entry whose left and right one-sided slopes disagree (still at a ten
    times smaller step, so it is not just curvature), and whose analytic
    value lies between them, is a *kink* (``relu`` or ``abs`` at 0, a tie in
    ``max``): a valid subgradient, reported but not a failure.
    When the check fails, every op that ``f`` ran is re-checked at the
    inputs it saw, at its own scale (the gradient that reached it in the
    worst failing entry's backward pass, a step relative to its inputs), and
    ``report.culprit`` names the op whose VJP is wrong, the one behind most
    of that entry's error, and the line of your code that called it (at
    ``order=2``, also the first op whose VJP a tape cannot differentiate
    correctly).

    ``modes=("rev", "fwd")`` adds the forward-mode tests of JAX's
    ``check_grads``: the JVP ``J v`` (``mt.jvp``) along a random unit
    direction ``v``, entry by entry against the central difference along
    ``v`` (rows whose ``test`` is ``"fwd"``), and the *dot-product test*
    ``⟨w, J v⟩ = ⟨Jᵀw, v⟩`` at a random cotangent ``w`` (one row, ``"dot"``),
    exact up to rounding with no step to choose. microtape's ``J v`` is the
    VJP of the VJP, so that test catches what no finite difference of
    ``op(x).sum()`` can: a VJP right only for the cotangent 1 (it forgets
    ``dy``, or squares it); the culprit is then the op whose VJP is not
    linear in its cotangent (``culprit.test == "dot"``) or that a tape
    differentiates wrongly in it (``"dot-tape"``). ``report.tests`` says
    which test failed; a NaN on either side never agrees. The default,
    ``("rev",)``, prints what it always printed.

    float64 makes ``eps=1e-6`` work; float32 frameworks need ``eps`` near
    1e-3, since the difference of two nearby float32 values keeps few digits.

    Returns:
        A :class:`GradCheckReport`; call ``.raise_if_failed()`` in tests.

    Examples:
        >>> report = mt.check_grads(lambda x: (x * x).sum(), [mt.tensor([1.0, -2.0])])
        >>> report.ok, report.max_abs_error < 1e-6
        (True, True)
        >>> mt.check_grads(mt.relu, [mt.tensor([0.0, 1.0])]).kinks[0].index
        (0,)
        >>> [row.status for row in mt.check_grads(mt.abs, [mt.tensor([0.0])]).rows]
        ['kink']
        >>> def square(t):
        ...     return t * t, lambda dy: 2.0 * t  # BUG: forgets dy; the sum below sends dy = 1
        >>> loss = lambda t: mt.custom_grad(square)(t).sum()
        >>> mt.check_grads(loss, [mt.tensor([1.0, -2.0])]).ok
        True
        >>> report = mt.check_grads(loss, [mt.tensor([1.0, -2.0])], modes=("rev", "fwd"))
        >>> report.tests, report.culprit.op
        ({'rev': 'passed', 'fwd': 'FAILED', 'dot': 'FAILED'}, 'custom_grad(square)')
    """
    check_fn(f, "check_grads")
    xs = check_inputs(inputs, "check_grads")
    check_eps(eps)
    given_mode, given_order = cast(object, mode), cast(object, order)  # checked: an untyped caller may pass anything
    if given_mode not in ("full", "fast"):
        raise InvalidArgumentError(
            explain(N_('mode={0} is not "full" or "fast".').format(repr(mode)), N_("full compares every entry; fast one random direction."),
                    N_('use mode="full" for small inputs.')),
            value=mode,
        )
    if given_order not in (1, 2) or isinstance(given_order, bool):
        raise InvalidArgumentError(
            explain(N_("order={0} is not 1 or 2.").format(repr(order)), N_("order=2 also checks the gradient of the gradient."), N_("use order=1 or order=2.")),
            value=order,
        )
    for name, tol in (("atol", atol), ("rtol", rtol)):
        if not is_number(tol) or not tol >= 0:
            raise InvalidArgumentError(
                explain(N_("{0}={1} must be a non-negative number.").format(name, repr(tol)), N_("Tolerances bound the allowed error."),
                        N_("for example {0}=1e-5.").format(name)),
                value=tol,
            )
    if seed is not None and not is_int(seed):
        raise InvalidArgumentError(
            explain(N_("seed={0} is not an int.").format(repr(seed)), N_("The seed picks the random directions of fast mode."), N_("pass seed=0, or leave it out.")),
            value=seed,
        )
    tests = _check_modes(modes)
    rng = random.Random(0 if seed is None else seed)
    report = _tested(f, xs, eps, atol, rtol, mode, rng, 1, f, tests)
    if order == 2:
        second = _tested(_gradient_of(f, len(xs)), xs, eps, atol, rtol, mode, rng, 2, f, tests)
        report = GradCheckReport(
            ok=report.ok and second.ok,
            max_abs_error=max(report.max_abs_error, second.max_abs_error),
            max_rel_error=max(report.max_rel_error, second.max_rel_error),
            rows=sorted(report.rows + second.rows, key=_badness),
            mode=mode,
            order=2,
            eps=eps,
            atol=atol,
            rtol=rtol,
            evaluations=report.evaluations + second.evaluations,
            culprit=report.culprit or second.culprit,
            notes=report.notes + second.notes,
            origin=report.origin or second.origin,
            modes=tests,
        )
    return report


def _check_modes(modes: object) -> tuple[str, ...]:
    """``modes`` as a tuple of distinct tests, "rev" first; an error that says what to pass otherwise."""
    given = tuple(modes) if isinstance(modes, (list, tuple)) else None
    if given is None or not given or any(m not in ("rev", "fwd") for m in given) or len(set(given)) != len(given):
        shown = repr(modes)
        raise InvalidArgumentError(
            explain(
                N_('modes={0} is not a list of distinct tests among "rev" and "fwd".').format(shown[:80]),
                N_('"rev" checks the VJP against central differences; "fwd" checks the JVP against a '
                   "directional difference and the VJP against the JVP by the dot-product test."),
                N_('pass modes=("rev", "fwd") for both, or modes=("rev",) (the default).'),
            ),
            value=modes,
        )
    return tuple(m for m in ("rev", "fwd") if m in given)


def _tested(
    f: Fn, xs: list[Tensor], eps: float, atol: float, rtol: float, mode: str, rng: random.Random, order: int,
    source: Fn, tests: tuple[str, ...],
) -> GradCheckReport:
    """The report of one order: the reverse check (``_check``) and, with ``"fwd"``, the forward-mode rows."""
    if "fwd" not in tests:
        return _check(f, xs, eps, atol, rtol, mode, rng, order, source)
    base = _check(f, xs, eps, atol, rtol, mode, rng, order, source) if "rev" in tests else None
    rows, calls = forward_rows(f, xs, eps, atol, rtol, rng, order)
    rows = sorted((base.rows if base is not None else []) + rows, key=_badness)
    notes = list(base.notes) if base is not None else []
    worst_abs, worst_rel = _worst(rows)
    report = GradCheckReport(
        ok=(base is None or base.ok) and all(r.status in ("ok", "kink") for r in rows),
        max_abs_error=worst_abs,
        max_rel_error=worst_rel,
        rows=rows,
        mode=mode,
        order=order,
        eps=eps,
        atol=atol,
        rtol=rtol,
        evaluations=(base.evaluations if base is not None else 0) + calls,
        culprit=base.culprit if base is not None else None,
        notes=notes,
        origin=base.origin if base is not None else None,
        modes=tests,
    )
    forward_failed = any(r.status == "FAIL" and r.test != "rev" for r in rows)
    if forward_failed and report.culprit is None:
        if order == 1:
            report.culprit = find_dot_culprit(f, xs, eps, atol, rtol, notes=report.notes)
        else:
            report.culprit = find_culprit(source, xs, eps, atol, rtol, order=2, notes=report.notes)
    return report


def _gradient_of(f: Fn, n: int) -> Fn:
    """``h(*xs)``: every first-order gradient of ``sum(f)``, flattened and joined."""
    def h(*xs: Tensor) -> Tensor:
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(list(xs))
            y = f(*xs)
        gs = tape.gradient(y, list(xs), unconnected_gradients="zero")
        return concat([reshape(g, shape=(-1,)) for g in gs if g is not None], axis=0)

    h.__name__ = f"gradient_of_{getattr(f, '__name__', 'f')}"
    return h


def _worst(rows: list[GradCheckRow]) -> tuple[float, float]:
    """The largest absolute and relative errors among the rows the finite differences compared."""
    compared = [r for r in rows if r.status in ("ok", "FAIL")]
    return max((r.abs_error for r in compared), default=0.0), max((r.rel_error for r in compared), default=0.0)


def _badness(r: GradCheckRow) -> tuple[int, float]:
    return ({"FAIL": 0, "inconclusive": 1, "kink": 2, "ok": 3}[r.status], -r.abs_error if math.isfinite(r.abs_error) else -math.inf)


ORIGINS: list[Callable[[Fn, list[Tensor], int], str | None]] = []
"""Who traces a non-finite analytic gradient to the op that made it: ``ORIGINS[0](f, xs, k)`` runs
``f`` and the backward pass of its output entry ``k`` and returns one sentence, or None. The
checker sits below ``debug/``, where ``detect_anomaly`` lives, so ``debug/anomaly.py`` puts its
tracer here when it is imported (``import microtape`` always imports it)."""


def _origin(f: Fn, xs: list[Tensor], row: GradCheckRow, out_shape: Shape) -> str | None:
    """The op that made the first non-finite value of ``row``'s backward pass, by the anomaly trace."""
    if not ORIGINS:
        return None
    k = 0
    for i, d in zip(row.output, out_shape):
        k = k * d + i
    try:
        return ORIGINS[0](f, xs, k)
    except Exception:  # noqa: BLE001 - a diagnostic must not replace the report it explains
        return None


def _check(
    f: Fn, xs: list[Tensor], eps: float, atol: float, rtol: float, mode: str, rng: random.Random, order: int, source: Fn
) -> GradCheckReport:
    """Check ``f`` (the user's ``source``, or its gradient when ``order`` is 2)."""
    notes: list[str] = []
    evaluations = 0
    if mode == "fast":
        row, evaluations = _fast(f, xs, eps, atol, rtol, rng)
        if row.status == "ok":
            return GradCheckReport(True, row.abs_error, row.rel_error, [_with_order(row, order)], "fast", order, eps, atol, rtol, evaluations)
        notes.append(N_("fast mode: the directional derivative was {0}; ran the full check to name entries").format(row.status))
    rows, n, shape_notes, out_shape = _full(f, xs, eps, atol, rtol, order)
    evaluations += n
    notes.extend(shape_notes)
    rows.sort(key=_badness)
    failed = bool(shape_notes) or any(r.status == "FAIL" for r in rows)
    ok = not failed and not any(r.status == "inconclusive" for r in rows)
    worst_abs, worst_rel = _worst(rows)
    report = GradCheckReport(
        ok=ok,
        max_abs_error=worst_abs,
        max_rel_error=worst_rel,
        rows=rows,
        mode=mode,
        order=order,
        eps=eps,
        atol=atol,
        rtol=rtol,
        evaluations=evaluations,
        notes=notes,
    )
    nonfinite = [r for r in rows if r.status == "FAIL" and not math.isfinite(r.analytic)]
    measured = [r for r in rows if r.status == "FAIL" and math.isfinite(r.analytic)]
    if nonfinite:
        worst = nonfinite[0]
        report.origin = _origin(f, xs, worst, out_shape)
        where = (len(nonfinite), worst.input, worst.index or "()", format_number(worst.analytic))
        advice = N_("No VJP is blamed for it: an op whose derivative is infinite at its input is right to say so. "
                    'To follow the value op by op, run the backward pass inside `with mt.detect_anomaly(mode="trace") as trace:` '
                    "and print(trace)")
        if report.origin:
            notes.append(N_("the analytic gradient is not finite at {0} of the entries (input {1}, index {2}: {3}); {4}. {5}").format(
                *where, report.origin, advice))
        else:
            notes.append(N_("the analytic gradient is not finite at {0} of the entries (input {1}, index {2}: {3}). {4}").format(*where, advice))
    if measured or shape_notes:
        failing = measured[0] if measured else None  # the worst entry the finite differences measured
        report.culprit = find_culprit(f, xs, eps, atol, rtol, notes=report.notes, row=failing if order == 1 else None)
        if report.culprit is None and order == 2:
            report.culprit = find_culprit(source, xs, eps, atol, rtol, order=2, notes=report.notes)
    elif not ok and not nonfinite:
        doubt = next(r for r in rows if r.status == "inconclusive")
        notes.append(N_(
            "inconclusive: no entry failed, but finite differences could not check {0} of them, so no op is blamed "
            "(the first: input {1}, index {2}: {3})").format(
                sum(1 for r in rows if r.status == "inconclusive"), doubt.input, doubt.index or "()", doubt.why))
    return report


def _with_order(row: GradCheckRow, order: int) -> GradCheckRow:
    return GradCheckRow(row.input, row.index, row.output, row.analytic, row.numeric, row.abs_error, row.rel_error, row.status, order, row.why)
