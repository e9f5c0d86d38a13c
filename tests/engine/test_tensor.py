"""Tensors: the creation functions (seeded random ones too), attributes, reading the values
(data_sync, tolist, item, float, bool, async data), repr, hashing by identity, and the errors of
building a tensor from values or a shape that do not fit."""

from __future__ import annotations

import copy
import math
import pickle

import pytest

import microtape as mt


def test_creation_functions() -> None:
    assert mt.scalar(3).shape == ()
    assert mt.tensor([[1, 2], [3, 4]]).data_sync() == [1.0, 2.0, 3.0, 4.0]
    assert mt.tensor([1, 2, 3, 4], shape=(2, 2)).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert mt.tensor1d([1, 2]).rank == 1
    assert mt.tensor2d([[1.0]]).rank == 2
    assert mt.zeros((2, 3)).data_sync() == [0.0] * 6
    assert mt.ones((2,)).data_sync() == [1.0, 1.0]
    assert mt.fill((3,), 2.5).data_sync() == [2.5] * 3
    assert mt.zeros_like(mt.ones((2, 2))).shape == (2, 2)
    assert mt.ones_like(mt.zeros((1,))).data_sync() == [1.0]
    assert mt.tensor([]).shape == (0,)
    assert mt.tensor([[], []]).shape == (2, 0)
    assert mt.tensor((1, True)).data_sync() == [1.0, 1.0]


def test_random_is_seeded_and_shaped() -> None:
    a = mt.random_normal((50,), mean=2.0, stddev=0.5, seed=3)
    b = mt.random_normal((50,), mean=2.0, stddev=0.5, seed=3)
    assert a.data_sync() == b.data_sync()
    assert abs(sum(a.data_sync()) / 50 - 2.0) < 0.3
    u = mt.random_uniform((100,), -2.0, -1.0, seed=1)
    assert all(-2.0 <= v < -1.0 for v in u.data_sync())


def test_attributes_and_reading() -> None:
    t = mt.tensor([[1.0, 2.0, 3.0]])
    assert (t.shape, t.size, t.rank, t.dtype) == ((1, 3), 3, 2, "float64")
    assert t.id != mt.tensor([1.0]).id
    assert mt.scalar(2.5).item() == 2.5 and float(mt.tensor([[4.0]])) == 4.0
    assert mt.scalar(5).tolist() == 5.0
    assert t.array_sync() == [[1.0, 2.0, 3.0]]
    copy = t.data_sync()
    copy[0] = 99.0
    assert t.data_sync()[0] == 1.0  # data_sync returns a copy; tensors are immutable


def test_tolist_and_anything_with_tolist() -> None:
    class FakeArray:
        def tolist(self) -> list[list[float]]:
            return [[1.0, 2.0], [3.0, 4.0]]

    assert mt.tensor(FakeArray()).shape == (2, 2)  # type: ignore[arg-type]
    assert mt.tensor(mt.tensor([1.0, 2.0])).data_sync() == [1.0, 2.0]


def test_repr_is_stable_and_readable() -> None:
    assert repr(mt.tensor([[1.0, 2.0], [3.0, 4.0]])) == "Tensor([[1.0, 2.0], [3.0, 4.0]], shape=(2, 2))"
    assert repr(mt.scalar(math.e)) == "Tensor(2.718, shape=())"
    assert repr(mt.tensor([1e-5, float("nan"), float("-inf")])) == "Tensor([1e-05, nan, -inf], shape=(3,))"
    big = repr(mt.zeros((2000,)))
    assert "..." in big and big.endswith("shape=(2000,))") and len(big) < 200
    t = mt.ones((2,))
    t.dispose()
    assert "disposed" in repr(t)
    v = mt.variable(mt.scalar(1.0), name="repr_v")
    assert repr(v) == "Variable(1.0, shape=(), name='repr_v', trainable=True)"


