"""The misuse table: every wrong call raises the right MicrotapeError, names the
values involved, hints at the fix, and leaves the arena, the variables and the
tape/scope stacks exactly as they were.

A hint that is a line of code must run. Rows marked ``code=True`` execute it,
with ``mt`` and the user's objects of the case under the names the message
uses (``t``, ``w``, ``opt``, ...), which ``named`` set-ups provide.

Then the habits of other libraries (``t.backward()``, ``t.grad``, ``len(t)``): helpful errors at run
time, type errors for mypy, and ``hasattr``, ``==`` and hashing unchanged; and no issue numbers in
the code's comments and docstrings."""

from __future__ import annotations

import gc
import inspect
import json
import operator
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import microtape as mt
from microtape.engine import arena as _runtime
from microtape.engine.variable import VARIABLES

Action = Callable[[], object]


@dataclass
class Misuse:
    name: str
    setup: Callable[[Path], Action]
    error: type[Exception]
    fragments: tuple[str, ...] = ()
    hint: bool = True
    extra: dict[str, object] = field(default_factory=dict)
    also: type[BaseException] = Exception  # the builtin the error also is, for `except TypeError`
    code: bool = False  # the hint is code: it must run, given mt and NAMES
    absent: tuple[str, ...] = ()  # text that must not appear (a hint that does not fit)


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


