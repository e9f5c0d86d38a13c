"""Debugging tools: NaN hunting, memory, clipping, printing, statistics and text plots.

Files, in reading order: ``anomaly_report.py`` (what ``detect_anomaly``
records: where a NaN came from and where it went), ``fixes.py`` (the code a
hint suggests: the user's own expression rewritten from its source line, such
as the double ``where``), ``anomaly.py``
(``check_numerics``, ``detect_anomaly``), ``clipping.py`` (``clip_by_norm``,
``clip_by_global_norm``), ``leaks.py`` (``leak_check``), ``plots.py``
(``sparkline``, ``histogram``), ``printing.py`` (``mt.print``),
``profiling.py`` (``profile``) and ``stats.py`` (``grad_stats``,
``GradientMonitor``).
"""
