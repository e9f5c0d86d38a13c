"""Why a gradient has its value: the paths back through the tape, and the pass one step at a time.

Files, in reading order: ``report.py`` (what ``explain_gradient`` returns:
``GradientExplanation``, ``GradientPath``, ``GradientStep``, ``BlockedOp``),
``source_text.py`` (the text of an op's sub-expression and of its operands on
the user's line), ``links.py`` (which input entries each output entry of an op
reads, and each pair's local derivative, asked of the op's VJP), ``paths.py``
(the paths from an output back to one entry of a source, what made it NaN or
0), ``steps.py`` (``BackwardStep``: the real backward pass seen one VJP at a
time, for ``tape.backward_steps()``).
"""
