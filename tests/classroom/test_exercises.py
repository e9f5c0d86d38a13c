"""The classroom exercises and their grader.

Every solution passes, every untouched starter fails without printing a
line of its solution (at any hint level), typical wrong answers fail and
other correct repairs pass (one table), and a student's file that loops,
crashes, exits or allocates too much is reported while grading goes on.
Grading runs child processes, so the table is graded in one ``--json`` run
of the real command line (a module fixture), and the tests read its entries.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from microtape.book.resources import exercises_dir
from microtape.exercise import Check
from microtape.classroom.catalog import exercises, list_exercises, load_exercise
from microtape.classroom.grader import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "tutorials" / "exercises" / "solutions"
STARTERS = exercises_dir() or REPO / "tutorials" / "exercises"
NAMES = list_exercises()
ENV = dict(os.environ, PYTHONIOENCODING="utf-8")


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "microtape", "grade", *map(str, args)],
        capture_output=True, text=True, encoding="utf-8", env=ENV, timeout=300,
    )


def grade_json(*args: str | Path) -> tuple[int, dict[str, object]]:
    done = cli(*args, "--json")
    assert done.stderr == "", done.stderr
    document = json.loads(done.stdout)
    assert isinstance(document, dict)
    return done.returncode, document


def entries_of(document: dict[str, object]) -> dict[str, dict[str, object]]:
    files = document["files"]
    assert isinstance(files, list)
    return {Path(str(e["path"])).relative_to(Path(str(e["path"])).parents[1]).as_posix(): e for e in files}


# -- the table: wrong answers fail, other correct repairs pass -----------------------------


@dataclass(frozen=True)
class Row:
    """A copy of a solution with pieces of text replaced, and what grading it must show."""

    name: str
    label: str
    edits: tuple[tuple[str, str], ...]
    passes: bool
    expect: tuple[str, ...] = ()

    @property
    def file(self) -> str:
        return f"rows/{self.name}__{self.label}.py"


ROWS = [
    Row("ex00_gradient_by_hand", "retyped_derivative", (("return mt.grad(f)(x)", "return 3.0 * x * x - 2.0"),), False,
        ("  PASS  df_with_mt returns f'(x) as a tensor", "it does not differentiate f")),
    Row("ex00_gradient_by_hand", "one_step_too_many", (("for _ in range(steps):", "for _ in range(steps + 1):"),), False,
        ("  FAIL  gradient_descent steps downhill",)),
    Row("ex00_gradient_by_hand", "wrong_derivative", (("return 3.0 * x * x - 2.0", "return 3.0 * x * x + 2.0"),), False,
        ("  FAIL  df_by_hand matches finite differences", "gradient_descent uses your df_by_hand(), which fails")),
    Row("ex01_variables_sgd", "rebinding", (("w.assign_sub(grad * lr)", "w = mt.variable(w - grad * lr)"),), False,
        ("w still holds [1.0, 2.0, 3.0]",)),
    Row("ex01_variables_sgd", "fixed_name", (("return mt.variable(values)", 'return mt.variable(values, name="w")'),), False,
        ("  PASS  make_weights makes a trainable variable", "your code raised VariableError")),
    Row("ex01_variables_sgd", "assign_instead", (("w.assign_sub(grad * lr)", "w.assign(w - lr * grad)"),), True),
    Row("ex02_linear_model", "variable_from_a_tensor", (("w = mt.variable(0.0)", "w = mt.variable(mt.scalar(0.0))"),), False,
        ("  FAIL  train leaves no tensors behind", "tensor(s) alive", "(ex02_linear_model__variable_from_a_tensor.py:")),
    Row("ex02_linear_model", "no_tidy", (("return mt.tidy(step)", "return step()"),), False,
        ("expected exactly 2 (dw and db)",)),
    Row("ex02b_item_cuts_the_graph", "cut_another_way", (("A * mt.tanh(w)", "A * mt.tanh(mt.scalar(float(w.item())))"),), False,
        ("  FAIL  the gradient reaches w", "is None")),
    Row("ex02b_item_cuts_the_graph", "tanh_by_exp", (("A * mt.tanh(w)", "A * (1.0 - 2.0 / (mt.exp(2.0 * w) + 1.0))"),), True),
    Row("ex03_second_derivative", "inner_gradient_too_late",
        (("        dy_dx = inner.gradient(y, x)  # computed while the outer tape records\n", ""),
         ("    assert dy_dx is not None", "    dy_dx = inner.gradient(y, x)\n    assert dy_dx is not None")), False,
        ("  FAIL  second_derivative matches f''",)),
    Row("ex03_second_derivative", "double_step", (("x.assign_sub(dx * lr)", "x.assign_sub(dx * lr * 2.0)"),), False,
        ("  FAIL  minimize_paraboloid does SGD on x² + y²",)),
    Row("ex03b_unwatched_tensor", "not_watched", (("        tape.watch(x)  # a plain tensor is recorded only when watched\n", ""),), False,
        ("input_gradient(x) is None",)),
    Row("ex03b_unwatched_tensor", "persistent_tape",
        (("    with mt.GradientTape() as tape:\n        tape.watch(x)\n        y = model(x)\n    dx, dw, dv = tape.gradient(y, [x, W, V])",
          "    with mt.GradientTape(persistent=True) as tape:\n        tape.watch(x)\n        y = model(x)\n"
          "    dx = tape.gradient(y, x)\n    dw = tape.gradient(y, W)\n    dv = tape.gradient(y, V)\n    tape.release()"),), True),
    Row("ex04_softplus_vjp", "exp_instead_of_sigmoid", (("[dy * mt.sigmoid(x)]", "[dy * mt.exp(x)]"),), False,
        ("  FAIL  the VJP agrees with finite differences", "finite differences give",
         "the first derivative is already wrong (see the check above)")),
    Row("ex04_softplus_vjp", "python_floats",
        (("from __future__ import annotations\n", "from __future__ import annotations\n\nimport math\n"),
         ("return [dy * mt.sigmoid(x)]", "return [dy * mt.tensor([1.0 / (1.0 + math.exp(-v)) for v in x.data_sync()])]")), False,
        ("  PASS  the VJP agrees with finite differences", "  FAIL  the VJP can be differentiated again", "(second derivative)")),
    Row("ex04_softplus_vjp", "order_one_proof", (("check_grads(softplus, [x], order=2)", "check_grads(softplus, [x])"),), False,
        ("the second derivative must be checked too",)),
    # the planted bug is in swish (chapter 4 prints the fix of scaled_tanh's VJP verbatim)
    Row("ex04b_find_the_bug", "culprit_named_not_fixed", (("[dy * (s + x * s * (1.0 - s))]", "[dy * (s + x * (1.0 - s))]"),), False,
        ("  PASS  CULPRIT names the op with the wrong VJP", "culprit: the VJP of 'custom_grad(swish)' called at ex04b_find_the_bug__",
         "swish at [-1.5, -0.2, 0.0, 0.7, 2.0]: check_grads failed")),
    Row("ex04b_find_the_bug", "forward_fixed_instead",
        (("return x * s, lambda dy, saved: [dy * (s + x * s * (1.0 - s))]", "return x * 0.5, lambda dy, saved: [dy * 0.5]"),), False,
        ("  PASS  every custom op passes check_grads alone", "  FAIL  the forward values are unchanged")),
    Row("ex04b_find_the_bug", "wrong_culprit", (('CULPRIT = "custom_grad(swish)"', 'CULPRIT = "custom_grad(scaled_tanh)"'),), False,
        ("CULPRIT = 'custom_grad(scaled_tanh)': the culprit line of check_grads(model, [W, X]) on the starter names another op",)),
    Row("ex04b_find_the_bug", "forgot_dy", (("[dy * (s + x * s * (1.0 - s))]", "[s + x * s * (1.0 - s)]"),), False,
        ("hint: did you multiply by dy?",)),
    Row("ex04c_broadcast_vjp", "shape_fixed_sign_not", (("[dy, -dy.sum(axis=0)]", "[dy, dy.sum(axis=0)]"),), False,
        ("  FAIL  the VJP agrees with finite differences", "check_grads failed", "d out[0,1] / d b[1]",
         "hint: b's gradient has the wrong sign", "model uses your center(), whose VJP fails")),
    Row("ex04c_broadcast_vjp", "sign_fixed_shape_not", (("[dy, -dy.sum(axis=0)]", "[dy, -dy]"),), False,
        ("cannot be computed: ShapeError", "hint: b's gradient must have b's shape")),
    Row("ex04c_broadcast_vjp", "neg_then_sum", (("[dy, -dy.sum(axis=0)]", "[dy, mt.neg(dy).sum(axis=0)]"),), True),
    Row("ex04d_nan_hunt", "clip_the_logits",
        (("    top = z.max(axis=-1, keepdims=True)\n    return top + mt.log(mt.exp(z - top).sum(axis=-1, keepdims=True))",
          "    return mt.log(mt.exp(z.clip_by_value(-700.0, 700.0)).sum(axis=-1, keepdims=True))"),), False,
        ("  FAIL  log_sum_exp is exact for small and large inputs",)),
    Row("ex04d_nan_hunt", "train_changed", (("w.assign_sub(grads[w] * lr)", "w.assign_sub(grads[w] * lr * 0.5)"),), False,
        ("  FAIL  train runs to the end with a finite loss", "the loss of step 1 is wrong")),
    Row("ex04d_nan_hunt", "builtin_logsumexp",  # allowed: the statement says so
        (("    top = z.max(axis=-1, keepdims=True)\n    return top + mt.log(mt.exp(z - top).sum(axis=-1, keepdims=True))",
          "    return mt.logsumexp(z, axis=-1, keepdims=True)"),), True),
    Row("ex04e_wrong_factor", "right_factor_copied", (("WRONG_FACTOR = -6.0", "WRONG_FACTOR = 12.0"),), False,
        ("  PASS  WRONG_OP names the op whose factor is wrong", "  FAIL  WRONG_FACTOR is the factor the table shows for that op",
         "is the right derivative of x³ at X[2]")),
    Row("ex04e_wrong_factor", "blamed_softsign", (('WRONG_OP = "custom_grad(cube)"', 'WRONG_OP = "custom_grad(softsign)"'),), False,
        ("  FAIL  WRONG_OP names the op whose factor is wrong",)),
    Row("ex04e_wrong_factor", "forgot_dy", (("lambda dy: dy * 3.0 * x * x", "lambda dy: 3.0 * x * x"),), False,
        ("  FAIL  energy's gradient agrees with finite differences",)),
    Row("ex04e_wrong_factor", "power_written_out", (("lambda dy: dy * 3.0 * x * x", "lambda dy: dy * 3.0 * x ** 2"),), True),
    Row("ex05_stop_the_leak", "half_fixed", (("return mt.tidy(lambda: mse(predict(w, X), Y).item())", "return mse(predict(w, X), Y).item()"),), False,
        ("  PASS  train_step leaves no tensors behind", "  FAIL  evaluate leaves no tensors behind", "leak per call")),
    Row("ex05b_tidy_too_eager", "no_tidy", (("self.mean, self.std = mt.tidy(compute)", "self.mean, self.std = compute()"),), False,
        ("  FAIL  fit leaves at most the mean and the std alive", "expected at most 2")),
    Row("ex05b_tidy_too_eager", "keep_inside",
        (("            return mean, mt.sqrt(((data - mean) ** 2).mean(axis=0))\n\n        self.mean, self.std = mt.tidy(compute)",
          "            self.mean = mt.keep(mean)\n            self.std = mt.keep(mt.sqrt(((data - mean) ** 2).mean(axis=0)))\n"
          "            return mean, self.std\n\n        mt.tidy(compute)"),), True),
    Row("ex05c_leaky_loop", "rate_tensor_outside_tidy",
        (("        def step() -> float:\n", "        rate = mt.scalar(lr)\n\n        def step() -> float:\n"),
         ("grads[w] * lr)", "grads[w] * rate)")), False,
        ("  FAIL  fit leaves no tensors behind", "tensor(s) alive", "(ex05c_leaky_loop__")),
    Row("ex06_exploding_rnn", "no_clipping", (("dw, du = clipped_grads(raw, max_norm)", "dw, du = raw"),), False,
        ("  FAIL  train_rnn converges with clipping", "the gradients exploded")),
    Row("ex06_exploding_rnn", "recording_clipped",
        (('monitor.record({"w": raw[0], "u": raw[1]})  # the raw norms: see the explosion', "pass"),
         ("w.assign_sub(dw * lr)", 'monitor.record({"w": dw, "u": du})\n            w.assign_sub(dw * lr)')), False,
        ("were the gradients clipped before recording?",)),
    Row("ex06b_learning_rate", "too_large", (("LR = 0.08", "LR = 0.09"),), False, ("above the stability limit",)),
    Row("ex06b_learning_rate", "too_small", (("LR = 0.08", "LR = 0.001"),), False, ("below the stability limit",)),
    Row("ex06b_learning_rate", "lambda_min", (("    return 2.0 / lam_max", "    return 2.0 / (trace - lam_max)"),), False,
        ("hint: that is 2 / λ_min",)),
    Row("ex06b_learning_rate", "hard_coded_limit", (("    return 2.0 / lam_max", "    return 0.0845"),), False,
        ("  FAIL  stability_limit is 2 / λ_max, from the data",)),
    Row("ex06c_rescue_the_run", "no_clipping",
        (("gs, _ = mt.clip_by_global_norm([grads[w], grads[u]], 1.0)", "gs = [grads[w], grads[u]]"),), False,
        ("the run still explodes",)),
    Row("ex06c_rescue_the_run", "clip_by_value",
        (("gs, _ = mt.clip_by_global_norm([grads[w], grads[u]], 1.0)", "gs = [grads[w].clip_by_value(-1, 1), grads[u].clip_by_value(-1, 1)]"),), True),
    Row("ex07_profile_memory", "absolute_peak", (("return mt.profile(fn).peak_bytes - before", "return mt.profile(fn).peak_bytes"),), False,
        ("some of them were alive before fn started",)),
    Row("ex07_profile_memory", "profile_without_tidy",
        (("mt.profile(lambda: mt.tidy(lambda: layer(x, w)))", "mt.profile(lambda: layer(x, w))"),), False,
        ("expected 1: only layer's result should survive",)),
    Row("ex07b_trace_the_nan", "forward_pass", (('FIRST_PASS = "backward"', 'FIRST_PASS = "forward"'),), False,
        ("  FAIL  FIRST_OP and FIRST_PASS name where the trace starts", "made its non-finite value in the other pass")),
    Row("ex07b_trace_the_nan", "epsilon_too_large", (("+ 1e-14)", "+ 1e-4)"),), False,
        ("  FAIL  distance is exact, and its gradient finite even at a point on the center", "from the exact distance")),
    Row("ex07b_trace_the_nan", "maximum_guard",
        (("mt.sqrt(((points - center) ** 2.0).sum(axis=1) + 1e-14)", "mt.sqrt(mt.maximum(((points - center) ** 2.0).sum(axis=1), 1e-12))"),), True),
    Row("ex08a_masked_sqrt", "one_where_only", (("mt.sqrt(safe)", "mt.sqrt(x)"),), False,
        ("  PASS  rooted keeps its values", "  FAIL  the gradient of rooted is finite", "not finite.")),
    Row("ex08a_masked_sqrt", "epsilon_shift", (("mt.sqrt(safe)", "mt.sqrt(mt.abs(x) + 1e-6)"),), False,
        ("  FAIL  rooted keeps its values",)),
    Row("ex08b_log_of_softmax", "epsilon_again", (("mt.log_softmax(z)", "mt.log(mt.softmax(z) + 1e-9)"),), False,
        ("  FAIL  cross_entropy is exact", "  FAIL  its gradient is (softmax(z) - labels) / rows")),
    Row("ex08b_log_of_softmax", "builtin_loss",  # allowed: the op computes the same loss
        (("return -(labels * mt.log_softmax(z)).sum(axis=-1).mean()", "return mt.softmax_cross_entropy(labels, z)"),), True),
    Row("ex08c_dead_relu", "relu_kept", (("return x @ w", "return mt.relu(x @ w)"),), False,
        ("  PASS  ZERO_SHARE is the share", "  FAIL  predict is linear", "  FAIL  fit learns")),
    Row("ex08c_dead_relu", "share_as_fraction", (("ZERO_SHARE = 100.0", "ZERO_SHARE = 1.0"),), False,
        ("  FAIL  ZERO_SHARE is the share", "  PASS  predict is linear")),
    Row("ex08d_second_derivative", "saved_again", (("lambda dy: dy * 3.0 * x * x", "lambda dy: dy * 3.0 * mt.stop_gradient(x * x)"),), False,
        ("  PASS  cube_op is x³", "  FAIL  its second derivative is 6x")),
    Row("ex08d_second_derivative", "order_one", (('ORDER_2_VERDICT = "FAILED"', 'ORDER_2_VERDICT = "passed"'),), False,
        ("  FAIL  ORDER_2_VERDICT is the verdict",)),
    Row("ex08e_masked_softmax", "inf_again", (("- 1e9)", "- float('inf'))"),), False,
        ("  PASS  masked_softmax keeps its values", "  FAIL  its gradient is finite and right", "non-finite entries")),
    Row("ex08e_masked_softmax", "no_outer_where", (("return mt.where(keep.greater(0.5), mt.softmax(scores + bias), mt.zeros_like(scores))", "return mt.softmax(scores + bias)"),), False,
        ("  FAIL  masked_softmax keeps its values",)),
    Row("ex08f_optimizer_state", "state_kept", (("    OPTIMIZER.dispose()", "    pass"),), False,
        ("  PASS  train returns the losses", "  FAIL  train leaves no tensors behind", "left 1 tensor(s) alive")),
    Row("ex09_dot_product_test", "dy_forgotten_again", (("[dy * x / mt.sqrt(x * x + 1.0)]", "[x / mt.sqrt(x * x + 1.0)]"),), False,
        ("  PASS  dot_test returns <u, J v> and <J^T u, v>", "  FAIL  soft_abs's VJP is right for every dy", "hint: did you multiply by dy?")),
    Row("ex09_dot_product_test", "one_side_twice", (("return (u * jv).sum().item(), (jtu * v).sum().item()", "return (u * jv).sum().item(), (u * jv).sum().item()"),), False,
        ("  PASS  dot_test returns <u, J v> and <J^T u, v>", "  FAIL  dot_test tells a VJP that ignores dy from a right one")),
    Row("ex09_dot_product_test", "finite_difference_side",  # allowed: J v from a central difference is a dot-product test too
        (("    _, jv = mt.jvp(f, [x], [v])", "    jv = (f(x + v * 1e-6) - f(x - v * 1e-6)) / 2e-6"),), True),
    Row("ex09b_stable_loss", "naive_again", (("return (mt.softplus(logits) - logits * labels).mean()",
        "return -(labels * mt.log(mt.sigmoid(logits)) + (1.0 - labels) * mt.log(1.0 - mt.sigmoid(logits))).mean()"),), False,
        ("  FAIL  bce is exact for small and large logits", "an overflow (or a log of 0) on the way")),
    Row("ex09b_stable_loss", "builtin_loss",  # allowed: the statement says so
        (("return (mt.softplus(logits) - logits * labels).mean()", "return mt.sigmoid_cross_entropy(labels, logits)"),), True),
]

SPECIAL = {
    "special/raises_at_import.py": 'EXERCISE = "ex00_gradient_by_hand"\nraise RuntimeError("boom")\n',
    "special/exits_at_import.py": 'import sys\nEXERCISE = "ex01_variables_sgd"\nsys.exit(3)\n',
    "special/os_exit.py": 'import os\nEXERCISE = "ex01_variables_sgd"\nos._exit(7)\n',
    "special/huge_allocation.py": 'EXERCISE = "ex01_variables_sgd"\nlots = [0.0] * 10**10\n',
    "special/syntax_error.py": 'EXERCISE = "ex00_gradient_by_hand"\ndef f(x:\n',
    "special/error_in_check.py": 'EXERCISE = "ex07_profile_memory"\ndef leftover_tensors(fn):\n    return 1 / 0\n',
    "special/exit_in_check.py": 'import sys\nEXERCISE = "ex07_profile_memory"\ndef leftover_tensors(fn):\n    sys.exit(3)\n',
    "special/prints.py": 'EXERCISE = "ex07_profile_memory"\nprint("hello from the student")\n',
    "special/not_an_exercise.py": "x = 1\n",
    "special/unknown_exercise.py": 'EXERCISE = "ex04_softplus_vpj"\n',
    "special/microtape_error.py": (
        'import microtape as mt\nEXERCISE = "ex02_linear_model"\n'
        "def loss_fn(w, b):\n    return mt.tensor([1.0, 2.0]) * mt.tensor([1.0, 2.0, 3.0])\n"
    ),
}


def apply(row: Row) -> str:
    source = (SOLUTIONS / f"{row.name}.py").read_text(encoding="utf-8")
    for old, new in row.edits:
        assert old in source, f"the solution of {row.name} no longer contains {old!r}: update the row {row.label!r}"
        source = source.replace(old, new, 1)
    return source


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, object], dict[str, dict[str, object]]]:
    """Grade every solution, every untouched starter, every row and every special file in one run."""
    root = tmp_path_factory.mktemp("class")
    for name in NAMES:
        for folder, source in (("solutions", SOLUTIONS), ("starters", STARTERS)):
            (root / folder).mkdir(exist_ok=True)
            shutil.copy(source / f"{name}.py", root / folder / f"{name}.py")
    for row in ROWS:
        (root / row.file).parent.mkdir(exist_ok=True)
        (root / row.file).write_text(apply(row), encoding="utf-8")
    for file, text in SPECIAL.items():
        (root / file).parent.mkdir(exist_ok=True)
        (root / file).write_text(text, encoding="utf-8")
    code, document = grade_json(root, "--hint", "3", "--jobs", "2", "--timeout", "120")
    return code, document, entries_of(document)


def checks_of(name: str) -> list[Check]:
    exercise = load_exercise(name)
    assert exercise is not None
    return exercise.checks


def entry(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]], file: str) -> dict[str, object]:
    return graded[2][file]


def report(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]], file: str) -> str:
    return str(entry(graded, file)["report"])


# -- the set of exercises ----------------------------------------------------------------


def test_at_least_17_exercises_covering_every_chapter_with_8_debugging_ones() -> None:
    found = exercises()
    assert len(found) >= 17 and [ex.name for ex in found] == NAMES
    assert {ex.chapter for ex in found} >= set(range(8))
    assert sum(ex.kind == "debug" for ex in found) >= 8


def test_every_exercise_has_a_starter_checks_and_a_solution_and_nothing_else() -> None:
    starters = {p.stem for p in STARTERS.glob("ex*.py")}
    solutions = {p.stem for p in SOLUTIONS.glob("ex*.py")}
    assert starters == set(NAMES) == solutions
    assert not list(STARTERS.rglob("[0-9][0-9]_*.py"))  # never mistaken for chapters


@pytest.mark.parametrize("name", NAMES)
def test_starter_states_its_task_chapter_and_how_to_check_it(name: str) -> None:
    source = (STARTERS / f"{name}.py").read_text(encoding="utf-8")
    exercise = load_exercise(name)
    assert exercise is not None
    assert source.startswith('"""') and f"Chapter {exercise.chapter}, " in source.split('"""')[1]
    assert f"python -m microtape grade {name}.py" in source
    assert f'EXERCISE = "{name}"' in source


@pytest.mark.parametrize("name", NAMES)
def test_every_check_has_three_levels_of_hints(name: str) -> None:
    exercise = load_exercise(name)
    assert exercise is not None and exercise.checks
    for check in exercise.checks:
        assert len(check.hints) == 3 and all(h.strip() for h in check.hints), check.name


def test_every_exercise_has_a_wrong_answer_in_the_table() -> None:
    assert {row.name for row in ROWS if not row.passes} == set(NAMES)


# -- solutions pass, starters fail without giving the answer away ---------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_solution_passes(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]], name: str) -> None:
    e = entry(graded, f"solutions/{name}.py")
    assert e["status"] == "passed", e["report"]
    assert e["checks_passed"] == e["checks_total"] == len(checks_of(name))
    assert str(e["report"]).splitlines()[-1] == f"{name}: all {e['checks_total']} checks passed."


@pytest.mark.parametrize("name", NAMES)
def test_untouched_starter_fails_with_a_hint(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]], name: str) -> None:
    e = entry(graded, f"starters/{name}.py")
    text = str(e["report"])
    assert e["status"] == "failed" and e["exercise"] == name, text
    assert "hint: " in text and "hint 3: " in text and "Traceback" not in text
    assert text.splitlines()[-1].startswith(f"{name}: ") and "checks passed" in text.splitlines()[-1]


def solution_lines(name: str) -> list[str]:
    """The solution's lines that are not in the starter: blank, comment, import and shared lines skipped."""
    starter = {line.strip() for line in (STARTERS / f"{name}.py").read_text(encoding="utf-8").splitlines()}
    lines = []
    for raw in (SOLUTIONS / f"{name}.py").read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        code = line.split("  # ")[0].strip()
        if len(code) < 8 or line in starter or code in starter or line.startswith(("#", "import ", "from ", '"""')):
            continue
        lines.append(code)
    return lines


