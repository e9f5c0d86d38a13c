"""microtape against micrograd or PyTorch on the scalar chain, in a process of its own.

``chain.py`` runs this script once per installed engine and reads the one
JSON line it prints; it is not a workload of its own. Why a separate
process: importing PyTorch leaves about 145,000 GC-tracked objects in the
interpreter, and every full collection of the cyclic garbage collector walks
all of them. In the process that runs the other workloads, that would slow
every later measurement (microtape's 20,000-op chain runs about 40% slower
once torch is imported, because it allocates more tracked objects than a
plain-list baseline). Here the engine is imported first and its objects are
frozen (``gc.freeze()``: the collector no longer walks them); microtape and
the benchmark modules are imported after that, so the heap the collector
walks is what it is in ``run.py``'s process, and the engine's import does not
count against either side.

    python bench/engine_race.py micrograd --n 20000 --repeat 5
    python bench/engine_race.py torch --quick

Prints ``{"skipped": true}`` if the engine does not import, else the median
seconds of each side and the median ratio (microtape / engine). Values and
gradients are checked to agree with microtape before timing (an
AssertionError, and a non-zero exit, if they do not).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Sequence

import other_engines
from _timing import Config, compare


def race(name: str, n: int, cfg: Config) -> dict[str, object]:
    """Time microtape's chain of ``n`` ops against engine ``name``'s, as a JSON-ready dict."""
    engine = other_engines.make(name)
    if engine is None:
        return {"skipped": True}
    gc.collect()
    gc.freeze()  # the engine's import-time objects: not walked by the collector from now on
    import chain  # after the freeze, so microtape's own objects are walked as in run.py's process

    prog = chain.program(n)

    def other() -> tuple[float, float]:
        return engine(prog, chain.X0)

    chain.check_same(prog, lambda p: engine(p, chain.X0))
    t = compare(lambda: chain.tape_chain(prog), other, cfg)
    return {"skipped": False, "version": other_engines.version(name), "a": t.a, "b": t.b, "ratio": t.ratio}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("engine", choices=sorted(other_engines.ENGINES))
    parser.add_argument("--n", type=int, default=20_000, help="ops in the chain")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2)
    args = parser.parse_args(argv)
    cfg = Config(quick=args.quick, repeat=args.repeat, min_time=args.min_time)
    print(json.dumps(race(args.engine, args.n, cfg)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
