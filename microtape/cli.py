"""The command line: ``python -m microtape tour | selfcheck | exercises DIR | grade FILE``.

Read last. ``tour`` prints the book's chapters in the terminal,
``selfcheck`` gradient-checks every primitive in the op table,
``exercises DIR`` copies the starter exercises into a folder for a student
(``exercises --list`` lists them: chapter, kind, expected minutes), and
``grade FILE`` checks a classroom exercise (see :mod:`microtape.classroom.grader`). Any
command ends quietly on Ctrl-C (exit 130) or when its reader goes away
(``... | head``: exit 141), and prints ``?`` for a character the terminal
cannot show rather than crash.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from .core.registry import OPS
from .checking.samples import CASES, Case
from .checking.gradcheck import check_grads
from .core.creation import tensor
from .core.tensor import Tensor

__all__ = ["KINDS", "exercises", "list_exercises", "main", "program_name", "selfcheck"]

LANGUAGES = ("en", "ru")
"""The languages of the tour's prose and the exercises' task statements."""


def _run_case(case: Case, mode: str, order: int) -> tuple[bool, float]:
    op = OPS[case.name]
    from .core.runtime import DISPATCH, run_in_scope

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
    """Gradient-check every primitive at its sample inputs; print a table; return the exit code.

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
    print(f"{'op':<15}{'cases':>6}  {'full':<6}{'fast':<6}{'order 2':<8}{'worst abs err':>14}", file=stream)
    for name in sorted(OPS):
        cases = CASES.get(name, [])
        if not cases:
            print(f"{name:<15}{0:>6}  no sample inputs: add them to microtape/checking/samples.py", file=stream)
            failures += 1
            continue
        verdicts = {"full": True, "fast": True, "order 2": True}
        worst = 0.0
        for case in cases:
            for label, mode, order in (("full", "full", 1), ("fast", "fast", 1), ("order 2", "full", 2)):
                ok, err = _run_case(case, mode, order)
                verdicts[label] &= ok
                worst = max(worst, err)
        marks = {k: "ok" if v else "FAIL" for k, v in verdicts.items()}
        failures += sum(1 for v in marks.values() if v == "FAIL")
        print(f"{name:<15}{len(cases):>6}  {marks['full']:<6}{marks['fast']:<6}{marks['order 2']:<8}{worst:>14.2e}", file=stream)
    if failures:
        print(f"selfcheck FAILED: {failures} check(s) disagree with finite differences", file=stream)
        return 1
    print("selfcheck passed: every primitive agrees with finite differences, first and second derivatives", file=stream)
    return 0


def mini_tour(out: TextIO) -> None:
    from .autodiff.functional import grads, variable_grads
    from .autodiff.steps import accumulated_text, tensor_text
    from .autodiff.tape import GradientTape
    from .core.memory import tidy
    from .core.variable import variable

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


def tour(chapter: int | None = None, out: TextIO | None = None, pause: bool = False, figures: Path | None = None, lang: str = "en") -> int:
    """Print the book's chapters in the terminal (all, or one with ``chapter``).

    With ``pause``, wait for Enter between chapters; with ``figures`` (a
    folder), save each plot there as a PNG and print its path. ``lang="ru"``
    prints the prose in Russian, from the Russian edition's catalogs (English
    where a paragraph has no translation).

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
    from .classroom import tour

    return tour.run(chapter, stream, fallback=mini_tour, pause=input if pause else None, figures=figures, lang=lang)


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


def exercises(folder: Path, force: bool = False, out: TextIO | None = None, lang: str = "en") -> int:
    """Copy the starter exercises into ``folder``; return the exit code.

    Only the starters (``ex*.py``) are copied, never the solutions. Files
    already in ``folder`` are not overwritten unless ``force``; when one is
    in the way nothing is copied (exit code 1). With ``lang="ru"`` each
    starter's task statement (its docstring) is written in Russian, from the
    catalog of the book's exercises page; the code stays as it is.

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
    """
    from .classroom import resources
    from .classroom import statements

    stream = out if out is not None else sys.stdout
    if lang not in LANGUAGES:
        print(f"no starters in {lang!r}: the languages are {', '.join(LANGUAGES)}", file=stream)
        return 2
    starters = resources.starter_files()
    if not starters:
        print("the starter exercises are not installed with this copy of microtape", file=stream)
        return 1
    in_the_way = [folder / p.name for p in starters if (folder / p.name).exists()]
    if in_the_way and not force:
        names = ", ".join(str(p) for p in in_the_way)
        print(f"not copying: {names} already exist{'s' if len(in_the_way) == 1 else ''} (your work?).", file=stream)
        print(f"Pick another folder, or add --force to overwrite: {program_name()} exercises {folder} --force", file=stream)
        return 1
    folder.mkdir(parents=True, exist_ok=True)
    messages = statements.catalog(lang)
    for path in starters:
        if messages:
            source = path.read_text(encoding="utf-8")
            (folder / path.name).write_text(statements.translate_starter(source, messages), encoding="utf-8")
        else:
            shutil.copyfile(path, folder / path.name)
        print(f"wrote {folder / path.name}", file=stream)
    print(f"\nWork on a file, then grade it, e.g.: {program_name()} grade {folder / starters[0].name}", file=stream)
    return 0


def _seconds(text: str) -> float:
    """``--timeout``: a finite number of seconds (the grader checks the range and says it)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of seconds (a limit of nan or inf would be no limit)")
    return value


KINDS: dict[str, str] = {"write": "writing", "debug": "debugging"}
"""How ``exercises --list`` names an exercise's kind."""