def _released_tape(_tmp: Path) -> Action:
    x = mt.scalar(2.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    tape.release()
    return lambda: tape.explain(y, x)


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
    return mt.variable(list(value) if isinstance(value, tuple) else value, name=name, trainable=trainable)  # type: ignore[arg-type]  # any value, to test the checks


KEEP: list[object] = []  # variables made in set-ups stay alive until the test ends
NAMES: dict[str, object] = {}  # the user's objects of a named case, by the names its hint uses


def named(action: Callable[..., object], make: Callable[[], dict[str, object]]) -> Callable[[Path], Action]:
    """Make the user's objects first, keep them under their names, then fail on them."""

    def setup(_tmp: Path) -> Action:
        NAMES.clear()
        NAMES.update(make())
        KEEP.append(dict(NAMES))
        return lambda: action(**NAMES)

    return setup


def _t() -> dict[str, object]:
    return {"t": mt.tensor([1.0, 2.0])}


def _w_opt(name: str) -> Callable[[], dict[str, object]]:
    def make() -> dict[str, object]:
        w = _var(name)
        return {"w": w, "opt": mt.train.sgd(0.1), "loss": (w * w).sum(), "t": mt.tensor([1.0, 2.0])}

    return make


def _unused_key(_tmp: Path) -> Action:
    used, unused = _var("mis_h_used"), _var("mis_h_unused")
    _, gs = mt.variable_grads(lambda: (used * 2.0).sum(), [used])
    KEEP.extend([used, unused, gs])
    return lambda: gs[unused]


def _no_return(w: mt.Variable) -> Callable[[], None]:
    def loss() -> None:
        (w * w).sum()  # the forgotten return

    return loss


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


def _jacobian_of_a_list(_tmp: Path) -> Action:
    x = mt.tensor([1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y1, y2 = x * 2.0, x * 3.0
    KEEP.extend([tape, x, y1, y2])
    return lambda: tape.jacobian([y1, y2], x)  # type: ignore[arg-type]  # a list: the mistake under test


def _cut_variable(_tmp: Path) -> Action:
    """A var_list variable whose only path to the loss goes through a copy: its key error says so."""
    import warnings

    w, v = _var("mis_cut_w"), _var("mis_cut_v")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mt.GradientWarning)  # the warning has its own test
        _, gs = mt.variable_grads(lambda: (w * w).sum() + (mt.tensor(v) * 2.0).sum(), [w, v])
    KEEP.extend([w, v, gs])
    return lambda: gs[v]


def _inplace(fn: Callable[[object, object], object], name: str) -> Callable[[Path], Action]:
    """``w op= g`` on a variable, written with ``operator.i*`` (a statement cannot sit in a lambda)."""
    return named(lambda w, g: fn(w, g), lambda: {"w": _var(name), "g": mt.ones((2,))})

CASES: list[Misuse] = [
    # creation
    Misuse("ragged", simple(lambda: mt.tensor([[1.0, 2.0], [3.0]])), mt.ShapeError, ("ragged", "2", "1")),
    Misuse("mixed depth", simple(lambda: mt.tensor([[1.0], 2.0])), mt.ShapeError, ("mixed",)),  # the types take nested rows; the run time checks they are regular
    Misuse("string", simple(lambda: mt.tensor(["1"])), mt.InvalidArgumentError, ("'1'", "str")),  # type: ignore[list-item]
    Misuse("none", simple(lambda: mt.tensor(None)), mt.InvalidArgumentError, ("None",)),  # type: ignore[arg-type]
    Misuse("tensor list", on(lambda t: mt.tensor([t]), lambda: mt.scalar(1.0)), mt.InvalidArgumentError, ("mt.stack",)),
    Misuse("shape mismatch", simple(lambda: mt.tensor([1.0, 2.0, 3.0], shape=(2, 2))), mt.ShapeError, ("(2, 2)", "4", "3")),
    Misuse("negative dim", simple(lambda: mt.zeros((2, -1))), mt.ShapeError, ("-1",)),
    Misuse("float dim", simple(lambda: mt.ones((2.5,))), mt.ShapeError, ("2.5",)),  # type: ignore[arg-type]
    Misuse("tensor1d rank", simple(lambda: mt.tensor1d([[1.0]])), mt.ShapeError, ("tensor1d", "(1, 1)")),  # type: ignore[list-item]
    Misuse("fill value", simple(lambda: mt.fill((2,), "x")), mt.InvalidArgumentError, ("'x'",)),  # type: ignore[arg-type]
    Misuse("item of many", on(lambda t: t.item(), lambda: mt.ones((3,))), mt.InvalidArgumentError, ("(3,)", "item")),
    Misuse("bool of many", on(bool, lambda: mt.ones((3,))), mt.InvalidArgumentError, ("(3,)", "ambiguous"), also=ValueError),
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
    Misuse("assign_sub string", _with_var(lambda v: (lambda: v.assign_sub(["a", "b"])), "mis_sub"), mt.InvalidArgumentError, ("'a'",)),  # type: ignore[list-item]
    Misuse("duplicate name", _with_var(lambda v: (lambda: mt.variable(0.0, name="mis_dup")), "mis_dup"), mt.VariableError, ("mis_dup", "already exists")),
    Misuse("trainable flag", simple(lambda: mt.variable(0.0, trainable="yes")), mt.InvalidArgumentError, ("'yes'",)),  # type: ignore[arg-type]
    Misuse("empty name", simple(lambda: mt.variable(0.0, name="")), mt.InvalidArgumentError, ("''",)),
    # tapes
    Misuse("tape twice", _tape_used_twice, mt.TapeError, ("non-persistent GradientTape can only be used to compute one set of gradients",)),
    Misuse("explain a released tape", _released_tape, mt.TapeError, ("explain: this GradientTape was released", "shape ()")),
    Misuse("dy shape", lambda tmp: (lambda t, d: (lambda: t[0].gradient(t[2], t[1], output_gradients=d)))(_tape(tmp), mt.ones((3,))), mt.ShapeError, ("(3,)", "(2,)")),
    Misuse("dy values shape", lambda tmp: (lambda t: (lambda: t[0].gradient(t[2], t[1], output_gradients=[1.0, 2.0, 3.0])))(_tape(tmp)), mt.ShapeError, ("(3,)", "(2,)")),  # type: ignore[list-item]
    Misuse("unconnected option", lambda tmp: (lambda t: (lambda: t[0].gradient(t[2], t[1], unconnected_gradients="zeros")))(_tape(tmp)), mt.InvalidArgumentError, ("'zeros'",)),  # type: ignore[call-overload]
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
    Misuse("leak option", simple(lambda: mt.leak_check(on_leak="shout").__enter__()), mt.InvalidArgumentError, ("'shout'",)),  # type: ignore[arg-type]
    # checker and debugging
    Misuse("check_grads wrong vjp", _check_grads_wrong, mt.GradientCheckError, ("FAILED", "custom_grad"), hint=False),
    Misuse("check_grads inputs", simple(lambda: mt.check_grads(mt.exp, [1.0])), mt.InvalidArgumentError, ("float",)),  # type: ignore[list-item]
    Misuse("check_grads mode", on(lambda t: mt.check_grads(mt.exp, [t], mode="quick"), lambda: mt.ones((1,))), mt.InvalidArgumentError, ("'quick'",)),  # type: ignore[call-overload]
    Misuse("check_grads order", on(lambda t: mt.check_grads(mt.exp, [t], order=3), lambda: mt.ones((1,))), mt.InvalidArgumentError, ("3",)),  # type: ignore[call-overload]
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
    # habits from PyTorch and NumPy, and the API named in the error
    Misuse("minimize a tensor", named(lambda opt, loss, **_: opt.minimize(loss), _w_opt("mis_h_min")), mt.InvalidArgumentError, ("minimize(f)", "Tensor(5.0, shape=())", "value computed once"), also=ValueError, code=True, absent=("variable_grads",)),
    Misuse("minimize no variables", named(lambda opt, t, **_: opt.minimize(lambda: (t * t).sum()), _w_opt("mis_h_none")), mt.GradientError, ("minimize", "no trainable variable"), also=ValueError, code=True, absent=("variable_grads",)),
    Misuse("variable_grads a tensor", named(lambda loss, **_: mt.variable_grads(loss), _w_opt("mis_h_vg")), mt.InvalidArgumentError, ("variable_grads(f)", "Tensor"), also=ValueError, code=True, absent=("lambda x",)),
    Misuse("backward", named(lambda t: t.backward(), _t), mt.UnsupportedAttributeError, ("t.backward()", "(2,)", "mt.grad"), also=AttributeError, code=True),
    Misuse("grad attribute", named(lambda t: t.grad, _t), mt.UnsupportedAttributeError, ("t.grad", "(2,)", "hold no gradients"), also=AttributeError, code=True),
    Misuse("grad of a variable", named(lambda t: t.grad, lambda: {"t": _var("mis_h_vgrad")}), mt.UnsupportedAttributeError, ("Variable", "variable_grads"), also=AttributeError, code=True),
    Misuse("assign a tensor", named(lambda t: t.assign([3.0, 4.0]), _t), mt.UnsupportedAttributeError, ("t.assign(...)", "immutable", "mt.variable"), also=AttributeError, code=True),
    Misuse("assign_sub a tensor", named(lambda t: t.assign_sub([1.0, 1.0]), _t), mt.UnsupportedAttributeError, ("assign_sub",), also=AttributeError, code=True),
    Misuse("numpy", named(lambda t: t.numpy(), _t), mt.UnsupportedAttributeError, ("t.numpy()", "lists"), also=AttributeError, code=True),
    Misuse("detach", named(lambda t: t.detach(), _t), mt.UnsupportedAttributeError, ("t.detach()", "constant"), also=AttributeError, code=True),
    Misuse("len", named(lambda t: len(t), lambda: {"t": mt.ones((3, 2))}), mt.UnsupportedOperationError, ("len(t)", "(3, 2)"), also=TypeError, code=True),
    Misuse("len of a scalar", named(lambda t: len(t), lambda: {"t": mt.scalar(1.0)}), mt.UnsupportedOperationError, ("len(t)", "()"), also=TypeError, code=True),
    Misuse("greater operator", named(lambda t: t > 0, _t), mt.UnsupportedOperationError, ("t > 0", "(2,)", "mt.greater"), also=TypeError, code=True),
    Misuse("reflected less", named(lambda t: 0.5 < t, _t), mt.UnsupportedOperationError, ("t > 0.5",), also=TypeError, code=True),
    Misuse("less_equal tensors", named(lambda t, u: t <= u, lambda: {"t": mt.tensor([1.0, 2.0]), "u": mt.ones((2,))}), mt.UnsupportedOperationError, ("t <= u", "t.less_equal(u)"), also=TypeError, code=True),
    Misuse("index", named(lambda t: t[1], lambda: {"t": mt.ones((2, 3))}), mt.UnsupportedOperationError, ("t[1]", "(2, 3)", "mt.slice"), also=TypeError, code=True),
    Misuse("iterate", named(lambda t: [x for x in t], _t), mt.UnsupportedOperationError, ("not iterable", "t.tolist()"), also=TypeError, code=True),
    Misuse("grad of a string", simple(lambda: mt.grad("oops")), mt.InvalidArgumentError, ("grad(f)", "'oops'"), also=ValueError, code=True, absent=("mt.tensor('oops')",)),  # type: ignore[arg-type]
    Misuse("grad at a string", simple(lambda: mt.grad(lambda x: x * x)("oops")), mt.InvalidArgumentError, ("'oops'", "str"), hint=False, also=ValueError, absent=("mt.tensor(",)),  # type: ignore[arg-type]
    Misuse("tensor of a range", simple(lambda: mt.tensor(range(3))), mt.InvalidArgumentError, ("range(0, 3)",), also=ValueError, code=True, absent=("text",)),  # type: ignore[arg-type]
    Misuse("Variable constructor", simple(lambda: mt.Variable([1.0, 2.0])), mt.UnsupportedOperationError, ("Variable([1.0, 2.0])", "mt.variable"), also=TypeError, code=True),
    Misuse("gradient of an unused variable", _unused_key, mt.GradientKeyError, ("no gradient", "mis_h_unused", "mis_h_used"), also=KeyError),
    # the next mistakes students make
    Misuse("grad of a result", named(lambda loss, **_: mt.grad(loss), _w_opt("mis_h_res")), mt.InvalidArgumentError, ("grad(f)", "value computed once"), also=ValueError, code=True),
    Misuse("variable_grads f with argument", named(lambda **_: mt.variable_grads(lambda x: (x * x).sum()), _w_opt("mis_h_arity")), mt.InvalidArgumentError, ("f(x)", "0 argument"), also=ValueError, code=True),  # type: ignore[arg-type, misc]  # f takes an argument: the mistake under test
    Misuse("grad f without argument", named(lambda w, t, **_: mt.grad(lambda: (w * w).sum())(t), _w_opt("mis_h_arity0")), mt.InvalidArgumentError, ("f()", "1 argument"), also=ValueError, code=True),  # type: ignore[arg-type, misc]  # f takes none: the mistake under test
    Misuse("loss without return", named(lambda opt, w, **_: opt.minimize(_no_return(w)), _w_opt("mis_h_ret")), mt.GradientError, ("NoneType", "return"), also=ValueError),
    Misuse("minimize var_list positional", named(lambda opt, w, **_: opt.minimize(lambda: (w * w).sum(), [w]), _w_opt("mis_h_pos")), mt.InvalidArgumentError, ("return_cost", "list", "mis_h_pos"), also=ValueError, code=True),
    Misuse("loss read with data_sync", named(lambda opt, w, **_: opt.minimize(lambda: mt.scalar(w.data_sync()[0]) ** 2), _w_opt("mis_h_sync")), mt.GradientError, ("Cannot find a connection", "data_sync"), also=ValueError, code=True),
    Misuse("grads of one tensor", named(lambda t: mt.grads(lambda a: (a * a).sum())(t), _t), mt.InvalidArgumentError, ("xs must be a list", "Tensor"), also=ValueError),
    Misuse("var_list one variable", named(lambda w, **_: mt.variable_grads(lambda: (w * w).sum(), w), _w_opt("mis_h_one")), mt.InvalidArgumentError, ("var_list must be a list", "Variable"), also=ValueError),
    Misuse("apply_gradients keyed by tensors", named(lambda opt, t, **_: opt.apply_gradients({t: t}), _w_opt("mis_h_keys")), mt.InvalidArgumentError, ("Tensor([1.0, 2.0], shape=(2,))", "neither a Variable nor a variable name"), also=ValueError),
    Misuse("learning rate as text", simple(lambda: mt.train.sgd("0.01")), mt.InvalidArgumentError, ("learning_rate", "'0.01'"), also=ValueError),  # type: ignore[arg-type]
    Misuse("astype float16", named(lambda t: t.astype("float16"), _t), mt.UnsupportedAttributeError, ("t.astype()", "(2,)", "float64"), also=AttributeError),
    Misuse("tidy of a result", named(lambda loss, **_: mt.tidy(loss), _w_opt("mis_h_tidy")), mt.InvalidArgumentError, ("tidy() needs a function", "Tensor"), also=ValueError),
    # raw Python errors that used to escape, and the habits of TF.js and PyTorch users
    Misuse("in", named(lambda t: 1.0 in t, _t), mt.UnsupportedOperationError, ("1.0 in t", "(2,)", "not a container"), also=TypeError, code=True),
    Misuse("watch a number", simple(lambda: mt.GradientTape().watch(3.0)), mt.InvalidArgumentError, ("watch()", "float", "3.0"), also=ValueError),  # type: ignore[arg-type]
    Misuse("slice numbers outside", on(lambda a: mt.slice(a, 1, 2), x23), mt.InvalidArgumentError, ("begin 1", "size 2", "(2, 3)"), also=ValueError),
    Misuse("slice begin text", on(lambda a: mt.slice(a, "1"), x23), mt.InvalidArgumentError, ("begin '1'", "(2, 3)"), also=ValueError),  # type: ignore[arg-type]
    Misuse("clip open bound", on(lambda a: mt.clip_by_value(a, None, 1.0), x23), mt.InvalidArgumentError, ("clip_value_min", "NoneType", "-math.inf"), also=ValueError),  # type: ignore[arg-type]
    Misuse("clip bound text", on(lambda a: mt.clip_by_value(a, -1.0, "1"), x23), mt.InvalidArgumentError, ("clip_value_max", "str", "math.inf"), also=ValueError),  # type: ignore[arg-type]
    Misuse("jacobian of a list", _jacobian_of_a_list, mt.InvalidArgumentError, ("jacobian() takes one target", "list of 2"), also=ValueError),
    Misuse("camelCase function", simple(lambda: mt.variableGrads), mt.UnsupportedAttributeError, ("mt.variableGrads", "snake_case"), also=AttributeError, code=True),  # type: ignore[attr-defined]
    Misuse("camelCase op", simple(lambda: mt.clipByValue), mt.UnsupportedAttributeError, ("mt.clipByValue",), also=AttributeError, code=True),  # type: ignore[attr-defined]
    Misuse("camelCase renamed", simple(lambda: mt.logSumExp), mt.UnsupportedAttributeError, ("mt.logSumExp",), also=AttributeError, code=True),  # type: ignore[attr-defined]
    Misuse("dataSync", named(lambda t: t.dataSync(), _t), mt.UnsupportedAttributeError, ("t.dataSync()", "(2,)", "snake_case"), also=AttributeError, code=True),
    Misuse("arraySync", named(lambda t: t.arraySync(), _t), mt.UnsupportedAttributeError, ("t.arraySync()", "tolist"), also=AttributeError, code=True),
    Misuse("print method", named(lambda t: t.print(), _t), mt.UnsupportedAttributeError, ("t.print()", "mt.print(t)"), also=AttributeError, code=True),
    # a tensor never changes: assigning to any of its attributes says what to write instead
    Misuse("t.shape =", named(lambda t: setattr(t, "shape", (2, 1)), _t), mt.UnsupportedAttributeError, ("t.shape = (2, 1)", "(2,)", "immutable", "assign"), also=AttributeError, code=True),
    Misuse("assign shape as a list", named(lambda t: setattr(t, "shape", [1, 2]), _t), mt.UnsupportedAttributeError, ("t.shape = [1, 2]", "t.reshape((1, 2))"), also=AttributeError, code=True),
    Misuse("assign a shape that does not fit", named(lambda t: setattr(t, "shape", (3,)), _t), mt.UnsupportedAttributeError, ("t.shape = (3,)", "2 entries", "t.reshape((2,))"), also=AttributeError, code=True),
    Misuse("assign size", named(lambda t: setattr(t, "size", 3), _t), mt.UnsupportedAttributeError, ("t.size = 3", "immutable", "assign"), also=AttributeError, code=True),
    Misuse("assign id", named(lambda t: setattr(t, "id", 1), _t), mt.UnsupportedAttributeError, ("t.id = 1", "immutable"), also=AttributeError, code=True),
    Misuse("assign dtype", named(lambda t: setattr(t, "dtype", "float32"), _t), mt.UnsupportedAttributeError, ("t.dtype = 'float32'", "float64"), also=AttributeError),
    Misuse("assign rank", named(lambda t: setattr(t, "rank", 2), _t), mt.UnsupportedAttributeError, ("t.rank = 2", "immutable"), also=AttributeError, code=True),
    Misuse("assign T", named(lambda t: setattr(t, "T", t), _t), mt.UnsupportedAttributeError, ("t.T = Tensor([1.0, 2.0]", "immutable"), also=AttributeError, code=True),
    Misuse("assign requires_grad", named(lambda t: setattr(t, "requires_grad", True), _t), mt.UnsupportedAttributeError, ("t.requires_grad = True", "watch the tensor on a tape", "tape.watch(t)"), also=AttributeError, code=True),
    Misuse("assign requires_grad False", named(lambda t: setattr(t, "requires_grad", False), _t), mt.UnsupportedAttributeError, ("t.requires_grad = False", "no tape watches"), also=AttributeError),
    Misuse("assign grad", named(lambda t, g: setattr(t, "grad", g), lambda: {"t": mt.tensor([1.0, 2.0]), "g": mt.ones((2,))}), mt.UnsupportedAttributeError, ("t.grad = Tensor([1.0, 1.0]", "returned, not stored", "mt.grad("), also=AttributeError, code=True),
    Misuse("reset grad", named(lambda t: setattr(t, "grad", None), _t), mt.UnsupportedAttributeError, ("t.grad = None", "returned, not stored", "nothing to reset"), also=AttributeError),
    Misuse("assign backward", named(lambda t: setattr(t, "backward", None), _t), mt.UnsupportedAttributeError, ("t.backward = None", "immutable"), also=AttributeError, code=True),
    Misuse("assign a variable's shape", named(lambda t: setattr(t, "shape", (1, 2)), lambda: {"t": _var("mis_a_shape")}), mt.UnsupportedAttributeError, ("t.shape = (1, 2)", "Variable", "keeps its shape", "t.reshape((1, 2))"), also=AttributeError, code=True),
    Misuse("assign a variable's name", named(lambda t: setattr(t, "name", "other"), lambda: {"t": _var("mis_a_name")}), mt.UnsupportedAttributeError, ("t.name = 'other'", "Variable", "names are unique"), also=AttributeError, code=True),
    Misuse("assign a variable's size", named(lambda t: setattr(t, "size", 1), lambda: {"t": _var("mis_a_size")}), mt.UnsupportedAttributeError, ("t.size = 1", "assign_add"), also=AttributeError, code=True),
    Misuse("zero_grad", named(lambda opt, **_: opt.zero_grad(), _w_opt("mis_h_zero")), mt.UnsupportedAttributeError, ("opt.zero_grad()", "SGDOptimizer", "nothing to reset"), also=AttributeError),
    Misuse("step", named(lambda opt, **_: opt.step(), _w_opt("mis_h_step")), mt.UnsupportedAttributeError, ("opt.step()", "minimize"), also=AttributeError, code=True),
    # the ops people reach for, and gradients that are missing for a reason
    Misuse("one_hot not an index", named(lambda indices: mt.one_hot(indices, 3), lambda: {"indices": mt.tensor([0.0, 1.5])}), mt.InvalidArgumentError, ("one_hot", "1.5", "not a whole number"), also=ValueError, code=True),
    Misuse("one_hot depth", on(lambda t: mt.one_hot(t, -2), lambda: mt.tensor([0.0])), mt.InvalidArgumentError, ("depth", "-2"), also=ValueError),
    Misuse("one_hot on_value", on(lambda t: mt.one_hot(t, 2, on_value="yes"), lambda: mt.tensor([0.0])), mt.InvalidArgumentError, ("on_value", "'yes'"), also=ValueError),  # type: ignore[arg-type]
    Misuse("gather out of range", on(lambda a, i: mt.gather(a, i), x23, lambda: mt.tensor([2.0])), mt.InvalidArgumentError, ("index 2.0", "[0, 2)", "(2, 3)"), also=ValueError),
    Misuse("gather of a scalar", named(lambda x, i: mt.gather(x, i), lambda: {"x": mt.scalar(1.0), "i": mt.tensor([0.0])}), mt.InvalidArgumentError, ("scalar",), also=ValueError, code=True),
    Misuse("argmax of a scalar", named(lambda x: mt.argmax(x), lambda: {"x": mt.scalar(1.0)}), mt.InvalidArgumentError, ("argmax", "scalar"), also=ValueError, code=True),
    Misuse("argmax axes", on(lambda a: mt.argmax(a, axis=(0, 1)), x23), mt.InvalidArgumentError, ("argmax", "(0, 1)", "one int"), also=ValueError),  # type: ignore[arg-type]
    Misuse("argmax empty axis", on(lambda a: mt.argmax(a), lambda: mt.zeros((0, 2))), mt.InvalidArgumentError, ("argmax", "no entries", "(0, 2)"), also=ValueError),
    Misuse("norm order", on(lambda a: mt.norm(a, ord=3), x23), mt.InvalidArgumentError, ("ord=3",), also=ValueError),
    Misuse("norm matrix order", on(lambda a: mt.norm(a, ord=1, axis=(0, 1)), x23), mt.InvalidArgumentError, ("matrix norm", "(0, 1)"), also=ValueError),
    Misuse("norm axis", on(lambda a: mt.norm(a, axis="rows"), x23), mt.InvalidArgumentError, ("axis='rows'",), also=ValueError),  # type: ignore[arg-type]
    Misuse("cross-entropy shapes", on(lambda a, b: mt.sigmoid_cross_entropy(a, b), x23, lambda: mt.ones((3,))), mt.ShapeError, ("labels", "(2, 3)", "(3,)"), also=ValueError),
    Misuse("cross-entropy reduction", on(lambda a: mt.softmax_cross_entropy(a, a, reduction="avg"), x23), mt.InvalidArgumentError, ("reduction='avg'",), also=ValueError),
    Misuse("softmax cross-entropy of a scalar", on(lambda a: mt.softmax_cross_entropy(a, a), lambda: mt.scalar(1.0)), mt.InvalidArgumentError, ("scalar", "axis of classes"), also=ValueError),
    Misuse("grad through stop_gradient", on(lambda a: mt.grad(lambda t: mt.stop_gradient(t) * 2.0)(a), lambda: mt.scalar(1.0)), mt.GradientError, ("Cannot compute gradient", "stop_gradient at", "test_misuse.py"), also=ValueError),
    Misuse("grad through a copy", on(lambda a: mt.grad(lambda t: mt.tensor(t) * 2.0)(a), lambda: mt.scalar(1.0)), mt.GradientError, ("Cannot compute gradient", "mt.tensor(...) at", "copied", "test_misuse.py"), also=ValueError, absent=(".item()",)),
    Misuse("gradient of a variable cut by a copy", _cut_variable, mt.GradientKeyError, ("no gradient", "mis_cut_v", "mt.tensor(...) at", "copied"), also=KeyError, absent=("check that f reads the variable",)),
    *[
        Misuse(f"in-place {op}", _inplace(fn, f"mis_in_{fn.__name__}"), mt.UnsupportedOperationError, (f"w {op} delta", f"mis_in_{fn.__name__}", hint), also=TypeError)
        for op, fn, hint in (
            ("+=", operator.iadd, "w.assign_add(delta)"), ("-=", operator.isub, "w.assign_sub(delta)"),
            ("*=", operator.imul, "w.assign(w * delta)"), ("/=", operator.itruediv, "w.assign(w / delta)"),
            ("**=", operator.ipow, "w.assign(w ** delta)"), ("@=", operator.imatmul, "w.assign(w @ delta)"),
        )
    ],
]


def snapshot() -> tuple[object, ...]:
    info = mt.memory()
    st = _runtime.STATE.get()
    variables = {name: (v.data_sync() if not v.is_disposed else None) for name, v in list(VARIABLES.items())}
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
    assert isinstance(err, case.also), f"{type(err).__name__} is not a {case.also.__name__}"
    for fragment in case.absent:
        assert fragment not in text, f"{fragment!r} does not fit:\n{text}"
    if case.hint:
        assert "hint:" in text, f"no hint in:\n{text}"
    else:
        assert "hint:" not in text, f"a hint that does not fit:\n{text}"
    after = snapshot()
    assert after == before, "a failed call changed the arena, the variables or the open tapes/scopes"
    if case.code:
        exec(hint_of(text), {"mt": mt, **NAMES})  # the hint is code: it runs as it stands
    KEEP.clear()
    NAMES.clear()


def hint_of(message: str) -> str:
    """The text after ``hint: `` (one line, as ``explain`` writes it)."""
    lines = [line for line in message.splitlines() if line.startswith("  hint: ")]
    assert len(lines) == 1, message
    return lines[0].removeprefix("  hint: ")


@pytest.mark.slow
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


# ── habits from PyTorch and NumPy: still AttributeError/TypeError, still type errors ──


def test_habits_keep_hasattr_and_getattr_working() -> None:
    from microtape.views.habits import HABITS

    t = mt.tensor([1.0, 2.0])
    w = _var("mis_h_hasattr")
    for name in HABITS:
        assert not hasattr(t, name), name
        assert getattr(t, name, None) is None, name
    for name in ("assign", "assign_add", "assign_sub"):
        assert callable(getattr(w, name))  # a variable's real methods win
    assert not hasattr(w, "grad")


def test_tensors_keep_identity_equality_and_hash() -> None:
    a, b = mt.tensor([1.0]), mt.tensor([1.0])
    assert a == a and a != b  # identity, not values: == makes no mask
    assert {a: "a", b: "b"}[b] == "b"
    assert a in [a] and b not in [a]
    assert a.greater(0).data_sync() == [1.0]  # the mask the ordering operators point to


def test_missing_attributes_do_not_go_through_getattr() -> None:
    # A class with __getattr__ makes CPython read every attribute the slow way
    # (no specialisation), and ops read tensors' attributes all the time.
    assert "__getattr__" not in vars(mt.Tensor)
    assert "__getattribute__" not in vars(mt.Tensor)


def test_assignments_are_refused_by_properties_not_setattr() -> None:
    # A Python __setattr__ would run on every slot the engine sets when it makes a
    # tensor (and on every _holds count): the refusals are the properties' setters.
    for cls in (mt.Tensor, mt.Variable):
        assert all("__setattr__" not in vars(k) for k in cls.__mro__ if k is not object), cls


def test_every_attribute_of_a_tensor_or_variable_refuses_assignment() -> None:
    t, w = mt.tensor([1.0, 2.0]), _var("mis_every_attribute")
    for obj in (t, w):
        names = [n for n in dir(obj) if not n.startswith("_") and isinstance(inspect.getattr_static(obj, n), property)]
        assert {"shape", "size", "id", "dtype", "rank", "grad", "requires_grad"} <= set(names)
        for name in names:
            if name == "trainable" and obj is w:
                continue  # the one attribute that is set: w.trainable = False
            before = repr(getattr(obj, name, None))  # T makes a new tensor at each read
            with pytest.raises(mt.UnsupportedAttributeError) as info:
                setattr(obj, name, 0)
            assert info.value.name == name  # an AttributeError too: hasattr and getattr(..., default) see one
            assert f"t.{name} = 0" in str(info.value) and "hint: " in str(info.value)
            assert repr(getattr(obj, name, None)) == before  # nothing changed
    assert t.shape == (2,) and repr(t) == "Tensor([1.0, 2.0], shape=(2,))"


@pytest.mark.slow
def test_habits_and_typos_stay_type_errors(tmp_path: Path) -> None:
    """The habit block is hidden from type checkers: checked code gets an error for a habit and for a typo."""
    user = tmp_path / "user_code.py"
    lines = [
        "import microtape as mt",
        "t = mt.tensor([1.0, 2.0])",
        "t.bakward()",
        "t.backward()",
        "g = t.grad",
        "n = len(t)",
        "m = t > 0",
        "t.assign([1.0, 2.0])",
        "mt.variable(t).assign([1.0, 2.0])",
        "w = mt.variable(t)",
        "w -= t",
        "t.dataSync()",
        "mt.variableGrads",
        "mt.variable_grads",
    ]
    user.write_text("\n".join(lines) + "\n", encoding="utf-8")
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
         "--config-file", "/dev/null", str(user)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    flagged = {int(line.split(":")[1]) for line in result.stdout.splitlines() if ": error:" in line}
    assert flagged == {3, 4, 5, 6, 7, 8, 11, 12, 13}, result.stdout


# ── docstrings and comments say what code does, not which issue asked for it ──


def test_no_issue_numbers_in_the_code() -> None:
    import re

    root = Path(__file__).resolve().parents[1]
    pattern = re.compile(r"\bissues? *#?\d", re.IGNORECASE)
    found = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for folder in ("microtape", "tests", "tutorials", "bench")
        for path in sorted((root / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "say what the code does instead:\n" + "\n".join(found)


def test_gradient_key_error_lives_with_the_other_errors() -> None:
    from microtape import errors
    from microtape.autodiff import functional

    assert mt.GradientKeyError is errors.GradientKeyError is functional.GradientKeyError
    assert issubclass(mt.GradientKeyError, KeyError) and issubclass(mt.GradientKeyError, mt.MicrotapeError)


# ── what the misuse table's new rows must not break ──


def test_slice_accepts_numbers_and_short_specs_as_tfjs_does() -> None:
    x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert mt.slice(x, 1, 1).tolist() == [[4.0, 5.0, 6.0]]  # begin (1, 0), size (1, -1)
    assert mt.slice(x, [0, 1]).tolist() == [[2.0, 3.0], [5.0, 6.0]]
    assert mt.slice(x, (1,), [1]).tolist() == [[4.0, 5.0, 6.0]]
    assert mt.grad(lambda t: mt.slice(t, 1, 1).sum())(x).tolist() == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]


def test_an_in_place_operator_leaves_the_variable_and_the_name_alone() -> None:
    """``w -= g * 0.1`` used to rebind w to a plain tensor, silently: the variable never moved."""
    w = w_before = _var("mis_in_keep")
    g = mt.tensor([1.0, 1.0])
    with pytest.raises(mt.UnsupportedOperationError, match="assign_sub"):
        w -= g * 0.1  # type: ignore[assignment]  # the mistake under test: a Tensor is not a Variable
    assert w is w_before
    assert w.data_sync() == [1.0, 2.0]
    w.assign_sub(g * 0.1)
    assert w.data_sync() == [0.9, 1.9]
    t = mt.tensor([1.0])
    t += 1.0  # a plain tensor is a value, like an int: += makes a new one
    assert t.item() == 2.0


def test_a_failed_jacobian_leaves_the_tape_usable() -> None:
    x = mt.tensor([1.0, 2.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    with pytest.raises(mt.InvalidArgumentError):
        tape.jacobian([y, y], x)  # type: ignore[arg-type]  # a list: the mistake under test
    jac = tape.jacobian(y, x)
    assert jac is not None and jac.tolist() == [[2.0, 0.0], [0.0, 2.0]]
