"""Finite differences and the gradient checker.

Read after ``memory.py``. The reference for every gradient is the central
difference ``(f(x + ε) - f(x - ε)) / 2ε``: with float64 and ε = 1e-6 its
error is around 1e-10 for smooth functions (float32 frameworks need ε near
1e-3, because float32 keeps only 7 digits and the subtraction would lose
them all). ``check_grads`` compares it with the analytic gradient, entry by
entry (``mode="full"``) or along random directions (``mode="fast"``), marks
kinks (where the one-sided differences disagree) instead of failing them,
and when something is wrong re-checks each op that ``f`` ran, so the report
can name the op whose VJP is wrong and the line of your code that called it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from . import _runtime
from ._registry import Op
from ._runtime import DISPATCH, STATE
from ._shape import strides_of
from ._types import Grads, Shape, TensorFn, is_int, is_number
from .errors import GradientCheckError, InvalidArgumentError, ShapeError, explain
from .tape import GradientTape
from .tensor import Tensor, _new, conversion_hint, format_number

__all__ = ["Culprit", "GradCheckReport", "GradCheckRow", "check_grads", "numerical_grad"]

Fn = Callable[..., Tensor]


# -- evaluating f without recording and without leaking -------------------


def _paused(fn: Callable[[], object]) -> object:
    """Run ``fn`` with no tape recording, leaving nothing in the arena.

    Its tensors skip the arena (the light mode of an unobserved backward
    pass) and go as soon as nothing references them. Under ``profile`` or
    ``leak_check`` they are registered as usual, so those tools see every op
    of the check; the scope disposes them.
    """
    st = STATE.get()
    token = STATE.set(st.but(tapes=(), light=not st.observers))
    try:
        # A scope still: a nested backward pass that another tape watches (order 2)
        # registers its tensors, and this scope disposes them.
        return _runtime.run_in_scope("check_grads()", fn, returns_tensors=False)
    finally:
        STATE.reset(token)


def _output(y: object) -> Tensor:
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


def _values(f: Fn, datas: Sequence[list[float]], shapes: Sequence[Shape]) -> list[float]:
    """Flat output values of ``f`` at inputs given as flat lists.

    Call it inside :func:`_paused` (once around a whole loop of calls: per
    call, the set-up cost more than a small ``f``). The tensors wrap the
    caller's working lists without a copy: they live only for this call, and
    the output is copied out before the caller perturbs an entry again (a
    copy per call made full mode O(n²)).
    """
    return _output(f(*[_new(d, s, "tensor") for d, s in zip(datas, shapes)])).data_sync()


def _check_fn(f: object, api: str) -> None:
    if not callable(f):
        raise InvalidArgumentError(
            explain(
                f"{api}(f, inputs) needs a function, got {type(f).__name__}: {f!r:.60}.",
                "It calls f(*inputs).",
                f"write mt.{api}(lambda x: (x * x).sum(), [x]).",
            ),
            value=f,
        )


def _check_inputs(inputs: object, api: str) -> list[Tensor]:
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
            raise _runtime.disposed_error(x)
        out.append(x)
    return out


def _check_eps(eps: float, method: str = "central") -> None:
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
    _check_fn(f, "numerical_grad")
    xs = _check_inputs(inputs, "numerical_grad")
    _check_eps(eps, method)
    datas = [list(x._values()) for x in xs]
    shapes = [x.shape for x in xs]

    def differences() -> list[list[float]]:
        base = math.fsum(_values(f, datas, shapes)) if method == "forward" else 0.0
        grads = []
        for data in datas:
            grad = []
            for j in range(len(data)):
                keep = data[j]
                data[j] = keep + eps
                plus = math.fsum(_values(f, datas, shapes))
                if method == "central":
                    data[j] = keep - eps
                    minus = math.fsum(_values(f, datas, shapes))
                    grad.append((plus - minus) / (2 * eps))
                else:
                    grad.append((plus - base) / eps)
                data[j] = keep
            grads.append(grad)
        return grads

    computed = _paused(differences)
    assert isinstance(computed, list)
    result = []
    for i, grad in enumerate(computed):
        result.append(_new(grad, shapes[i], "numerical_grad"))
    return result


# -- the report ----------------------------------------------------------------


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
    """The first op whose VJP disagrees with finite differences at the inputs it saw.

    ``detail`` says which input disagreed (or what is wrong with the VJP's
    result); ``order`` is 2 when the VJP is right but a tape cannot
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
        along = "along a random direction" + (f" of {self.detail}" if self.detail else "")
        lines = [
            head,
            f"  {along} it gives {self.analytic:.7g}, finite differences give {self.numeric:.7g}",
            f"  (relative difference {_relative(self.analytic, self.numeric):.1e})",
        ]
        if self.order == 2:
            lines.append(
                "  hint: compute grad_fn with microtape ops on the inputs it closes over; values taken out "
                "of the graph (.data_sync(), .item()) or computed in f's forward (saved ones too) are constants to a tape"
            )
        return "\n".join(lines)


