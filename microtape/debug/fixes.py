"""The code a hint of ``detect_anomaly`` suggests: the user's own expression, rewritten from its source line.

A hint that is code must fix what it points at, in the reader's names. So
the rewrites here read the statement at the line an op was called from
(``linecache`` and ``ast``), find the call, and splice in the fix: the
double ``where`` (compute a singular op only on safe values where a
``where`` hides it), ``norm`` for a hand-written ``sqrt`` of a sum of
squares, ``log_softmax`` for the log of a softmax, ``log_sigmoid`` for the
log of a sigmoid, ``softplus`` for ``log(1 + exp(x))``. Each function
returns ``(original, replacement)`` source text, or ``None`` when the line
cannot be read or does not have the expected shape: then the hint is words.
"""

from __future__ import annotations

import ast
import linecache
import textwrap
from dataclasses import dataclass

__all__ = ["Rewrite", "double_where", "log_of_sigmoid", "log_of_softmax", "norm_of_squares", "softplus_of_exp", "statement_at"]


@dataclass(frozen=True)
class Rewrite:
    """A fix in the user's own code: replace ``original`` (found verbatim at ``where``) by ``replacement``."""

    where: str
    original: str
    replacement: str


@dataclass(frozen=True)
class _Statement:
    """A statement as parsed: its text (what ``ast`` offsets index) and tree."""

    text: str
    tree: ast.AST

    def source(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.text, node) or ""

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Character offsets of ``node`` in ``text``."""
        lines = self.text.splitlines(keepends=True)
        line: int = getattr(node, "lineno", 1)  # every expression and statement node has positions
        end_line: int = getattr(node, "end_lineno", None) or line
        start = sum(len(text) for text in lines[: line - 1]) + int(getattr(node, "col_offset", 0))
        end = sum(len(text) for text in lines[: end_line - 1]) + int(getattr(node, "end_col_offset", 0) or 0)
        return start, end


def statement_at(where: str) -> _Statement | None:
    """The statement that starts at ``where`` (``file:line``), parsed: a ``return`` or a
    continued line is read as far as it goes (up to 20 lines). None if it cannot be read."""
    path, _, line = where.rpartition(":")
    if not path or not line.isdigit():
        return None
    first = int(line)
    lines: list[str] = []
    for k in range(first, first + 20):
        text = linecache.getline(path, k)
        if not text:
            break
        lines.append(text)
        block = textwrap.dedent("".join(lines))
        for wrapped in (block, "def _f():\n" + textwrap.indent(block, "    ")):  # a return parses inside a def
            try:
                tree = ast.parse(wrapped)
            except SyntaxError:
                continue
            return _Statement(wrapped, tree)
    return None


def _name_of(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _module_prefix(call: ast.Call, statement: _Statement) -> str:
    """How the user's line names microtape: ``mt.`` in ``mt.where(...)``, nothing in ``where(...)``."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id + "."
    if isinstance(func, ast.Name):
        return ""
    return "mt."


def _calls(node: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and _name_of(n) == name]


_ARITY = {"sqrt": 1, "log": 1, "log1p": 1, "log2": 1, "exp": 1, "expm1": 1, "sin": 1, "cos": 1, "div": 2, "pow": 2, "atan2": 2}
_OPERATORS: dict[str, type[ast.operator]] = {"div": ast.Div, "pow": ast.Pow}


def _operand(node: ast.AST, op: str, index: int) -> ast.AST | None:
    """The input ``index`` of the first call of ``op`` inside ``node``: in a call ``mt.op(a, b)``, a
    method ``a.op(b)`` or an operator ``a / b``, ``a ** b``; None if there is none."""
    arity = _ARITY.get(op, 1)
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and _name_of(n) == op and not n.keywords:
            if len(n.args) == arity:
                return n.args[index]
            if len(n.args) == arity - 1 and isinstance(n.func, ast.Attribute):  # a method: x.sqrt(), a.div(b)
                return n.func.value if index == 0 else n.args[index - 1]
        kind = _OPERATORS.get(op)
        if kind is not None and isinstance(n, ast.BinOp) and isinstance(n.op, kind):
            return n.left if index == 0 else n.right
    return None


