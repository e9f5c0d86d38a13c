"""The installed product: build the wheel, install it alone in a fresh venv, use it as a reader would.

Everything here runs from a folder outside the checkout, with the venv's own
interpreter and no extras (so no matplotlib), which is what ``pip install
microtape-*.whl`` gives a student.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from microtape.classroom.catalog import list_exercises

from .classroom.answers import found_in
from .test_typing import mypy_on, user_folder

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Installed:
    wheel: Path
    sdist: Path
    python: Path
    work: Path  # an empty folder outside the checkout
    build_log: str

    def run(self, *args: str, encoding: str | None = None) -> subprocess.CompletedProcess[str]:
        env = _clean_env(self.python.parent)
        if encoding is not None:  # a terminal that cannot encode every character (a Windows console)
            env["PYTHONIOENCODING"] = encoding
        return subprocess.run(
            [str(self.python), "-m", "microtape", *args],
            cwd=self.work,
            capture_output=True,
            text=True,
            encoding=encoding,
            timeout=300,
            env=env,
        )


def _clean_env(bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("wheel")
    # Build from a copy of the tracked files, so nothing generated in this checkout can leak in.
    source = base / "source"
    listing = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    tracked = subprocess.run(listing, cwd=ROOT, capture_output=True, check=True).stdout
    for name in tracked.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    # A stale __pycache__ beside the solutions must not get into the wheel either.
    (source / "tutorials" / "exercises" / "solutions" / "__pycache__").mkdir(parents=True)
    (source / "tutorials" / "exercises" / "solutions" / "__pycache__" / "x.pyc").write_bytes(b"")
    dist = base / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    (wheel,) = dist.glob("microtape-*.whl")
    (sdist,) = dist.glob("microtape-*.tar.gz")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index", "--no-deps", str(wheel)]
    subprocess.run(pip, check=True, capture_output=True, timeout=300)
    work = base / "student"
    work.mkdir()
    yield Installed(wheel, sdist, python, work, build.stdout + build.stderr)


def test_the_build_makes_an_sdist_and_a_wheel_without_a_warning(installed: Installed) -> None:
    assert re.search(r"Successfully built microtape-[\d.]+\.tar\.gz and microtape-[\d.]+-py3-none-any\.whl", installed.build_log)
    assert not re.search(r"warn|deprecat", installed.build_log, re.IGNORECASE), installed.build_log


def test_the_wheel_carries_the_book_and_no_solution(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    chapters = sorted(p.name for p in (ROOT / "tutorials").glob("[0-9][0-9]_*.py"))
    starters = sorted(p.name for p in (ROOT / "tutorials" / "exercises").glob("ex*.py"))
    assert [n for n in chapters if f"microtape/_tutorials/{n}" not in names] == []
    assert [n for n in starters if f"microtape/_tutorials/exercises/{n}" not in names] == []
    assert "microtape/py.typed" in names
    assert [n for n in names if "solution" in n or "__pycache__" in n or n.endswith(".pyc")] == []
    assert [n for n in names if not n.startswith(("microtape/", "microtape-"))] == []
    # the chapters' translations (for tour --lang) and the exercises page's (for exercises --lang),
    # and no other page's catalog
    locale = ROOT / "docs" / "locale"
    catalogs = sorted(
        p.relative_to(locale).as_posix()
        for p in [*locale.glob("*/LC_MESSAGES/book/*.po"), *locale.glob("*/LC_MESSAGES/exercises.po")]
    )
    assert "ru/LC_MESSAGES/exercises.po" in catalogs
    shipped = sorted(n.removeprefix("microtape/_tutorials/locale/") for n in names if n.startswith("microtape/_tutorials/locale/"))
    assert shipped == catalogs
    # the package's own messages: compiled at build time (hatch_build.py), the .po left out
    assert sorted(n for n in names if n.startswith("microtape/locale/")) == ["microtape/locale/ru/LC_MESSAGES/microtape.mo"]
    metadata = zipfile.ZipFile(installed.wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata


def test_the_wheel_speaks_russian_from_its_compiled_catalog(installed: Installed) -> None:
    """gettext reads the wheel's .mo: an error's hint and the selfcheck's words in Russian, with nothing compiled at run time."""
    code = (
        "import microtape as mt\n"
        "mt.set_language('ru')\n"
        "try:\n    mt.ones((2, 3)).sum(axis=2)\nexcept mt.InvalidArgumentError as err:\n    print(str(err).splitlines()[-1])\n"
    )
    result = subprocess.run([str(installed.python), "-c", code], cwd=installed.work, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "подсказка:" in result.stdout, result.stdout + result.stderr
    env = {**os.environ, "MICROTAPE_LANG": "ru"}
    result = subprocess.run([str(installed.python), "-m", "microtape", "grade", "--timeout", "0", "x.py"], cwd=installed.work,
                            capture_output=True, text=True, timeout=60, env=env)
    assert "подсказка" in result.stdout + result.stderr, result.stdout + result.stderr


def test_the_sdist_carries_no_solution(installed: Installed) -> None:
    """Guards the bug: the sdist (what an index serves to anyone) held tutorials/exercises/solutions/."""
    with tarfile.open(installed.sdist) as archive:
        names = archive.getnames()
    assert any(n.endswith("/tutorials/exercises/ex04_softplus_vjp.py") for n in names)
    assert [n for n in names if "solution" in n] == []


def _shipped_checks(installed: Installed) -> dict[str, dict[str, str]]:
    """{"wheel" | "sdist": {exercise: its check file's text}}, as the built archives hold them."""
    wheel = zipfile.ZipFile(installed.wheel)
    found: dict[str, dict[str, str]] = {"wheel": {}, "sdist": {}}
    for name in wheel.namelist():
        if name.startswith("microtape/_tutorials/exercises/checks/ex") and name.endswith(".py"):
            found["wheel"][Path(name).stem] = wheel.read(name).decode("utf-8")
    with tarfile.open(installed.sdist) as archive:
        for member in archive.getmembers():
            if "/tutorials/exercises/checks/ex" in member.name and member.name.endswith(".py"):
                handle = archive.extractfile(member)
                assert handle is not None
                found["sdist"][Path(member.name).stem] = handle.read().decode("utf-8")
    return found


def test_no_check_in_the_wheel_or_the_sdist_holds_its_solution(installed: Installed) -> None:
    """Guards a bug: the installed checks held working solutions (ex07b's fixed distance, ex04d's log-sum-exp,
    ex06's clip, ex04e's accepted names), so a student's file could print them from inside itself."""
    shipped = _shipped_checks(installed)
    for archive, checks in shipped.items():
        assert sorted(checks) == list_exercises(), archive
        held = {name: found_in(text, name) for name, text in checks.items()}
        assert not any(held.values()), f"the {archive}'s checks hold solutions: { {k: v for k, v in held.items() if v} }"


@pytest.mark.parametrize("chapter", ["4", "5"])
def test_the_tour_from_the_wheel_names_the_chapters_lines(installed: Installed, chapter: str) -> None:
    """Guards the bug: installed chapters live inside the package, so "your line" was `<frozen runpy>:88`."""
    result = installed.run("tour", "--chapter", chapter, "--no-pause")
    assert result.returncode == 0, result.stderr
    (name,) = [p.name for p in (ROOT / "tutorials").glob(f"0{chapter}_*.py")]
    assert "<frozen" not in result.stdout and "runpy" not in result.stdout
    assert re.search(rf"(called|created)? ?at {re.escape(name)}:\d+", result.stdout), result.stdout[-3000:]


@pytest.mark.parametrize("encoding", ["cp1252", "cp1251"])
def test_the_tour_from_the_wheel_prints_on_a_narrow_terminal(installed: Installed, encoding: str) -> None:
    result = installed.run("tour", "--chapter", "6", "--no-pause", encoding=encoding)
    assert result.returncode == 0 and "Traceback" not in result.stdout + result.stderr, result.stderr[-2000:]
    assert "?" in result.stdout and "GradientMonitor" in result.stdout


def test_it_runs_from_the_wheel_not_the_checkout(installed: Installed) -> None:
    result = subprocess.run(
        [str(installed.python), "-c", "import microtape, importlib.util; print(microtape.__file__);"
         "print(importlib.util.find_spec('matplotlib'))"],
        cwd=installed.work, capture_output=True, text=True, timeout=60, env=_clean_env(installed.python.parent),
    )
    where, matplotlib = result.stdout.split()
    assert where.startswith(str(installed.python.parents[1])) and matplotlib == "None"


def test_the_tour_shows_the_real_chapter_without_matplotlib(installed: Installed) -> None:
    result = installed.run("tour", "--chapter", "3", "--no-pause")
    assert result.returncode == 0, result.stderr
    (chapter,) = (ROOT / "tutorials").glob("03_*.py")
    title = chapter.read_text(encoding="utf-8").split('"""')[1].strip().splitlines()[0]
    assert result.stdout.splitlines()[1] == title
    assert "▸ GradientTape(persistent=True" in result.stdout  # a real output of a real cell
    assert "Traceback" not in result.stdout + result.stderr
    plotted = installed.run("tour", "--chapter", "1", "--no-pause")  # chapter 3 draws its tape as SVG; chapter 1 plots
    assert plotted.returncode == 0 and "pip install 'microtape[book]'" in plotted.stdout, plotted.stdout[-2000:]
    missing = installed.run("tour", "--chapter", "42", "--no-pause")
    assert missing.returncode == 2 and "no chapter 42; the chapters are 0, 1, 2, 3, 4, 5, 6, 7" in missing.stdout


def test_selfcheck_passes(installed: Installed) -> None:
    result = installed.run("selfcheck")
    assert result.returncode == 0 and "selfcheck passed" in result.stdout


def test_a_student_copies_the_starters_and_grades_one(installed: Installed) -> None:
    result = installed.run("exercises", "mine")
    assert result.returncode == 0, result.stdout + result.stderr
    copied = sorted(p.name for p in (installed.work / "mine").iterdir())
    assert copied == sorted(p.name for p in (ROOT / "tutorials" / "exercises").glob("ex*.py"))
    assert "-m microtape grade mine/ex00_gradient_by_hand.py" in result.stdout
    graded = installed.run("grade", "mine/ex04_softplus_vjp.py", "--timeout", "120")  # margin for busy cores
    assert graded.returncode == 1  # the starter's TODOs are not done: it fails, helpfully
    assert "ex04_softplus_vjp" in graded.stdout and "TODO" in graded.stdout
    assert "Traceback" not in graded.stdout + graded.stderr
    russian = installed.run("exercises", "mine-ru", "--lang", "ru")
    assert russian.returncode == 0, russian.stdout + russian.stderr
    statement = (installed.work / "mine-ru" / "ex04_softplus_vjp.py").read_text(encoding="utf-8").split('"""')[1]
    assert statement.startswith("Упражнение 4") and "Проверьте свою работу" in statement


def test_the_console_script_names_itself(installed: Installed) -> None:
    result = subprocess.run(
        [str(installed.python.parent / "microtape"), "--help"],
        cwd=installed.work, capture_output=True, text=True, timeout=60, env=_clean_env(installed.python.parent),
    )
    assert result.returncode == 0 and result.stdout.startswith("usage: microtape ")


def test_the_program_alone_prints_its_help(installed: Installed) -> None:
    result = installed.run()
    assert result.returncode == 0 and result.stdout.startswith("usage: python -m microtape "), result.stdout + result.stderr
    assert "selfcheck" in result.stdout and not result.stderr


def test_pyright_sees_every_exported_type(installed: Installed) -> None:
    # verifytypes resolves packages with the `python` first on PATH: the wheel's venv here.
    result = subprocess.run(
        [sys.executable, "-m", "pyright", "--verifytypes", "microtape", "--ignoreexternal"],
        cwd=installed.work, capture_output=True, text=True, timeout=300, env=_clean_env(installed.python.parent),
    )
    assert f'Package directory: "{installed.python.parents[1]}' in result.stdout, result.stdout[:2000]
    assert "Type completeness score: 100%" in result.stdout, result.stdout[-6000:]
    assert result.returncode == 0


def test_mypy_strict_on_a_user_script_sees_the_wheel_types(installed: Installed, tmp_path: Path) -> None:
    result = mypy_on(user_folder(tmp_path), python=installed.python)  # the user scripts' assert_type lines
    assert result.returncode == 0, result.stdout + result.stderr
