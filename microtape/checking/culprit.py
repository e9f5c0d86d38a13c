"""The culprit finder: which op's VJP is wrong, and which line of your code called it.

``check_grads`` (``gradcheck.py``) calls ``find_culprit`` when a check
fails. It re-runs ``f`` with an observer that copies each op's inputs, then
checks every recorded op's VJP on its own, at the inputs it saw, against
finite differences: first at the op's own scale, for the failing entry (the
gradient that really reached the op, the direction that entry's input moves
it in, a step relative to its inputs), then, if that names nobody, along
random directions with the check's step.
``tests/checking/test_culprit_mutation.py`` measures it by planting faults
in every op's VJP, inside small functions and realistic losses.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from ..engine import user_line, arena
from ..engine.primitive import Op
from ..engine.arena import DISPATCH, TensorBase, new
from ..engine.types import Shape
from ..language import N_
from ..ops.floats import safe_total
from .forward_tests import dot_agrees
from .numerical import Culprit, Fn, GradCheckRow, as_output, compare_along, run_paused, values_at
from ..autodiff.gradient_tape import GradientTape
from ..engine.tensor import Grads, Tensor

__all__ = ["find_culprit", "find_dot_culprit", "rounding_scale"]


# -- culprit finding ---------------------------------------------------------------


class _OpRecorder:
    """Observer that copies each op's inputs and remembers who called it."""

    def __init__(self, keep_outputs: bool = False) -> None:
        self.calls: list[tuple[Op, list[tuple[list[float], Shape]], dict[str, object], str]] = []
        self.outputs: list[Tensor] = []
        self.values: list[list[float]] = []
        """With ``keep_outputs``: each recorded op's output values (they outlive the outputs)."""
        self.keep_outputs = keep_outputs

    def on_create(self, tensor: TensorBase) -> None:
        pass

    def on_free(self, tensor: TensorBase) -> None:
        pass

    def on_vjp(self, op: Op, inputs: tuple[Tensor, ...], out: Tensor, dxs: Grads) -> None:
        pass

    def on_op(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor, seconds: float) -> None:
        if op.differentiable and op.vjp is not None:
            copies = [(list(x._data or []), x.shape) for x in inputs]
            self.calls.append((op, copies, dict(params), user_line.user_frame_line()))
            if self.keep_outputs:
                self.outputs.append(out)
                self.values.append(list(out._data or []))


def _run_op(op: Op, xs: list[Tensor], params: dict[str, object]) -> Tensor:
    data, shape = op.forward(tuple(xs), **params) if op.n_inputs < 0 else op.forward(*xs, **params)
    return new(Tensor, data, shape, op.name)


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
    return op.vjp(new(Tensor, list(v), out.shape, "tensor"), out, *xs, **params)


_Verdict = tuple[bool | None, float, float, str]
"""(agrees: True, disagrees: False, cannot tell: None; analytic, numeric, which input)."""


def _weight(values: list[float], grads: list[float]) -> float:
    """``Σ |value · gradient|``: how much the rounding of ``values`` (about ``EPS_MACHINE`` times each)
    can move a number that depends on them with these gradients."""
    return safe_total(abs(a * b) for a, b in zip(values, grads) if math.isfinite(a * b))


def _moved(inputs: list[tuple[list[float], Shape]], i: int, u: list[float], t: float) -> list[Tensor]:
    """Fresh tensors for ``inputs``, with input ``i`` moved by ``t * u``."""
    return [
        new(Tensor, [a + t * b for a, b in zip(d, u)] if k == i else list(d), s, "tensor")
        for k, (d, s) in enumerate(inputs)
    ]


