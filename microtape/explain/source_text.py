"""The text of an op's sub-expression in the user's line, and of each of its operands, so that two
``mul`` on one line read differently: ``x * w`` and ``(x * w) * 2.0``.

A tape keeps one ``(file, line)`` tuple per call site (``engine/user_line.py``'s ``SPOTS`` holds
them by code object and instruction offset), so the tuple a record holds leads back to the call's
instruction. CPython 3.11+ gives that instruction's columns (``co_positions()``), hence the exact
sub-expression. On 3.10 the line is the fallback, made as exact as it can be: the instruction is
the n-th of its kind on its line (the third ``*``, the second call), and the expressions of that
kind on the line, in the order Python evaluates them, give the n-th; so the book prints the same
on every version. Where even that fails, an expression is used only if it is the one of its kind
on the line. The operands are read off the expression: the two sides of ``x * w``, the arguments
of ``mt.where(c, a, b)``, the receiver of ``h.sum()``. Where nothing fits, the text is empty.
"""

from __future__ import annotations

import ast
import dis
import linecache
import re
from collections.abc import Iterator
from dataclasses import dataclass
from types import CodeType
from typing import Final

from ..engine.user_line import SPOTS

__all__ = ["Site", "SourceTexts", "short_text"]

MAX_TEXT: Final = 48
"""Longer texts are cut with an ellipsis."""

_OPERATORS: Final[dict[type[ast.AST], str]] = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow", ast.MatMult: "matmul",
}  # fmt: skip
_UNARY: Final[dict[type[ast.AST], str]] = {ast.USub: "neg"}
_IMPORT: Final = re.compile(r"^\s*import\s+microtape(?:\s+as\s+(\w+))?\s*$", re.MULTILINE)


def short_text(text: str) -> str:
    """One line of at most ``MAX_TEXT`` characters (whitespace folded, the middle cut with '…').

    Examples:
        >>> from microtape.explain.source_text import short_text
        >>> short_text("(x  *\\n   w).sum()")
        '(x * w).sum()'
    """
    one = " ".join(text.split())
    if len(one) <= MAX_TEXT:
        return one
    half = (MAX_TEXT - 1) // 2
    return one[:half] + "…" + one[-half:]


@dataclass(frozen=True)
class Site:
    """What the source says about one call site: the op's expression and its operands' texts."""

    expression: str
    """The op's sub-expression (``""`` when the source or the columns are missing)."""
    operands: tuple[str, ...] | None
    """The text of each input, in the op's order, when the expression is the op's own call."""


_NOTHING: Final = Site("", None)


