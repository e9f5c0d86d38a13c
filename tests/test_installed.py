"""The installed product, checked from the checkout; ``test_wheel.py`` checks the wheel itself.

The README's two commands work where the system Python refuses ``pip
install`` (they make a venv), CI runs exactly the README's test command, the
installed chapters count as the reader's code when microtape names "your
line", and the tour prints on a terminal that cannot encode every character.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from microtape.engine import user_line as _frames
from microtape.engine import arena as _runtime

ROOT = Path(__file__).resolve().parents[1]
VENV = "python3 -m venv .venv && . .venv/bin/activate && python -m pip install -e "


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ")]


def test_the_readmes_two_commands_make_and_use_a_venv() -> None:
    """Guards the bug: `python3 -m pip install` outside a venv fails on Debian (externally managed)."""
    assert _readme_commands() == [VENV + ". && python -m microtape tour", VENV + "'.[dev]' && python -m pytest"]


def test_the_readme_is_a_front_door() -> None:
    """The README is at most 150 lines; the tour, which needs nothing, installs no extra."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines: move detail to the book, tests/README.md or bench/README.md"
    assert "[dev]" not in _readme_commands()[0]


def test_ci_runs_the_readmes_test_command_verbatim() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands[-1] == _readme_commands()[1]
    assert "pip install" not in "\n".join(commands[:-1])  # nothing else installs Python packages


def test_an_installed_chapter_is_the_readers_code() -> None:
    """Guards the bug: from the wheel, the tour said `called at <frozen runpy>:88` (chapters live in the package)."""
    chapter = os.path.join(_frames.BOOK_DIR, "04_checking_gradients.py")
    namespace: dict[str, object] = {"user_frame_line": _frames.user_frame_line}
    exec(compile("\n\nwhere = user_frame_line()", chapter, "exec"), namespace)  # noqa: S102
    assert namespace["where"] == f"{chapter}:3"
    engine = os.path.join(_frames.PACKAGE_DIR, "ops", "__init__.py")
    exec(compile("where = user_frame_line()", engine, "exec"), namespace)  # noqa: S102
    assert not str(namespace["where"]).startswith(_frames.PACKAGE_DIR)  # the engine's own files are skipped


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["cp1252", "cp1251"])
def test_the_tour_prints_on_a_terminal_that_cannot_encode_everything(encoding: str) -> None:
    """Guards the bug: UnicodeEncodeError on the first box-drawing character (a Windows console)."""
    env = {**os.environ, "PYTHONIOENCODING": encoding, "PYTHONPATH": str(ROOT)}
    for args in (["--chapter", "0"], ["--chapter", "0", "--lang", "ru"]):
        result = subprocess.run(
            [sys.executable, "-m", "microtape", "tour", *args, "--no-pause"],
            cwd=ROOT, capture_output=True, timeout=300, env=env,
        )
        assert result.returncode == 0, result.stderr.decode(encoding, "replace")[-2000:]
        text = result.stdout.decode(encoding)
        assert "Traceback" not in text and "?" in text  # what cannot be encoded prints as ?
        if encoding == "cp1251" and "--lang" in args:
            assert re.search("[А-Яа-я]{4}", text)  # Cyrillic that cp1251 can encode is kept