def _judge(analytic: float, along: Callable[[float], float], eps: float, atol: float, rtol: float, scale: float = 0.0) -> bool | None:
    """Whether ``analytic`` matches the central difference of ``along`` at 0, by the check's own
    rule (``numerical.judge``): True when it agrees or is a kink, False when the finite difference
    measures a disagreement, None when it cannot tell (outside the op's domain, a jump, below the
    rounding floor, an unstable difference): an op is never blamed on a difference that cannot be trusted."""
    status = compare_along(analytic, along, eps, atol, rtol, scale).status
    if status == "inconclusive":
        return None
    return status != "FAIL"


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
        xs = [new(Tensor, list(d), s, "tensor") for d, s in inputs]
        out, fresh = _forward_at(op, xs, params, record=False)
        v = [rng.uniform(-1.0, 1.0) for _ in range(out.size)]
        dxs = _vjp(op, v, out, xs, fresh)
        for i, ((_, s), dx) in enumerate(zip(inputs, dxs)):
            if dx is not None and dx.shape != s:
                return False, math.nan, math.nan, N_(
                    "it returns a gradient of shape {0} for input {1}, which has shape {2}: "
                    "a VJP must sum over the axes broadcasting added or stretched (unbroadcast)").format(dx.shape, i, s)
        unsure = False
        out_scale = _weight(out.data_sync(), v)
        for i, ((d, _), dx) in enumerate(zip(inputs, dxs)):
            u = [rng.uniform(-1.0, 1.0) for _ in d]
            g = dx.data_sync() if dx is not None else [0.0] * len(d)
            analytic = safe_total(a * b for a, b in zip(g, u))

            def along(t: float, i: int = i, u: list[float] = u) -> float:
                return safe_total(a * b for a, b in zip(_run_op(op, _moved(inputs, i, u, t), params).data_sync(), v))

            verdict = _judge(analytic, along, eps, atol, rtol, _weight(d, g) + out_scale)
            if verdict is False:
                return False, analytic, (along(eps) - along(-eps)) / (2 * eps), N_("input {0}").format(i)
            unsure = unsure or verdict is None
        return (None if unsure else True), 0.0, 0.0, ""

    result = run_paused(run)
    assert isinstance(result, tuple)
    return result


def _total(terms: list[Tensor]) -> Tensor | None:
    """The sum of scalar tensors, recorded by whichever tape is open; None for no terms."""
    total: Tensor | None = None
    for term in terms:
        total = term if total is None else total + term
    return total


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
        xs = [new(Tensor, list(d), s, "tensor") for d, s in inputs]
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(xs)
            out, fresh = _forward_at(op, xs, params, record=True)
            v = [rng.uniform(-1.0, 1.0) for _ in range(out.size)]
            ws = [[rng.uniform(-1.0, 1.0) for _ in d] for d, _ in inputs]
            dxs = _vjp(op, v, out, xs, fresh)
            s = _total([(dx * new(Tensor, list(w), dx.shape, "tensor")).sum() for dx, w in zip(dxs, ws) if dx is not None])
        if s is None:
            return True, 0.0, 0.0, ""
        gs = tape.gradient(s, xs, unconnected_gradients="zero")

        def weighted(moved: list[Tensor]) -> float:
            out_m, fresh_m = _forward_at(op, moved, params, record=False)
            total = 0.0
            for dx, w in zip(_vjp(op, v, out_m, moved, fresh_m), ws):
                if dx is not None:
                    total += safe_total(a * b for a, b in zip(dx.data_sync(), w))
            return total

        unsure = False
        for i, ((d, _), g) in enumerate(zip(inputs, gs)):
            u = [rng.uniform(-1.0, 1.0) for _ in d]
            analytic = safe_total(a * b for a, b in zip(g.data_sync(), u)) if g is not None else 0.0

            def along(t: float, i: int = i, u: list[float] = u) -> float:
                return weighted(_moved(inputs, i, u, t))

            verdict = _judge(analytic, along, eps, atol, rtol, _weight(d, g.data_sync()) if g is not None else 0.0)
            if verdict is False:
                return False, analytic, (along(eps) - along(-eps)) / (2 * eps), N_("input {0}").format(i)
            unsure = unsure or verdict is None
        return (None if unsure else True), 0.0, 0.0, ""

    result = run_paused(run)
    assert isinstance(result, tuple)
    return result


