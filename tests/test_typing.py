"""Types: mypy --strict over the package, the tests and the book, and users' scripts as users check them.

The user scripts (``tests/typing/user_*.py``) are checked the way a user's
checker sees microtape: the wheel is built from the tracked files and
installed, alone, in a fresh venv of each Python of ``PYTHONS`` (pyenv's
CPython 3.10 and 3.13; a version that is not installed is skipped, saying
so), and mypy --strict and pyright (strict) check the scripts as code of that
version, from a folder outside the checkout; then that Python runs them.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import microtape as mt

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # mypy and pyright over the package and the user scripts, on two Pythons: a minute or more
USER_SCRIPTS = ROOT / "tests" / "typing"
PYTHONS = ("3.10", "3.13")
"""The oldest and the newest Python microtape supports: the user scripts are checked as code of each."""
NEWEST = PYTHONS[-1]

TAKES_A_USER_FUNCTION = (
    "grad", "grads", "value_and_grad", "value_and_grads", "check_grads", "numerical_grad", "explain_gradient", "custom_grad",
    "jvp", "linearize", "hvp",
)
"""Every public function that calls a user's function with tensors: each types a lambda's
parameters as tensors (an overload per count of tensors), which ``user_lambdas.py`` shows."""
NOT_PER_COUNT = {
    "function": "mt.function(fn) traces a function of tensors and Python values alike: it keeps fn's own signature",
}
"""Functions that take a user's function of arguments but keep its signature instead (no overloads)."""

# pyright in strict mode, honouring only its own ignore comments and reporting any that
# is not needed: so a "must fail" line proves pyright rejects it for the named rule.
PYRIGHT_CONFIG = {
    "typeCheckingMode": "strict",
    "enableTypeIgnoreComments": False,
    "reportUnnecessaryTypeIgnoreComment": "error",
}
MYPY = ["-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null", "--enable-error-code", "ignore-without-code"]
THIS_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


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


# -- the wheel, installed in a venv of each Python --------------------------------------------


def pyenv_python(minor: str) -> Path | None:
    """The newest pyenv CPython ``minor`` (say "3.10"), or None when pyenv has none."""
    root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    if shutil.which("pyenv"):
        found = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=60, check=False).stdout.strip()
        root = found or root
    versions = Path(root) / "versions"
    candidates: list[tuple[tuple[int, ...], Path]] = []
    for folder in versions.iterdir() if versions.is_dir() else ():
        parts = folder.name.split(".")
        if len(parts) == 3 and all(p.isdigit() for p in parts) and ".".join(parts[:2]) == minor:
            if (folder / "bin" / "python3").exists():
                candidates.append((tuple(int(p) for p in parts), folder / "bin" / "python3"))
    return max(candidates)[1] if candidates else None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of the tracked files (nothing generated in this checkout gets in)."""
    base = tmp_path_factory.mktemp("typing_wheel")
    source = base / "source"
    listing = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    tracked = subprocess.run(listing, cwd=ROOT, capture_output=True, check=True).stdout
    for name in tracked.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    build = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(base / "dist"), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (built,) = (base / "dist").glob("microtape-*.whl")
    return built


@dataclass(frozen=True)
class Venv:
    version: str  # "3.10"
    python: Path  # the venv's interpreter, with the wheel and nothing else installed


@pytest.fixture(scope="module", params=PYTHONS)
def installed(request: pytest.FixtureRequest, wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    version: str = request.param
    base_python = pyenv_python(version)
    if base_python is None:
        pytest.skip(f"pyenv has no CPython {version}: the user scripts are not checked as {version} code here")
    venv = tmp_path_factory.mktemp(f"typing_venv_{version}")
    subprocess.run([str(base_python), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index", "--no-deps", str(wheel)]
    subprocess.run(pip, check=True, capture_output=True, timeout=300)
    return Venv(version, python)


def user_folder(tmp_path: Path, version: str = THIS_PYTHON) -> Path:
    """The user scripts in a folder outside the checkout, with a pyright config for Python ``version``:
    microtape comes from the install. They run on every supported Python; on 3.10, which has
    no ``typing.assert_type``, the checkers read typing_extensions' (their own stub)."""
    folder = tmp_path / "user"
    folder.mkdir()
    for script in sorted(USER_SCRIPTS.glob("user_*.py")):
        shutil.copy(script, folder / script.name)
    config = {**PYRIGHT_CONFIG, "pythonVersion": version}
    (folder / "pyrightconfig.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def mypy_on(folder: Path, python: Path | str = sys.executable, version: str = THIS_PYTHON) -> subprocess.CompletedProcess[str]:
    names = sorted(p.name for p in folder.glob("*.py"))
    command = [sys.executable, *MYPY, "--python-version", version, "--python-executable", str(python), *names]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)


