"""``check_grads(modes=("rev", "fwd"))``: the forward-mode tests, as JAX's ``check_grads`` runs them.

Two tests run along one random unit direction ``v`` in input space and one
random cotangent ``w`` in output space:

* ``fwd``: the JVP ``J v`` (``mt.jvp``) against the directional central
  difference ``(f(x + t v) - f(x - t v)) / 2t``, entry by entry, by the
  judge every other row uses (kinks, jumps and rounding floors included);
* ``dot``: the dot-product test ``⟨w, J v⟩ = ⟨Jᵀw, v⟩``, which needs no step
  at all: both sides are exact up to rounding. microtape builds ``J v`` from
  the VJP (the VJP of the VJP), so what this test catches is a VJP that is
  not linear in its cotangent, a ``grad_fn`` that forgets ``dy`` or adds
  a constant, or one whose own differentiation on a tape goes wrong; the
  culprit finder then names that op (``culprit.find_dot_culprit``).

A NaN or an Inf on either side of the dot-product test is never agreement.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Final

from ..autodiff.forward import jvp
from ..autodiff.gradient_tape import GradientTape
from ..engine.arena import new
from ..engine.tensor import Tensor
from ..engine.types import Shape
from ..errors import ShapeError
from ..language import N_
from ..ops.floats import safe_total
from .numerical import Fn, GradCheckRow, Probe, as_output, evaluator, judge, relative_error, run_paused

__all__ = ["DOT_RTOL", "dot_agrees", "forward_rows"]

DOT_RTOL: Final = 1e-8
"""The dot-product test agrees when ``|⟨w, Jv⟩ − ⟨Jᵀw, v⟩| ≤ DOT_RTOL · (Σ|wₖ (Jv)ₖ| + Σ|(Jᵀw)ⱼ vⱼ|)``:
both sides are sums of the same products, so they differ only by rounding (about 1e-16 of those
sums per op); a wrong rule differs by a share of them."""


def dot_agrees(left: float, right: float, scale: float) -> bool | None:
    """Whether the two sides of a dot-product test agree: None when neither is finite (nothing to
    compare), False when only one is, or when they differ by more than rounding explains.

    Examples:
        >>> from microtape.checking.forward_tests import dot_agrees
        >>> dot_agrees(1.0, 1.0 + 1e-15, 2.0), dot_agrees(0.0, 1.0, 1.0), dot_agrees(math.nan, math.nan, 0.0)
        (True, False, None)
    """
    if not (math.isfinite(left) or math.isfinite(right)):
        return None
    if not (math.isfinite(left) and math.isfinite(right)):
        return False
    return abs(left - right) <= DOT_RTOL * scale if scale > 0 else left == right


def _unit(rng: random.Random, sizes: list[int]) -> list[list[float]]:
    vs = [[rng.uniform(-1.0, 1.0) for _ in range(n)] for n in sizes]
    norm = math.sqrt(safe_total(a * a for v in vs for a in v)) or 1.0
    return [[a / norm for a in v] for v in vs]


def _positions(shape: Shape) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    for d in shape:
        out = [p + (i,) for p in out for i in range(d)]
    return out


def forward_rows(
    f: Fn, xs: list[Tensor], eps: float, atol: float, rtol: float, rng: random.Random, order: int = 1,
) -> tuple[list[GradCheckRow], int]:
    """The ``fwd`` rows (one per output entry) and the ``dot`` row of ``f`` at ``xs``, and the calls of ``f``."""
    datas = [list(x._values()) for x in xs]
    shapes = [x.shape for x in xs]
    vs = _unit(rng, [len(d) for d in datas])

    def g(*ts: Tensor) -> Tensor:
        return as_output(f(*ts))

    def run() -> tuple[list[GradCheckRow], int]:
        copies = [new(Tensor, list(d), s, "tensor") for d, s in zip(datas, shapes)]
        try:
            y, jv_t = jvp(g, copies, [new(Tensor, list(v), s, "tensor") for v, s in zip(vs, shapes)])
        except ShapeError as err:
            if not hasattr(err, "op"):
                raise
            why = N_("forward mode could not run: {0}").format(str(err).split("\n")[0])
            return [GradCheckRow(-1, (), (), math.nan, math.nan, math.inf, math.inf, "FAIL", order, why, "dot")], 1
        base, jv = y.data_sync(), jv_t.data_sync()
        ws = [rng.uniform(-1.0, 1.0) for _ in base]
        again = [new(Tensor, list(d), s, "tensor") for d, s in zip(datas, shapes)]
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(again)
            y2 = g(*again)
        gs = tape.gradient(y2, again, output_gradients=new(Tensor, list(ws), y2.shape, "tensor"), unconnected_gradients="zero")
        jtw = [gr.data_sync() if gr is not None else [0.0] * len(d) for gr, d in zip(gs, datas)]
        rows = _jvp_rows(f, datas, shapes, vs, base, jv, y.shape, eps, atol, rtol, order)
        calls = 2 + rows[1]
        left = safe_total(a * b for a, b in zip(ws, jv))
        right = safe_total(a * b for gr, v in zip(jtw, vs) for a, b in zip(gr, v))
        scale = safe_total(abs(a * b) for a, b in zip(ws, jv) if math.isfinite(a * b)) + safe_total(
            abs(a * b) for gr, v in zip(jtw, vs) for a, b in zip(gr, v) if math.isfinite(a * b))
        return rows[0] + [_dot_row(left, right, scale, order)], calls

    result = run_paused(run)
    assert isinstance(result, tuple)
    return result


def _jvp_rows(
    f: Fn, datas: list[list[float]], shapes: list[Shape], vs: list[list[float]], base: list[float], jv: list[float],
    out_shape: Shape, eps: float, atol: float, rtol: float, order: int,
) -> tuple[list[GradCheckRow], int]:
    """Each entry of ``J v`` against the central difference of that entry along ``v``."""
    moved = [list(d) for d in datas]
    evaluate: Callable[[], list[float]] = evaluator(f, moved, shapes)

    def along(t: float) -> list[float]:
        for m, d, v in zip(moved, datas, vs):
            m[:] = [a + t * b for a, b in zip(d, v)]  # in place: the input tensors wrap these lists
        return evaluate()

    probe = Probe(along, base)
    rows = [
        replace(judge(a, probe, k, eps, atol, rtol, i=-1, output=position, order=order), test="fwd")
        for k, (a, position) in enumerate(zip(jv, _positions(out_shape)))
    ]
    return rows, probe.calls


def _dot_row(left: float, right: float, scale: float, order: int) -> GradCheckRow:
    """The dot-product test as a row: ``analytic`` is ⟨w, Jv⟩ (forward), ``numeric`` is ⟨Jᵀw, v⟩ (reverse)."""
    agrees = dot_agrees(left, right, scale)
    finite = math.isfinite(left) and math.isfinite(right)
    err = abs(left - right) if finite else math.inf
    rel = relative_error(left, right) if finite else math.inf
    if agrees is None:
        why = N_("the dot-product test is not finite on either side (<w, Jv> = {0}, <J^T w, v> = {1}): "
                 "nothing to compare; check f's value and the backward pass for NaN first").format(left, right)
        return GradCheckRow(-1, (), (), left, right, err, rel, "inconclusive", order, why, "dot")
    if agrees:
        return GradCheckRow(-1, (), (), left, right, err, rel, "ok", order, "", "dot")
    why = N_("the dot-product test fails: <w, Jv> = {0} from forward mode, <J^T w, v> = {1} from the VJP, "
             "at random w and v; a VJP must be J^T w for every cotangent w, so one is not linear in its "
             "cotangent (it forgets dy, or adds to it), or a tape differentiates it wrongly").format(
                 f"{left:.7g}", f"{right:.7g}")
    return GradCheckRow(-1, (), (), left, right, err, rel, "FAIL", order, why, "dot")
