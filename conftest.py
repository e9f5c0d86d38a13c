"""Shared pytest set-up: ``mt`` in every doctest, no tape or scope left open, and the slow tier.

A test that uses one of the expensive fixtures named below (both book builds,
the session fixture of ``tests/conftest.py``; the wheel in a fresh venv; grading
the whole exercise table) is marked
``slow`` here, so ``pytest -m "not slow"`` leaves it out however it is named,
and gets a time limit that covers the fixture's set-up (pytest-timeout counts
it in the first test that uses it).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator

import pytest

import microtape as mt
from microtape.engine import arena as _runtime


# fixture name -> seconds its first test may take (pyproject's default is 300)
SLOW_FIXTURES: dict[str, int] = {"editions": 1800, "installed": 1200, "graded": 1200}
# doctests that start processes or train for seconds
SLOW_DOCTESTS = {"microtape.dashboard.demo.train_rnn", "microtape.classroom.grader.grade"}


@pytest.fixture(autouse=True, scope="module")
def _freeze_what_earlier_modules_left() -> None:
    """Collect, then freeze what is still alive (modules, test items and reports, Hypothesis'
    strategies, earlier modules' fixtures) out of the garbage collector's sight, at the start of
    each test module. The tests that call ``gc.collect()`` to count tensors (the misuse table,
    the arena) then scan only what their own module made: about three times faster."""
    gc.collect()
    gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if isinstance(item, pytest.DoctestItem) and item.name in SLOW_DOCTESTS:
            item.add_marker(pytest.mark.slow)
        limits = [SLOW_FIXTURES[name] for name in getattr(item, "fixturenames", ()) if name in SLOW_FIXTURES]
        if limits:
            item.add_marker(pytest.mark.slow)
            if item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(max(limits)))


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
