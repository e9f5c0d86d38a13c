"""Every chapter's downloadable notebook runs in a real Jupyter kernel, in each edition that offers one.

The notebooks tested are the ones a reader downloads: the ``NN_*.ipynb`` files in the
built ``_downloads/`` of the English edition and of the Russian one (``ru/``), from the
book as ``test_docs.py`` builds and checks it: the session fixture ``editions``
(``tests/conftest.py``), one build of each edition per test run, shared with
``test_docs.py`` (sphinx-gallery writes the same notebooks whether or not it runs the
chapters, so building the book a second time without running them only cost time).
Whether the book is free of warnings is test_docs' business: ``-W`` still writes every
page and download, so a warning does not hide the notebooks from this test. Each runs in
a Jupyter kernel started by nbclient from a kernelspec installed into a temporary
folder, so the kernel is this test's own Python (the venv's), never a ``python3`` kernel
a user installed elsewhere. It runs in the project copy's ``tutorials/`` folder, where
sphinx-gallery runs the chapters, so a chapter that reads a file next to it finds it.
Any error fails the test with the cell number, the start of its code and the error; the
executed notebooks must show at least one rich output (HTML, PNG or SVG: a matplotlib
figure counts).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat import NotebookNode

from .book_builds import Editions

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.stem for p in (ROOT / "tutorials").glob("[0-9][0-9]_*.py"))
KERNEL = "microtape-test-kernel"
RICH = ("text/html", "image/png", "image/svg+xml")
CELL_TIMEOUT = 240  # seconds one cell may take: chapter 6 trains a small network (slow CI machines share cores)


def notebooks(editions: Editions, lang: str) -> dict[str, Path]:
    """The chapter notebooks the edition ``lang`` offers for download, by chapter."""
    downloads = (editions.en if lang == "en" else editions.ru) / "_downloads"
    return {p.stem: p for p in sorted(downloads.glob("*/[0-9][0-9]_*.ipynb"))} if downloads.is_dir() else {}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``share/jupyter`` folder holding this test's kernelspec (this Python)."""
    from ipykernel.kernelspec import install

    prefix = tmp_path_factory.mktemp("kernel")
    install(kernel_name=KERNEL, display_name="microtape tests", prefix=str(prefix))
    return prefix / "share" / "jupyter"


def _where(error: CellExecutionError, nb: NotebookNode) -> str:
    """'cell 7 (code: ...)' for the cell that raised: the first cell with an error output."""
    for number, cell in enumerate(nb.cells, start=1):
        if any(out.get("output_type") == "error" for out in cell.get("outputs", [])):
            code = cell.source.strip().splitlines()
            return f"cell {number} of {len(nb.cells)} (it begins: {code[0] if code else ''!r})"
    return "a cell"


def execute(path: Path, workdir: Path) -> NotebookNode:
    """Run the notebook at ``path`` in a fresh kernel (working directory ``workdir``); return it executed."""
    nb: NotebookNode = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name=KERNEL, resources={"metadata": {"path": str(workdir)}})
    try:
        client.execute()
    except CellExecutionError as error:
        plain = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # the kernel's traceback without its terminal colours
        pytest.fail(f"{path.name}: {_where(error, nb)} raised:\n{plain}", pytrace=False)
    return nb


@pytest.mark.slow  # its time limit is conftest's for the tests that use ``editions`` (the first one builds both)
@pytest.mark.parametrize("chapter", CHAPTERS)
@pytest.mark.parametrize("lang", ["en", "ru"])
def test_chapter_notebook_runs_in_a_kernel(
    editions: Editions, kernels: Path, lang: str, chapter: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = editions.english if lang == "en" else editions.russian
    offered = notebooks(editions, lang)
    if lang != "en" and not offered and built.returncode == 0:
        pytest.skip(f"the {lang} edition offers no notebooks to download")
    assert chapter in offered, (
        f"the {lang} edition offers no notebook of {chapter} ({sorted(offered)}); the build said:\n{built.stderr[-4000:]}"
    )
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(editions.project), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join([str(kernels), *filter(None, [os.environ.get("JUPYTER_PATH")])]))
    nb = execute(offered[chapter], editions.project / "tutorials")
    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors, errors
    rich = [kind for cell in nb.cells for out in cell.get("outputs", []) for kind in out.get("data", {}) if kind in RICH]
    assert rich, f"{offered[chapter].name} ({lang}) shows no rich output ({', '.join(RICH)}) once executed"


def test_the_kernelspec_is_this_python(tmp_path: Path) -> None:
    """The kernel the notebooks run in is the interpreter running the tests (the venv's), by its spec."""
    from ipykernel.kernelspec import install
    from jupyter_client.kernelspec import KernelSpecManager

    install(kernel_name=KERNEL, prefix=str(tmp_path))
    spec = KernelSpecManager(kernel_dirs=[str(tmp_path / "share" / "jupyter" / "kernels")]).get_kernel_spec(KERNEL)
    assert spec.argv[0] == sys.executable