# -- at the op's own scale: the failing entry, split op by op --------------------------

_STEP = (2.0**-52) ** (1 / 3)  # ~6e-6: the central difference's best relative step


def _record(f: Fn, datas: list[list[float]], shapes: list[Shape], keep_outputs: bool = False) -> _OpRecorder:
    """The ops ``f`` calls at ``datas``, with copies of their inputs (and their outputs)."""
    recorder = _OpRecorder(keep_outputs)
    with arena.observing(recorder):
        values_at(f, datas, shapes)
    return recorder


def _adjoints(
    f: Fn, datas: list[list[float]], shapes: list[Shape], output: tuple[int, ...],
) -> tuple[_OpRecorder, list[list[float]]]:
    """Record ``f`` on a tape and run the backward pass of entry ``output`` of its result: the ops
    ``f`` calls and the gradient that actually flowed into each op's output (the real
    dout of the failing entry, wrong VJPs included)."""
    recorder = _OpRecorder(keep_outputs=True)
    copies = [new(Tensor, list(d), s, "tensor") for d, s in zip(datas, shapes)]
    with GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(copies)
        with arena.observing(recorder):
            y = as_output(f(*copies))
    try:
        onehot = [0.0] * y.size
        onehot[_flat(output, y.shape)] = 1.0
        # An op a composite or custom_grad ran inside itself is not on the tape (its output is
        # gone when it returned): no gradient flows through it, its dout is zero.
        live = [o for o in recorder.outputs if o._data is not None]
        gs = tape.gradient(y, live, output_gradients=new(Tensor, onehot, y.shape, "one_hot"), unconnected_gradients="zero")
        flowed = {o.id: g.data_sync() for o, g in zip(live, gs) if g is not None}
        douts = [flowed.get(o.id, [0.0] * o.size) for o in recorder.outputs]
    finally:
        tape.release()
    recorder.outputs = []
    return recorder, douts


def rounding_scale(f: Fn, xs: list[Tensor], output: tuple[int, ...]) -> float:
    """How large the values are that ``f`` rounds on the way to its entry ``output``: the sum, over
    every op ``f`` calls, of its output's entries times the gradient that entry passes on to ``output``.
    A finite difference of that entry cannot see a slope below about ``EPS_MACHINE`` times this, over
    the step: ``(g + 1e9) - 1e9`` is a small number made of values of 1e9.

    Examples:
        >>> from microtape.checking.culprit import rounding_scale
        >>> x = mt.tensor([1.0, 2.0])
        >>> rounding_scale(lambda t: ((t * t).sum() + 1e9) - 1e9, [x], ()) > 1e9
        True
    """

    def run() -> float:
        datas = [list(x._values()) for x in xs]
        recorder, douts = _adjoints(f, datas, [x.shape for x in xs], output)
        return safe_total(_weight(data, dout) for data, dout in zip(recorder.values, douts))

    result = run_paused(run)
    assert isinstance(result, float)
    return result


def _step_along(inputs: list[tuple[list[float], Shape]], us: list[list[float]]) -> float:
    """A step t for moving ``inputs`` by ``t * us``: every entry moves by about ``_STEP``
    times its own size (or, for a zero, the size of its input's largest entry)."""
    t = math.inf
    for (d, _), u in zip(inputs, us):
        top = max((abs(a) for a in d), default=0.0) or 1.0
        for a, b in zip(d, u):
            if b != 0.0 and math.isfinite(b):
                t = min(t, (abs(a) or top) / abs(b))
    return _STEP * t if math.isfinite(t) else 0.0


