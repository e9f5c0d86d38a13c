"""The same numbers on every supported Python.

From CPython 3.12 the builtin ``sum()`` of floats compensates its rounding, so
the engine, which summed with it, printed other numbers there than on 3.10 and
3.11 (chapter 6: ``final loss 6.98e+48, 118 flags`` against ``8.34e+20, 130
flags``). Every sum of the engine is now ``math.fsum``, exactly rounded, the
same bits on every version.

The slow test runs the tour of every chapter, ``selfcheck``, the README's
first example (the Russian text's linear model) and the names the explanations
give operands (``tests/explain/operand_cases.py``) on each CPython 3.10 to 3.13
that pyenv has, with the checkout on ``PYTHONPATH`` (nothing installed), and
compares the outputs byte for byte with those of the oldest one found. A
version that is not installed is skipped, saying so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

import microtape as mt
from microtape.ops.kernels import matmul_flat, reduce_flat

ROOT = Path(__file__).resolve().parents[1]
SUPPORTED = ("3.10", "3.11", "3.12", "3.13")
CHAPTERS = sorted(int(p.name[:2]) for p in (ROOT / "tutorials").glob("[0-9][0-9]_*.py"))


def _readme_example() -> str:
    """The first Python block of the README (the linear model of the Russian text)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```python\n(import microtape as mt\n.*?)```", text, re.S)
    assert match, "README.md lost its first example"
    return match.group(1)


PROGRAMS: dict[str, list[str]] = {
    **{f"tour chapter {n}": ["-m", "microtape", "tour", "--chapter", str(n), "--no-pause"] for n in CHAPTERS},
    "selfcheck": ["-m", "microtape", "selfcheck"],
    "README example": ["-c", _readme_example()],
    "explain's operand names": [str(ROOT / "tests" / "explain" / "operand_cases.py")],
}


@lru_cache(maxsize=None)
def _interpreters() -> dict[str, str]:
    """The newest pyenv CPython of each supported minor version: {"3.11": path}."""
    pyenv = shutil.which("pyenv")
    root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    names: list[str] = []
    if pyenv:
        done = subprocess.run([pyenv, "versions", "--bare"], capture_output=True, text=True, timeout=60, check=False)
        names = done.stdout.split()
        found = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=60, check=False).stdout.strip()
        root = found or root
    elif (Path(root) / "versions").is_dir():
        names = [p.name for p in (Path(root) / "versions").iterdir()]
    found_by_minor: dict[str, tuple[tuple[int, ...], str]] = {}
    for name in names:
        parts = name.split(".")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            continue  # not a plain CPython release (pypy, 3.13t, a virtualenv...)
        minor = f"{parts[0]}.{parts[1]}"
        python = Path(root) / "versions" / name / "bin" / "python3"
        key = tuple(int(p) for p in parts)
        if minor in SUPPORTED and python.exists() and key > found_by_minor.get(minor, ((), ""))[0]:
            found_by_minor[minor] = (key, str(python))
    return {minor: path for minor, (_, path) in sorted(found_by_minor.items())}


def _run(python: str, args: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "MICROTAPE_"))}
    env.update(PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8", PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [python, "-X", "utf8", *args], cwd=cwd, env=env, capture_output=True, text=True, encoding="utf-8",
        timeout=600, check=False,
    )
    assert done.returncode == 0, f"{python} {' '.join(args[:4])} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for every run, so that a path printed by a program is the same everywhere."""
    return tmp_path_factory.mktemp("versions")


@pytest.fixture(scope="module")
def reference(workdir: Path) -> tuple[str, dict[str, str]]:
    """The outputs of the oldest CPython found: (its version, {program: output})."""
    found = _interpreters()
    if len(found) < 2:
        pytest.skip(f"fewer than two of CPython {', '.join(SUPPORTED)} under pyenv (found {sorted(found) or 'none'}): nothing to compare")
    version = min(found, key=lambda v: tuple(map(int, v.split("."))))
    return version, {name: _run(found[version], args, workdir) for name, args in PROGRAMS.items()}


@pytest.mark.slow
@pytest.mark.parametrize("version", SUPPORTED)
def test_every_chapter_selfcheck_and_the_readme_print_the_same_on(
    version: str, reference: tuple[str, dict[str, str]], workdir: Path
) -> None:
    """Guards a fixed bug: chapter 6 printed other losses and flags on 3.12 and 3.13."""
    python = _interpreters().get(version)
    if python is None:
        pytest.skip(f"CPython {version} is not installed under pyenv (pyenv install {version}); not compared")
    base_version, expected = reference
    for name, args in PROGRAMS.items():
        got = expected[name] if version == base_version else _run(python, args, workdir)
        assert got == expected[name], f"{name}: CPython {version} prints something else than {base_version}"
        assert got.strip(), name


# -- fast checks of the summation itself (every run) ---------------------------


def test_sums_are_exactly_rounded_as_the_kernels_promise() -> None:
    """Values where a left-to-right sum (builtin sum up to 3.11) and a compensated one
    (builtin sum from 3.12) differ from each other; fsum is exact, on every version."""
    data = [1.0, 1e100, 1.0, -1e100]
    assert reduce_flat(data, (4,), (0,), False, "sum")[0] == [2.0]  # left to right gives 0.0
    assert mt.tensor(data).sum().item() == 2.0
    assert matmul_flat(data, [1.0, 1.0, 1.0, 1.0], 1, 4, 1) == [2.0]
    assert (mt.tensor([data]) @ mt.ones((4, 1))).item() == 2.0
    assert mt.tensor([0.1] * 10).sum().item() == 1.0  # left to right: 0.9999999999999999


def test_sums_follow_ieee_at_the_extremes() -> None:
    """fsum raises where the exact sum overflows or meets inf - inf; the kernels give IEEE's answer."""
    assert mt.tensor([1e308, 1e308]).sum().item() == float("inf")
    assert (mt.tensor([[1e308, 1e308], [1.0, 2.0]]) @ mt.ones((2, 1))).data_sync() == [float("inf"), 3.0]
    assert mt.tensor([1e308, 1e308, -1e308]).sum().item() == float("inf")  # left to right, as IEEE would
    assert mt.tensor([float("inf"), float("-inf")]).sum().item() != mt.tensor([float("inf"), float("-inf")]).sum().item()
    assert mt.zeros((0,)).sum().item() == 0.0
    assert (mt.zeros((2, 0)) @ mt.zeros((0, 3))).data_sync() == [0.0] * 6


def test_the_python_running_the_tests_is_a_supported_one() -> None:
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in SUPPORTED
