"""The exercises' checks cannot be passed by a lookup table, and every solution passes them at any seed.

The checks run in this process (as the grader's child runs them: each after
``seed_checks(seed, check.name)``), so many seeds cost little. A *lookup
table* is a solution whose functions answer only for the inputs the checks
use at every seed (the fixed cases): the inputs are recorded at two seeds,
and a call with any other input returns None. It must fail at a third seed,
for every exercise (the checks once used fixed inputs only, so a file
returning hard-coded answers got "all checks passed").
"""

from __future__ import annotations

import ast
import contextvars
import functools
import sys
import types
import warnings
from collections.abc import Callable, Collection
from pathlib import Path

import pytest

import microtape as mt
from microtape.exercise import Exercise, Fail, gradcheck_failure, seed_checks
from microtape.classroom.catalog import list_exercises, load_exercise

REPO = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO / "tutorials" / "exercises" / "solutions"
STARTERS = REPO / "tutorials" / "exercises"
NAMES = list_exercises()


def load(name: str, source: str | None = None) -> types.ModuleType:
    """A fresh module from the solution of ``name`` (or from ``source``), as the grader loads a file."""
    path = SOLUTIONS / f"{name}.py"
    module = types.ModuleType(f"_test_exercise_{name}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # dataclasses look modules up while the file runs
    text = path.read_text(encoding="utf-8") if source is None else source
    exec(compile(text, str(path), "exec"), module.__dict__)  # noqa: S102 - the repository's own solution
    return module


def exercise_of(name: str) -> Exercise:
    exercise = load_exercise(name)
    assert exercise is not None
    return exercise


def grade(
    name: str, module: types.ModuleType, seed: int, *, skip: Collection[str] = (), seeding: Callable[[int, str], None] = seed_checks
) -> dict[str, str]:
    """{check name: "PASS", or the status and message}, each check seeded as the grader does (``seeding``); ``skip`` are not run."""
    results: dict[str, str] = {}

    def body() -> None:
        for check in exercise_of(name).checks:
            if check.name in skip:
                continue
            seeding(seed, check.name)
            try:
                contextvars.copy_context().run(lambda: mt.tidy(lambda: check.run(module)))  # noqa: B023 - run now
            except Fail as fail:
                results[check.name] = f"FAIL {fail}"
            except NotImplementedError as err:
                results[check.name] = f"TODO {err}"
            except Exception as err:  # noqa: BLE001 - a wrong answer may break a check in any way: it did not pass
                results[check.name] = f"ERROR {type(err).__name__}: {err}"
            else:
                results[check.name] = "PASS"

    with warnings.catch_warnings():  # as in a grading child: a warning the student's code causes is shown, not raised
        warnings.simplefilter("default")
        contextvars.copy_context().run(lambda: mt.tidy(body))
    return results


# -- a lookup table of the fixed cases ---------------------------------------------------------------


def key_of(value: object) -> object:
    """A value's identity for the table: tensors by shape and values, functions by where they are written."""
    if isinstance(value, mt.Tensor):
        return ("disposed",) if value.is_disposed else ("tensor", value.shape, tuple(value.data_sync()))
    if isinstance(value, (list, tuple)):
        return tuple(key_of(v) for v in value)
    if value is None or type(value) in (bool, int, float, str):
        return value
    code = getattr(value, "__code__", None)
    if code is not None:
        return ("function", getattr(value, "__qualname__", "?"), code.co_firstlineno)
    return type(value).__name__


def state_of(module: types.ModuleType) -> object:
    """The module's data (a check may change XS, say), as part of every key."""
    return tuple(
        (name, key_of(value))
        for name, value in sorted(vars(module).items())
        if not name.startswith("_") and (type(value) in (int, float, str, list) or isinstance(value, mt.Tensor))
    )


def definitions(path: Path) -> dict[str, str]:
    """The source of each function and method of a file: {"f": ..., "Class.method": ...}."""
    text = path.read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = ast.get_source_segment(text, node) or ""
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    found[f"{node.name}.{item.name}"] = ast.get_source_segment(text, item) or ""
    return found


def written_by_the_student(name: str) -> set[str]:
    """The functions a student writes or repairs: those of the solution that differ from the starter's."""
    starter, solution = definitions(STARTERS / f"{name}.py"), definitions(SOLUTIONS / f"{name}.py")
    return {label for label, source in solution.items() if starter.get(label) != source}


class Table:
    """Wraps the student's functions: records the inputs they see, or answers only for known inputs."""

    def __init__(self, name: str) -> None:
        self.labels = written_by_the_student(name)
        self.seen: list[set[object]] = []
        self.known: set[object] | None = None  # None: record into seen[-1]

    def wrap(self, module: types.ModuleType, label: str, real: Callable[..., object], method: bool = False) -> Callable[..., object]:
        @functools.wraps(real)
        def call(*args: object) -> object:
            key = (label, key_of(args[1:] if method else args), state_of(module))
            if self.known is None:
                self.seen[-1].add(key)
            elif key not in self.known:
                return None  # a table has no entry for this input
            return real(*args)

        return call

    def install(self, module: types.ModuleType) -> types.ModuleType:
        for label in self.labels:
            owner_name, _, attr = label.rpartition(".")
            owner: object = getattr(module, owner_name) if owner_name else module
            setattr(owner, attr or label, self.wrap(module, label, getattr(owner, attr or label), method=bool(owner_name)))
        return module


def test_seed_checks_makes_each_check_s_inputs_depend_on_the_seed_and_its_name_only() -> None:
    from microtape.exercise import rng

    seed_checks(5, "a")
    first = [rng().random() for _ in range(3)]
    seed_checks(5, "b")
    rng().random()
    seed_checks(5, "a")
    assert [rng().random() for _ in range(3)] == first
    seed_checks(6, "a")
    assert rng().random() != first[0]


@pytest.mark.parametrize("name", NAMES)
def test_a_lookup_table_of_the_fixed_cases_fails_and_the_solution_passes(name: str) -> None:
    """Guards a bug: with fixed inputs only, a file of hard-coded answers passed every check."""
    for seed in (1, 2):
        results = grade(name, load(name), seed)
        assert set(results.values()) == {"PASS"}, (seed, results)
    table = Table(name)
    assert table.labels, f"{name}: the solution should differ from the starter"
    for seed in (11, 12):
        table.seen.append(set())
        results = grade(name, table.install(load(name)), seed)
        assert set(results.values()) == {"PASS"}, results  # recording changes nothing
    table.known = table.seen[0] & table.seen[1]
    assert table.known, "the checks call nothing"
    results = grade(name, table.install(load(name)), 13)
    failed = {check: text for check, text in results.items() if text != "PASS"}
    assert failed, f"a lookup table of the fixed cases passes every check of {name}"


# -- equality tricks and exact types ---------------------------------------------------------------

ALWAYS_EQUAL = '''
class Anything(int):
    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = int.__hash__
'''


def test_an_int_that_equals_anything_fails_ex07() -> None:
    """Guards a bug: in ex07 an int subclass whose == is always true passed without calling anything."""
    name = "ex07_profile_memory"
    source = (SOLUTIONS / f"{name}.py").read_text(encoding="utf-8") + ALWAYS_EQUAL + (
        "\ndef leftover_tensors(fn):\n    return Anything(0)\n\ndef extra_peak_bytes(fn):\n    return Anything(0)\n"
    )
    results = grade(name, load(name, source), 3)
    assert results["leftover_tensors counts what a call leaves alive"] == "FAIL leftover_tensors(fn) returned Anything, not an int."
    assert results["extra_peak_bytes measures the peak above what was alive"].startswith("FAIL extra_peak_bytes(fn) returned Anything")


def test_a_float_that_equals_anything_fails_ex00() -> None:
    name = "ex00_gradient_by_hand"
    source = (SOLUTIONS / f"{name}.py").read_text(encoding="utf-8") + (
        "\nclass Anything(float):\n    def __eq__(self, other):\n        return True\n    __hash__ = float.__hash__\n"
        "\ndef df_by_hand(x):\n    return Anything(0.0)\n"
    )
    results = grade(name, load(name, source), 3)
    assert "a subclass of float, not a plain Python number" in results["df_by_hand matches finite differences"]


def test_failures_say_how_far_off_without_the_expected_value() -> None:
    name = "ex00_gradient_by_hand"
    source = (SOLUTIONS / f"{name}.py").read_text(encoding="utf-8").replace("return 3.0 * x * x - 2.0", "return 3.0 * x * x")
    text = grade(name, load(name, source), 4)["df_by_hand matches finite differences"]
    assert text == "FAIL df_by_hand(-2.0) is wrong: off by about 20 % from the finite differences of f."
    assert "10" not in text  # f'(-2) = 10: not printed


# -- feedback that names what is wrong -----------------------------------------------------------------


def test_gradcheck_failure_names_the_output_entry_of_each_line() -> None:
    """Guards a bug: a VJP that forgot dy gave three identical lines 'at x[4]: analytic 0.9241, ...'."""

    @mt.custom_grad
    def softplus(x: mt.Tensor) -> tuple[mt.Tensor, Callable[[mt.Tensor], list[mt.Tensor]]]:
        return mt.log(1.0 + mt.exp(x)), lambda dy: [mt.sigmoid(x)]

    report = mt.check_grads(softplus, [mt.tensor([-3.0, -1.0, 0.0, 0.7, 2.5])])
    lines = gradcheck_failure(report, "softplus", ["x"], types.ModuleType("m"), culprit=False).splitlines()[1:]
    assert len(lines) == 3 and len(set(lines)) == 3
    assert all(line.startswith("  d out[") and "/ d x[" in line for line in lines)


def test_a_disposed_tensor_error_names_the_line_that_made_the_tensor_inside_leak_check() -> None:
    """Guards a bug: ex05b's statement promised the line where the tensor was made; the error did not give it."""
    kept: list[mt.Tensor] = []

    def compute() -> None:
        kept.append(mt.tensor([1.0, 3.0]).mean())  # the line the error names

    line = compute.__code__.co_firstlineno + 1
    with mt.leak_check(on_leak="ignore"):
        mt.tidy(compute)
        with pytest.raises(mt.DisposedTensorError) as caught:
            kept[0].data_sync()
    assert caught.value.made_at == f"{__file__}:{line}"
    assert f"at {__file__}:{line}) was disposed by the tidy scope 'compute'" in str(caught.value)
    kept.clear()
    mt.tidy(compute)  # outside leak_check nothing is recorded: no cost, no line
    with pytest.raises(mt.DisposedTensorError) as caught:
        kept[0].data_sync()
    assert caught.value.made_at is None and f"{__file__}:" not in str(caught.value)