def _contribution(
    op: Op, inputs: list[tuple[list[float], Shape]], params: dict[str, object], dout: list[float], us: list[list[float]],
    atol: float, rtol: float,
) -> tuple[float, float] | None:
    """What one op contributes to the failing entry: by its VJP (``<vjp(dout), u>``) and by
    finite differences of ``<dout, op(x + t u)>`` at a step scaled to its inputs, when the two
    disagree by the rule ``check_grads`` uses; None when they agree, at a kink, or when finite
    differences cannot tell."""
    t = _step_along(inputs, us)
    if t == 0.0 or not any(dout):
        return None
    xs = [new(Tensor, list(d), s, "tensor") for d, s in inputs]
    out, fresh = _forward_at(op, xs, params, record=False)
    dxs = _vjp(op, dout, out, xs, fresh)
    if any(dx is not None and dx.shape != s for (_, s), dx in zip(inputs, dxs)):
        return None  # the random-direction search below says which input, and how
    analytic = safe_total(a * b for dx, u in zip(dxs, us) if dx is not None for a, b in zip(dx.data_sync(), u))

    def along(step: float) -> float:
        moved = [new(Tensor, [a + step * b for a, b in zip(d, u)], s, "tensor") for (d, s), u in zip(inputs, us)]
        return safe_total(a * b for a, b in zip(_forward_at(op, moved, params, record=False)[0].data_sync(), dout))

    if not math.isfinite(analytic):
        return None
    scale = _weight(out.data_sync(), dout) + safe_total(
        _weight(d, dx.data_sync()) for (d, _), dx in zip(inputs, dxs) if dx is not None
    )
    row = compare_along(analytic, along, t, atol, rtol, scale)  # the check's rule for a kink and for trust
    if row.status != "FAIL":  # agrees, a kink, or finite differences cannot tell: not this op
        return None
    return analytic, row.numeric


def _tangents(
    f: Fn, datas: list[list[float]], shapes: list[Shape], i: int, j: int, eps: float, calls: int,
) -> list[list[list[float]]] | None:
    """How each op's inputs move when input ``i``'s entry ``j`` moves: central differences
    of the inputs every op saw. None if ``f`` does not call the same ops on both sides."""
    sides = []
    for sign in (1.0, -1.0):
        moved = [list(d) for d in datas]
        moved[i][j] += sign * eps
        sides.append(_record(f, moved, shapes).calls)
    plus, minus = sides
    if len(plus) != calls or len(minus) != calls:
        return None
    tangents = []
    for (op_p, ins_p, _, _), (op_m, ins_m, _, _) in zip(plus, minus):
        if op_p.name != op_m.name or [s for _, s in ins_p] != [s for _, s in ins_m]:
            return None
        tangents.append([[(a - b) / (2 * eps) for a, b in zip(dp, dm)] for (dp, _), (dm, _) in zip(ins_p, ins_m)])
    return tangents


def _scaled_search(f: Fn, xs: list[Tensor], row: GradCheckRow, eps: float, atol: float, rtol: float) -> Culprit | None:
    """The op that explains the failing entry ``row``: the largest share of its error.

    The error of one entry of a backward pass is exactly the sum, over the op
    calls, of each VJP's error on the gradient that really flowed into it,
    along the direction in which the entry's input moves that op's inputs.
    Each op is checked that way, at a step scaled to its own inputs; one whose
    share is at least a tenth of the entry's error is wrong.
    """
    datas = [list(x._values()) for x in xs]
    shapes = [x.shape for x in xs]
    j = _flat(row.index, shapes[row.input])
    recorder, douts = _adjoints(f, datas, shapes, row.output)
    tangents = _tangents(f, datas, shapes, row.input, j, eps, len(recorder.calls))
    if tangents is None:
        return None
    error = abs(row.analytic - row.numeric)
    worst: tuple[float, int, float, float] | None = None
    for n, ((op, inputs, params, _), dout, us) in enumerate(zip(recorder.calls, douts, tangents)):
        try:
            verdict = _contribution(op, inputs, params, dout, us, atol, rtol)
        except Exception:  # noqa: BLE001 - an op that cannot be re-run alone: the search below tries it
            continue
        if verdict is None:
            continue
        analytic, numeric = verdict
        share = abs(analytic - numeric)
        if share >= 0.1 * error and (worst is None or share > worst[0]):
            worst = share, n, analytic, numeric
    if worst is None:
        return None
    _, n, analytic, numeric = worst
    op, inputs, params, where = recorder.calls[n]
    real = params.get("n_inputs")
    shapes_seen = tuple(s for _, s in (inputs[:real] if isinstance(real, int) else inputs))
    index = ",".join(map(str, row.index))
    detail = f"for input {row.input}[{index}], with the gradient that reached it,"
    saved = len(inputs) - real if isinstance(real, int) else 0
    return Culprit(op.name, where, shapes_seen, analytic, numeric, detail, 1, saved, op.rerun is not None)


