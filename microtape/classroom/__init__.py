"""The classroom: the tour of the book, the exercises and their grader.

Read after the engine (``core/`` to ``train/``), which it uses but never
changes. In reading order: ``resources.py``, ``messages.py`` (the terminal's words
in each language), ``command_line.py`` (the parser, its help in either
language), ``prose.py``, ``starters_ru.py`` (the starters' texts in
Russian), ``statements.py``,
``tour.py`` (the book in the terminal), ``exercise.py`` and
``check_helpers.py`` (what a check file is written with; check files import
them as ``microtape.exercise``), ``catalog.py``, ``paths.py``, ``checks_ru.py`` and ``russian.py`` (the
checks' texts in Russian), ``formats.py``,
``processes.py``, ``grader.py`` (``python -m microtape grade``) and
``grade_child.py`` (the process that runs one student's file).
"""