class SourceTexts:
    """Texts of the call sites of one tape's records, found once per call site and op."""

    def __init__(self) -> None:
        self._sites: dict[int, tuple[CodeType, int]] | None = None
        self._found: dict[tuple[int, str, int], Site] = {}
        self._positions: dict[int, list[tuple[int | None, int | None, int | None, int | None]]] = {}
        self._aliases: dict[str, frozenset[str]] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._instructions: dict[int, list[dis.Instruction]] = {}

    def site(self, where: tuple[str, int] | None, op: str, n_inputs: int) -> Site:
        """The texts for an op called ``op`` with ``n_inputs`` inputs (-1: a list) at ``where``."""
        if where is None:
            return _NOTHING
        key = (id(where), op, n_inputs)
        found = self._found.get(key)
        if found is None:
            try:
                found = self._read(where, op, n_inputs)
            except (SyntaxError, ValueError, IndexError, UnicodeError, RecursionError, MemoryError):  # source that is not what ran
                found = _NOTHING
            self._found[key] = found
        return found

    def _read(self, where: tuple[str, int], op: str, n_inputs: int) -> Site:
        file, line = where
        lines = linecache.getlines(file)
        if not 0 < line <= len(lines):
            return _NOTHING
        aliases = self._module_names(file, lines)
        span = self._span(where)
        if span is not None:
            text = _segment(lines, *span)
            if text is not None:
                node, wrapped = _parse(text)
                if node is not None:
                    operands = _operands(node, wrapped, op, n_inputs, aliases)
                    return Site(short_text(text), operands)
                return Site(short_text(text), None)
        counted = self._counted(where, lines)
        if counted is not None:
            found_node, source = counted
            text = ast.get_source_segment(source, found_node) or ""
            return Site(short_text(text), _operands(found_node, source, op, n_inputs, aliases))
        # no columns and no count: the line's one expression of the op's kind, if it has just one
        statement = lines[line - 1].strip()
        tree = _parse_statement(statement)
        if tree is None:
            return _NOTHING
        fits = [n for n in ast.walk(tree) if isinstance(n, ast.expr) and _operands(n, statement, op, n_inputs, aliases) is not None]
        if len(fits) != 1:
            return _NOTHING
        segment = ast.get_source_segment(statement, fits[0]) or ""
        return Site(short_text(segment), _operands(fits[0], statement, op, n_inputs, aliases))

    def _call_site(self, where: tuple[str, int]) -> tuple[CodeType, int] | None:
        """The code object and instruction offset of the call site whose tuple is ``where``."""
        if self._sites is None:
            self._sites = {}
            for code, offsets in list(SPOTS.values()):
                if offsets is not None and isinstance(code, CodeType):
                    for offset, spot in list(offsets.items()):
                        self._sites[id(spot)] = (code, offset)
        return self._sites.get(id(where))

    def _span(self, where: tuple[str, int]) -> tuple[int, int, int, int] | None:
        """(first line, last line, first column, end column) of the call's instruction, if known."""
        found = self._call_site(where)
        if found is None:
            return None
        code, offset = found
        positions = self._positions.get(id(code))
        if positions is None:
            reader = getattr(code, "co_positions", None)  # CPython 3.11+
            if reader is None:
                return None
            positions = self._positions[id(code)] = list(reader())
        at = offset // 2
        if not 0 <= at < len(positions):
            return None
        first, last, start, end = positions[at]
        if first is None or last is None or start is None or end is None or first != where[1]:
            return None
        return first, last, start, end

    def _counted(self, where: tuple[str, int], lines: list[str]) -> tuple[ast.AST, str] | None:
        """Without columns (3.10): the expression of the call's instruction, found as the n-th of its
        kind on its line in the order of evaluation, within the code object's own scope."""
        found = self._call_site(where)
        if found is None or hasattr(found[0], "co_positions"):
            return None
        code, offset = found
        line = where[1]
        instructions = self._instructions.get(id(code))
        if instructions is None:
            instructions = self._instructions[id(code)] = list(dis.get_instructions(code))
        # the call is the last instruction at or before the offset; count those of its kind before it
        upto = [ins for ins in instructions if ins.offset <= offset]
        kind = _instruction_kind(upto[-1]) if upto else None
        if kind is None:
            return None
        current = None
        nth = 0
        for ins in upto[:-1]:
            if ins.starts_line is not None:
                current = ins.starts_line
            if current == line and _instruction_kind(ins) == kind:
                nth += 1
        tree = self._tree(code.co_filename, lines)
        scope = None if tree is None else _scope(tree, code)
        if scope is None:
            return None
        candidates = [n for n in _in_order(scope) if getattr(n, "lineno", None) == line and _node_kind(n) == kind]
        source = "".join(lines)
        return (candidates[nth], source) if nth < len(candidates) else None

    def _tree(self, file: str, lines: list[str]) -> ast.Module | None:
        if file not in self._trees:
            try:
                self._trees[file] = ast.parse("".join(lines))
            except (SyntaxError, ValueError):
                self._trees[file] = None
        return self._trees[file]

    def _module_names(self, file: str, lines: list[str]) -> frozenset[str]:
        """The names microtape goes by in ``file`` (``mt`` for ``import microtape as mt``)."""
        found = self._aliases.get(file)
        if found is None:
            names = {"mt", "microtape"}
            for match in _IMPORT.finditer("".join(lines)):
                names.add(match.group(1) or "microtape")
            found = self._aliases[file] = frozenset(names)
        return found


def _segment(lines: list[str], first: int, last: int, start: int, end: int) -> str | None:
    """The source between two positions (columns count UTF-8 bytes, as the compiler's do)."""
    if last < first or last > len(lines):
        return None
    if first == last:
        raw = lines[first - 1].encode("utf-8")[start:end]
    else:
        parts = [lines[first - 1].encode("utf-8")[start:]]
        parts += [lines[i].encode("utf-8") for i in range(first, last - 1)]
        parts.append(lines[last - 1].encode("utf-8")[:end])
        raw = b"".join(parts)
    text = raw.decode("utf-8")
    return text if text.strip() else None


def _parse(text: str) -> tuple[ast.expr | None, str]:
    """``text`` as one expression (in brackets, so it may span lines), and the text parsed."""
    wrapped = "(" + text + "\n)"
    try:
        return ast.parse(wrapped, mode="eval").body, wrapped
    except SyntaxError:
        return None, wrapped


def _parse_statement(statement: str) -> ast.AST | None:
    """One line of code as a statement: a block's header (``if a * b > 0:``) gets a body."""
    for attempt in (statement, statement + " pass", statement.rstrip("\\") + " 0"):
        try:
            return ast.parse(attempt)
        except SyntaxError:
            continue
    return None