def _relative(a: float, n: float) -> float:
    scale = max(abs(a), abs(n))
    return abs(a - n) / scale if scale > 0 else 0.0


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

    @property
    def failures(self) -> list[GradCheckRow]:
        """Rows whose status is ``"FAIL"``."""
        return [r for r in self.rows if r.status == "FAIL"]

    @property
    def kinks(self) -> list[GradCheckRow]:
        """Rows at non-differentiable points (left and right slopes differ)."""
        return [r for r in self.rows if r.status == "kink"]

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        verdict = "passed" if self.ok else "FAILED"
        head = (
            f"check_grads {verdict}: mode={self.mode}, order={self.order}, eps={self.eps:g}, "
            f"{len(self.rows)} entries compared, {len(self.failures)} failed, {len(self.kinks)} kinks, "
            f"{self.evaluations} evaluations of f"
        )
        lines = [head]
        shown = self.rows[:10]
        if shown:
            lines.append(f"  {'input':<6}{'index':<10}{'out':<8}{'analytic':>11}{'numeric':>11}{'abs err':>10}{'rel err':>10}  status")
            for r in shown:
                idx = ",".join(map(str, r.index)) or "()"
                out = ",".join(map(str, r.output)) or "()"
                ordr = "" if r.order == 1 else f" (order {r.order})"
                lines.append(
                    f"  {r.input:<6}{idx:<10}{out:<8}{format_number(r.analytic):>11}{format_number(r.numeric):>11}"
                    f"{r.abs_error:>10.2e}{r.rel_error:>10.2e}  {r.status}{ordr}"
                )
            if len(self.rows) > len(shown):
                lines.append(f"  ... {len(self.rows) - len(shown)} more rows (report.rows has them all)")
        lines.append(
            f"  worst abs err {self.max_abs_error:.2e}, worst rel err {self.max_rel_error:.2e}; "
            f"an entry fails when abs err > atol {self.atol:g} + rtol {self.rtol:g} * |numeric|"
        )
        if self.culprit is not None:
            lines.append("  " + str(self.culprit).replace("\n", "\n  "))
        lines.extend("  note: " + n for n in self.notes)
        return "\n".join(lines)

    def raise_if_failed(self) -> GradCheckReport:
        """Raise :class:`~microtape.GradientCheckError` with the table if the check failed.

        Examples:
            >>> mt.check_grads(mt.exp, [mt.tensor([0.5])]).raise_if_failed().ok
            True
        """
        if not self.ok:
            raise GradientCheckError(str(self), report=self, culprit=self.culprit)
        return self


# -- comparing -----------------------------------------------------------------


def _close(a: float, n: float, atol: float, rtol: float) -> bool:
    if not (math.isfinite(a) and math.isfinite(n)):
        return a == n or (a != a and n != n)
    return abs(a - n) <= atol + rtol * abs(n)


def _row(
    i: int, index: tuple[int, ...], output: tuple[int, ...], a: float, n: float,
    left: float, right: float, atol: float, rtol: float, order: int, kink: bool = False,
) -> GradCheckRow:
    """Compare analytic ``a`` with central ``n``; ``left``/``right`` are the one-sided slopes.

    ``kink`` says the slopes still disagree at a ten times smaller step, so the
    function really bends there (a smooth function's slopes converge): such an
    entry is a kink even when ``a`` happens to equal the central difference
    (``abs`` at 0, a tie in ``max``).
    """
    err = abs(a - n) if math.isfinite(a) and math.isfinite(n) else (0.0 if _close(a, n, atol, rtol) else math.inf)
    scale = max(abs(a), abs(n))
    rel = err / scale if scale > 0 and math.isfinite(err) else (0.0 if err == 0 else math.inf)
    between = min(left, right) - atol <= a <= max(left, right) + atol
    if kink and between:
        status = "kink"
    elif _close(a, n, atol, rtol):
        status = "ok"
    elif not _close(left, right, atol, rtol) and between:
        status = "kink"
    else:
        status = "FAIL"
    return GradCheckRow(i, index, output, a, n, err, rel, status, order)


