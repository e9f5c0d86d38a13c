"""Finding and loading the exercises: their names, their checks, and which one a file is.

``grader.py`` and ``grade_child.py`` use it. The shipped check files sit in
the ``checks/`` folder of ``microtape.book.resources.exercises_dir()``, one
per exercise, named after it; each makes one ``Exercise`` called
``EXERCISE``. A teacher's folder of hidden checks (``grade --checks DIR``)
has the same layout. A student's file says which exercise it is with a line
``EXERCISE = "exNN_..."``, read here without running the file (``ast``), so
a copy graded from anywhere is matched to its exercise.
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
import re
import sys
import threading
from pathlib import Path

from ..book.resources import exercises_dir
from .definition import Exercise
from ..book.notebooks import NotebookError, code_of, without_bom

__all__ = [
    "check_folder",
    "exercises",
    "identify",
    "list_exercises",
    "load_exercise",
    "sentence",
    "starter_hint",
]


def _checks_dir() -> Path | None:
    folder = exercises_dir()
    return folder / "checks" if folder is not None and (folder / "checks").is_dir() else None


def list_exercises() -> list[str]:
    """Return the names of every exercise the grader knows, in book order.

    Examples:
        >>> from microtape.classroom.catalog import list_exercises
        >>> names = list_exercises()
        >>> names[0], len(names) >= 17
        ('ex00_gradient_by_hand', True)
    """
    folder = _checks_dir()
    return sorted(p.stem for p in folder.glob("ex*.py")) if folder is not None else []


_LOADED: dict[str, Exercise] = {}
_LOCK = threading.Lock()


def load_exercise(name: str, folder: Path | None = None) -> Exercise | None:
    """The exercise called ``name`` with its checks, or None when there is none.

    ``folder`` is a teacher's folder of check files (``grade --checks``);
    by default, the checks shipped with microtape.

    Examples:
        >>> from microtape.classroom.catalog import load_exercise
        >>> ex = load_exercise("ex04_softplus_vjp")
        >>> ex.chapter, ex.file, len(ex.checks) > 0
        (4, 'ex04_softplus_vjp.py', True)
        >>> load_exercise("ex99_nothing") is None
        True
    """
    with _LOCK:
        where = folder if folder is not None else _checks_dir()
        key = f"{where}/{name}"
        if key in _LOADED:
            return _LOADED[key]
        if where is None or not re.fullmatch(r"ex\w+", name) or not (where / f"{name}.py").is_file():
            return None
        module_name = f"_microtape_checks_{name}" if folder is None else f"_microtape_hidden_checks_{len(_LOADED)}_{name}"
        spec = importlib.util.spec_from_file_location(module_name, where / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        exercise = getattr(module, "EXERCISE", None)
        if not isinstance(exercise, Exercise) or exercise.name != name:
            raise RuntimeError(f"{where / name}.py must define EXERCISE = Exercise({name!r}, ...)")
        _LOADED[key] = exercise
        return exercise


def check_folder(folder: Path) -> list[str]:
    """What is wrong with a teacher's folder of check files (``grade --checks``): one line per problem.

    Examples:
        >>> from pathlib import Path
        >>> from microtape.classroom.catalog import check_folder
        >>> check_folder(Path("no/such/folder"))
        ["--checks 'no/such/folder': no such folder."]
    """
    if not folder.is_dir():
        return [f"--checks {str(folder)!r}: no such folder."]
    found = sorted(folder.glob("ex*.py"))
    if not found:
        return [f"--checks {str(folder)!r}: no check files in it (they are named after the exercise, e.g. ex00_gradient_by_hand.py)."]
    problems: list[str] = []
    for path in found:
        try:
            exercise = load_exercise(path.stem, folder.resolve())
        except Exception as err:  # noqa: BLE001 - a teacher's file: report it, do not crash
            problems.append(f"--checks: {path} raised {type(err).__name__}: {err}")
            continue
        if exercise is not None and not exercise.checks:
            problems.append(f"--checks: {path} adds no checks (decorate them with @EXERCISE.check(...)).")
    return problems


def exercises() -> list[Exercise]:
    """Every exercise with its checks, in book order.

    Examples:
        >>> from microtape.classroom.catalog import exercises
        >>> sorted({ex.chapter for ex in exercises()})
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    """
    found = [load_exercise(name) for name in list_exercises()]
    return [ex for ex in found if ex is not None]


def _exercise_name(source: str, notebook: bool = False) -> str | None:
    """The literal ``EXERCISE = "..."`` of a file (or of a notebook's code cells), without running it."""
    if notebook:
        try:
            source = code_of(source).source
        except NotebookError:  # the child reports the broken notebook; find the name in its raw text anyway
            match = re.search(r"EXERCISE\s*(?::\s*str\s*)?=\s*\\?[\"'](\w+)\\?[\"']", source)
            return match.group(1) if match else None
    try:
        tree = ast.parse(source)
    except SyntaxError:  # the child reports the syntax error; find the name anyway
        match = re.search(r"^EXERCISE\s*(?::\s*str\s*)?=\s*[\"'](\w+)[\"']", source, re.MULTILINE)
        return match.group(1) if match else None
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        named = any(isinstance(t, ast.Name) and t.id == "EXERCISE" for t in targets)
        if named and isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return None


def sentence(text: str) -> str:
    """``text`` ending as a sentence ends: with its own ``?`` or ``!``, else a full stop (never ``?.``).

    Examples:
        >>> from microtape.classroom.catalog import sentence
        >>> sentence("was the notebook saved completely?"), sentence("no cells"), sentence("done.")
        ('was the notebook saved completely?', 'no cells.', 'done.')
    """
    text = text.rstrip()
    return text if text.endswith((".", "?", "!")) else f"{text}."


def starter_hint(name: str) -> str:
    """How to grade a file, for a path that cannot be graded: the starters to copy, or an example command.

    Examples:
        >>> from microtape.classroom.catalog import starter_hint
        >>> starter_hint("ex04_softplus_vjp.py")
        'copy the starters with python -m microtape exercises DIR, then: python -m microtape grade DIR/ex04_softplus_vjp.py'
    """
    stem = Path(name).stem
    if stem in list_exercises():
        return f"copy the starters with python -m microtape exercises DIR, then: python -m microtape grade DIR/{stem}.py"
    return "pass the path of your exercise file (or a folder of them), e.g. python -m microtape grade mywork/ex04_softplus_vjp.py"


def identify(path: Path, checks_dir: Path | None = None) -> tuple[Exercise, str] | tuple[str, str]:
    """``(exercise, source)`` for a gradable file, else ``(what is wrong, hint)``.

    An exercise that only a teacher's ``checks_dir`` has is found there. The
    source is the file's text: for a notebook (``.ipynb``), its JSON (its
    ``EXERCISE`` line is read from its code cells).

    Examples:
        >>> from pathlib import Path
        >>> from microtape.classroom.catalog import identify
        >>> identify(Path("no/such/file.py"))[0]
        "'no/such/file.py': no such file."
    """
    if not path.is_file():
        what = "is a directory, not a file" if path.is_dir() else "no such file"
        return f"{str(path)!r}: {what}.", starter_hint(str(path))
    try:
        source = without_bom(path.read_text(encoding="utf-8"))  # Python ignores a byte-order mark; so does the grader
    except (OSError, UnicodeDecodeError) as err:
        return f"cannot read {str(path)!r}: {err}.", "save the exercise as a UTF-8 text file."
    name = _exercise_name(source, notebook=path.suffix == ".ipynb")
    known = ", ".join(list_exercises())
    if name is None and path.suffix == ".ipynb":
        try:
            code_of(source)
        except NotebookError as err:
            return f"{str(path)!r} is not a notebook the grader can read: {sentence(str(err))}", "open it in Jupyter and save it again, or start again from exercises DIR --notebook."
    if name is None:
        return (
            f"{str(path)!r} does not say which exercise it is: it has no line EXERCISE = \"...\".",
            f'every starter file sets it, e.g. EXERCISE = "ex04_softplus_vjp"; known exercises: {known}.',
        )
    exercise = load_exercise(name)
    if exercise is None and checks_dir is not None:
        exercise = load_exercise(name, checks_dir)
    if exercise is None:
        close = difflib.get_close_matches(name, list_exercises(), n=1)
        did_you_mean = f"did you mean {close[0]!r}? " if close else ""
        return f"unknown exercise EXERCISE = {name!r} in {str(path)!r}.", f"{did_you_mean}known exercises: {known}."
    return exercise, source
