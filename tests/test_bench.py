"""The benchmark suite still runs: ``bench/run.py --quick`` as a smoke test.

Benchmarks are run by hand; this only checks that the scripts work
against the current engine (tiny sizes, one repetition). It asserts nothing
about time: a shared CI machine is far too noisy for that.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_quick_runs_and_prints_the_table() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "| workload" in result.stdout and "| ratio" in result.stdout, result.stdout
    assert "| microtape" in result.stdout and "| met?" in result.stdout, result.stdout