@pytest.mark.parametrize(
    ("values", "error", "fragment"),
    [
        ([[1.0, 2.0], [3.0]], mt.ShapeError, "ragged"),
        ([[1.0], 2.0], mt.ShapeError, "mixed"),
        (["a", "b"], mt.InvalidArgumentError, "'a'"),
        (None, mt.InvalidArgumentError, "None"),
        ([1.0, None], mt.InvalidArgumentError, "None"),
        ("12", mt.InvalidArgumentError, "'12'"),
        ([1 + 2j], mt.InvalidArgumentError, "complex"),
    ],
)
def test_bad_construction_input(values: object, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as info:
        mt.tensor(values)  # type: ignore[arg-type]
    assert fragment in str(info.value)
    assert "hint" in str(info.value)
    assert isinstance(info.value, mt.MicrotapeError)


@pytest.mark.parametrize("shape", [(3, 2), (-1, 4), (2.0, 2), (True, 4)])
def test_shape_that_does_not_fit(shape: tuple[int, ...]) -> None:
    with pytest.raises(mt.ShapeError) as info:
        mt.tensor([1.0, 2.0, 3.0, 4.0], shape=shape)
    assert "hint" in str(info.value)


def test_rank_specific_constructors_check_rank() -> None:
    with pytest.raises(mt.ShapeError, match="tensor1d"):
        mt.tensor1d([[1.0]])  # type: ignore[list-item]
    with pytest.raises(mt.ShapeError, match="tensor2d"):
        mt.tensor2d([1.0, 2.0])  # type: ignore[list-item]
    with pytest.raises(mt.InvalidArgumentError):
        mt.scalar("1")  # type: ignore[arg-type]
    with pytest.raises(mt.InvalidArgumentError):
        mt.fill((2,), None)  # type: ignore[arg-type]
    with pytest.raises(mt.InvalidArgumentError):
        mt.zeros_like("ab")  # type: ignore[arg-type]


def test_item_needs_one_entry() -> None:
    with pytest.raises(mt.InvalidArgumentError, match=r"shape \(2,\)"):
        mt.tensor([1.0, 2.0]).item()


def test_bool_of_a_tensor() -> None:
    assert bool(mt.scalar(2.0)) and not bool(mt.tensor([0.0]))
    with pytest.raises(mt.MicrotapeError, match="ambiguous"):
        bool(mt.tensor([1.0, 2.0]))


def test_tensors_hash_by_identity_and_are_not_sequences() -> None:
    a, b = mt.tensor([1.0]), mt.tensor([1.0])
    assert len({a, b}) == 2
    assert a == a and a != b  # identity, not elementwise


def test_async_data() -> None:
    import asyncio

    assert asyncio.run(mt.tensor([1.0, 2.0]).data()) == [1.0, 2.0]


def test_a_tensor_copies_as_itself_and_a_variable_refuses_to_be_copied() -> None:
    t = mt.tensor([1.0, 2.0])
    assert copy.copy(t) is t and copy.deepcopy([t])[0] is t  # immutable, as a tuple
    w = mt.variable(t, name="w_copied")
    with pytest.raises(mt.UnsupportedOperationError, match="w_copied_copy"):
        copy.deepcopy(w)
    with pytest.raises(mt.UnsupportedOperationError, match="pickle"):
        pickle.dumps(w)
    w.dispose()


def test_a_pickled_tensor_comes_back_as_a_new_tensor_with_its_values_and_shape() -> None:
    t = mt.zeros((0, 3))
    back = pickle.loads(pickle.dumps([mt.tensor([[1.0, 2.0]]), t]))
    assert [(b.tolist(), b.shape) for b in back] == [([[1.0, 2.0]], (1, 2)), ([], (0, 3))]
    assert not any(b.is_disposed for b in back) and back[1] is not t


def test_calling_the_classes_directly() -> None:
    before = mt.memory().num_tensors
    t = mt.Tensor([[1, 2]], shape=(2,))
    assert (t.shape, t.data_sync(), t.op) == ((2,), [1.0, 2.0], "tensor")
    assert mt.memory().num_tensors == before + 1  # in the arena, as every tensor
    with pytest.raises(mt.UnsupportedOperationError, match="mt.variable"):
        mt.Variable(t)
    assert mt.memory().num_tensors == before + 1  # the refused variable left nothing behind
    t.dispose()