def list_exercises(out: TextIO | None = None) -> int:
    """Print every exercise: its chapter, kind (writing or debugging), expected minutes and title.

    Examples:
        >>> import io
        >>> from microtape.cli import list_exercises
        >>> buffer = io.StringIO()
        >>> list_exercises(buffer)
        0
        >>> buffer.getvalue().splitlines()[0].split()
        ['exercise', 'chapter', 'kind', 'minutes', 'title']
    """
    from .classroom.catalog import exercises as known

    stream = out if out is not None else sys.stdout
    found = known()
    if not found:
        print("the exercises are not installed with this copy of microtape", file=stream)
        return 1
    print(f"{'exercise':<28}{'chapter':>7}  {'kind':<10}{'minutes':>7}  title", file=stream)
    for ex in found:
        shown = str(ex.minutes) if ex.minutes else "-"
        print(f"{ex.name:<28}{ex.chapter:>7}  {KINDS.get(ex.kind, ex.kind):<10}{shown:>7}  {ex.title}", file=stream)
    total = sum(ex.minutes for ex in found)
    if total:
        print(f"{len(found)} exercises, about {total} minutes in all.", file=stream)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m microtape``."""
    parser = argparse.ArgumentParser(prog=program_name(), description="microtape: learn gradient debugging")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("tour", help="walk through the book's chapters in the terminal")
    t.add_argument("--chapter", type=int, default=None, help="show only chapter N (0-7)")
    t.add_argument("--no-pause", action="store_true", help="do not wait for Enter between chapters")
    t.add_argument("--lang", choices=LANGUAGES, default="en", help="language of the prose (ru: Russian)")
    sub.add_parser("selfcheck", help="gradient-check every primitive against finite differences")
    e = sub.add_parser("exercises", help="copy the starter exercises into a folder (never the solutions), or --list them")
    e.add_argument("folder", metavar="DIR", type=Path, nargs="?", default=None, help="where to put them (made if missing)")
    e.add_argument("--list", action="store_true", help="list the exercises: chapter, kind, expected minutes, title")
    e.add_argument("--force", action="store_true", help="overwrite files that are already there")
    e.add_argument("--lang", choices=LANGUAGES, default="en", help="language of the task statements (ru: Russian)")
    g = sub.add_parser("grade", help="check exercise files or folders of them, each in its own process with a time limit")
    g.add_argument("paths", nargs="+", metavar="PATH", help="exercise files, or folders searched for *.py")
    g.add_argument("--timeout", type=_seconds, default=10.0, metavar="S", help="seconds each file may take (default 10)")
    g.add_argument("--format", choices=("text", "json", "gradescope", "classroom50"), default="text",
                   help="text (default), json (microtape's document), gradescope (results.json), classroom50 (result.json)")
    g.add_argument("--json", action="store_true", help="the same as --format json")
    g.add_argument("--output", metavar="FILE", default=None, help="write the document (or the text) to FILE")
    g.add_argument("--checks", metavar="DIR", default=None, help="a teacher's folder of check files: hidden checks added to the public ones")
    g.add_argument("--seed", type=int, default=None, metavar="N", help="seed of the checks' random inputs (default: drawn, and printed)")
    g.add_argument("--hint", type=int, default=1, choices=(1, 2, 3), help="hint level after a failed check (default 1)")
    g.add_argument("--jobs", type=int, default=None, metavar="N", help="files graded at the same time (default: CPUs)")
    g.add_argument("--memory", type=int, default=1024, metavar="MB", help="memory limit per file where the OS allows (default 1024, 0: none)")
    d = sub.add_parser("dashboard", help="the live training page in a browser (--demo trains chapter 6's recurrent net)")
    d.add_argument("--demo", action="store_true", help="train the book's recurrent net (exploding, then clipped) while serving the page")
    d.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    d.add_argument("--port", type=int, default=8765, help="port to serve on (default 8765; 0 picks a free one)")
    d.add_argument("--steps", type=int, default=400, help="training steps (default 400)")
    d.add_argument("--delay", type=float, default=0.03, help="seconds to pause after each step so you can watch (default 0.03)")
    d.add_argument("--exit-when-done", action="store_true", help="stop serving when training ends instead of waiting for Ctrl-C")
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:  # Ctrl-C outside the grader's own handling: a short word, no traceback
        print("\ninterrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (grade ... | head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def _run(args: argparse.Namespace) -> int:
    for stream in (sys.stdout, sys.stderr):  # a terminal that cannot show a character gets "?", never a crash
        replace_unencodable(stream)
    if args.command == "dashboard":
        from .dashboard import demo

        return demo.main(args.demo, args.host, args.port, args.steps, args.delay, not args.exit_when_done)
    if args.command == "tour":
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
        figures = Path(tempfile.gettempdir()) / "microtape-tour"
        return tour(args.chapter, pause=interactive and not args.no_pause, figures=figures, lang=args.lang)
    if args.command == "exercises":
        if args.list:
            return list_exercises()
        if args.folder is None:
            print(f"exercises: say where to copy the starters ({program_name()} exercises DIR), or add --list to list them.", file=sys.stderr)
            return 2
        return exercises(args.folder, force=args.force, lang=args.lang)
    if args.command == "grade":
        from .classroom import grader

        return grader.grade(
            args.paths, timeout=args.timeout, format="json" if args.json else args.format, output=args.output,
            checks=args.checks, seed=args.seed, hint=args.hint, jobs=args.jobs, memory_mb=args.memory,
        )
    return selfcheck()
