"""Fixtures several test files share; a module imports the ones it uses."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from microtape.engine.variable import VARIABLES


@pytest.fixture(autouse=True)
def free_variables_made_by_the_test() -> Iterator[None]:
    """Dispose the variables a test made, so fixed names like "w_err" can be reused.

    A failed ``pytest.raises`` keeps the test's frame in a reference cycle, and
    the weakly held names would otherwise stay taken until the next gc run.
    """
    before = set(VARIABLES.keys())
    yield
    for name in set(VARIABLES.keys()) - before:
        v = VARIABLES.get(name)
        if v is not None:
            v.dispose()
