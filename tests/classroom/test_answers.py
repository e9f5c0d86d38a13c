"""No answers in what students install: no shipped check holds its exercise's solution.

The public checks once held working solutions: the fixed distance in ex07b's
check, a right log-sum-exp in ex04d's, a right clip in ex06's, ex04e's accepted op
names (a student's file printed them from inside itself). Their references now
come from properties (finite differences of the student's own forward, invariants,
plain ``math``) and accepted answers are kept as hashes. This scans the checkout's
check files; ``tests/test_wheel.py`` scans the built wheel and sdist the same way.
"""

from __future__ import annotations

import pytest

from microtape.classroom.catalog import list_exercises

from .answers import REPO, found_in, giveaways

CHECKS = REPO / "tutorials" / "exercises" / "checks"


@pytest.mark.parametrize("name", list_exercises())
def test_no_check_holds_its_solution(name: str) -> None:
    given = giveaways(name)
    assert given["bodies"] or given["answers"], f"{name}: the solution should differ from the starter"
    assert found_in((CHECKS / f"{name}.py").read_text(encoding="utf-8"), name) == []


def test_the_scan_finds_a_solution_where_there_is_one() -> None:
    """The scan itself: the old check of ex04e (its accepted names written out) and a pasted body are found."""
    old = 'if answer.strip() not in ("custom_grad(cube)", "cube"):\n    raise Fail("...")\n'
    assert any(item.startswith("answers:") for item in found_in(old, "ex04e_wrong_factor"))
    body = (REPO / "tutorials" / "exercises" / "solutions" / "ex06_exploding_rnn.py").read_text(encoding="utf-8")
    pasted = "def right_clip(gs, max_norm):\n" + body.split("def clipped_grads")[1].split('"""', 2)[2].split("\n\n\ndef")[0]
    assert any(item.startswith(("bodies:", "lines:")) for item in found_in(pasted, "ex06_exploding_rnn"))
