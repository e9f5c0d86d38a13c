"""The book outside Sphinx: the chapters in the terminal, their figures and the exercises as files.

Files, in reading order: ``figures.py`` (the words on the chapters' figures,
one table per language), ``notebooks.py`` (exercises as Jupyter notebooks,
written and read with ``json``), ``resources.py`` (where the chapters and
starters are, installed or not), ``prose.py`` (the chapters' prose as
terminal text), ``statements.py`` (the exercises' task statements, in either
language), ``tour.py`` (``python -m microtape tour``), ``browser.py``
(a page's cells, run in the browser by the book's "Run in the browser" pages)
and ``running.py`` (chapter 7's coroutines run to their end in a script, a
notebook or a browser).
"""
