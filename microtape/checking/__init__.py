"""Checking gradients against finite differences.

Read after ``autodiff/``. ``numerical.py`` computes central differences and
tells a kink from a smooth bend, ``culprit.py`` re-checks each recorded op to
name the one whose VJP is wrong, ``gradcheck.py`` is ``check_grads``, and
``samples.py`` holds every op's sample inputs for ``python -m microtape selfcheck``.
"""
