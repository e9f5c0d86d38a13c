"""The command line: ``python -m microtape tour | selfcheck | exercises DIR | grade FILE``.

Read last. ``tour`` prints the book's chapters in the terminal,
``selfcheck`` gradient-checks every primitive in the op table,
``exercises DIR`` copies the starter exercises into a folder for a student
(``--notebook``: as Jupyter notebooks; ``exercises --list`` lists them:
chapter, kind, expected minutes), and ``grade FILE`` checks a classroom
exercise (a ``.py`` file or a notebook) (see :mod:`microtape.classroom.grader`). Any
command ends quietly on Ctrl-C (exit 130) or when its reader goes away
(``... | head``: exit 141), and prints ``?`` for a character the terminal
cannot show rather than crash.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final, TextIO

from .engine.primitive import OPS
from .checking.samples import CASES, Case
from .checking.gradcheck import GradCheckMode, GradCheckOrder, check_grads
from .ops.creation import tensor
from .engine.tensor import Tensor
from .errors import MicrotapeError
from .i18n import messages
from .i18n.messages import Language
from . import language
from .language import tr

__all__ = ["KINDS", "exercises", "list_exercises", "main", "program_name", "selfcheck"]

LANGUAGES = messages.LANGUAGES
"""The languages of the command line: the tour's prose, the starters, the grader's reports, ``--help``."""


_RUNS: Final[tuple[tuple[str, GradCheckMode, GradCheckOrder], ...]] = (("full", "full", 1), ("fast", "fast", 1), ("order 2", "full", 2))
"""selfcheck's columns: (label, check_grads mode, order)."""


def _run_case(case: Case, mode: GradCheckMode, order: GradCheckOrder) -> tuple[bool, float]:
    op = OPS[case.name]
    from .engine.arena import DISPATCH, run_in_scope

    fn = DISPATCH[case.name]

    def run() -> tuple[bool, float]:
        xs = [tensor(v) for v in case.inputs]
        if op.n_inputs < 0:
            report = check_grads(lambda *ts: fn(list(ts), **case.params), xs, mode=mode, order=order)
        else:
            report = check_grads(lambda *ts: fn(*ts, **case.params), xs, mode=mode, order=order)
        return report.ok, report.max_abs_error

    result = run_in_scope("selfcheck", run)
    assert isinstance(result, tuple)
    return result


def selfcheck(out: TextIO | None = None) -> int:
    """Gradient-check every primitive at its sample inputs; print a table (in ``mt.set_language``'s language); return the exit code.

    Each op is checked in full and fast mode, and at order 2: the gradient
    of its gradient against finite differences of the first gradient. The
    samples keep away from kinks, so piecewise-constant ops (comparisons,
    ``sign``) and the masks in relu's or max's VJP show second derivatives
    of exactly 0.

    Examples:
        >>> import io
        >>> from microtape.cli import selfcheck
        >>> buffer = io.StringIO()
        >>> selfcheck(buffer)
        0
        >>> buffer.getvalue().splitlines()[-1]
        'selfcheck passed: every primitive agrees with finite differences, first and second derivatives'
    """
    stream = out if out is not None else sys.stdout
    failures = 0
    wide = {label: max(len(tr(label)) + 1, 6 if label != "order 2" else 8) for label in ("full", "fast", "order 2")}
    cases_w, worst_w = max(len(tr("cases")), 6), max(len(tr("worst abs err")) + 1, 14)
    print(f"{tr('op'):<22}{tr('cases'):>{cases_w}}  " + "".join(f"{tr(k):<{w}}" for k, w in wide.items()) + f"{tr('worst abs err'):>{worst_w}}", file=stream)
    for name in sorted(OPS):
        cases = CASES.get(name, [])
        if cases and not OPS[name].differentiable:
            print(f"{name:<22}{len(cases):>{cases_w}}  " + tr("no tape records it: its gradient is none by design"), file=stream)
            continue
        if not cases:
            print(f"{name:<22}{0:>{cases_w}}  " + tr("no sample inputs: add them to microtape/checking/samples.py"), file=stream)
            failures += 1
            continue
        verdicts = {"full": True, "fast": True, "order 2": True}
        worst = 0.0
        for case in cases:
            for label, mode, order in _RUNS:
                ok, err = _run_case(case, mode, order)
                verdicts[label] &= ok
                worst = max(worst, err)
        marks = {k: tr("ok") if v else tr("FAIL") for k, v in verdicts.items()}
        failures += sum(1 for v in verdicts.values() if not v)
        print(f"{name:<22}{len(cases):>{cases_w}}  " + "".join(f"{marks[k]:<{w}}" for k, w in wide.items()) + f"{worst:>{worst_w}.2e}", file=stream)
    if failures:
        print(tr("selfcheck FAILED: {failures} check(s) disagree with finite differences").format(failures=failures), file=stream)
        return 1
    print(tr("selfcheck passed: every primitive agrees with finite differences, first and second derivatives"), file=stream)
    return 0