def _flat(index: tuple[int, ...], shape: Shape) -> int:
    k = 0
    for i, d in zip(index, shape):
        k = k * d + i
    return k


def find_culprit(
    f: Fn, xs: list[Tensor], eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-4, seed: int = 0, order: int = 1,
    notes: list[str] | None = None, row: GradCheckRow | None = None,
) -> Culprit | None:
    """Re-run ``f`` and check the VJP of every op it calls; return the wrong one.

    Given the failing entry ``row`` (the worst of the check), each op is
    re-checked at its own scale: weighted by the gradient that actually
    flowed into it in that entry's backward pass, moved the way that entry's
    input moves it, with a finite-difference step taken from its inputs'
    magnitudes (about 6e-6 of each entry), and judged by what it contributes
    to the entry: the op whose share of the entry's error is largest, and at
    least a tenth of it, is named. Each op is judged by the rule
    ``check_grads`` uses (``numerical.judge``): a kink is excused, and a jump,
    a difference below the rounding floor or one that moves with the step
    blames nobody. So an op deep inside a realistic loss (rates in the
    hundreds, residuals of 1e-3, saturated logits) is judged by what it does
    to the gradient that failed, not by the check's absolute tolerances on
    unit-size random directions.

    Without ``row``, or if that finds nothing, every op is checked along
    random unit directions with the check's step and tolerances, and the
    first that disagrees is named (this also catches a VJP that returns a
    wrongly shaped gradient). With ``order=2`` each op's VJP is checked to
    be differentiated correctly (what the gradient of a gradient relies on)
    instead. An op that cannot be re-run on its own is skipped, and
    ``notes`` (if given) says so: the search for a culprit never hides the
    report it explains.

    Examples:
        >>> from microtape.checking.culprit import find_culprit
        >>> def twice(x):
        ...     return 2.0 * x, lambda dy: [dy]  # BUG: the gradient of 2x is 2 dy
        >>> f = lambda x: mt.custom_grad(twice)(x).sum()
        >>> x = mt.tensor([1.0, 3.0])
        >>> culprit = find_culprit(f, [x], row=mt.check_grads(f, [x]).failures[0])
        >>> culprit.op, round(culprit.analytic, 6), round(culprit.numeric, 6)
        ('custom_grad(twice)', 1.0, 2.0)
    """
    if row is not None and order == 1 and math.isfinite(row.analytic) and math.isfinite(row.numeric):
        try:
            found = run_paused(lambda: _scaled_search(f, xs, row, eps, atol, rtol))
        except Exception:  # noqa: BLE001 - a diagnostic must not replace the report; the search below runs
            found = None
        if isinstance(found, Culprit):
            return found
    recorder = _OpRecorder()
    with arena.observing(recorder):
        run_paused(lambda: values_at(f, [list(x._values()) for x in xs], [x.shape for x in xs]))
    rng = random.Random(seed)
    check = _check_op2 if order == 2 else _check_op
    checked: list[str] = []
    unsure: list[str] = []
    for op, inputs, params, where in recorder.calls:
        try:
            ok, analytic, numeric, detail = check(op, inputs, params, eps, atol, rtol, rng)
        except Exception as err:  # noqa: BLE001 - a diagnostic must not replace the report
            if notes is not None:  # the error's own text is the op's business, not the report's
                notes.append(N_("could not re-check {0} called at {1} on its own: it raised {2} when run again at the inputs it saw").format(
                    repr(op.name), where, type(err).__name__))
            continue
        real = params.get("n_inputs")  # a custom_grad's record also holds the tensors f saved
        if ok is False:
            shapes = tuple(s for _, s in (inputs[:real] if isinstance(real, int) else inputs))
            saved = len(inputs) - real if isinstance(real, int) else 0
            return Culprit(op.name, where, shapes, analytic, numeric, detail, order, saved, op.rerun is not None)
        (unsure if ok is None else checked).append(op.name)
    if notes is not None:
        names = ", ".join(f"{name} x{checked.count(name)}" for name in dict.fromkeys(checked))
        names = f" ({names})" if names else ""
        counts = (len(checked) + len(unsure), len(recorder.calls), f"{atol:g}", f"{rtol:g}", len(checked), names)
        if order == 2:
            note = N_("no culprit at order 2: re-checked the second derivative through the VJP of {0} of the {1} op call(s) f made, "
                      "each at the inputs it saw, against finite differences with atol={2}, rtol={3}: {4} agree{5}. "
                      "Only ops a tape records are examined.")
            doubting = N_("no culprit at order 2: re-checked the second derivative through the VJP of {0} of the {1} op call(s) f made, "
                          "each at the inputs it saw, against finite differences with atol={2}, rtol={3}: {4} agree{5}. {6} "
                          "Only ops a tape records are examined.")
        else:
            note = N_("no culprit at order 1: re-checked the VJP of {0} of the {1} op call(s) f made, "
                      "each at the inputs it saw, against finite differences with atol={2}, rtol={3}: {4} agree{5}. "
                      "Only ops a tape records are examined.")
            doubting = N_("no culprit at order 1: re-checked the VJP of {0} of the {1} op call(s) f made, "
                          "each at the inputs it saw, against finite differences with atol={2}, rtol={3}: {4} agree{5}. {6} "
                          "Only ops a tape records are examined.")
        if unsure:
            listed = ", ".join(f"{name} x{unsure.count(name)}" for name in dict.fromkeys(unsure))
            doubt = N_("For {0} more ({1}) finite differences could not tell (outside the op's domain, a jump, "
                       "or below the rounding floor at the inputs it saw).").format(len(unsure), listed)
            notes.append(doubting.format(*counts, doubt))
        else:
            notes.append(note.format(*counts))
    return None


