"""Run microtape's benchmarks and print the results table.

Every ratio is microtape's time (or memory) over a plain-Python baseline
measured in the same process run, alternating the two; times are medians of
``--repeat`` repetitions, ratios the median of the per-repetition ratios.

    python bench/run.py                  # everything, about 3-5 minutes
    python bench/run.py --only mlp       # one workload (names below)
    python bench/run.py --quick          # tiny sizes, 1 repetition: a smoke test, ratios meaningless

Workloads: mlp, chain, chain1m, matmul, checkgrads, tidy, gc, anomaly, tape_svg, function, explain, forward.
``chain1m`` (a million ops, about a minute) is skipped by ``--quick``.
Standard library only, plus microtape; the chain is also raced against
micrograd and PyTorch when they are installed (``pip install -e '.[bench]'``
for micrograd, ``pip install torch`` for PyTorch), otherwise those rows say
"skipped".
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import anomaly
import chain
import checkgrads
import explain
import forward
import function
import gc_cost
import matmul
import mlp
import tape_svg
import tidy_loop
from _timing import Config, Row, machine, print_table

WORKLOADS: dict[str, Callable[[Config], list[Row]]] = {
    "mlp": mlp.run,
    "chain": chain.run,
    "chain1m": chain.run_million,
    "matmul": matmul.run,
    "checkgrads": checkgrads.run,
    "tidy": tidy_loop.run,
    "gc": gc_cost.run,
    "anomaly": anomaly.run,
    "tape_svg": tape_svg.run,
    "function": function.run,
    "explain": explain.run,
    "forward": forward.run,
}
SLOW = {"chain1m"}


def _revision() -> str:
    """The git commit of the code measured (with "+changes" if the tree is dirty)."""
    import microtape

    root = Path(microtape.__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "microtape"], cwd=root, capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return f"microtape at {root}"
    if not head:
        return f"microtape at {root} (not a git checkout)"
    return f"microtape {head}{' +uncommitted changes' if dirty else ''} at {root}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one repetition, no chain1m (smoke test)")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions per measurement (median reported)")
    parser.add_argument("--only", action="append", choices=sorted(WORKLOADS), help="run only this workload (repeatable)")
    args = parser.parse_args(argv)
    cfg = Config(quick=args.quick, repeat=args.repeat, min_time=0.0 if args.quick else 0.2)
    names = args.only or [n for n in WORKLOADS if not (cfg.quick and n in SLOW)]

    print("microtape benchmarks: microtape vs plain Python in the same run")
    for line in machine():
        print(line)
    print(f"code: {_revision()}")
    mode = "QUICK smoke test: tiny sizes, 1 repetition; ratios mean nothing" if cfg.quick else f"medians of {cfg.reps} repetitions"
    print(f"mode: {mode}")
    print()
    rows: list[Row] = []
    start = time.perf_counter()
    for name in names:
        t0 = time.perf_counter()
        rows.extend(WORKLOADS[name](cfg))
        print(f"  {name}: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    print_table(rows, quick=cfg.quick)
    print()
    if not cfg.quick:
        met = [r for r in rows if r.met is not None]
        missed = [r.workload for r in met if not r.met]
        print(f"targets met: {len(met) - len(missed)} of {len(met)}")
        for name in missed:
            print(f"  missed: {name}")
    print(f"total time: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
