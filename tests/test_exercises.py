"""The classroom exercises and their grader.

Every solution passes, every untouched starter fails with a message that
says what to do, typical wrong answers fail with the real values, and a
student's crash never escapes as a traceback. Most runs are in-process
(``grade(path, out=...)``); one goes through ``python -m microtape grade``.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import microtape as mt
from microtape import _runtime
from microtape.grader import EXERCISES, EXERCISES_DIR, SOLUTIONS_DIR, grade, list_exercises

NAMES = list_exercises()


def run_grade(path: str | Path) -> tuple[int, str]:
    out = io.StringIO()
    code = grade(path, out=out)
    return code, out.getvalue()


def mutated(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A copy of the solution of ``name`` with one piece of text replaced."""
    source = (SOLUTIONS_DIR / f"{name}.py").read_text(encoding="utf-8")
    assert old in source, f"the solution of {name} no longer contains {old!r}: update this test"
    path = tmp_path / f"{name}.py"
    path.write_text(source.replace(old, new), encoding="utf-8")
    return path


def student_file(tmp_path: Path, body: str, name: str = "mine.py") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


# -- the set of exercises --------------------------------------------------------------


def test_every_chapter_has_an_exercise() -> None:
    assert {ex.chapter for ex in EXERCISES.values()} >= set(range(8))
    assert len(NAMES) >= 8


def test_every_exercise_has_a_starter_and_a_solution_and_nothing_else() -> None:
    starters = {p.stem for p in EXERCISES_DIR.glob("*.py") if p.stem != "__init__"}
    solutions = {p.stem for p in SOLUTIONS_DIR.glob("*.py") if p.stem != "__init__"}
    assert starters == set(NAMES)
    assert solutions == set(NAMES)