def _same_jump(jump: float, jump_small: float) -> bool:
    """Whether the gap between the one-sided slopes stays the same at a 10x smaller step.

    Smooth functions: the gap is curvature times the step, so it shrinks 10x.
    A kink (a jump in the slope): it stays. A jump in the value (a step, like
    the condition of ``where``): it grows 10x, and is not a kink.
    """
    return 0.5 * abs(jump) < abs(jump_small) < 2.0 * abs(jump)


def _unravel(j: int, shape: Shape) -> tuple[int, ...]:
    return tuple((j // s) % d for s, d in zip(strides_of(shape), shape)) if shape else ()


def _shape_note(i: int, err: ShapeError) -> str:
    got, want = err.shapes
    return (
        f"the analytic gradient of input {i} cannot be computed: the VJP of {err.op!r} returned a "
        f"gradient of shape {got} for an input of shape {want} (did it forget to sum over broadcast axes?)"
    )


def _gradient_row(tape: GradientTape, y: Tensor, copies: list[Tensor], k: int) -> list[list[float]]:
    """∂y_k/∂x_i for every input i, flat, by one backward pass."""
    onehot = [0.0] * y.size
    onehot[k] = 1.0
    gs = tape.gradient(y, copies, output_gradients=_new(onehot, y.shape, "one_hot"), unconnected_gradients="zero")
    return [g.data_sync() if g is not None else [0.0] * c.size for g, c in zip(gs, copies)]


def _one_input_rows(f: Fn, copies: list[Tensor], i: int, n_out: int, notes: list[str]) -> list[list[float]]:
    """∂y_k/∂x_i for one input, with a tape that watches only it; NaN where a VJP fails."""
    with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(copies[i])
        y = _output(f(*copies))
    try:
        return [_gradient_row(tape, y, [copies[i]], k)[0] for k in range(n_out)]
    except ShapeError as err:
        if not hasattr(err, "op"):
            raise
        notes.append(_shape_note(i, err))
        return [[math.nan] * copies[i].size for _ in range(n_out)]
    finally:
        tape.release()


def _analytic_jacobian(
    f: Fn, xs: list[Tensor]
) -> tuple[list[float], Shape, list[list[list[float]]], list[str]]:
    """Output values, output shape, rows[k][i] = ∂y_k/∂x_i (flat) by backward passes, notes."""

    def run() -> tuple[list[float], Shape, list[list[list[float]]], list[str]]:
        copies = [_new(list(x._values()), x.shape, "tensor") for x in xs]
        with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
            tape.watch(copies)
            y = f(*copies)
        try:
            y = _output(y)
            notes: list[str] = []
            try:
                rows = [_gradient_row(tape, y, copies, k) for k in range(y.size)]
            except ShapeError as err:
                if not hasattr(err, "op"):
                    raise
                # A VJP returned a wrong-shaped gradient: find which inputs it reaches,
                # one input at a time, so the other inputs' entries are still compared.
                rows = [[[] for _ in copies] for _ in range(y.size)]
                for i in range(len(copies)):
                    column = _one_input_rows(f, copies, i, y.size, notes)
                    for k in range(y.size):
                        rows[k][i] = column[k]
            return y.data_sync(), y.shape, rows, notes
        finally:
            tape.release()

    result = _paused(run)
    assert isinstance(result, tuple)
    return result


def _full(
    f: Fn, xs: list[Tensor], eps: float, atol: float, rtol: float, order: int
) -> tuple[list[GradCheckRow], int, list[str]]:
    values, out_shape, jac, notes = _analytic_jacobian(f, xs)
    datas = [list(x._values()) for x in xs]
    shapes = [x.shape for x in xs]
    rows: list[GradCheckRow] = []
    evaluations = 1
    small = eps / 10
    loop = _paused(lambda: _differences(f, datas, shapes, values, out_shape, jac, eps, small, atol, rtol, order))
    assert isinstance(loop, tuple)
    more_rows, n = loop
    return rows + more_rows, evaluations + n, notes


def _differences(
    f: Fn, datas: list[list[float]], shapes: list[Shape], values: list[float], out_shape: Shape,
    jac: list[list[list[float]]], eps: float, small: float, atol: float, rtol: float, order: int,
) -> tuple[list[GradCheckRow], int]:
    """Central differences for every input entry, compared with the analytic Jacobian."""
    rows: list[GradCheckRow] = []
    evaluations = 0
    for i, data in enumerate(datas):
        for j in range(len(data)):
            keep = data[j]
            data[j] = keep + eps
            plus = _values(f, datas, shapes)
            data[j] = keep - eps
            minus = _values(f, datas, shapes)
            evaluations += 2
            lefts = [(v - m) / eps for v, m in zip(values, minus)]
            rights = [(p - v) / eps for p, v in zip(plus, values)]
            kinks = [False] * len(values)
            if any(not _close(lf, rt, atol, rtol) for lf, rt in zip(lefts, rights)):
                # Do the slopes still disagree at a 10x smaller step? Then it is a kink.
                data[j] = keep + small
                plus2 = _values(f, datas, shapes)
                data[j] = keep - small
                minus2 = _values(f, datas, shapes)
                evaluations += 2
                for k, (v, p2, m2) in enumerate(zip(values, plus2, minus2)):
                    kinks[k] = not _close(lefts[k], rights[k], atol, rtol) and _same_jump(
                        rights[k] - lefts[k], (p2 - v) / small - (v - m2) / small
                    )
            data[j] = keep
            for k in range(len(values)):
                numeric = (plus[k] - minus[k]) / (2 * eps)
                rows.append(
                    _row(i, _unravel(j, shapes[i]), _unravel(k, out_shape), jac[k][i][j], numeric,
                         lefts[k], rights[k], atol, rtol, order, kinks[k])
                )
    return rows, evaluations


def _fast(
    f: Fn, xs: list[Tensor], eps: float, atol: float, rtol: float, rng: random.Random
) -> tuple[GradCheckRow, int]:
    """One random directional derivative vᵀ J u: one taped call, one backward pass, 2 more calls."""
    datas = [list(x._values()) for x in xs]
    shapes = [x.shape for x in xs]
    us = [[rng.uniform(-1.0, 1.0) for _ in d] for d in datas]
    norm = math.sqrt(math.fsum(u * u for uu in us for u in uu)) or 1.0
    us = [[u / norm for u in uu] for uu in us]

    def run() -> tuple[float, list[float], list[float]]:
        copies = [_new(list(d), s, "tensor") for d, s in zip(datas, shapes)]
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(copies)
            y = f(*copies)
        y = _output(y)
        base = y.data_sync()  # f at the point itself: the taped call doubles as the base value
        v = [rng.uniform(-1.0, 1.0) for _ in base]
        try:
            gs = tape.gradient(y, copies, output_gradients=_new(list(v), y.shape, "tensor"), unconnected_gradients="zero")
        except ShapeError as err:
            if not hasattr(err, "op"):
                raise
            return math.nan, base, v  # a VJP returned a wrong-shaped gradient; the full check names it
        analytic = math.fsum(a * b for g, u in zip(gs, us) if g is not None for a, b in zip(g.data_sync(), u))
        return analytic, base, v

    result = _paused(run)
    assert isinstance(result, tuple)
    analytic, base, v = result

    def along(t: float) -> float:
        moved = [[a + t * b for a, b in zip(d, u)] for d, u in zip(datas, us)]
        values = _paused(lambda: _values(f, moved, shapes))
        assert isinstance(values, list)
        return math.fsum(a * b for a, b in zip(values, v))

    plus, minus = along(eps), along(-eps)
    at = math.fsum(a * b for a, b in zip(base, v))
    numeric = (plus - minus) / (2 * eps)
    left, right = (at - minus) / eps, (plus - at) / eps
    evaluations = 3
    kink = False
    if not _close(left, right, atol, rtol):
        small = eps / 10
        plus2, minus2 = along(small), along(-small)
        evaluations += 2
        kink = _same_jump(right - left, (plus2 - at) / small - (at - minus2) / small)
    row = _row(0, (), (), analytic, numeric, left, right, atol, rtol, 1, kink)
    return row, evaluations


# -- culprit finding ---------------------------------------------------------------


class _OpRecorder:
    """Observer that copies each op's inputs and remembers who called it."""

    def __init__(self) -> None:
        self.calls: list[tuple[Op, list[tuple[list[float], Shape]], dict[str, object], str]] = []

    def on_create(self, tensor: Tensor) -> None:
        pass

    def on_free(self, tensor: Tensor) -> None:
        pass

    def on_op(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor, seconds: float) -> None:
        if op.differentiable and op.vjp is not None:
            copies = [(list(x._data or []), x.shape) for x in inputs]
            self.calls.append((op, copies, dict(params), _runtime.user_frame_line()))


def _run_op(op: Op, xs: list[Tensor], params: dict[str, object]) -> Tensor:
    return op.forward(tuple(xs), **params) if op.n_inputs < 0 else op.forward(*xs, **params)


def _forward_at(op: Op, xs: list[Tensor], params: dict[str, object], record: bool) -> tuple[Tensor, dict[str, object]]:
    """Run ``op`` at ``xs``: its output and the params its VJP needs. With ``record``
    a primitive runs through its wrapper, so an open tape sees it."""
    if op.rerun is not None:
        return op.rerun(*xs, **params)  # a custom_grad op: a fresh grad_fn for these inputs
    if record:
        prim = DISPATCH[op.name]
        return (prim(list(xs), **params) if op.n_inputs < 0 else prim(*xs, **params)), params
    return _run_op(op, xs, params), params


def _vjp(op: Op, v: list[float], out: Tensor, xs: list[Tensor], params: dict[str, object]) -> Grads:
    assert op.vjp is not None  # only ops with a VJP are recorded
    return op.vjp(_new(list(v), out.shape, "tensor"), out, *xs, **params)


_Verdict = tuple[bool, float, float, str]


def _moved(inputs: list[tuple[list[float], Shape]], i: int, u: list[float], t: float) -> list[Tensor]:
    """Fresh tensors for ``inputs``, with input ``i`` moved by ``t * u``."""
    return [
        _new([a + t * b for a, b in zip(d, u)] if k == i else list(d), s, "tensor")
        for k, (d, s) in enumerate(inputs)
    ]


def _judge(analytic: float, along: Callable[[float], float], eps: float, atol: float, rtol: float) -> bool | None:
    """Whether ``analytic`` matches the central difference of ``along`` at 0;
    None when the difference is not finite (outside the op's domain: no verdict)."""
    plus, minus, at = along(eps), along(-eps), along(0.0)
    numeric = (plus - minus) / (2 * eps)
    if not (math.isfinite(numeric) and math.isfinite(at)):
        return None
    row = _row(0, (), (), analytic, numeric, (at - minus) / eps, (plus - at) / eps, atol, rtol, 1)
    return row.status != "FAIL"  # the check's own tolerances: what fails the check is blamed


def _check_op(
    op: Op, inputs: list[tuple[list[float], Shape]], params: dict[str, object],
    eps: float, atol: float, rtol: float, rng: random.Random,
) -> _Verdict:
    """Check one op's VJP at the inputs it saw, one input at a time, along random directions.

    A direction along which the op's finite difference is not finite (outside
    its domain, like the exponent of ``pow`` at a negative base) proves
    nothing and is skipped.
    """

    def run() -> _Verdict:
        xs = [_new(list(d), s, "tensor") for d, s in inputs]
        out, fresh = _forward_at(op, xs, params, record=False)
        v = [rng.uniform(-1.0, 1.0) for _ in range(out.size)]
        dxs = _vjp(op, v, out, xs, fresh)
        for i, ((_, s), dx) in enumerate(zip(inputs, dxs)):
            if dx is not None and dx.shape != s:
                return False, math.nan, math.nan, (
                    f"it returns a gradient of shape {dx.shape} for input {i}, which has shape {s}: "
                    "a VJP must sum over the axes broadcasting added or stretched (unbroadcast)"
                )
        for i, ((d, _), dx) in enumerate(zip(inputs, dxs)):
            u = [rng.uniform(-1.0, 1.0) for _ in d]
            g = dx.data_sync() if dx is not None else [0.0] * len(d)
            analytic = math.fsum(a * b for a, b in zip(g, u))

            def along(t: float, i: int = i, u: list[float] = u) -> float:
                return math.fsum(a * b for a, b in zip(_run_op(op, _moved(inputs, i, u, t), params).data_sync(), v))

            if _judge(analytic, along, eps, atol, rtol) is False:
                return False, analytic, (along(eps) - along(-eps)) / (2 * eps), f"input {i}"
        return True, 0.0, 0.0, ""

    result = _paused(run)
    assert isinstance(result, tuple)
    return result


def _check_op2(
    op: Op, inputs: list[tuple[list[float], Shape]], params: dict[str, object],
    eps: float, atol: float, rtol: float, rng: random.Random,
) -> _Verdict:
    """Check that a tape differentiates one op's VJP correctly (its second derivative).

    With a fixed cotangent ``v`` and weights ``w``, ``s(x) = Σ w · vjp(v, x)``
    is differentiated twice: by a tape that recorded the VJP's ops, and by
    finite differences of the VJP itself.
    """

    def run() -> _Verdict:
        xs = [_new(list(d), s, "tensor") for d, s in inputs]
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(xs)
            out, fresh = _forward_at(op, xs, params, record=True)
            v = [rng.uniform(-1.0, 1.0) for _ in range(out.size)]
            ws = [[rng.uniform(-1.0, 1.0) for _ in d] for d, _ in inputs]
            dxs = _vjp(op, v, out, xs, fresh)
            terms = [(dx * _new(list(w), dx.shape, "tensor")).sum() for dx, w in zip(dxs, ws) if dx is not None]
            s = terms[0] if terms else None
            for term in terms[1:]:
                s = s + term if s is not None else term
        if s is None:
            return True, 0.0, 0.0, ""
        gs = tape.gradient(s, xs, unconnected_gradients="zero")

        def weighted(moved: list[Tensor]) -> float:
            out_m, fresh_m = _forward_at(op, moved, params, record=False)
            total = 0.0
            for dx, w in zip(_vjp(op, v, out_m, moved, fresh_m), ws):
                if dx is not None:
                    total += math.fsum(a * b for a, b in zip(dx.data_sync(), w))
            return total

        for i, ((d, _), g) in enumerate(zip(inputs, gs)):
            u = [rng.uniform(-1.0, 1.0) for _ in d]
            analytic = math.fsum(a * b for a, b in zip(g.data_sync(), u)) if g is not None else 0.0

            def along(t: float, i: int = i, u: list[float] = u) -> float:
                return weighted(_moved(inputs, i, u, t))

            if _judge(analytic, along, eps, atol, rtol) is False:
                return False, analytic, (along(eps) - along(-eps)) / (2 * eps), f"input {i}"
        return True, 0.0, 0.0, ""

    result = _paused(run)
    assert isinstance(result, tuple)
    return result


def find_culprit(
    f: Fn, xs: list[Tensor], eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-4, seed: int = 0, order: int = 1,
    notes: list[str] | None = None,
) -> Culprit | None:
    """Re-run ``f`` and check the VJP of every op it calls; return the first wrong one.

    With ``order=2`` each op's VJP is checked to be differentiated correctly
    (what the gradient of a gradient relies on) instead. An op that cannot
    be re-run on its own is skipped, and ``notes`` (if given) says so: the
    search for a culprit never hides the report it explains.
    """
    from .memory import _observing

    recorder = _OpRecorder()
    with _observing(recorder):
        _paused(lambda: _values(f, [list(x._values()) for x in xs], [x.shape for x in xs]))
    rng = random.Random(seed)
    check = _check_op2 if order == 2 else _check_op
    checked: list[str] = []
    for op, inputs, params, where in recorder.calls:
        try:
            ok, analytic, numeric, detail = check(op, inputs, params, eps, atol, rtol, rng)
        except Exception as err:  # noqa: BLE001 - a diagnostic must not replace the report
            if notes is not None:
                notes.append(f"could not re-check {op.name!r} called at {where} on its own: {type(err).__name__}: {str(err).splitlines()[0]:.120}")
            continue
        if not ok:
            return Culprit(op.name, where, tuple(s for _, s in inputs), analytic, numeric, detail, order)
        checked.append(op.name)
    if notes is not None:
        what = "the second derivative through the VJP" if order == 2 else "the VJP"
        names = ", ".join(f"{name} x{checked.count(name)}" for name in dict.fromkeys(checked)) or "none"
        notes.append(
            f"no culprit at order {order}: re-checked {what} of {len(checked)} of the "
            f"{len(recorder.calls)} op call(s) f made ({names}), each at the inputs it saw, "
            f"against finite differences with atol={atol:g}, rtol={rtol:g}: all agree. "
            "Only ops a tape records are examined."
        )
    return None


# -- check_grads -----------------------------------------------------------------


def check_grads(
    f: TensorFn,
    inputs: Tensor | Sequence[Tensor],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    mode: str = "full",
    order: int = 1,
    seed: int | None = None,
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
    inputs it saw, and ``report.culprit`` names the first op whose VJP is
    wrong and the line of your code that called it (at ``order=2``, also
    the first op whose VJP a tape cannot differentiate correctly).

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
    """
    _check_fn(f, "check_grads")
    xs = _check_inputs(inputs, "check_grads")
    _check_eps(eps)
    if mode not in ("full", "fast"):
        raise InvalidArgumentError(
            explain(f'mode={mode!r} is not "full" or "fast".', "full compares every entry; fast one random direction.", 'use mode="full" for small inputs.'),
            value=mode,
        )
    if order not in (1, 2):
        raise InvalidArgumentError(
            explain(f"order={order!r} is not 1 or 2.", "order=2 also checks the gradient of the gradient.", "use order=1 or order=2."),
            value=order,
        )
    for name, tol in (("atol", atol), ("rtol", rtol)):
        if not is_number(tol) or not tol >= 0:
            raise InvalidArgumentError(
                explain(f"{name}={tol!r} must be a non-negative number.", "Tolerances bound the allowed error.", f"for example {name}=1e-5."),
                value=tol,
            )
    if seed is not None and not is_int(seed):
        raise InvalidArgumentError(
            explain(f"seed={seed!r} is not an int.", "The seed picks the random directions of fast mode.", "pass seed=0, or leave it out."),
            value=seed,
        )
    rng = random.Random(0 if seed is None else seed)
    report = _check(f, xs, eps, atol, rtol, mode, rng, 1, f)
    if order == 2:
        second = _check(_gradient_of(f, len(xs)), xs, eps, atol, rtol, mode, rng, 2, f)
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
        )
    return report


def _gradient_of(f: Fn, n: int) -> Fn:
    """``h(*xs)``: every first-order gradient of ``sum(f)``, flattened and joined."""
    from .ops import concat, reshape

    def h(*xs: Tensor) -> Tensor:
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(list(xs))
            y = f(*xs)
        gs = tape.gradient(y, list(xs), unconnected_gradients="zero")
        return concat([reshape(g, shape=(-1,)) for g in gs if g is not None], axis=0)

    h.__name__ = f"gradient_of_{getattr(f, '__name__', 'f')}"
    return h


def _badness(r: GradCheckRow) -> tuple[int, float]:
    return ({"FAIL": 0, "kink": 1, "ok": 2}[r.status], -r.abs_error if math.isfinite(r.abs_error) else -math.inf)


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
        notes.append(f"fast mode: the directional derivative was {row.status}; ran the full check to name entries")
    rows, n, shape_notes = _full(f, xs, eps, atol, rtol, order)
    evaluations += n
    notes.extend(shape_notes)
    rows.sort(key=_badness)
    ok = not shape_notes and not any(r.status == "FAIL" for r in rows)
    finite = [r for r in rows if r.status != "kink"]
    report = GradCheckReport(
        ok=ok,
        max_abs_error=max((r.abs_error for r in finite), default=0.0),
        max_rel_error=max((r.rel_error for r in finite), default=0.0),
        rows=rows,
        mode=mode,
        order=order,
        eps=eps,
        atol=atol,
        rtol=rtol,
        evaluations=evaluations,
        notes=notes,
    )
    if not ok:
        report.culprit = find_culprit(f, xs, eps, atol, rtol, notes=report.notes)
        if report.culprit is None and order == 2:
            report.culprit = find_culprit(source, xs, eps, atol, rtol, order=2, notes=report.notes)
    return report


def _with_order(row: GradCheckRow, order: int) -> GradCheckRow:
    return GradCheckRow(row.input, row.index, row.output, row.analytic, row.numeric, row.abs_error, row.rel_error, row.status, order)
