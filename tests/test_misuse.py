"""The misuse table: every wrong call raises the right MicrotapeError, names the
values involved, hints at the fix, and leaves the arena, the variables and the
tape/scope stacks exactly as they were (issue 8)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import microtape as mt
from microtape import _runtime

Action = Callable[[], object]


@dataclass
class Misuse:
    name: str
    setup: Callable[[Path], Action]
    error: type[Exception]
    fragments: tuple[str, ...] = ()
    hint: bool = True
    extra: dict[str, object] = field(default_factory=dict)


def simple(action: Action) -> Callable[[Path], Action]:
    """An action that makes no tensor before the failing call."""
    return lambda _tmp: action


def on(fn: Callable[..., object], *makers: Callable[[], object]) -> Callable[[Path], Action]:
    """Make the arguments first (they are the user's tensors), then fail on them."""

    def setup(_tmp: Path) -> Action:
        args = [make() for make in makers]
        KEEP.append(args)
        return lambda: fn(*args)

    return setup


def _tape_used_twice(_tmp: Path) -> Action:
    x = mt.scalar(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    return lambda: tape.gradient(y, x)


def _tape(_tmp: Path) -> tuple[mt.GradientTape, mt.Tensor, mt.Tensor]:
    x = mt.tensor([1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    return tape, x, y


def _disposed(_tmp: Path) -> Action:
    t = mt.tensor([1.0, 2.0])
    t.dispose()
    return lambda: t * 2.0


def _tidy_disposed(_tmp: Path) -> Action:
    box: list[mt.Tensor] = []
    mt.tidy("step", lambda: box.append(mt.ones((3,))))
    return lambda: box[0].data_sync()


def _var(name: str, value: object = (1.0, 2.0), trainable: bool = True) -> mt.Variable:
    return mt.variable(list(value) if isinstance(value, tuple) else value, name=name, trainable=trainable)


KEEP: list[object] = []  # variables made in set-ups stay alive until the test ends


def _with_var(make: Callable[[mt.Variable], Action], name: str, value: object = (1.0, 2.0), trainable: bool = True) -> Callable[[Path], Action]:
    def setup(_tmp: Path) -> Action:
        v = _var(name, value, trainable)
        KEEP.append(v)
        return make(v)

    return setup


def _opt_shape(_tmp: Path) -> Action:
    v = _var("mis_opt_v")
    opt = mt.train.adam(0.1)
    g = mt.ones((3,))
    KEEP.extend([v, opt, g])
    return lambda: opt.apply_gradients([(g, v)])


def _ckpt_bad_json(tmp: Path) -> Action:
    v = _var("mis_ck_v")
    KEEP.append(v)
    path = tmp / "bad.json"
    path.write_text("{not json", encoding="utf-8")
    return lambda: mt.load_variables(path, [v])


def _ckpt_wrong_shape(tmp: Path) -> Action:
    v = _var("mis_ck_shape")
    KEEP.append(v)
    path = tmp / "ck.json"
    mt.save_variables(path, [v])
    data = json.loads(path.read_text(encoding="utf-8"))
    text = json.dumps(data).replace("[2]", "[3]", 1).replace("[1.0, 2.0]", "[1.0, 2.0, 3.0]", 1)
    path.write_text(text, encoding="utf-8")
    return lambda: mt.load_variables(path, [v])


def _ckpt_nan(tmp: Path) -> Action:
    v = _var("mis_ck_nan")
    KEEP.append(v)
    path = tmp / "nan.json"
    mt.save_variables(path, [v])
    path.write_text(path.read_text(encoding="utf-8").replace("2.0", "NaN", 1), encoding="utf-8")
    return lambda: mt.load_variables(path, [v])


def _ckpt_missing(tmp: Path) -> Action:
    return lambda: mt.load_variables(tmp / "nowhere.json")


def _check_grads_wrong(tmp: Path) -> Action:
    bad = mt.custom_grad(lambda x: (x * x, lambda dy: dy * x))
    x = mt.tensor([1.0, 2.0])
    KEEP.append(x)
    return lambda: mt.check_grads(bad, [x]).raise_if_failed()


async def _async_step() -> None:
    return None


def _anomaly(t: mt.Tensor) -> None:
    with mt.detect_anomaly():
        mt.log(t)


x23 = lambda: mt.ones((2, 3))  # noqa: E731

CASES: list[Misuse] = [
    # creation
    Misuse("ragged", simple(lambda: mt.tensor([[1.0, 2.0], [3.0]])), mt.ShapeError, ("ragged", "2", "1")),
    Misuse("mixed depth", simple(lambda: mt.tensor([[1.0], 2.0])), mt.ShapeError, ("mixed",)),
    Misuse("string", simple(lambda: mt.tensor(["1"])), mt.InvalidArgumentError, ("'1'", "str")),
    Misuse("none", simple(lambda: mt.tensor(None)), mt.InvalidArgumentError, ("None",)),  # type: ignore[arg-type]
    Misuse("tensor list", on(lambda t: mt.tensor([t]), lambda: mt.scalar(1.0)), mt.InvalidArgumentError, ("mt.stack",)),
    Misuse("shape mismatch", simple(lambda: mt.tensor([1.0, 2.0, 3.0], shape=(2, 2))), mt.ShapeError, ("(2, 2)", "4", "3")),
    Misuse("negative dim", simple(lambda: mt.zeros((2, -1))), mt.ShapeError, ("-1",)),
    Misuse("float dim", simple(lambda: mt.ones((2.5,))), mt.ShapeError, ("2.5",)),  # type: ignore[arg-type]
    Misuse("tensor1d rank", simple(lambda: mt.tensor1d([[1.0]])), mt.ShapeError, ("tensor1d", "(1, 1)")),  # type: ignore[list-item]
    Misuse("fill value", simple(lambda: mt.fill((2,), "x")), mt.InvalidArgumentError, ("'x'",)),  # type: ignore[arg-type]
    Misuse("item of many", on(lambda t: t.item(), lambda: mt.ones((3,))), mt.InvalidArgumentError, ("(3,)", "item")),
    Misuse("bool of many", on(bool, lambda: mt.ones((3,))), mt.MicrotapeError, ("(3,)", "ambiguous")),
    # ops and broadcasting
    Misuse("broadcast", on(lambda a, b: a + b, x23, lambda: mt.ones((2,))), mt.ShapeError, ("add", "(2, 3)", "(2,)", "reshape")),
    Misuse("broadcast list", on(lambda a: a * [1.0, 2.0], x23), mt.ShapeError, ("mul", "(2, 3)", "(2,)")),
    Misuse("matmul inner", on(lambda a, b: a @ b, x23, x23), mt.ShapeError, ("matmul", "(2, 3)", "3", "2")),
    Misuse("matmul rank", on(lambda a, b: a @ b, lambda: mt.ones((2, 2, 2)), x23), mt.ShapeError, ("rank 3",)),
    Misuse("reshape size", on(lambda a: a.reshape((4, 2)), x23), mt.ShapeError, ("(4, 2)", "6")),
    Misuse("reshape two -1", on(lambda a: a.reshape((-1, -1)), x23), mt.ShapeError, ("-1",)),
    Misuse("transpose perm", on(lambda a: a.transpose((1, 1)), x23), mt.InvalidArgumentError, ("(1, 1)", "permutation")),
    Misuse("concat shapes", on(lambda a, b: mt.concat([a, b], axis=1), x23, lambda: mt.ones((3, 3))), mt.ShapeError, ("(2, 3)", "(3, 3)")),
    Misuse("concat not list", on(mt.concat, x23), mt.InvalidArgumentError, ("list",)),
    Misuse("stack shapes", on(lambda a, b: mt.stack([a, b]), x23, lambda: mt.ones((3, 2))), mt.ShapeError, ("(2, 3)", "(3, 2)")),
    Misuse("slice range", on(lambda a: mt.slice(a, (0, 2), (2, 2)), x23), mt.InvalidArgumentError, ("(0, 2)", "(2, 3)")),
    Misuse("pad spec", on(lambda a: mt.pad(a, [(1, 1)]), x23), mt.InvalidArgumentError, ("(2, 3)",)),
    Misuse("broadcast_to", on(lambda a: mt.broadcast_to(a, (3, 3)), x23), mt.ShapeError, ("(2, 3)", "(3, 3)")),
    Misuse("clip bounds", on(lambda a: mt.clip_by_value(a, 1.0, -1.0), x23), mt.InvalidArgumentError, ("1.0", "-1.0", "swap")),
    Misuse("op on string", simple(lambda: mt.exp("e")), mt.InvalidArgumentError, ("exp", "'e'")),  # type: ignore[arg-type]
    Misuse("extra args", on(lambda a: mt.exp(a, 1, 2), x23), mt.InvalidArgumentError, ("exp", "extra positional")),  # type: ignore[call-arg]
    Misuse("missing input", on(lambda a: mt.add(a), x23), mt.InvalidArgumentError, ("add", "2 tensor")),  # type: ignore[call-arg]
    # reductions
    Misuse("axis range", on(lambda a: a.sum(axis=2), x23), mt.InvalidArgumentError, ("axis 2", "rank 2")),
    Misuse("axis negative", on(lambda a: a.max(axis=-3), x23), mt.InvalidArgumentError, ("axis -3",)),
    Misuse("axis twice", on(lambda a: a.sum(axis=(0, -2)), x23), mt.InvalidArgumentError, ("twice",)),
    Misuse("axis float", on(lambda a: mt.mean(a, axis=0.5), x23), mt.InvalidArgumentError, ("0.5",)),  # type: ignore[arg-type]
    Misuse("softmax axis", on(lambda a: mt.softmax(a, axis=5), x23), mt.InvalidArgumentError, ("axis 5",)),
    # variables
    Misuse("assign shape", _with_var(lambda v: (lambda: v.assign([1.0, 2.0, 3.0])), "mis_assign"), mt.ShapeError, ("mis_assign", "(2,)", "(3,)")),
    Misuse("assign_add shape", _with_var(lambda v: (lambda: v.assign_add([1.0])), "mis_add"), mt.ShapeError, ("mis_add", "(1,)")),
    Misuse("assign_sub string", _with_var(lambda v: (lambda: v.assign_sub(["a", "b"])), "mis_sub"), mt.InvalidArgumentError, ("'a'",)),
    Misuse("duplicate name", _with_var(lambda v: (lambda: mt.variable(0.0, name="mis_dup")), "mis_dup"), mt.VariableError, ("mis_dup", "already exists")),
    Misuse("trainable flag", simple(lambda: mt.variable(0.0, trainable="yes")), mt.InvalidArgumentError, ("'yes'",)),  # type: ignore[arg-type]
    Misuse("empty name", simple(lambda: mt.variable(0.0, name="")), mt.InvalidArgumentError, ("''",)),
    # tapes
    Misuse("tape twice", _tape_used_twice, mt.TapeError, ("non-persistent GradientTape can only be used to compute one set of gradients",)),
    Misuse("dy shape", lambda tmp: (lambda t, d: (lambda: t[0].gradient(t[2], t[1], output_gradients=d)))(_tape(tmp), mt.ones((3,))), mt.ShapeError, ("(3,)", "(2,)")),
    Misuse("dy values shape", lambda tmp: (lambda t: (lambda: t[0].gradient(t[2], t[1], output_gradients=[1.0, 2.0, 3.0])))(_tape(tmp)), mt.ShapeError, ("(3,)", "(2,)")),  # type: ignore[list-item]
    Misuse("unconnected option", lambda tmp: (lambda t: (lambda: t[0].gradient(t[2], t[1], unconnected_gradients="zeros")))(_tape(tmp)), mt.InvalidArgumentError, ("'zeros'",)),
    Misuse("sources type", lambda tmp: (lambda t: (lambda: t[0].gradient(t[2], 3.0)))(_tape(tmp)), mt.InvalidArgumentError, ("float",)),  # type: ignore[call-overload]
    Misuse("target type", lambda tmp: (lambda t: (lambda: t[0].gradient(None, t[1])))(_tape(tmp)), mt.InvalidArgumentError, ("None",)),  # type: ignore[call-overload]
    Misuse("watch non tensor", simple(lambda: mt.GradientTape().watch("x")), mt.InvalidArgumentError, ("'x'",)),  # type: ignore[arg-type]
    Misuse("stop_recording closed", simple(lambda: mt.GradientTape().stop_recording().__enter__()), mt.TapeError, ("not recording",)),
    Misuse("tape flag", simple(lambda: mt.GradientTape(persistent=1)), mt.InvalidArgumentError, ("persistent=1",)),  # type: ignore[arg-type]
    # functional API
    Misuse("grad unreachable", on(lambda a: mt.grad(lambda x: mt.scalar(1.0))(a), lambda: mt.scalar(1.0)), mt.GradientError, ("Cannot compute gradient of y=f(x) with respect to x",)),
    Misuse("grads unreachable input", on(lambda p, q: mt.grads(lambda a, b: a * 2.0)([p, q]), lambda: mt.scalar(1.0), lambda: mt.scalar(2.0)), mt.GradientError, ("input 1",)),
    Misuse("grad non tensor result", on(lambda a: mt.grad(lambda x: 1.0)(a), lambda: mt.scalar(1.0)), mt.GradientError, ("float",)),  # type: ignore[arg-type, return-value]
    Misuse("grad dy shape", on(lambda a, d: mt.grad(lambda x: x * 2.0)(a, d), lambda: mt.ones((2,)), lambda: mt.ones((3,))), mt.ShapeError, ("(3,)", "(2,)")),
    Misuse("grad of number", simple(lambda: mt.grad(lambda x: x)(2.0)), mt.InvalidArgumentError, ("2.0", "float")),
    Misuse("grad not callable", simple(lambda: mt.grad(3)), mt.InvalidArgumentError, ("int",)),  # type: ignore[arg-type]
    Misuse("variable_grads non scalar", _with_var(lambda v: (lambda: mt.variable_grads(lambda: v * 2.0)), "mis_vg"), mt.GradientError, ("scalar", "(2,)")),
    Misuse("variable_grads no trainable", _with_var(lambda v: (lambda: mt.variable_grads(lambda: v.sum(), [v])), "mis_vg_frozen", trainable=False), mt.GradientError, ("none of the 1 variables is trainable",)),
    Misuse("variable_grads no connection", _with_var(lambda v: (lambda: mt.variable_grads(lambda: mt.scalar(2.0) * 3.0, [v])), "mis_vg_conn"), mt.GradientError, ("Cannot find a connection",)),
    Misuse("custom_grad count", on(lambda s, t: mt.grads(lambda a, b: mt.custom_grad(lambda p, q: (p * q, lambda dy: [dy]))(a, b))([s, t]), lambda: mt.scalar(1.0), lambda: mt.scalar(2.0)), mt.InvalidArgumentError, ("1 gradient(s) for 2 input(s)",)),
    Misuse("custom_grad shape", on(lambda t: mt.grad(mt.custom_grad(lambda a: (a.sum(), lambda dy: dy)))(t), lambda: mt.ones((2,))), mt.ShapeError, ("()", "(2,)")),
    # arena
    Misuse("disposed", _disposed, mt.DisposedTensorError, ("Tensor is disposed", "dispose()", "(2,)")),
    Misuse("disposed by tidy", _tidy_disposed, mt.DisposedTensorError, ("Tensor is disposed", "'step'", "(3,)", "mt.keep")),
    Misuse("tidy coroutine", simple(lambda: mt.tidy(_async_step)), mt.TidyError, ("coroutine", "next_frame")),
    Misuse("tidy generator", simple(lambda: mt.tidy(lambda: (mt.ones((1,)) for _ in range(1)))), mt.TidyError, ("generator",)),
    Misuse("tidy not callable", simple(lambda: mt.tidy(3)), mt.InvalidArgumentError, ("int",)),  # type: ignore[call-overload]
    Misuse("tidy name only", simple(lambda: mt.tidy("step")), mt.InvalidArgumentError, ("'step'",)),  # type: ignore[call-overload]
    Misuse("tidy raises", simple(lambda: mt.tidy(lambda: [mt.ones((4,)), mt.tensor([[1.0], 2.0])])), mt.ShapeError, ("mixed",)),
    Misuse("leak option", simple(lambda: mt.leak_check(on_leak="shout").__enter__()), mt.InvalidArgumentError, ("'shout'",)),
    # checker and debugging
    Misuse("check_grads wrong vjp", _check_grads_wrong, mt.GradientCheckError, ("FAILED", "custom_grad"), hint=False),
    Misuse("check_grads inputs", simple(lambda: mt.check_grads(mt.exp, [1.0])), mt.InvalidArgumentError, ("float",)),  # type: ignore[list-item]
    Misuse("check_grads mode", on(lambda t: mt.check_grads(mt.exp, [t], mode="quick"), lambda: mt.ones((1,))), mt.InvalidArgumentError, ("'quick'",)),
    Misuse("check_grads order", on(lambda t: mt.check_grads(mt.exp, [t], order=3), lambda: mt.ones((1,))), mt.InvalidArgumentError, ("3",)),
    Misuse("numerical eps", on(lambda t: mt.numerical_grad(mt.exp, [t], eps=0.0), lambda: mt.ones((1,))), mt.InvalidArgumentError, ("eps=0.0",)),
    Misuse("check_numerics nan", on(lambda t: mt.check_numerics(t, "loss"), lambda: mt.tensor([float("nan")])), mt.NumericsError, ("loss : Tensor had NaN values",)),
    Misuse("anomaly", on(_anomaly, lambda: mt.tensor([-1.0])), mt.AnomalyError, ("log", "forward", "test_misuse.py")),
    Misuse("clip_by_norm bound", on(lambda t: mt.clip_by_norm(t, -1.0), lambda: mt.ones((2,))), mt.InvalidArgumentError, ("clip_norm=-1.0",)),
    Misuse("clip_by_global_norm list", on(lambda t: mt.clip_by_global_norm(t, 1.0), lambda: mt.ones((2,))), mt.InvalidArgumentError, ("list",)),
    Misuse("monitor settings", simple(lambda: mt.GradientMonitor(growth=0.5)), mt.InvalidArgumentError, ("growth=0.5",)),
    Misuse("print non tensor", simple(lambda: mt.print([1.0])), mt.InvalidArgumentError, ("list",)),  # type: ignore[arg-type]
    # optimizers and checkpoints
    Misuse("optimizer lr", simple(lambda: mt.train.sgd(-0.1)), mt.InvalidArgumentError, ("-0.1",)),
    Misuse("optimizer grad shape", _opt_shape, mt.ShapeError, ("mis_opt_v", "(3,)", "(2,)")),
    Misuse("minimize no connection", _with_var(lambda v: (lambda: mt.train.sgd(0.1).minimize(lambda: mt.scalar(1.0) * 2.0, var_list=[v])), "mis_min"), mt.GradientError, ("Cannot find a connection",)),
    Misuse("checkpoint not json", _ckpt_bad_json, mt.CheckpointError, ("bad.json",)),
    Misuse("checkpoint shape", _ckpt_wrong_shape, mt.CheckpointError, ("mis_ck_shape", "(3,)", "(2,)")),
    Misuse("checkpoint nan", _ckpt_nan, mt.CheckpointError, ("NaN",)),
    Misuse("checkpoint missing", _ckpt_missing, mt.CheckpointError, ("nowhere.json",)),
]


def snapshot() -> tuple[object, ...]:
    info = mt.memory()
    st = _runtime.STATE.get()
    variables = {name: (v.data_sync() if not v.is_disposed else None) for name, v in list(_runtime.VARIABLES.items())}
    return (
        info.num_tensors,
        info.num_bytes,
        info.num_variables,
        info.num_tensors_held_by_tapes,
        frozenset(_runtime.LIVE),
        variables,
        st.tapes,
        st.scopes,
        st.observers,
        st.anomaly,
        st.backward,
    )


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 50
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_misuse(case: Misuse, tmp_path: Path) -> None:
    gc.collect()  # earlier tests' tapes, freed now, must not change counts mid-case
    action = case.setup(tmp_path)
    gc.collect()
    before = snapshot()
    with pytest.raises(case.error) as info:
        action()
    err = info.value
    assert isinstance(err, mt.MicrotapeError), type(err)
    text = str(err)
    for fragment in case.fragments:
        assert fragment in text, f"{fragment!r} missing from:\n{text}"
    if case.hint:
        assert "hint:" in text, f"no hint in:\n{text}"
    after = snapshot()
    assert after == before, "a failed call changed the arena, the variables or the open tapes/scopes"
    KEEP.clear()


def test_cli_misuse() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "microtape", "tour", "--chapter", "99"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "no chapter 99" in result.stdout
    result = subprocess.run([sys.executable, "-m", "microtape", "frobnicate"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "invalid choice" in result.stderr
