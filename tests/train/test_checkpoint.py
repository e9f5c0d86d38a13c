"""Checkpoints: round trips, atomic writes that keep the file's permissions, and files that must be refused.

Every refused load is checked twice: it raises ``CheckpointError`` with a
message naming the problem, and no variable (nor optimizer) has changed.
"""

from __future__ import annotations

import builtins
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microtape as mt
from microtape.train import atomic_write, checkpoint

from .._fixtures import free_variables_made_by_the_test  # noqa: F401 - autouse in this module




@pytest.fixture
def model() -> tuple[mt.Variable, mt.Variable, mt.Variable]:
    w = mt.variable(mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), name="w")
    b = mt.variable(mt.scalar(-0.5), name="b")
    scale = mt.variable(mt.tensor([0.1, 1e-300, -2.5e300]), trainable=False, name="scale")
    return w, b, scale


def values(*variables: mt.Variable) -> list[list[float]]:
    return [v.data_sync() for v in variables]


def write(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def valid_doc() -> dict[str, object]:
    return {
        "format": "microtape-checkpoint",
        "version": 1,
        "variables": [
            {"name": "w", "shape": [2, 3], "trainable": True, "data": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]},
            {"name": "b", "shape": [], "trainable": True, "data": [0.25]},
            {"name": "scale", "shape": [3], "trainable": False, "data": [1.0, 2.0, 3.0]},
        ],
    }


# ── round trips ────────────────────────────────────────────────────────────────


def test_round_trip_into_variables(tmp_path: Path, model: tuple[mt.Variable, mt.Variable, mt.Variable]) -> None:
    w, b, scale = model
    path = tmp_path / "model.json"
    mt.save_variables(path, [w, b, scale])
    saved = values(w, b, scale)
    _ = w.assign(mt.zeros((2, 3))), b.assign(mt.scalar(9.0)), scale.assign(mt.ones((3,)))
    restored = mt.load_variables(path, into=[w, b, scale])
    assert restored == {"w": w, "b": b, "scale": scale}
    assert values(w, b, scale) == saved  # exact: JSON keeps every float64 digit
    assert scale.trainable is False and w.trainable is True


def test_load_without_into_returns_fresh_tensors(
    tmp_path: Path, model: tuple[mt.Variable, mt.Variable, mt.Variable]
) -> None:
    w, b, scale = model
    path = tmp_path / "model.json"
    mt.save_variables(str(path), [w, b, scale])
    before = mt.memory().num_tensors
    loaded = mt.load_variables(str(path))
    assert sorted(loaded) == ["b", "scale", "w"]
    assert not any(isinstance(t, mt.Variable) for t in loaded.values())
    assert loaded["w"].shape == (2, 3) and loaded["b"].shape == ()
    assert [t.data_sync() for t in (loaded["w"], loaded["b"], loaded["scale"])] == values(w, b, scale)
    assert mt.memory().num_tensors == before + 3
    mt.dispose(loaded)
    assert mt.memory().num_tensors == before


def test_the_file_is_the_documented_json(tmp_path: Path, model: tuple[mt.Variable, mt.Variable, mt.Variable]) -> None:
    w, b, scale = model
    path = tmp_path / "model.json"
    mt.save_variables(path, {"layer1/w": w, "layer1/b": b})
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc == {
        "format": "microtape-checkpoint",
        "version": 1,
        "variables": [
            {"name": "layer1/w", "shape": [2, 3], "trainable": True, "data": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]},
            {"name": "layer1/b", "shape": [], "trainable": True, "data": [-0.5]},
        ],
    }
    assert len(path.read_text().splitlines()) == 8  # one variable per line: readable and diffable