def _operands(node: ast.AST, source: str, op: str, n_inputs: int, modules: frozenset[str]) -> tuple[str, ...] | None:
    """The texts of the op's inputs, if ``node`` is the op's own expression."""
    found: list[ast.expr] | None = None
    if isinstance(node, ast.BinOp):
        if _OPERATORS.get(type(node.op)) == op:
            found = [node.left, node.right]
    elif isinstance(node, ast.UnaryOp):
        if _UNARY.get(type(node.op)) == op:
            found = [node.operand]
    elif isinstance(node, ast.Attribute):
        if node.attr == "T" and op == "transpose":
            found = [node.value]
    elif isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name == op and not any(isinstance(a, ast.Starred) for a in node.args):
            method = isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name) and func.value.id in modules)
            args = ([func.value] if isinstance(func, ast.Attribute) and method else []) + list(node.args)
            if n_inputs < 0:
                found = list(args[0].elts) if args and isinstance(args[0], (ast.List, ast.Tuple)) else None
            elif len(args) >= n_inputs:
                found = args[:n_inputs]
    if found is None or (n_inputs >= 0 and len(found) != n_inputs):
        return None
    texts = [ast.get_source_segment(source, part) for part in found]
    if any(t is None for t in texts):
        return None
    return tuple(short_text(t) for t in texts if t is not None)


_BINARY_OPNAMES: Final[dict[str, str]] = {
    "ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "TRUE_DIVIDE": "/", "POWER": "**", "MATRIX_MULTIPLY": "@",
}  # fmt: skip
_SYMBOLS: Final[dict[type[ast.AST], str]] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@"}
_SCOPES: Final = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _instruction_kind(ins: dis.Instruction) -> tuple[str, str] | None:
    """('call', ''), ('binary', '*'), ('unary', '-') for the instructions an op can be called from."""
    name = ins.opname
    if name.startswith("CALL") and name != "CALL_INTRINSIC_1" and name != "CALL_INTRINSIC_2":
        return ("call", "")
    if name == "BINARY_OP":
        return ("binary", ins.argrepr.rstrip("="))
    for prefix in ("BINARY_", "INPLACE_"):
        if name.startswith(prefix) and name[len(prefix) :] in _BINARY_OPNAMES:
            return ("binary", _BINARY_OPNAMES[name[len(prefix) :]])
    if name == "UNARY_NEGATIVE":
        return ("unary", "-")
    return None


def _node_kind(node: ast.AST) -> tuple[str, str] | None:
    """The instruction kind ``node`` compiles to (None for a constant expression, which is folded)."""
    if isinstance(node, (ast.Call, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return ("call", "")
    if isinstance(node, ast.BinOp) and type(node.op) in _SYMBOLS:
        return None if _constant(node) else ("binary", _SYMBOLS[type(node.op)])
    if isinstance(node, ast.AugAssign) and type(node.op) in _SYMBOLS:
        return ("binary", _SYMBOLS[type(node.op)])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return None if _constant(node) else ("unary", "-")
    return None


def _constant(node: ast.AST) -> bool:
    """Whether the compiler folds ``node`` into a constant (``2.0 * 3.0``, ``-1.0``)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.BinOp):
        return _constant(node.left) and _constant(node.right)
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    return False


def _scope(tree: ast.Module, code: CodeType) -> ast.AST | None:
    """The part of ``tree`` compiled into ``code``: the module, one function, one lambda or comprehension."""
    name, first = code.co_name, code.co_firstlineno
    if name == "<module>":
        return tree
    kinds: dict[str, type[ast.AST]] = {"<lambda>": ast.Lambda, "<listcomp>": ast.ListComp, "<setcomp>": ast.SetComp,
                                       "<dictcomp>": ast.DictComp, "<genexpr>": ast.GeneratorExp}  # fmt: skip
    wanted = kinds.get(name)
    parameters = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    found = []
    for node in ast.walk(tree):
        if wanted is not None and isinstance(node, wanted) and getattr(node, "lineno", None) == first:
            if not isinstance(node, ast.Lambda) or [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)] == parameters:
                found.append(node)
        elif wanted is None and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if start == first:
                found.append(node)
    return found[0] if len(found) == 1 else None


def _in_order(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope``'s own code (not of the functions, lambdas and comprehensions in it),
    each after the nodes evaluated before it: an assignment's value before its targets."""
    if isinstance(scope, ast.Lambda):
        roots: list[ast.AST] = [scope.body]
    elif isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
        roots = list(scope.body)
    elif isinstance(scope, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        first, *others = scope.generators  # the first iterable is evaluated outside, in the enclosing scope
        roots = [first.target, *first.ifs, *others]
        roots += [scope.key, scope.value] if isinstance(scope, ast.DictComp) else [scope.elt]
    else:
        roots = [scope]
    for root in roots:
        yield from _post_order(root)


def _post_order(node: ast.AST) -> Iterator[ast.AST]:
    if isinstance(node, _SCOPES):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in node.decorator_list:  # decorators run in the enclosing scope
                yield from _post_order(d)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            yield from _post_order(node.generators[0].iter)
            yield node  # then the comprehension's own code is called: one call instruction
        return
    children = list(ast.iter_child_nodes(node))
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        children = [node.value, *[c for c in children if c is not node.value]]
    for child in children:
        yield from _post_order(child)
    yield node
