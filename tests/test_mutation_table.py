"""The mutation check's table stays in step with the code it plants bugs into.

``tests/mutation.py`` is run by hand; each of its mutants names a file, the text it
changes there and the tests that must notice. When code moves (a module split, a
renamed line), a mutant whose text no longer occurs exactly once would be refused by
the script only at the next hand run: this test says so at once.
"""

from __future__ import annotations

import pytest

from .mutation import MUTANTS, ROOT, Mutant


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_every_mutant_applies_once_and_names_real_tests(mutant: Mutant) -> None:
    source = (ROOT / mutant.path).read_text(encoding="utf-8")
    assert source.count(mutant.old) == 1, f"{mutant.name}: {mutant.old!r} must occur once in {mutant.path}; update the mutant"
    assert mutant.new != mutant.old
    missing = [t for t in mutant.tests if not (ROOT / t).is_file()]
    assert not missing, f"{mutant.name}: no such test file {missing}"


def test_mutant_names_are_unique() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names))
