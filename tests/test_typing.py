"""Types: mypy --strict over the package, the tests and the book, and users' scripts as users check them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # mypy and pyright over the package and the user scripts: a minute or more
USER_SCRIPTS = ROOT / "tests" / "typing"

# pyright in strict mode, honouring only its own ignore comments and reporting any that
# is not needed: so a "must fail" line proves pyright rejects it for the named rule.
PYRIGHT_CONFIG = {
    "typeCheckingMode": "strict",
    "enableTypeIgnoreComments": False,
    "reportUnnecessaryTypeIgnoreComment": "error",
    "pythonVersion": "3.11",
}
MYPY = ["-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null", "--enable-error-code", "ignore-without-code",
        "--python-version", "3.11"]


def test_mypy_strict() -> None:
    # mypy runs from the repository root (pyproject's [tool.mypy] lists the files),
    # where it finds microtape/ directly.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", "/dev/null"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_package_ships_py_typed() -> None:
    assert (ROOT / "microtape" / "py.typed").exists()


def user_folder(tmp_path: Path) -> Path:
    """The user scripts in a folder outside the checkout: microtape comes from the install.

    They run on every supported Python: on 3.10, which has no ``typing.assert_type``, they
    define a stand-in, and both checkers check them as Python 3.11 code (``PYRIGHT_CONFIG``,
    ``MYPY``), whatever interpreter runs the tests."""
    folder = tmp_path / "user"
    folder.mkdir()
    for script in sorted(USER_SCRIPTS.glob("user_*.py")):
        shutil.copy(script, folder / script.name)
    (folder / "pyrightconfig.json").write_text(json.dumps(PYRIGHT_CONFIG), encoding="utf-8")
    return folder


def mypy_on(folder: Path, python: Path | str = sys.executable) -> subprocess.CompletedProcess[str]:
    names = sorted(p.name for p in folder.glob("*.py"))
    command = [sys.executable, *MYPY, "--python-executable", str(python), *names]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)


def pyright_on(folder: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pyright", "--pythonpath", sys.executable]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)


def test_user_scripts_hold_under_mypy_strict(tmp_path: Path) -> None:
    folder = user_folder(tmp_path)
    assert not (folder / "microtape").exists()
    result = mypy_on(folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found in 2 source files")


def test_user_scripts_hold_under_pyright_strict(tmp_path: Path) -> None:
    result = pyright_on(user_folder(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 errors, 0 warnings" in result.stdout


def test_user_scripts_run(tmp_path: Path) -> None:
    folder = user_folder(tmp_path)
    for script in sorted(folder.glob("*.py")):
        result = subprocess.run([sys.executable, script.name], cwd=folder, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr


def test_a_wrong_line_without_its_ignore_fails_both_checkers(tmp_path: Path) -> None:
    folder = user_folder(tmp_path)
    script = folder / "user_gradients.py"
    wrong = '    square("1.0")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]\n'
    text = script.read_text(encoding="utf-8")
    assert wrong in text
    script.write_text(text.replace(wrong, '    square("1.0")\n'), encoding="utf-8")
    mypy = mypy_on(folder)
    assert mypy.returncode == 1 and 'user_gradients.py:' in mypy.stdout and "[arg-type]" in mypy.stdout, mypy.stdout
    pyright = pyright_on(folder)
    assert pyright.returncode == 1 and "1 error," in pyright.stdout and "reportArgumentType" in pyright.stdout, pyright.stdout
