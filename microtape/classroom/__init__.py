"""The classroom: exercises and their grader, nothing else.

Files, in reading order: ``definition.py`` (``Exercise``, ``Check``,
``Fail``: what an exercise is), ``catalog.py`` (finding exercises and which
one a file is), ``check_tools.py`` (what a check calls: random inputs, exact
types, messages without the expected value; check files import it as
``microtape.exercise``), ``formats.py`` (the text report, microtape's JSON,
Gradescope's and Classroom 50's documents), ``submissions.py`` (what ``grade`` is
given, per path), ``processes.py`` (a child per graded file, limits per
check, nothing left running), ``grade_child.py`` (the child that runs a
student's file) and ``grader.py`` (``python -m microtape grade``).
"""
