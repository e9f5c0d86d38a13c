"""What ``explain_gradient`` returns: ``GradientExplanation``, its ``GradientPath`` rows, their
``GradientStep`` factors and the ``BlockedOp`` groups of a gradient stopped by a factor 0.

``paths.py`` builds these from a tape's records. Nothing here differentiates: a step is one local
derivative (one entry of an op's Jacobian), a path the chain of steps from the scalar output back
to one entry of the input, and an explanation the paths whose contributions add up to that entry
of the gradient, with what made it NaN, Inf or 0. ``str()`` is an aligned table; ``_repr_html_``
is the same for Jupyter, every text escaped.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Final

from ..language import N_, tr
from ..engine.formatting import format_number
from ..views.html import escape
from ..views.places import place_of

__all__ = ["BlockedOp", "GradientExplanation", "GradientPath", "GradientStep", "line_words", "through"]

SHOWN_STEPS = 8
"""A longer path shows its first and last steps and says how many it left out."""


def through(upstream: float, local: float, blocks: bool) -> float:
    """What crosses one step: ``upstream * local``, or exactly 0.0 where the step blocks (``where``'s
    unchosen side passes 0.0 whatever reaches it, NaN included; a ``mul`` by 0 passes NaN on).

    Examples:
        >>> from microtape.explain.report import through
        >>> through(2.0, 3.0, False), through(float("inf"), 0.0, False), through(float("nan"), 0.0, True)
        (6.0, nan, 0.0)
    """
    return 0.0 if blocks and local == 0.0 else upstream * local


def line_words(where: str) -> str:
    """``file:line`` as a sentence says it: 'line 7', or 'cell 5, line 3' in Jupyter.

    Examples:
        >>> from microtape.explain.report import line_words
        >>> line_words("/home/me/train.py:7"), line_words("<unknown>")
        ('line 7', 'an unknown line')
    """
    shown = place_of(where)
    if shown != where and not shown.endswith(":" + where.rpartition(":")[2]):  # a cell of a notebook: its own words
        return shown
    file, _, line = shown.rpartition(":")
    return tr("line {line}").format(line=line) if file and line.isdigit() else tr("an unknown line")


@dataclass(slots=True)
class GradientStep:
    """One factor of a path: the local derivative ``d out[entry] / d input[input_entry]`` of one op,
    through its input number ``argument`` (``x * x`` has two: one path each).

    ``where`` is the user's ``file:line`` that ran the op; ``expression`` its text on that line
    (CPython 3.11+, or where the line has one expression of the op's kind); ``operand`` names the
    input the path goes through: the variable's name, the input's name in ``explain_gradient``'s
    ``f``, else its text in the op's expression (``x * w`` has operands ``x`` and ``w``); ``value``
    is that input's value at ``input_entry``, where the derivative is taken. ``blocks`` is True for
    a factor 0 that passes exactly 0.0 whatever reaches it, even Inf or NaN (``where``'s unchosen
    side); a ``mul`` by 0 passes NaN on, as the backward pass does.

    Examples:
        >>> x = mt.scalar(3.0)
        >>> step = mt.explain_gradient(lambda x: x * x * 2.0, [x]).paths[0].steps[0]
        >>> step.op, step.local, step.operand, step.value
        ('mul', 2.0, 'x * x', 9.0)
    """

    op: str
    local: float
    where: str
    entry: tuple[int, ...]
    argument: int
    input_entry: tuple[int, ...]
    operand: str = ""
    value: float | None = None
    blocks: bool = False
    expression: str = ""

    def __str__(self) -> str:
        return f"{self.op}{_entry(self.entry)} x{format_number(self.local)}"

    def input_text(self) -> str:
        """The input this step goes through, with its entry: ``w[0, 1]``, ``(x * w)[2]``, ``input 1[0]``."""
        name = self.operand
        if not name:
            return f"input {self.argument}{_entry(self.input_entry)}"
        if not self.input_entry:
            return name
        return (name if _simple(name) else f"({name})") + _entry(self.input_entry)


@dataclass(slots=True)
class GradientPath:
    """One path from the output back to the input entry: ``contribution = upstream * product(local)``
    (where a step blocks, exactly 0.0 from there on, as in the backward pass).

    A full path starts at the output, so ``upstream`` is 1.0. In a grouped
    explanation (more than 10,000 paths) a row is one edge into an op that
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
class BlockedOp:
    """An op that stops paths with a factor 0: a dead ``relu``, a comparison, ``clip_by_value``
    outside its range, the side ``where`` did not choose.

    ``zeros`` of its ``entries`` on the paths (pairs of an output and an input entry) have
    derivative 0; ``paths`` is how many paths have that factor 0 (a path may have several), and
    ``every`` says that is all of them.

    Examples:
        >>> w = mt.tensor([-1.0, -2.0])
        >>> (blocked,) = mt.explain_gradient(lambda w: mt.relu(w * 3.0).sum(), [w], index=0).blocked
        >>> blocked.op, blocked.zeros, blocked.entries, blocked.every
        ('relu', 1, 1, True)
    """

    op: str
    where: str
    expression: str
    zeros: int
    entries: int
    paths: int
    every: bool

    def sentence(self, source: str, count: int) -> str:
        """'`relu` at line 12: derivative 0 for 128 of 128 entries; every path from `w` passes through it'."""
        head = tr("`{op}` at {line}: derivative 0 for {zeros} of {entries} entries").format(
            op=self.op, line=line_words(self.where), zeros=self.zeros, entries=self.entries)
        if self.every:
            return head + tr("; every path from `{source}` passes through it").format(source=source)
        return head + tr("; {paths} of the {count} paths stop there").format(paths=_count(self.paths), count=_count(count))


@dataclass(frozen=True, slots=True)
class GradientExplanation:
    """Why one entry of a gradient has its value: the paths that make it, largest first.

    ``total`` is the gradient entry, taken from the same backward pass as ``tape.gradient``
    (bit for bit, NaN included); ``paths`` the ``top`` largest contributions by magnitude (NaN
    first); ``rest`` the ``math.fsum`` of the others, so ``fsum(p.contribution for p in paths) +
    rest`` equals ``total`` up to rounding where it is finite. ``count`` is the number of rows:
    the paths, or, when ``grouped`` (more than 10,000 paths), the edges into the ops that read
    the input; ``path_count`` is always the number of paths. ``connected`` is False when no path
    leads back to that entry (the output does not depend on it). ``dominant`` is the single path
    with the largest |contribution| (a NaN or infinite factor counts as largest): the first of
    ``paths``, or, when grouped, found without listing them.

    ``nonfinite`` says, for each listed path that is NaN or Inf, which factor is infinite or NaN
    and which 0 met it; ``blocked`` groups the paths that a factor 0 stops by the op that stops
    them (why a gradient is 0.0), ``stopped`` counts the paths with a factor 0 anywhere; ``notes``
    says what microtape could not know.

    Examples:
        >>> x = mt.tensor([1.0, 2.0])
        >>> e = mt.explain_gradient(lambda x: (mt.tanh(x) * 3.0).sum(), [x])
        >>> e.index, e.count, e.grouped
        ((0,), 1, False)
        >>> [s.op for s in e.paths[0].steps]
        ['sum', 'mul', 'tanh']
        >>> dead = mt.explain_gradient(lambda x: mt.relu(x - 5.0).sum(), [x], index=1)
        >>> dead.total, print(dead.blocked[0].sentence(dead.source, dead.path_count))
        `relu` at line 1: derivative 0 for 1 of 1 entries; every path from `x` passes through it
        (0.0, None)
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
    path_count: int = 0
    blocked: tuple[BlockedOp, ...] = ()
    nonfinite: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    stopped: int = 0

    def _name(self) -> str:
        return f"{self.source}{_entry(self.index)}"

    def _header(self) -> list[str]:
        name = self._name()
        lines = [tr("d output / d {name} = {total}").format(name=name, total=format_number(self.total))]
        if not self.connected:
            if self.total == 0.0 and not self.notes:
                lines.append(tr("The output does not depend on {name}: no path leads back to it, so the gradient is 0.0.").format(name=name))
            else:
                lines.append(tr(
                    "No path that microtape can follow leads back to {name}, and the backward pass gives "
                    "{total}: inconclusive (see below)."
                ).format(name=name, total=format_number(self.total)))
        elif self.grouped:
            lines.append(tr(
                "Too many paths to list ({paths} paths, more than 10,000): the gradient is split by the "
                "{count} edges into the ops that read {name} (each row: the gradient that reached the output of the op, "
                "times its local derivative)."
            ).format(paths=_count(self.path_count), count=self.count, name=name))
        else:
            lines.append(tr("{count} path(s) from the output back to {name}; a contribution is the product of its factors.").format(count=self.count, name=name))
        return lines

    def _legend(self, rows: list[Row]) -> list[str]:
        """The line under the header that says what the short columns mean, and the one file of every line."""
        file = _one_file(rows)
        if file:
            return [tr("(local: the step's local derivative; at: the input's value where it is taken; line: of {file})").format(file=file)]
        return [tr("(local: the step's local derivative; at: the input's value where it is taken)")]

    def _footer(self) -> list[str]:
        """What made the gradient NaN, Inf or 0, and what could not be known."""
        lines: list[str] = []
        if self.nonfinite:
            lines.append(tr("Why the gradient is {total}:").format(total=format_number(self.total)) if not math.isfinite(self.total) else tr("Why some paths are not finite:"))
            lines += [f"  {s}" for s in self.nonfinite]
        if self.blocked:
            if self.total == 0.0 and self.stopped == self.path_count:
                lines.append(tr("The gradient is 0.0 because every path is stopped by a factor 0:"))
            else:
                lines.append(tr("{stopped} of the {paths} paths stop at a factor 0:").format(stopped=_count(self.stopped), paths=_count(self.path_count)))
            lines += [f"  {b.sentence(self.source, self.path_count)}" for b in self.blocked]
        lines += self.notes
        return lines

    def _rows(self) -> list[Row]:
        rows: list[Row] = [HEADINGS]
        for path in self.paths:
            lead = (format_number(path.contribution), self._share(path.contribution))
            if self.grouped:
                rows.append((*lead, "", tr("(gradient at its output)"), "", format_number(path.upstream), "", ""))
                lead = ("", "")
            rows += _path_rows(path, lead)
        others = self.count - len(self.paths)
        if others:
            rows.append((format_number(self.rest), self._share(self.rest), "", (tr("({n} other edges)") if self.grouped else tr("({n} other paths)")).format(n=others), "", "", "", ""))
        return rows

    def _share(self, part: float) -> str:
        if self.total == 0.0 or not math.isfinite(self.total) or not math.isfinite(part):
            return "-"
        return f"{100.0 * part / self.total:.1f} %"

    def __str__(self) -> str:
        lines = self._header()
        rows = self._rows() if self.paths else []
        extra = _path_rows(self.dominant, ("", "")) if self.grouped and self.dominant is not None else []
        if rows or extra:
            lines += self._legend(rows + extra)
        file = _one_file(rows + extra)
        if rows:
            lines += _table(rows, file)
        if extra and self.dominant is not None:
            lines.append(tr("The largest single path contributes {value}:").format(value=format_number(self.dominant.contribution)))
            lines += _table(extra, file)
        lines += self._footer()
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        parts = [f"<p>{escape(line)}</p>" for line in self._header()]
        if self.paths:
            parts.append(_html_table(self._rows()))
        if self.grouped and self.dominant is not None:
            parts.append(f"<p>{escape(tr('The largest single path contributes {value}:').format(value=format_number(self.dominant.contribution)))}</p>")
            parts.append(_html_table(_path_rows(self.dominant, ("", ""))))
        footer = self._footer()
        if footer:
            parts.append("<pre>" + escape("\n".join(footer)) + "</pre>")
        return "<div class='microtape-explanation'>" + "".join(parts) + "</div>"


def _html_table(rows: list[Row]) -> str:
    head = "".join(f"<th>{escape(tr(c))}</th>" for c in HTML_HEADINGS)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows if row != HEADINGS)
    return f"<table><tr>{head}</tr>{body}</table>"


Row = tuple[str, str, str, str, str, str, str, str]
HEADINGS: Row = (N_("contribution"), N_("share"), N_("step"), N_("op"), N_("input"), N_("local"), N_("at"), N_("line"))
HTML_HEADINGS: Row = (
    N_("contribution"), N_("share"), N_("step"), N_("op"), N_("input"), N_("local derivative"), N_("at"), N_("line")
)
TABLE_WIDTH: Final = 100
"""The text table fits in this many characters (the book's output box holds 100 of its monospace
font): the ``op`` and ``input`` cells are cut in the middle with '…' to keep within it."""
MIN_CELL: Final = 16
"""A cut cell keeps at least this many characters."""


def _headings() -> Row:
    """The text table's headings in the reader's language."""
    a, b, c, d, e, f, g, h = (tr(word) for word in HEADINGS)
    return (a, b, c, d, e, f, g, h)


def _path_rows(path: GradientPath, lead: tuple[str, str]) -> list[Row]:
    """One row per step of ``path`` (a long one loses its middle); ``lead`` fills the first row's first two cells."""
    rows: list[Row] = []
    steps = list(enumerate(path.steps, 1))
    keep: list[tuple[int, GradientStep | None]] = list(steps)
    if len(steps) > SHOWN_STEPS:
        keep = [*steps[: SHOWN_STEPS - 2], (len(steps) - SHOWN_STEPS, None), *steps[-2:]]
    for i, step in keep:
        if step is None:
            rows.append(("", "", "...", tr("({n} more steps)").format(n=i), "", "", "", ""))
            continue
        value = "" if step.value is None else format_number(step.value)
        rows.append((*lead, str(i), step.op + _entry(step.entry), step.input_text(), format_number(step.local), value, place_of(step.where)))
        lead = ("", "")
    if not path.steps:
        rows.append((*lead, "", tr("(the input is the output)"), "", "", "", ""))
    return rows


def _one_file(rows: list[Row]) -> str:
    """The file every row's ``file:line`` names, if they all name one file (else '')."""
    files = set()
    for row in rows:
        if row == HEADINGS or not row[7]:
            continue
        file, _, line = row[7].rpartition(":")
        if not file or not line.isdigit() or ", line " in file:
            return ""  # a Jupyter cell, an unknown line: the column keeps its whole text
        files.add(file)
    return files.pop() if len(files) == 1 else ""


def _table(rows: list[Row], file: str = "") -> list[str]:
    """The aligned text table: two spaces between columns; the line column shows only the line
    number when ``file`` holds every line; ``op`` and ``input`` are cut to fit ``TABLE_WIDTH``."""
    body = [r for r in rows if r != HEADINGS]
    if file:
        body = [(*r[:7], r[7].rpartition(":")[2] if r[7] else "") for r in body]
    rows = [_headings(), *body]
    widths = [max(len(r[c]) for r in rows) for c in range(len(HEADINGS))]
    over = 2 + sum(widths) + 2 * (len(widths) - 1) - TABLE_WIDTH
    while over > 0 and max(widths[3], widths[4]) > MIN_CELL:  # cut the wider of op and input, a character at a time
        widths[4 if widths[4] >= widths[3] else 3] -= 1
        over -= 1
    return ["  " + "  ".join(_fit(cell, w).ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def _fit(cell: str, width: int) -> str:
    """``cell`` cut in the middle with '…' to ``width`` characters, its entry (``[0, 1]``) kept whole.

    Examples:
        >>> from microtape.explain.report import _fit
        >>> _fit("(squashed * 3.0 + u * u)[0]", 20)
        '(squashe…+ u * u)[0]'
    """
    if len(cell) <= width:
        return cell
    head, bracket, tail = cell.rpartition("[")
    suffix = bracket + tail if bracket and tail.endswith("]") and len(bracket + tail) < width // 2 else ""
    text = cell[: len(cell) - len(suffix)]
    room = width - len(suffix) - 1
    left = (room + 1) // 2
    return text[:left] + "…" + text[len(text) - (room - left):] + suffix


def _simple(text: str) -> bool:
    """Whether ``text[0]`` reads as an entry of ``text``: a name, an attribute, a call, a subscript."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:  # a cut text ("a…b"): bracket it
        return False
    return isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))


def _entry(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]" if index else ""


def _count(n: int) -> str:
    """A number of paths: '1,024', or 'about 10^752' for one too long to read."""
    return f"{n:,}" if n < 10**15 else tr("about 10^{power}").format(power=len(str(n)) - 1)
