"""The public autodiff API: ``GradientTape`` and the TF.js-style gradient functions.

Files, in reading order: ``function_args.py`` (what ``grad(f)`` and friends
are given, checked first), ``results.py`` (``GradMap``, ``VariableGrads`` and
the signatures of the functions ``grad`` returns), ``unconnected.py`` (why a
source gets no gradient: the cut, the unwatched use), ``tape_args.py`` (what
a tape is given, checked first), ``gradient_tape.py`` (``GradientTape``: the
engine's tape with its arguments checked and the views and explanations
composed in), ``functional.py`` (``grad``, ``grads``,
``value_and_grad(s)``, ``variable_grads``, ``explain_gradient``),
``custom.py`` (``custom_grad``) and ``forward.py`` (``jvp``, ``linearize``
and ``hvp``: forward mode from two reverse passes).
"""