def test_exercise_files_are_never_mistaken_for_chapters() -> None:
    assert not list(EXERCISES_DIR.rglob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("name", NAMES)
def test_starter_explains_how_to_check_it(name: str) -> None:
    source = (EXERCISES_DIR / f"{name}.py").read_text(encoding="utf-8")
    assert f"python -m microtape grade tutorials/exercises/{name}.py" in source
    assert f'EXERCISE = "{name}"' in source
    assert "TODO" in source
    assert f"Chapter {EXERCISES[name].chapter}" in source


# -- solutions pass, starters fail helpfully -------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_solution_passes(name: str) -> None:
    code, text = run_grade(SOLUTIONS_DIR / f"{name}.py")
    assert code == 0, text
    assert "FAIL" not in text and "TODO" not in text
    assert text.count("PASS") == len(EXERCISES[name].checks)
    assert text.splitlines()[-1] == f"{name}: all {len(EXERCISES[name].checks)} checks passed."


@pytest.mark.parametrize("name", NAMES)
def test_untouched_starter_fails_with_a_helpful_message(name: str) -> None:
    code, text = run_grade(EXERCISES_DIR / f"{name}.py")
    assert code == 1, text
    assert "not done yet: TODO" in text or "hint:" in text
    assert "Traceback" not in text
    last = text.splitlines()[-1]
    assert last.startswith(f"{name}: ") and "checks passed" in last


def test_not_done_yet_names_the_todo_and_where_it_is() -> None:
    code, text = run_grade(EXERCISES_DIR / "ex00_gradient_by_hand.py")
    assert code == 1
    assert "  TODO  df_by_hand matches finite differences" in text
    assert "not done yet: TODO 2: return mt.grad(f)(x) (ex00_gradient_by_hand.py:" in text
    assert "0 of 4 checks passed, 4 not done yet" in text


def test_the_buggy_model_is_caught_without_giving_the_answer_away() -> None:
    code, text = run_grade(EXERCISES_DIR / "ex04b_find_the_bug.py")
    assert code == 1
    assert "  FAIL  the model's gradient agrees with finite differences" in text
    assert "1 of the 3 custom ops disagrees with finite differences when checked alone" in text
    assert "scaled_tanh" not in text
    assert "  PASS  the forward values are unchanged" in text


def test_once_the_culprit_is_named_the_grader_names_it_too(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex04b_find_the_bug", "[dy * 2.0 * (1.0 - t * t)]", "[dy * (1.0 - t * t)]")
    code, text = run_grade(path)
    assert code == 1
    assert "  PASS  CULPRIT names the op with the wrong VJP" in text
    assert "culprit: the VJP of 'custom_grad(scaled_tanh)' called at ex04b_find_the_bug.py:" in text
    assert "scaled_tanh: check_grads failed" in text


def test_the_leaky_step_is_caught_with_the_ops_that_leak() -> None:
    code, text = run_grade(EXERCISES_DIR / "ex05_stop_the_leak.py")
    assert code == 1
    assert "  PASS  train_step makes a correct SGD step" in text
    assert "  FAIL  train_step leaves no tensors behind" in text
    assert "leak per call" in text and "ex05_stop_the_leak.py:" in text


# -- wrong answers fail with real values ---------------------------------------------------


def test_a_wrong_vjp_fails_against_finite_differences(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex04_softplus_vjp", "[dy * mt.sigmoid(x)]", "[dy * mt.exp(x)]")
    code, text = run_grade(path)
    assert code == 1
    assert "  FAIL  the VJP agrees with finite differences" in text
    assert "finite differences give" in text
    assert "hint: d/dx log(1 + eˣ)" in text
    assert "the first derivative is already wrong (see the check above)" in text


def test_a_vjp_made_of_python_floats_fails_only_at_order_two(tmp_path: Path) -> None:
    path = mutated(
        tmp_path,
        "ex04_softplus_vjp",
        "return [dy * mt.sigmoid(x)]",
        "return [dy * mt.tensor([1.0 / (1.0 + math.exp(-v)) for v in x.data_sync()])]",
    )
    path.write_text("import math\n" + path.read_text(encoding="utf-8").replace("from __future__ import annotations\n", ""), encoding="utf-8")
    code, text = run_grade(path)
    assert code == 1
    assert "  PASS  the VJP agrees with finite differences" in text
    assert "  FAIL  the VJP can be differentiated again" in text
    assert "(second derivative)" in text


def test_fixing_the_forward_instead_of_the_vjp_is_caught(tmp_path: Path) -> None:
    path = mutated(
        tmp_path,
        "ex04b_find_the_bug",
        "return 2.0 * t, lambda dy: [dy * 2.0 * (1.0 - t * t)]",
        "return t, lambda dy: [dy * (1.0 - t * t)]",
    )
    code, text = run_grade(path)
    assert code == 1
    assert "  PASS  every custom op passes check_grads alone" in text
    assert "  FAIL  the forward values are unchanged" in text


def test_a_wrong_culprit_is_rejected(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex04b_find_the_bug", 'CULPRIT = "custom_grad(scaled_tanh)"', 'CULPRIT = "custom_grad(swish)"')
    code, text = run_grade(path)
    assert code == 1
    assert "CULPRIT = 'custom_grad(swish)', but that op's VJP agrees with finite differences" in text


def test_retyping_the_derivative_is_not_autodiff(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex00_gradient_by_hand", "return mt.grad(f)(x)", "return 3.0 * x * x - 2.0")
    code, text = run_grade(path)
    assert code == 1
    assert "  PASS  df_with_mt returns f'(x) as a tensor" in text
    assert "it does not differentiate f" in text


def test_rebinding_instead_of_assigning_is_caught(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex01_variables_sgd", "w.assign_sub(grad * lr)", "w = mt.variable(w - grad * lr)")
    code, text = run_grade(path)
    assert code == 1
    assert "w still holds [1.0, 2.0, 3.0]" in text


def test_a_fixed_variable_name_fails_the_second_call(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex01_variables_sgd", "return mt.variable(values)", 'return mt.variable(values, name="w")')
    code, text = run_grade(path)
    assert code == 1
    assert "  PASS  make_weights makes a trainable variable" in text
    assert "your code raised VariableError" in text
    assert "already exists" in text


def test_variables_made_from_scalars_leak_and_the_leak_is_located(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex02_linear_model", "w = mt.variable(0.0)", "w = mt.variable(mt.scalar(0.0))")
    code, text = run_grade(path)
    assert code == 1
    assert "train(20, 0.05) left 1 tensor(s) alive" in text
    assert "1 x tensor (ex02_linear_model.py:" in text


def test_gradients_that_keep_the_loss_alive_fail(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex02_linear_model", "return mt.tidy(step)", "return step()")
    code, text = run_grade(path)
    assert code == 1
    assert "left 3 new tensor(s) alive, expected exactly 2" in text


def test_a_half_fixed_leak_still_fails(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex05_stop_the_leak", "return mt.tidy(lambda: mse(predict(w, X), Y).item())", "return mse(predict(w, X), Y).item()")
    code, text = run_grade(path)
    assert code == 1
    assert "  PASS  train_step leaves no tensors behind" in text
    assert "  FAIL  evaluate leaves no tensors behind" in text
    assert "x matmul (ex05_stop_the_leak.py:" in text


def test_training_without_clipping_explodes(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex06_exploding_rnn", "dw, du = clipped_grads(raw, max_norm)", "dw, du = raw")
    code, text = run_grade(path)
    assert code == 1
    assert "  FAIL  train_rnn converges with clipping" in text
    assert "the gradients exploded" in text


def test_recording_clipped_gradients_hides_the_explosion(tmp_path: Path) -> None:
    record_raw = 'monitor.record({"w": raw[0], "u": raw[1]})  # the raw norms: see the explosion'
    path = mutated(tmp_path, "ex06_exploding_rnn", record_raw, "pass")
    source = path.read_text(encoding="utf-8")
    update = "w.assign_sub(dw * lr)"
    path.write_text(source.replace(update, 'monitor.record({"w": dw, "u": du})\n            ' + update), encoding="utf-8")
    code, text = run_grade(path)
    assert code == 1
    assert "were the gradients clipped before recording?" in text


def test_the_absolute_peak_is_not_the_extra_peak(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex07_profile_memory", "return mt.profile(fn).peak_bytes - before", "return mt.profile(fn).peak_bytes")
    code, text = run_grade(path)
    assert code == 1
    assert "of them were alive before it started" in text


def test_profiling_without_tidy_shows_the_intermediates(tmp_path: Path) -> None:
    path = mutated(tmp_path, "ex07_profile_memory", "mt.profile(lambda: mt.tidy(lambda: layer(x, w)))", "mt.profile(lambda: layer(x, w))")
    code, text = run_grade(path)
    assert code == 1
    assert "new_tensors=3, expected 1" in text


# -- usage errors: exit code 2 ------------------------------------------------------------------


def test_missing_file_is_exit_2(tmp_path: Path) -> None:
    code, text = run_grade(tmp_path / "nope.py")
    assert code == 2
    assert "no such file" in text and "hint:" in text


def test_an_exercise_name_instead_of_a_path_points_to_the_starter() -> None:
    code, text = run_grade("ex04_softplus_vjp")
    assert code == 2
    assert "tutorials/exercises/ex04_softplus_vjp.py" in text


def test_a_directory_is_exit_2(tmp_path: Path) -> None:
    code, text = run_grade(tmp_path)
    assert code == 2
    assert "is a directory" in text


def test_a_file_without_exercise_is_exit_2(tmp_path: Path) -> None:
    code, text = run_grade(student_file(tmp_path, "x = 1\n"))
    assert code == 2
    assert 'EXERCISE = "..."' in text and "ex04_softplus_vjp" in text


def test_an_unknown_exercise_is_exit_2_with_a_suggestion(tmp_path: Path) -> None:
    code, text = run_grade(student_file(tmp_path, 'EXERCISE = "ex04_softplus_vpj"\n'))
    assert code == 2
    assert "unknown exercise" in text and "did you mean 'ex04_softplus_vjp'?" in text


# -- student errors never escape ---------------------------------------------------------------


def test_an_exception_in_student_code_is_a_fail_line(tmp_path: Path) -> None:
    body = (
        'EXERCISE = "ex07_profile_memory"\n'
        "def leftover_tensors(fn):\n"
        "    return 1 / 0\n"
    )
    code, text = run_grade(student_file(tmp_path, body))
    assert code == 1
    assert "  FAIL  leftover_tensors counts what a call leaves alive" in text
    assert "your code raised ZeroDivisionError (mine.py:3 in leftover_tensors):" in text
    assert "division by zero" in text
    assert "hint: before = mt.memory().num_tensors" in text
    assert "the file defines no profile_layer()" in text
    assert "Traceback" not in text


def test_a_microtape_error_in_student_code_shows_its_message(tmp_path: Path) -> None:
    body = (
        "import microtape as mt\n"
        'EXERCISE = "ex02_linear_model"\n'
        "def loss_fn(w, b):\n"
        "    return mt.tensor([1.0, 2.0]) * mt.tensor([1.0, 2.0, 3.0])\n"
    )
    code, text = run_grade(student_file(tmp_path, body))
    assert code == 1
    assert "your code raised ShapeError (mine.py:4 in loss_fn):" in text
    assert "Traceback" not in text


def test_a_syntax_error_is_reported_with_its_line(tmp_path: Path) -> None:
    code, text = run_grade(student_file(tmp_path, 'EXERCISE = "ex00_gradient_by_hand"\ndef f(x:\n'))
    assert code == 1
    assert "SyntaxError (mine.py:2)" in text and "hint:" in text


def test_an_error_while_loading_is_reported(tmp_path: Path) -> None:
    code, text = run_grade(student_file(tmp_path, 'EXERCISE = "ex00_gradient_by_hand"\nraise RuntimeError("boom")\n'))
    assert code == 1
    assert "  FAIL  loading the file: RuntimeError (mine.py:2 in <module>):" in text and "boom" in text
    assert "could not load the file" in text


def test_sys_exit_in_student_code_does_not_stop_the_grader(tmp_path: Path) -> None:
    body = 'import sys\nEXERCISE = "ex07_profile_memory"\ndef leftover_tensors(fn):\n    sys.exit(3)\n'
    code, text = run_grade(student_file(tmp_path, body))
    assert code == 1
    assert "raised SystemExit" in text


def test_a_tape_or_scope_left_open_does_not_leak_out(tmp_path: Path) -> None:
    body = (
        "import microtape as mt\n"
        'EXERCISE = "ex07_profile_memory"\n'
        "def leftover_tensors(fn):\n"
        "    mt.GradientTape().__enter__()\n"
        "    return 0\n"
    )
    code, _ = run_grade(student_file(tmp_path, body))
    assert code == 1
    st = _runtime.STATE.get()
    assert not st.tapes and not st.scopes and not st.observers


def test_grading_leaves_nothing_behind() -> None:
    before = mt.memory()
    modules = set(sys.modules)
    for name in ("ex01_variables_sgd", "ex05_stop_the_leak"):
        assert run_grade(SOLUTIONS_DIR / f"{name}.py")[0] == 0
        assert run_grade(EXERCISES_DIR / f"{name}.py")[0] == 1
    after = mt.memory()
    assert (after.num_tensors, after.num_variables) == (before.num_tensors, before.num_variables)
    assert not [m for m in set(sys.modules) - modules if "exercise" in m]


def test_module_level_variables_with_fixed_names_can_be_graded_twice(tmp_path: Path) -> None:
    source = (SOLUTIONS_DIR / "ex01_variables_sgd.py").read_text(encoding="utf-8")
    path = student_file(tmp_path, source + '\nSHARED = mt.variable(1.0, name="shared_between_runs")\n')
    assert run_grade(path)[0] == 0
    assert run_grade(path)[0] == 0


# -- the command line --------------------------------------------------------------------------------


def test_command_line_grade() -> None:
    env = dict(os.environ, PYTHONIOENCODING="utf-8")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "microtape", "grade", *args],
            capture_output=True, text=True, encoding="utf-8", env=env, timeout=120,
        )

    done = cli(str(SOLUTIONS_DIR / "ex04_softplus_vjp.py"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all 5 checks passed" in done.stdout and done.stderr == ""
    starter = cli(str(EXERCISES_DIR / "ex04_softplus_vjp.py"))
    assert starter.returncode == 1 and "not done yet: TODO 1" in starter.stdout
    assert "Traceback" not in starter.stdout + starter.stderr
    assert cli("no/such/file.py").returncode == 2
