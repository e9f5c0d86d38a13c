"""The culprit finder: which op's VJP is wrong, and which line of your code called it.

Read after ``numerical.py``; ``check_grads`` (``gradcheck.py``) calls
``find_culprit`` when a check fails. It re-runs ``f`` with an observer
that copies each op's inputs, then checks every recorded op's VJP on its own,
at the inputs it saw, along random directions, against finite differences.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from ..core import runtime
from ..core.registry import Op
from ..core.runtime import DISPATCH, TensorBase, new
from ..core.types import Shape
from .numerical import Culprit, Fn, compare_row, is_close, run_paused, same_jump, values_at
from ..autodiff.tape import GradientTape
from ..core.tensor import Grads, Tensor

__all__ = ["find_culprit"]


# -- culprit finding ---------------------------------------------------------------


class _OpRecorder:
    """Observer that copies each op's inputs and remembers who called it."""

    def __init__(self) -> None:
        self.calls: list[tuple[Op, list[tuple[list[float], Shape]], dict[str, object], str]] = []

    def on_create(self, tensor: TensorBase) -> None:
        pass

    def on_free(self, tensor: TensorBase) -> None:
        pass

    def on_vjp(self, op: Op, inputs: tuple[Tensor, ...], out: Tensor, dxs: Grads) -> None:
        pass

    def on_op(self, op: Op, inputs: tuple[Tensor, ...], params: dict[str, object], out: Tensor, seconds: float) -> None:
        if op.differentiable and op.vjp is not None:
            copies = [(list(x._data or []), x.shape) for x in inputs]
            self.calls.append((op, copies, dict(params), runtime.user_frame_line()))


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


_Verdict = tuple[bool, float, float, str]


def _moved(inputs: list[tuple[list[float], Shape]], i: int, u: list[float], t: float) -> list[Tensor]:
    """Fresh tensors for ``inputs``, with input ``i`` moved by ``t * u``."""
    return [
        new(Tensor, [a + t * b for a, b in zip(d, u)] if k == i else list(d), s, "tensor")
        for k, (d, s) in enumerate(inputs)
    ]


def _judge(analytic: float, along: Callable[[float], float], eps: float, atol: float, rtol: float) -> bool | None:
    """Whether ``analytic`` matches the central difference of ``along`` at 0;
    None when the difference is not finite (outside the op's domain: no verdict)."""
    plus, minus, at = along(eps), along(-eps), along(0.0)
    numeric = (plus - minus) / (2 * eps)
    if not (math.isfinite(numeric) and math.isfinite(at)):
        return None
    left, right = (at - minus) / eps, (plus - at) / eps
    kink = False
    if not is_close(left, right, atol, rtol):  # a kink only if the slopes still disagree at a 10x smaller step
        small = eps / 10
        kink = same_jump(right - left, (along(small) - at) / small - (at - along(-small)) / small)
    row = compare_row(0, (), (), analytic, numeric, left, right, atol, rtol, 1, kink)
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
        xs = [new(Tensor, list(d), s, "tensor") for d, s in inputs]
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

    result = run_paused(run)
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
        xs = [new(Tensor, list(d), s, "tensor") for d, s in inputs]
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(xs)
            out, fresh = _forward_at(op, xs, params, record=True)
            v = [rng.uniform(-1.0, 1.0) for _ in range(out.size)]
            ws = [[rng.uniform(-1.0, 1.0) for _ in d] for d, _ in inputs]
            dxs = _vjp(op, v, out, xs, fresh)
            terms = [(dx * new(Tensor, list(w), dx.shape, "tensor")).sum() for dx, w in zip(dxs, ws) if dx is not None]
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

    result = run_paused(run)
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
    recorder = _OpRecorder()
    with runtime.observing(recorder):
        run_paused(lambda: values_at(f, [list(x._values()) for x in xs], [x.shape for x in xs]))
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
            real = params.get("n_inputs")  # a custom_grad's record also holds the tensors f saved
            shapes = tuple(s for _, s in (inputs[:real] if isinstance(real, int) else inputs))
            return Culprit(op.name, where, shapes, analytic, numeric, detail, order)
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
