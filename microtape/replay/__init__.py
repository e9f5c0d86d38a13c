"""``mt.function``: trace a step once, replay it as one flat program on lists, never with a stale value.

Files, in reading order: ``specialise.py`` (each op's kernel written for the
shapes the trace saw), ``program.py`` (a traced program: its listing and the
straight-line replay compiled from it), ``guards.py`` (what a program depends
on besides its inputs: cache keys by value, and the guards checked before
every replay), ``function.py`` (``mt.function`` and its tracer) and
``tracer.py`` (the protocol a tracer follows: what ``mt.function`` is told
besides the ops).
"""