def mini_tour(out: TextIO) -> None:
    from .autodiff.functional import grads, variable_grads
    from .explain.steps import accumulated_text, tensor_text
    from .autodiff.gradient_tape import GradientTape
    from .engine.memory import tidy
    from .engine.variable import variable

    print("microtape tour: the Russian text's two first examples\n", file=out)
    w = variable(0.5, name="tour_w")
    b = variable(0.0, name="tour_b")
    x = tensor([1.0, 2.0, 3.0, 4.0])
    y = tensor([1.0, 3.0, 5.0, 7.0])

    def loss() -> Tensor:
        return tidy(lambda: ((x * w + b - y) ** 2).mean())

    value, g = variable_grads(loss)
    print("linear model y = w*x + b on x=[1,2,3,4], y=[1,3,5,7], w=0.5, b=0", file=out)
    print(f"  loss = {value!r}\n  dL/dw = {g[w]!r}\n  dL/db = {g[b]!r}\n", file=out)
    px, py = variable(2.0, name="tour_x"), variable(3.0, name="tour_y")
    dx, dy = grads(lambda a, c: a * a + c * c)([px, py])
    print("f(x, y) = x^2 + y^2 at (2, 3):", file=out)
    print(f"  df/dx = {dx!r}, df/dy = {dy!r}", file=out)
    with GradientTape() as tape:
        f = px * px + py * py
    print("  the backward pass, one VJP at a time (tape.backward_steps):", file=out)
    for step in tape.backward_steps(f, {"x": px, "y": py}):
        vjp = ", ".join(tensor_text(g) for g in step.grads)
        print(f"    {step.index}. {step.op}: dout {tensor_text(step.dout)} -> {vjp}; so far {accumulated_text(step, ' = ')}", file=out)
    px.assign(px - dx * 0.1)
    py.assign(py - dy * 0.1)
    print(f"  after one SGD step with lr 0.1: x = {px.item():.4g}, y = {py.item():.4g}", file=out)


def tour(chapter: int | None = None, out: TextIO | None = None, pause: bool = False, figures: Path | None = None, lang: Language | None = None) -> int:
    """Print the book's chapters in the terminal (all, or one with ``chapter``).

    With ``pause``, wait for Enter between chapters; with ``figures`` (a
    folder), save each plot there as a PNG and print its path. ``lang="ru"``
    prints the prose in Russian, from the Russian edition's catalogs (English
    where a paragraph has no translation), and what the chapters print too;
    by default the language is ``mt.set_language``'s, else ``MICROTAPE_LANG``'s.

    Examples:
        >>> import io
        >>> from microtape.cli import tour
        >>> buffer = io.StringIO()
        >>> tour(chapter=0, out=buffer)
        0
        >>> "Gradient debugging (Отладка градиентов)" in buffer.getvalue()
        True
    """
    stream = out if out is not None else sys.stdout
    from .book import tour

    chosen = messages.default_language() if lang is None else lang
    return tour.run(chapter, stream, fallback=mini_tour, pause=input if pause else None, figures=figures, lang=chosen)


def replace_unencodable(stream: object) -> None:
    """Print ``?`` for what the terminal cannot encode instead of raising UnicodeEncodeError.

    A Windows console, or ``PYTHONIOENCODING=cp1252``, cannot encode the
    tour's box-drawing characters, sparklines or Russian text; Python's
    default there is to raise. A stream that already has an error handler, or
    that is not a text file (a test's StringIO), is left alone.

    Examples:
        >>> import io
        >>> raw = io.BytesIO()
        >>> out = io.TextIOWrapper(raw, encoding="cp1252")
        >>> replace_unencodable(out)
        >>> print("▸ Градиент", file=out, flush=True)
        >>> raw.getvalue()
        b'? ????????\\n'
    """
    if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
        stream.reconfigure(errors="replace")


