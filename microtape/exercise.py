"""What a check file is written with: ``Exercise``, ``Fail`` and helpers (for teachers).

The classroom's machinery lives in :mod:`microtape.classroom`; this module is the stable
name check files import from (``from microtape.exercise import Exercise, Fail``), shipped
ones and a teacher's hidden ones alike. It re-exports :mod:`microtape.classroom.definition`
and :mod:`microtape.classroom.check_tools`.

Examples:
    >>> from microtape.exercise import Exercise
    >>> Exercise("ex99_demo", chapter=4, title="A demo").file
    'ex99_demo.py'
"""

from __future__ import annotations

from .classroom.definition import Check as Check
from .classroom.definition import Exercise as Exercise
from .classroom.definition import Fail as Fail
from .classroom.check_tools import child_fn as child_fn
from .classroom.check_tools import close as close
from .classroom.check_tools import depends_on as depends_on
from .classroom.check_tools import derivative as derivative
from .classroom.check_tools import digest as digest
from .classroom.check_tools import expect_values as expect_values
from .classroom.check_tools import fmt as fmt
from .classroom.check_tools import fn as fn
from .classroom.check_tools import gradcheck_failure as gradcheck_failure
from .classroom.check_tools import ignores_dy as ignores_dy
from .classroom.check_tools import integer as integer
from .classroom.check_tools import leaks as leaks
from .classroom.check_tools import number as number
from .classroom.check_tools import observe as observe
from .classroom.check_tools import off_by as off_by
from .classroom.check_tools import op_name as op_name
from .classroom.check_tools import replaced as replaced
from .classroom.check_tools import rng as rng
from .classroom.check_tools import seed_checks as seed_checks
from .classroom.check_tools import short_where as short_where
from .classroom.check_tools import tensor_fn as tensor_fn
from .classroom.check_tools import tensor_of as tensor_of

__all__ = [
    "Check",
    "Exercise",
    "Fail",
    "child_fn",
    "close",
    "depends_on",
    "derivative",
    "digest",
    "expect_values",
    "fmt",
    "fn",
    "gradcheck_failure",
    "ignores_dy",
    "integer",
    "leaks",
    "number",
    "observe",
    "off_by",
    "op_name",
    "replaced",
    "rng",
    "seed_checks",
    "short_where",
    "tensor_fn",
    "tensor_of",
]
