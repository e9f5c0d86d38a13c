"""Instructions per op, counted exactly by ``valgrind --tool=callgrind``.

Wall time on a shared two-core machine moves by a fifth from run to run;
an instruction count does not: the same interpreter, inputs and
environment give the same total at every run. So a change to the engine is
reported here in instructions per op, with the wall-time ratios of
``run.py`` beside it.

Each part runs in a process of its own under callgrind twice, after one
warm-up repetition: with ``--reps 1`` and with ``--reps 3``. The difference
of the two totals, divided by the two extra repetitions and by the ops of
one repetition, is the cost of one op: start-up, imports and the warm-up
cancel out. ``PYTHONHASHSEED=0`` fixes the hashes.

Parts (a chain of 2,000 scalar ops as in ``chain.py``, inside ``tidy``):

* ``forward``: the chain with no tape open;
* ``recorded``: the chain recorded on a ``GradientTape`` (no gradient asked);
* ``chain``: ``chain.py``'s ``tape_chain``: recorded, ``tape.gradient``, ``.item()``;
* ``mlp``: one step of ``mlp.py``'s MLP (per step, not per op).

The backward pass is ``chain`` minus ``recorded``.

Run: ``python bench/instructions.py [--parts forward,recorded,chain,mlp] [--n 2000]``
(needs valgrind; about a minute per part).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = ("forward", "recorded", "chain", "mlp")


def run_part(part: str, n: int, reps: int) -> None:
    """Run ``part`` once as a warm-up, then ``reps`` times (what callgrind counts)."""
    sys.path.insert(0, str(HERE))
    import microtape as mt
    from chain import program, tape_chain

    prog = program(n)

    def forward() -> None:
        def body() -> None:
            y = mt.scalar(0.5)
            for name, c in prog:
                y = y * c if name == "mul" else y + c if name == "add" else mt.tanh(y)

        mt.tidy(body)

    def recorded() -> None:
        def body() -> None:
            x = mt.scalar(0.5)
            with mt.GradientTape() as tape:
                tape.watch(x)
                y = x
                for name, c in prog:
                    y = y * c if name == "mul" else y + c if name == "add" else mt.tanh(y)
            tape.release()

        mt.tidy(body)

    work: Callable[[], object]
    if part == "mlp":
        from mlp import setup

        work = setup(quick=False)[0]
    else:
        work = {"forward": forward, "recorded": recorded, "chain": lambda: tape_chain(prog)}[part]
    work()
    for _ in range(reps):
        work()


def count(part: str, n: int, reps: int) -> int:
    """Total instructions callgrind counts for one process of ``part``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        env = dict(os.environ, PYTHONHASHSEED="0")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__,
             "--child", part, "--n", str(n), "--reps", str(reps)],
            check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        text = out.read_text()
    found = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
    assert found is not None, "callgrind wrote no total"
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--child", default=None)
    parser.add_argument("--reps", type=int, default=1)
    args = parser.parse_args()
    if args.child:
        run_part(args.child, args.n, args.reps)
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    import microtape

    print(f"instructions per op (callgrind), {args.n}-op chain; microtape at {Path(microtape.__file__).parent}")
    results: dict[str, float] = {}
    for part in args.parts.split(","):
        if part not in PARTS:
            sys.exit(f"unknown part {part!r}: choose from {', '.join(PARTS)}")
        one, three = count(part, args.n, 1), count(part, args.n, 3)
        per = (three - one) / 2 / (1 if part == "mlp" else args.n)
        results[part] = per
        unit = "per step" if part == "mlp" else "per op"
        print(f"  {part:9s} {per:12,.0f} {unit}", flush=True)
    if "chain" in results and "recorded" in results:
        print(f"  {'backward':9s} {results['chain'] - results['recorded']:12,.0f} per op (chain - recorded)")


if __name__ == "__main__":
    main()
