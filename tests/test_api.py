"""The public API contract: DESIGN.md's names exist and are exported, every public name has a docstring
with a runnable example, tensors have their documented members, and the optimizers and error classes
are what the contract says (the errors are MicrotapeErrors and also the builtins they extend)."""

from __future__ import annotations

import inspect

import pytest

import microtape as mt
from microtape.debug.printing import print_tensor

CONTRACT = """
Tensor scalar tensor tensor1d tensor2d zeros ones fill zeros_like ones_like random_normal random_uniform
add sub mul div neg square sqrt pow exp log abs sin cos tanh sigmoid relu maximum minimum
sum mean max matmul transpose reshape clip_by_value softmax log_softmax logsumexp concat stack where
greater less equal variable Variable grad grads value_and_grad value_and_grads variable_grads custom_grad
GradientTape tidy keep dispose memory profile leak_check numerical_grad check_grads print check_numerics
detect_anomaly clip_by_norm clip_by_global_norm grad_stats GradientMonitor next_frame train
MicrotapeError ShapeError TapeError DisposedTensorError GradientCheckError NumericsError AnomalyError
save_variables load_variables
""".split()

TENSOR_MEMBERS = "shape size rank dtype id data_sync tolist item dispose is_disposed".split()
TRAIN = "sgd momentum adagrad adadelta adam adamax rmsprop".split()


PUBLIC = [*mt.__all__, *mt.__builtin_named__]
"""Every public name: ``__all__`` and the names that are also builtins (kept out of ``import *``)."""


@pytest.mark.parametrize("name", CONTRACT)
def test_contract_name_exists_and_is_exported(name: str) -> None:
    assert hasattr(mt, name), f"mt.{name} is part of the contract"
    assert name in PUBLIC


def test_all_is_complete_sorted_and_without_repeats() -> None:
    assert len(set(PUBLIC)) == len(PUBLIC)
    assert mt.__all__ == sorted(mt.__all__), "keep microtape.__all__ in sorted order"
    for name in PUBLIC:
        assert hasattr(mt, name), name


def test_star_import_shadows_no_builtin() -> None:
    """``from microtape import *`` used to replace print, sum, max, min, abs, pow and slice."""
    import builtins

    namespace: dict[str, object] = {}
    exec("from microtape import *", namespace)  # noqa: S102 - the statement under test
    assert not set(namespace) & set(dir(builtins)) - {"__builtins__"}
    assert set(mt.__builtin_named__) == {n for n in PUBLIC if n in dir(builtins)}
    assert mt.print is print_tensor and mt.sum(mt.tensor([1.0, 2.0])).item() == 3.0


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_name_has_a_runnable_example(name: str) -> None:
    obj = getattr(mt, name)
    doc = inspect.getdoc(obj) or ""
    assert doc, f"mt.{name} has no docstring"
    if inspect.ismodule(obj):
        for fn_name in getattr(obj, "__all__", []):
            member = getattr(obj, fn_name)
            assert ">>>" in (inspect.getdoc(member) or ""), f"mt.{name}.{fn_name} has no example"
        return
    assert ">>>" in doc, f"mt.{name}'s docstring has no runnable example"


def test_tensor_members() -> None:
    t = mt.tensor([1.0])
    for member in TENSOR_MEMBERS:
        assert hasattr(t, member), member
    assert float(t) == 1.0


def test_optimizers_and_errors_are_related() -> None:
    for name in TRAIN:
        assert callable(getattr(mt.train, name))
    for err in (mt.ShapeError, mt.TapeError, mt.DisposedTensorError, mt.GradientCheckError, mt.NumericsError, mt.AnomalyError):
        assert issubclass(err, mt.MicrotapeError)
    assert issubclass(mt.ShapeError, ValueError) and issubclass(mt.GradientCheckError, AssertionError)