def _splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def double_where(
    mask_where: str, side: int, producer: str, index: int, safe: str, producer_where: str | None = None,
) -> Rewrite | None:
    """The double ``where``: the ``where`` at ``mask_where`` hides its argument ``side`` (1 or 2)
    where its condition says so, but ``producer``'s input ``index`` inside it is singular there:
    compute ``producer`` on ``safe`` values at those entries.

    ``mt.where(c, mt.sqrt(x), 0.0)`` becomes
    ``mt.where(c, mt.sqrt(mt.where(c, x, 1.0)), 0.0)``. When the producer sits on
    its own line (``s = mt.sqrt(x)``, then ``mt.where(c, s, 0.0)``), that line is
    rewritten instead, with the where's condition.
    """
    statement = statement_at(mask_where)
    if statement is None:
        return None
    for call in _calls(statement.tree, "where"):
        if len(call.args) != 3:
            continue
        condition, branch = call.args[0], call.args[side]
        prefix = _module_prefix(call, statement)
        guarded = _operand(branch, producer, index)
        if guarded is not None:
            original = statement.source(call)
            g_start, g_end = statement.span(guarded)
            c_start, _ = statement.span(call)
            inner = statement.source(guarded)
            cond = statement.source(condition)
            wrapped = f"{prefix}where({cond}, {inner}, {safe})" if side == 1 else f"{prefix}where({cond}, {safe}, {inner})"
            replacement = _splice(original, g_start - c_start, g_end - c_start, wrapped)
            return Rewrite(mask_where, original, replacement)
        if isinstance(branch, ast.Name) and producer_where is not None:
            found = _rewrite_assignment(producer_where, branch.id, producer, index, safe, side, statement.source(condition), prefix)
            if found is not None:
                return found
    return None


def _rewrite_assignment(where: str, name: str, producer: str, index: int, safe: str, side: int, cond: str, prefix: str) -> Rewrite | None:
    statement = statement_at(where)
    if statement is None or name in {n.id for n in ast.walk(ast.parse(cond)) if isinstance(n, ast.Name)}:
        return None  # the condition reads the value being assigned: it cannot move before it
    for node in ast.walk(statement.tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            guarded = _operand(node.value, producer, index)
            if guarded is None:
                return None
            original = statement.source(node)
            n_start, _ = statement.span(node)
            g_start, g_end = statement.span(guarded)
            inner = statement.source(guarded)
            wrapped = f"{prefix}where({cond}, {inner}, {safe})" if side == 1 else f"{prefix}where({cond}, {safe}, {inner})"
            return Rewrite(where, original, _splice(original, g_start - n_start, g_end - n_start, wrapped))
    return None


def _squared(node: ast.AST) -> ast.AST | None:
    """``x`` when ``node`` is ``x ** 2``, ``x * x``, ``mt.square(x)`` or ``x.square()``."""
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) and node.right.value in (2, 2.0):
            return node.left
        if isinstance(node.op, ast.Mult) and ast.dump(node.left) == ast.dump(node.right):
            return node.left
    if isinstance(node, ast.Call) and _name_of(node) == "square":
        if node.args:
            return node.args[0]
        if isinstance(node.func, ast.Attribute):
            return node.func.value
    return None


