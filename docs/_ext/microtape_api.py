"""A small Sphinx extension: the API page, generated from ``microtape.__all__`` and ``__builtin_named__``.

``.. microtape-api::`` expands to one autodoc entry per name in
``microtape.__all__``, grouped by the module that defines it, so a name added
to ``__all__`` (``mt.train``, ``mt.next_frame``, ``mt.save_variables``, ...)
appears on the page without anyone editing ``api.rst``. Submodules listed in
``__all__`` (such as ``train``) get an ``automodule`` of their own ``__all__``.

``.. microtape-supporting-types::`` documents the classes that public
signatures mention but ``microtape`` does not re-export (``tape.Operation``,
``memory.KernelInfo``, ...): every class in the ``__all__`` of a module that
defines a public name, if ``microtape`` does not export that very object.

Signatures name objects by the module that defines them
(``microtape.engine.tensor.Tensor``); the ``missing-reference`` handler below sends
such a reference to the documented public name (``microtape.Tensor``) when it
is the same object, so the page builds clean under ``nitpicky = True``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import types
from collections.abc import Iterator
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.docutils import SphinxDirective, SphinxRole
from sphinx.util.nodes import nested_parse_with_titles, split_explicit_title

PACKAGE = "microtape"

# Book order of the sections, by the defining module's path inside the package: an entry names a
# module or a whole subpackage (the longest match wins); a module not listed lands in "More".
GROUPS: list[tuple[str, tuple[str, ...], str]] = [
    ("Tensors", ("engine.tensor", "engine.convert", "ops.creation", "engine.formatting"), "Creating tensors and reading their values."),
    ("Ops", ("ops",), "Every op is a function ``mt.op(x, ...)`` and, for most, a method ``x.op(...)``."),
    ("Variables", ("engine.variable",), "Named, assignable tensors for model parameters."),
    ("Gradients", ("autodiff", "explain"), "TF.js-style gradient functions and the explicit tape."),
    ("Memory", ("engine.memory", "debug.profiling", "debug.leaks"), "The tidy arena: scopes, ``keep``, ``dispose``, counting and profiling."),
    ("Checking gradients", ("checking",), "Finite differences and the gradient checker."),
    ("Debugging tools", ("debug", "dashboard.next_frame"), "Printing, numerics checks, anomaly detection, statistics, clipping and text plots."),
    ("Training", ("train", "replay"), "Optimizers with the update rules and defaults of TF.js."),
    ("Checkpoints", ("train.checkpoint", "train.checkpoint_format"), "Saving and loading variables as JSON."),
    ("Classroom", ("classroom",), "Checking exercises."),
    ("Language", ("i18n",), "The language of everything microtape prints: English, or Russian from the package's gettext catalog."),
    ("Errors", ("errors",), "Every error microtape raises on purpose is a :class:`~microtape.MicrotapeError`."),
]
MORE = ("More", "Public names defined in other modules.")


def _public() -> dict[str, object]:
    package = importlib.import_module(PACKAGE)
    names = [*package.__all__, *getattr(package, "__builtin_named__", ())]  # builtin-named ones stay out of __all__
    return {name: getattr(package, name) for name in names}


def _home(obj: object) -> str:
    """The defining module's path inside the package, e.g. 'engine.tensor' for microtape.engine.tensor."""
    module = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None) or PACKAGE
    return module.removeprefix(PACKAGE + ".")


def _directive(name: str, obj: object) -> list[str]:
    target = f"{PACKAGE}.{name}"
    if isinstance(obj, types.ModuleType):
        return [f".. automodule:: {obj.__name__}", "   :members:", ""]
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return [f".. autoexception:: {target}", "   :members:", "   :show-inheritance:", ""]
    if inspect.isclass(obj):
        # no "Bases: object" lines, and none for Tensor: its base is the arena's storage (engine.arena.TensorBase);
        # none for typing.Generic either (mt.Function's type variables have no page)
        public_bases = [b for b in obj.__bases__ if b is not object and b.__module__ not in ("microtape.engine.arena", "typing")]
        # a base that microtape does not export is a part of the class split off by concern
        # (GradientTape's engine Tape): its members are documented as the class's own
        exported = {id(o) for o in _public().values()}
        exported |= {id(o) for m in _public().values() if isinstance(m, types.ModuleType) for o in vars(m).values()}
        parts = [b for b in public_bases if b.__module__.startswith(PACKAGE + ".") and id(b) not in exported]
        public_bases = [b for b in public_bases if b not in parts]
        bases = ["   :show-inheritance:"] if public_bases else []
        inherited = ["   :inherited-members: object"] if parts else []
        return [f".. autoclass:: {target}", "   :members:", *inherited, *bases, ""]
    if callable(obj):
        return [f".. autofunction:: {target}", ""]
    return [f".. autodata:: {target}", "   :no-value:", ""]