def program_name() -> str:
    """How the user called the command line: ``python3 -m microtape`` or ``microtape``.

    Examples:
        >>> from microtape.cli import program_name
        >>> program_name().endswith("microtape")
        True
    """
    called = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if called == "__main__.py":
        interpreter = Path(sys.orig_argv[0]).name if sys.orig_argv else "python"
        return f"{interpreter} -m microtape"
    if called.startswith("microtape"):
        return "microtape"
    return "python -m microtape"


def exercises(folder: Path, force: bool = False, out: TextIO | None = None, lang: Language | None = None, notebook: bool = False) -> int:
    """Copy the starter exercises into ``folder``; return the exit code.

    Only the starters (``ex*.py``) are copied, never the solutions. Files
    already in ``folder`` are not overwritten unless ``force``; when one is
    in the way nothing is copied (exit code 1). With ``lang="ru"`` each
    starter's task statement (its docstring) is written in Russian, from the
    catalog of the book's exercises page, and so are its comments, function
    docstrings and TODO messages (``i18n/starters_ru.py``); the code
    stays as it is. With ``notebook``, each starter is written as a Jupyter
    notebook (``exNN_name.ipynb``: the task statement in a Markdown cell, the
    code in code cells), which ``grade`` accepts like the ``.py`` file.

    Examples:
        >>> import io, tempfile
        >>> from pathlib import Path
        >>> from microtape.cli import exercises
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     buffer = io.StringIO()
        ...     code = exercises(Path(tmp) / "mine", out=buffer)
        ...     names = sorted(p.name for p in (Path(tmp) / "mine").iterdir())
        >>> code, names[0], "solution" in " ".join(names)
        (0, 'ex00_gradient_by_hand.py', False)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     code = exercises(Path(tmp), out=io.StringIO(), notebook=True)
        ...     names = sorted(p.name for p in Path(tmp).iterdir())
        >>> code, names[0]
        (0, 'ex00_gradient_by_hand.ipynb')
    """
    from .i18n import messages as messages_of
    from .book import resources
    from .book import statements
    from .book.notebooks import starter_notebook

    stream = out if out is not None else sys.stdout
    lang = messages_of.default_language() if lang is None else lang
    if lang not in LANGUAGES:
        print(f"no starters in {lang!r}: the languages are {', '.join(LANGUAGES)}", file=stream)
        return 2
    starters = resources.starter_files()
    if not starters:
        print(messages_of.say(lang, "no_starters"), file=stream)
        return 1
    suffix = ".ipynb" if notebook else ".py"
    in_the_way = [folder / f"{p.stem}{suffix}" for p in starters if (folder / f"{p.stem}{suffix}").exists()]
    if in_the_way and not force:
        names = ", ".join(str(p) for p in in_the_way)
        print(messages_of.say(lang, "not_copying", names=names, s="s" * (len(in_the_way) == 1)), file=stream)
        again = " --notebook" * notebook + f" --lang {lang}" * (lang != "en")
        print(messages_of.say(lang, "pick_another", command=f"{program_name()} exercises {folder}{again} --force"), file=stream)
        return 1
    folder.mkdir(parents=True, exist_ok=True)
    messages = statements.catalog(lang)
    for path in starters:
        target = folder / f"{path.stem}{suffix}"
        if lang == "ru" or notebook:
            source = path.read_text(encoding="utf-8")
            if lang == "ru":
                source = statements.grade_in(statements.translate_starter(statements.translate_code(source), messages), lang)
            # the notebook is written from the very text the .py starter would hold (its language included)
            target.write_text(starter_notebook(source, path.stem) if notebook else source, encoding="utf-8")
        else:
            shutil.copyfile(path, target)
        print(messages_of.say(lang, "wrote", path=target), file=stream)
    command = f"{program_name()} grade {folder / f'{starters[0].stem}{suffix}'}" + " --lang ru" * (lang == "ru")
    print(messages_of.say(lang, "work_then_grade", command=command), file=stream)
    return 0


KINDS: dict[str, str] = {"write": "writing", "debug": "debugging"}
"""How ``exercises --list`` names an exercise's kind."""


