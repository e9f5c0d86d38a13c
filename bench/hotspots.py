"""Where microtape spends its time: cProfile of the microtape side of a workload.

    python bench/hotspots.py chain          # the 20,000-op chain
    python bench/hotspots.py mlp --top 25   # the MLP step (20 steps)
    python bench/hotspots.py matmul
    python bench/hotspots.py checkgrads     # check_grads full, n = 16 (20 calls); --n 64 for another size

Prints the functions with the most *own* time (time in the function itself,
not in what it calls) as a share of the total, then the same grouped by
module. cProfile adds a fixed cost to every Python call, so call-heavy code
looks somewhat worse than it is; the ranking is what matters.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
from collections import defaultdict
from collections.abc import Callable

import chain
import checkgrads
import matmul
import microtape as mt
import mlp


def _chain() -> Callable[[], object]:
    prog = chain.program(20_000)
    return lambda: chain.tape_chain(prog)


def _mlp() -> Callable[[], object]:
    step, _, _ = mlp.setup(quick=False)

    def twenty() -> None:
        for _ in range(20):
            step()

    return twenty


def _matmul() -> Callable[[], object]:
    import random

    rng = random.Random(0)
    a = mt.keep(mt.tensor([[rng.uniform(-1.0, 1.0) for _ in range(64)] for _ in range(64)]))
    b = mt.keep(mt.tensor([[rng.uniform(-1.0, 1.0) for _ in range(64)] for _ in range(64)]))

    def five() -> None:
        for _ in range(5):
            matmul.tape_step(a, b)

    return five


def _checkgrads(n: int = 16) -> Callable[[], object]:
    import random

    rng = random.Random(n)
    w = mt.keep(mt.tensor([[rng.uniform(-0.5, 0.5) for _ in range(n)] for _ in range(checkgrads.ROWS)]))
    x = mt.keep(mt.tensor([rng.uniform(-0.5, 0.5) for _ in range(n)]))
    calls = max(1, 320 // n)  # about the same work at every size: 20 calls at n = 16

    def some() -> None:
        for _ in range(calls):
            mt.check_grads(checkgrads.f, [w, x], eps=checkgrads.EPS, mode="full")

    return some


TARGETS: dict[str, Callable[[], Callable[[], object]]] = {
    "chain": _chain,
    "mlp": _mlp,
    "matmul": _matmul,
    "checkgrads": _checkgrads,
}


def _where(filename: str) -> str:
    if filename.startswith("~") or filename == "":
        return "builtins"
    parts = filename.replace(os.sep, "/").split("/")
    if "microtape" in parts:
        return "microtape/" + parts[-1]
    if "bench" in parts:
        return "bench/" + parts[-1]
    return parts[-1]


def _label(func: tuple[str, int, str]) -> str:
    filename, line, name = func
    where = _where(filename)
    if where == "builtins":
        return name
    return f"{where}:{line} {name}"


def report(fn: Callable[[], object], top: int) -> None:
    fn()  # warm up outside the profile
    profiler = cProfile.Profile()
    profiler.enable()
    fn()
    profiler.disable()
    stats = pstats.Stats(profiler)
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, object]] = stats.stats  # type: ignore[attr-defined]  # pstats keeps its table untyped
    total = sum(tt for _, _, tt, _, _ in raw.values())
    rows = sorted(raw.items(), key=lambda kv: kv[1][2], reverse=True)
    print(f"total own time {total:.3f} s (under cProfile)\n")
    print(f"{'own %':>6} {'own s':>8} {'cum s':>8} {'calls':>9}  function")
    for func, (_, ncalls, tt, ct, _) in rows[:top]:
        print(f"{100 * tt / total:6.1f} {tt:8.3f} {ct:8.3f} {ncalls:9d}  {_label(func)}")
    by_module: dict[str, float] = defaultdict(float)
    for func, (_, _, tt, _, _) in raw.items():
        by_module[_where(func[0])] += tt
    print("\nown time by module:")
    for where, tt in sorted(by_module.items(), key=lambda kv: kv[1], reverse=True)[:12]:
        print(f"{100 * tt / total:6.1f}  {where}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", choices=sorted(TARGETS))
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--n", type=int, default=16, help="checkgrads only: the length of x (W is 8 x n)")
    args = parser.parse_args(argv)
    report(_checkgrads(args.n) if args.workload == "checkgrads" else TARGETS[args.workload](), args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