@pytest.mark.parametrize("name", NAMES)
def test_no_solution_line_is_printed_for_an_untouched_starter(
    graded: tuple[int, dict[str, object], dict[str, dict[str, object]]], name: str
) -> None:
    lines = solution_lines(name)
    assert lines, f"{name}: the solution should differ from the starter"
    e = entry(graded, f"starters/{name}.py")
    shown = str(e["report"]) + json.dumps(e, ensure_ascii=False)  # hint level 3 shows every level
    assert [line for line in lines if line in shown] == []
    hints = [h for check in checks_of(name) for h in check.hints]
    assert [line for line in lines if any(line in h for h in hints)] == []


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row.name}-{row.label}")
def test_table_row(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]], row: Row) -> None:
    e = entry(graded, row.file)
    text = str(e["report"])
    assert e["exercise"] == row.name
    assert e["status"] == ("passed" if row.passes else "failed"), text
    for expected in row.expect:
        assert expected in text, f"{expected!r} not in:\n{text}"
    assert "Traceback" not in text


# -- accidents are reported and grading goes on ----------------------------------------------------


def test_an_exception_at_import_is_reported(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]]) -> None:
    e = entry(graded, "special/raises_at_import.py")
    assert e["status"] == "failed" and "could not load the file" in str(e["message"])
    assert "loading the file raised RuntimeError (raises_at_import.py:2 in <module>):" in str(e["report"])
    assert "boom" in str(e["report"])