def _group_of(home: str) -> tuple[str, str]:
    """The group whose entry is the longest match of ``home`` (a module or one of its packages)."""
    best: tuple[int, str, str] | None = None
    for title, homes, blurb in GROUPS:
        for entry in homes:
            if (home == entry or home.startswith(entry + ".")) and (best is None or len(entry) > best[0]):
                best = (len(entry), title, blurb)
    return (best[1], best[2]) if best else MORE


def _order(item: tuple[str, object]) -> tuple[int, str]:
    name, obj = item
    kind = 0 if isinstance(obj, types.ModuleType) else 1 if inspect.isclass(obj) else 2
    return kind, name.lower()


def api_lines() -> Iterator[str]:
    """The reST of the API page body, one section per group."""
    public = _public()
    grouped: dict[str, list[tuple[str, object]]] = {}
    blurbs: dict[str, str] = {}
    for name, obj in public.items():
        title, blurb = _group_of(_home(obj))
        grouped.setdefault(title, []).append((name, obj))
        blurbs[title] = blurb
    titles = [t for t, _, _ in GROUPS] + [MORE[0]]
    for title in titles:
        if title not in grouped:
            continue
        yield title
        yield "-" * len(title)
        yield ""
        yield blurbs[title]
        yield ""
        items = sorted(grouped[title], key=_order)
        names = ", ".join(f":obj:`~{PACKAGE}.{n}`" for n, o in items if not isinstance(o, types.ModuleType))
        if names:
            # The label and the list are apart so that only the label is a
            # message to translate (a list of names is not prose).
            yield ".. rubric:: In this section"
            yield ""
            yield f"{names}."
            yield ""
        for name, obj in items:
            yield from _directive(name, obj)


def supporting_types() -> list[tuple[str, type]]:
    """Public classes of the public names' modules that microtape does not re-export."""
    public = _public()
    exported = {id(obj) for obj in public.values()}
    modules = sorted({getattr(o, "__module__", "") for o in public.values() if not isinstance(o, types.ModuleType)})
    found: list[tuple[str, type]] = []
    # engine.types: the Protocols that signatures use; dashboard.render: what Dashboard.render returns;
    # views.tape_text: the Operation that GradientTape.operations lists
    for modname in [f"{PACKAGE}.engine.types", f"{PACKAGE}.dashboard.render", f"{PACKAGE}.views.tape_text", *modules]:
        if not modname.startswith(PACKAGE + ".") or modname == f"{PACKAGE}.engine.arena":
            continue
        module = importlib.import_module(modname)
        for name, obj in vars(module).items():
            if (
                not name.startswith("_")
                and inspect.isclass(obj)
                and id(obj) not in exported
                and obj.__module__ == modname
            ):
                found.append((f"{modname}.{name}", obj))
    return found


def _parse(directive: SphinxDirective, lines: list[str]) -> list[nodes.Node]:
    """Parse generated reST (titles allowed) in place of ``directive``."""
    source = directive.get_source_info()[0] or "generated"
    content = StringList(lines, source=source)
    node = nodes.section()
    node.document = directive.state.document
    nested_parse_with_titles(directive.state, content, node, content_offset=directive.content_offset)
    return list(node.children)


def module_names() -> list[str]:
    """The package, its subpackages and their public modules (no leading underscore), for ``:mod:`` targets.

    In the order of the package's folders (``README.md``'s "How to read the engine" gives
    the reading order inside each).
    """
    package = importlib.import_module(PACKAGE)
    documented = {o.__name__ for o in _public().values() if isinstance(o, types.ModuleType)}
    names = [PACKAGE] + [
        info.name
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{PACKAGE}.")
        if not any(part.startswith("_") for part in info.name.split("."))
    ]
    return [n for n in names if n not in documented]


class ModulesDirective(SphinxDirective):
    """``.. microtape-modules::``: each module's own docstring (what it owns, what to read first)."""

    def run(self) -> list[nodes.Node]:
        lines: list[str] = []
        public = _public()
        for name in module_names():
            lines += [name, "~" * len(name), "", f".. automodule:: {name}"]
            # mt.memory, mt.tensor, mt.variable are functions with the modules' full
            # names; the function keeps the cross-reference target.
            if name.rpartition(".")[2] in public:
                lines.append("   :no-index:")
            lines.append("")
        return _parse(self, lines)