def pyright_on(folder: Path, python: Path | str = sys.executable) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pyright", "--pythonpath", str(python)]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)


def test_user_scripts_hold_under_mypy_strict(installed: Venv, tmp_path: Path) -> None:
    folder = user_folder(tmp_path, installed.version)
    assert not (folder / "microtape").exists()
    result = mypy_on(folder, installed.python, installed.version)
    count = len(list(USER_SCRIPTS.glob("user_*.py")))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith(f"Success: no issues found in {count} source files"), result.stdout


def test_user_scripts_hold_under_pyright_strict(installed: Venv, tmp_path: Path) -> None:
    result = pyright_on(user_folder(tmp_path, installed.version), installed.python)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 errors, 0 warnings" in result.stdout


def test_user_scripts_run(installed: Venv, tmp_path: Path) -> None:
    folder = user_folder(tmp_path, installed.version)
    for script in sorted(folder.glob("*.py")):
        result = subprocess.run([str(installed.python), script.name], cwd=folder, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr


WRONG_LINES = (  # (script, line, mypy's code, pyright's rule): one of each kind of line that must fail
    ("user_gradients.py", '    square("1.0")', "arg-type", "reportArgumentType"),
    ("user_lambdas.py", "    mt.grads(lambda t: t.no_such_method())", "attr-defined", "reportAttributeAccessIssue"),
    ("user_lambdas.py", '    mt.detect_anomaly(mode="trase")', "arg-type", "reportArgumentType"),
    ("user_lambdas.py", "    x.shape = (2, 1)", "misc", "reportAttributeAccessIssue"),
)


@pytest.mark.parametrize("installed", [NEWEST], indirect=True)
def test_a_wrong_line_without_its_ignore_fails_both_checkers(installed: Venv, tmp_path: Path) -> None:
    """Each line of WRONG_LINES, its ignore comments removed, is an error of both checkers, at that line."""
    folder = user_folder(tmp_path, installed.version)
    numbers: list[tuple[str, int, str, str]] = []
    for script, line, code, rule in WRONG_LINES:
        path = folder / script
        lines = path.read_text(encoding="utf-8").splitlines()
        (index,) = [i for i, full in enumerate(lines) if full.startswith(line + "  # type: ignore[")]
        lines[index] = line
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        numbers.append((script, index + 1, code, rule))
    mypy = mypy_on(folder, installed.python, installed.version)
    pyright = pyright_on(folder, installed.python)
    assert mypy.returncode == 1 and pyright.returncode == 1, mypy.stdout + pyright.stdout
    for script, number, code, rule in numbers:
        assert re.search(rf"^{script}:{number}: error: .*\[{code}\]$", mypy.stdout, re.M), (script, number, mypy.stdout)
        # the diagnostic at that line, up to the next one, names the rule
        assert re.search(rf"{script}:{number}:\d+ - error: (?:(?!\.py:\d+:\d+ - ).)*?\({rule}\)", pyright.stdout, re.S), (script, number, pyright.stdout)


# -- a lambda's parameters are tensors, for every function that takes a user's function ----------


def test_every_function_that_takes_a_function_of_tensors_is_listed() -> None:
    """Each public function whose parameter is a function of tensors is in TAKES_A_USER_FUNCTION
    (or in NOT_PER_COUNT, saying why not): a new one cannot leave its lambdas untyped unseen."""
    found = set()
    for name in mt.__all__:
        obj = getattr(mt, name)
        if inspect.isclass(obj) or not callable(obj):
            continue
        try:
            parameters = inspect.signature(obj).parameters.values()
        except (TypeError, ValueError):
            continue
        for parameter in parameters:
            annotation = str(parameter.annotation)
            # a function of tensors (not of nothing, as tidy's, profile's and variable_grads' are)
            takes_tensors = "TensorFn" in annotation or ("Callable" in annotation and "Tensor" in annotation and "Callable[[]" not in annotation)
            if takes_tensors or (name in NOT_PER_COUNT and "Callable[P" in annotation):
                found.add(name)
    assert found == set(TAKES_A_USER_FUNCTION) | set(NOT_PER_COUNT)


def test_the_lambda_script_refuses_a_wrong_lambda_for_each_of_them() -> None:
    text = (USER_SCRIPTS / "user_lambdas.py").read_text(encoding="utf-8")
    for name in TAKES_A_USER_FUNCTION:
        call = f"    mt.{name}(lambda t: t.no_such_method()"
        lines = [line for line in text.splitlines() if line.startswith(call)]
        assert len(lines) == 1, f"user_lambdas.py has no refused lambda for mt.{name}"
        assert "# type: ignore[attr-defined]" in lines[0] and "# pyright: ignore[reportAttributeAccessIssue" in lines[0]


# -- what a user reads in the checker's message and on hover ------------------------------------


@pytest.mark.parametrize("installed", [NEWEST], indirect=True)
def test_mypy_says_what_is_wrong_with_a_tensor_argument_in_a_few_lines(installed: Venv, tmp_path: Path) -> None:
    """mypy's message for ``mt.tensor("abc")`` was about 60 lines of protocol notes, one block per
    nesting depth; ``TensorLike`` is one recursive alias now, which mypy names in a word."""
    folder = tmp_path / "wrong"
    folder.mkdir()
    (folder / "wrong.py").write_text('import microtape as mt\n\nmt.tensor("abc")\n', encoding="utf-8")
    result = mypy_on(folder, installed.python, installed.version)
    lines = result.stdout.splitlines()
    assert result.returncode == 1 and len(lines) <= 3, result.stdout
    assert 'wrong.py:3: error: Argument 1 to "tensor" has incompatible type "str"; expected "Tensor | Rows"' in lines[0]
    assert all(len(line) <= 120 for line in lines), result.stdout


def hover_text(python: Path, file: Path, line: int, column: int) -> str:
    """What pyright's language server shows on hover at (line, column), both 0-based: a small LSP client."""
    server = Path(sys.executable).with_name("pyright-langserver")
    proc = subprocess.Popen([str(server), "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def send(message: dict[str, object]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def answer(number: int) -> dict[str, object]:
        while True:
            length = 0
            while header := stdout.readline().strip():
                name, _, value = header.decode().partition(":")
                length = int(value) if name.lower() == "content-length" else length
            message = json.loads(stdout.read(length))
            if message.get("id") == number and "method" not in message:
                return dict(message)
            if "method" in message and "id" in message:  # the server asks (its configuration): point it at python
                items = message.get("params", {}).get("items", [])
                send({"id": message["id"], "result": [{"pythonPath": str(python)} for _ in items] or None})

    try:
        root = file.parent.as_uri()
        send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": root, "capabilities": {"workspace": {"configuration": True}}}})
        answer(1)
        send({"method": "initialized", "params": {}})
        document = {"uri": file.as_uri(), "languageId": "python", "version": 1, "text": file.read_text(encoding="utf-8")}
        send({"method": "textDocument/didOpen", "params": {"textDocument": document}})
        send({"id": 2, "method": "textDocument/hover", "params": {"textDocument": {"uri": file.as_uri()}, "position": {"line": line, "character": column}}})
        result = answer(2).get("result")
        contents = result.get("contents") if isinstance(result, dict) else None
        return str(contents.get("value", "")) if isinstance(contents, dict) else ""
    finally:
        proc.kill()
        proc.wait(timeout=30)
        stdin.close()
        stdout.close()


@pytest.mark.parametrize("installed", [NEWEST], indirect=True)
def test_custom_grad_reads_on_hover(installed: Venv, tmp_path: Path) -> None:
    """Hovering mt.custom_grad shows one short line per overload (it was an unreadable expansion of
    TensorLike); pyright's reveal_type, which spells every alias out, stays short too."""
    folder = user_folder(tmp_path, installed.version)
    script = folder / "hover.py"
    script.write_text("import microtape as mt\n\nmt.custom_grad\nreveal_type(mt.custom_grad)\n", encoding="utf-8")
    text = hover_text(installed.python, script, 2, 5)
    signatures = [line for line in text.splitlines() if line.startswith("def custom_grad(")]
    assert len(signatures) == 6, text[:3000]
    assert signatures[0] == "def custom_grad(f: (Tensor) -> tuple[Tensor, (Tensor) -> GradResult]) -> ((TensorLike) -> Tensor): ...", signatures[0]
    assert all(len(line) <= 150 and "ListLike" not in line for line in signatures), signatures
    revealed = pyright_on(folder, installed.python).stdout
    (shown,) = [line for line in revealed.splitlines() if 'Type of "mt.custom_grad"' in line]
    assert len(shown) < 1500 and "ListLike[ListLike" not in shown, shown