# -- the dot-product test, op by op ---------------------------------------------------------


def _linear_op(op: Op, inputs: list[tuple[list[float], Shape]], params: dict[str, object], rng: random.Random) -> _Verdict:
    """Whether one op's VJP is linear in its cotangent at the inputs it saw:
    ``⟨vjp(w₁ + w₂), v⟩ = ⟨vjp(w₁), v⟩ + ⟨vjp(w₂), v⟩`` at random ``w₁``, ``w₂``, ``v``, up to rounding."""
    def run() -> _Verdict:
        xs = [new(Tensor, list(d), s, "tensor") for d, s in inputs]
        out, fresh = _forward_at(op, xs, params, record=False)
        w1 = [rng.uniform(-1.0, 1.0) for _ in range(out.size)]
        w2 = [rng.uniform(-1.0, 1.0) for _ in range(out.size)]
        real = params.get("n_inputs")
        n = real if isinstance(real, int) else len(inputs)
        vs = [[rng.uniform(-1.0, 1.0) for _ in d] for d, _ in inputs[:n]]

        def along(w: list[float]) -> tuple[float, float]:
            dxs = _vjp(op, w, out, xs, fresh)
            products = [a * b for dx, v in zip(dxs, vs) if dx is not None for a, b in zip(dx.data_sync(), v)]
            return safe_total(products), safe_total(abs(p) for p in products if math.isfinite(p))

        (one, s1), (two, s2) = along(w1), along(w2)
        both, s12 = along([a + b for a, b in zip(w1, w2)])
        agrees = dot_agrees(both, one + two, s1 + s2 + s12)
        return agrees, both, one + two, ""

    result = run_paused(run)
    assert isinstance(result, tuple)
    return result


