"""``grader.check_in_process``: the book's exercise pages check a file in the browser's one process.

It is the grader's entry point for places with no child processes, and the only one the
browser pages call: its text must be what ``python -m microtape grade FILE`` prints for
the same file, seed, hint level and language (checked here against the real command,
for a starter that is not done, a worked solution and a file that does not load).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import microtape as mt
from microtape.classroom.grader import check_in_process

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "tutorials" / "exercises"


def _command_line(path: Path, lang: str, hint: int, seed: int) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "microtape", "grade", path.name, "--seed", str(seed), "--lang", lang, "--hint", str(hint)],
        cwd=path.parent, capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    return proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("source, hint", [
    (EXERCISES / "ex02_linear_model.py", 1),
    (EXERCISES / "solutions" / "ex04_softplus_vjp.py", 1),
    (EXERCISES / "ex04b_find_the_bug.py", 2),
])
def test_the_feedback_is_the_command_lines(tmp_path: Path, source: Path, hint: int, lang: str) -> None:
    path = tmp_path / source.name
    shutil.copy2(source, path)
    want = _command_line(path, lang, hint, seed=7)
    assert want.strip(), "the command printed nothing"
    got = check_in_process(path, lang=lang, hint=hint, seed=7)
    assert got.replace(str(path), path.name) + "\n" == want


def test_a_file_that_does_not_load_is_reported_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "ex00_gradient_by_hand.py"
    path.write_text('EXERCISE = "ex00_gradient_by_hand"\nraise SystemExit(3)\n', encoding="utf-8")
    text = check_in_process(path, seed=1)
    assert "could not load the file" in text and "SystemExit" in text
    assert mt.memory().num_tensors >= 0  # the process goes on


@pytest.mark.parametrize("options", [{"hint": 0}, {"hint": True}, {"lang": "de"}, {"seed": -1}])
def test_options_out_of_range_raise_before_any_work(tmp_path: Path, options: dict[str, object]) -> None:
    path = tmp_path / "ex00_gradient_by_hand.py"
    path.write_text('EXERCISE = "ex00_gradient_by_hand"\nprint("ran")\n', encoding="utf-8")
    with pytest.raises(mt.MicrotapeError, match="out of range") as err:
        check_in_process(path, **options)  # type: ignore[arg-type]  # wrong on purpose
    assert "hint: " in str(err.value) and "check_in_process(path, hint=1" in str(err.value)
    assert "grading" in check_in_process(path, hint=1, lang="en")  # the hint, applied
