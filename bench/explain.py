"""What ``tape.explain`` costs on graphs of 10,000 recorded ops (the issue's bound: under a second).

Three graphs, each recorded once on a persistent tape:

* **chain**: ``chain.py``'s 10,000-op chain (4 mul, 5 add, 1 tanh in every 10): one path of
  10,000 steps, listed in full;
* **ladder**: 2,500 rungs of ``h = tanh(h * a + h * b)`` (10,000 ops): two paths per rung, so
  2^2,500 paths; counted (capped) and grouped by the edges into the input, with the largest
  single path found without listing them;
* **vector chain** (information, no bound): 2,000 rungs of ``h = tanh(h * w) * 0.9 + h * 0.1``
  on 8 entries with a final sum (10,002 ops), so one Jacobian row per entry: 8 one-hot VJPs
  per op, and about 8 times the cost of a scalar graph of as many ops.

Each row gives the median CPU time of ``tape.explain`` (``time.process_time``: time taken by
other processes on this shared machine is not counted), the cost per recorded op, and the
ratio to one ``tape.gradient`` call on the same tape (the explanation's floor: it runs one VJP
per op and output entry, where the gradient runs one per op).

Run: ``python bench/explain.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable

import chain
import microtape as mt

BOUND_SECONDS = 1.0
"""The issue's bound for a graph of 10,000 ops."""


def chain_graph(n: int) -> Callable[[mt.Tensor], mt.Tensor]:
    prog = chain.program(n)

    def f(x: mt.Tensor) -> mt.Tensor:
        y = x
        for name, c in prog:
            y = y * c if name == "mul" else y + c if name == "add" else mt.tanh(y)
        return y

    return f


def ladder_graph(n: int) -> Callable[[mt.Tensor], mt.Tensor]:
    def f(x: mt.Tensor) -> mt.Tensor:
        h = x
        for _ in range(n // 4):
            h = mt.tanh(h * 0.6 + h * 0.5)
        return h

    return f


def vector_graph(n: int) -> Callable[[mt.Tensor], mt.Tensor]:
    w = mt.tensor([0.3, -0.2, 0.5, 0.1, -0.4, 0.25, 0.15, -0.35])

    def f(x: mt.Tensor) -> mt.Tensor:
        h = x * 1.0
        for _ in range(n // 5):
            h = mt.tanh(h * w) * 0.9 + h * 0.1
        return h.sum()

    return f


def measure(name: str, f: Callable[[mt.Tensor], mt.Tensor], x: mt.Tensor, repeat: int, bound: bool = True) -> None:
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x)
    n_ops = len(tape.operations)
    explain_times, gradient_times = [], []
    e = tape.explain(y, x)
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        tape.gradient(y, x)
        gradient_times.append(time.process_time() - start)
        gc.collect()
        start = time.process_time()
        e = tape.explain(y, x)
        explain_times.append(time.process_time() - start)
    tape.release()
    t, g = statistics.median(explain_times), statistics.median(gradient_times)
    how = f"grouped, {e.count} edges" if e.grouped else f"{e.count} path(s)"
    verdict = ("yes" if t < BOUND_SECONDS or n_ops < 10_000 else "NO") if bound else "(info)"
    print(f"{name:<14} {n_ops:>7,} ops  {t * 1e3:9.1f} ms  {t / n_ops * 1e6:7.1f} us/op  "
          f"{t / g:5.1f}x gradient()  {how:<22} under {BOUND_SECONDS:.0f} s: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="100-op graphs, one repetition (a smoke test)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n = 100 if args.quick else 10_000
    repeat = 1 if args.quick else args.repeat
    measure("chain", chain_graph(n), mt.scalar(chain.X0), repeat)
    measure("ladder", ladder_graph(n), mt.scalar(0.3), repeat)
    measure("vector chain", vector_graph(n), mt.tensor([0.1 * i for i in range(8)]), repeat, bound=False)


if __name__ == "__main__":
    main()
