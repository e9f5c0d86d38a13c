"""Debugging tools: clipping, printing, anomaly detection, statistics, text plots.

Read after ``checking/``. In reading order: ``clipping.py``, ``printing.py``
(``mt.print``), ``anomaly.py`` (``check_numerics``, ``detect_anomaly``),
``plots.py`` (``sparkline``, ``histogram``) and ``stats.py`` (``grad_stats``,
``GradientMonitor``).
"""
