"""What ``explain_gradient`` returns: ``GradientExplanation``, its ``GradientPath`` rows and their ``GradientStep`` factors.

``explain.py`` builds these from a tape's records. Nothing
here differentiates: a step is one local derivative (one entry of an op's
Jacobian), a path the chain of steps from the scalar output back to one entry
of the input, and an explanation the paths whose contributions add up to
that entry of the gradient. ``str()`` is an aligned table; ``_repr_html_``
is the same table for Jupyter.
"""

from __future__ import annotations

import html
import math
import os
from dataclasses import dataclass

from ..engine.formatting import format_number

__all__ = ["GradientExplanation", "GradientPath", "GradientStep"]

SHOWN_STEPS = 8
"""A longer path shows its first and last steps and says how many it left out."""


@dataclass(slots=True)
class GradientStep:
    """One factor of a path: the local derivative ``d out[entry] / d input[input_entry]`` of one op,
    through its input number ``argument`` (``x * x`` has two: one path each).

    ``where`` is the user's ``file:line`` that ran the op (``"?"`` when no one
    recorded it: ``explain_gradient`` always does).

    Examples:
        >>> x = mt.scalar(3.0)
        >>> step = mt.explain_gradient(lambda x: x * x * 2.0, [x]).paths[0].steps[0]
        >>> step.op, step.local
        ('mul', 2.0)
    """

    op: str
    local: float
    where: str
    entry: tuple[int, ...]
    argument: int
    input_entry: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.op}{_entry(self.entry)} x{format_number(self.local)}"


@dataclass(slots=True)
class GradientPath:
    """One path from the output back to the input entry: ``contribution = upstream * product(local)``.

    A full path starts at the output, so ``upstream`` is 1.0. In a grouped
    explanation (too many paths to list) a row is one edge into an op that
    reads the input: ``upstream`` is the whole gradient that reached that
    op's output entry, and ``steps`` holds that one op.

    Examples:
        >>> x = mt.scalar(3.0)
        >>> e = mt.explain_gradient(lambda x: x * x, [x])
        >>> [p.contribution for p in e.paths]       # d(x*x)/dx = x + x: one path per operand
        [3.0, 3.0]
    """

    contribution: float
    steps: tuple[GradientStep, ...]
    upstream: float = 1.0

    def __str__(self) -> str:
        chain = " <- ".join(str(s) for s in self.steps) or "(the output itself)"
        return f"{format_number(self.contribution)}: {chain}"


@dataclass(frozen=True, slots=True)
class GradientExplanation:
    """Why one entry of a gradient has its value: the paths that make it, largest first.

    ``total`` is the gradient entry (as ``tape.gradient`` computes it);
    ``paths`` the ``top`` largest contributions by magnitude; ``rest`` the
    ``math.fsum`` of the others, so ``fsum(p.contribution for p in paths) +
    rest`` equals ``total`` up to rounding. ``count`` is the number of paths
    (or, when ``grouped``, of edges into the ops that read the input);
    ``connected`` is False when the output does not depend on the input.
    ``dominant`` is the single path with the largest |contribution| (the
    first of ``paths``, or, when grouped, found without listing them).

    Examples:
        >>> x = mt.tensor([1.0, 2.0])
        >>> e = mt.explain_gradient(lambda x: (mt.tanh(x) * 3.0).sum(), [x])
        >>> e.index, e.count, e.grouped
        ((0,), 1, False)
        >>> [s.op for s in e.paths[0].steps]
        ['sum', 'mul', 'tanh']
    """

    total: float
    paths: tuple[GradientPath, ...]
    rest: float
    count: int
    grouped: bool
    connected: bool
    source: str
    index: tuple[int, ...]
    dominant: GradientPath | None

    def _header(self) -> list[str]:
        name = f"{self.source}{_entry(self.index)}"
        lines = [f"d output / d {name} = {format_number(self.total)}"]
        if not self.connected:
            lines.append(f"The output does not depend on {self.source}: no path leads back to it, so the gradient is 0.0.")
        elif self.grouped:
            lines.append(
                f"Too many paths to list: the gradient is split by the {self.count} edges into the ops that read "
                f"{name} (each row: the gradient that reached the output of the op, times its local derivative)."
            )
        else:
            lines.append(f"{self.count} path(s) from the output back to {name}; a contribution is the product of its factors.")
        return lines

    def _rows(self) -> list[Row]:
        rows: list[Row] = [HEADINGS]
        for path in self.paths:
            lead = (format_number(path.contribution), self._share(path.contribution))
            if self.grouped:
                rows.append((*lead, "", "(gradient at its output)", "", format_number(path.upstream), ""))
                lead = ("", "")
            rows += _path_rows(path, lead)
        others = self.count - len(self.paths)
        if others:
            rows.append((format_number(self.rest), self._share(self.rest), "", f"({others} other {'edges' if self.grouped else 'paths'})", "", "", ""))
        return rows

    def _share(self, part: float) -> str:
        if self.total == 0.0 or not math.isfinite(self.total) or not math.isfinite(part):
            return "-"
        return f"{100.0 * part / self.total:.1f} %"

    def __str__(self) -> str:
        lines = self._header()
        if self.paths:
            lines += _table(self._rows())
        if self.grouped and self.dominant is not None:
            lines.append(f"The largest single path contributes {format_number(self.dominant.contribution)}:")
            lines += _table(_path_rows(self.dominant, ("", "")))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        parts = [f"<p>{html.escape(line)}</p>" for line in self._header()]
        if self.paths:
            parts.append(_html_table(self._rows()))
        if self.grouped and self.dominant is not None:
            parts.append(f"<p>{html.escape(f'The largest single path contributes {format_number(self.dominant.contribution)}:')}</p>")
            parts.append(_html_table(_path_rows(self.dominant, ("", ""))))
        return "<div class='microtape-explanation'>" + "".join(parts) + "</div>"


def _html_table(rows: list[Row]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in HEADINGS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows if row != HEADINGS)
    return f"<table><tr>{head}</tr>{body}</table>"


Row = tuple[str, str, str, str, str, str, str]
HEADINGS: Row = ("contribution", "share", "step", "op", "input", "local derivative", "line")


def _path_rows(path: GradientPath, lead: tuple[str, str]) -> list[Row]:
    """One row per step of ``path`` (a long one loses its middle); ``lead`` fills the first row's first two cells."""
    rows: list[Row] = []
    steps = list(enumerate(path.steps, 1))
    keep: list[tuple[int, GradientStep | None]] = list(steps)
    if len(steps) > SHOWN_STEPS:
        keep = [*steps[: SHOWN_STEPS - 2], (len(steps) - SHOWN_STEPS, None), *steps[-2:]]
    for i, step in keep:
        if step is None:
            rows.append(("", "", "...", f"({i} more steps)", "", "", ""))
            continue
        arg = f"{step.argument}{_entry(step.input_entry)}"
        rows.append((*lead, str(i), step.op + _entry(step.entry), arg, format_number(step.local), _short(step.where)))
        lead = ("", "")
    if not path.steps:
        rows.append((*lead, "", "(the input is the output)", "", "", ""))
    return rows


def _table(rows: list[Row]) -> list[str]:
    rows = [HEADINGS, *rows] if rows and rows[0] != HEADINGS else rows
    widths = [max(len(r[c]) for r in rows) for c in range(len(HEADINGS))]
    return ["  " + "   ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]


def _entry(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]" if index else ""


def _short(where: str) -> str:
    """``file:line`` with the file's directory left out (the table stays narrow)."""
    return os.path.basename(where)
