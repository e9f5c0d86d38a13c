"""What ``tape.explain`` costs: one entry of large inputs, and graphs of 10,000 recorded ops (each under a second).

The issue's linear-cost rows (``run``: also printed by ``bench/run.py``), each one entry explained:

* **vector**: ``((tanh(x) * 2 - t) ** 2).mean()`` on a 4,000-entry ``x`` (it took 13 s when the
  explanation asked one Jacobian row per output entry);
* **weight**: ``tanh(X @ W).sum()`` with ``X`` and ``W`` 48 x 48, one entry of ``W`` (48 paths;
  it took 20 s).

Then three graphs of 10,000 ops, each recorded once on a persistent tape:

* **chain**: ``chain.py``'s 10,000-op chain (4 mul, 5 add, 1 tanh in every 10): one path of
  10,000 steps, listed in full;
* **ladder**: 2,500 rungs of ``h = tanh(h * a + h * b)`` (10,000 ops): two paths per rung, so
  2^2,500 paths; counted (exactly) and grouped by the edges into the input, with the largest
  single path found without listing them;
* **vector chain** (information, no bound): 2,000 rungs of ``h = tanh(h * w) * 0.9 + h * 0.1``
  on 8 entries with a final sum (10,002 ops).

Each row gives the median CPU time of ``tape.explain`` (``time.process_time``: time taken by
other processes on this shared machine is not counted) and the ratio to one ``tape.gradient``
call on the same tape (one backward pass: the explanation runs it, then a few VJPs per op).

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
from _timing import Config, Row, compare, fmt_time

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


def entry_tapes(quick: bool) -> list[tuple[str, mt.GradientTape, mt.Tensor, mt.Tensor, tuple[int, ...]]]:
    """The two linear-cost cases, each recorded on a persistent tape: (name, tape, loss, source, entry)."""
    n, side = (400, 12) if quick else (4_000, 48)
    x, t = mt.random_normal((n,), seed=1), mt.random_normal((n,), seed=2)
    with mt.GradientTape(persistent=True) as vector_tape:
        vector_tape.watch(x)
        vector_loss = ((mt.tanh(x) * 2.0 - t) ** 2).mean()
    xs, w = mt.random_normal((side, side), seed=3), mt.random_normal((side, side), seed=4)
    with mt.GradientTape(persistent=True) as weight_tape:
        weight_tape.watch(w)
        weight_loss = mt.tanh(xs @ w).sum()
    return [
        (f"explain one entry of a {n:,}-entry vector", vector_tape, vector_loss, x, (n // 2,)),
        (f"explain one entry of a {side}x{side} weight in tanh(X @ W)", weight_tape, weight_loss, w, (side // 3, side // 2)),
    ]


def run(cfg: Config) -> list[Row]:
    """The linear-cost rows for ``bench/run.py``: explain's time against one backward pass, target under 1 s."""
    rows = []
    for name, tape, loss, source, entry in entry_tapes(cfg.quick):
        timing = compare(lambda: tape.explain(loss, source, index=entry), lambda: tape.gradient(loss, source), cfg)
        rows.append(Row(name, fmt_time(timing.a), f"{fmt_time(timing.b)} (gradient)", timing.ratio, f"< {BOUND_SECONDS:.0f} s", timing.a < BOUND_SECONDS))
        tape.release()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="100-op graphs, one repetition (a smoke test)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n = 100 if args.quick else 10_000
    repeat = 1 if args.quick else args.repeat
    for row in run(Config(quick=args.quick, repeat=repeat, min_time=0.0 if args.quick else 0.2)):
        print(f"{row.workload:<48} {row.microtape:>10}  {row.ratio or 0.0:5.1f}x gradient()  under 1 s: {'yes' if row.met else 'NO'}")
    measure("chain", chain_graph(n), mt.scalar(chain.X0), repeat)
    measure("ladder", ladder_graph(n), mt.scalar(0.3), repeat)
    measure("vector chain", vector_graph(n), mt.tensor([0.1 * i for i in range(8)]), repeat, bound=False)


if __name__ == "__main__":
    main()