def test_sys_exit_at_import_or_in_a_check_is_reported(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]]) -> None:
    assert "SystemExit" in report(graded, "special/exits_at_import.py")
    e = entry(graded, "special/exit_in_check.py")
    assert e["status"] == "failed" and "your code raised SystemExit (exit_in_check.py:4 in leftover_tensors)" in str(e["report"])


def test_a_process_that_dies_is_reported_as_crashed(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]]) -> None:
    e = entry(graded, "special/os_exit.py")
    assert e["status"] == "crashed" and "exit status 7" in str(e["message"])


@pytest.mark.skipif(sys.platform == "win32", reason="no memory limit on Windows")
def test_a_huge_allocation_is_a_memory_error(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]]) -> None:
    e = entry(graded, "special/huge_allocation.py")
    assert e["status"] == "failed" and "MemoryError" in str(e["report"])


def test_student_errors_are_reported_with_their_lines(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]]) -> None:
    assert "SyntaxError (syntax_error.py:2)" in report(graded, "special/syntax_error.py")
    text = report(graded, "special/error_in_check.py")
    assert "your code raised ZeroDivisionError (error_in_check.py:3 in leftover_tensors):" in text
    assert "the file defines no profile_layer()" in text and "Traceback" not in text
    assert "your code raised ShapeError (microtape_error.py:4 in loss_fn):" in report(graded, "special/microtape_error.py")


