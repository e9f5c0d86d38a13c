"""Checking gradients against finite differences: ``check_grads`` and ``numerical_grad``.

Files, in reading order: ``numerical.py`` (central differences, kinks told
from smooth bends), ``culprit.py`` (re-checks each recorded op to name the
one whose VJP is wrong), ``report_html.py`` (the report as a picture in
Jupyter), ``gradcheck.py`` (``check_grads``) and ``samples.py`` (every op's
sample inputs, for ``python -m microtape selfcheck``).
"""
