"""The tour: the README's main command prints every chapter with its real outputs."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from microtape.book import resources as _resources

from microtape.book import tour as _tour
from microtape.cli import mini_tour, tour
from microtape.i18n.messages import Language

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_tour_runs_every_chapter_in_a_fresh_process(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-W", "error", "-m", "microtape", "tour"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)},  # the figures go to TMPDIR
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for path in _tour.chapters():
        title = path.read_text(encoding="utf-8").split('"""')[1].strip().splitlines()[0]
        assert title in result.stdout, f"{path.name}'s title is missing from the tour"
    assert "▸ Tensor(-17.5, shape=())" in result.stdout or "-17.5" in result.stdout  # a real computed output
    assert "Traceback" not in result.stdout
    figures = sorted(p.name for p in (tmp_path / "microtape-tour").glob("*.png"))
    assert "06_practice_1.png" in figures and f"(figure saved as {tmp_path}" in result.stdout


@pytest.mark.slow
def test_one_chapter_and_a_missing_one() -> None:
    out = io.StringIO()
    assert tour(chapter=2, out=out) == 0
    text = out.getvalue()
    assert "Automatic gradients" in text and "Variables (" not in text
    out = io.StringIO()
    assert tour(chapter=42, out=out) == 2
    numbers = ", ".join(str(int(p.name[:2])) for p in _tour.chapters())  # from the files: another chapter needs no edit here
    assert numbers.startswith("0, 1, 2, 3, 4, 5, 6, 7")
    assert f"no chapter 42; the chapters are {numbers}" in out.getvalue()


def test_pausing_between_chapters_and_quitting() -> None:
    prompts: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        return "q"

    out = io.StringIO()
    assert _tour.run(None, out, mini_tour, pause=answer) == 0
    assert prompts == ["── Enter for chapter 1, q to stop ── "]
    assert "Gradient debugging" in out.getvalue() and "Variables (" not in out.getvalue()


def test_without_the_book_the_short_tour_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_resources, "tutorials_dir", lambda: None)
    out = io.StringIO()
    assert tour(out=out) == 0
    text = out.getvalue()
    assert "dL/dw = Tensor(-17.5, shape=())" in text and "x = 1.6, y = 2.4" in text
    out = io.StringIO()
    assert tour(chapter=3, out=out) == 2  # a chapter that cannot be shown is an error, never ignored
    assert out.getvalue() == "no chapter 3; the book's chapters are not installed\n"


def test_cells_keep_the_chapter_line_numbers() -> None:
    source = '"""Title\n=====\n"""\n\n# %%\n# Some prose.\nx = 1\nx + 1\n\n# %%\n# More.\ny = 2\n'
    doc, cells = _tour.split_cells(source)
    assert doc.startswith("Title")
    assert cells == [("Some prose.", "x = 1\nx + 1", 7), ("More.", "y = 2", 12)]
    assert _tour.execute_cell("x = 1\nx + 1", {}) == "2\n"


@pytest.mark.slow
def test_without_matplotlib_every_chapter_runs_and_says_how_to_draw_the_plots() -> None:
    # A fresh process where `import matplotlib` fails, as in a plain install.
    script = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from microtape.cli import main\n"
        "sys.exit(main(['tour', '--no-pause']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stdout + result.stderr
    assert "figure saved" not in result.stdout
    notes = [line for line in result.stdout.splitlines() if "matplotlib" in line and line.startswith("    ▸")]
    plotting_cells = sum(  # a cell that makes a figure draws in it
        "plt.subplots(" in cell_code or "plt.figure(" in cell_code
        for path in _tour.chapters()
        for _, cell_code, _ in _tour.split_cells(path.read_text(encoding="utf-8"))[1]
    )
    assert len(notes) == plotting_cells > 0, notes
    assert all(line == "    ▸ " + _tour.NO_PLOTS for line in notes)
    assert "pip install 'microtape[book]'" in _tour.NO_PLOTS
    # the rest of each plotting chapter still ran: chapter 6's numbers are there
    assert "lr=0.125" in result.stdout and "final loss" in result.stdout


