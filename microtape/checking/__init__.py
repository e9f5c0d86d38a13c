"""Checking gradients: ``check_grads`` and ``numerical_grad`` against finite differences, ``taylor_test`` by convergence.

Files, in reading order: ``numerical.py`` (central differences, kinks told
from smooth bends), ``forward_tests.py`` (the JVP and dot-product tests of
``check_grads(modes=("rev", "fwd"))``), ``culprit.py`` (re-checks each
recorded op to name the one whose VJP is wrong, by finite differences or by
the linearity the dot-product test needs), ``report_html.py`` (the report
as a picture in Jupyter), ``gradcheck.py`` (``check_grads``), ``taylor.py`` (``taylor_test``:
the order at which the Taylor remainder shrinks, a check no step size can
fool) and ``samples.py`` (every op's sample inputs, for ``python -m
microtape selfcheck``).
"""
