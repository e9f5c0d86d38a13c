"""The op table's test cases: every primitive's sample inputs, as tensors.

The samples themselves live in ``microtape/checking/samples.py`` (``selfcheck`` uses
them too); this module turns them into callables the tests can check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import microtape as mt
from microtape.engine.primitive import OPS
from microtape.engine.arena import DISPATCH
from microtape.checking.samples import CASES, SMOOTH, Case

__all__ = ["ALL_CASES", "CASES", "SMOOTH", "Case", "call", "inputs_of"]

ALL_CASES: list[Case] = [case for name in sorted(CASES) for case in CASES[name]]


def inputs_of(case: Case) -> list[mt.Tensor]:
    """Fresh tensors for a case's inputs."""
    return [mt.tensor(v) for v in case.inputs]


def call(case: Case) -> Callable[..., mt.Tensor]:
    """A function of the case's tensors that runs the op with its params."""
    fn = DISPATCH[case.name]
    if OPS[case.name].n_inputs < 0:
        return lambda *xs: fn(list(xs), **case.params)
    return lambda *xs: fn(*xs, **case.params)


@dataclass(frozen=True)
class Composite:
    """A composite op and inputs to check it at."""

    name: str
    fn: Callable[..., mt.Tensor]
    inputs: tuple[list[list[float]], ...]


A = [[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]]
B = [[0.9, 0.1, -0.6], [-0.3, 1.1, 0.8]]

COMPOSITES: list[Composite] = [
    Composite("mean", lambda x: mt.mean(x), (A,)),
    Composite("mean_axis", lambda x: mt.mean(x, axis=0), (A,)),
    Composite("min", lambda x: mt.min(x, axis=1), (A,)),
    Composite("softmax", lambda x: mt.softmax(x), (A,)),
    Composite("softmax_axis0", lambda x: mt.softmax(x, axis=0), (A,)),
    Composite("log_softmax", lambda x: mt.log_softmax(x), (A,)),
    Composite("stack", lambda x, y: mt.stack([x, y], axis=1), (A, B)),
    Composite("method_chain", lambda x, y: (x.T @ y).tanh().sum(axis=0), (A, B)),
]