def test_leaving_plots_out_keeps_the_rest_of_a_cell() -> None:
    tainted: set[str] = set()
    code = "import matplotlib.pyplot as plt\nn = 3\nfig, ax = plt.subplots()\nfor i in range(n):\n    ax.plot([i])\nn * 2"
    assert _tour.execute_cell(code, {}, tainted=tainted) == "6\n" + _tour.NO_PLOTS + "\n"
    # a loop variable that a left-out loop used is not tainted; the figure is
    assert _tour.execute_cell("for i in range(2):\n    print(i)", {}, tainted=tainted) == "0\n1\n"
    assert _tour.execute_cell("ax.set(title='t')", {}, tainted=tainted) == _tour.NO_PLOTS + "\n"
    assert _tour.execute_cell("import matplotlib\nx = 1\nx", {}, tainted=tainted) == "1\n"  # an import alone: no note


@pytest.mark.slow
def test_with_matplotlib_the_figures_are_saved_and_named(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = io.StringIO()
    assert tour(chapter=0, out=out, figures=tmp_path) == 0
    saved = sorted(tmp_path.glob("*.png"))
    assert [p.name for p in saved] == ["00_gradient_debugging_1.png"]
    assert saved[0].read_bytes().startswith(b"\x89PNG")
    assert f"▸ (figure saved as {saved[0]})" in out.getvalue()


def test_the_short_tour_steps_through_the_backward_pass_of_x2_plus_y2() -> None:
    out = io.StringIO()
    mini_tour(out)
    text = out.getvalue()
    assert "the backward pass, one VJP at a time (tape.backward_steps):" in text
    assert "0. add: dout 1.0 -> 1.0, 1.0; so far x = None, y = None" in text
    assert "2. mul: dout 1.0 -> 2.0, 2.0; so far x = 4.0, y = 6.0" in text  # x * x: two halves of 2x


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_tour_of_chapter_7_shows_the_steps_and_the_nan_trace(lang: Language) -> None:
    out = io.StringIO()
    assert tour(chapter=7, out=out, lang=lang) == 0
    text = out.getvalue()
    # backward_steps speaks the reader's language
    step, so_far = ("шаг 0: add в 07_analysis_tools.py:", "пока что x 4.0, y 6.0") if lang == "ru" else (
        "step 0: add at 07_analysis_tools.py:",
        "so far x 4.0, y 6.0",
    )
    assert step in text and so_far in text
    # and so does the anomaly trace
    first, clean = ("Inf впервые дала операция log (прямой) в 07_analysis_tools.py:", "detect_anomaly: ни одна операция не дала NaN или Inf.") if lang == "ru" else (
        "Inf first made by log (forward) at 07_analysis_tools.py:", "detect_anomaly: no op made a NaN or an Inf.")
    assert first in text and clean in text
    heading = "Наблюдаем за цепным правилом" if lang == "ru" else "Watching the chain rule"
    assert heading in text


def test_a_chapter_runs_with_its_figures_in_the_tours_language(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tour --lang ru`` draws the figures in Russian: the cells see MICROTAPE_LANG=ru, put back after."""
    monkeypatch.setenv("MICROTAPE_LANG", "en")
    chapter = tmp_path / "09_probe.py"
    chapter.write_text(
        '"""\nProbe\n=====\n\nA chapter of one cell.\n"""\n\n'
        "# %%\n# sphinx_gallery_thumbnail_number = 1\n"
        "from microtape.book.figures import figure_language\nprint('drawn in', figure_language())\n",
        encoding="utf-8",
    )
    out = io.StringIO()
    _tour.show(chapter, out, plots=False, lang="ru")
    assert "drawn in ru" in out.getvalue()
    assert "sphinx_gallery_thumbnail_number" not in out.getvalue()  # a gallery setting is not shown, as in the book
    import os

    assert os.environ["MICROTAPE_LANG"] == "en"


@pytest.mark.slow
def test_the_russian_tour_shows_the_code_comments_in_russian() -> None:
    out = io.StringIO()
    _tour.show(_resources.chapter_files()[3], out, plots=False, lang="ru")
    assert "# обе переменные читались внутри ленты" in out.getvalue()
    assert "# both variables were read inside the tape" not in out.getvalue()
