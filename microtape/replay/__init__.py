"""``mt.function``: trace a step once, replay it as one flat program on lists.

Files, in reading order: ``specialise.py`` (each op's kernel written for the
shapes the trace saw), ``program.py`` (a traced program: its listing and the
straight-line replay compiled from it), ``function.py`` (``mt.function`` and
its tracer) and ``tracer.py`` (the protocol a tracer follows: what
``mt.function`` is told besides the ops).
"""
