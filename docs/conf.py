"""Sphinx configuration for the microtape book and API reference.

Build the English edition with ``python -m sphinx -W -b html docs docs/_build/html``
and the Russian one with ``python -m sphinx -W -b html -D language=ru docs
docs/_build/html/ru`` from the repository root (the editions link to each other
in that layout; see ``docs/_ext/editions.py``). The chapters in ``../tutorials``
are executed by sphinx-gallery on every build and their output is written into
``docs/book/`` (generated, gitignored). The settings below were chosen to
survive ``-W``; the comments next to them say why.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # import the microtape next to docs/, not another install
sys.path.insert(0, str(HERE / "_ext"))

import microtape  # noqa: E402 - after the path set-up above
from notebooks import FIRST_CELL  # noqa: E402 - docs/_ext/notebooks.py

# -- Project -------------------------------------------------------------------

project = "microtape"
author = "the microtape authors"
copyright = "the microtape authors"  # noqa: A001 - Sphinx's name
release = microtape.__version__
version = release
language = os.environ.get("DOCS_LANG", "en")  # or -D language=ru on the command line

# -- Translations (the Russian edition: -D language=ru) ------------------------------

# One catalog per page (docs/locale/ru/LC_MESSAGES/book/<chapter>.po, index.po, ...),
# and no source locations or uuids in them, so a catalog changes only when its
# page's text does.
locale_dirs = ["locale/"]
gettext_compact = False
gettext_location = False
gettext_uuid = False
# Code blocks too, but only those with comments or a `microtape tour` command: the others are
# marked untranslatable (docs/_ext/editions.py), so they never enter the catalogs.
gettext_additional_targets = ["literal-block"]
# The catalogs are refreshed with ``python docs/update_catalogs.py`` (gettext
# builder, then sphinx-intl); the .mo files are compiled by every build.

# -- Extensions ----------------------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "sphinx.ext.intersphinx",
    "mathml",  # docs/_ext/mathml.py: formulas as MathML, readable offline (MathJax needs a CDN)
    "sphinx_gallery.gen_gallery",
    "microtape_api",  # docs/_ext/microtape_api.py: the API page, generated from microtape.__all__
    "editions",  # docs/_ext/editions.py: English and Russian editions, linked page to page
    "notebooks",  # docs/_ext/notebooks.py: the chapters' notebooks get Markdown, not reST
    "browser",  # docs/_ext/browser.py: "Run in the browser" on every chapter, every exercise as a page (Pyodide)
]

exclude_patterns = ["_build"]
templates_path = ["_templates"]
python_use_unqualified_type_names = True  # signatures show Tensor, not microtape.engine.tensor.Tensor
nitpicky = True  # a broken :class:/:func: reference is an error, not a silent plain word

# -- HTML ----------------------------------------------------------------------

html_theme = "furo"
html_math_renderer = "mathml"
html_title = "microtape: the gradient debugging book"
html_static_path = ["_static"]
html_css_files = ["book.css", "editions.css"]
# furo's sidebar, plus the link to this page in the other edition under the search box.
html_sidebars = {
    "**": [
        "sidebar/brand.html",
        "sidebar/search.html",
        "sidebar/language.html",
        "sidebar/scroll-start.html",
        "sidebar/navigation.html",
        "sidebar/scroll-end.html",
    ]
}
html_last_updated_fmt = None
html_show_sourcelink = False

# -- autodoc + napoleon -----------------------------------------------------------

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_inherit_docstrings = False
autoclass_content = "class"
# Type aliases (microtape.engine.types, and microtape.engine.tensor for those that mention Tensor): show
# the alias name in signatures instead of the expanded union, and link it to its entry on the API page.
autodoc_type_aliases = {
    **{name: f"microtape.engine.types.{name}" for name in ("Shape", "Nested", "Rows", "Axis")},
    **{name: f"microtape.engine.tensor.{name}" for name in ("Grads", "TensorLike")},
    "LinearFn": "microtape.autodiff.forward.LinearFn",
}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_use_param = True

# -- Cross references ------------------------------------------------------------

# Offline-safe: the Python inventory is read from the committed local copy and
# never fetched (it came from Debian's python3.11-doc package).
intersphinx_mapping = {
    "python": ("https://docs.python.org/3.11", (str(HERE / "_intersphinx" / "python3.11.inv"),)),
}
intersphinx_timeout = 1

# Names that have no page anywhere: type variables and ParamSpecs of the engine's
# generic signatures. Everything public is documented on api.rst instead.
nitpick_ignore_regex = [
    ("py:class", r"microtape\.[\w.]*\b(T|K|P|V|P\.args|P\.kwargs)"),
    ("py:class", r"(T|K|P|V|P\.args|P\.kwargs)"),
]

# The book needs no Graphviz: chapter 3 draws its tape with tape.to_svg() (microtape lays it out).

# -- The book: sphinx-gallery ------------------------------------------------------------

# Chapters are tutorials/NN_name.py (two digits, then an underscore). Everything
# else under tutorials/ (exercises/, their starter files, solutions, a grader)
# is ignored: `ignore_pattern` is matched against file *names*, so it ignores
# every .py file whose name is not a chapter name, and `filename_pattern` (matched
# against the full path) executes only chapters at the top of tutorials/.
# A subfolder becomes a book section only if it has a GALLERY_HEADER.rst or a
# README.txt/README.rst, so exercises/ must not have one (a README.md is fine).
CHAPTER_NAME = r"\d\d_[A-Za-z0-9_]+\.py"

sphinx_gallery_conf = {
    "examples_dirs": ["../tutorials"],
    "gallery_dirs": ["book"],
    "filename_pattern": r"tutorials[\\/]" + CHAPTER_NAME + "$",
    "ignore_pattern": r"^(?!" + CHAPTER_NAME + "$)",
    "within_subsection_order": "FileNameSortKey",  # a string: the class object is unpicklable under -W
    "abort_on_example_error": True,  # a broken chapter breaks the build
    "run_stale_examples": True,  # re-run unchanged chapters, so a library change shows up
    "write_computation_times": False,  # no sg_execution_times page with changing timings
    "min_reported_time": 10**9,
    "capture_repr": ("__repr__",),  # show the value of each block's last expression
    # ...unless it is a matplotlib object (ax.legend() returns one): its repr carries a memory
    # address, which would make every build's page differ. The chapters end plotting cells
    # with fig.tight_layout() (None) anyway; this keeps a new chapter from slipping.
    "ignore_repr_types": r"matplotlib\.",
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "download_all_examples": True,  # .py and .ipynb downloads of every chapter
    "remove_config_comments": True,
    "show_memory": False,
    "show_signature": False,
    "line_numbers": False,
    "plot_gallery": "True",
    "first_notebook_cell": FIRST_CELL,  # how to install microtape, then %matplotlib inline
}

# Fail fast if a chapter name would be ignored by accident (a typo in the pattern above).
assert re.search(sphinx_gallery_conf["ignore_pattern"], "00_gradient_debugging.py") is None
assert re.search(sphinx_gallery_conf["ignore_pattern"], "starter.py") is not None

# -- Doctest builder (python -m sphinx -b doctest -D plot_gallery=0 docs out) ----------------

doctest_global_setup = "import math\nimport microtape as mt"
