"""Differentiation: the tape and the TF.js-style gradient functions.

Read after ``ops/``: the backward pass calls the ops' VJPs, which are ops
themselves, so an outer tape records them (higher orders for free). Files in
reading order: ``results.py``, ``arguments.py``, ``backward.py``,
``tape_view.py``, ``tape.py`` (``GradientTape``), ``functional.py`` (``grad``,
``grads``, ``value_and_grad(s)``, ``variable_grads``) and ``custom.py``
(``custom_grad``).
"""