def test_dict_names_are_stable_across_generated_names(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    a = mt.variable(mt.tensor([1.0, 2.0]))  # a generated name such as Variable_12
    mt.save_variables(path, {"weights": a})
    other = mt.variable(mt.zeros((2,)))  # another generated name
    mt.load_variables(path, into={"weights": other})
    assert other.data_sync() == [1.0, 2.0]


def test_plain_tensors_can_be_saved_under_a_name(tmp_path: Path) -> None:
    path = tmp_path / "stats.json"
    mt.save_variables(path, {"mean": mt.tensor([0.5, 1.5])})
    assert json.loads(path.read_text())["variables"][0]["trainable"] is False
    loaded = mt.load_variables(path)
    assert loaded["mean"].data_sync() == [0.5, 1.5]


def test_saving_again_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    w = mt.variable(mt.tensor([1.0]), name="w")
    mt.save_variables(path, [w])
    w.assign(mt.tensor([2.0]))
    mt.save_variables(path, [w])
    assert mt.load_variables(path)["w"].data_sync() == [2.0]
    assert sorted(os.listdir(tmp_path)) == ["model.json"]  # no temporary file left behind


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(0, 3), max_size=3),
    seed=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=5),
)
def test_any_finite_values_round_trip_exactly(tmp_path_factory: pytest.TempPathFactory, shape: list[int], seed: list[float]) -> None:
    size = 1
    for d in shape:
        size *= d
    data = [seed[i % len(seed)] for i in range(size)]
    path = tmp_path_factory.mktemp("prop") / "v.json"
    v = mt.variable(mt.tensor(data, shape=shape))
    mt.save_variables(path, {"v": v})
    loaded = mt.load_variables(path)["v"]
    assert loaded.shape == tuple(shape)
    assert loaded.data_sync() == data  # bit for bit, -0.0 and subnormals included
    loaded.dispose()
    v.dispose()


# ── optimizer state ────────────────────────────────────────────────────────────


