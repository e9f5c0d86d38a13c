"""The benchmark scripts work: the quick run, their types, the optional engines, the anomaly-flag counter.

Benchmarks are run by hand; these tests only check that the scripts work
against the current engine (tiny sizes, one repetition) and that the parts
that decide a row's verdict behave: the micrograd and PyTorch rows when
those packages are missing or present, and the ``ast`` scan that finds
anomaly-flag tests. Nothing here asserts anything about time: a shared CI
machine is far too noisy for that.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
OPTIONAL = ("micrograd", "torch")


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``bench.chain``, ``bench.other_engines`` ... importable by name, as the scripts import each other."""
    monkeypatch.syspath_prepend(str(BENCH))
    before = set(sys.modules)
    yield importlib.import_module
    for name in set(sys.modules) - before:
        if str(getattr(sys.modules[name], "__file__", "")).startswith(str(BENCH)):
            del sys.modules[name]  # the next test imports them afresh


@pytest.mark.slow
def test_bench_quick_runs_and_prints_the_table() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "| workload" in result.stdout and "| ratio" in result.stdout, result.stdout
    assert "| microtape" in result.stdout and "| met?" in result.stdout, result.stdout
    assert "vs tuple tape" in result.stdout and "vs micrograd" in result.stdout, result.stdout
    assert "| jvp of tanh(W @ x)" in result.stdout and "| taylor_test of sum(tanh(W @ x))" in result.stdout, result.stdout


@pytest.mark.slow
def test_the_benchmarks_pass_mypy_strict() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null",
         *sorted(str(p.relative_to(ROOT)) for p in BENCH.glob("*.py"))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _without_optional_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make micrograd and torch look uninstalled, whether they are or not."""
    real_find_spec = importlib.util.find_spec
    real_import = importlib.import_module

    def find_spec(name: str, package: str | None = None) -> Any:
        if name.split(".")[0] in OPTIONAL:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_find_spec(name, package)

    def import_module(name: str, package: str | None = None) -> ModuleType:
        if name.split(".")[0] in OPTIONAL:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(importlib, "import_module", import_module)


def test_a_missing_engine_gives_a_skipped_row_that_counts_neither_way(bench: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    chain, timing, other_engines, race = bench("chain"), bench("_timing"), bench("other_engines"), bench("engine_race")
    _without_optional_engines(monkeypatch)
    rows = chain.other_engine_rows(20, timing.Config(quick=True))
    assert [r.baseline for r in rows] == [other_engines.MICROGRAD_HINT, other_engines.TORCH_HINT]
    assert all(r.met is None and r.ratio is None for r in rows)
    assert "pip install micrograd" in rows[0].baseline and "pip install torch" in rows[1].baseline
    # the process that races an engine says "skipped" too, if the import fails there
    assert race.race("micrograd", 20, timing.Config(quick=True)) == {"skipped": True}
    assert other_engines.make("torch") is None


def test_micrograd_is_raced_when_installed(bench: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("micrograd") is None:
        pytest.skip("micrograd is not installed (pip install -e '.[bench]')")
    chain, timing, other_engines = bench("chain"), bench("_timing"), bench("other_engines")
    run = other_engines.make("micrograd")
    assert run is not None
    prog = chain.program(30)
    assert chain.agree(run(prog, chain.X0), chain.plain_chain(prog))  # tanh included: 3 in 30 ops
    monkeypatch.setattr(other_engines, "ENGINES", {"micrograd": other_engines.ENGINES["micrograd"]})
    (row,) = chain.other_engine_rows(30, timing.Config(quick=True, min_time=0.0))
    assert "micrograd" in row.workload and row.ratio is not None and row.ratio > 0
    assert row.met == (row.ratio <= chain.RIVAL_LIMIT)


def test_the_baselines_compute_the_chain_microtape_computes(bench: Any) -> None:
    chain = bench("chain")
    prog = chain.program(40)
    for other in (chain.plain_chain, chain.closure_chain):
        chain.check_same(prog, other)
    value, grad = chain.plain_chain([("mul", 3.0), ("add", 1.0), ("tanh", 0.0)])
    inner = chain.X0 * 3.0 + 1.0
    assert value == pytest.approx(math.tanh(inner))
    assert grad == pytest.approx(3.0 * (1.0 - value * value))


FLAGGED = '''\
def op(st, others):
    if st.anomaly:
        pass
    light = not (others or st.anomaly)
    copy = st.anomaly
    if st.anomaly is None:
        pass
    while not anomaly_on:
        break
    return [x for x in others if x.is_anomaly]
'''


def test_the_anomaly_scan_finds_flag_tests_and_only_them(bench: Any) -> None:
    anomaly = bench("anomaly")
    # lines 2, 4, 8 and 10 test a flag; line 5 copies it and line 6 compares it: not tests
    assert anomaly.flag_test_lines(FLAGGED) == {2, 4, 8, 10}


def test_the_anomaly_counter_counts_the_lines_that_run(bench: Any, tmp_path: Path) -> None:
    anomaly = bench("anomaly")
    path = tmp_path / "engine_like.py"
    path.write_text("def f(st, n):\n    for _ in range(n):\n        if st.anomaly:\n            pass\n", encoding="utf-8")
    namespace: dict[str, Any] = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)

    class State:
        anomaly = False

    hits = anomaly.count_flag_tests(lambda: namespace["f"](State(), 7), anomaly.package_flag_lines(tmp_path))
    assert hits == {(str(path), 3): 7}
