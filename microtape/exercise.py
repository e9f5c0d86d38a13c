"""What a check file is written with: ``Exercise``, ``Fail`` and helpers (for teachers).

The classroom's machinery lives in :mod:`microtape.classroom`; this module is the stable
name check files import from (``from microtape.exercise import Exercise, Fail``), shipped
ones and a teacher's hidden ones alike. It re-exports :mod:`microtape.classroom.exercise`
and :mod:`microtape.classroom.check_helpers`.

Examples:
    >>> from microtape.exercise import Exercise
    >>> Exercise("ex99_demo", chapter=4, title="A demo").file
    'ex99_demo.py'
"""

from __future__ import annotations

from .classroom.exercise import Check as Check
from .classroom.exercise import Exercise as Exercise
from .classroom.exercise import Fail as Fail
from .classroom.check_helpers import close as close
from .classroom.check_helpers import depends_on as depends_on
from .classroom.check_helpers import expect_values as expect_values
from .classroom.check_helpers import fmt as fmt
from .classroom.check_helpers import fn as fn
from .classroom.check_helpers import gradcheck_failure as gradcheck_failure
from .classroom.check_helpers import ignores_dy as ignores_dy
from .classroom.check_helpers import integer as integer
from .classroom.check_helpers import leaks as leaks
from .classroom.check_helpers import number as number
from .classroom.check_helpers import off_by as off_by
from .classroom.check_helpers import replaced as replaced
from .classroom.check_helpers import rng as rng
from .classroom.check_helpers import seed_checks as seed_checks
from .classroom.check_helpers import short_where as short_where
from .classroom.check_helpers import tensor_fn as tensor_fn
from .classroom.check_helpers import tensor_of as tensor_of

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
