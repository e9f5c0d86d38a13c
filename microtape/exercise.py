"""What a check file is written with: ``Exercise``, ``Fail`` and helpers (for teachers).

The classroom's machinery lives in :mod:`microtape.classroom`; this module is the stable
name check files import from (``from microtape.exercise import Exercise, Fail``), shipped
ones and a teacher's hidden ones alike. It re-exports :mod:`microtape.classroom.exercise`.

Examples:
    >>> from microtape.exercise import Exercise
    >>> Exercise("ex99_demo", chapter=4, title="A demo").file
    'ex99_demo.py'
"""

from __future__ import annotations

from .classroom.exercise import Check as Check
from .classroom.exercise import Exercise as Exercise
from .classroom.exercise import Fail as Fail
from .classroom.exercise import close as close
from .classroom.exercise import depends_on as depends_on
from .classroom.exercise import expect_values as expect_values
from .classroom.exercise import fmt as fmt
from .classroom.exercise import fn as fn
from .classroom.exercise import gradcheck_failure as gradcheck_failure
from .classroom.exercise import ignores_dy as ignores_dy
from .classroom.exercise import integer as integer
from .classroom.exercise import leaks as leaks
from .classroom.exercise import number as number
from .classroom.exercise import off_by as off_by
from .classroom.exercise import replaced as replaced
from .classroom.exercise import rng as rng
from .classroom.exercise import seed_checks as seed_checks
from .classroom.exercise import short_where as short_where
from .classroom.exercise import tensor_fn as tensor_fn
from .classroom.exercise import tensor_of as tensor_of

__all__ = [
    "Check",
    "Exercise",
    "Fail",
    "close",
    "depends_on",
    "expect_values",
    "fmt",
    "fn",
    "gradcheck_failure",
    "ignores_dy",
    "integer",
    "leaks",
    "number",
    "off_by",
    "replaced",
    "rng",
    "seed_checks",
    "short_where",
    "tensor_fn",
    "tensor_of",
]
