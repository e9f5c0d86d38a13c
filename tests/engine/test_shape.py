"""Broadcasting, axes and index maps: one case per rule."""

from __future__ import annotations

import pytest

import microtape as mt
from microtape.ops.index_maps import broadcast_index, broadcast_shapes, normalize_axes, reduce_index, reduced_shape, transpose_index
from microtape.engine.shape import validate_shape


@pytest.mark.parametrize(
    ("a", "b", "out"),
    [
        ((2, 3), (2, 3), (2, 3)),  # equal shapes
        ((2, 3), (3,), (2, 3)),  # missing leading dims count as 1
        ((2, 1), (1, 3), (2, 3)),  # size-1 dims stretch on both sides
        ((), (4, 5), (4, 5)),  # a scalar broadcasts to anything
        ((5, 1, 4), (3, 1), (5, 3, 4)),
        ((0, 3), (3,), (0, 3)),  # empty dimension
    ],
)
def test_broadcast_rules(a: tuple[int, ...], b: tuple[int, ...], out: tuple[int, ...]) -> None:
    assert broadcast_shapes(a, b) == out
    assert broadcast_shapes(b, a) == out


def test_broadcast_error_names_shapes_and_hints() -> None:
    with pytest.raises(mt.ShapeError) as info:
        broadcast_shapes((2, 3), (2,), "mul")
    err = info.value
    assert err.shapes == ((2, 3), (2,))
    text = str(err)
    assert "mul" in text and "(2, 3)" in text and "(2,)" in text
    assert "reshape" in text and "hint" in text


def test_broadcast_index_maps() -> None:
    assert broadcast_index((3,), (2, 3)) == [0, 1, 2, 0, 1, 2]
    assert broadcast_index((2, 1), (2, 3)) == [0, 0, 0, 1, 1, 1]
    assert broadcast_index((), (2, 2)) == [0, 0, 0, 0]


def test_axes_normalisation() -> None:
    assert normalize_axes(None, 3, "sum") == (0, 1, 2)
    assert normalize_axes(-1, 3, "sum") == (2,)
    assert normalize_axes((2, 0), 3, "sum") == (0, 2)
    with pytest.raises(mt.InvalidArgumentError, match="out of range"):
        normalize_axes(3, 3, "sum")
    with pytest.raises(mt.InvalidArgumentError, match="twice"):
        normalize_axes((0, -3), 3, "sum")
    with pytest.raises(mt.InvalidArgumentError):
        normalize_axes(True, 3, "sum")


def test_reduce_and_transpose_maps() -> None:
    assert reduced_shape((2, 3, 4), (1,), False) == (2, 4)
    assert reduced_shape((2, 3, 4), (1,), True) == (2, 1, 4)
    assert reduce_index((2, 3), (0,)) == [0, 1, 2, 0, 1, 2]
    assert transpose_index((2, 3), (1, 0)) == [0, 3, 1, 4, 2, 5]


@pytest.mark.parametrize("bad", [(-1, 2), (2.5,), "ab", None, (True,)])
def test_validate_shape_rejects(bad: object) -> None:
    with pytest.raises(mt.ShapeError):
        validate_shape(bad)