def test_what_a_file_prints_is_shown(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]]) -> None:
    e = entry(graded, "special/prints.py")
    assert e["output"] == "hello from the student\n"
    assert "    | hello from the student" in str(e["report"])


def test_files_that_are_not_exercises_are_errors(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]]) -> None:
    assert entry(graded, "special/not_an_exercise.py")["status"] == "error"
    assert 'no line EXERCISE = "..."' in report(graded, "special/not_an_exercise.py")
    assert "did you mean 'ex04_softplus_vjp'?" in report(graded, "special/unknown_exercise.py")


@pytest.mark.slow
def test_runaway_files_time_out_and_grading_goes_on(tmp_path: Path) -> None:
    """With ``--jobs 1`` the second runaway file is graded after the first was stopped, and each is
    stopped soon after its 3 s (a margin of 6 s for a busy machine; a limit ten times too long would
    take 30 s). No file here has to *pass* within 3 s, which two busy cores cannot promise: passing
    files are graded with generous limits in the other tests."""
    (tmp_path / "at_import.py").write_text('EXERCISE = "ex00_gradient_by_hand"\nwhile True:\n    pass\n', encoding="utf-8")
    in_check = (SOLUTIONS / "ex00_gradient_by_hand.py").read_text(encoding="utf-8")
    in_check = in_check.replace("    return 3.0 * x * x - 2.0", "    while True:\n        pass")
    (tmp_path / "in_check.py").write_text(in_check, encoding="utf-8")
    code, document = grade_json(tmp_path, "--timeout", "3", "--jobs", "1")
    listed = document["files"]
    assert isinstance(listed, list)
    files = {Path(str(e["path"])).name: e for e in listed}
    assert code == 1 and list(files) == ["at_import.py", "in_check.py"]
    assert files["at_import.py"]["status"] == "timeout"
    assert "stopped after 3 s while loading the file" in str(files["at_import.py"]["message"])
    assert files["in_check.py"]["status"] == "timeout"
    assert "  TIME  df_by_hand matches finite differences" in str(files["in_check.py"]["report"])
    for entry in files.values():
        assert 3.0 <= float(str(entry["seconds"])) < 9.0, entry["seconds"]


