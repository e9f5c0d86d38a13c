"""The classroom: exercises and their grader, nothing else.

Files, in reading order: ``definition.py`` (``Exercise``, ``Check``,
``Fail``: what an exercise is), ``catalog.py`` (finding exercises and which
one a file is), ``processes.py`` (the process table, ending a child and all
it started, Ctrl-C), ``wire.py`` (the channel to the process that runs a
student's file, and how values cross it), ``measure.py`` (what that process
measures around a call), ``grade_child.py`` (that process: it loads the file
and answers questions about it, nothing more), ``proxy.py`` (the grader's
side: a module that stands for the student's file), ``check_tools.py``
(what a check calls: the student's functions, exact types, messages without
the expected value, measurements; check files import it as
``microtape.exercise``), ``judge.py`` (one file's checks run in the grader
and decide its marks), ``formats.py`` (the text report, microtape's JSON,
Gradescope's and Classroom 50's documents), ``submissions.py`` (what
``grade`` is given, per path), ``assignment.py`` (what an assignment asks
for) and ``grader.py`` (``python -m microtape grade``).
"""