def test_optimizer_state_round_trip_resumes_training_exactly(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    x, y = mt.tensor([1.0, 2.0, 3.0, 4.0]), mt.tensor([1.0, 3.0, 5.0, 7.0])
    w, b = mt.variable(mt.scalar(0.0), name="w"), mt.variable(mt.scalar(0.0), name="b")
    loss = lambda: ((w * x + b - y) ** 2).mean()  # noqa: E731
    opt = mt.train.adam(0.1)
    for _ in range(5):
        opt.minimize(loss)
    mt.save_variables(path, [w, b], optimizer=opt)
    for _ in range(5):
        opt.minimize(loss)
    expected = values(w, b)
    doc = json.loads(path.read_text())
    assert doc["optimizer"]["class"] == "Adam" and doc["optimizer"]["iterations"] == 5
    assert [s["name"] for s in doc["optimizer"]["slots"]] == ["w/m", "b/m", "w/v", "b/v"]  # TF.js order

    fresh = mt.train.adam(0.1)  # as after a restart
    mt.load_variables(path, into=[w, b], optimizer=fresh)
    assert fresh.iterations == 5
    for _ in range(5):
        fresh.minimize(loss)
    assert values(w, b) == expected
    opt.dispose()
    fresh.dispose()


def test_optimizer_state_must_match_the_optimizer(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w")
    opt = mt.train.momentum(0.1, 0.9)
    opt.minimize(lambda: (w * w).sum())
    mt.save_variables(path, [w], optimizer=opt)
    adam = mt.train.adam(0.1)
    before = values(w)
    with pytest.raises(mt.CheckpointError, match="state of a Momentum optimizer, not of a Adam one"):
        mt.load_variables(path, into=[w], optimizer=adam)
    assert values(w) == before and adam.iterations == 0 and adam.slots == {}
    mt.save_variables(path, [w])
    with pytest.raises(mt.CheckpointError, match="no optimizer state"):
        mt.load_variables(path, into=[w], optimizer=opt)
    assert opt.iterations == 1


def test_optimizer_slots_that_do_not_fit_change_nothing(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w")
    opt = mt.train.adam(0.1)
    opt.minimize(lambda: (w * w).sum())
    mt.save_variables(path, [w], optimizer=opt)
    doc = json.loads(path.read_text())
    doc["optimizer"]["slots"][1]["shape"] = [1]
    doc["optimizer"]["slots"][1]["data"] = [0.0]
    write(path, doc)
    w.assign(mt.tensor([7.0, 7.0]))
    slots_before = {k: v.data_sync() for k, v in opt.slots["w"].items()}
    with pytest.raises(mt.CheckpointError, match="optimizer state does not fit"):
        mt.load_variables(path, into=[w], optimizer=opt)
    assert w.data_sync() == [7.0, 7.0]  # the variables were not assigned either
    assert {k: v.data_sync() for k, v in opt.slots["w"].items()} == slots_before
    opt.dispose()


# ── atomic writes ──────────────────────────────────────────────────────────────


@pytest.mark.parametrize("failing", ["os.replace", "os.fsync", "json.dumps"])
def test_a_failure_mid_write_keeps_the_previous_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    path = tmp_path / "model.json"
    w = mt.variable(mt.tensor([1.0, 2.0]), name="w")
    mt.save_variables(path, [w])
    old = path.read_bytes()
    w.assign(mt.tensor([3.0, 4.0]))

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    module, name = failing.split(".")
    monkeypatch.setattr({"os": os, "json": json}[module], name, boom)
    with pytest.raises((mt.CheckpointError, OSError)) as info:
        mt.save_variables(path, [w])
    monkeypatch.undo()
    if failing != "json.dumps":
        assert isinstance(info.value, mt.CheckpointError)
        assert "No space left on device" in str(info.value) and "hint:" in str(info.value)
    assert path.read_bytes() == old  # the previous checkpoint is intact
    assert sorted(os.listdir(tmp_path)) == ["model.json"]  # and no temporary file is left
    mt.load_variables(path, into=[w])
    assert w.data_sync() == [1.0, 2.0]


def test_the_temporary_file_is_in_the_same_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src: str, dst: str) -> None:
        seen.append((src, dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    mt.save_variables(tmp_path / "m.json", {"x": mt.scalar(1.0)})
    [(src, dst)] = seen
    assert os.path.dirname(src) == os.path.dirname(os.path.abspath(dst)) == str(tmp_path)
    assert os.path.basename(src).startswith(".m.json.") and src.endswith(".tmp")


@pytest.mark.skipif(os.name != "posix", reason="file modes and the umask are POSIX")
@pytest.mark.parametrize("proc", ["/proc readable", "no /proc"])
def test_a_new_file_gets_the_umask_mode_and_a_replaced_file_keeps_its_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proc: str
) -> None:
    if proc == "no /proc":  # as on macOS: the umask is read by setting it and putting it back

        def no_proc(file: object, *args: Any, **kwargs: Any) -> Any:
            if file == "/proc/self/status":
                raise FileNotFoundError(2, "No such file or directory")
            return builtins.open(file, *args, **kwargs)  # type: ignore[call-overload]  # open's own overloads

        monkeypatch.setattr(atomic_write, "open", no_proc, raising=False)
    path = tmp_path / "m.json"
    old_mask = os.umask(0o027)  # unusual on purpose: mkstemp's 0o600 and the usual 0o644 both differ
    try:
        mt.save_variables(path, {"x": mt.scalar(1.0)})
        assert os.umask(0o027) == 0o027  # saving left the umask as it was
    finally:
        os.umask(old_mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # what open(path, "w") gives: 0o666 less the umask
    path.chmod(0o604)
    mt.save_variables(path, {"x": mt.scalar(2.0)})
    assert stat.S_IMODE(path.stat().st_mode) == 0o604  # replacing keeps the old file's permissions
    assert mt.load_variables(path)["x"].item() == 2.0


def test_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(mt.CheckpointError, match="cannot write checkpoint") as info:
        mt.save_variables(tmp_path / "nope" / "m.json", {"x": mt.scalar(1.0)})
    assert isinstance(info.value.__cause__, FileNotFoundError)
    assert not (tmp_path / "nope").exists()


# ── save refuses what it cannot write faithfully ───────────────────────────────


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: [mt.variable(mt.tensor([1.0, float("nan")]))], "holds nan at flat index 1"),
        (lambda: {"x": mt.tensor([float("-inf")])}, "holds -inf at flat index 0"),
        (lambda: [], "no variables to save"),
        (lambda: [mt.tensor([1.0])], "not a Variable"),
        (lambda: {"": mt.scalar(1.0)}, "not a non-empty str"),
        (lambda: {"x": [1.0]}, "not a tensor or variable"),
        (lambda: mt.scalar(1.0), "must be a list of variables or a dict"),
    ],
    ids=["nan", "inf-in-dict", "empty", "plain-tensor-in-list", "empty-name", "list-value", "bare-tensor"],
)
def test_save_refuses_bad_input_and_writes_nothing(tmp_path: Path, make: Callable[[], object], message: str) -> None:
    path = tmp_path / "m.json"
    with pytest.raises(mt.CheckpointError, match=message.replace("(", r"\(")) as info:
        mt.save_variables(path, make())  # type: ignore[arg-type]  # deliberately wrong input
    assert "hint:" in str(info.value)
    assert not path.exists() and os.listdir(tmp_path) == []


def test_save_refuses_a_repeated_variable(tmp_path: Path) -> None:
    w = mt.variable(mt.scalar(1.0), name="w")
    with pytest.raises(mt.CheckpointError, match="'w' appears twice"):
        mt.save_variables(tmp_path / "m.json", [w, w])


def test_save_refuses_nan_in_optimizer_slots(tmp_path: Path) -> None:
    w = mt.variable(mt.tensor([1.0]), name="w")
    opt = mt.train.adam(0.1)
    opt.apply_gradients({w: mt.tensor([float("nan")])})
    w.assign(mt.tensor([1.0]))
    with pytest.raises(mt.CheckpointError, match="optimizer slot 'w/m' holds nan"):
        mt.save_variables(tmp_path / "m.json", [w], optimizer=opt)
    assert os.listdir(tmp_path) == []
    opt.dispose()


# ── load refuses bad files, and changes nothing ────────────────────────────────

DEEP = "[" * 100_000 + "]" * 100_000


def replace_in(doc: dict[str, object], **changes: object) -> dict[str, object]:
    doc = dict(doc)
    doc.update(changes)
    return doc


def edit_variable(index: int, **changes: object) -> dict[str, object]:
    doc = valid_doc()
    records = [dict(r) for r in doc["variables"]]  # type: ignore[attr-defined]  # valid_doc's list of dicts
    records[index].update(changes)
    doc["variables"] = records
    return doc


BAD_FILES: dict[str, tuple[str | bytes, str]] = {
    "empty": ("", "not valid JSON"),
    "not-json": ("hello, world", "not valid JSON"),
    "pickle": (b"\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00}\x94.", "not UTF-8"),
    "truncated": (json.dumps(valid_doc())[:80], "truncated"),
    "top-level-list": ("[1, 2, 3]", "is a list, not an object"),
    "deeply-nested": (DEEP, "nested 100000 levels deep"),
    "nested-in-data": (
        json.dumps(edit_variable(1, data=[[[[[[[[[[[[[[[[[[[0.25]]]]]]]]]]]]]]]]]]])),
        "levels deep",
    ),
    "wrong-format": (json.dumps(replace_in(valid_doc(), format="keras")), "'keras', not 'microtape-checkpoint'"),
    "no-format": (json.dumps({"version": 1, "variables": []}), '"format" is None'),
    "wrong-version": (json.dumps(replace_in(valid_doc(), version=2)), "this microtape reads version 1"),
    "version-as-text": (json.dumps(replace_in(valid_doc(), version="1")), "this microtape reads version 1"),
    "unknown-field": (json.dumps(replace_in(valid_doc(), extra=1)), "unknown fields ['extra']"),
    "no-variables": (json.dumps({"format": "microtape-checkpoint", "version": 1}), "lacks ['variables']"),
    "variables-not-a-list": (json.dumps(replace_in(valid_doc(), variables={})), "not a list"),
    "record-not-an-object": (json.dumps(replace_in(valid_doc(), variables=[1])), "variables[0] is a number"),
    "nan": (json.dumps(edit_variable(0, data=[1.0, 2.0, float("nan"), 4.0, 5.0, 6.0])), "variables[0] ('w') has NaN at data[2]"),
    "infinity": (json.dumps(edit_variable(0, data=[1.0, 2.0, float("-inf"), 4.0, 5.0, 6.0])), "has -Infinity at data[2]"),
    "nan-as-version": (json.dumps(valid_doc()).replace('"version": 1', '"version": NaN'), '"version" is NaN'),
    "nan-in-shape": (json.dumps(valid_doc()).replace('"shape": []', '"shape": [NaN]'), "has the shape [NaN]"),
    "overflow": (json.dumps(edit_variable(1, data=[0.0])).replace("[0.0]", "[1e999]"), "('b') has 1e999 at data[0]"),
    "long-integer": (json.dumps(edit_variable(1, data=[0.0])).replace("[0.0]", "[" + "9" * 400 + "]"), "has 9999"),
    "string-in-data": (json.dumps(edit_variable(0, data=[1.0, 2.0, "3", 4.0, 5.0, 6.0])), "string '3' at data[2]"),
    "null-in-data": (json.dumps(edit_variable(0, data=[1.0, None, 3.0, 4.0, 5.0, 6.0])), "null None at data[1]"),
    "bool-in-data": (json.dumps(edit_variable(1, data=[True])), "boolean True at data[0]"),
    "data-not-a-list": (json.dumps(edit_variable(1, data=0.25)), '"data" of type number'),
    "too-few-values": (json.dumps(edit_variable(0, data=[1.0, 2.0])), "needs 6 values, but its data has 2"),
    "negative-dimension": (json.dumps(edit_variable(0, shape=[-2, -3])), "has the shape [-2, -3]"),
    "fractional-dimension": (json.dumps(edit_variable(0, shape=[2.0, 3])), "has the shape [2.0, 3]"),
    "huge-dimension": (json.dumps(edit_variable(0, shape=[10**40])), "has the shape"),
    "shape-not-a-list": (json.dumps(edit_variable(0, shape="2x3")), "has the shape '2x3'"),
    "trainable-not-bool": (json.dumps(edit_variable(0, trainable="yes")), '"trainable": \'yes\''),
    "empty-name": (json.dumps(edit_variable(0, name="")), "not a non-empty string"),
    "repeated-name": (json.dumps(edit_variable(1, name="w", shape=[2, 3], data=[0.0] * 6)), "appear more than once"),
    "missing-field": (
        json.dumps(replace_in(valid_doc(), variables=[{"name": "w", "shape": [], "data": [1.0]}])),
        "lacks ['trainable']",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_files_are_refused_and_nothing_changes(
    tmp_path: Path, model: tuple[mt.Variable, mt.Variable, mt.Variable], case: str
) -> None:
    content, message = BAD_FILES[case]
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    w, b, scale = model
    opt = mt.train.adam(0.1)
    before = (values(w, b, scale), mt.memory())
    for into in (None, [w, b, scale]):
        with pytest.raises(mt.CheckpointError) as info:
            mt.load_variables(path, into=into, optimizer=opt)
        text = str(info.value)
        assert message in text, text
        assert text.startswith(f"checkpoint {str(path)!r}: ") and "hint:" in text
        assert info.value.path == str(path)  # type: ignore[attr-defined]  # facts are attributes
        assert info.value.__cause__ is None or not isinstance(info.value.__cause__, RecursionError)
        assert (values(w, b, scale), mt.memory()) == before
    assert opt.iterations == 0 and opt.slots == {}


def test_the_valid_document_used_above_does_load(
    tmp_path: Path, model: tuple[mt.Variable, mt.Variable, mt.Variable]
) -> None:
    w, b, scale = model
    mt.load_variables(write(tmp_path / "ok.json", valid_doc()), into=[w, b, scale])
    assert values(w, b, scale) == [[6.0, 5.0, 4.0, 3.0, 2.0, 1.0], [0.25], [1.0, 2.0, 3.0]]


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as f:
        f.truncate(10_000_000)  # sparse: 10 MB of zero bytes, never parsed
    with pytest.raises(mt.CheckpointError, match="10000000 bytes, more than max_bytes=1000000"):
        mt.load_variables(path, max_bytes=1_000_000)


def test_a_missing_file_is_a_checkpoint_error(tmp_path: Path) -> None:
    with pytest.raises(mt.CheckpointError, match="No such file or directory") as info:
        mt.load_variables(tmp_path / "missing.json")
    assert isinstance(info.value.__cause__, FileNotFoundError)


# ── load refuses files that do not fit the variables, and changes nothing ──────


@pytest.mark.parametrize(
    ("doc", "kwargs", "message"),
    [
        (edit_variable(0, shape=[3, 2]), {}, "variable 'w' has shape (3, 2) in the file, but the variable to load into has shape (2, 3)"),
        (edit_variable(1, shape=[1]), {}, "variable 'b' has shape (1,) in the file"),
        (replace_in(valid_doc(), variables=valid_doc()["variables"][:2]), {}, "no variable named 'scale' in the file"),  # type: ignore[index]  # a list
        (replace_in(valid_doc(), variables=[*valid_doc()["variables"], {"name": "extra", "shape": [], "trainable": True, "data": [1.0]}]), {}, "['extra'] that are not among"),  # type: ignore[misc]  # a list
    ],
    ids=["shape", "rank", "missing", "unknown"],
)
def test_files_that_do_not_fit_are_refused_and_nothing_changes(
    tmp_path: Path,
    model: tuple[mt.Variable, mt.Variable, mt.Variable],
    doc: dict[str, object],
    kwargs: dict[str, object],
    message: str,
) -> None:
    w, b, scale = model
    path = write(tmp_path / "m.json", doc)
    before = values(w, b, scale)
    with pytest.raises(mt.CheckpointError) as info:
        mt.load_variables(path, into=[w, b, scale])
    assert message in str(info.value) and "hint:" in str(info.value)
    assert values(w, b, scale) == before


def test_strict_false_ignores_unknown_names(tmp_path: Path, model: tuple[mt.Variable, mt.Variable, mt.Variable]) -> None:
    w, b, scale = model
    path = write(tmp_path / "m.json", valid_doc())
    mt.load_variables(path, into=[w], strict=False)
    assert w.data_sync() == [6.0, 5.0, 4.0, 3.0, 2.0, 1.0] and b.item() == -0.5


@pytest.mark.parametrize(
    ("into", "message"),
    [
        (lambda w: [mt.tensor([1.0])], "not a Variable"),
        (lambda w: {"w": w, 3: w}, "not a non-empty str"),
        (lambda w: [w, w], "names 'w' twice"),
        (lambda w: w, "into must be a list of variables or a dict"),
    ],
    ids=["tensor", "int-key", "twice", "bare-variable"],
)
def test_bad_into_is_refused(
    tmp_path: Path,
    model: tuple[mt.Variable, mt.Variable, mt.Variable],
    into: Callable[[mt.Variable], object],
    message: str,
) -> None:
    w, b, scale = model
    path = write(tmp_path / "m.json", valid_doc())
    before = values(w, b, scale)
    with pytest.raises(mt.CheckpointError, match=message):
        mt.load_variables(path, into=into(w), strict=False)  # type: ignore[call-overload]  # deliberately wrong
    assert values(w, b, scale) == before


def test_load_arguments_are_checked(tmp_path: Path) -> None:
    path = write(tmp_path / "m.json", valid_doc())
    with pytest.raises(mt.CheckpointError, match="max_bytes"):
        mt.load_variables(path, max_bytes=0)
    with pytest.raises(mt.CheckpointError, match="strict"):
        mt.load_variables(path, strict="no")  # type: ignore[call-overload]  # deliberately wrong
    with pytest.raises(mt.CheckpointError, match="path must be"):
        mt.load_variables(42)  # type: ignore[call-overload]  # deliberately wrong
    assert issubclass(mt.CheckpointError, ValueError) and issubclass(mt.CheckpointError, mt.MicrotapeError)


def test_the_format_constants_are_what_the_docs_say() -> None:
    assert (checkpoint.FORMAT, checkpoint.VERSION) == ("microtape-checkpoint", 1)
    assert checkpoint.MAX_BYTES == 64 * 1024 * 1024