# -- the JSON document and the table ---------------------------------------------------------------


def test_json_document_follows_its_schema(graded: tuple[int, dict[str, object], dict[str, dict[str, object]]]) -> None:
    code, document, entries = graded
    assert code == 1
    assert document["schema_version"] == SCHEMA_VERSION == 2
    assert set(document) == {"schema_version", "microtape_version", "timeout_seconds", "memory_limit_mb", "hint_level",
                             "checks_dir", "assignment", "seed", "all_passed", "score", "max_score", "summary", "files"}
    assert document["assignment"] is None
    assert document["all_passed"] is False and document["hint_level"] == 3
    summary = document["summary"]
    assert isinstance(summary, dict) and summary["files"] == len(entries) == 2 * len(NAMES) + len(ROWS) + len(SPECIAL)
    assert sum(summary[s] for s in ("passed", "failed", "timeout", "crashed", "error")) == summary["files"]
    for e in entries.values():
        assert set(e) == {"path", "exercise", "chapter", "title", "status", "checks_passed", "checks_total", "score",
                          "max_score", "seconds", "message", "checks", "output", "report"}
        assert e["status"] in ("passed", "failed", "timeout", "crashed", "error")
        assert isinstance(e["seconds"], float) and isinstance(e["checks"], list)
        for c in e["checks"]:
            assert set(c) == {"name", "points", "score", "hidden", "status", "details", "hints", "seconds"}
            assert c["status"] in ("PASS", "FAIL", "TODO", "TIMEOUT", "CRASH", "NOT_RUN")
            assert (c["hints"] == []) == (c["status"] in ("PASS", "NOT_RUN"))


