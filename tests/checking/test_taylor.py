"""mt.taylor_test, measured on the op table: every correct VJP passes, every VJP mutant that
changes the gradient fails, and the cases a central difference is fooled by are judged truthfully."""

from __future__ import annotations

import inspect
import random
import sys
import textwrap
from collections.abc import Callable
from typing import cast

import pytest

import microtape as mt
from microtape.engine.primitive import OPS

from ..mutation import MUTANTS, Mutant
from ..op_cases import ALL_CASES, CASES, Case, call, inputs_of

DIFFERENTIABLE = [case for case in ALL_CASES if OPS[case.name].differentiable]
FIXED = {"one_hot": (0,), "gather": (1,), "where": (0,)}
"""Inputs the direction leaves alone: indices (not values), and where()'s condition (f jumps as it crosses 0)."""
VJP_MUTANTS = [m for m in MUTANTS if m.name.startswith("vjp-")]


def direction(case: Case) -> list[mt.Tensor]:
    """A seeded direction, each entry scaled to its input's, 0 for the inputs in FIXED."""
    rng = random.Random(str(case))
    out = []
    for i, x in enumerate(inputs_of(case)):
        d = x.data_sync()
        top = max((abs(a) for a in d), default=0.0) or 1.0
        fixed = i in FIXED.get(case.name, ())
        out.append(mt.tensor([0.0 if fixed else rng.uniform(-1.0, 1.0) * (abs(a) or top) for a in d], shape=x.shape))
    return out


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=str)
def test_every_correct_vjp_of_the_op_table_passes(case: Case, order: int) -> None:
    report = mt.taylor_test(call(case), inputs_of(case), direction(case), order=order)  # type: ignore[call-overload]
    assert report.verdict == "passed", str(report)


def mutated_vjp(mutant: Mutant) -> Callable[..., tuple[mt.Tensor | None, ...]]:
    """The op's VJP with the mutant's textual change, compiled in its module's namespace."""
    original = OPS[str(mutant.select)].vjp
    assert original is not None
    lines = inspect.getsource(original).splitlines(keepends=True)
    while lines[0].lstrip().startswith("@"):
        lines.pop(0)
    source = textwrap.dedent("".join(lines))
    assert source.count(mutant.old) == 1, mutant.name
    namespace = dict(sys.modules[original.__module__].__dict__)
    exec(compile(source.replace(mutant.old, mutant.new), original.__module__, "exec"), namespace)
    fn = namespace[original.__name__]
    assert callable(fn)
    return cast(Callable[..., tuple[mt.Tensor | None, ...]], fn)


@pytest.mark.parametrize("mutant", VJP_MUTANTS, ids=lambda m: m.name)
def test_every_vjp_mutant_that_changes_the_gradient_fails(mutant: Mutant) -> None:
    op = OPS[str(mutant.select)]
    original = op.vjp
    changed = 0
    for case in CASES[op.name]:
        good = mt.taylor_test(call(case), inputs_of(case), direction(case))
        op.vjp = mutated_vjp(mutant)
        try:
            bad = mt.taylor_test(call(case), inputs_of(case), direction(case))
        finally:
            op.vjp = original
        if abs(bad.derivative - good.derivative) > 1e-9 * (1.0 + abs(good.derivative)):
            changed += 1
            assert bad.verdict in ("failed", "inconclusive"), str(bad)  # never a false pass
            if (mutant.name, str(case)) != ("vjp-matmul-dy-operands", "matmul[(2,3)x(3)]"):
                assert bad.verdict == "failed", str(bad)
        else:  # the mutant does not change this case's gradient (no ties in max's samples): it passes, rightly
            assert bad.verdict == "passed", str(bad)
    assert changed or mutant.name in ("vjp-max-ties-not-split",), f"{mutant.name} changes no case's gradient"
