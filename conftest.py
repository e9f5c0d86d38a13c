"""Shared pytest set-up: ``mt`` in every doctest, and no tape or scope left open."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

import microtape as mt
from microtape import _runtime


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace: dict[str, object]) -> None:
    doctest_namespace["mt"] = mt
    doctest_namespace["math"] = math


@pytest.fixture(autouse=True)
def _nothing_left_open() -> Iterator[None]:
    yield
    st = _runtime.STATE.get()
    assert not st.tapes, f"a test left {len(st.tapes)} GradientTape(s) open"
    assert not st.scopes, f"a test left {len(st.scopes)} tidy scope(s) open"
    assert not st.observers, "a test left an observer (profile/leak_check) installed"
    assert not st.anomaly, "a test left detect_anomaly on"
    assert not st.backward, "a test left a backward pass marked as running"