@pytest.mark.slow
def test_a_folder_gives_a_table_and_exit_0_when_everything_passes(tmp_path: Path) -> None:
    for name in ("ex01_variables_sgd", "ex03_second_derivative"):
        shutil.copy(SOLUTIONS / f"{name}.py", tmp_path / f"{name}.py")
    done = cli(tmp_path, "--jobs", "2", "--timeout", "120")  # a generous limit: these files must pass on busy cores
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert lines[0].startswith("random inputs drawn with seed ")
    assert lines[1].split() == ["file", "exercise", "checks", "score", "status", "time"]
    assert "ex01_variables_sgd" in lines[2] and " 5/5 " in lines[2] and " PASS " in lines[2]
    assert lines[-1] == "2 of 2 files passed every check."
    shutil.copy(STARTERS / "ex00_gradient_by_hand.py", tmp_path / "ex00_gradient_by_hand.py")
    done = cli(tmp_path, "--jobs", "2", "--timeout", "120")
    assert done.returncode == 1 and "2 of 3 files passed every check (1 failed)." in done.stdout


@pytest.mark.slow
def test_one_file_prints_its_checks_and_hints_by_level(tmp_path: Path) -> None:
    starter = tmp_path / "ex04_softplus_vjp.py"  # begun: prove() written, the VJP not yet
    text = (STARTERS / "ex04_softplus_vjp.py").read_text(encoding="utf-8")
    starter.write_text(text.replace('raise NotImplementedError("TODO 2', 'return mt.check_grads(softplus, [mt.tensor([1.0, 2.0, 3.0])], order=2)  # ("TODO 2'),
                       encoding="utf-8")
    done = cli(starter, "--timeout", "120")  # a generous limit: the report must be the checks', not a timeout
    assert done.returncode == 1 and done.stderr == ""
    assert "  TODO  the VJP agrees with finite differences" in done.stdout and "not done yet: TODO 1" in done.stdout
    assert "hint: " in done.stdout and "hint 2: " not in done.stdout and "--hint 2 for a closer hint" in done.stdout
    assert "hint 2: " in cli(starter, "--hint", "2", "--timeout", "120").stdout
    solved = cli(SOLUTIONS / "ex04_softplus_vjp.py", "--timeout", "120")
    assert solved.returncode == 0 and solved.stdout.splitlines()[-1] == "ex04_softplus_vjp: all 5 checks passed."