def list_exercises(out: TextIO | None = None, lang: Language | None = None) -> int:
    """Print every exercise: its chapter, kind (writing or debugging), expected minutes, points and title (in ``lang``).

    Examples:
        >>> import io
        >>> from microtape.cli import list_exercises
        >>> buffer = io.StringIO()
        >>> list_exercises(buffer)
        0
        >>> buffer.getvalue().splitlines()[0].split()
        ['exercise', 'chapter', 'kind', 'minutes', 'points', 'title']
        >>> buffer = io.StringIO()
        >>> list_exercises(buffer, lang="ru")
        0
        >>> buffer.getvalue().splitlines()[1].split()[:5]
        ['ex00_gradient_by_hand', '0', 'написание', '15', '4']
    """
    from .classroom.catalog import exercises as known
    from .i18n.messages import say
    from .i18n.grader_ru import translate_line

    stream = out if out is not None else sys.stdout
    lang = messages.default_language() if lang is None else lang
    found = known()
    if not found:
        print(say(lang, "no_exercises"), file=stream)
        return 1
    print(say(lang, "list_head"), file=stream)
    kinds = {"write": tr("writing", lang), "debug": tr("debugging", lang)}  # KINDS' words, found by the extractor
    for ex in found:
        shown = str(ex.minutes) if ex.minutes else "-"
        title = translate_line(ex.title) if lang == "ru" else ex.title
        points = sum(c.points for c in ex.checks)
        print(f"{ex.name:<28}{ex.chapter:>7}  {kinds.get(ex.kind, ex.kind):<10}{shown:>7}{points:>7}  {title}", file=stream)
    total = sum(ex.minutes for ex in found)
    if total:
        print(say(lang, "list_total", count=len(found), minutes=total, points=sum(c.points for ex in found for c in ex.checks)), file=stream)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m microtape``."""
    from .i18n.command_line import build_parser, language_of

    for stream in (sys.stdout, sys.stderr):  # a terminal that cannot show a character gets "?", never a crash (--help too)
        replace_unencodable(stream)
    arguments = sys.argv[1:] if argv is None else list(argv)
    try:
        lang = language_of(arguments)
    except MicrotapeError as err:  # MICROTAPE_LANG names no language: say which ones there are
        print(f"{program_name()}: {err}", file=sys.stderr)
        return 2
    parser = build_parser(program_name(), lang)
    if _no_command(arguments):  # the program alone (or with --lang): what it can do, not a usage error
        parser.print_help()
        return 0
    args = parser.parse_args(arguments)
    before = language.chosen()
    language.use("ru" if lang == "ru" else "en")  # everything the command prints, library messages too, in its language
    try:
        return _run(args)
    except KeyboardInterrupt:  # Ctrl-C outside the grader's own handling: a short word, no traceback
        print("\n" + tr("interrupted."), file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (grade ... | head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    finally:
        language.use(before)


def _no_command(arguments: Sequence[str]) -> bool:
    """Whether ``arguments`` name no command: nothing, or only ``--lang X`` / ``--lang=X`` with a
    language microtape speaks (argparse reports any other value)."""
    i = 0
    while i < len(arguments):
        if arguments[i] == "--lang" and i + 1 < len(arguments) and arguments[i + 1] in LANGUAGES:
            i += 2
        elif arguments[i].startswith("--lang=") and arguments[i].partition("=")[2] in LANGUAGES:
            i += 1
        else:
            return False
    return True


def _run(args: argparse.Namespace) -> int:
    if args.command == "dashboard":
        from .dashboard import demo

        return demo.main(args.demo, args.host, args.port, args.steps, args.delay, not args.exit_when_done)
    if args.command == "tour":
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
        figures = Path(tempfile.gettempdir()) / "microtape-tour"
        return tour(args.chapter, pause=interactive and not args.no_pause, figures=figures, lang=args.lang)
    if args.command == "exercises":
        if args.list:
            return list_exercises(lang=args.lang)
        if args.folder is None:
            print(tr("exercises: say where to copy the starters ({command}), or add --list to list them.").format(command=f"{program_name()} exercises DIR"), file=sys.stderr)
            return 2
        return exercises(args.folder, force=args.force, lang=args.lang, notebook=args.notebook)
    if args.command == "grade":
        from .classroom import grader

        return grader.grade(
            args.paths, timeout=args.timeout, format="json" if args.json else args.format, output=args.output,
            checks=args.checks, seed=args.seed, hint=args.hint, jobs=args.jobs, memory_mb=args.memory, lang=args.lang,
            assignment=args.assignment, require=args.require,
        )
    return selfcheck()
