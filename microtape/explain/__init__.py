"""Why a gradient has its value: the paths back through the tape, and the pass one step at a time.

Files, in reading order: ``report.py`` (what ``explain_gradient`` returns:
``GradientExplanation``, ``GradientPath``, ``GradientStep``), ``paths.py``
(the paths from an output back to one entry of a source, each step's local
derivative and line), ``steps.py`` (``BackwardStep``: the real backward pass
seen one VJP at a time, for ``tape.backward_steps()``).
"""