def _taped_in_dy(op: Op, inputs: list[tuple[list[float], Shape]], params: dict[str, object], rng: random.Random) -> _Verdict:
    """Whether a tape differentiates one op's VJP in its cotangent correctly: for a linear VJP,
    ``⟨w, ∂⟨vjp(w), v⟩/∂w⟩ = ⟨vjp(w), v⟩`` (forward mode's ``J v`` is that gradient)."""
    def run() -> _Verdict:
        xs = [new(Tensor, list(d), s, "tensor") for d, s in inputs]
        out, fresh = _forward_at(op, xs, params, record=False)
        w = new(Tensor, [rng.uniform(-1.0, 1.0) for _ in range(out.size)], out.shape, "tensor")
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(w)
            assert op.vjp is not None
            given = [dx for dx in op.vjp(w, out, *xs, **fresh) if dx is not None]
            vs = [new(Tensor, [rng.uniform(-1.0, 1.0) for _ in range(dx.size)], dx.shape, "tensor") for dx in given]
            total = _total([(dx * v).sum() for dx, v in zip(given, vs)])
        if total is None:
            return True, 0.0, 0.0, ""
        jv = tape.gradient(total, w, unconnected_gradients="zero")
        assert jv is not None
        products = [a * b for a, b in zip(w.data_sync(), jv.data_sync())]
        left, right = safe_total(products), total.item()
        scale = safe_total(abs(p) for p in products if math.isfinite(p)) + safe_total(
            abs(a * b) for dx, v in zip(given, vs)
            for a, b in zip(dx.data_sync(), v.data_sync()) if math.isfinite(a * b))
        return dot_agrees(left, right, scale), left, right, ""

    result = run_paused(run)
    assert isinstance(result, tuple)
    return result


def find_dot_culprit(
    f: Fn, xs: list[Tensor], eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-4, seed: int = 0,
    notes: list[str] | None = None,
) -> Culprit | None:
    """The op behind a failed dot-product test: the first whose VJP is not linear in its cotangent.

    microtape's ``J v`` is the VJP of the VJP, so ``⟨w, J v⟩ = ⟨Jᵀw, v⟩``
    fails only when some op's VJP is not linear in its cotangent ``dy`` (it
    ignores ``dy``, squares it, adds a constant: ``culprit.test == "dot"``),
    or when a tape differentiates a VJP wrongly in ``dy`` (it reads ``dy``
    out as numbers: ``"dot-tape"``). Every op ``f`` ran is tested for
    each, at the inputs it saw, with no step to choose; if none fails, the
    second-order search of :func:`find_culprit` looks for an op whose VJP a
    tape differentiates wrongly in its inputs.

    Examples:
        >>> from microtape.checking.culprit import find_dot_culprit
        >>> def square(x):
        ...     return x * x, lambda dy: 2.0 * x  # BUG: forgets dy
        >>> culprit = find_dot_culprit(lambda x: mt.custom_grad(square)(x).sum(), [mt.tensor([1.0, 3.0])])
        >>> culprit.op, culprit.test
        ('custom_grad(square)', 'dot')
    """
    recorder = _OpRecorder()
    with arena.observing(recorder):
        run_paused(lambda: values_at(f, [list(x._values()) for x in xs], [x.shape for x in xs]))
    rng = random.Random(seed)
    for test, check in (("dot", _linear_op), ("dot-tape", _taped_in_dy)):
        for op, inputs, params, where in recorder.calls:
            try:
                ok, analytic, numeric, _ = check(op, inputs, params, rng)
            except Exception:  # noqa: BLE001 - a diagnostic must not replace the report; the search below runs
                continue
            if ok is False:
                real = params.get("n_inputs")
                shapes = tuple(s for _, s in (inputs[:real] if isinstance(real, int) else inputs))
                saved = len(inputs) - real if isinstance(real, int) else 0
                return Culprit(op.name, where, shapes, analytic, numeric, "", 1, saved, op.rerun is not None, test)
    return find_culprit(f, xs, eps, atol, rtol, seed, order=2, notes=notes)