class ApiDirective(SphinxDirective):
    """``.. microtape-api::``: autodoc entries for every name in ``microtape.__all__``."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        return _parse(self, list(api_lines()))


class SupportingTypesDirective(SphinxDirective):
    """``.. microtape-supporting-types::``: classes that signatures mention but microtape does not export."""

    def run(self) -> list[nodes.Node]:
        lines: list[str] = []
        for qualname, obj in supporting_types():
            if issubclass(obj, BaseException):
                lines += [f".. autoexception:: {qualname}", "   :members:", ""]
            else:
                lines += [f".. autoclass:: {qualname}", "   :members:", ""]
        return _parse(self, lines)


def _lookup(target: str, context: str | None) -> object:
    """The object a dotted reference names, trying the current module first."""
    candidates = [target] if target.startswith(PACKAGE + ".") else []
    if context and context.startswith(PACKAGE):
        candidates.insert(0, f"{context}.{target}")
    for dotted in candidates:
        modname, _, attr = dotted.rpartition(".")
        try:
            return getattr(importlib.import_module(modname), attr)
        except (ImportError, AttributeError):
            continue
    return None


def _redirect(app: Sphinx, env: BuildEnvironment, node: pending_xref, contnode: nodes.TextElement) -> nodes.Node | None:
    """Resolve ``microtape.<module>.<name>`` to the public ``microtape.<alias>`` of the same object.

    Also resolves a bare name written in a docstring (``:func:`profile```) in the
    context of the module that docstring belongs to.
    """
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip("~.")
    obj = _lookup(target, node.get("py:module"))
    if obj is None:
        return None
    for name, public in _public().items():
        if public is obj and f"{PACKAGE}.{name}" != target:
            domain = env.domains["py"]
            new = node.deepcopy()
            new["reftarget"] = f"{PACKAGE}.{name}"
            resolved: nodes.Node | None = domain.resolve_xref(
                env, node.get("refdoc", ""), app.builder, node.get("reftype", "obj"), new["reftarget"], new, contnode
            )
            if resolved is None:
                resolved = domain.resolve_xref(
                    env, node.get("refdoc", ""), app.builder, "obj", new["reftarget"], new, contnode
                )
            if resolved is not None:
                return resolved
    return None


def _alias_names_in_unions() -> None:
    """Show ``autodoc_type_aliases`` names inside unions and generics too.

    Sphinx 9.0 unwraps an alias only at the top of an annotation; nested in
    ``TensorLike | None`` or ``Sequence[TensorLike]`` it prints the name of its
    placeholder class, ``TypeAliasForwardRef``.
    """
    from sphinx.util import inspect as sphinx_inspect
    from sphinx.util import typing as sphinx_typing

    original = sphinx_typing.stringify_annotation
    if getattr(original, "_microtape_patched", False):
        return

    def stringify(annotation: object, /, mode: str = "fully-qualified-except-typing", **kwargs: object) -> str:
        if isinstance(annotation, sphinx_inspect.TypeAliasForwardRef):
            return ("~" if mode == "smart" else "") + annotation.name
        return original(annotation, mode, **kwargs)  # type: ignore[arg-type]

    stringify._microtape_patched = True  # type: ignore[attr-defined]
    sphinx_typing.stringify_annotation = stringify


def _looks_like_a_type(text: str) -> bool:
    """``list[Tensor] | None`` is a type; ``Always ``"float64"```` or ``The ops in order`` is not."""
    flat = re.sub(r"\[[^\]]*\]", "", text)
    return all(" " not in part.strip() for part in re.split(r"[|,]", flat))


def _property_summary(app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    """Keep napoleon from reading a property's first sentence as its type.

    napoleon treats ``"Words here: more words"`` at the top of a property's
    docstring as ``type: description``; when the part before the colon is a
    phrase, not a type, join the two parts with a dash instead.
    """
    if what not in ("property", "attribute") or not lines:
        return
    head, colon, rest = lines[0].partition(": ")
    if colon and not _looks_like_a_type(head):
        lines[0] = f"{head} \N{EM DASH} {rest}"


_BARS = re.compile(r"(?<![`\\|])\|(\w{1,12})\|(?![`|_])")


def _bars_are_text(app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    """Read ``|g|`` in a docstring as the norm of g, not a reST substitution.

    microtape's docstrings write norms as ``|g|`` in plain prose; reST would
    take that for an undefined substitution and fail the build.
    """
    lines[:] = [_BARS.sub(r"\\|\1\\|", line) for line in lines]


def _factory_defaults(
    app: Sphinx, what: str, name: str, obj: object, options: object, signature: str | None, return_annotation: str | None
) -> tuple[str | None, str | None] | None:
    """Show a dataclass field's ``default_factory`` as ``...``; drop a Protocol's signature.

    ``inspect`` renders a factory default as ``<factory>``, which is not
    Python, so Sphinx gives up parsing the whole signature and prints it as
    raw text.
    """
    if signature and "<factory>" in signature:
        return signature.replace("<factory>", "..."), return_annotation
    if what == "class" and signature == "(*args, **kwargs)":
        return "", return_annotation  # a Protocol: nothing to call, so no signature
    return None


# -- :mt:`name` ------------------------------------------------------------------


def _exists(dotted: str) -> bool:
    """Whether ``microtape.<dotted>`` is public (its head in ``__all__``) and documented."""
    head, *rest = dotted.split(".")
    public = _public()
    if head not in public:
        return False
    obj = public[head]
    for part in rest:
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return not rest or bool(getattr(obj, "__doc__", None))


class MtRole(SphinxRole):
    """``:mt:`next_frame``` renders ``mt.next_frame`` linked to its API entry.

    While a name is not (yet) public, it renders as plain code instead of
    failing the nitpicky build; it becomes a link as soon as it lands in
    ``microtape.__all__``. ``:mt:`title <train.sgd>``` sets the text.
    """

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        explicit, title, target = split_explicit_title(self.text)
        target = target.removeprefix("mt.")
        label = title if explicit else f"mt.{target}"
        literal = nodes.literal(label, label, classes=["xref", "py", "py-obj"])
        if not _exists(target):
            return [literal], []
        ref = pending_xref(
            "",
            literal,
            refdomain="py",
            reftype="obj",
            reftarget=f"{PACKAGE}.{target}",
            refexplicit=True,
            refwarn=True,
            refdoc=self.env.docname,
        )
        ref["py:module"] = PACKAGE
        ref["py:class"] = None
        return [ref], []


class ChapterRole(SphinxRole):
    """``:chapter:`4``` links to the chapter ``tutorials/04_*.py`` (text: "chapter 4").

    While the chapter does not exist yet it renders as plain text, so pages can
    point at chapters that are still being written. ``:chapter:`Chapter 4 <4>```
    sets the text.
    """

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        explicit, title, number = split_explicit_title(self.text)
        word = "глава" if (self.config.language or "").startswith("ru") else "chapter"  # the Russian edition
        label = title if explicit else f"{word} {int(number)}"
        found = sorted((Path(self.env.srcdir).parent / "tutorials").glob(f"{int(number):02d}_*.py"))
        text = nodes.inline(label, label)
        if not found:
            return [text], []
        ref = pending_xref(
            "", text, refdomain="std", reftype="doc", reftarget=f"/book/{found[0].stem}",
            refexplicit=True, refwarn=True, refdoc=self.env.docname,
        )
        return [ref], []


# -- .. book-contents:: -----------------------------------------------------------


class BookContentsDirective(SphinxDirective):
    """A table of the book's chapters from rows ``N | Russian title | English title | what it shows``.

    Each row links to the chapter ``tutorials/0N_*.py`` if it exists, so the
    page builds while chapters are still being written.
    """

    has_content = True

    def run(self) -> list[nodes.Node]:
        tutorials = Path(self.env.srcdir).parent / "tutorials"
        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 4 30 30 36", "",
                 "   * - №", "     - Раздел (Russian section)", "     - Chapter", "     - What it shows"]
        for row in self.content:
            if not row.strip():
                continue
            number, russian, english, shows = (cell.strip() for cell in row.split("|", 3))
            found = sorted(tutorials.glob(f"{int(number):02d}_*.py")) if number.isdigit() else []
            if found:
                self.env.note_dependency(str(found[0]))
                # The English edition names the chapter as the row does; any other
                # edition shows the chapter's own (translated) title.
                english_edition = (self.env.config.language or "en").startswith("en")
                chapter = f":doc:`{english} <book/{found[0].stem}>`" if english_edition else f":doc:`book/{found[0].stem}`"
            elif number.isdigit() and "`" not in english:
                chapter = f"{english} *(being written)*"
            else:
                chapter = english
            lines += [f"   * - {number}", f"     - {russian}", f"     - {chapter}", f"     - {shows}"]
        return _parse(self, lines)


# -- .. exercise-list:: -------------------------------------------------------------


class ExerciseListDirective(SphinxDirective):
    """A table of every classroom exercise: file, the chapter it practises, kind and title.

    Generated from the exercises' own metadata (``microtape.classroom.catalog.exercises()``,
    read from each exercise's checks file), so the page lists every exercise
    the grader knows, with the chapter it says it practises.
    """

    def run(self) -> list[nodes.Node]:
        from microtape.classroom.catalog import exercises

        tutorials = Path(self.env.srcdir).parent / "tutorials"
        found = exercises()
        if not found:
            return _parse(self, ["*The exercises are being written; they will be listed here.*"])
        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 34 14 12 40", "",
                 "   * - File", "     - Practises chapter", "     - Kind", "     - Task"]
        for ex in found:
            for part in ("", "checks/"):
                self.env.note_dependency(str(tutorials / "exercises" / f"{part}{ex.file}"))
            chapters = sorted(tutorials.glob(f"{ex.chapter:02d}_*.py"))
            chapter = f":doc:`{ex.chapter} <book/{chapters[0].stem}>`" if chapters else str(ex.chapter)
            kind = "debugging" if ex.kind == "debug" else "writing"
            task = ex.title.replace("|", "\\|") or "\\-"
            lines += [f"   * - ``{ex.file}``", f"     - {chapter}", f"     - {kind}", f"     - {task}"]
        return _parse(self, lines)


# -- .. exercise-statements:: -------------------------------------------------------


class ExerciseStatementsDirective(SphinxDirective):
    """Every starter exercise's task statement (its module docstring), one section each.

    The statement's first line is the section title and the rest is parsed as
    written, so its paragraphs enter this page's gettext catalog with the
    message ids ``microtape.book.statements`` looks up when ``exercises DIR --lang
    ru`` writes the starters in Russian.
    """

    def run(self) -> list[nodes.Node]:
        from microtape.book.resources import starter_files
        from microtape.book.statements import statement

        lines: list[str] = []
        for path in starter_files():
            self.env.note_dependency(str(path))
            title, _, rest = statement(path).strip("\n").partition("\n")
            lines += [title, "~" * len(title), "", f"File ``{path.name}``.", "", *rest.splitlines(), ""]
        return _parse(self, lines)


def en_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: object, options: object = None, content: object = None
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """``:en:`gradient```: an English word quoted in the Russian edition's prose.

    It renders as ``<span class="lang-en">``, which the Russian edition marks
    ``lang="en"`` (``editions.py``), so a reader's browser and the test that
    scans the Russian pages for untranslated English both know the word is
    English on purpose (the glossary gives each term's English name).
    """
    return [nodes.inline(rawtext, text, classes=["lang-en"])], []


def _titles_without_period(app: Sphinx, doctree: nodes.document) -> None:
    """A heading never ends in a period, in any edition.

    An exercise's title is the first sentence of its docstring, so it ends in
    one; the message id keeps it (``exercises DIR --lang ru`` looks the
    Russian sentence up by it) and only the rendered heading drops it. This
    runs on the translated doctree, before the table of contents is collected.
    """
    for title in doctree.findall(nodes.title):
        texts = list(title.findall(nodes.Text))
        if texts and texts[-1].astext().endswith(".") and not texts[-1].astext().endswith(".."):
            last = texts[-1]
            last.parent.replace(last, nodes.Text(last.astext()[:-1]))


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("doctree-read", _titles_without_period, priority=400)  # before the toctree collector (500)
    app.add_directive("exercise-list", ExerciseListDirective)
    app.add_directive("exercise-statements", ExerciseStatementsDirective)
    _alias_names_in_unions()
    app.add_role("mt", MtRole())
    app.add_role("chapter", ChapterRole())
    app.add_role("en", en_role)
    app.add_directive("book-contents", BookContentsDirective)
    app.connect("autodoc-process-signature", _factory_defaults)
    app.connect("autodoc-process-docstring", _property_summary, priority=400)  # before napoleon (500)
    app.connect("autodoc-process-docstring", _bars_are_text, priority=600)  # after napoleon
    app.add_directive("microtape-api", ApiDirective)
    app.add_directive("microtape-modules", ModulesDirective)
    app.add_directive("microtape-supporting-types", SupportingTypesDirective)
    app.connect("missing-reference", _redirect)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
