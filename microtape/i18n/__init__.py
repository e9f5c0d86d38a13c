"""The languages microtape speaks: the terminal's words and the Russian of the exercises.

Files, in reading order: ``exercise_checks_ru.py`` (the checks' names, hints
and failure messages in Russian), ``messages.py`` (the command line's own
words, a table per language; ``MICROTAPE_LANG``), ``command_line.py`` (the
parser, its ``--help`` in either language), ``starters_ru.py`` (the
starters' comments and TODOs in Russian) and ``grader_ru.py`` (the grader's
lines in Russian, beside the English).
"""
