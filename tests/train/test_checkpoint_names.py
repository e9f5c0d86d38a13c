"""Checkpoints: optimizer slots follow the names the user chose.

Before the fix the slots were saved under the variables' own (often generated)
names, ``Variable_7/m``, even when the variables were saved from a dict, and
were restored to whatever live variable had that name: in a new process the
slots missed the variable they belonged to, or went to another one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import microtape as mt

ROOT = Path(__file__).resolve().parents[2]

# The same model and loss in this process and in the child: w (2,) and b (), Adam.
MODEL = """
import microtape as mt
x = mt.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
y = mt.tensor([1.0, -2.0, 0.75])
def loss(w, b):
    return lambda: (((x @ w.reshape((2, 1))).reshape((3,)) + b - y) ** 2).mean()
"""

CHILD = MODEL + """
import sys
decoys = [mt.variable(mt.zeros((2,))) for _ in range(5)]  # take the generated names the parent's variables had
named_w = mt.variable(mt.zeros((2,)), name="w")           # a live variable that happens to be called w
w2, b2 = mt.variable(mt.zeros((2,))), mt.variable(0.0)
opt2 = mt.train.adam(0.05)
mt.load_variables(sys.argv[1], into={"w": w2, "b": b2}, optimizer=opt2)
assert sorted(opt2.slots) == sorted([w2.name, b2.name]), sorted(opt2.slots)
assert all(d.name not in opt2.slots for d in decoys) and "w" not in opt2.slots
for _ in range(4):
    opt2.minimize(loss(w2, b2))
print([v.hex() for v in w2.data_sync() + b2.data_sync()], opt2.iterations)
"""


def _namespace() -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(MODEL, namespace)  # noqa: S102 - our own constant source, shared with the child process
    return namespace


def test_slots_are_saved_under_the_dict_keys(tmp_path: Path) -> None:
    """Guards a fixed bug: the file said Variable_<n>/m instead of w/m."""
    w1, b1 = mt.variable([0.5, -0.5]), mt.variable(0.1)
    other = mt.variable([1.0])  # trained by the same optimizer, not saved
    opt = mt.train.adam(0.05)
    opt.minimize(lambda: (w1 * w1).sum() + b1 * b1 + (other * other).sum())
    path = tmp_path / "run.json"
    mt.save_variables(path, {"w": w1, "b": b1}, optimizer=opt)
    slots = [s["name"] for s in json.loads(path.read_text())["optimizer"]["slots"]]
    assert slots == ["w/m", "b/m", "w/v", "b/v"]  # TF.js's order, only the saved variables
    opt.dispose()


def test_training_continues_bit_for_bit_in_a_new_process(tmp_path: Path) -> None:
    """Guards a fixed bug: in a new process the slots did not reach w2 (and a
    variable that took the old generated name could get them)."""
    model = _namespace()
    loss = model["loss"]
    assert callable(loss)
    w1, b1 = mt.variable([0.5, -0.5]), mt.variable(0.1)
    opt = mt.train.adam(0.05)
    for _ in range(3):
        opt.minimize(loss(w1, b1))
    path = tmp_path / "run.json"
    mt.save_variables(path, {"w": w1, "b": b1}, optimizer=opt)
    for _ in range(4):
        opt.minimize(loss(w1, b1))
    expected = f"{[v.hex() for v in w1.data_sync() + b1.data_sync()]} {opt.iterations}"
    opt.dispose()

    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script), str(path)], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


def test_a_live_variable_sharing_the_saved_name_gets_no_slot(tmp_path: Path) -> None:
    w1 = mt.variable([1.0, 2.0])
    opt = mt.train.momentum(0.1, 0.9)
    opt.minimize(lambda: (w1 * w1).sum())
    path = tmp_path / "run.json"
    mt.save_variables(path, {"w": w1}, optimizer=opt)
    opt.dispose()
    namesake = mt.variable([0.0, 0.0], name="w")
    w2 = mt.variable([0.0, 0.0])
    fresh = mt.train.momentum(0.1, 0.9)
    mt.load_variables(path, into={"w": w2}, optimizer=fresh)
    assert list(fresh.slots) == [w2.name]
    assert fresh.slots[w2.name]["momentum"].data_sync() == [2.0, 4.0]
    assert w2.data_sync() == w1.data_sync()
    fresh.dispose()
    namesake.dispose()


def test_restoring_slots_needs_the_variables_to_load_into(tmp_path: Path) -> None:
    w = mt.variable([1.0, 2.0], name="w_into")
    opt = mt.train.adam(0.1)
    opt.minimize(lambda: (w * w).sum())
    path = tmp_path / "run.json"
    mt.save_variables(path, [w], optimizer=opt)
    fresh = mt.train.adam(0.1)
    before = mt.memory().num_tensors
    with pytest.raises(mt.CheckpointError, match="optimizer= was given without into=") as info:
        mt.load_variables(path, optimizer=fresh)
    assert "hint: load into the variables" in str(info.value)
    assert fresh.iterations == 0 and fresh.slots == {} and mt.memory().num_tensors == before
    opt.dispose()


def test_a_list_still_saves_and_loads_slots_under_the_variables_names(tmp_path: Path) -> None:
    w = mt.variable([1.0, 2.0], name="w_listed")
    opt = mt.train.adagrad(0.1)
    opt.minimize(lambda: (w * w).sum())
    path = tmp_path / "run.json"
    mt.save_variables(path, [w], optimizer=opt)
    assert [s["name"] for s in json.loads(path.read_text())["optimizer"]["slots"]] == ["w_listed/accumulator"]
    fresh = mt.train.adagrad(0.1)
    mt.load_variables(path, into=[w], optimizer=fresh)
    assert fresh.iterations == 1 and list(fresh.slots) == ["w_listed"]
    opt.dispose()
    fresh.dispose()