@pytest.mark.slow
def test_usage_errors_are_exit_2() -> None:
    done = cli("ex04_softplus_vjp")
    assert done.returncode == 2 and "no such file or folder" in done.stdout and "ex04_softplus_vjp.py" in done.stdout
    assert cli(REPO / "pyproject.toml").returncode == 2  # one file that is not an exercise
    out_of_range = cli(SOLUTIONS / "ex01_variables_sgd.py", "--timeout", "0")
    assert out_of_range.returncode == 2 and "out of range" in out_of_range.stdout


# -- the teachers' page ---------------------------------------------------------------------------


def test_the_lesson_plan_adds_up_and_covers_every_exercise() -> None:
    text = (REPO / "docs" / "teachers.rst").read_text(encoding="utf-8")
    plan = text.split("A lesson plan\n")[1].split("\n----")[0]
    values = [match.group(1) for line in plan.splitlines() if (match := re.fullmatch(r"(?:\* )?- (.*)", line.strip()))]
    rows = [values[i : i + 3] for i in range(3, len(values), 3)]  # after the header row
    sessions: dict[str, int] = {}
    totals: dict[str, int] = {}
    for session, part, minutes in rows:
        if session.startswith("**"):
            totals[session.strip("*")] = int(minutes.strip("*"))
        else:
            sessions[session] = sessions.get(session, 0) + int(minutes)
    course = totals.pop("all")
    assert sessions == totals and sum(totals.values()) == course
    assert f"**{course} minutes**" in plan
    homework = sum(int(m) for _, part, m in rows if any(part.endswith(f"{n}``") for n in NAMES if n[4] in "bcde"))
    assert f"({homework} minutes of the plan): {course - homework} minutes of class remain" in " ".join(plan.split())
    planned = [part.split("``")[1] for _, part, _ in rows if part.startswith("Exercise ``")]
    assert sorted(planned) == NAMES