def norm_of_squares(sqrt_where: str) -> Rewrite | None:
    """``mt.sqrt((x ** 2).sum())`` (or ``mt.sqrt(mt.sum(x * x, axis=1))``) as ``mt.norm(x)``: the same
    value, with the gradient 0 at x = 0 (a subgradient) instead of 0·inf = NaN."""
    statement = statement_at(sqrt_where)
    if statement is None:
        return None
    for call in _calls(statement.tree, "sqrt"):
        inner = call.args[0] if call.args else None
        if not isinstance(inner, ast.Call) or _name_of(inner) != "sum":
            continue
        keywords = [k for k in inner.keywords if k.arg in ("axis", "keepdims")]
        if isinstance(inner.func, ast.Attribute) and not inner.args and not (
            isinstance(inner.func.value, ast.Name) and inner.func.value.id in ("mt", "microtape")
        ):
            squared = _squared(inner.func.value)  # (x ** 2).sum()
        else:
            squared = _squared(inner.args[0]) if inner.args else None  # mt.sum(x * x)
        if squared is None:
            continue
        prefix = _module_prefix(call, statement)
        args = [statement.source(squared)] + [f"{k.arg}={statement.source(k.value)}" for k in keywords]
        return Rewrite(sqrt_where, statement.source(call), f"{prefix}norm({', '.join(args)})")
    return None


def log_of_softmax(log_where: str, softmax_where: str) -> Rewrite | None:
    """``mt.log(mt.softmax(z))`` (on one line, or ``p = mt.softmax(z)`` then ``mt.log(p)``) as
    ``mt.log_softmax(z)``: finite where the softmax rounds to 0, and its gradient right there."""
    statement = statement_at(log_where)
    source = statement_at(softmax_where)
    if statement is None or source is None:
        return None
    softmaxes = _calls(source.tree, "softmax")
    if not softmaxes:
        return None
    soft = softmaxes[0]
    logits = soft.args[0] if soft.args else (soft.func.value if isinstance(soft.func, ast.Attribute) else None)
    if logits is None:
        return None
    keywords = [f"{k.arg}={source.source(k.value)}" for k in soft.keywords if k.arg == "axis"]
    for call in _calls(statement.tree, "log"):
        prefix = _module_prefix(call, statement)
        text = ", ".join([source.source(logits), *keywords])
        return Rewrite(log_where, statement.source(call), f"{prefix}log_softmax({text})")
    return None


def log_of_sigmoid(log_where: str, sigmoid_where: str, complement: bool) -> Rewrite | None:
    """``mt.log(mt.sigmoid(x))`` as ``mt.log_sigmoid(x)``, and ``mt.log(1 - mt.sigmoid(x))`` as
    ``mt.log_sigmoid(-(x))``: finite for large ``|x|``, where the sigmoid rounds to 0 or 1."""
    statement = statement_at(log_where)
    source = statement_at(sigmoid_where)
    if statement is None or source is None:
        return None
    sigmoids = _calls(source.tree, "sigmoid")
    if not sigmoids:
        return None
    sig = sigmoids[0]
    x = sig.args[0] if sig.args else (sig.func.value if isinstance(sig.func, ast.Attribute) else None)
    if x is None:
        return None
    for call in _calls(statement.tree, "log"):
        prefix = _module_prefix(call, statement)
        arg = f"-({source.source(x)})" if complement else source.source(x)
        return Rewrite(log_where, statement.source(call), f"{prefix}log_sigmoid({arg})")
    return None


def softplus_of_exp(exp_where: str) -> Rewrite | None:
    """``mt.log(1 + mt.exp(x))`` (or ``mt.log(mt.exp(x) + 1)``) as ``mt.softplus(x)``: no overflow above 709."""
    statement = statement_at(exp_where)
    if statement is None:
        return None
    for call in _calls(statement.tree, "log"):
        inner = call.args[0] if call.args else None
        if not (isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Add)):
            continue
        for one, other in ((inner.left, inner.right), (inner.right, inner.left)):
            if isinstance(one, ast.Constant) and one.value in (1, 1.0) and isinstance(other, ast.Call) and _name_of(other) == "exp" and other.args:
                prefix = _module_prefix(call, statement)
                return Rewrite(exp_where, statement.source(call), f"{prefix}softplus({statement.source(other.args[0])})")
    return None
